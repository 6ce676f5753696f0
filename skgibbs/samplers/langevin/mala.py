"""MALA, stochastic MALA and corrected stochastic MALA in one kernel.

The three algorithms of paper 000 differ only in how a batch ``B`` (drawn
from Bernoulli(rho), Alg. 1 (c)(i)) enters the potential

    ``U_B(theta) = c * sum_{i in B} l_i(theta) + d * |B| - log Pi(theta)``

(Alg. 1 (b) multiplied by lambda):

========  ================================  ==============  ===============
sampler   c                                 d               rho
========  ================================  ==============  ===============
mala      lambda / n                        0               1 (full data)
smala     lambda / (n rho)                  0               rho   -- (2.10)
csmala    lambda' / n                       zeta log rho    rho   -- (2.12)
========  ================================  ==============  ===============

with ``lambda' = lambda (a + 1 - rho) / a`` and ``a = rho**(1 - zeta)``, the
temperature compensation that makes the surrogate
``prod_i (a exp(-lambda' l_i / n) + 1 - rho)`` agree with
``exp(-lambda R_n)`` to first order in ``lambda' l_i / n`` (Lemma 3 at
zeta = 1: ``lambda' = (2 - rho) lambda``).

The proposal is the Langevin step on the proposal's own batch potential,
``theta' ~ N(theta - h grad U_B(theta), s^2 I)`` (Alg. 1 (c)(ii)); the
Metropolis-Hastings ratio (Alg. 1 (c)(iii)) lives in :func:`log_acceptance`.
A proposal with a non-finite potential, or outside the prior's box, is
rejected, never propagated.
"""

import math
from typing import NamedTuple

import torch

from ..._random import normal, select, uniform
from ..target import Target

__all__ = [
    "MALAState",
    "MALAInfo",
    "MALAParams",
    "surrogate_constants",
    "solve_correction",
    "init",
    "step",
    "refresh",
    "log_acceptance",
    "log_proposal_ratio",
    "langevin_proposal",
]

SAMPLERS = ("mala", "smala", "csmala")


class MALAState(NamedTuple):
    """Current point of K chains with its batch terms cached (one gradient per step)."""

    theta: torch.Tensor  # (K, Q)
    loss_sum: torch.Tensor  # (K,)  sum_{i in B} l_i(theta)
    loss_grad: torch.Tensor  # (K, Q) its gradient
    batch_size: torch.Tensor  # (K,)  |B|
    log_prior: torch.Tensor  # (K,)


class MALAInfo(NamedTuple):
    """Diagnostics of one step, for monitoring only.

    ``move_acceptance`` is filled only when :func:`step` gets
    ``move_scale``: the acceptance probability the parameter move alone would
    have under ``move_scale * sum_{i in B'} l_i - log Pi``, both points
    evaluated on the proposal's batch ``B'``. With ``move_scale = lambda /
    (n rho)`` that is an unbiased batch estimate of ``lambda R_n``, so the
    signal is free of the batch-to-batch noise that caps the acceptance of
    stochastic MH; the runner adapts the step size on it.
    """

    acceptance_prob: torch.Tensor  # (K,) min(1, alpha)
    is_accepted: torch.Tensor  # (K,) bool
    batch_size: torch.Tensor  # (K,) |B'| of the proposal
    is_finite: torch.Tensor  # (K,) bool, proposal potential finite
    move_acceptance: torch.Tensor = None  # (K,) or None


class MALAParams(NamedTuple):
    """Constants of the potential and the proposal (see the module docstring).

    ``step_size`` (h) and ``proposal_std`` (s) have shape ``(K,)``: every
    chain may carry its own adapted step size. ``loss_scale`` (c) and
    ``batch_offset`` (d) are floats, or tensors of shape ``(K,)`` while each
    chain adapts its own correction during burn-in. ``move_scale``, when
    given, makes :func:`step` also report ``MALAInfo.move_acceptance`` (one
    extra forward pass of the current point on the proposal's batch).
    """

    loss_scale: object
    batch_offset: object
    rho: float
    step_size: torch.Tensor
    proposal_std: torch.Tensor
    move_scale: float = None


def surrogate_constants(sampler, lam, n, rho, zeta=1.0, compensate=True):
    """``(c, d, lambda_eff)`` of the batch potential for a target ``exp(-lambda R_n)``.

    Parameters
    ----------
    sampler : {"mala", "smala", "csmala", "sgld"}
        The kernel whose batch terms are asked for (the sampler objects'
        ``constants`` give the same).
    lam : float
        Inverse temperature ``lambda = n / temperature``.
    n : int
        Number of examples.
    rho : float in (0, 1]
        Bernoulli batch probability.
    zeta : float, default=1.0
        Correction weight of csMALA.
    compensate : bool, default=True
        csMALA only: use ``lambda'`` so that the surrogate matches
        ``exp(-lambda R_n)`` to first order. False puts ``lam`` itself in
        the batch terms, as paper 000 does when it states ``lambda``
        per method (its Table 1 uses ``lambda = n (2 - rho)`` for csMALA).
        The first-order temperature of the surrogate is then
        ``lam a / (a + 1 - rho)``: Lemma 3's ``lam / (2 - rho)`` at
        ``zeta = 1``, but ``rho lam`` as the centred ``zeta`` goes to 0, so
        Table 1's csMALA has ``lambda_eff = rho (2 - rho) n``.

    Returns
    -------
    c : float
        Multiplier of the batch loss sum.
    d : float
        Per-example offset ``zeta log rho`` (csMALA), else 0.
    lam_eff : float
        The inverse temperature actually used in the batch terms
        (``lambda'`` for csMALA, ``lambda`` otherwise).

    Examples
    --------
    >>> c, d, lam_eff = surrogate_constants("csmala", lam=100.0, n=100, rho=0.5, zeta=1.0)
    >>> round(lam_eff, 6)          # Lemma 3: (2 - rho) lambda
    150.0
    """
    if sampler == "mala":
        return full_data_constants(lam, n)
    if sampler in ("smala", "sgld"):
        return unbiased_constants(lam, n, rho)
    if sampler == "csmala":
        return corrected_constants(lam, n, rho, zeta, compensate)
    raise ValueError(f"sampler must be one of 'mala', 'smala', 'csmala' or 'sgld', got {sampler!r}.")


def full_data_constants(lam, n):
    """``(c, d, lambda_eff)`` of the full-data potential ``lambda R_n``: MALA, and any kernel at ``rho = 1``."""
    return lam / n, 0.0, lam


def unbiased_constants(lam, n, rho):
    """sMALA's (2.10) and SGLD's batch terms: ``lambda / (n rho) sum_B l_i``, unbiased for ``lambda R_n``."""
    if rho >= 1.0:
        return full_data_constants(lam, n)
    return lam / (n * rho), 0.0, lam


def corrected_constants(lam, n, rho, zeta=1.0, compensate=True):
    """csMALA's batch terms ``lambda' l_i / n + zeta log rho`` (Alg. 1 (b), (2.12), Lemma 3)."""
    if rho >= 1.0:
        return full_data_constants(lam, n)
    a = rho ** (1.0 - zeta)
    lam_eff = lam * (a + 1.0 - rho) / a if compensate else lam
    return lam_eff / n, zeta * math.log(rho), lam_eff


def solve_correction(mean_risk, lam, n, rho, tol=1e-10, compensate=True):
    """zeta that centres the csMALA per-example term (paper 000 §5).

    Solves ``zeta log rho = -lambda'(zeta) R / n`` with
    ``lambda'(zeta) = lambda (1 + (1 - rho) rho**(zeta - 1))``, so that
    ``lambda' l_i / n + zeta log rho`` has mean zero over the data. The left
    side grows and the right side falls in zeta, so the root is unique. With
    ``compensate=False``, ``lambda' = lambda`` and the root is explicit.

    Examples
    --------
    >>> zeta = solve_correction(mean_risk=0.5, lam=1.0, n=1, rho=0.1)
    >>> lam_eff = 1.0 * (1 + 0.9 * 0.1 ** (zeta - 1))
    >>> abs(zeta * math.log(0.1) + lam_eff * 0.5) < 1e-8
    True
    """
    if rho >= 1.0 or mean_risk <= 0:
        return 0.0
    u = -math.log(rho)
    c = lam * mean_risk / n
    if not compensate:  # paper 000 §5 as written: -zeta log(rho) / lambda = Rbar_n
        return c / u

    def gap(z):
        return z * u - c * (1.0 + (1.0 - rho) * math.exp(u * (1.0 - z)))

    lo, hi = 0.0, 1.0
    while gap(hi) < 0:
        hi *= 2.0
        if hi > 1e6:
            return hi
    while hi - lo > tol * max(1.0, hi):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if gap(mid) < 0 else (lo, mid)
    return 0.5 * (lo + hi)








def _scalar(value, like):
    """A number as a 0-d CPU tensor of ``like``'s dtype; a per-chain tensor as it is.

    torch converts a Python number to the tensor's dtype at every operation
    it enters; converted once per step, ``c`` and ``d`` give the same
    products at a fraction of the cost.
    """
    return value if torch.is_tensor(value) else torch.full((), value, dtype=like.dtype)


def langevin_proposal(theta, grad, step_size, proposal_std, noise):
    """``theta - h grad + s noise`` with per-chain ``h`` and ``s`` of shape ``(K,)``."""
    return torch.addcmul(theta - step_size[:, None] * grad, proposal_std[:, None], noise)


def log_acceptance(u_cur, u_prop, theta, theta_prop, grad_cur, grad_prop, params, noise=None):
    """Log Metropolis-Hastings ratio of a Langevin proposal (Alg. 1 (c)(iii)).

    ``U(theta) - U(theta') + log q(theta | theta') - log q(theta' | theta)``
    with ``q(a | b) = N(a; b - h grad U(b), s^2 I)``. When the proposal's
    standard normal ``noise`` is given, the forward residual
    ``theta' - theta + h grad U(theta)`` is ``s * noise`` exactly and is not
    recomputed.
    """
    return u_cur - u_prop + log_proposal_ratio(theta, theta_prop, grad_cur, grad_prop, params, noise)


def log_proposal_ratio(theta, theta_prop, grad_cur, grad_prop, params, noise=None):
    """``log q(theta | theta') - log q(theta' | theta)`` of the Langevin proposal."""
    h = params.step_size[:, None]
    s2 = params.proposal_std**2
    inv2s2 = 0.5 / s2
    if noise is None:
        fwd = theta_prop - theta + h * grad_cur
        fwd2 = (fwd * fwd).sum(1)
    else:
        fwd2 = s2 * (noise * noise).sum(1)
    bwd = torch.addcmul(theta - theta_prop, h, grad_prop)
    return inv2s2 * (fwd2 - (bwd * bwd).sum(1))






def init(generators, target, theta, params):
    """State at ``theta`` (shape ``(K, Q)``) with a fresh Bernoulli(rho) batch (Alg. 1 (a)-(b))."""
    batch = target.draw_batch(generators, params.rho, theta.device)
    loss_sum, loss_grad = target.loss_sum_and_grad(theta, batch)
    return MALAState(theta.detach(), loss_sum, loss_grad, batch.size, target.log_prior(theta))


def refresh(generators, state, target, params, which=None):
    """Restart: redraw the batch of the current point (paper 000 §5).

    ``which`` (bool, shape ``(K,)``) selects the chains to refresh. This
    perturbs the target and is counted by the runner.
    """
    if which is None:
        return init(generators, target, state.theta, params)
    # only the chosen chains draw: the others' generators stay untouched
    rows = which.nonzero()[:, 0].tolist()
    new = init([generators[k] for k in rows], target, state.theta[rows], params)
    out = [t.clone() for t in state]
    for field, value in zip(out, new):
        field[rows] = value.to(field.dtype)
    return MALAState(*out)



def step(generators, state, target, params):
    """One csMALA transition of K chains (Alg. 1 (c)(i)-(iv)).

    Parameters
    ----------
    generators : list of torch.Generator
        One per chain: chain ``k`` draws its batch, noise and uniform from
        ``generators[k]`` only, so a chain's path does not depend on how many
        chains run beside it.
    state : MALAState
    target : Target
    params : MALAParams

    Returns
    -------
    state : MALAState
    info : MALAInfo
    """
    theta = state.theta
    c, d = _scalar(params.loss_scale, theta), _scalar(params.batch_offset, theta)
    grad_cur = target.grad(state.loss_grad, theta, c)
    batch = target.draw_batch(generators, params.rho, theta.device)  # (c)(i)
    noise = normal(generators, theta.shape[1], theta)
    theta_prop = langevin_proposal(theta, grad_cur, params.step_size, params.proposal_std, noise)  # (c)(ii)
    loss_prop, lgrad_prop = target.loss_sum_and_grad(theta_prop, batch)
    log_prior_prop = target.log_prior(theta_prop)
    grad_prop = target.grad(lgrad_prop, theta_prop, c)
    u_cur = Target.energy(state.loss_sum, state.batch_size, state.log_prior, c, d)
    u_prop = Target.energy(loss_prop, batch.size, log_prior_prop, c, d)
    log_q = log_proposal_ratio(theta, theta_prop, grad_cur, grad_prop, params, noise)
    log_alpha = u_cur - u_prop + log_q  # (c)(iii)
    # a non-finite gradient entry makes its row sum non-finite too: one reduction
    finite = torch.isfinite(log_alpha) & torch.isfinite(grad_prop.sum(1))
    log_alpha = torch.where(finite, log_alpha, -torch.inf)
    move = None
    if params.move_scale is not None:
        with torch.no_grad():
            loss_cur_on_prop = target.loss_sum(theta, batch)
        log_move = params.move_scale * (loss_cur_on_prop - loss_prop) + log_prior_prop - state.log_prior + log_q
        log_move = torch.where(finite & torch.isfinite(log_move), log_move, torch.full_like(log_move, -torch.inf))
        move = torch.exp(log_move.clamp(max=0.0))
    accept = torch.log(uniform(generators, theta)) < log_alpha  # (c)(iv)
    proposal = MALAState(theta_prop, loss_prop, lgrad_prop, batch.size, log_prior_prop)
    new_state = select(accept, proposal, state)
    info = MALAInfo(torch.exp(log_alpha.clamp(max=0.0)), accept, batch.size, finite, move)
    return new_state, info
