"""Metropolis-adjusted microcanonical Hamiltonian Monte Carlo (MAMS), batched over chains.

Robnik, Cohn-Gordon and Seljak, *Metropolis Adjusted Microcanonical
Hamiltonian Monte Carlo* (2025), Alg. 1: a transition draws a fresh unit
velocity ``u`` uniformly on the sphere, integrates ``N`` isokinetic steps
(:mod:`.integrator`) and accepts the end point with probability

    ``min(1, exp(-W))``,   ``W`` = the energy error of the trajectory,

the kinetic energy change (the log-Jacobian of the velocity maps) plus
``U_end - U_start``. The integrator is reversible after a flip of ``u``
and ``u`` is drawn afresh, so this is the whole Metropolis-Hastings ratio:
the kernel is exact for ``exp(-U)`` whatever the step size, the
preconditioner and ``N`` (fixed during the trajectory, the number of steps
drawn independently of the state). A non-finite trajectory, or one whose
energy error exceeds ``max_energy_error``, is stopped, rejected and counted
as a divergence, as in :mod:`~skgibbs.samplers.hmc`.

Chains that have finished their trajectory drop out of the batch: a step
evaluates the gradients of the chains still integrating only.
"""

from typing import NamedTuple

import torch

from ..._random import select, uniform
from ..hmc.kernel import evaluator
from .integrator import GRADIENTS_PER_STEP, integrate, random_direction

__all__ = ["MAMSState", "MAMSInfo", "MAMSParams", "init", "step"]


class MAMSState(NamedTuple):
    """Current point of K chains with its potential and gradient cached."""

    theta: torch.Tensor  # (K, Q)
    potential: torch.Tensor  # (K,)
    grad: torch.Tensor  # (K, Q)


class MAMSInfo(NamedTuple):
    """Diagnostics of one transition."""

    acceptance_prob: torch.Tensor  # (K,) min(1, exp(-W)), 0 when divergent
    is_accepted: torch.Tensor  # (K,) bool
    is_divergent: torch.Tensor  # (K,) bool
    energy_error: torch.Tensor  # (K,) float64 W (inf when divergent)
    num_steps: torch.Tensor  # (K,) integrator steps taken
    num_grads: torch.Tensor  # (K,) gradient evaluations
    proposal: torch.Tensor  # (K, Q) end point of the trajectory


class MAMSParams(NamedTuple):
    """``step_size`` ``(K,)``, ``sqrt_diag`` ``(Q,)`` or ``(K, Q)``, ``num_steps`` ``(K,)`` long."""

    step_size: torch.Tensor
    sqrt_diag: torch.Tensor
    num_steps: torch.Tensor
    integrator: str = "mclachlan"
    max_energy_error: float = 1000.0


def init(generators, target, theta, params=None):
    """State at ``theta`` ``(K, Q)``; draws nothing."""
    u, grad = target.value_and_grad(theta)
    return MAMSState(theta.detach(), u, grad)


def step(generators, state, target, params):
    """One adjusted transition of K chains.

    Parameters
    ----------
    generators : list of torch.Generator
        One per chain: its velocity and its uniform.
    state : MAMSState
    target : Target
    params : MAMSParams

    Returns
    -------
    state : MAMSState
    info : MAMSInfo

    Examples
    --------
    >>> import torch
    >>> from skgibbs.potential import LogDensityPotential
    >>> from skgibbs.samplers import Target
    >>> from skgibbs.samplers.mclmc import adjusted
    >>> target = Target(LogDensityPotential(lambda th: -0.5 * (th ** 2).sum(1)))
    >>> gens = [torch.Generator().manual_seed(0)]
    >>> params = adjusted.MAMSParams(torch.tensor([0.3]), torch.ones(3), torch.tensor([5]))
    >>> state = adjusted.init(gens, target, torch.zeros(1, 3))
    >>> state, info = adjusted.step(gens, state, target, params)
    >>> 0.0 <= float(info.acceptance_prob[0]) <= 1.0, int(info.num_steps[0])
    (True, 5)
    """
    evaluate = evaluator(target)
    u0 = random_direction(generators, state.theta, params.sqrt_diag)
    theta, _, potential, grad, error, divergent, steps = integrate(
        state.theta, u0, state.potential, state.grad, params.step_size, params.sqrt_diag,
        params.num_steps, evaluate, params.integrator, params.max_energy_error,
    )
    log_alpha = torch.where(divergent, torch.full_like(error, -torch.inf), -error)
    accept = torch.log(uniform(generators, error)) < log_alpha
    end = MAMSState(theta, potential, grad)
    info = MAMSInfo(
        torch.exp(log_alpha.clamp(max=0.0)), accept, divergent, error, steps,
        steps * GRADIENTS_PER_STEP[params.integrator], theta,
    )
    return select(accept, end, state), info
