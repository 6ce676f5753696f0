"""
LFV and WAIC vs cross-validation
================================

Choose the temperature, and then the width, of a
:class:`skgibbs.GibbsMLPRegressor` on the diabetes data of scikit-learn
twice:

- by WAIC: each candidate's ``generalization_loss_`` (Watanabe's WAIC of its
  tempered posterior draws, per example), one fit per candidate on all 442
  examples, with :class:`skgibbs.model_selection.CriterionGridSearch`;
- by 10-fold cross-validation, ten fits per candidate, scored by the
  held-out log predictive density, the quantity WAIC estimates.

:func:`skgibbs.model_selection.compare_with_cv` runs both and the script
prints the per-candidate table, the Spearman rank correlation of the two
scores (+1: same ranking), whether they choose the same candidate, and the
speed-up of the criterion. Both scores are negative log-likelihoods per
example (nats, on the scale of y), so the figure plots them against the
grid value and against each other with the 1:1 line.

Then it ranks scikit-learn's own ``MLPRegressor`` over ``alpha`` by the
``"lfv"`` criterion: the Langevin process of paper 004 started at each
trained network, training loss + LFV / n with each candidate's residual
variance (and its Gaussian normalising constant), against the held-out
Gaussian negative log-likelihood of 10-fold CV.

Run ``python examples/plot_model_selection.py [output.png]`` (default
``build/model_selection.png``); about five minutes on one CPU core. Beside the
figure it writes the summary of the three comparisons as a reST table
(``model_selection_table.rst`` in the figure's folder), the one the user
guide includes.
"""

import pathlib
import sys
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from sklearn.datasets import load_diabetes  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.neural_network import MLPRegressor  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from skgibbs import GibbsMLPRegressor, SamplerWarning  # noqa: E402
from skgibbs.model_selection import compare_with_cv  # noqa: E402

torch.set_num_threads(1)
out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build/model_selection.png")

X, y = load_diabetes(return_X_y=True)

# Cheap but honest: exact MALA (rho=1) on a 10-16-1 network, the default
# four chains, each keeping 50 draws from 250 steps after 500 steps of
# burn-in and adaptation.
# The temperature is on the standardized scale of y, where 2 sigma^2 (the
# Bayesian posterior) is about 1 for this data (R^2 of about 0.5).
gibbs = GibbsMLPRegressor(
    hidden_layer_sizes=(16,),
    sampler="mala",
    n_samples=50,
    burn_in=500,
    thin=5,
    pretrain_iter=500,
    random_state=0,
)
pipe = make_pipeline(StandardScaler(), gibbs)
temperatures = [0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0]
widths = [(), (2,), (8,), (32,), (32, 32)]
grids = [
    ("temperature", {"gibbsmlpregressor__temperature": temperatures}, temperatures),
    (
        "hidden_layer_sizes, temperature='auto'",
        {"gibbsmlpregressor__hidden_layer_sizes": widths, "gibbsmlpregressor__temperature": ["auto"]},
        [str(w) for w in widths],
    ),
]
comparisons = []
for label, grid, values in grids:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SamplerWarning)
        res = compare_with_cv(pipe, grid, X, y, cv=10, random_state=0)
    print(f"GibbsMLPRegressor on load_diabetes (n=442, d=10) over {label}: criterion='waic' vs 10-fold CV")
    # the fits say when their chains have not mixed; one line per kind of warning, with its count
    kinds = {}
    for w in caught:
        if issubclass(w.category, SamplerWarning):
            first = str(w.message).split(":")[0]
            kinds[first] = kinds.get(first, 0) + 1
    for first, count in kinds.items():
        print(f"  SamplerWarning x{count}: {first}")
    print(res.as_table(), end="\n\n")
    comparisons.append((f"GibbsMLPRegressor: {label}", values, res))

mlp = make_pipeline(
    StandardScaler(), MLPRegressor(hidden_layer_sizes=(16,), max_iter=500, random_state=0)
)
alphas = [1e-2, 1.0, 10.0, 100.0]
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)
    res_mlp = compare_with_cv(
        mlp,
        {"mlpregressor__alpha": alphas},
        X,
        (y - y.mean()) / y.std(),
        criterion="lfv",
        lfv_params={"random_state": 0},
        cv=10,
        random_state=0,
    )
print("MLPRegressor (standardized y) over alpha: criterion='lfv' vs 10-fold CV")
print(res_mlp.as_table(), end="\n\n")
comparisons.append(("MLPRegressor: alpha", alphas, res_mlp))

fig, axes = plt.subplots(len(comparisons), 2, figsize=(10, 3.8 * len(comparisons)), squeeze=False)
for (label, grid_values, r), (left, right) in zip(comparisons, axes):
    numeric = not isinstance(grid_values[0], str)
    x = grid_values if numeric else np.arange(len(grid_values))
    left.plot(x, r.criterion, "o-", label="criterion (one fit)")
    sem = r.cv_std / np.sqrt(r.n_splits)
    left.errorbar(x, r.cv_score, yerr=sem, fmt="s--", label="10-fold CV (+/- 1 s.e.)")
    if numeric:
        left.set_xscale("log")
    else:
        left.set_xticks(x, grid_values)
    left.set_xlabel(label.split(": ")[1])
    left.set_ylabel("NLL per example (lower is better)")
    left.set_title(label)
    left.legend()
    right.plot(r.criterion, r.cv_score, "o")
    for value, a, b in zip(grid_values, r.criterion, r.cv_score):
        right.annotate(str(value), (a, b), textcoords="offset points", xytext=(4, 4), fontsize=8)
    lo = min(r.criterion.min(), r.cv_score.min())
    hi = max(r.criterion.max(), r.cv_score.max())
    right.plot([lo, hi], [lo, hi], color="grey", lw=0.8, label="1:1")
    right.set_xlabel("criterion")
    right.set_ylabel("10-fold CV")
    right.set_title(f"Spearman {r.spearman:.2f}, speed-up {r.speedup:.1f}x")
    right.legend()
fig.tight_layout()
out.parent.mkdir(parents=True, exist_ok=True)
fig.savefig(out, dpi=110)
print(f"figure written to {out}")


# the summary the user guide includes: what each method picks, how alike they rank, and the speed-up
names = [
    f"temperature {temperatures[0]:g} ... {temperatures[-1]:g} ({len(temperatures)} values)",
    f"widths at ``temperature=\"auto\"`` ({len(widths)})",
    f"MLPRegressor ``alpha`` ({len(alphas)}), ``\"lfv\"``",
]
rows = [
    [
        name,
        str(values[r.best_index_criterion]),
        str(values[r.best_index_cv]),
        f"{r.spearman:.2f}",
        f"{r.speedup:.1f}x",
        f"{np.nanmin(r.penalty):.3f} - {np.nanmax(r.penalty):.3f}",
    ]
    for name, (_, values, r) in zip(names, comparisons)
]
header = ["grid", "criterion picks", "CV picks", "Spearman", "speed-up", "penalty per example"]
widths_col = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
rule = "  ".join("=" * w for w in widths_col)
lines = [rule, "  ".join(h.ljust(w) for h, w in zip(header, widths_col)), rule]
lines += ["  ".join(str(x).ljust(w) for x, w in zip(row, widths_col)) for row in rows]
lines.append(rule)
table = out.with_name("model_selection_table.rst")
table.write_text(
    ".. written by examples/plot_model_selection.py: do not edit\n\n" + "\n".join(lines) + "\n"
)
print(f"table written to {table}")
