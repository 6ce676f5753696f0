"""What the parts of paper 002's reproduction share: data, estimators, their prior and the table cells."""

import numpy as np
import torch
from sklearn.base import clone

from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import train_test_split

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor
from skgibbs.metrics import expected_calibration_error
from skgibbs.problem import build_problem
from skgibbs.samplers import MeanFieldVI, vi

from ...common import data
from ...common.stats import fmt_values, mean_se, timed_fit

QUICK_FIT = {"sampler__max_iter": 50, "pretrain_iter": 20}  # set_params of the quick fits


def load(name):
    """``(X, y)`` of the data set ``name``."""
    return data.load(name)[:2]


def slope(xs, ys):
    """Least-squares slope of ``log y`` against ``log x``."""
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def fit_timed(est, X, y):
    """Fit; return the fit seconds and the distinct warning messages raised (their first 120 characters)."""
    fit = timed_fit(est, X, y)
    return fit.seconds, sorted({m[:120] for m in fit.messages()})


def fitted(est, seconds, messages):
    """What every fit of an estimator records after its scores."""
    return dict(
        n_iter=int(est.n_iter_), stopped_early=bool(est.vi_stopped_early_), fit_s=seconds, warnings=messages
    )


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


def cells(runs, columns):
    """The cells of ``columns`` (``(field, cell)`` pairs) over ``runs``."""
    return [cell([r[field] for r in runs]) for field, cell in columns]


def fit_digits(hidden, vi_params, seed, fit):
    """A classifier fitted on digits (a stratified 75/25 split seeded ``seed``, m = 50 draws of ``q``):
    ``(est, its test scores, what the fit records)``."""
    X, y = load("digits")
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, stratify=y, random_state=seed)
    est = vi_estimator(
        GibbsMLPClassifier, hidden, vi_params=vi_params, fit=fit, n_chains=2, n_samples=25, random_state=seed
    )
    seconds, messages = fit_timed(est, X_train, y_train)
    proba = est.predict_proba(X_test)
    scores = dict(
        accuracy=float(accuracy_score(y_test, est.classes_[proba.argmax(1)])),
        nll=float(log_loss(y_test, proba, labels=est.classes_)),
        ece=float(expected_calibration_error(y_test, proba, labels=est.classes_)),
        confidence=float(proba.max(1).mean()),
    )
    return est, scores, fitted(est, seconds, messages)


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def vi_estimator(cls, *args, vi_params=None, fit=None, **params):
    """``cls(*args, sampler=MeanFieldVI(**vi_params), prior="fixed", **params)`` with the settings ``fit``
    (a quick run's :data:`QUICK_FIT`): paper 002's fixed Gaussian prior."""
    est = cls(*args, sampler=MeanFieldVI(**(vi_params or {})), **{"prior": "fixed", **params})
    return est.set_params(**(fit or {}))


def estimator_prior(est, X, y):
    """Network and prior standard deviations (one per parameter) that ``est`` samples under on ``(X, y)``
    (from a copy without pre-training, on which the prior does not depend)."""
    problem = build_problem(clone(est).set_params(pretrain_iter=0), X, y)
    std = torch.as_tensor(problem.prior.std, dtype=torch.float32).expand(problem.spec.n_params).clone()
    return problem.spec, std


def mean_field_prior(N, X, y):
    """Network, prior standard deviations and output scale of the estimator
    ``GibbsMLPRegressor((N,), sampler=MeanFieldVI(parametrization="mean-field"))``."""
    sampler = MeanFieldVI(parametrization="mean-field")
    spec, std = estimator_prior(GibbsMLPRegressor((N,), sampler=sampler, prior="fixed"), X, y)
    return spec, std, sampler.output_scale(spec)


def forward_draws(spec, theta, Xs, chunk=20):
    """Network outputs ``(S, n)`` of the draws ``theta`` ``(S, Q)``, ``chunk`` draws at a time (memory)."""
    Xs = torch.as_tensor(Xs, dtype=torch.float32)
    with torch.no_grad():
        parts = [spec.forward(theta[i : i + chunk], Xs) for i in range(0, theta.shape[0], chunk)]
    return torch.cat(parts).double().numpy()


def prior_output_variance(spec, std, Xs, draws, generator):
    """``mean_x Var_P0 f(x)`` on the standardized inputs ``Xs`` by ``draws`` draws of the prior."""
    theta = vi.sample(torch.zeros(spec.n_params), std, draws, generator)
    return float(forward_draws(spec, theta, Xs).var(0).mean())


def errorbar(ax, x, groups, **style):
    """Means ± standard errors of the groups of values at ``x`` (no bar for a single value)."""
    stats = [mean_se(g) for g in groups]
    se = [0.0 if np.isnan(s) else s for _, s in stats]
    ax.errorbar(x, [m for m, _ in stats], yerr=se, capsize=3, **style)


def save_figure(plt, fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"figure: {path}")
