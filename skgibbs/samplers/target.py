"""The target every kernel samples: a per-example loss, a prior and the scale lambda.

For per-example losses ``l_i`` on ``n`` examples, a prior ``Pi`` and the
inverse temperature ``lambda``, the Gibbs posterior is

    ``pi_lambda(theta) ∝ exp(-lambda R_n(theta)) Pi(theta)``,
    ``R_n = (1/n) sum_i w_i l_i``,

with ``w_i`` the examples' weights (all 1 without ``sample_weight``) and
``n = sum_i w_i``, and a kernel sees it through the potential of a batch ``B`` (an index set
per chain; the full data when ``B`` is the full batch)

    ``U_B(theta) = c sum_{i in B} w_i l_i(theta) + d |B| - log Pi(theta)``.

``c = lambda / n``, ``d = 0`` on the full data: ``U = lambda R_n - log Pi``,
``exp(-U) = pi_lambda``. The Langevin kernels on batches use other constants
(paper 000, Alg. 1 (b): ``c = lambda' / n`` and ``d = zeta log rho`` for
csMALA, ``c = lambda / (n rho)`` for sMALA and SGLD). :class:`Target`
assembles ``U_B`` and ``grad U_B`` in one place, so that every kernel
evaluates the same density with the same arithmetic.
"""

import torch

from .._random import draw_batch
from ..potential import Batch
from ..priors import Prior

__all__ = ["Target", "FULL_BATCH", "RowLoop", "loss_sums"]

FULL_BATCH = Batch()


def _per_chain(value):
    """A per-chain ``(K,)`` tensor as a column; a float or a 0-d tensor as it is."""
    return value[:, None] if torch.is_tensor(value) and value.dim() == 1 else value


class Target:
    """``pi_lambda ∝ exp(-lambda R_n) Pi`` for a potential's per-example losses.

    Parameters
    ----------
    potential : MLPPotential, LinearPotential, FunctionPotential or LogDensityPotential
        Per-example losses ``l_i`` (``loss_sum_and_grad(theta, batch)``).
    prior : Prior or MixingPrior, default=None
        The flat prior when None.
    lambda_ : float, default=1.0
        Inverse temperature ``lambda = n / temperature``: the estimators'
        fitted ``lambda_``.

    Attributes
    ----------
    lambda_ : float
        ``lambda``.
    n_data : int or float
        ``n``, the number of examples the risk counts: the sum of the
        potential's weights ``n_w`` (its ``total_weight``), its number of
        rows without weights.
    n_rows : int
        The potential's rows, over which batches are drawn.
    scale : float
        ``c = lambda / n`` of the full-data potential.

    Examples
    --------
    >>> import torch
    >>> from skgibbs.potential import FunctionPotential
    >>> from skgibbs.priors import Prior
    >>> from skgibbs.samplers import Target
    >>> y = torch.tensor([0.0, 1.0, 2.0], dtype=torch.float64)
    >>> pot = FunctionPotential(lambda th, idx: (y[idx] - th[:, :1]) ** 2, n_data=3)
    >>> target = Target(pot, Prior(std=1.0), lambda_=3.0)
    >>> u, grad = target.value_and_grad(torch.ones(1, 1, dtype=torch.float64))
    >>> float(u[0]), float(grad[0, 0])   # 2 + 0.5 and 0 + 1
    (2.5, 1.0)
    """

    def __init__(self, potential, prior=None, lambda_=1.0):
        self.potential = potential
        self.prior = Prior() if prior is None else prior
        self.lambda_ = float(lambda_)
        self.n_rows = potential.n_data
        self.n_data = getattr(potential, "total_weight", potential.n_data)
        self.scale = self.lambda_ / self.n_data

    # -- the data term ---------------------------------------------------------
    def draw_batch(self, generators, rho, device=None):
        """Bernoulli(``rho``) index sets, one per generator (the full data for ``rho = 1``)."""
        return draw_batch(generators, self.n_rows, rho, device)

    def loss_sum_and_grad(self, theta, batch=FULL_BATCH):
        """``sum_{i in B} w_i l_i(theta)`` ``(K,)`` and its gradient ``(K, Q)``."""
        return self.potential.loss_sum_and_grad(theta, batch)

    def loss_sum(self, theta, batch=FULL_BATCH):
        """``sum_{i in B} w_i l_i(theta)`` without a gradient."""
        return self.potential.loss_sum(theta, batch)

    def mean_loss(self, theta):
        """``R_n(theta)`` per chain, ``(K,)``."""
        return self.potential.mean_loss(theta)

    # -- the prior ----------------------------------------------------------------
    def log_prior(self, theta, *args):
        """``log Pi(theta)`` up to a constant, ``(K,)`` (``-inf`` outside a box)."""
        return self.prior.log_density(theta, *args)

    # -- the potential --------------------------------------------------------------
    def grad(self, loss_grad, theta, c=None):
        """``c grad sum_B l_i - grad log Pi`` from the loss gradient; ``c`` a float or ``(K,)``.

        ``c`` is ``scale`` (``lambda / n``) when None.
        """
        g = _per_chain(self.scale if c is None else c) * loss_grad
        prior_grad = self.prior.grad_log_density(theta)
        return g if prior_grad is None else g - prior_grad

    @staticmethod
    def energy(loss_sum, batch_size, log_prior, c, d):
        """``U_B = c sum_B l_i + d |B| - log Pi`` from the cached batch terms; ``c``, ``d`` floats or ``(K,)``."""
        return c * loss_sum + d * batch_size.to(loss_sum.dtype) - log_prior

    def value_and_grad(self, theta):
        """``U(theta) = lambda R_n - log Pi`` ``(K,)`` and its gradient ``(K, Q)`` on the full data."""
        loss, loss_grad = self.potential.loss_sum_and_grad(theta, FULL_BATCH)
        return self.scale * loss - self.prior.log_density(theta), self.grad(loss_grad, theta)


class RowLoop:
    """A target evaluated one chain at a time (networks too large to batch the chains)."""

    def __init__(self, target):
        self.target = target

    def value_and_grad(self, theta):
        parts = [self.target.value_and_grad(theta[k : k + 1]) for k in range(theta.shape[0])]
        return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])


def loss_sums(target, theta, one_by_one=False):
    """The loss sums ``(K,)`` and their gradients ``(K, Q)``, the chains batched or one at a time.

    ``one_by_one`` evaluates one chain after another: networks too large to
    batch the chains (``vectorize=False``).
    """
    if not one_by_one or theta.shape[0] == 1:
        return target.loss_sum_and_grad(theta)
    parts = [target.loss_sum_and_grad(theta[k : k + 1]) for k in range(theta.shape[0])]
    return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])
