"""Chains and criterion searches on a Dask cluster, through joblib's dask backend.

A ``LocalCluster`` of two worker processes stands in for a cluster: the
work leaves this process, is pickled to the workers and comes back, as it
would on remote machines. Skipped when Dask's ``distributed`` is not
installed (``pip install skgibbs[distributed]``).
"""

import warnings

import joblib
import numpy as np
import pytest
import torch

distributed = pytest.importorskip(
    "distributed", reason="Dask's distributed is not installed (pip install 'skgibbs[distributed]')"
)

from sklearn.datasets import load_diabetes  # noqa: E402

from skgibbs import GibbsMLPRegressor, SamplerWarning, SparseGibbsMLPRegressor  # noqa: E402
from skgibbs.model import MLPSpec  # noqa: E402
from skgibbs.model_selection import CriterionGridSearch  # noqa: E402
from skgibbs.potential import MLPPotential, Prior  # noqa: E402
from skgibbs.samplers import ChainConfig, run_chains  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture(scope="module")
def data():
    X, y = load_diabetes(return_X_y=True)
    return X[:200], y[:200]


def _on_cluster(client, fn):
    """``fn()`` under the dask backend; also the number of tasks the workers ran."""
    with distributed.get_task_stream(client) as stream:
        with joblib.parallel_backend("dask"):
            out = fn()
    return out, len(stream.data)


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
def test_chains_on_the_cluster_repeat_a_local_run(client, data, cls, params):
    X, y = data
    settings = dict(hidden_layer_sizes=(8,), n_chains=4, n_samples=30, burn_in=60, n_jobs=2, random_state=3)
    est = cls(**settings, **params)
    local = _fit(est, X, y)
    local_draws, local_pred = local.samples_.copy(), local.predict(X)
    remote, n_tasks = _on_cluster(client, lambda: _fit(est, X, y))
    assert n_tasks >= 2  # the groups ran on the workers
    np.testing.assert_array_equal(remote.samples_, local_draws)
    np.testing.assert_array_equal(remote.predict(X), local_pred)
    # fitted state is NumPy: the estimator travels to a worker and predicts there as here
    np.testing.assert_array_equal(client.submit(lambda m: m.predict(X), local).result(), local_pred)


def test_unbatched_chains_on_the_cluster_repeat_a_local_run(client):
    # the path of large networks: one chain per job
    gen = torch.Generator().manual_seed(0)
    spec = MLPSpec(3, (6,), "tanh")
    X = torch.randn(80, 3, generator=gen)
    y = torch.sin(X[:, 0]) + 0.1 * torch.randn(80, generator=gen)
    pot, theta0 = MLPPotential(spec, X, y), spec.init_params(gen, 3).float()
    cfg = ChainConfig(sampler="csmala", lam=80.0, rho=0.5, n_samples=20, burn_in=40)
    seeds = [5, 6, 7]
    local = run_chains(pot, theta0, seeds, cfg, prior=Prior(std=1.0), vectorize=False, n_jobs=2)
    remote, n_tasks = _on_cluster(
        client, lambda: run_chains(pot, theta0, seeds, cfg, prior=Prior(std=1.0), vectorize=False, n_jobs=2)
    )
    assert n_tasks >= 3
    np.testing.assert_array_equal(remote.samples, local.samples)
    np.testing.assert_array_equal(remote.step_size, local.step_size)
    assert remote.correction == local.correction


def test_criterion_search_on_the_cluster_picks_the_same_candidate(client, data):
    X, y = data
    est = GibbsMLPRegressor(hidden_layer_sizes=(6,), n_chains=2, n_samples=30, burn_in=60, random_state=0)
    grid = {"temperature": [0.5, 2.0, 8.0]}
    search = CriterionGridSearch(est, grid, n_jobs=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        local = search.fit(X, y)
        local_results, local_best = local.cv_results_["criterion"].copy(), local.best_params_
        remote, n_tasks = _on_cluster(client, lambda: search.fit(X, y))
    assert n_tasks >= 3
    assert remote.best_params_ == local_best
    np.testing.assert_array_equal(remote.cv_results_["criterion"], local_results)
