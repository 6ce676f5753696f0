"""Unadjusted microcanonical Langevin Monte Carlo (MCLMC), batched over chains.

Robnik and Seljak, *Fluctuation without dissipation: Microcanonical Langevin
Monte Carlo* (2024): one step is an isokinetic integrator step
(:mod:`.integrator`) followed by a partial refreshment of the velocity,

    ``u <- (u + nu z) / |u + nu z|``,   ``nu = sqrt((exp(2 eps / L) - 1) / d)``,

Langevin noise on the sphere whose decoherence length ``L`` sets how far
the dynamics travel before forgetting their direction. The continuous
dynamics leave ``exp(-U(theta))`` invariant without any Metropolis
correction, so no step is rejected; the discretisation does not, and its
bias is controlled by the energy error of the steps: tuned so that
``Var[energy error] / d`` is a small ``desired_energy_var`` (their §4;
``5e-4`` by default), the error of the variance of every coordinate is of
the same small order (their Fig. 3: about ``Var[E] / d`` relative). It is
an approximation, documented as one; :mod:`.adjusted` is the exact form.

A step whose energy error or gradient is non-finite keeps the chain where
it was (the state before the step) and reports a divergence.
"""

from typing import NamedTuple

import torch

from ..hmc.kernel import diverged, evaluator
from .integrator import INTEGRATORS, isokinetic_step, moving_dimension, random_direction, refresh

__all__ = ["MCLMCState", "MCLMCInfo", "MCLMCParams", "init", "step"]


class MCLMCState(NamedTuple):
    """Current point of K chains, their unit velocities, and the potential and gradient cached."""

    theta: torch.Tensor  # (K, Q)
    momentum: torch.Tensor  # (K, Q) unit velocity in the preconditioned coordinates
    potential: torch.Tensor  # (K,) U(theta)
    grad: torch.Tensor  # (K, Q) grad U(theta)


class MCLMCInfo(NamedTuple):
    """Diagnostics of one step."""

    energy_change: torch.Tensor  # (K,) float64: kinetic change + U_new - U_old (0 when divergent)
    is_divergent: torch.Tensor  # (K,) bool


class MCLMCParams(NamedTuple):
    """Constants of one step: ``step_size`` and ``L`` of shape ``(K,)``, ``sqrt_diag`` ``(Q,)`` or ``(K, Q)``.

    ``dim``, the coordinates ``sqrt_diag`` lets move
    (:func:`~.integrator.moving_dimension`), is computed at each step when
    None; a driver that keeps its preconditioner for many steps gives it.
    """

    step_size: torch.Tensor
    L: torch.Tensor
    sqrt_diag: torch.Tensor
    integrator: str = "mclachlan"
    dim: int = None


def init(generators, target, theta, params=None):
    """State at ``theta`` ``(K, Q)`` with velocities uniform on the sphere (one gradient)."""
    u, grad = target.value_and_grad(theta)
    sigma = None if params is None else params.sqrt_diag
    return MCLMCState(theta.detach(), random_direction(generators, theta, sigma), u, grad)


def step(generators, state, target, params):
    """One MCLMC step of K chains: an integrator step, then a partial refreshment.

    Parameters
    ----------
    generators : list of torch.Generator
        One per chain.
    state : MCLMCState
    target : Target
        Evaluated on the full data (a target with per-chain constants,
        such as :class:`~skgibbs.samplers.hmc.gibbs.ConditionalTarget`,
        works too).
    params : MCLMCParams

    Returns
    -------
    state : MCLMCState
    info : MCLMCInfo

    Examples
    --------
    A standard normal in 3 dimensions:

    >>> import torch
    >>> from skgibbs.potential import LogDensityPotential
    >>> from skgibbs.samplers import Target
    >>> from skgibbs.samplers.mclmc import kernel
    >>> target = Target(LogDensityPotential(lambda th: -0.5 * (th ** 2).sum(1)))
    >>> gens = [torch.Generator().manual_seed(0)]
    >>> params = kernel.MCLMCParams(torch.tensor([0.5]), torch.tensor([2.0]), torch.ones(3))
    >>> state = kernel.init(gens, target, torch.zeros(1, 3), params)
    >>> state, info = kernel.step(gens, state, target, params)
    >>> round(float(state.momentum.norm()), 6), bool(info.is_divergent[0])
    (1.0, False)
    """
    K, Q = state.theta.shape
    sigma = params.sqrt_diag.expand(K, Q)
    dim = moving_dimension(sigma) if params.dim is None else params.dim
    theta, u, potential, grad, kinetic = isokinetic_step(
        state.theta, state.momentum, state.grad, params.step_size, sigma, dim, evaluator(target),
        coefficients=INTEGRATORS[params.integrator],
    )
    error = kinetic + potential.to(torch.float64) - state.potential.to(torch.float64)
    divergent = diverged(error, grad)  # the chain stays where it was
    if bool(divergent.any()):
        keep = divergent[:, None]
        theta = torch.where(keep, state.theta, theta)
        u = torch.where(keep, state.momentum, u)
        potential = torch.where(divergent, state.potential, potential)
        grad = torch.where(keep, state.grad, grad)
        error = torch.where(divergent, torch.zeros_like(error), error)
    u = refresh(generators, u, params.step_size, params.L, params.sqrt_diag, dim)
    return MCLMCState(theta, u, potential, grad), MCLMCInfo(error, divergent)
