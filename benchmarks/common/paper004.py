"""Data and models shared by the reproductions of paper 004 (Okuno & Yano).

§4.1: the overparameterised linear design ``X = U S V'`` with Haar orthogonal ``U`` (n x n) and ``V``
(p x n, ``V'V = I``). §4.2, §4.3: the one-hidden-layer tanh network
``g_theta(z) = <theta2, tanh(theta1 z + theta0)>`` without output bias (``p = M (d + 2)``), in float64,
and full-batch gradient descent on
``rho_alpha(theta) = (1/n) sum_i (y_i - g_theta(z_i))^2 + alpha |theta|^2``.
A flat parameter vector is ``(theta0 (M), theta1 (M x d, row-major), theta2 (M))``, the order in which
:class:`TanhNet` registers its parameters.
"""

import math
import time

import numpy as np
import torch

DTYPE = torch.float64


def timed(fn):
    """``(wall seconds, fn())``."""
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def haar_orthogonal(rng, rows, cols):
    """``rows x cols`` orthonormal columns, Haar: QR with the signs of ``diag(R)`` (Mezzadri 2007)."""
    Q, R = np.linalg.qr(rng.standard_normal((rows, cols)))
    return Q * np.sign(np.diag(R))


def singular_values(setting, n):
    """Spectra (i) ``s_i = sqrt(n)``, ``i <= 10``, else 0; (ii) ``sqrt(n) / i``; (iii) ``sqrt(n / i)``."""
    i = np.arange(1, n + 1, dtype=float)
    if setting == "i":
        return np.where(i <= 10, math.sqrt(n), 0.0)
    if setting == "ii":
        return math.sqrt(n) / i
    if setting == "iii":
        return np.sqrt(n / i)
    raise ValueError(f"unknown spectrum {setting!r}")


def linear_design(setting, n, p, rng):
    """``X = U diag(s) V'`` (n x p) and ``beta_0 ~ N(0, I / p)`` of §4.1."""
    U = haar_orthogonal(rng, n, n)
    V = haar_orthogonal(rng, p, n)
    X = (U * singular_values(setting, n)) @ V.T
    beta0 = rng.standard_normal(p) / math.sqrt(p)
    return X, beta0


def ridge_fit(X, Y, alpha):
    """Ridge estimates (2) of K responses ``Y`` (K, n) through the thin SVD: shape (K, p)."""
    n = X.shape[0]
    U, s, Vt = np.linalg.svd(X, full_matrices=False)
    return ((Y @ U) * (s / (s**2 + n * alpha))) @ Vt


def tanh(a):
    """``tanh`` as ``2 sigmoid(2a) - 1``: torch's float64 tanh is several times slower on CPU."""
    return 2.0 * torch.sigmoid(2.0 * a) - 1.0


class TanhNet(torch.nn.Module):
    """``g_theta`` of §4.2 as a module; ``theta``, a flat vector, loads into it unchanged."""

    def __init__(self, n_features, n_hidden, theta=None):
        super().__init__()
        self.theta0 = torch.nn.Parameter(torch.zeros(n_hidden, dtype=DTYPE))
        self.theta1 = torch.nn.Parameter(torch.zeros(n_hidden, n_features, dtype=DTYPE))
        self.theta2 = torch.nn.Parameter(torch.zeros(n_hidden, dtype=DTYPE))
        if theta is not None:
            torch.nn.utils.vector_to_parameters(torch.as_tensor(theta, dtype=DTYPE), self.parameters())

    def forward(self, z):
        return tanh(z @ self.theta1.T + self.theta0) @ self.theta2


def n_params(d, M):
    return M * (d + 2)


def unpack(theta, d, M):
    """Views ``theta0 (M,)``, ``theta1 (M, d)``, ``theta2 (M,)`` of a flat vector."""
    return theta[:M], theta[M : M * (d + 1)].view(M, d), theta[M * (d + 1) :]


def predict(theta, Z, M):
    """``g_theta(Z)`` for a flat ``theta`` (torch, no gradient)."""
    b, W, v = unpack(theta, Z.shape[1], M)
    return tanh(Z @ W.T + b) @ v


def objective_and_grad(theta, Z, y, M, alpha):
    """``rho_alpha(theta)`` and its gradient, by hand (one forward, one backward)."""
    n, d = Z.shape
    b, W, v = unpack(theta, d, M)
    h = torch.sigmoid(2.0 * (Z @ W.T + b)).mul_(2.0).sub_(1.0)  # tanh, (n, M)
    r = h @ v - y
    dg = (2.0 / n) * r
    da = torch.outer(dg, v) * (1.0 - h * h)
    grad = torch.cat([da.sum(0), (da.T @ Z).reshape(-1), h.T @ dg]) + 2.0 * alpha * theta
    return float(r @ r) / n + alpha * float(theta @ theta), grad


def gradient_descent(theta, Z, y, M, alpha, lr, n_iter=None, rtol=None, max_iter=None):
    """Full-batch GD on ``rho_alpha``: ``n_iter`` steps (§4.2), or to a relative change < ``rtol`` (§4.3).

    Returns the parameters, the iterations run and whether the stopping rule
    fired (always for a fixed count); a non-finite objective stops it unconverged.
    """
    theta = theta.clone()
    prev = None
    limit = n_iter if n_iter is not None else max_iter
    for t in range(limit):
        loss, grad = objective_and_grad(theta, Z, y, M, alpha)
        if not math.isfinite(loss):
            return theta, t, False
        if rtol is not None and prev is not None and abs(loss - prev) < rtol * abs(prev):
            return theta, t, True
        prev = loss
        theta -= lr * grad
    return theta, limit, n_iter is not None


def true_parameter(d, M):
    """``theta~_0`` with ``g = mu``: the first unit carries mu, the others are zero."""
    theta = torch.zeros(n_params(d, M), dtype=DTYPE)
    _, W, v = unpack(theta, d, M)
    W[0] = 0.5
    v[0] = 3.0
    return theta


def mu(Z):
    """Regression function of §4.2, ``3 tanh(<z, 1> / 2)``."""
    return 3.0 * torch.tanh(Z.sum(1) / 2.0)
