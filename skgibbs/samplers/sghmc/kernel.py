"""The pure SGHMC kernel: ``init`` / ``step`` of K chains on fixed-size minibatches.

The dynamics, their constants and the refusal of a step are described in
:mod:`skgibbs.samplers.sghmc`; the sampler object that adapts the constants
is :class:`~skgibbs.samplers.SGHMC` (:mod:`.sampler`).
"""

from typing import NamedTuple

import torch

from ..._random import normal
from ...potential import Batch

__all__ = ["SGHMCState", "SGHMCInfo", "SGHMCParams", "init", "step", "draw_rows", "batch_gradient", "curvature",
           "KINETIC_LIMIT"]

#: a step whose kinetic temperature ``mean_j v_j^2 / eta_j`` (about 1 when sampling) exceeds this is refused
KINETIC_LIMIT = 100.0


class SGHMCState(NamedTuple):
    theta: torch.Tensor  # (K, Q)
    velocity: torch.Tensor  # (K, Q): the displacement v of the last step


class SGHMCInfo(NamedTuple):
    grad: torch.Tensor  # (K, Q) grad U_B at the old point
    batch_loss: torch.Tensor  # (K,) mean loss of the batch at the old point
    is_finite: torch.Tensor  # (K,) the step was taken


class SGHMCParams(NamedTuple):
    """Constants of one step.

    ``learning_rate`` is ``eta = epsilon^2 m`` of shape ``(Q,)`` or
    ``(K, Q)``; ``friction`` is ``alpha``; ``noise_std`` is
    ``sqrt(2 alpha eta)`` (same shape as ``learning_rate``);
    ``batch_size`` is ``b``.
    """

    learning_rate: torch.Tensor
    friction: float
    noise_std: torch.Tensor
    batch_size: int


def draw_rows(generators, n, b, device=None):
    """``b`` rows drawn uniformly with replacement per chain: a :class:`~skgibbs.potential.Batch` of shape ``(K, b)``.

    Row ``k`` comes from ``generators[k]`` alone; the work is ``O(b)``,
    whatever ``n``.
    """
    if b >= n:
        return Batch(None, None, torch.full((len(generators),), n, device=device))
    idx = torch.stack([torch.randint(n, (b,), generator=g, device=device) for g in generators])
    return Batch(idx, None, torch.full((len(generators),), b, device=device))


def init(generators, target, theta, params=None):
    """State at ``theta`` at rest; draws nothing."""
    theta = theta.detach()
    return SGHMCState(theta, torch.zeros_like(theta))


def batch_gradient(generators, target, theta, b):
    """``grad U_B`` ``(K, Q)`` on a new batch of ``b`` rows, and the batch's estimate of the risk ``(K,)``.

    The ``b`` rows are drawn uniformly from the ``n`` rows, so that ``n /
    b`` times their (weighted) loss sum estimates the full data's without
    bias, whatever the examples' weights.
    """
    n = getattr(target, "n_rows", target.n_data)
    batch = draw_rows(generators, n, b, theta.device)
    loss_sum, loss_grad = target.loss_sum_and_grad(theta, batch)
    rows = min(b, n) * target.n_data / n  # the batch's rows in units of n / n_rows (the rows without weights)
    return target.grad(loss_grad, theta, target.lambda_ / rows), loss_sum / rows


def curvature(generators, target, theta, m, b, n_iter=20):
    """Largest eigenvalue ``(K,)`` of ``diag(m)^1/2 H diag(m)^1/2`` on one batch per chain, by power iteration.

    ``H`` is the Hessian of ``U_B`` at ``theta``; its products with a vector
    are central differences of the batch gradient (the same batch
    throughout). Momentum SGD on a quadratic is stable while
    ``eta * lambda_max < 2 (2 - alpha)`` (``eta = epsilon^2 m``), so this
    bounds the step size. Costs ``2 n_iter`` batch gradients.
    """
    n = getattr(target, "n_rows", target.n_data)
    batch = draw_rows(generators, n, b, theta.device)
    c = target.lambda_ / (min(b, n) * target.n_data / n)
    root = m.sqrt()

    def grad(point):
        _, loss_grad = target.loss_sum_and_grad(point, batch)
        return target.grad(loss_grad, point, c)

    u = normal(generators, theta.shape[1], theta)
    u = u / u.norm(dim=1, keepdim=True)
    lam = torch.zeros(theta.shape[0], dtype=theta.dtype, device=theta.device)
    r = 1e-2  # the difference's half-width in the preconditioned coordinates
    for _ in range(n_iter):
        w = r * root * u
        hw = (grad(theta + w) - grad(theta - w)) / (2 * r)
        au = root * hw
        lam = (au * u).sum(1).abs()
        norm = au.norm(dim=1, keepdim=True)
        u = torch.where(norm > 0, au / norm.clamp_min(1e-30), u)
    return torch.nan_to_num(lam, nan=float("inf"))


def step(generators, state, target, params):
    """One SGHMC step of K chains (module docstring); returns ``(state, info)``.

    Parameters
    ----------
    generators : list of torch.Generator
        One per chain: its batch, then its noise.
    state : SGHMCState
    target : Target
    params : SGHMCParams
    """
    theta, v = state
    grad, batch_loss = batch_gradient(generators, target, theta, params.batch_size)
    noise = normal(generators, theta.shape[1], theta)
    v_new = (1.0 - params.friction) * v - params.learning_rate * grad + params.noise_std * noise
    new = theta + v_new
    # the kinetic temperature mean_j v_j^2 / eta_j is about 1 at stationarity (its spread over
    # 10^4 weights is about 0.01): far above it the chain is blowing up, not sampling
    kinetic = (v_new * v_new / params.learning_rate).mean(1)
    ok = torch.isfinite(new).all(1) & torch.isfinite(target.log_prior(new)) & (kinetic < KINETIC_LIMIT)
    new = torch.where(ok[:, None], new, theta)
    v_new = torch.where(ok[:, None], v_new, torch.zeros_like(v_new))
    return SGHMCState(new, v_new), SGHMCInfo(grad, batch_loss, ok)
