"""
Microcanonical samplers beside HMC on the data-gap regression
=============================================================

``sampler="mclmc"`` (:class:`~skgibbs.samplers.MCLMC`) moves each chain by
isokinetic dynamics, a velocity of unit length whose direction the
gradient turns, partially refreshed after every step and never rejected:
its draws carry a small bias, set by the energy error its step size is
tuned to (``desired_energy_var``). ``sampler="adjusted_mclmc"``
(:class:`~skgibbs.samplers.AdjustedMCLMC`) runs the same dynamics with a
fresh direction per trajectory and a Metropolis-Hastings test on the
trajectory's energy error, and is exact, as HMC is. Both tune a step size,
a diagonal preconditioner and a decoherence length ``L`` per chain during
warm-up (the user guide's "Microcanonical samplers").

On 300 points of the data-gap regression of paper 000 §5 (inputs on
``[-0.8, -0.2] U [0.2, 0.8]``, nothing in between) a 1 -> 16 -> 1 ReLU
network is fitted three times from the same pre-trained starts: with HMC,
with MCLMC and with adjusted MCLMC, each at its defaults. For each the
script prints the fit time, R-hat and the bulk ESS of the function values
at the training inputs over all chains (``rhat_``, ``ess_``) and within
each chain (``within_chain_rhat_``, ``within_chain_ess_``), the gradient
evaluations per chain (``n_grad_evals_``, warm-up included) and the frozen
step size of every chain (``step_size_``, in each kernel's own
coordinates, so not comparable across kernels), and the coverage of the
true ``f`` by the 90% credible band in the data region and in the gap. It
draws the three bands side by side.

What to look for (one run on one core, on 2026-11-29): at their defaults
the runs adapt their length (``n_samples="auto"``), and on this posterior
all three reached their cap, about 100,000 gradient evaluations a chain,
without converging, so each fit warns. HMC took 84 s (R-hat 1.63, bulk
ESS 7), MCLMC 122 s (R-hat 1.21, ESS 14: the furthest per gradient) and
adjusted MCLMC 105 s (R-hat 2.11, ESS 5); alone, the worst chain's
effective sample size stayed between 1.4 and 3.3. Their credible bands
cover the true ``f`` at 0.85 to 0.89 of the data region and at 0.24 to
0.36 in the gap. How the kernels compare on
larger networks, per gradient and per second, is measured by the
``mixing`` benchmark (``benchmarks/results/mixing.rst``).

Run ``python examples/plot_mclmc.py [output.png]`` (default
``build/mclmc.png``); about five minutes on one core.
"""

import pathlib
import sys
import time
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import torch

from skgibbs import GibbsMLPRegressor, SamplerWarning
from skgibbs.datasets import gap_regression_function, make_gap_regression

torch.set_num_threads(1)
OUTPUT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build/mclmc.png")
LEVEL = 0.9
SAMPLERS = ("hmc", "mclmc", "adjusted_mclmc")

# %%
# The three fits
# --------------
X, y = make_gap_regression(n_samples=300, noise=0.02, random_state=0)
grid = np.linspace(-0.8, 0.8, 401)[:, None]
f_grid = gap_regression_function(grid[:, 0])
in_gap = np.abs(grid[:, 0]) < 0.2

fits = {}
np.set_printoptions(precision=4)
for name in SAMPLERS:
    reg = GibbsMLPRegressor(hidden_layer_sizes=(16,), sampler=name, random_state=0)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SamplerWarning)
        reg.fit(X, y)
    seconds = time.perf_counter() - start
    mean, pis = reg.predict_interval(grid, confidence_level=LEVEL, kind="credible")
    fits[name] = (reg, seconds, mean, pis[:, 0, 0], pis[:, 1, 0])

    print(f"\n{name} ({type(reg.sampler_).__name__}): fit in {seconds:.1f} s")
    print(f"  R-hat {reg.rhat_:.3f}, bulk ESS {reg.ess_:.0f} (all chains)")
    print(
        f"  within each chain: R-hat up to {reg.within_chain_rhat_:.3f}, "
        f"ESS down to {reg.within_chain_ess_:.1f}"
    )
    print(f"  gradient evaluations per chain: {reg.n_grad_evals_}")
    print(f"  step size per chain: {reg.step_size_}")
    if getattr(reg, "acceptance_rate_", None) is not None:
        print(f"  acceptance rate per chain: {reg.acceptance_rate_}")
    if "energy_var" in reg.sample_stats_:  # unadjusted MCLMC: Var[E] / d sampled with, per chain
        energy = np.asarray(reg.sample_stats_["energy_var"]).mean(axis=1)
        print(f"  mean E^2 / d per step: {energy} (desired_energy_var {reg.sampler_.desired_energy_var:g})")
    for region, where in (("data region", ~in_gap), ("gap", in_gap)):
        lower, upper = fits[name][3][where], fits[name][4][where]
        covered = np.mean((lower <= f_grid[where]) & (f_grid[where] <= upper))
        print(f"  {region}: the {LEVEL:.0%} band covers the true f at {covered:.2f} of the grid, "
              f"mean width {np.mean(upper - lower):.3f}")
    for w in caught:  # short chains on a multimodal posterior: the warnings say what fell short
        print(f"  SamplerWarning: {str(w.message)[:120]} ...")

# %%
# The credible bands side by side
# -------------------------------
fig, axes = plt.subplots(1, len(SAMPLERS), figsize=(13, 3.8), sharey=True)
left = grid[:, 0] < 0  # the true f jumps at 0: draw its two pieces separately
for ax, name in zip(axes, SAMPLERS):
    reg, seconds, mean, lower, upper = fits[name]
    ax.axvspan(-0.2, 0.2, color="0.92", label="gap: no data")
    ax.fill_between(grid[:, 0], lower, upper, alpha=0.4, label=f"{LEVEL:.0%} credible band of f")
    ax.plot(grid[:, 0], mean, lw=1.5, label="posterior mean")
    ax.plot(grid[left, 0], f_grid[left], "k--", lw=1, label="true f")
    ax.plot(grid[~left, 0], f_grid[~left], "k--", lw=1)
    ax.plot(X[:, 0], y, "k.", ms=2, alpha=0.4)
    ax.set_title(
        f'sampler="{name}"\n{seconds:.0f} s, R-hat {reg.rhat_:.2f}, ESS {reg.ess_:.0f}, '
        f"{np.mean(reg.n_grad_evals_) / 1000:.1f}k gradients/chain",
        fontsize=9,
    )
    ax.set_xlabel("x")
axes[0].set_ylabel("y")
axes[0].legend(loc="upper left", fontsize=7)
fig.tight_layout()
OUTPUT.parent.mkdir(parents=True, exist_ok=True)
fig.savefig(OUTPUT, dpi=110)
print(f"\nfigure written to {OUTPUT}")
