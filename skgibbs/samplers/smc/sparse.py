r"""The mutations of tempered SMC on sparse networks: RJHMC transitions of the particles at a temperature.

Under the mixing prior (2.4) of paper 001 (:class:`~skgibbs.priors.MixingPrior`)
a particle is a point of ``mu = sum_I Lebesgue(R^I)``: an active set ``I``
and its values, exact zeros elsewhere. The tempered family is that of
:mod:`skgibbs.samplers.smc` with this prior,
``pi_beta ∝ Pi exp(-beta lambda R_n)`` with respect to ``mu``, and so are
its stages:

- the particles start as exact draws of the normalised mixing prior
  (:meth:`~skgibbs.priors.MixingPrior.sample`), sizes, sets and values;
- the incremental weights hold only ``lambda R_n`` (:func:`~.kernel.reweight`),
  whatever the dimension of each particle, so the running evidence
  estimates ``log int Pi exp(-lambda R_n) dmu`` with ``Pi`` normalised over
  every active set: the sum over the models of their evidence weighted by
  their prior probability;
- each stage's mutations are transitions of :mod:`skgibbs.samplers.rj.rjhmc`
  that leave ``pi_beta`` invariant (the tempered target, ``beta lambda`` in
  place of ``lambda``): one HMC trajectory on the active weights, then
  ``n_jumps`` births or deaths of one weight.

**The metric** of the HMC moves is diagonal: the variance of each weight
over the particles in which it is active (:func:`active_variance`), the
prior's variance where fewer than :data:`MIN_ACTIVE` particles hold it. At
``beta = 0`` it is the prior's; as the temperature falls it follows the
particles, as the dense SMC's diagonal metric does.

**How many transitions.** Resampling leaves copies of the heavy particles;
the mutations must take the copies apart, and how many transitions that
needs changes along the path (few where the prior dominates, many where the
active sets have to change under a sharp likelihood). A stage therefore
runs at least ``n_mcmc_steps`` transitions and stops, at most at
``max_mcmc_steps``, once the particles have forgotten where the stage
started: the correlation over the particles between the start and now of
their data terms ``beta lambda R_n`` and, pooled over the weights, of their
active indicators (:func:`decorrelation`), is below a threshold. The rule
reads the whole population at every transition, as the adaptive step size
does; it chooses how long the stage's moves run, and every move leaves
``pi_beta`` invariant.
"""

import math

import torch

from ..hmc import kernel as hmc
from ..rj import rjhmc
from ..target import Target

__all__ = [
    "MIN_ACTIVE",
    "active_variance",
    "bridge_energy",
    "bridged",
    "correlation",
    "decorrelation",
    "move",
    "reference_prior",
    "rj_state",
]


#: a weight active in fewer particles than this takes the prior's variance as its inverse mass
MIN_ACTIVE = 5


#: the inverse mass is floored at this fraction of the prior variance
MASS_FLOOR = 1e-6


def reference_prior(prior):
    """The start of the path: ``Pi_0``, every coordinate active with probability ``prior.reference``."""
    return prior._replace(power=0.0)


def bridged(target, beta):
    """``pi_beta ∝ Pi_0^(1 - beta) (Pi exp(-lambda R_n))^beta``: the target with ``lam * beta`` and the
    mixing prior at ``power = beta``."""
    return Target(target.potential, target.prior._replace(power=float(beta)), target.lambda_ * beta)


def bridge_energy(state, target):
    """``lambda R_n - log(Pi(I) / Pi_0(I))`` per particle, float64: the incremental log weight of a stage
    ``beta -> beta'`` is ``-(beta' - beta)`` times it (:func:`~.kernel.reweight`'s ``energy``)."""
    size = (state.theta != 0).sum(1)
    ratio = target.prior.reference_log_ratio(size, state.theta.shape[1])
    return target.scale * state.loss.double() - ratio.to(state.loss.device)


def rj_state(state, target_beta):
    """The :class:`~skgibbs.samplers.rj.rjhmc.RJHMCState` of the particles under ``pi_beta``.

    ``state`` is an :class:`~skgibbs.samplers.smc.SMCState` whose cached
    loss and gradient serve: no evaluation. The active sets are the non-zero
    coordinates.
    """
    theta = state.theta
    active = theta != 0
    data = target_beta.scale * state.loss
    potential = data - target_beta.prior.log_density(theta, active)
    return rjhmc.RJHMCState(theta, potential, target_beta.grad(state.loss_grad, theta), active, data)


def active_variance(theta, active, reference, min_active=MIN_ACTIVE):
    """Variance of each coordinate over the particles in which it is active, ``(Q,)``: the inverse mass.

    ``reference`` ``(Q,)`` (the prior's variance of one active coordinate)
    stands in where fewer than ``min_active`` particles hold the coordinate,
    and floors the result at ``MASS_FLOOR * reference``.

    Examples
    --------
    >>> import torch
    >>> theta = torch.tensor([[1.0, 0.0], [3.0, 0.0], [0.0, 2.0]])
    >>> active_variance(theta, theta != 0, torch.ones(2), min_active=2).tolist()
    [1.0, 1.0]
    """
    a = active.to(theta.dtype)
    count = a.sum(0)
    mean = (theta * a).sum(0) / count.clamp(min=1)
    var = (((theta - mean) * a) ** 2).sum(0) / count.clamp(min=1)
    var = torch.where(count >= min_active, var, reference)
    return torch.maximum(var, MASS_FLOOR * reference)


def move(generators, particles, target_beta, step_size, inverse_mass, n_leapfrog, n_jumps):
    """One RJHMC transition of every particle at ``pi_beta``: :func:`skgibbs.samplers.rj.rjhmc.step`.

    ``step_size`` and ``n_leapfrog`` are shared by the particles,
    ``inverse_mass`` is ``(Q,)`` (masked to each active set by the kernel);
    returns ``(RJHMCState, RJHMCInfo)``.
    """
    P = particles.theta.shape[0]
    dtype, device = particles.theta.dtype, particles.theta.device
    params = hmc.HMCParams(
        torch.full((P,), float(step_size), dtype=dtype, device=device),
        inverse_mass.to(dtype),
        torch.full((P,), int(n_leapfrog), dtype=torch.long, device=device),
    )
    return rjhmc.step(generators, particles, target_beta, rjhmc.RJHMCParams(params, int(n_jumps)))


def correlation(a, b):
    """Correlation over the particles (axis 0) of ``a`` and ``b``, pooled over their columns.

    ``sum_j cov(a_j, b_j) / sqrt(sum_j var(a_j) sum_j var(b_j))`` for
    ``(P, m)`` arrays (a plain correlation for ``(P,)``), in float64; 0
    when either side does not vary over the particles (nothing to forget).
    Non-finite entries count as 0.

    Examples
    --------
    >>> import torch
    >>> x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    >>> correlation(x, 2 * x), correlation(x, -x), correlation(x, torch.ones(4))
    (1.0, -1.0, 0.0)
    """
    a = torch.nan_to_num(a.double(), nan=0.0, posinf=0.0, neginf=0.0)
    b = torch.nan_to_num(b.double(), nan=0.0, posinf=0.0, neginf=0.0)
    a, b = a - a.mean(0), b - b.mean(0)
    den = float((a * a).sum()) * float((b * b).sum())
    return float((a * b).sum()) / math.sqrt(den) if den > 0 else 0.0


def decorrelation(start, now):
    """How much the particles still remember the stage's start: the larger of two correlations.

    The correlation over the particles of the data terms (``data`` of two
    :class:`~skgibbs.samplers.rj.rjhmc.RJHMCState`) and the pooled
    correlation of the active indicators (:func:`correlation`), between
    ``start`` and ``now``. Near 1 right after resampling (copies of a particle
    share both); near 0 once the copies have gone their own ways.
    """
    return max(
        correlation(start.data, now.data),
        correlation(start.active.to(torch.float64), now.active.to(torch.float64)),
    )
