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

from ..potential import draw_batch
from .mala import _noise, langevin_proposal

__all__ = ["SGLDState", "SGLDInfo", "init", "step"]


class SGLDState(NamedTuple):
    theta: torch.Tensor  # (K, Q)


class SGLDInfo(NamedTuple):
    batch_loss: torch.Tensor  # (K,) mean loss on the batch at the old point
    batch_size: torch.Tensor  # (K,)
    is_finite: torch.Tensor  # (K,)


def init(theta):
    return SGLDState(theta.detach())


def step(generators, state, potential, lam, rho, step_size, prior):
    """One SGLD step of K chains; ``step_size`` has shape ``(K,)``.

    Parameters
    ----------
    generators : list of torch.Generator
    state : SGLDState
    potential : MLPPotential or FunctionPotential
    lam : float
        Inverse temperature.
    rho : float
        Bernoulli batch probability.
    step_size : torch.Tensor of shape (K,)
    prior : Prior
    """
    theta = state.theta
    n = potential.n_data
    batch = draw_batch(generators, n, rho, theta.device)
    loss_sum, loss_grad = potential.loss_sum_and_grad(theta, batch)
    grad = (lam / (n * min(rho, 1.0))) * loss_grad
    prior_grad = prior.grad_log_density(theta)
    if prior_grad is not None:
        grad = grad - prior_grad
    noise = _noise(generators, theta.shape[1], theta)
    new = langevin_proposal(theta, grad, step_size, torch.sqrt(2 * step_size), noise)
    ok = torch.isfinite(new).all(1) & torch.isfinite(prior.log_density(new))
    new = torch.where(ok[:, None], new, theta)
    size = batch.size.to(loss_sum.dtype).clamp(min=1)
    return SGLDState(new), SGLDInfo(loss_sum / size, batch.size, ok)
