"""Paper 002 §5 Fig. 3 analogue: the classical ELBO against the width (part ``fig3``).

``MeanFieldVI(kl_weight=1.0)`` on digits (splits as ``fig1``, seeds 0..2) with one hidden layer of ``N`` in
{16, 32, ..., 2048} neurons, 50 draws, the defaults otherwise; test NLL and accuracy against ``N``.
"""

import itertools
import time

import numpy as np

from ... import pick_sizes
from ...common.environment import recorded
from .shared import FIT_COLUMNS, QUICK_FIT, cells, errorbar, figure, first_cell, fit_digits, n_seeds, se_cell
from .shared import select

STEM = "vi_fig3"
HEADING = "Paper 002 Fig. 3 analogue: the classical ELBO against the width"
DOC_FIGURE = None

#: the widths, the seeds (splits) per width (``--seeds`` overrides), the estimator's settings over the part's
SIZES = {
    "full": {"widths": [16, 32, 64, 128, 256, 512, 1024, 2048], "seeds": 3, "fit": {}},
    "quick": {"widths": [8, 16], "seeds": 1, "fit": QUICK_FIT},
}
COLUMNS = {  # header: (field, its cell over the seeds)
    "parameters": ("n_params", first_cell()),
    "n / N": ("n_over_N", first_cell(".3g")),
    "test NLL": ("nll", se_cell()),
    "accuracy": ("accuracy", se_cell()),
    "ECE": ("ece", se_cell()),
    "mean confidence": ("confidence", se_cell()),
    **FIT_COLUMNS,
}


def fig3_fit(N, seed, fit):
    est, scores, record = fit_digits((N,), {"kl_weight": 1.0}, seed, fit)
    n_params, n_over_N = int(est.spec_.n_params), est.n_train_ / N
    return dict(N=N, seed=seed, n_params=n_params, n_over_N=n_over_N, **scores, kl=float(est.kl_), **record)


def run(args):
    size = pick_sizes(SIZES, args.quick)
    widths, seeds = size.widths, range(args.seeds or size.seeds)
    runs, start = [], time.perf_counter()
    for N, seed in itertools.product(widths, seeds):
        runs.append(fig3_fit(N, seed, size.fit))
        print(f"fig3 N={N} seed {seed}: NLL {runs[-1]['nll']:.3f}, {runs[-1]['fit_s']:.0f} s", flush=True)
    return {STEM: {"widths": widths, "runs": runs, "runtime_s": time.perf_counter() - start}}


def render(result):
    """``(tables, notes)`` of the page, from the stored runs."""
    widths, runs = result["widths"], result["runs"]
    rows = [[str(N), *cells(runs, COLUMNS.values(), N=N)] for N in widths]
    nll = [np.mean(select(runs, "nll", N=N)) for N in widths]
    acc = [np.mean(select(runs, "accuracy", N=N)) for N in widths]
    cmp_header = ["", "paper (Fig. 3, MNIST, 7 widths)", "this run (digits)"]
    cmp_rows = [
        [
            "test NLL against N",
            "rises as N grows",
            f"lowest at N = {widths[int(np.argmin(nll))]}; {nll[0]:.3f} at N = {widths[0]}, "
            f"{nll[-1]:.3f} at N = {widths[-1]}",
        ],
        [
            "accuracy against N",
            "falls as N grows",
            f"highest at N = {widths[int(np.argmax(acc))]}; {acc[0]:.3f} at N = {widths[0]}, "
            f"{acc[-1]:.3f} at N = {widths[-1]}",
        ],
    ]
    notes = [
        "The classical ELBO (MeanFieldVI(kl_weight=1.0)) on digits: stratified 75/25 splits with "
        "random_state = seed, GibbsMLPClassifier(sampler=MeanFieldVI(kl_weight=1.0), "
        "hidden_layer_sizes=(N,), n_chains=2, n_samples=25, random_state=seed) with its default prior "
        "(N(0, (2 / sqrt(fan_in))^2)) and MeanFieldVI's default parametrization ('standard'); "
        + (
            f"quick run: {QUICK_FIT}"
            if recorded(result, "quick", False)
            else "at most max_iter=5000 Adam steps (the default)"
        )
        + f", early stopping as the default. Mean ± s.e. over {n_seeds(runs)} seed(s). "
        f"Runtime {result['runtime_s']:.0f} s.",
    ]
    tables = [
        ("Digits, classical ELBO, one hidden layer of N", ["N", *COLUMNS], rows),
        ("Against the paper", cmp_header, cmp_rows),
    ]
    return tables, notes


def plot(result, path):
    widths, runs = result["widths"], result["runs"]
    with figure(path, 1, 2, figsize=(10, 4)) as (fig, axes):
        for ax, (field, title) in zip(axes, (("nll", "test NLL"), ("accuracy", "test accuracy"))):
            errorbar(ax, widths, [select(runs, field, N=N) for N in widths], marker="o", color="C3")
            ax.set_xscale("log", base=2)
            ax.set_xlabel("neurons N (one hidden layer)")
            ax.set_title(f"digits, classical ELBO: {title}")
