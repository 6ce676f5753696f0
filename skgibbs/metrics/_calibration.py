"""Calibration of probabilistic classifiers: reliability curve, ECE, MCE and entropy.

:func:`expected_calibration_error`, :func:`maximum_calibration_error` and
:func:`reliability_curve` bin the top-label confidence ``max_c p_c(x)``;
:func:`predictive_entropy` gives the entropy of each predictive
distribution. Probabilities are ``(n, n_classes)`` arrays whose columns
follow ``labels`` (by default ``np.unique(y_true)``, the convention of
:func:`sklearn.metrics.log_loss`), or ``(n,)`` arrays of the probability of
the positive (second) class of a binary problem.
"""

from typing import NamedTuple

import numpy as np
from scipy.special import entr

from ._validation import check_binning, check_proba, check_targets

__all__ = [
    "ReliabilityCurve",
    "reliability_curve",
    "expected_calibration_error",
    "maximum_calibration_error",
    "predictive_entropy",
]


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
    edges : ndarray of shape (n_nonempty_bins, 2) or None, default=None
        Lower and upper edge of the bin; None for a curve built from the
        first three fields alone.
    ece : float
        Expected calibration error of the curve (property).
    mce : float
        Maximum calibration error of the curve (property).

    Examples
    --------
    A curve can be built from stored bins, without the samples:

    >>> curve = ReliabilityCurve(confidence=[0.6, 0.9], accuracy=[0.5, 0.95], count=[40, 60])
    >>> round(curve.ece, 6), round(curve.mce, 6)
    (0.07, 0.1)
    """

    confidence: np.ndarray
    accuracy: np.ndarray
    count: np.ndarray
    edges: np.ndarray | None = None

    @property
    def ece(self):
        """Expected calibration error: ``sum_b count_b / n * |accuracy_b - confidence_b|``.

        The value :func:`expected_calibration_error` returns for the samples
        that made the curve; see its Notes.
        """
        count = np.asarray(self.count, dtype=float)
        gap = np.abs(np.asarray(self.accuracy) - np.asarray(self.confidence))
        return float(np.sum(count / count.sum() * gap))

    @property
    def mce(self):
        """Maximum calibration error: the largest ``|accuracy_b - confidence_b|`` over the bins."""
        return float(np.max(np.abs(np.asarray(self.accuracy) - np.asarray(self.confidence))))


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
    n_bins, strategy = check_binning(n_bins, strategy)
    proba = check_proba(y_prob)
    y, labels = check_targets(y_true, proba, labels)
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
    return reliability_curve(y_true, y_prob, n_bins=n_bins, strategy=strategy, labels=labels).ece


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
    return reliability_curve(y_true, y_prob, n_bins=n_bins, strategy=strategy, labels=labels).mce


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
    return entr(check_proba(y_prob)).sum(axis=1)
