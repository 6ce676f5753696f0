"""csMALA at its defaults on the README quick start's data, across ``rho``.

``GibbsMLPRegressor(sampler="csmala", rho=rho)`` with the quick start's
settings otherwise (``make_gap_regression(300, noise=0.02)``, one hidden
layer of 16, 200 draws after 100 warm-up transitions, four chains) at
``rho`` 0.1, 0.25, 0.5 and 1, and once more at ``rho = 0.5`` with a
pre-training long enough to level off (``pretrain_iter=20000``). Each fit
is judged by what a user reads from it:

- the pre-training: its steps and whether its held-out loss levelled off;
  the noise model ``noise="auto"`` chose and where the temperature came
  from, and the fitted noise sd (``sqrt(noise_variance_)``, the posterior
  mean of the noise variance over the inputs; the data's sd is 0.02);
- the kernel: its acceptance after warm-up against the rate its step size
  aims at (csMALA's ``target_accept``; with ``rho < 1`` the step size
  follows the acceptance of the parameter move alone);
- the draws: the coverage of the 90% predictive intervals of 2,000 new
  observations and of the 90% credible band of the true function at the
  same inputs, R-hat and the seconds of the fit (one thread).

Run ``python -m benchmarks run csmala_defaults`` (a few minutes on one
core); ``--quick`` fits two ``rho`` with a short pre-training and run.
"""

import time
import warnings

import numpy as np
import torch

from skgibbs import GibbsMLPRegressor
from skgibbs.datasets import gap_regression_function, make_gap_regression
from skgibbs.samplers import CSMALA

from .. import Benchmark, Output
from ..common.environment import load_after
from ..common.provenance import ran_with
from ..common.writer import Page

NAME = "csmala_defaults"
SIZES = {  # pretrain_iter: None is the estimator's default
    "full": {"rhos": [0.1, 0.25, 0.5, 1.0], "long_pretrain": 20000, "n_samples": 200, "burn_in": 100,
             "pretrain_iter": None},
    "quick": {"rhos": [0.5, 1.0], "long_pretrain": 0, "n_samples": 20, "burn_in": 20, "pretrain_iter": 100},
}


def _fit(rho, size, pretrain_iter=None):
    X, y = make_gap_regression(n_samples=300, noise=0.02, random_state=0)
    X_test, y_test = make_gap_regression(n_samples=2000, noise=0.02, random_state=1)
    extra = {} if pretrain_iter is None else {"pretrain_iter": pretrain_iter}
    est = GibbsMLPRegressor(hidden_layer_sizes=(16,), sampler="csmala", rho=rho, n_samples=size.n_samples,
                            burn_in=size.burn_in, random_state=0, **extra)  # fmt: skip
    start = time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    seconds = time.process_time() - start
    _, pis = est.predict_interval(X_test, confidence_level=0.9)
    _, band = est.predict_interval(X_test, confidence_level=0.9, kind="credible")
    f = gap_regression_function(X_test[:, 0])
    return {
        "rho": rho,
        "pretrain_iter": est.pretrain_iter,
        "pretrain_n_iter": int(est.pretrain_n_iter_),
        "pretrain_converged": bool(est.pretrain_converged_),
        "temperature": float(est.temperature_),
        "temperature_source": est.temperature_source_,
        "noise": est.noise_,
        "noise_sd": float(np.sqrt(est.noise_variance_)),
        "acceptance": [float(a) for a in est.acceptance_rate_],
        "target_accept": float(est.sampler_.target_accept),
        "predictive_coverage": float(np.mean((y_test >= pis[:, 0, 0]) & (y_test <= pis[:, 1, 0]))),
        "credible_coverage": float(np.mean((f >= band[:, 0, 0]) & (f <= band[:, 1, 0]))),
        "rhat": float(est.rhat_),
        "seconds": seconds,
        "warnings": sorted({type(w.message).__name__ for w in caught}),
        "ran_with": ran_with({"est": est}, sources=["benchmarks/studies/csmala_defaults.py"]),
    }


def run(args):
    """Fit csMALA at each ``rho``, then at ``rho = 0.5`` with the long pre-training."""
    torch.set_num_threads(1)
    size = args.size
    rows = [_fit(rho, size, size.pretrain_iter) for rho in size.rhos]
    if size.long_pretrain:
        rows.append(_fit(0.5, size, pretrain_iter=size.long_pretrain))
    return {NAME: {"rows": rows, "n_samples": size.n_samples, "burn_in": size.burn_in,
                   "default_target_accept": CSMALA().target_accept}}  # fmt: skip


def report(results):
    """One row per fit."""
    result = results[NAME]
    load = load_after(result, lambda r: r["load_average"])
    header = ["rho", "pretrain steps (cap)", "levelled off", "noise model (temperature)", "noise sd",
              "acceptance (mean, min)", "90% predictive coverage", "90% credible coverage of f", "R-hat",
              "CPU s"]  # fmt: skip
    rows = []
    for r in result["rows"]:
        acc = np.asarray(r["acceptance"])
        rows.append([
            f"{r['rho']:g}", f"{r['pretrain_n_iter']} ({r['pretrain_iter']})", "yes" if r["pretrain_converged"] else "no",
            f"{r['noise']} ({r['temperature_source']})", f"{r['noise_sd']:.4f}", f"{acc.mean():.3f}, {acc.min():.3f}",
            f"{r['predictive_coverage']:.3f}",
            f"{r['credible_coverage']:.3f}", f"{r['rhat']:.2f}", f"{r['seconds']:.1f}",
        ])  # fmt: skip
    notes = [
        f"GibbsMLPRegressor(hidden_layer_sizes=(16,), sampler='csmala', rho=rho, n_samples={result['n_samples']}, "
        f"burn_in={result['burn_in']}, random_state=0) on make_gap_regression(300, noise=0.02, random_state=0) "
        "(the README quick start's data; the true noise sd is 0.02), scored on 2,000 new rows of the same "
        "generator (random_state=1). A learned temperature is the Bayesian one of the network's own noise output "
        "(noise='heteroscedastic' or 'student'); a plug-in one is twice the pre-training's held-out mean squared "
        f"error. csMALA's step size aims at an acceptance of {result['default_target_accept']:g}. The last row "
        f"runs the pre-training until its held-out loss levels off. One thread; load average {load:.1f}.",
    ]
    return [Page(NAME, "csMALA at its defaults across rho", [("csMALA at its defaults", header, rows)], notes)]


BENCHMARK = Benchmark(
    name=NAME,
    kind="reproduction",
    title="csMALA at its defaults on the quick start's data, across rho",
    outputs=(Output(NAME, "csMALA at its defaults across rho"),),
    run=run,
    report=report,
    sizes=SIZES,
)
