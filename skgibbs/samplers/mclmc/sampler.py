"""The microcanonical samplers: settings, warm-up from pre-trained starts, and sampling.

Both kernels run each chain with its own step size, decoherence length
``L`` and diagonal preconditioner, tuned during warm-up from that chain's
own trajectory (the chains of a network start from separately pre-trained
networks and sit in different modes, as in the Microcanonical Langevin
Ensembles of Sommer, Robnik, Nozadze, Seljak and Rügamer, ICLR 2025), then
frozen. The budget is bounded before the run: ``burn_in`` warm-up
transitions of :data:`WARMUP_STEPS` integrator steps and ``n_samples *
thin`` transitions of ``steps_per_transition`` steps (:class:`MCLMC`; an
integer fixes the budget, ``"auto"`` takes half the decoherence length
``L / (2 eps)`` in steps, at most :data:`MAX_STEPS_PER_TRANSITION`), or of
trajectories of at most ``max_steps`` steps (:class:`AdjustedMCLMC`).

Warm-up (fractions of its steps or transitions):

1. the first 40%: step size only, from the energy error
   (:class:`~.tuning.EnergyVarianceStepSize`) or by dual averaging toward
   ``target_accept`` (adjusted), started by doubling/halving a trial step;
2. the next 30%: the same, and the chain's positions weighted by the step
   size give a diagonal preconditioner (``preconditioning=True``), the
   scale of each coordinate; the step size is searched afresh in the new
   coordinates;
3. the last 30%: a third to re-adapt the step size, the rest at a fixed
   step size to measure ``L`` from the positions' effective sample size
   (:func:`~.tuning.decoherence_length`).

Under a hierarchical prior (``prior="layer"``/``"ard"``, ``temperature=
"learn"``) the chains run, by default (``parametrization="noncentered"``),
on the non-centred target of :mod:`~skgibbs.samplers.noncentered`: each
group's log-precision is a coordinate moved with the weights and the noise
is integrated out, so that nothing is drawn between transitions; a draw
records the weights, the precisions and a noise precision drawn from its
conditional. With ``parametrization="centered"`` the precisions and the
noise are drawn from their exact conditionals between transitions
(:func:`~skgibbs.samplers.hmc.gibbs.redraw`), a Gibbs sweep as with HMC.
The step size, ``L`` and the preconditioner are then those of the
sampler's own coordinates (``preconditioner`` has ``Q + G`` columns when
non-centred).
"""

import math
from numbers import Integral, Real

import numpy as np
import torch

from ..._compat import Interval, StrOptions
from ..._progress import progress
from ..._random import select
from ...priors import HierarchicalPrior
from ..adaptation import DualAveraging, halton, search_step_size
from ..base import low_acceptance, raise_target_accept, register
from ..hmc import gibbs as hmc_gibbs
from ..hmc.kernel import evaluator
from ..noncentered import PARAMETRIZATIONS, NonCenteredTarget
from ..rescaling import RescalingMoves
from ..runner import ChainSampler
from ..target import RowLoop
from . import adjusted, kernel
from .integrator import GRADIENTS_PER_STEP, INTEGRATORS, integrate, moving_dimension, random_direction
from .tuning import EnergyVarianceStepSize, WeightedMoments, decoherence_length

__all__ = ["MCLMC", "AdjustedMCLMC"]

#: positions of at most this many coordinates (evenly spaced) are kept to measure L
_L_COORDINATES = 1024
#: the phases of the warm-up: step size alone, step size and preconditioner, re-adapted step size and L
_PHASES = (0.4, 0.3)
#: integrator steps of a warm-up transition of MCLMC
WARMUP_STEPS = 16
#: the most integrator steps of an MCLMC transition with ``steps_per_transition="auto"``
MAX_STEPS_PER_TRANSITION = 32


def _phases(total):
    """``(end of phase 1, end of phase 2, end of the step-size re-adaptation)`` of a warm-up of ``total``."""
    n1 = int(_PHASES[0] * total)
    n2 = n1 + int(_PHASES[1] * total)
    return n1, n2, n2 + (total - n2) // 3


class _Chains:
    """What both drivers share: the target (hierarchical or not), the preconditioner, the Gibbs sweep."""

    def __init__(self, sampler, target, theta0, generators, run, vectorize=True):
        K = theta0.shape[0]
        self.sampler, self.run, self.gens, self.K = sampler, run, generators, K
        self.one_by_one = not (vectorize or K == 1)
        hierarchical = isinstance(target.prior, HierarchicalPrior)
        # non-centred: the scales are coordinates of the state and the noise is integrated out (no Gibbs
        # sweeps); centred: the weights alone, the precisions and the noise drawn between transitions
        self.noncentered = hierarchical and sampler.parametrization == "noncentered"
        self.hierarchical = hierarchical and not self.noncentered
        self.base = target
        self.dtype, self.device = theta0.dtype, theta0.device
        self.rescaling = None
        if self.noncentered:
            self.target = NonCenteredTarget(target, self.one_by_one)
            theta0 = self.target.from_theta(theta0)
            if sampler.rescaling:
                spec = getattr(getattr(target, "potential", None), "spec", None)
                self.rescaling = RescalingMoves.for_target(self.target, spec)
            self.reference = torch.ones(theta0.shape[1], dtype=self.dtype, device=self.device)
        else:
            self.target = target if (vectorize or K == 1) else RowLoop(target)
            self.reference = target.prior.variance(theta0.shape[1], self.dtype, self.device).sqrt()
        Q = theta0.shape[1]
        self.sigma = self.reference.expand(K, Q).clone()
        self.dim = Q
        self.n_grad = np.ones(K, dtype=np.int64)
        self.per_step = GRADIENTS_PER_STEP[sampler.integrator]
        self.coords = torch.as_tensor(np.unique(np.linspace(0, Q - 1, min(Q, _L_COORDINATES)).astype(int)))
        self.precision = self.scale = None
        if self.hierarchical:
            st = hmc_gibbs.init(generators, target, theta0, one_by_one=self.one_by_one)
            self.precision, self.scale = st.precision, st.scale
            self._start = (st.theta, st.potential, st.grad)
        else:
            self._start = (theta0.detach(), *self.target.value_and_grad(theta0))

    def position(self):
        """The weights of the current states, ``(K, Q)`` (what a draw records)."""
        theta = self.state.theta
        return self.target.to_theta(theta) if self.noncentered else theta

    def conditional(self):
        """The potential a transition sees: ``U(theta | tau, s)`` under a hierarchical prior."""
        if self.hierarchical:
            return hmc_gibbs.ConditionalTarget(self.base, self.precision, self.scale, self.one_by_one)
        return self.target

    def gibbs(self):
        """Draw the hyperparameters given the current weights; the cached ``U`` follows them.

        On the non-centred target, the moves along the network's rescaling
        orbits (:mod:`~skgibbs.samplers.rescaling`), then one evaluation of
        the potential at the new point.
        """
        if self.rescaling is not None:
            st = self.state
            theta = self.rescaling.move(self.gens, st.theta)
            u, g = self.target.value_and_grad(theta)
            self.state = st._replace(theta=theta, potential=u, grad=g)
            self.n_grad += 1
            return
        if not self.hierarchical:
            return
        st = self.state
        u, g, self.precision, self.scale, extra = hmc_gibbs.redraw(
            self.gens, self.base, st.theta, st.potential, st.grad, self.precision, self.one_by_one
        )
        self.state = st._replace(potential=u, grad=g)
        self.n_grad += extra

    def precondition(self, moments, n):
        """The scale of each coordinate from the warm-up's positions, shrunk toward the prior's (Stan's rule)."""
        var = moments.variance().to(self.dtype)
        ref = self.reference.expand_as(var) ** 2
        self.sigma = ((n * var + 5e-3 * ref) / (n + 5.0)).sqrt()

    def record_hyper(self, out):
        if self.noncentered:
            out.update(self.target.hyperparameters(self.gens, self.state.theta))
        elif self.hierarchical:
            out["precision"] = self.precision
            if self.base.prior.learns_noise:
                out["noise_precision"] = 2.0 * self.scale.to(torch.float64)
        return out

    def trial_energy(self, eps, n_steps=1):
        """``(W, divergent)`` of a deterministic trial trajectory from the current point; draws one velocity."""
        st = self.state
        u = random_direction(self.gens, st.theta, self.sigma)
        steps = torch.full((self.K,), n_steps, dtype=torch.long, device=self.device)
        out = integrate(st.theta, u, st.potential, st.grad, eps, self.sigma, steps, evaluator(self.conditional()),
                        self.sampler.integrator)
        self.n_grad += n_steps * self.per_step
        return out[4], out[5]

    def take(self, rows):  # pragma: no cover - joint_warmup is False
        raise NotImplementedError

    def frozen_params(self):
        return self.eps, self.L, self.sigma

    def summary(self):
        return {
            "step_size": self.eps.cpu().numpy(),
            "decoherence_length": self.L.cpu().numpy(),
            "preconditioner": self.sigma.cpu().numpy(),
        }


@register
class MCLMC(ChainSampler):
    """Unadjusted microcanonical Langevin Monte Carlo (:mod:`~skgibbs.samplers.mclmc.kernel`): fast, biased.

    Isokinetic dynamics with partial refreshment of the velocity, no
    Metropolis-Hastings step; the step size is tuned so that the variance
    of the energy error per dimension is ``desired_energy_var``, which
    bounds the bias of the draws (relative errors of the variances of about
    that size; Robnik and Seljak, 2024). Each transition is
    ``steps_per_transition`` integrator steps (a warm-up transition
    :data:`WARMUP_STEPS`); the draws are the states at the ends of
    transitions. ``rho`` does not apply.

    Parameters
    ----------
    desired_energy_var : float > 0, default=5e-4
        Target of ``Var[energy error] / d`` (BlackJAX's default).
    steps_per_transition : int or "auto", default="auto"
        Integrator steps of a sampling transition (between two Gibbs sweeps
        of a hierarchical prior; between two kept states at ``thin=1``).
        ``"auto"``: half the chains' median decoherence length in steps,
        ``round(L / (2 eps))``, between 1 and :data:`MAX_STEPS_PER_TRANSITION`,
        so that successive draws are about half a decoherence length apart
        whatever the posterior's scale; an integer fixes the budget in
        gradients before the run.
    integrator : {"mclachlan", "leapfrog"}, default="mclachlan"
        Two gradients a step, or one with a larger energy error.
    preconditioning : bool, default=True
        Adapt a diagonal preconditioner during warm-up (else the prior's scales).
    L_factor : float > 0, default=0.4
        ``L = L_factor * eps * mean(steps / ESS)``.
    parametrization : {"noncentered", "centered"}, default="noncentered"
        How a hierarchical prior (``prior="layer"``/``"ard"``, the noise
        learned) is sampled: ``"noncentered"``, the scales as coordinates
        of the state and the noise integrated out
        (:class:`~skgibbs.samplers.noncentered.NonCenteredTarget`);
        ``"centered"``, the weights alone with Gibbs sweeps of the
        precisions and the noise between transitions. Ignored otherwise.
    rescaling : bool, default=False
        On the non-centred target of a network whose activation is ReLU
        (or none), draw each hidden layer's and each hidden unit's scale
        along the network's rescaling symmetry from its exact conditional
        between transitions (:mod:`~skgibbs.samplers.rescaling`): the
        likelihood is flat there and the kernel walks those directions
        slowly. One more evaluation of the potential a transition. Ignored
        otherwise.

    Notes
    -----
    A fit by this sampler sets these attributes on the estimator, besides
    those every fit has (the estimator's Attributes):

    ``step_size_`` : ndarray of shape (n_chains,)
        The frozen step size ``eps`` of each chain.
    ``decoherence_length_`` : ndarray of shape (n_chains,)
        The frozen decoherence length ``L`` of each chain.
    ``preconditioner_`` : ndarray of shape (n_chains, n_coordinates)
        The frozen diagonal preconditioner ``sigma`` of each chain, the
        scale of each coordinate of the state: ``n_params`` of them, and
        under a hierarchical prior with ``parametrization="noncentered"``
        one more per group of ``prior_groups_`` (its log-precision).
    ``steps_per_transition_`` : ndarray of shape (n_chains,)
        Integrator steps of a sampling transition (the same in every
        entry; ``steps_per_transition`` resolved).
    ``n_divergent_`` : ndarray of shape (n_chains,)
        Transitions with a non-finite step after burn-in. Any raises a
        :class:`~skgibbs.SamplerWarning`.

    There is no ``acceptance_rate_``: nothing is rejected.
    ``sample_stats_`` holds, per draw, ``step_size``, ``diverging`` and
    ``energy_var`` (the transition's squared energy errors per step and
    dimension).

    Examples
    --------
    >>> from skgibbs import GibbsMLPRegressor
    >>> from skgibbs.samplers import MCLMC
    >>> GibbsMLPRegressor(sampler=MCLMC(desired_energy_var=1e-3)).get_params()["sampler__desired_energy_var"]
    0.001
    """

    name = "mclmc"
    default_burn_in, default_thin = 200, 1
    hierarchical = True
    learns_noise = True
    record_reductions = {"diverging": "any", "energy_var": "mean"}

    _parameter_constraints = {
        "desired_energy_var": [Interval(Real, 0, None, closed="neither")],
        "steps_per_transition": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "integrator": [StrOptions(set(INTEGRATORS))],
        "preconditioning": ["boolean"],
        "L_factor": [Interval(Real, 0, None, closed="neither")],
        "parametrization": [StrOptions(set(PARAMETRIZATIONS))],
        "rescaling": ["boolean"],
    }

    def __init__(self, desired_energy_var=5e-4, steps_per_transition="auto", integrator="mclachlan",
                 preconditioning=True, L_factor=0.4, parametrization="noncentered", rescaling=False):
        self.desired_energy_var = desired_energy_var
        self.steps_per_transition = steps_per_transition
        self.integrator = integrator
        self.preconditioning = preconditioning
        self.L_factor = L_factor
        self.parametrization = parametrization
        self.rescaling = rescaling

    def chains(self, target, theta0, generators, run, vectorize=True):
        return MCLMCChains(self, target, theta0, generators, run, vectorize)

    def summarize_records(self, logs, rho):
        """``n_divergent``: transitions with a non-finite step after warm-up, per chain."""
        return {"n_divergent": logs["diverging"].sum(0).numpy()}

    def diagnose(self, fit):
        return _divergence_message(fit, "raise burn_in or lower desired_energy_var")


def _divergence_message(fit, remedy):
    n_div = int(np.sum(fit.get("n_divergent_", 0)))
    if n_div:
        return [
            f"{n_div} divergent transitions after warm-up: the step size is too large for parts of the "
            f"posterior, which may then be missed. {remedy[0].upper() + remedy[1:]}."
        ]
    return []


class MCLMCChains(_Chains):
    """K chains of unadjusted MCLMC, each tuned on its own trajectory."""

    def __init__(self, sampler, target, theta0, generators, run, vectorize=True):
        super().__init__(sampler, target, theta0, generators, run, vectorize)
        theta, u, grad = self._start
        self.state = kernel.MCLMCState(theta, random_direction(generators, theta, self.sigma), u, grad)
        self.eps = torch.full((self.K,), 1e-3, dtype=torch.float64, device=self.device)
        self.L = torch.full((self.K,), math.sqrt(self.dim), dtype=torch.float64, device=self.device)
        self._built = None  # ((eps, L, sigma), MCLMCParams) of the last step

    def _params(self, eps, L, sigma):
        # built again only when a setting changed (every step of the warm-up, once for the sampling)
        built = self._built
        if built is None or any(a is not b for a, b in zip(built[0], (eps, L, sigma))):
            dim = built[1].dim if built is not None and built[0][2] is sigma else moving_dimension(sigma)
            params = kernel.MCLMCParams(eps.to(self.dtype), L.to(self.dtype), sigma, self.sampler.integrator, dim)
            self._built = built = ((eps, L, sigma), params)
        return built[1]

    def _step(self, eps, L, sigma):
        self.state, info = kernel.step(self.gens, self.state, self.conditional(), self._params(eps, L, sigma))
        self.n_grad += self.per_step
        return info

    def _search(self):
        """Double or halve each chain's step until one step's ``E^2 / d`` crosses ``desired_energy_var``."""
        target = float(self.sampler.desired_energy_var)

        def trial(eps):
            error, divergent = self.trial_energy(eps.to(self.dtype))
            xi = torch.where(divergent, torch.full_like(error, math.inf), error * error / (self.dim * target))
            return 1.0 / (1.0 + xi)

        return search_step_size(trial, self.eps, self.gens, threshold=0.5)

    def warmup(self):
        cfg, run = self.sampler, self.run
        n_steps = WARMUP_STEPS
        total = run.burn_in * n_steps
        self.eps = self._search()
        if total == 0:
            return
        n1, n2, n3 = _phases(total)
        adapt = EnergyVarianceStepSize(self.eps, self.dim, cfg.desired_energy_var)
        moments = WeightedMoments(self.K, self.dim, self.device)
        positions, log_eps, n_avg = [], torch.zeros_like(self.eps), 0
        for i in range(total):
            before = self.state
            info = self._step(self.eps, self.L, self.sigma)
            if i < n3:
                wild = adapt.is_wild(info.energy_change)
                if bool(wild.any()):  # back to where the chain was: a wild step is a rejected one here
                    self.state = select(~wild, self.state, before)
                self.eps = adapt.update(info.energy_change, info.is_divergent)
            if (n2 + n3) // 2 <= i < n3:
                # the step size kept is the geometric mean over the end of the re-adaptation, not its last
                # iterate: a rare large energy error (a ReLU kink crossed) pulls the iterate down for about
                # n_eff steps, and a warm-up that ended inside such a dip would keep a step too small
                log_eps += torch.log(self.eps)
                n_avg += 1
                if i == n3 - 1:
                    self.eps = torch.exp(log_eps / n_avg)
            if n1 <= i < n2:
                moments.update(self.state.theta, self.eps)
            if i == n2 - 1 and cfg.preconditioning and n2 > n1:
                self.precondition(moments, n2 - n1)
                self.L = torch.full_like(self.L, math.sqrt(self.dim))
                self.state = self.state._replace(momentum=random_direction(self.gens, self.state.theta, self.sigma))
                self.eps = self._search()
                adapt = EnergyVarianceStepSize(self.eps, self.dim, cfg.desired_energy_var)
            if i >= n3:
                positions.append(self.state.theta[:, self.coords].to(torch.float64))
            if (i + 1) % n_steps == 0:
                self.gibbs()
                progress(run, "burn-in", i // n_steps, run.burn_in)
        if len(positions) >= 8:
            L = decoherence_length(torch.stack(positions, 1).cpu().numpy(), self.eps.cpu().numpy(), cfg.L_factor)
            L = torch.as_tensor(L, dtype=torch.float64, device=self.device)
            self.L = torch.where(torch.isfinite(L) & (L > 0), L, self.L)

    def steps(self):
        """Integrator steps of a sampling transition (the same for every chain of the group)."""
        fixed = self.sampler.steps_per_transition
        if fixed != "auto":
            return int(fixed)
        ratio = float(torch.median(self.L / self.eps))
        return int(min(max(round(ratio / 2), 1), MAX_STEPS_PER_TRANSITION))

    def frozen_params(self):
        self.n_steps = self.steps()
        return super().frozen_params()

    def sample_step(self, params):
        n_steps = self.n_steps
        energy = torch.zeros(self.K, dtype=torch.float64, device=self.device)
        diverging = torch.zeros(self.K, dtype=torch.bool, device=self.device)
        for _ in range(n_steps):
            info = self._step(*params)
            energy += info.energy_change**2
            diverging |= info.is_divergent
        self.gibbs()
        return self.record_hyper({"diverging": diverging, "energy_var": energy / (n_steps * self.dim)})

    def summary(self):
        return {**super().summary(), "steps_per_transition": np.full(self.K, self.steps(), dtype=np.int64)}


@register
class AdjustedMCLMC(ChainSampler):
    """Metropolis-adjusted microcanonical HMC (:mod:`~skgibbs.samplers.mclmc.adjusted`), exact for ``pi_lambda``.

    Each transition draws a fresh unit velocity, integrates ``N`` isokinetic
    steps (``N = ceil(2 u L / eps)`` for a quasi-random ``u`` in (0, 1),
    at most ``max_steps``) and accepts by Metropolis-Hastings on the
    energy error. The step size is adapted toward ``target_accept`` by dual
    averaging, ``L`` from the positions' effective sample size, a diagonal
    preconditioner from the warm-up. ``rho`` does not apply.

    Parameters
    ----------
    target_accept : float in (0, 1), default=0.9
        Acceptance aimed at by the step-size adaptation (the MAMS paper's).
    max_steps : int, default=64
        Most integrator steps of one trajectory.
    integrator : {"mclachlan", "leapfrog"}, default="mclachlan"
    preconditioning : bool, default=True
    L_factor : float > 0, default=0.4
    parametrization : {"noncentered", "centered"}, default="noncentered"
    rescaling : bool, default=False
        As :class:`MCLMC`'s.

    Notes
    -----
    A fit by this sampler sets these attributes on the estimator, besides
    those every fit has (the estimator's Attributes):

    ``step_size_``, ``decoherence_length_`` : ndarray of shape (n_chains,)
        The frozen step size ``eps`` and decoherence length ``L`` of each
        chain.
    ``preconditioner_`` : ndarray of shape (n_chains, n_coordinates)
        The frozen diagonal preconditioner of each chain, as for
        :class:`MCLMC`.
    ``n_divergent_`` : ndarray of shape (n_chains,)
        Divergent transitions after burn-in. Any raises a
        :class:`~skgibbs.SamplerWarning`.

    ``acceptance_rate_`` is that of the trajectories' end points, and
    ``sample_stats_`` holds, per draw, ``acceptance_rate``, ``step_size``,
    ``diverging``, ``n_steps`` (integrator steps) and ``energy_error``.

    Examples
    --------
    >>> from skgibbs.samplers import AdjustedMCLMC, get_sampler
    >>> get_sampler("adjusted_mclmc").target_accept
    0.9
    """

    name = "adjusted_mclmc"
    default_burn_in, default_thin = 250, 1
    hierarchical = True
    learns_noise = True
    record_reductions = {"diverging": "any", "n_steps": "sum", "energy_error": "last"}

    _parameter_constraints = {
        "target_accept": [Interval(Real, 0, 1, closed="neither")],
        "max_steps": [Interval(Integral, 1, None, closed="left")],
        "integrator": MCLMC._parameter_constraints["integrator"],
        "preconditioning": MCLMC._parameter_constraints["preconditioning"],
        "L_factor": MCLMC._parameter_constraints["L_factor"],
        "parametrization": MCLMC._parameter_constraints["parametrization"],
        "rescaling": ["boolean"],
    }

    def __init__(self, target_accept=0.9, max_steps=64, integrator="mclachlan", preconditioning=True,
                 L_factor=0.4, parametrization="noncentered", rescaling=False):
        self.target_accept = target_accept
        self.max_steps = max_steps
        self.integrator = integrator
        self.preconditioning = preconditioning
        self.L_factor = L_factor
        self.parametrization = parametrization
        self.rescaling = rescaling

    def chains(self, target, theta0, generators, run, vectorize=True):
        return AdjustedChains(self, target, theta0, generators, run, vectorize)

    def summarize_records(self, logs, rho):
        """``n_divergent``: divergent transitions after warm-up, per chain."""
        return {"n_divergent": logs["diverging"].sum(0).numpy()}

    def diagnose(self, fit):
        remedy = raise_target_accept(self.target_accept)
        return low_acceptance(fit, remedy) + _divergence_message(fit, remedy)


class AdjustedChains(_Chains):
    """K chains of adjusted MCLMC, each tuned on its own trajectory."""

    #: trajectories of this many steps until L is measured
    initial_steps = 8

    def __init__(self, sampler, target, theta0, generators, run, vectorize=True):
        super().__init__(sampler, target, theta0, generators, run, vectorize)
        self.state = adjusted.MAMSState(*self._start)
        self.eps = torch.full((self.K,), 1e-3, dtype=torch.float64, device=self.device)
        self.L = None  # a fixed number of steps until measured
        self.t = 0

    def _num_steps(self, eps, L, u):
        if L is None:
            return torch.full((self.K,), self.initial_steps, dtype=torch.long, device=self.device)
        return torch.ceil(2.0 * u * L / eps).clamp(1, int(self.sampler.max_steps)).long()

    def _transition(self, eps, L, sigma):
        self.t += 1
        steps = self._num_steps(eps, L, halton(self.t))
        params = adjusted.MAMSParams(eps.to(self.dtype), sigma, steps, self.sampler.integrator)
        self.state, info = adjusted.step(self.gens, self.state, self.conditional(), params)
        self.n_grad += info.num_grads.cpu().numpy()
        self.gibbs()
        return info

    def _search(self):
        def trial(eps):
            error, divergent = self.trial_energy(eps.to(self.dtype))
            return torch.where(divergent, torch.zeros_like(error), torch.exp(-error.clamp(min=0.0)))

        return search_step_size(trial, self.eps, self.gens, threshold=float(self.sampler.target_accept))

    def warmup(self):
        cfg, run = self.sampler, self.run
        self.eps = self._search()
        if run.burn_in == 0:
            return
        n1, n2, n3 = _phases(run.burn_in)
        target = float(cfg.target_accept)
        averager = DualAveraging(self.eps, target)
        moments = WeightedMoments(self.K, self.dim, self.device)
        positions, steps = [], 0
        for i in range(run.burn_in):
            info = self._transition(self.eps, self.L, self.sigma)
            if i < n3:
                self.eps = averager.update(info.acceptance_prob.to(self.eps.dtype))
            if n1 <= i < n2:
                moments.update(self.state.theta, torch.ones_like(self.eps))
            if i == n2 - 1 and cfg.preconditioning and n2 > n1:
                self.precondition(moments, n2 - n1)
                self.eps = self._search()
                averager = DualAveraging(self.eps, target)
            if i == n3 - 1:
                self.eps = averager.final()
            if i >= n3:
                positions.append(self.state.theta[:, self.coords].to(torch.float64))
                steps += int(info.num_steps.max())
            progress(run, "burn-in", i, run.burn_in)
        if len(positions) >= 8:
            # L from the ESS per transition: steps / ESS transitions' worth of integrator steps
            per = steps / len(positions)
            L = decoherence_length(torch.stack(positions, 1).cpu().numpy(), self.eps.cpu().numpy() * per,
                                   cfg.L_factor)
            L = torch.as_tensor(L, dtype=torch.float64, device=self.device)
            self.L = torch.where(torch.isfinite(L) & (L > 0), L, self.eps * self.initial_steps)
        else:
            self.L = self.eps * self.initial_steps

    def sample_step(self, params):
        info = self._transition(*params)
        return self.record_hyper({
            "accepted": info.is_accepted,
            "diverging": info.is_divergent,
            "n_steps": info.num_steps,
            "energy_error": info.energy_error,
        })
