r"""The mutations of tempered SMC on sparse networks: RJHMC transitions of the particles at a temperature.

Under the mixing prior (2.4) of paper 001 (:class:`~skgibbs.priors.MixingPrior`)
a particle is a point of ``mu = sum_I Lebesgue(R^I)``: an active set ``I``
and its values, exact zeros elsewhere.

**The path.** The particles do not start from the mixing prior ``Pi``: its
draws hold about ``s / (s - 1)`` active weights, so on a network of
several layers no input reaches the output, every particle predicts the
same constant, the weights cannot tell them apart and single births
cannot build a path the likelihood would notice. They start as exact
draws of the *reference* ``Pi_0`` (:func:`reference_prior`), in which
every weight is active with probability ``r = prior.reference``
independently (given ``|I| >= 1``) with its value from the same ``p_i``,
and move along the geometric bridge

    ``pi_beta ∝ Pi_0^(1 - beta) (Pi exp(-lambda R_n))^beta``,  ``beta`` from 0 to 1

(:func:`bridged`): a mixing prior of its own at every ``beta``
(``MixingPrior(power=beta)``) times the tempered likelihood. Its stages
are those of :mod:`skgibbs.samplers.smc`:

- the incremental log weight of a stage ``beta -> beta'`` is
  ``-(beta' - beta) E(theta)`` with ``E = lambda R_n - log(Pi(I) / Pi_0(I))``
  (:func:`bridge_energy`; both set probabilities normalised, the densities
  ``p_i`` of the values cancel), so the running evidence estimates
  ``log int Pi exp(-lambda R_n) dmu`` with ``Pi`` normalised over every
  active set: the sum over the models of their evidence weighted by their
  prior probability (``Z_0 = 1``: ``Pi_0`` is normalised and drawn exactly);
- each stage's mutations are transitions of :mod:`skgibbs.samplers.rj.rjhmc`
  that leave ``pi_beta`` invariant: one HMC trajectory on the active
  weights, then ``n_jumps`` births or deaths of one weight.

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
``max_mcmc_steps``, once the copies of each resampled particle differ as
much as independent draws would: for the data terms ``beta lambda R_n``
and, pooled over the weights, for the active indicators, the variance
within the families of copies (the particles of one ancestor) is close to
the variance over all particles (:func:`family_resemblance`: one minus
their ratio, 1 for exact copies, about 0 for independent ones, below a
threshold). A population the stage did not resample into copies (no
ancestor with two descendants) needs only ``n_mcmc_steps``. The rule reads
the whole population at every transition, as the adaptive step size does;
it chooses how long the stage's moves run, and every move leaves
``pi_beta`` invariant.
"""

import torch

from ..hmc import kernel as hmc
from ..rj import rjhmc
from ..target import Target

__all__ = [
    "MIN_ACTIVE",
    "active_variance",
    "bridge_energy",
    "bridged",
    "family_resemblance",
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


def _within_share(x, family, n_families):
    """Pooled within-family variance of ``x`` ``(P, m)`` over its total variance (float64), or None."""
    x = torch.nan_to_num(x.double(), nan=0.0, posinf=0.0, neginf=0.0)
    total = float(((x - x.mean(0)) ** 2).sum()) / (x.shape[0] - 1)
    if total <= 0:
        return None
    sums = torch.zeros(n_families, x.shape[1], dtype=torch.float64, device=x.device).index_add_(0, family, x)
    counts = torch.bincount(family, minlength=n_families).to(torch.float64)
    means = sums / counts[:, None]
    within = float(((x - means[family]) ** 2).sum()) / (x.shape[0] - n_families)
    return within / total


def family_resemblance(ancestors, particles):
    """How much the copies of each resampled particle still resemble each other, in ``[0, 1]``.

    ``1 - W / T`` for the data terms and for the active indicators (pooled
    over the weights), the larger of the two: ``W`` the variance within the
    families of particles that share an ancestor (``ancestors``, ``(P,)``,
    the families of at least two particles), ``T`` the variance over all
    particles. 1 right after resampling (copies are equal), about 0 once
    the copies are as different as independent draws. 0 when no ancestor
    has two descendants or nothing varies.

    Examples
    --------
    >>> import torch
    >>> from skgibbs.samplers.rj.rjhmc import RJHMCState
    >>> def state(data, active):
    ...     data = torch.tensor(data)
    ...     return RJHMCState(None, None, None, torch.tensor(active).reshape(-1, 1), data)
    >>> ancestors = torch.tensor([0, 0, 2, 2])
    >>> family_resemblance(ancestors, state([1.0, 1.0, 3.0, 3.0], [True, True, False, False]))
    1.0
    >>> family_resemblance(ancestors, state([1.0, 3.0, 1.0, 3.0], [True, False, True, False]))
    0.0
    """
    counts = torch.bincount(ancestors, minlength=ancestors.shape[0])
    rows = counts[ancestors] >= 2
    if int(rows.sum()) < 2:
        return 0.0
    family = torch.unique(ancestors[rows], return_inverse=True)[1]
    n_families = int(family.max()) + 1
    if int(rows.sum()) <= n_families:
        return 0.0
    shares = [
        _within_share(x[rows], family, n_families)
        for x in (particles.data.reshape(-1, 1), particles.active.to(torch.float64))
    ]
    shares = [v for v in shares if v is not None]
    return max(0.0, min(1.0, 1.0 - min(shares))) if shares else 0.0
