"""Chains and criterion searches in parallel: in this process, in joblib's worker processes, on Dask.

``n_jobs`` splits the chains of a fit into groups (``skgibbs.samplers.chain_groups``) that run as joblib
jobs. On diabetes, the same fits run four ways, and the draws must not depend on where the groups ran:
``n_jobs=None`` (all chains batched in this process); ``n_jobs=2`` with joblib's loky workers; ``n_jobs=2``
on a ``dask.distributed.LocalCluster`` of two single-threaded worker processes with Dask's default worker
environment; the same with the workers started without ``MALLOC_TRIM_THRESHOLD_``. Two kernels: HMC on the
fixed prior at the plug-in temperature, the target these rows were measured on (its warm-up adapts across
chains in this process, its sampling is split), and csMALA on Bernoulli(0.2) batches (all of it split).
Then ``CriterionGridSearch`` over four temperatures, serially and on the clusters, and the ceiling of any
speed-up here: one fit alone against two identical fits at once.

Run ``python -m benchmarks run distributed``; needs ``pip install 'skgibbs[distributed]'``.
"""

import contextlib
import os
import warnings

import joblib
import numpy as np
from sklearn.base import clone

from skgibbs import GibbsMLPRegressor, SamplerWarning
from skgibbs.model_selection import CriterionGridSearch

from .. import Benchmark, Output
from ..common import data
from ..common.stats import timed_fit
from ..common.writer import Page

NAME = "distributed"
KERNELS = {"HMC (default)": {}, "csMALA, rho 0.2": {"sampler": "csmala", "rho": 0.2}}
# the environment of Dask's worker processes: its default, and without MALLOC_TRIM_THRESHOLD_
THREADS = {"OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1}
WORKER_ENV = {"Dask": None, "Dask, tuned": THREADS}


@contextlib.contextmanager
def dask_cluster(Client, LocalCluster, env):
    """A two-worker LocalCluster (one thread each) and its client; ``env`` replaces the workers' env."""
    import dask  # optional: the benchmark requires it, the registry does not

    settings = {} if env is None else {"distributed.nanny.pre-spawn-environ": env}
    saved = dict(os.environ)
    with dask.config.set(settings):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    # the nanny writes the workers' variables into this process's environment and leaves them there,
    # where every process started later (the next cluster's workers, loky's) would inherit them
    os.environ.clear()
    os.environ.update(saved)
    client = Client(cluster)
    client.run(warnings.simplefilter, "ignore", SamplerWarning)  # timed chains: see the R-hat column
    try:
        yield client
    finally:
        client.close()
        cluster.close()


REPEAT = 2  # each time is the shortest of this many fits: the cores are shared with other work
#: the fits' settings over the base estimator's, the fits per time and the worker environments (None: all;
#: a quick run starts one cluster, which runs the same code) and the temperatures of the criterion search
SIZES = {
    "full": {"fit": {"n_samples": 1000}, "repeat": REPEAT, "worker_envs": None, "temperatures": [0.5, 1.0, 2.0, 4.0]},
    "quick": {"fit": {"hidden_layer_sizes": (4,), "n_samples": 5, "burn_in": 5, "pretrain_iter": 10},
              "repeat": 1, "worker_envs": 1, "temperatures": [0.5, 1.0]},
}  # fmt: skip


def timed(est, X, y, repeat=REPEAT, **params):
    """``est.set_params(**params).fit(X, y)`` and its shortest seconds over ``repeat`` fits (warnings caught:
    the tables give R-hat and ESS)."""
    est.set_params(**params)
    return est, min(timed_fit(est, X, y).seconds for _ in range(repeat))


def compute_seconds(tasks, runs):
    """Workers' compute seconds per run in a Dask task stream: summed over jobs, and the longest job."""
    spans = [
        sum(part["stop"] - part["start"] for part in task["startstops"] if part["action"] == "compute")
        for task in tasks
    ]
    return (sum(spans) / runs, max(spans, default=0.0))


def seconds(est, X, y):
    """Seconds of one fit, measured where it runs."""
    return timed(est, X, y, repeat=1)[1]


def concurrency(est, X, y):
    """Seconds of a fit alone, and of each of two identical fits run at once in two processes: the ceiling of
    any two-worker speed-up on this machine."""
    alone = seconds(clone(est), X, y)
    both = joblib.Parallel(n_jobs=2)(joblib.delayed(seconds)(clone(est), X, y) for _ in range(2))
    return alone, float(np.mean(both))


def run(args):
    """Time the fits and searches in one process, with loky and on Dask clusters."""
    from distributed import Client, LocalCluster, get_task_stream

    X, y, _ = data.load("diabetes")
    # HMC on the fixed prior at the plug-in temperature, the defaults the stored times were measured at
    base = dict(hidden_layer_sizes=(50, 50), n_chains=4, sampler="hmc", prior="fixed", temperature="plug-in",
                random_state=0)  # fmt: skip
    base.update(args.size.fit)
    repeat, envs = args.size.repeat, list(WORKER_ENV)[: args.size.worker_envs]
    short = {**base, "n_chains": 2, "n_samples": min(base["n_samples"], 300)}
    settings = {k: str(v) for k, v in base.items()}
    result = {"settings": settings, "fits": {}, "repeat": repeat, "worker_envs": envs}
    search = CriterionGridSearch(GibbsMLPRegressor(**short), {"temperature": args.size.temperatures})
    times, draws, mixing, searches, worker = {}, {}, {}, {}, {}
    alone, beside = concurrency(GibbsMLPRegressor(**short), X, y)
    result["concurrency"] = {"alone": alone, "two_at_once": beside}
    for kernel, extra in KERNELS.items():
        est = GibbsMLPRegressor(**{**base, **extra})
        for name, n_jobs in (("one", None), ("loky", 2)):
            times[kernel, name] = timed(est, X, y, repeat, n_jobs=n_jobs)[1]
            draws[kernel, name] = est.samples_
        mixing[kernel] = (est.rhat_, est.ess_)  # the same chains in law as n_jobs=None's
    searches["serial"] = timed(clone(search), X, y, repeat, n_jobs=None)
    for env in envs:
        with dask_cluster(Client, LocalCluster, WORKER_ENV[env]) as client, joblib.parallel_backend("dask"):
            for kernel, extra in KERNELS.items():
                with get_task_stream(client) as stream:
                    est = GibbsMLPRegressor(**{**base, **extra})
                    est, times[kernel, env] = timed(est, X, y, repeat, n_jobs=2)
                draws[kernel, env] = est.samples_
                # where the time went: the workers' compute seconds per fit (all jobs, and the longest)
                worker[kernel, env] = compute_seconds(stream.data, repeat)
            searches[env] = timed(clone(search), X, y, repeat, n_jobs=2)
    for kernel in KERNELS:
        rhat, ess = mixing[kernel]
        result["fits"][kernel] = {
            **{c: times[kernel, c] for c in ["one", "loky", *envs]},
            "worker_compute_per_fit": {env: worker[kernel, env][0] for env in envs},
            "longest_job": {env: worker[kernel, env][1] for env in envs},
            "same": all(np.array_equal(draws[kernel, "loky"], draws[kernel, env]) for env in envs),
            "rhat": float(np.max(rhat)),
            "ess": float(np.min(ess)),
        }
    serial = searches["serial"][0]
    result["search"] = {"best_params": str(serial.best_params_)}
    for env in envs:
        fitted, secs = searches[env]
        same_criteria = np.array_equal(fitted.cv_results_["criterion"], serial.cv_results_["criterion"])
        same = fitted.best_params_ == serial.best_params_ and bool(same_criteria)
        result["search"][env] = {"seconds": secs, "same": same, "best_params": str(fitted.best_params_)}
    result["search"]["serial"] = searches["serial"][1]
    return {NAME: result}


def report(results):
    """The fit, search and concurrency tables."""
    result = results[NAME]
    n_samples = int(result["settings"]["n_samples"])
    short = min(n_samples, 300)
    alone, beside = result["concurrency"]["alone"], result["concurrency"]["two_at_once"]
    envs = result.get("worker_envs", list(WORKER_ENV))
    rows = []
    for kernel, fit in result["fits"].items():
        cells = [f"{fit[c]:.1f}" for c in ["one", "loky", *envs]]
        longest, speed = max(fit["longest_job"].values()), fit["one"] / min(fit[env] for env in envs)
        mixed = f"{fit['rhat']:.2f} / {fit['ess']:.0f}"
        rows.append([kernel, *cells, f"{longest:.1f}", f"{speed:.2f}", fit["same"], mixed])
    search = result["search"]
    search_rows = [["serial", f"{search['serial']:.1f}", search["best_params"], "-"]]
    for env in envs:
        best = search[env].get("best_params", search["best_params"])  # stored since the harness
        search_rows.append([f"n_jobs=2, {env}", f"{search[env]['seconds']:.1f}", best, search[env]["same"]])
    fit_header = ["kernel", "n_jobs=None", "n_jobs=2, loky", *(f"n_jobs=2, {e}" for e in envs),
                  "longest job on a worker", "speed-up", "same draws", "R-hat / ESS"]  # fmt: skip
    tables = [
        (f"Fit seconds, diabetes, (50, 50) network, 4 chains x {n_samples} draws", fit_header, rows),
        (f"CriterionGridSearch over four temperatures (2 chains x {short} draws each)",
         ["run", "seconds", "best parameters", "same criteria"], search_rows),
        (f"The ceiling: one fit (HMC, 2 chains x {short} draws) alone and two at once",
         ["fit alone, s", "each of two at once, s", "slow-down"],
         [[f"{alone:.1f}", f"{beside:.1f}", f"{beside / alone:.2f}"]]),
    ]  # fmt: skip
    repeat = result.get("repeat", REPEAT)
    notes = [
        f"Every time is the shortest of {repeat} runs. Speed-up is the one-process time over the "
        "faster Dask time; 'longest job on a worker' is the longest compute span of one group on a "
        "Dask worker (the rest of a Dask fit is this process's work: pre-training, HMC's warm-up, "
        "shipping). 'Same draws' compares the "
        "loky and both Dask runs bit for bit; n_jobs=None batches all chains in one group, so its "
        "draws differ from the split runs' in floating point, not in law. R-hat / ESS (function "
        "values at the training inputs) are those of the loky fit: these chains are timed, not mixed. "
        "Two cores, shared with other work: the last table measures how much two fits at once slow "
        "each other down, a bound on any two-worker speed-up here; on a cluster every worker has "
        "cores of its own.",
        "Dask's nanny starts its workers with MALLOC_TRIM_THRESHOLD_=65536 (its "
        "distributed.nanny.pre-spawn-environ setting). Setting it turns off glibc's adaptive mmap "
        "threshold, so every temporary tensor of more than 128 KiB is mapped and unmapped again, which "
        "slows the chains' steps; 'Dask, tuned' starts the workers without it. The nanny also "
        "leaves the variable in the environment of the process that started the cluster, so that "
        "processes started later inherit it; this script restores that environment after each start.",
    ]
    return [Page(NAME, "Chains and searches in parallel: one process, loky, Dask", tables, notes)]


BENCHMARK = Benchmark(
    name=NAME,
    kind="performance",
    title="Chains and searches in parallel: one process, loky, Dask",
    outputs=(Output(NAME, "Chains and searches in parallel: one process, loky, Dask"),),
    run=run,
    report=report,
    requires=("dask", "distributed"),
    sizes=SIZES,
)
