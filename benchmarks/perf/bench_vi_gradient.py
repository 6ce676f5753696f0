"""VI's two gradient estimators: local reparametrisation against weight draws (Bayes by Backprop).

``GibbsMLPRegressor`` / ``GibbsMLPClassifier`` with ``sampler="vi"`` estimate
the gradient of the tempered ELBO on a batch of 128 examples from one Monte
Carlo draw, either of the weights (``MeanFieldVI(gradient="reparam")``, Alg. 1
of paper 002 App. F: one weight vector shared by the batch) or of every
example's pre-activations (``MeanFieldVI(gradient="local")``, the default:
the local reparametrisation of Kingma, Salimans & Welling (2015)). Both are
unbiased; this script measures
what the second buys, on the default (d, 100, 100, out) ReLU network with
the fixed prior (``prior="fixed"``, and for the regressor the plug-in
temperature, ``temperature="plug-in"``: the defaults until 2026-11-27,
under which the stored results were measured; ``prior="auto"`` is ARD
under VI now):

1. *gradient noise*: at the ``q`` of a default VI fit (seed 0), the summed
   variance over coordinates of 200 gradient estimates with respect to the
   means ``mu`` and to ``rho`` (``sigma = softplus(rho)``), on fresh batches
   and draws, and the seconds per estimate (one torch thread);
2. *end to end*: three seeds of a default fit with each estimator: test
   log loss (digits, a stratified quarter held out) or test Gaussian
   log-likelihood of the posterior predictive mixture (diabetes, 10% held
   out), Adam steps until early stopping, and fit seconds.

Run ``python -m benchmarks run vi_gradient`` (about five minutes); it
writes ``benchmarks/results/vi_gradient.{json,rst}``.
"""

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


QUICK = {"hidden_layer_sizes": (8,), "pretrain_iter": 20}  # a tiny network,
QUICK_VI = {"max_iter": 50}  # few Adam steps
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
    X, y, _ = data.load(name)
    if name == "diabetes":
        return GibbsMLPRegressor, train_test_split(X, y, test_size=0.1, random_state=0)
    return GibbsMLPClassifier, train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)


def test_score(est, X, y):
    if isinstance(est, GibbsMLPClassifier):
        return log_loss(y, est.predict_proba(X), labels=est.classes_)
    F = est.predict_samples(X)
    ll = logsumexp(norm.logpdf(y[:, None], F, np.sqrt(est.noise_variance_)), axis=1) - np.log(F.shape[1])
    return -float(ll.mean())


def gradient_noise(est, X, y, reps):
    """Summed variance of the gradient estimates w.r.t. mu and rho, and seconds per estimate."""
    spec = est.spec_
    Xt = torch.as_tensor((X - est.x_mean_) / est.x_scale_, dtype=torch.float32)
    if isinstance(est, GibbsMLPClassifier):
        yt = torch.as_tensor(np.searchsorted(est.classes_, y), dtype=torch.float32)
        loss = "cross_entropy"
    else:
        yt = torch.as_tensor((y - est.y_mean_) / est.y_scale_, dtype=torch.float32)
        loss = "squared"
    mu0 = torch.as_tensor(est.variational_mean_, dtype=torch.float32)
    rho0 = vi.inverse_softplus(torch.as_tensor(est.variational_std_, dtype=torch.float32))
    gen = torch.Generator().manual_seed(0)
    out = {}
    for local in (True, False):
        grads_mu, grads_rho = [], []
        start = time.perf_counter()
        for _ in range(reps):
            idx = torch.randperm(len(yt), generator=gen)[:128]
            mu, rho = mu0.clone().requires_grad_(True), rho0.clone().requires_grad_(True)
            val = vi.expected_loss_sample(
                spec, loss, mu, vi.softplus(rho), Xt[idx], yt[idx], gen, local=local
            )
            g_mu, g_rho = torch.autograd.grad(est.lambda_ * val / 128, (mu, rho))
            grads_mu.append(g_mu)
            grads_rho.append(g_rho)
        seconds = (time.perf_counter() - start) / reps
        out["local" if local else "reparam"] = {
            "var_mu": float(torch.stack(grads_mu).var(0).sum()),
            "var_rho": float(torch.stack(grads_rho).var(0).sum()),
            "seconds": seconds,
        }
    return out


def run(args):
    """Gradient noise at a fitted ``q`` and default fits with either estimator, on diabetes and digits."""
    seeds = [args.seed + k for k in range(args.size.n_seeds)]
    reps = args.size.reps
    extra, vi_extra = args.size.estimator, args.size.vi
    result = {"noise": {}, "fits": {}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        for name in ("diabetes", "digits"):
            Est, (Xtr, Xte, ytr, yte) = load(name)
            ref = Est(sampler=MeanFieldVI(**vi_extra), random_state=0, **FIXED[Est], **extra).fit(Xtr, ytr)
            result["noise"][name] = gradient_noise(ref, Xtr, ytr, reps)
            runs = {}
            for grad in ("local", "reparam"):
                rows = []
                for seed in seeds:
                    start = time.perf_counter()
                    vi_sampler = MeanFieldVI(gradient=grad, **vi_extra)
                    est = Est(sampler=vi_sampler, random_state=seed, **FIXED[Est], **extra).fit(Xtr, ytr)
                    rows.append((test_score(est, Xte, yte), est.n_iter_, time.perf_counter() - start))
                runs[grad] = np.array(rows).tolist()
            result["fits"][name] = runs
            print(name, result["noise"][name], {k: np.mean(v, 0).round(4).tolist() for k, v in runs.items()})
    return {NAME: result}


def report(results):
    """The gradient-noise and fit tables."""
    result = results[NAME]
    seeds = next(iter(next(iter(result["fits"].values())).values()))  # one row per seed
    noise_rows, fit_rows = [], []
    for name in result["noise"]:
        for grad in ("local", "reparam"):
            n = result["noise"][name][grad]
            noise_rows.append(
                [name, grad, f"{n['var_mu']:.4g}", f"{n['var_rho']:.4g}", f"{1e3 * n['seconds']:.2f}"]
            )
            f = np.array(result["fits"][name][grad])
            fit_rows.append(
                [
                    name,
                    grad,
                    fmt(mean_se(f[:, 0]), 4),
                    f"{f[:, 1].mean():.0f}",
                    f"{f[:, 2].mean():.1f}",
                ]
            )
    score = "test NLL (digits: log loss; diabetes: -log-likelihood per point)"
    return [Page(
        NAME,
        "VI gradients: local reparametrisation against weight draws",
        [
            (
                "Gradient noise at the fitted q (batch 128, one draw; summed variance over coordinates)",
                ["data", "estimator", "Var grad mu", "Var grad rho", "ms per gradient"],
                noise_rows,
            ),
            (
                f"Default fits, mean over {len(seeds)} seeds",
                ["data", "estimator", score, "Adam steps", "fit s"],
                fit_rows,
            ),
        ],
        [
            "Both estimators are unbiased for the gradient of the tempered ELBO; the local one draws every "
            "example's pre-activations, so the examples of a batch no longer share one weight draw. "
            "One torch thread."
        ],
    )]



BENCHMARK = Benchmark(
    name=NAME,
    kind="performance",
    title="VI gradients: local reparametrisation against weight draws",
    outputs=(Output(NAME, "VI gradients: local reparametrisation against weight draws"),),
    run=run,
    report=report,
    sizes=SIZES,
)
