"""Memory and time of the fitted summaries and of predictions at 10^4 to 10^6 rows.

After sampling, ``fit`` summarises the draws on the training inputs from the function values of every draw
at every row, an ``(S, n)`` array that the estimators evaluate in chunks of rows. Measured through the public
API: ``GibbsMLPRegressor`` with a 10-32-1 ReLU network, ``sampler=SGLD(step_size=0.1 / n)`` on batches of
about 1000 rows, no pre-training, no burn-in, four chains of 100 draws, fitted on ``n`` rows of 10 standard
normal inputs (sampling is cheap: the fit's time and memory are the summaries'), then ``predict(X,
return_std=True)``; each size in a fresh process, its memory the peak resident set size during the call
minus that just before it. ``--baseline DIR`` measures beside it the skgibbs package in ``DIR`` (e.g.
``git archive <commit> skgibbs | tar -x -C DIR``) where its memory, projected linearly in ``n``, fits in
60% of the memory available.

Run ``python -m benchmarks run summary_memory``.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from .. import Benchmark, Output
from ..common.environment import loads
from ..common.writer import Page

NAME = "summary_memory"
#: training rows and the draws of each size
SIZES = {
    "full": {"rows": (10_000, 100_000, 1_000_000), "n_samples": 100, "n_chains": 4},
    "quick": {"rows": (2000,), "n_samples": 10, "n_chains": 2},
}
N_FEATURES, HIDDEN, BATCH = 10, (32,), 1000

# The measurement, in a fresh interpreter: only public skgibbs names.
_CHILD = r"""
import json, os, resource, sys, threading, time, warnings
args = json.loads(sys.argv[1])
if args["path"]:  # before the working directory, which python -c puts first
    sys.path.insert(0, args["path"])
import numpy as np
import torch
import skgibbs
from skgibbs import GibbsMLPRegressor
from skgibbs.samplers import SGLD

torch.set_num_threads(1)
PAGE = os.sysconf("SC_PAGE_SIZE")

def rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * PAGE

class Peak:  # the largest resident size while the block runs, polled
    def __enter__(self):
        self.start = self.peak = rss()
        self.running = True
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()
        self.t0 = time.perf_counter()
        return self
    def _poll(self):
        while self.running:
            self.peak = max(self.peak, rss())
            time.sleep(0.002)
    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.t0
        self.running = False
        self.thread.join()
        self.peak = max(self.peak, rss())
        self.mb = (self.peak - self.start) / 2**20

n, d = args["n"], args["n_features"]
rng = np.random.default_rng(0)
X = rng.normal(size=(n, d))
y = np.sin(X[:, 0]) + X[:, 1] + 0.3 * rng.normal(size=n)
est = GibbsMLPRegressor(
    hidden_layer_sizes=tuple(args["hidden"]), sampler=SGLD(step_size=0.1 / n),
    rho=min(1.0, args["batch"] / n), temperature=1.0, n_samples=args["n_samples"], burn_in=0, thin=1,
    n_chains=args["n_chains"], pretrain_iter=0, random_state=0,
)
maxrss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    with Peak() as fit:
        est.fit(X, y)
maxrss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with Peak() as pred:
    mean, std = est.predict(X, return_std=True)
print(json.dumps({
    "n": n, "draws": int(est.samples_.shape[0] * est.samples_.shape[1]),
    "fit_s": fit.seconds, "fit_mb": fit.mb, "fit_maxrss_mb": (maxrss1 - maxrss0) / 1024,
    "predict_s": pred.seconds, "predict_mb": pred.mb, "rss_before_fit_mb": fit.start / 2**20,
    "ess": float(est.ess_), "generalization_loss": float(est.generalization_loss_),
    "skgibbs": os.path.dirname(skgibbs.__file__),
}))
"""


def add_arguments(parser):
    help = "a directory holding another skgibbs package (e.g. an earlier commit), measured beside"
    parser.add_argument("--baseline", help=help)


def _available_mb():
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("inf")


def _measure(n, settings, path=None):
    """One size in a fresh interpreter; ``path`` first on its ``sys.path`` (None: the installed skgibbs)."""
    # glibc: large blocks always mapped and unmapped, so that the resident size follows the live memory
    # (its adaptive threshold would keep blocks freed by the fit resident for predict to reuse)
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "65536"}
    path = None if path is None else str(Path(path).resolve())
    child = [sys.executable, "-c", _CHILD, json.dumps({**settings, "n": n, "path": path})]
    out = subprocess.run(child, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"the measurement at n = {n} failed:\n{out.stderr[-3000:]}")
    row = json.loads(out.stdout.strip().splitlines()[-1])
    source = row.pop("skgibbs")
    if path is not None and not source.startswith(path):
        raise RuntimeError(f"the measurement imported skgibbs from {source}, not from {path}")
    shown = {k: row[k] for k in ("n", "fit_s", "fit_mb", "predict_s", "predict_mb")}
    print("installed" if path is None else "baseline", shown, flush=True)
    return row


def run(args):
    """Every size with the installed skgibbs, each followed by ``--baseline`` where it fits in memory."""
    settings = {"n_features": N_FEATURES, "hidden": list(HIDDEN), "batch": BATCH}
    settings.update(n_samples=args.size.n_samples, n_chains=args.size.n_chains)
    result = {"settings": settings, "rows": []}
    if args.baseline:
        result["baseline"], result["baseline_skipped"] = [], []
    for n in args.size.rows:
        result["rows"].append(_measure(n, settings))
        if not args.baseline:
            continue
        base = result["baseline"]
        projected = base[0]["fit_mb"] * n / base[0]["n"] if base else 0.0
        if projected > 0.6 * _available_mb():  # linear in n from the smallest size
            result["baseline_skipped"].append({"n": n, "projected_mb": projected})
            continue
        base.append(_measure(n, settings, args.baseline))
    return {NAME: result}


def _cells(r):
    return [f"{r['fit_mb']:,.0f}", f"{r['fit_s']:.1f}", f"{r['predict_mb']:,.0f}", f"{r['predict_s']:.1f}"]


def report(results):
    """The memory and time table, with the baseline beside where it was measured."""
    result = results[NAME]
    base = {r["n"]: r for r in result.get("baseline", [])}
    skipped = {r["n"]: r for r in result.get("baseline_skipped", [])}
    compared = bool(base or skipped)
    header = ["n", "fit: MB", "fit: s", "predict: MB", "predict: s"]
    if compared:
        header += ["before: fit MB", "before: fit s", "before: predict MB", "before: predict s"]
    rows = []
    for r in result["rows"]:
        row = [f"{r['n']:,}", *_cells(r)]
        if r["n"] in base:
            row += _cells(base[r["n"]])
        elif r["n"] in skipped:
            row += [f"not run (about {skipped[r['n']]['projected_mb']:,.0f} projected)", "", "", ""]
        elif compared:
            row += ["", "", "", ""]
        rows.append(row)
    s = result["settings"]
    S = result["rows"][0]["draws"]
    load = ", ".join(f"{x:.1f}" for x in loads(result) or result["load_average"])
    notes = [
        f"GibbsMLPRegressor, {s['n_features']}-{'-'.join(map(str, s['hidden']))}-1 ReLU network, "
        f"SGLD with step size 0.1 / n on batches of about {s['batch']} rows, no pre-training, no burn-in, "
        f"{s['n_chains']} chains of {s['n_samples']} draws (S = {S}); one torch thread, each size in a "
        f"fresh process, load average {load} (at the start and at the end of the run). MB (2^20 bytes): "
        "peak resident memory during the call minus the resident memory just before it (polled every "
        "2 ms); the fit's includes its copies of X (float64 and float32), about 12 n d bytes. The machine "
        "is shared, so the times are noisy; each size's two measurements ran one after the other. One "
        "(S, n) float64 array is 8 S n bytes: "
        f"{8 * S * 1e5 / 2**20:,.0f} MB at n = 100,000.",
    ]
    if compared:
        loss = {r["n"]: r["generalization_loss"] for r in result["rows"]}
        gap = max((abs(b["generalization_loss"] / loss[n] - 1) for n, b in base.items()), default=np.nan)
        notes.append(
            "'before': the same measurement with the skgibbs given by --baseline, which built the (S, n) "
            "arrays of the whole data at once; sizes whose projected memory exceeded 60% of the available "
            "memory were not run. The fitted generalization loss (generalization_loss) of both differ by at most "
            f"{gap:.1e} (relative)."
        )
    tables = [("Fit and predict at large n", header, rows)]
    return [Page(NAME, "Memory of the fitted summaries", tables, notes)]


BENCHMARK = Benchmark(
    name=NAME,
    kind="performance",
    title="Memory and time of the fitted summaries and predictions at 10^4 to 10^6 rows",
    outputs=(Output(NAME, "Memory of the fitted summaries"),),
    run=run,
    report=report,
    add_arguments=add_arguments,
    sizes=SIZES,
)
