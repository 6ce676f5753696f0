"""The scorers: one design, its factories and ready-made scorers for model selection.

They follow scikit-learn's
``scorer(estimator, X, y, sample_weight=None) -> float`` convention,
greater is better, and accept a Pipeline. The interval scorers, WAIC and
the log predictive density need a skgibbs estimator as the last step; the
probability scorers work with any fitted classifier that has
``predict_proba`` and ``classes_``. The scorers of held-out rows weigh
those rows by ``sample_weight``; the scorers that read a value of the fit
(WAIC, the diagnostics) ignore it, the weights given at fit having weighed
that value already.

Every scorer is a :class:`Scorer`: it reaches the
last step of the estimator through a Pipeline (:func:`final_step`), asks it
for one *response* (``predict_interval``, ``predict_proba``,
``predict_samples`` or the fitted WAIC) and returns
``sign * metric(y, response, **kwargs)``, with ``sample_weight=`` added
when the scorer is given weights of the held-out rows. A scorer holds
module-level functions and plain values only, so it pickles (joblib sends
it to worker processes), and it prints as the call that made it. Under
scikit-learn's metadata routing a scorer of held-out rows requests
``sample_weight`` for its ``score`` (:meth:`Scorer.set_score_request`
changes that).
"""

import copy

import numpy as np
from scipy.special import logsumexp
from sklearn.metrics import brier_score_loss, log_loss
from sklearn.utils import _safe_indexing
from sklearn.utils.metadata_routing import MetadataRequest

from .._chunks import row_chunks
from .._data import fit_weights
from .._levels import check_level
from ..criteria import gaussian_log_likelihood, student_log_likelihood
from ..model import STUDENT_DF
from ._calibration import expected_calibration_error, maximum_calibration_error
from ._intervals import coverage_score, interval_score, mean_width_score
from ._validation import check_binning

__all__ = [
    "Scorer",
    "final_step",
    "waic_scorer",
    "log_predictive_density_scorer",
    "make_coverage_scorer",
    "make_width_scorer",
    "make_interval_scorer",
    "make_ece_scorer",
    "make_mce_scorer",
    "neg_expected_calibration_error_scorer",
    "neg_maximum_calibration_error_scorer",
    "neg_brier_scorer",
    "neg_log_loss_scorer",
    "make_diagnostic_scorers",
]


def final_step(estimator, X=None):
    """The last step of a pipeline, and ``X`` pushed through the steps before it.

    Parameters
    ----------
    estimator : estimator or Pipeline
        A fitted estimator. A :class:`~sklearn.pipeline.Pipeline` (anything
        with ``steps`` that slices) is split into its transformers and its
        last step; any other estimator is its own last step.
    X : array-like of shape (n_samples, n_features), default=None
        Input of ``estimator``; None when only the last step is wanted.

    Returns
    -------
    final : estimator
        The last step.
    Xt : array-like or None
        ``X`` transformed by the steps before the last, ``X`` itself when
        there are none, None when ``X`` is None.

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = [[0.0], [1.0], [2.0]], [0.0, 1.0, 2.0]
    >>> pipe = make_pipeline(StandardScaler(), LinearRegression()).fit(X, y)
    >>> final, Xt = final_step(pipe, X)
    >>> type(final).__name__, Xt.ravel().round(3).tolist()
    ('LinearRegression', [-1.225, 0.0, 1.225])
    >>> final_step(final, X)[1] is X
    True
    """
    if not (hasattr(estimator, "steps") and hasattr(estimator, "__getitem__")):
        return estimator, X
    if X is not None and len(estimator.steps) > 1:
        X = estimator[:-1].transform(X)
    return estimator[-1], X


# ----------------------------------------------------------- responses
# Each response takes the last step, the transformed X and the scorer's
# keyword arguments, and returns the prediction with the keyword arguments
# of the metric.
def _interval_bounds(final, Xt, kwargs):
    _, y_pis = final.predict_interval(Xt, confidence_level=kwargs["confidence_level"])
    return y_pis, kwargs


def _probabilities(final, Xt, kwargs):
    # As scikit-learn's scorers, a binary classifier gives the column of
    # classes_[-1]; labels name the columns even when the test fold lacks a class.
    proba = final.predict_proba(Xt)
    if len(final.classes_) == 2:
        proba = proba[:, 1]
    return proba, {**kwargs, "labels": final.classes_}


def _posterior_draws(final, Xt, kwargs):
    # (rows, draws (S, rows)) pairs, chunk by chunk of rows: the (S, n) draws are never held at once
    out = {**kwargs, "noise_variance": final.noise_variance_, "weights": _draw_weights(final)}
    if getattr(final, "noise_", None) == "student":  # a Student-t noise of that variance
        out["noise_df"] = STUDENT_DF
    return _draw_chunks(final, Xt), out


def _draw_weights(final):
    """Weight of each column of ``predict_samples``: ``chain_weights_[k] / n_draws`` (None: equal weights)."""
    chain_weights, samples = getattr(final, "chain_weights_", None), getattr(final, "samples_", None)
    if chain_weights is None or samples is None or samples.ndim != 3 or np.all(chain_weights == chain_weights[0]):
        return None
    return np.repeat(np.asarray(chain_weights, dtype=float) / samples.shape[1], samples.shape[1])


def _draw_chunks(final, Xt):
    # with a noise that varies with the inputs, each chunk also carries the draws' variances (S, rows)
    n = len(Xt)
    samples = getattr(final, "samples_", None)
    n_draws = samples.shape[0] * samples.shape[1] if samples is not None and samples.ndim == 3 else 1
    varies = getattr(final, "noise_", None) in ("heteroscedastic", "student")
    for rows in row_chunks(n, n_draws, width=6 if varies else 4):
        X_rows = _safe_indexing(Xt, np.arange(rows.start, rows.stop))
        if varies:
            yield rows, final.predict_samples(X_rows).T, final.predict_noise_samples(X_rows).T
        else:
            yield rows, final.predict_samples(X_rows).T


def _fitted_waic(final, Xt, kwargs):
    return final.generalization_loss_, kwargs


# response name: (how to get it, what the last step needs, what it is)
_RESPONSES = {
    "predict_interval": (_interval_bounds, ("predict_interval",), "a skgibbs regressor"),
    "predict_proba": (_probabilities, ("predict_proba", "classes_"), "a fitted classifier"),
    "predict_samples": (
        _posterior_draws,
        ("predict_samples", "noise_variance_"),
        "a fitted skgibbs estimator",
    ),
    "waic": (_fitted_waic, ("generalization_loss_",), "a fitted skgibbs estimator (e.g. GibbsMLPRegressor)"),
}

#: responses read from the fit, not computed on the held-out rows: their weights do not apply
_FITTED = ("waic",)


class Scorer:
    """``scorer(estimator, X, y, sample_weight=None) = sign * metric(y, response, **kwargs)``.

    Parameters
    ----------
    metric : callable
        ``metric(y_true, response, **kwargs) -> float``, which also takes
        ``sample_weight=`` unless the response is ``"waic"``; a
        module-level function, so that the scorer pickles.
    response : {"predict_interval", "predict_proba", "predict_samples", "waic"}
        What the last step of the estimator is asked for. ``"predict_samples"``
        gives the metric an iterator of ``(rows, draws)`` pairs, the draws
        ``(S, rows)`` of consecutive slices of rows, so that the draws at
        every row are never held at once, with the keyword arguments
        ``noise_variance`` and ``weights`` (the weight of every draw, from
        the estimator's ``chain_weights_``, or None); an estimator with
        ``noise="heteroscedastic"`` gives ``(rows, draws, variances)``
        triples, the variances of the draws at those rows in place of
        ``noise_variance``; one with ``noise="student"`` gives those triples
        and the keyword ``noise_df``, the degrees of freedom of its t noise.
    sign : {1, -1}
        -1 turns a loss into a greater-is-better score.
    name : str
        The ``repr``: the call that makes an equal scorer.
    **kwargs : dict
        Passed to ``metric`` (and ``confidence_level`` to ``predict_interval``).

    Notes
    -----
    Called with ``sample_weight`` (one weight per row of ``X``), the
    scorer checks the weights before it asks for the response (a
    ValueError names ``sample_weight`` when they are not finite and
    ``>= 0``, not all 0, one per row) and passes them to ``metric`` as
    ``sample_weight=``; weights all 1 are passed as no weights, so that the
    score is the unweighted one exactly. The ``"waic"`` response is a value
    of the fit, not of the rows scored: it ignores ``sample_weight`` (the
    weights given at fit already weigh it).

    With scikit-learn's metadata routing enabled, the scorer requests
    ``sample_weight`` for ``score`` (except for ``"waic"``, which
    requests nothing): a search or :func:`~sklearn.model_selection.cross_validate`
    that is given ``sample_weight`` passes each test fold's weights to it.
    :meth:`set_score_request` returns a scorer that requests otherwise.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.metrics import log_loss
    >>> X, y = [[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1]
    >>> clf = LogisticRegression().fit(X, y)
    >>> scorer = Scorer(log_loss, "predict_proba", sign=-1, name="neg_nll")
    >>> scorer
    neg_nll
    >>> bool(abs(scorer(clf, X, y) + log_loss(y, clf.predict_proba(X))) < 1e-12)
    True
    """

    def __init__(self, metric, response, *, sign, name, **kwargs):
        if response not in _RESPONSES:
            raise ValueError(f"response must be one of {sorted(_RESPONSES)}, got {response!r}.")
        if sign not in (1, -1):
            raise ValueError(f"sign must be 1 or -1, got {sign!r}.")
        self.metric = metric
        self.response = response
        self.sign = sign
        self.name = name
        self.kwargs = kwargs
        self._sample_weight_request = True

    def __call__(self, estimator, X=None, y=None, sample_weight=None):
        """The score of ``estimator`` on ``(X, y)``, the rows weighted by ``sample_weight``.

        Parameters
        ----------
        estimator : fitted estimator or Pipeline
        X : array-like of shape (n_samples, n_features), default=None
        y : array-like of shape (n_samples,), default=None
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each row of ``X``, finite and ``>= 0``, not all 0;
            ignored by the ``"waic"`` response (see Notes).

        Returns
        -------
        float
        """
        weights = None
        if sample_weight is not None and self.response not in _FITTED:
            weights = fit_weights(sample_weight, len(y))  # None for weights all 1
        final, Xt = final_step(estimator, X)
        get, needs, what = _RESPONSES[self.response]
        missing = [attribute for attribute in needs if not hasattr(final, attribute)]
        if missing:
            raise TypeError(
                f"{self!r} needs {what}, or a Pipeline ending in one, with {' and '.join(needs)}; "
                f"{type(final).__name__} lacks {' and '.join(missing)}."
            )
        response, kwargs = get(final, Xt, self.kwargs)
        if weights is not None:
            kwargs = {**kwargs, "sample_weight": weights}
        return self.sign * float(self.metric(y, response, **kwargs))

    def set_score_request(self, *, sample_weight=True):
        """A copy of the scorer that requests ``sample_weight`` as told, under metadata routing.

        Parameters
        ----------
        sample_weight : bool, None or str, default=True
            True: the weights given to a search (or to
            :func:`~sklearn.model_selection.cross_validate`) reach the
            scorer; False: they do not, and the score is unweighted; None:
            passing weights is an error; a str: the weights passed under
            that name reach the scorer. The values of scikit-learn's
            ``set_score_request``.

        Returns
        -------
        Scorer
            A new scorer, printed as this one followed by the call; this
            one is unchanged (the ready-made scorers are shared).

        Examples
        --------
        >>> from skgibbs.metrics import make_coverage_scorer
        >>> make_coverage_scorer(0.9).set_score_request(sample_weight=False)
        make_coverage_scorer(confidence_level=0.9).set_score_request(sample_weight=False)
        """
        # the request checks the value as scikit-learn does
        MetadataRequest(owner=self.name).score.add_request(param="sample_weight", alias=sample_weight)
        scorer = copy.copy(self)
        scorer._sample_weight_request = sample_weight
        scorer.name = f"{self.name}.set_score_request(sample_weight={sample_weight!r})"
        return scorer

    def get_metadata_routing(self):
        """The scorer's metadata request: ``sample_weight`` for ``score``, as :meth:`set_score_request` says.

        Returns
        -------
        sklearn.utils.metadata_routing.MetadataRequest
        """
        request = MetadataRequest(owner=self.name)
        if self.response not in _FITTED:
            request.score.add_request(param="sample_weight", alias=self._sample_weight_request)
        return request

    def _accept_sample_weight(self):
        # asked by scikit-learn's multi-metric scorer when it passes sample_weight without metadata routing
        return True

    def __repr__(self):
        return self.name


def _call(factory, **params):
    """``factory(key=value, ...)``, the repr of the scorer that the call returns."""
    return f"{factory}({', '.join(f'{key}={value!r}' for key, value in params.items())})"


# -------------------------------------------------- metrics as scored
# metric(y_true, response, **kwargs) -> float, with sample_weight= when the
# scorer is given weights. The interval responses hold the one level the
# scorer asked for, hence the [0].
def _coverage(y_true, y_pis, confidence_level, sample_weight=None):
    return coverage_score(y_true, y_pis, sample_weight=sample_weight)[0]


def _width(y_true, y_pis, confidence_level, sample_weight=None):
    return mean_width_score(y_pis, sample_weight=sample_weight)[0]


def _interval(y_true, y_pis, confidence_level, sample_weight=None):
    return interval_score(y_true, y_pis, confidence_level, sample_weight=sample_weight)[0]


def _brier(y_true, y_prob, labels, sample_weight=None):
    # brier_score_loss names the class of a binary probability vector by pos_label only
    if np.ndim(y_prob) == 1:
        return brier_score_loss(y_true, y_prob, pos_label=labels[-1], sample_weight=sample_weight)
    return brier_score_loss(y_true, y_prob, labels=labels, sample_weight=sample_weight)


def _log_predictive_density(
    y_true, draw_chunks, noise_variance, weights=None, noise_df=None, sample_weight=None
):
    # the draws come chunk by chunk of rows; the mean over rows (weighted by sample_weight) of
    # log sum_k w_k N(y_i; f_k(x_i), sigma^2) (or the Student-t of noise_df degrees of freedom and that
    # variance); weights are those of the draws
    y = np.asarray(y_true, dtype=float)
    total = 0.0
    for rows, draws, *variances in draw_chunks:  # a noise that varies with the inputs comes with the draws
        variance = variances[0] if variances else noise_variance
        if noise_df is None:
            log_lik = gaussian_log_likelihood(y[rows], draws, variance)
        else:
            log_lik = student_log_likelihood(y[rows], draws, variance, noise_df)
        if weights is None:
            log_density = logsumexp(log_lik, axis=0) - np.log(draws.shape[0])
        else:
            log_density = logsumexp(log_lik, axis=0, b=weights[:, None])
        total += np.sum(log_density) if sample_weight is None else sample_weight[rows] @ log_density
    return total / (len(y) if sample_weight is None else np.sum(sample_weight))


def _criterion(y_true, value):
    return value  # computed by the estimator at fit time; the test data play no part


# ------------------------------------------------------- regression
_WAIC = Scorer(_criterion, "waic", sign=-1, name="waic_scorer")
_LPD = Scorer(_log_predictive_density, "predict_samples", sign=1, name="log_predictive_density_scorer")


def waic_scorer(estimator, X=None, y=None, sample_weight=None):
    """Minus the WAIC generalization loss of a fitted skgibbs estimator (greater is better).

    The value is ``-estimator.generalization_loss_`` (Watanabe's WAIC per
    sample for the estimator's tempered posterior), computed by the
    estimator on the data it was fitted on: in
    :class:`~sklearn.model_selection.GridSearchCV` that is the training
    fold, and ``X``, ``y`` and ``sample_weight`` (the test fold) are
    ignored.

    Parameters
    ----------
    estimator : fitted estimator or Pipeline
        Its last step has the fitted attribute ``generalization_loss_``.
    X, y : ignored
    sample_weight : ignored
        Weights of the test rows do not apply to a value of the fit: the
        fit's own weights, given at fit, already weigh it (a fit with
        ``sample_weight`` has the weighted WAIC). Under metadata routing
        the scorer requests no ``sample_weight``.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from skgibbs import GibbsMLPRegressor
    >>> X = np.linspace(-1, 1, 30)[:, None]; y = np.sin(3 * X[:, 0])
    >>> reg = GibbsMLPRegressor(hidden_layer_sizes=(4,), n_samples=10, burn_in=30,
    ...                         pretrain_iter=30, random_state=0).fit(X, y)
    >>> bool(waic_scorer(reg) == -reg.generalization_loss_)
    True
    """
    return _WAIC(estimator, X, y)


def log_predictive_density_scorer(estimator, X, y, sample_weight=None):
    """Mean held-out log predictive density of a fitted skgibbs estimator (greater is better).

    ``(1/n) sum_i log mean_theta N(y_i; f_theta(x_i), noise_variance_)`` over
    the estimator's draws (each draw's variance at ``x_i`` with
    ``noise="heteroscedastic"``, and the Student-t of that variance with
    ``noise="student"``) (weighted by their chains' ``chain_weights_``
    when the chains are stacked), on ``(X, y)``: the held-out quantity that
    ``-generalization_loss_`` (WAIC) estimates from the training data, so a
    cross-validation scored by it and the WAIC search rank on one scale.

    Parameters
    ----------
    estimator : fitted estimator or Pipeline
        Its last step has ``predict_samples`` and ``noise_variance_``.
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    sample_weight : array-like of shape (n_samples,), default=None
        Weight of each row, finite and ``>= 0``, not all 0: the mean over
        the rows becomes ``sum_i w_i log p(y_i | x_i) / sum_i w_i``, so
        that an integer weight ``k`` counts the row ``k`` times. Under
        metadata routing the scorer requests ``sample_weight``, as the
        scorers made by :func:`make_coverage_scorer` do;
        ``log_predictive_density_scorer.set_score_request(sample_weight=False)``
        gives one that does not.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from skgibbs import GibbsMLPRegressor
    >>> X = np.linspace(-1, 1, 30)[:, None]; y = np.sin(3 * X[:, 0])
    >>> reg = GibbsMLPRegressor(hidden_layer_sizes=(4,), n_samples=10, burn_in=30,
    ...                         pretrain_iter=30, random_state=0).fit(X, y)
    >>> bool(np.isfinite(log_predictive_density_scorer(reg, X, y)))
    True
    """
    return _LPD(estimator, X, y, sample_weight=sample_weight)


# the function scorer routes its metadata as the scorer it calls
log_predictive_density_scorer.get_metadata_routing = _LPD.get_metadata_routing
log_predictive_density_scorer.set_score_request = _LPD.set_score_request
log_predictive_density_scorer._accept_sample_weight = _LPD._accept_sample_weight


def _interval_scorer(factory, metric, sign, confidence_level):
    level = check_level(confidence_level)
    name = _call(factory, confidence_level=level)
    return Scorer(metric, "predict_interval", sign=sign, name=name, confidence_level=level)


def make_coverage_scorer(confidence_level=0.9):
    """Scorer: empirical coverage of ``predict_interval`` on the test data.

    Parameters
    ----------
    confidence_level : float in (0, 1), default=0.9

    Returns
    -------
    callable
        ``scorer(estimator, X, y, sample_weight=None) -> float``; for a
        Pipeline, ``X`` goes through ``pipe[:-1]`` and ``predict_interval``
        of the last step. With ``sample_weight`` the coverage is the
        weighted fraction (:func:`coverage_score`). Coverage is closest to
        ``confidence_level`` at best, so rank candidates on it with care
        (it is not greater-is-better). Under metadata routing the scorer
        requests ``sample_weight``; its ``set_score_request`` returns one
        that requests otherwise.

    Examples
    --------
    >>> scorer = make_coverage_scorer(0.9)
    >>> scorer
    make_coverage_scorer(confidence_level=0.9)
    """
    return _interval_scorer("make_coverage_scorer", _coverage, 1, confidence_level)


def make_width_scorer(confidence_level=0.9):
    """Scorer: negative mean width of ``predict_interval`` (greater is better).

    Parameters
    ----------
    confidence_level : float in (0, 1), default=0.9

    Returns
    -------
    callable
        ``scorer(estimator, X, y, sample_weight=None) -> float``; with
        ``sample_weight``, the weighted mean width
        (:func:`mean_width_score`); weights are routed as for
        :func:`make_coverage_scorer`.

    Examples
    --------
    >>> make_width_scorer(0.8)
    make_width_scorer(confidence_level=0.8)
    """
    return _interval_scorer("make_width_scorer", _width, -1, confidence_level)


def make_interval_scorer(confidence_level=0.9):
    """Scorer: negative mean interval score (:func:`interval_score`), greater is better.

    Parameters
    ----------
    confidence_level : float in (0, 1), default=0.9

    Returns
    -------
    callable
        ``scorer(estimator, X, y, sample_weight=None) -> float``; with
        ``sample_weight``, the weighted mean score
        (:func:`interval_score`); weights are routed as for
        :func:`make_coverage_scorer`.

    Examples
    --------
    >>> make_interval_scorer(0.9)
    make_interval_scorer(confidence_level=0.9)
    """
    return _interval_scorer("make_interval_scorer", _interval, -1, confidence_level)


# --------------------------------------------------- classification
def _binned_scorer(factory, metric, n_bins, strategy):
    n_bins, strategy = check_binning(n_bins, strategy)
    name = _call(factory, n_bins=n_bins, strategy=strategy)
    return Scorer(metric, "predict_proba", sign=-1, name=name, n_bins=n_bins, strategy=strategy)


def make_ece_scorer(n_bins=15, strategy="uniform"):
    """Scorer: minus the :func:`expected_calibration_error` of ``predict_proba`` (greater is better).

    Parameters
    ----------
    n_bins : int >= 1, default=15
    strategy : {"uniform", "quantile"}, default="uniform"

    Returns
    -------
    callable
        ``scorer(estimator, X, y, sample_weight=None) -> float`` for any
        fitted classifier, or Pipeline ending in one, with ``predict_proba``
        and ``classes_``; the columns of ``predict_proba`` are named by
        ``classes_``, so a test fold may lack a class. ``sample_weight``
        goes to :func:`expected_calibration_error` and is routed as for
        :func:`make_coverage_scorer`.

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
    return _binned_scorer("make_ece_scorer", expected_calibration_error, n_bins, strategy)


def make_mce_scorer(n_bins=15, strategy="uniform"):
    """Scorer: minus the :func:`maximum_calibration_error` of ``predict_proba`` (greater is better).

    Parameters
    ----------
    n_bins : int >= 1, default=15
    strategy : {"uniform", "quantile"}, default="uniform"

    Returns
    -------
    callable
        ``scorer(estimator, X, y, sample_weight=None) -> float``, as
        :func:`make_ece_scorer`.

    Examples
    --------
    >>> make_mce_scorer(n_bins=10)
    make_mce_scorer(n_bins=10, strategy='uniform')
    """
    return _binned_scorer("make_mce_scorer", maximum_calibration_error, n_bins, strategy)


#: Minus the 15-bin uniform ECE of ``predict_proba``, ``make_ece_scorer()``.
neg_expected_calibration_error_scorer = make_ece_scorer()

#: Minus the 15-bin uniform MCE of ``predict_proba``, ``make_mce_scorer()``.
neg_maximum_calibration_error_scorer = make_mce_scorer()

#: Minus :func:`sklearn.metrics.brier_score_loss` of ``predict_proba``. Unlike
#: scikit-learn's ``"neg_brier_score"`` it names the columns by ``classes_``
#: (``pos_label`` for a binary classifier, ``labels`` otherwise), so a test
#: fold may lack a class; multiclass needs scikit-learn >= 1.7. ``sample_weight`` goes to the loss.
neg_brier_scorer = Scorer(_brier, "predict_proba", sign=-1, name="neg_brier_scorer")

#: Minus :func:`sklearn.metrics.log_loss` (mean NLL) of ``predict_proba``. Unlike
#: scikit-learn's ``"neg_log_loss"`` it passes ``labels=classes_``, so a test
#: fold may lack a class. ``sample_weight`` goes to the loss.
neg_log_loss_scorer = Scorer(log_loss, "predict_proba", sign=-1, name="neg_log_loss_scorer")


def _fitted_value(name):
    def score(estimator, X=None, y=None, sample_weight=None):  # a value of the fit: test rows play no part
        value = getattr(final_step(estimator)[0], name, np.nan)
        return float(np.sum(value)) if value is not None else np.nan

    score.__name__ = f"{name.rstrip('_')}_scorer"
    return score


#: the scoring names of :func:`make_diagnostic_scorers` and the fitted attribute each one reads
DIAGNOSTICS = {
    "rhat": "rhat_",
    "ess": "ess_",
    "within_chain_rhat": "within_chain_rhat_",
    "between_chain_rhat": "between_chain_rhat_",
    "n_divergent": "n_divergent_",
}


def make_diagnostic_scorers():
    """Scorers that read each fit's diagnostics, for the ``scoring`` dict of a search.

    Each reads a fitted attribute of the estimator fitted on the training
    fold (``X``, ``y`` and ``sample_weight``, the test fold, are ignored:
    the fit's own weights, given at fit, already weigh it): ``rhat`` the
    largest R-hat (``rhat_``), ``ess`` the smallest bulk ESS (``ess_``) of
    the function values at the training inputs, ``within_chain_rhat`` and
    ``between_chain_rhat``, and ``n_divergent`` the divergent transitions of
    all chains (NaN where the sampler has none). They are not scores to
    rank by: pass them beside the score, with ``refit`` naming it, and
    ``cv_results_`` then holds ``mean_test_rhat``, ``split0_test_rhat``,
    ... for every candidate and fold: which fit the warnings of the search
    came from.

    Returns
    -------
    dict of str to callable
        ``scorer(estimator, X=None, y=None, sample_weight=None) -> float``;
        under metadata routing they request no ``sample_weight``.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from sklearn.model_selection import GridSearchCV
    >>> from skgibbs import GibbsMLPRegressor
    >>> from skgibbs.metrics import make_diagnostic_scorers, waic_scorer
    >>> X = np.linspace(-1, 1, 30)[:, None]; y = np.sin(3 * X[:, 0])
    >>> reg = GibbsMLPRegressor(hidden_layer_sizes=(4,), sampler="hmc", n_samples=10, burn_in=20,
    ...                         pretrain_iter=30, random_state=0)
    >>> search = GridSearchCV(reg, {"thin": [1, 2]}, cv=2, refit="waic",
    ...                       scoring={"waic": waic_scorer, **make_diagnostic_scorers()})
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     search = search.fit(X, y)
    >>> search.cv_results_["split1_test_rhat"].shape, "mean_test_n_divergent" in search.cv_results_
    ((2,), True)
    """
    return {key: _fitted_value(name) for key, name in DIAGNOSTICS.items()}
