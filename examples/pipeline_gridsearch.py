"""
A Gibbs-posterior network in a scikit-learn pipeline
====================================================

:class:`skgibbs.GibbsMLPRegressor` is an ordinary scikit-learn regressor: it
goes into a :class:`~sklearn.pipeline.Pipeline`, is cloned and refitted by
:class:`~sklearn.model_selection.GridSearchCV`, and is scored by R^2.
:func:`skgibbs.pipeline.make_pipeline` builds scikit-learn's pipeline with
the library's methods (``predict_interval``, ``predict_samples``,
``sample_y``, ``credible_radius``) forwarded through the transformers. This
script

1. fits ``make_pipeline(StandardScaler(), GibbsMLPRegressor(...))`` on the
   diabetes data of scikit-learn, checks the held-out coverage of the 90%
   predictive and credible intervals,
2. saves the fitted pipeline with :func:`skgibbs.persistence.dump` (skops,
   when installed) and loads it back, and
3. cross-validates ``temperature`` and ``rho`` with ``GridSearchCV``.

On 330 training examples a stochastic batch (``rho < 1``) saves nothing and
its surrogate posterior is far from the Gibbs posterior; the estimator says
so with a :class:`~skgibbs.SamplerWarning` for those candidates. The script
collects these warnings and prints a summary instead of one line per fit.

Run ``python examples/pipeline_gridsearch.py``; it takes about five minutes
on one CPU core (its nineteen fits).
"""

import importlib.util
import os
import tempfile
import warnings

import numpy as np
import torch
from sklearn.datasets import load_diabetes
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.preprocessing import StandardScaler

from skgibbs import GibbsMLPRegressor, SamplerWarning
from skgibbs.pipeline import make_pipeline

torch.set_num_threads(1)

X, y = load_diabetes(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)

# Cheap settings: one hidden layer of 16 units, short chains. rho=1.0 is
# the full training set (sampler="auto": MCLMC under the learned ARD defaults); rho < 1 is csMALA.
cheap = {
    "hidden_layer_sizes": (16,),
    "n_samples": 50,
    "burn_in": 500,
    "thin": 5,
    "pretrain_iter": 500,
    "random_state": 0,
}
pipe = make_pipeline(StandardScaler(), GibbsMLPRegressor(temperature="auto", rho=1.0, **cheap))
pipe.fit(X_train, y_train)
reg = pipe[-1]

# predict's keyword arguments go to the last step, and so do the library's
# own methods: the pipeline scales X_test, then asks the network.
y_mean, y_std = pipe.predict(X_test, return_std=True)
_, y_pis = pipe.predict_interval(X_test, confidence_level=0.9)  # shape (n, 2, 1)
_, f_pis = pipe.predict_interval(X_test, confidence_level=0.9, kind="credible")


def coverage(y_true, pis):
    return float(np.mean((pis[:, 0, 0] <= y_true) & (y_true <= pis[:, 1, 0])))


print(
    "pipeline: StandardScaler -> GibbsMLPRegressor(rho=1.0, temperature='auto'): "
    f"sampler_name_ = {reg.sampler_name_!r}"
)
print(f"  rhat_ = {reg.rhat_:.3f}, ess_ = {reg.ess_:.0f} (function values at the training inputs)")
print(f"  temperature_ = {reg.temperature_:.3f} ({reg.temperature_source_}: 2 sigma^2, standardized scale)")
print(f"  prior_ = {reg.prior_!r}, step_size_ = {np.array2string(reg.step_size_, precision=3)}")
print(f"  held-out R^2 = {pipe.score(X_test, y_test):.3f}")
print(
    f"  held-out coverage of the 90% predictive interval = {coverage(y_test, y_pis):.3f}"
    f"  (mean width {np.mean(y_pis[:, 1, 0] - y_pis[:, 0, 0]):.1f})"
)
print(
    f"  held-out coverage of the 90% credible interval   = {coverage(y_test, f_pis):.3f}"
    f"  (mean width {np.mean(f_pis[:, 1, 0] - f_pis[:, 0, 0]):.1f}; f only, so it must undercover y)"
)
print(
    f"  mean predictive std = {y_std.mean():.1f}, sqrt(noise_variance_) = {np.sqrt(reg.noise_variance_):.1f}"
)

# Saved and loaded back: through skops.io when it is installed (no code runs
# on loading, only the listed types are rebuilt), else through pickle.
if importlib.util.find_spec("skops") is not None:
    from skgibbs.persistence import dump, load

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "pipeline.skops")
        dump(pipe, path)
        loaded = load(path)
    same = np.array_equal(loaded.predict_interval(X_test, confidence_level=0.9)[1], y_pis)
    print(f"  saved with skgibbs.persistence.dump and loaded: same intervals = {same}")
else:
    print("  (skops is not installed: pip install 'skgibbs[persist]' to save with skgibbs.persistence)")

# Cross-validated temperature and rho. The temperature is on the
# standardized scale of y (2 sigma^2 is the Bayesian posterior).
grid = {
    "gibbsmlpregressor__temperature": [1.0, 4.0, 16.0],
    "gibbsmlpregressor__rho": [0.5, 1.0],
}
search = GridSearchCV(make_pipeline(StandardScaler(), GibbsMLPRegressor(**cheap)), grid, cv=3)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", SamplerWarning)
    search.fit(X_train, y_train)

print("\nGridSearchCV, 3-fold, R^2:")
res = search.cv_results_
for params, mean, std in zip(res["params"], res["mean_test_score"], res["std_test_score"]):
    T, rho = params["gibbsmlpregressor__temperature"], params["gibbsmlpregressor__rho"]
    print(f"  temperature={T:<5g} rho={rho:<4g}  R^2 = {mean:6.3f} +/- {std:.3f}")
best = search.best_params_
print(
    f"best: temperature={best['gibbsmlpregressor__temperature']:g}, "
    f"rho={best['gibbsmlpregressor__rho']:g}; held-out R^2 = {search.score(X_test, y_test):.3f}"
)

warned = [w for w in caught if issubclass(w.category, SamplerWarning)]
if warned:
    print(
        f"\n{len(warned)} SamplerWarnings in {len(res['params']) * search.n_splits_ + 1} fits; the first:"
    )
    print(f"  {warned[0].message}")
