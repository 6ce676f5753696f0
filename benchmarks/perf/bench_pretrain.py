"""Pre-training: the stopping rule and the learning-rate schedules against a run to the full cap.

The chains start from Glorot draws trained by Adam on 80% of the data, each keeping its best iterate on the
other 20% (:func:`skgibbs._pretrain.pretrain`), each rate until the held-out loss levels off. Per data set:
``lr=1e-3``, ``lr=(1e-2, 1e-3)`` and the default ``SCHEDULES`` (both side by side, each chain keeping the
better), capped at 20,000 steps, and the default under the estimators' cap; against a reference of Adam at
1e-3 and at 1e-2 for 20,000 steps without stopping, each chain keeping the lower of its two best losses.
Data: the README quick start (``make_gap_regression(n_samples=300, noise=0.02, random_state=0)``, a 1-16-1
network) and split 0 of the ``uq`` benchmark's diabetes, Boston, concrete, Auto and house prices
(``train_test_split(X, y, test_size=0.1, random_state=0)``, (100, 100) networks), standardized; chain ``s``
starts from ``spec.init_params(torch.Generator().manual_seed(s), 1, torch.float32)``, as in the estimators.

Run ``python -m benchmarks run pretrain``.
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


def _standardized(a):
    a = np.asarray(a, float)
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
    X, y = _standardized(X), _standardized(np.ravel(y))
    spec = MLPSpec(X.shape[1], hidden, "relu")
    return spec, torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y, dtype=torch.float32)


def timed_pretrain(spec, theta, X, y, n_iter, lr, stopping=True):
    """One pre-training: held-out losses, steps and seconds (``stopping=False``: all ``n_iter`` steps)."""
    # with a tolerance of -inf no fall counts as too small, so no schedule ever levels off
    rule = nullcontext() if stopping else mock.patch.object(_pretrain, "TOLERANCE", -np.inf)
    start = time.perf_counter()
    with rule:
        _, mean, info = pretrain(spec, theta.clone(), X, y, n_iter, SEED, lr=lr)
    seconds = time.perf_counter() - start
    print(f"lr={lr}: held-out {mean:.4f} after {info.n_iter} of {n_iter} steps, {seconds:.1f} s", flush=True)
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
    # the Glorot draws of the four chains, one generator per chain as the estimators make them
    draws = [spec.init_params(torch.Generator().manual_seed(s), 1, torch.float32) for s in range(N_CHAINS)]
    theta = torch.cat(draws)
    pretrain(spec, theta.clone(), X, y, 20, SEED)  # warm-up, untimed
    out = {"dataset": name, "n": int(X.shape[0]), "d": int(X.shape[1]), "n_params": spec.n_params}
    out["rules"] = {label: timed_pretrain(spec, theta, X, y, cap, lr) for label, lr in RULES.items()}
    out["default_fit"] = timed_pretrain(spec, theta, X, y, min(DEFAULT_CAP, cap), SCHEDULES)
    out["reference"] = {
        str(rate): timed_pretrain(spec, theta, X, y, reference_steps, rate, stopping=False)
        for rate in REFERENCE_RATES
    }
    per_chain = np.min([r["chains"] for r in out["reference"].values()], axis=0)
    out["reference_best"] = {"held_out": float(per_chain.mean()), "chains": per_chain.tolist()}
    return out


def add_arguments(parser):
    parser.add_argument("--datasets", nargs="+", default=[",".join(DATASETS)], help=", ".join(DATASETS))
    parser.add_argument("--cap", type=int, default=CAP, help=f"the cap of the stopping rules (default {CAP})")
    help = f"steps of the reference runs, without stopping (default {REFERENCE_STEPS})"
    parser.add_argument("--reference-steps", type=int, default=REFERENCE_STEPS, help=help)


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
    result = {"cap": cap, "reference_steps": reference_steps, "default_cap": min(DEFAULT_CAP, cap)}
    result.update(patience=PATIENCE, tolerance=TOLERANCE, n_chains=N_CHAINS, rows=rows, skipped=skipped)
    return {NAME: {**result, "runtime_s": time.perf_counter() - start}}


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
        loss = f"{d['held_out']:.4f} ({_excess(d['held_out'], ref)})"
        fit_loss = f"{fit['held_out']:.4f} ({_excess(fit['held_out'], ref)})"
        summary.append([row["dataset"], f"{ref:.4f}", loss, d["n_iter"], f"{d['seconds']:.1f}", fit_loss])
    summary_header = ["data set", f"reference ({ref_steps} steps)", f"default, cap {cap}", "its steps",
                      "its seconds", f"default, cap {default_cap}"]  # fmt: skip
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
    tables = [("The default against the reference", summary_header, summary), ("Every rule", header, table)]
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
