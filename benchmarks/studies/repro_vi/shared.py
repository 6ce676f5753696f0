"""What the parts of paper 002's reproduction share: data, estimators and the prior they sample under."""

import numpy as np
import torch
from sklearn.base import clone

from skgibbs import GibbsMLPRegressor
from skgibbs.problem import build_problem
from skgibbs.samplers import MeanFieldVI, vi

from ...common import data
from ...common.stats import timed_fit

QUICK_FIT = {"sampler__max_iter": 50, "pretrain_iter": 20}  # set_params of the quick fits


def load_diabetes(return_X_y=True):
    return data.load("diabetes")[:2]


def load_digits(return_X_y=True):
    return data.load("digits")[:2]


def slope(xs, ys):
    """Least-squares slope of ``log y`` against ``log x``."""
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def fit_timed(est, X, y):
    """Fit; return the fit seconds and the distinct warning messages raised (their first 120 characters)."""
    fit = timed_fit(est, X, y)
    return fit.seconds, sorted({m[:120] for m in fit.messages()})


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def vi_estimator(cls, *args, vi_params=None, fit=None, **params):
    """``cls(*args, sampler=MeanFieldVI(**vi_params), prior="fixed", **params)``, then the settings
    ``fit`` (a quick run's :data:`QUICK_FIT`): paper 002's fixed Gaussian prior (``prior="auto"`` is
    ARD under VI since 2026-11-27)."""
    est = cls(*args, sampler=MeanFieldVI(**(vi_params or {})), **{"prior": "fixed", **params})
    return est.set_params(**(fit or {}))


def estimator_prior(est, X, y):
    """Network and prior standard deviations (one per parameter) that ``est`` samples under on ``(X, y)``.

    Read off the posterior problem of a copy of ``est`` (without its
    pre-training, on which the prior does not depend).
    """
    problem = build_problem(clone(est).set_params(pretrain_iter=0), X, y)
    std = torch.as_tensor(problem.prior.std, dtype=torch.float32).expand(problem.spec.n_params).clone()
    return problem.spec, std


def mean_field_prior(N, X, y):
    """Network, prior standard deviations and output scale of the mean-field estimator with ``N`` neurons.

    Read off ``GibbsMLPRegressor(sampler=MeanFieldVI(parametrization="mean-field"))``
    itself, so the low-level fits of part ``e1`` use exactly the estimator's
    prior and coordinates.
    """
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
