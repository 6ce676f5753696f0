"""Chains and criterion searches on a cluster, through joblib's Dask and Ray backends.

A Dask ``LocalCluster`` of two worker processes, and a local Ray instance,
stand in for clusters: the work leaves this process, is pickled to the
workers and comes back, as it would on remote machines. Each backend's
tests are skipped with a message when it is not installed: Dask's
``distributed`` comes with the ``test`` extra (``pip install
'skgibbs[distributed]'``); Ray does not (``pip install 'ray[default]'``).
Ray hands a job its arguments from its object store, NumPy arrays
read-only; the chains must still run, with the draws of a local run.
"""

import warnings

import joblib
import numpy as np
import pytest
import torch
from sklearn.datasets import load_diabetes

from skgibbs import GibbsMLPRegressor, SamplerWarning, SparseGibbsMLPRegressor
from skgibbs.model import MLPSpec
from skgibbs.model_selection import CriterionGridSearch
from skgibbs.potential import MLPPotential
from skgibbs.priors import Prior
from skgibbs.samplers import CSMALA, Target, run_chains

pytestmark = pytest.mark.slow


class _Dask:
    name = "dask"

    def __init__(self):
        self.distributed = pytest.importorskip(
            "distributed", reason="Dask's distributed is not installed (pip install 'skgibbs[distributed]')"
        )
        self.cluster = self.distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        )
        self.client = self.distributed.Client(self.cluster)

    def run(self, fn):
        """``fn()`` under the backend, and the number of jobs the workers ran."""
        with self.distributed.get_task_stream(self.client) as stream:
            with joblib.parallel_backend("dask"):
                out = fn()
        return out, len(stream.data)

    def close(self):
        self.client.close()
        self.cluster.close()


class _Ray:
    name = "ray"

    def __init__(self):
        self.ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'ray[default]')")
        from ray.util.joblib import register_ray

        self.ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        register_ray()

    def run(self, fn):
        with joblib.parallel_backend("ray"):
            return fn(), None  # Ray keeps no task stream to count jobs with

    def close(self):
        self.ray.shutdown()


@pytest.fixture(scope="module", params=[_Dask, _Ray], ids=["dask", "ray"])
def backend(request):
    cluster = request.param()
    yield cluster
    cluster.close()


@pytest.fixture(scope="module")
def data():
    X, y = load_diabetes(return_X_y=True)
    return X[:200], y[:200]


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)  # short chains: mixing is not the point here
        return est.fit(X, y)


@pytest.mark.parametrize(
    "cls, params",
    [
        # HMC: joint warm-up here, the sampling of each group on a worker
        (GibbsMLPRegressor, {}),
        # csMALA and reversible jumps: warm-up and sampling of each group on a worker
        (GibbsMLPRegressor, {"sampler": "csmala", "rho": 0.3}),
        (SparseGibbsMLPRegressor, {}),
    ],
    ids=["hmc", "csmala", "rjmcmc"],
)
def test_chains_on_the_cluster_repeat_a_local_run(backend, data, cls, params):
    X, y = data
    settings = dict(
        hidden_layer_sizes=(8,), n_chains=4, n_samples=10, burn_in=20, pretrain_iter=100, n_jobs=2, random_state=3
    )
    est = cls(**settings, **params)
    local = _fit(est, X, y)
    local_draws, local_pred = local.samples_.copy(), local.predict(X)
    remote, n_jobs_run = backend.run(lambda: _fit(est, X, y))
    assert n_jobs_run is None or n_jobs_run >= 2  # the groups ran on the workers
    np.testing.assert_array_equal(remote.samples_, local_draws)
    np.testing.assert_array_equal(remote.predict(X), local_pred)


def test_a_fitted_estimator_predicts_on_a_worker_as_here(backend, data):
    if backend.name != "dask":
        pytest.skip("submits to the Dask client directly")
    X, y = data
    settings = dict(hidden_layer_sizes=(8,), n_chains=2, n_samples=20, burn_in=20, pretrain_iter=100, random_state=0)
    est = _fit(GibbsMLPRegressor(**settings), X, y)
    # fitted state is NumPy: the estimator travels to a worker and predicts there as here
    on_worker = backend.client.submit(lambda m: m.predict(X), est).result()
    np.testing.assert_array_equal(on_worker, est.predict(X))


def test_unbatched_chains_on_the_cluster_repeat_a_local_run(backend):
    # the path of large networks: one chain per job
    gen = torch.Generator().manual_seed(0)
    spec = MLPSpec(3, (6,), "tanh")
    X = torch.randn(80, 3, generator=gen)
    y = torch.sin(X[:, 0]) + 0.1 * torch.randn(80, generator=gen)
    target = Target(MLPPotential(spec, X, y), Prior(std=1.0), 80.0)
    theta0 = spec.init_params(gen, 3).float()
    seeds = [5, 6, 7]

    def run():
        return run_chains(
            target, theta0, seeds, CSMALA(), rho=0.5, n_samples=20, burn_in=40, vectorize=False, n_jobs=2
        )

    local = run()
    remote, n_jobs_run = backend.run(run)
    assert n_jobs_run is None or n_jobs_run >= 3
    np.testing.assert_array_equal(remote.samples, local.samples)
    np.testing.assert_array_equal(remote.step_size, local.step_size)
    assert remote.correction == local.correction
    np.testing.assert_array_equal(remote.n_restarts, local.n_restarts)


def test_criterion_search_on_the_cluster_picks_the_same_candidate(backend, data):
    X, y = data
    settings = dict(hidden_layer_sizes=(6,), n_chains=2, n_samples=10, burn_in=20, pretrain_iter=100, random_state=0)
    est = GibbsMLPRegressor(**settings)
    search = CriterionGridSearch(est, {"temperature": [0.5, 2.0, 8.0]}, n_jobs=2)
    local = _fit(search, X, y)
    local_results, local_best = local.cv_results_["criterion"].copy(), local.best_params_
    remote, n_jobs_run = backend.run(lambda: _fit(search, X, y))
    assert n_jobs_run is None or n_jobs_run >= 3
    assert remote.best_params_ == local_best
    np.testing.assert_array_equal(remote.cv_results_["criterion"], local_results)
