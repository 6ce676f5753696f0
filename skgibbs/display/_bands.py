"""Posterior mean and pointwise bands of a regressor along one input."""

import numbers

import numpy as np
from sklearn.base import is_regressor
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import check_array, check_is_fitted

from .._levels import check_levels
from ..metrics import final_step
from ._common import _estimator_name, _pyplot

__all__ = ["PredictionBandDisplay"]

_KINDS = ("predictive", "credible")  # widest first: the order in which bands are drawn
_ALPHA = {"predictive": 0.15, "credible": 0.35}


def _check_kinds(kind):
    kinds = (kind,) if isinstance(kind, str) else tuple(kind)
    if not kinds or any(k not in _KINDS for k in kinds) or len(set(kinds)) != len(kinds):
        raise ValueError(
            f"kind must be 'predictive', 'credible' or a sequence of both without repeats, got {kind!r}."
        )
    return tuple(k for k in _KINDS if k in kinds)


def _level_label(level):
    return f"{100 * level:.4g}%"


def _as_table(X):
    """A DataFrame as it is, anything else as a 2-d array (non-numeric entries allowed)."""
    if hasattr(X, "iloc"):
        return X
    return check_array(X, dtype=None, ensure_all_finite="allow-nan")


def _column_index(X, feature):
    """Position of ``feature`` (an index, or a column name of a DataFrame ``X``) among the columns."""
    n_features = X.shape[1]
    if isinstance(feature, str):
        columns = [str(c) for c in getattr(X, "columns", [])]
        if feature not in columns:
            raise ValueError(
                f"feature={feature!r} is not a column of X"
                + (f" (columns: {columns})." if columns else "; X has no column names, pass an index.")
            )
        return columns.index(feature)
    is_index = isinstance(feature, numbers.Integral) and not isinstance(feature, bool)
    if is_index and -n_features <= feature < n_features:
        return int(feature) % n_features
    raise ValueError(
        f"feature must be a column index in [0, {n_features}) or a column name, got {feature!r}."
    )


def _column(X, j):
    """Column ``j`` of an array or DataFrame as a float array."""
    values = X.iloc[:, j] if hasattr(X, "iloc") else np.asarray(X)[:, j]
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"Column {j} of X is not numeric; bands are drawn along a numeric input.") from exc


def _grid_inputs(X, j, values):
    """Rows of ``X``'s columns at their reference value, column ``j`` running through ``values``.

    The reference of a numeric column is its median over ``X``; a DataFrame's
    non-numeric (or boolean) columns take their most frequent value.
    """
    n = len(values)
    if hasattr(X, "iloc"):
        from pandas.api.types import is_bool_dtype, is_numeric_dtype

        grid = X.iloc[np.zeros(n, dtype=int)].reset_index(drop=True)
        for k, column in enumerate(X.columns):
            col = X[column]
            if k == j:
                grid[column] = values
            elif is_numeric_dtype(col) and not is_bool_dtype(col):
                grid[column] = col.median()
            else:
                grid[column] = col.mode().iloc[0]
        return grid
    X = check_array(X, dtype=np.float64, ensure_all_finite="allow-nan")
    grid = np.repeat(np.nanmedian(X, axis=0)[None, :], n, axis=0)
    grid[:, j] = values
    return grid


class PredictionBandDisplay:
    """Posterior mean and pointwise predictive and credible bands along one input.

    The line is the posterior mean ``fbar(x)``; each band is an equal-tailed
    pointwise interval at one confidence level, as
    ``predict_interval(X, confidence_level, kind)`` returns it: the
    *predictive* band holds a new observation ``y`` (the function and the
    noise), the *credible* band the regression function ``f(x)`` alone, so
    at one level the credible band lies inside the predictive one. Build it
    with :meth:`from_estimator` or :meth:`from_predictions`; the constructor
    only stores the arrays, :meth:`plot` draws them.

    Parameters
    ----------
    x : array-like of shape (n_points,)
        Values of the input along which the bands run; the display sorts
        every array by ``x``.
    y_pred : array-like of shape (n_points,)
        Posterior mean at ``x``.
    y_pis : dict of str to array-like of shape (n_points, 2, n_levels)
        Bounds of the bands of each kind, in the shape of
        ``predict_interval`` (lower bounds in ``[:, 0]``, upper in
        ``[:, 1]``, one slice per level; ``(n_points, 2)`` is one level).
        The keys name the kind of band in the legend (``"predictive"``,
        ``"credible"``); bands are drawn in the order of the keys.
    confidence_level : float or array-like of shape (n_levels,), default=None
        Level of each slice of the bands, for the legend; None for one
        level left unnamed.
    x_train, y_train : array-like of shape (n_train,), default=None
        Observations to scatter, e.g. the training data along the input.
    feature_name : str, default=None
        Label of the x axis.
    estimator_name : str, default=None
        Name of the estimator, for the legend.
    X_grid : array-like or DataFrame of shape (n_points, n_features), default=None
        The inputs at which the estimator was evaluated, one row per point
        of ``x`` (:meth:`from_estimator` sets it); kept for reference.

    Attributes
    ----------
    x, y_pred : ndarray of shape (n_points,)
        As given, sorted by ``x``.
    y_pis : dict of str to ndarray of shape (n_points, 2, n_levels)
        As given, sorted by ``x``.
    confidence_level : ndarray of shape (n_levels,) or None
    x_train, y_train : ndarray of shape (n_train,) or None
    feature_name, estimator_name : str or None
    X_grid : ndarray, DataFrame or None
        Sorted by ``x``.
    line_ : matplotlib.lines.Line2D
        The posterior mean.
    bands_ : dict of str to list of matplotlib.collections.PolyCollection
        For each kind, one band per level, in the order of
        ``confidence_level``.
    scatter_ : matplotlib.collections.PathCollection or None
        The observations; None without ``x_train``.
    ax_ : matplotlib.axes.Axes
    figure_ : matplotlib.figure.Figure

    See Also
    --------
    skgibbs.GibbsMLPRegressor.predict_interval : The bands drawn here.
    sklearn.inspection.PartialDependenceDisplay : Average effect of an input.

    Notes
    -----
    With several inputs, the bands are a slice of the posterior: the other
    inputs are held at one reference row, so the bands describe ``f`` on a
    line through input space, and the scattered observations (all of them,
    whatever their other inputs) are a projection onto that input. They do
    not average over the other inputs, as a partial dependence plot does.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.linspace(0, 1, 5)
    >>> y_pis = {"credible": np.stack([x - 0.1, x + 0.1], axis=1)}  # one level, shape (5, 2)
    >>> disp = PredictionBandDisplay(x, x, y_pis, confidence_level=0.9)
    >>> disp.y_pis["credible"].shape, disp.confidence_level
    ((5, 2, 1), array([0.9]))
    """

    def __init__(
        self,
        x,
        y_pred,
        y_pis,
        *,
        confidence_level=None,
        x_train=None,
        y_train=None,
        feature_name=None,
        estimator_name=None,
        X_grid=None,
    ):
        x = np.asarray(x, dtype=float).ravel()
        order = np.argsort(x, kind="stable")
        self.x = x[order]
        self.y_pred = np.asarray(y_pred, dtype=float).ravel()
        if self.y_pred.shape != x.shape:
            raise ValueError(f"y_pred must have shape {x.shape} like x, got {self.y_pred.shape}.")
        self.y_pred = self.y_pred[order]
        if not isinstance(y_pis, dict) or not y_pis:
            raise TypeError(
                "y_pis must be a non-empty dict of kind -> array of shape (n_points, 2, n_levels)."
            )
        self.y_pis = {}
        for kind, bounds in y_pis.items():
            bounds = np.asarray(bounds, dtype=float)
            if bounds.ndim == 2:
                bounds = bounds[:, :, None]
            if bounds.ndim != 3 or bounds.shape[:2] != (len(x), 2):
                raise ValueError(
                    f"y_pis[{kind!r}] must have shape ({len(x)}, 2, n_levels), got {np.shape(y_pis[kind])}."
                )
            self.y_pis[kind] = bounds[order]
        n_levels = {bounds.shape[2] for bounds in self.y_pis.values()}
        if len(n_levels) != 1:
            raise ValueError(f"Every band needs the same number of levels, got {sorted(n_levels)}.")
        (n_levels,) = n_levels
        if confidence_level is None:
            if n_levels != 1:
                raise ValueError(f"The bands have {n_levels} levels: name them with confidence_level.")
            self.confidence_level = None
        else:
            self.confidence_level = check_levels(confidence_level)
            if len(self.confidence_level) != n_levels:
                raise ValueError(
                    f"confidence_level has {len(self.confidence_level)} levels but the bands have {n_levels}."
                )
        if (x_train is None) != (y_train is None):
            raise ValueError("Pass both x_train and y_train, or neither.")
        self.x_train = None if x_train is None else np.asarray(x_train, dtype=float).ravel()
        self.y_train = None if y_train is None else np.asarray(y_train, dtype=float).ravel()
        if self.x_train is not None and self.x_train.shape != self.y_train.shape:
            raise ValueError(
                f"x_train and y_train must have one length, got {len(self.x_train)} and {len(self.y_train)}."
            )
        self.feature_name = feature_name
        self.estimator_name = estimator_name
        self.X_grid = None if X_grid is None else _safe_indexing(X_grid, order)

    def plot(self, ax=None, *, name=None, line_kw=None, band_kw=None, scatter_kw=None):
        """Draw the posterior mean, the bands and the observations.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            Axes to draw on; by default a new figure. Displays of several
            estimators can share one: each takes the next colour of the
            axes' cycle for its line and bands.
        name : str, default=None
            Legend name; by default ``estimator_name``.
        line_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.plot` for the mean (e.g.
            ``color``, which the bands take too).
        band_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.fill_between` for every
            band. By default the bands take the line's colour, the
            predictive ones lighter than the credible ones; nested levels
            overlap, so a narrower band is darker.
        scatter_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.scatter` for the
            observations.

        Returns
        -------
        PredictionBandDisplay
            ``self``, with ``line_``, ``bands_``, ``scatter_``, ``ax_`` and
            ``figure_`` set.
        """
        plt = _pyplot("PredictionBandDisplay")
        if ax is None:
            _, ax = plt.subplots()
        name = self.estimator_name if name is None else name
        prefix = "" if name is None else f"{name}: "
        style = {"label": f"{prefix}posterior mean", "zorder": 3, **(line_kw or {})}
        self.line_ = ax.plot(self.x, self.y_pred, **style)[0]
        color = self.line_.get_color()
        levels = self.confidence_level
        widest_first = [0] if levels is None else np.argsort(-levels, kind="stable")
        self.bands_ = {}
        for kind, bounds in self.y_pis.items():
            bands = [None] * bounds.shape[2]
            for i in widest_first:
                level = "" if levels is None else f"{_level_label(levels[i])} "
                style = {
                    "color": color,
                    "alpha": _ALPHA.get(kind, 0.25),
                    "linewidth": 0,
                    "label": f"{prefix}{level}{kind} band",
                    **(band_kw or {}),
                }
                bands[i] = ax.fill_between(self.x, bounds[:, 0, i], bounds[:, 1, i], **style)
            self.bands_[kind] = bands
        self.scatter_ = None
        if self.x_train is not None:
            style = {"s": 6, "color": "0.35", "alpha": 0.5, "linewidths": 0, "label": "observations"}
            style = {**style, "zorder": 2, **(scatter_kw or {})}
            self.scatter_ = ax.scatter(self.x_train, self.y_train, **style)
        ax.set_xlabel("x" if self.feature_name is None else self.feature_name)
        ax.set_ylabel("y")
        ax.legend(loc="best")
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        *,
        feature=0,
        grid_resolution=200,
        grid_range=None,
        confidence_level=None,
        kind=("predictive", "credible"),
        X_train=None,
        y_train=None,
        name=None,
        ax=None,
        line_kw=None,
        band_kw=None,
        scatter_kw=None,
    ):
        """Bands of a fitted regressor along one input, the others held at their median.

        The estimator is evaluated on ``grid_resolution`` rows that share one
        reference value for every input but ``feature``: the median over
        ``X`` of each numeric column (for a DataFrame, the most frequent
        value of a non-numeric or boolean column), while ``feature`` runs
        evenly over ``grid_range``.

        Parameters
        ----------
        estimator : fitted regressor or Pipeline
            A skgibbs regressor (:class:`~skgibbs.GibbsMLPRegressor`,
            :class:`~skgibbs.SparseGibbsMLPRegressor`), or a pipeline ending
            in one (:mod:`skgibbs.pipeline` or scikit-learn's: ``X`` goes
            through the steps before the last).
        X : array-like or DataFrame of shape (n_samples, n_features)
            Inputs that set the reference row and the default range, e.g.
            the training inputs.
        feature : int or str, default=0
            The input along which the bands run: a column index, or a column
            name when ``X`` is a DataFrame. It must be numeric.
        grid_resolution : int >= 2, default=200
            Number of points of the grid.
        grid_range : (float, float), default=None
            Smallest and largest value of ``feature`` on the grid; by default
            its range over ``X``. A wider range shows the bands outside the
            data.
        confidence_level : float or array-like of floats in (0, 1), default=None
            One band per level and kind; by default the estimator's
            ``confidence_level``.
        kind : {"predictive", "credible"} or a sequence of both, default=("predictive", "credible")
            The bands to draw (``kind`` of ``predict_interval``).
        X_train : array-like or DataFrame of shape (n_train, n_features), default=None
            With ``y_train``, observations to scatter against ``feature``.
        y_train : array-like of shape (n_train,), default=None
        name : str, default=None
            Legend name; by default none (one estimator needs none).
        ax : matplotlib.axes.Axes, default=None
        line_kw, band_kw, scatter_kw : dict, default=None
            Passed on to :meth:`plot`.

        Returns
        -------
        PredictionBandDisplay
            With ``X_grid`` set to the rows that were evaluated.

        Raises
        ------
        TypeError
            When the estimator (the last step of a pipeline) is not a
            regressor with ``predict_interval``.
        sklearn.exceptions.NotFittedError
            When it is not fitted.
        """
        kinds = _check_kinds(kind)
        final, _ = final_step(estimator)
        if not (is_regressor(final) and hasattr(final, "predict_interval")):
            raise TypeError(
                f"PredictionBandDisplay needs a skgibbs regressor, or a pipeline ending in one, with "
                f"predict_interval(X, confidence_level, kind); got {_estimator_name(estimator)}."
            )
        check_is_fitted(estimator)
        if not (isinstance(grid_resolution, numbers.Integral) and grid_resolution >= 2):
            raise ValueError(f"grid_resolution must be an integer >= 2, got {grid_resolution!r}.")
        if confidence_level is None:
            confidence_level = getattr(final, "confidence_level", None)
            if confidence_level is None:
                raise ValueError(f"{type(final).__name__} has no confidence_level: pass confidence_level.")
        levels = check_levels(confidence_level)

        X = _as_table(X)
        j = _column_index(X, feature)
        if grid_range is None:
            column = _column(X, j)
            grid_range = (np.nanmin(column), np.nanmax(column))
        low, high = (float(v) for v in grid_range)
        if not low < high:
            raise ValueError(f"The grid needs a range with low < high, got ({low}, {high}).")
        values = np.linspace(low, high, grid_resolution)
        X_grid = _grid_inputs(X, j, values)

        _, Xt = final_step(estimator, X_grid)
        y_pis = {}
        for k in kinds:
            y_pred, y_pis[k] = final.predict_interval(Xt, confidence_level=levels, kind=k)
        x_train = None
        if X_train is not None:
            X_train = _as_table(X_train)
            x_train = _column(X_train, _column_index(X_train, feature))
        feature_name = str(X.columns[j]) if hasattr(X, "columns") else f"x{j}"
        display = cls(
            values,
            y_pred,
            y_pis,
            confidence_level=levels,
            x_train=x_train,
            y_train=y_train,
            feature_name=feature_name,
            estimator_name=name,
            X_grid=X_grid,
        )
        return display.plot(ax=ax, line_kw=line_kw, band_kw=band_kw, scatter_kw=scatter_kw)

    @classmethod
    def from_predictions(
        cls,
        x,
        y_pred,
        y_pis,
        *,
        confidence_level=None,
        kind="predictive",
        x_train=None,
        y_train=None,
        feature_name=None,
        name=None,
        ax=None,
        line_kw=None,
        band_kw=None,
        scatter_kw=None,
    ):
        """Bands from the output of ``predict_interval`` along one input.

        Parameters
        ----------
        x : array-like of shape (n_points,)
            The input along which the bands run (need not be sorted).
        y_pred : array-like of shape (n_points,)
            Posterior mean at ``x``.
        y_pis : array-like of shape (n_points, 2, n_levels) or (n_points, 2), or dict
            Bounds as ``predict_interval`` returns them, of the kind named by
            ``kind``; or a dict of kind -> bounds for several kinds.
        confidence_level : float or array-like of shape (n_levels,), default=None
            The levels of the slices of ``y_pis``, for the legend.
        kind : str, default="predictive"
            Name of the bands when ``y_pis`` is an array.
        x_train, y_train : array-like of shape (n_train,), default=None
            Observations to scatter.
        feature_name : str, default=None
            Label of the x axis.
        name : str, default=None
            Legend name.
        ax : matplotlib.axes.Axes, default=None
        line_kw, band_kw, scatter_kw : dict, default=None
            Passed on to :meth:`plot`.

        Returns
        -------
        PredictionBandDisplay
        """
        if not isinstance(y_pis, dict):
            y_pis = {kind: y_pis}
        display = cls(
            x,
            y_pred,
            y_pis,
            confidence_level=confidence_level,
            x_train=x_train,
            y_train=y_train,
            feature_name=feature_name,
            estimator_name=name,
        )
        return display.plot(ax=ax, line_kw=line_kw, band_kw=band_kw, scatter_kw=scatter_kw)
