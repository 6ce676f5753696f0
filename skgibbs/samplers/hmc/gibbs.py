"""HMC within Gibbs: hierarchical priors whose precisions are drawn between HMC transitions.

Under a :class:`~skgibbs.priors.HierarchicalPrior` the joint target of the
weights ``theta``, the group precisions ``tau`` and (optionally) the noise
precision ``s`` is

    ``pi(theta, tau, s) ∝ exp(-c(s) sum_i l_i(theta)) (s^(n/2))
    prod_j N(theta_j; 0, 1 / tau_g(j)) prod_g Gamma(tau_g; a_g, b_g) [Gamma(s; a_s, b_s)]``,

with ``c = lambda / n`` fixed, or ``c(s) = s / 2`` and the factor
``s^(n/2)`` when the noise is learned (the Gaussian likelihood of the
squared loss ``l_i = (y_i - f(x_i))^2``). One transition (Neal, 1996, §3.2;
his ``net-mc`` alternates the same two updates) is

1. an HMC transition of :mod:`~skgibbs.samplers.hmc` on ``theta`` given
   ``(tau, s)``: its potential
   ``U(theta | tau, s) = c sum_i l_i(theta) + sum_j tau_g(j) theta_j^2 / 2``
   leaves ``pi(theta | tau, s)`` invariant, whatever metric and step size
   are chosen as functions of ``(tau, s)`` (they are fixed during the
   trajectory);
2. exact draws of the precisions from their conditionals given the new
   ``theta``, independent Gamma laws
   ``tau_g | theta ~ Gamma(a_g + n_g / 2, b_g + sum_{j in g} theta_j^2 / 2)``
   and ``s | theta ~ Gamma(a_s + n / 2, b_s + sum_i l_i(theta) / 2)``
   (the conjugacy of the Gaussian and the Gamma).

Each step leaves the joint target invariant (a Gibbs sweep over the blocks
``theta`` and ``(tau, s)``, the second block's members being conditionally
independent given ``theta``). The cached potential and gradient follow the
new precisions without a gradient evaluation when only ``tau`` moved
(``U`` and ``grad U`` change by the prior terms, known in closed form); a
new noise precision changes the data term's scale, so the loss and its
gradient at the new point are evaluated once (one gradient per transition).
"""

from typing import NamedTuple

import torch

from ..._random import gamma
from ..target import loss_sums
from . import kernel as hmc

__all__ = ["HMCGibbsState", "ConditionalTarget", "init", "step", "draw_hyperparameters", "redraw"]


class HMCGibbsState(NamedTuple):
    """Weights of K chains with their hyperparameters and the conditional potential cached."""

    theta: torch.Tensor  # (K, Q)
    potential: torch.Tensor  # (K,) U(theta | tau, s)
    grad: torch.Tensor  # (K, Q) its gradient
    precision: torch.Tensor  # (K, G) float64, the groups' tau
    scale: torch.Tensor  # (K,) c of the data term: lambda / n, or s / 2 with the noise learned


class ConditionalTarget:
    """``U(theta | tau, s)`` of K chains, each with its own precisions; what the HMC step sees.

    ``value_and_grad(theta, rows)`` evaluates the chains ``rows`` (a bool
    mask, None for all), so that :func:`~skgibbs.samplers.hmc.leapfrog`
    can drop finished trajectories from the batch.
    """

    per_chain = True

    def __init__(self, target, precision, scale, one_by_one=False):
        self.target, self.one_by_one = target, one_by_one
        self.prec = target.prior.parameter_precision(precision).to(scale.dtype)
        self.scale = scale

    def loss_sum_and_grad(self, theta):
        return loss_sums(self.target, theta, self.one_by_one)

    def value_and_grad(self, theta, rows=None):
        return self.from_loss(theta, *self.loss_sum_and_grad(theta), rows)

    def from_loss(self, theta, loss, loss_grad, rows=None):
        """``U`` and ``grad U`` at ``theta`` from its loss sum and the loss sum's gradient."""
        prec = (self.prec if rows is None else self.prec[rows]).to(theta.dtype)
        c = self.scale if rows is None else self.scale[rows]
        u = c.to(loss.dtype) * loss + 0.5 * (prec * theta * theta).sum(1)
        return u, c.to(theta.dtype)[:, None] * loss_grad + prec * theta


def draw_hyperparameters(generators, target, theta, loss_sum=None):
    """Exact draws of ``tau`` ``(K, G)`` and of ``c`` ``(K,)`` given ``theta``.

    ``c`` is ``s / 2`` for the drawn noise precision ``s``, or the
    target's fixed ``lambda / n`` without noise. ``loss_sum`` ``(K,)``,
    ``sum_i l_i(theta)``, is needed for ``s``. Each chain draws all its
    Gamma variates in one call of its own generator
    (:func:`~skgibbs._random.gamma`).
    """
    prior, K = target.prior, theta.shape[0]
    shape, rate = prior.conditional(theta)
    conc, rates = [shape.expand(K, -1)], [rate]
    if prior.learns_noise:
        loss = loss_sum.detach().to(torch.float64)
        conc.append(torch.full((K, 1), prior.noise_shape + 0.5 * target.n_data, dtype=torch.float64,
                               device=theta.device))
        rates.append((prior.noise_rate + 0.5 * loss)[:, None])
    draws = gamma(generators, torch.cat(conc, 1)) / torch.cat(rates, 1)
    precision = draws[:, : prior.n_groups]
    if prior.learns_noise:
        scale = (0.5 * draws[:, -1]).to(theta.dtype)
    else:
        scale = torch.full((K,), target.scale, dtype=theta.dtype, device=theta.device)
    return precision, scale


def init(generators, target, theta, params=None, one_by_one=False):
    """State at ``theta`` with the hyperparameters drawn from their conditionals given it (one gradient)."""
    loss, loss_grad = loss_sums(target, theta, one_by_one)
    precision, scale = draw_hyperparameters(generators, target, theta, loss)
    u, grad = ConditionalTarget(target, precision, scale).from_loss(theta, loss, loss_grad)
    return HMCGibbsState(theta.detach(), u, grad, precision, scale)


def step(generators, state, target, params, one_by_one=False):
    """One HMC-within-Gibbs transition of K chains.

    Parameters
    ----------
    generators : list of torch.Generator
        One per chain.
    state : HMCGibbsState
    target : Target
        Whose prior is a :class:`~skgibbs.priors.HierarchicalPrior`.
    params : HMCParams
        Of the HMC transition on ``theta`` (its ``inverse_mass`` may depend
        on the current precisions: it is fixed during the trajectory).
    one_by_one : bool, default=False
        Evaluate the chains one at a time (networks too large to batch).

    Returns
    -------
    state : HMCGibbsState
    info : HMCInfo
        Of the HMC transition.
    n_grad : int
        Gradient evaluations beyond the trajectory's (1 with the noise learned, else 0).

    Examples
    --------
    A linear model with one precision per input (ARD) and the noise learned:

    >>> import torch
    >>> from skgibbs.model import MLPSpec
    >>> from skgibbs.potential import LinearPotential
    >>> from skgibbs.priors import HierarchicalPrior
    >>> from skgibbs.samplers import Target, hmc
    >>> X = torch.randn(50, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    >>> prior = HierarchicalPrior.for_network(MLPSpec(2, ()), "ard", torch.ones(3), 0.5, noise=True)
    >>> target = Target(LinearPotential(X, X[:, 0]), prior)
    >>> gens = [torch.Generator().manual_seed(k) for k in range(2)]
    >>> state = init(gens, target, torch.zeros(2, 3, dtype=torch.float64))
    >>> h = torch.full((2,), 0.05, dtype=torch.float64)
    >>> params = hmc.HMCParams(h, torch.ones(3), torch.full((2,), 10))
    >>> state, info, extra = step(gens, state, target, params)
    >>> state.precision.shape, state.scale.shape, extra   # tau per chain and group, s / 2 per chain
    (torch.Size([2, 3]), torch.Size([2]), 1)
    """
    cond = ConditionalTarget(target, state.precision, state.scale, one_by_one)
    moved, info = hmc.step(generators, hmc.HMCState(state.theta, state.potential, state.grad), cond, params)
    theta = moved.theta
    u, grad, precision, scale, extra = redraw(generators, target, theta, moved.potential, moved.grad,
                                              state.precision, one_by_one)
    return HMCGibbsState(theta, u, grad, precision, scale), info, extra


def redraw(generators, target, theta, potential, grad, precision, one_by_one=False):
    """Step 2 of a transition: the hyperparameters drawn given ``theta``, the cached ``U`` following them.

    ``potential`` and ``grad`` are ``U(theta | tau, s)`` and its gradient
    under the old precisions ``precision``. Returns the new ``(U, grad U,
    tau, c, extra)``: when only ``tau`` moved, ``U`` and ``grad U`` change
    by the prior terms in closed form (``extra = 0``); a learned noise
    changes the data term's scale, and the loss and its gradient are
    evaluated once (``extra = 1`` gradient).
    """
    if target.prior.learns_noise:
        loss, loss_grad = loss_sums(target, theta, one_by_one)
        new_precision, scale = draw_hyperparameters(generators, target, theta, loss)
        u, g = ConditionalTarget(target, new_precision, scale).from_loss(theta, loss, loss_grad)
        return u, g, new_precision, scale, 1
    new_precision, scale = draw_hyperparameters(generators, target, theta)
    change = target.prior.parameter_precision(new_precision) - target.prior.parameter_precision(precision)
    change = change.to(theta.dtype)
    return potential + 0.5 * (change * theta * theta).sum(1), grad + change * theta, new_precision, scale, 0
