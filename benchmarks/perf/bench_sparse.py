"""Sparse networks by reversible jump: kernel speed and cost, and whether sparsity finds the inputs.

    python -m benchmarks run sparse [--part speed|cost|structure|baselines] [--quick]

*speed*: steps per second of the reversible-jump kernel (:mod:`skgibbs.samplers.rj.rjmcmc`) and of MALA
(:mod:`skgibbs.samplers.langevin.mala`, rho = 1) on the same network, data and chains, in alternating
blocks. *cost*: where the time of an RJHMC transition goes, at paper 001's sizes. *structure*: paper 001
§4's design (``make_sparse_sine``: 1000 points, 750 to train, at most four relevant inputs), p = 10 and
100, five seeds; ``SparseGibbsMLPRegressor`` (``--kernel``) and ``GibbsMLPRegressor(sampler="hmc",
prior="fixed")`` on the (p, 8, 8, 8, 1) network at the paper's temperature (lambda = 5 n_train on the raw
scale: ``temperature = 1 / (5 var(y))`` on the standardized one): where the relevant inputs rank in
``feature_inclusion_``, and the held-out RMSE. *baselines*: scikit-learn's ``MLPRegressor`` at p = 100, and
a default ``SparseGibbsMLPRegressor`` on diabetes.
"""

import json
import time
import warnings
from contextlib import contextmanager

import numpy as np
import torch
from joblib import Parallel, delayed

from skgibbs import GibbsMLPRegressor, SparseGibbsMLPRegressor
from skgibbs.datasets import make_sparse_sine, sparse_sine_function
from skgibbs.model import MLPSpec
from skgibbs.potential import MLPPotential
from skgibbs.priors import MixingPrior, Prior
from skgibbs.samplers import RJHMC, SMC, RunSettings, Target
from skgibbs.samplers.langevin import mala
from skgibbs.samplers.rj import rjhmc, rjmcmc

from .. import Benchmark, Output, Sizes
from ..common import data
from ..common.environment import keep_parts, part_loads
from ..common.stats import timed_fit
from ..common.tables import dict_table
from ..common.writer import Page, load

NAME = "sparse"
QUICK_FIT = {"n_samples": 5, "burn_in": 5, "pretrain_iter": 10}  # the dense fit of a quick run
#: per part: speed (steps per timed block, blocks), cost (warm-up transitions; rounds, transitions per
#: round, repetitions of the lone gradient; chains), structure (seeds and input dimensions, None: ``--seeds``,
#: ``--dims``; burn-in, None: ``--burn-in`` or the kernel's; draws, None: the kernel's; the dense fit's
#: settings) and baselines (seeds, the MLPs' iterations, the diabetes fit's settings)
SIZES = {
    "full": {
        "speed_steps": 300, "speed_blocks": 6,
        "cost_burn_in": 200, "cost_rounds": (5, 12, 60), "cost_chains": (1, 4, 64),
        "seeds": None, "dims": None, "burn_in": None, "n_samples": None, "dense_fit": {},
        "baseline_seeds": 5, "mlp_max_iter": 3000, "diabetes_fit": {},
    },
    "quick": {
        "speed_steps": 5, "speed_blocks": 1,
        "cost_burn_in": 5, "cost_rounds": (1, 2, 5), "cost_chains": (1,),
        "seeds": 1, "dims": 1, "burn_in": 10, "n_samples": 5, "dense_fit": QUICK_FIT,
        "baseline_seeds": 1, "mlp_max_iter": 50,
        "diabetes_fit": {"hidden_layer_sizes": (4,), "burn_in": 5, "n_samples": 5, "pretrain_iter": 10},
    },
}  # fmt: skip
# the stored parts kept when another part is re-run (with the load averages that older runs kept themselves)
_STORED = ("speed", "speed_load_average", "structure", "structure_burn_in", "baselines", "cost")
_STORED += ("cost_load_average", "cost_baseline")


def _potential(p, n, hidden=(8, 8, 8)):
    """The network and potential of paper 001's design with ``p`` inputs and ``n`` rows (seed 0)."""
    X, y, _ = make_sparse_sine(n, p, random_state=0)
    spec = MLPSpec(p, hidden, "relu")
    return spec, MLPPotential(
        spec, torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y, dtype=torch.float32)
    )


def _start(spec, K):
    """``K`` generators and a start with about half of the weights active (before the mask, and the mask)."""
    gens = [torch.Generator().manual_seed(k) for k in range(K)]
    theta = spec.init_params(gens[0], K, torch.float32)
    return gens, theta, torch.rand(theta.shape, generator=gens[0]) < 0.5


def _speed_case(p, hidden, n, K, steps, blocks):
    spec, pot = _potential(p, n, hidden)
    gens, theta, mask = _start(spec, K)
    h, s = torch.full((K,), 1e-6), torch.full((K,), 1e-3)
    lam = 5.0 * n  # lambda / n = 5 in both kernels' potentials
    rj_target = Target(pot, MixingPrior(Prior(std=1.0), 2.0), lam)
    m_target = Target(pot, Prior(std=1.0), lam)
    rj_params = rjmcmc.RJParams(h, s)
    m_params = mala.MALAParams(lam / n, 0.0, 1.0, h, s)
    states = {
        "rj": rjmcmc.init(gens, rj_target, theta * mask),
        "mala": mala.init(gens, m_target, theta, m_params),
    }
    moves = {
        "rj": lambda state: rjmcmc.step(gens, state, rj_target, rj_params)[0],
        "mala": lambda state: mala.step(gens, state, m_target, m_params)[0],
    }
    times = {"rj": 0.0, "mala": 0.0}
    for _ in range(steps // 5):  # warm-up, untimed
        for kernel in moves:
            states[kernel] = moves[kernel](states[kernel])
    for _ in range(blocks):
        for kernel in moves:
            t = time.perf_counter()
            for _ in range(steps):
                states[kernel] = moves[kernel](states[kernel])
            times[kernel] += time.perf_counter() - t
    total = steps * blocks
    row = {"p": p, "hidden": hidden, "n": n, "K": K, "n_params": spec.n_params}
    return {**row, "rj_steps_per_s": total / times["rj"], "mala_steps_per_s": total / times["mala"]}


def speed(size):
    torch.set_num_threads(1)
    cases = [(p, (8, 8, 8), 750, K) for p in (10, 100) for K in (1, 4)]
    cases += [(100, (8, 8, 8), 7500, 1)] + [(10, (100, 100), 442, K) for K in (1, 4)]
    return [_speed_case(*case, size.speed_steps, size.speed_blocks) for case in cases]


def _mean_time(fn, repeats):
    fn()
    t = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - t) / repeats


class _TimedPotential:
    """A potential that adds the seconds of its loss evaluations to ``evaluations`` (and to
    ``jump_evaluations`` inside a jump), and of the jumps to ``jumps``, while :meth:`timing` lasts."""

    def __init__(self, potential):
        self._potential = potential
        self.evaluations = self.jumps = self.jump_evaluations = 0.0
        self._in_jump = False

    def __getattr__(self, name):
        return getattr(self._potential, name)

    def _timed(self, method, *args, **kwargs):
        t = time.perf_counter()
        out = method(*args, **kwargs)
        seconds = time.perf_counter() - t
        self.evaluations += seconds
        if self._in_jump:
            self.jump_evaluations += seconds
        return out

    def loss_sum_and_grad(self, *args, **kwargs):
        return self._timed(self._potential.loss_sum_and_grad, *args, **kwargs)

    def loss_sum(self, *args, **kwargs):
        return self._timed(self._potential.loss_sum, *args, **kwargs)

    @contextmanager
    def timing(self):
        """The counters from zero, and ``rjhmc.jump`` timed (the transitions call it by name)."""
        self.evaluations = self.jumps = self.jump_evaluations = 0.0
        real = rjhmc.jump

        def jump(*args, **kwargs):
            self._in_jump = True
            t = time.perf_counter()
            try:
                return real(*args, **kwargs)
            finally:
                self.jumps += time.perf_counter() - t
                self._in_jump = False

        rjhmc.jump = jump
        try:
            yield
        finally:
            rjhmc.jump = real


def _cost_round(chains, params, n_jumps, clock, steps):
    """``(seconds per evaluation, leapfrog steps, ms per transition, timed inside)`` of ``steps``
    transitions, ``clock`` their potential."""
    n_steps = []
    with clock.timing():
        t = time.perf_counter()
        for _ in range(steps):
            chains.sample_step(params)
            n_steps.append(int(chains.last.hmc.num_steps.max()))
        total = time.perf_counter() - t
    leapfrog = float(np.mean(n_steps))
    hmc_eval = clock.evaluations - clock.jump_evaluations
    inside = {
        "grad_in_step_ms": 1e3 * hmc_eval / (steps * leapfrog),
        "hmc_share": hmc_eval / total,
        "jump_eval_share": clock.jump_evaluations / total,
        "jump_bookkeeping_share": (clock.jumps - clock.jump_evaluations) / total,
        "hmc_bookkeeping_share": (total - clock.jumps - hmc_eval) / total,
    }
    return total / steps / (leapfrog + n_jumps), leapfrog, 1e3 * (total / steps), inside


def step_cost(size):
    """Where an RJHMC transition's time goes at paper 001's sizes; a gradient and a 2K-point loss alone."""
    torch.set_num_threads(1)
    rows = []
    rounds, steps, reps = size.cost_rounds
    for p in (10, 100):
        spec, pot = _potential(p, 750)
        clock = _TimedPotential(pot)
        target = Target(clock, MixingPrior(Prior(bound=1.0), 2.0), 5.0 * 750)
        for K in size.cost_chains:  # 64: the particles of an SMC run, whose mutations are these transitions
            gens, theta, mask = _start(spec, K)
            kernel = RJHMC()
            run = RunSettings(n_samples=1, burn_in=size.cost_burn_in)
            chains = kernel.chains(target, (theta * mask).clamp(-1, 1), gens, run)
            chains.warmup()
            params = chains.frozen_params()
            # the quickest round per evaluation kept: a busy machine slows some rounds, never speeds one up
            timed = [_cost_round(chains, params, kernel.n_jumps, clock, steps) for _ in range(rounds)]
            _, leapfrog, step_ms, inside = min(timed, key=lambda round_: round_[0])
            point = chains.state.theta
            rows.append(
                {
                    "p": p,
                    "n_params": spec.n_params,
                    "K": K,
                    "leapfrog_steps": leapfrog,
                    "n_jumps": kernel.n_jumps,
                    "step_ms": step_ms,
                    "grad_ms": 1e3 * _mean_time(lambda: target.loss_sum_and_grad(point), reps),
                    "loss_2k_ms": 1e3 * _mean_time(lambda: target.loss_sum(torch.cat([point, point])), reps),
                    **inside,
                    "measured": "inside the transitions",
                }
            )
            print(rows[-1], flush=True)
    return rows


def structure(dims, seeds, burn_in, size, kernel="rjhmc", stored=(), smc=(64, "auto"), n_jobs=None):
    """One row per (p, seed), the cases run as ``n_jobs`` joblib jobs (one torch thread each)."""
    dense_rows = {(r["p"], r["seed"]): r for r in stored if "rmse_full" in r}
    return Parallel(n_jobs=n_jobs)(
        delayed(_structure_case)(p, seed, burn_in, size, kernel, dense_rows.get((p, seed)), smc)
        for p in dims
        for seed in seeds
    )


def _errors(pred, y, f, suffix):
    """``rmse<suffix>`` and ``excess<suffix>`` (mean squared distance to ``f``) of ``pred``."""
    rmse = float(np.sqrt(np.mean((pred - y) ** 2)))
    return {f"rmse{suffix}": rmse, f"excess{suffix}": float(np.mean((pred - f) ** 2))}


def _ranks(scores, relevant):
    """The ranks (1: first) of the relevant inputs, the inputs ordered by decreasing ``scores``."""
    order = np.argsort(-np.asarray(scores), kind="stable")
    return sorted(int(np.flatnonzero(order == j)[0]) + 1 for j in relevant)


def _structure_case(p, seed, burn_in, size, kernel, stored_dense, smc):
    torch.set_num_threads(1)
    X, y, A = make_sparse_sine(1000, p, random_state=seed)
    Xtr, ytr, Xte, yte = X[:750], y[:750], X[750:], y[750:]
    f_te = sparse_sine_function(Xte, A)
    relevant = np.flatnonzero((A != 0).any(0))
    common = {"hidden_layer_sizes": (8, 8, 8), "temperature": 1.0 / (5.0 * ytr.var()), "random_state": seed}
    if kernel == "smc":  # one population of particles: no burn-in, draws or thinning to set
        burn_in, n_samples, thin = 0, smc[0], 1
        run = {"sampler": SMC(n_particles=smc[0], max_mcmc_steps=smc[1])}
    else:
        n_samples = size.n_samples or (200 if kernel == "rjhmc" else 100)
        thin = 1 if kernel == "rjhmc" else 10
        run = {"sampler": kernel, "burn_in": burn_in, "n_samples": n_samples, "thin": thin}
    sparse = SparseGibbsMLPRegressor(**common, **run)
    sparse_fit = timed_fit(sparse, Xtr, ytr)
    if kernel == "smc" and stored_dense is not None:  # the dense fit of the rjhmc row: same data and settings
        dense_row = {k: stored_dense[k] for k in ("rmse_full", "excess_full", "rhat_full", "time_full_s")}
        warned = 0
    else:
        full = GibbsMLPRegressor(**common, sampler="hmc", prior="fixed", **size.dense_fit)
        full_fit = timed_fit(full, Xtr, ytr)
        dense_row = _errors(full.predict(Xte), yte, f_te, "_full")
        dense_row.update(rhat_full=float(full.rhat_), time_full_s=full_fit.seconds)
        warned = full_fit.count()
    # the fit's own prediction, its chains stacked (one population under SMC, weight 1), and equal weights
    weights, stacked = sparse.chain_weights_, sparse.predict(Xte)
    pred_sparse = sparse.predict_samples(Xte).mean(1)
    inclusion, k = sparse.feature_inclusion_, len(relevant)
    ranks = _ranks(inclusion, relevant)
    # a baseline screen: rank the inputs by |corr(x_j, y)| on the training data
    corr_ranks = _ranks(np.abs([np.corrcoef(Xtr[:, j], ytr)[0, 1] for j in range(p)]), relevant)
    row = {
        "kernel": kernel,
        "p": p,
        "seed": seed,
        "burn_in": burn_in,
        "n_samples": n_samples,
        "thin": thin,
        "ess_sparse": float(getattr(sparse, "ess_", np.nan)),
        "within_ess_sparse": float(getattr(sparse, "within_chain_ess_", np.nan)),
        "within_rhat_sparse": float(getattr(sparse, "within_chain_rhat_", np.nan)),
        "relevant": relevant.tolist(),
        "relevant_ranks": ranks,
        "relevant_first": ranks == list(range(1, k + 1)),
        "hits_top": int(sum(r <= k for r in ranks)),
        "correlation_ranks": corr_ranks,
        "correlation_hits_top": int(sum(r <= k for r in corr_ranks)),
        "inclusion_relevant": inclusion[relevant].round(3).tolist(),
        "inclusion_median_other": float(np.median(np.delete(inclusion, relevant))),
        **_errors(pred_sparse, yte, f_te, "_sparse"),
        "chain_weights_stacking": weights.round(3).tolist(),
        **_errors(stacked, yte, f_te, "_sparse_stacking"),
        **dense_row,
        "active_fraction": float(sparse.active_fraction_.mean()),
        "rhat_sparse": float(getattr(sparse, "rhat_", np.nan)),
        "time_sparse_s": sparse_fit.seconds,
        "warnings": sparse_fit.count() + warned,
    }
    if kernel == "smc":  # the births or deaths per transition that n_jumps="auto" chose for this network
        row["n_jumps"] = sparse.sampler_._n_jumps(sparse.samples_.shape[-1])
    print(row, flush=True)
    return row


def baselines(size):
    """What a trained dense network learns at p = 100 (all inputs, or the relevant ones only), and
    a default SparseGibbsMLPRegressor fit on the diabetes data."""
    from sklearn.neural_network import MLPRegressor

    torch.set_num_threads(1)
    rows = []
    for seed in range(size.baseline_seeds):
        X, y, A = make_sparse_sine(1000, 100, random_state=seed)
        relevant = np.flatnonzero((A != 0).any(0))
        f_te = sparse_sine_function(X[750:], A)
        row = {"seed": seed, "var_f": float(f_te.var())}
        for name, cols in (("all", slice(None)), ("relevant", relevant)):
            mlp = MLPRegressor(
                hidden_layer_sizes=(8, 8, 8),
                max_iter=size.mlp_max_iter,
                learning_rate_init=1e-2,
                random_state=seed,
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mlp.fit(X[:750][:, cols], y[:750])
            row[f"excess_{name}"] = float(np.mean((mlp.predict(X[750:][:, cols]) - f_te) ** 2))
        rows.append(row)
        print(row, flush=True)
    X, y = data.load("diabetes")[:2]
    reg = SparseGibbsMLPRegressor(random_state=0, **size.diabetes_fit)
    diabetes = {"time_s": timed_fit(reg, X, y).seconds, "rhat": float(reg.rhat_), "ess": float(reg.ess_)}
    diabetes["density_first"] = float(reg.active_fraction_[:, 0].mean())
    diabetes["density_last"] = float(reg.active_fraction_[:, -1].mean())
    diabetes["hidden_layer_sizes"] = str(tuple(reg.spec_.hidden_layer_sizes))
    print(diabetes, flush=True)
    return {"mlp": rows, "diabetes": diabetes}


def add_arguments(parser):
    add = parser.add_argument
    add("--part", choices=["speed", "cost", "structure", "baselines", "both"], default="both")
    add("--kernel", choices=["rjhmc", "rjmcmc", "smc"], default="rjhmc")
    add("--smc-particles", type=int, default=64, help="structure, --kernel smc: SMC's particles")
    add("--burn-in", type=int, default=None, help="structure: 1000 transitions for rjhmc, 20000 for rjmcmc")
    add("--seeds", type=int, default=5, help="structure: the seeds below this number")
    add(
        "--first-seed",
        type=int,
        default=0,
        help="structure: the first seed (the cases of other seeds stay stored)",
    )
    add("--dims", type=int, nargs="+", default=[10, 100])
    add(
        "--cost-chains",
        type=int,
        nargs="+",
        default=None,
        help="cost: the numbers of chains (default 1 4 64)",
    )
    add(
        "--cost-baseline",
        default=None,
        help="cost: a sparse.json whose cost rows an earlier version of the library measured, shown beside",
    )
    add("--cost-baseline-label", default="the earlier version", help="cost: what --cost-baseline measured")


def run(args):
    """The parts asked for; a part not re-run keeps its stored measurements (full runs only)."""
    result = {"args": {k: v for k, v in vars(args).items() if k in ("part", "burn_in", "seeds", "dims")}}
    previous = load(args.out, [NAME]).get(NAME)
    if args.part != "both" and not args.quick and previous is not None:
        # one part re-run: the other parts keep their measurements, each with the record of its run
        rerun = {args.part, f"{args.part}_load_average", f"{args.part}_baseline"} - {"structure"}
        keep_parts(previous, result, [k for k in _STORED if k not in rerun])
    if args.part in ("speed", "both"):
        result["speed"] = speed(args.size)
    if args.part in ("cost", "both"):
        chains = getattr(args, "cost_chains", None)
        size = args.size if chains is None else Sizes({**args.size, "cost_chains": tuple(chains)})
        result["cost"] = step_cost(size)
        if getattr(args, "cost_baseline", None):
            with open(args.cost_baseline) as f:
                earlier = json.load(f)
            earlier = earlier.get(NAME, earlier)  # a results file, or one benchmark's part of several
            result["cost_baseline"] = {"label": args.cost_baseline_label, "rows": earlier["cost"]}
    if args.part in ("structure", "both"):
        seeds = list(range(args.first_seed, args.size.seeds or args.seeds))
        burn_in = args.size.burn_in or args.burn_in or (1000 if args.kernel == "rjhmc" else 20_000)
        dims = args.dims[: args.size.dims]  # None: every one
        previous_rows = result.get("structure", [])
        stored = [r for r in previous_rows if _kernel(r) != args.kernel]
        smc = (8, 2) if args.quick else (args.smc_particles, "auto")  # a quick run stays quick
        rows = structure(dims, seeds, burn_in, args.size, args.kernel, stored, smc, args.n_jobs)
        # the other kernel's stored rows stay beside the new ones (rows before kernels were named: rjmcmc),
        # and so do this kernel's rows of the cases (p, seed) not re-run
        ran = {(r["p"], r["seed"]) for r in rows}
        kept = [r for r in previous_rows if _kernel(r) != args.kernel or (r["p"], r["seed"]) not in ran]
        for r in kept:  # rows stored before these keys were
            r.setdefault("kernel", "rjmcmc")
            r.setdefault("burn_in", result.get("structure_burn_in", 20_000))
            r.setdefault("n_samples", 100)
            r.setdefault("thin", 10)
        result["structure"] = kept + rows
        result.pop("structure_burn_in", None)
    if args.part in ("baselines", "both"):
        result["baselines"] = baselines(args.size)
    return {NAME: result}


def _kernel(row):
    """The kernel of a structure row (rows stored before kernels were named: rjmcmc)."""
    return row.get("kernel", "rjmcmc")


def _load(result, part):
    """The load average at the end of the run that measured ``part`` (stored with the part by older runs)."""
    loads = part_loads(result, part)
    return loads[1] if loads is not None else result.get(f"{part}_load_average", float("nan"))


def _mean(rows, key, spec=".3f"):
    """The rows' mean of ``key``, or '-' when a row lacks it."""
    return format(np.mean([r[key] for r in rows]), spec) if all(key in r for r in rows) else "-"


def _jumps(rows):
    """The births or deaths per transition of SMC rows, one value or each seed's (8 where not recorded)."""
    jumps = [str(r.get("n_jumps", 8)) for r in rows]
    return f"{jumps[0]} jumps" if len(set(jumps)) == 1 else f"{'; '.join(jumps)} jumps (per seed)"


def _per_second(within, rows):
    per_s = np.median([e / r["time_sparse_s"] for e, r in zip(within, rows)])
    return f"{np.median(within):.0f} / {per_s:.2f}"


def _structure_row(kernel, p, rs):
    """The table's row of one kernel at one p, the seeds pooled."""
    ess = [r.get("ess_sparse", float("nan")) for r in rs]
    within = [r.get("within_ess_sparse", float("nan")) for r in rs]
    rhat = "-" if kernel == "smc" else f"{np.median([r['rhat_sparse'] for r in rs]):.2f}"
    hits = _mean(rs, "hits_top", ".1f")
    ranks = "; ".join(",".join(map(str, r["relevant_ranks"])) for r in rs)
    first = rs[0]
    if kernel == "smc":
        chain = f"{first['n_samples']} particles, " + _jumps(rs)
    else:
        chain = f"{first.get('burn_in', 20_000)} + {first.get('n_samples', 100)} x {first.get('thin', 10)}"
    return {
        "kernel": kernel,
        "p": p,
        "relevant first": f"{sum(r['relevant_first'] for r in rs)} / {len(rs)}",
        "ranks of the relevant inputs (per seed)": ranks,
        "in top k: sparse / correlation": f"{hits} / {_mean(rs, 'correlation_hits_top', '.1f')}",
        "RMSE sparse": _mean(rs, "rmse_sparse"),
        "RMSE sparse, chains stacked": _mean(rs, "rmse_sparse_stacking"),
        "RMSE full": _mean(rs, "rmse_full"),
        "excess sparse": _mean(rs, "excess_sparse"),
        "excess full": _mean(rs, "excess_full"),
        "active": _mean(rs, "active_fraction", ".0%"),
        "R-hat sparse / full (median)": f"{rhat} / {np.median([r['rhat_full'] for r in rs]):.2f}",
        "ESS sparse (median)": "-" if np.isnan(ess).all() else f"{np.median(ess):.0f}",
        "within-chain ESS / per s (median)": "-" if np.isnan(within).all() else _per_second(within, rs),
        "sparse fit s": _mean(rs, "time_sparse_s", ".0f"),
        "burn-in + draws x thin": chain,
    }


def _cost_row(r):
    return {
        "network": f"{r['p']}-8-8-8-1",
        "Q": r["n_params"],
        "chains": r["K"],
        "leapfrog steps + jumps": f"{r['leapfrog_steps']:.0f} + {r['n_jumps']}",
        "ms / transition": f"{r['step_ms']:.1f}",
        "ms / gradient alone / in the transition": f"{r['grad_ms']:.2f} / {r['grad_in_step_ms']:.2f}",
        "HMC gradients": f"{r['hmc_share']:.0%}",
        "jump evaluations": f"{r['jump_eval_share']:.0%}",
        "jump bookkeeping": f"{r['jump_bookkeeping_share']:.0%}",
        "HMC bookkeeping": f"{r['hmc_bookkeeping_share']:.0%}",
    }


def _cost_comparison(r, earlier):
    """A cost row of this version beside the same transitions of the baseline version."""
    return {
        "network": f"{r['p']}-8-8-8-1",
        "chains": r["K"],
        "ms / transition": f"{earlier['step_ms']:.1f} / {r['step_ms']:.1f}",
        "jump bookkeeping": f"{earlier['jump_bookkeeping_share']:.0%} / {r['jump_bookkeeping_share']:.0%}",
        "jump evaluations": f"{earlier['jump_eval_share']:.0%} / {r['jump_eval_share']:.0%}",
    }


def report(results):
    """The tables of the parts stored."""
    result = results[NAME]
    tables, notes = [], []
    if "speed" in result:
        rows = [
            {
                "network": f"{r['p']}-{'-'.join(map(str, r['hidden']))}-1",
                "Q": r["n_params"],
                "n": r["n"],
                "chains": r["K"],
                "RJ steps/s": f"{r['rj_steps_per_s']:.0f}",
                "MALA steps/s": f"{r['mala_steps_per_s']:.0f}",
                "RJ / MALA": f"{r['rj_steps_per_s'] / r['mala_steps_per_s']:.2f}",
            }
            for r in result["speed"]
        ]
        tables.append(dict_table("Kernel speed", rows))
        notes.append(
            "Speed: float32, one thread, the chains batched; the two kernels timed in alternating blocks; "
            f"load average {_load(result, 'speed'):.1f} at the end."
        )
    if "cost" in result:
        tables.append(dict_table("What an RJHMC transition costs", [_cost_row(r) for r in result["cost"]]))
        if "cost_baseline" in result:
            label = result["cost_baseline"]["label"]
            earlier = {(r["p"], r["K"]): r for r in result["cost_baseline"]["rows"]}
            rows = [
                _cost_comparison(r, earlier[r["p"], r["K"]])
                for r in result["cost"]
                if (r["p"], r["K"]) in earlier
            ]
            if rows:  # the baseline measured these networks and chains
                tables.append(dict_table(f"The same transitions: {label} / this version", rows))
            notes.append(
                "The same transitions before and after: the cost part run by this version of the benchmark "
                f"on {label} (its rows stored beside this run's as cost_baseline), then on this version, one "
                "after the other on the same machine. 'jump bookkeeping' is the choice of the move and of "
                "the coordinate, the newborn's proposal and the ratio; 'jump evaluations' the network's loss "
                "and gradient calls of the jumps."
            )
        notes.append(
            "Cost: paper 001's network and data (n = 750, lambda = 5 n, uniform prior on [-1, 1]), float32, "
            "one thread; the kernel warmed up for 200 transitions, then five rounds of 12 transitions, the "
            "quickest per evaluation kept (a busy machine slows some rounds, never speeds one up). Every "
            "share is timed inside the transitions: 'HMC gradients' and 'jump evaluations' are the time in "
            "the network's loss and gradient calls of the HMC move and of the jumps; 'jump bookkeeping' a "
            "jump's time less its evaluations (the choice of the move and the coordinate, the newborn's "
            "proposal, the acceptance ratio); 'HMC bookkeeping' the rest (the leapfrog arithmetic, the prior's "
            "terms, the momenta, the records). The price of a gradient is given timed alone (the same call "
            "repeated) and inside the transitions (the HMC move's gradient time over its leapfrog steps). "
            "64 chains are the particles of a sparse SMC run, whose mutations are these transitions. "
            f"Load average {_load(result, 'cost'):.1f}."
        )
    if "structure" in result:
        rows = []
        for kernel in ("rjhmc", "smc", "rjmcmc"):
            for p in sorted({r["p"] for r in result["structure"]}):
                rs = [r for r in result["structure"] if r["p"] == p and _kernel(r) == kernel]
                if rs:
                    rows.append(_structure_row(kernel, p, rs))
        if rows:
            tables.append(dict_table("Sparsity and the relevant inputs", rows))
        if any(r.get("kernel") == "smc" for r in result["structure"]):
            notes.append(
                "smc rows: SparseGibbsMLPRegressor(sampler=SMC(n_particles=P)), tempered SMC from networks "
                "with half their weights active to the mixing posterior, RJHMC moves at every stage; one "
                "population of particles, so R-hat, ESS and stacking do not apply ('-'); the dense fit of each "
                "seed is the one stored in the rjhmc row of that seed when the smc row ran (same data and "
                "settings; a later rerun of the rjhmc rows fits its own, so the two kernels' 'RMSE full' of a "
                "seed differ where the library changed between the runs). The rows of one "
                "kernel may come from several runs (a run measures the seeds from --first-seed on and keeps the "
                "kernel's other rows); a run with --n-jobs 2 fits two cases at once, each on one of the two "
                "cores, so its fit times include that sharing. 'jumps': the births or deaths per transition, "
                "SMC's n_jumps as 'auto' chose it for the network (rows stored before it was recorded ran with "
                "8, the default then)."
            )
        notes.append(
            "Structure: SparseGibbsMLPRegressor with four chains, by the kernel of each row (rjhmc: HMC moves "
            "inside each model and eight jumps a transition; rjmcmc: paper 001's, one jump and one Langevin "
            "move a step); GibbsMLPRegressor at its defaults (HMC). Held-out RMSE on the "
            "250 test points (noise standard deviation 0.1); excess risk: mean squared distance to f there. "
            "'relevant first': all k relevant inputs hold the k largest values of the input relevance "
            "(feature_inclusion\\_); 'in top k': how many of them do, on average, for the sparse posterior "
            "and for a screen by the absolute correlation of each input with y. R-hat and ESS of the function "
            "values at the training inputs (the worst of them): no fit has mixed (the chains settle in "
            "different modes of the function), so the errors and relevances are those of four unmixed chains "
            "pooled. Within-chain ESS: each chain's draws judged alone (within_chain_ess\\_, the worst chain "
            "and function value), how well a chain explores the mode it is in, per second of the fit. "
            "'chains stacked': the same draws with the chains weighted by the stacking of their "
            "leave-one-out densities on the training data (what chain_weights='stacking' gives, the "
            "estimator's default since 2026-11-30), against equal weights in 'RMSE sparse'; '-' where the "
            "row's run did not compute it. Rows run before that default computed the stacking weights from "
            "the fit's draws (the same weights, checked to the bit) and ranked the inputs by the "
            "feature_inclusion\\_ of equally weighted chains; later rows rank them by the fit's own, weighted "
            "as its predictions."
        )
    if "baselines" in result:
        b, d = result["baselines"], result["baselines"]["diabetes"]
        rows = [
            {
                "seed": r["seed"],
                "var f": f"{r['var_f']:.3f}",
                "excess, all inputs": f"{r['excess_all']:.3f}",
                "excess, relevant": f"{r['excess_relevant']:.3f}",
            }
            for r in b["mlp"]
        ]
        tables.append(dict_table("What a trained network learns at p = 100", rows))
        notes.append(
            "Baselines: scikit-learn's MLPRegressor (8, 8, 8), Adam at 0.01 for up to 3000 epochs, on the "
            "p = 100 design with all inputs and with the relevant inputs only. A SparseGibbsMLPRegressor at "
            f"the defaults of its run (hidden_layer_sizes={d.get('hidden_layer_sizes', '(100, 100)')}) on the "
            f"diabetes data: {d['time_s']:.0f} s, R-hat {d['rhat']:.2f}, "
            f"ESS {d['ess']:.0f}, active fraction {d['density_first']:.0%} at the first draw and "
            f"{d['density_last']:.0%} at the last."
        )
    return [Page(NAME, "Sparse networks: speed and structure", tables, notes)]


BENCHMARK = Benchmark(
    name=NAME,
    kind="performance",
    title="Sparse networks: kernel speed and input relevance",
    outputs=(Output(NAME, "Sparse networks: kernel speed and input relevance"),),
    run=run,
    report=report,
    add_arguments=add_arguments,
    sizes=SIZES,
)
