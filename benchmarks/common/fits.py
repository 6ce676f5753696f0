"""Fits and scores shared by the classification and uncertainty benchmarks and the tau sweep.

The sweep of ``sampler='vi'``'s cooling refits the ``skgibbs_vi`` rows of
both benchmarks on other splits, so the estimator settings, the fits and
the scores live here, once.

The settings of the ``skgibbs_vi`` rows are JSON objects of estimator
keyword arguments, and of :class:`~skgibbs.samplers.MeanFieldVI` settings in
scikit-learn's nested form ``sampler__<name>`` (``{"sampler__tau": 0.03,
"n_samples": 50}``).
"""

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
from skgibbs.samplers import SMC, MeanFieldVI

from .data import load
from .stats import fmt, mean_se, timed_fit

#: the library's rows; the others are the peers
GIBBS = ("skgibbs", "skgibbs_vi", "skgibbs_smc", "skgibbs_stacking", "skgibbs_ard")
#: the settings of the skgibbs_ard rows: Neal's hierarchical prior with a precision per input (ARD),
#: and for the regressor the noise learned as well (a pilot on two Boston splits: test LL -2.47 against -2.54
#: with the plug-in temperature), sampled by HMC within Gibbs as its fits were (sampler="auto" runs MCLMC
#: for these settings since 2026-11-27)
ARD = {"prior": "ard"}
ARD_REGRESSOR = {**ARD, "temperature": "learn", "sampler": "hmc"}
#: the target of the rows that are not the library's defaults (VI, stacking, MCLMC beside HMC): the fixed
#: Gaussian prior and, for the regressor, the plug-in temperature, the defaults until 2026-11-27 under which
#: they were measured; ``prior="auto"`` would give them ARD (and the regressor a learned noise) now
FIXED = {"prior": "fixed"}
FIXED_REGRESSOR = {**FIXED, "temperature": "plug-in"}
#: the rows fitted on the first SMC_SPLITS splits only, beside the default (HMC) on the same splits
FEW_SPLITS = ("skgibbs_smc", "skgibbs_stacking")
LEVEL = 0.9
Z = float(norm.ppf(0.5 + LEVEL / 2))  # 1.645
N_BINS = 15
CLASSIFICATION_TEST_SIZE, REGRESSION_TEST_SIZE = 0.25, 0.1
QUICK_SKGIBBS = {"hidden_layer_sizes": [4], "n_samples": 8, "burn_in": 5, "pretrain_iter": 10}
QUICK_VI = {"hidden_layer_sizes": [4], "n_samples": 8, "pretrain_iter": 10, "sampler__max_iter": 50}
QUICK_SMC = {
    "hidden_layer_sizes": [4],
    "pretrain_iter": 10,
    "sampler__n_particles": 8,
    "sampler__n_leapfrog": 2,
}
#: the SMC and stacking rows fit the first splits only (an SMC fit costs more than the default HMC fit)
SMC_SPLITS = 3
SAMPLER_PREFIX = "sampler__"


# ---------------------------------------------------------------- text
def regression_split(name, split):
    """``(Xtr, Xte, ytr, yte)``: split ``split`` of ``bench_uq``'s table ``name`` (90/10, seeded with the split),
    the inputs standardised on the training part."""
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


# ---------------------------------------------------------------- variational rows
SAMPLER_CLASSES = {"vi": MeanFieldVI, "smc": SMC}


def sampler_estimator(cls, sampler, params, seed):
    """``cls`` with ``sampler`` (``"vi"`` or ``"smc"``), seeded ``seed``, and ``params``.

    The settings prefixed ``sampler__`` go to ``MeanFieldVI(...)`` or
    ``SMC(...)``; without any the sampler stays its name (the same sampler
    at its defaults), so that the estimator's repr, which identifies stored
    fits, is that of the default row.
    """
    own = {k.removeprefix(SAMPLER_PREFIX): v for k, v in params.items() if k.startswith(SAMPLER_PREFIX)}
    rest = {k: v for k, v in params.items() if not k.startswith(SAMPLER_PREFIX)}
    chosen = SAMPLER_CLASSES[sampler](**own) if own else sampler
    return cls(**{**rest, "sampler": chosen, "random_state": seed})


def vi_estimator(cls, params, seed):
    """``cls`` with ``sampler='vi'``: :func:`sampler_estimator`."""
    return sampler_estimator(cls, "vi", params, seed)


def smc_extras(est):
    """What an SMC fit records besides its scores: stages, particles and the log evidence."""
    return {
        "n_stages": int(est.n_stages_),
        "n_particles": int(est.n_particles_),
        "log_evidence": float(est.log_evidence_),
    }


# ---------------------------------------------------------------- classification
def make_classifier_vi(seed, cfg):
    """The ``skgibbs_vi`` row's classifier of ``cfg`` seeded ``seed``, on the fixed prior (:data:`FIXED`)."""
    from skgibbs import GibbsMLPClassifier

    return vi_estimator(GibbsMLPClassifier, {**FIXED, **cfg["skgibbs_vi"]}, seed)


def make_classifier_stacking(seed, cfg):
    """The ``skgibbs_stacking`` row's classifier: HMC on the fixed prior (:data:`FIXED`) with
    ``chain_weights="stacking"``, the default one with stacking when its fits were made."""
    from skgibbs import GibbsMLPClassifier

    settings = {**FIXED, "sampler": "hmc", **cfg["skgibbs"], "chain_weights": "stacking"}
    return GibbsMLPClassifier(**settings, random_state=seed)


def make_classifier_ard(seed, cfg):
    """The ``skgibbs_ard`` row's classifier: the default one with ``ARD`` and ``cfg["skgibbs_ard"]``."""
    from skgibbs import GibbsMLPClassifier

    return GibbsMLPClassifier(**{**cfg["skgibbs"], **ARD, **cfg.get("skgibbs_ard", {}), "random_state": seed})


def make_classifier_smc(seed, cfg):
    """The ``skgibbs_smc`` row's classifier of ``cfg`` seeded ``seed``."""
    from skgibbs import GibbsMLPClassifier

    return sampler_estimator(GibbsMLPClassifier, "smc", cfg["skgibbs_smc"], seed)


def fit_classifier(model, est, X, y):
    """Fit ``est`` and return what to record besides the test scores."""
    fit = timed_fit(est, X, y)
    out = {"fit_s": fit.seconds, "convergence_warnings": fit.count(ConvergenceWarning)}
    if model in ("skgibbs", "skgibbs_ard"):
        out["rhat"] = float(np.max(est.rhat_))
        out["ess"] = float(np.min(est.ess_))
        out["sampler"], out["temperature"] = est.sampler_name_, float(est.temperature_)
    if model == "skgibbs_ard":
        out["relevance"] = [float(v) for v in est.input_relevance_]
    if model == "skgibbs_smc":
        out.update(smc_extras(est))
    if model == "skgibbs_stacking":
        out["chain_weights"] = [float(w) for w in est.chain_weights_]
    if model == "skgibbs_vi":
        out["n_iter"] = int(est.n_iter_)
        out["stopped_early"] = bool(est.vi_stopped_early_)
        out["kl_weight"] = float(est.kl_weight_)
    if model in GIBBS:
        out["warnings"] = fit.messages(SamplerWarning)
    return out


def score_classifier(est, X, y):
    """Accuracy, log loss, ECE and Brier score of ``est`` on ``(X, y)``, and its reliability curve.

    The curve (``"reliability"``: the non-empty bins of :data:`N_BINS`
    equal-width bins, each with its edges, mean confidence, accuracy and
    size) is stored so that the curves of several splits can be pooled, bin
    by bin, into one diagram without refitting.
    """
    P, labels = est.predict_proba(X), est.classes_
    curve = reliability_curve(y, P, n_bins=N_BINS, strategy="uniform", labels=labels)
    return {
        "accuracy": float(accuracy_score(y, est.predict(X))),
        "nll": float(log_loss(y, P, labels=labels)),
        "ece": float(expected_calibration_error(y, P, n_bins=N_BINS, strategy="uniform", labels=labels)),
        "brier": float(brier_score_loss(y, P, labels=labels, scale_by_half=False)),
        "reliability": {
            "confidence": curve.confidence.tolist(),
            "accuracy": curve.accuracy.tolist(),
            "count": curve.count.tolist(),
            "edges": curve.edges.tolist(),
        },
    }


def pooled_reliability(curves):
    """One reliability curve from the stored ``"reliability"`` curves of several splits, bin by bin.

    The bins are the same equal-width bins on every split: a bin's pooled
    confidence and accuracy are the means of its splits' weighted by their
    counts, so the pooled curve is the curve of all test points together.

    Examples
    --------
    >>> one = {"confidence": [0.6, 0.9], "accuracy": [0.5, 1.0], "count": [2, 2],
    ...        "edges": [[0.5, 0.7], [0.8, 1.0]]}
    >>> two = {"confidence": [0.95], "accuracy": [0.5], "count": [2], "edges": [[0.8, 1.0]]}
    >>> curve = pooled_reliability([one, two])
    >>> curve.confidence.round(3).tolist(), curve.accuracy.tolist(), curve.count.tolist()
    ([0.6, 0.925], [0.5, 0.75], [2, 4])
    """
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


def make_regressor_vi(cfg, seed=None):
    """The ``skgibbs_vi`` row's regressor of ``cfg`` seeded ``seed``, on :data:`FIXED_REGRESSOR`'s target."""
    return vi_estimator(GibbsMLPRegressor, {**FIXED_REGRESSOR, **cfg["skgibbs_vi"]}, seed)


#: the pooled R-hat and bulk ESS in the text of a mixing warning: as worded since the within-chain checks,
#: and as worded before them (fits stored then)
_MIXING_NUMBERS = (
    re.compile(r"have an R-hat of ([\d.]+) \(at most [\d.]+ wanted\) and a bulk effective sample size of ([\d.]+)"),
    re.compile(r"R-hat up to ([\d.]+) and a bulk effective sample size down to ([\d.]+)"),
)


def mixing_note(messages):
    """``"R-hat r, ESS e: not mixed"`` from a fit's SamplerWarning messages, or ``"mixed"`` without one.

    Examples
    --------
    >>> mixing_note(["The chains have not mixed: a chain has not converged on its own. At the training "
    ...              "inputs the function values have an R-hat of 1.28 (at most 1.05 wanted) and a bulk "
    ...              "effective sample size of 11.1 (at least 100) over the 4 chains; ..."])
    'R-hat 1.28, ESS 11.1: not mixed'
    >>> mixing_note(["3 divergent transitions after warm-up: raise target_accept."])
    'mixed'
    """
    for m in messages:
        for pattern in _MIXING_NUMBERS:
            hit = pattern.search(m)
            if hit:
                return f"R-hat {hit.group(1)}, ESS {hit.group(2)}: not mixed"
    return "mixed"


def fit_gibbs(reg, X, y):
    """Fit ``reg`` (a GibbsMLPRegressor); ``predict`` and the SamplerWarning messages raised."""
    messages = timed_fit(reg, X, y).messages(SamplerWarning)

    def predict(Xt, yt):
        mean = reg.predict(Xt)
        _, pis = reg.predict_interval(Xt, confidence_level=LEVEL)
        # the library's held-out log predictive density: the mixture over the draws, weighed by their chains
        ll = log_predictive_density_scorer(reg, Xt, yt)
        return {"mean": mean, "lo": pis[:, 0, 0], "hi": pis[:, 1, 0], "ll": ll}

    return predict, messages


def make_regressor_stacking(cfg, seed=None):
    """The ``skgibbs_stacking`` row's regressor: HMC on :data:`FIXED_REGRESSOR`'s target with
    ``chain_weights="stacking"``, the default one with stacking when its fits were made."""
    settings = {**FIXED_REGRESSOR, "sampler": "hmc", **cfg["skgibbs"], "chain_weights": "stacking"}
    return GibbsMLPRegressor(**settings, random_state=seed)


def fit_regressor_stacking(X, y, seed, cfg):
    reg = make_regressor_stacking(cfg, seed)
    predict, messages = fit_gibbs(reg, X, y)
    return predict, {"chain_weights": [float(w) for w in reg.chain_weights_], "warnings": messages}


def make_regressor_ard(cfg, seed=None):
    """The ``skgibbs_ard`` row's regressor: the ``skgibbs`` row's settings with ``ARD_REGRESSOR`` and
    ``cfg["skgibbs_ard"]``."""
    settings = {**cfg["skgibbs"], **ARD_REGRESSOR, **cfg["skgibbs_ard"]}
    return GibbsMLPRegressor(**settings, random_state=seed)


def fit_regressor_ard(X, y, seed, cfg):
    reg = make_regressor_ard(cfg, seed)
    predict, messages = fit_gibbs(reg, X, y)
    extras = {"rhat": reg.rhat_, "ess": reg.ess_, "relevance": [float(v) for v in reg.input_relevance_]}
    if "noise_variance" in reg.sample_stats_:
        extras["noise_variance"] = float(reg.noise_variance_)
    return predict, {**extras, "warnings": messages}


def add_ard_argument(parser):
    """``--ard-params``: keyword arguments of the skgibbs_ard row over the default estimator's and ``ARD``."""
    parser.add_argument(
        "--ard-params",
        default="{}",
        help=f"keyword arguments of the skgibbs_ard rows beyond {ARD_REGRESSOR} (regression) or {ARD} "
        "(classification), JSON",
    )


def make_regressor_smc(cfg, seed=None):
    """The ``skgibbs_smc`` row's regressor of ``cfg`` seeded ``seed``."""
    return sampler_estimator(GibbsMLPRegressor, "smc", cfg["skgibbs_smc"], seed)


def fit_regressor_smc(X, y, seed, cfg):
    reg = make_regressor_smc(cfg, seed)
    predict, messages = fit_gibbs(reg, X, y)
    return predict, {**smc_extras(reg), "warnings": messages}


def fit_regressor_vi(X, y, seed, cfg):
    reg = make_regressor_vi(cfg, seed)
    predict, messages = fit_gibbs(reg, X, y)
    extras = {"n_iter": int(reg.n_iter_), "stopped_early": bool(reg.vi_stopped_early_)}
    return predict, {**extras, "kl_weight": float(reg.kl_weight_), "warnings": messages}


def score_regression(pred, y):
    mean, lo, hi = pred["mean"], pred["lo"], pred["hi"]
    return {
        "ll": float(pred["ll"]) if "ll" in pred else float(np.mean(pred["loglik"])),
        "rmse": float(np.sqrt(np.mean((y - mean) ** 2))),
        "coverage": float(np.mean((lo <= y) & (y <= hi))),
        "width": float(np.mean(hi - lo)),
    }


# ---------------------------------------------------------------- rows on a few splits
def beside_hmc_rows(summary, runs, scores):
    """Rows of the SMC and stacking rows beside the default (HMC) on the splits they ran.

    ``summary``: ``{data set: {model: summary}}`` with the ``splits`` of the
    :data:`FEW_SPLITS` models; ``runs``: every stored fit; ``scores``:
    ``(key, digits)`` of the scores to show. Per data set: the splits, each
    score for HMC, SMC and stacking (mean ± s.e. on those splits), the mean
    fit times of HMC and SMC, the mean ratio SMC / HMC of the fits of the
    same split, the range of the SMC stages and the particle count.
    """
    rows = []
    for name, models in summary.items():
        few = [m for m in FEW_SPLITS if m in models]
        if "skgibbs" not in models or not few:
            continue
        splits = sorted({k for m in few for k in models[m]["splits"]})
        by = {(r["model"], r["split"]): r for r in runs if r["dataset"] == name}
        hmc, smc, stack = ([by[m, k] for k in splits if (m, k) in by] for m in ("skgibbs", *FEW_SPLITS))
        pairs = [(by["skgibbs", r["split"]], r) for r in smc if ("skgibbs", r["split"]) in by]
        ratio = f"{np.mean([s['fit_s'] / h['fit_s'] for h, s in pairs]):.2f}" if pairs else "—"
        stages = [r["n_stages"] for r in smc]
        cells = [
            fmt(mean_se([r[key] for r in fits]), digits) if fits else "—"
            for key, digits in scores
            for fits in (hmc, smc, stack)
        ]
        rows.append([
            name, str(len(hmc)), *cells, f"{np.mean([r['fit_s'] for r in hmc]):.1f}",
            f"{np.mean([r['fit_s'] for r in smc]):.1f}" if smc else "—", ratio,
            f"{min(stages)}-{max(stages)}" if stages else "—", str(smc[0]["n_particles"]) if smc else "—",
        ])  # fmt: skip
    return rows


def add_few_split_arguments(parser):
    """``--smc-params`` and ``--smc-splits``: the settings of the SMC row and the splits of both few-split rows."""
    parser.add_argument(
        "--smc-params",
        default="{}",
        help="keyword arguments of the skgibbs_smc row, SMC settings as sampler__<name>, JSON",
    )
    parser.add_argument(
        "--smc-splits",
        type=int,
        default=SMC_SPLITS,
        help=f"splits of the skgibbs_smc and skgibbs_stacking rows (default {SMC_SPLITS})",
    )
