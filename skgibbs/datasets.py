"""Simulated data of the papers, generated locally (nothing is downloaded)."""

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["gap_regression_function", "make_gap_regression"]


def gap_regression_function(x):
    """True regression function of paper 000 §5.

    ``f(x) = 1.5 (x + 0.5)^2`` for ``x < 0`` and ``0.3 sin(10 x - 2) + 0.5``
    otherwise.

    Parameters
    ----------
    x : array-like

    Returns
    -------
    ndarray of the shape of ``x``

    Examples
    --------
    >>> float(gap_regression_function(-0.5))
    0.0
    """
    x = np.asarray(x, dtype=float)
    return np.where(x < 0, 1.5 * (x + 0.5) ** 2, 0.3 * np.sin(10 * x - 2) + 0.5)


def make_gap_regression(n_samples=10000, noise=0.02, random_state=None):
    """One-dimensional regression with a data gap (paper 000 §5).

    ``X ~ U([-0.8, -0.2] U [0.2, 0.8])`` (both intervals equally populated),
    ``y = f(X) + N(0, noise^2)`` with ``f`` from
    :func:`gap_regression_function`. No data fall in ``(-0.2, 0.2)``, where
    a good posterior should show large uncertainty.

    Parameters
    ----------
    n_samples : int, default=10000
    noise : float, default=0.02
        Standard deviation of the observation error.
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    X : ndarray of shape (n_samples, 1)
    y : ndarray of shape (n_samples,)

    Examples
    --------
    >>> X, y = make_gap_regression(100, random_state=0)
    >>> X.shape, bool(np.all(np.abs(X) >= 0.2))
    ((100, 1), True)
    """
    rng = check_random_state(random_state)
    u = rng.uniform(0.2, 0.8, size=n_samples)
    sign = np.where(rng.uniform(size=n_samples) < 0.5, -1.0, 1.0)
    x = sign * u
    y = gap_regression_function(x) + noise * rng.normal(size=n_samples)
    return x[:, None], y
