"""Chains and a criterion search through Ray's joblib backend.

Ray hands a job its arguments from its object store, NumPy arrays
read-only; the chains must still run, with the draws of a local run.
Skipped when Ray is not installed (it is not in the test extra: ``pip
install 'ray[default]'`` to run these).
"""

import warnings

import joblib
import numpy as np
import pytest
from sklearn.datasets import load_diabetes

from skgibbs import GibbsMLPRegressor, SamplerWarning, SparseGibbsMLPRegressor
from skgibbs.model_selection import CriterionGridSearch

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'ray[default]')")
ray_joblib = pytest.importorskip("ray.util.joblib")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ray_backend():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray_joblib.register_ray()
    yield
    ray.shutdown()


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)  # short chains: mixing is not the point here
        return est.fit(X, y)


@pytest.mark.parametrize(
    "cls, params",
    [
        (GibbsMLPRegressor, {}),
        (GibbsMLPRegressor, {"sampler": "csmala", "rho": 0.3}),
        (SparseGibbsMLPRegressor, {}),
    ],
    ids=["hmc", "csmala", "rjmcmc"],
)
def test_chains_on_ray_repeat_a_local_run(ray_backend, cls, params):
    X, y = load_diabetes(return_X_y=True)
    settings = dict(hidden_layer_sizes=(8,), n_chains=4, n_samples=30, burn_in=60, n_jobs=2, random_state=3)
    est = cls(**settings, **params)
    local = _fit(est, X[:200], y[:200]).samples_.copy()
    with joblib.parallel_backend("ray"):
        remote = _fit(est, X[:200], y[:200]).samples_
    np.testing.assert_array_equal(remote, local)


def test_criterion_search_on_ray_picks_the_same_candidate(ray_backend):
    X, y = load_diabetes(return_X_y=True)
    est = GibbsMLPRegressor(hidden_layer_sizes=(6,), n_chains=2, n_samples=30, burn_in=60, random_state=0)
    search = CriterionGridSearch(est, {"temperature": [0.5, 2.0, 8.0]}, n_jobs=2)
    local = _fit(search, X[:200], y[:200])
    best, criteria = local.best_params_, local.cv_results_["criterion"].copy()
    with joblib.parallel_backend("ray"):
        remote = _fit(search, X[:200], y[:200])
    assert remote.best_params_ == best
    np.testing.assert_array_equal(remote.cv_results_["criterion"], criteria)
