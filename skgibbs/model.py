"""Multilayer perceptrons as pure functions of a flat parameter vector.

The network is ``forward(theta, X)`` with ``theta`` of shape ``(K, Q)`` (K
chains at once) and no state of its own. The flat order is scikit-learn's
``MLPRegressor`` order: for each layer ``l`` the weights ``coefs_[l]`` of shape
``(n_in, n_out)`` in row-major order, then ``intercepts_[l]``.

Four per-example losses of the outputs are known (:data:`LOSSES`):
``"squared"``, ``(y_i - f(x_i))**2`` of a one-output network;
``"gaussian"``, ``(y_i - m(x_i))**2 exp(-s(x_i)) + s(x_i)`` of a network
whose two outputs are a mean ``m`` and a log-variance ``s`` (twice the
negative log-density of ``N(y_i; m, e^s)`` less ``log 2 pi``, so that it is
the squared loss where ``s = 0``); ``"student"``, ``(nu + 1) log(1 + (y_i -
m(x_i))**2 exp(-s(x_i)) / nu) + s(x_i)`` of the same two outputs read as the
location and the log squared scale of a Student-t with ``nu =``
:data:`STUDENT_DF` degrees of freedom (twice its negative log-density, less
a constant: :func:`log_density_constant`); and ``"cross_entropy"``,
``-log p(y_i | x_i)`` of a classifier whose outputs are the logit of the
second class (one output, sigmoid) or the K class logits (softmax). All
four have a hand-written backward pass (:meth:`MLPSpec.loss_and_grad`).

A network may start with a :class:`NumericEmbedding` of its inputs
(Gorishniy, Rubachev and Babenko, 2022): each input ``x_j`` is encoded
(piecewise-linearly on fixed bins, or by sines and cosines of learned
frequencies), then mapped by its own linear layer and a ReLU to
``d_embedding`` values; the ``n_features * d_embedding`` values are the first
dense layer's inputs. The embedding's parameters come first in the flat
vector, before the dense layers' (:meth:`NumericEmbedding.slices`).
"""

import math
from dataclasses import dataclass

import numpy as np
import torch

__all__ = [
    "MLPSpec",
    "NumericEmbedding",
    "ACTIVATIONS",
    "LOSSES",
    "SCALE_LOSSES",
    "NOISE_LOSSES",
    "LOG_VARIANCE_BOUND",
    "SHARED_INPUT_GEMM",
    "NARROW_WIDTH",
    "STUDENT_DF",
    "log_density_constant",
    "scale_loss_fisher",
    "per_example_loss",
]

ACTIVATIONS = {
    "relu": torch.relu,
    "tanh": torch.tanh,
    "logistic": torch.sigmoid,
    "identity": lambda h: h,
}


def _act_inplace(name, a):
    if name == "relu":
        a.clamp_min_(0.0)
    elif name == "tanh":
        a.tanh_()
    elif name == "logistic":
        a.sigmoid_()


#: from this many inputs on, the first layer of several chains on the inputs they share is one matrix
#: product, the inputs times every chain's weights side by side, ``(n, d) @ (d, K m)`` (and its weight
#: gradient ``(d, n) @ (n, K m)``), where the batched product multiplies the same inputs once per chain.
#: On the ``sparse`` benchmark's network (d = 100, widths 8, 750 rows, 64 chains) the first layer's
#: forward and gradient took half the time; at d = 10 and 4 chains the batched product was quicker.
#: The forward sums are the same either way; the gradient's sums over the rows may be taken in another
#: order on wide inputs and many rows (its last bits then differ).
SHARED_INPUT_GEMM = 32


def _shared_inputs_times(X, W):
    """``X @ W[k]`` for every chain ``k``, ``(K, n, m)``, by one product: ``X`` ``(n, d)``, ``W`` ``(K, d, m)``."""
    K, d, m = W.shape
    return (X @ W.permute(1, 0, 2).reshape(d, K * m)).view(X.shape[0], K, m).transpose(0, 1).contiguous()


def _shared_inputs_grad(X, G):
    """``X' @ G[k]`` for every chain ``k``, ``(K, d, m)``, by one product: ``X`` ``(n, d)``, ``G`` ``(K, n, m)``."""
    K, n, m = G.shape
    return (X.t() @ G.transpose(0, 1).reshape(n, K * m)).view(X.shape[1], K, m).transpose(0, 1)


def _shared(h, K):
    """Whether the first layer of ``K`` chains on the 2-D inputs ``h`` is one product (:data:`SHARED_INPUT_GEMM`)."""
    return h.dim() == 2 and K > 1 and h.shape[1] >= SHARED_INPUT_GEMM


#: networks whose hidden layers are all at most this wide run their chains with the rows last: each
#: activation is ``(K, width, n)`` and a layer is ``W[k]' @ h[k]``, where the rows-first product
#: ``h[k] @ W[k]`` has an output of a few columns, which the batched product handles poorly (the
#: ``sparse`` benchmark's cost part measures it on paper 001's 8-8-8 network); on 16-wide layers the
#: two orders cost about the same, so the defaults keep the rows-first products. The sums are the same
#: dot products, taken in another order, so their last bits may differ from the rows-first ones.
NARROW_WIDTH = 12


def _rows_last_affine(h, W, bias):
    """``W[k]' @ h[k] + bias[k]`` for every chain, ``(K, m, n)``: ``h`` ``(K, d, n)`` or shared ``(d, n)``,
    ``W`` ``(K, d, m)``, ``bias`` ``(K, m, 1)``; shared inputs by one product ``(K m, d) @ (d, n)``."""
    K, d, m = W.shape
    if h.dim() == 3:
        return torch.baddbmm(bias, W.transpose(1, 2), h)
    return (W.transpose(1, 2).reshape(K * m, d) @ h).view(K, m, h.shape[1]).add_(bias)


def _rows_last_weight_grad(h, g):
    """``h[k] @ g[k]'`` for every chain, ``(K, d, m)``: the weight gradient of :func:`_rows_last_affine`
    from ``g`` ``(K, m, n)``; shared inputs ``(d, n)`` by one product ``(K m, n) @ (n, d)``."""
    K, m, n = g.shape
    if h.dim() == 3:
        return torch.matmul(g, h.transpose(1, 2)).transpose(1, 2)
    return (g.reshape(K * m, n) @ h.t()).view(K, m, h.shape[0]).transpose(1, 2)


def _chains_affine(h, W, bias):
    """``h @ W[k] + bias[k]`` for every chain, ``(K, n, m)``: ``h`` ``(K, n, d)`` or shared ``(n, d)``.

    The sum is added in place on the product's own tensor (autograd keeps no copy of a product's output).
    """
    if h.dim() == 3:
        return torch.baddbmm(bias, h, W)
    product = _shared_inputs_times(h, W) if _shared(h, W.shape[0]) else torch.matmul(h, W)
    return product.add_(bias)


def _chains_weight_grad(h, g):
    """``h[k]' @ g[k]`` for every chain, ``(K, d, m)``: the weight gradient of :func:`_chains_affine`.

    With one or two outputs (a regressor's output layer) as the transpose of
    ``g[k]' @ h[k]``: the same dot products, which the batched product takes
    three to five times faster in that orientation (a ``(16,)`` layer, 455
    rows, four chains). The BLAS may sum them in another order: on a
    ``(16,)`` layer the numbers came out the same to the bit, on a ``(50,)``
    layer they differ in rounding, so that a chain's draws at a fixed seed
    differ from those of the other orientation.
    """
    if h.dim() == 3:
        if g.shape[-1] <= 2:
            return torch.matmul(g.transpose(-1, -2), h).transpose(-1, -2)
        return torch.matmul(h.transpose(-1, -2), g)
    if _shared(h, g.shape[0]):
        return _shared_inputs_grad(h, g)
    return torch.matmul(h.t().unsqueeze(0), g)


def _output_pull(g, W):
    """``g[k] @ W[k]'`` for every chain, ``(K, n, d)``: ``dL/dh`` from ``dL/da`` ``(K, n, m)`` through ``W`` ``(K, d, m)``.

    With one output (``m = 1``) it is an outer product, written as one: the
    same numbers as the batched product, which on a dimension of 1 took
    about three times as long (a ``(16,)`` layer, 455 rows, four chains).
    """
    if W.shape[-1] == 1:
        return g * W.transpose(-1, -2)
    return torch.matmul(g, W.transpose(-1, -2))


def _act_grad(name, h, grad_h):
    """``dL/da`` from ``dL/dh`` with ``h = act(a)``, written in terms of ``h``."""
    if name == "relu":  # one fused pass, as autograd's own ReLU backward
        return torch.ops.aten.threshold_backward(grad_h, h, 0)
    if name == "tanh":
        return grad_h * (1 - h * h)
    if name == "logistic":
        return grad_h * (h * (1 - h))
    return grad_h


def _squared(out, y, mask, with_grad=True):
    """Per-example ``(y - f)**2`` and ``d/d out`` for outputs ``(..., m, 1)``."""
    resid = y - out[..., 0]
    if mask is not None:
        resid = resid * mask
    return resid * resid, (-2.0 * resid).unsqueeze(-1) if with_grad else None


#: the log-variance output of the ``"gaussian"`` loss is clipped to ``[-LOG_VARIANCE_BOUND, LOG_VARIANCE_BOUND]``
#: (standardized scale: variances from 2e-9 to 5e8 times that of ``y``), so that no step overflows
LOG_VARIANCE_BOUND = 20.0


def log_variance(s):
    """The log-variance a ``"gaussian"`` network's second output ``s`` stands for (clipped)."""
    return s.clamp(-LOG_VARIANCE_BOUND, LOG_VARIANCE_BOUND)


def _location_scale(out, y, mask, with_grad, nu=None):
    """The loss of a location ``m`` and a log squared scale ``s`` (outputs ``(..., m, 2)``), and ``d/d out``.

    With ``z = (y - m)^2 e^{-s}``: ``z + s`` for a normal (``nu`` None),
    ``(nu + 1) log(1 + z / nu) + s`` for a Student-t of ``nu`` degrees of
    freedom, whose weight ``(nu + 1) / (nu + z)`` of an example scales its
    pull on both outputs. ``d/ds`` is 0 where ``s`` is clipped.
    """
    s = log_variance(out[..., 1])
    resid = y - out[..., 0]
    if mask is not None:
        resid = resid * mask
    precision = torch.exp(-s)
    scaled = resid * resid * precision
    term = scaled if nu is None else (nu + 1.0) * torch.log1p(scaled / nu)
    loss = term + s if mask is None else term + s * mask
    if not with_grad:
        return loss, None
    dm = -2.0 * resid * precision
    if nu is not None:
        shrink = (nu + 1.0) / (nu + scaled)  # the t's weight of the example, 1 + 1/nu at z = 0
        dm, scaled = dm * shrink, shrink * scaled
    ds = 1.0 - scaled if mask is None else mask - scaled
    inside = (out[..., 1] > -LOG_VARIANCE_BOUND) & (out[..., 1] < LOG_VARIANCE_BOUND)
    return loss, torch.stack([dm, torch.where(inside, ds, torch.zeros_like(ds))], -1)


def _gaussian(out, y, mask, with_grad=True):
    """Per-example ``(y - m)^2 e^{-s} + s`` and ``d/d out`` for outputs ``(..., m, 2)`` = (mean, log-variance).

    ``dl/dm = -2 (y - m) e^{-s}``, ``dl/ds = 1 - (y - m)^2 e^{-s}`` (0 where
    ``s`` is clipped).
    """
    return _location_scale(out, y, mask, with_grad)


#: degrees of freedom of the ``"student"`` loss: its noise has the excess kurtosis ``6 / (nu - 4) = 6`` and
#: a finite variance ``nu / (nu - 2)`` times its squared scale
STUDENT_DF = 5.0


def _student(out, y, mask, with_grad=True):
    """Per-example ``(nu + 1) log(1 + (y - m)^2 e^{-s} / nu) + s`` and ``d/d out`` (``nu =`` :data:`STUDENT_DF`).

    Twice the negative log-density of a Student-t with location ``m`` and
    squared scale ``e^s``, less ``2 *`` :func:`log_density_constant`. With
    ``z = (y - m)^2 e^{-s}``: ``dl/dm = -2 (nu + 1) (y - m) e^{-s} / (nu + z)``,
    ``dl/ds = 1 - (nu + 1) z / (nu + z)`` (0 where ``s`` is clipped).
    """
    return _location_scale(out, y, mask, with_grad, STUDENT_DF)


def _cross_entropy(out, y, mask, with_grad=True):
    """Per-example ``-log p(y | logits)`` and ``d/d out`` for logits ``(..., m, C)``.

    One output (``C = 1``) is the logit ``z`` of class 1 with labels ``y`` in
    {0, 1}: ``l = log(1 + e^z) - y z``, ``dl/dz = sigmoid(z) - y``. With
    ``C >= 2`` the labels are class indices: ``l = logsumexp(z) - z_y``,
    ``dl/dz = softmax(z) - onehot(y)``. Without ``with_grad`` the derivative
    is None and the loss stays differentiable by autograd.
    """
    if out.shape[-1] == 1:
        z = out[..., 0]
        y = y.to(z.dtype)
        loss = torch.nn.functional.softplus(z) - y * z
        if mask is not None:
            loss = loss * mask
        if not with_grad:
            return loss, None
        g = torch.sigmoid(z) - y
        if mask is not None:
            g = g * mask
        return loss, g.unsqueeze(-1)
    y = y.long().expand(out.shape[:-1]).unsqueeze(-1)
    # the logits less their logsumexp: torch.log_softmax over a last dimension of a few classes took 3.5
    # times as long on one thread (565 against 159 us for 4 chains of 1,347 rows of 10 classes), equal to
    # rounding
    log_p = out - torch.logsumexp(out, -1, keepdim=True)
    loss = -log_p.gather(-1, y)[..., 0]
    if not with_grad:
        return (loss if mask is None else loss * mask), None
    g = log_p.exp_()
    g.scatter_add_(-1, y, torch.full_like(y, -1, dtype=g.dtype))
    if mask is not None:
        loss, g = loss * mask, g * mask.unsqueeze(-1)
    return loss, g


def _weighted(head, weight):
    """``head`` with each example's loss and its derivative scaled by its weight ``w_i``."""

    def weighted_head(out, y, mask, with_grad=True):
        losses, g = head(out, y, mask, with_grad)
        w = weight.to(losses.dtype)
        if w.dim() > losses.dim():  # one chain's (1, m) weights on the single-chain path's (m,) losses
            w = w.reshape(losses.shape)
        return losses * w, (None if g is None else g * w.unsqueeze(-1))

    return weighted_head


#: Per-example losses by name: ``loss(out, y, mask) -> (losses, d losses / d out)``.
LOSSES = {"squared": _squared, "gaussian": _gaussian, "student": _student, "cross_entropy": _cross_entropy}

#: the losses of a network whose two outputs are a location and a log squared scale
SCALE_LOSSES = ("gaussian", "student")
#: the loss of the potential under each noise model of the regressors (``noise_``); those whose loss is
#: in :data:`SCALE_LOSSES` have the noise scale as the network's second output
NOISE_LOSSES = {"homoscedastic": "squared", "heteroscedastic": "gaussian", "student": "student"}


def log_density_constant(loss):
    """``c`` with ``log p(y_i | outputs) = -l_i / 2 - c`` for a loss of :data:`SCALE_LOSSES`.

    ``log(2 pi) / 2`` for ``"gaussian"``; ``log(nu pi) / 2 + log Gamma(nu / 2)
    - log Gamma((nu + 1) / 2)`` for ``"student"``.

    Examples
    --------
    >>> round(log_density_constant("gaussian"), 6)
    0.918939
    """
    if loss == "gaussian":
        return 0.5 * math.log(2.0 * math.pi)
    if loss == "student":
        nu = STUDENT_DF
        return 0.5 * math.log(nu * math.pi) + math.lgamma(0.5 * nu) - math.lgamma(0.5 * (nu + 1.0))
    raise ValueError(f"loss must be one of {SCALE_LOSSES}, got {loss!r}.")


def scale_loss_fisher(loss):
    """``(a, b)``: the expected Hessian of a :data:`SCALE_LOSSES` loss in its outputs ``(m, s)`` is ``diag(a e^{-s}, b)``.

    Twice the Fisher information of the location and of the log squared
    scale: ``(2, 1)`` for ``"gaussian"``, ``(2 (nu + 1) / (nu + 3), nu / (nu
    + 3))`` for ``"student"`` (the Gaussian's in the limit ``nu -> inf``).
    """
    if loss == "gaussian":
        return 2.0, 1.0
    if loss == "student":
        nu = STUDENT_DF
        return 2.0 * (nu + 1.0) / (nu + 3.0), nu / (nu + 3.0)
    raise ValueError(f"loss must be one of {SCALE_LOSSES}, got {loss!r}.")


def per_example_loss(name, out, y):
    """Per-example losses ``(..., m)`` of network outputs ``out`` (``(..., m)`` or ``(..., m, C)``).

    Differentiable by autograd (used where a gradient of something else than
    the loss sum is needed, e.g. the variational fit's expected loss).

    Examples
    --------
    >>> out = torch.tensor([[0.0, 0.0], [2.0, 0.0]])    # two examples, two logits
    >>> per_example_loss("cross_entropy", out, torch.tensor([0, 1]))
    tensor([0.6931, 2.1269])
    """
    if out.dim() == y.dim():
        out = out.unsqueeze(-1)
    return LOSSES[name](out, y, None, with_grad=False)[0]


#: the encodings a :class:`NumericEmbedding` knows
EMBEDDING_KINDS = ("piecewise", "periodic")


@dataclass(frozen=True)
class NumericEmbedding:
    """Per-feature embedding of numeric inputs, ahead of the first dense layer.

    Input ``j`` is encoded as ``phi_j(x_j)`` of width ``m`` and embedded as
    ``z_j = relu(phi_j(x_j) W_j + b_j)`` with ``W_j`` of shape
    ``(m, d_embedding)``; the network's first dense layer reads the
    concatenated ``z``. The encodings (Gorishniy, Rubachev and Babenko,
    2022):

    ``"piecewise"``
        The piecewise-linear encoding on fixed bins ``e_0 < ... < e_T`` of
        input ``j``: ``phi_t = clip((x - e_{t-1}) / (e_t - e_{t-1}), 0, 1)``
        for bin ``t = 1..T``, except that the first bin is not clipped below
        and the last not clipped above (linear beyond the outer edges);
        ``m = n_basis``. An input with fewer distinct edges than
        ``n_basis + 1`` has fewer bins; its remaining encodings are 0.
    ``"periodic"``
        ``phi = [sin(2 pi c_j x), cos(2 pi c_j x)]`` with ``n_basis``
        frequencies ``c_j`` per input, parameters of the network;
        ``m = 2 n_basis``.

    Parameters
    ----------
    kind : {"piecewise", "periodic"}
    n_features : int
        Inputs ``d``.
    n_basis : int
        Bins (``"piecewise"``) or frequencies (``"periodic"``) per input.
    d_embedding : int
        Width of each input's embedding.
    edges : tuple of tuple of float, default=()
        ``"piecewise"``: the increasing bin edges of every input, on the
        inputs' scale (at most ``n_basis + 1`` each).
    frequency_scale : float, default=1.0
        ``"periodic"``: the prior standard deviation (and initial spread) of
        the frequencies.

    Examples
    --------
    >>> emb = NumericEmbedding("piecewise", 1, 2, 1, edges=((0.0, 1.0, 2.0),))
    >>> emb.encode(None, torch.tensor([[-1.0], [0.5], [3.0]]))[..., 0, :]
    tensor([[-1.0000,  0.0000],
            [ 0.5000,  0.0000],
            [ 1.0000,  2.0000]])
    """

    kind: str
    n_features: int
    n_basis: int
    d_embedding: int
    edges: tuple = ()
    frequency_scale: float = 1.0

    @property
    def width(self):
        """``m``, the width of one input's encoding."""
        return self.n_basis if self.kind == "piecewise" else 2 * self.n_basis

    @property
    def n_outputs(self):
        return self.n_features * self.d_embedding

    def slices(self, offset=0):
        """``{name: slice}`` of the parameters in the flat vector from ``offset``.

        ``"frequencies"`` ``(d, n_basis)`` (periodic only), then
        ``"weights"`` ``(d, m, d_embedding)`` and ``"biases"``
        ``(d, d_embedding)``, each in row-major order.
        """
        d, k = self.n_features, self.d_embedding
        sizes = {"frequencies": d * self.n_basis} if self.kind == "periodic" else {}
        sizes.update(weights=d * self.width * k, biases=d * k)
        out = {}
        for name, size in sizes.items():
            out[name] = slice(offset, offset + size)
            offset += size
        return out

    @property
    def n_params(self):
        return sum(s.stop - s.start for s in self.slices().values())

    def _bins(self, dtype, device):
        """Left edges, widths and the lower and upper clips of the bins, each ``(d, n_basis)``."""
        d, T = self.n_features, self.n_basis
        left = np.zeros((d, T))
        width = np.full((d, T), np.inf)  # a bin an input lacks encodes 0
        low, high = np.zeros((d, T)), np.ones((d, T))
        for j, e in enumerate(self.edges):
            e = np.asarray(e, dtype=float)
            t = len(e) - 1
            if t < 1:
                continue
            left[j, :t], width[j, :t] = e[:-1], np.diff(e)
            low[j, 0], high[j, t - 1] = -np.inf, np.inf  # linear beyond the outer edges
        return [torch.as_tensor(a, dtype=dtype, device=device) for a in (left, width, low, high)]

    def encode(self, theta, X):
        """``phi(x)`` of every input, ``(n, d, m)`` (piecewise, or shared inputs) or ``(K, n, d, m)``.

        ``theta`` ``(K, Q)`` gives the frequencies (unused by the
        piecewise encoding: None is allowed there).
        """
        if self.kind == "piecewise":
            left, width, low, high = self._bins(X.dtype, X.device)
            r = (X[..., None] - left) / width
            return torch.maximum(torch.minimum(r, high), low)
        K = theta.shape[0]
        c = theta[:, self.slices()["frequencies"]].view(K, self.n_features, self.n_basis)
        x = X[None] if X.dim() == 2 else X
        arg = (2 * np.pi) * x[..., None] * c[:, None]
        return torch.cat([torch.sin(arg), torch.cos(arg)], -1)

    def forward(self, theta, X, phi=None):
        """The embedded inputs ``z``, ``(K, n, d * d_embedding)``.

        ``phi`` is :meth:`encode`'s result where the caller has it.
        """
        K, d, k = theta.shape[0], self.n_features, self.d_embedding
        sl = self.slices()
        W = theta[:, sl["weights"]].view(K, d, self.width, k)
        b = theta[:, sl["biases"]].view(K, 1, d, k)
        phi = self.encode(theta, X) if phi is None else phi
        if phi.dim() == 3:
            a = torch.einsum("ndm,cdmo->cndo", phi, W)
        else:
            a = torch.einsum("cndm,cdmo->cndo", phi, W)
        return torch.relu(a + b).reshape(K, -1, d * k)

    def std(self, dtype=torch.float64):
        """The default prior scale of the parameters, ``(n_params,)``.

        ``frequency_scale`` for the frequencies, ``1 / sqrt(m)`` (the
        fan-in of each input's linear layer) for its weights and biases.
        """
        std = torch.full((self.n_params,), self.width**-0.5, dtype=dtype)
        if self.kind == "periodic":
            std[self.slices()["frequencies"]] = self.frequency_scale
        return std

    def init_params(self, generator, n_chains, dtype):
        """Glorot-uniform weights and biases, frequencies ``N(0, frequency_scale^2)``: ``(n_chains, n_params)``."""
        theta = torch.empty(n_chains, self.n_params, dtype=dtype)
        bound = float(np.sqrt(6.0 / (self.width + self.d_embedding)))
        for name, s in self.slices().items():
            size = s.stop - s.start
            if name == "frequencies":
                draw = torch.randn(n_chains, size, generator=generator, dtype=dtype) * self.frequency_scale
            else:
                draw = (2 * torch.rand(n_chains, size, generator=generator, dtype=dtype) - 1) * bound
            theta[:, s] = draw
        return theta

    def unpack(self, theta):
        """``{name: array (..., shape)}`` of :meth:`slices` from flat parameters ``(..., Q)``."""
        theta = np.asarray(theta)
        lead, d, k = theta.shape[:-1], self.n_features, self.d_embedding
        shapes = {"frequencies": (d, self.n_basis), "weights": (d, self.width, k), "biases": (d, k)}
        return {name: theta[..., s].reshape(lead + shapes[name]) for name, s in self.slices().items()}


@dataclass(frozen=True)
class MLPSpec:
    """Architecture of a fully connected network.

    Parameters
    ----------
    n_features : int
        Input dimension ``d``.
    hidden_layer_sizes : tuple of int
        Widths of the hidden layers; ``()`` is the linear model
        ``f(x) = x @ w + b``.
    activation : {"relu", "tanh", "logistic", "identity"}
        Hidden-layer activation.
    n_outputs : int, default=1
        Width of the (linear) output layer: 1 for a regressor or a binary
        classifier's logit, the number of classes for a softmax classifier.
    embedding : NumericEmbedding, default=None
        An embedding of the inputs ahead of the first dense layer; its
        parameters come first in the flat vector.

    Examples
    --------
    >>> spec = MLPSpec(1, (100, 100), "relu")
    >>> spec.n_params                       # the 10401 weights of paper 000 §5
    10401
    >>> theta = torch.zeros(3, spec.n_params)
    >>> spec.forward(theta, torch.ones(5, 1)).shape
    torch.Size([3, 5])
    >>> MLPSpec(4, (8,), "tanh", n_outputs=3).forward(torch.zeros(2, 67), torch.ones(5, 4)).shape
    torch.Size([2, 5, 3])
    """

    n_features: int
    hidden_layer_sizes: tuple = (100, 100)
    activation: str = "relu"
    n_outputs: int = 1
    embedding: NumericEmbedding = None

    @property
    def layer_sizes(self):
        """Widths of the dense layers' inputs and outputs (the embedded width first, with an embedding)."""
        first = self.n_features if self.embedding is None else self.embedding.n_outputs
        return (first, *self.hidden_layer_sizes, self.n_outputs)

    @property
    def shapes(self):
        """List of ``(n_in, n_out)`` per layer."""
        sizes = self.layer_sizes
        return list(zip(sizes[:-1], sizes[1:]))

    @property
    def n_embedding_params(self):
        """Parameters of the embedding (0 without one): the first entries of the flat vector."""
        return 0 if self.embedding is None else self.embedding.n_params

    @property
    def n_params(self):
        return self.n_embedding_params + sum((a + 1) * b for a, b in self.shapes)

    def _slices(self):
        offset = self.n_embedding_params
        for n_in, n_out in self.shapes:
            w = slice(offset, offset + n_in * n_out)
            offset += n_in * n_out
            b = slice(offset, offset + n_out)
            offset += n_out
            yield n_in, n_out, w, b

    def output_layer(self):
        """``(n_in, n_out, weight_slice, bias_slice)`` of the output layer in the flat vector."""
        return list(self._slices())[-1]

    def forward(self, theta, X):
        """Network outputs for every chain.

        Parameters
        ----------
        theta : torch.Tensor of shape (K, Q)
            Flat parameters of K networks.
        X : torch.Tensor of shape (n, d) or (K, n, d)
            Inputs shared by all chains, or one batch per chain.

        Returns
        -------
        torch.Tensor of shape (K, n), or (K, n, n_outputs) with several outputs
        """
        # outside autograd nothing is saved for a backward pass: the activations and the first layer's
        # bias overwrite their tensor, which spares a tensor of draws x rows x width per layer
        inplace = not torch.is_grad_enabled()
        act = ACTIVATIONS[self.activation]
        K = theta.shape[0]
        single = K == 1 and X.dim() == 2  # one chain: plain 2-D matmuls are fastest
        h = X
        if self.embedding is not None:
            h = self.embedding.forward(theta, X)
            h = h[0] if single else h
        n_layers = len(self.shapes)
        if not single and self._rows_last():
            return self._forward_rows_last(theta, h, inplace)
        for layer, (n_in, n_out, w, b) in enumerate(self._slices()):
            if single:
                h = torch.addmm(theta[0, b], h, theta[0, w].view(n_in, n_out))
            else:
                W = theta[:, w].view(K, n_in, n_out)
                bias = theta[:, b].view(K, 1, n_out)
                h = _chains_affine(h, W, bias)
            if layer < n_layers - 1:
                if inplace:
                    _act_inplace(self.activation, h)
                else:
                    h = act(h)
        if self.n_outputs > 1:
            return h[None] if single else h
        return h[None, :, 0] if single else h[..., 0]

    def _rows_last(self):
        """Whether the chains run with the rows last (:data:`NARROW_WIDTH`): a network with hidden layers,
        all of them narrow, and no embedding."""
        sizes = self.hidden_layer_sizes
        return self.embedding is None and len(sizes) > 0 and max(sizes) <= NARROW_WIDTH

    def _forward_rows_last(self, theta, X, inplace):
        """:meth:`forward` of several chains with the rows last; the outputs as :meth:`forward` gives them."""
        K, n_layers = theta.shape[0], len(self.shapes)
        h = X.transpose(-1, -2)
        for layer, (n_in, n_out, w, b) in enumerate(self._slices()):
            h = _rows_last_affine(h, theta[:, w].view(K, n_in, n_out), theta[:, b].view(K, n_out, 1))
            if layer < n_layers - 1:
                if inplace:
                    _act_inplace(self.activation, h)
                else:
                    h = ACTIVATIONS[self.activation](h)
        if self.n_outputs > 1:
            return h.transpose(1, 2).contiguous()
        return h[:, 0, :]

    def _rows_last_loss_and_grad(self, theta, X, y, mask, head):
        """:meth:`_batched_loss_and_grad` with the rows last (:data:`NARROW_WIDTH`)."""
        K = theta.shape[0]
        slices = list(self._slices())
        hs = [X.transpose(-1, -2)]
        for layer, (n_in, n_out, w, b) in enumerate(slices):
            a = _rows_last_affine(hs[-1], theta[:, w].view(K, n_in, n_out), theta[:, b].view(K, n_out, 1))
            hs.append(ACTIVATIONS[self.activation](a) if layer < len(slices) - 1 else a)
        out = hs.pop().transpose(1, 2)  # (K, n, n_outputs), as the loss heads take it
        losses, g = head(out, y.expand(K, -1) if y.dim() == 1 else y, mask)
        g = g.transpose(1, 2)  # (K, n_outputs, n)
        grad = torch.empty_like(theta)
        for layer in range(len(slices) - 1, -1, -1):
            n_in, n_out, w, b = slices[layer]
            h = hs[layer]
            grad[:, w] = _rows_last_weight_grad(h, g).reshape(K, -1)
            grad[:, b] = g.sum(-1)
            if layer:
                g = _act_grad(self.activation, h, torch.matmul(theta[:, w].view(K, n_in, n_out), g))
        return losses.sum(-1), grad

    def squared_loss_and_grad(self, theta, X, y, mask=None, augmented=False):
        """``sum_i (y_i - f(x_i))^2`` per chain and its gradient: :meth:`loss_and_grad` with ``"squared"``."""
        return self.loss_and_grad(theta, X, y, mask, augmented, loss="squared")

    def loss_and_grad(self, theta, X, y, mask=None, augmented=False, loss="squared", weight=None):
        """``sum_i w_i l_i(theta)`` per chain and its gradient, by a hand-written backward pass.

        Equivalent to autograd on :meth:`forward` (tested), but it writes the
        gradient straight into one flat buffer, which avoids autograd's
        per-slice bookkeeping on the flat parameter vector. The loss enters
        only through ``d l_i / d output`` (:data:`LOSSES`).

        Parameters
        ----------
        theta : torch.Tensor of shape (K, Q)
        X : torch.Tensor of shape (n, d) or (K, n, d)
            Inputs; with ``augmented=True`` and one chain, shape ``(n, d + 1)``
            with a last column of ones.
        y : torch.Tensor of shape (n,) or (K, n)
            Targets; class indices (any dtype) for ``"cross_entropy"``.
        mask : torch.Tensor of shape (K, n), default=None
            Weights of the examples (padding entries 0).
        augmented : bool, default=False
            Whether ``X`` already carries the column of ones.
        loss : {"squared", "gaussian", "student", "cross_entropy"}, default="squared"
        weight : torch.Tensor of shape (n,) or (K, n), default=None
            The examples' weights ``w_i`` (the fit's ``sample_weight``); all 1
            when None. A weight scales its example's loss and its pull on
            every output.

        Returns
        -------
        loss : torch.Tensor of shape (K,)
        grad : torch.Tensor of shape (K, Q)
        """
        head = LOSSES[loss] if weight is None else _weighted(LOSSES[loss], weight)
        K = theta.shape[0]
        if self.embedding is not None:
            return self._embedded_loss_and_grad(theta, X[..., :-1] if augmented else X, y, mask, head)
        if K == 1 and X.dim() == 2:
            if not augmented:
                X = torch.cat([X, torch.ones(X.shape[0], 1, dtype=X.dtype, device=X.device)], 1)
            return self._single_loss_and_grad(theta, X, y, None if mask is None else mask[0], head)
        if augmented:
            X = X[..., :-1]
        if self._rows_last():
            return self._rows_last_loss_and_grad(theta, X, y, mask, head)
        return self._batched_loss_and_grad(theta, X, y, mask, head)

    def _single_loss_and_grad(self, theta, X_aug, y, mask, head):
        # In the flat order a layer's weights (n_in, n_out) are followed by its
        # biases, so theta[w.start:b.stop] viewed as (n_in + 1, n_out) is [W; b]
        # without a copy. With a column of ones on every activation, a layer is
        # one matmul forward and one matmul for its whole gradient block.
        t, m = theta[0], X_aug.shape[0]
        slices = list(self._slices())
        acts = [X_aug]
        for layer, (n_in, n_out, w, b) in enumerate(slices):
            Wb = t[w.start : b.stop].view(n_in + 1, n_out)
            if layer == len(slices) - 1:
                out = torch.mm(acts[-1], Wb)
                break
            buf = torch.empty(m, n_out + 1, dtype=t.dtype, device=t.device)
            h = buf[:, :n_out]
            torch.mm(acts[-1], Wb, out=h)
            _act_inplace(self.activation, h)
            buf[:, n_out] = 1.0
            acts.append(buf)
        losses, g = head(out, y, mask)  # g = dL/d(output), (m, n_outputs)
        grad = torch.empty_like(theta)
        for layer in range(len(slices) - 1, -1, -1):
            n_in, n_out, w, b = slices[layer]
            h_aug = acts[layer]
            torch.mm(h_aug.t(), g, out=grad[0, w.start : b.stop].view(n_in + 1, n_out))
            if layer:
                gh = torch.mm(g, t[w].view(n_in, n_out).t())
                g = _act_grad(self.activation, h_aug[:, :n_in], gh)
        return losses.sum().reshape(1), grad

    def _embedded_loss_and_grad(self, theta, X, y, mask, head):
        # the dense layers by the hand-written pass on the embedded inputs z, which also
        # gives dL/dz; autograd carries dL/dz back through the embedding alone
        E = self.n_embedding_params
        with torch.enable_grad():
            head_params = theta[:, :E].detach().requires_grad_(True)
            Z = self.embedding.forward(head_params, X)
            losses, grad, grad_z = self._batched_loss_and_grad(
                theta, Z.detach(), y, mask, head, input_grad=True
            )
            (grad[:, :E],) = torch.autograd.grad(Z, head_params, grad_z)
        return losses, grad

    def _batched_loss_and_grad(self, theta, X, y, mask, head, input_grad=False):
        K = theta.shape[0]
        slices = list(self._slices())
        hs = [X]
        for layer, (n_in, n_out, w, b) in enumerate(slices):
            W = theta[:, w].view(K, n_in, n_out)
            bias = theta[:, b].view(K, 1, n_out)
            h = hs[-1]
            a = _chains_affine(h, W, bias)
            hs.append(ACTIVATIONS[self.activation](a) if layer < len(slices) - 1 else a)
        out = hs.pop()
        losses, g = head(out, y.expand(K, -1) if y.dim() == 1 else y, mask)  # g: (K, m, n_outputs)
        grad = torch.empty_like(theta)
        for layer in range(len(slices) - 1, -1, -1):
            n_in, n_out, w, b = slices[layer]
            h = hs[layer]
            gw = _chains_weight_grad(h, g)
            grad[:, w] = gw.reshape(K, -1)
            grad[:, b] = g.sum(-2)
            if layer:
                gh = _output_pull(g, theta[:, w].view(K, n_in, n_out))
                g = _act_grad(self.activation, h, gh)
            elif input_grad:
                return (
                    losses.sum(-1),
                    grad,
                    torch.matmul(g, theta[:, w].view(K, n_in, n_out).transpose(-1, -2)),
                )
        return losses.sum(-1), grad

    def unpack(self, theta):
        """Split flat parameters into scikit-learn's ``coefs_`` and ``intercepts_``.

        The dense layers only; an embedding's parameters are
        ``spec.embedding.unpack(theta[..., :spec.n_embedding_params])``.

        Parameters
        ----------
        theta : array-like of shape (..., Q)
            One flat parameter vector, or any batch of them.

        Returns
        -------
        coefs : list of ndarray of shape (..., n_in, n_out)
        intercepts : list of ndarray of shape (..., n_out)
        """
        theta = np.asarray(theta)
        lead = theta.shape[:-1]
        coefs, intercepts = [], []
        for n_in, n_out, w, b in self._slices():
            coefs.append(theta[..., w].reshape(lead + (n_in, n_out)))
            intercepts.append(theta[..., b].copy())
        return coefs, intercepts

    def pack(self, coefs, intercepts, embedding=None):
        """Inverse of :meth:`unpack`; accepts a fitted ``MLPRegressor``'s lists.

        ``embedding`` is :meth:`NumericEmbedding.unpack`'s dict of the
        embedding's parameters, needed by a network with an embedding.
        """
        parts = []
        if self.embedding is not None:
            if embedding is None:
                raise ValueError(
                    "this network has an embedding: pass its parameters as embedding={name: array}."
                )
            parts = [np.asarray(embedding[name], dtype=float).ravel() for name in self.embedding.slices()]
        for W, b in zip(coefs, intercepts):
            parts += [np.asarray(W, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()]
        return np.concatenate(parts)

    def fan_in_std(self, dtype=torch.float64):
        """Per-parameter ``1 / sqrt(n_in)`` of each parameter's layer, shape ``(Q,)``.

        The scale of the default Gaussian prior: every unit's pre-activation
        then has prior variance of order one whatever the layer widths.
        """
        std = torch.empty(self.n_params, dtype=dtype)
        if self.embedding is not None:
            std[: self.n_embedding_params] = self.embedding.std(dtype)
        for n_in, _, w, b in self._slices():
            std[w] = n_in**-0.5
            std[b] = n_in**-0.5
        return std

    def init_params(self, generator, n_chains=1, dtype=torch.float64):
        """Glorot-uniform weights and biases, as ``MLPRegressor`` starts.

        Returns
        -------
        torch.Tensor of shape (n_chains, Q)
        """
        theta = torch.zeros(n_chains, self.n_params, dtype=dtype)
        factor = 6.0 if self.activation != "logistic" else 2.0
        for n_in, n_out, w, b in self._slices():
            bound = float(np.sqrt(factor / (n_in + n_out)))
            u = torch.rand(n_chains, n_in * n_out, generator=generator, dtype=dtype)
            theta[:, w] = (2 * u - 1) * bound
            u = torch.rand(n_chains, n_out, generator=generator, dtype=dtype)
            theta[:, b] = (2 * u - 1) * bound
        if self.embedding is not None:
            theta[:, : self.n_embedding_params] = self.embedding.init_params(generator, n_chains, dtype)
        return theta
