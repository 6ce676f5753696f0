"""Markov chain diagnostics: spectral variance, effective sample size, R-hat.

Pure NumPy functions, arrays in and arrays out, vectorised over series.

* One chain, time first: :func:`autocovariance`, :func:`spectral_variance`
  and :func:`mcse` take ``x`` of shape ``(n,)`` or ``(n, ...)``, every
  trailing index a separate scalar series.
* Several chains, chains first: :func:`effective_sample_size` and
  :func:`rhat` take ``x`` of shape ``(n_chains, n_draws, ...)`` (or one
  chain ``(n_draws,)``), as ArviZ and :class:`~skgibbs.samplers.ChainResult`
  lay draws out.

The spectral variance estimator is (3.2) of Belomestny, Goldman, Naumov and
Samsonov ("paper 003"), the ingredient of the empirical spectral variance
minimisation behind :mod:`skgibbs.control_variates`.
"""

import numpy as np
from scipy.special import ndtri
from scipy.stats import rankdata

__all__ = [
    "LAG_WINDOWS",
    "lag_window",
    "autocovariance",
    "spectral_variance",
    "mcse",
    "effective_sample_size",
    "ess",
    "rhat",
]


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


def lag_window(window="triangular", truncation=10):
    """Weights ``w_n(s) = w(s / b_n)`` of a lag window for ``s = 0, ..., b_n - 1``.

    Parameters
    ----------
    window : {"triangular", "bartlett", "tukey-hanning", "flat-top", "rectangular"} or callable
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
    b = _check_truncation(truncation)
    if callable(window):
        kernel = window
    elif window in LAG_WINDOWS:
        kernel = LAG_WINDOWS[window]
    else:
        raise ValueError(f"window must be one of {sorted(LAG_WINDOWS)} or a callable, got {window!r}.")
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


def spectral_variance(x, window="triangular", truncation=None):
    """Spectral variance estimator ``V_n`` (3.2) of paper 003.

    ``V_n(h) = sum_{|s| < b_n} w(s / b_n) rho_n(|s|)``, an estimate of the
    asymptotic variance ``sigma^2`` in the Markov chain CLT
    ``sqrt(n) (pi_n(h) - pi(h)) -> N(0, sigma^2)``.

    Parameters
    ----------
    x : array-like of shape (n,) or (n, ...)
        Values ``h(X_0), ..., h(X_{n-1})`` in time order (time along axis 0).
    window : str or callable, default="triangular"
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
    w = lag_window(window, b)
    acov = autocovariance(x, b - 1)
    w = w.reshape((b,) + (1,) * (acov.ndim - 1))
    out = acov[0] + 2.0 * np.sum(w[1:] * acov[1:], axis=0)
    return float(out) if np.ndim(out) == 0 else out


def mcse(x, window="triangular", truncation=None):
    """Monte Carlo standard error of the chain average, ``sqrt(V_n / n)``.

    ``V_n`` is the spectral variance (3.2) of paper 003, so this is the
    standard deviation of ``pi_n(h)`` that the Markov chain CLT predicts.

    Parameters
    ----------
    x : array-like of shape (n,) or (n, ...)
        One chain, time along axis 0.
    window : str or callable, default="triangular"
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
    variance = np.asarray(spectral_variance(x, window, truncation))
    out = np.sqrt(np.where(variance >= 0, variance, np.nan) / x.shape[0])
    return float(out) if np.ndim(out) == 0 else out


def _as_chains(x, min_draws=4):
    """``(m, n, P)`` view of chains-first draws and the trailing shape."""
    x = np.asarray(x, dtype=float)
    x = x[None] if x.ndim == 1 else x
    _as_chain(x, min_draws, axis=1)
    return x.reshape(x.shape[0], x.shape[1], -1), x.shape[2:]


def _split(x):
    """Each chain cut into its first and last half (the middle draw of an odd length is dropped)."""
    half = x.shape[1] // 2
    return np.concatenate([x[:, :half], x[:, -half:]], axis=0)


def _rank_normalize(x):
    """Normal scores of the ranks pooled over all chains (Vehtari et al., 2021, eq. 14)."""
    m, n, p = x.shape
    ranks = rankdata(x.reshape(m * n, p), axis=0)  # ties get their average rank
    return ndtri((ranks - 0.375) / (m * n + 0.25)).reshape(m, n, p)


def _shape_out(values, trailing):
    values = values.reshape(trailing)
    return float(values) if values.ndim == 0 else values


def _ess(x):
    """Multi-chain ESS of each column of ``x`` (m, n, P), as Stan computes it."""
    m, n, p = x.shape
    acov = autocovariance(np.moveaxis(x, 1, 0))  # (n, m, P), divisor n
    within = acov[0].mean(0) * n / (n - 1)  # W: mean of the chains' variances
    var_plus = within * (n - 1) / n + (x.mean(1).var(0, ddof=1) if m > 1 else 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = 1.0 - (within - acov.mean(1)) / var_plus  # combined autocorrelation
    rho[0] = 1.0
    # Geyer (1992): sums of adjacent pairs are positive and non-increasing for
    # a reversible chain; keep the pairs before the first non-positive one
    # and replace them by their running minimum.
    n_pairs = (n - 1) // 2
    pairs = rho[: 2 * n_pairs].reshape(n_pairs, 2, p).sum(1)
    stop = pairs <= 0
    stop[0] = False
    last = np.where(stop.any(0), stop.argmax(0), n_pairs - 1)
    kept = np.arange(n_pairs)[:, None] < last
    tau = -1.0 + 2.0 * np.where(kept, np.minimum.accumulate(pairs, axis=0), 0.0).sum(0)
    # the even term of the truncating pair still counts where it is positive
    cols = np.arange(p)
    even = rho[2 * last, cols]
    tau = tau + np.where(pairs[last, cols] > 0, even, np.maximum(even, 0.0))
    tau = np.maximum(tau, 1.0 / np.log10(m * n))
    return np.where(var_plus > 0, m * n / tau, np.nan)


def effective_sample_size(x, *, split=False, rank_normalize=False):
    """Effective sample size of the mean over one or several chains.

    The multi-chain estimator of Stan and ArviZ: the autocorrelation at lag
    ``t`` combines the chains as ``1 - (W - mean_j acov_j(t)) / var_plus``,
    with ``W`` the mean within-chain variance and ``var_plus`` the pooled
    variance estimate of the split-R-hat; the sum of autocorrelations is
    truncated by Geyer's initial positive sequence and made monotone by his
    initial monotone sequence, and ``ESS = m n / tau``.

    Parameters
    ----------
    x : array-like of shape (n_draws,), (n_chains, n_draws) or (n_chains, n_draws, ...)
        Draws, chains first; every trailing index is a separate quantity.
        At least 4 draws per chain, all finite.
    split : bool, default=False
        Cut every chain in halves first, so that a drift within a chain
        lowers the ESS (ArviZ's ``method="mean"`` / ``"bulk"``).
    rank_normalize : bool, default=False
        Replace the draws by the normal scores of their pooled ranks first
        (Vehtari et al., 2021): the "bulk" ESS, defined for heavy tails.
        ``split=True, rank_normalize=True`` is ArviZ's default ``"bulk"``.

    Returns
    -------
    float or ndarray of shape ``x.shape[2:]``
        NaN for a series that is constant over all chains.

    References
    ----------
    Geyer, C. J. (1992). Practical Markov chain Monte Carlo. Statist. Sci. 7.
    Vehtari, A., Gelman, A., Simpson, D., Carpenter, B., Bürkner, P.-C.
    (2021). Rank-normalization, folding, and localization: an improved
    R-hat for assessing convergence of MCMC. Bayesian Anal. 16.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(4, 1000))             # independent draws: ESS about m n
    >>> bool(3600 < effective_sample_size(x) < 4400)
    True
    >>> e = effective_sample_size(np.stack([x, np.cumsum(x, axis=1)], axis=-1))
    >>> e.shape, bool(e[1] < 10)                   # a random walk: almost no information
    ((2,), True)
    """
    x, trailing = _as_chains(x)
    if split:
        x = _split(x)
    if rank_normalize:
        x = _rank_normalize(x)
    return _shape_out(_ess(x), trailing)


ess = effective_sample_size


def _rhat(x):
    n = x.shape[1]
    between = n * x.mean(1).var(0, ddof=1)
    within = x.var(1, ddof=1).mean(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt(((n - 1) / n * within + between / n) / within)


def rhat(x, *, method="rank"):
    """Potential scale reduction factor R-hat of several chains.

    ``R = sqrt(var_plus / W)`` with ``W`` the mean within-chain variance and
    ``var_plus = (n - 1) / n W + B / n`` (``B / n`` the variance of the chain
    means), computed on the chains cut in halves (split-R-hat, Gelman et al.,
    BDA3 §11.4).

    Parameters
    ----------
    x : array-like of shape (n_draws,) or (n_chains, n_draws, ...)
        Draws, chains first; every trailing index is a separate quantity.
        At least 4 draws per chain, all finite.
    method : {"rank", "split"}, default="rank"
        ``"split"``: the split-R-hat of BDA3 on the raw draws.
        ``"rank"``: the rank-normalised split-R-hat of Vehtari et al.
        (2021), the larger of the split-R-hat of the rank-normalised draws
        (bulk) and of the rank-normalised distances to the median (tails),
        as Stan and ArviZ (default) report it.

    Returns
    -------
    float or ndarray of shape ``x.shape[2:]``
        Close to 1 when the chains agree; above 1.01 is the warning level
        Vehtari et al. recommend. NaN for a constant series.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(size=(4, 1000))
    >>> round(rhat(x), 2)
    1.0
    >>> x[0] += 2.0                                  # one chain elsewhere
    >>> bool(rhat(x) > 1.1)
    True
    """
    if method not in ("rank", "split"):
        raise ValueError(f"method must be 'rank' or 'split', got {method!r}.")
    x, trailing = _as_chains(x)
    x = _split(x)
    if method == "split":
        return _shape_out(_rhat(x), trailing)
    folded = np.abs(x - np.median(x.reshape(-1, x.shape[2]), axis=0))
    bulk, tail = _rhat(_rank_normalize(x)), _rhat(_rank_normalize(folded))
    return _shape_out(np.fmax(bulk, tail), trailing)
