r"""The empirical spectral variance (3.2) of paper 003 as a training objective.

:func:`skgibbs.diagnostics.spectral_variance` estimates the asymptotic
variance of a chain average in NumPy; here the same estimator is written in
torch, differentiably, for the empirical spectral variance minimisation
(ESVM, Alg. 1) of a neural control variate, and as a quadratic form for the
polynomial control variates, whose ESVM solution is a linear system. The lag
windows are those of :func:`skgibbs.diagnostics.lag_window`.
"""

import numpy as np
import torch
from scipy.signal import fftconvolve

from ..diagnostics import spectral_variance
from ..diagnostics._spectral import lag_weights

__all__ = ["default_truncation", "spectral_variance_torch", "windowed", "esvrr"]


def default_truncation(n):
    """Default truncation point ``b_n = floor(sqrt(n))``, as in :func:`skgibbs.diagnostics.spectral_variance`.

    Examples
    --------
    >>> default_truncation(10000)
    100
    """
    return max(1, int(np.sqrt(n)))


def _truncation(n, truncation):
    b = default_truncation(n) if truncation is None else int(truncation)
    return min(b, n)


def spectral_variance_torch(h, lag_window="triangular", truncation=None):
    r"""Spectral variance estimator ``V_n(h)`` (3.2), differentiable in torch.

    Parameters
    ----------
    h : torch.Tensor of shape (n,) or (n, k)
        Values ``h(X_0), ..., h(X_{n-1})`` in time order (time along dim 0);
        each column of a 2-D input is a separate series.
    lag_window : str or callable, default="triangular"
        Lag window, see :func:`skgibbs.diagnostics.lag_window`.
    truncation : int, default=None
        ``b_n``; ``floor(sqrt(n))`` when None, at most ``n``.

    Returns
    -------
    torch.Tensor of shape () or (k,)

    Notes
    -----
    ``V_n(h) = sum_{|s| < b_n} w(s / b_n) rho_n(|s|)`` with the biased sample
    autocovariance (3.1)
    ``rho_n(s) = n^{-1} sum_{k=0}^{n-s-1} (h_k - hbar)(h_{k+s} - hbar)``,
    computed for all lags ``s < b_n`` by one zero-padded FFT (no circular
    wrap-around), ``O(n log n)``. Equal to
    :func:`skgibbs.diagnostics.spectral_variance` up to rounding.

    Examples
    --------
    >>> import torch
    >>> h = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64, requires_grad=True)
    >>> v = spectral_variance_torch(h, truncation=2)     # 1.25 + 2 * 0.5 * 0.3125
    >>> v.item()
    1.5625
    >>> v.backward(); h.grad.shape
    torch.Size([4])
    """
    n = h.shape[0]
    if n < 2:
        raise ValueError(f"The spectral variance needs at least 2 time points, got n={n}.")
    b = _truncation(n, truncation)
    w = torch.as_tensor(lag_weights(lag_window, b), dtype=h.dtype, device=h.device)
    weights = torch.cat([w[:1], 2.0 * w[1:]])  # (3.2): lags s and -s together
    c = h - h.mean(0)
    size = 1 << int(np.ceil(np.log2(n + b)))  # >= n + b - 1: lags < b do not wrap around
    spec = torch.fft.rfft(c, size, dim=0)
    acov = torch.fft.irfft(spec.real**2 + spec.imag**2, size, dim=0)[:b] / n  # (3.1), s = 0..b-1
    return torch.tensordot(weights, acov, dims=1)


def windowed(x, lag_window="triangular", truncation=None):
    """Apply the lag-window Toeplitz matrix ``W_{kl} = w(|k - l| / b_n)`` along time.

    ``V_n(h) = hc^T W hc / n`` with ``hc`` the centred series, so for the
    centred columns ``G`` of a design and ``f`` the matrix ``G^T W G / n``
    and the vector ``G^T W f / n`` are the (cross) spectral variances: the
    ESVM objective of a linear control variate is the quadratic
    ``V_n(f) - 2 beta^T G^T W f / n + beta^T G^T W G beta / n``.

    Parameters
    ----------
    x : ndarray of shape (n,) or (n, k)
    lag_window : str or callable, default="triangular"
        Lag window, see :func:`skgibbs.diagnostics.lag_window`.
    truncation : int, default=None
        ``b_n``; ``floor(sqrt(n))`` when None.

    Returns
    -------
    ndarray of the shape of ``x``

    Examples
    --------
    >>> import numpy as np
    >>> from skgibbs.diagnostics import spectral_variance
    >>> h = np.random.default_rng(0).normal(size=50)
    >>> hc = h - h.mean()
    >>> bool(np.isclose(hc @ windowed(hc, truncation=5) / 50, spectral_variance(h, truncation=5)))
    True
    """
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[0]
    b = _truncation(n, truncation)
    w = lag_weights(lag_window, b)
    kernel = np.concatenate([w[:0:-1], w])  # w(|s| / b) for s = -(b - 1), ..., b - 1
    kernel = kernel.reshape((-1,) + (1,) * (x.ndim - 1))
    return fftconvolve(x, kernel, mode="same", axes=0)


def esvrr(y, residual, lag_window="triangular", truncation=None):
    """Empirical spectral variance reduction ratio ``V_n(f) / V_n(f - g)`` (paper 003 §6).

    Parameters
    ----------
    y : array-like of shape (n,)
        ``f(X_0), ..., f(X_{n-1})`` in time order.
    residual : array-like of shape (n,)
        ``f(X_k) - g(X_k)`` on the same chain.
    lag_window : str or callable, default="triangular"
        Lag window, see :func:`skgibbs.diagnostics.lag_window`.
    truncation : int, default=None
        ``b_n`` for both; ``floor(sqrt(n))`` when None.

    Returns
    -------
    float
        Greater is better; 1 is no reduction. ``inf`` when the residual has
        no variance left and ``f`` has some; 1 when neither has any.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.random.default_rng(0).normal(size=400)
    >>> round(esvrr(y, 0.5 * y), 6)
    4.0
    """
    b = _truncation(len(y), truncation)
    num = float(spectral_variance(y, lag_window, b))
    den = float(spectral_variance(residual, lag_window, b))
    scale = max(abs(num), 1e-300)
    if abs(den) <= 1e-14 * scale:  # nothing left (up to rounding)
        return np.inf if abs(num) > 1e-300 else 1.0
    return num / den
