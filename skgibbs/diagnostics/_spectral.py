"""Lag windows, autocovariance (3.1), spectral variance (3.2) of paper 003 and the MCSE it gives.

One chain, time first: ``x`` of shape ``(n,)`` or ``(n, ...)``.
"""

import numpy as np

__all__ = ["LAG_WINDOWS", "lag_window", "autocovariance", "spectral_variance", "mcse"]


def _triangular(u):
    return np.clip(1.0 - np.abs(u), 0.0, None)


def _tukey_hanning(u):
    return np.where(np.abs(u) <= 1.0, 0.5 * (1.0 + np.cos(np.pi * u)), 0.0)


def _flat_top(u):
    # paper 003 §3: w = 1 on [-1/2, 1/2], falling linearly to 0 at |u| = 1
    return np.clip(2.0 * (1.0 - np.abs(u)), 0.0, 1.0)


def _rectangular(u):
    return (np.abs(u) <= 1.0).astype(float)


LAG_WINDOWS = {
    "triangular": _triangular,
    "bartlett": _triangular,
    "tukey-hanning": _tukey_hanning,
    "flat-top": _flat_top,
    "rectangular": _rectangular,
}


def lag_window(lag_window="triangular", truncation=10):
    """Weights ``w_n(s) = w(s / b_n)`` of a lag window for ``s = 0, ..., b_n - 1``.

    Parameters
    ----------
    lag_window : {"triangular", "bartlett", "tukey-hanning", "flat-top", "rectangular"} or callable
        The kernel ``w`` on ``[-1, 1]``: ``"triangular"`` (= ``"bartlett"``)
        is ``1 - |u|``; ``"tukey-hanning"`` is ``(1 + cos(pi u)) / 2``;
        ``"flat-top"`` is 1 on ``[-1/2, 1/2]`` and ``2 (1 - |u|)`` beyond,
        the window paper 003 §3 assumes; ``"rectangular"`` is 1 (the
        truncated periodogram). A callable gets the array ``s / b_n`` and
        returns the weights.
    truncation : int
        ``b_n >= 1``: lags ``|s| < b_n`` enter the estimator.

    Returns
    -------
    ndarray of shape (truncation,)

    Examples
    --------
    >>> lag_window("triangular", 4)
    array([1.  , 0.75, 0.5 , 0.25])
    >>> lag_window("flat-top", 4)
    array([1. , 1. , 1. , 0.5])
    """
    return lag_weights(lag_window, truncation)


def lag_weights(window, truncation):
    b = _check_truncation(truncation)
    if callable(window):
        kernel = window
    elif isinstance(window, str) and window in LAG_WINDOWS:
        kernel = LAG_WINDOWS[window]
    else:
        raise ValueError(f"lag_window must be one of {sorted(LAG_WINDOWS)} or a callable, got {window!r}.")
    w = np.asarray(kernel(np.arange(b) / b), dtype=float)
    if w.shape != (b,) or not np.all(np.isfinite(w)):
        raise ValueError("A callable lag window must map an array of lags to finite weights of the same shape.")
    return w


def _check_truncation(truncation):
    if isinstance(truncation, bool) or not isinstance(truncation, (int, np.integer)) or truncation < 1:
        raise ValueError(f"truncation must be a positive integer (the number of lags b_n), got {truncation!r}.")
    return int(truncation)


def _as_chain(x, min_length=2, axis=0):
    x = np.asarray(x, dtype=float)
    if x.ndim <= axis or x.shape[axis] < min_length:
        raise ValueError(f"x needs at least {min_length} time points along axis {axis}, got shape {x.shape}.")
    if not np.all(np.isfinite(x)):
        raise ValueError("x holds NaN or infinite values; drop or repair those draws first.")
    return x


def autocovariance(x, max_lag=None):
    """Sample autocovariance (3.1) of paper 003, by FFT.

    ``rho_n(s) = n^{-1} sum_{j=0}^{n-s-1} (x_j - xbar)(x_{j+s} - xbar)``,
    the biased (divisor ``n``) estimator, which keeps the spectral variance
    estimator non-negative for the triangular window.

    Parameters
    ----------
    x : array-like of shape (n,) or (n, ...)
        Time along axis 0.
    max_lag : int, default=None
        Largest lag returned; ``n - 1`` when None.

    Returns
    -------
    ndarray of shape (max_lag + 1,) or (max_lag + 1, ...)

    Examples
    --------
    >>> autocovariance([1.0, 2.0, 3.0, 4.0])
    array([ 1.25  ,  0.3125, -0.375 , -0.5625])
    """
    x = _as_chain(x)
    n = x.shape[0]
    max_lag = n - 1 if max_lag is None else min(int(max_lag), n - 1)
    centred = x - x.mean(0)
    size = 1 << int(np.ceil(np.log2(2 * n)))  # zero padding: no circular wrap-around
    spec = np.fft.rfft(centred, size, axis=0)
    acov = np.fft.irfft(spec * np.conj(spec), size, axis=0)[: max_lag + 1]
    return acov / n


def spectral_variance(x, lag_window="triangular", truncation=None):
    """Spectral variance estimator ``V_n`` (3.2) of paper 003.

    ``V_n(h) = sum_{|s| < b_n} w(s / b_n) rho_n(|s|)``, an estimate of the
    asymptotic variance ``sigma^2`` in the Markov chain CLT
    ``sqrt(n) (pi_n(h) - pi(h)) -> N(0, sigma^2)``.

    Parameters
    ----------
    x : array-like of shape (n,) or (n, ...)
        Values ``h(X_0), ..., h(X_{n-1})`` in time order (time along axis 0).
    lag_window : str or callable, default="triangular"
        Lag window, see :func:`lag_window`.
    truncation : int, default=None
        ``b_n``; ``floor(sqrt(n))`` when None.

    Returns
    -------
    float or ndarray of shape ``x.shape[1:]``

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(1).normal(size=10000)
    >>> round(float(spectral_variance(x)), 1)     # i.i.d. N(0, 1): sigma^2 = 1
    1.0
    """
    x = _as_chain(x)
    n = x.shape[0]
    b = int(np.sqrt(n)) if truncation is None else _check_truncation(truncation)
    b = min(b, n)
    w = lag_weights(lag_window, b)
    acov = autocovariance(x, b - 1)
    w = w.reshape((b,) + (1,) * (acov.ndim - 1))
    out = acov[0] + 2.0 * np.sum(w[1:] * acov[1:], axis=0)
    return float(out) if np.ndim(out) == 0 else out


def mcse(x, lag_window="triangular", truncation=None):
    """Monte Carlo standard error of the chain average, ``sqrt(V_n / n)``.

    ``V_n`` is the spectral variance (3.2) of paper 003, so this is the
    standard deviation of ``pi_n(h)`` that the Markov chain CLT predicts.

    Parameters
    ----------
    x : array-like of shape (n,) or (n, ...)
        One chain, time along axis 0.
    lag_window : str or callable, default="triangular"
        Lag window, see :func:`lag_window`.
    truncation : int, default=None
        ``b_n``; ``floor(sqrt(n))`` when None.

    Returns
    -------
    float or ndarray of shape ``x.shape[1:]``
        NaN where ``V_n < 0``, which windows other than the triangular one
        allow on short chains.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(1).normal(size=10000)
    >>> round(float(mcse(x)), 3)                  # 1 / sqrt(10000)
    0.01
    """
    x = _as_chain(x)
    variance = np.asarray(spectral_variance(x, lag_window, truncation))
    out = np.sqrt(np.where(variance >= 0, variance, np.nan) / x.shape[0])
    return float(out) if np.ndim(out) == 0 else out
