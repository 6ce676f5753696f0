"""Pre-training: the stopping rule and the learning-rate schedules against a run to the full cap.

The estimators start their chains from Glorot draws trained by Adam on 80%
of the data, each keeping its best iterate on the other 20%
(:func:`skgibbs._pretrain.pretrain`). A schedule runs each of its rates
until the held-out loss levels off (no chain's best held-out loss fell by
``TOLERANCE`` = 1% over ``PATIENCE`` = 500 steps); the default,
``SCHEDULES = ((1e-3,), (1e-2, 1e-3))``, runs two schedules side by side
from the same starts and each chain keeps the better. This script measures,
per data set,

* ``lr=1e-3`` alone (the default before ``SCHEDULES``),
* ``lr=(1e-2, 1e-3)`` alone (1e-2 until the loss levels off, then 1e-3 from
  each chain's best iterate),
* the default ``SCHEDULES``,

each capped at 20,000 steps: the mean held-out loss of the four chains
(mean squared error on the standardized scale), the steps taken, whether the
loss levelled off before the cap and the seconds; and, as the reference of
how low the loss can go, Adam at 1e-3 and at 1e-2 each run to the full
20,000 steps with the stopping rule switched off, each chain keeping the
lower of its two best held-out losses. A last row runs the default schedules
under the estimators' default cap (``pretrain_iter=3000``): the
pre-training of a default fit from these starts.

Data: the README quick start (``make_gap_regression(n_samples=300,
noise=0.02, random_state=0)``, all 300 points, a 1-16-1 ReLU network) and
the training part of split 0 of diabetes, Boston, concrete, Auto and house
prices (``train_test_split(X, y, test_size=0.1, random_state=0)``, the data
of the ``uq`` benchmark; (100, 100) ReLU networks). X and y are
standardized; four chains start from the Glorot draws
``spec.init_params(torch.Generator().manual_seed(s), 1, torch.float32)``,
``s = 0..3``, as the estimators draw them; ``pretrain(..., seed=0)`` splits
the held-out part; float32, one torch thread.

Measured (``benchmarks/results/pretrain.rst``; 21 minutes on one core of a
shared machine, 18 of them in the reference runs): the slow rate alone wins
on the nearly linear data, diabetes and house prices (held-out losses 0.529
and 0.342, where 1e-2 then 1e-3 ends higher, at 0.555 and 0.379); the fast
schedule wins on the quick start (0.0100 against 0.0221, the latter only
after 9,980 steps), Boston (0.084 against 0.097) and concrete (0.068
against 0.084); on Auto the two tie (0.113). The default, each chain keeping
the better, ends within 2.3% of the reference everywhere: 2.1% and 2.3%
above it on the quick start and concrete, level with it on diabetes and
house prices, 0.3% and 0.4% below it on Boston and Auto (where refining at
1e-3 beats either rate held constant). It takes 1,020 to 2,150 steps and 5
to 20 seconds on the (100, 100) networks, about the cost of the two
schedules run one after the other, and 9,980 steps (8.5 s) on the quick
start, where the slow schedule keeps falling until then. So the estimators'
cap of 3,000 steps stops the quick start's pre-training before it levels
off (0.0103, 5.3% above the reference, the best loss still falling 5% over
the last 500 steps) and changes nothing on the other five. Running either
rate to 20,000 steps without stopping gains at most 2.3% on the stopping
rule: after the rule stops, the best held-out loss hardly falls.

Run ``python -m benchmarks run pretrain``; it writes
``benchmarks/results/pretrain.{json,rst}``. ``--cap`` and
``--reference-steps`` change the two step counts, ``--datasets`` the data
sets; ``--quick`` runs the quick start alone at a cap of 200 steps.
"""

import time
from contextlib import nullcontext
from unittest import mock

import numpy as np
import torch
from sklearn.model_selection import train_test_split

from skgibbs import GibbsMLPRegressor
from skgibbs import _pretrain
from skgibbs._pretrain import PATIENCE, SCHEDULES, TOLERANCE, pretrain
from skgibbs.datasets import make_gap_regression
from skgibbs.model import MLPSpec

from .. import Benchmark, Output
from ..common.data import Unavailable
from ..common.environment import load_after
from ..common.tables import names
from ..common.writer import Page
from .bench_uq import load_xy

NAME = "pretrain"
QUICKSTART = "quickstart"
DATASETS = (QUICKSTART, "diabetes", "boston", "concrete", "auto", "houseprices")
#: the learning-rate rules compared, by label: a rate, a schedule, the default pair of schedules
RULES = {"1e-3": 1e-3, "1e-2 then 1e-3": (1e-2, 1e-3), "default": SCHEDULES}
LABELS = {"1e-3": "lr=1e-3", "1e-2 then 1e-3": "lr=(1e-2, 1e-3)", "default": "default"}
#: the rates run to the full reference length with the stopping rule off
REFERENCE_RATES = (1e-3, 1e-2)
CAP, REFERENCE_STEPS = 20_000, 20_000
N_CHAINS, SEED = 4, 0
#: data sets, the rules' cap and the reference run's steps (None: the flags ``--datasets``, ``--cap`` and
#: ``--reference-steps``)
SIZES = {
    "full": {"datasets": None, "cap": None, "reference_steps": None},
    "quick": {"datasets": (QUICKSTART,), "cap": 200, "reference_steps": 200},
}
#: the estimators' default cap (``pretrain_iter``)
DEFAULT_CAP = GibbsMLPRegressor().pretrain_iter


def standardized(a):
    return (a - a.mean(0)) / a.std(0)


def problem(name):
    """``(spec, X, y)``: the network and the standardized training data of ``name``, as float32 tensors."""
    if name == QUICKSTART:
        X, y = make_gap_regression(n_samples=300, noise=0.02, random_state=0)
        hidden = (16,)
    else:
        X, y = load_xy(name)
        X, _, y, _ = train_test_split(X, y, test_size=0.1, random_state=0)
        hidden = (100, 100)
    X, y = standardized(np.asarray(X, float)), standardized(np.asarray(y, float).ravel())
    spec = MLPSpec(X.shape[1], hidden, "relu")
    return spec, torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y, dtype=torch.float32)


def starts(spec):
    """The Glorot draws of the four chains, one generator per chain as the estimators make them."""
    draws = [spec.init_params(torch.Generator().manual_seed(s), 1, torch.float32) for s in range(N_CHAINS)]
    return torch.cat(draws)


def timed_pretrain(spec, theta, X, y, n_iter, lr, stopping=True):
    """One pre-training: held-out losses, steps and seconds (``stopping=False``: all ``n_iter`` steps)."""
    # with a tolerance of -inf no fall counts as too small, so no schedule ever levels off
    rule = nullcontext() if stopping else mock.patch.object(_pretrain, "TOLERANCE", -np.inf)
    start = time.perf_counter()
    with rule:
        _, mean, info = pretrain(spec, theta.clone(), X, y, n_iter, SEED, lr=lr)
    seconds = time.perf_counter() - start
    return {
        "held_out": mean,
        "chains": list(info.held_out),
        "n_iter": info.n_iter,
        "converged": info.converged,
        "recent_fall": info.recent_fall,
        "seconds": seconds,
    }


def measure(name, cap, reference_steps):
    """The rules, the default fit's pre-training and the reference on data set ``name``."""
    spec, X, y = problem(name)
    theta = starts(spec)
    pretrain(spec, theta.clone(), X, y, 20, SEED)  # warm-up, untimed
    out = {"dataset": name, "n": int(X.shape[0]), "d": int(X.shape[1]), "n_params": spec.n_params}
    out["rules"] = {}
    for label, lr in RULES.items():
        out["rules"][label] = r = timed_pretrain(spec, theta, X, y, cap, lr)
        steps, seconds = r["n_iter"], r["seconds"]
        print(f"{name} {label}: held-out {r['held_out']:.4f}, {steps} steps, {seconds:.1f} s", flush=True)
    out["default_fit"] = timed_pretrain(spec, theta, X, y, min(DEFAULT_CAP, cap), SCHEDULES)
    out["reference"] = {}
    for rate in REFERENCE_RATES:
        r = timed_pretrain(spec, theta, X, y, reference_steps, rate, stopping=False)
        out["reference"][str(rate)] = r
        print(f"{name} reference {rate}: held-out {r['held_out']:.4f}, {r['seconds']:.1f} s", flush=True)
    per_chain = np.min([r["chains"] for r in out["reference"].values()], axis=0)
    out["reference_best"] = {"held_out": float(per_chain.mean()), "chains": per_chain.tolist()}
    return out


def add_arguments(parser):
    parser.add_argument("--datasets", nargs="+", default=[",".join(DATASETS)], help=", ".join(DATASETS))
    parser.add_argument("--cap", type=int, default=CAP, help=f"the cap of the stopping rules (default {CAP})")
    parser.add_argument(
        "--reference-steps",
        type=int,
        default=REFERENCE_STEPS,
        help=f"steps of the reference runs, without stopping (default {REFERENCE_STEPS})",
    )


def run(args):
    """Each rule, the default fit's pre-training and the reference on each data set."""
    torch.manual_seed(args.seed)
    datasets = args.size.datasets or names(args.datasets, DATASETS, "data set")
    cap, reference_steps = args.size.cap or args.cap, args.size.reference_steps or args.reference_steps
    start = time.perf_counter()
    rows, skipped = [], {}
    for name in datasets:
        try:
            rows.append(measure(name, cap, reference_steps))
        except Unavailable as why:
            print(f"skipping data set {name}: {why}")
            skipped[name] = str(why)
    result = {
        "cap": cap,
        "reference_steps": reference_steps,
        "default_cap": min(DEFAULT_CAP, cap),
        "patience": PATIENCE,
        "tolerance": TOLERANCE,
        "n_chains": N_CHAINS,
        "rows": rows,
        "skipped": skipped,
        "runtime_s": time.perf_counter() - start,
    }
    return {NAME: result}


def _excess(loss, reference):
    excess = 100 * (loss / reference - 1)
    return "0.0%" if abs(excess) < 0.05 else f"{excess:+.1f}%"


def report(results):
    """The default against the reference, then every rule."""
    result = results[NAME]
    cap, ref_steps, default_cap = result["cap"], result["reference_steps"], result["default_cap"]
    header = ["data set", "pre-training", "held-out loss", "vs reference", "steps", "levelled off", "seconds"]
    table, summary = [], []
    for row in result["rows"]:
        ref = row["reference_best"]["held_out"]
        fit = row["default_fit"]
        lines = [(f"{LABELS.get(k, k)}, cap {cap}", r, r["converged"]) for k, r in row["rules"].items()]
        lines.append((f"default, cap {default_cap} (a default fit)", fit, fit["converged"]))
        lines += [(f"reference: lr={k}, {ref_steps} steps", r, None) for k, r in row["reference"].items()]
        label = f"{row['dataset']} (n = {row['n']}, {row['n_params']} weights)"
        for title, r, converged in lines:
            converged = "(off)" if converged is None else "yes" if converged else "no"
            loss, seconds = r["held_out"], f"{r['seconds']:.1f}"
            table.append([label, title, f"{loss:.4f}", _excess(loss, ref), r["n_iter"], converged, seconds])
            label = ""
        table.append(["", "reference: the lower of the two per chain", f"{ref:.4f}", "", "", "", ""])
        d = row["rules"]["default"]
        summary.append(
            [
                row["dataset"],
                f"{ref:.4f}",
                f"{d['held_out']:.4f} ({_excess(d['held_out'], ref)})",
                d["n_iter"],
                f"{d['seconds']:.1f}",
                f"{fit['held_out']:.4f} ({_excess(fit['held_out'], ref)})",
            ]
        )
    summary_header = [
        "data set",
        f"reference ({ref_steps} steps)",
        f"default, cap {cap}",
        "its steps",
        "its seconds",
        f"default, cap {default_cap}",
    ]
    skipped = "; ".join(f"{k}: {v}" for k, v in result.get("skipped", {}).items())
    skipped = f" Skipped: {skipped}." if skipped else ""
    tolerance, patience = 100 * result["tolerance"], result["patience"]
    load = load_after(result, lambda r: r["load_average"])
    notes = [
        f"Held-out loss: the mean over {result['n_chains']} chains of each chain's best mean squared error "
        "on the held-out 20% (standardized y), as pretrain returns it. The rules stop once no chain's best "
        f"held-out loss fell by {tolerance:.0f}% over {patience} steps at the last rate of every schedule, "
        "or at the cap; 'default' runs lr=1e-3 and lr=(1e-2, 1e-3) side by side, each chain keeping the "
        f"better. The reference runs Adam at each rate for {ref_steps} steps with the stopping rule off; "
        "its last row keeps, per chain, the lower of the two. 'vs reference': the held-out loss over the "
        "reference's, minus 1. Steps: Adam steps taken (full batch: every training part here is under 1024 "
        f"rows); seconds: wall time on one torch thread, float32, load average {load:.1f} at the end (a "
        f"shared machine). Runtime {result['runtime_s']:.0f} s.{skipped}",
    ]
    tables = [
        ("The default against the reference", summary_header, summary),
        ("Every rule", header, table),
    ]
    return [Page(NAME, "Pre-training: stopping rule and learning-rate schedules", tables, notes)]


TITLE = "Pre-training: the stopping rule and learning-rate schedules against a run to the cap"

BENCHMARK = Benchmark(
    name=NAME,
    kind="performance",
    title=TITLE,
    outputs=(Output(NAME, TITLE),),
    run=run,
    report=report,
    add_arguments=add_arguments,
    sizes=SIZES,
)
