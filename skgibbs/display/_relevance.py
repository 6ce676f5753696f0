"""The learned scale of each input under an ARD prior, with its posterior interval."""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..metrics import final_step
from ..problem import fitted_prior
from ._common import _estimator_name, _pyplot
from ._inclusion import _MAX_TICK_LABELS, _pipeline_feature_names, bar_order

__all__ = ["InputRelevanceDisplay"]


class InputRelevanceDisplay:
    """Each input's prior scale under ``prior="ard"``: bars of the posterior mean, whiskers of the interval.

    The scale of input ``i`` is ``tau_i^(-1/2)``, the standard deviation of
    the weights out of that input given its precision ``tau_i``
    (``input_relevance_`` and ``input_relevance_interval_`` of
    :class:`~skgibbs.GibbsMLPRegressor` and
    :class:`~skgibbs.GibbsMLPClassifier`). An input the data do not need
    has a small scale; the dashed line marks the scale the prior centres
    on. Build it with :meth:`from_estimator`; :meth:`plot` draws.

    Parameters
    ----------
    relevance : array-like of shape (n_features,)
        Posterior mean of each input's scale.
    interval : array-like of shape (n_features, 2), default=None
        Lower and upper end of each input's posterior interval.
    feature_names : array-like of str of shape (n_features,), default=None
        ``"x0"``, ``"x1"``, ... by default.
    prior_scale : float, default=None
        The scale the Gamma prior centres on, drawn as a dashed line.
    estimator_name : str, default=None
        Title.

    Attributes
    ----------
    order_ : ndarray of int
        The input of each bar, left to right.
    bars_ : matplotlib.container.BarContainer
    ax_ : matplotlib.axes.Axes
    figure_ : matplotlib.figure.Figure

    Examples
    --------
    >>> disp = InputRelevanceDisplay([1.2, 0.05, 0.4], feature_names=["age", "bmi", "bp"])
    >>> disp.feature_names.tolist()
    ['age', 'bmi', 'bp']
    """

    def __init__(
        self, relevance, interval=None, *, feature_names=None, prior_scale=None, estimator_name=None
    ):
        self.relevance = np.asarray(relevance, dtype=float)
        if self.relevance.ndim != 1:
            raise ValueError(
                f"relevance must be 1-d (one scale per input), got shape {self.relevance.shape}."
            )
        n = len(self.relevance)
        self.interval = None if interval is None else np.asarray(interval, dtype=float)
        if self.interval is not None and self.interval.shape != (n, 2):
            raise ValueError(f"interval must have shape ({n}, 2), got {self.interval.shape}.")
        names = [f"x{j}" for j in range(n)] if feature_names is None else feature_names
        self.feature_names = np.asarray([str(name) for name in names], dtype=object)
        if len(self.feature_names) != n:
            raise ValueError(f"feature_names has {len(self.feature_names)} names for {n} inputs.")
        self.prior_scale = prior_scale
        self.estimator_name = estimator_name

    def plot(self, ax=None, *, sort=True, max_features=None, log_scale=True, bar_kw=None):
        """Draw the bars.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
        sort : bool, default=True
            From the largest scale to the smallest; False keeps the column order.
        max_features : int, default=None
            Draw only the first ``max_features`` bars.
        log_scale : bool, default=True
            A logarithmic scale axis (the scales of irrelevant inputs fall
            by orders of magnitude).
        bar_kw : dict, default=None
            Passed to :meth:`matplotlib.axes.Axes.bar`.

        Returns
        -------
        InputRelevanceDisplay
        """
        plt = _pyplot("InputRelevanceDisplay")
        if ax is None:
            _, ax = plt.subplots()
        order = bar_order(self.relevance, sort, max_features)
        positions = np.arange(len(order))
        style = {"width": 0.8, "color": "C0", **(bar_kw or {})}
        if self.interval is not None:
            low, high = self.interval[order, 0], self.interval[order, 1]
            mean = self.relevance[order]
            style.setdefault("yerr", np.vstack([np.maximum(mean - low, 0), np.maximum(high - mean, 0)]))
            style.setdefault("capsize", 3)
        self.bars_ = ax.bar(positions, self.relevance[order], **style)
        if self.prior_scale is not None:
            ax.axhline(self.prior_scale, color="0.4", linestyle="--", linewidth=1, label="prior centre")
            ax.legend(loc="upper right")
        if len(order) <= _MAX_TICK_LABELS:
            names = self.feature_names[order].tolist()
            ax.set_xticks(positions, names, rotation=90 if len(order) > 10 or max(map(len, names)) > 6 else 0)
        ax.set_xlabel("input")
        if log_scale:
            ax.set_yscale("log")
        ax.set_ylabel("scale of the input's weights (input_relevance_)")
        if self.estimator_name is not None:
            ax.set_title(self.estimator_name)
        self.order_, self.ax_, self.figure_ = order, ax, ax.figure
        return self

    @classmethod
    def from_estimator(cls, estimator, *, feature_names=None, name=None, ax=None, **plot_kw):
        """The input scales of a regressor or classifier fitted with ``prior="ard"``.

        Parameters
        ----------
        estimator : fitted GibbsMLPRegressor, GibbsMLPClassifier or Pipeline
            Fitted with ``prior="ard"``, or a pipeline ending in one.
        feature_names : array-like of str, default=None
            By default the estimator's ``feature_names_in_``, else the output
            names of a pipeline's steps before the last.
        name : str, default=None
            Title.
        ax : matplotlib.axes.Axes, default=None
        **plot_kw
            Passed to :meth:`plot` (``sort``, ``max_features``,
            ``log_scale``, ``bar_kw``).

        Returns
        -------
        InputRelevanceDisplay

        Raises
        ------
        TypeError
            When the estimator was not fitted with ``prior="ard"``.
        """
        final, _ = final_step(estimator)
        check_is_fitted(final)
        if not hasattr(final, "input_relevance_"):
            raise TypeError(
                "InputRelevanceDisplay needs an estimator fitted with prior='ard' (or a pipeline ending in "
                f"one); got {_estimator_name(estimator)} with prior={_prior_kind(final)!r}."
            )
        if feature_names is None:
            feature_names = getattr(final, "feature_names_in_", None)
        if feature_names is None and final is not estimator:
            feature_names = _pipeline_feature_names(estimator)
        prior = fitted_prior(final)
        centre = float(prior.mean_precision()[0]) ** -0.5
        display = cls(
            final.input_relevance_,
            final.input_relevance_interval_,
            feature_names=feature_names,
            prior_scale=centre,
            estimator_name=name,
        )
        return display.plot(ax=ax, **plot_kw)


def _prior_kind(estimator):
    """The prior the fit sampled: ``prior_`` (``prior="auto"`` resolved), else the ``prior`` parameter."""
    return getattr(estimator, "prior_", getattr(estimator, "prior", None))
