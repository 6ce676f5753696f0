"""Per-example losses: what the kernels evaluate on the data.

For data ``(x_i, y_i)``, ``i = 1..n``, the per-example loss is
``l_i(theta) = (y_i - f_theta(x_i))**2`` for regression, or the
cross-entropy ``-log p_theta(y_i | x_i)`` for classification, and a batch
``B`` (an index set per chain) enters the Metropolis-Hastings ratio only
through

    ``sum_{i in B} w_i l_i(theta)``,  its gradient,  and  ``|B|``,

with ``w_i`` the examples' weights (the estimators' ``sample_weight``; all
1 without). The risk is their weighted mean ``R_n = sum_i w_i l_i / n_w``
with ``n_w = sum_i w_i`` (:attr:`total_weight`), so that an integer weight
counts its example that many times: the target of weights ``w`` is the
target of the data with row ``i`` repeated ``w_i`` times. Batches are drawn
over the ``n`` rows (:attr:`n_data`), each weighted row once.

A :class:`~skgibbs.samplers.Target` turns these and a prior
(:mod:`skgibbs.priors`) into the potential with the sampler's scale and
offset (paper 000, Alg. 1 (b)); batches are drawn by
:func:`skgibbs.samplers.draw_batch`. This module knows nothing about
Metropolis-Hastings.
"""


import torch

from ._random import Batch
from .model import LOSSES, SCALE_LOSSES, per_example_loss
from .priors import MixingPrior, Prior  # noqa: F401  (their home before skgibbs.priors)

__all__ = [
    "Batch",
    "MLPPotential",
    "LinearPotential",
    "FunctionPotential",
    "LogDensityPotential",
]


class _BasePotential:
    """Shared value-and-gradient logic; subclasses give ``per_example_loss``.

    A potential whose losses come from a model's outputs (``has_outputs``)
    also gives ``outputs(theta, X)`` (``(K, m)`` or ``(K, m, C)``), the
    name of its ``loss`` and ``row_blocks``: what tempered SMC's Gauss-Newton
    metric and its criteria at each stage read.
    """

    n_data = None
    has_outputs = False
    #: the examples' weights ``w_i``, a tensor of shape ``(n,)``, or None for all 1
    weight = None

    def _set_weight(self, sample_weight, like):
        """Keep ``sample_weight`` (array-like of shape ``(n,)`` or None) as :attr:`weight`."""
        if sample_weight is None:
            self.weight, self._total_weight = None, self.n_data
            return
        w = torch.as_tensor(sample_weight, dtype=torch.float64, device=like.device)
        if w.shape != (self.n_data,):
            raise ValueError(f"sample_weight must have shape ({self.n_data},), got {tuple(w.shape)}.")
        self._total_weight = float(w.sum())
        self.weight = w.to(like.dtype if like.is_floating_point() else torch.float32)

    @property
    def total_weight(self):
        """``n_w = sum_i w_i``, the number of examples the risk counts (``n_data`` without weights)."""
        return getattr(self, "_total_weight", self.n_data)

    def _weights_of(self, batch):
        """The weights of the batch's examples, ``(K, m)`` (``(n,)`` for the full data), or None."""
        if self.weight is None:
            return None
        return self.weight if batch.idx is None else self.weight[batch.idx]

    def row_blocks(self, n_chains, max_elements):
        """``(rows slice, X rows, y rows)`` of consecutive blocks of the data.

        A block holds about ``max_elements / (n_chains * width)`` rows, with
        ``width`` the widest layer, so that the outputs and activations of
        ``n_chains`` parameter vectors on one block stay within
        ``max_elements`` numbers.
        """
        step = max(1, max_elements // max(n_chains * self.output_width, 1))
        for start in range(0, self.n_data, step):
            rows = slice(start, min(start + step, self.n_data))
            yield rows, self.X[rows], self.y[rows]

    def per_example_loss(self, theta, batch):  # pragma: no cover - interface
        raise NotImplementedError

    def loss_sum(self, theta, batch):
        """``sum_{i in B} w_i l_i(theta)`` per chain, shape ``(K,)``."""
        losses = self.per_example_loss(theta, batch)
        w = self._weights_of(batch)
        if w is not None:
            losses = losses * w.to(losses.dtype)
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
        """Full-data risk ``R_n(theta) = sum_i w_i l_i / n_w`` per chain, without gradient."""
        total = 0.0
        with torch.no_grad():
            for start in range(0, self.n_data, chunk):
                idx = torch.arange(start, min(start + chunk, self.n_data), device=theta.device)
                idx = idx.expand(theta.shape[0], -1)
                total = total + self.loss_sum(theta, Batch(idx, None, None))
        return total / self.total_weight

    def per_example_loss_and_grad(self, theta):
        """Full-data losses ``l_i`` ``(K, n)`` and the gradient ``(K, Q)`` of ``sum_i w_i l_i``, in one backward pass."""
        with torch.enable_grad():
            th = theta.detach().requires_grad_(True)
            losses = self.per_example_loss(th, Batch())
            total = losses.sum() if self.weight is None else (losses * self.weight.to(losses.dtype)).sum()
            (grad,) = torch.autograd.grad(total, th)
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
    sample_weight : array-like of shape (n,), default=None
        The examples' weights ``w_i`` (all 1 when None): the loss sums are
        ``sum_i w_i l_i`` and the risk their mean over ``n_w = sum_i w_i``.

    Examples
    --------
    >>> import torch
    >>> pot = LinearPotential(torch.eye(2, dtype=torch.float64), torch.tensor([1.0, 2.0], dtype=torch.float64))
    >>> losses, grad = pot.per_example_loss_and_grad(torch.zeros(1, 3, dtype=torch.float64))
    >>> losses.tolist(), grad.tolist()
    ([[1.0, 4.0]], [[-2.0, -4.0, -6.0]])
    """

    def __init__(self, X, y, fit_intercept=True, sample_weight=None):
        ones = torch.ones(X.shape[0], 1, dtype=X.dtype, device=X.device)
        self.X = torch.cat([X, ones], 1) if fit_intercept else X
        self.y, self.fit_intercept = y, fit_intercept
        self.n_data = X.shape[0]
        self._set_weight(sample_weight, X)

    loss = "squared"

    @property
    def has_outputs(self):
        """One response shared by the chains: ``outputs`` are the model's predictions of it."""
        return self.y.dim() == 1

    @property
    def output_width(self):
        return self.X.shape[1]

    def outputs(self, theta, X):
        """``X b (+ c)`` for each row of ``theta``: shape ``(K, m)`` (``X`` with the intercept's column)."""
        return theta @ X.T

    def per_example_loss(self, theta, batch):
        if batch.idx is None:
            resid = self.y - theta @ self.X.T
        else:
            y = self.y[batch.idx] if self.y.dim() == 1 else torch.gather(self.y, 1, batch.idx)
            resid = y - torch.einsum("kmq,kq->km", self.X[batch.idx], theta)
        return resid * resid

    def per_example_loss_and_grad(self, theta):
        resid = self.y - theta @ self.X.T  # (K, n)
        pull = resid if self.weight is None else resid * self.weight
        return resid * resid, -2.0 * pull @ self.X

    def loss_sum_and_grad(self, theta, batch):
        if batch.idx is None:
            losses, grad = self.per_example_loss_and_grad(theta)
            return (losses.sum(1) if self.weight is None else losses @ self.weight), grad
        return super().loss_sum_and_grad(theta, batch)


def _gather(rows, idx):
    """``rows[idx]`` for a 1-D ``idx``; on a tensor by ``index_select``, the same rows in half the time."""
    return rows.index_select(0, idx) if torch.is_tensor(rows) else rows[idx]


class MLPPotential(_BasePotential):
    """Per-example loss of an :class:`~skgibbs.model.MLPSpec` network on ``(X, y)``.

    Parameters
    ----------
    spec : MLPSpec
    X : torch.Tensor of shape (n, d), or ScaledRows
        Inputs; the estimators pass a memmap or dask ``X`` as
        :class:`~skgibbs._out_of_core.ScaledRows`, which reads only the rows a
        batch gathers. The full data (``batch.idx`` None) of such rows is
        read in chunks of :attr:`chunk_rows` rows.
    y : torch.Tensor of shape (n,)
        Targets; for ``"cross_entropy"`` the class indices (0/1 with one
        output, ``0..C-1`` with ``C`` outputs).
    loss : {"squared", "gaussian", "student", "cross_entropy"}, default="squared"
        ``(y_i - f(x_i))**2``; ``(y_i - m(x_i))**2 exp(-s(x_i)) + s(x_i)``
        of a network with a mean and a log-variance output, or its
        Student-t counterpart ``"student"``; or
        ``-log p(y_i | x_i)`` of the sigmoid (one output) or softmax (``C``
        outputs) of the network (:data:`skgibbs.model.LOSSES`).
    sample_weight : array-like of shape (n,), default=None
        The examples' weights ``w_i`` (all 1 when None): the loss sums are
        ``sum_i w_i l_i`` and the risk their mean over ``n_w = sum_i w_i``.
    """

    #: rows per chunk of a full-data pass over inputs that are not a tensor
    chunk_rows = 32768

    def __init__(self, spec, X, y, loss="squared", sample_weight=None):
        if loss not in LOSSES:
            raise ValueError(f"loss must be one of {sorted(LOSSES)}, got {loss!r}.")
        if loss in SCALE_LOSSES and spec.n_outputs != 2:
            raise ValueError(
                f"loss={loss!r} needs a network with 2 outputs (location, log squared scale), got {spec.n_outputs}."
            )
        if loss == "cross_entropy" and spec.n_outputs > 1:
            y = y.long()  # class indices, gathered from the logits
        self.spec, self.X, self.y, self.loss = spec, X, y, loss
        self.n_data = X.shape[0]
        self._set_weight(sample_weight, X if torch.is_tensor(X) else y.float())
        # inputs with a column of ones: the single-chain gradient's layout (rows read on
        # demand get their column of ones per batch instead)
        self.X_aug = None
        if torch.is_tensor(X):
            self.X_aug = torch.cat([X, torch.ones(X.shape[0], 1, dtype=X.dtype, device=X.device)], 1)

    def _chunks(self):
        """``(X, y, w)`` of consecutive row chunks: the full data of rows that are not in memory."""
        for start in range(0, self.n_data, self.chunk_rows):
            stop = min(start + self.chunk_rows, self.n_data)
            yield self.X[start:stop], self.y[start:stop], None if self.weight is None else self.weight[start:stop]

    def per_example_loss(self, theta, batch):
        if batch.idx is None and self.X_aug is None:
            return torch.cat([self._losses(theta, X, y) for X, y, _ in self._chunks()], 1)
        if batch.idx is None:
            X, y = self.X, self.y
        elif batch.idx.shape[0] == 1:
            X, y = self.X[batch.idx[0]], self.y[batch.idx[0]]
        else:
            X, y = self.X[batch.idx], self.y[batch.idx]
        return self._losses(theta, X, y)

    def _losses(self, theta, X, y):
        out = self.spec.forward(theta, X)
        return per_example_loss(self.loss, out, y.expand(out.shape[:2]) if y.dim() == 1 else y)

    def loss_sum_and_grad(self, theta, batch):
        augmented = theta.shape[0] == 1 and self.X_aug is not None
        X = self.X_aug if augmented else self.X
        grad_of = self.spec.loss_and_grad
        if batch.idx is None and self.X_aug is None:
            # sums over chunks: one chunk gives the in-memory arithmetic exactly
            value = grad = None
            for Xc, yc, wc in self._chunks():
                v, g = grad_of(theta, Xc, yc, loss=self.loss, weight=wc)
                value, grad = (v, g) if value is None else (value + v, grad + g)
            return value, grad
        w = self._weights_of(batch)
        if batch.idx is None:
            return grad_of(theta, X, self.y, augmented=augmented, loss=self.loss, weight=w)
        if batch.idx.shape[0] == 1:
            i = batch.idx[0]
            return grad_of(theta, _gather(X, i), _gather(self.y, i), augmented=augmented, loss=self.loss,
                           weight=None if w is None else w[0])
        return grad_of(theta, self.X[batch.idx], self.y[batch.idx], batch.mask, loss=self.loss, weight=w)

    def predict(self, theta, X):
        with torch.no_grad():
            return self.spec.forward(theta, X)

    has_outputs = True

    @property
    def output_width(self):
        return max(self.spec.layer_sizes)

    def outputs(self, theta, X):
        """The network's outputs on the rows ``X``: ``(K, m)``, or ``(K, m, C)`` with ``C`` outputs."""
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
    ``l_1(theta) = -log pi(theta)``. With ``Target(potential, lambda_=1.0)`` on the full data
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
