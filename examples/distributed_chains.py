"""
Chains and a criterion search on a Dask cluster
===============================================

Groups of chains (``n_jobs``) and the candidates of
:class:`~skgibbs.model_selection.CriterionGridSearch` are joblib jobs, so
inside ``joblib.parallel_backend("dask")`` they run on the workers of a Dask
cluster. This script starts a local cluster of two worker processes (it
stands in for remote machines: the work is pickled to other processes and
back) and

1. fits a :class:`~skgibbs.GibbsMLPRegressor` with four chains in two groups,
   locally and on the cluster, and checks that the draws are the same bit
   for bit;
2. ranks four temperatures by WAIC with ``CriterionGridSearch`` on the
   cluster, one candidate per job.

The workers are started without Dask's default ``MALLOC_TRIM_THRESHOLD_``,
which made the chains' jobs in a worker about twice as slow in
``benchmarks/perf/bench_distributed.py`` (see the user guide's page on
distributed execution).

Run ``python examples/distributed_chains.py`` (about a minute on two cores);
it needs ``pip install 'skgibbs[distributed]'``.
"""

import time

import joblib
import numpy as np
import torch
from sklearn.datasets import load_diabetes

from skgibbs import GibbsMLPRegressor
from skgibbs.model_selection import CriterionGridSearch

torch.set_num_threads(1)


def main():
    try:
        import dask
        from dask.distributed import Client, LocalCluster
    except ImportError:
        print("This example needs Dask: pip install 'skgibbs[distributed]'")
        return

    X, y = load_diabetes(return_X_y=True)
    reg = GibbsMLPRegressor(hidden_layer_sizes=(16,), n_chains=4, n_samples=300, n_jobs=2, random_state=0)

    start = time.perf_counter()
    local = reg.fit(X, y).samples_
    print(f"local fit, 4 chains in 2 groups: {time.perf_counter() - start:.1f} s")
    print(f"  rhat_ = {reg.rhat_:.3f}, ess_ = {reg.ess_:.0f} (function values at the training inputs)")

    workers_env = {"OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1}
    with dask.config.set({"distributed.nanny.pre-spawn-environ": workers_env}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
    with cluster, Client(cluster) as client:
        print(f"cluster: {len(client.scheduler_info()['workers'])} worker processes")
        with joblib.parallel_backend("dask"):
            start = time.perf_counter()
            remote = reg.fit(X, y).samples_
            print(f"the same fit on the cluster: {time.perf_counter() - start:.1f} s")
            print(f"  draws identical to the local fit: {np.array_equal(local, remote)}")

            search = CriterionGridSearch(
                GibbsMLPRegressor(hidden_layer_sizes=(16,), n_samples=300, random_state=0),
                {"temperature": [0.5, 1.0, 2.0, 4.0]},
                criterion="waic",
                n_jobs=-1,
            )
            start = time.perf_counter()
            search.fit(X, y)  # warnings raised on the workers go to the workers' logs
            print(f"CriterionGridSearch, 4 candidates on the cluster: {time.perf_counter() - start:.1f} s")
    res = search.cv_results_
    for params, value, rank in zip(res["params"], res["criterion"], res["rank_criterion"]):
        print(f"  temperature={params['temperature']:<4g} WAIC per example {value:.4f}  rank {rank}")
    best = search.best_estimator_
    print(f"best: {search.best_params_}; its rhat_ = {best.rhat_:.3f}, ess_ = {best.ess_:.0f}")


if __name__ == "__main__":  # worker processes import this file: start the cluster only here
    main()
