"""The library's rows of the classification and uncertainty benchmarks, built, fitted and scored once.

The tau sweep of ``sampler='vi'`` refits the ``skgibbs_vi`` rows of both with these functions. A row's
settings are JSON objects of estimator keyword arguments, the sampler's own in scikit-learn's nested form
``sampler__<name>`` (``{"sampler__tau": 0.03, "n_samples": 50}``).
"""

import json
import re
from collections import Counter

import numpy as np
from scipy.stats import norm
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import accuracy_score, brier_score_loss, log_loss
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from skgibbs import GibbsMLPRegressor, SamplerWarning
from skgibbs.metrics import (
    ReliabilityCurve,
    expected_calibration_error,
    log_predictive_density_scorer,
    reliability_curve,
)
from skgibbs.samplers import MCLMC, SMC, MeanFieldVI

from .data import load
from .environment import session_loads, session_text
from .stats import fmt, mean_se, timed_fit

#: the library's rows; the others are the peers
GIBBS = ("skgibbs", "skgibbs_vi", "skgibbs_smc", "skgibbs_stacking", "skgibbs_ard")
#: the skgibbs_ard rows: Neal's hierarchical prior with a precision per input and, for the regressor, the
#: noise learned (a pilot on two Boston splits: test LL -2.47 against -2.54 with the plug-in temperature),
#: by HMC within Gibbs as their fits were made
ARD = {"prior": "ard"}
ARD_REGRESSOR = {**ARD, "temperature": "learn", "sampler": "hmc"}
#: the target of the rows that are not the library's defaults (VI, stacking, MCLMC beside HMC), under which
#: they were measured: the fixed prior and, for the regressor, the plug-in temperature
FIXED = {"prior": "fixed"}
FIXED_REGRESSOR = {**FIXED, "temperature": "plug-in"}
#: the rows fitted on the first SMC_SPLITS splits only (an SMC fit costs more than the default HMC fit)
FEW_SPLITS = ("skgibbs_smc", "skgibbs_stacking")
SMC_SPLITS = 3
LEVEL = 0.9
Z = float(norm.ppf(0.5 + LEVEL / 2))  # 1.645
N_BINS = 15
CLASSIFICATION_TEST_SIZE, REGRESSION_TEST_SIZE = 0.25, 0.1
QUICK_SKGIBBS = {"hidden_layer_sizes": [4], "n_samples": 8, "burn_in": 5, "pretrain_iter": 10}
QUICK_VI = {"hidden_layer_sizes": [4], "n_samples": 8, "pretrain_iter": 10, "sampler__max_iter": 50}
QUICK_SMC = {"hidden_layer_sizes": [4], "pretrain_iter": 10, "sampler__n_particles": 8,
             "sampler__n_leapfrog": 2}  # fmt: skip
SAMPLER_PREFIX = "sampler__"
SAMPLERS = {"vi": MeanFieldVI, "smc": SMC, "mclmc": MCLMC}
#: the regressor's rows whose fits record R-hat and ESS, and the within- and between-chain diagnostics
CHAIN_ROWS = ("skgibbs", "skgibbs_ard", "skgibbs_mclmc", "skgibbs_ard_mclmc")
CHAIN_MIXING = ("within_chain_rhat", "within_chain_ess", "between_chain_rhat")


# ---------------------------------------------------------------- text and data
def regression_split(name, split):
    """``(Xtr, Xte, ytr, yte)`` of split ``split`` of ``bench_uq``'s table ``name``, inputs standardised."""
    X, y = load(name)[:2]
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=REGRESSION_TEST_SIZE, random_state=split)
    scaler = StandardScaler().fit(Xtr)
    return scaler.transform(Xtr), scaler.transform(Xte), ytr, yte


def warning_kinds(messages):
    """Distinct messages with their numbers replaced by ``#``, most frequent first, with their counts."""
    kinds = Counter(re.sub(r"\d+(\.\d+)?", "#", m) for m in messages)
    return [f"[{count}x] {text}" for text, count in kinds.most_common()]


def escape(text):
    """``text`` safe in reStructuredText: no references (``word_``), substitutions or emphasis."""
    text = re.sub(r"([|*`])", r"\\\1", text)
    return re.sub(r"(\w)_(?=\W|$)", r"\1\\_", text)


#: the pooled R-hat and bulk ESS in a mixing warning: as worded since the within-chain checks, and before
_MIXING_NUMBERS = (
    re.compile(
        r"have an R-hat of ([\d.]+) \(at most [\d.]+ wanted\) and a bulk effective sample size of ([\d.]+)"
    ),
    re.compile(r"R-hat up to ([\d.]+) and a bulk effective sample size down to ([\d.]+)"),
)


def mixing_note(messages):
    """``"R-hat r, ESS e: not mixed"`` from a fit's SamplerWarning messages, or ``"mixed"`` without one."""
    for m in messages:
        for pattern in _MIXING_NUMBERS:
            hit = pattern.search(m)
            if hit:
                return f"R-hat {hit.group(1)}, ESS {hit.group(2)}: not mixed"
    return "mixed"


def closing_notes(result, runs="Runs"):
    """The skipped data sets and models, the versions and the runs that made the stored fits."""
    out = []
    if result.get("skipped"):
        out.append("Skipped: " + "; ".join(f"{k}: {v}" for k, v in result["skipped"].items()) + ".")
    ver = ", ".join(f"{k} {v}" for k, v in result["versions"].items() if v)
    sessions = "; ".join(
        f"{', '.join(x['models'])} on {', '.join(x['datasets'])}: {session_text(x)}"
        for x in session_loads(result)
    )
    return [*out, f"Versions: {ver}. {runs}: {sessions}."]


# ---------------------------------------------------------------- the library's rows
def _sampled(name, params):
    """``params`` with ``sampler=name``, its ``sampler__<name>`` settings in the sampler's object; without
    any the sampler stays its name, so that the repr (which identifies stored fits) is the default row's."""
    own = {k.removeprefix(SAMPLER_PREFIX): v for k, v in params.items() if k.startswith(SAMPLER_PREFIX)}
    rest = {k: v for k, v in params.items() if not k.startswith(SAMPLER_PREFIX)}
    return {**rest, "sampler": SAMPLERS[name](**own) if own else name}


def make_estimator(model, cfg, seed, cls):
    """The library's row ``model`` (a ``cls``, classifier or regressor) of ``cfg``, seeded ``seed``.

    VI, stacking and MCLMC run on :data:`FIXED` (:data:`FIXED_REGRESSOR`), under which they were measured;
    the ARD rows take ``cfg["skgibbs_ard"]`` over :data:`ARD` (:data:`ARD_REGRESSOR`).
    """
    regressor = cls is GibbsMLPRegressor
    fixed = FIXED_REGRESSOR if regressor else FIXED
    if model == "skgibbs_vi":
        settings = _sampled("vi", {**fixed, **cfg["skgibbs_vi"]})
    elif model == "skgibbs_smc":
        settings = _sampled("smc", cfg["skgibbs_smc"])
    elif model == "skgibbs_stacking":
        settings = {**fixed, "sampler": "hmc", **cfg["skgibbs"], "chain_weights": "stacking"}
    elif model == "skgibbs_mclmc":
        settings = {**fixed, **cfg["skgibbs"], **_sampled("mclmc", cfg["skgibbs_mclmc"])}
    elif model.startswith("skgibbs_ard"):
        settings = {**cfg["skgibbs"], **(ARD_REGRESSOR if regressor else ARD), **cfg.get("skgibbs_ard", {})}
        if model == "skgibbs_ard_mclmc":
            settings.update(_sampled("mclmc", cfg["skgibbs_mclmc"]))
    else:
        settings = cfg["skgibbs"]
    return cls(**{**settings, "random_state": seed})


def row_extras(model, est):
    """What a fit of the library's row ``model`` records besides its scores and warnings."""
    if model.startswith("skgibbs_ard"):
        return {"relevance": [float(v) for v in est.input_relevance_]}
    if model == "skgibbs_smc":
        return {"n_stages": int(est.n_stages_), "n_particles": int(est.n_particles_),
                "log_evidence": float(est.log_evidence_)}  # fmt: skip
    if model == "skgibbs_stacking":
        return {"chain_weights": [float(w) for w in est.chain_weights_]}
    if model == "skgibbs_vi":
        return {"n_iter": int(est.n_iter_), "stopped_early": bool(est.vi_stopped_early_),
                "kl_weight": float(est.kl_weight_)}  # fmt: skip
    return {}


def grouped(runs, datasets, models, n_splits):
    """``(data set, model, its fits)`` of the stored fits of splits below ``n_splits``, in the order given."""
    for name in datasets:
        for model in models:
            rs = [r for r in runs if r["dataset"] == name and r["model"] == model and r["split"] < n_splits]
            if rs:
                yield name, model, rs


def library_summary(model, rs, few_splits):
    """The summary of the library's row ``model`` over its fits ``rs``: warnings, splits, SMC and VI runs."""
    out = {
        "n_warnings": sum(len(r["warnings"]) for r in rs),
        "fits_warned": sum(bool(r["warnings"]) for r in rs),
        "messages": warning_kinds(m for r in rs for m in r["warnings"]),
    }
    if model in few_splits:
        out["splits"] = sorted(r["split"] for r in rs)
    if model == "skgibbs_smc":
        out.update(n_stages=[r["n_stages"] for r in rs], n_particles=rs[0]["n_particles"])
    if model == "skgibbs_vi":
        n_iter = [r["n_iter"] for r in rs]
        out.update(n_iter_median=float(np.median(n_iter)), n_iter_range=[min(n_iter), max(n_iter)],
                   stopped_early=sum(r["stopped_early"] for r in rs),
                   kl_weight=float(np.mean([r["kl_weight"] for r in rs])))  # fmt: skip
    return out


def row_cfg(args):
    """The settings of the library's rows and the laplace and bde peers: the run's sizes, flags over them."""
    size = args.size
    return {
        "skgibbs": {**size.skgibbs, **json.loads(args.skgibbs_params)},
        "skgibbs_vi": {**size.skgibbs_vi, **json.loads(args.vi_params)},
        "skgibbs_smc": {**size.skgibbs_smc, **json.loads(args.smc_params)},
        "smc_splits": args.smc_splits,
        "skgibbs_ard": json.loads(args.ard_params),
        "laplace": size.laplace,
        "bde": size.bde,
    }


def add_arguments(parser, datasets, choices, models, estimator):
    """The options both benchmarks share: the data sets and models to run and the library's rows' settings."""
    parser.add_argument("--datasets", nargs="+", default=[",".join(datasets)], help=", ".join(choices))
    parser.add_argument("--models", nargs="+", default=[",".join(models)], help=", ".join(models))
    parser.add_argument(
        "--skgibbs-params", default="{}", help=f'{estimator} keyword arguments, JSON: {{"n_samples": 50}}'
    )
    sampler = "keyword arguments of the skgibbs_{} row, {} settings as sampler__<name>, JSON"
    example = ': {"sampler__tau": 0.03, "n_samples": 50}'
    parser.add_argument("--vi-params", default="{}", help=sampler.format("vi", "MeanFieldVI") + example)
    parser.add_argument("--smc-params", default="{}", help=sampler.format("smc", "SMC"))
    parser.add_argument(
        "--smc-splits",
        type=int,
        default=SMC_SPLITS,
        help=f"splits of the skgibbs_smc and skgibbs_stacking rows (default {SMC_SPLITS})",
    )
    parser.add_argument(
        "--ard-params",
        default="{}",
        help=f"keyword arguments of the skgibbs_ard rows beyond {ARD_REGRESSOR} (regression) or {ARD} "
        "(classification), JSON",
    )


# ---------------------------------------------------------------- classification
def fit_classifier(model, est, X, y):
    """Fit ``est`` and return what to record besides the test scores."""
    fit = timed_fit(est, X, y)
    out = {"fit_s": fit.seconds, "convergence_warnings": fit.count(ConvergenceWarning)}
    if model in ("skgibbs", "skgibbs_ard"):
        out.update(rhat=float(np.max(est.rhat_)), ess=float(np.min(est.ess_)), sampler=est.sampler_name_,
                   temperature=float(est.temperature_))  # fmt: skip
    if model in GIBBS:
        out.update(row_extras(model, est), warnings=fit.messages(SamplerWarning))
    return out


def score_classifier(est, X, y):
    """Accuracy, log loss, ECE and Brier score of ``est`` on ``(X, y)``, and its reliability curve.

    The curve (the non-empty bins of :data:`N_BINS` equal-width bins: edges, mean confidence, accuracy and
    size) is stored so that the curves of several splits pool into one diagram without refitting.
    """
    P, labels = est.predict_proba(X), est.classes_
    curve = reliability_curve(y, P, n_bins=N_BINS, strategy="uniform", labels=labels)
    reliability = {key: getattr(curve, key).tolist() for key in ("confidence", "accuracy", "count", "edges")}
    return {
        "accuracy": float(accuracy_score(y, est.predict(X))),
        "nll": float(log_loss(y, P, labels=labels)),
        "ece": float(expected_calibration_error(y, P, n_bins=N_BINS, strategy="uniform", labels=labels)),
        "brier": float(brier_score_loss(y, P, labels=labels, scale_by_half=False)),
        "reliability": reliability,
    }


def pooled_reliability(curves):
    """One reliability curve from the stored curves of several splits: each bin's confidence and accuracy
    the means of its splits' weighted by their counts (the curve of all their test points together)."""
    bins = {}  # the bins by their rounded edges: (edges, count, confidence sum, accuracy sum)
    for curve in curves:
        values = zip(curve["confidence"], curve["accuracy"], curve["count"], curve["edges"])
        for conf, acc, count, edges in values:
            key = tuple(np.round(edges, 9))
            e, n, c, a = bins.get(key, (edges, 0, 0.0, 0.0))
            bins[key] = (e, n + count, c + count * conf, a + count * acc)
    edges, count, conf, acc = (np.array(v, dtype=float) for v in zip(*(bins[k] for k in sorted(bins))))
    count = count.astype(int)
    return ReliabilityCurve(confidence=conf / count, accuracy=acc / count, count=count, edges=edges)


# ---------------------------------------------------------------- regression
def gaussian(mean, sd, y):
    return {"mean": mean, "lo": mean - Z * sd, "hi": mean + Z * sd, "loglik": norm.logpdf(y, mean, sd)}


def fit_regressor(model, X, y, seed, cfg):
    """Fit the library's row ``model``: ``predict(Xt, yt)`` and what to record besides the scores."""
    reg = make_estimator(model, cfg, seed, GibbsMLPRegressor)
    messages = timed_fit(reg, X, y).messages(SamplerWarning)

    def predict(Xt, yt):
        _, pis = reg.predict_interval(Xt, confidence_level=LEVEL)
        # the library's held-out log predictive density: the mixture over the draws, weighed by their chains
        ll = log_predictive_density_scorer(reg, Xt, yt)
        return {"mean": reg.predict(Xt), "lo": pis[:, 0, 0], "hi": pis[:, 1, 0], "ll": ll}

    extras = {}
    if model in CHAIN_ROWS:  # R-hat and ESS, the worst over the training inputs: pooled, per chain, between
        extras = {"rhat": reg.rhat_, "ess": reg.ess_}
        extras.update({key: float(getattr(reg, f"{key}_")) for key in CHAIN_MIXING})
    extras.update(row_extras(model, reg))
    if model.startswith("skgibbs_ard") and "noise_variance" in reg.sample_stats_:
        extras["noise_variance"] = float(reg.noise_variance_)
    return predict, {**extras, "warnings": messages}


def score_regression(pred, y):
    mean, lo, hi = pred["mean"], pred["lo"], pred["hi"]
    return {
        "ll": float(pred["ll"]) if "ll" in pred else float(np.mean(pred["loglik"])),
        "rmse": float(np.sqrt(np.mean((y - mean) ** 2))),
        "coverage": float(np.mean((lo <= y) & (y <= hi))),
        "width": float(np.mean(hi - lo)),
    }


# ---------------------------------------------------------------- rows on a few splits
def time_ratio(pairs):
    """The mean ratio b / a of the fit times of the pairs ``(a, b)`` of fits (``"0.42"``), or "—"."""
    return f"{np.mean([b['fit_s'] / a['fit_s'] for a, b in pairs]):.2f}" if pairs else "—"


def beside_hmc_rows(summary, runs, scores):
    """Rows of the SMC and stacking rows beside the default (HMC) on the splits they ran.

    Per data set: the splits, each score of ``scores`` (``(key, digits)``) for HMC, SMC and stacking, the
    mean fit times of HMC and SMC and their mean ratio over the same splits, SMC's stages and particles.
    """
    rows = []
    for name, models in summary.items():
        few = [m for m in FEW_SPLITS if m in models]
        if "skgibbs" not in models or not few:
            continue
        splits = sorted({k for m in few for k in models[m]["splits"]})
        by = {(r["model"], r["split"]): r for r in runs if r["dataset"] == name}
        hmc, smc, stack = ([by[m, k] for k in splits if (m, k) in by] for m in ("skgibbs", *FEW_SPLITS))
        ratio = time_ratio([(by["skgibbs", r["split"]], r) for r in smc if ("skgibbs", r["split"]) in by])
        stages = [r["n_stages"] for r in smc]
        cells = [fmt(mean_se([r[key] for r in fits]), digits) if fits else "—"
                 for key, digits in scores for fits in (hmc, smc, stack)]  # fmt: skip
        rows.append([
            name, str(len(hmc)), *cells, f"{np.mean([r['fit_s'] for r in hmc]):.1f}",
            f"{np.mean([r['fit_s'] for r in smc]):.1f}" if smc else "—", ratio,
            f"{min(stages)}-{max(stages)}" if stages else "—", str(smc[0]["n_particles"]) if smc else "—",
        ])  # fmt: skip
    return rows
