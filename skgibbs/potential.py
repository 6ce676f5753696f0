"""Per-example losses, priors and the batch potential the kernels evaluate.

For data ``(x_i, y_i)``, ``i = 1..n``, the per-example loss is
``l_i(theta) = (y_i - f_theta(x_i))**2`` for regression, or the
cross-entropy ``-log p_theta(y_i | x_i)`` for classification, and a batch
``B`` (an index set per chain) enters the Metropolis-Hastings ratio only
through

    ``sum_{i in B} l_i(theta)``,  its gradient,  and  ``|B|``.

The kernels turn these into a potential with the sampler's scale and offset
(paper 000, Alg. 1 (b)); this module knows nothing about Metropolis-Hastings.
"""

import math
from typing import NamedTuple

import torch

from .model import LOSSES, per_example_loss

__all__ = [
    "Batch",
    "Prior",
    "MixingPrior",
    "MLPPotential",
    "LinearPotential",
    "FunctionPotential",
    "LogDensityPotential",
]


class Batch(NamedTuple):
    """Index sets of K chains.

    ``idx`` is ``None`` for the full data. Otherwise ``idx`` has shape
    ``(K, m)``, padded where chains drew fewer points, and ``mask`` (shape
    ``(K, m)``, or ``None`` without padding) marks the real entries.
    ``size`` has shape ``(K,)``: the number of points ``|Z|_1`` of each chain.
    """

    idx: torch.Tensor = None
    mask: torch.Tensor = None
    size: torch.Tensor = None


class Prior(NamedTuple):
    """Prior on the flat parameters.

    Parameters
    ----------
    std : float, torch.Tensor of shape (Q,) or None
        ``None`` is the flat prior; otherwise the Gaussian
        ``N(0, diag(std**2))``.
    bound : float or None
        ``B`` of the uniform box ``[-B, B]^Q`` (paper 000 §2.1); proposals
        outside are rejected. ``None`` is no box.
    """

    std: float = None
    bound: float = None

    def log_density(self, theta):
        """``log Pi(theta)`` up to a constant, ``-inf`` outside the box; shape ``(K,)``."""
        out = torch.zeros(theta.shape[0], dtype=theta.dtype, device=theta.device)
        if self.std is not None:
            out = out - 0.5 * ((theta / self.std) ** 2).sum(1)
        if self.bound is not None:
            inside = (theta.abs() <= self.bound).all(1)
            out = torch.where(inside, out, torch.full_like(out, -torch.inf))
        return out

    def grad_log_density(self, theta):
        if self.std is None:
            return None
        return -theta / self.std**2


class MixingPrior(NamedTuple):
    r"""Mixing prior over sparse active sets, (2.4) of paper 001.

    The active set ``I = {i : theta_i != 0}`` has size ``k = |I| >= 1`` with
    probability proportional to ``s^(-k)``, given ``k`` it is uniform over
    the ``binom(Q, k)`` sets of that size, and given ``I`` the active
    coordinates are independent with density ``p_i`` (``base``) while the
    others are exactly zero. With respect to the sum over ``I`` of Lebesgue
    measure on ``R^I``, the density is

    .. math::

        \Pi(\theta) = \frac{s^{-k}}{C_s \binom{Q}{k}} \prod_{i \in I} p_i(\theta_i),
        \qquad C_s = \frac{1 - s^{-Q}}{s - 1},

    where ``p_i`` is the uniform density ``1 / (2B)`` on ``[-B, B]`` (paper
    001, ``base = Prior(bound=B)``), the Gaussian ``N(0, std_i^2)``
    (``base = Prior(std)``), or that Gaussian truncated to ``[-B, B]`` (both).
    Unlike :class:`Prior`, every constant that depends on ``k`` is kept:
    reversible-jump moves compare densities on spaces of different dimension.

    Parameters
    ----------
    base : Prior
        Density of one active coordinate; it must be proper (``std`` or
        ``bound`` given).
    sparsity : float >= 2
        ``s``; larger values favour sparser networks.
    """

    base: Prior
    sparsity: float = 2.0

    def check(self):
        """Raise ValueError unless the prior is proper and ``s >= 2``."""
        if self.base.std is None and self.base.bound is None:
            raise ValueError(
                "The mixing prior needs a proper density on the active weights: give prior_std "
                "(Gaussian) or weight_bound (uniform on [-B, B])."
            )
        if not self.sparsity >= 2:
            raise ValueError(f"sparsity must be >= 2 (paper 001 (2.4)), got {self.sparsity!r}.")
        return self

    def _log_norm(self, like):
        """``-log`` of each active coordinate's normalising constant, ``(Q,)`` or a float."""
        std, bound = self.base.std, self.base.bound
        if std is None:
            return math.log(2.0 * bound)
        std = torch.as_tensor(std, dtype=like.dtype, device=like.device)
        out = torch.log(std) + 0.5 * math.log(2.0 * math.pi)
        if bound is not None:  # truncated to [-B, B]: divide by its mass
            out = out + torch.log(torch.special.erf(bound / (std * math.sqrt(2.0))))
        return out

    def coordinate_log_density(self, theta):
        """``log p_i(theta_i)`` of every coordinate as if active, normalised; shape ``(K, Q)``."""
        std, bound = self.base.std, self.base.bound
        out = -torch.as_tensor(self._log_norm(theta), dtype=theta.dtype, device=theta.device).expand_as(theta)
        if std is not None:
            out = out - 0.5 * (theta / torch.as_tensor(std, dtype=theta.dtype, device=theta.device)) ** 2
        if bound is not None:
            out = torch.where(theta.abs() <= bound, out, -torch.inf)
        return out

    def log_size_weight(self, k, n_params):
        """``log(s^(-k) / binom(Q, k))`` per chain for sizes ``k`` (a list of int); ``-inf`` for ``k = 0``.

        ``C_s`` is dropped: it is the same for every ``k``.
        """
        log_s, top = math.log(self.sparsity), math.lgamma(n_params + 1)
        return [
            -size * log_s - top + math.lgamma(size + 1) + math.lgamma(n_params - size + 1)
            if size >= 1
            else -math.inf
            for size in k
        ]

    def _scalar_log_norm(self):
        """The ``-log`` normalising constant shared by every coordinate, or None when it varies."""
        std, bound = self.base.std, self.base.bound
        if std is None:
            return math.log(2.0 * bound)
        if torch.is_tensor(std) and std.numel() > 1:
            return None
        std = float(std)
        out = math.log(std) + 0.5 * math.log(2.0 * math.pi)
        return out if bound is None else out + math.log(math.erf(bound / (std * math.sqrt(2.0))))

    def size_part(self, k, n_params):
        """The part of ``log Pi`` that depends on ``theta`` only through ``k = |I|``, per chain (list).

        ``log(s^(-k) / binom(Q, k))``, and ``-k log c`` when every active
        coordinate has the same normalising constant ``c`` (``2B`` for the
        uniform density, ``std sqrt(2 pi)`` for one Gaussian scale).
        """
        sizes = self.log_size_weight(k, n_params)
        c = self._scalar_log_norm()
        return sizes if c is None else [w - size * c for w, size in zip(sizes, k)]

    def coordinate_part(self, theta, active):
        """The rest of ``log Pi``, shape ``(K,)``: ``log Pi(theta) - size_part``.

        ``theta`` must be zero off ``active``; ``-inf`` outside the box.
        """
        std, bound = self.base.std, self.base.bound
        if std is None:
            per = torch.zeros(theta.shape[0], dtype=theta.dtype, device=theta.device)
        else:
            # inactive coordinates are exact zeros: the quadratic term needs no mask
            per = ((theta / std) ** 2).sum(1).mul_(-0.5)
            if self._scalar_log_norm() is None:
                per = per - (active.to(theta.dtype) * self._log_norm(theta)).sum(1)
        if bound is not None:
            per = torch.where((theta.abs() <= bound).all(1), per, -torch.inf)
        return per

    def log_density(self, theta, active=None, k=None):
        """``log Pi(theta)`` up to ``-log C_s``, shape ``(K,)``.

        ``theta`` must be zero off ``active``, which defaults to ``theta !=
        0``; ``k`` (list of int), the sizes of the active sets, is counted
        from ``active`` when None.
        """
        active = theta != 0 if active is None else active
        k = active.sum(1).tolist() if k is None else k
        sizes = torch.tensor(self.size_part(k, theta.shape[1]), dtype=theta.dtype, device=theta.device)
        return self.coordinate_part(theta, active) + sizes

    def grad_log_density(self, theta):
        """Gradient of ``sum_i log p_i(theta_i)`` (zero at inactive coordinates, which are 0)."""
        return self.base.grad_log_density(theta)


def draw_batch(generators, n, rho, device=None):
    """Bernoulli(rho) index sets, one per chain and generator (Alg. 1 (c)(i)).

    Batches are gathered by index, never by masking the full data (DESIGN §6).
    """
    if rho >= 1.0:
        return Batch(None, None, torch.full((len(generators),), n, device=device))
    rows = [_bernoulli_indices(g, n, rho, device) for g in generators]
    sizes = torch.tensor([len(r) for r in rows], device=device)
    if len(rows) == 1:
        return Batch(rows[0][None], None, sizes)
    m = max(int(sizes.max()), 1)
    idx = torch.zeros(len(rows), m, dtype=torch.long, device=device)
    mask = torch.zeros(len(rows), m, device=device)
    for k, r in enumerate(rows):
        idx[k, : len(r)] = r
        mask[k, : len(r)] = 1.0
    return Batch(idx, mask, sizes)


def _bernoulli_indices(generator, n, rho, device=None):
    """Indices ``{i : Z_i = 1}`` of ``Z ~ Ber(rho)^n`` in O(n rho) work.

    The gaps between successive successes of a Bernoulli sequence are i.i.d.
    Geometric(rho), so the index set is the running sum of geometric draws
    that stays below n: the same law as thresholding n uniforms, without
    touching all n of them.
    """
    mean = n * rho
    chunk = int(mean + 6.0 * (mean * (1 - rho)) ** 0.5 + 16)
    parts, last = [], torch.zeros((), dtype=torch.long, device=device)
    while True:
        gaps = torch.empty(chunk, device=device).geometric_(rho, generator=generator)
        pos = last + torch.cumsum(gaps.long(), 0) - 1
        parts.append(pos)
        if int(pos[-1]) >= n - 1:
            break
        last = pos[-1] + 1
    pos = torch.cat(parts) if len(parts) > 1 else parts[0]
    return pos[: int(torch.searchsorted(pos, n))]


class _BasePotential:
    """Shared value-and-gradient logic; subclasses give ``per_example_loss``."""

    n_data = None

    def per_example_loss(self, theta, batch):  # pragma: no cover - interface
        raise NotImplementedError

    def loss_sum(self, theta, batch):
        """``sum_{i in B} l_i(theta)`` per chain, shape ``(K,)``."""
        losses = self.per_example_loss(theta, batch)
        if batch.mask is not None:
            losses = losses * batch.mask.to(losses.dtype)
        return losses.sum(1)

    def loss_sum_and_grad(self, theta, batch):
        """Loss sums ``(K,)`` and their gradients ``(K, Q)`` in one backward pass."""
        with torch.enable_grad():
            th = theta.detach().requires_grad_(True)
            value = self.loss_sum(th, batch)
            (grad,) = torch.autograd.grad(value.sum(), th)
        return value.detach(), grad

    def mean_loss(self, theta, chunk=65536):
        """Full-data risk ``R_n(theta)`` per chain, without gradient."""
        total = 0.0
        with torch.no_grad():
            for start in range(0, self.n_data, chunk):
                idx = torch.arange(start, min(start + chunk, self.n_data), device=theta.device)
                idx = idx.expand(theta.shape[0], -1)
                total = total + self.loss_sum(theta, Batch(idx, None, None))
        return total / self.n_data

    def per_example_loss_and_grad(self, theta):
        """Full-data losses ``(K, n)`` and the gradient ``(K, Q)`` of their sum, in one backward pass."""
        with torch.enable_grad():
            th = theta.detach().requires_grad_(True)
            losses = self.per_example_loss(th, Batch())
            (grad,) = torch.autograd.grad(losses.sum(), th)
        return losses.detach(), grad


class LinearPotential(_BasePotential):
    """Squared loss of the linear model ``f(x) = x' b (+ c)`` on ``(X, y)``.

    The flat parameters are ``b`` followed, with ``fit_intercept``, by the
    intercept ``c``. ``y`` may hold one response per chain, so that K
    responses sharing one design (replicates of a simulation) run as K
    chains at once.

    Parameters
    ----------
    X : torch.Tensor of shape (n, d)
    y : torch.Tensor of shape (n,) or (K, n)
    fit_intercept : bool, default=True

    Examples
    --------
    >>> import torch
    >>> pot = LinearPotential(torch.eye(2, dtype=torch.float64), torch.tensor([1.0, 2.0], dtype=torch.float64))
    >>> losses, grad = pot.per_example_loss_and_grad(torch.zeros(1, 3, dtype=torch.float64))
    >>> losses.tolist(), grad.tolist()
    ([[1.0, 4.0]], [[-2.0, -4.0, -6.0]])
    """

    def __init__(self, X, y, fit_intercept=True):
        ones = torch.ones(X.shape[0], 1, dtype=X.dtype, device=X.device)
        self.X = torch.cat([X, ones], 1) if fit_intercept else X
        self.y, self.fit_intercept = y, fit_intercept
        self.n_data = X.shape[0]

    def per_example_loss(self, theta, batch):
        if batch.idx is None:
            resid = self.y - theta @ self.X.T
        else:
            y = self.y[batch.idx] if self.y.dim() == 1 else torch.gather(self.y, 1, batch.idx)
            resid = y - torch.einsum("kmq,kq->km", self.X[batch.idx], theta)
        return resid * resid

    def per_example_loss_and_grad(self, theta):
        resid = self.y - theta @ self.X.T  # (K, n)
        return resid * resid, -2.0 * resid @ self.X

    def loss_sum_and_grad(self, theta, batch):
        if batch.idx is None:
            losses, grad = self.per_example_loss_and_grad(theta)
            return losses.sum(1), grad
        return super().loss_sum_and_grad(theta, batch)


class MLPPotential(_BasePotential):
    """Per-example loss of an :class:`~skgibbs.model.MLPSpec` network on ``(X, y)``.

    Parameters
    ----------
    spec : MLPSpec
    X : torch.Tensor of shape (n, d)
    y : torch.Tensor of shape (n,)
        Targets; for ``"cross_entropy"`` the class indices (0/1 with one
        output, ``0..C-1`` with ``C`` outputs).
    loss : {"squared", "cross_entropy"}, default="squared"
        ``(y_i - f(x_i))**2``, or ``-log p(y_i | x_i)`` of the sigmoid (one
        output) or softmax (``C`` outputs) of the network
        (:data:`skgibbs.model.LOSSES`).
    """

    def __init__(self, spec, X, y, loss="squared"):
        if loss not in LOSSES:
            raise ValueError(f"loss must be one of {sorted(LOSSES)}, got {loss!r}.")
        if loss == "cross_entropy" and spec.n_outputs > 1:
            y = y.long()  # class indices, gathered from the logits
        self.spec, self.X, self.y, self.loss = spec, X, y, loss
        self.n_data = X.shape[0]
        # inputs with a column of ones: the single-chain gradient's layout
        self.X_aug = torch.cat([X, torch.ones(X.shape[0], 1, dtype=X.dtype, device=X.device)], 1)

    def per_example_loss(self, theta, batch):
        if batch.idx is None:
            X, y = self.X, self.y
        elif batch.idx.shape[0] == 1:
            X, y = self.X[batch.idx[0]], self.y[batch.idx[0]]
        else:
            X, y = self.X[batch.idx], self.y[batch.idx]
        out = self.spec.forward(theta, X)
        return per_example_loss(self.loss, out, y.expand(out.shape[:2]) if y.dim() == 1 else y)

    def loss_sum_and_grad(self, theta, batch):
        single = theta.shape[0] == 1
        X = self.X_aug if single else self.X
        grad_of = self.spec.loss_and_grad
        if batch.idx is None:
            return grad_of(theta, X, self.y, augmented=single, loss=self.loss)
        if batch.idx.shape[0] == 1:
            i = batch.idx[0]
            return grad_of(theta, X[i], self.y[i], augmented=single, loss=self.loss)
        return grad_of(theta, self.X[batch.idx], self.y[batch.idx], batch.mask, loss=self.loss)

    def predict(self, theta, X):
        with torch.no_grad():
            return self.spec.forward(theta, X)


class FunctionPotential(_BasePotential):
    """Potential from a user's per-example loss, for models outside skgibbs.

    Parameters
    ----------
    loss_fn : callable
        ``loss_fn(theta, idx) -> (K, m)`` per-example losses of K parameter
        vectors ``theta`` (shape ``(K, Q)``) on the examples ``idx`` (shape
        ``(K, m)``, long). It must be differentiable by torch autograd.
        Row ``k`` of ``theta`` and of ``idx`` belong together, and the rows
        are interchangeable chains: the kernels may call ``loss_fn`` on any
        subset of them (a restart evaluates only the chains it refreshes),
        so the loss must not depend on a row's position.
    n_data : int
        Number of examples ``n``.

    Examples
    --------
    >>> import torch
    >>> y = torch.tensor([0.1, -0.2, 0.3])
    >>> pot = FunctionPotential(lambda th, idx: (y[idx] - th[:, :1]) ** 2, n_data=3)
    >>> float(pot.mean_loss(torch.zeros(1, 1))[0])  # doctest: +ELLIPSIS
    0.0466...
    """

    def __init__(self, loss_fn, n_data):
        self.loss_fn, self.n_data = loss_fn, int(n_data)

    def per_example_loss(self, theta, batch):
        idx = batch.idx
        if idx is None:
            idx = torch.arange(self.n_data, device=theta.device).expand(theta.shape[0], -1)
        return self.loss_fn(theta, idx)


class LogDensityPotential:
    """Potential ``-log pi(theta)`` of a target given by its log density.

    The kernels see one "example" (``n_data = 1``) whose loss is
    ``l_1(theta) = -log pi(theta)``. With ``ChainConfig(lam=1.0, rho=1.0)``
    and a flat prior their potential is ``U = -log pi``: ``sampler="mala"``
    samples ``pi`` exactly and ``sampler="sgld"`` is the unadjusted Langevin
    algorithm (ULA) ``theta' = theta + h grad log pi(theta) + sqrt(2 h) xi``
    of paper 003 §6. (With ``rho < 1`` the single term would enter a
    Bernoulli batch only with probability ``rho``, which makes no sense for
    a density: keep ``rho = 1``.)

    Parameters
    ----------
    log_prob : callable, default=None
        ``log_prob(theta) -> (K,)``: ``log pi`` up to a constant at K points
        ``theta`` (tensor of shape ``(K, d)``). Needed by Metropolis-Hastings
        (MALA); ULA needs only the gradient.
    grad_log_prob : callable, default=None
        ``grad_log_prob(theta) -> (K, d)``. When None, the gradient of
        ``log_prob`` by torch autograd.

    Examples
    --------
    >>> import torch
    >>> pot = LogDensityPotential(lambda th: -0.5 * (th**2).sum(1))
    >>> value, grad = pot.loss_sum_and_grad(torch.tensor([[1.0, 2.0]]), Batch())
    >>> value, grad
    (tensor([2.5000]), tensor([[1., 2.]]))
    """

    n_data = 1

    def __init__(self, log_prob=None, grad_log_prob=None):
        if log_prob is None and grad_log_prob is None:
            raise ValueError("LogDensityPotential needs log_prob, grad_log_prob or both.")
        for name, fn in (("log_prob", log_prob), ("grad_log_prob", grad_log_prob)):
            if fn is not None and not callable(fn):
                kind = type(fn).__name__
                raise TypeError(f"{name} must be a callable on tensors of shape (K, d), got {kind}.")
        self.log_prob, self.grad_log_prob = log_prob, grad_log_prob

    def _value(self, theta):
        value = self.log_prob(theta)
        if value.shape != theta.shape[:1]:
            expected, got = tuple(theta.shape[:1]), tuple(value.shape)
            raise ValueError(f"log_prob must return shape (K,) = {expected}, got {got}.")
        return -value

    def _gradient(self, theta):
        grad = self.grad_log_prob(theta)
        if grad.shape != theta.shape:
            expected, got = tuple(theta.shape), tuple(grad.shape)
            raise ValueError(f"grad_log_prob must return shape (K, d) = {expected}, got {got}.")
        return -grad

    @staticmethod
    def _weight(batch, like):
        # |B| in {0, 1}: the one term is in the batch or not
        if batch is None or batch.size is None:
            return 1.0
        return batch.size.to(dtype=like.dtype, device=like.device)

    def loss_sum(self, theta, batch=None):
        """``-log pi(theta)`` per point, shape ``(K,)``."""
        if self.log_prob is None:
            raise ValueError(
                "This potential has no log_prob: Metropolis-Hastings (MALA) needs log pi(theta); "
                "pass log_prob, or sample with ULA (sampler='sgld', rho=1)."
            )
        with torch.no_grad():
            return self._weight(batch, theta) * self._value(theta).detach()

    def loss_sum_and_grad(self, theta, batch=None):
        """``-log pi`` ``(K,)`` and ``-grad log pi`` ``(K, d)``; the value is NaN without ``log_prob``."""
        if self.grad_log_prob is not None:
            with torch.no_grad():
                grad = self._gradient(theta)
                if self.log_prob is None:
                    value = torch.full_like(theta[:, 0], torch.nan)
                else:
                    value = self._value(theta)
        else:
            with torch.enable_grad():
                th = theta.detach().requires_grad_(True)
                value = self._value(th)
                (grad,) = torch.autograd.grad(value.sum(), th)
        w = self._weight(batch, theta)
        return w * value.detach(), (w[:, None] if torch.is_tensor(w) else w) * grad

    def mean_loss(self, theta, chunk=None):
        """``-log pi(theta)``, shape ``(K,)`` (the "risk" over the one example)."""
        return self.loss_sum(theta)
