r"""Reversible jump with HMC inside each sparse model: the mixing posterior of paper 001, new moves.

The target is that of :mod:`~skgibbs.samplers.rjmcmc`: the Gibbs posterior
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
``|I| = Q``). The coordinate is chosen with paper 001 §6's weights: a death
removes ``i in I`` with weight ``w_i^- ∝ exp(-|theta_i|)``, a birth adds
``i notin I`` with weight ``w_i^+ ∝ r_i^2``, ``r_i`` the rank of
``|d_i R_n(theta)|`` among the inactive coordinates
(:func:`~skgibbs.samplers.rjmcmc.birth_weights`). Unlike the kernel of
:mod:`~skgibbs.samplers.rjmcmc`, nothing else moves: a birth sets
``tau = theta + t e_i`` and a death ``tau = theta - theta_i e_i``.

The newborn value is drawn from a Gaussian fitted to its conditional. On
the *base point* ``b`` (the point without ``i``: ``theta`` for a birth,
``tau`` for a death) expand ``c sum_l l(b + t e_i)`` to second order in
``t``: the slope is ``g_i = d_i U(b)`` (the prior's log density has slope 0
at 0 for the centred Gaussian and the uniform), and the curvature is the
central second difference

.. math::

    a_i(b) = c \,\frac{L(b + \delta_i e_i) - 2 L(b) + L(b - \delta_i e_i)}{\delta_i^2},
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

A jump costs one gradient (at ``tau``, cached for the next move: the birth
weights and the slopes need it) and two loss evaluations (the second
difference); the selection weights are computed on the host, one sort of
the inactive gradients per chain.
"""

import math
from typing import NamedTuple

import numpy as np
import torch

from ..priors import MixingPrior
from . import hmc
from ._random import normal, select, uniforms
from .rjmcmc import _host_log_birth, _host_log_death, _host_pick_birth, _host_pick_death

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
    std, bound = prior.base.std, prior.base.bound
    if std is None:
        return torch.full((n_params,), bound * bound / 3.0, dtype=like.dtype, device=like.device)
    std = torch.as_tensor(std, dtype=like.dtype, device=like.device)
    return (std * std).expand(n_params).clone()


def evaluate(target, theta, active):
    """``U`` ``(K,)`` and ``grad U`` ``(K, Q)`` of points ``theta`` with active sets ``active``."""
    loss, loss_grad = target.loss_sum_and_grad(theta)
    return target.scale * loss - target.prior.log_density(theta, active), target.grad(loss_grad, theta)


class ActiveSetTarget:
    """``U`` of K chains with their active sets fixed: what the HMC move integrates.

    ``value_and_grad(theta, rows)`` evaluates the chains of the bool mask
    ``rows`` (None for all), as :func:`~skgibbs.samplers.hmc.leapfrog` asks.
    """

    per_chain = True

    def __init__(self, target, active):
        self.target, self.active = target, active

    def value_and_grad(self, theta, rows=None):
        return evaluate(self.target, theta, self.active if rows is None else self.active[rows])


def init(generators, target, theta, params=None):
    """State at ``theta`` ``(K, Q)``: its non-zero coordinates are the active set; draws nothing."""
    if not isinstance(target.prior, MixingPrior):
        raise TypeError(f"rjhmc samples a MixingPrior posterior, got {type(target.prior).__name__}.")
    theta = theta.detach()
    active = theta != 0
    if not bool(active.any(1).all()):
        raise ValueError("Every chain needs at least one non-zero parameter (|I| >= 1) to start.")
    u, grad = evaluate(target, theta, active)
    return RJHMCState(theta, u, grad, active)


def hmc_move(generators, state, target, params):
    """One HMC transition of ``theta_I`` with every chain's active set fixed; ``(state, HMCInfo)``."""
    m = params.inverse_mass * state.active  # 0 off the active set: frozen
    cond = ActiveSetTarget(target, state.active)
    out, info = hmc.step(generators, hmc.HMCState(*state[:3]), cond, params._replace(inverse_mass=m))
    return RJHMCState(*out, state.active), info


def newborn_proposal(scale, slope, loss_base, loss_plus, loss_minus, delta, variance):
    """Mean and variance of ``q_i(t | b)`` (module docstring), all arguments and results ``(K,)``.

    ``slope`` is ``d_i U(b)``; ``loss_base``, ``loss_plus`` and
    ``loss_minus`` are ``sum_l l_l`` at ``b`` and ``b +- delta e_i``;
    ``variance`` the prior variances ``sigma_i^2`` of the chosen coordinates.

    Examples
    --------
    >>> import torch
    >>> t = torch.tensor
    >>> # sum_l l_l = 2 (t - 1)^2 around b: slope -4 c, curvature 4 c; with c = 1 and sigma^2 = 1 ...
    >>> mean, var = newborn_proposal(1.0, t([-4.0]), t([2.0]), t([2 * 0.9**2]), t([2 * 1.1**2]), t([0.1]), t([1.0]))
    >>> [round(float(mean), 4), round(float(var), 4)]   # ... the conditional N(4/5, 1/5)
    [0.8, 0.2]
    """
    second = (loss_plus + loss_minus - 2.0 * loss_base) / (delta * delta)
    v = 1.0 / (scale * second.clamp(min=0.0) + 1.0 / variance)
    return -v * slope, v


def _shifted_losses(target, base, index, delta):
    """``sum_l l_l`` at ``base +- delta e_index`` (one evaluation of 2K points), ``((K,), (K,))``."""
    K = base.shape[0]
    rows = torch.arange(K, device=base.device)
    shifted = torch.cat([base, base])
    shifted[rows, index] += delta
    shifted[rows + K, index] -= delta
    loss = target.loss_sum(shifted)
    return loss[:K], loss[K:]


def _log_normal(x, mean, var):
    return -0.5 * (_LOG_2PI + torch.log(var) + (x - mean) ** 2 / var)


def _jump_probs(size, n_params, moves):
    """``(P(death), P(birth))`` given ``|I| = size``, the impossible move dropped; ``(0, 0)`` when none is possible."""
    d = float(moves[0]) if size > 1 else 0.0
    b = float(moves[1]) if size < n_params else 0.0
    total = d + b
    return (d / total, b / total) if total > 0 else (0.0, 0.0)


def jump(generators, state, target, moves=JUMP_MOVES):
    """One birth or death proposal per chain (module docstring, part 2); ``(state, move, accepted)``.

    ``move`` ``(K,)`` long is -1 (death), +1 (birth) or 0 (no jump
    possible, ``Q = 1``); ``accepted`` ``(K,)`` bool.
    """
    theta, active = state.theta, state.active
    K, Q = theta.shape
    rows = torch.arange(K, device=theta.device)
    variance_all = reference_variance(target.prior, Q, theta)
    u = uniforms(generators, 3, theta)  # the move, the coordinate, the acceptance
    xi = normal(generators, 1, theta)[:, 0]  # the newborn's noise
    u_host = u.tolist()
    sizes = active.sum(1).tolist()
    th, act = theta.cpu().numpy(), active.cpu().numpy()
    grad_host = state.grad.cpu().numpy()
    moves_k, index, log_ratio = [], [], []
    for c in range(K):
        p_death, p_birth = _jump_probs(sizes[c], Q, moves)
        if p_death + p_birth == 0:
            moves_k.append(0), index.append(0), log_ratio.append(-math.inf)
            continue
        m = -1 if u_host[c][0] < p_death else 1
        if m < 0:
            i, log_w = _host_pick_death(th[c], act[c], u_host[c][1])
        else:
            i, log_w = _host_pick_birth(grad_host[c], ~act[c], u_host[c][1])
        reverse = _jump_probs(sizes[c] + m, Q, moves)[0 if m > 0 else 1]
        moves_k.append(m), index.append(i)
        log_ratio.append(math.log(reverse) - math.log(p_death if m < 0 else p_birth) - log_w)
    move = torch.tensor(moves_k, device=theta.device)
    idx = torch.tensor(index, device=theta.device)
    born, dies = move > 0, move < 0
    variance = variance_all[idx]

    # the base point b: theta for a birth, theta without i for a death (then b = tau)
    old = theta[rows, idx]
    base = theta.clone()
    base[rows, idx] = torch.where(dies, torch.zeros_like(old), old)
    delta = CURVATURE_STEP * torch.sqrt(variance)
    loss_plus, loss_minus = _shifted_losses(target, base, idx, delta)
    # births: the newborn drawn from q_i(. | theta)
    loss_here = (state.potential + target.prior.log_density(theta, active)) / target.scale
    mean_b, var_b = newborn_proposal(
        target.scale, state.grad[rows, idx], loss_here, loss_plus, loss_minus, delta, variance
    )
    t = mean_b + torch.sqrt(var_b) * xi
    tau = base.clone()
    tau[rows, idx] = torch.where(born, t, base[rows, idx])
    new_active = active.clone()
    new_active[rows, idx] = torch.where(move == 0, active[rows, idx], born)
    loss_tau, loss_grad_tau = target.loss_sum_and_grad(tau)
    u_tau = target.scale * loss_tau - target.prior.log_density(tau, new_active)
    grad_tau = target.grad(loss_grad_tau, tau)
    # deaths: q_i of the reverse birth, from the base point tau
    mean_d, var_d = newborn_proposal(
        target.scale, grad_tau[rows, idx], loss_tau, loss_plus, loss_minus, delta, variance
    )
    log_q = torch.where(born, -_log_normal(t, mean_b, var_b), _log_normal(old, mean_d, var_d))

    # the reverse move's selection weight at tau: the death of the newborn, or the birth of the removed
    tau_host, new_act = tau.cpu().numpy(), new_active.cpu().numpy()
    grad_tau_host = grad_tau.cpu().numpy() if bool(dies.any()) else None
    for c, m in enumerate(moves_k):
        if m > 0:
            log_ratio[c] += _host_log_death(tau_host[c], new_act[c], index[c])
        elif m < 0:
            log_ratio[c] += _host_log_birth(grad_tau_host[c], ~new_act[c], index[c])
    host = torch.tensor(log_ratio, dtype=theta.dtype, device=theta.device)
    log_alpha = state.potential - u_tau + log_q + host
    finite = torch.isfinite(log_alpha) & torch.isfinite(grad_tau.sum(1))
    log_alpha = torch.where(finite, log_alpha, -torch.inf)
    accept = torch.log(u[:, 2]) < log_alpha
    new_state = select(accept, RJHMCState(tau, u_tau, grad_tau, new_active), state)
    return new_state, move, accept


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
    >>> from skgibbs.samplers import Target, hmc, rjhmc
    >>> X, y = torch.randn(30, 3, dtype=torch.float64), torch.randn(30, dtype=torch.float64)
    >>> target = Target(LinearPotential(X, y), MixingPrior(Prior(std=1.0), 2.0), lam=30.0)
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
    for _ in range(int(params.n_jumps)):
        state, move, accept = jump(generators, state, target, params.moves)
        kind = (move > 0).long()
        ones = (move != 0).long()
        proposed.scatter_add_(1, kind[:, None], ones[:, None])
        accepted.scatter_add_(1, kind[:, None], (ones * accept.long())[:, None])
    return state, RJHMCInfo(hmc_info, proposed, accepted, state.active.sum(1))
