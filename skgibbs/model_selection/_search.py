"""CriterionGridSearch: one fit per candidate, ranked by WAIC or LFV."""

import time
from numbers import Integral

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.model_selection import ParameterGrid
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import _num_samples

from .. import criteria  # its functions are looked up at call time
from .._compat import HasMethods, StrOptions, check_is_fitted
from .._data import check_sample_weight
from ..metrics import final_step

__all__ = ["CriterionGridSearch"]


class CriterionGridSearch(MetaEstimatorMixin, BaseEstimator):
    r"""Grid search ranked by WAIC or LFV: one fit per candidate, no folds.

    Each candidate of ``param_grid`` is cloned, fitted once on all of
    ``(X, y)`` and scored by ``criterion``, an estimate of the held-out
    negative log-likelihood per example; lower is better. Where k-fold
    cross-validation costs k fits per candidate, this costs one fit plus
    the criterion.

    Both criteria are on one scale, the held-out negative log-likelihood
    per example: ``"waic"`` reads it from the fitted estimator's
    ``generalization_loss_`` (the attribute to rank skgibbs fits by),
    ``"lfv"`` computes it by the Langevin process of Okuno and Yano.

    Parameters
    ----------
    estimator : estimator or Pipeline
        A regressor; for ``criterion="waic"`` its last step must be a
        skgibbs estimator (with ``generalization_loss_``).
    param_grid : dict or list of dicts
        As for :class:`~sklearn.model_selection.GridSearchCV`; must not be
        empty.
    criterion : {"waic", "lfv"} or callable, default="waic"
        ``"waic"``: the fitted last step's ``generalization_loss_``,
        Watanabe's WAIC per sample of its (tempered) posterior draws.
        ``"lfv"``: the ``lfv_loss`` field of
        :func:`skgibbs.criteria.langevin_functional_variance` run at the
        fitted last step, on ``X`` transformed by the earlier steps (the
        training loss plus LFV/n of paper 004 §4.3 with the Gaussian
        normalising constant ``log(2 pi sigma^2) / 2``, which keeps
        candidates with different ``sigma^2`` comparable); works for fitted
        ``Ridge``, ``LinearRegression``, ``MLPRegressor`` and skgibbs
        estimators. A callable ``criterion(estimator, X, y) -> float``
        receives the fitted candidate (the whole pipeline).
    lfv_params : dict or None, default=None
        Keyword arguments of ``langevin_functional_variance`` (``alpha``,
        ``noise_variance``, ``step_size``, ``n_iter``, ``burn_in``,
        ``random_state``). Without ``alpha`` each candidate's own ridge
        penalty is used: ``estimator.alpha / n`` for ``Ridge`` and
        ``MLPRegressor`` (both penalise ``alpha ||w||^2`` against the
        *summed* squared error, (2) of paper 004 the *mean*), else 0.
        Without ``noise_variance`` each candidate uses its own residual
        variance ``RSS / (n - 1)`` (paper 004 §4.3).
    n_jobs : int or None, default=None
        joblib jobs over candidates, under the active joblib backend (Dask
        workers inside ``joblib.parallel_backend("dask")``); the fitted
        candidates, their criteria and ``best_params_`` do not depend on
        where they ran.
    refit : bool, default=True
        Keep the best fitted candidate as ``best_estimator_``. It was
        fitted on all the data, so nothing is refitted; ``False`` drops it.
    verbose : int, default=0

    Attributes
    ----------
    cv_results_ : dict of arrays of shape (n_candidates,)
        ``params`` (list of dicts), ``param_<name>`` (masked arrays, as
        scikit-learn), ``criterion = train_loss + penalty``, ``train_loss``
        (the training negative log-likelihood per example), ``penalty``
        (``beta * FV / n`` for ``"waic"``, ``LFV / n`` for ``"lfv"``),
        ``noise_variance`` (the ``sigma^2`` the criterion
        used), ``rank_criterion`` (1 is best), ``fit_time`` and
        ``criterion_time`` in seconds. The three terms are NaN for a
        callable criterion.
    best_index_ : int
    best_params_ : dict
    best_score_ : float
        Criterion value of the best candidate (lower is better, unlike
        ``GridSearchCV``).
    best_estimator_ : estimator
        Only when ``refit=True``.
    n_candidates_ : int
    n_features_in_ : int
        Only when ``refit=True`` and the best estimator defines it.

    Notes
    -----
    With ``sigma^2`` the noise variance of the Gaussian likelihood, ``fbar``
    the candidate's prediction and ``V`` the variance over posterior (or
    Langevin) draws, ``"lfv"`` ranks by

    .. math::

        G = \tfrac12 \log(2\pi\sigma^2) + \frac{1}{n}\sum_{i=1}^n
        \frac{(y_i - \bar f(x_i))^2}{2\sigma^2} + \frac{1}{n}
        \sum_{i=1}^n \mathbb{V}_\theta[\log f(y_i \mid x_i, \theta)],

    the training loss plus LFV (13) divided by n, the Langevin variant of
    WAIC in §4.3 of Okuno and Yano [1]_, with the Gaussian normalising
    constant added back. Each candidate uses its own ``sigma^2`` unless
    ``lfv_params`` fixes one; without the constant (the scale of the
    paper's Table 7, an estimator's ``langevin_waic_``) the training loss
    would be nearly the same for every candidate and the most regularised
    one would always win. ``"waic"`` ranks by Watanabe's WAIC per example
    of the candidate's draws, ``generalization_loss_``, with the penalty
    scaled by the tempering ``beta`` (``waic_tempering_``).

    References
    ----------
    .. [1] Okuno, Yano. A generalization gap estimation for
       overparameterized models via the Langevin functional variance.

    Examples
    --------
    >>> import numpy as np
    >>> from skgibbs import GibbsMLPRegressor
    >>> from skgibbs.model_selection import CriterionGridSearch
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (40, 1))
    >>> y = np.sin(3 * X[:, 0]) + 0.1 * rng.normal(size=40)
    >>> est = GibbsMLPRegressor((4,), n_samples=10, burn_in=20, pretrain_iter=20, random_state=0)
    >>> search = CriterionGridSearch(est, {"temperature": [0.1, 1.0]}).fit(X, y)
    >>> search.n_candidates_, search.cv_results_["rank_criterion"].shape
    (2, (2,))
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit"])],
        "param_grid": [dict, list],
        "criterion": [StrOptions({"waic", "lfv"}), callable],
        "lfv_params": [dict, None],
        "n_jobs": [Integral, None],
        "refit": ["boolean"],
        "verbose": ["verbose"],
    }

    def __init__(
        self, estimator, param_grid, *, criterion="waic", lfv_params=None, n_jobs=None, refit=True, verbose=0
    ):
        self.estimator = estimator
        self.param_grid = param_grid
        self.criterion = criterion
        self.lfv_params = lfv_params
        self.n_jobs = n_jobs
        self.refit = refit
        self.verbose = verbose

    def fit(self, X, y, sample_weight=None):
        """Fit every candidate on ``(X, y)`` and rank them by the criterion.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the examples, passed to every candidate's ``fit`` (to
            the last step of a ``Pipeline``); the criteria are then the
            weighted ones, per unit of weight: WAIC from the fitted
            ``generalization_loss_``, LFV from
            :func:`~skgibbs.criteria.langevin_functional_variance` with the
            same weights.

        Returns
        -------
        self : CriterionGridSearch
        """
        self._validate_params()
        candidates = _candidates(self.param_grid)
        if sample_weight is not None:
            sample_weight = check_sample_weight(sample_weight, _num_samples(X))
        rows = Parallel(n_jobs=self.n_jobs, verbose=self.verbose)(
            delayed(_evaluate)(self.estimator, params, X, y, self.criterion, self.lfv_params, sample_weight)
            for params in candidates
        )
        values = np.array([r["criterion"] for r in rows], dtype=float)
        if np.all(np.isnan(values)):
            raise ValueError("criterion returned NaN for every candidate; check the data and the criterion.")
        ranked = np.where(np.isnan(values), np.inf, values)
        self.cv_results_ = _results_table(candidates, rows, ranked)
        self.best_index_ = int(np.argmin(ranked))
        self.best_params_ = candidates[self.best_index_]
        self.best_score_ = float(values[self.best_index_])
        self.n_candidates_ = len(candidates)
        if self.refit:
            self.best_estimator_ = rows[self.best_index_]["estimator"]
            if hasattr(self.best_estimator_, "n_features_in_"):
                self.n_features_in_ = self.best_estimator_.n_features_in_
        return self

    def _best(self):
        check_is_fitted(self, "best_index_")
        if not self.refit:
            raise AttributeError("refit=False keeps no best_estimator_; set refit=True to predict.")
        return self.best_estimator_

    def predict(self, X):
        """Predict with ``best_estimator_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self._best().predict(X)

    def score(self, X, y, sample_weight=None):
        """``best_estimator_.score(X, y, sample_weight=sample_weight)`` (R^2 for a regressor).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        float
        """
        if sample_weight is None:
            return self._best().score(X, y)
        return self._best().score(X, y, sample_weight=sample_weight)


def _candidates(param_grid):
    if not param_grid:
        raise ValueError(f"param_grid must name at least one parameter to search, got {param_grid!r}.")
    try:
        return list(ParameterGrid(param_grid))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"param_grid is not a valid grid: {exc}") from exc


def _fit_params(est, sample_weight):
    """The keyword that gives ``est.fit`` the weights: ``sample_weight``, or the last step's of a Pipeline."""
    if sample_weight is None:
        return {}
    if isinstance(est, Pipeline):
        return {f"{est.steps[-1][0]}__sample_weight": sample_weight}
    return {"sample_weight": sample_weight}


def _evaluate(estimator, params, X, y, criterion, lfv_params, sample_weight=None):
    """Fit one candidate on all the data and compute its criterion."""
    est = clone(estimator).set_params(**params)
    start = time.perf_counter()
    est.fit(X, y, **_fit_params(est, sample_weight))
    fit_time = time.perf_counter() - start
    start = time.perf_counter()
    row = _criterion(est, X, y, criterion, lfv_params, sample_weight)
    row.update(estimator=est, fit_time=fit_time, criterion_time=time.perf_counter() - start)
    return row


def _criterion(est, X, y, criterion, lfv_params, sample_weight=None):
    nan = float("nan")
    if callable(criterion):
        kwargs = {} if sample_weight is None else {"sample_weight": sample_weight}
        value = float(criterion(est, X, y, **kwargs))
        return {"criterion": value, "train_loss": nan, "penalty": nan, "noise_variance": nan}
    final, Xt = final_step(est, X)
    n = len(y) if sample_weight is None else float(np.sum(sample_weight))
    if criterion == "waic":
        if not hasattr(final, "generalization_loss_"):
            raise TypeError(
                f"criterion='waic' reads generalization_loss_ from the fitted last step, which "
                f"{type(final).__name__} lacks; use criterion='lfv' for models without posterior draws."
            )
        penalty = final.waic_tempering_ * final.lfv_ / n
        return {
            "criterion": float(final.generalization_loss_),
            "train_loss": float(final.generalization_loss_ - penalty),
            "penalty": float(penalty),
            # classifiers have no noise variance
            "noise_variance": float(getattr(final, "noise_variance_", nan)),
        }
    res = _langevin(final, Xt, y, lfv_params, sample_weight)
    return {
        "criterion": float(res.lfv_loss),
        "train_loss": float(res.lfv_loss - res.lfv / n),
        "penalty": float(res.lfv) / n,
        "noise_variance": float(res.noise_variance),
    }


def _langevin(final, Xt, y, lfv_params, sample_weight=None):
    params = dict(lfv_params or {})
    n = len(y) if sample_weight is None else float(np.sum(sample_weight))
    if "alpha" not in params:
        # Ridge and MLPRegressor: alpha ||w||^2 against the summed (weighted) squared error;
        # paper 004 (2) puts alpha against the mean, hence / n
        alpha = getattr(final, "alpha", 0.0)
        params["alpha"] = float(alpha) / n if isinstance(alpha, (int, float)) else 0.0
    if sample_weight is not None:
        params["sample_weight"] = sample_weight
    return criteria.langevin_functional_variance(final, Xt, y, **params)


def _results_table(candidates, rows, ranked):
    n = len(candidates)
    results = {"params": candidates}
    for name in sorted({k for params in candidates for k in params}):
        column = np.ma.MaskedArray(np.empty(n, dtype=object), mask=True)
        for i, params in enumerate(candidates):
            if name in params:
                column[i] = params[name]
        results[f"param_{name}"] = column
    for key in ("criterion", "train_loss", "penalty", "noise_variance", "fit_time", "criterion_time"):
        results[key] = np.array([r[key] for r in rows], dtype=float)
    results["rank_criterion"] = rankdata(ranked, method="min").astype(np.int32)
    return results

