"""The HMC sampler: its settings, the cross-chain warm-up, and sampling.

Warm-up of ``burn_in`` transitions, everything frozen afterwards:

* step size per chain by dual averaging toward ``target_accept`` (0.8 by
  default), started by doubling/halving until one leapfrog step crosses it,
  and started afresh after every update of the metric (as Stan does);
* diagonal metric: ``"prior"`` keeps the prior variances (the coordinates
  the prior makes isotropic), ``"adaptive"`` re-estimates it at the end of
  Stan's windows (:func:`~.adaptation.metric_windows`) from the positions of
  all chains in the window, ``"identity"`` is the unit metric; ``"auto"``
  (the default) is ``"prior"``, or ``"adaptive"`` under a hierarchical
  prior (:class:`HMCGibbsChains`) with a warm-up of at least
  :data:`ADAPTIVE_MIN_BURN_IN` transitions;
* trajectory length ``T``: ``"auto"`` is ``pi / 2``, a quarter period of
  a direction of unit variance in the coordinates ``theta / sqrt(m)``, the
  scale of every direction the data leave to the prior (with the prior
  metric) or of every direction (with a well-estimated metric): such a
  direction is decorrelated in one transition. ``"chees"`` adapts ``T`` by
  the ChEES criterion (:class:`~.adaptation.ChEES`) with each chain's
  running mean as the centre; on the networks we measured it chose
  trajectories of a hundred or more steps, dominated by weight directions
  that do not change the function (``benchmarks/perf/bench_mixing.py``).

Transition ``t`` runs ``L_k = ceil(u_t T / h_k)`` leapfrog steps (at most
``max_leapfrog``) with the quasi-random jitter ``u_t`` of
:func:`~.adaptation.halton`, shared by the chains, so that chains with
similar step sizes finish together.
"""

import copy
import math
from numbers import Integral, Real

import numpy as np
import torch

from ..._compat import Interval, StrOptions
from ..._progress import progress
from ...priors import HierarchicalPrior
from ..adaptation import (
    ChEES,
    DualAveraging,
    RunningVariance,
    halton,
    metric_windows,
    search_step_size,
)
from ..base import low_acceptance, raise_target_accept, register
from ..runner import ChainSampler
from ..target import RowLoop
from . import gibbs as hmc_gibbs
from . import kernel as hmc

__all__ = ["HMC", "HMCChains", "HMCGibbsChains"]

# trajectory_length="auto": a quarter period of a unit-variance direction of the metric.
AUTO_LENGTH = math.pi / 2
# ChEES starts from trajectories of this many steps of the searched step size.
_CHEES_STEPS = 4
# Memory (transitions) of each chain's running mean, the centre of ChEES.
_CENTER_MEMORY = 100


METRICS = ("auto", "prior", "adaptive", "identity")


#: ``metric="auto"`` adapts the metric only from this many warm-up transitions: Stan's full schedule
#: (75 of step size alone, a first window of 25, 50 of step size alone after the last window); a shorter
#: warm-up leaves the step size too few transitions after the new metric (on a small network at a burn-in
#: of 20 most transitions diverged).
ADAPTIVE_MIN_BURN_IN = 150


def resolve_metric(metric, prior, burn_in):
    """The metric ``"auto"`` stands for: ``"adaptive"`` under a hierarchical prior with a long enough
    warm-up (:data:`ADAPTIVE_MIN_BURN_IN`), else ``"prior"``."""
    if metric != "auto":
        return metric
    hierarchical = isinstance(prior, HierarchicalPrior) and burn_in >= ADAPTIVE_MIN_BURN_IN
    return "adaptive" if hierarchical else "prior"


@register
class HMC(ChainSampler):
    """Hamiltonian Monte Carlo on the full data (:mod:`~skgibbs.samplers.hmc`), exact for ``pi_lambda``.

    Each transition runs ``L = ceil(u T / h)`` leapfrog steps (at most
    ``max_leapfrog``, ``u`` a quasi-random jitter in (0, 1)) with a diagonal
    metric and accepts the end point by Metropolis-Hastings; ``L``
    full-data gradients per transition. Step size, metric and (with
    ``"chees"``) trajectory length are adapted during warm-up, across the
    chains, then frozen (see the module docstring). ``rho`` does not apply.

    Parameters
    ----------
    step_size : float > 0, default=1e-4
        Initial leapfrog step (searched, then adapted per chain).
    target_accept : float in (0, 1), default=0.8
        Acceptance aimed at by the step-size adaptation (Stan's default).
    metric : {"auto", "prior", "adaptive", "identity"}, default="auto"
        Diagonal inverse mass: the prior variances (the coordinates the prior
        makes isotropic), Stan's windowed estimate started from them, or the
        identity. ``"auto"`` is ``"prior"`` under a fixed prior and
        ``"adaptive"`` under a hierarchical one
        (:class:`~skgibbs.priors.HierarchicalPrior`) when ``burn_in`` is at
        least 150 (Stan's full schedule of windows), whose precisions move
        the posterior scale of each group: on a 100-100 network on the
        diabetes data the prior's mean variances gave less than half the
        effective sample size of the function values (21 against 51), and a
        metric that follows the current precisions at every transition
        diverged (the ``hierarchical`` benchmark).
    trajectory_length : float > 0, "auto" or "chees", default="auto"
        ``T``; ``"auto"`` is ``pi / 2`` in the coordinates of the metric,
        ``"chees"`` adapts it by the ChEES criterion.
    max_leapfrog : int, default=64
        Most leapfrog steps of one transition.

    Notes
    -----
    A fit by this sampler sets these attributes on the estimator, besides
    those every fit has (the estimator's Attributes):

    ``step_size_`` : ndarray of shape (n_chains,)
        The frozen leapfrog step of each chain, in the coordinates of the
        metric.
    ``trajectory_length_`` : float
        The frozen integration time ``T``, shared by the chains.
    ``inverse_mass_`` : ndarray of shape (n_params,)
        The frozen diagonal inverse metric ``m``, shared by the chains.
    ``n_divergent_`` : ndarray of shape (n_chains,)
        Divergent transitions after burn-in (energy error above 1000 or a
        non-finite trajectory). Any divergence raises a
        :class:`~skgibbs.SamplerWarning`.

    ``acceptance_rate_`` is that of the trajectories' end points, and
    ``sample_stats_`` holds, per draw, ``step_size``, ``diverging``,
    ``n_steps`` (leapfrog steps), ``energy_error`` and ``energy`` (the
    Hamiltonian after the transition, which ArviZ's ``bfmi`` reads).

    Examples
    --------
    >>> from skgibbs import GibbsMLPRegressor
    >>> from skgibbs.samplers import HMC
    >>> reg = GibbsMLPRegressor(sampler=HMC(target_accept=0.9))
    >>> reg.get_params()["sampler__target_accept"]
    0.9
    """

    name = "hmc"
    default_burn_in, default_thin = 250, 1
    joint_warmup = True
    record_reductions = {"diverging": "any", "n_steps": "sum", "energy": "last"}
    shared_info = ("trajectory_length", "inverse_mass")

    _parameter_constraints = {
        "step_size": [Interval(Real, 0, None, closed="neither")],
        "target_accept": [Interval(Real, 0, 1, closed="neither")],
        "metric": [StrOptions(set(METRICS))],
        "trajectory_length": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto", "chees"})],
        "max_leapfrog": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, step_size=1e-4, target_accept=0.8, metric="auto", trajectory_length="auto", max_leapfrog=64):
        self.step_size = step_size
        self.target_accept = target_accept
        self.metric = metric
        self.trajectory_length = trajectory_length
        self.max_leapfrog = max_leapfrog

    hierarchical = True
    learns_noise = True

    def chains(self, target, theta0, generators, run, vectorize=True):
        if isinstance(target.prior, HierarchicalPrior):
            return HMCGibbsChains(self, target, theta0, generators, run, vectorize)
        return HMCChains(self, target, theta0, generators, run, vectorize)

    def summarize_records(self, logs, rho):
        """``n_divergent``: divergent transitions after warm-up, per chain."""
        return {"n_divergent": logs["diverging"].sum(0).numpy()}

    def diagnose(self, fit):
        remedy = raise_target_accept(self.target_accept)
        out = low_acceptance(fit, remedy)
        n_div = int(np.sum(fit["n_divergent_"]))
        if n_div:
            out.append(
                f"{n_div} divergent HMC transitions after warm-up: the step size is too large for parts of "
                f"the posterior, which may then be missed. {remedy[0].upper() + remedy[1:]}."
            )
        return out


class HMCChains:
    """K chains of :mod:`~skgibbs.samplers.hmc` with cross-chain warm-up."""

    def __init__(self, sampler, target, theta0, generators, run, vectorize=True):
        K, Q = theta0.shape
        self.sampler, self.run, self.gens = sampler, run, generators
        self.target = target if (vectorize or K == 1) else RowLoop(target)
        self.K, self.dtype, self.device = K, theta0.dtype, theta0.device
        self.accept_target = float(sampler.target_accept)
        self.reference = self._reference_variance(target.prior, Q)
        self.metric = resolve_metric(sampler.metric, target.prior, run.burn_in)
        self.m = torch.ones_like(self.reference) if self.metric == "identity" else self.reference
        self.h = torch.full((K,), float(sampler.step_size), dtype=self.dtype, device=self.device)
        length = sampler.trajectory_length
        self.T = AUTO_LENGTH if length == "auto" else (None if length == "chees" else float(length))
        self.n_grad = np.ones(K, dtype=np.int64)
        self.state = self._init_state(theta0)
        self.t = 0  # transitions so far: the index of the jitter

    def _reference_variance(self, prior, n_params):
        """The prior variances ``(Q,)``: the ``"prior"`` metric and the start of the adaptive one."""
        return prior.variance(n_params, self.dtype, self.device)

    def _init_state(self, theta0):
        return hmc.init(self.gens, self.target, theta0)

    def _step(self, params):
        """One transition of the state: ``(state, info, gradients beyond the trajectory's)``."""
        return (*hmc.step(self.gens, self.state, self.target, params), 0)

    def _trial_target(self):
        """``(HMCState, target)`` a trial step starts from: the state as it is."""
        return self.state, self.target

    # -- one transition -----------------------------------------------------
    def _params(self, h, T, u, m):
        """``ceil(u T / h)`` leapfrog steps per chain, at least 1 and at most ``max_leapfrog``."""
        steps = torch.ceil(u * T / h).clamp(1, int(self.sampler.max_leapfrog)).long()
        return hmc.HMCParams(h, m, steps)

    def _transition(self, h, T, m):
        self.t += 1
        u = halton(self.t)
        start = self.state.theta
        self.state, info, extra = self._step(self._params(h, T, u, m))
        self.n_grad += info.num_steps.cpu().numpy() + extra
        return start, u, info

    def _trial(self, h):
        """Acceptance of one leapfrog step at ``h``; the state is left as it was."""
        _, info = hmc.step(self.gens, *self._trial_target(), self._params(h, h, 1.0, self.m))
        self.n_grad += 1
        return info.acceptance_prob

    def _search(self):
        return search_step_size(self._trial, self.h, self.gens, threshold=self.accept_target)

    # -- the runner's interface --------------------------------------------
    def warmup(self):
        cfg, run = self.sampler, self.run
        self.h = self._search()
        chees = ChEES(_CHEES_STEPS * float(self.h.mean())) if cfg.trajectory_length == "chees" else None
        windows = metric_windows(run.burn_in) if self.metric == "adaptive" else []
        ends = {end for _, end in windows}
        first = windows[0][0] if windows else run.burn_in
        averager, var = DualAveraging(self.h, self.accept_target), None
        center = self.state.theta.clone()
        for i in range(run.burn_in):
            if chees is not None:
                self.T = chees.trajectory_length
            start, u, info = self._transition(self.h, self.T, self.m)
            self.h = averager.update(info.acceptance_prob)
            if chees is not None:
                # each chain's own running mean: the chains of a network sit in different modes
                center += (self.state.theta - center) / min(i + 2, _CENTER_MEMORY)
                args = (
                    start,
                    info.proposal,
                    info.momentum,
                    info.acceptance_prob,
                    info.is_divergent,
                    u,
                    self.m,
                )
                chees.update(*args, center=center)
                h_mean = float(self.h.mean())
                chees.bound(h_mean, int(cfg.max_leapfrog) * h_mean)
            if i >= first and var is None:
                var = RunningVariance(self.m.shape[0], self.dtype, self.device)
            if var is not None:
                var.update(self.state.theta)
            if i in ends:
                averager, var = self._new_metric(var, averager, chees), None
            progress(run, "burn-in", i, run.burn_in)
        if run.burn_in > 0:
            self.h = averager.final()
        if chees is not None:
            self.T = chees.final()

    def _new_metric(self, var, averager, chees):
        """End of a slow window: new metric and step size; ChEES's ``T`` follows the change of scale.

        ChEES measures ``T`` in the coordinates ``theta / sqrt(m)``; ``T`` is
        rescaled by the change of the root mean square of ``sd_i / sqrt(m_i)``
        (``sd_i`` from the window), so that ChEES resumes near its optimum.
        """
        sd2 = var.variance()
        old_width = float((sd2 / self.m).mean().sqrt())
        self.m = var.metric(self.reference)
        new_width = float((sd2 / self.m).mean().sqrt())
        self.h = self._search()
        if chees is not None and old_width > 0 and new_width > 0:
            chees.rescale(new_width / old_width)
        return DualAveraging(self.h, self.accept_target)

    def frozen_params(self):
        return self.h, self.T, self.m

    def take(self, rows):
        """The chains ``rows`` after warm-up, as chains of their own: what the sampling phase needs.

        The adapted ``T`` and metric and the jitter's position are shared;
        states, generators, step sizes and counts are sliced.
        """
        part = copy.copy(self)
        part.state = type(self.state)(*(v[rows] for v in self.state))
        part.gens = [self.gens[k] for k in rows]
        part.h, part.n_grad, part.K = self.h[rows], self.n_grad[rows], len(rows)
        return part

    def sample_step(self, params):
        _, _, info = self._transition(*params)
        return {
            "accepted": info.is_accepted,
            "diverging": info.is_divergent,
            "n_steps": info.num_steps,
            "energy_error": info.energy_error,
            # H = U + K of the state after the transition (Stan's energy__): az.bfmi reads it
            "energy": info.energy,
        }

    def summary(self):
        return {
            "step_size": self.h.cpu().numpy(),
            "trajectory_length": float(self.T),
            "inverse_mass": self.m.cpu().numpy(),
        }


class HMCGibbsChains(HMCChains):
    """K chains of :mod:`~skgibbs.samplers.hmc.gibbs`: HMC on the weights, Gibbs draws of the precisions.

    The warm-up is HMC's (``metric="auto"`` is Stan's windowed estimate
    here, see :class:`HMC`). The recorded ``"energy"`` is the Hamiltonian of
    the HMC step on the weights, under the precisions it ran with. Each
    transition records the precisions
    (``"precision"``, ``(K, G)``) and, with the noise learned,
    ``"noise_precision"`` (of the standardized targets).
    """

    def __init__(self, sampler, target, theta0, generators, run, vectorize=True):
        self.one_by_one = not (vectorize or theta0.shape[0] == 1)
        self.base = target
        super().__init__(sampler, target, theta0, generators, run, vectorize=True)

    def _init_state(self, theta0):
        return hmc_gibbs.init(self.gens, self.base, theta0, one_by_one=self.one_by_one)

    def _step(self, params):
        return hmc_gibbs.step(self.gens, self.state, self.base, params, self.one_by_one)

    def _trial_target(self):
        cond = hmc_gibbs.ConditionalTarget(self.base, self.state.precision, self.state.scale, self.one_by_one)
        return hmc.HMCState(self.state.theta, self.state.potential, self.state.grad), cond

    def sample_step(self, params):
        out = super().sample_step(params)
        out["precision"] = self.state.precision
        if self.base.prior.learns_noise:
            out["noise_precision"] = 2.0 * self.state.scale.to(torch.float64)
        return out
