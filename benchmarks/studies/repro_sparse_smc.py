"""Sampling, not sitting: independent tempered-SMC runs against RJHMC's chains on paper 001's p = 10 design.

    python -m benchmarks run sparse_smc                   # four SMC runs and one four-chain RJHMC fit
    python -m benchmarks run sparse_smc --particles 128 --max-mcmc-steps 15 --output sparse_smc_128

The design of the ``sparse`` benchmark's structure part (``make_sparse_sine``: 1000 points, 750 to train,
p = 10, seed 0), the (10, 8, 8, 8, 1) ReLU network at the paper's temperature (lambda = 5 n_train on the raw
scale). ``SparseGibbsMLPRegressor(sampler=SMC(n_particles=P))`` is fitted ``--runs`` times from different
seeds, the default RJHMC fit (four chains) once. A run (an SMC fit, or one RJHMC chain) is a *group*; two
groups agree when

- every input's ``feature_inclusion_`` differs by at most 3 Monte Carlo standard errors,
  ``|m_a - m_b| <= 3 sqrt(se_a^2 + se_b^2)``, with ``se`` the standard deviation of the group's draws over
  the square root of their effective number: the particles of an SMC run counted as independent (so that
  agreement is the hardest to reach), a chain's draws by their within-chain effective sample size;
- the predictive means at the training inputs differ by at most 0.1 posterior standard deviations (of the
  function values, over all the groups' draws pooled), at the worst input and as the root mean square.
"""

import itertools
import time
import warnings
from types import SimpleNamespace

import numpy as np
import torch
from joblib import Parallel, delayed

from skgibbs import SparseGibbsMLPRegressor
from skgibbs.datasets import make_sparse_sine, sparse_sine_function
from skgibbs.diagnostics import effective_sample_size
from skgibbs.samplers import SMC
from skgibbs.estimators.sparse import evidence_weights, input_relevance, monte_carlo_error

from .. import Benchmark, Output, Sizes
from ..common.tables import dict_table
from ..common.writer import Page

NAME = "sparse_smc"
SIZES = {
    "full": {"runs": 4, "particles": 64, "p": 10, "rj_burn_in": 1000, "rj_draws": 200, "pretrain_iter": 3000,
             "max_mcmc_steps": "auto", "target_ess": 0.5, "n_jumps": 8},
    "quick": {"runs": 2, "particles": 8, "p": 2, "rj_burn_in": 5, "rj_draws": 5, "pretrain_iter": 10,
              "max_mcmc_steps": 1, "target_ess": 0.5, "n_jumps": 2},
}  # fmt: skip


def _design(p, seed):
    X, y, A = make_sparse_sine(1000, p, random_state=seed)
    Xtr, ytr, Xte = X[:750], y[:750], X[750:]
    return Xtr, ytr, Xte, y[750:], sparse_sine_function(Xte, A), np.flatnonzero((A != 0).any(0))


def _group(F, relevance, n_eff):
    """What one group's draws say: the predictive means and variances, the relevance means and their
    standard errors."""
    return {
        "mean_f": F.mean(1).tolist(),
        "var_f": F.var(1).tolist(),
        "relevance": relevance.mean(0).tolist(),
        "relevance_se": (relevance.std(0, ddof=1) / np.sqrt(n_eff)).tolist(),
        "n_eff": np.asarray(n_eff, dtype=float).tolist(),
    }


def _scores(est, Xte, yte, f_te, relevant):
    """The held-out RMSE and excess risk (mean squared distance to f), and the relevant inputs' ranks."""
    pred = est.predict(Xte)
    order = np.argsort(-np.asarray(est.feature_inclusion_), kind="stable")
    return {
        "rmse": float(np.sqrt(np.mean((pred - yte) ** 2))),
        "excess": float(np.mean((pred - f_te) ** 2)),
        "ranks": sorted(int(np.flatnonzero(order == j)[0]) + 1 for j in relevant),
    }


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the RJHMC fit warns that its chains have not mixed: measured here
        t = time.perf_counter()
        est.fit(X, y)
        return time.perf_counter() - t


def _smc_run(common, sampler, r, Xtr, ytr, test):
    """One SMC run on one torch thread: its row and its draws of f at the training inputs."""
    torch.set_num_threads(1)
    est = SparseGibbsMLPRegressor(**common, sampler=sampler, random_state=r)
    seconds = _fit(est, Xtr, ytr)
    S = est.samples_[0]
    F = est.predict_samples(Xtr)
    steps = est.temperature_path_["n_mcmc_steps"]
    row = {
        **_group(F, input_relevance(est.spec_, S), len(S)),
        "seconds": seconds,
        "log_evidence": est.log_evidence_,
        "n_stages": int(est.n_stages_),
        "n_grad": int(est.n_grad_evals_[0]),
        "transitions": float(np.nansum(steps)),
        "capped_stages": int(np.sum(steps[1:] >= np.nanmax(steps))),
        "active": float((S != 0).mean()),
        **_scores(est, *test),
    }
    print({k: v for k, v in row.items() if not isinstance(v, list) or k == "ranks"}, flush=True)
    return row, F


def run(args):
    torch.set_num_threads(1)
    size, seed = args.size, 0
    if not args.quick:  # the options given override the full run's sizes
        chosen = {
            k: getattr(args, k) for k in ("particles", "runs", "max_mcmc_steps", "target_ess", "n_jumps")
        }
        size = Sizes({**size, **{k: v for k, v in chosen.items() if v is not None}})
    Xtr, ytr, Xte, yte, f_te, relevant = _design(size.p, seed)
    test = (Xte, yte, f_te, relevant)
    common = {
        "hidden_layer_sizes": (8, 8, 8),
        "temperature": 1.0 / (5.0 * ytr.var()),
        "pretrain_iter": size.pretrain_iter,
    }
    settings = {key: size[key] for key in ("max_mcmc_steps", "target_ess", "n_jumps")}
    sampler = SMC(n_particles=size.particles, **settings)
    runs = Parallel(n_jobs=args.n_jobs)(
        delayed(_smc_run)(common, sampler, r, Xtr, ytr, test) for r in range(size.runs)
    )
    smc_runs = [row for row, _ in runs]
    log_z = monte_carlo_error(
        [SimpleNamespace(log_evidence_=row["log_evidence"]) for row in smc_runs], "log_evidence_"
    )
    rj = SparseGibbsMLPRegressor(
        **common, burn_in=size.rj_burn_in, n_samples=size.rj_draws, random_state=seed
    )
    rj_seconds = _fit(rj, Xtr, ytr)
    chains = []
    F_all = rj.predict_samples(Xtr).reshape(len(Xtr), rj.samples_.shape[0], -1)
    for k in range(rj.samples_.shape[0]):
        relevance = input_relevance(rj.spec_, rj.samples_[k])
        n_eff = effective_sample_size(relevance[None]) if relevance.shape[0] >= 4 else np.full(size.p, 1.0)
        chains.append(_group(F_all[:, k], relevance, np.maximum(n_eff, 1.0)))
    result = {
        "settings": {**size, "seed": seed, "relevant": relevant.tolist(), "n_jobs": args.n_jobs or 1},
        "smc": smc_runs,
        "log_evidence": [float(v) for v in log_z],
        # the posterior sd of f at each training input: the draws of all the groups of a sampler pooled
        "posterior_sd": np.concatenate([F for _, F in runs], 1).std(1).tolist(),
        "rjhmc": {
            "chains": chains,
            "posterior_sd": F_all.reshape(len(Xtr), -1).std(1).tolist(),
            "seconds": rj_seconds,
        },
    }
    result["rjhmc"].update(_scores(rj, *test), rhat=float(rj.rhat_))
    return {args.output: result}


def add_arguments(parser):
    add = parser.add_argument
    add("--particles", type=int, default=None, help="particles per SMC run (default 64)")
    add("--max-mcmc-steps", type=_steps, default=None, help="max_mcmc_steps of the SMC: an int or auto")
    add("--runs", type=int, default=None, help="independent SMC runs (default 4)")
    add(
        "--target-ess",
        type=float,
        default=None,
        help="target_ess of the SMC: the ESS kept at each stage (default 0.5)",
    )
    add(
        "--n-jumps",
        type=_steps,
        default=None,
        help="n_jumps of the SMC: births or deaths per transition, an int or auto (default 8, that of the stored "
        "pages before sparse_smc_j32; auto is the library's default)",
    )
    add("--output", default=NAME, help=f"name of the result files (default {NAME})")


def _steps(text):
    return text if text == "auto" else int(text)


def agreement(groups, posterior_sd):
    """The worst pair of groups: the largest ``|m_a - m_b| / sqrt(se_a^2 + se_b^2)`` over the inputs,
    and the largest difference of the predictive means in posterior standard deviations (at the worst
    training input, and as the root mean square over them)."""
    z, worst, rms = 0.0, 0.0, 0.0
    sd = np.maximum(np.asarray(posterior_sd), 1e-12)
    for a, b in itertools.combinations(groups, 2):
        diff = np.abs(np.subtract(a["relevance"], b["relevance"]))
        se = np.sqrt(np.square(a["relevance_se"]) + np.square(b["relevance_se"]))
        # a difference without a standard error is infinitely many of them (none: zero)
        ratio = np.where(se > 0, diff / np.maximum(se, 1e-300), np.where(diff > 0, np.inf, 0.0))
        z = max(z, float(np.max(ratio)))
        d = np.abs(np.subtract(a["mean_f"], b["mean_f"])) / sd
        worst, rms = max(worst, float(d.max())), max(rms, float(np.sqrt(np.mean(d * d))))
    return z, worst, rms


def equivalent_draws(groups):
    """How many independent draws of f one group is worth: the median over the inputs of the mean
    within-group variance over the variance of the groups' means (None without ``var_f`` or with
    fewer than two groups)."""
    if len(groups) < 2 or any("var_f" not in g for g in groups):
        return None
    between = np.var([g["mean_f"] for g in groups], axis=0, ddof=1)
    within = np.mean([g["var_f"] for g in groups], axis=0)
    return float(np.median(within / np.maximum(between, 1e-300)))


def pooled(smc, relevant):
    """The runs' inclusion of the relevant inputs, with equal weights and pooled by their evidence
    (:func:`skgibbs.estimators.sparse.monte_carlo_error`): the table rows, and the evidence weights and effective runs."""
    fits = [
        SimpleNamespace(log_evidence_=r["log_evidence"], relevance=np.asarray(r["relevance"])) for r in smc
    ]
    equal, equal_se = monte_carlo_error(fits, "relevance")
    weighted, weighted_se = monte_carlo_error(fits, "relevance", weights="evidence")
    rows = [
        [str(j), ", ".join(f"{r['relevance'][j]:.3f}" for r in smc), f"{equal[j]:.3f} ± {equal_se[j]:.3f}",
         f"{weighted[j]:.3f} ± {weighted_se[j]:.3f}" if np.isfinite(weighted_se[j]) else
         f"{weighted[j]:.3f} (one run carries it)"]
        for j in relevant
    ]  # fmt: skip
    return rows, *evidence_weights(fits)


def report(results):
    return [_page(stem, result) for stem, result in results.items()]


def _run_row(run, r):
    """A row of the table of runs: an SMC run's, or the RJHMC fit's ('-' where it has no value)."""
    return {
        "run": run,
        "log evidence": f"{r['log_evidence']:.1f}" if "log_evidence" in r else "-",
        "stages": r.get("n_stages", "-"),
        "transitions": f"{r['transitions']:.0f}" if "transitions" in r else "-",
        "active": f"{r['active']:.0%}" if "active" in r else "-",
        "ranks of the relevant": ",".join(map(str, r["ranks"])),
        "RMSE": f"{r['rmse']:.3f}",
        "excess": f"{r['excess']:.3f}",
        "s": f"{r['seconds']:.0f}",
    }


def _page(stem, result):
    settings, smc, rj = result["settings"], result["smc"], result["rjhmc"]
    rows = []
    for label, groups, seconds, sd in (
        (f"SMC, {len(smc)} independent runs of {settings['particles']} particles", smc,
         np.mean([r["seconds"] for r in smc]), result["posterior_sd"]),
        (f"RJHMC, the {len(rj['chains'])} chains of one fit", rj["chains"], rj["seconds"], rj["posterior_sd"]),
    ):  # fmt: skip
        z, worst, rms = agreement(groups, sd)
        worth = equivalent_draws(groups)
        rows.append(
            {
                "groups": label,
                "inclusion: worst |difference| / se": f"{z:.1f}",
                "means: worst input (sd)": f"{worst:.2f}",
                "means: rms (sd)": f"{rms:.2f}",
                "f: independent draws a group is worth": "-" if worth is None else f"{worth:.1f}",
                "s per run": f"{seconds:.0f}",
            }
        )
    runs = [_run_row(i, r) for i, r in enumerate(smc)] + [_run_row("RJHMC", rj)]
    log_z, log_z_se = result["log_evidence"]
    pooled_rows, weights, effective_runs = pooled(smc, settings["relevant"])
    shared = (
        f", the SMC runs {settings['n_jobs']} at a time on the two cores."
        if settings.get("n_jobs", 1) > 1
        else "."
    )
    notes = [
        f"p = {settings['p']}, seed {settings['seed']} (relevant inputs {settings['relevant']}), "
        "750 training points, the (p, 8, 8, 8, 1) ReLU network at lambda = 5 n_train on the raw scale; "
        f"SMC(n_particles={settings['particles']}, max_mcmc_steps={settings['max_mcmc_steps']!r}, "
        # stored before the options: their defaults
        f"target_ess={settings.get('target_ess', 0.5)}, n_jumps={settings.get('n_jumps', 8)}); RJHMC: "
        f"the estimator's default kernel, {settings['rj_burn_in']} warm-up transitions and "
        f"{settings['rj_draws']} draws per chain. One thread per fit; times are per SMC run and per RJHMC fit"
        + shared,
        "Inclusion: the largest difference of an input's feature_inclusion_ between two groups in units of "
        "their combined Monte Carlo standard error (an SMC run's particles counted as independent, a chain's "
        "draws by their effective sample size); the target is at most 3. Predictive means: the largest "
        "difference between two groups at the training inputs in posterior standard deviations of f (the "
        "draws of all the groups), at the worst input and as the root mean square over the inputs; the "
        "target is at most 0.1.",
        "Independent draws a group is worth: at each training input, the mean variance of f within a group "
        "over the variance of the groups' means, the median over the inputs (how many independent draws of "
        "the posterior would vary as much as the groups' means do; the means agree to 0.1 sd when a group is "
        "worth about 200).",
        f"log_evidence_ over the SMC runs: {log_z:.2f} ± {log_z_se:.2f} (mean ± standard error).",
        "Pooled by evidence: monte_carlo_error(fits, weights='evidence'), run r weighing "
        "exp(log_evidence_r) / sum_s exp(log_evidence_s) (here "
        + ", ".join(f"{w:.3f}" for w in weights)
        + f"; {effective_runs:.1f} effective runs), with the ratio estimator's standard error.",
    ]
    pooled_header = ["input", "each run", "equal weights (± se)", "pooled by evidence (± se)"]
    tables = [
        dict_table("Do independent groups of draws agree?", rows),
        dict_table("Each SMC run", runs),
        (
            "Inclusion of the relevant inputs: the runs, their mean, and the runs pooled by evidence",
            pooled_header,
            pooled_rows,
        ),
    ]
    return Page(stem, "Sparse networks: tempered SMC runs against RJHMC chains", tables, notes)


BENCHMARK = Benchmark(
    name=NAME,
    kind="reproduction",
    title="Sparse networks: tempered SMC runs against RJHMC chains",
    outputs=(
        Output(NAME, "Sparse networks: tempered SMC runs against RJHMC chains"),
        Output(
            f"{NAME}_128",
            "Sparse networks: SMC runs of 128 particles, stages of at most 15 transitions",
            flags="--particles 128 --max-mcmc-steps 15 --output sparse_smc_128",
        ),
        Output(
            f"{NAME}_ess80",
            "Sparse networks: SMC runs of 128 particles with smaller stages (target_ess=0.8)",
            flags="--particles 128 --max-mcmc-steps 8 --target-ess 0.8 --output sparse_smc_ess80",
        ),
        Output(
            f"{NAME}_256",
            "Sparse networks: SMC runs of 256 particles, stages of at most 8 transitions",
            flags="--particles 256 --max-mcmc-steps 8 --output sparse_smc_256",
        ),
        Output(
            f"{NAME}_512",
            "Sparse networks: SMC runs of 512 particles, stages of at most 4 transitions",
            flags="--particles 512 --max-mcmc-steps 4 --output sparse_smc_512",
        ),
        Output(
            f"{NAME}_j32",
            "Sparse networks: SMC runs of 64 particles with 32 births or deaths per transition",
            flags="--n-jumps 32 --n-jobs 2 --output sparse_smc_j32",
        ),
    ),
    run=run,
    report=report,
    sizes=SIZES,
    add_arguments=add_arguments,
)
