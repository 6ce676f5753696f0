"""Model-selection criteria from posterior draws (paper 004).

Pure functions; ``log_lik`` arrays have shape ``(S, n)``: S draws, n
examples.
"""

from typing import NamedTuple

import numpy as np
from scipy.special import logsumexp

__all__ = ["gaussian_log_likelihood", "functional_variance", "waic", "WAICResult"]


def gaussian_log_likelihood(y, draws, noise_variance):
    """``log N(y_i; f_k(x_i), sigma^2)`` for every draw and example.

    Parameters
    ----------
    y : array-like of shape (n,)
    draws : array-like of shape (S, n)
    noise_variance : float

    Returns
    -------
    ndarray of shape (S, n)
    """
    r = np.asarray(y, dtype=float)[None, :] - np.asarray(draws, dtype=float)
    return -0.5 * r**2 / noise_variance - 0.5 * np.log(2 * np.pi * noise_variance)


def functional_variance(log_lik):
    """Functional variance ``sum_i Var_theta[log p(y_i | theta)]`` ((5), (13) of paper 004).

    The variance over draws uses the divisor S, as (13) does.

    Parameters
    ----------
    log_lik : array-like of shape (S, n)

    Returns
    -------
    float

    Examples
    --------
    >>> functional_variance([[0.0, 1.0], [2.0, 1.0]])
    1.0
    """
    L = np.asarray(log_lik, dtype=float)
    return float(np.sum(np.var(L, axis=0)))


class WAICResult(NamedTuple):
    """WAIC on the deviance-free log scale of ArviZ (``elpd``)."""

    elpd_waic: float
    p_waic: float
    waic: float  # -2 * elpd_waic
    elpd_pointwise: np.ndarray
    p_pointwise: np.ndarray


def waic(log_lik):
    """Widely applicable information criterion (Watanabe, 2010).

    ``elpd_waic = sum_i log mean_k p(y_i | theta_k) - p_waic`` with
    ``p_waic = sum_i Var_k log p(y_i | theta_k)`` (sample variance, divisor
    S - 1, as ArviZ).

    Parameters
    ----------
    log_lik : array-like of shape (S, n)

    Returns
    -------
    WAICResult

    Examples
    --------
    >>> import numpy as np
    >>> res = waic(np.zeros((4, 3)))
    >>> res.elpd_waic, res.p_waic
    (0.0, 0.0)
    """
    L = np.asarray(log_lik, dtype=float)
    S = L.shape[0]
    lppd_i = logsumexp(L, axis=0) - np.log(S)
    p_i = np.var(L, axis=0, ddof=1) if S > 1 else np.zeros(L.shape[1])
    elpd_i = lppd_i - p_i
    elpd = float(np.sum(elpd_i))
    return WAICResult(elpd, float(np.sum(p_i)), -2.0 * elpd, elpd_i, p_i)
