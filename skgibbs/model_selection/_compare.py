"""compare_with_cv: a criterion search beside k-fold cross-validation on one grid."""

import dataclasses
import time
import warnings
from numbers import Integral

import numpy as np
from scipy.stats import rankdata, spearmanr
from sklearn.model_selection import GridSearchCV, KFold, check_cv

from ..metrics import log_predictive_density_scorer
from ._search import CriterionGridSearch

__all__ = ["CVComparison", "compare_with_cv"]


@dataclasses.dataclass(frozen=True)
class CVComparison:
    """Per-candidate criterion and cross-validation scores, and their agreement.

    Every per-candidate array has shape ``(n_candidates,)``, in the order
    of ``params`` (:class:`~sklearn.model_selection.ParameterGrid` order).
    Both ``criterion`` and ``cv_score`` are lower-is-better.

    Attributes
    ----------
    params : list of dict
    criterion, train_loss, penalty : ndarray
        As in :attr:`CriterionGridSearch.cv_results_`.
    cv_score, cv_std : ndarray
        Mean and standard deviation over the folds of the CV score
        described by ``cv_name``.
    cv_name : str
    noise_variance : ndarray
        Each candidate's ``sigma^2`` as its criterion used it (NaN for a
        callable criterion).
    spearman : float
        Spearman rank correlation of ``criterion`` and ``cv_score``; +1 when
        they rank the candidates alike (NaN when either is constant).
    same_best : bool
    best_index_criterion, best_index_cv : int
    n_splits : int
    criterion_time, cv_time : float
        Wall time in seconds of the whole criterion search and the whole
        cross-validation.
    speedup : float
        ``cv_time / criterion_time``.
    """

    params: list
    criterion: np.ndarray
    train_loss: np.ndarray
    penalty: np.ndarray
    cv_score: np.ndarray
    cv_std: np.ndarray
    cv_name: str
    noise_variance: np.ndarray
    spearman: float
    same_best: bool
    best_index_criterion: int
    best_index_cv: int
    n_splits: int
    criterion_time: float
    cv_time: float
    speedup: float

    def _columns(self):
        return {
            # a pipeline step's name says nothing the grid does not
            "params": [", ".join(f"{k.split('__')[-1]}={v!r}" for k, v in p.items()) for p in self.params],
            "train_loss": self.train_loss,
            "penalty": self.penalty,
            "criterion": self.criterion,
            "cv_score": self.cv_score,
            "cv_std": self.cv_std,
            "rank_criterion": rankdata(self.criterion, method="min").astype(int),
            "rank_cv": rankdata(self.cv_score, method="min").astype(int),
        }

    def to_frame(self):
        """The per-candidate columns as a pandas DataFrame (needs pandas).

        Returns
        -------
        pandas.DataFrame of shape (n_candidates, 8)
        """
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError("to_frame needs pandas; use as_table() for a plain-text table.") from exc
        return pd.DataFrame(self._columns())

    def as_table(self):
        """The per-candidate columns and the summary as plain text.

        Returns
        -------
        str
        """
        cols = self._columns()
        width = max(len("params"), *(len(p) for p in cols["params"]))
        header = "  train_loss   penalty  criterion   cv_score (std)   rank crit/cv"
        lines = [f"{'params':<{width}}{header}"]
        for i, p in enumerate(cols["params"]):
            ranks = f"{cols['rank_criterion'][i]:4d}/{cols['rank_cv'][i]}"
            lines.append(
                f"{p:<{width}}  {self.train_loss[i]:10.4f} {self.penalty[i]:9.4f} {self.criterion[i]:10.4f}"
                f"  {self.cv_score[i]:9.4f} ({self.cv_std[i]:.4f})   {ranks}"
            )
        lines += [
            f"cv_score: {self.cv_name}, {self.n_splits}-fold",
            f"Spearman rank correlation (criterion, CV): {self.spearman:.3f}; same best: {self.same_best}",
            f"time: criterion {self.criterion_time:.1f} s, CV {self.cv_time:.1f} s, "
            f"speed-up {self.speedup:.1f}x",
        ]
        return "\n".join(lines)


def _splitter(cv, random_state):
    if isinstance(cv, Integral) and not isinstance(cv, bool):
        if cv < 2:
            raise ValueError(f"cv must be at least 2 folds, got cv={cv}.")
        return KFold(cv, shuffle=True, random_state=random_state)
    try:
        return check_cv(cv)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"cv must be an int >= 2, a CV splitter or an iterable of splits, got {cv!r}."
        ) from exc


def _fold_scores(results, n_splits):
    """``(n_candidates, n_splits)`` test scores of a fitted GridSearchCV."""
    return np.column_stack([results[f"split{k}_test_score"] for k in range(n_splits)])


def compare_with_cv(
    estimator,
    param_grid,
    X,
    y,
    *,
    criterion="waic",
    cv=10,
    scoring=None,
    lfv_params=None,
    n_jobs=None,
    random_state=None,
):
    r"""Rank one grid by a criterion and by k-fold cross-validation, and compare.

    Runs :class:`CriterionGridSearch` (one fit per candidate on all the
    data) and :class:`~sklearn.model_selection.GridSearchCV` (k fits per
    candidate) over the same ``param_grid``, timing each.

    Parameters
    ----------
    estimator : estimator or Pipeline
    param_grid : dict or list of dicts
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    criterion : {"waic", "lfv"} or callable, default="waic"
        See :class:`CriterionGridSearch`.
    cv : int, CV splitter or iterable, default=10
        An int k gives ``KFold(k, shuffle=True, random_state=random_state)``.
    scoring : str, callable or None, default=None
        None: the held-out negative log-likelihood per example, the
        quantity both criteria estimate (below). Otherwise a scikit-learn
        scorer (greater is better); ``cv_score`` is then minus its mean over
        the folds.
    lfv_params : dict or None, default=None
        See :class:`CriterionGridSearch`.
    n_jobs : int or None, default=None
        joblib workers for both searches.
    random_state : int, RandomState instance or None, default=None
        Shuffles the folds; the estimators keep their own ``random_state``.

    Returns
    -------
    CVComparison

    Notes
    -----
    With ``scoring=None`` both scores are held-out negative log-likelihoods
    per example (nats), estimated by the criterion from one fit and measured
    by the folds:

    - ``criterion="waic"``: each fold's fit is scored by
      :func:`~skgibbs.metrics.log_predictive_density_scorer`, the log of the
      posterior predictive density (mixture over the draws of
      :math:`N(f_\theta(x), \hat\sigma^2)`) at the held-out points,
      which ``generalization_loss_`` estimates;
    - ``criterion="lfv"``: the Gaussian negative log-likelihood of the
      held-out errors with each candidate's :math:`\hat\sigma^2_c` (the
      ``noise_variance`` its criterion used),

      .. math::

          \mathrm{CV}_c = \tfrac12 \log(2\pi\hat\sigma^2_c)
          + \frac{1}{2\hat\sigma^2_c} \frac1k \sum_{j=1}^k
          \frac{1}{n_{\mathrm{test}(j)}} \sum_{i \in \mathrm{test}(j)}
          (y_i - \hat g_{\mathrm{train}(j)}(x_i))^2,

      the CV statistic of paper 004 §4.3 with the normalising constant;
    - a callable criterion: the held-out mean squared error.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3))
    >>> y = X @ [1.0, -2.0, 0.5] + 0.3 * rng.normal(size=60)
    >>> aic = lambda est, X, y: np.mean((y - est.predict(X)) ** 2)  # any callable
    >>> res = compare_with_cv(Ridge(), {"alpha": [0.1, 10.0, 1000.0]}, X, y, criterion=aic,
    ...                       cv=3, random_state=0)
    >>> res.cv_score.shape, res.best_index_cv, res.same_best, res.spearman
    ((3,), 0, True, 1.0)
    """
    search = CriterionGridSearch(
        estimator, param_grid, criterion=criterion, lfv_params=lfv_params, n_jobs=n_jobs, refit=False
    )
    start = time.perf_counter()
    search.fit(X, y)
    criterion_time = time.perf_counter() - start
    splitter = _splitter(cv, random_state)
    if scoring is None:
        scoring_used = log_predictive_density_scorer if criterion == "waic" else "neg_mean_squared_error"
    else:
        scoring_used = scoring
    grid = GridSearchCV(
        estimator,
        param_grid,
        scoring=scoring_used,
        cv=splitter,
        refit=False,
        n_jobs=n_jobs,
        error_score="raise",
    )
    start = time.perf_counter()
    grid.fit(X, y)
    cv_time = time.perf_counter() - start
    res = search.cv_results_
    folds = -_fold_scores(grid.cv_results_, grid.n_splits_)
    cv_name = f"minus mean {scoring}" if scoring is not None else "held-out MSE"
    if scoring is None and criterion == "waic":
        cv_name = "held-out negative log predictive density per example"
    elif scoring is None and criterion == "lfv":
        s2 = np.asarray(res["noise_variance"], dtype=float)[:, None]
        folds = 0.5 * np.log(2 * np.pi * s2) + folds / (2 * s2)
        cv_name = "held-out Gaussian negative log-likelihood per example (each candidate's sigma^2)"
    cv_score = folds.mean(1)
    return CVComparison(
        params=res["params"],
        criterion=res["criterion"],
        train_loss=res["train_loss"],
        penalty=res["penalty"],
        cv_score=cv_score,
        cv_std=folds.std(1),
        cv_name=cv_name,
        noise_variance=res["noise_variance"],
        spearman=_spearman(res["criterion"], cv_score),
        same_best=bool(search.best_index_ == int(np.argmin(cv_score))),
        best_index_criterion=search.best_index_,
        best_index_cv=int(np.argmin(cv_score)),
        n_splits=grid.n_splits_,
        criterion_time=criterion_time,
        cv_time=cv_time,
        speedup=cv_time / criterion_time,
    )


def _spearman(a, b):
    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(spearmanr(a, b).statistic)
