"""Confidence levels given as a float or a sequence of floats, checked in one place.

Every public entry point that takes a ``confidence_level`` (the regressors'
and the classifier's intervals, the interval metrics and scorers, the
control-variate bounds) validates it here, so that a bad level is rejected
with the same message everywhere.
"""

import math

import numpy as np
from scipy.special import ndtr, stdtr, stdtrit

__all__ = ["check_level", "check_levels", "mixture_quantiles"]


def _invalid(confidence_level):
    return ValueError(f"confidence_level must lie in (0, 1), got {confidence_level!r}.")


def check_levels(confidence_level):
    """``confidence_level`` as a 1-D float array with every entry in (0, 1).

    Parameters
    ----------
    confidence_level : float or array-like of floats
        One level or a flat sequence of levels.

    Returns
    -------
    ndarray of shape (n_levels,)

    Raises
    ------
    ValueError
        Naming ``confidence_level`` when an entry lies outside (0, 1), or
        the input is not a number or a flat sequence of numbers (strings
        are refused rather than parsed).

    Examples
    --------
    >>> check_levels(0.9)
    array([0.9])
    >>> check_levels([0.5, 0.95])
    array([0.5 , 0.95])
    >>> check_levels(1.0)
    Traceback (most recent call last):
    ...
    ValueError: confidence_level must lie in (0, 1), got 1.0.
    """
    if np.asarray(confidence_level).dtype.kind not in "biufO":  # "0.9" would parse as a float
        raise _invalid(confidence_level)
    try:
        levels = np.atleast_1d(np.asarray(confidence_level, dtype=float))
    except (TypeError, ValueError) as exc:
        raise _invalid(confidence_level) from exc
    # ``~(x > 0)`` rather than ``x <= 0`` so that NaN is refused too
    if levels.ndim != 1 or np.any(~(levels > 0) | ~(levels < 1)):
        raise _invalid(confidence_level)
    return levels


def check_level(confidence_level):
    """``confidence_level`` as one float in (0, 1), for methods that take a single level.

    The checks are those of :func:`check_levels`, with the same message;
    a sequence is refused as well.

    Parameters
    ----------
    confidence_level : float

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Naming ``confidence_level``.

    Examples
    --------
    >>> check_level(0.9)
    0.9
    >>> check_level("0.9")
    Traceback (most recent call last):
    ...
    ValueError: confidence_level must lie in (0, 1), got '0.9'.
    >>> check_level([0.5, 0.9])
    Traceback (most recent call last):
    ...
    ValueError: confidence_level must be one float in (0, 1), got [0.5, 0.9].
    """
    levels = check_levels(confidence_level)
    if np.ndim(confidence_level) != 0:
        raise ValueError(f"confidence_level must be one float in (0, 1), got {confidence_level!r}.")
    return float(levels[0])


def student_cdf(z, df):
    """The CDF of Student's t with ``df`` degrees of freedom at ``z``.

    For an odd integer ``df`` it is the finite sum of Abramowitz and Stegun
    26.7.3: with ``theta = arctan(z / sqrt(df))``, ``F = 1/2 + (theta +
    sin(theta) cos(theta) (1 + 2/3 cos^2(theta) + (2 4)/(3 5) cos^4(theta) +
    ...)) / pi``, the sum running to ``cos^(df - 3)``, where ``cos^2(theta) =
    df / (df + z^2)`` and ``sin(theta) cos(theta) = z sqrt(df) / (df + z^2)``.
    That is the same function as :func:`scipy.special.stdtr` (to rounding)
    at a tenth of the cost, which the bisection of
    :func:`mixture_quantiles` calls sixty times per component and column.
    Any other ``df`` goes to ``stdtr``.

    Examples
    --------
    >>> z = np.array([-3.0, 0.0, 0.5, 40.0])
    >>> bool(np.allclose(student_cdf(z, 5.0), stdtr(5.0, z), rtol=0, atol=1e-15))
    True
    """
    half = (df - 1.0) / 2.0
    if not (df >= 3 and half == int(half)):
        return stdtr(df, z)
    root = math.sqrt(df)
    z = np.clip(z, -1e150, 1e150)  # an infinite z gives 0 or 1, not inf * 0
    c2 = df / (df + z * z)  # cos^2(theta)
    term = np.ones_like(c2)
    total = term.copy()
    for k in range(1, int(half)):  # the terms up to cos^(df - 3)
        term *= c2 * (2.0 * k) / (2.0 * k + 1.0)
        total += term
    return 0.5 + (np.arctan(z / root) + (z / root) * c2 * total) / math.pi


def mixture_quantiles(F, sigma, probs, n_iter=60, weights=None, df=None):
    """Quantiles of the mixture of ``N(F[k, i], sigma^2)`` per column ``i``, equal weights unless given.

    Bisection on the mixture CDF, between the smallest and the largest
    component mean widened by ten of its standard deviations (for a t, by
    its quantile at ``1 - 1e-12`` if that is wider): the mixture has no
    closed-form quantile, and the bracket holds it.

    Parameters
    ----------
    F : ndarray of shape (n_components, n_columns)
        Means of the components.
    sigma : float or ndarray of shape (n_components,), (n_components, 1) or (n_components, n_columns)
        Standard deviation of the components: common, one per component, or
        one per component and column (a noise that varies with the inputs).
    probs : array-like of shape (n_probs,)
        Probabilities in (0, 1).
    n_iter : int, default=60
        Bisection steps; each halves the bracket.
    weights : ndarray of shape (n_components,), default=None
        Weights of the components, summing to 1; None for equal weights.
    df : float, default=None
        Components that are Student-t of ``df`` degrees of freedom, location
        ``F`` and scale ``sigma``, rather than normals.

    Returns
    -------
    ndarray of shape (n_probs, n_columns)

    Examples
    --------
    One component per column, so the quantiles are those of a normal:

    >>> mixture_quantiles(np.array([[1.0, 2.0]]), 1.0, [0.5, 0.975]).round(6)
    array([[1.      , 2.      ],
           [2.959964, 3.959964]])
    """
    sigma = np.asarray(sigma, dtype=float)
    if sigma.ndim and sigma.shape != F.shape:  # one per component: a column against F's rows
        sigma = sigma.reshape(-1, 1)
    width = 10.0 if df is None else max(10.0, float(stdtrit(df, 1.0 - 1e-12)))
    cdf_of = ndtr if df is None else (lambda z: student_cdf(z, df))
    lo = (F - width * sigma).min(0)
    hi = (F + width * sigma).max(0)
    lo = np.broadcast_to(lo, (len(probs), F.shape[1])).copy()
    hi = np.broadcast_to(hi, (len(probs), F.shape[1])).copy()
    p = np.asarray(probs)[:, None]
    for _ in range(n_iter):
        mid = 0.5 * (lo + hi)
        phi = cdf_of((mid[:, None, :] - F[None]) / sigma)
        cdf = phi.mean(1) if weights is None else np.einsum("k,pki->pi", weights, phi)
        below = cdf < p
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return 0.5 * (lo + hi)
