"""Shared set-up of the paper 000 §5 reproductions (Table 2 and Fig. 6).

Paper 000 §5 samples a 1 -> 100 -> 100 -> 1 ReLU network (Q = 10401) on the
data-gap regression problem with MALA, sMALA and csMALA, started from a
pre-trained network, with the parameters of its Table 1:

======  ==============  ==============  ==============
param   MALA            sMALA           csMALA
======  ==============  ==============  ==============
lambda  n               n rho           n (2 - rho)
gamma   1e-4            1e-4            1e-4 / rho
s       0.2 / sqrt(Q)   0.2 / sqrt(Q)   0.2 / sqrt(Q)
======  ==============  ==============  ==============

The paper's proposal is ``N(theta - gamma grad R, s^2 I)`` with ``R`` the
method's normalised batch risk, while skgibbs writes
``N(theta - h grad U_B, s^2 I)`` with ``U_B = lambda_batch R``; the paper's
``gamma`` is therefore ``h = gamma / lambda_batch``, with ``lambda_batch``
the inverse temperature that multiplies the batch risk (``lambda'`` for a
compensated csMALA). ``proposal_std`` is the float ``s``, so nothing is
adapted.

Two temperature conventions are run:

* ``"paper"`` -- Table 1 as printed: each method its own ``lambda`` and
  ``compensate=False`` (csMALA puts ``lambda = n (2 - rho)`` itself into its
  batch terms);
* ``"compensated"`` -- skgibbs' convention: one target ``exp(-n R_n)`` for
  all three (``lambda = n``), csMALA with ``compensate=True``, i.e.
  ``lambda' = lambda (a + 1 - rho) / a``, ``a = rho**(1 - zeta)``.

Chain summaries (posterior mean and draw distances on the validation inputs,
acceptance, restarts, ...) are cached on disk, keyed by every setting and by
a hash of the sampler sources, so that Table 2 and Fig. 6 share the chains
they have in common.
"""

import sys
import dataclasses
import functools
import hashlib
import inspect
import json
import math
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from joblib import Parallel, delayed

import skgibbs
from skgibbs.credible import posterior_quantile
from skgibbs.datasets import gap_regression_function, make_gap_regression
from skgibbs.model import MLPSpec
from skgibbs.potential import MLPPotential
from skgibbs.samplers import CSMALA, MALA, SMALA, Target, run_chains, solve_correction, surrogate_constants

from .tables import rst_table  # noqa: F401  (the reproductions use P.rst_table)


METHODS = ("mala", "smala", "csmala")
MODES = ("paper", "compensated")
MODE_LABELS = {
    "paper": "A: Table 1 temperatures",
    "compensated": "B: one temperature, lambda = n",
}
# Paper 000, Table 2: tau_alpha * 1e3 (alpha = 0.005), mean +- sd over 10 chains.
PAPER_TABLE2 = {
    0.1: {"mala": (1.42, 0.16), "smala": (13.5, 1.4), "csmala": (7.72, 0.82)},
    0.3: {"mala": (1.10, 0.15), "smala": (3.70, 0.51), "csmala": (2.15, 0.23)},
    0.5: {"mala": (1.28, 0.11), "smala": (2.76, 0.19), "csmala": (1.91, 0.36)},
}


@dataclasses.dataclass(frozen=True)
class Setting:
    """Problem, pre-training and proposal constants (paper 000 §5 unless noted).

    ``adam_steps`` is not in the paper: Adam steps after the paper's SGD
    pre-training, standing in for the optimisation that the paper's burn-in
    of ``1e5 / rho`` steps performs and that the reduced burn-in cannot.
    """

    noise: float = 0.02
    hidden: tuple = (100, 100)
    sgd_steps: int = 2000
    sgd_lr: float = 1e-3
    adam_steps: int = 3000
    adam_lr: float = 1e-3
    pretrain_batch: int = 1000
    n_val: int = 10000
    val_seed: int = 999
    s_total: float = 0.2
    gamma: float = 1e-4
    restart_after: int = 100
    correction_every: int = 100
    dtype: str = "float32"


@dataclasses.dataclass(frozen=True)
class Lengths:
    """Burn-in, gap ``c`` and number of draws ``N`` of Alg. 1.

    The burn-in is ``b = burn_in / rho`` as in Table 1 (where
    ``burn_in = 1e5``); MALA, whose chain does not depend on rho here, gets
    the burn-in of ``rho = 0.5``, the shortest of the stochastic chains.
    """

    burn_in: int
    gap: int
    n_draws: int

    def burn_in_for(self, rho):
        return round(self.burn_in / min(float(rho), 0.5))

    def n_steps(self, rho):
        return self.burn_in_for(rho) + self.gap * self.n_draws


def paper_lambda(method, n, rho):
    """Inverse temperature of Table 1: ``n``, ``n rho`` or ``n (2 - rho)``."""
    return {"mala": n, "smala": n * rho, "csmala": n * (2.0 - rho)}[method] * 1.0


def effective_lambda(method, mode, n, rho, zeta):
    """First-order inverse temperature of the surrogate a run samples.

    sMALA's surrogate (2.10) behaves like ``exp(-lambda R_n)`` to first order
    in ``lambda l_i / (n rho)``; csMALA's ``prod_i (a exp(-lambda' l_i / n) +
    1 - rho)`` (2.12 with weight ``zeta``) like ``exp(-lambda'' R_n)`` with
    ``lambda'' = lambda' a / (a + 1 - rho)``, ``a = rho**(1 - zeta)``.
    """
    lam = n * 1.0 if mode == "compensated" else paper_lambda(method, n, rho)
    if method != "csmala" or rho >= 1.0:
        return lam
    _, _, lam_batch = surrogate_constants("csmala", lam, n, rho, zeta, mode == "compensated")
    a = rho ** (1.0 - zeta)
    return lam_batch * a / (a + 1.0 - rho)


def chain_config(method, rho, mode, n, mean_risk, setting, lengths):
    """The sampler object of one run, its ``run_chains`` settings and the mapped constants.

    ``mean_risk`` (the full-data risk at the start) fixes the csMALA
    ``lambda'`` used to convert the paper's ``gamma`` into ``h``; the drift
    ``gamma grad R`` is tiny next to the noise ``s xi`` anyway.
    """
    Q = MLPSpec(1, setting.hidden).n_params
    rho = 1.0 if method == "mala" else rho
    compensate = mode == "compensated"
    lam = n * 1.0 if compensate else paper_lambda(method, n, rho)
    gamma = setting.gamma / rho if method == "csmala" else setting.gamma  # Table 1
    lam_batch = lam
    if method == "csmala" and rho < 1.0:
        zeta0 = solve_correction(mean_risk, lam, n, rho, compensate=compensate)
        lam_batch = surrogate_constants("csmala", lam, n, rho, zeta0, compensate)[2]
    # h and s both fixed: nothing adapts
    s = setting.s_total / math.sqrt(Q)  # Table 1: s = 0.2 / sqrt(Q)
    proposal = {"step_size": gamma / lam_batch, "proposal_std": s}
    if method == "mala":
        sampler = MALA(**proposal)
    elif method == "smala":
        sampler = SMALA(**proposal, restart_after=setting.restart_after)
    else:
        sampler = CSMALA(
            **proposal,
            restart_after=setting.restart_after,
            correction="auto",
            correction_every=setting.correction_every,
            compensate=compensate,
        )
    run = {"rho": rho, "n_samples": lengths.n_draws, "burn_in": lengths.burn_in_for(rho), "thin": lengths.gap}
    return sampler, run, {"lambda": lam, "gamma": gamma, "lambda_batch_start": lam_batch}


# -- data and pre-training ------------------------------------------------------------
def _dtype(setting):
    return getattr(torch, setting.dtype)


def validation_set(setting):
    """10000 validation points from the same intervals, with and without noise."""
    X, y = make_gap_regression(setting.n_val, noise=setting.noise, random_state=setting.val_seed)
    return X, y, gap_regression_function(X[:, 0])


def training_set(n, replicate, setting):
    """Training sample of replicate ``replicate``; each replicate draws its own data."""
    return make_gap_regression(n, noise=setting.noise, random_state=1000 + replicate)


def pretrain(spec, X, y, seed, setting):
    """Pre-trained start (paper 000 §5): SGD, then the Adam stand-in for the long burn-in.

    Both minimise the batch-mean squared loss on uniform batches of
    ``pretrain_batch`` points, starting from Glorot-uniform weights.
    """
    gen = torch.Generator().manual_seed(int(seed))
    theta = spec.init_params(gen, 1, X.dtype)
    m = min(setting.pretrain_batch, X.shape[0])
    for _ in range(setting.sgd_steps):
        idx = torch.randint(0, X.shape[0], (m,), generator=gen)
        _, grad = spec.squared_loss_and_grad(theta, X[idx], y[idx])
        theta = theta - setting.sgd_lr * grad / m
    if setting.adam_steps:
        param = theta.clone().requires_grad_(True)
        opt = torch.optim.Adam([param], lr=setting.adam_lr)
        for _ in range(setting.adam_steps):
            idx = torch.randint(0, X.shape[0], (m,), generator=gen)
            _, grad = spec.squared_loss_and_grad(param.detach(), X[idx], y[idx])
            param.grad = grad / m
            opt.step()
        theta = param.detach()
    return theta


# -- one chain --------------------------------------------------------------------------
def run_one(pot, theta0, method, rho, mode, setting, lengths, seed, X_val):
    """Run one chain and summarise it on the validation inputs.

    Returns
    -------
    dict
        ``fbar`` (posterior mean on the validation inputs, float32),
        ``h`` (``h_k`` of the N draws, paper 000 §5), the sampler's
        diagnostics and the wall time.
    """
    n = pot.n_data
    start_risk = float(pot.mean_loss(theta0)[0])
    sampler, run, mapped = chain_config(method, rho, mode, n, start_risk, setting, lengths)
    t0, c0 = time.perf_counter(), time.process_time()
    res = run_chains(Target(pot, None, mapped["lambda"]), theta0, [int(seed)], sampler, **run)  # flat prior
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    draws = torch.as_tensor(res.samples[0], dtype=theta0.dtype)
    with torch.no_grad():
        F = pot.spec.forward(draws, X_val).double().numpy()
        draw_risk = pot.mean_loss(draws).double().numpy()
    fbar = F.mean(0)
    h = np.sqrt(np.mean((F - fbar) ** 2, axis=1))
    sizes = res.accepted_batch_sizes
    return {
        "fbar": fbar.astype(np.float32),
        "h": h,
        "draw_train_risk": draw_risk,
        "start_train_risk": start_risk,
        "acceptance": float(res.acceptance_rate[0]),
        "restarts": int(res.info["n_restarts"][0]) if "n_restarts" in res.info else 0,  # MALA: none
        "zeta": float(res.correction),
        "lambda": mapped["lambda"],
        "gamma": mapped["gamma"],
        "lambda_batch": float(res.lambda_prime),
        "step_size": float(res.step_size[0]),
        "proposal_std": float(res.proposal_std[0]),
        "mean_batch": float(sizes.mean()) if len(sizes) else float(n),
        "all_finite": bool(np.isfinite(res.samples).all() and np.isfinite(F).all()),
        "wall_s": wall,
        "cpu_s": cpu,
        "burn_in": run["burn_in"],
        "ms_per_step": 1e3 * wall / lengths.n_steps(run["rho"]),
    }


# -- cache ------------------------------------------------------------------------------
@functools.cache
def _engine_hash():
    """Hash of the sources a chain depends on, so that engine changes void the cache."""
    root = Path(inspect.getfile(skgibbs)).resolve().parent
    digest = hashlib.sha1()
    sources = [root / rel for rel in ("model.py", "potential.py", "priors.py")]
    for path in sources + sorted((root / "samplers").glob("*.py")):  # the kernels, their drivers, the runner
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def default_cache_dir():
    return Path(os.environ.get("SKGIBBS_PAPER000_CACHE", Path(tempfile.gettempdir()) / "skgibbs-paper000"))


def _cache_key(n, replicate, method, rho, mode, setting, lengths, seed):
    rho = 1.0 if method == "mala" else float(rho)
    mode = "paper" if method == "mala" else mode  # MALA is the same chain in both conventions
    payload = json.dumps(
        [
            n,
            replicate,
            method,
            rho,
            mode,
            dataclasses.asdict(setting),
            dataclasses.asdict(lengths),
            seed,
            _engine_hash(),
        ],
        sort_keys=True,
    )
    return hashlib.sha1(payload.encode()).hexdigest()[:20]


def _load(path):
    with np.load(path, allow_pickle=False) as z:
        out = {k: z[k] for k in z.files}
    return {k: (v.item() if v.ndim == 0 else v) for k, v in out.items()}


def _save(path, result):
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part.npz")
    np.savez(tmp, **{k: np.asarray(v) for k, v in result.items()})
    os.replace(tmp, path)


# -- replicates -------------------------------------------------------------------------
def chain_seed(replicate):
    """One seed per replicate, shared by its runs (common random numbers)."""
    return 7919 * replicate + 17


def run_replicate(n, replicate, tasks, setting, lengths, cache_dir=None):
    """Run the ``(method, rho, mode)`` tasks of one replicate on one training sample.

    The pre-trained start is shared by all tasks of the replicate and is only
    computed when some task is not in the cache.
    """
    torch.set_num_threads(1)
    dtype = _dtype(setting)
    spec = MLPSpec(1, setting.hidden, "relu")
    X_val = torch.as_tensor(validation_set(setting)[0], dtype=dtype)
    X, y = training_set(n, replicate, setting)
    pot = MLPPotential(spec, torch.as_tensor(X, dtype=dtype), torch.as_tensor(y, dtype=dtype))
    theta0, pretrain_s, out = None, 0.0, {}
    seed = chain_seed(replicate)
    start_path = None
    if cache_dir is not None:
        key = hashlib.sha1(
            json.dumps([n, replicate, seed, dataclasses.asdict(setting)], sort_keys=True).encode()
        )
        start_path = Path(cache_dir) / f"start-{key.hexdigest()[:20]}.npy"
    for method, rho, mode in tasks:
        path = None
        if cache_dir is not None:
            key = _cache_key(n, replicate, method, rho, mode, setting, lengths, seed)
            path = Path(cache_dir) / f"{key}.npz"
            if path.exists():
                out[(method, rho, mode)] = dict(_load(path), cached=True)
                continue
        if theta0 is None and start_path is not None and start_path.exists():
            theta0 = torch.as_tensor(np.load(start_path), dtype=dtype)
        if theta0 is None:
            t0 = time.perf_counter()
            theta0 = pretrain(spec, pot.X, pot.y, seed, setting)
            pretrain_s = time.perf_counter() - t0
            if start_path is not None:  # the other tasks of this replicate may run in other workers
                start_path.parent.mkdir(parents=True, exist_ok=True)
                tmp = start_path.with_suffix(f".{os.getpid()}.npy")
                np.save(tmp, theta0.numpy())
                os.replace(tmp, start_path)
        result = run_one(pot, theta0, method, rho, mode, setting, lengths, seed, X_val)
        if path is not None:
            _save(path, result)
        out[(method, rho, mode)] = dict(result, cached=False)
    return {"n": n, "replicate": replicate, "pretrain_s": pretrain_s, "results": out}


def _cost(n, task, lengths):
    """Rough relative cost of a chain: steps times (batch size + fixed overhead)."""
    method, rho, _ = task
    rho = 1.0 if method == "mala" else rho
    return lengths.n_steps(rho) * (rho * n + 300.0)


def run_all(jobs, setting, lengths, n_jobs=1, cache_dir=None):
    """Run ``[(n, replicate, tasks), ...]`` through joblib, one thread per worker.

    With several workers and a cache, every task is its own job (the
    replicate's pre-trained start is shared through the cache) and the
    costliest go first, so that the workers finish together. The results
    are merged back per ``(n, replicate)``.
    """
    if n_jobs == 1 or cache_dir is None:
        units = jobs
    else:
        units = [(n, r, [t]) for n, r, tasks in jobs for t in tasks]
        units.sort(key=lambda u: -_cost(u[0], u[2][0], lengths))
    calls = [delayed(run_replicate)(n, r, tasks, setting, lengths, cache_dir) for n, r, tasks in units]
    parts = [c[0](*c[1], **c[2]) for c in calls] if n_jobs == 1 else Parallel(n_jobs=n_jobs)(calls)
    merged = {}
    for part in parts:
        entry = merged.setdefault((part["n"], part["replicate"]), dict(part, results={}, pretrain_s=0.0))
        entry["results"].update(part["results"])
        entry["pretrain_s"] += part["pretrain_s"]
    return [merged[(n, r)] for n, r, _ in jobs]


# -- summaries --------------------------------------------------------------------------
def radius(h, confidence_level=0.995):
    """``tau_alpha`` of (3.4) from the draws' ``h_k`` (order statistic, skgibbs convention)."""
    return posterior_quantile(h, confidence_level)


def mean_sd(values):
    """Mean and population sd, the paper's ``mean +- sd over chains``."""
    v = np.asarray(values, dtype=float)
    return float(v.mean()), float(v.std())


def engine():
    """What the cached chains depend on beyond the settings: the sampler code and the threads per worker."""
    return {"engine_hash": _engine_hash(), "torch_threads_per_worker": 1}


def add_chain_arguments(parser, other):
    """Add the chain options shared by the table2 and fig6 reproductions (``other`` shares the chain cache)."""
    p = parser
    p.add_argument(
        "--burn-in",
        type=int,
        default=1000,
        help="b0 of the burn-in b = b0/rho, MALA b = 2 b0 (paper: b0 = 1e5, b = 5e4 at rho=0.1)",
    )
    p.add_argument("--gap", type=int, default=100, help="gap c between draws (paper: 5000)")
    p.add_argument("--draws", type=int, default=20, help="draws N per chain (paper: 20)")
    p.add_argument("--adam-steps", type=int, default=3000, help="Adam steps after the SGD pre-training")
    p.add_argument("--cache-dir", default=str(default_cache_dir()), help=f"chain cache shared with {other}")
    p.add_argument("--no-cache", action="store_true")


def cache_dir(args):
    """The chain cache of a run, None for quick runs (their chains are of no use later) and with --no-cache."""
    return None if args.no_cache or args.quick else args.cache_dir


def chain_totals(results):
    """Counts and times of the chains of a study's replicates (``results[r]["results"]``, one dict per chain)."""
    runs = [v for r in results for v in r["results"].values()]
    return {
        "n_cached_runs": int(sum(v["cached"] for v in runs)),
        "n_runs": len(runs),
        "chain_wall_s": float(sum(v["wall_s"] for v in runs)),
        "chain_cpu_s": None if any("cpu_s" not in v for v in runs) else float(sum(v["cpu_s"] for v in runs)),
    }


def warn_non_finite(summary, keys):
    """Name on stderr every (mode, key, method) cell of a study's summary whose draws were not all finite."""
    bad = [
        (mode, key, m)
        for mode in MODES
        for key in keys
        for m in METHODS
        if not summary[mode][str(key)][m]["all_finite"]
    ]
    if bad:
        print(f"WARNING: non-finite draws in {bad}", file=sys.stderr)
