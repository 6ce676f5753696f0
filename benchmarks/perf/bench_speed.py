"""Steps per second of the skgibbs MALA/csMALA kernel against its floor and peers, one CPU thread, float32.

1. paper 000's network (1 -> 100 -> 100 -> 1 ReLU, Q = 10401, n = 10000) at rho = 1 (MALA) and rho = 0.1
   (csMALA): ``mala.step`` with fixed constants and ``run_chains`` (burn_in=0), one chain and ten (batched
   and one after the other), against the floor (one forward and backward pass on the batch with torch
   autograd), a naive ``nn.Sequential`` loop and, with JAX (the ``bench`` extra; ``--no-jax`` leaves it out),
   BlackJAX's ``mala`` and a jitted JAX csMALA step;
2. paper 001's small network (8 -> 8 -> 8 -> 8 -> 1 ReLU, n = 750, rho = 1): ten chains batched against
   ten one after the other;
3. the crossover of that choice: per-chain throughput of four chains batched over four sequential on a
   grid of batch and network sizes, to check ``skgibbs.problem.VECTORIZE_WORK``;
4. where the time of one csMALA step at rho = 0.1 goes: the step beside its parts called alone through
   public names (batch draw, proposal noise, gradient on a batch, prior), and a torch.profiler breakdown.

Every comparison is timed in interleaved blocks and reported as the median (``benchmarks/common/timing.py``);
``python -m benchmarks run speed`` writes ``benchmarks/results/speed.{json,rst}``, the raw block rates too.
"""

import datetime
import itertools
import math
import time
from functools import partial

import numpy as np
import torch

from skgibbs.datasets import make_gap_regression
from skgibbs.model import MLPSpec
from skgibbs.potential import MLPPotential
from skgibbs.priors import Prior
from skgibbs.problem import VECTORIZE_WORK
from skgibbs.samplers import CSMALA, MALA, Target, run_chains
from skgibbs.samplers.langevin import mala

from .. import Benchmark, Output
from ..common.environment import machine_info
from ..common.peers import autograd_floor, naive_module_mala
from ..common.speed_report import intro, notes, tables, to_rst
from ..common.timing import Variant, measure
from ..common.writer import Page

NAME = "speed"
TEMPERATURE = 1.0  # lambda = n / temperature on the standardized scale
STEP_SIZE = 1e-5  # Langevin h of U = lambda R; proposal std sqrt(2h)
N_CHAINS = 10


class Problem:
    """Data, network, prior and the fixed kernel constants of one benchmark setting."""

    def __init__(self, X, y, hidden, rho, seed=0):
        X = (X - X.mean(0)) / X.std(0)
        y = (y - y.mean()) / y.std()
        self.X = torch.as_tensor(X, dtype=torch.float32)
        self.y = torch.as_tensor(y, dtype=torch.float32)
        self.n, self.rho = len(y), float(rho)
        self.spec = MLPSpec(X.shape[1], tuple(hidden), "relu")
        self.sizes = self.spec.layer_sizes
        self.pot = MLPPotential(self.spec, self.X, self.y)
        self.prior = Prior(self.spec.fan_in_std(torch.float32), None)
        self.lam = self.n / TEMPERATURE
        self.target = Target(self.pot, self.prior, self.lam)
        self.seeds = [seed + k for k in range(N_CHAINS)]
        gens = [torch.Generator().manual_seed(s) for s in self.seeds]
        self.theta0 = torch.cat([self.spec.init_params(g, 1, torch.float32) for g in gens])
        self.sampler = "mala" if self.rho >= 1 else "csmala"
        # paper 000 §5: zeta centres the per-example term at the starting risk
        risk = float(self.pot.mean_loss(self.theta0[:1])[0])
        self.zeta = mala.solve_correction(risk, self.lam, self.n, self.rho)
        self.c, self.d, _ = mala.surrogate_constants(self.sampler, self.lam, self.n, self.rho, self.zeta)

    def params(self, K):
        h = torch.full((K,), STEP_SIZE)
        return mala.MALAParams(self.c, self.d, self.rho, h, torch.sqrt(2 * h))

    def kernel(self):
        """The sampler object of ``run_chains``: h and s fixed, no restarts, zeta fixed (csMALA)."""
        fixed = {"step_size": STEP_SIZE, "proposal_std": math.sqrt(2 * STEP_SIZE)}
        if self.sampler == "mala":
            return MALA(**fixed)
        return CSMALA(**fixed, correction=self.zeta, restart_after=None)


def paper000_problem(rho, rows=10000, hidden=(100, 100)):
    X, y = make_gap_regression(rows, random_state=0)
    return Problem(X, y, hidden, rho)


def paper001_problem():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((750, 8))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(750)
    return Problem(X, y, (8, 8, 8), 1.0)


def grid_problem(n, width, rho):
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, (n, 1))
    return Problem(X, np.sin(3 * X[:, 0]), (width, width), rho)


def kernel_runner(prob, chains):
    """``run(n)``: n calls of ``mala.step`` on ``chains`` (a list of chain ids) batched together."""
    gens = [torch.Generator().manual_seed(prob.seeds[k]) for k in chains]
    params = prob.params(len(chains))
    box = [mala.init(gens, prob.target, prob.theta0[chains], params)]

    def run(n_steps):
        state = box[0]
        for _ in range(n_steps):
            state, _ = mala.step(gens, state, prob.target, params)
        box[0] = state

    return run


def sequential_runner(prob, K):
    runs = [kernel_runner(prob, [k]) for k in range(K)]

    def run(n_steps):
        for r in runs:  # chain after chain, as run_chains(vectorize=False) does
            r(n_steps)

    return run


def run_chains_runner(prob, K, vectorize):
    kernel = prob.kernel()

    settings = {"rho": prob.rho, "burn_in": 0, "vectorize": vectorize}

    def run(n_steps):
        run_chains(prob.target, prob.theta0[:K], prob.seeds[:K], kernel, n_samples=n_steps, **settings)

    return run


def skgibbs_variants(prob, rc_steps, K=N_CHAINS, single=True, multi=True):
    """Kernel and runner, one chain and K chains; a run_chains call runs at least ``rc_steps`` steps."""
    label = "skgibbs run_chains, vectorize="
    one = [
        Variant("kernel_1", "skgibbs mala.step", kernel_runner(prob, [0])),
        Variant("run_chains_1", "skgibbs run_chains", run_chains_runner(prob, 1, True), 1, rc_steps),
    ]
    many = [
        Variant("kernel_batched", "skgibbs mala.step, batched", kernel_runner(prob, list(range(K))), K),
        Variant("kernel_sequential", "skgibbs mala.step, sequential", sequential_runner(prob, K), K),
        Variant("run_chains_vec", label + "True", run_chains_runner(prob, K, True), K, rc_steps),
        Variant("run_chains_seq", label + "False", run_chains_runner(prob, K, False), K, rc_steps),
    ]
    return (one if single else []) + (many if multi else [])


def peer_variants(prob, jx):
    """``(floors, peers)``: the torch floors, then the naive loop and (with JAX) the JAX rows."""
    X, y, sizes, rho = prob.X, prob.y, prob.sizes, prob.rho
    floor = autograd_floor(X, y, sizes, rho, 0, False)
    floors = [Variant("floor", "floor: torch autograd, batch pre-gathered", floor)]
    if rho < 1:
        gather = autograd_floor(X, y, sizes, rho, 0, True)
        floors.append(Variant("floor_gather", "floor + Bernoulli draw and gather X[idx]", gather))
    naive = naive_module_mala(X, y, sizes, rho, prob.c, prob.d, STEP_SIZE, 0)
    peers = [Variant("naive", "naive nn.Sequential loop", naive)]
    if jx is None:
        return floors, peers
    Xn, yn = X.numpy(), y.numpy()
    peers.append(
        Variant("jax_floor", "floor: jitted JAX, batch pre-gathered", jx.jax_floor(Xn, yn, sizes, rho, 0))
    )
    if rho >= 1:
        peer = jx.blackjax_mala(Xn, yn, sizes, prob.c, STEP_SIZE, 0)
        peers.append(Variant("jax_peer", "BlackJAX mala (jitted step)", peer))
    else:
        peer = jx.jax_csmala(Xn, yn, sizes, rho, prob.c, prob.d, STEP_SIZE, 0)
        peers.append(Variant("jax_peer", "jitted JAX csMALA step", peer))
    return floors, peers


def bench_paper000(opts, jx):
    out = {}
    for rho in opts.paper000_rhos:
        prob = paper000_problem(rho, *opts.paper000)
        floors, peers = peer_variants(prob, jx)
        variants = floors + skgibbs_variants(prob, opts.rc_steps, multi=rho in opts.multi_chain_rhos) + peers
        res = measure(variants, opts.repeats, opts.block_s)
        res["_constants"] = {"lambda": prob.lam, "zeta": prob.zeta, "c": prob.c, "d": prob.d, "h": STEP_SIZE}
        out[f"rho={rho:g}"] = res
        _print_section(f"paper 000 network, rho={rho:g}", res)
    return out


def bench_paper001(opts):
    prob = paper001_problem()
    res = measure(skgibbs_variants(prob, opts.rc_steps, single=False), opts.repeats, opts.block_s)
    _print_section("paper 001 network (8-8-8-8-1, n=750, rho=1)", res)
    return res


def bench_crossover(opts):
    """Per-chain rate of K = 4 chains batched over K = 4 sequential, on a grid of (batch, Q)."""
    K, out, steps = 4, [], opts.grid_rc_steps
    print("\ncrossover: 4 chains, run_chains vectorize=True over vectorize=False, per-chain rate")
    for rho, (batches, widths) in opts.grid.items():
        for n_batch, width in itertools.product(batches, widths):
            prob = grid_problem(round(n_batch / rho), width, rho)
            variants = [
                Variant("batched", "vectorize=True", run_chains_runner(prob, K, True), K, steps),
                Variant("sequential", "vectorize=False", run_chains_runner(prob, K, False), K, steps),
            ]
            res = measure(variants, opts.grid_repeats, opts.block_s / 2)
            batched, sequential, Q = res["batched"]["median"], res["sequential"]["median"], prob.spec.n_params
            cell = dict(
                rho=rho, n_batch=n_batch, width=width, Q=Q, work=n_batch * Q, ratio=batched / sequential
            )
            out.append({**cell, "batched": batched, "sequential": sequential})
            print(
                f"  rho={rho:g} batch={n_batch:6d} Q={Q:6d} work={n_batch * Q:.1e}  "
                f"batched/sequential = {cell['ratio']:.2f}"
            )
    return {"cells": out, "threshold": _crossing(out)}


def _crossing(cells):
    """Per rho, the work ``n_batch * Q`` where the least-squares line of log ratio on log work is zero."""
    out = {}
    for rho in sorted({c["rho"] for c in cells}):
        sub = [c for c in cells if c["rho"] == rho]
        r = np.log([c["ratio"] for c in sub])
        slope, icept = np.polyfit(np.log([c["work"] for c in sub]), r, 1)
        # separate exponents: log ratio = a + b log n_batch + c log Q
        design = np.c_[np.ones(len(sub)), np.log([c["n_batch"] for c in sub]), np.log([c["Q"] for c in sub])]
        coef = np.linalg.lstsq(design, r, rcond=None)[0]
        wins = [c["work"] for c in sub if c["ratio"] >= 1]
        losses = [c["work"] for c in sub if c["ratio"] < 1]
        out[f"rho={rho:g}"] = {
            "fitted_crossing": float(np.exp(-icept / slope)) if slope < 0 else None,
            "slope": float(slope),
            "fit_log_ratio_on_log_n_log_Q": [float(x) for x in coef],
            "largest_work_batching_wins": max(wins) if wins else None,
            "smallest_work_batching_loses": min(losses) if losses else None,
        }
    return out


def step_parts(opts):
    """Microseconds of one single-chain csMALA step at rho = 0.1 and of its parts, timed interleaved.

    The parts are called as the step calls them (fresh batches drawn beforehand); what is left of the step
    is its own arithmetic on ``(1,)`` and ``(1, Q)`` tensors.
    """
    prob = paper000_problem(0.1, *opts.paper000)
    target, theta = prob.target, prob.theta0[:1]
    gen = torch.Generator().manual_seed(0)
    batches = [target.draw_batch([gen], prob.rho) for _ in range(8)]
    loss_grad = target.loss_sum_and_grad(theta, batches[0])[1]

    def prior(i):
        return (
            target.log_prior(theta),
            target.grad(loss_grad, theta, prob.c),
            target.grad(loss_grad, theta, prob.c),
        )

    parts = {
        "batch": ("Bernoulli batch: Target.draw_batch", lambda i: target.draw_batch([gen], prob.rho)),
        "noise": (
            "proposal noise: torch.randn(1, Q)",
            lambda i: torch.randn(1, theta.shape[1], generator=gen),
        ),
        "gradient": (
            "gradient on the batch: Target.loss_sum_and_grad",
            lambda i: target.loss_sum_and_grad(theta, batches[i % len(batches)]),
        ),
        "prior": ("prior: Target.log_prior + 2 x Target.grad", prior),
    }
    variants = [Variant("step", "csMALA step (mala.step)", kernel_runner(prob, [0]))]
    variants += [Variant(key, label, _repeat(fn)) for key, (label, fn) in parts.items()]
    res = measure(variants, opts.repeats, opts.block_s)
    us = {key: 1e6 / r["median"] for key, r in res.items()}
    us["rest"] = us["step"] - sum(us[key] for key in parts)
    labels = {key: r["label"] for key, r in res.items()}
    labels["rest"] = "the rest: proposal, MH ratio, acceptance (tensors of 1 and Q elements)"
    print("\nwhere the time of a csMALA step goes (rho=0.1, 1 chain):")
    for key, value in us.items():
        print(f"  {labels[key]:<62s} {value:8.1f} us")
    return {"us": us, "labels": labels, "timing": res}


def _repeat(fn):
    """``run(n)``: ``fn(0)``, ..., ``fn(n - 1)``."""

    def run(n_steps):
        for i in range(n_steps):
            fn(i)

    return run


def profile_step(opts):
    """torch.profiler self-CPU time per op of the single-chain csMALA step at rho = 0.1."""
    from torch.profiler import ProfilerActivity, profile

    run = kernel_runner(paper000_problem(0.1, *opts.paper000), [0])
    run(20)
    n_steps = opts.profile_steps
    t0 = time.perf_counter()
    run(n_steps)
    plain = (time.perf_counter() - t0) / n_steps
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        run(n_steps)
    events = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    rows = [
        {
            "op": e.key,
            "self_us_per_step": e.self_cpu_time_total / n_steps,
            "calls_per_step": e.count / n_steps,
        }
        for e in events[:25]
    ]
    total = sum(e.self_cpu_time_total for e in events) / n_steps
    print(
        f"\nprofile: csMALA step, rho=0.1, 1 chain: {plain * 1e6:.0f} us/step unprofiled, "
        f"{total:.0f} us/step in torch ops (profiled)"
    )
    for r in rows[:15]:
        print(f"  {r['op']:<40s} {r['self_us_per_step']:8.1f} us  x{r['calls_per_step']:.1f}")
    return {"us_per_step": plain * 1e6, "op_self_us_per_step_total": total, "top_ops": rows}


def _print_section(title, res):
    print(f"\n{title}")
    for r in (r for key, r in res.items() if not key.startswith("_")):
        print(
            f"  {r['label']:<45s} {r['median']:9.1f} chain-steps/s  ({r['per_chain']:8.1f} per chain, "
            f"{r['per_chain_cpu']:8.1f} per CPU-s, cpu/wall {r['cpu_per_wall']:.2f}, "
            f"page faults/step {r['page_faults_per_step']:.0f})"
        )


def add_arguments(parser):
    parser.add_argument("--no-jax", action="store_true", help="skip the JAX peers even if JAX is installed")


#: block lengths, repeats, paper 000's problem (rows, hidden layers), its rhos and the grids of a full and a
#: quick run (a quick run leaves out the JAX peers)
SIZES = {
    "full": {
        "repeats": 5, "block_s": 0.3, "profile_steps": 300, "rc_steps": 10, "paper000": (10000, (100, 100)),
        "paper000_rhos": (1.0, 0.1),
        # rho: (batch points, hidden widths); Q = width**2 + 4 width + 1
        "grid": {
            1.0: ((100, 300, 1000, 3000, 10000), (8, 16, 32, 64, 128)),
            0.1: ((100, 1000, 10000), (8, 32, 128)),
        },
        "grid_repeats": 3, "grid_rc_steps": 4, "multi_chain_rhos": (1.0, 0.1), "no_jax": False,
    },
    "quick": {
        "repeats": 1, "block_s": 0.01, "profile_steps": 10, "rc_steps": 2, "paper000": (400, (16, 16)),
        "paper000_rhos": (0.1,), "grid": {1.0: ((100,), (8,))},
        "grid_repeats": 1, "grid_rc_steps": 2, "multi_chain_rhos": (0.1,), "no_jax": True,
    },
}  # fmt: skip


def run(opts):
    """Every section, timed; the raw block rates are kept."""
    vars(opts).update({**opts.size, "no_jax": opts.no_jax or opts.size.no_jax})
    start = time.perf_counter()
    jx = None
    if not opts.no_jax:
        try:
            from ..common import jax_peers as jx
        except ImportError:
            pass
    status = "installed" if jx else ("skipped" if opts.no_jax else "not installed")
    results = {
        "date": datetime.date.today().isoformat(),
        "machine": machine_info(),
        "jax": jx.versions() if jx else None,
        "jax_status": status,
        # the settings of the run; where it was written, the seed and quick are the harness's to record
        "options": {k: v for k, v in vars(opts).items() if k not in ("out", "quick", "seed", "size")},
        "vectorize_work": VECTORIZE_WORK,
    }
    sections = {
        "paper000": partial(bench_paper000, jx=jx),
        "paper001": bench_paper001,
        "crossover": bench_crossover,
        "parts": step_parts,
        "profile": profile_step,
    }
    results["section_seconds"] = {}
    for name, section in sections.items():
        t0 = time.perf_counter()
        results[name] = section(opts)
        results["section_seconds"][name] = time.perf_counter() - t0
    results["seconds"] = time.perf_counter() - start
    print(f"total {results['seconds']:.0f} s")
    return {NAME: results}


def report(results):
    """The intro, the tables and the notes, in the list-table layout of the docs."""
    res = results[NAME]
    return [Page(NAME, rst=[to_rst(intro(res), tables(res), notes(res))])]


BENCHMARK = Benchmark(
    name=NAME,
    kind="performance",
    title="Speed",
    outputs=(Output(NAME, "Speed"),),
    run=run,
    report=report,
    add_arguments=add_arguments,
    sizes=SIZES,
)
