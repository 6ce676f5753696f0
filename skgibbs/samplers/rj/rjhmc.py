r"""Reversible jump with HMC inside each sparse model: the mixing posterior of paper 001, new moves.

The target is that of :mod:`~skgibbs.samplers.rj.rjmcmc`: the Gibbs posterior
with the mixing prior (2.4) of paper 001,
``pi(theta) ∝ exp(-lambda R_n(theta)) Pi(theta)``, a density with respect
to ``mu = sum_I Lebesgue(R^I)`` over the active sets ``I = {i : theta_i !=
0}``, ``|I| >= 1``. Write its potential

.. math::

    U(\theta) = c \sum_i l_i(\theta) - \log \Pi(\theta), \qquad c = \lambda / n,

with every constant of ``log Pi`` that depends on ``|I|`` kept
(:meth:`~skgibbs.priors.MixingPrior.log_density`), so that ``exp(-U)`` is
``pi`` up to one constant shared by all dimensions. One transition is two
moves, each leaving ``pi`` invariant, so their composition does too.

1. HMC inside the current model
-------------------------------

An HMC transition of :mod:`~skgibbs.samplers.hmc` on ``theta_I`` with ``I``
fixed: the inverse mass is the prior's variance on ``I`` and 0 off ``I``, so
the inactive coordinates get no momentum and stay exact zeros. On ``R^I``
this is ordinary HMC for ``pi(theta_I | I)``, and ``I`` does not change, so
``pi(I)`` is kept. Step size and trajectory are adapted during warm-up
exactly as for the dense sampler (:class:`~skgibbs.samplers.HMC`); the
metric is the prior's variance restricted to ``I`` (the scale of every
direction the data leave to the prior), the one of
:class:`~skgibbs.samplers.HMC`'s ``metric="prior"``.

2. Birth and death of one coordinate, the others fixed
------------------------------------------------------

``n_jumps`` times per transition each chain proposes a *death* or a *birth*
with probabilities ``(1/2, 1/2)`` (``(0, 1)`` at ``|I| = 1``, ``(1, 0)`` at
``|I| = Q``). The coordinate is chosen with weights after paper 001 §6: a
death removes ``i in I`` with weight ``w_i^- ∝ exp(-|theta_i| / sigma_i)``
(the paper's ``exp(-|theta_i|)`` in units of the prior's standard deviation
``sigma_i``, below, so that the choice does not depend on the scale of the
weights: on paper 001's p = 100 design it raised the acceptance of the deaths
from 20% to 29% and of the births from 15% to 22%), a birth adds
``i notin I`` with weight ``w_i^+ ∝ r_i^2``, ``r_i`` the rank of
``|d_i R_n(theta)|`` among the inactive coordinates
(:func:`~skgibbs.samplers.rj.rjmcmc.birth_weights`). Unlike the kernel of
:mod:`~skgibbs.samplers.rj.rjmcmc`, nothing else moves: a birth sets
``tau = theta + t e_i`` and a death ``tau = theta - theta_i e_i``.

The newborn value is drawn from a Gaussian fitted to its conditional. On
the *base point* ``b`` (the point without ``i``: ``theta`` for a birth,
``tau`` for a death) expand ``c sum_l l(b + t e_i)`` to second order in
``t``: the slope is ``g_i = d_i U(b)`` (the prior's log density has slope 0
at 0 for the centred Gaussian and the uniform), and the curvature is the
one-sided second difference that the slope completes

.. math::

    a_i(b) = 2\, \frac{c\,\big(L(b + \delta_i e_i) - L(b)\big) - \delta_i g_i}{\delta_i^2},
    \qquad L = \sum_l l_l, \quad \delta_i = 0.05\, \sigma_i,

with ``sigma_i^2`` the prior variance of coordinate ``i`` (``std_i^2``, or
``B^2 / 3`` for the uniform on ``[-B, B]``). Then

.. math::

    q_i(t \mid b) = \mathcal N(t;\, -v_i g_i,\, v_i), \qquad
    v_i = \big(\max(a_i, 0) + \sigma_i^{-2}\big)^{-1}.

For a loss quadratic in ``theta_i`` (the linear model; a ReLU network
with the squared loss is piecewise quadratic in each single weight) and a
Gaussian ``p_i`` this is exactly the conditional of ``theta_i`` given the
others and ``I' = I ∪ {i}``: the birth is a Gibbs draw of the newborn and
its acceptance is the ratio of the two models' probabilities with the rest
fixed. A coordinate the loss ignores (a weight into a dead unit, ``a_i =
g_i = 0``) is born from its prior.

``q_i`` depends on ``(b, i)`` only, and a birth of ``i`` from ``theta`` and
the death of ``i`` from ``tau`` share the base point ``b = theta``. The
map ``(theta_I, t) -> tau_{I'}`` is the identity on coordinates (Jacobian
1), so the Metropolis-Hastings ratio of a birth with respect to ``mu``
(Green, 1995) is

.. math::

    \alpha = \min\Big\{1,\; e^{U(\theta) - U(\tau)}\,
      \frac{P(\text{death} \mid k + 1)\, w_i^-(\tau)}
           {P(\text{birth} \mid k)\, w_i^+(\theta)\, q_i(t \mid \theta)}\Big\},

``k = |I|`` and the weights normalised over their candidates, and that of a
death is its reciprocal with the roles exchanged (``theta`` the larger
point, ``b = tau``). ``exp(U(theta) - U(tau))`` carries the prior's
``p_i(t) (k + 1) / (s (Q - k))`` of one more coordinate. A proposal with a
non-finite potential (outside the prior's box) is rejected.

Both ``L(b)`` and ``g_i`` are at hand: a birth's base point is the current
state, a death's is ``tau``, whose loss and gradient the ratio needs anyway
(and which is evaluated before the death's curvature for that reason).
Exact for a loss quadratic in ``theta_i``, like the central difference
``L(b + delta) - 2 L(b) + L(b - delta)``, it costs one loss at ``K`` points
where that costs ``2K``.

A jump therefore costs one gradient (at ``tau``, cached for the next move:
the birth weights and the slopes need it) and one loss evaluation of ``K``
points (the second differences); the rest is one sort of all the chains' gradients
(the ranks, :func:`~skgibbs.samplers.rj.rjmcmc.birth_weights_host`) and a
few operations on ``(K, Q)`` arrays, every chain at once, done with NumPy on
the host in float64 (at paper 001's sizes, a few hundred parameters a chain,
torch's dispatch of each small operation costs more than the arithmetic).
"""

import math
from typing import NamedTuple

import numpy as np
import torch

from ..._random import normal, select, uniforms
from ...priors import MixingPrior
from ..hmc import kernel as hmc
from .rjmcmc import _host, birth_weights_host, death_weights_host, log_weight_host, pick_host

__all__ = [
    "RJHMCState",
    "RJHMCInfo",
    "RJHMCParams",
    "ActiveSetTarget",
    "JUMP_MOVES",
    "init",
    "step",
    "hmc_move",
    "jump",
    "reference_variance",
    "newborn_proposal",
    "JumpConstants",
    "jump_constants",
]

#: P(death), P(birth) of a jump away from the boundaries
JUMP_MOVES = (0.5, 0.5)
#: the second difference's step in units of the prior's standard deviation
CURVATURE_STEP = 0.05
_LOG_2PI = math.log(2.0 * math.pi)


class RJHMCState(NamedTuple):
    """Current point of K chains: parameters, active sets, ``U`` and ``grad U`` (inactive coordinates too)."""

    theta: torch.Tensor  # (K, Q), exact zeros off the active set
    potential: torch.Tensor  # (K,) U = c sum_l l_l - log Pi, the size terms of Pi included
    grad: torch.Tensor  # (K, Q) grad U; off the active set c d_i sum_l l_l
    active: torch.Tensor  # (K, Q) bool
    data: torch.Tensor  # (K,) c sum_l l_l(theta), the data term of U


class RJHMCInfo(NamedTuple):
    """Diagnostics of one transition: the HMC move, then the jumps.

    ``jump_proposed`` and ``jump_accepted`` count, per chain, the deaths
    (column 0) and births (column 1) tried and accepted in this transition.
    """

    hmc: hmc.HMCInfo
    jump_proposed: torch.Tensor  # (K, 2) long
    jump_accepted: torch.Tensor  # (K, 2) long
    n_active: torch.Tensor  # (K,) |I| after the transition


class RJHMCParams(NamedTuple):
    """Constants of one transition: the HMC move's (inverse mass ``(Q,)`` or ``(K, Q)``, masked to the
    active set by :func:`step`), and the number of jumps after it."""

    hmc: hmc.HMCParams
    n_jumps: int = 1
    moves: tuple = JUMP_MOVES


def reference_variance(prior, n_params, like):
    """``sigma_i^2``: the variance of one active coordinate's density (``std^2``, or ``B^2 / 3``), ``(Q,)``.

    The metric of the HMC move and the scale of the newborn proposal.
    """
    if prior.base.std is None:
        bound = prior.base.bound
        return torch.full((n_params,), bound * bound / 3.0, dtype=like.dtype, device=like.device)
    return prior.base.variance(n_params, like.dtype, like.device)


class ActiveSetTarget:
    """``U`` of K chains with their active sets fixed: what the HMC move integrates.

    ``value_and_grad(theta, rows)`` evaluates the chains of the bool mask
    ``rows`` (None for all), as :func:`~skgibbs.samplers.hmc.leapfrog` asks.
    The parts of ``log Pi`` that depend on the active sets only (their
    sizes, and the normalising constants of coordinates with different
    prior scales) are computed once.
    """

    per_chain = True

    def __init__(self, target, active, dtype=torch.float64):
        self.target, self.active = target, active
        size = target.prior.size_part(active.sum(1).tolist(), active.shape[1])
        self.size_part = torch.tensor(size, dtype=dtype, device=active.device)
        self.norm = target.prior.active_norm(active, self.size_part)

    def value_and_grad(self, theta, rows=None):
        active = self.active if rows is None else self.active[rows]
        size = self.size_part if rows is None else self.size_part[rows]
        norm = self.norm if rows is None or self.norm is None else self.norm[rows]
        loss, loss_grad = self.target.loss_sum_and_grad(theta)
        log_prior = self.target.prior.coordinate_part(theta, active, norm) + size
        return self.target.scale * loss - log_prior, self.target.grad(loss_grad, theta)


def init(generators, target, theta, params=None):
    """State at ``theta`` ``(K, Q)``: its non-zero coordinates are the active set; draws nothing."""
    if not isinstance(target.prior, MixingPrior):
        raise TypeError(f"rjhmc samples a MixingPrior posterior, got {type(target.prior).__name__}.")
    theta = theta.detach()
    active = theta != 0
    if not bool(active.any(1).all()):
        raise ValueError("Every chain needs at least one non-zero parameter (|I| >= 1) to start.")
    loss, loss_grad = target.loss_sum_and_grad(theta)
    data = target.scale * loss
    return RJHMCState(
        theta, data - target.prior.log_density(theta, active), target.grad(loss_grad, theta), active, data
    )


def hmc_move(generators, state, target, params):
    """One HMC transition of ``theta_I`` with every chain's active set fixed; ``(state, HMCInfo)``."""
    m = params.inverse_mass * state.active  # 0 off the active set: frozen
    cond = ActiveSetTarget(target, state.active, state.theta.dtype)
    out, info = hmc.step(generators, hmc.HMCState(*state[:3]), cond, params._replace(inverse_mass=m))
    data = out.potential + target.prior.log_density(out.theta, state.active)
    return RJHMCState(*out, state.active, torch.where(info.is_accepted, data, state.data)), info


def newborn_proposal(scale, slope, loss_base, loss_plus, delta, variance):
    """Mean and variance of ``q_i(t | b)`` (module docstring); arguments and results float64 arrays ``(K,)``.

    ``slope`` is ``g_i = d_i U(b)``; ``loss_base`` and ``loss_plus`` are
    ``sum_l l_l`` at ``b`` and ``b + delta e_i``; ``variance`` the prior
    variances ``sigma_i^2`` of the chosen coordinates. The curvature is
    ``a_i = 2 (c (L(b + delta) - L(b)) - delta g_i) / delta^2``, exact for a
    loss quadratic in ``theta_i``.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array
    >>> # sum_l l_l = 2 (t - 1)^2 around b: slope -4 c, curvature 4 c; with c = 1 and sigma^2 = 1 ...
    >>> mean, var = newborn_proposal(1.0, a([-4.0]), a([2.0]), a([2 * 0.9**2]), a([0.1]), a([1.0]))
    >>> [round(float(mean[0]), 4), round(float(var[0]), 4)]   # ... the conditional N(4/5, 1/5)
    [0.8, 0.2]
    """
    curvature = 2.0 * (scale * (loss_plus - loss_base) - delta * slope) / (delta * delta)
    v = 1.0 / (np.maximum(curvature, 0.0) + 1.0 / variance)
    return -v * slope, v


def _shifted_loss(target, base, index, delta):
    """``sum_l l_l`` at ``base + delta e_index`` (one evaluation of the ``K`` points), ``(K,)``."""
    shifted = base.clone()
    shifted[torch.arange(base.shape[0], device=base.device), index] += delta
    return target.loss_sum(shifted)


def _log_normal_host(x, mean, var):
    return -0.5 * (_LOG_2PI + np.log(var) + (x - mean) ** 2 / var)


class JumpConstants(NamedTuple):
    """What every jump of a transition shares: the prior's scales on the device and on the host.

    Built by :func:`jump_constants` once per transition.
    """

    variance: torch.Tensor  # (Q,) sigma_i^2
    sd_host: np.ndarray  # (Q,) float64 sigma_i
    variance_host: np.ndarray  # (Q,) float64
    std_host: object  # (Q,) float64 Gaussian scale, or None (uniform)
    log_norm_host: np.ndarray  # (Q,) float64 log of each p_i's normalising constant
    bound: object  # B or None


def jump_constants(prior, n_params, like):
    """:class:`JumpConstants` of a :class:`~skgibbs.priors.MixingPrior` with ``n_params`` coordinates."""
    variance = reference_variance(prior, n_params, like)
    std, bound = prior.base.std, prior.base.bound
    std_host = None
    if std is not None:
        std_host = np.broadcast_to(np.asarray(torch.as_tensor(std).double().cpu()), (n_params,)).copy()
    log_norm = torch.as_tensor(prior._log_norm(torch.zeros(1, dtype=torch.float64)), dtype=torch.float64)
    log_norm_host = np.broadcast_to(np.asarray(log_norm.cpu()), (n_params,)).copy()
    vh = variance.double().cpu().numpy()
    return JumpConstants(variance, np.sqrt(vh), vh, std_host, log_norm_host, bound)


def _jump_probs(size, n_params, moves):
    """``(P(death), P(birth))`` given ``|I| = size`` (host arrays ``(K,)``), the impossible move dropped
    (both 0 when none is possible)."""
    d = np.where(size > 1, float(moves[0]), 0.0)
    b = np.where(size < n_params, float(moves[1]), 0.0)
    total = d + b
    total = np.where(total > 0, total, 1.0)
    return d / total, b / total


def _selection_weights(theta, grad, active, deaths, births, scale):
    """Death weights ``exp(-|theta_i| / sigma_i)`` on ``I`` for the rows ``deaths`` and birth weights
    (squared ranks of ``|grad_i|``) off ``I`` for the rows ``births``, float64 ``(K, Q)`` (zeros on the
    other rows); every argument a host array: ``scale`` is ``sigma`` ``(Q,)``, ``deaths`` and ``births``
    ``(K,)`` bools. Every row at once (:func:`~skgibbs.samplers.rj.rjmcmc.birth_weights_host`): the
    arrays are a few hundred numbers a row, which NumPy handles several times faster than torch
    dispatches its operations on them."""
    out = np.zeros(theta.shape, dtype=np.float64)
    if deaths.any():
        out[deaths] = death_weights_host(theta[deaths], active[deaths], scale)
    if births.any():
        out[births] = birth_weights_host(grad[births], active[births])
    return out


def _log_density_at(consts, x, index):
    """``log p_i(x)`` of coordinates ``index`` at values ``x`` (host arrays ``(K,)``)."""
    out = -consts.log_norm_host[index]
    if consts.std_host is not None:
        out = out - 0.5 * (x / consts.std_host[index]) ** 2
    if consts.bound is not None:
        out = np.where(np.abs(x) <= consts.bound, out, -np.inf)
    return out


def jump(generators, state, target, moves=JUMP_MOVES, consts=None):
    """One birth or death proposal per chain (module docstring, part 2); ``(state, move, accepted)``.

    ``move`` ``(K,)`` long is -1 (death), +1 (birth) or 0 (no jump
    possible, ``Q = 1``); ``accepted`` ``(K,)`` bool. ``consts`` is
    :func:`jump_constants` (computed when None). The evaluations and the
    weights of the coordinates are batched over the chains on the device;
    the per-chain scalars (``(K,)``: the moves, the proposal of the chosen
    coordinate, the acceptance) are computed on the host in float64.
    """
    theta, active = state.theta, state.active
    K, Q = theta.shape
    dev, dtype = theta.device, theta.dtype
    prior = target.prior
    consts = jump_constants(prior, Q, theta) if consts is None else consts
    u = _host(uniforms(generators, 3, theta))  # the move, the coordinate, the acceptance
    xi = _host(normal(generators, 1, theta)[:, 0])  # the newborn's noise
    # the state on the host once: the choices and the ratio are per-chain scalars
    theta_h, grad_h, active_h = _host(theta), _host(state.grad), active.cpu().numpy()
    potential, data = _host(state.potential), _host(state.data)
    size = active_h.sum(1)
    p_death, p_birth = _jump_probs(size, Q, moves)
    possible = (p_death + p_birth) > 0
    dies = possible & (u[:, 0] < p_death)
    born = possible & ~dies
    move = born.astype(np.int64) - dies.astype(np.int64)
    idx, log_w = pick_host(_selection_weights(theta_h, grad_h, active_h, dies, born, consts.sd_host), u[:, 1])
    rev_death, rev_birth = _jump_probs(size + move, Q, moves)
    with np.errstate(divide="ignore"):
        log_ratio = np.log(np.where(born, rev_death, rev_birth)) - np.log(np.where(born, p_birth, p_death))
    log_ratio = log_ratio - log_w

    # the base point b: theta for a birth, theta without i for a death (then b = tau)
    rows_h = np.arange(K)
    rows_t, idx_t = torch.arange(K, device=dev), torch.as_tensor(idx, device=dev)
    old = theta_h[rows_h, idx]
    variance = consts.variance_host[idx]
    delta = CURVATURE_STEP * np.sqrt(variance)
    delta_t = torch.as_tensor(delta, dtype=dtype, device=dev)
    base = theta.clone()
    base[rows_t, idx_t] = torch.as_tensor(np.where(dies, 0.0, old), dtype=dtype, device=dev)
    c = target.scale
    # four evaluations, each of the chains that need it: a death's tau is its base point, whose slope its
    # curvature needs; a birth's curvature needs the loss one step from theta before its newborn is drawn
    births = torch.as_tensor(born, device=dev)
    stays = ~births  # deaths, and chains that cannot jump (tau = theta)
    loss_tau = torch.empty(K, dtype=dtype, device=dev)
    loss_grad_tau = torch.empty_like(theta)
    if bool(stays.any()):
        loss_tau[stays], loss_grad_tau[stays] = target.loss_sum_and_grad(base[stays])
    loss_plus = np.zeros(K)
    t = np.zeros(K)
    mean_b, var_b = np.zeros(K), np.ones(K)
    if born.any():  # births: the newborn drawn from q_i(. | theta)
        loss_plus[born] = _host(_shifted_loss(target, base[births], idx_t[births], delta_t[births]))
        mean_b[born], var_b[born] = newborn_proposal(
            c, grad_h[born, idx[born]], data[born] / c, loss_plus[born], delta[born], variance[born]
        )
        t = mean_b + np.sqrt(var_b) * xi
    value = torch.as_tensor(np.where(born, t, np.where(dies, 0.0, old)), dtype=dtype, device=dev)
    tau = base.clone()
    tau[rows_t, idx_t] = value
    now_active = np.where(possible, born, old != 0)
    new_active = active.clone()
    new_active[rows_t, idx_t] = torch.as_tensor(now_active, device=dev)
    if born.any():
        loss_tau[births], loss_grad_tau[births] = target.loss_sum_and_grad(tau[births])
    data_tau = c * loss_tau
    grad_tau = target.grad(loss_grad_tau, tau)
    grad_tau_h = _host(grad_tau)
    loss_tau_h = _host(loss_tau)
    mean_d, var_d = np.zeros(K), np.ones(K)
    if dies.any():  # deaths: q_i of the reverse birth, from the base point tau
        deaths = torch.as_tensor(dies, device=dev)
        loss_plus[dies] = _host(_shifted_loss(target, tau[deaths], idx_t[deaths], delta_t[deaths]))
        mean_d[dies], var_d[dies] = newborn_proposal(
            c, grad_tau_h[dies, idx[dies]], loss_tau_h[dies], loss_plus[dies], delta[dies], variance[dies]
        )
    log_q = np.where(born, -_log_normal_host(t, mean_b, var_b), _log_normal_host(old, mean_d, var_d))

    # log Pi(tau) - log Pi(theta) of one coordinate more (birth) or less (death), k = |I|:
    # log p_i(t) - log s + log((k + 1) / (Q - k)) for a birth (MixingPrior.log_size_step)
    k_small = np.where(born, size, size - 1).astype(np.float64)  # the smaller of the two sizes
    log_p = _log_density_at(consts, np.where(born, t, old), idx)
    with np.errstate(invalid="ignore"):
        gain = log_p + prior.log_size_step(k_small, Q)
    log_prior_change = np.where(born, gain, -gain)
    u_tau = c * loss_tau_h - (data - potential) - log_prior_change

    # the reverse move's selection weight at tau: the death of the newborn, or the birth of the removed
    tau_h, new_active_h = theta_h.copy(), active_h.copy()
    tau_h[rows_h, idx], new_active_h[rows_h, idx] = _host(value), now_active  # the values tau holds
    log_ratio = log_ratio + log_weight_host(
        _selection_weights(tau_h, grad_tau_h, new_active_h, born, dies, consts.sd_host), idx
    )
    with np.errstate(invalid="ignore"):
        log_alpha = potential - u_tau + log_q + log_ratio
    finite = possible & np.isfinite(log_alpha) & np.isfinite(grad_tau_h.sum(1))
    log_alpha = np.where(finite, log_alpha, -np.inf)
    accept = np.log(u[:, 2]) < log_alpha
    proposal = RJHMCState(
        tau, torch.as_tensor(u_tau, dtype=dtype, device=dev), grad_tau, new_active, data_tau
    )
    new_state = select(torch.as_tensor(accept, device=dev), proposal, state)
    return new_state, torch.as_tensor(move, device=dev), torch.as_tensor(accept, device=dev)


def step(generators, state, target, params):
    """One transition of K chains: an HMC move inside each model, then ``params.n_jumps`` jumps.

    Parameters
    ----------
    generators : list of torch.Generator
        One per chain; chain ``k`` draws its momentum, its moves, its
        coordinates, its newborns and its uniforms from ``generators[k]`` only.
    state : RJHMCState
    target : Target
        Full-data losses and a :class:`~skgibbs.priors.MixingPrior`.
    params : RJHMCParams

    Returns
    -------
    state : RJHMCState
    info : RJHMCInfo

    Examples
    --------
    >>> import torch
    >>> from skgibbs.potential import LinearPotential
    >>> from skgibbs.priors import MixingPrior, Prior
    >>> from skgibbs.samplers import Target, hmc
    >>> from skgibbs.samplers.rj import rjhmc
    >>> X, y = torch.randn(30, 3, dtype=torch.float64), torch.randn(30, dtype=torch.float64)
    >>> target = Target(LinearPotential(X, y), MixingPrior(Prior(std=1.0), 2.0), lambda_=30.0)
    >>> gens = [torch.Generator().manual_seed(0)]
    >>> state = rjhmc.init(gens, target, torch.tensor([[0.1, 0.0, 0.0, 0.2]], dtype=torch.float64))
    >>> h = torch.tensor([0.1], dtype=torch.float64)
    >>> params = rjhmc.RJHMCParams(hmc.HMCParams(h, torch.ones(4, dtype=torch.float64), torch.tensor([5])), 3)
    >>> state, info = rjhmc.step(gens, state, target, params)
    >>> int(info.jump_proposed.sum()), bool((state.theta != 0).eq(state.active).all())
    (3, True)
    """
    state, hmc_info = hmc_move(generators, state, target, params.hmc)
    K = state.theta.shape[0]
    proposed = torch.zeros(K, 2, dtype=torch.long, device=state.theta.device)
    accepted = torch.zeros_like(proposed)
    consts = jump_constants(target.prior, state.theta.shape[1], state.theta) if params.n_jumps else None
    for _ in range(int(params.n_jumps)):
        state, move, accept = jump(generators, state, target, params.moves, consts)
        kind = (move > 0).long()
        ones = (move != 0).long()
        proposed.scatter_add_(1, kind[:, None], ones[:, None])
        accepted.scatter_add_(1, kind[:, None], (ones * accept.long())[:, None])
    return state, RJHMCInfo(hmc_info, proposed, accepted, state.active.sum(1))
