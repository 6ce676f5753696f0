"""Cost of a csMALA burn-in step against a sampling step.

During burn-in with ``rho < 1`` the step size follows the acceptance of the
parameter move alone, which needs the loss of the current point on the
proposal's batch: one extra forward pass per step (``MALAInfo.move_acceptance``).
The runner now measures it on every second burn-in step only. This script
times, on the network of paper 000 (1-100-100-1 ReLU, 10401 weights) with
``make_gap_regression(10000)`` at ``rho = 0.1`` and one chain (two chains
batched for comparison), the mean wall time of

* a sampling step,
* a burn-in step that measures the move acceptance (every step before),
* a burn-in step that does not,

and the mean burn-in step of the runner's schedule (every second step
measured), relative to a sampling step.

Run ``python benchmarks/bench_burn_in.py`` (under a minute on one core);
``--quick`` runs fewer steps and only prints.
"""

import argparse
import os
import time

import torch

from _tables import publish
from skgibbs.datasets import make_gap_regression
from skgibbs.model import MLPSpec
from skgibbs.potential import MLPPotential, Prior
from skgibbs.samplers import ChainConfig
from skgibbs.samplers.runner import _MOVE_EVERY, _Chains

NAME = "burn_in"


def _chains(K):
    X, y = make_gap_regression(n_samples=10000, noise=0.02, random_state=0)
    X, y = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
    spec = MLPSpec(1, (100, 100), "relu")
    pot = MLPPotential(spec, torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y, dtype=torch.float32))
    theta0 = spec.init_params(torch.Generator().manual_seed(0), K, torch.float32)
    cfg = ChainConfig(sampler="csmala", lam=10000 / 5.0, rho=0.1, correction=1.0, step_size=1e-7)
    return _Chains(pot, Prior(spec.fan_in_std(torch.float32)), theta0, list(range(K)), cfg)


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    steps = 20 if args.quick else 200
    rows, raw = [], []
    for K in (1, 2):
        chains = _chains(K)
        kinds = {"sampling": {"params": chains.params()}, "measured": {"adapting": True}, "plain": {}}
        times = _per_step(chains, steps, kinds)
        sample, measured, plain = times["sampling"], times["measured"], times["plain"]
        schedule = (measured + (_MOVE_EVERY - 1) * plain) / _MOVE_EVERY
        raw.append({"chains": K, "sampling": sample, "measured": measured, "plain": plain, "schedule": schedule})
        rows.append(
            [
                K,
                f"{1e3 * sample:.2f}",
                f"{1e3 * measured:.2f} ({measured / sample:.2f}x)",
                f"{1e3 * plain:.2f} ({plain / sample:.2f}x)",
                f"{1e3 * schedule:.2f} ({schedule / sample:.2f}x)",
            ]
        )
    header = [
        "chains",
        "sampling step (ms)",
        "burn-in, move measured (ms)",
        "burn-in, not measured (ms)",
        f"burn-in, every {_MOVE_EVERY}. measured (ms)",
    ]
    load = os.getloadavg()[0]
    result = {"quick": args.quick, "rows": raw, "steps": steps, "load_average": load, "move_every": _MOVE_EVERY}
    notes = [
        f"csMALA, rho = 0.1 (about 1000 examples a step), the 10401-weight network of paper 000 at n = 10000, "
        f"float32, one thread, {steps} steps per cell, the three kinds interleaved; load average {load:.1f} (a shared machine: tens of "
        "percent of noise). The last column is the runner's burn-in schedule."
    ]
    publish(NAME, result, "Burn-in against sampling steps (csMALA)", [("Step times", header, rows)], notes)


if __name__ == "__main__":
    main()
