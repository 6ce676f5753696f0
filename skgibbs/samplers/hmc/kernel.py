"""Metropolis-adjusted Hamiltonian Monte Carlo on the full data, batched over chains.

The potential is the full-data one of :mod:`~skgibbs.samplers.langevin.mala` at
``rho = 1``,

    ``U(theta) = c * sum_i l_i(theta) - log Pi(theta)``,   ``c = lambda / n``,

so ``exp(-U)`` is the Gibbs posterior ``pi_lambda`` itself. With a diagonal
metric ``M = diag(1 / m)`` (``m``, the *inverse mass*, has the units of a
variance of theta) and momentum ``p ~ N(0, M)``, the Hamiltonian is
``H(theta, p) = U(theta) + p' diag(m) p / 2``. A transition draws ``p``,
runs ``L`` leapfrog steps of size ``h``

    ``p <- p - h/2 grad U(theta)``;  ``theta <- theta + h m * p``;  ``p <- p - h/2 grad U(theta)``

(the inner half steps merged), and accepts the end point with probability
``min(1, exp(H_0 - H_L))`` (Duane et al., 1987; Neal, 2011, §5.3.2). The
leapfrog map is volume preserving and, followed by a momentum flip,
reversible, so this ratio is the whole Metropolis-Hastings ratio.

Every chain ``k`` has its own step size ``h_k`` and number of steps ``L_k``
(a jittered trajectory length ``T`` gives ``L_k = ceil(u T / h_k)``, see
:mod:`~skgibbs.samplers.adaptation`). Chains that have finished their
trajectory, or diverged, drop out of the batch: a step evaluates the
gradient of the active chains only. The gradient at the current point is
cached in :class:`HMCState`, so a transition costs ``L`` gradients.

A trajectory whose potential or gradient turns non-finite, or whose energy
error ``H_l - H_0`` exceeds ``max_energy_error`` (1000, as Stan) at any step,
is stopped there, rejected and reported as a divergence. A proposal outside
the prior's box has ``U = inf`` and is a divergence too.

A coordinate whose inverse mass is 0 gets no momentum and stays where it
is: the transition is HMC on the other coordinates, the conditional of the
target given the frozen ones (the reversible-jump kernel of
:mod:`~skgibbs.samplers.rj.rjhmc` freezes the inactive parameters so).
"""

from typing import NamedTuple

import torch

from ..._random import normal, select, uniform

__all__ = ["HMCState", "HMCInfo", "HMCParams", "init", "step", "leapfrog", "evaluator", "diverged"]


class HMCState(NamedTuple):
    """Current point of K chains with its potential and gradient cached."""

    theta: torch.Tensor  # (K, Q)
    potential: torch.Tensor  # (K,) U(theta)
    grad: torch.Tensor  # (K, Q) grad U(theta)


class HMCInfo(NamedTuple):
    """Diagnostics of one transition, for monitoring and warm-up only."""

    acceptance_prob: torch.Tensor  # (K,) min(1, exp(-energy_error)), 0 when divergent
    is_accepted: torch.Tensor  # (K,) bool
    is_divergent: torch.Tensor  # (K,) bool
    energy_error: torch.Tensor  # (K,) H_L - H_0 (inf when divergent)
    num_steps: torch.Tensor  # (K,) leapfrog steps actually taken
    proposal: torch.Tensor  # (K, Q) end point of the trajectory
    momentum: torch.Tensor  # (K, Q) momentum at the end point
    energy: torch.Tensor  # (K,) H of the state the chain moves to: H_L when accepted, H_0 when not


class HMCParams(NamedTuple):
    """Constants of one transition.

    ``step_size`` has shape ``(K,)``; ``inverse_mass`` shape ``(Q,)`` or
    ``(K, Q)``; ``num_steps`` (long) shape ``(K,)``.
    """

    step_size: torch.Tensor
    inverse_mass: torch.Tensor
    num_steps: torch.Tensor
    max_energy_error: float = 1000.0


def init(generators, target, theta, params=None):
    """State at ``theta`` (shape ``(K, Q)``); draws nothing."""
    u, grad = target.value_and_grad(theta)
    return HMCState(theta.detach(), u, grad)


def _kinetic(p, inverse_mass):
    return 0.5 * (p * p * inverse_mass).sum(-1)


def leapfrog(state, momentum, params, evaluate):
    """Integrate K trajectories of ``params.num_steps`` leapfrog steps.

    Parameters
    ----------
    state : HMCState
        Start points with their cached potential and gradient.
    momentum : torch.Tensor of shape (K, Q)
    params : HMCParams
    evaluate : callable
        ``evaluate(theta, rows) -> (U, grad U)``: ``rows`` is None when
        ``theta`` holds every chain, else the bool mask ``(K,)`` of the
        chains it holds (a target with per-chain constants, such as
        :class:`~skgibbs.samplers.hmc.gibbs.ConditionalTarget`, needs it).

    Returns
    -------
    end : HMCState
        End points (the last finite point of a divergent trajectory).
    momentum : torch.Tensor of shape (K, Q)
        Momenta at the end points.
    divergent : torch.Tensor of shape (K,), bool
    steps : torch.Tensor of shape (K,), long
        Steps taken (fewer than ``num_steps`` for a divergence).
    """
    theta, u, grad = (t.clone() for t in state)
    K = theta.shape[0]
    h = params.step_size[:, None]
    m = params.inverse_mass.expand_as(theta)
    # the products every step repeats, formed once: (h m) p and (h / 2) g are the same floats as h m p and
    # 0.5 h g evaluated left to right
    hm, half_h = h * m, 0.5 * h
    h0 = u + _kinetic(momentum, m)
    p = momentum - half_h * grad
    n_steps = params.num_steps.to(theta.device)
    divergent = torch.zeros(K, dtype=torch.bool, device=theta.device)
    steps = torch.zeros(K, dtype=torch.long, device=theta.device)
    # while every chain is still integrating and none has diverged, a step needs no row selection
    together = int(n_steps.min()) if K else 0
    for i in range(int(n_steps.max()) if K else 0):
        if i < together:
            th_new = theta + hm * p
            u_new, g_new = evaluate(th_new, None)
            p_full = p - half_h * g_new
            error = u_new + _kinetic(p_full, m) - h0
            bad = diverged(error, g_new) | (error > params.max_energy_error)
            if i + 1 < together:
                p_new = p_full - half_h * g_new
            else:  # some chains end here: their momentum stays at the full step
                p_new = torch.where((n_steps == i + 1)[:, None], p_full, p_full - half_h * g_new)
            if bool(bad.any()):
                keep = ~bad
                theta = torch.where(keep[:, None], th_new, theta)
                u = torch.where(keep, u_new, u)
                grad = torch.where(keep[:, None], g_new, grad)
                p = torch.where(keep[:, None], p_new, p)
                divergent = bad
                together = i + 1  # from the next step on, the rows still integrating are selected
            else:
                theta, u, grad, p = th_new, u_new, g_new, p_new
            steps = steps + 1
            continue
        # past a divergence or the shortest trajectory: only the rows still integrating move
        active = (n_steps > i) & ~divergent
        if not bool(active.any()):
            break
        th_new = theta[active] + hm[active] * p[active]
        u_new, g_new = evaluate(th_new, active)
        p_full = p[active] - half_h[active] * g_new  # momentum at the full step
        error = u_new + _kinetic(p_full, m[active]) - h0[active]
        bad = diverged(error, g_new) | (error > params.max_energy_error)
        last = n_steps[active] == i + 1
        p_new = torch.where(last[:, None], p_full, p_full - half_h[active] * g_new)
        keep = ~bad
        idx = active.nonzero()[:, 0]
        ok = idx[keep]
        theta[ok], u[ok], grad[ok], p[ok] = th_new[keep], u_new[keep], g_new[keep], p_new[keep]
        divergent[idx[bad]] = True
        steps[idx] += 1
    return HMCState(theta, u, grad), p, divergent, steps


def diverged(error, grad):
    """Chains whose step diverged: a non-finite energy error ``(K,)`` or gradient ``(K, Q)``."""
    return ~(torch.isfinite(error) & torch.isfinite(grad.sum(1)))


def evaluator(target):
    """``evaluate(theta, rows)`` of :func:`leapfrog` for a target (``rows`` passed on where it has per-chain constants)."""
    if getattr(target, "per_chain", False):
        return target.value_and_grad
    return lambda theta, rows: target.value_and_grad(theta)


def step(generators, state, target, params):
    """One HMC transition of K chains.

    Parameters
    ----------
    generators : list of torch.Generator
        One per chain: chain ``k`` draws its momentum and its uniform from
        ``generators[k]`` only.
    state : HMCState
    target : Target
        Evaluated on the full data.
    params : HMCParams

    Returns
    -------
    state : HMCState
    info : HMCInfo
    """
    theta = state.theta
    m = params.inverse_mass.expand_as(theta)
    noise = normal(generators, theta.shape[1], theta)
    frozen = m == 0  # a coordinate with inverse mass 0 has no momentum and does not move
    momentum = torch.where(frozen, 0.0, noise / torch.sqrt(torch.where(frozen, 1.0, m)))
    h0 = state.potential + _kinetic(momentum, m)
    end, p_end, divergent, steps = leapfrog(state, momentum, params, evaluator(target))
    h_end = end.potential + _kinetic(p_end, m)
    error = h_end - h0
    error = torch.where(divergent, torch.full_like(error, torch.inf), error)
    log_alpha = torch.where(divergent, torch.full_like(error, -torch.inf), -error)
    accept = torch.log(uniform(generators, theta)) < log_alpha
    new_state = select(accept, end, state)
    # the Hamiltonian at the end of the transition (Stan's energy__, NumPyro's energy): what BFMI reads
    energy = torch.where(accept, h_end, h0)
    info = HMCInfo(torch.exp(log_alpha.clamp(max=0.0)), accept, divergent, error, steps, end.theta, p_end, energy)
    return new_state, info
