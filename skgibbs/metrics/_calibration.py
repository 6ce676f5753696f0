"""Calibration of probabilistic classifiers: reliability curve, ECE, MCE and entropy.

:func:`expected_calibration_error`, :func:`maximum_calibration_error` and
:func:`reliability_curve` bin the top-label confidence ``max_c p_c(x)``;
:func:`predictive_entropy` gives the entropy of each predictive
distribution. Probabilities are ``(n, n_classes)`` arrays whose columns
follow ``labels`` (by default ``np.unique(y_true)``, the convention of
:func:`sklearn.metrics.log_loss`), or ``(n,)`` arrays of the probability of
the positive (second) class of a binary problem. The three binned metrics
take ``sample_weight``, the weight of each sample: a sample of integer
weight ``k`` counts as the sample repeated ``k`` times, in the bins' sizes,
means and (``strategy="quantile"``) edges alike.
"""

from typing import NamedTuple

import numpy as np
from scipy.special import entr

from .._data import fit_weights
from ._validation import check_binning, check_proba, check_targets

__all__ = [
    "ReliabilityCurve",
    "reliability_curve",
    "expected_calibration_error",
    "maximum_calibration_error",
    "predictive_entropy",
]


def _bin_edges(confidence, n_bins, strategy, weights=None):
    """Increasing bin edges; quantile edges that coincide are merged."""
    if strategy == "uniform":
        return np.linspace(0.0, 1.0, n_bins + 1)
    levels = np.linspace(0.0, 1.0, n_bins + 1)
    if weights is None:
        quantiles = np.quantile(confidence, levels)
    else:
        quantiles = _weighted_quantile(confidence, weights, levels)
    edges = np.unique(quantiles)
    return edges if len(edges) > 1 else np.repeat(edges, 2)  # all confidences equal: one bin [c, c]


def _weighted_quantile(values, weights, levels):
    """:func:`numpy.quantile` (linear method) of ``values`` with row ``i`` repeated ``weights[i]`` times.

    The repeated rows are never built. Sorted, they sit at the positions
    ``0, ..., N - 1`` with ``N = sum(weights)``; row ``k`` of the sorted
    values holds the positions from ``cum[k - 1]`` up to, not including,
    ``cum[k]`` (``cum`` the cumulative weights), so that a row of weight 0
    holds none. The level ``q`` lies at the position ``h = (N - 1) q`` and
    is the interpolation between the values at ``floor(h)`` and
    ``floor(h) + 1`` with numpy's arithmetic: for integer weights the
    result is ``np.quantile(np.repeat(values, weights), levels)`` to the
    last bit. Non-integer weights follow the same rule, the positions read
    off the cumulative weights; the levels 0 and 1 are always the smallest
    and the largest value of positive weight.
    """
    order = np.argsort(values, kind="stable")
    sorted_values, sorted_weights = values[order], weights[order]
    cum = np.cumsum(sorted_weights)
    position = max(cum[-1] - 1.0, 0.0) * levels
    below = np.floor(position)
    gamma = position - below
    at = np.minimum(np.searchsorted(cum, np.stack([below, below + 1.0]), side="right"), len(values) - 1)
    a, b = sorted_values[at[0]], sorted_values[at[1]]
    # numpy's interpolation: a + (b - a) t below t = 0.5, b - (b - a)(1 - t) from there, exact at both ends
    diff = b - a
    out = np.where(gamma >= 0.5, b - diff * (1.0 - gamma), a + diff * gamma)
    held = sorted_values[sorted_weights > 0]
    out[levels == 0.0], out[levels == 1.0] = held[0], held[-1]
    return out


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
        Number of samples in the bin; the sum of their weights when the
        curve was computed with ``sample_weight`` (float then).
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
        """Expected calibration error: ``sum_b count_b / sum_b' count_b' * |accuracy_b - confidence_b|``.

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


def reliability_curve(y_true, y_prob, *, n_bins=15, strategy="uniform", labels=None, sample_weight=None):
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
    sample_weight : array-like of shape (n_samples,), default=None
        Weight of each sample, finite and ``>= 0``, not all 0. A bin's
        ``count`` becomes the sum of its samples' weights and its
        confidence and accuracy the weighted means over them; a bin whose
        samples all weigh 0 is empty. The ``"quantile"`` edges are the
        quantiles of the samples repeated as many times as their weights
        (the linear interpolation of :func:`numpy.quantile`; for weights
        that are not integers, the positions of the repeated samples are
        read off the cumulative weights), so that an integer weight ``k``
        counts the sample ``k`` times everywhere and a sample of weight 0
        moves no edge. As for repeated samples, these edges depend on the
        scale of the weights: weights summing to less than about
        ``n_bins`` leave fewer quantile bins, so give weights on the scale
        of counts (e.g. summing to ``n_samples``). None, or weights all 1,
        give the unweighted curve.

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

    With weights, a bin's count is the sum of its samples' weights:

    >>> reliability_curve([0, 1, 0, 1], y_prob, n_bins=4, sample_weight=[1, 3, 0, 2]).count
    array([2., 4.])
    """
    n_bins, strategy = check_binning(n_bins, strategy)
    proba = check_proba(y_prob)
    y, labels = check_targets(y_true, proba, labels)
    # no weights, or weights all 1: the unweighted arithmetic, bit for bit
    w = fit_weights(sample_weight, proba.shape[0])
    top = np.argmax(proba, axis=1)
    confidence = proba[np.arange(proba.shape[0]), top]
    correct = (labels[top] == y).astype(float)
    edges = _bin_edges(confidence, n_bins, strategy, w)
    n_edges_bins = len(edges) - 1
    index = np.searchsorted(edges[1:-1], confidence, side="right")
    if w is None:
        count = np.bincount(index, minlength=n_edges_bins)
        conf_sum = np.bincount(index, weights=confidence, minlength=n_edges_bins)
        correct_sum = np.bincount(index, weights=correct, minlength=n_edges_bins)
    else:
        count = np.bincount(index, weights=w, minlength=n_edges_bins)
        conf_sum = np.bincount(index, weights=w * confidence, minlength=n_edges_bins)
        correct_sum = np.bincount(index, weights=w * correct, minlength=n_edges_bins)
    keep = count > 0
    return ReliabilityCurve(
        confidence=conf_sum[keep] / count[keep],
        accuracy=correct_sum[keep] / count[keep],
        count=count[keep],
        edges=np.column_stack([edges[:-1], edges[1:]])[keep],
    )


def expected_calibration_error(
    y_true, y_prob, *, n_bins=15, strategy="uniform", labels=None, sample_weight=None
):
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
    sample_weight : array-like of shape (n_samples,), default=None
        Weight of each sample, finite and ``>= 0``, not all 0: each bin
        weighs by its share of the total weight, and its accuracy and
        confidence are weighted means (see :func:`reliability_curve`, also
        for the ``"quantile"`` edges). An integer weight ``k`` counts the
        sample ``k`` times.

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

    With weights :math:`w_i`, :math:`|S_b|` becomes :math:`\sum_{i \in S_b} w_i`,
    :math:`n` becomes :math:`\sum_i w_i`, and the accuracy and confidence
    of a bin are means weighted by :math:`w_i`.

    Examples
    --------
    >>> y_prob = [[0.9, 0.1], [0.8, 0.2], [0.4, 0.6], [0.3, 0.7]]
    >>> round(expected_calibration_error([0, 1, 0, 1], y_prob, n_bins=4), 6)
    0.25
    >>> round(expected_calibration_error([0, 1, 0, 1], [0.1, 0.2, 0.6, 0.7], n_bins=4), 6)
    0.25
    """
    curve = reliability_curve(
        y_true, y_prob, n_bins=n_bins, strategy=strategy, labels=labels, sample_weight=sample_weight
    )
    return curve.ece


def maximum_calibration_error(
    y_true, y_prob, *, n_bins=15, strategy="uniform", labels=None, sample_weight=None
):
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
    sample_weight : array-like of shape (n_samples,), default=None
        Weight of each sample, as in :func:`expected_calibration_error`: the
        gaps are those of the weighted means, and a bin counts as non-empty
        when its samples' weights sum above 0.

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
    curve = reliability_curve(
        y_true, y_prob, n_bins=n_bins, strategy=strategy, labels=labels, sample_weight=sample_weight
    )
    return curve.mce


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
