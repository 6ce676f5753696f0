"""Reliability diagrams of probabilistic classifiers."""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..metrics import ReliabilityCurve, reliability_curve
from ._common import _estimator_name, _pyplot

__all__ = ["ReliabilityDisplay"]

_REF_LABEL = "Perfectly calibrated"
_COUNTS_GID = "skgibbs-reliability-counts"  # marks the twin axes that hold the bin sizes
_COUNTS_SHARE = 0.25  # the largest bar fills this share of the height
_CURVE_GID = "skgibbs-reliability-curve"  # marks the curves, whose extent sets the axes' limits
_PAD = 0.04  # the margin around the curves and the bins, a share of the shown range
#: where the legend may go, in order of preference; the first that covers nothing wins
_LEGEND_PLACES = ("upper left", "lower right", "center left", "upper center", "lower center", "center right")


def _existing_counts_axes(ax):
    """The twin axes of ``ax`` that hold the bin sizes, or None before any display drew bars on ``ax``."""
    for other in ax.get_shared_x_axes().get_siblings(ax):
        if other is not ax and other.get_gid() == _COUNTS_GID:
            return other
    return None


def _counts_axes(ax):
    """The twin axes of ``ax`` that hold the bin sizes, made on first use and shared afterwards."""
    existing = _existing_counts_axes(ax)
    if existing is not None:
        return existing
    twin = ax.twinx()
    twin.set_gid(_COUNTS_GID)
    twin.set_ylabel("Fraction of samples in bin")
    ax.set_zorder(twin.get_zorder() + 1)  # the curves above the bars
    ax.patch.set_visible(False)
    return twin


def _fit_limits(ax, counts_ax):
    """Show the square from the lowest bin edge, confidence or accuracy drawn on ``ax`` up to 1.

    The top-label confidence of ``C`` classes is at least ``1 / C`` (a half
    for two), and an easy problem puts nearly all of it near 1: the axes
    start where the curves and the bins do, not at 0, with the same range on
    both so that the diagonal stays at 45 degrees. Every curve on ``ax`` and
    every bar on ``counts_ax`` counts, so a second display widens the
    limits rather than hiding the first.
    """
    values = [1.0]
    for line in ax.get_lines():
        if line.get_gid() == _CURVE_GID:
            values += [*np.asarray(line.get_xdata(), dtype=float), *np.asarray(line.get_ydata(), dtype=float)]
    if counts_ax is not None:
        values += [patch.get_x() for patch in counts_ax.patches]
    lo = max(min(values), 0.0)
    lo = min(lo, 0.9)  # at least a tenth of the square, even when every point sits at 1
    pad = _PAD * (1.0 - lo)
    ax.set_xlim(lo - pad, 1.0 + pad)
    ax.set_ylim(lo - pad, 1.0 + pad)


def _renderer(figure):
    """The figure's renderer, to measure the legend and the bar labels before anything is drawn."""
    get = getattr(figure.canvas, "get_renderer", None)  # the Agg canvases (and the inline backend)
    return get() if get is not None else figure._get_renderer()


def _polyline(xy, spacing=2.0):
    """Points every ``spacing`` pixels along the display-space polyline ``xy`` (its vertices included)."""
    out = [xy[:1]]
    for start, end in zip(xy[:-1], xy[1:]):
        n = max(int(np.hypot(*(end - start)) / spacing), 1)
        out.append(start + np.linspace(0.0, 1.0, n + 1)[1:, None] * (end - start))
    return np.vstack(out)


def _obstacles(ax, counts_ax):
    """What the legend should not cover, in pixels: the lines' points; the boxes of markers, bars, labels."""
    from matplotlib.transforms import Bbox

    renderer = _renderer(ax.figure)
    points, boxes = [np.empty((0, 2))], []
    for line in ax.get_lines():
        xy = ax.transData.transform(np.column_stack([line.get_xdata(), line.get_ydata()]).astype(float))
        xy = xy[np.all(np.isfinite(xy), axis=1)]
        if len(xy) == 0:
            continue
        points.append(_polyline(xy))
        if line.get_marker() not in (None, "None", "", " "):
            half = line.get_markersize() * ax.figure.dpi / 72.0 / 2.0 + line.get_markeredgewidth()
            boxes += [Bbox.from_extents(x - half, y - half, x + half, y + half) for x, y in xy]
    if counts_ax is not None:
        boxes += [patch.get_window_extent(renderer) for patch in counts_ax.patches if patch.get_height() > 0]
        boxes += [text.get_window_extent(renderer) for text in counts_ax.texts if text.get_text()]
    return np.vstack(points), boxes


def _covers(bbox, points, boxes):
    """Whether the box ``bbox`` holds one of the ``points`` or meets one of the ``boxes``."""
    x, y = points[:, 0], points[:, 1]
    inside = (x >= bbox.x0) & (x <= bbox.x1) & (y >= bbox.y0) & (y <= bbox.y1)
    return bool(inside.any()) or any(bbox.overlaps(box) for box in boxes)


def _place_legend(ax, counts_ax):
    """The legend inside the axes where it covers nothing, else just above them.

    Tried in the order of ``_LEGEND_PLACES``, at the default font size and
    then at ``"small"``: the first place whose box meets no marker, no point
    of a line (the diagonal included), no bar and no bar label. Matplotlib's
    ``loc="best"`` sees only the artists of one axes (the bars live on the
    twin) and settles for the least overlap;
    here, when every place inside covers something, the legend goes above
    the axes (a figure made by :meth:`ReliabilityDisplay.plot` has the
    constrained layout, which makes room for it; a title set afterwards
    needs ``pad=`` to clear it).
    """
    renderer = _renderer(ax.figure)
    points, boxes = _obstacles(ax, counts_ax)
    for size in (None, "small"):  # the default font first, then a smaller one where it fits
        for loc in _LEGEND_PLACES:
            legend = ax.legend(loc=loc, fontsize=size)
            if not _covers(legend.get_window_extent(renderer), points, boxes):
                return legend
    return ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.02), borderaxespad=0.0, fontsize="small")


class ReliabilityDisplay:
    """Top-label reliability diagram: accuracy against confidence, bin by bin.

    The x coordinate of each marker is the mean confidence ``max_c p_c(x)``
    of the samples in a bin, the y coordinate the fraction of them whose most
    probable class is the true one; a calibrated classifier lies on the
    diagonal. Bars on a twin axis (right) show the share of the samples in
    each bin, each with its count written on it, and the legend gives the
    expected calibration error. The axes span, on both coordinates, from
    the lowest bin, confidence or accuracy drawn up to 1 (top-label
    confidences are at least ``1 / n_classes``, and an easy problem has
    nearly all of them near 1), with a margin that keeps the markers at 1
    whole; the legend goes to the first corner or side where it covers no
    marker, line, bar or count, else above the axes. Build it
    with :meth:`from_estimator` or :meth:`from_predictions`; the constructor
    only stores a curve, :meth:`plot` draws it.

    Parameters
    ----------
    confidence : array-like of shape (n_bins,)
        Mean confidence of each non-empty bin.
    accuracy : array-like of shape (n_bins,)
        Accuracy of each non-empty bin.
    count : array-like of shape (n_bins,)
        Number of samples in each non-empty bin.
    edges : array-like of shape (n_bins, 2), default=None
        Lower and upper edge of each bin, for the bars of ``show_counts``.
    estimator_name : str, default=None
        Name of the classifier, for the legend.

    Attributes
    ----------
    confidence, accuracy, count, edges : ndarray
        The curve, as given.
    ece : float
        Expected calibration error of the curve,
        ``sum_b count_b / n * |accuracy_b - confidence_b|``
        (:attr:`skgibbs.metrics.ReliabilityCurve.ece`).
    estimator_name : str or None
    line_ : matplotlib.lines.Line2D
        The reliability curve.
    bars_ : matplotlib.container.BarContainer or None
        The bars of the bin sizes; None without ``show_counts``.
    counts_ax_ : matplotlib.axes.Axes or None
        The twin axes of the bars, shared by every display drawn on ``ax_``.
    ax_ : matplotlib.axes.Axes
        Axes of the curve.
    figure_ : matplotlib.figure.Figure

    See Also
    --------
    skgibbs.metrics.reliability_curve : The curve drawn here.
    sklearn.calibration.CalibrationDisplay : Positive-class calibration curve.

    Examples
    --------
    >>> import pytest
    >>> matplotlib = pytest.importorskip("matplotlib")  # the example needs the plot extra
    >>> matplotlib.use("Agg")
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = LogisticRegression(max_iter=1000).fit(X, y)
    >>> disp = ReliabilityDisplay.from_estimator(clf, X, y, n_bins=10)
    >>> disp.line_.get_label() == f"LogisticRegression (ECE {disp.ece:.3f})"
    True
    >>> int(disp.count.sum())
    150
    """

    def __init__(self, confidence, accuracy, count, *, edges=None, estimator_name=None):
        self.confidence = np.asarray(confidence, dtype=float)
        self.accuracy = np.asarray(accuracy, dtype=float)
        self.count = np.asarray(count)
        if not self.confidence.shape == self.accuracy.shape == self.count.shape or self.confidence.ndim != 1:
            raise ValueError(
                "confidence, accuracy and count must be 1-d arrays of one length, got shapes "
                f"{self.confidence.shape}, {self.accuracy.shape} and {self.count.shape}."
            )
        self.edges = None if edges is None else np.asarray(edges, dtype=float).reshape(-1, 2)
        if self.edges is not None and len(self.edges) != len(self.count):
            raise ValueError(f"edges must have shape ({len(self.count)}, 2), got {np.shape(edges)}.")
        self.estimator_name = estimator_name
        self.ece = ReliabilityCurve(self.confidence, self.accuracy, self.count).ece

    def plot(self, ax=None, *, name=None, ref_line=True, show_counts=True, **kwargs):
        """Draw the diagram.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            Axes to draw on; by default a new figure. Several displays can
            share one: the reference line and the axes of the bars are drawn
            once.
        name : str, default=None
            Legend name; by default ``estimator_name``. The legend label is
            ``"name (ECE 0.031)"``, or ``"ECE 0.031"`` without a name.
        ref_line : bool, default=True
            Draw the diagonal of perfect calibration.
        show_counts : bool, default=True
            Draw the share of the samples in each bin as bars on a twin axis
            (needs ``edges``).
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot` for the curve (e.g.
            ``color``, ``marker``, ``label`` to replace the legend label).

        Returns
        -------
        ReliabilityDisplay
            ``self``, with ``line_``, ``bars_``, ``counts_ax_``, ``ax_`` and
            ``figure_`` set.

        Examples
        --------
        >>> import pytest
        >>> matplotlib = pytest.importorskip("matplotlib")
        >>> matplotlib.use("Agg")
        >>> disp = ReliabilityDisplay([0.6, 0.9], [0.5, 0.95], [40, 60], edges=[[0.5, 0.75], [0.75, 1.0]])
        >>> disp.plot(name="model").line_.get_label()
        'model (ECE 0.070)'
        """
        plt = _pyplot("ReliabilityDisplay")
        from matplotlib.ticker import MaxNLocator

        if ax is None:
            _, ax = plt.subplots(layout="constrained")
        name = self.estimator_name if name is None else name
        label = f"ECE {self.ece:.3f}" if name is None else f"{name} (ECE {self.ece:.3f})"
        if ref_line and not any(line.get_label() == _REF_LABEL for line in ax.get_lines()):
            ax.plot([0, 1], [0, 1], linestyle=":", color="black", label=_REF_LABEL)
        style = {"marker": "s", "label": label, "clip_on": False, "zorder": 3, **kwargs}
        self.line_ = ax.plot(self.confidence, self.accuracy, **style)[0]
        self.line_.set_gid(_CURVE_GID)

        self.bars_ = self.counts_ax_ = None
        if show_counts:
            if self.edges is None:
                raise ValueError("show_counts=True needs the bin edges: pass edges= or show_counts=False.")
            self.counts_ax_ = _counts_axes(ax)
            lower, upper = self.edges[:, 0], self.edges[:, 1]
            share = self.count / self.count.sum()
            self.bars_ = self.counts_ax_.bar(
                lower,
                share,
                width=np.maximum(upper - lower, 0.005),  # quantile bins of tied confidences have width 0
                align="edge",
                color=self.line_.get_color(),
                alpha=0.35,
                edgecolor=self.line_.get_color(),
                linewidth=0.5,
            )
            self.counts_ax_.bar_label(self.bars_, labels=[str(int(c)) for c in self.count], fontsize="x-small")
            tallest = max(patch.get_height() for patch in self.counts_ax_.patches)
            self.counts_ax_.set_ylim(0, tallest / _COUNTS_SHARE)
            ticks = MaxNLocator(nbins=3).tick_values(0, tallest)
            self.counts_ax_.set_yticks(ticks[ticks <= tallest * (1 + 1e-9)])  # ticks by the bars only

        counts_ax = _existing_counts_axes(ax)  # with the bars of earlier displays on ax, if any
        _fit_limits(ax, counts_ax)
        ax.set_xlabel("Confidence (largest probability)")
        ax.set_ylabel("Accuracy")
        _place_legend(ax, counts_ax)
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        y,
        *,
        n_bins=15,
        strategy="uniform",
        name=None,
        ax=None,
        ref_line=True,
        show_counts=True,
        **kwargs,
    ):
        """Reliability diagram of a fitted classifier on ``(X, y)``.

        Parameters
        ----------
        estimator : fitted classifier or Pipeline
            Has ``predict_proba`` and ``classes_``, which names the columns
            of ``predict_proba``.
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            True labels.
        n_bins : int >= 1, default=15
        strategy : {"uniform", "quantile"}, default="uniform"
            Binning, see :func:`skgibbs.metrics.reliability_curve`.
        name : str, default=None
            Legend name; by default the class name of the estimator (of the
            last step of a Pipeline).
        ax : matplotlib.axes.Axes, default=None
        ref_line : bool, default=True
        show_counts : bool, default=True
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot`.

        Returns
        -------
        ReliabilityDisplay

        Examples
        --------
        >>> import pytest
        >>> matplotlib = pytest.importorskip("matplotlib")
        >>> matplotlib.use("Agg")
        >>> from sklearn.datasets import load_iris
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn.pipeline import make_pipeline
        >>> from sklearn.preprocessing import StandardScaler
        >>> X, y = load_iris(return_X_y=True)
        >>> pipe = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)
        >>> disp = ReliabilityDisplay.from_estimator(pipe, X, y, strategy="quantile", n_bins=5)
        >>> disp.estimator_name
        'LogisticRegression'
        """
        if not hasattr(estimator, "predict_proba"):
            raise TypeError(
                f"{type(estimator).__name__} has no predict_proba method; ReliabilityDisplay needs a "
                "probabilistic classifier."
            )
        check_is_fitted(estimator)
        classes = getattr(estimator, "classes_", None)
        if classes is None:
            raise TypeError(
                f"{type(estimator).__name__} has no classes_ to name the columns of predict_proba."
            )
        name = _estimator_name(estimator) if name is None else name
        return cls.from_predictions(
            y,
            estimator.predict_proba(X),
            labels=classes,
            n_bins=n_bins,
            strategy=strategy,
            name=name,
            ax=ax,
            ref_line=ref_line,
            show_counts=show_counts,
            **kwargs,
        )

    @classmethod
    def from_predictions(
        cls,
        y_true,
        y_prob,
        *,
        labels=None,
        n_bins=15,
        strategy="uniform",
        name=None,
        ax=None,
        ref_line=True,
        show_counts=True,
        **kwargs,
    ):
        """Reliability diagram of predicted probabilities.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            True labels.
        y_prob : array-like of shape (n_samples, n_classes) or (n_samples,)
            Predicted probabilities, columns in the order of ``labels``; a
            1-d array is the probability of the positive (second) class of a
            binary problem.
        labels : array-like of shape (n_classes,), default=None
            The class of each column of ``y_prob``; by default
            ``np.unique(y_true)``.
        n_bins : int >= 1, default=15
        strategy : {"uniform", "quantile"}, default="uniform"
            Binning, see :func:`skgibbs.metrics.reliability_curve`.
        name : str, default=None
            Legend name.
        ax : matplotlib.axes.Axes, default=None
        ref_line : bool, default=True
        show_counts : bool, default=True
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot`.

        Returns
        -------
        ReliabilityDisplay

        Examples
        --------
        >>> import pytest
        >>> matplotlib = pytest.importorskip("matplotlib")
        >>> matplotlib.use("Agg")
        >>> y_prob = [[0.9, 0.1], [0.8, 0.2], [0.4, 0.6], [0.3, 0.7]]
        >>> disp = ReliabilityDisplay.from_predictions(["a", "b", "a", "b"], y_prob, n_bins=4)
        >>> disp.accuracy, round(disp.ece, 6)
        (array([0.5, 0.5]), 0.25)
        """
        curve = reliability_curve(y_true, y_prob, n_bins=n_bins, strategy=strategy, labels=labels)
        display = cls(curve.confidence, curve.accuracy, curve.count, edges=curve.edges, estimator_name=name)
        return display.plot(ax=ax, ref_line=ref_line, show_counts=show_counts, **kwargs)
