"""The metrics of SMC's moves: the prior's variances with a low-rank term from the particles.

:func:`fisher_metric` needs the model's outputs (a potential with
``has_outputs``, such as :class:`~skgibbs.potential.MLPPotential` and
:class:`~skgibbs.potential.LinearPotential`); any other potential falls
back to :func:`gradient_metric`.
"""

import math

import torch

from ..._random import normal, uniforms
from ...model import SCALE_LOSSES, log_variance, scale_loss_fisher
from .kernel import _OneByOne

__all__ = ["LowRankMetric", "fisher_metric", "gradient_metric"]

#: elements of the widest ``(P, rows, width)`` array a block of outputs holds at once
OUTPUT_BLOCK = 1 << 22


class LowRankMetric:
    """The metric ``M = D^-1 + U U'`` of a stage's moves, as a linear change of coordinates.

    ``D`` is diagonal (a variance per coordinate) and ``U`` has ``r``
    columns. HMC with mass ``M`` is HMC with unit mass in the coordinates
    ``phi`` of ``theta = L phi``, ``L L' = M^-1``; with ``V = D^1/2 U =
    W S Z'`` (thin SVD),

        ``M^-1 = D^1/2 (I + V V')^-1 D^1/2``,  ``L = D^1/2 (I + W (c - 1) W')``,  ``c = (1 + S^2)^-1/2``,

    so that ``L``, ``L'`` and ``L^-1`` cost ``O(Q r)`` per particle. The
    map is linear, so its Jacobian is a constant and the moves in ``phi``
    leave the image of ``pi_beta`` invariant.

    Parameters
    ----------
    variance : torch.Tensor of shape (Q,)
        ``D``.
    factor : torch.Tensor of shape (Q, r)
        ``U``; ``r = 0`` gives the diagonal metric ``D^-1``.
    """

    def __init__(self, variance, factor):
        work = torch.float64
        sd = variance.to(work).sqrt()
        if factor.shape[1]:
            W, S, _ = torch.linalg.svd(sd[:, None] * factor.to(work), full_matrices=False)
        else:
            W, S = factor.to(work), factor.new_zeros(0, dtype=work)
        keep = S > 1e-8 * float(S.max()) if S.numel() else S > 0
        W, S = W[:, keep], S[keep]
        c = (1.0 + S * S).rsqrt()
        dtype = variance.dtype
        self.sd, self.W = sd.to(dtype), W.to(dtype)
        self.shrink, self.grow = (c - 1.0).to(dtype), (1.0 / c - 1.0).to(dtype)
        # diag(M^-1) = D (1 + sum_k W_jk^2 (c_k^2 - 1)): the inverse mass reported
        self.inverse_mass = (variance.to(work) * (1.0 + (W * W) @ (c * c - 1.0))).to(dtype)

    def _mix(self, x, coef):
        return x + ((x @ self.W) * coef) @ self.W.T if self.W.shape[1] else x

    def to_theta(self, phi):
        """``theta = L phi`` (rows)."""
        return self._mix(phi, self.shrink) * self.sd

    def to_phi(self, theta):
        """``phi = L^-1 theta`` (rows)."""
        return self._mix(theta / self.sd, self.grow)

    def grad_to_phi(self, grad):
        """``L' grad``: the gradient in ``phi`` of a function of ``theta`` (rows)."""
        return self._mix(grad * self.sd, self.shrink)


def gradient_metric(state, target_beta, variance):
    """:class:`LowRankMetric`: ``D = variance``, ``U U'`` the particles' covariance of ``grad c R_n``.

    For a Gaussian ``pi_beta`` of precision ``A = D^-1 + B`` (``B`` from
    the data), the gradients ``B (theta - theta*)`` of the data term have
    covariance ``B A^-1 B``, which is ``B`` in the directions the data
    determine (``B >> D^-1``) and small in the others: ``M = D^-1 + U U'``
    is then close to ``A``, and HMC in ``M`` sees a nearly isotropic target
    whatever the conditioning the data give ``pi_beta``, in the at most
    ``P - 1`` directions the gradients span; ``D`` (the prior's variances)
    covers the rest. Particles whose gradient is not finite are left out.
    """
    g = target_beta.scale * state.loss_grad.double()
    g = g[torch.isfinite(g).all(1)]
    if g.shape[0] < 2:
        return LowRankMetric(variance, variance.new_zeros(variance.shape[0], 0))
    U = (g - g.mean(0)).T / math.sqrt(g.shape[0])
    return LowRankMetric(variance, U)


def fisher_metric(state, target_beta, variance, generators):
    """:class:`LowRankMetric`: ``D = variance``, ``U U'`` the particles' mean Gauss-Newton matrix, sketched.

    The Hessian of ``c sum_i l(y_i, f_theta(x_i))`` (``c = beta lambda / n``)
    is ``c sum_i J_i' H_i J_i`` plus terms that vanish where the residuals
    do, with ``J_i = d f_theta(x_i) / d theta`` and ``H_i`` the Hessian of
    the loss in the outputs (2 for the squared loss, ``diag(p) - p p'`` for
    the softmax cross-entropy). For ``omega_i ~ N(0, H_i)`` the probe ``g =
    sum_i J_i' omega_i`` (one backward pass through the outputs) has
    ``E[g g'] = sum_i J_i' H_i J_i``: ``omega_i = sqrt(2) z`` for the squared
    loss, ``p - e_k`` with ``k`` drawn from the network's own ``p`` for the
    cross-entropy (the sampled Fisher). Every particle draws one probe
    (from its own generator), and ``U U' = c / P sum_k g_k g_k'`` is the
    particles' mean Gauss-Newton matrix, of rank at most ``P``: ``M = D^-1
    + U U'`` is the precision of a Gaussian ``pi_beta`` whose loss is
    quadratic in the outputs, in the directions the probes reach. Unlike a
    diagonal metric, it measures the curvature along the combinations of
    weights that the data fix, which set the leapfrog step of a network
    posterior.

    Potentials without model outputs (``has_outputs`` false, such as a
    :class:`~skgibbs.potential.FunctionPotential`) fall back to
    :func:`gradient_metric`.
    """
    potential, theta = target_beta.potential, state.theta
    if isinstance(target_beta, _OneByOne):  # a network too large to batch: one particle at a time
        parts = [
            _gauss_newton_probes(potential, theta[k : k + 1], generators[k : k + 1])
            for k in range(len(theta))
        ]
        probes = None if parts[0] is None else torch.cat(parts)
    else:
        probes = _gauss_newton_probes(potential, theta, generators)
    if probes is None:
        return gradient_metric(state, target_beta, variance)
    probes = probes[torch.isfinite(probes).all(1)]  # a particle whose outputs overflowed adds nothing
    P = max(probes.shape[0], 1)
    return LowRankMetric(variance, probes.T * math.sqrt(target_beta.scale / P))


def _gauss_newton_probes(potential, theta, generators):
    """One probe ``sum_i J_i' omega_i`` per particle, ``(P, Q)``; None for a potential without outputs."""
    if not getattr(potential, "has_outputs", False):
        return None
    total = torch.zeros_like(theta)
    for rows, X, _ in potential.row_blocks(theta.shape[0], OUTPUT_BLOCK):
        with torch.enable_grad():
            th = theta.detach().requires_grad_(True)
            out = potential.outputs(th, X)
            omega = _output_noise(potential.loss, out.detach(), generators, rows.stop - rows.start)
            (grad,) = torch.autograd.grad(out, th, grad_outputs=omega)
        total += grad
    return total


def _output_noise(loss, out, generators, m):
    """``omega ~ N(0, H)`` (or with covariance ``H``) for outputs ``out`` ``(P, m[, C])`` of ``m`` rows."""
    if loss == "squared":
        return math.sqrt(2.0) * normal(generators, m, out).reshape(out.shape)
    if loss in SCALE_LOSSES:  # the expected Hessian of the location and log-scale outputs (scale_loss_fisher)
        location, log_scale = scale_loss_fisher(loss)
        s = log_variance(out[..., 1])
        scale = torch.stack(
            [math.sqrt(location) * torch.exp(-0.5 * s), torch.full_like(s, math.sqrt(log_scale))], -1
        )
        return scale * normal(generators, 2 * m, out).reshape(out.shape)
    u = uniforms(generators, m, out)
    if out.dim() == 2:  # one logit: p - y with y ~ Bernoulli(p), variance p (1 - p)
        p = torch.sigmoid(out)
        return p - (u < p).to(out.dtype)
    p = torch.softmax(out, -1)
    k = torch.searchsorted(torch.cumsum(p, -1), u[..., None]).clamp_max(p.shape[-1] - 1)
    return p - torch.zeros_like(p).scatter_(-1, k, 1.0)


class _InCoordinates:
    """A target seen in the coordinates ``phi`` of a :class:`LowRankMetric` (``theta = L phi``)."""

    def __init__(self, target, metric):
        self.target, self.metric = target, metric

    def value_and_grad(self, phi):
        u, grad = self.target.value_and_grad(self.metric.to_theta(phi))
        return u, self.metric.grad_to_phi(grad)
