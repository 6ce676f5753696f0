"""Which inputs and which weights a sparse network keeps: bar charts and heat maps."""

import numbers

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..metrics import final_step
from ._common import _estimator_name, _pyplot

__all__ = ["InclusionDisplay"]

_MAX_TICK_LABELS = 30  # above this many bars (or rows), the axis keeps matplotlib's numeric ticks


def bar_order(values, sort, max_features):
    """The input of each bar: the largest value first (ties in column order), or the column order.

    At most ``max_features`` bars (all when None).
    """
    order = np.argsort(-values, kind="stable") if sort else np.arange(len(values))
    if max_features is not None:
        if not (isinstance(max_features, numbers.Integral) and max_features >= 1):
            raise ValueError(f"max_features must be a positive integer, got {max_features!r}.")
        order = order[:max_features]
    return order


def _pipeline_feature_names(estimator):
    """Names of the columns the last step of a pipeline sees, or None."""
    try:
        return np.asarray(estimator[:-1].get_feature_names_out(), dtype=object)
    except (AttributeError, TypeError, ValueError, IndexError):
        return None


class InclusionDisplay:
    """Posterior inclusion of a sparse network: input by input, or weight by weight.

    ``kind="features"`` draws one bar per input, its relevance
    (:attr:`~skgibbs.SparseGibbsMLPRegressor.feature_inclusion_`: the
    posterior mean of the fraction of the input's first-layer weights that
    are non-zero and lead to the output). ``kind="weights"`` draws one heat
    map per layer, the probability that each weight is non-zero
    (:meth:`~skgibbs.SparseGibbsMLPRegressor.unpack_inclusion`), rows the
    inputs of the layer and columns its units; the biases are not drawn.
    Build it with :meth:`from_estimator`; the constructor only stores the
    values, :meth:`plot` draws them.

    Parameters
    ----------
    inclusion : array-like of shape (n_features,), or list of array-like of shape (n_in, n_out)
        ``kind="features"``: the relevance of each input.
        ``kind="weights"``: the inclusion probabilities of each layer's
        weights, first layer first (the ``coefs`` of ``unpack_inclusion()``).
    kind : {"features", "weights"}, default="features"
    feature_names : array-like of str of shape (n_features,), default=None
        Names of the inputs; ``"x0"``, ``"x1"``, ... by default.
    estimator_name : str, default=None
        Name of the estimator, for the title.

    Attributes
    ----------
    inclusion : ndarray or list of ndarray
        As given.
    kind : str
    feature_names : ndarray of str
    estimator_name : str or None
    order_ : ndarray of int
        ``kind="features"``: the input of each bar, left to right.
    layers_ : ndarray of int
        ``kind="weights"``: the layer of each heat map.
    bars_ : matplotlib.container.BarContainer or None
        The bars; None for ``kind="weights"``.
    images_ : list of matplotlib.image.AxesImage
        The heat maps, one per entry of ``layers_``; empty for
        ``kind="features"``.
    colorbar_ : matplotlib.colorbar.Colorbar or None
        The colour scale of the heat maps, shared by all.
    axes_ : ndarray of matplotlib.axes.Axes
        The bars' axes, or one axes per heat map.
    ax_ : matplotlib.axes.Axes
        The first of ``axes_``.
    figure_ : matplotlib.figure.Figure

    See Also
    --------
    skgibbs.estimators.sparse.input_relevance : The relevance of the inputs, per draw.

    Examples
    --------
    >>> disp = InclusionDisplay([0.8, 0.1, 0.4], feature_names=["age", "bmi", "bp"])
    >>> disp.kind, disp.feature_names.tolist()
    ('features', ['age', 'bmi', 'bp'])
    """

    def __init__(self, inclusion, *, kind="features", feature_names=None, estimator_name=None):
        if kind == "features":
            self.inclusion = np.asarray(inclusion, dtype=float)
            if self.inclusion.ndim != 1:
                raise ValueError(f"kind='features' needs a 1-d inclusion, got shape {self.inclusion.shape}.")
            n_features = len(self.inclusion)
        elif kind == "weights":
            self.inclusion = [np.asarray(W, dtype=float) for W in inclusion]
            if not self.inclusion or any(W.ndim != 2 for W in self.inclusion):
                raise ValueError(
                    "kind='weights' needs a list of 2-d arrays of shape (n_in, n_out), one per layer."
                )
            n_features = self.inclusion[0].shape[0]
        else:
            raise ValueError(f"kind must be 'features' or 'weights', got {kind!r}.")
        self.kind = kind
        if feature_names is None:
            feature_names = [f"x{j}" for j in range(n_features)]
        self.feature_names = np.asarray([str(name) for name in feature_names], dtype=object)
        if len(self.feature_names) != n_features:
            raise ValueError(f"feature_names has {len(self.feature_names)} names for {n_features} inputs.")
        self.estimator_name = estimator_name

    def _features(self, selection, what):
        """Indices of ``selection`` (indices or names of inputs)."""
        selection = np.atleast_1d(np.asarray(selection, dtype=object))
        indices = []
        for item in selection:
            if isinstance(item, str):
                found = np.flatnonzero(self.feature_names == item)
                if not len(found):
                    raise ValueError(f"{what}: {item!r} is not one of the feature names.")
                indices.append(int(found[0]))
            elif isinstance(item, numbers.Integral) and 0 <= item < len(self.feature_names):
                indices.append(int(item))
            else:
                raise ValueError(f"{what} must hold input indices or feature names, got {item!r}.")
        return np.asarray(indices, dtype=int)

    def plot(
        self,
        ax=None,
        *,
        sort=True,
        max_features=None,
        highlight=None,
        layers=None,
        bar_kw=None,
        imshow_kw=None,
        colorbar=True,
    ):
        """Draw the bars (``kind="features"``) or the heat maps (``kind="weights"``).

        Parameters
        ----------
        ax : matplotlib.axes.Axes or sequence of Axes, default=None
            Where to draw; by default a new figure. For the heat maps, one
            axes per layer drawn (a single Axes for a single layer).
        sort : bool, default=True
            ``kind="features"``: bars from the most to the least relevant
            input (ties in column order); False keeps the column order.
        max_features : int, default=None
            ``kind="features"``: draw only the first ``max_features`` bars.
        highlight : array-like of int or str, default=None
            ``kind="features"``: inputs (indices or names) whose bars take
            the second colour of the cycle, e.g. the inputs a simulated
            function depends on.
        layers : array-like of int, default=None
            ``kind="weights"``: the layers to draw (0 is the first, whose
            rows are the inputs); all by default.
        bar_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.bar`; a ``color`` there
            replaces the highlighting.
        imshow_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.imshow` (by default the
            ``viridis`` colour map on ``[0, 1]``).
        colorbar : bool, default=True
            ``kind="weights"``: draw one colour scale for all heat maps.

        Returns
        -------
        InclusionDisplay
            ``self``, with ``bars_`` or ``images_``, ``axes_``, ``ax_`` and
            ``figure_`` set.
        """
        plt = _pyplot("InclusionDisplay")
        from matplotlib.ticker import MaxNLocator

        self.bars_, self.images_, self.colorbar_ = None, [], None
        if self.kind == "features":
            self._plot_features(plt, ax, sort, max_features, highlight, bar_kw)
        else:
            self._plot_weights(plt, MaxNLocator, ax, layers, imshow_kw, colorbar)
        self.ax_ = self.axes_[0]
        self.figure_ = self.ax_.figure
        return self

    def _plot_features(self, plt, ax, sort, max_features, highlight, bar_kw):
        if ax is None:
            _, ax = plt.subplots()
        order = bar_order(self.inclusion, sort, max_features)
        marked = np.zeros(len(self.inclusion), dtype=bool)
        if highlight is not None:
            marked[self._features(highlight, "highlight")] = True
        positions = np.arange(len(order))
        style = {"color": np.where(marked[order], "C1", "C0").tolist(), "width": 0.8, **(bar_kw or {})}
        self.bars_ = ax.bar(positions, self.inclusion[order], **style)
        if len(order) <= _MAX_TICK_LABELS:
            names = self.feature_names[order].tolist()
            long = len(order) > 10 or max(len(n) for n in names) > 6
            ax.set_xticks(positions, names, rotation=90 if long else 0)
            ax.set_xlabel("input")
        else:
            ax.set_xlabel("input, by relevance (rank - 1)" if sort else "input column")
        ax.set_xlim(-0.6, len(order) - 0.4)
        ax.set_ylim(0, 1)
        ax.set_ylabel("relevance (feature_inclusion_)")
        if self.estimator_name is not None:
            ax.set_title(self.estimator_name)
        self.order_ = order
        self.axes_ = np.array([ax], dtype=object)

    def _plot_weights(self, plt, locator, ax, layers, imshow_kw, colorbar):
        n_layers = len(self.inclusion)
        layers = np.arange(n_layers) if layers is None else np.atleast_1d(np.asarray(layers))
        if layers.dtype.kind not in "iu" or not len(layers) or np.any((layers < 0) | (layers >= n_layers)):
            raise ValueError(f"layers must hold layer indices in [0, {n_layers}), got {layers!r}.")
        if ax is None:
            _, axes = plt.subplots(
                1, len(layers), figsize=(3.2 * len(layers) + 1.2, 3.6), squeeze=False, layout="constrained"
            )
            axes = axes.ravel()
        else:
            axes = np.ravel(np.asarray(ax, dtype=object))
            if len(axes) != len(layers):
                raise ValueError(f"ax must hold one Axes per layer drawn ({len(layers)}), got {len(axes)}.")
        style = {"cmap": "viridis", "vmin": 0.0, "vmax": 1.0, "aspect": "auto", "interpolation": "nearest"}
        style.update(imshow_kw or {})
        for layer, a in zip(layers, axes):
            W = self.inclusion[layer]
            self.images_.append(a.imshow(W, **style))
            last = layer == n_layers - 1
            a.set_title("into the output" if last else f"into hidden layer {layer + 1}")
            if last and W.shape[1] == 1:
                a.set_xticks([])
                a.set_xlabel("output")
            else:
                a.xaxis.set_major_locator(locator(integer=True))
                a.set_xlabel("output" if last else f"unit of hidden layer {layer + 1}")
            if layer == 0 and W.shape[0] <= _MAX_TICK_LABELS:
                a.set_yticks(np.arange(W.shape[0]), self.feature_names.tolist())
            else:
                a.yaxis.set_major_locator(locator(integer=True))
            a.set_ylabel("input" if layer == 0 else f"unit of hidden layer {layer}")
        if colorbar:
            self.colorbar_ = axes[0].figure.colorbar(self.images_[-1], ax=axes.tolist())
            self.colorbar_.set_label("P(weight != 0)")
        if self.estimator_name is not None:
            axes[0].figure.suptitle(self.estimator_name)
        self.layers_ = layers
        self.axes_ = axes

    @classmethod
    def from_estimator(
        cls,
        estimator,
        *,
        kind="features",
        feature_names=None,
        name=None,
        ax=None,
        sort=True,
        max_features=None,
        highlight=None,
        layers=None,
        bar_kw=None,
        imshow_kw=None,
        colorbar=True,
    ):
        """Inclusion of the inputs or of the weights of a fitted sparse regressor.

        Parameters
        ----------
        estimator : fitted SparseGibbsMLPRegressor or Pipeline
            A :class:`~skgibbs.SparseGibbsMLPRegressor`, or a pipeline ending
            in one.
        kind : {"features", "weights"}, default="features"
            ``"features"``: ``feature_inclusion_`` as bars; ``"weights"``:
            ``unpack_inclusion()`` as one heat map per layer.
        feature_names : array-like of str, default=None
            Names of the inputs of the network; by default its
            ``feature_names_in_`` (fitted on a DataFrame), else the output
            names of a pipeline's steps before the last, else ``"x0"``,
            ``"x1"``, ...
        name : str, default=None
            Title; none by default.
        ax : matplotlib.axes.Axes or sequence of Axes, default=None
        sort, max_features, highlight, layers, bar_kw, imshow_kw, colorbar
            Passed on to :meth:`plot`.

        Returns
        -------
        InclusionDisplay

        Raises
        ------
        TypeError
            When the estimator (the last step of a pipeline) reports no
            inclusion probabilities.
        sklearn.exceptions.NotFittedError
            When it is not fitted.
        """
        final, _ = final_step(estimator)
        if not hasattr(final, "unpack_inclusion"):
            raise TypeError(
                "InclusionDisplay needs a SparseGibbsMLPRegressor, or a pipeline ending in one; "
                f"got {_estimator_name(estimator)}."
            )
        check_is_fitted(final)
        if kind == "features":
            inclusion = final.feature_inclusion_
        elif kind == "weights":
            inclusion = final.unpack_inclusion()[0]
        else:
            raise ValueError(f"kind must be 'features' or 'weights', got {kind!r}.")
        if feature_names is None:
            feature_names = getattr(final, "feature_names_in_", None)
        if feature_names is None and final is not estimator:
            feature_names = _pipeline_feature_names(estimator)
        display = cls(inclusion, kind=kind, feature_names=feature_names, estimator_name=name)
        return display.plot(
            ax=ax,
            sort=sort,
            max_features=max_features,
            highlight=highlight,
            layers=layers,
            bar_kw=bar_kw,
            imshow_kw=imshow_kw,
            colorbar=colorbar,
        )
