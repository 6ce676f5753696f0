"""Interval metrics and model-selection scorers.

The metric functions take arrays and return arrays. Prediction intervals have
MAPIE's shape ``(n, 2, n_levels)`` (lower bounds in ``[:, 0]``, upper bounds
in ``[:, 1]``, one slice per confidence level); ``(n, 2)`` is read as one
level. The scorers follow scikit-learn's ``scorer(estimator, X, y) -> float``
convention, greater is better, and accept a :class:`~sklearn.pipeline.Pipeline`
whose last step is a skgibbs estimator.
"""

from numbers import Real

import numpy as np
from scipy.special import logsumexp

from ._levels import check_levels
from .criteria import gaussian_log_likelihood

__all__ = [
    "coverage_score",
    "mean_width_score",
    "interval_score",
    "waic_scorer",
    "log_predictive_density_scorer",
    "make_coverage_scorer",
    "make_width_scorer",
    "make_interval_scorer",
]


def _check_pis(y_pis):
    """``y_pis`` as a float array of shape (n, 2, n_levels)."""
    pis = np.asarray(y_pis, dtype=float)
    if pis.ndim == 2:
        pis = pis[:, :, None]
    if pis.ndim != 3 or pis.shape[1] != 2:
        raise ValueError(f"y_pis must have shape (n, 2) or (n, 2, n_levels), got {np.shape(y_pis)}.")
    if not np.all(np.isfinite(pis)):
        raise ValueError("y_pis must hold finite numbers only.")
    return pis


def _check_y(y_true, pis):
    y = np.asarray(y_true, dtype=float)
    if y.ndim != 1 or y.shape[0] != pis.shape[0]:
        raise ValueError(f"y_true must have shape ({pis.shape[0]},) to match y_pis, got {np.shape(y_true)}.")
    return y[:, None]


def coverage_score(y_true, y_pis):
    """Fraction of targets inside their prediction interval, per confidence level.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_pis : array-like of shape (n, 2, n_levels) or (n, 2)
        Lower and upper bounds; ``(n, 2)`` is one level.

    Returns
    -------
    ndarray of shape (n_levels,)
        ``mean_i 1[lower_i <= y_i <= upper_i]`` for each level (bounds
        included, as MAPIE).

    Examples
    --------
    >>> coverage_score([0.0, 1.0, 5.0], [[-1, 1], [0, 2], [0, 2]])
    array([0.66666667])
    """
    pis = _check_pis(y_pis)
    y = _check_y(y_true, pis)
    return np.mean((pis[:, 0] <= y) & (y <= pis[:, 1]), axis=0)


def mean_width_score(y_pis):
    """Mean width of the prediction intervals, per confidence level.

    Parameters
    ----------
    y_pis : array-like of shape (n, 2, n_levels) or (n, 2)

    Returns
    -------
    ndarray of shape (n_levels,)
        ``mean_i (upper_i - lower_i)``.

    Examples
    --------
    >>> mean_width_score([[-1, 1], [0, 3]])
    array([2.5])
    """
    pis = _check_pis(y_pis)
    return np.mean(pis[:, 1] - pis[:, 0], axis=0)


def interval_score(y_true, y_pis, confidence_level):
    r"""Mean interval (Winkler) score, per confidence level; lower is better.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_pis : array-like of shape (n, 2, n_levels) or (n, 2)
    confidence_level : float or array-like of shape (n_levels,)
        Nominal level ``1 - a`` of each slice of ``y_pis``.

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
    pis = _check_pis(y_pis)
    y = _check_y(y_true, pis)
    levels = check_levels(confidence_level)
    if len(levels) not in (1, pis.shape[2]):
        raise ValueError(
            f"confidence_level must be a float or hold one level per slice of y_pis, got {levels}."
        )
    a = 1.0 - levels
    lower, upper = pis[:, 0], pis[:, 1]
    score = (upper - lower) + 2 / a * np.maximum(lower - y, 0) + 2 / a * np.maximum(y - upper, 0)
    return score.mean(axis=0)


# ---------------------------------------------------------------- scorers
def _split_pipeline(estimator):
    """``(transform, final_step)``; ``transform`` is None for a lone estimator."""
    if hasattr(estimator, "steps") and hasattr(estimator, "__getitem__"):
        return (estimator[:-1] if len(estimator.steps) > 1 else None), estimator[-1]
    return None, estimator


def _final_inputs(estimator, X):
    """The last step and ``X`` pushed through the steps before it."""
    transform, final = _split_pipeline(estimator)
    return final, (X if transform is None else transform.transform(X))


def waic_scorer(estimator, X=None, y=None):
    """Minus the WAIC generalization loss of a fitted skgibbs estimator (greater is better).

    The value is ``-estimator.generalization_loss_`` (Watanabe's WAIC per
    sample for the estimator's tempered posterior), computed by the
    estimator on the data it was fitted on: in
    :class:`~sklearn.model_selection.GridSearchCV` that is the training
    fold, and ``X`` and ``y`` (the test fold) are ignored.

    Parameters
    ----------
    estimator : fitted estimator or Pipeline
        Its last step has the fitted attribute ``generalization_loss_``.
    X, y : ignored

    Returns
    -------
    float
    """
    final = _split_pipeline(estimator)[1]
    if not hasattr(final, "generalization_loss_"):
        raise TypeError(
            "waic_scorer needs a fitted estimator with a generalization_loss_ attribute "
            f"(e.g. GibbsMLPRegressor), got {type(final).__name__}."
        )
    return -float(final.generalization_loss_)


def log_predictive_density_scorer(estimator, X, y):
    """Mean held-out log predictive density of a fitted skgibbs estimator (greater is better).

    ``(1/n) sum_i log mean_theta N(y_i; f_theta(x_i), noise_variance_)`` over
    the estimator's draws, on ``(X, y)``: the held-out quantity that
    ``-generalization_loss_`` (WAIC) estimates from the training data, so a
    cross-validation scored by it and the WAIC search rank on one scale.

    Parameters
    ----------
    estimator : fitted estimator or Pipeline
        Its last step has ``predict_samples`` and ``noise_variance_``.
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)

    Returns
    -------
    float
    """
    final, Xt = _final_inputs(estimator, X)
    if not (hasattr(final, "predict_samples") and hasattr(final, "noise_variance_")):
        raise TypeError(
            "log_predictive_density_scorer needs a fitted skgibbs estimator (predict_samples, "
            f"noise_variance_), got {type(final).__name__}."
        )
    draws = final.predict_samples(Xt).T  # (S, n)
    log_lik = gaussian_log_likelihood(np.asarray(y, dtype=float), draws, final.noise_variance_)
    return float(np.mean(logsumexp(log_lik, axis=0) - np.log(draws.shape[0])))


def _check_level(confidence_level):
    if not isinstance(confidence_level, Real) or not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must be a float in (0, 1), got {confidence_level!r}.")
    return float(confidence_level)


class _IntervalScorer:
    """``scorer(estimator, X, y)`` from ``predict_interval`` on the test data."""

    def __init__(self, kind, confidence_level):
        self.kind = kind
        self.confidence_level = _check_level(confidence_level)

    def __call__(self, estimator, X, y):
        final, Xt = _final_inputs(estimator, X)
        if not hasattr(final, "predict_interval"):
            raise TypeError(f"{type(final).__name__} has no predict_interval method to score.")
        _, y_pis = final.predict_interval(Xt, confidence_level=self.confidence_level)
        if self.kind == "coverage":
            return float(coverage_score(y, y_pis)[0])
        if self.kind == "width":
            return -float(mean_width_score(y_pis)[0])
        return -float(interval_score(y, y_pis, self.confidence_level)[0])

    def __repr__(self):
        return f"make_{self.kind}_scorer(confidence_level={self.confidence_level!r})"


def make_coverage_scorer(confidence_level=0.9):
    """Scorer: empirical coverage of ``predict_interval`` on the test data.

    Parameters
    ----------
    confidence_level : float in (0, 1), default=0.9

    Returns
    -------
    callable
        ``scorer(estimator, X, y) -> float``; for a Pipeline, ``X`` goes
        through ``pipe[:-1]`` and ``predict_interval`` of the last step.
        Coverage is closest to ``confidence_level`` at best, so rank
        candidates on it with care (it is not greater-is-better).

    Examples
    --------
    >>> scorer = make_coverage_scorer(0.9)
    >>> scorer
    make_coverage_scorer(confidence_level=0.9)
    """
    return _IntervalScorer("coverage", confidence_level)


def make_width_scorer(confidence_level=0.9):
    """Scorer: negative mean width of ``predict_interval`` (greater is better).

    Parameters
    ----------
    confidence_level : float in (0, 1), default=0.9

    Returns
    -------
    callable
        ``scorer(estimator, X, y) -> float``.

    Examples
    --------
    >>> make_width_scorer(0.8)
    make_width_scorer(confidence_level=0.8)
    """
    return _IntervalScorer("width", confidence_level)


def make_interval_scorer(confidence_level=0.9):
    """Scorer: negative mean interval score (:func:`interval_score`), greater is better.

    Parameters
    ----------
    confidence_level : float in (0, 1), default=0.9

    Returns
    -------
    callable
        ``scorer(estimator, X, y) -> float``.

    Examples
    --------
    >>> make_interval_scorer(0.9)
    make_interval_scorer(confidence_level=0.9)
    """
    return _IntervalScorer("interval", confidence_level)
