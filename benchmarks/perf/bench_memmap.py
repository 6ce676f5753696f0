"""Data larger than memory: a fit's minibatch path on 10^7 rows of a memory-mapped ``.npy``.

``fit`` takes ``X = np.load(path, mmap_mode="r")`` without copying it. This writes ``n = 10^7`` rows of
Friedman #1 (20 inputs, noise 1) to a temporary float32 ``.npy`` (800 MB; ``y`` in a float64 one beside it)
and measures, for ``GibbsMLPRegressor(sampler=SGLD(step_size=0.1 / n), rho=1000 / n)`` (one chain, no
pre-training), each part in a fresh process: the validation pass (``build_problem``, the file's pages first
dropped from the page cache); an epoch of the same random batches through a plain torch loop and through the
library's ``loss_sum_and_grad``, in rounds that alternate which runs first; an end-to-end ``fit`` with 10
burn-in steps and 2 draws. Memory: the private and the file-backed resident memory, polled every 2 ms.

Run ``python -m benchmarks run memmap`` (five to ten minutes on one core, 900 MB of temporary disk).
"""

import concurrent.futures
import multiprocessing
import os
import resource
import shutil
import tempfile
import threading
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import make_friedman1

from .. import Benchmark, Output
from ..common.environment import loads
from ..common.writer import Page

NAME = "memmap"
N_FEATURES = 20
WRITE_BLOCK = 1_000_000
ROUNDS = 10
#: rows of the file (``--rows`` overrides) and the batch sizes timed
SIZES = {
    "full": {"rows": 10_000_000, "batch_sizes": [1000, 100_000]},
    "quick": {"rows": 20_000, "batch_sizes": [1000]},
}


def add_arguments(parser):
    parser.add_argument("--rows", type=int, help="rows of the file (default 10^7; with --quick 2 * 10^4)")
    parser.add_argument("--tmpdir", help="where the temporary .npy files go (default: the system's)")


def write_friedman1(directory, n, seed=0):
    """``X.npy`` (float32, ``(n, 20)``) and ``y.npy`` (float64) of Friedman #1, written block by block."""
    X = np.lib.format.open_memmap(directory / "X.npy", mode="w+", dtype=np.float32, shape=(n, N_FEATURES))
    y = np.lib.format.open_memmap(directory / "y.npy", mode="w+", dtype=np.float64, shape=(n,))
    for block, start in enumerate(range(0, n, WRITE_BLOCK)):
        stop = min(start + WRITE_BLOCK, n)
        Xb, yb = make_friedman1(stop - start, n_features=N_FEATURES, noise=1.0, random_state=seed + block)
        X[start:stop], y[start:stop] = Xb, yb
    X.flush()
    y.flush()
    del X, y
    return directory / "X.npy", directory / "y.npy"


def _drop_from_page_cache(path):
    """Ask the system to forget the file's cached pages (Linux); whether it could."""
    if not hasattr(os, "posix_fadvise"):
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return True


def _status_kb():
    """``{"anon": RssAnon, "file": RssFile}`` in kB from /proc/self/status, or None."""
    try:
        with open("/proc/self/status") as fh:
            fields = dict(line.split(":", 1) for line in fh.read().splitlines() if ":" in line)
    except OSError:
        return None
    return {key: int(fields[name].split()[0]) for key, name in (("anon", "RssAnon"), ("file", "RssFile"))}


class MemoryWatch:
    """Peak private and file-backed resident memory while the block runs, polled every 2 ms."""

    def __enter__(self):
        self.start = self.peak = _status_kb()  # the poll replaces the peak, never changes it in place
        self._running = True
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        self.t0 = time.perf_counter()
        return self

    def _poll(self):
        while self._running:
            now = _status_kb()
            if now is not None:
                self.peak = {k: max(self.peak[k], now[k]) for k in now}
            time.sleep(0.002)

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.t0
        self._running = False
        self._thread.join()

    def summary(self):
        """Peaks in MB: private, and private and file-backed above their values at the start."""
        if self.peak is None:
            return {"private_mb": None, "private_added_mb": None, "file_added_mb": None}
        return {
            "private_mb": self.peak["anon"] / 1024,
            "private_added_mb": (self.peak["anon"] - self.start["anon"]) / 1024,
            "file_added_mb": (self.peak["file"] - self.start["file"]) / 1024,
        }


def _maxrss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def _open(path_X, path_y, threads, **settings):
    """The memmaps and the estimator; a step of order 1 / n keeps SGLD stable (lambda = n / temperature)."""
    import torch

    from skgibbs import GibbsMLPRegressor
    from skgibbs.samplers import SGLD

    torch.set_num_threads(threads)
    X, y = np.load(path_X, mmap_mode="r"), np.load(path_y, mmap_mode="r")
    n = X.shape[0]
    est = GibbsMLPRegressor(sampler=SGLD(step_size=0.1 / n), rho=min(1.0, 1000 / n), n_chains=1,
                            pretrain_iter=0, random_state=0, **settings)  # fmt: skip
    return X, y, est


def measure_epochs(path_X, path_y, batch_sizes, threads, drop_cache, seed=0):
    """Validation pass, then an epoch of the plain loop and of the library's path per batch size."""
    import torch

    from skgibbs.potential import Batch
    from skgibbs.problem import build_problem

    X, y, est = _open(path_X, path_y, threads)
    n = X.shape[0]
    dropped = drop_cache and _drop_from_page_cache(path_X)
    with MemoryWatch() as build:
        problem = build_problem(est, X, y)
    out = {"n": n, "page_cache_dropped": dropped, "validate_s": build.seconds}
    out["validate_memory"] = build.summary()
    target, theta, yt = problem.target, problem.theta0[:1], problem.y
    mean = torch.as_tensor(problem.x_mean, dtype=torch.float32)
    scale = torch.as_tensor(problem.x_scale, dtype=torch.float32)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        sizes = [N_FEATURES, *problem.spec.hidden_layer_sizes, 1]
        layers = []
        for a, b in zip(sizes[:-1], sizes[1:]):
            layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
        net = torch.nn.Sequential(*layers[:-1])

    def plain(idx):
        xb = (torch.from_numpy(X[idx]) - mean) / scale
        net.zero_grad(set_to_none=True)
        ((yt[torch.from_numpy(idx)] - net(xb)[:, 0]) ** 2).sum().backward()

    def library(idx):
        target.loss_sum_and_grad(theta, Batch(torch.from_numpy(idx)[None], None, torch.tensor([len(idx)])))

    out["epochs"] = []
    with MemoryWatch() as epochs:
        for size in batch_sizes:
            per_round = max(1, n // (size * ROUNDS))
            times = {"plain": [], "library": []}
            for r in range(ROUNDS):
                order = (("plain", plain), ("library", library))
                for name, fn in order if r % 2 == 0 else order[::-1]:
                    rng = np.random.default_rng([seed, size, r])  # the same batches for both loops
                    start = time.perf_counter()
                    for _ in range(per_round):
                        fn(rng.integers(0, n, size))
                    times[name].append(time.perf_counter() - start)
            to_epoch = n / (size * per_round * ROUNDS)
            ratios = np.array(times["library"]) / np.array(times["plain"])
            out["epochs"].append({
                "batch": size, "batches_timed": per_round * ROUNDS,
                "plain_epoch_s": sum(times["plain"]) * to_epoch, "library_epoch_s": sum(times["library"]) * to_epoch,
                "ratio_median": float(np.median(ratios)), "ratio_min": float(ratios.min()),
                "ratio_max": float(ratios.max()),
            })  # fmt: skip
    return {**out, "epoch_memory": epochs.summary(), "maxrss_mb": _maxrss_mb()}


def measure_fit(path_X, path_y, threads):
    """A short end-to-end ``fit`` on the memmap: its time and memory."""
    from skgibbs import SamplerWarning

    X, y, est = _open(path_X, path_y, threads, n_samples=2, burn_in=10, thin=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        with MemoryWatch() as fit:
            est.fit(X, y)
    return {"fit_s": fit.seconds, "fit_memory": fit.summary(), "maxrss_mb": _maxrss_mb()}


def _in_fresh_process(fn, *args):
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(fn, *args).result()


def run(args):
    n = args.rows or args.size.rows
    parent = Path(args.tmpdir or tempfile.gettempdir())
    need, free = n * N_FEATURES * 4 + n * 8, shutil.disk_usage(parent).free
    if free < 2 * need:
        raise SystemExit(
            f"{parent} has {free / 2**30:.1f} GiB free; the files need {need / 2**30:.1f} GiB, and as much "
            "again should stay free"
        )
    result = {"n": n, "n_features": N_FEATURES, "threads": args.threads}
    directory = Path(tempfile.mkdtemp(prefix="skgibbs-memmap-", dir=parent))
    try:
        start = time.perf_counter()
        path_X, path_y = write_friedman1(directory, n, seed=args.seed)
        result["write_s"] = time.perf_counter() - start
        result["file_mb"] = path_X.stat().st_size / 2**20
        sizes = args.size.batch_sizes
        result.update(_in_fresh_process(measure_epochs, path_X, path_y, sizes, args.threads, True, args.seed))
        result["fit"] = _in_fresh_process(measure_fit, path_X, path_y, args.threads)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    for row in result["epochs"]:
        print({k: row[k] for k in ("batch", "plain_epoch_s", "library_epoch_s", "ratio_median")}, flush=True)
    return {NAME: result}


def _mb(value):
    return "n/a" if value is None else f"{value:,.0f}"


def report(results):
    """The epoch times, their ratio and the memory of each part."""
    r = results[NAME]
    n, d = r["n"], r["n_features"]
    copies_mb = n * d * (8 + 4 + 4) / 2**20  # float64 X, float32 Xt and X with a column of ones, in memory
    epoch_header = ["batch rows", "plain torch loop: s / epoch", "library path: s / epoch",
                    "ratio (median over rounds)", "ratio range"]  # fmt: skip
    epoch_rows = [
        [f"{e['batch']:,}", f"{e['plain_epoch_s']:.1f}", f"{e['library_epoch_s']:.1f}", f"{e['ratio_median']:.2f}",
         f"{e['ratio_min']:.2f}-{e['ratio_max']:.2f}"]
        for e in r["epochs"]
    ]  # fmt: skip
    memory_header = ["part", "time (s)", "private memory, peak (MB)", "of which added by the part (MB)",
                     "file pages mapped by the part, peak (MB)"]  # fmt: skip
    parts = [
        ("validation and set-up (build_problem)", r["validate_s"], r["validate_memory"]),
        ("epochs (both loops, every batch size)", None, r["epoch_memory"]),
        ("fit: SGLD, 1 chain, 10 + 2 steps", r["fit"]["fit_s"], r["fit"]["fit_memory"]),
    ]
    memory_rows = [
        [part, "" if seconds is None else f"{seconds:.1f}",
         *(_mb(m[k]) for k in ("private_mb", "private_added_mb", "file_added_mb"))]
        for part, seconds, m in parts
    ]  # fmt: skip
    if loads(r) is not None:
        load = "{:.1f} before and {:.1f} after the run".format(*loads(r))
    else:  # stored by the benchmark before the harness recorded the load
        load = ", ".join(f"{x:.1f}" for x in r["load_average"]) + " (before, between and after the parts)"
    cache = "dropped from" if r.get("page_cache_dropped") else "possibly still in"
    notes = [
        f"n = {n:,} rows of Friedman #1 ({d} inputs, noise 1) in a float32 .npy of {r['file_mb']:,.0f} MB, "
        f"memory-mapped; y in a float64 .npy. Default 20-100-100-1 ReLU network, one chain, float32, "
        f"{r['threads']} torch thread(s); load average {load}. "
        f"Writing the files took {r['write_s']:.0f} s.",
        "An epoch is n / b batches of b rows drawn uniformly with replacement; both loops see the same "
        f"batches, in {ROUNDS} rounds that alternate which loop runs first, and the epoch time is the sum "
        "over the rounds. The plain loop reads the rows by NumPy fancy indexing, standardizes them and "
        "runs forward and backward of an nn.Sequential; the library path is the target's "
        "loss_sum_and_grad on the batch (its rows read from the memmap by the fit's row source, "
        "standardized in float64 as an in-memory fit does, and a hand-written backward pass). The "
        "ratio column is library / plain per round: below 2 meets the target of at most twice the plain "
        "loop.",
        f"Validation: the file's pages were {cache} the page cache before it, so its time includes "
        "reading the file from disk. Private memory is what the process allocated (Python, torch, y "
        f"and its float32 copy, one block of X at a time); an in-memory fit of these data would hold "
        f"{copies_mb:,.0f} MB of copies of X alone (the float64 array, the standardized float32 tensor "
        "and its copy with a column of ones). File pages mapped are the pages of the memmap (and of "
        "libraries loaded on the way) that the part brought into the process: shared with the page "
        "cache and reclaimable, they reach the file's size once every row has been read.",
        "The fit's time and memory include its summaries on all n training rows (noise variance, "
        "R-hat, credible radius, WAIC): where those read X whole rather than in row chunks, the "
        "private memory of the fit shows it.",
    ]
    tables = [("Time per epoch", epoch_header, epoch_rows), ("Memory", memory_header, memory_rows)]
    return [Page(NAME, "Fits on a memory-mapped .npy", tables, notes)]


BENCHMARK = Benchmark(
    name=NAME,
    kind="performance",
    title="Fits on a memory-mapped .npy: memory, validation pass and time per epoch",
    outputs=(Output(NAME, "Fits on a memory-mapped .npy"),),
    run=run,
    report=report,
    add_arguments=add_arguments,
    sizes=SIZES,
)
