"""Metrics of prediction intervals: coverage, mean width and interval score.

The functions take arrays and return one value per confidence level.
Prediction intervals have MAPIE's shape ``(n, 2, n_levels)``: lower bounds
in ``[:, 0]``, upper bounds in ``[:, 1]``, one slice per level; ``(n, 2)``
is read as one level. Each takes ``sample_weight``, the weight of each row:
the mean over the rows becomes a weighted mean, and a row of integer weight
``k`` counts as the row repeated ``k`` times.
"""

import numpy as np

from .._data import fit_weights
from .._levels import check_levels
from ._validation import check_pis, check_y

__all__ = ["coverage_score", "mean_width_score", "interval_score"]


def _row_mean(values, sample_weight):
    """Mean of ``values`` (n, n_levels) over the rows, weighted by ``sample_weight`` when given."""
    # no weights, or weights all 1: the unweighted arithmetic, bit for bit
    w = fit_weights(sample_weight, values.shape[0])
    if w is None:
        return np.mean(values, axis=0)
    return w @ values / w.sum()


def coverage_score(y_true, y_pis, *, sample_weight=None):
    """Fraction of targets inside their prediction interval, per confidence level.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_pis : array-like of shape (n, 2, n_levels) or (n, 2)
        Lower and upper bounds; ``(n, 2)`` is one level.
    sample_weight : array-like of shape (n,), default=None
        Weight of each row, finite and ``>= 0``, not all 0; the fraction
        becomes ``sum_i w_i 1[...] / sum_i w_i``. An integer weight ``k``
        counts the row ``k`` times and a weight of 0 drops it. None, or
        weights all 1, give the unweighted fraction.

    Returns
    -------
    ndarray of shape (n_levels,)
        ``mean_i 1[lower_i <= y_i <= upper_i]`` for each level (bounds
        included, as MAPIE).

    Examples
    --------
    >>> coverage_score([0.0, 1.0, 5.0], [[-1, 1], [0, 2], [0, 2]])
    array([0.66666667])

    Integer weights give the coverage of the rows repeated that many times:

    >>> coverage_score([0.0, 1.0, 5.0], [[-1, 1], [0, 2], [0, 2]], sample_weight=[3, 0, 1])
    array([0.75])
    >>> coverage_score([0.0, 0.0, 0.0, 5.0], [[-1, 1], [-1, 1], [-1, 1], [0, 2]])
    array([0.75])
    """
    pis = check_pis(y_pis)
    y = check_y(y_true, pis)
    return _row_mean((pis[:, 0] <= y) & (y <= pis[:, 1]), sample_weight)


def mean_width_score(y_pis, *, sample_weight=None):
    """Mean width of the prediction intervals, per confidence level.

    Parameters
    ----------
    y_pis : array-like of shape (n, 2, n_levels) or (n, 2)
    sample_weight : array-like of shape (n,), default=None
        Weight of each row, as in :func:`coverage_score`: the weighted mean
        ``sum_i w_i (upper_i - lower_i) / sum_i w_i``.

    Returns
    -------
    ndarray of shape (n_levels,)
        ``mean_i (upper_i - lower_i)``.

    Examples
    --------
    >>> mean_width_score([[-1, 1], [0, 3]])
    array([2.5])
    """
    pis = check_pis(y_pis)
    return _row_mean(pis[:, 1] - pis[:, 0], sample_weight)


def interval_score(y_true, y_pis, confidence_level, *, sample_weight=None):
    r"""Mean interval (Winkler) score, per confidence level; lower is better.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_pis : array-like of shape (n, 2, n_levels) or (n, 2)
    confidence_level : float or array-like of shape (n_levels,)
        Nominal level ``1 - a`` of each slice of ``y_pis``; one float
        applies to every slice.
    sample_weight : array-like of shape (n,), default=None
        Weight of each row, as in :func:`coverage_score`: the weighted mean
        of the rows' scores.

    Returns
    -------
    ndarray of shape (n_levels,)

    Notes
    -----
    For an interval :math:`[l, u]` at level :math:`1 - a`,

    .. math::

        S_a(l, u; y) = (u - l) + \frac{2}{a}(l - y)\,1[y < l]
                       + \frac{2}{a}(y - u)\,1[y > u],

    a proper scoring rule for the central interval (Gneiting and Raftery,
    2007, §6.2): it rewards narrow intervals and charges ``2 / a`` per unit of
    miss.

    Examples
    --------
    >>> interval_score([0.0, 3.0], [[-1, 1], [0, 2]], confidence_level=0.8)
    array([7.])
    """
    pis = check_pis(y_pis)
    y = check_y(y_true, pis)
    levels = check_levels(confidence_level)
    if len(levels) not in (1, pis.shape[2]):
        raise ValueError(
            f"confidence_level must be a float or hold one level per slice of y_pis, got {levels}."
        )
    a = 1.0 - levels
    lower, upper = pis[:, 0], pis[:, 1]
    score = (upper - lower) + 2 / a * np.maximum(lower - y, 0) + 2 / a * np.maximum(y - upper, 0)
    return _row_mean(score, sample_weight)
