"""
Which batches does a stochastic MALA accept?
============================================

A stochastic Metropolis-Hastings step compares the current point on its own
Bernoulli(rho) batch with the proposal on a fresh one, so the acceptance
decision also depends on *how many* examples each batch holds. This script
repeats paper 000 Fig. 4 on a smaller network: it histograms
``accepted_batch_sizes_`` (``|Z|_1`` of every accepted proposal) for

- ``sampler=SMALA()``: the per-example term ``lambda l_i / (n rho)`` is
  positive, so smaller batches have a lower potential and are preferred;
- ``sampler=CSMALA(correction="auto")``: ``zeta`` is chosen so that the
  per-example term ``lambda' l_i / n + zeta log rho`` has mean zero, and the
  accepted batches follow the proposal law Binomial(n, rho);
- ``sampler=CSMALA(correction=1.0)``: the surrogate (2.12) of the paper's
  theory. Each example then adds about ``log rho`` to the potential, so the
  target's batches would hold about ``n / (2 - rho)`` examples while the
  proposals hold ``n rho``; only the largest proposed batches pass and the
  chain mostly rejects.

Run ``python examples/plot_accepted_batches.py [output.png]`` (default
``accepted_batches.png``); it takes about one minute on one CPU core.
"""

import sys
import time
import warnings

import matplotlib

matplotlib.use("Agg")  # write files only; no display needed

import matplotlib.pyplot as plt
import numpy as np
import torch
from scipy.stats import binom

from skgibbs import GibbsMLPRegressor, SamplerWarning
from skgibbs.datasets import make_gap_regression
from skgibbs.samplers import CSMALA, SMALA

torch.set_num_threads(1)

OUTPUT = sys.argv[1] if len(sys.argv) > 1 else "accepted_batches.png"
N, RHO = 10000, 0.1

X, y = make_gap_regression(n_samples=N, noise=0.02, random_state=0)

# A 1 -> 32 -> 32 -> 1 network keeps the run short; the batch statistics
# depend on n, rho and lambda l_i / n, not on the width. The temperature (on
# the standardized scale, where 2 sigma^2 is about 0.01 here) is hot enough
# that the batch noise of the Metropolis-Hastings ratio still lets some
# proposals through, and cold enough that the preference of sMALA for small
# batches shows. The step size is fixed and small, so that the batch terms,
# not the Langevin move, decide acceptance: a float proposal_std fixes both
# (the kernel's settings live on the sampler object).
step_size = 1e-7
step = {"step_size": step_size, "proposal_std": float(np.sqrt(2 * step_size))}
common = {
    "hidden_layer_sizes": (32, 32),
    "rho": RHO,
    "temperature": 1.5,
    "n_chains": 2,
    "burn_in": 1000,
    "n_samples": 400,
    "thin": 10,
    "pretrain_iter": 2000,
    "random_state": 0,
}
runs = {
    "sMALA": GibbsMLPRegressor(sampler=SMALA(**step), **common),
    "csMALA, correction='auto'": GibbsMLPRegressor(sampler=CSMALA(correction="auto", **step), **common),
    "csMALA, correction=1.0": GibbsMLPRegressor(sampler=CSMALA(correction=1.0, **step), **common),
}

print(
    f"n = {N}, rho = {RHO}: proposed batches ~ Binomial(n, rho), "
    f"mean {N * RHO:.0f}, sd {np.sqrt(N * RHO * (1 - RHO)):.1f}"
)
print(
    f"{'sampler':<27} {'zeta':>7} {'accepted':>9} {'mean |Z|':>9} {'sd |Z|':>7} {'acc. rate':>10} {'restarts':>9}"
)
sizes = {}
for name, reg in runs.items():
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        # print any SamplerWarning next to the run it belongs to
        warnings.simplefilter("always", SamplerWarning)
        reg.fit(X, y)
    sizes[name] = b = reg.accepted_batch_sizes_
    print(
        f"{name:<27} {reg.correction_:7.4f} {len(b):9d} {b.mean():9.1f} {b.std():7.1f} "
        f"{reg.acceptance_rate_.mean():10.3f} {reg.n_restarts_.sum():9d}"
        f"   ({time.perf_counter() - start:.0f} s)"
    )
    for w in caught:
        print(f"    {w.category.__name__}: {w.message}")

lo = min(b.min() for b in sizes.values()) - 10
hi = max(b.max() for b in sizes.values()) + 10
bins = np.arange(lo, hi + 1, 8)
fig, ax = plt.subplots(figsize=(8, 4.5), constrained_layout=True)
for (name, b), color in zip(sizes.items(), ["tab:orange", "tab:blue", "tab:green"]):
    ax.hist(
        b,
        bins=bins,
        density=True,
        histtype="stepfilled",
        alpha=0.35,
        color=color,
        label=f"{name} (mean {b.mean():.0f})",
    )
    ax.hist(b, bins=bins, density=True, histtype="step", color=color)
k = np.arange(lo, hi + 1)
ax.plot(k, binom.pmf(k, N, RHO), "k--", lw=1, label=f"proposals: Binomial({N}, {RHO})")
ax.set_xlabel("|Z|_1, examples in an accepted batch")
ax.set_ylabel("density")
ax.set_title("Batch sizes of accepted steps (paper 000 Fig. 4)")
ax.legend(fontsize=8)
fig.savefig(OUTPUT, dpi=110)
print(f"\nwrote {OUTPUT}")
