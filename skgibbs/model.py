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
        h = X
        n_layers = len(self.shapes)
        for layer, (n_in, n_out, w, b) in enumerate(self._slices()):
            W = theta[:, w].view(K, n_in, n_out)
            bias = theta[:, b].view(K, 1, n_out)
            if h.dim() == 2 and K == 1:
                h = torch.addmm(bias[0], h, W[0]).unsqueeze(0)
            elif h.dim() == 2:
                h = torch.matmul(h, W) + bias
            else:
                h = torch.baddbmm(bias, h, W)
            if layer < n_layers - 1:
                h = act(h)
        return h[..., 0]

    def unpack(self, theta):
        """Split flat parameters into scikit-learn's ``coefs_`` and ``intercepts_``.

        Parameters
        ----------
        theta : array-like of shape (Q,)

        Returns
        -------
        coefs : list of ndarray of shape (n_in, n_out)
        intercepts : list of ndarray of shape (n_out,)
        """
        theta = np.asarray(theta)
        coefs, intercepts = [], []
        for n_in, n_out, w, b in self._slices():
            coefs.append(theta[w].reshape(n_in, n_out))
            intercepts.append(theta[b].copy())
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
        """Glorot-uniform weights and zero biases, as ``MLPRegressor`` starts.

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
