"""Stochastic-gradient HMC on fixed-size minibatches: the kernel for large data.

Full-data gradients cost ``n`` examples each; beyond about 10^4 rows of a
default network on a CPU, an exact kernel needs hours
(:func:`~skgibbs.samplers.base.choose_sampler`). Stochastic-gradient
Hamiltonian Monte Carlo (Chen, Fox & Guestrin, 2014) reads ``b`` rows per
step and replaces the Metropolis-Hastings correction by friction.

**The dynamics.** With the unbiased batch potential of ``b`` rows drawn
uniformly with replacement,

    ``U_B(theta) = (lambda / b) sum_{i in B} l_i(theta) - log Pi(theta)``,
    ``E_B[grad U_B] = grad U = lambda grad R_n - grad log Pi``,

a diagonal mass ``M = diag(1 / m)`` and friction ``C``, SGHMC simulates
``dtheta = M^-1 p dt``, ``dp = -grad U_B dt - C M^-1 p dt + N(0, 2 C dt)``
(Chen et al., eq. (9) with their noise estimate ``B = 0``). In the
variables ``v = epsilon M^-1 p`` (the displacement of one step of size
``epsilon``) and with the friction proportional to the mass,
``epsilon M^-1 C = alpha I``, one Euler step is (their eq. (15))

    ``v <- (1 - alpha) v - eta * grad U_B(theta) + sqrt(2 alpha eta) * xi``,
    ``theta <- theta + v``,   ``eta = epsilon^2 m``,   ``xi ~ N(0, I)``:

momentum SGD with the noise that makes ``pi_lambda`` its stationary law as
``epsilon -> 0`` (for ``epsilon > 0`` the batch noise adds
``eta^2 Var(grad U_B)`` to the injected ``2 alpha eta``, a bias of
relative size at most ``epsilon^2 / (2 alpha)`` under the preconditioner
below).

**The preconditioner.** ``m_j = 1 / E[g_j^2]``, ``g = grad U_B`` over the
second half of the warm-up. In its first half, while the chains leave
their pre-trained starting points, ``m_j`` follows
``1 / max(running mean of g_j^2, current g_j^2)`` at every step, so that a
gradient that grows shortens the step at once (updated every 100 steps
instead, the chains of a 10^5-row fit overshot and thousands of steps
were refused). Under ``pi_lambda``,
``E[(d_j U)^2] = E[d_j^2 U]`` (integration by parts), so
``E[g_j^2] = E[d_j^2 U] + Var_B(g_j)``: the diagonal curvature where the
data dominate the gradient noise (Jacobi's preconditioner), the prior
variance where the prior dominates, and the batch-noise scale where the
noise does. In the coordinates ``theta_j / sqrt(m_j)`` one step moves at
most ``epsilon`` and the gradient noise is at most ``epsilon^2`` of the
injected noise, whatever the data size.

**The schedule.** ``"cyclical"`` (Zhang et al., 2020, cSG-MCMC) runs the
step size down a cosine from ``epsilon`` to zero over each block of
``thin`` steps and keeps the state at the block's end: large steps explore,
the draw is taken where the discretisation error is smallest; ``v`` is
rescaled with ``epsilon`` so that the momentum ``p`` carries over.
``"constant"`` keeps ``epsilon``.

**The check.** Under ``pi_lambda``, ``E[(theta_j - a) d_j U(theta)] = 1``
for every coordinate and constant ``a`` (integration by parts again), and
``E_B[g] = grad U`` makes the batch gradient an unbiased estimate of it.
The average over the coordinates is the *configurational temperature*
(1 for an exact sampler); an over-dispersed chain (too much gradient
noise, too large a step: the kernel's own bias) reads above 1 and is
reported. A chain that has not spread over the flat directions of the
weights reads below 1; whether that matters for predictions is what R-hat
and ESS of the function values judge, so it is not reported here (a low
reading went with the right predictive coverage on some networks and with
intervals too narrow against HMC's on others: the ``minibatch_bias``
benchmark).

A step whose update is not finite, leaves the prior's box, or whose kinetic
temperature ``mean_j v_j^2 / eta_j`` (about 1 while the chain samples)
exceeds ``KINETIC_LIMIT`` (a chain blowing up) is refused: the chain stays
put, loses its momentum, and the refusal is counted (``n_refused_``) and
reported.
"""

from . import kernel
from .kernel import SGHMCInfo, SGHMCParams, SGHMCState, draw_rows, init, step
from .sampler import SGHMC

__all__ = ["SGHMC", "SGHMCState", "SGHMCInfo", "SGHMCParams", "init", "step", "draw_rows", "kernel"]
