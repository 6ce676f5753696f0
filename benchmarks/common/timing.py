"""Interleaved wall-clock timing for the speed benchmarks.

The benchmarks share the CPU with whatever else runs on the machine, so a
single timing says little. Every variant is timed in blocks of a fixed number
of steps; the blocks of all variants of one comparison are interleaved (the
order rotates from repeat to repeat) and the median rate is reported, so a
burst of outside load hits every variant alike.
"""

import gc
import math
import resource
import statistics
import time
from collections.abc import Callable
from typing import NamedTuple

from .environment import load_average

__all__ = ["Variant", "measure"]


class Variant(NamedTuple):
    """One implementation under test.

    ``run(n)`` advances it by ``n`` steps and returns only when the work is
    done (JAX variants block on their result). One step advances ``chains``
    chains, so the chain-step rate is ``chains * n / seconds``.
    """

    key: str
    label: str
    run: Callable[[int], None]
    chains: int = 1
    min_steps: int = 1


def _faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _timed(run, n_steps):
    gc.collect()
    faults0, cpu0, t0 = _faults(), time.process_time(), time.perf_counter()
    run(n_steps)
    wall = time.perf_counter() - t0
    return wall, time.process_time() - cpu0, (_faults() - faults0) / n_steps


def measure(variants, repeats=5, block_s=0.3, warmup_steps=2):
    """Median chain-steps per second of each variant, timed interleaved.

    Parameters
    ----------
    variants : list of Variant
    repeats : int
        Timed blocks per variant.
    block_s : float
        Target duration of one block; the number of steps per block is
        calibrated once per variant after the warm-up.
    warmup_steps : int
        Untimed steps before calibration (lazy allocation, JIT compilation).

    Returns
    -------
    dict
        Per variant key: ``median`` (chain-steps/s), ``per_chain``
        (steps/s of one chain), ``rates`` (every block), ``per_chain_cpu``
        (steps per CPU-second of the process, which does not count the time
        spent waiting for a busy CPU), ``n_steps`` (per
        block), ``cpu_per_wall`` (median process CPU time over wall time;
        about 1 for one busy thread, below 1 when the process waited for
        the CPU), ``page_faults_per_step`` (minor page faults: fresh memory
        that the allocator mapped and the step had to touch), ``load_average``
        (the 1-minute load average when the last block ended: above the
        number of free CPUs, other processes shared them during the blocks).
    """
    n_steps = {}
    for v in variants:
        v.run(max(warmup_steps, 1))
        wall, _, _ = _timed(v.run, v.min_steps)
        n_steps[v.key] = max(v.min_steps, math.ceil(v.min_steps * block_s / max(wall, 1e-9)))
    rates, cpu_rates, loads, faults = ({v.key: [] for v in variants} for _ in range(4))
    for r in range(repeats):
        shift = r % len(variants)
        for v in variants[shift:] + variants[:shift]:
            wall, cpu, fault = _timed(v.run, n_steps[v.key])
            rates[v.key].append(v.chains * n_steps[v.key] / wall)
            cpu_rates[v.key].append(v.chains * n_steps[v.key] / max(cpu, 1e-9))
            loads[v.key].append(cpu / wall)
            faults[v.key].append(fault)
    load = load_average()
    out = {}
    for v in variants:
        med = statistics.median(rates[v.key])
        out[v.key] = {
            "label": v.label,
            "chains": v.chains,
            "median": med,
            "per_chain": med / v.chains,
            "rates": rates[v.key],
            "per_chain_cpu": statistics.median(cpu_rates[v.key]) / v.chains,
            "n_steps": n_steps[v.key],
            "cpu_per_wall": statistics.median(loads[v.key]),
            "page_faults_per_step": statistics.median(faults[v.key]),
            "load_average": load,
        }
    return out
