"""Interval and classification metrics, and model-selection scorers.

Regression. The metric functions take arrays and return arrays. Prediction
intervals have MAPIE's shape ``(n, 2, n_levels)`` (lower bounds in
``[:, 0]``, upper bounds in ``[:, 1]``, one slice per confidence level);
``(n, 2)`` is read as one level.

Classification. :func:`expected_calibration_error`,
:func:`maximum_calibration_error` and :func:`reliability_curve` bin the
top-label confidence ``max_c p_c(x)``; :func:`predictive_entropy` gives the
entropy of each predictive distribution. Probabilities are
``(n, n_classes)`` arrays whose columns follow ``labels`` (by default
``np.unique(y_true)``, the convention of :func:`sklearn.metrics.log_loss`),
or ``(n,)`` arrays of the probability of the positive (second) class of a
binary problem. The two proper scoring rules come from scikit-learn and are
not re-implemented here: :func:`sklearn.metrics.log_loss` (the negative log
likelihood, NLL) and :func:`sklearn.metrics.brier_score_loss`, which takes
multiclass probabilities with ``labels=`` since scikit-learn 1.7 (its
default ``scale_by_half="auto"`` halves the binary score, to ``[0, 1]``, and
keeps the multiclass sum over classes, in ``[0, 2]``).

The scorers follow scikit-learn's ``scorer(estimator, X, y) -> float``
convention, greater is better, and accept a :class:`~sklearn.pipeline.Pipeline`.
The interval scorers need a skgibbs regressor as its last step; the
classification scorers work with any fitted classifier that has
``predict_proba`` and ``classes_``.
"""

from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
from scipy.special import entr, logsumexp
from sklearn.metrics import brier_score_loss, log_loss, make_scorer

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
    "ReliabilityCurve",
    "reliability_curve",
    "expected_calibration_error",
    "maximum_calibration_error",
    "predictive_entropy",
    "make_ece_scorer",
    "make_mce_scorer",
    "neg_expected_calibration_error_scorer",
    "neg_maximum_calibration_error_scorer",
    "neg_brier_scorer",
    "neg_log_loss_scorer",
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


# --------------------------------------------------------- classification
_STRATEGIES = ("uniform", "quantile")
_ROW_SUM_TOL = 1e-6


def _check_proba(y_prob):
    """``y_prob`` as a float array of shape (n, n_classes); ``(n,)`` becomes ``[1 - p, p]``."""
    try:
        proba = np.asarray(y_prob, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"y_prob must be an array of probabilities, got {type(y_prob).__name__}.") from exc
    if proba.ndim not in (1, 2) or (proba.ndim == 2 and proba.shape[1] < 2):
        raise ValueError(
            "y_prob must have shape (n_samples, n_classes) with n_classes >= 2, or (n_samples,) for the "
            f"probability of the positive class of a binary problem; got shape {proba.shape}."
        )
    if proba.shape[0] == 0:
        raise ValueError("y_prob is empty: pass the probabilities of at least one sample.")
    if not np.all(np.isfinite(proba)):
        raise ValueError("y_prob must hold finite probabilities; it has NaN or infinite entries.")
    if proba.min() < 0 or proba.max() > 1:
        raise ValueError(
            f"y_prob must hold probabilities in [0, 1], got values in [{proba.min():g}, {proba.max():g}]; "
            "pass predict_proba output, not decision_function scores."
        )
    if proba.ndim == 1:
        return np.column_stack([1.0 - proba, proba])
    sums = proba.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > _ROW_SUM_TOL)
    if bad.size:
        raise ValueError(
            f"Each row of y_prob must sum to 1 (within {_ROW_SUM_TOL:g}); row {bad[0]} sums to "
            f"{sums[bad[0]]:.9g}. Normalise the rows, or pass predict_proba output."
        )
    return proba


def _check_targets(y_true, proba, labels):
    """``y_true`` as an array of shape (n,) and ``labels``, one per column of ``proba``."""
    n_samples, n_classes = proba.shape
    y = np.asarray(y_true)
    if y.ndim != 1 or y.shape[0] != n_samples:
        raise ValueError(f"y_true must have shape ({n_samples},) to match y_prob, got {np.shape(y_true)}.")
    if labels is None:
        labels = np.unique(y)
        if len(labels) != n_classes:
            raise ValueError(
                f"y_true holds {len(labels)} distinct labels but y_prob has {n_classes} columns, so the "
                "columns cannot be named from y_true; pass labels= (e.g. the estimator's classes_), one "
                "label per column of y_prob."
            )
        return y, labels
    labels = np.asarray(labels)
    if labels.ndim != 1 or len(labels) != n_classes:
        raise ValueError(
            f"labels must hold one label per column of y_prob ({n_classes}), got shape {labels.shape}."
        )
    if len(np.unique(labels)) != n_classes:
        raise ValueError(f"labels must not repeat a label, got {labels.tolist()}.")
    missing = ~np.isin(y, labels)
    if np.any(missing):
        raise ValueError(
            f"y_true holds labels that are not in labels: {np.unique(y[missing])[:5].tolist()}; "
            "labels must name every class of y_true."
        )
    return y, labels


def _check_binning(n_bins, strategy):
    if isinstance(n_bins, bool) or not isinstance(n_bins, Integral) or n_bins < 1:
        raise ValueError(f"n_bins must be an int >= 1, got {n_bins!r}.")
    if not isinstance(strategy, str) or strategy not in _STRATEGIES:
        raise ValueError(f"strategy must be 'uniform' or 'quantile', got {strategy!r}.")
    return int(n_bins), strategy


def _bin_edges(confidence, n_bins, strategy):
    """Increasing bin edges; quantile edges that coincide are merged."""
    if strategy == "uniform":
        return np.linspace(0.0, 1.0, n_bins + 1)
    edges = np.unique(np.quantile(confidence, np.linspace(0.0, 1.0, n_bins + 1)))
    return edges if len(edges) > 1 else np.repeat(edges, 2)  # all confidences equal: one bin [c, c]


class ReliabilityCurve(NamedTuple):
    """Per-bin summary of the top-label confidence, from :func:`reliability_curve`.

    Each field has one entry per non-empty bin, bins in increasing order.

    Attributes
    ----------
    confidence : ndarray of shape (n_nonempty_bins,)
        Mean confidence ``max_c p_c(x)`` of the samples in the bin.
    accuracy : ndarray of shape (n_nonempty_bins,)
        Fraction of the samples in the bin whose most probable class is the
        true one.
    count : ndarray of shape (n_nonempty_bins,)
        Number of samples in the bin.
    edges : ndarray of shape (n_nonempty_bins, 2)
        Lower and upper edge of the bin.
    """

    confidence: np.ndarray
    accuracy: np.ndarray
    count: np.ndarray
    edges: np.ndarray


def reliability_curve(y_true, y_prob, *, n_bins=15, strategy="uniform", labels=None):
    """Top-label reliability curve: accuracy against confidence, bin by bin.

    The confidence of a prediction is its largest probability,
    ``conf(x) = max_c p_c(x)``, and the prediction is correct when the class
    of that probability is ``y`` (ties go to the first such column, as
    :func:`numpy.argmax`). The samples are grouped into bins of confidence
    and each non-empty bin reports its mean confidence, its accuracy and its
    size. A calibrated classifier has accuracy equal to confidence in every
    bin.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities; each row lies in ``[0, 1]`` and sums to 1
        (within 1e-6). The columns follow ``labels``. A 1-d array is the
        probability of the positive (second) class of a binary problem, read
        as the two columns ``[1 - p, p]``.
    n_bins : int >= 1, default=15
        Number of bins (``"quantile"`` can give fewer, see ``strategy``).
    strategy : {"uniform", "quantile"}, default="uniform"
        ``"uniform"``: ``n_bins`` bins of equal width on ``[0, 1]``.
        ``"quantile"``: edges at the ``0, 1/n_bins, ..., 1`` quantiles of the
        confidences, so that the bins hold about the same number of samples;
        edges that coincide (tied confidences) are merged, which leaves
        fewer bins. In both cases, with edges ``e_0 < e_1 < ... < e_B``,
        bin ``b`` holds the confidences in ``[e_b, e_{b+1})`` and the last
        bin is closed, ``[e_{B-1}, e_B]``: a confidence on an inner edge
        goes to the bin above it and a confidence of 1 to the last bin.
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``y_prob``, e.g. the ``classes_`` of the
        estimator that produced it. By default ``np.unique(y_true)``, as in
        :func:`sklearn.metrics.log_loss`; then ``y_true`` must hold every
        class, else a ValueError asks for ``labels``.

    Returns
    -------
    ReliabilityCurve
        Named tuple ``(confidence, accuracy, count, edges)`` over the
        non-empty bins.

    See Also
    --------
    expected_calibration_error : Weighted mean gap between the two curves.
    skgibbs.display.ReliabilityDisplay : Plot of this curve.

    Examples
    --------
    >>> y_prob = [[0.9, 0.1], [0.8, 0.2], [0.4, 0.6], [0.3, 0.7]]
    >>> curve = reliability_curve([0, 1, 0, 1], y_prob, n_bins=4)
    >>> curve.confidence, curve.accuracy, curve.count
    (array([0.65, 0.85]), array([0.5, 0.5]), array([2, 2]))
    >>> curve.edges
    array([[0.5 , 0.75],
           [0.75, 1.  ]])
    """
    n_bins, strategy = _check_binning(n_bins, strategy)
    proba = _check_proba(y_prob)
    y, labels = _check_targets(y_true, proba, labels)
    top = np.argmax(proba, axis=1)
    confidence = proba[np.arange(proba.shape[0]), top]
    correct = (labels[top] == y).astype(float)
    edges = _bin_edges(confidence, n_bins, strategy)
    n_edges_bins = len(edges) - 1
    index = np.searchsorted(edges[1:-1], confidence, side="right")
    count = np.bincount(index, minlength=n_edges_bins)
    conf_sum = np.bincount(index, weights=confidence, minlength=n_edges_bins)
    correct_sum = np.bincount(index, weights=correct, minlength=n_edges_bins)
    keep = count > 0
    return ReliabilityCurve(
        confidence=conf_sum[keep] / count[keep],
        accuracy=correct_sum[keep] / count[keep],
        count=count[keep],
        edges=np.column_stack([edges[:-1], edges[1:]])[keep],
    )


def _ece(confidence, accuracy, count):
    """ECE of a reliability curve: the size-weighted mean of ``|accuracy - confidence|``."""
    count = np.asarray(count, dtype=float)
    return float(np.sum(count / count.sum() * np.abs(np.asarray(accuracy) - np.asarray(confidence))))


def expected_calibration_error(y_true, y_prob, *, n_bins=15, strategy="uniform", labels=None):
    r"""Top-label expected calibration error (ECE); lower is better.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities, columns in the order of ``labels``; a 1-d
        array is the probability of the positive (second) class of a binary
        problem. See :func:`reliability_curve`.
    n_bins : int >= 1, default=15
    strategy : {"uniform", "quantile"}, default="uniform"
        Equal-width bins on ``[0, 1]`` or equal-mass bins; see
        :func:`reliability_curve` for which bin holds a confidence on an edge.
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``y_prob``; by default
        ``np.unique(y_true)`` (the :func:`sklearn.metrics.log_loss`
        convention).

    Returns
    -------
    float
        In ``[0, 1]``.

    Notes
    -----
    With the confidence :math:`\mathrm{conf}(x) = \max_c p_c(x)` and bins
    :math:`S_1, \dots, S_B` of the :math:`n` samples by confidence,

    .. math::

        \mathrm{ECE} = \sum_{b=1}^{B} \frac{|S_b|}{n}\,
        \bigl|\mathrm{acc}(S_b) - \mathrm{conf}(S_b)\bigr|,

    where :math:`\mathrm{acc}(S_b)` is the fraction of the samples in
    :math:`S_b` whose most probable class is the true one and
    :math:`\mathrm{conf}(S_b)` their mean confidence; empty bins add 0
    (Naeini et al., 2015; Guo et al., 2017). The estimate depends on the
    binning and is biased upwards on small samples: a calibrated classifier
    scores about :math:`\sum_b (|S_b|/n)\sqrt{2 a_b (1 - a_b) / (\pi |S_b|)}`
    with :math:`a_b` the accuracy of bin :math:`b`.

    Examples
    --------
    >>> y_prob = [[0.9, 0.1], [0.8, 0.2], [0.4, 0.6], [0.3, 0.7]]
    >>> round(expected_calibration_error([0, 1, 0, 1], y_prob, n_bins=4), 6)
    0.25
    >>> round(expected_calibration_error([0, 1, 0, 1], [0.1, 0.2, 0.6, 0.7], n_bins=4), 6)
    0.25
    """
    return _ece(*reliability_curve(y_true, y_prob, n_bins=n_bins, strategy=strategy, labels=labels)[:3])


def maximum_calibration_error(y_true, y_prob, *, n_bins=15, strategy="uniform", labels=None):
    """Top-label maximum calibration error (MCE); lower is better.

    The largest ``|accuracy - confidence|`` over the non-empty bins of
    :func:`reliability_curve`; the parameters are those of
    :func:`expected_calibration_error`. Small bins make it noisy, so prefer
    few bins, or ``strategy="quantile"``, on small samples.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
    n_bins : int >= 1, default=15
    strategy : {"uniform", "quantile"}, default="uniform"
    labels : array-like of shape (n_classes,), default=None

    Returns
    -------
    float
        In ``[0, 1]``.

    Examples
    --------
    >>> y_prob = [[0.9, 0.1], [0.8, 0.2], [0.4, 0.6], [0.3, 0.7]]
    >>> round(maximum_calibration_error([0, 1, 0, 1], y_prob, n_bins=4), 6)
    0.35
    """
    curve = reliability_curve(y_true, y_prob, n_bins=n_bins, strategy=strategy, labels=labels)
    return float(np.max(np.abs(curve.accuracy - curve.confidence)))


def predictive_entropy(y_prob):
    """Entropy of each predictive distribution, in nats.

    ``H(x) = -sum_c p_c(x) log p_c(x)``, with ``0 log 0 = 0``: 0 for a
    certain prediction, ``log(n_classes)`` for a uniform one.

    Parameters
    ----------
    y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities, rows summing to 1 (within 1e-6); a 1-d
        array is the probability of the positive class of a binary problem.

    Returns
    -------
    ndarray of shape (n_samples,)

    Examples
    --------
    >>> predictive_entropy([[1.0, 0.0], [0.5, 0.5]])
    array([0.        , 0.69314718])
    >>> predictive_entropy([1.0, 0.5])
    array([0.        , 0.69314718])
    """
    return entr(_check_proba(y_prob)).sum(axis=1)


class _ProbaScorer:
    """``scorer(estimator, X, y)``: minus a loss of ``predict_proba``, columns named by ``classes_``.

    A :func:`sklearn.metrics.make_scorer` scorer does the work: it calls
    ``predict_proba`` (of a Pipeline too) and, for a binary classifier, keeps
    the column of ``classes_[-1]``. The loss gets ``labels=classes_`` so that
    the columns are named even when the test fold lacks a class.
    """

    def __init__(self, loss, name, *, binary_pos_label=False, **kwargs):
        self.loss = loss
        self.name = name
        self.binary_pos_label = binary_pos_label
        self.kwargs = kwargs

    def __call__(self, estimator, X, y_true):
        kwargs = dict(self.kwargs)
        classes = getattr(estimator, "classes_", None)
        if classes is not None:
            if self.binary_pos_label and len(classes) == 2:
                kwargs["pos_label"] = classes[-1]
            else:
                kwargs["labels"] = classes
        scorer = make_scorer(self.loss, greater_is_better=False, response_method="predict_proba", **kwargs)
        return float(scorer(estimator, X, y_true))

    def __repr__(self):
        return self.name


def make_ece_scorer(n_bins=15, strategy="uniform"):
    """Scorer: minus the :func:`expected_calibration_error` of ``predict_proba`` (greater is better).

    Parameters
    ----------
    n_bins : int >= 1, default=15
    strategy : {"uniform", "quantile"}, default="uniform"

    Returns
    -------
    callable
        ``scorer(estimator, X, y) -> float`` for any fitted classifier, or
        Pipeline ending in one, with ``predict_proba`` and ``classes_``; the
        columns of ``predict_proba`` are named by ``classes_``, so a test
        fold may lack a class.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import cross_val_score
    >>> X = [[0.0], [0.4], [0.9], [1.1], [1.6], [2.0]]
    >>> scores = cross_val_score(LogisticRegression(), X, [0, 0, 0, 1, 1, 1], cv=2,
    ...                          scoring=make_ece_scorer(n_bins=5))
    >>> bool(all(-1 <= s <= 0 for s in scores))
    True
    >>> make_ece_scorer(n_bins=10, strategy="quantile")
    make_ece_scorer(n_bins=10, strategy='quantile')
    """
    n_bins, strategy = _check_binning(n_bins, strategy)
    return _ProbaScorer(
        expected_calibration_error,
        f"make_ece_scorer(n_bins={n_bins!r}, strategy={strategy!r})",
        n_bins=n_bins,
        strategy=strategy,
    )


def make_mce_scorer(n_bins=15, strategy="uniform"):
    """Scorer: minus the :func:`maximum_calibration_error` of ``predict_proba`` (greater is better).

    Parameters
    ----------
    n_bins : int >= 1, default=15
    strategy : {"uniform", "quantile"}, default="uniform"

    Returns
    -------
    callable
        ``scorer(estimator, X, y) -> float``, as :func:`make_ece_scorer`.

    Examples
    --------
    >>> make_mce_scorer(n_bins=10)
    make_mce_scorer(n_bins=10, strategy='uniform')
    """
    n_bins, strategy = _check_binning(n_bins, strategy)
    return _ProbaScorer(
        maximum_calibration_error,
        f"make_mce_scorer(n_bins={n_bins!r}, strategy={strategy!r})",
        n_bins=n_bins,
        strategy=strategy,
    )


#: Minus the 15-bin uniform ECE of ``predict_proba``, ``make_ece_scorer()``.
neg_expected_calibration_error_scorer = make_ece_scorer()

#: Minus the 15-bin uniform MCE of ``predict_proba``, ``make_mce_scorer()``.
neg_maximum_calibration_error_scorer = make_mce_scorer()

#: Minus :func:`sklearn.metrics.brier_score_loss` of ``predict_proba``. Unlike
#: scikit-learn's ``"neg_brier_score"`` it names the columns by ``classes_``
#: (``pos_label`` for a binary classifier, ``labels`` otherwise), so a test
#: fold may lack a class; multiclass needs scikit-learn >= 1.7.
neg_brier_scorer = _ProbaScorer(brier_score_loss, "neg_brier_scorer", binary_pos_label=True)

#: Minus :func:`sklearn.metrics.log_loss` (mean NLL) of ``predict_proba``. Unlike
#: scikit-learn's ``"neg_log_loss"`` it passes ``labels=classes_``, so a test
#: fold may lack a class.
neg_log_loss_scorer = _ProbaScorer(log_loss, "neg_log_loss_scorer")
