"""Isokinetic integrators of the microcanonical dynamics, batched over chains.

The dynamics of Robnik, De Luca, Silverstein and Seljak (*Microcanonical
Hamiltonian Monte Carlo*, JMLR 2023, §2 and App. A) move a position
``theta`` with a velocity ``u`` of unit length (``|u| = 1``, *isokinetic*):
in the coordinates ``x = theta / sigma`` of a diagonal preconditioner
``sigma``,

    ``dx/dt = u``,   ``du/dt = (I - u u') g / (d - 1)``,   ``g = -sigma * grad U(theta)``,

whose stationary law in ``(theta, u)`` is ``exp(-U(theta))`` times the uniform
law of ``u`` on the sphere. With ``g`` held fixed the velocity equation
has a closed-form solution (their (A.5)–(A.7)): for ``e = g / |g|``,
``delta = eps |g| / (d - 1)`` and ``zeta = exp(-delta)``,

    ``u' ∝ e (1 - zeta) (1 + zeta + <u, e> (1 - zeta)) + 2 zeta u``,

and the log-Jacobian of that map, the *kinetic energy change*, is

    ``(d - 1) (delta - log 2 + log(1 + <u, e> + (1 - <u, e>) zeta^2))``.

An integrator alternates velocity updates (with the gradient at the current
point) and position updates ``theta <- theta + eps sigma u``, palindromic
so that it is reversible after a flip of ``u``: velocity Verlet
(``"leapfrog"``, coefficients ``1/2, 1, 1/2``, one gradient a step) or the
minimal-norm integrator of McLachlan (1995) (``"mclachlan"``, ``b, 1/2,
1 - 2b, 1/2, b`` with ``b = 0.1931833275037836``, two gradients a step,
an energy error about ten times smaller at the same step). The *energy
error* of a step is the kinetic change plus the change of ``U``: it
vanishes with the step (as ``eps^2`` per unit time, its variance as
``eps^6`` for McLachlan's scheme, their §3.2), it drives the step size of
the unadjusted kernel and it is the Metropolis-Hastings ratio of the
adjusted one.

The scalar parts of a velocity update (``<u, e>``, ``delta`` and the kinetic
change, ``d - 1`` times a difference of nearly equal numbers) are computed
in float64, so that a float32 network keeps the energy error exact to
its own rounding.
"""

import math

import torch

from ..._random import normal
from ..hmc.kernel import diverged

__all__ = [
    "INTEGRATORS",
    "GRADIENTS_PER_STEP",
    "velocity_update",
    "isokinetic_step",
    "moving_dimension",
    "integrate",
    "random_direction",
    "refresh",
]

_B = 0.1931833275037836
#: the alternating velocity / position coefficients of each integrator (velocity first and last)
INTEGRATORS = {"leapfrog": (0.5, 1.0, 0.5), "mclachlan": (_B, 0.5, 1.0 - 2.0 * _B, 0.5, _B)}
#: gradient evaluations of one step of each integrator
GRADIENTS_PER_STEP = {name: len(c) // 2 for name, c in INTEGRATORS.items()}
_LOG2 = math.log(2.0)


def velocity_update(u, grad, eps, sigma, dim):
    """The exact velocity map for a fixed gradient, and its kinetic energy change.

    Parameters
    ----------
    u : torch.Tensor of shape (K, Q)
        Unit velocities (in the preconditioned coordinates).
    grad : torch.Tensor of shape (K, Q)
        ``grad U`` at the current point.
    eps : torch.Tensor of shape (K,)
        The time of the update (step size times the integrator's coefficient).
    sigma : torch.Tensor of shape (K, Q) or (Q,)
        The preconditioner: the scale of each coordinate.
    dim : int
        ``d``, the number of coordinates that move.

    Returns
    -------
    u : torch.Tensor of shape (K, Q)
    kinetic_change : torch.Tensor of shape (K,), float64

    Notes
    -----
    Only two numbers per chain come from the vectors (``|g|`` and ``<u,
    g>``); the dozen operations on them that give the update's two
    coefficients and the kinetic change are done on Python floats where the
    tensors are on the CPU (:func:`_coefficients`): on a few chains, a
    tensor operation on K numbers costs more in dispatch than in arithmetic,
    and these made most of a velocity update's time on small networks. On
    other devices they stay tensors (:func:`_coefficient_tensors`), the same
    formulas, so that nothing waits for the device.
    """
    # e = g / |g| is never formed: u' ∝ (a / |g|) g + 2 zeta u, with g = -sigma grad U
    sg = grad * sigma
    norm = torch.linalg.vector_norm(sg, dim=1)
    dot = torch.linalg.vecdot(u, sg)
    if u.device.type == "cpu":
        coef, kinetic = _coefficients(norm.tolist(), dot.tolist(), eps.tolist(), dim - 1, u.dtype)
    else:
        coef, kinetic = _coefficient_tensors(norm, dot, eps, dim - 1, u.dtype)
    new = torch.addcmul(u * coef[0, :, None], sg, coef[1, :, None])
    return new / torch.linalg.vector_norm(new, dim=1, keepdim=True), kinetic


def _coefficients(norms, dots, eps, d1, dtype):
    """``(2 zeta, -a / |g|)`` as a ``(2, K)`` tensor and the kinetic changes ``(K,)``, from Python floats."""
    cu, cg, kinetic = [], [], []
    for norm, dot, e in zip(norms, dots, eps):
        safe = max(norm, 1e-30)
        ue = min(max(-dot / safe, -1.0), 1.0)
        delta = e * norm / d1
        zeta = math.exp(-delta)
        a = (1.0 - zeta) * (1.0 + zeta + ue * (1.0 - zeta))
        cu.append(2.0 * zeta)
        cg.append(-a / safe)
        # log(1 + ue + (1 - ue) zeta^2) - log 2 = log1p(-(1 - ue)(1 - zeta^2) / 2), no cancellation
        kinetic.append(d1 * (delta + math.log1p(-0.5 * (1.0 - ue) * -math.expm1(-2.0 * delta))))
    return torch.tensor([cu, cg], dtype=dtype), torch.tensor(kinetic, dtype=torch.float64)


def _coefficient_tensors(norm, dot, eps, d1, dtype):
    """:func:`_coefficients` on tensors ``(K,)`` (float64 throughout), for devices other than the CPU."""
    norm = norm.to(torch.float64)
    safe = norm.clamp_min(1e-30)
    ue = (-dot.to(torch.float64) / safe).clamp(-1.0, 1.0)
    delta = eps.to(torch.float64) * norm / d1
    zeta = torch.exp(-delta)
    a = (1 - zeta) * (1 + zeta + ue * (1 - zeta))
    kinetic = d1 * (delta + torch.log1p(-0.5 * (1 - ue) * (-torch.expm1(-2 * delta))))
    return torch.stack([2 * zeta, -a / safe]).to(dtype), kinetic


def isokinetic_step(theta, u, grad, eps, sigma, dim, evaluate, rows=None, coefficients=INTEGRATORS["mclachlan"]):
    """One integrator step of the chains ``rows``: ``(theta, u, U, grad, kinetic change)``.

    ``sigma`` of shape ``(K, Q)``; ``evaluate`` and ``rows`` as in
    :func:`integrate`; ``coefficients`` one of :data:`INTEGRATORS`. The
    energy error of the step is the kinetic change plus the change of
    ``U``; :func:`integrate` checks it, and the unadjusted kernel
    (:func:`~.kernel.step`), which takes one step at a time, checks it
    itself.
    """
    kinetic, potential, moves = None, None, {}
    for i, c in enumerate(coefficients):
        if i % 2 == 0:
            u, change = velocity_update(u, grad, c * eps, sigma, dim)
            kinetic = change if kinetic is None else kinetic + change
        else:
            if c not in moves:  # McLachlan's two position updates share their coefficient
                moves[c] = (c * eps)[:, None] * sigma
            theta = theta + moves[c] * u
            potential, grad = evaluate(theta, rows)
    return theta, u, potential, grad, kinetic


def moving_dimension(sigma):
    """``d``: the coordinates a preconditioner ``sigma`` (``(Q,)`` or ``(K, Q)``) lets move (scale above 0)."""
    return int((sigma.reshape(-1, sigma.shape[-1])[0] > 0).sum())


def integrate(theta, u, potential, grad, eps, sigma, num_steps, evaluate, integrator="mclachlan",
              max_energy_error=float("inf")):
    """Integrate K isokinetic trajectories of ``num_steps`` steps each.

    Parameters
    ----------
    theta, u, grad : torch.Tensor of shape (K, Q)
        Start points, unit velocities and ``grad U`` there.
    potential : torch.Tensor of shape (K,)
    eps : torch.Tensor of shape (K,)
        Step sizes.
    sigma : torch.Tensor of shape (K, Q) or (Q,)
        Preconditioner.
    num_steps : torch.Tensor of shape (K,), long
    evaluate : callable
        ``evaluate(theta, rows) -> (U, grad U)``, ``rows`` None for every
        chain or the bool mask ``(K,)`` of the chains ``theta`` holds
        (:func:`~skgibbs.samplers.hmc.evaluator`).
    integrator : {"mclachlan", "leapfrog"}
    max_energy_error : float
        A trajectory whose accumulated energy error exceeds this, or turns
        non-finite, stops there and is *divergent*.

    Returns
    -------
    theta, u, potential, grad
        At the end points (the last finite point of a divergent trajectory).
    energy_error : torch.Tensor of shape (K,), float64
        Kinetic energy change plus ``U_end - U_start`` (inf when divergent).
    divergent : torch.Tensor of shape (K,), bool
    steps : torch.Tensor of shape (K,), long
    """
    coefficients = INTEGRATORS[integrator]
    K, Q = theta.shape
    sigma = sigma.expand(K, Q)
    dim = moving_dimension(sigma) if K else Q
    u0 = potential.to(torch.float64)
    kinetic = torch.zeros(K, dtype=torch.float64, device=theta.device)
    divergent = torch.zeros(K, dtype=torch.bool, device=theta.device)
    steps = torch.zeros(K, dtype=torch.long, device=theta.device)
    n_steps = num_steps.to(theta.device)
    for i in range(int(n_steps.max()) if K else 0):
        active = (n_steps > i) & ~divergent
        every = bool(active.all())
        if not every and not bool(active.any()):
            break
        rows = None if every else active
        sel = (lambda t: t) if every else (lambda t: t[active])
        out = isokinetic_step(sel(theta), sel(u), sel(grad), sel(eps), sel(sigma), dim, evaluate, rows, coefficients)
        th_new, u_new, pot_new, g_new, change = out
        total = sel(kinetic) + change
        error = total + pot_new.to(torch.float64) - sel(u0)
        bad = diverged(error, g_new) | (error > max_energy_error)
        keep = ~bad
        if every and not bool(bad.any()):
            theta, u, potential, grad, kinetic = th_new, u_new, pot_new, g_new, total
        else:
            idx = active.nonzero()[:, 0] if not every else torch.arange(K, device=theta.device)
            ok = idx[keep]
            theta, u, potential, grad = theta.clone(), u.clone(), potential.clone(), grad.clone()
            theta[ok], u[ok], potential[ok], grad[ok] = th_new[keep], u_new[keep], pot_new[keep], g_new[keep]
            kinetic = kinetic.clone()
            kinetic[ok] = total[keep]
            divergent = divergent.clone()
            divergent[idx[bad]] = True
        steps = steps + active.long()
    error = kinetic + potential.to(torch.float64) - u0
    error = torch.where(divergent, torch.full_like(error, math.inf), error)
    return theta, u, potential, grad, error, divergent, steps


def random_direction(generators, like, sigma=None):
    """Unit vectors uniform on the sphere ``(K, Q)``, row ``k`` from ``generators[k]``.

    Coordinates whose ``sigma`` is 0 (frozen) get no velocity.
    """
    z = normal(generators, like.shape[1], like)
    if sigma is not None:
        z = torch.where(sigma.expand_as(z) > 0, z, torch.zeros_like(z))
    return z / torch.linalg.vector_norm(z, dim=1, keepdim=True)


def refresh(generators, u, eps, L, sigma=None, dim=None):
    """Partial refreshment of the velocity (Robnik & Seljak, 2024, (7)): a step of Langevin noise on the sphere.

    ``u <- (u + nu z) / |u + nu z|`` with ``z ~ N(0, I)`` and
    ``nu = sqrt((exp(2 eps / L) - 1) / d)``: after a time ``L`` the
    velocity has lost its memory by a factor ``e``. ``dim``, the ``d`` of
    ``sigma`` (:func:`moving_dimension`), is computed when not given.
    """
    Q = u.shape[1]
    if dim is None:
        dim = Q if sigma is None else moving_dimension(sigma)
    if u.device.type == "cpu":  # K numbers: Python floats, as in velocity_update
        nu = [math.sqrt(math.expm1(2.0 * e / length) / dim) for e, length in zip(eps.tolist(), L.tolist())]
        nu = torch.tensor(nu, dtype=u.dtype)
    else:
        nu = torch.sqrt(torch.expm1(2 * eps.to(torch.float64) / L.to(torch.float64)) / dim).to(u.dtype)
    z = normal(generators, Q, u)
    if dim < Q:  # frozen coordinates (scale 0) get no noise
        z = torch.where(sigma.expand_as(z) > 0, z, torch.zeros_like(z))
    new = u + nu[:, None] * z
    return new / torch.linalg.vector_norm(new, dim=1, keepdim=True)
