"""Paper 002 §5 Fig. 3 analogue: the classical ELBO against the width (part ``fig3``).

The classical ELBO (``MeanFieldVI(kl_weight=1.0)``) on
digits (splits as ``fig1``, seeds 0..2) with one hidden layer of ``N`` in
{16, 32, ..., 2048} neurons, 50 draws, the estimator's defaults otherwise
(at most ``max_iter=5000`` Adam steps, early stopping); test NLL and accuracy against ``N``.
"""

import time

import numpy as np
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import train_test_split

from skgibbs import GibbsMLPClassifier
from skgibbs.metrics import expected_calibration_error

from ... import pick_sizes
from ...common.stats import fmt_values, mean_se
from .fig1 import FIG1_DRAWS
from .shared import QUICK_FIT, fit_timed, load_digits, pyplot, vi_estimator

STEM = "vi_fig3"
DOC_FIGURE = None

FIG3_WIDTHS = (16, 32, 64, 128, 256, 512, 1024, 2048)
FIG3_SEEDS = 3
#: the widths and the seeds (splits) per width (``--seeds`` overrides),
#: and the estimator's settings over the part's (fit)
SIZES = {
    "full": {"widths": list(FIG3_WIDTHS), "seeds": FIG3_SEEDS, "fit": {}},
    "quick": {"widths": [8, 16], "seeds": 1, "fit": QUICK_FIT},
}


def fig3_fit(N, seed, fit):
    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, stratify=y, random_state=seed)
    n_chains, n_samples = FIG1_DRAWS
    est = vi_estimator(
        GibbsMLPClassifier,
        (N,),
        vi_params={"kl_weight": 1.0},
        fit=fit,
        n_chains=n_chains,
        n_samples=n_samples,
        random_state=seed,
    )
    seconds, messages = fit_timed(est, X_train, y_train)
    proba = est.predict_proba(X_test)
    return dict(
        N=N,
        seed=seed,
        n_params=int(est.spec_.n_params),
        n_over_N=est.n_train_ / N,
        accuracy=float(accuracy_score(y_test, est.classes_[proba.argmax(1)])),
        nll=float(log_loss(y_test, proba, labels=est.classes_)),
        ece=float(expected_calibration_error(y_test, proba, labels=est.classes_)),
        confidence=float(proba.max(1).mean()),
        kl=float(est.kl_),
        n_iter=int(est.n_iter_),
        stopped_early=bool(est.vi_stopped_early_),
        fit_s=seconds,
        warnings=messages,
    )


def run(args):
    size = pick_sizes(SIZES, args.quick)
    widths, seeds = size.widths, range(args.seeds or size.seeds)
    runs = []
    start = time.perf_counter()
    for N in widths:
        for seed in seeds:
            r = fig3_fit(N, seed, size.fit)
            runs.append(r)
            print(
                f"fig3 N={N} seed {seed}: acc {r['accuracy']:.3f}, NLL {r['nll']:.3f}, KL {r['kl']:.4g}, "
                f"{r['n_iter']} steps, {r['fit_s']:.0f} s",
                flush=True,
            )
    runtime = time.perf_counter() - start

    def vals(N, field):
        return [r[field] for r in runs if r["N"] == N]

    header = [
        "N",
        "parameters",
        "n / N",
        "test NLL",
        "accuracy",
        "ECE",
        "mean confidence",
        "KL(q||P0)",
        "Adam steps",
        "fit s",
    ]
    rows = [
        [
            str(N),
            str(vals(N, "n_params")[0]),
            f"{vals(N, 'n_over_N')[0]:.3g}",
            fmt_values(vals(N, "nll")),
            fmt_values(vals(N, "accuracy")),
            fmt_values(vals(N, "ece")),
            fmt_values(vals(N, "confidence")),
            f"{np.mean(vals(N, 'kl')):.4g}",
            f"{np.mean(vals(N, 'n_iter')):.0f}",
            f"{np.mean(vals(N, 'fit_s')):.1f}",
        ]
        for N in widths
    ]
    nll = [np.mean(vals(N, "nll")) for N in widths]
    acc = [np.mean(vals(N, "accuracy")) for N in widths]
    best_nll = widths[int(np.argmin(nll))]
    cmp_header = ["", "paper (Fig. 3, MNIST, 7 widths)", "this run (digits)"]
    cmp_rows = [
        [
            "test NLL against N",
            "rises as N grows",
            f"lowest at N = {best_nll}; {nll[0]:.3f} at N = {widths[0]}, {nll[-1]:.3f} at N = {widths[-1]}",
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
        + (f"quick run: {QUICK_FIT}" if args.quick else "at most max_iter=5000 Adam steps (the default)")
        + f", early stopping as the default. Mean ± s.e. over {len(seeds)} seed(s). Runtime {runtime:.0f} s.",
    ]
    result = {"widths": widths, "runs": runs, "runtime_s": runtime}
    # the tables are kept with the runs: they are built from intermediate results the JSON does not hold
    result["page"] = {
        "heading": "Paper 002 Fig. 3 analogue: the classical ELBO against the width",
        "tables": [
        ("Digits, classical ELBO, one hidden layer of N", header, rows),
        ("Against the paper", cmp_header, cmp_rows),
        ],
        "notes": notes,
    }
    return {"vi_fig3": result}


def plot(result, path):
    plt = pyplot()
    widths, runs = result["widths"], result["runs"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, (field, title) in zip(axes, (("nll", "test NLL"), ("accuracy", "test accuracy"))):
        stats = [mean_se([r[field] for r in runs if r["N"] == N]) for N in widths]
        ax.errorbar(
            widths,
            [m for m, _ in stats],
            yerr=[0.0 if np.isnan(s) else s for _, s in stats],
            marker="o",
            capsize=3,
            color="C3",
        )
        ax.set_xscale("log", base=2)
        ax.set_xlabel("neurons N (one hidden layer)")
        ax.set_title(f"digits, classical ELBO: {title}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"figure: {path}")
