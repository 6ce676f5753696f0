"""What the parts of paper 002's reproduction share: data, estimators, table cells and figures."""

import contextlib

import numpy as np
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import train_test_split

from skgibbs import GibbsMLPClassifier
from skgibbs.metrics import expected_calibration_error
from skgibbs.samplers import MeanFieldVI

from ...common import data
from ...common.stats import fmt_values, mean_se, timed_fit

QUICK_FIT = {"sampler__max_iter": 50, "pretrain_iter": 20}  # set_params of the quick fits


def load(name):
    """``(X, y)`` of the data set ``name``."""
    return data.load(name)[:2]


def slope(xs, ys):
    """Least-squares slope of ``log y`` against ``log x``."""
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def select(runs, field, **match):
    """``field`` of the runs whose values match ``match``."""
    return [r[field] for r in runs if all(r[k] == v for k, v in match.items())]


def vi_estimator(cls, *args, vi_params=None, fit=None, **params):
    """``cls(*args, sampler=MeanFieldVI(**vi_params), prior="fixed", **params)`` with the settings ``fit``
    (a quick run's :data:`QUICK_FIT`): paper 002's fixed Gaussian prior."""
    est = cls(*args, sampler=MeanFieldVI(**(vi_params or {})), **{"prior": "fixed", **params})
    return est.set_params(**(fit or {}))


def fit_timed(est, X, y):
    """Fit; return the fit seconds and the distinct warning messages raised (their first 120 characters)."""
    fit = timed_fit(est, X, y)
    return fit.seconds, sorted({m[:120] for m in fit.messages()})


def fitted(est, seconds, messages):
    """What a fit of an estimator records after its scores."""
    steps = {"n_iter": int(est.n_iter_), "stopped_early": bool(est.vi_stopped_early_)}
    return {**steps, "fit_s": seconds, "warnings": messages}


def fit_digits(hidden, vi_params, seed, fit):
    """``(est, test scores, what the fit records)`` of a classifier fitted on digits: a stratified 75/25
    split seeded ``seed``, m = 50 draws of ``q``."""
    X, y = load("digits")
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, stratify=y, random_state=seed)
    draws = {"n_chains": 2, "n_samples": 25}
    est = vi_estimator(GibbsMLPClassifier, hidden, vi_params=vi_params, fit=fit, random_state=seed, **draws)
    seconds, messages = fit_timed(est, X_train, y_train)
    proba, labels = est.predict_proba(X_test), est.classes_
    scores = {
        "accuracy": float(accuracy_score(y_test, labels[proba.argmax(1)])),
        "nll": float(log_loss(y_test, proba, labels=labels)),
        "ece": float(expected_calibration_error(y_test, proba, labels=labels)),
        "confidence": float(proba.max(1).mean()),
    }
    return est, scores, fitted(est, seconds, messages)


def mean_cell(spec):
    """A table cell: the mean of the values over seeds, formatted by ``spec``."""
    return lambda values: format(np.mean(values), spec)


def se_cell(spec=3, scale=1.0):
    """A table cell: mean ± standard error of the values over seeds (times ``scale``)."""
    return lambda values: fmt_values(values, spec, scale)


def first_cell(spec=""):
    """A table cell: the value of the first seed (the same for every seed), formatted by ``spec``."""
    return lambda values: format(values[0], spec)


#: the last columns of the tables of estimator fits: header -> (field, cell)
FIT_COLUMNS = {
    "KL(q||P0)": ("kl", mean_cell(".4g")),
    "Adam steps": ("n_iter", mean_cell(".0f")),
    "fit s": ("fit_s", mean_cell(".1f")),
}


def cells(runs, columns, **match):
    """The cells of ``columns`` (``(field, cell)`` pairs) over the runs that match ``match``."""
    return [cell(select(runs, field, **match)) for field, cell in columns]


def n_seeds(runs):
    """How many seeds the runs hold."""
    return len({r["seed"] for r in runs})


@contextlib.contextmanager
def figure(path, *grid, **kwargs):
    """``(fig, axes)`` of ``plt.subplots(*grid, **kwargs)``, saved to ``path`` on exit."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(*grid, **kwargs)
    yield fig, axes
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"figure: {path}")


def errorbar(ax, x, groups, **style):
    """Means ± standard errors of the groups of values at ``x`` (no bar for a single value)."""
    stats = [mean_se(g) for g in groups]
    se = [0.0 if np.isnan(s) else s for _, s in stats]
    ax.errorbar(x, [m for m, _ in stats], yerr=se, capsize=3, **style)
