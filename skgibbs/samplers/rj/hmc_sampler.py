"""The reversible-jump HMC sampler: HMC's warm-up on the moves inside each model, jumps between them.

The warm-up is :class:`~skgibbs.samplers.HMC`'s (step size by dual
averaging toward ``target_accept``, started by the doubling/halving search),
run on the HMC moves of :mod:`~skgibbs.samplers.rj.rjhmc` with the prior's
variance on the active coordinates as the metric; the jumps go on during
warm-up, so that the step size meets the models the chains visit.
Everything is frozen afterwards.
"""

from numbers import Integral, Real

import numpy as np
import torch

from ..._compat import Interval, StrOptions
from ...priors import MixingPrior
from ..base import register
from ..hmc import kernel as hmc
from ..hmc.sampler import HMC, HMCChains
from . import rjhmc

__all__ = ["RJHMC", "RJHMCChains"]


@register
class RJHMC(HMC):
    """Reversible jump with HMC moves inside each sparse model (:mod:`~skgibbs.samplers.rj.rjhmc`).

    Every transition runs one HMC trajectory on the active parameters (the
    inactive ones stay exact zeros) and then ``n_jumps`` birth or death
    proposals, each adding or removing one parameter with the others fixed
    (a newborn is drawn from a Gaussian fitted to its conditional). Exact
    for the mixing prior's posterior, like :class:`RJMCMC`. Needs a
    :class:`~skgibbs.priors.MixingPrior`; ``rho`` does not apply.

    Parameters
    ----------
    step_size : float > 0, default=1e-4
        Initial leapfrog step (searched, then adapted per chain on the HMC
        moves during burn-in).
    target_accept : float in (0, 1), default=0.8
        Acceptance of the HMC moves aimed at.
    trajectory_length : float > 0 or "auto", default="auto"
        ``T`` in the coordinates of the metric (the prior's standard
        deviations); ``"auto"`` is ``pi / 2``, as for :class:`HMC`.
    max_leapfrog : int, default=64
        Most leapfrog steps of one HMC move.
    n_jumps : int >= 0, default=8
        Birth or death proposals after each HMC move (one gradient and two
        loss evaluations each); 0 keeps every active set fixed. A value
        given above the network's number of parameters is refused by
        :class:`~skgibbs.SparseGibbsMLPRegressor` before any work.
    hold_active : float in [0, 1), default=0.0
        Fraction of the warm-up (``burn_in``) run with HMC moves alone, the
        chains keeping their starting active sets, before the jumps begin.
        From a start that fits nothing (a random network) the deaths cost
        the loss nothing, and a chain can empty its network before HMC
        has fitted it; once too few weights are left to carry a path from
        the inputs to the output, single births cannot rebuild one. The
        estimator pre-trains its starts and does not need it. Warm-up
        only: the sampled target is the same.

    Notes
    -----
    A fit by this sampler sets these attributes on the estimator, besides
    those every fit has (the estimator's Attributes):

    ``step_size_`` : ndarray of shape (n_chains,)
        The frozen leapfrog step of each chain's HMC moves, in the
        coordinates of the metric.
    ``trajectory_length_`` : float
        The frozen integration time ``T`` of the HMC moves.
    ``inverse_mass_`` : ndarray of shape (n_params,)
        The diagonal inverse metric: the variance of each parameter's
        density when active (an HMC move uses those of the active
        parameters).
    ``n_divergent_`` : ndarray of shape (n_chains,)
        Divergent HMC moves after burn-in. Any raises a
        :class:`~skgibbs.SamplerWarning`.
    ``move_acceptance_`` : ndarray of shape (n_chains, 3)
        Acceptance rates after burn-in of the deaths, the HMC moves and the
        births (NaN for a kind never proposed, as with ``n_jumps=0``).

    ``acceptance_rate_`` is that of the HMC moves, and ``sample_stats_``
    holds, per draw, HMC's records (``step_size``, ``diverging``,
    ``n_steps``, ``energy_error``, ``energy``) and ``n_active``, the size
    of the active set.

    Examples
    --------
    >>> from skgibbs import SparseGibbsMLPRegressor
    >>> from skgibbs.samplers import RJHMC
    >>> reg = SparseGibbsMLPRegressor(sampler=RJHMC(n_jumps=16))
    >>> reg.get_params()["sampler__n_jumps"]
    16
    """

    name = "rjhmc"
    prior_kind = "sparse"
    hierarchical = False
    learns_noise = False
    metric = "prior"
    default_burn_in, default_thin = 250, 1
    #: ``n_jumps`` when none is given (the constructor's default): the sparse estimator leaves it to the
    #: sampler on a network of fewer parameters, where it refuses a larger value given
    default_n_jumps = 8

    _parameter_constraints = {
        "step_size": HMC._parameter_constraints["step_size"],
        "target_accept": HMC._parameter_constraints["target_accept"],
        "trajectory_length": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "max_leapfrog": HMC._parameter_constraints["max_leapfrog"],
        "n_jumps": [Interval(Integral, 0, None, closed="left")],
        "hold_active": [Interval(Real, 0, 1, closed="left")],
    }

    def __init__(
        self,
        step_size=1e-4,
        target_accept=0.8,
        trajectory_length="auto",
        max_leapfrog=64,
        n_jumps=default_n_jumps,
        hold_active=0.0,
    ):
        self.step_size = step_size
        self.target_accept = target_accept
        self.trajectory_length = trajectory_length
        self.max_leapfrog = max_leapfrog
        self.n_jumps = n_jumps
        self.hold_active = hold_active

    def check(self, prior, rho):
        if not isinstance(prior, MixingPrior):
            raise ValueError(
                "sampler='rjhmc' samples the mixing prior of sparse networks and needs a MixingPrior; "
                f"got {type(prior).__name__}."
            )
        super().check(prior, rho)
        return 1.0

    def chains(self, target, theta0, generators, run, vectorize=True):
        return RJHMCChains(self, target, theta0, generators, run)


class RJHMCChains(HMCChains):
    """K chains of :mod:`~skgibbs.samplers.rj.rjhmc` advanced together, with HMC's cross-chain warm-up.

    Records per transition: ``accepted`` (the HMC move), ``n_active``, and
    HMC's ``diverging`` and ``n_steps``; the summary adds
    ``move_acceptance`` ``(K, 3)``: the acceptance rates of the deaths, the
    HMC moves and the births after warm-up.
    """

    def __init__(self, sampler, target, theta0, generators, run, vectorize=True):
        self.base = target
        target.prior.check()
        super().__init__(sampler, target, theta0, generators, run, vectorize=True)
        self.n_jumps = int(sampler.n_jumps)
        # the first transitions of the warm-up keep the starting active sets (hold_active)
        self.hold = int(float(sampler.hold_active) * run.burn_in)
        self.proposed = np.zeros((self.K, 3), dtype=np.int64)
        self.accepted = np.zeros((self.K, 3), dtype=np.int64)
        self.last = None

    def _reference_variance(self, prior, n_params):
        return rjhmc.reference_variance(prior, n_params, torch.empty(0, dtype=self.dtype, device=self.device))

    def _init_state(self, theta0):
        return rjhmc.init(self.gens, self.base, theta0)

    def _params(self, h, T, u, m):
        params = super()._params(h, T, u, m)
        return params._replace(inverse_mass=params.inverse_mass * self.state.active)

    def _step(self, params):
        # self.t counts the transitions, this one included: 1, ..., burn_in during warm-up
        n_jumps = 0 if self.t <= self.hold else self.n_jumps
        self.state, info = rjhmc.step(self.gens, self.state, self.base, rjhmc.RJHMCParams(params, n_jumps))
        self.last = info
        return self.state, info.hmc, n_jumps

    def _trial_target(self):
        s = self.state
        return hmc.HMCState(s.theta, s.potential, s.grad), rjhmc.ActiveSetTarget(
            self.base, s.active, self.dtype
        )

    def take(self, rows):
        part = super().take(rows)
        part.proposed, part.accepted = self.proposed[rows].copy(), self.accepted[rows].copy()
        return part

    def sample_step(self, params):
        out = super().sample_step(params)
        info = self.last
        prop, acc = info.jump_proposed.cpu().numpy(), info.jump_accepted.cpu().numpy()
        self.proposed[:, [0, 2]] += prop
        self.accepted[:, [0, 2]] += acc
        self.proposed[:, 1] += 1
        self.accepted[:, 1] += info.hmc.is_accepted.cpu().numpy()
        out["n_active"] = info.n_active
        return out

    def summary(self):
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = self.accepted / self.proposed
        return {**super().summary(), "move_acceptance": rates}
