"""Simulated data of the papers, generated locally (nothing is downloaded)."""

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["gap_regression_function", "make_gap_regression", "make_sparse_sine", "sparse_sine_function"]


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


def sparse_sine_function(X, A):
    """True regression function of paper 001 §4: ``f(x) = sin(2 pi |A x|_2^2)``.

    Parameters
    ----------
    X : array-like of shape (n_samples, p)
    A : array-like of shape (m, p)

    Returns
    -------
    ndarray of shape (n_samples,)

    Examples
    --------
    >>> float(sparse_sine_function(np.array([[0.5]]), np.array([[1.0]]))[0])  # sin(pi / 2)
    1.0
    """
    Z = np.asarray(X, dtype=float) @ np.asarray(A, dtype=float).T
    return np.sin(2 * np.pi * (Z**2).sum(1))


def make_sparse_sine(n_samples=1000, n_features=100, noise=0.1, random_state=None):
    """Sparse high-dimensional regression of paper 001 §4.

    ``X ~ U([0, 1]^p)`` and ``y = sin(2 pi |A X|^2) + N(0, noise^2)`` with a
    random ``A`` of shape ``(2, p)`` whose rows each have two non-zero
    entries (standard normal, then scaled to unit Euclidean norm), so that at
    most four inputs matter. For ``p = 1`` the function is ``sin(2 pi x^2)``
    (``A = [[1]]``). The paper's noise ``N(0, 0.01)`` is ``noise=0.1``.

    Parameters
    ----------
    n_samples : int, default=1000
    n_features : int, default=100
        ``p``.
    noise : float, default=0.1
        Standard deviation of the observation error.
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    A : ndarray of shape (2, n_features), or (1, 1) for ``p = 1``
        The relevant inputs are the columns with a non-zero entry.

    Examples
    --------
    >>> X, y, A = make_sparse_sine(50, 10, random_state=0)
    >>> X.shape, A.shape, int((A != 0).sum(1).max())
    ((50, 10), (2, 10), 2)
    """
    rng = check_random_state(random_state)
    p = int(n_features)
    if p == 1:
        A = np.ones((1, 1))
    else:
        A = np.zeros((2, p))
        for row in A:
            cols = rng.choice(p, size=2, replace=False)
            row[cols] = rng.normal(size=2)
            row /= np.linalg.norm(row)
    X = rng.uniform(size=(n_samples, p))
    y = sparse_sine_function(X, A) + noise * rng.normal(size=n_samples)
    return X, y, A
