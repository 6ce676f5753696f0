"""Gradient rates of the default network against the machine's SGEMM rate, on one and two threads.

A sampler step costs at least one forward and backward pass of the network on its batch, a handful of
matrix products whose best rate on a CPU is the machine's single-precision matrix-multiply rate. Timed in
float32, in interleaved blocks that each set their own thread count, as medians
(``benchmarks/common/timing.py``):

1. SGEMM: GFLOP/s of ``torch.mm`` of two 2048 x 2048 matrices (``2 n^3`` flops), one thread and all;
2. ``MLPPotential.loss_sum_and_grad`` of the ``GibbsMLPRegressor()`` network beyond 1000 rows
   (``20 -> 100 -> 100 -> 1`` ReLU) as the samplers call it: the full data at 10^3, 10^4 and 10^5 rows
   and minibatches of 128, 1024 and 4096 rows gathered by index from 10^5; one chain and four batched;
   one and two threads; beside it the floor, a plain ``nn.Sequential`` with torch autograd on the same rows;
3. the crossover of the thread rule: two threads over one for a minibatch gradient on a grid of rows,
   widths and chains, against the work (rows x weights x chains), to check ``skgibbs._threads.THREAD_WORK``.

Flops of one forward+backward are counted as ``6 * rows * weights`` per network (2 forward, 4 backward),
which leaves out biases, activations and the loss. ``python -m benchmarks run gradient_rate`` writes
``benchmarks/results/gradient_rate.{json,rst}``.
"""

import time

import numpy as np
import torch

from skgibbs import GibbsMLPRegressor
from skgibbs.model import MLPSpec
from skgibbs.plan import hidden_layers
from skgibbs.potential import Batch, MLPPotential

from .. import Benchmark, Output
from ..common.environment import cpu_count, loads, machine_info
from ..common.timing import Variant, measure
from ..common.writer import Page

NAME = "gradient_rate"
N_FEATURES = 20
CHAINS = (1, 4)


def _threads_of():
    """The thread counts compared: one and two (one only on a one-CPU machine)."""
    return (1, 2) if cpu_count() >= 2 else (1,)


def _with_threads(run, threads):
    def timed(n_steps):
        torch.set_num_threads(threads)
        run(n_steps)

    return timed


def _thread_variants(run, threads, chains=1, key="t{}", label="{} thread(s)"):
    return [Variant(key.format(t), label.format(t), _with_threads(run, t), chains) for t in threads]


def sgemm(opts):
    """GFLOP/s of a float32 ``torch.mm`` of two square matrices, one thread and all threads."""
    n = opts.sgemm_size
    gen = torch.Generator().manual_seed(0)
    a, b, out = torch.rand(n, n, generator=gen), torch.rand(n, n, generator=gen), torch.empty(n, n)

    def run(n_steps):
        for _ in range(n_steps):
            torch.mm(a, b, out=out)

    counts = sorted({1, *_threads_of(), cpu_count()})
    res = measure(_thread_variants(run, counts), opts.repeats, opts.block_s)
    gflops = {str(t): 2.0 * n**3 * res[f"t{t}"]["median"] / 1e9 for t in counts}
    print(f"SGEMM {n} x {n}: " + ", ".join(f"{t} thread(s) {r:.1f} GFLOP/s" for t, r in gflops.items()))
    return {"size": n, "gflops": gflops, "timing": res}


def _data(n, d, seed=0):
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=gen)
    return X, torch.sin(X[:, 0]) + 0.1 * torch.randn(n, generator=gen)


def _batches(n, rows, K, count, seed=0):
    """``count`` index batches of ``rows`` distinct examples per chain (no padding: ``mask=None``)."""
    gen = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(count):
        idx = torch.stack([torch.randperm(n, generator=gen)[:rows] for _ in range(K)])
        out.append(Batch(idx, None, torch.full((K,), rows)))
    return out


def skgibbs_gradient(pot, spec, K, batches):
    """``run(n)``: n calls of ``MLPPotential.loss_sum_and_grad`` of K chains, cycling over ``batches``."""
    theta = spec.init_params(torch.Generator().manual_seed(0), K, torch.float32)

    def run(n_steps):
        for i in range(n_steps):
            pot.loss_sum_and_grad(theta, batches[i % len(batches)])

    return run


def autograd_floor(spec, X, y, batches):
    """``run(n)``: forward and backward of ``sum (y - net(x))^2`` of one ``nn.Sequential``, autograd."""
    layers = []
    for n_in, n_out in spec.shapes:
        layers += [torch.nn.Linear(n_in, n_out), torch.nn.ReLU()]
    net = torch.nn.Sequential(*layers[:-1])
    params = list(net.parameters())
    rows = [(X, y) if b.idx is None else (X[b.idx[0]], y[b.idx[0]]) for b in batches]

    def run(n_steps):
        for i in range(n_steps):
            Xb, yb = rows[i % len(rows)]
            resid = yb - net(Xb)[:, 0]
            torch.autograd.grad((resid * resid).sum(), params)

    return run


def gradient_variants(spec, X, y, rows, full, threads):
    """The skgibbs gradient (1 and 4 chains) and the floor on one setting, at each thread count."""
    pot, out = MLPPotential(spec, X, y), []
    for K in CHAINS:
        run = skgibbs_gradient(pot, spec, K, [Batch()] if full else _batches(X.shape[0], rows, K, 4))
        out += _thread_variants(
            run, threads, K, f"skgibbs_{K}_{{}}", f"skgibbs, {K} chain(s), {{}} thread(s)"
        )
    floor = autograd_floor(spec, X, y, [Batch()] if full else _batches(X.shape[0], rows, 1, 4, seed=1))
    return out + _thread_variants(floor, threads, 1, "floor_{}", "torch autograd nn.Sequential, {} thread(s)")


def gradient_rates(opts):
    """Every full-data and minibatch setting, each timed as one interleaved comparison."""
    est = GibbsMLPRegressor()  # its network on N_FEATURES inputs beyond 1000 rows
    spec = MLPSpec(N_FEATURES, hidden_layers(est.hidden_layer_sizes, 10**3 + 1), est.activation)
    cells = []
    X_big, y_big = _data(max(opts.full_rows + (opts.pool_rows,)), N_FEATURES)
    settings = [("full", n) for n in opts.full_rows] + [("minibatch", m) for m in opts.batch_rows]
    for mode, rows in settings:
        n = rows if mode == "full" else opts.pool_rows
        X, y = X_big[:n].contiguous(), y_big[:n].contiguous()
        variants = gradient_variants(spec, X, y, rows, mode == "full", _threads_of())
        res = measure(variants, opts.repeats, opts.block_s)
        for key, r in res.items():
            kind, *rest = key.split("_")
            K = int(rest[0]) if kind == "skgibbs" else 1
            cells.append(
                {
                    "mode": mode,
                    "rows": rows,
                    "implementation": kind,
                    "chains": K,
                    "threads": int(rest[-1]),
                    "gradients_per_s": r["median"] / K,
                    "gflops": 6.0 * rows * spec.n_params * r["median"] / 1e9,  # flops of all K chains
                    "cpu_per_wall": r["cpu_per_wall"],
                    "timing": r,
                }
            )
        rates = ", ".join(f"{k} {6e-9 * rows * spec.n_params * r['median']:.1f}" for k, r in res.items())
        print(f"{mode} rows={rows}: {rates} GFLOP/s")
    return {
        "n_features": N_FEATURES,
        "hidden_layer_sizes": list(spec.hidden_layer_sizes),
        "n_params": spec.n_params,
        "cells": cells,
    }


def crossover(opts):
    """Two threads over one for a minibatch gradient, on a grid of rows, hidden widths and chains."""
    if len(_threads_of()) < 2:
        return {"cells": [], "threshold": None}
    cells = []
    X, y = _data(opts.pool_rows, N_FEATURES, seed=2)
    for width, K in opts.grid_nets:
        spec = MLPSpec(N_FEATURES, (width, width), "relu")
        pot = MLPPotential(spec, X, y)
        for rows in opts.grid_rows:
            run = skgibbs_gradient(pot, spec, K, _batches(opts.pool_rows, rows, K, 4, seed=3))
            res = measure(_thread_variants(run, (1, 2), K), opts.grid_repeats, opts.block_s / 2)
            # the best block of each: the closest to an idle machine when other processes share the CPUs
            best = max(res["t2"]["rates"]) / max(res["t1"]["rates"])
            cell = {
                "width": width,
                "chains": K,
                "rows": rows,
                "Q": spec.n_params,
                "work": rows * spec.n_params * K,
                "ratio": res["t2"]["median"] / res["t1"]["median"],
                "best_ratio": best,
                "t1": res["t1"]["median"],
                "t2": res["t2"]["median"],
                "load": res["t2"]["load_average"],
            }
            cells.append(cell)
            print(
                f"  width={width:4d} chains={K} rows={rows:6d} work={cell['work']:.1e}  2 threads / 1 thread"
                f" = {cell['ratio']:.2f} (best blocks {best:.2f})"
            )
    return {"cells": cells, "threshold": _crossing(cells)}


def _crossing(cells, key="best_ratio"):
    """Where two threads start to win, on the best blocks' ratio (the median block measures the load).

    ``fitted_crossing``: where the least-squares line of the log gain on the log work crosses zero;
    ``wins_from``: the smallest work from which two threads won in every cell of at least that work.
    """
    cells = sorted(cells, key=lambda c: c["work"])
    slope, icept = np.polyfit(np.log([c["work"] for c in cells]), np.log([c[key] for c in cells]), 1)
    wins_from = next((c["work"] for i, c in enumerate(cells) if all(d[key] > 1 for d in cells[i:])), None)
    losses = [c["work"] for c in cells if c[key] <= 1]
    return {
        "fitted_crossing": float(np.exp(-icept / slope)) if slope > 0 else None,
        "slope": float(slope),
        "wins_from": wins_from,
        "largest_work_two_threads_lose": max(losses) if losses else None,
    }


#: block lengths, repeats, the SGEMM size, the rows of each setting and the crossover grid
SIZES = {
    "full": {
        "repeats": 5, "block_s": 0.3, "sgemm_size": 2048,
        "full_rows": (1000, 10_000, 100_000), "batch_rows": (128, 1024, 4096), "pool_rows": 100_000,
        # (hidden width, chains batched)
        "grid_nets": ((32, 1), (100, 1), (300, 1), (100, 4)), "grid_rows": (64, 256, 1024, 4096, 16384),
        "grid_repeats": 7,
    },
    "quick": {
        "repeats": 1, "block_s": 0.01, "sgemm_size": 256,
        "full_rows": (200,), "batch_rows": (64,), "pool_rows": 1000,
        "grid_nets": ((16, 1),), "grid_rows": (64, 256), "grid_repeats": 1,
    },
}  # fmt: skip


def run(opts):
    """SGEMM, the gradient rates and the thread crossover, timed; the raw block rates are kept."""
    vars(opts).update(opts.size)
    before = torch.get_num_threads()
    start = time.perf_counter()
    results = {
        "machine": machine_info(),
        # the settings of the run; where it was written, the seed and quick are the harness's to record
        "options": {k: v for k, v in vars(opts).items() if k not in ("out", "quick", "seed", "size")},
    }
    try:
        results["sgemm"] = sgemm(opts)
        results["gradients"] = gradient_rates(opts)
        results["crossover"] = crossover(opts)
    finally:
        torch.set_num_threads(before)
    results["seconds"] = time.perf_counter() - start
    return {NAME: results}


def _gradient_table(res):
    sg, grads = res["sgemm"]["gflops"], res["gradients"]
    Q = grads["n_params"]
    names = {"skgibbs": "skgibbs loss_sum_and_grad", "floor": "floor: nn.Sequential autograd"}

    def setting(c):
        return c["mode"], c["rows"], c["threads"]

    def order(c):
        return (
            c["mode"] != "full",
            c["rows"],
            list(names).index(c["implementation"]),
            c["chains"],
            c["threads"],
        )

    floor = {setting(c): c["gflops"] for c in grads["cells"] if c["implementation"] == "floor"}
    rows = []
    for c in sorted(grads["cells"], key=order):
        rate = c["gradients_per_s"]
        rows.append(
            [
                "full data" if c["mode"] == "full" else "minibatch",
                f"{c['rows']:,}",
                names[c["implementation"]],
                c["chains"],
                c["threads"],
                f"{rate:,.1f}" if rate < 1000 else f"{rate:,.0f}",
                f"{c['gflops']:.1f}",
                f"{6.0 * c['rows'] * Q * max(c['timing']['rates']) / 1e9:.1f}",
                f"{c['gflops'] / sg[str(c['threads'])]:.2f}x",
                f"{c['gflops'] / floor[setting(c)]:.2f}x",
            ]
        )
    header = ["data", "rows", "implementation", "chains", "threads", "gradients/s per chain", "GFLOP/s"]
    header += ["GFLOP/s, best block", "vs SGEMM, same threads", "vs floor, same threads"]
    sizes = " -> ".join(str(h) for h in grads["hidden_layer_sizes"])
    title = f"Forward+backward of the default network ({N_FEATURES} -> {sizes} -> 1 ReLU, Q = {Q:,})"
    return title, header, rows


def _crossover_table(cross):
    header = ["hidden widths", "chains", "Q", "rows", "work", "2 threads / 1 thread", "best blocks", "load"]
    rows = [
        [
            f"({c['width']}, {c['width']})",
            c.get("chains", 1),
            f"{c['Q']:,}",
            f"{c['rows']:,}",
            f"{c['work']:.1e}",
            f"{c['ratio']:.2f}x",
            f"{c['best_ratio']:.2f}x",
            f"{c['load']:.1f}" if "load" in c else "",
        ]
        for c in cross["cells"]
    ]
    return "Two threads over one: minibatch gradient (work = rows x weights x chains)", header, rows


def _notes(res):
    m, opts = res["machine"], res["options"]
    before, after = loads(res) or (res["load_before"], res["load_after"])  # stored by older runs themselves
    notes = [
        f"float32, torch {m['torch']}, {m['nproc']} CPUs ({m['cpu_model']}); load average {before:.1f} "
        f"before and {after:.1f} after the run. Each rate is the median of {opts['repeats']} timed blocks "
        "interleaved with the other rows of its setting (the best block beside it); every block sets its own "
        "thread count. On a machine shared with other processes single rates are noisy and a busy second "
        "core makes two threads look far worse than they are (OpenMP threads wait for each other); ratios "
        "within a setting are more reliable.",
        "GFLOP/s counts 6 x rows x weights flops per network and gradient (2 forward, 4 backward per weight "
        "and row): an approximation that leaves out biases, activations and the loss. Four chains count four "
        "times the flops of one. The SGEMM rate is the ceiling of a CPU gradient; a gradient on few rows "
        "stays below it because its matrix products are small and its fixed costs (gather, allocation, "
        "Python) weigh more.",
        "The skgibbs rows call MLPPotential.loss_sum_and_grad as the samplers do (minibatches gathered by "
        "index from 100,000 rows; one chain: plain 2-D matrix products, four chains: batched ones). The "
        "floor is one nn.Sequential network of the same shape with torch autograd on the same rows "
        "(pre-gathered); the last column compares per-chain gradient rates.",
    ]
    th = (res.get("crossover") or {}).get("threshold")
    if th:
        fitted, wins, lose = th["fitted_crossing"], th["wins_from"], th["largest_work_two_threads_lose"]
        where = f"near work = {fitted:,.0f}" if fitted else "nowhere"
        won = f"won in every cell from work = {wins:,} on" if wins else "did not win in the largest cells"
        lost = f"; the largest work where they lost was {lose:,}" if lose else ""
        notes.append(
            "Thread crossover (best blocks): the least-squares line of the log gain of two threads on the "
            f"log work crosses zero {where}; two threads {won}{lost}. The last column is the 1-minute load "
            "average after each cell: above about 1 on two CPUs another process holds a core, and every "
            "parallel region of two threads waits for it. The estimators use the process's threads for a "
            "gradient of at least THREAD_WORK rows x weights x chains in one batch (skgibbs/_threads.py) and "
            "one thread below it; where two threads start to win on a machine with free cores is what this "
            "table measures there."
        )
    return notes


def report(results):
    """The SGEMM rates, the gradient table and the crossover table."""
    res = results[NAME]
    sg = res["sgemm"]
    best = {t: 2.0 * sg["size"] ** 3 * max(sg["timing"][f"t{t}"]["rates"]) / 1e9 for t in sg["gflops"]}
    rows = [[t, f"{g:.1f}", f"{best[t]:.1f}"] for t, g in sg["gflops"].items()]
    title = f"SGEMM rate (float32 torch.mm, {sg['size']} x {sg['size']})"
    tables = [(title, ["threads", "GFLOP/s", "GFLOP/s, best block"], rows), _gradient_table(res)]
    if res["crossover"]["cells"]:
        tables.append(_crossover_table(res["crossover"]))
    return [Page(NAME, "Gradient rates against the SGEMM rate", tables, _notes(res))]


BENCHMARK = Benchmark(
    name=NAME,
    kind="performance",
    title="Gradient rates against the SGEMM rate, one and two threads",
    outputs=(Output(NAME, "Gradient rates against the SGEMM rate, one and two threads"),),
    run=run,
    report=report,
    sizes=SIZES,
)
