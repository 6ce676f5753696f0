"""
Large data: 20,000 rows, the default (minibatch VI) and minibatch SGHMC
======================================================================

On 20,000 rows of Friedman #1 (20 inputs, five of them relevant, noise
standard deviation 1) the default 20-100-100-1 network has 12,301 weights:
rows times weights is 2.5e8, above the 5e7 up to which ``sampler="auto"``
runs exact full-batch HMC, so the default fit runs
:class:`~skgibbs.samplers.MeanFieldVI` on minibatches (``verbose=1`` prints
the rule it applied). Beside it, the minibatch MCMC kernel
:class:`~skgibbs.samplers.SGHMC`: 256 rows per step, a draw every pass over
the data.

For each the example prints the fit time, the held-out log-likelihood and
the coverage of the 90% predictive intervals; for SGHMC also its passes
over the data and the configurational temperature of each chain (1 for
exact draws, its own check of its bias). It plots both fits' intervals of
60 held-out points against the truth. About eighteen minutes on one
core, sixteen of them SGHMC's fit (the default's took about a minute).
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import norm
from sklearn.datasets import make_friedman1

from skgibbs import GibbsMLPRegressor

X, y = make_friedman1(n_samples=25_000, n_features=20, noise=1.0, random_state=0)
X_train, y_train, X_test, y_test = X[:20_000], y[:20_000], X[20_000:], y[20_000:]
best = -0.5 * np.log(2 * np.pi) - 0.5  # E log N(y; f(x), 1): what the true f scores on average
print(f"the true f with its noise scores a held-out log-likelihood of {best:.3f}")

fig, axes = plt.subplots(1, 2, figsize=(10, 3.5), sharey=True)
for ax, sampler in zip(axes, ["auto", "sghmc"]):
    start = time.perf_counter()
    reg = GibbsMLPRegressor(sampler=sampler, random_state=0, verbose=int(sampler == "auto"))
    reg.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    mean, std = reg.predict(X_test, return_std=True)
    interval = reg.predict_interval(X_test, confidence_level=0.9)[1][:, :, 0]  # (n, 2)
    covered = (y_test >= interval[:, 0]) & (y_test <= interval[:, 1])
    print(f"\nsampler={sampler!r} ran {reg.sampler_name_!r}: fit {seconds:.0f} s")
    print(f"  held-out log-likelihood {norm.logpdf(y_test, mean, std).mean():.3f}")
    print(f"  90% interval coverage {covered.mean():.3f}, mean width {np.mean(interval[:, 1] - interval[:, 0]):.2f}")
    if reg.sampler_.mixing_diagnostics:  # chains: a number from chains that have not mixed says so
        state = "mixed" if reg.rhat_ <= 1.05 and reg.ess_ >= 100 else "NOT mixed: these numbers describe the draws"
        print(f"  R-hat {reg.rhat_:.2f}, bulk ESS {reg.ess_:.0f} of the function values ({state})")
    if reg.sampler_name_ == "sghmc":
        print(f"  batch of {reg.batch_size_} rows, {reg.epochs_.mean():.0f} passes over the data per chain")
        print("  configurational temperature per chain:", np.round(reg.configurational_temperature_, 3))

    order = np.argsort(mean[:60])
    ax.errorbar(
        np.arange(60),
        mean[:60][order],
        yerr=np.abs(interval[:60][order].T - mean[:60][order]),
        fmt="o",
        ms=3,
        label="posterior mean, 90% predictive interval",
    )
    ax.plot(np.arange(60), y_test[:60][order], "k.", label="held-out y")
    ax.set_title(f"sampler={reg.sampler_name_!r}")
    ax.set_xlabel("held-out point (sorted by prediction)")
axes[0].set_ylabel("y")
axes[0].legend(loc="upper left", fontsize=8)
fig.tight_layout()
plt.show()
