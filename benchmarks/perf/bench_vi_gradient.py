"""VI's two gradient estimators: local reparametrisation against weight draws (Bayes by Backprop).

``sampler="vi"`` estimates the gradient of the tempered ELBO on a batch of 128 examples from one Monte Carlo
draw, either of the weights (``MeanFieldVI(gradient="reparam")``, Alg. 1 of paper 002 App. F: one weight
vector shared by the batch) or of every example's pre-activations (``gradient="local"``, the default: the
local reparametrisation of Kingma, Salimans & Welling (2015)). Both are unbiased. On the default (d, 100,
100, out) ReLU network with the fixed prior (and for the regressor ``temperature="plug-in"``), on diabetes
(10% held out) and digits (a stratified quarter held out), this measures (1) at the ``q`` of a default fit
(seed 0), the summed variance over coordinates of 200 gradient estimates with respect to ``mu`` and ``rho``
(``sigma = softplus(rho)``) on fresh batches and draws, and the seconds per estimate; (2) over three seeds
of a default fit with each estimator, the test NLL, the Adam steps until early stopping and the fit seconds.
``python -m benchmarks run vi_gradient`` writes ``benchmarks/results/vi_gradient.{json,rst}``.
"""

import itertools
import time
import warnings

import numpy as np
import torch
from scipy.special import logsumexp
from scipy.stats import norm
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor, SamplerWarning
from skgibbs.samplers import MeanFieldVI, vi

from .. import Benchmark, Output
from ..common import data
from ..common.stats import fmt, mean_se
from ..common.writer import Page

NAME = "vi_gradient"
GRADIENTS = ("local", "reparam")
QUICK, QUICK_VI = {"hidden_layer_sizes": (8,), "pretrain_iter": 20}, {"max_iter": 50}  # a tiny network
#: seeds of the fits, draws of the gradient noise, estimator and MeanFieldVI settings beyond the defaults
SIZES = {
    "full": {"n_seeds": 3, "reps": 200, "estimator": {}, "vi": {}},
    "quick": {"n_seeds": 1, "reps": 5, "estimator": QUICK, "vi": QUICK_VI},
}
#: the target of the stored fits, per estimator: the fixed prior, and the regressor's plug-in temperature
FIXED = {
    GibbsMLPRegressor: {"prior": "fixed", "temperature": "plug-in"},
    GibbsMLPClassifier: {"prior": "fixed"},
}


def load(name):
    """The estimator class of data set ``name`` and its split ``(X_train, X_test, y_train, y_test)``."""
    X, y, _ = data.load(name)
    if name == "diabetes":
        return GibbsMLPRegressor, train_test_split(X, y, test_size=0.1, random_state=0)
    return GibbsMLPClassifier, train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)


def test_score(est, X, y):
    """Test log loss, or minus the mean log-likelihood of the posterior predictive mixture."""
    if isinstance(est, GibbsMLPClassifier):
        return log_loss(y, est.predict_proba(X), labels=est.classes_)
    F = est.predict_samples(X)
    ll = logsumexp(norm.logpdf(y[:, None], F, np.sqrt(est.noise_variance_)), axis=1) - np.log(F.shape[1])
    return -float(ll.mean())


def gradient_noise(est, X, y, reps):
    """Per estimator, the summed variance of the gradient estimates w.r.t. mu and rho, and seconds per one."""
    Xt = torch.as_tensor((X - est.x_mean_) / est.x_scale_, dtype=torch.float32)
    if isinstance(est, GibbsMLPClassifier):
        yt, loss = torch.as_tensor(np.searchsorted(est.classes_, y), dtype=torch.float32), "cross_entropy"
    else:
        yt, loss = torch.as_tensor((y - est.y_mean_) / est.y_scale_, dtype=torch.float32), "squared"
    mu0 = torch.as_tensor(est.variational_mean_, dtype=torch.float32)
    rho0 = vi.inverse_softplus(torch.as_tensor(est.variational_std_, dtype=torch.float32))
    gen = torch.Generator().manual_seed(0)
    out = {}
    for grad in GRADIENTS:
        grads, start = [], time.perf_counter()
        for _ in range(reps):
            idx = torch.randperm(len(yt), generator=gen)[:128]
            mu, rho = mu0.clone().requires_grad_(True), rho0.clone().requires_grad_(True)
            val = vi.expected_loss_sample(
                est.spec_, loss, mu, vi.softplus(rho), Xt[idx], yt[idx], gen, local=grad == "local"
            )
            grads.append(torch.autograd.grad(est.lambda_ * val / 128, (mu, rho)))
        seconds = (time.perf_counter() - start) / reps
        var_mu, var_rho = (float(torch.stack(g).var(0).sum()) for g in zip(*grads))
        out[grad] = {"var_mu": var_mu, "var_rho": var_rho, "seconds": seconds}
    return out


def estimator(Est, seed, size, **sampler):
    """``Est`` with ``sampler="vi"`` at the target of the stored fits (:data:`FIXED`), seeded ``seed``."""
    return Est(sampler=MeanFieldVI(**sampler, **size.vi), random_state=seed, **FIXED[Est], **size.estimator)


def run(args):
    """Gradient noise at a fitted ``q`` and default fits with either estimator, on diabetes and digits."""
    seeds = [args.seed + k for k in range(args.size.n_seeds)]
    result = {"noise": {}, "fits": {}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        for name in ("diabetes", "digits"):
            Est, (Xtr, Xte, ytr, yte) = load(name)
            ref = estimator(Est, 0, args.size).fit(Xtr, ytr)
            result["noise"][name] = gradient_noise(ref, Xtr, ytr, args.size.reps)
            runs = {grad: [] for grad in GRADIENTS}  # (test score, Adam steps, seconds) per seed
            for grad, seed in itertools.product(GRADIENTS, seeds):
                start = time.perf_counter()
                est = estimator(Est, seed, args.size, gradient=grad).fit(Xtr, ytr)
                runs[grad].append((test_score(est, Xte, yte), est.n_iter_, time.perf_counter() - start))
            result["fits"][name] = {grad: np.array(rows).tolist() for grad, rows in runs.items()}
            print(name, result["noise"][name], {k: np.mean(v, 0).round(4).tolist() for k, v in runs.items()})
    return {NAME: result}


def report(results):
    """The gradient-noise and fit tables."""
    result = results[NAME]
    noise_rows, fit_rows = [], []
    for name in result["noise"]:
        for grad in GRADIENTS:
            n, f = result["noise"][name][grad], np.array(result["fits"][name][grad])
            noise = [f"{n['var_mu']:.4g}", f"{n['var_rho']:.4g}", f"{1e3 * n['seconds']:.2f}"]
            noise_rows.append([name, grad, *noise])
            fits = [fmt(mean_se(f[:, 0]), 4), f"{f[:, 1].mean():.0f}", f"{f[:, 2].mean():.1f}"]
            fit_rows.append([name, grad, *fits])
    noise_title = "Gradient noise at the fitted q (batch 128, one draw; summed variance over coordinates)"
    noise_header = ["data", "estimator", "Var grad mu", "Var grad rho", "ms per gradient"]
    score = "test NLL (digits: log loss; diabetes: -log-likelihood per point)"
    fit_header = ["data", "estimator", score, "Adam steps", "fit s"]
    fit_title = f"Default fits, mean over {len(f)} seeds"  # f: the last estimator's fits, one row per seed
    tables = [(noise_title, noise_header, noise_rows), (fit_title, fit_header, fit_rows)]
    note = (
        "Both estimators are unbiased for the gradient of the tempered ELBO; the local one draws every "
        "example's pre-activations, so the examples of a batch no longer share one weight draw. One torch "
        "thread."
    )
    return [Page(NAME, BENCHMARK.title, tables, [note])]


BENCHMARK = Benchmark(
    name=NAME,
    kind="performance",
    title="VI gradients: local reparametrisation against weight draws",
    outputs=(Output(NAME, "VI gradients: local reparametrisation against weight draws"),),
    run=run,
    report=report,
    sizes=SIZES,
)
