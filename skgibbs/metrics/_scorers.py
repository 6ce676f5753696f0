"""The scorers: factories and ready-made scorers for model selection.

They follow scikit-learn's
``scorer(estimator, X, y, sample_weight=None) -> float`` convention,
greater is better, and accept a Pipeline. The interval scorers, WAIC and
the log predictive density need a skgibbs estimator as the last step; the
probability scorers work with any fitted classifier that has
``predict_proba`` and ``classes_``. All are built on the one scorer class
of ``_scorer.py``: each is a metric of one response of the estimator.
The scorers of held-out rows weigh those rows by ``sample_weight``; the
scorers that read a value of the fit (WAIC, the diagnostics) ignore it,
the weights given at fit having weighed that value already.
"""

import numpy as np
from scipy.special import logsumexp
from sklearn.metrics import brier_score_loss, log_loss

from .._levels import check_level
from ..criteria import gaussian_log_likelihood, student_log_likelihood
from ._calibration import expected_calibration_error, maximum_calibration_error
from ._intervals import coverage_score, interval_score, mean_width_score
from ._scorer import Scorer, final_step
from ._validation import check_binning

__all__ = [
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
