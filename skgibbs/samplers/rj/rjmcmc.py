r"""Reversible-jump Langevin moves over sparse networks (paper 001 §6).

The target is the Gibbs posterior with the mixing prior (2.4),
``pi(theta) ∝ exp(-lambda R_n(theta)) Pi(theta)``
(:class:`~skgibbs.priors.MixingPrior`), a density with respect to the
reference measure ``mu = sum_I Lebesgue(R^I)``: a point is an active set
``I = {i : theta_i != 0}`` (``|I| >= 1``) and the values ``theta_I``;
inactive parameters are exact zeros.

Proposal
--------
With ``k = |I|`` and ``Q`` parameters, the move is drawn first: a *death*
(remove one coordinate), a *within-model* move or a *birth* (add one) with
probabilities proportional to ``(1/4, 1/2, 1/4)``, the impossible move
dropped at the boundaries (``k = 1``: no death, ``k = Q``: no birth, so
``(2/3, 1/3)`` as in §6). Then

* death: ``i in I`` with weight ``w_i^- ∝ exp(-|theta_i|)``, ``I' = I \ {i}``;
* birth: ``i notin I`` with weight ``w_i^+ ∝ r_i^2``, ``r_i = #{j notin I :
  |d_j R_n(theta)| <= |d_i R_n(theta)|}`` the rank of its gradient,
  ``I' = I ∪ {i}``;
* within: ``I' = I``;

and ``tau`` is the Langevin proposal on ``I'`` (``psi_I'`` of §6):
``tau_j = theta_j - h g_j + s xi_j`` for ``j in I'`` (the newborn starts
from ``theta_i = 0``), ``tau_j = 0`` otherwise, where
``g = grad U(theta)`` with ``U = lambda R_n - sum_{i in I} log p_i``.
The gradient of the risk with respect to the inactive (zero) coordinates
comes out of the same backward pass as the active ones, so the birth
weights and the newborn's drift need no extra evaluation: one gradient per
step, the one at ``tau``, which the reverse move needs as well.

Acceptance
----------
``tau`` determines ``I'``, and from ``I`` exactly one move type and one
coordinate lead to ``I'``. The density of the proposal with respect to
``mu`` is therefore

.. math::

    q(\tau \mid \theta) = P(m \mid k)\, w_i(\theta)\,
        \psi_{I'}(\tau_{I'} \mid \theta), \qquad
    \psi_{I'}(\tau_{I'} \mid \theta) = \prod_{j \in I'}
        \frac{1}{\sqrt{2\pi s^2}} e^{-(\tau_j - \theta_j + h g_j)^2 / (2 s^2)},

(``w_i = 1`` for a within-model move), a density on ``R^{|I'|}``. The
reverse of a birth of ``i`` is the death of ``i`` from ``tau`` (weight
``w_i^-(tau)``, the removed coordinate returning to its old value 0), the
reverse of a death is the birth of ``i`` from ``tau`` (weight
``w_i^+(tau)`` with the ranks of ``|d R_n(tau)|`` over the inactive set of
``tau``, the newborn drawn back to ``theta_i``). The Metropolis-Hastings
ratio with respect to ``mu`` (Green, 1995; Tierney, 1998) is

.. math::

    \alpha = \min\Big\{1,\;
      \frac{e^{-\lambda R_n(\tau)}\, \Pi(\tau)\, P(m^{-1} \mid k')\, w_i(\tau)\,
            \psi_I(\theta_I \mid \tau)}
           {e^{-\lambda R_n(\theta)}\, \Pi(\theta)\, P(m \mid k)\, w_i(\theta)\,
            \psi_{I'}(\tau_{I'} \mid \theta)}\Big\},

with no Jacobian: the move draws every coordinate of ``I'`` afresh from a
density, rather than mapping ``(theta, u)`` through a bijection. Both
numerator and denominator are densities of dimension ``|I| + |I'|``, so the
ratio is well defined: a birth's prior gains the factor ``p_i(tau_i) (k+1)
/ (s (Q - k))`` (:meth:`MixingPrior.log_density`, with ``binom(Q, k) /
binom(Q, k + 1) = (k + 1) / (Q - k)``) and its proposal the one-dimensional
normal density of the newborn. Every constant that depends on the dimension
is kept, in particular ``(2 pi s^2)^{-1/2}`` per coordinate and the
normalisation of ``p_i``. A within-model move is MALA on ``R^I``. A
proposal with a non-finite potential or gradient, or outside the prior's
box, is rejected.
"""

import math
from typing import NamedTuple

import numpy as np
import torch

from ..._random import normal, select, uniforms
from ...priors import MixingPrior

__all__ = ["RJState", "RJInfo", "RJParams", "MOVES", "init", "step", "birth_weights", "death_weights"]

# P(death), P(within), P(birth) of paper 001 §6 away from the boundaries
MOVES = (0.25, 0.5, 0.25)
_LOG_2PI = math.log(2.0 * math.pi)


class RJState(NamedTuple):
    """Current point of K chains: parameters, active sets and the cached risk and gradient."""

    theta: torch.Tensor  # (K, Q), exact zeros off the active set
    active: torch.Tensor  # (K, Q) bool
    loss_sum: torch.Tensor  # (K,) sum_i l_i(theta) on the full data
    loss_grad: torch.Tensor  # (K, Q) its gradient, inactive coordinates included
    log_prior: torch.Tensor  # (K,) MixingPrior.log_density


class RJInfo(NamedTuple):
    """Diagnostics of one step: the move tried (-1 death, 0 within, +1 birth) and its fate."""

    acceptance_prob: torch.Tensor  # (K,)
    is_accepted: torch.Tensor  # (K,) bool
    move: torch.Tensor  # (K,) long
    index: torch.Tensor  # (K,) long: the coordinate removed or added (-1 within)
    n_active: torch.Tensor  # (K,) |I| after the step
    is_finite: torch.Tensor  # (K,) bool


class RJParams(NamedTuple):
    """Per-chain step ``h`` and noise ``s`` of shape ``(K,)`` (``c = lambda / n`` is the target's).

    ``moves`` are the unnormalised probabilities of death, within-model move
    and birth; ``(0, 1, 0)`` keeps every active set fixed (MALA on it).
    """

    step_size: torch.Tensor
    proposal_std: torch.Tensor
    moves: tuple = MOVES


def death_weights(theta, active):
    """Unnormalised ``w_i^- = exp(-|theta_i|)`` on the active set, 0 elsewhere; shape ``(K, Q)``."""
    return torch.where(active, torch.exp(-theta.abs()), 0.0)


def birth_weights(loss_grad, active):
    """Unnormalised ``w_i^+ = r_i^2`` off the active set, 0 on it; shape ``(K, Q)``.

    ``r_i`` counts the inactive ``j`` with ``|grad_j| <= |grad_i|`` (ties
    share the larger rank), as in §6.
    """
    w_sorted, order = _sorted_birth_weights(loss_grad, active)
    return torch.zeros_like(w_sorted).scatter(1, order, w_sorted)


def _sorted_birth_weights(loss_grad, active):
    """Birth weights in ascending order of ``|grad|`` (active coordinates last, weight 0), and that order.

    One sort per row: in sorted order the rank of position ``j`` is one plus
    the last position holding the same value, a reversed running minimum.
    """
    a = torch.nan_to_num(loss_grad.abs(), nan=0.0, posinf=torch.finfo(loss_grad.dtype).max)
    values, order = torch.where(active, torch.inf, a).sort(1)
    Q = values.shape[1]
    positions = torch.arange(1, Q + 1, device=values.device).expand_as(values)
    last = torch.ones_like(values, dtype=torch.bool)
    last[:, :-1] = values[:, 1:] != values[:, :-1]
    ranks = torch.where(last, positions, Q).flip(1).cummin(1).values.flip(1)
    # float64: a squared rank reaches Q^2 and the sum Q^3 / 3, beyond float32's exact integers
    w = torch.where(torch.isinf(values), 0.0, ranks.to(torch.float64) ** 2)
    return w, order


_FLOAT_MAX = np.finfo(np.float64).max


def _host_abs(grad):
    """``|grad|`` on the host in float64, NaN as 0 and inf as the largest float (the ranks stay defined)."""
    a = np.abs(np.asarray(grad, dtype=np.float64))
    return np.nan_to_num(a, nan=0.0, posinf=_FLOAT_MAX)


def sorted_birth_weights_host(grad, active, stable=True):
    """The birth weights of K chains on the host, in each row's ascending order of ``|grad|``.

    Returns ``(w, order, n_free)``: ``w`` ``(K, Q)`` float64 the squared
    ranks ``r_i^2`` of the inactive coordinates in ascending order of
    ``|grad_i|`` (ties in ascending index order when ``stable``, in the
    order of a quicker unstable sort otherwise: tied coordinates share their
    weight, so only a draw of a position needs the order), then zeros for
    the active ones; ``order`` ``(K, Q)`` the coordinates of those positions;
    ``n_free`` ``(K,)`` the inactive coordinates a row has. One sort of all
    the rows and a reversed running minimum (the rank of a position is one
    plus the last position holding the same value): no loop over the chains.
    The NumPy counterpart of :func:`birth_weights`, whose numbers it gives.
    """
    a = np.where(active, np.inf, _host_abs(grad))
    order = np.argsort(a, axis=1, kind="stable" if stable else None)
    values = np.take_along_axis(a, order, 1)
    Q = a.shape[1]
    last = np.ones(values.shape, dtype=bool)
    last[:, :-1] = values[:, 1:] != values[:, :-1]
    ranks = np.minimum.accumulate(np.where(last, np.arange(1, Q + 1), Q)[:, ::-1], axis=1)[:, ::-1]
    w = np.where(np.isinf(values), 0.0, ranks.astype(np.float64) ** 2)
    return w, order, Q - np.count_nonzero(active, axis=1)


def birth_weights_host(grad, active):
    """Unnormalised birth weights ``r_i^2`` off the active set, 0 on it: :func:`birth_weights` on the host
    (float64 ``(K, Q)``), every row at once.

    Examples
    --------
    >>> import numpy as np
    >>> birth_weights_host(np.array([[0.5, -2.0, 0.5, 3.0]]), np.array([[False, False, False, True]]))
    array([[4., 9., 4., 0.]])
    """
    w, order, _ = sorted_birth_weights_host(grad, active, stable=False)
    out = np.empty_like(w)
    np.put_along_axis(out, order, w, 1)
    return out


def pick_birth_host(grad, active, u):
    """One inactive coordinate per row drawn with the birth weights at ``u`` ``(K,)``, and its ``log w_i^+``.

    The inverse of the running sum of the weights in ascending order of
    ``|grad|``, every row at once; rows without an inactive coordinate get
    index 0 and ``-inf`` (the caller proposes no birth there).
    """
    w, order, n_free = sorted_birth_weights_host(grad, active)
    cdf = np.cumsum(w, 1)
    total = cdf[:, -1]
    pos = np.minimum(np.count_nonzero(cdf <= (u * total)[:, None], axis=1), np.maximum(n_free - 1, 0))
    rows = np.arange(len(pos))
    with np.errstate(divide="ignore", invalid="ignore"):
        return order[rows, pos], np.log(w[rows, pos] / total)


def log_birth_host(grad, active, index):
    """``log w_i^+`` of the inactive coordinates ``index`` ``(K,)``, every row at once."""
    w = birth_weights_host(grad, active)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(w[np.arange(len(index)), index] / w.sum(1))


def death_weights_host(theta, active, scale=1.0):
    """Unnormalised ``w_i^- = exp(-|theta_i| / scale)`` on the active set, 0 elsewhere (host float64)."""
    return np.where(active, np.exp(-np.abs(np.asarray(theta, dtype=np.float64)) / scale), 0.0)


def pick_host(weights, u, limit=None):
    """One coordinate per row drawn with the unnormalised ``weights`` ``(K, Q)`` (host, float64) by
    inverting their running sum at ``u`` ``(K,)``, and its log probability; ``limit`` ``(K,)`` caps the
    index (the last coordinate with a weight, where rounding carries ``u`` past the sum)."""
    cdf = np.cumsum(weights, 1)
    total = cdf[:, -1]
    index = np.count_nonzero(cdf <= (u * total)[:, None], axis=1)
    index = np.minimum(index, weights.shape[1] - 1 if limit is None else limit)
    return index, log_weight_host(weights, index, total)


def log_weight_host(weights, index, total=None):
    """``log(w_index / sum w)`` per row (host)."""
    total = weights.sum(1) if total is None else total
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(weights[np.arange(len(index)), index] / total)


def _host(x):
    """A tensor on the host as a float64 array."""
    return x.detach().double().cpu().numpy()


def _last_active(active):
    """The largest active coordinate of each row (0 for a row with none)."""
    Q = active.shape[1]
    return np.where(active.any(1), Q - 1 - np.argmax(active[:, ::-1], axis=1), 0)


def _move_probs(size, n_params, moves):
    """``(P(death), P(within), P(birth))`` given ``|I| = size`` ``(K,)``: ``moves`` without the impossible
    ones (host arrays)."""
    d, w, b = (float(m) for m in moves)
    death = np.where(size > 1, d, 0.0)
    birth = np.where(size < n_params, b, 0.0)
    total = death + w + birth
    return death / total, w / total, birth / total


def _draw_moves(u, k, n_params, moves):
    """Moves (-1, 0, +1) of every chain from uniforms ``u`` ``(K,)``, and ``log P(reverse move | k') -
    log P(move | k)`` (host arrays)."""
    p = np.stack(_move_probs(k, n_params, moves))
    m = np.where(u < p[0], -1, np.where(u < p[0] + p[1], 0, 1))
    rev = np.stack(_move_probs(k + m, n_params, moves))
    rows = np.arange(len(m))
    return m, np.log(rev[1 - m, rows]) - np.log(p[m + 1, rows])


def init(generators, target, theta, params=None):
    """State at ``theta`` (shape ``(K, Q)``): its non-zero coordinates are the active set; draws nothing."""
    if not isinstance(target.prior, MixingPrior):
        raise TypeError(f"rjmcmc samples a MixingPrior posterior, got {type(target.prior).__name__}.")
    theta = theta.detach()
    active = theta != 0
    if not bool(active.any(1).all()):
        raise ValueError("Every chain needs at least one non-zero parameter (|I| >= 1) to start.")
    loss_sum, loss_grad = target.loss_sum_and_grad(theta)
    return RJState(theta, active, loss_sum, loss_grad, target.log_prior(theta, active))


def step(generators, state, target, params):
    """One reversible-jump transition of K chains (see the module docstring).

    Parameters
    ----------
    generators : list of torch.Generator
        One per chain; chain ``k`` draws its move, coordinate, noise and
        uniform from ``generators[k]`` only.
    state : RJState
    target : Target
        Full-data losses (``rho = 1``) and a :class:`~skgibbs.priors.MixingPrior`.
    params : RJParams

    Returns
    -------
    state : RJState
    info : RJInfo
    """
    theta, active = state.theta, state.active
    K, Q = theta.shape
    prior = target.prior
    u = uniforms(generators, 3, theta)  # the move, the coordinate, the acceptance
    noise = normal(generators, Q, theta)
    u_host = u.double().cpu().numpy()
    active_h = active.cpu().numpy()
    k = active_h.sum(1)
    moves, log_move_ratio = _draw_moves(u_host[:, 0], k, Q, params.moves)
    dies, born = moves < 0, moves > 0
    # the chosen coordinates and -log w_i(theta), every chain at once on the host (index -1: within)
    index, log_sel = np.full(K, -1), np.zeros(K)
    jumps = bool(dies.any() or born.any())
    new_active = active
    if jumps:
        if dies.any():
            w = death_weights_host(_host(theta[dies]), active_h[dies])
            index[dies], log_w = pick_host(w, u_host[dies, 1], _last_active(active_h[dies]))
            log_sel[dies] -= log_w
        if born.any():
            index[born], log_w = pick_birth_host(
                _host(state.loss_grad[born]), active_h[born], u_host[born, 1]
            )
            log_sel[born] -= log_w
        jumped = np.flatnonzero(moves != 0)
        new_active_h = active_h.copy()
        new_active_h[jumped, index[jumped]] = born[jumped]
        new_active = torch.as_tensor(new_active_h, device=theta.device)

    # the Langevin proposal psi_I' (the newborn starts at theta_i = 0)
    h, s = params.step_size[:, None], params.proposal_std[:, None]
    grad_cur = target.grad(state.loss_grad, theta)
    tau = torch.where(new_active, torch.addcmul(theta - h * grad_cur, s, noise), 0.0)
    loss_prop, lgrad_prop = target.loss_sum_and_grad(tau)
    grad_prop = target.grad(lgrad_prop, tau)

    # + log w_i(tau) of the reverse move: a birth is undone by the death of the newborn, a death by
    # the birth of the removed coordinate, ranked by the gradient at tau
    if jumps:
        if born.any():
            w = death_weights_host(_host(tau[born]), new_active_h[born])
            log_sel[born] += log_weight_host(w, index[born])
        if dies.any():
            log_sel[dies] += log_birth_host(_host(lgrad_prop[dies]), new_active_h[dies], index[dies])
    # host-side terms in one transfer: the size part of log Pi(tau), and log P(m^-1 | k') / P(m | k)
    # + the selection weights + the -log(s sqrt(2 pi)) of the one coordinate a jump adds or removes
    k_new = k + moves
    log_s = np.log(params.proposal_std.double().cpu().numpy()) + 0.5 * _LOG_2PI if jumps else np.zeros(K)
    extra = log_move_ratio + log_sel + moves * log_s
    host = torch.tensor(
        np.stack([np.asarray(prior.size_part(k_new.tolist(), Q), dtype=np.float64), extra]),
        dtype=theta.dtype,
        device=theta.device,
    )
    log_prior_prop = prior.coordinate_part(tau, new_active) + host[0]

    # log psi_I(theta | tau) - log psi_I'(tau | theta) up to the constants above; the forward
    # residual is s * noise exactly
    bwd = torch.addcmul(theta - tau, h, grad_prop)
    sd = params.proposal_std
    log_psi = 0.5 * (noise * noise * new_active).sum(1) - 0.5 * (bwd * bwd * active).sum(1) / sd**2
    log_alpha = target.scale * (state.loss_sum - loss_prop) + (log_prior_prop - state.log_prior) + host[1]
    log_alpha = log_alpha + log_psi
    finite = torch.isfinite(log_alpha) & torch.isfinite(grad_prop.sum(1))
    log_alpha = torch.where(finite, log_alpha, -torch.inf)
    accept = torch.log(u[:, 2]) < log_alpha
    proposal = RJState(tau, new_active, loss_prop, lgrad_prop, log_prior_prop)
    new_state = select(accept, proposal, state)
    move_index = torch.as_tensor(np.stack([moves, index]), device=theta.device)
    info = RJInfo(
        torch.exp(log_alpha.clamp(max=0.0)),
        accept,
        move_index[0],
        move_index[1],
        new_state.active.sum(1),
        finite,
    )
    return new_state, info
