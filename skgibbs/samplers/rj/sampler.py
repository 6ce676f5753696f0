"""The reversible-jump sampler: settings, warm-up of the Langevin step, then frozen sampling.

During burn-in the step size ``h`` (with ``s = sqrt(2 h)`` when
``proposal_std="auto"``) follows dual averaging toward ``target_accept``
on the acceptance of the within-model moves only: a jump's acceptance also
reflects how likely the data make the other model, which ``h`` cannot
change. The step is started by the doubling/halving search on within-model
trial moves.
"""

from numbers import Real

import numpy as np
import torch

from ..._compat import Interval, StrOptions
from ..._progress import progress
from ...priors import MixingPrior
from ..adaptation import DualAveraging, search_step_size
from ..base import low_acceptance, register
from ..runner import ChainSampler
from . import rjmcmc

__all__ = ["RJMCMC", "RJChains"]


@register
class RJMCMC(ChainSampler):
    """Reversible-jump MCMC over the active sets of the mixing prior (:mod:`~skgibbs.samplers.rj.rjmcmc`).

    Every transition proposes with probabilities ``1/4, 1/2, 1/4`` a death,
    a within-model Langevin move or a birth, and moves every active
    coordinate of the new set by the Langevin proposal; one full-data
    gradient per step. Needs a :class:`~skgibbs.priors.MixingPrior`; ``rho``
    does not apply (the jump ratio is exact on the full data only).

    Parameters
    ----------
    step_size : float > 0, default=1e-4
        Initial Langevin step ``h`` (adapted on the within-model moves during
        burn-in when ``proposal_std="auto"``).
    proposal_std : float > 0 or "auto", default="auto"
        ``s``; ``"auto"`` is ``sqrt(2 h)``; a float fixes ``h`` and ``s``
        (the paper's ``sigma = gamma``).
    target_accept : float in (0, 1), default=0.574
        Acceptance of the within-model moves aimed at.

    Notes
    -----
    A fit by this sampler sets these attributes on the estimator, besides
    those every fit has (the estimator's Attributes):

    ``step_size_``, ``proposal_std_`` : ndarray of shape (n_chains,)
        The frozen Langevin step ``h`` and proposal standard deviation
        ``s`` of each chain (``sqrt(2 h)`` with ``proposal_std="auto"``).
    ``move_acceptance_`` : ndarray of shape (n_chains, 3)
        Acceptance rates after burn-in of the deaths, the within-model
        moves and the births (NaN for a kind never proposed).

    ``acceptance_rate_`` is that of every transition after burn-in, and
    ``sample_stats_`` holds, per draw, ``acceptance_rate``, ``step_size``
    and ``n_active``, the size of the active set.
    """

    name = "rjmcmc"
    prior_kind = "sparse"
    default_burn_in, default_thin = 2000, 10

    _parameter_constraints = {
        "step_size": [Interval(Real, 0, None, closed="neither")],
        "proposal_std": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "target_accept": [Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(self, step_size=1e-4, proposal_std="auto", target_accept=0.574):
        self.step_size = step_size
        self.proposal_std = proposal_std
        self.target_accept = target_accept

    def check(self, prior, rho):
        if not isinstance(prior, MixingPrior):
            raise ValueError(
                "sampler='rjmcmc' samples the mixing prior of sparse networks and needs a MixingPrior; "
                f"got {type(prior).__name__}."
            )
        return super().check(prior, rho)

    def chains(self, target, theta0, generators, run, vectorize=True):
        return RJChains(self, target, theta0, generators, run)

    def diagnose(self, fit):
        if isinstance(self.proposal_std, str):
            return low_acceptance(fit)
        return low_acceptance(fit, "lower step_size or proposal_std (with a fixed proposal_std neither adapts)")


class RJChains:
    """K reversible-jump chains advanced together in one process."""

    def __init__(self, sampler, target, theta0, generators, run):
        self.sampler, self.target, self.run, self.gens = sampler, target, run, generators
        target.prior.check()
        K = theta0.shape[0]
        self.K, self.dtype, self.device = K, theta0.dtype, theta0.device
        self.h = torch.full((K,), float(sampler.step_size), dtype=self.dtype, device=self.device)
        self.tied = isinstance(sampler.proposal_std, str)
        self.s_fixed = None if self.tied else float(sampler.proposal_std)
        self.state = rjmcmc.init(generators, target, theta0)
        self.n_grad = np.ones(K, dtype=np.int64)
        # proposed / accepted per move type (death, within, birth) after burn-in
        self.proposed = np.zeros((K, 3), dtype=np.int64)
        self.accepted = np.zeros((K, 3), dtype=np.int64)

    def params(self, h=None, moves=rjmcmc.MOVES):
        h = self.h if h is None else h
        s = torch.sqrt(2 * h) if self.tied else torch.full_like(h, self.s_fixed)
        return rjmcmc.RJParams(h, s, moves)

    def _trial(self, h):
        """Acceptance probability of one within-model proposal at ``h``; the state is kept."""
        self.n_grad += 1
        _, info = rjmcmc.step(self.gens, self.state, self.target, self.params(h, (0.0, 1.0, 0.0)))
        return torch.where(info.is_finite, info.acceptance_prob, torch.zeros_like(info.acceptance_prob)).to(
            self.dtype
        )

    def warmup(self):
        run = self.run
        if self.tied and run.burn_in > 0:
            self.h = search_step_size(self._trial, self.h, self.gens)
        target = float(self.sampler.target_accept)
        averager = DualAveraging(self.h, target) if self.tied else None
        for i in range(run.burn_in):
            self.n_grad += 1
            self.state, info = rjmcmc.step(self.gens, self.state, self.target, self.params())
            if averager is not None:
                within = info.move == 0
                acc = info.acceptance_prob.to(self.dtype)
                # chains that jumped keep their step: feed the target itself
                h_new = averager.update(torch.where(within, acc, torch.full_like(acc, target)))
                self.h = h_new
            progress(run, "burn-in", i, run.burn_in)
        if averager is not None and run.burn_in > 0:
            self.h = averager.final()

    def frozen_params(self):
        return self.params()

    def sample_step(self, params):
        self.n_grad += 1
        self.state, info = rjmcmc.step(self.gens, self.state, self.target, params)
        kind = (info.move + 1).cpu().numpy()
        rows = np.arange(self.K)
        self.proposed[rows, kind] += 1
        self.accepted[rows, kind] += info.is_accepted.cpu().numpy()
        return {"accepted": info.is_accepted, "n_active": info.n_active}

    def summary(self):
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = self.accepted / self.proposed
        return {
            "step_size": self.h.cpu().numpy(),
            "proposal_std": self.params().proposal_std.cpu().numpy(),
            "move_acceptance": rates,
        }
