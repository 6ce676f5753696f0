"""Criterion search vs 10-fold cross-validation: wall time and rankings (paper 004 §4.3).

Chooses the ``temperature`` of ``GibbsMLPRegressor(prior="fixed", random_state=0)`` on scikit-learn's
diabetes data over five candidates, by ``CriterionGridSearch(criterion="waic")`` (one fit per candidate on all
the data, ranked by the tempered posterior's WAIC per example) and by ``GridSearchCV`` on 10 shuffled folds
scored by the held-out log predictive density (the quantity WAIC estimates) and mean squared error. Both run
on one core (goal: a speed-up of at least 5); the rankings are compared by Spearman's correlation and the
chosen candidate. Run ``python -m benchmarks run model_selection``.
"""

import numpy as np
from scipy.stats import spearmanr
from sklearn.model_selection import GridSearchCV, KFold

from skgibbs import GibbsMLPRegressor
from skgibbs.metrics import log_predictive_density_scorer
from skgibbs.model_selection import CriterionGridSearch

from .. import Benchmark, Output
from ..common import data
from ..common.stats import timed_fit
from ..common.tables import rst_table
from ..common.writer import Page

NAME = "model_selection"
TEMPERATURES = [0.25, 0.5, 1.0, 2.0, 4.0]
#: the estimator's settings beyond the library's defaults and the fixed prior, the temperature grid and the
#: folds (``--n-splits`` overrides)
SIZES = {
    "full": {"estimator": {}, "temperatures": TEMPERATURES, "folds": 10},
    "quick": {"estimator": dict(hidden_layer_sizes=(4,), n_samples=8, burn_in=10, thin=1, pretrain_iter=10),
              "temperatures": TEMPERATURES[1:4], "folds": 2},
}  # fmt: skip


def search(size, n_splits=None):
    """Both searches over the temperature grid; the raw result."""
    X, y, _ = data.load("diabetes")
    temperatures = size.temperatures
    grid = {"temperature": temperatures}
    est = GibbsMLPRegressor(**size.estimator, prior="fixed", random_state=0)
    folds = KFold(n_splits or size.folds, shuffle=True, random_state=0)
    search = CriterionGridSearch(est, grid, criterion="waic", refit=False)
    crit_time = timed_fit(search, X, y).seconds
    scoring = {"nlpd": log_predictive_density_scorer, "mse": "neg_mean_squared_error"}
    cv = GridSearchCV(est, grid, scoring=scoring, cv=folds, refit=False, error_score="raise")
    cv_time = timed_fit(cv, X, y).seconds
    res, k = search.cv_results_, folds.get_n_splits()
    cv_nlpd = -np.asarray(cv.cv_results_["mean_test_nlpd"])
    cv_mse = -np.asarray(cv.cv_results_["mean_test_mse"])
    return {
        "settings": {"n_splits": k, "estimator": repr(est), "grid": grid},
        "temperature": temperatures,
        "criterion": res["criterion"].tolist(),
        "penalty": res["penalty"].tolist(),
        "cv_nlpd": cv_nlpd.tolist(),
        "cv_nlpd_sd": (np.asarray(cv.cv_results_["std_test_nlpd"]) / np.sqrt(k)).tolist(),
        "cv_mse": cv_mse.tolist(),
        "spearman_nlpd": float(spearmanr(res["criterion"], cv_nlpd)[0]),
        "spearman_mse": float(spearmanr(res["criterion"], cv_mse)[0]),
        "best_criterion": temperatures[int(np.argmin(res["criterion"]))],
        "best_cv_nlpd": temperatures[int(np.argmin(cv_nlpd))],
        "best_cv_mse": temperatures[int(np.argmin(cv_mse))],
        "criterion_time": crit_time,
        "cv_time": cv_time,
        "speedup": cv_time / crit_time,
    }


def run(args):
    """Time both searches; ``--n-splits`` sets the folds of the cross-validation."""
    return {NAME: search(args.size, args.n_splits)}


def report(results):
    """The temperature table, the chosen candidates and the speed-up, in the layout of the docs."""
    r = results[NAME]
    header = ["temperature", "WAIC (nats/example)", "penalty", "CV NLPD (± s.e.)", "CV MSE"]
    columns = zip(r["temperature"], r["criterion"], r["penalty"], r["cv_nlpd"], r["cv_nlpd_sd"], r["cv_mse"])
    rows = [
        [f"{t:g}", f"{c:.4f}", f"{p:.4f}", f"{v:.4f} ± {s:.4f}", f"{m:.1f}"] for t, c, p, v, s, m in columns
    ]
    k = r["settings"]["n_splits"]
    summary = [
        f"Chosen temperature: WAIC {r['best_criterion']:g}, {k}-fold CV by NLPD {r['best_cv_nlpd']:g}, "
        f"by MSE {r['best_cv_mse']:g}.",
        f"Spearman (WAIC, CV NLPD) = {r['spearman_nlpd']:.2f}; (WAIC, CV MSE) = {r['spearman_mse']:.2f}.",
        f"Wall time on one core: criterion search {r['criterion_time']:.0f} s, {k}-fold GridSearchCV "
        f"{r['cv_time']:.0f} s: speed-up {r['speedup']:.1f}x (goal: at least 5x).",
    ]
    title = "GibbsMLPRegressor (library defaults) on load_diabetes, temperature grid"
    rst = [title, "-" * len(title), "", rst_table(header, rows), "", *[s + "\n" for s in summary]]
    return [Page(NAME, rst=rst)]


TITLE = "WAIC search against 10-fold cross-validation: time and rankings"
BENCHMARK = Benchmark(NAME, "performance", TITLE, (Output(NAME, TITLE),), run, report, sizes=SIZES)
