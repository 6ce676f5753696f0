"""Paper 001 Tables 1 and 2: MCMC by backprop with the full and the sparse (mixing) prior.

    python -m benchmarks run sparse_tables                 # 5 repetitions, the paper's chain lengths
    python -m benchmarks run sparse_tables --reps 2 --burn-in 5000 --quick

For p in {1, 10, 100}: X ~ U([0, 1]^p), y = sin(2 pi |A x|^2) + N(0, 0.01)
(:func:`skgibbs.datasets.make_sparse_sine`), 750 training points; the network (p, 8, 8, 8, 1) with ReLU
and an output bias; lambda = 5 n_train, gamma = 0.01, the proposal N(theta - gamma grad R_n, gamma^2) of
Algorithm 1 (``MALA(step_size=gamma / lambda, proposal_std=gamma)``), burn-in b, m = 100 draws with gap
c = 100, from a Glorot start on the raw (unstandardized) data, as the paper. Gradient descent runs b steps
at learning rate gamma from the same start.

The sparse chain (mixing prior, s = 2, uniform on [-B, B], about half of the parameters zero at the start)
runs the estimator's ``RJHMC`` (``--kernel rjhmc``, the first ``--rj-hold`` of its warm-up without jumps)
or paper 001's ``RJMCMC`` with the MALA chain's step, b and c. The paper omits the box, but the
dimension-changing moves need a proper density, and ``1 / (2B)`` per active parameter acts as extra
sparsity, so B = 1, the smallest the paper allows, and B = 2 are both run. Beside it, tempered SMC
(:mod:`skgibbs.samplers.smc.sparse`) carries a population from the reference (every weight active with
probability 1/2) to the same posterior; its rows are the posterior mean of its particles.

Excess risks are mean squared distances to the true f on M = 10000 fresh uniform points (the paper
evaluates on its 250 test points); Table 2's balls are those of :func:`skgibbs.credible.credible_sets`.
"""

import argparse
import math
import time

import numpy as np
import torch
from joblib import Parallel, delayed

from skgibbs.credible import credible_sets
from skgibbs.datasets import make_sparse_sine, sparse_sine_function
from skgibbs.model import MLPSpec
from skgibbs.potential import MLPPotential
from skgibbs.priors import MixingPrior, Prior
from skgibbs.samplers import MALA, RJHMC, RJMCMC, SMC, RunSettings, Target, run_chains

from .. import Benchmark, Output
from ..common.environment import load_after
from ..common.writer import Page, load

NAME = "sparse_tables"
PAPER_T1 = {  # mean (sd) of the excess risk, 50 repetitions
    "full_mean": {1: (0.0012, 0.0007), 10: (0.1504, 0.0638), 100: (0.3094, 0.0532)},
    "full_draw": {1: (0.0026, 0.0010), 10: (0.1566, 0.0638), 100: (0.3161, 0.0510)},
    "sparse_mean": {1: (0.0069, 0.0115), 10: (0.2335, 0.1108), 100: (0.2621, 0.0648)},
    "gd": {1: (0.0573, 0.1056), 10: (0.2471, 0.1367), 100: (0.4105, 0.0889)},
}
PAPER_T2 = {  # coverage (average radius)
    "ball": {1: (0.84, 0.0463), 10: (0.0, 0.3818), 100: (0.0, 0.5498)},
    "infl": {1: (1.0, 1.8207), 10: (0.88, 0.7555), 100: (1.0, 1.8402)},
}
PAPER_NONZERO = {1: 0.47, 10: 0.46, 100: 0.42}
N_TRAIN, GAMMA, M_EVAL = 750, 0.01, 10_000
#: the settings a run stores (``result["args"]``), the flags of the same names
SETTINGS = ("reps", "burn_in", "draws", "gap", "dims", "n_jobs", "bounds", "kernel", "rj_burn_in", "rj_gap")
SETTINGS += ("rj_hold", "smc_particles", "smc_max_steps")


def _problem(p, rep):
    """One repetition's data, evaluation points, network, potential, lambda and Glorot start."""
    X, y, A = make_sparse_sine(1000, p, noise=0.1, random_state=1000 * p + rep)
    Xtr = torch.as_tensor(X[:N_TRAIN], dtype=torch.float32)
    ytr = torch.as_tensor(y[:N_TRAIN], dtype=torch.float32)
    X_eval = np.random.default_rng(rep).uniform(size=(M_EVAL, p))
    f_eval = sparse_sine_function(X_eval, A)
    Xe = torch.as_tensor(X_eval, dtype=torch.float32)
    spec = MLPSpec(p, (8, 8, 8), "relu")
    pot = MLPPotential(spec, Xtr, ytr)
    gen = torch.Generator().manual_seed(rep)
    return Xtr, ytr, Xe, f_eval, spec, pot, 5.0 * N_TRAIN, spec.init_params(gen, 1, torch.float32)


def _smc(s):
    """SMC's particles and ``max_mcmc_steps`` from the settings ``s``."""
    steps = s["smc_max_steps"]
    return s["smc_particles"], steps if steps in ("auto", None) else int(steps)


def smc_only(p, rep, bounds, smc):
    """The SMC part of :func:`one_run` alone (``--smc-only``: added to the stored repetitions)."""
    torch.set_num_threads(1)
    _, _, Xe, f_eval, spec, pot, lam, theta0 = _problem(p, rep)
    out = {}
    for bound in bounds:
        target = Target(pot, MixingPrior(Prior(bound=bound), 2.0), lam)
        out.update(_smc_run(target, theta0, rep, spec, Xe, f_eval, bound, *smc))
    print({"p": p, "rep": rep, **out}, flush=True)
    return out


def _excess(spec, draws, Xe, f_eval):
    """The function values of ``draws`` at ``Xe`` and the excess risk of their mean."""
    F = spec.forward(torch.as_tensor(draws), Xe).double().numpy()
    return F, float(np.mean((F.mean(0) - f_eval) ** 2))


def one_run(p, rep, s):
    """One repetition at ``p`` under the settings ``s`` (those of :data:`SETTINGS`)."""
    torch.set_num_threads(1)
    Xtr, ytr, Xe, f_eval, spec, pot, lam, theta0 = _problem(p, rep)
    proposal = {"step_size": GAMMA / lam, "proposal_std": GAMMA}  # h and s fixed: nothing adapts
    lengths = {"n_samples": s["draws"], "burn_in": s["burn_in"], "thin": s["gap"]}
    out = {"p": p, "rep": rep}
    t = time.perf_counter()
    full = run_chains(Target(pot, None, lam), theta0, [rep], MALA(**proposal), **lengths)  # flat prior
    out["time_full_s"] = time.perf_counter() - t
    draws = full.samples[0]
    F, out["full_mean"] = _excess(spec, draws, Xe, f_eval)
    out["full_draw"] = float(np.mean((F[0] - f_eval) ** 2))
    out["full_acceptance"] = float(full.acceptance_rate[0])
    cs = credible_sets(F, draws, f_eval, 0.95, math.log(N_TRAIN))
    out.update(ball_cover=cs.covered, ball_radius=cs.radius)
    out.update(infl_cover=cs.covered_inflated, infl_radius=cs.inflated_radius)
    # the sparse chain: about half of the parameters zero at the start (§4)
    mask = torch.as_tensor(np.random.default_rng([rep, 1]).random(spec.n_params) < 0.5, dtype=torch.float32)
    for bound in s["bounds"]:
        t = time.perf_counter()
        prior = MixingPrior(Prior(bound=bound), 2.0)
        start = (theta0 * mask).clamp(-bound, bound)
        if s["kernel"] == "rjhmc":
            rj = RJHMC(hold_active=s["rj_hold"])
            rj_lengths = {"n_samples": s["draws"], "burn_in": s["rj_burn_in"], "thin": s["rj_gap"]}
        else:
            rj, rj_lengths = RJMCMC(**proposal), lengths
        sparse = run_chains(Target(pot, prior, lam), start, [rep + 1], rj, **rj_lengths)
        key = f"B{bound:g}"
        out[f"time_sparse_s_{key}"] = time.perf_counter() - t
        S = sparse.samples[0]
        out[f"sparse_mean_{key}"] = _excess(spec, S, Xe, f_eval)[1]
        out[f"nonzero_{key}"] = float((S != 0).mean())
        out[f"sparse_acceptance_{key}"] = float(sparse.acceptance_rate[0])
        out[f"move_acceptance_{key}"] = sparse.move_acceptance[0].tolist()
        out[f"grad_sparse_{key}"] = int(sparse.n_grad[0])
        if s["smc_particles"]:
            out.update(_smc_run(Target(pot, prior, lam), theta0, rep, spec, Xe, f_eval, bound, *_smc(s)))
    # gradient descent on R_n, same start and step
    theta = theta0.clone().requires_grad_(True)
    for _ in range(s["burn_in"]):
        loss = ((ytr - spec.forward(theta, Xtr)) ** 2).mean()
        (g,) = torch.autograd.grad(loss, theta)
        with torch.no_grad():
            theta -= GAMMA * g
    with torch.no_grad():
        out["gd"] = float(np.mean((spec.forward(theta, Xe)[0].double().numpy() - f_eval) ** 2))
    return out


def _smc_run(target, theta0, rep, spec, Xe, f_eval, bound, particles, max_steps):
    """Tempered SMC on the mixing posterior: the excess risk of its particles' mean, density and time."""
    t = time.perf_counter()
    res = SMC(n_particles=particles, max_mcmc_steps=max_steps).sample(
        target, theta0, [1000 * rep + k for k in range(4)], RunSettings()
    )
    S = res.samples[0]
    key = f"B{bound:g}"
    return {
        f"time_smc_s_{key}": time.perf_counter() - t,
        f"smc_mean_{key}": _excess(spec, S, Xe, f_eval)[1],
        f"nonzero_smc_{key}": float((S != 0).mean()),
        f"emptied_smc_{key}": int(np.sum((S != 0).mean(1) <= 0.05)),
        f"stages_smc_{key}": int(res.n_stages),
        f"log_evidence_smc_{key}": float(res.log_evidence),
    }


def add_arguments(parser):
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--burn-in", type=int, default=50_000)
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--gap", type=int, default=100)
    parser.add_argument("--dims", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--bounds", type=float, nargs="+", default=[1.0, 2.0])
    parser.add_argument("--kernel", choices=["rjhmc", "rjmcmc"], default="rjhmc")
    parser.add_argument("--rj-burn-in", type=int, default=1000)
    parser.add_argument("--rj-gap", type=int, default=5)
    parser.add_argument(
        "--rj-hold",
        type=float,
        default=0.5,
        help="fraction of the RJHMC warm-up without jumps (RJHMC's hold_active)",
    )
    parser.add_argument("--smc-particles", type=int, default=64, help="tempered SMC's particles; 0 skips it")
    parser.add_argument("--smc-max-steps", default="auto", help="SMC's max_mcmc_steps ('auto' or an int)")
    parser.add_argument(
        "--smc-only",
        action="store_true",
        help="run only SMC, for --dims and the first --reps repetitions, and add its rows to "
        "the stored runs (the other rows keep the stored measurements)",
    )


#: the flags a quick run sets (p = 1, one repetition, one bound, chains of a few tens of steps) and the workers
#: (``--n-jobs`` overrides)
SIZES = {
    "full": {"flags": {}, "n_jobs": 2},
    "quick": {
        "flags": {"reps": 1, "burn_in": 20, "draws": 5, "gap": 2, "dims": [1], "bounds": [1.0],
                  "rj_burn_in": 5, "rj_gap": 1, "smc_particles": 8, "smc_max_steps": "1"},
        "n_jobs": 1,
    },
}  # fmt: skip


def run(args):
    """Every repetition at every input dimension (quick: p = 1, one repetition, chains of a few tens of steps)."""
    vars(args).update(args.size.flags)  # a quick run's repetitions, dimensions and chains over the flags
    args.n_jobs = args.n_jobs or args.size.n_jobs
    if args.smc_only:
        return _add_smc(args)
    t0 = time.perf_counter()
    settings = {k: getattr(args, k) for k in SETTINGS}
    jobs = [(p, rep) for p in args.dims for rep in range(args.reps)]
    runs = Parallel(n_jobs=args.n_jobs)(delayed(one_run)(p, rep, settings) for p, rep in jobs)
    return {NAME: {"runs": runs, "args": settings, "runtime_s": time.perf_counter() - t0}}


def _add_smc(args):
    """SMC's keys added to the stored repetitions of ``--dims`` and the first ``--reps`` (``--smc-only``)."""
    stored = load(args.out, [NAME]).get(NAME)
    if stored is None:
        raise SystemExit(f"--smc-only adds SMC's rows to stored runs, and {args.out} holds no {NAME}.json")
    todo = [r for r in stored["runs"] if r["p"] in args.dims and r["rep"] < args.reps]
    smc = _smc(vars(args))
    t0 = time.perf_counter()
    parts = Parallel(n_jobs=args.n_jobs)(
        delayed(smc_only)(r["p"], r["rep"], stored["args"]["bounds"], smc) for r in todo
    )
    for r, part in zip(todo, parts):
        r.update(part)
    stored["args"].update(smc_particles=args.smc_particles, smc_max_steps=args.smc_max_steps)
    stored["smc_runtime_s"] = time.perf_counter() - t0
    return {NAME: stored}


def _mean(rows, key):
    return np.mean([r[key] for r in rows])


def _fmt(values):
    v = np.asarray(values, dtype=float)
    return f"{v.mean():.4f} ({v.std(ddof=1) if len(v) > 1 else 0:.4f})"


def _table1(runs, args, by_p):
    """Table 1's rows: the excess risks, then the non-zero fractions, each cell beside the paper's."""
    smc_bounds = [b for b in args.bounds if any(f"smc_mean_B{b:g}" in r for r in runs)]
    spec = [
        ("full_mean", "full_mean", "posterior mean, full prior"),
        ("full_draw", "full_draw", "one draw, full prior"),
    ]
    spec += [
        (f"sparse_mean_B{b:g}", "sparse_mean", f"posterior mean, mixing prior, B = {b:g}")
        for b in args.bounds
    ]
    spec += [
        (f"smc_mean_B{b:g}", "sparse_mean", f"posterior mean, mixing prior, B = {b:g}, SMC")
        for b in smc_bounds
    ]
    rows = []
    for key, paper_key, label in [*spec, ("gd", "gd", "gradient descent")]:
        row = [label]
        for p in args.dims:
            values = [r[key] for r in by_p[p] if key in r]  # SMC: the repetitions it was run on
            mean, sd = PAPER_T1[paper_key][p]
            row += [_fmt(values) if values else "-", f"{mean:.4f} ({sd:.4f})"]
        rows.append(row)
    for b in args.bounds:
        row = [f"non-zero fraction, mixing prior, B = {b:g}"]
        for p in args.dims:
            row += [f"{_mean(by_p[p], f'nonzero_B{b:g}'):.0%}", f"{PAPER_NONZERO[p]:.0%}"]
        rows.append(row)
    for b in smc_bounds:
        row = [f"non-zero fraction (emptied particles), mixing prior, B = {b:g}, SMC"]
        for p in args.dims:
            done = [r for r in by_p[p] if f"nonzero_smc_B{b:g}" in r]
            emptied = sum(r[f"emptied_smc_B{b:g}"] for r in done)
            density = _mean(done, f"nonzero_smc_B{b:g}") if done else math.nan
            row += [
                f"{density:.0%} ({emptied} of {len(done)} runs)" if done else "-",
                f"{PAPER_NONZERO[p]:.0%}",
            ]
        rows.append(row)
    return rows, smc_bounds


def _notes(result, args, smc_bounds):
    runs, load = result["runs"], load_after(result, lambda r: r["load_average"])
    total = f"; total {result['runtime_s']:.0f} s" if "runtime_s" in result else ""  # not stored before
    if getattr(args, "kernel", "rjmcmc") == "rjhmc":
        hold = getattr(args, "rj_hold", 0.0)  # runs stored before the option held no jump-free warm-up
        held = (
            f", the first {hold:.0%} of them HMC moves alone on the starting active set (hold_active={hold:g})"
            if hold
            else ""
        )
        sparse_run = (
            f"the mixing prior by RJHMC (the estimator's kernel): {args.rj_burn_in} warm-up transitions{held}, "
            f"then the m draws every {args.rj_gap}th transition"
        )
    else:
        sparse_run = "the mixing prior by paper 001's RJMCMC with the MALA chain's step, b and c"
    smc_note = ""
    if smc_bounds:
        done = []
        for p in args.dims:
            reps = [r["rep"] for r in runs if r["p"] == p and any(k.startswith("smc_mean_") for k in r)]
            done.append(f"p = {p}: {len(reps)} of {args.reps} repetitions" if reps else f"p = {p}: not run")
        smc_note = (
            f" Tempered SMC: {args.smc_particles} particles from the reference (every weight active with "
            "probability 1/2) along the bridge to the same posterior, "
            f"max_mcmc_steps={args.smc_max_steps!r}, on {'; '.join(done)}; its row is the mean over the "
            "repetitions it ran on; a particle counts as emptied with 5% or fewer of its weights active."
        )
    return [
        f"{args.reps} repetitions per p (the paper: 50), burn-in b = {args.burn_in}, m = {args.draws} draws, "
        f"gap c = {args.gap} for the full prior's MALA chain; {sparse_run}. "
        f"One chain per prior and repetition, float32, one thread per job, "
        f"{args.n_jobs} jobs; load average {load:.1f}{total}.{smc_note}",
        "Excess risk: mean squared distance to f on 10000 fresh uniform inputs (the paper: its 250 test "
        "points). Coverage and radius: alpha = 0.05; the radii are norms (square roots of the paper's "
        "z-quantile for tau_alpha), the inflated ball uses the sup-norm parameter radius times log(750).",
    ]


def report(results):
    """Tables 1 and 2 beside the paper's, and the acceptance and time per chain."""
    result = results[NAME]
    runs, args = result["runs"], argparse.Namespace(**result["args"])
    by_p = {p: [r for r in runs if r["p"] == p] for p in args.dims}
    t1_rows, smc_bounds = _table1(runs, args, by_p)
    header = ["estimator"] + [f"{w} p={p}" for p in args.dims for w in ("skgibbs", "paper")]
    t2_rows = []
    for key, label in [("ball", "C(tau_alpha)"), ("infl", "C(log(n) tau_alpha^I)")]:
        row = [label]
        for p in args.dims:
            cover, radius = PAPER_T2[key][p]
            row += [f"{_mean(by_p[p], key + '_cover'):.0%} ({_mean(by_p[p], key + '_radius'):.4f})"]
            row += [f"{cover:.0%} ({radius:.4f})"]
        t2_rows.append(row)
    b0 = f"B{args.bounds[0]:g}"
    acc_rows = []
    for p, rs in by_p.items():
        smc_times = [r[f"time_smc_s_{b0}"] for r in rs if f"time_smc_s_{b0}" in r]
        acc_rows.append(
            [
                p,
                f"{_mean(rs, 'full_acceptance'):.3f}",
                f"{_mean(rs, f'sparse_acceptance_{b0}'):.3f}",
                " / ".join(f"{v:.3f}" for v in np.mean([r[f"move_acceptance_{b0}"] for r in rs], 0)),
                f"{_mean(rs, 'time_full_s'):.1f}",
                f"{_mean(rs, f'time_sparse_s_{b0}'):.1f}",
                f"{np.mean(smc_times):.1f}" if smc_times else "-",
            ]
        )
    acc_header = ["p", "MALA acc.", "RJ acc.", "RJ death / within / birth", "MALA s", "RJ s", "SMC s"]
    tables = [
        ("Table 1: excess risk, mean (sd)", header, t1_rows),
        ("Table 2: coverage (average radius)", header, t2_rows),
        (f"Acceptance and time per chain (RJ: B = {args.bounds[0]:g})", acc_header, acc_rows),
    ]
    return [
        Page(NAME, "Paper 001 Tables 1-2: full and sparse priors", tables, _notes(result, args, smc_bounds))
    ]


BENCHMARK = Benchmark(
    name=NAME,
    kind="reproduction",
    title="Paper 001 Tables 1-2: full and sparse priors",
    outputs=(Output(NAME, "Paper 001 Tables 1-2: full and sparse priors"),),
    run=run,
    report=report,
    add_arguments=add_arguments,
    sizes=SIZES,
)
