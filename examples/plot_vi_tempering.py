"""
Variational inference and its cooling: the data-gap regression
===============================================================

The one-dimensional problem of paper 000 §5 (noisy observations of a
function on ``[-0.8, -0.2] U [0.2, 0.8]``, nothing in between), fitted four
ways by :class:`skgibbs.GibbsMLPRegressor` with a 1 -> 50 -> 50 -> 1 ReLU
network at the same ``temperature="auto"``:

- ``sampler="hmc"``: the chains, the reference;
- ``sampler="vi"`` (``MeanFieldVI()``) at the default cooling
  ``kl_weight="auto"``: ``eta = tau`` on the hidden layers, ``tau=0.3``;
- ``sampler=MeanFieldVI(tau=1)``: ``eta = 1``, the classical ELBO (the same
  fit as ``MeanFieldVI(kl_weight=1.0)``);
- ``sampler=MeanFieldVI(kl_weight=20.0)``: a KL term weighed far too
  heavily, as paper 002's ``eta = tau n / N`` makes it at large ``n``.

Each panel shows the data, the true function, the posterior (or ``q``'s)
mean and its 95% pointwise credible band (``predict_interval(...,
kind="credible")``). The script prints, per fit, its time, ``eta``, the
RMSE of the mean against the true function, the band's coverage of the true
function and mean width in the data and in the gap, and ``KL(q || prior)``.

What to look for (one run on one core, 2026-11-29): VI took 31 to 37 s
against HMC's 76 s. The HMC fit is a reference, not the posterior: its
chains have not mixed (R-hat 1.29, bulk ESS 11 of the function values, a
SamplerWarning), each staying in its own mode of the gap, as in
``plot_gap_regression.py``. At the default cooling and with the classical
ELBO the mean is as close to the function as HMC's (RMSE 0.030 and 0.032
against 0.034), but the band in the gap is less than half as wide (mean
width 0.025 and 0.018 against 0.068): a mean-field ``q`` ignores the
correlations between weights, and with them most of the ways the network
can bend through the gap, while in the data its band is wider than HMC's
(0.017 and 0.024 against 0.012). With ``eta = 20`` the pull to the prior
wins: the mean misses the data (RMSE 0.050, its band covers the function at
66% of the data region) and the band is wide everywhere. In the gap no fit
covers the true function (coverage 0.07 for HMC, 0.05 and 0.03 for the two
VI fits, 0.18 for ``eta = 20`` only because its band is wide): the sharp
peak at 0 is beyond what any of them can infer.

Run ``python examples/plot_vi_tempering.py [output.png]`` (default
``build/vi_tempering.png``); about three minutes on one core.
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
from skgibbs.samplers import MeanFieldVI

torch.set_num_threads(1)
OUTPUT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build/vi_tempering.png")
LEVEL = 0.95

X, y = make_gap_regression(n_samples=1000, noise=0.02, random_state=0)
grid = np.linspace(-0.8, 0.8, 401)[:, None]
f_grid = gap_regression_function(grid[:, 0])
in_gap = np.abs(grid[:, 0]) < 0.2

common = dict(hidden_layer_sizes=(50, 50), random_state=0)
fits = {
    "HMC (reference)": GibbsMLPRegressor(**common, sampler="hmc", n_samples=100, burn_in=200),
    "VI, default (eta = 0.3)": GibbsMLPRegressor(**common, sampler=MeanFieldVI()),
    "VI, classical ELBO (eta = 1)": GibbsMLPRegressor(**common, sampler=MeanFieldVI(tau=1.0)),
    "VI, eta = 20": GibbsMLPRegressor(**common, sampler=MeanFieldVI(kl_weight=20.0)),
}

fig, axes = plt.subplots(1, len(fits), figsize=(4.2 * len(fits), 3.6), sharey=True)
print(
    f"{'fit':30s} {'seconds':>7s} {'eta':>7s} {'RMSE':>7s} {'cov data':>8s} {'cov gap':>8s} "
    f"{'w data':>7s} {'w gap':>7s} {'KL':>8s}"
)
warned = []
for ax, (name, reg) in zip(axes, fits.items()):
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SamplerWarning)
        reg.fit(X, y)
    seconds = time.perf_counter() - start
    # shown after the table: what each fit says about itself
    warned += [f"  {name}: {w.message}" for w in caught if issubclass(w.category, SamplerWarning)]
    mean, band = reg.predict_interval(grid, confidence_level=LEVEL, kind="credible")
    lo, hi = band[:, 0, 0], band[:, 1, 0]
    covered = (lo <= f_grid) & (f_grid <= hi)
    width = hi - lo
    rmse = float(np.sqrt(np.mean((mean - f_grid) ** 2)))
    eta = f"{reg.kl_weight_:.3g}" if reg.sampler_name_ == "vi" else "-"
    kl = f"{reg.kl_:.4g}" if reg.sampler_name_ == "vi" else "-"
    print(
        f"{name:30s} {seconds:7.1f} {eta:>7s} {rmse:7.4f} {covered[~in_gap].mean():8.3f} "
        f"{covered[in_gap].mean():8.3f} {width[~in_gap].mean():7.4f} {width[in_gap].mean():7.4f} {kl:>8s}"
    )
    ax.scatter(X[::4, 0], y[::4], s=3, color="0.6", label="data (1 in 4)")
    ax.plot(grid[:, 0], f_grid, "k--", lw=1, label="true f")
    ax.plot(grid[:, 0], mean, color="C0", lw=1.5, label="mean")
    ax.fill_between(grid[:, 0], lo, hi, color="C0", alpha=0.3, label=f"{LEVEL:.0%} credible band")
    ax.axvspan(-0.2, 0.2, color="C1", alpha=0.08)
    ax.set_title(f"{name}\n{seconds:.0f} s")
    ax.set_xlabel("x")
axes[0].set_ylabel("y")
axes[0].legend(loc="upper left", fontsize=7)
fig.tight_layout()
OUTPUT.parent.mkdir(parents=True, exist_ok=True)
fig.savefig(OUTPUT, dpi=110)
hmc = fits["HMC (reference)"]
print(
    f"\nHMC: R-hat {hmc.rhat_:.3g}, bulk ESS {hmc.ess_:.3g} of the function values at the training inputs "
    "(R-hat above 1.05: the chains sit in different modes of the gap, so the reference itself is "
    "a local picture)"
)
if warned:
    print("\nSamplerWarnings raised by the fits:\n" + "\n".join(warned))
print(f"figure written to {OUTPUT}")
