"""Unadjusted Langevin on minibatches: SGLD (rho < 1) and ULA (rho = 1).

    ``theta' = theta - h grad U_B(theta) + sqrt(2 h) xi``,
    ``U_B(theta) = lambda / (n rho) sum_{i in B} l_i(theta) - log Pi(theta)``,

the unbiased batch estimate of ``lambda R_n - log Pi``. There is no
Metropolis-Hastings step, so the chain targets ``pi_lambda`` only as
``h -> 0``; it is the common baseline the adjusted kernels are compared with.
A step whose gradient is not finite is refused (the chain stays put) and
reported in ``SGLDInfo.is_finite``.
"""

from typing import NamedTuple

import torch

from ..._random import normal
from .mala import langevin_proposal

__all__ = ["SGLDState", "SGLDInfo", "SGLDParams", "init", "step"]


class SGLDState(NamedTuple):
    theta: torch.Tensor  # (K, Q)


class SGLDInfo(NamedTuple):
    batch_loss: torch.Tensor  # (K,) mean loss on the batch at the old point
    batch_size: torch.Tensor  # (K,)
    is_finite: torch.Tensor  # (K,)


class SGLDParams(NamedTuple):
    """``rho``, the Bernoulli batch probability, and the step ``h`` of shape ``(K,)``."""

    rho: float
    step_size: torch.Tensor


def init(generators, target, theta, params=None):
    """State at ``theta``; draws nothing."""
    return SGLDState(theta.detach())


def step(generators, state, target, params):
    """One SGLD step of K chains.

    Parameters
    ----------
    generators : list of torch.Generator
    state : SGLDState
    target : Target
    params : SGLDParams
    """
    theta, rho, step_size = state.theta, params.rho, params.step_size
    batch = target.draw_batch(generators, rho, theta.device)
    loss_sum, loss_grad = target.loss_sum_and_grad(theta, batch)
    # lambda / (n rho) sum_B l_i: the unbiased batch estimate of lambda R_n
    grad = target.grad(loss_grad, theta, target.lambda_ / (target.n_data * min(rho, 1.0)))
    noise = normal(generators, theta.shape[1], theta)
    new = langevin_proposal(theta, grad, step_size, torch.sqrt(2 * step_size), noise)
    ok = torch.isfinite(new).all(1) & torch.isfinite(target.log_prior(new))
    new = torch.where(ok[:, None], new, theta)
    size = batch.size.to(loss_sum.dtype).clamp(min=1)
    return SGLDState(new), SGLDInfo(loss_sum / size, batch.size, ok)
