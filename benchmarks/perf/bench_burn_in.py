"""Cost of a csMALA burn-in step against a sampling step.

With ``rho < 1`` the burn-in's step size follows the acceptance of the parameter move, which costs one extra
forward pass (``MALAInfo.move_acceptance``); the runner measures it every :data:`MOVE_EVERY` steps. On paper
000's network (1-100-100-1 ReLU) with ``make_gap_regression(10000)`` at ``rho = 0.1`` and one and two chains,
this times, interleaved, a sampling step and burn-in steps with and without the measurement, and derives the
mean burn-in step of the runner's schedule. Run ``python -m benchmarks run burn_in``.
"""

import time

import torch

from skgibbs.datasets import make_gap_regression
from skgibbs.model import MLPSpec
from skgibbs.potential import MLPPotential
from skgibbs.priors import Prior
from skgibbs.samplers import CSMALA, RunSettings, Target

from .. import Benchmark, Output
from ..common.environment import load_after
from ..common.writer import Page

NAME = "burn_in"
RHO = 0.1
MOVE_EVERY = CSMALA.move_every  # burn-in steps between two measurements of the move acceptance
SIZES = {"full": {"steps": 200}, "quick": {"steps": 20}}  # timed steps per cell


def _chains(K):
    X, y = make_gap_regression(n_samples=10000, noise=0.02, random_state=0)
    X, y = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
    spec = MLPSpec(1, (100, 100), "relu")
    pot = MLPPotential(spec, torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y, dtype=torch.float32))
    theta0 = spec.init_params(torch.Generator().manual_seed(0), K, torch.float32)
    target = Target(pot, Prior(spec.fan_in_std(torch.float32)), lambda_=10000 / 5.0)
    generators = [torch.Generator().manual_seed(k) for k in range(K)]
    sampler = CSMALA(correction=1.0, step_size=1e-7)
    return sampler.chains(target, theta0, generators, RunSettings(rho=RHO))


def _per_step(chains, steps, kinds):
    """Mean seconds per step of each kind, the kinds interleaved so that they share the machine's load."""
    totals = {name: 0.0 for name in kinds}
    for i in range(steps + 1):
        for name, kwargs in kinds.items():
            start = time.perf_counter()
            chains.advance(**kwargs)
            if i:  # the first round warms up
                totals[name] += time.perf_counter() - start
    return {name: total / steps for name, total in totals.items()}


def run(args):
    steps = args.size.steps
    raw = []
    for K in (1, 2):
        chains = _chains(K)
        kinds = {"sampling": {"params": chains.frozen_params()}, "measured": {"adapting": True}, "plain": {}}
        t = _per_step(chains, steps, kinds)
        schedule = (t["measured"] + (MOVE_EVERY - 1) * t["plain"]) / MOVE_EVERY
        raw.append({"chains": K, **t, "schedule": schedule})
    return {NAME: {"rows": raw, "steps": steps, "move_every": MOVE_EVERY}}


def report(results):
    result = results[NAME]
    load = load_after(result, lambda r: r["load_average"])
    rows = []
    for r in result["rows"]:
        cells = [f"{1e3 * r[k]:.2f} ({r[k] / r['sampling']:.2f}x)" for k in ("measured", "plain", "schedule")]
        rows.append([r["chains"], f"{1e3 * r['sampling']:.2f}", *cells])
    header = ["chains", "sampling step (ms)", "burn-in, move measured (ms)", "burn-in, not measured (ms)",
              f"burn-in, every {result['move_every']}. measured (ms)"]  # fmt: skip
    notes = [
        "csMALA, rho = 0.1 (about 1000 examples a step), the 10401-weight network of paper 000 at "
        f"n = 10000, float32, one thread, {result['steps']} steps per cell, the three kinds interleaved; "
        f"load average {load:.1f} (a shared machine: tens of percent of noise). The last column is the "
        "runner's burn-in schedule."
    ]
    return [Page(NAME, "Burn-in against sampling steps (csMALA)", [("Step times", header, rows)], notes)]


TITLE = "csMALA burn-in steps against sampling steps"
BENCHMARK = Benchmark(NAME, "performance", TITLE, (Output(NAME, TITLE),), run, report, sizes=SIZES)
