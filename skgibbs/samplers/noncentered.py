"""Hierarchical priors in non-centred coordinates, the noise integrated out: one smooth target.

Under a :class:`~skgibbs.priors.HierarchicalPrior` the weights of group
``g`` are ``N(0, 1 / tau_g)`` given the group's precision, ``tau_g ~
Gamma(a_g, b_g)``, and with the noise learned the squared loss is a Gaussian
likelihood whose precision ``s ~ Gamma(a_s, b_s)`` (:mod:`.hmc.gibbs`).
Drawing ``tau`` and ``s`` by Gibbs steps between transitions on ``theta``
moves a group's scale slowly: given the weights the precision is pinned to
``sum_j theta_j^2`` (relative spread ``sqrt(2 / n_g)`` for a group of
``n_g`` weights), and given the precision the weights keep their scale, so
the scale of a group wanders by small steps (the funnel of hierarchical
models; Papaspiliopoulos, Roberts and Sköld, *Statistical Science* 2007;
Betancourt and Girolami, 2015). Here the gradient-based kernel moves the
scales itself, in the coordinates

    ``x = (z, eta)``, ``theta_j = z_j exp(-eta_g(j) / 2)``, ``eta_g = log tau_g``

(``theta_j = std_j z_j`` for a parameter outside every group), whose
potential is

    ``U(x) = D(theta(x)) + sum_j z_j^2 / 2 + sum_g (b_g exp(eta_g) - a_g eta_g)``

(the Gaussian ``z``, and the Gamma prior of ``tau`` carried to ``eta``
with its Jacobian), and the noise precision is integrated out of the data
term:

    ``D(theta) = (a_s + n / 2) log(b_s + L(theta) / 2)``,
    ``L = sum_i l_i`` (squared errors), since
    ``int s^(n/2) exp(-s L / 2) Gamma(s; a_s, b_s) ds ∝ (b_s + L / 2)^-(a_s + n/2)``;

``D = lambda L / n`` when the temperature is fixed. ``grad_theta D =
E[s | theta] / 2 grad L``: the likelihood at the noise the weights imply.
The draws of ``x`` map to ``(theta, tau)`` exactly, and the noise precision
of each draw is drawn from its conditional ``Gamma(a_s + n / 2, b_s + L / 2)``
given ``theta``, so that ``(theta, tau, s)`` is a draw of the joint
posterior that HMC within Gibbs samples.
"""

import math

import torch

from .._random import gamma
from .target import loss_sums

__all__ = ["NonCenteredTarget", "PARAMETRIZATIONS"]

#: the ways a kernel can meet a hierarchical prior: this module's target, or Gibbs sweeps (:mod:`.hmc.gibbs`)
PARAMETRIZATIONS = ("noncentered", "centered")


def _loss_sum(target, theta, one_by_one):
    if not one_by_one or theta.shape[0] == 1:
        return target.loss_sum(theta)
    return torch.cat([target.loss_sum(theta[k : k + 1]) for k in range(theta.shape[0])])


class NonCenteredTarget:
    """The potential of ``x = (z, log tau)`` of K chains, the noise precision integrated out.

    Parameters
    ----------
    target : Target
        Whose prior is a :class:`~skgibbs.priors.HierarchicalPrior`.
    one_by_one : bool, default=False
        Evaluate the network one chain at a time (networks too large to batch).

    Attributes
    ----------
    n_params : int
        ``Q + G``: the weights' coordinates ``z`` then one ``eta`` per group.

    Examples
    --------
    A linear model with one precision per input (ARD) and the noise learned;
    a point maps to the weights and back:

    >>> import torch
    >>> from skgibbs.model import MLPSpec
    >>> from skgibbs.potential import LinearPotential
    >>> from skgibbs.priors import HierarchicalPrior
    >>> from skgibbs.samplers import Target
    >>> X = torch.randn(50, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    >>> prior = HierarchicalPrior.for_network(MLPSpec(2, ()), "ard", torch.ones(3), 0.5, noise=True)
    >>> nc = NonCenteredTarget(Target(LinearPotential(X, X[:, 0]), prior))
    >>> theta = torch.tensor([[1.0, 0.5, -0.2]], dtype=torch.float64)
    >>> x = nc.from_theta(theta)
    >>> x.shape, bool(torch.allclose(nc.to_theta(x), theta))
    (torch.Size([1, 6]), True)
    >>> u, grad = nc.value_and_grad(x)
    >>> grad.shape
    torch.Size([1, 6])
    """

    per_chain = False

    def __init__(self, target, one_by_one=False):
        self.base, self.one_by_one = target, one_by_one
        prior = target.prior
        self.prior = prior
        self.n_weights = prior.group.numel()
        self.n_groups = prior.n_groups
        self.n_params = self.n_weights + self.n_groups
        self._grouped = prior.group >= 0
        self._index = prior.group.clamp(min=0)
        # what every evaluation reads: every weight's fixed scale (float64) and the Gamma priors' shapes and rates
        self._std = prior.std.to(torch.float64)
        self._shape, self._rate = prior.shape, prior.rate
        # every weight's column in (eta, 0): its group's, or the last (a weight without a group keeps its
        # fixed scale, exp(0) = 1 times it), and its fixed scale (1 where it has a group: exp(-eta / 2) alone)
        self._column = torch.where(self._grouped, self._index, torch.full_like(self._index, self.n_groups))
        self._fixed = torch.where(self._grouped, torch.ones_like(self._std), self._std)
        # every weight in a group (prior "layer" or "ard"): its scale is its group's exp(-eta / 2) alone
        self._all_grouped = bool(self._grouped.all()) and self.n_groups > 0
        self._on = None  # the tensors above on the device of the last evaluation

    def _tables(self, device):
        """``(column, fixed, shape, rate)`` on ``device``, moved there once."""
        if self._on is None or self._on[0] != device:
            moved = (self._column, self._fixed, self._shape, self._rate)
            self._on = (device, tuple(t.to(device) for t in moved))
        return self._on[1]

    # -- the map between the coordinates -----------------------------------------
    def _scales(self, eta, dtype=torch.float64):
        """Every weight's prior scale ``(K, Q)`` given ``eta`` ``(K, G)``, computed in float64, in ``dtype``."""
        column, fixed = self._tables(eta.device)[:2]
        if self.n_groups == 0:
            return fixed.expand(eta.shape[0], -1).to(dtype)
        half = torch.exp(-0.5 * eta.to(torch.float64))
        if self._all_grouped:  # the groups' scales rounded to dtype, then spread: the same numbers
            return half.to(dtype).index_select(1, column)
        factor = torch.cat([half, torch.ones_like(half[:, :1])], 1).index_select(1, column)
        return (factor * fixed).to(dtype)

    def split(self, x):
        """``(z, eta)`` of ``x``."""
        return x[:, : self.n_weights], x[:, self.n_weights :]

    def to_theta(self, x):
        """The weights ``theta = z exp(-eta / 2)`` of points ``x`` ``(K, Q + G)``."""
        z, eta = self.split(x)
        return z * self._scales(eta, z.dtype)

    def from_theta(self, theta):
        """A point ``x`` whose weights are ``theta``, each ``tau_g`` its conditional mean given them."""
        shape, rate = self.prior.conditional(theta)
        eta = torch.log(shape / rate)
        return torch.cat([theta / self._scales(eta, theta.dtype), eta.to(theta.dtype)], 1)

    # -- the potential -------------------------------------------------------------
    def _data_term(self, loss):
        """``D`` ``(K,)`` in float64 and its derivative ``dD / dL`` ``(K,)`` from the loss sums."""
        loss = loss.detach().to(torch.float64)
        prior, n = self.prior, self.base.n_data
        if not prior.learns_noise:
            scale = torch.full_like(loss, self.base.scale)
            return scale * loss, scale
        shape = prior.noise_shape + 0.5 * n
        if loss.device.type == "cpu":  # K numbers: Python floats (see .mclmc.integrator.velocity_update)
            rates = [prior.noise_rate + 0.5 * value for value in loss.tolist()]
            out = torch.tensor([[shape * math.log(r) for r in rates], [0.5 * shape / r for r in rates]],
                               dtype=torch.float64)
            return out[0], out[1]
        rate = prior.noise_rate + 0.5 * loss
        return shape * torch.log(rate), 0.5 * shape / rate

    def value_and_grad(self, x):
        """``U(x)`` ``(K,)`` and ``grad U`` ``(K, Q + G)``."""
        z, eta = self.split(x)
        sd = self._scales(eta, z.dtype)
        theta = z * sd
        loss, loss_grad = loss_sums(self.base, theta, self.one_by_one)
        data, slope = self._data_term(loss)
        grad_theta = slope.to(x.dtype)[:, None] * loss_grad
        eta64 = eta.to(torch.float64)
        column, _, a, b = self._tables(x.device)
        b_tau = b * torch.exp(eta64)
        u = data + 0.5 * z.to(torch.float64).square().sum(1) + (b_tau - a * eta64).sum(1)
        grad_z = grad_theta * sd + z
        # d theta_j / d eta_g = -theta_j / 2 for j in g (the last column gathers the weights without a group)
        pull = (grad_theta * theta).to(torch.float64)
        per_group = eta64.new_zeros(eta64.shape[0], self.n_groups + 1).index_add_(1, column, pull)[:, :-1]
        grad_eta = -0.5 * per_group + b_tau - a
        return u.to(loss.dtype), torch.cat([grad_z, grad_eta.to(x.dtype)], 1)

    # -- what a draw records -------------------------------------------------------------
    def hyperparameters(self, generators, x):
        """``{"precision": tau (K, G), "noise_precision": s (K,)}`` of the points ``x``.

        ``tau = exp(eta)`` is part of the point; the noise precision (with
        the noise learned) is drawn from its conditional given the weights,
        one forward pass of the network (no gradient).
        """
        z, eta = self.split(x)
        out = {"precision": torch.exp(eta.to(torch.float64))}
        if self.prior.learns_noise:
            loss = _loss_sum(self.base, self.to_theta(x), self.one_by_one).to(torch.float64)
            conc = torch.full((x.shape[0], 1), self.prior.noise_shape + 0.5 * self.base.n_data,
                              dtype=torch.float64, device=x.device)
            out["noise_precision"] = gamma(generators, conc)[:, 0] / (self.prior.noise_rate + 0.5 * loss)
        return out
