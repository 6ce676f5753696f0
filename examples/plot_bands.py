"""
Predictive and credible bands along one input
=============================================

:class:`skgibbs.display.PredictionBandDisplay` draws what
``predict_interval`` returns along one input: the posterior mean, the
*credible* bands (where the regression function ``f(x)`` lies) and the wider
*predictive* bands (where a new observation ``y`` lies: ``f(x)`` plus the
noise), one per confidence level, with the training data scattered.

The data are the gap problem of paper 000 §5
(:func:`skgibbs.datasets.make_gap_regression`): observations on ``[-0.8,
-0.2] U [0.2, 0.8]``, none in between. A small ReLU network (1 -> 32 -> 32
-> 1) is sampled by :class:`skgibbs.GibbsMLPRegressor` with its defaults
(MCLMC, four chains, the ARD prior's scales and the noise learned), with a
fixed, short run so that the script stays short. The grid runs past the data on both sides
(``grid_range``): the bands open in the gap and outside the data, and stay
narrow where the data are. The true function is drawn dashed.

Run ``python examples/plot_bands.py [output.png]`` (default
``prediction_bands.png`` in the current directory; the figure of the
documentation is ``doc/_static/prediction_bands.png``). Measured on one CPU
core of an otherwise idle machine: 41 s from start to end (40 s of it the
fit).
"""

import sys
import time
import warnings

import matplotlib

matplotlib.use("Agg")  # write files only; no display needed

import matplotlib.pyplot as plt
import numpy as np
import torch

from skgibbs import GibbsMLPRegressor, SamplerWarning
from skgibbs.datasets import gap_regression_function, make_gap_regression
from skgibbs.display import PredictionBandDisplay

torch.set_num_threads(1)
OUTPUT = sys.argv[1] if len(sys.argv) > 1 else "prediction_bands.png"

start = time.perf_counter()
X, y = make_gap_regression(n_samples=500, noise=0.02, random_state=0)
reg = GibbsMLPRegressor(hidden_layer_sizes=(32, 32), n_samples=100, burn_in=200, random_state=0)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", SamplerWarning)
    reg.fit(X, y)
fitted = time.perf_counter() - start
print(f"fit: {fitted:.0f} s, R-hat {reg.rhat_:.2f}, ESS {reg.ess_:.0f}")
for w in caught:  # the chains of this short run may disagree in the gap: the warning says so
    print(f"SamplerWarning: {str(w.message)[:150]} ...")

fig, ax = plt.subplots(figsize=(8, 4.8), layout="constrained")
ax.axvspan(-0.2, 0.2, color="0.93", zorder=0)
disp = PredictionBandDisplay.from_estimator(
    reg,
    X,
    confidence_level=[0.5, 0.95],
    grid_range=(-1.0, 1.0),
    grid_resolution=400,
    X_train=X,
    y_train=y,
    ax=ax,
)
x = disp.x
left = x < 0  # f jumps at 0: draw its two pieces separately
ax.plot(x[left], gap_regression_function(x[left]), "k--", lw=1, label="true f")
ax.plot(x[~left], gap_regression_function(x[~left]), "k--", lw=1)
ax.legend(loc="upper left", fontsize=8, ncol=2)
ax.set_title("GibbsMLPRegressor on the gap data: no training data in the grey strip")

width = disp.y_pis["credible"][:, 1, 1] - disp.y_pis["credible"][:, 0, 1]
in_data = (np.abs(x) >= 0.2) & (np.abs(x) <= 0.8)
print(
    f"mean width of the 95% credible band: {width[in_data].mean():.3f} on the data, "
    f"{width[np.abs(x) < 0.2].mean():.3f} in the gap, {width[np.abs(x) > 0.8].mean():.3f} outside"
)
fig.savefig(OUTPUT, dpi=110)
print(f"wrote {OUTPUT} ({time.perf_counter() - start:.0f} s in all)")
