"""Multilayer perceptrons as pure functions of a flat parameter vector.

The network is ``forward(theta, X)`` with ``theta`` of shape ``(K, Q)`` (K
chains at once) and no state of its own. The flat order is scikit-learn's
``MLPRegressor`` order: for each layer ``l`` the weights ``coefs_[l]`` of shape
``(n_in, n_out)`` in row-major order, then ``intercepts_[l]``.
"""

from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["MLPSpec", "ACTIVATIONS"]

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


def _act_grad(name, h, grad_h):
    """``dL/da`` from ``dL/dh`` with ``h = act(a)``, written in terms of ``h``."""
    if name == "relu":  # one fused pass, as autograd's own ReLU backward
        return torch.ops.aten.threshold_backward(grad_h, h, 0)
    if name == "tanh":
        return grad_h * (1 - h * h)
    if name == "logistic":
        return grad_h * (h * (1 - h))
    return grad_h


@dataclass(frozen=True)
class MLPSpec:
    """Architecture of a fully connected network with one output.

    Parameters
    ----------
    n_features : int
        Input dimension ``d``.
    hidden_layer_sizes : tuple of int
        Widths of the hidden layers; ``()`` is the linear model
        ``f(x) = x @ w + b``.
    activation : {"relu", "tanh", "logistic", "identity"}
        Hidden-layer activation.

    Examples
    --------
    >>> spec = MLPSpec(1, (100, 100), "relu")
    >>> spec.n_params                       # the 10401 weights of paper 000 §5
    10401
    >>> theta = torch.zeros(3, spec.n_params)
    >>> spec.forward(theta, torch.ones(5, 1)).shape
    torch.Size([3, 5])
    """

    n_features: int
    hidden_layer_sizes: tuple = (100, 100)
    activation: str = "relu"

    @property
    def layer_sizes(self):
        return (self.n_features, *self.hidden_layer_sizes, 1)

    @property
    def shapes(self):
        """List of ``(n_in, n_out)`` per layer."""
        sizes = self.layer_sizes
        return list(zip(sizes[:-1], sizes[1:]))

    @property
    def n_params(self):
        return sum((a + 1) * b for a, b in self.shapes)

    def _slices(self):
        offset = 0
        for n_in, n_out in self.shapes:
            w = slice(offset, offset + n_in * n_out)
            offset += n_in * n_out
            b = slice(offset, offset + n_out)
            offset += n_out
            yield n_in, n_out, w, b

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
        torch.Tensor of shape (K, n)
        """
        act = ACTIVATIONS[self.activation]
        K = theta.shape[0]
        single = K == 1 and X.dim() == 2  # one chain: plain 2-D matmuls are fastest
        h = X
        n_layers = len(self.shapes)
        for layer, (n_in, n_out, w, b) in enumerate(self._slices()):
            if single:
                h = torch.addmm(theta[0, b], h, theta[0, w].view(n_in, n_out))
            else:
                W = theta[:, w].view(K, n_in, n_out)
                bias = theta[:, b].view(K, 1, n_out)
                h = torch.matmul(h, W) + bias if h.dim() == 2 else torch.baddbmm(bias, h, W)
            if layer < n_layers - 1:
                h = act(h)
        return h[None, :, 0] if single else h[..., 0]

    def squared_loss_and_grad(self, theta, X, y, mask=None, augmented=False):
        """``sum_i (y_i - f(x_i))^2`` per chain and its gradient, by a hand-written backward pass.

        Equivalent to autograd on :meth:`forward` (tested), but it writes the
        gradient straight into one flat buffer, which avoids autograd's
        per-slice bookkeeping on the flat parameter vector.

        Parameters
        ----------
        theta : torch.Tensor of shape (K, Q)
        X : torch.Tensor of shape (n, d) or (K, n, d)
            Inputs; with ``augmented=True`` and one chain, shape ``(n, d + 1)``
            with a last column of ones.
        y : torch.Tensor of shape (n,) or (K, n)
        mask : torch.Tensor of shape (K, n), default=None
            Weights of the examples (padding entries 0).
        augmented : bool, default=False
            Whether ``X`` already carries the column of ones.

        Returns
        -------
        loss : torch.Tensor of shape (K,)
        grad : torch.Tensor of shape (K, Q)
        """
        K = theta.shape[0]
        if K == 1 and X.dim() == 2:
            if not augmented:
                X = torch.cat([X, torch.ones(X.shape[0], 1, dtype=X.dtype, device=X.device)], 1)
            return self._single_loss_and_grad(theta, X, y, None if mask is None else mask[0])
        if augmented:
            X = X[..., :-1]
        return self._batched_loss_and_grad(theta, X, y, mask)

    def _single_loss_and_grad(self, theta, X_aug, y, mask):
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
                out = torch.mm(acts[-1], Wb)[:, 0]
                break
            buf = torch.empty(m, n_out + 1, dtype=t.dtype, device=t.device)
            h = buf[:, :n_out]
            torch.mm(acts[-1], Wb, out=h)
            _act_inplace(self.activation, h)
            buf[:, n_out] = 1.0
            acts.append(buf)
        resid = y - out
        if mask is not None:
            resid = resid * mask
        loss = torch.dot(resid, resid).reshape(1)
        grad = torch.empty_like(theta)
        g = (-2.0 * resid).unsqueeze(1)  # dL/d(output)
        for layer in range(len(slices) - 1, -1, -1):
            n_in, n_out, w, b = slices[layer]
            h_aug = acts[layer]
            torch.mm(h_aug.t(), g, out=grad[0, w.start : b.stop].view(n_in + 1, n_out))
            if layer:
                gh = torch.mm(g, t[w].view(n_in, n_out).t())
                g = _act_grad(self.activation, h_aug[:, :n_in], gh)
        return loss, grad

    def _batched_loss_and_grad(self, theta, X, y, mask):
        K = theta.shape[0]
        slices = list(self._slices())
        hs = [X]
        for layer, (n_in, n_out, w, b) in enumerate(slices):
            W = theta[:, w].view(K, n_in, n_out)
            bias = theta[:, b].view(K, 1, n_out)
            h = hs[-1]
            a = torch.matmul(h, W) + bias if h.dim() == 2 else torch.baddbmm(bias, h, W)
            hs.append(ACTIVATIONS[self.activation](a) if layer < len(slices) - 1 else a)
        out = hs.pop()
        resid = (y.expand(K, -1) if y.dim() == 1 else y) - out[..., 0]
        if mask is not None:
            resid = resid * mask
        loss = (resid * resid).sum(-1)
        grad = torch.empty_like(theta)
        g = (-2.0 * resid).unsqueeze(-1)  # dL/d(output)
        for layer in range(len(slices) - 1, -1, -1):
            n_in, n_out, w, b = slices[layer]
            h = hs[layer]
            hT = h.transpose(-1, -2)
            gw = torch.matmul(hT, g) if h.dim() == 3 else torch.matmul(hT.unsqueeze(0), g)
            grad[:, w] = gw.reshape(K, -1)
            grad[:, b] = g.sum(-2)
            if layer:
                gh = torch.matmul(g, theta[:, w].view(K, n_in, n_out).transpose(-1, -2))
                g = _act_grad(self.activation, h, gh)
        return loss, grad

    def unpack(self, theta):
        """Split flat parameters into scikit-learn's ``coefs_`` and ``intercepts_``.

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

    def pack(self, coefs, intercepts):
        """Inverse of :meth:`unpack`; accepts a fitted ``MLPRegressor``'s lists."""
        parts = []
        for W, b in zip(coefs, intercepts):
            parts += [np.asarray(W, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()]
        return np.concatenate(parts)

    def fan_in_std(self, dtype=torch.float64):
        """Per-parameter ``1 / sqrt(n_in)`` of each parameter's layer, shape ``(Q,)``.

        The scale of the default Gaussian prior: every unit's pre-activation
        then has prior variance of order one whatever the layer widths.
        """
        std = torch.empty(self.n_params, dtype=dtype)
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
        return theta
