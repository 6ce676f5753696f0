"""Shared set-up of the paper 000 reproductions: the §5 chains of Table 2 and Fig. 6, and the exact targets.

Paper 000 §5 samples a 1 -> 100 -> 100 -> 1 ReLU network (Q = 10401) on the data-gap regression problem
with MALA, sMALA and csMALA, started from a pre-trained network, with the parameters of its Table 1:

======  ==============  ==============  ==============
param   MALA            sMALA           csMALA
======  ==============  ==============  ==============
lambda  n               n rho           n (2 - rho)
gamma   1e-4            1e-4            1e-4 / rho
s       0.2 / sqrt(Q)   0.2 / sqrt(Q)   0.2 / sqrt(Q)
======  ==============  ==============  ==============

The paper's proposal ``N(theta - gamma grad R, s^2 I)`` (``R`` the method's normalised batch risk) is
skgibbs' ``N(theta - h grad U_B, s^2 I)`` with ``U_B = lambda_batch R``, so ``h = gamma / lambda_batch``
(``lambda'`` for a compensated csMALA); ``s`` is fixed, nothing is adapted. Two temperature conventions
are run: ``"paper"`` (Table 1 as printed, ``compensate=False``) and ``"compensated"`` (skgibbs' one
target ``exp(-n R_n)``, ``lambda = n`` for all three, csMALA with ``lambda' = lambda (a + 1 - rho) / a``,
``a = rho**(1 - zeta)``). Chain summaries are cached on disk, keyed by every setting and by a hash of
the sampler sources, so that Table 2 and Fig. 6 share the chains they have in common.
"""

import dataclasses
import functools
import hashlib
import inspect
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from joblib import Parallel, delayed

import skgibbs
from skgibbs.datasets import gap_regression_function, make_gap_regression
from skgibbs.model import MLPSpec
from skgibbs.potential import MLPPotential
from skgibbs.samplers import CSMALA, MALA, SMALA, Target, run_chains, solve_correction, surrogate_constants

from .environment import same_run

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
    """Problem, pre-training and proposal constants (paper 000 §5), but ``adam_steps``: Adam steps after
    the SGD pre-training, standing in for the optimisation of the paper's burn-in of ``1e5 / rho`` steps."""

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
    """Burn-in ``b = burn_in / rho`` (Table 1: ``burn_in = 1e5``; MALA, whose chain does not depend on rho,
    gets that of ``rho = 0.5``), gap ``c`` and number of draws ``N`` of Alg. 1."""

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

    sMALA's surrogate (2.10) behaves like ``exp(-lambda R_n)`` to first order in ``lambda l_i / (n rho)``;
    csMALA's ``prod_i (a exp(-lambda' l_i / n) + 1 - rho)`` (2.12 with weight ``zeta``) like
    ``exp(-lambda'' R_n)`` with ``lambda'' = lambda' a / (a + 1 - rho)``, ``a = rho**(1 - zeta)``.
    """
    lam = n * 1.0 if mode == "compensated" else paper_lambda(method, n, rho)
    if method != "csmala" or rho >= 1.0:
        return lam
    lam_batch = surrogate_constants("csmala", lam, n, rho, zeta, mode == "compensated")[2]
    return first_order_lambda(lam_batch, rho, zeta)


def first_order_lambda(lam_batch, rho, zeta):
    """``lambda' a / (a + 1 - rho)``, ``a = rho**(1 - zeta)``: csMALA's inverse temperature to first order."""
    a = rho ** (1.0 - zeta)
    return lam_batch * a / (a + 1.0 - rho)


def log_surrogate(losses, method, lam, rho, zeta=None, lam_batch=None):
    """Log density, up to a constant, of the target a sampler draws from, at points with per-example
    losses ``(G, n)``: ``-lambda R_n`` (MALA), (2.10) (sMALA) or (2.12), ``sum_i log(a exp(-lambda' l_i / n)
    + 1 - rho)``, ``a = rho^(1 - zeta)``, at the run's frozen ``zeta`` and ``lambda' = lam_batch`` (csMALA).
    """
    n = losses.shape[1]
    if method == "mala" or rho >= 1:
        return -lam / n * losses.sum(1)
    if method == "smala":
        log_a, c = math.log(rho), lam / (n * rho)
    else:
        log_a, c = (1.0 - zeta) * math.log(rho), lam_batch / n
    return np.logaddexp(log_a - c * losses, math.log1p(-rho)).sum(1)


def weighted_quantiles(values, weights, probs):
    """Smallest value whose cumulative weight exceeds each of ``probs`` (the argmin of (3.4))."""
    order = np.argsort(values)
    cum = np.cumsum(weights[order])
    return values[order][np.minimum(np.searchsorted(cum, probs, side="right"), len(cum) - 1)]


def earlier_result(args, name, settings):
    """The stored ``name`` result that a run of only some parts may merge: same seed, quick or not, and
    ``settings``; None if there is none."""
    path = args.out / f"{name}.json"
    if not path.exists():
        return None
    old = json.loads(path.read_text())
    same = same_run(old, args.seed, args.quick) and all(old.get(k) == v for k, v in settings.items())
    return old if same else None


def chain_config(method, rho, mode, n, mean_risk, setting, lengths):
    """The sampler of one run, its ``run_chains`` settings, its ``lambda`` and the paper's ``gamma``.

    ``mean_risk`` (the full-data risk at the start) fixes the csMALA ``lambda'`` that converts the paper's
    ``gamma`` into ``h``; the drift ``gamma grad R`` is tiny next to the noise ``s xi`` anyway.
    """
    rho = 1.0 if method == "mala" else rho
    compensate = mode == "compensated"
    lam = n * 1.0 if compensate else paper_lambda(method, n, rho)
    gamma = setting.gamma / rho if method == "csmala" else setting.gamma  # Table 1
    lam_batch = lam
    if method == "csmala" and rho < 1.0:
        zeta0 = solve_correction(mean_risk, lam, n, rho, compensate=compensate)
        lam_batch = surrogate_constants("csmala", lam, n, rho, zeta0, compensate)[2]
    s = setting.s_total / math.sqrt(MLPSpec(1, setting.hidden).n_params)  # Table 1: s = 0.2 / sqrt(Q)
    proposal = {"step_size": gamma / lam_batch, "proposal_std": s}
    if method != "mala":
        proposal["restart_after"] = setting.restart_after
    if method == "csmala":
        proposal.update(correction="auto", correction_every=setting.correction_every, compensate=compensate)
    sampler = {"mala": MALA, "smala": SMALA, "csmala": CSMALA}[method](**proposal)
    run = {"rho": rho, "n_samples": lengths.n_draws, "burn_in": lengths.burn_in_for(rho), "thin": lengths.gap}
    return sampler, run, lam, gamma


def validation_set(setting):
    """10000 validation points from the same intervals, with and without noise."""
    X, y = make_gap_regression(setting.n_val, noise=setting.noise, random_state=setting.val_seed)
    return X, y, gap_regression_function(X[:, 0])


def pretrain(spec, X, y, seed, setting):
    """Pre-trained start (paper 000 §5): SGD, then the Adam stand-in for the long burn-in, from
    Glorot-uniform weights, on the batch-mean squared loss of uniform batches of ``pretrain_batch`` points."""
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


def run_one(pot, theta0, method, rho, mode, setting, lengths, seed, X_val):
    """One chain, summarised on the validation inputs: ``fbar`` (the posterior mean, float32), ``h``
    (``h_k`` of the N draws, paper 000 §5), the sampler's diagnostics and the times."""
    n = pot.n_data
    start_risk = float(pot.mean_loss(theta0)[0])
    sampler, run, lam, gamma = chain_config(method, rho, mode, n, start_risk, setting, lengths)
    t0, c0 = time.perf_counter(), time.process_time()
    res = run_chains(Target(pot, None, lam), theta0, [int(seed)], sampler, **run)  # flat prior
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    draws = torch.as_tensor(res.samples[0], dtype=theta0.dtype)
    with torch.no_grad():
        F = pot.spec.forward(draws, X_val).double().numpy()
        draw_risk = pot.mean_loss(draws).double().numpy()
    fbar = F.mean(0)
    sizes = res.accepted_batch_sizes
    return {
        "fbar": fbar.astype(np.float32),
        "h": np.sqrt(np.mean((F - fbar) ** 2, axis=1)),
        "draw_train_risk": draw_risk,
        "start_train_risk": start_risk,
        "acceptance": float(res.acceptance_rate[0]),
        "restarts": int(res.info["n_restarts"][0]) if "n_restarts" in res.info else 0,  # MALA: none
        "zeta": float(res.correction),
        "lambda": lam,
        "gamma": gamma,
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
    """Hash of the sources a chain depends on (the model, the kernels, their drivers, the runner)."""
    root = Path(inspect.getfile(skgibbs)).resolve().parent
    digest = hashlib.sha1()
    sources = [root / rel for rel in ("model.py", "potential.py", "priors.py")]
    for path in sources + sorted((root / "samplers").glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def default_cache_dir():
    return Path(os.environ.get("SKGIBBS_PAPER000_CACHE", Path(tempfile.gettempdir()) / "skgibbs-paper000"))


def _path(cache_dir, prefix, *key):
    """The cache file of ``key`` (None without a cache)."""
    if cache_dir is None:
        return None
    digest = hashlib.sha1(json.dumps(key, sort_keys=True).encode()).hexdigest()
    return Path(cache_dir) / f"{prefix}{digest[:20]}.npz"


def _load(path):
    with np.load(path, allow_pickle=False) as z:
        return {k: (z[k].item() if z[k].ndim == 0 else z[k]) for k in z.files}


def _save(path, result):
    """Write ``result``'s arrays to ``path`` in one step (other workers may read it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.npz")
    np.savez(tmp, **{k: np.asarray(v) for k, v in result.items()})
    os.replace(tmp, path)


def run_replicate(n, replicate, tasks, setting, lengths, cache_dir=None):
    """Run the ``(method, rho, mode)`` tasks of one replicate on its own training sample; the pre-trained
    start, shared by the tasks, is computed (or read from the cache) only when some task is not cached."""
    torch.set_num_threads(1)
    dtype = getattr(torch, setting.dtype)
    spec = MLPSpec(1, setting.hidden, "relu")
    X_val = torch.as_tensor(validation_set(setting)[0], dtype=dtype)
    X, y = make_gap_regression(n, noise=setting.noise, random_state=1000 + replicate)
    pot = MLPPotential(spec, torch.as_tensor(X, dtype=dtype), torch.as_tensor(y, dtype=dtype))
    seed = 7919 * replicate + 17  # one seed per replicate, shared by its runs (common random numbers)
    config = dataclasses.asdict(setting), dataclasses.asdict(lengths)
    start_path = _path(cache_dir, "start-", n, replicate, seed, config[0])
    theta0, pretrain_s, out = None, 0.0, {}
    for method, rho, mode in tasks:
        # MALA is the same chain at every rho and in both conventions
        rho_key, mode_key = (1.0, "paper") if method == "mala" else (float(rho), mode)
        path = _path(cache_dir, "", n, replicate, method, rho_key, mode_key, *config, seed, _engine_hash())
        if path is not None and path.exists():
            out[(method, rho, mode)] = dict(_load(path), cached=True)
            continue
        if theta0 is None and start_path is not None and start_path.exists():
            theta0 = torch.as_tensor(_load(start_path)["theta"], dtype=dtype)
        if theta0 is None:
            t0 = time.perf_counter()
            theta0 = pretrain(spec, pot.X, pot.y, seed, setting)
            pretrain_s = time.perf_counter() - t0
            if start_path is not None:  # the other tasks of this replicate may run in other workers
                _save(start_path, {"theta": theta0.numpy()})
        result = run_one(pot, theta0, method, rho, mode, setting, lengths, seed, X_val)
        if path is not None:
            _save(path, result)
        out[(method, rho, mode)] = dict(result, cached=False)
    return {"n": n, "replicate": replicate, "pretrain_s": pretrain_s, "results": out}


def _cost(unit, lengths):
    """Rough relative cost of a one-task job: steps times (batch size + fixed overhead)."""
    n, _, [(method, rho, _)] = unit
    rho = 1.0 if method == "mala" else rho
    return lengths.n_steps(rho) * (rho * n + 300.0)


def run_all(jobs, setting, lengths, n_jobs=1, cache_dir=None):
    """Run ``[(n, replicate, tasks), ...]`` through joblib, one thread per worker; the results per job.

    With several workers and a cache, every task is its own job (the start is shared through the cache)
    and the costliest go first, so that the workers finish together.
    """
    if n_jobs == 1 or cache_dir is None:
        units = jobs
    else:
        units = [(n, r, [t]) for n, r, tasks in jobs for t in tasks]
        units.sort(key=lambda unit: -_cost(unit, lengths))
    calls = [delayed(run_replicate)(n, r, tasks, setting, lengths, cache_dir) for n, r, tasks in units]
    parts = [c[0](*c[1], **c[2]) for c in calls] if n_jobs == 1 else Parallel(n_jobs=n_jobs)(calls)
    merged = {}
    for part in parts:
        entry = merged.setdefault((part["n"], part["replicate"]), dict(part, results={}, pretrain_s=0.0))
        entry["results"].update(part["results"])
        entry["pretrain_s"] += part["pretrain_s"]
    return [merged[(n, r)] for n, r, _ in jobs]


def run_study(args, jobs):
    """Run ``jobs(args)`` at the run's sizes (a quick run's flags over the command line's); return the chains,
    the setting and the summary's common part: lengths, setting, workers, runtime and chain totals."""
    vars(args).update(args.size.flags)
    n_jobs = args.n_jobs or args.size.n_jobs
    setting = dataclasses.replace(Setting(adam_steps=args.adam_steps), **args.size.setting)
    lengths = Lengths(args.burn_in, args.gap, args.draws)
    cache = None if args.no_cache or args.quick else args.cache_dir  # quick chains are of no use later
    t0 = time.perf_counter()
    results = run_all(jobs(args), setting, lengths, n_jobs=n_jobs, cache_dir=cache)
    runtime = time.perf_counter() - t0
    runs = [v for r in results for v in r["results"].values()]
    cached = int(sum(v["cached"] for v in runs))
    print(f"\nruntime {runtime / 60:.1f} min ({cached} runs from cache)")
    return (
        results,
        setting,
        {
            "lengths": dataclasses.asdict(lengths),
            "setting": dataclasses.asdict(setting),
            "n_jobs": n_jobs,
            "runtime_s": runtime,
            "n_cached_runs": cached,
            "n_runs": len(runs),
            "chain_wall_s": float(sum(v["wall_s"] for v in runs)),
            "chain_cpu_s": None
            if any("cpu_s" not in v for v in runs)
            else float(sum(v["cpu_s"] for v in runs)),
        },
    )


# -- summaries --------------------------------------------------------------------------
def means(rows, *keys):
    """``{key: mean over rows}`` of each of ``keys``."""
    return {k: float(np.mean([np.mean(r[k]) for r in rows])) for k in keys}


def fmt_sd(values, digits, scale=1e3):
    """``"mean ± sd"`` of ``values * scale``: the paper's mean and population sd over chains."""
    v = np.asarray(values, dtype=float) * scale
    return f"{v.mean():.{digits}f} ± {v.std():.{digits}f}"


def engine():
    """What the cached chains depend on beyond the settings: the sampler code and the threads per worker."""
    return {"engine_hash": _engine_hash(), "torch_threads_per_worker": 1}


def add_chain_arguments(parser, other):
    """The chain options shared by the table2 and fig6 reproductions (``other`` shares the chain cache)."""
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


def warn_non_finite(summary, keys):
    """Name on stderr every (mode, key, method) cell of a study's summary whose draws were not all finite."""
    bad = [
        (mode, k, m)
        for mode in MODES
        for k in keys
        for m in METHODS
        if not summary[mode][str(k)][m]["all_finite"]
    ]
    if bad:
        print(f"WARNING: non-finite draws in {bad}", file=sys.stderr)
