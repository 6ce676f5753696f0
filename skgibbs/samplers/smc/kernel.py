"""The pure stages of tempered SMC: reweighting, resampling, the HMC moves at a temperature.

Functions of NamedTuple states, tensors and the particles' own generators,
as every kernel (the method is described in :mod:`skgibbs.samplers.smc`).
"""

import math
from statistics import NormalDist
from typing import NamedTuple

import torch

from ..hmc import kernel as hmc
from ..target import Target

__all__ = [
    "SMCState",
    "init",
    "conditional_ess",
    "next_beta",
    "reweight",
    "systematic_resample",
    "resample",
    "particle_variance",
    "tempered",
    "hmc_state",
    "move",
    "adapt_step_size",
]

_NORMAL = NormalDist()


#: the inverse mass is floored at this fraction of the prior variance
MASS_FLOOR = 1e-6


#: the step size of a transition is h (1 + JITTER (2 u - 1)), u quasi-random in (0, 1)
JITTER = 0.2


#: bisection steps on beta' (the interval halves each time)
BISECTION_STEPS = 60


class SMCState(NamedTuple):
    """The particles at one temperature, with their full-data loss cached."""

    theta: torch.Tensor  # (P, Q)
    loss: torch.Tensor  # (P,) sum_i l_i(theta), the loss sum of the full data
    loss_grad: torch.Tensor  # (P, Q) its gradient
    beta: float
    log_evidence: float  # log Z_beta (estimate)


# -- the particles -------------------------------------------------------------------
class _OneByOne:
    """A target evaluated one particle at a time: networks too large to batch (``vectorize=False``)."""

    def __init__(self, target):
        self.target = target

    def __getattr__(self, name):
        return getattr(self.target, name)

    def _rows(self, evaluate, theta):
        parts = [evaluate(theta[k : k + 1]) for k in range(theta.shape[0])]
        return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])

    def value_and_grad(self, theta):
        return self._rows(self.target.value_and_grad, theta)

    def loss_sum_and_grad(self, theta):
        return self._rows(self.target.loss_sum_and_grad, theta)


def _evaluate(target, theta, beta, log_evidence):
    loss, grad = target.loss_sum_and_grad(theta)
    return SMCState(theta.detach(), loss, grad, float(beta), float(log_evidence))


def init(generators, target, theta, params=None):
    """The particles ``theta`` ``(P, Q)`` at ``beta = 0`` (``log Z_0 = 0``), their loss and its gradient.

    The sampler draws ``theta`` from the normalised prior
    (:meth:`skgibbs.priors.Prior.sample`), one particle per generator; no
    draw here. One gradient per particle.

    Parameters
    ----------
    generators : list of torch.Generator
        Unused (the signature of every kernel's ``init``).
    target : Target
    theta : torch.Tensor of shape (P, Q)
    params : None

    Returns
    -------
    SMCState
    """
    return _evaluate(target, theta, 0.0, 0.0)


def _incremental(state, target, beta_new, energy=None):
    """``-(beta' - beta) lambda R_n`` (or ``energy``) per particle, float64 (NaN losses weigh nothing)."""
    scaled = target.scale * state.loss.double() if energy is None else energy
    incr = -(beta_new - state.beta) * scaled
    return torch.nan_to_num(incr, nan=-math.inf)


def conditional_ess(log_weights, incremental):
    """Conditional ESS of Zhou, Johansen & Aston (2016), as a fraction of ``P``.

    ``(sum_i W_i w_i)^2 / sum_i W_i w_i^2`` with ``W`` the normalised weights
    before the stage (``log_weights``, any constant) and ``w`` the
    incremental weights (``incremental``, on the log scale), both ``(P,)``;
    in ``(0, 1]``, and equal to ``ESS / P`` of the incremental weights when
    ``W`` is uniform.
    """
    log_W = log_weights - torch.logsumexp(log_weights, 0)
    a = torch.logsumexp(log_W + incremental, 0)
    b = torch.logsumexp(log_W + 2 * incremental, 0)
    return float(torch.exp(2 * a - b)) if torch.isfinite(b) else 0.0


def next_beta(state, target, target_ess, energy=None):
    """``beta'`` whose conditional ESS is ``target_ess`` (as a fraction), capped at 1; by bisection.

    The weights before the stage are uniform (every stage resamples).
    ``energy`` ``(P,)``, float64, replaces ``lambda R_n`` in the incremental
    weights ``-(beta' - beta) energy`` (a path whose prior changes with
    ``beta`` too, :mod:`.sparse`).
    """
    uniform_w = torch.zeros(state.loss.shape[0], dtype=torch.float64, device=state.loss.device)

    def cess(beta_new):
        return conditional_ess(uniform_w, _incremental(state, target, beta_new, energy))

    if cess(1.0) >= target_ess:
        return 1.0
    low, high = state.beta, 1.0
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (low + high)
        if cess(mid) >= target_ess:
            low = mid
        else:
            high = mid
    # the largest beta' found above the target; never the current beta
    return low if low > state.beta else high


def reweight(state, target, beta_new, energy=None):
    """Incremental log weights, the evidence increment and the ESS of a stage ``beta -> beta'``.

    ``energy`` as for :func:`next_beta`.

    Returns
    -------
    log_weights : torch.Tensor of shape (P,), float64
        ``-(beta' - beta) lambda R_n(theta_i)`` (the weights before were uniform).
    log_evidence_increment : float
        ``log mean_i exp(log_weights_i)``, the estimate of ``log Z_beta' / Z_beta``.
    ess : float
        ``1 / sum_i W_i^2`` of the normalised new weights.
    """
    log_w = _incremental(state, target, beta_new, energy)
    P = log_w.shape[0]
    log_sum = torch.logsumexp(log_w, 0)
    W = torch.exp(log_w - log_sum)
    return log_w, float(log_sum) - math.log(P), float(1.0 / (W * W).sum())


def systematic_resample(log_weights, u):
    """Ancestors of systematic resampling: ``P`` indices from one uniform ``u`` in (0, 1).

    Index ``i`` appears ``floor(P W_i)`` or ``ceil(P W_i)`` times (Kitagawa, 1996).

    Examples
    --------
    >>> import torch
    >>> systematic_resample(torch.log(torch.tensor([0.5, 0.25, 0.25, 0.0])), 0.3).tolist()
    [0, 0, 1, 2]
    """
    W = torch.exp(log_weights.double() - torch.logsumexp(log_weights.double(), 0))
    P = W.shape[0]
    cumulative = torch.cumsum(W, 0)
    cumulative[-1] = 1.0  # rounding must not leave a point beyond the last particle
    points = (torch.arange(P, dtype=torch.float64, device=W.device) + float(u)) / P
    return torch.searchsorted(cumulative, points).clamp_max(P - 1)


def resample(state, ancestors):
    """The particles ``ancestors`` (a long tensor ``(P,)``), with their cached loss."""
    return state._replace(
        theta=state.theta[ancestors], loss=state.loss[ancestors], loss_grad=state.loss_grad[ancestors]
    )


def particle_variance(theta, reference):
    """Per-coordinate variance of the particles, floored at ``MASS_FLOOR * reference``: the inverse mass."""
    var = theta.var(0, unbiased=False)
    return torch.maximum(var, MASS_FLOOR * reference)


def tempered(target, beta):
    """``pi_beta``: the target with ``lam * beta``."""
    return Target(target.potential, target.prior, target.lambda_ * beta)


def hmc_state(state, target_beta):
    """The HMC state of the particles under ``pi_beta`` from their cached loss (no gradient evaluated)."""
    theta = state.theta
    u = target_beta.scale * state.loss - target_beta.log_prior(theta)
    return hmc.HMCState(theta, u, target_beta.grad(state.loss_grad, theta))


def move(generators, particles, target_beta, step_size, inverse_mass, n_leapfrog):
    """One HMC transition of every particle at ``pi_beta``: :func:`skgibbs.samplers.hmc.step`.

    ``particles`` is an :class:`~skgibbs.samplers.HMCState` (see
    :func:`hmc_state`); ``step_size`` a float shared by the particles.
    """
    P = particles.theta.shape[0]
    dtype, device = particles.theta.dtype, particles.theta.device
    params = hmc.HMCParams(
        torch.full((P,), float(step_size), dtype=dtype, device=device),
        inverse_mass,
        torch.full((P,), int(n_leapfrog), dtype=torch.long, device=device),
    )
    return hmc.step(generators, particles, target_beta, params)


def adapt_step_size(step_size, acceptance, target_accept, max_factor=2.0):
    """The next step size from the mean acceptance ``acceptance`` of the last transition.

    Under a Gaussian energy error of standard deviation ``s`` the mean
    acceptance is ``2 Phi(-s / 2)``, and ``s`` grows as ``h^2``: the step
    size is multiplied by ``sqrt(s* / s)`` (``s*`` that of ``target_accept``),
    clipped to ``[1 / max_factor, max_factor]``.

    Examples
    --------
    >>> round(adapt_step_size(0.1, 0.8, 0.8), 12)
    0.1
    >>> adapt_step_size(0.1, 0.0, 0.8), adapt_step_size(0.1, 1.0, 0.8)
    (0.05, 0.2)
    """
    a = min(max(float(acceptance), 1e-6), 1.0 - 1e-6)
    s = -2.0 * _NORMAL.inv_cdf(a / 2.0)
    s_star = -2.0 * _NORMAL.inv_cdf(float(target_accept) / 2.0)
    factor = min(max(math.sqrt(s_star / s), 1.0 / max_factor), max_factor)
    return float(step_size) * factor
