"""Reproduce Tables 1-3 of paper 004 (§4.1): the Gibbs generalization gap and its estimates in linear models.

Settings (§4.1): ``p = 1.5 n``, the design of :func:`benchmarks.common.paper004.linear_design` with
spectra (i) (n = 100..400), (ii) and (iii) (n = 200..800), one design per (spectrum, n) and 50 responses
``y ~ N(X beta_0, I)``; ``alpha = 0.1``, ``sigma_0^2 = 1`` known. Rows, mean and sd over the responses:
``Delta = tr(H_alpha)`` (Lemma 2 (6)); ``TIC(kappa)``, kappa = 0, 0.1
(:func:`skgibbs.criteria.tic_linear`, which drops the directions whose singular value of ``X`` is at most
kappa: the reading under which Table 2's TIC(0.1) is matched); FV (5) from ``T = 15 n`` draws of the
quasi-posterior (1) and exact; ``E_y[FV]`` (Lemma 2 (7)); LFV (13) with ``delta = 1 / (10 n)`` and
``T = 15 n`` iterates of (10) started at the ridge estimate, all kept (the paper states no burn-in), the
responses run as one batch of chains (:func:`skgibbs.criteria.langevin_fv_chains`).

Run ``python -m benchmarks run lfv_linear`` (``--n-jobs`` runs the 12 cells in parallel); it writes
``benchmarks/results/lfv_linear.{json,rst}``.
"""

import time

import numpy as np
import torch
from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits

from skgibbs import criteria
from skgibbs.potential import LinearPotential

from .. import Benchmark, Output
from ..common.environment import recorded, was_quick
from ..common.paper004 import linear_design, ridge_fit, singular_values, timed
from ..common.writer import Page

NAME = "lfv_linear"
ALPHA = 0.1
NS = {"i": (100, 200, 300, 400), "ii": (200, 400, 600, 800), "iii": (200, 400, 600, 800)}
TITLES = {
    "i": "Table 1, setting (i): s_i = sqrt(n) for i <= 10, else 0",
    "ii": "Table 2, setting (ii): s_i = sqrt(n) / i",
    "iii": "Table 3, setting (iii): s_i = sqrt(n / i)",
}
LABELS = {
    "gap": "Delta = tr(H_alpha)",
    "tic0": "TIC(kappa = 0)",
    "tic01": "TIC(kappa = 0.1)",
    "fv": "FV, T = 15n draws of (1)",
    "fv_exact": "FV, exact under (1)",
    "efv": "E_y[FV] (Lemma 2)",
    "lfv": "LFV, delta = 1/(10n), T = 15n",
}
# paper 004 Tables 1-3: (mean, sd) per n; sd None where the paper gives none
PAPER = {
    "i": {
        "gap": [(9.091, None)] * 4,
        "tic0": [(8.752, 1.284), (9.272, 0.941), (9.633, 0.829), (9.536, 0.769)],
        "tic01": [(8.752, 1.284), (9.272, 0.941), (9.633, 0.829), (9.536, 0.769)],
        "fv": [(8.432, 1.180), (8.658, 0.864), (8.907, 0.761), (8.781, 0.693)],
        "efv": [(8.527, None), (8.810, None), (8.902, None), (8.946, None)],
        "lfv": [(8.317, 1.144), (8.815, 0.931), (9.044, 0.8463), (8.951, 0.743)],
    },
    "ii": {
        "gap": [(4.417, None), (4.442, None), (4.451, None), (4.455, None)],
        "tic0": [(192.5, 18.01), (390.1, 24.97), (589.2, 35.37), (787.6, 39.41)],
        "tic01": [(135.6, 12.83), (194.1, 12.41), (239.8, 14.52), (277.7, 13.92)],
        "fv": [(4.295, 0.415), (4.302, 0.354), (4.351, 0.306), (4.369, 0.255)],
        "efv": [(4.305, None), (4.385, None), (4.412, None), (4.425, None)],
        "lfv": [(3.985, 0.491), (4.193, 0.467), (4.272, 0.357), (4.341, 0.305)],
    },
    "iii": {
        "gap": [(29.98, None), (36.66, None), (40.63, None), (43.46, None)],
        "tic0": [(149.7, 14.68), (335.3, 21.68), (527.6, 33.40), (721.0, 37.64)],
        "tic01": [(149.7, 14.68), (335.3, 21.68), (527.6, 33.40), (721.0, 37.64)],
        "fv": [(24.68, 2.250), (32.32, 2.026), (37.06, 2.292), (40.33, 2.046)],
        "efv": [(24.78, None), (32.60, None), (37.26, None), (40.53, None)],
        "lfv": [(22.32, 2.092), (30.77, 2.100), (35.83, 2.346), (39.42, 2.052)],
    },
}


def run_cell(setting, n, n_rep, t_factor, seed):
    """All rows of one (spectrum, n) cell, on one thread; seeded by ``(seed, spectrum, n)`` only."""
    torch.set_num_threads(1)
    with threadpool_limits(1):
        p, T = int(1.5 * n), t_factor * n
        data_ss, fv_ss, lfv_ss = np.random.SeedSequence([seed, list(NS).index(setting), n]).spawn(3)
        rng = np.random.default_rng(data_ss)
        X, beta0 = linear_design(setting, n, p, rng)
        Y = X @ beta0 + rng.standard_normal((n_rep, n))  # (K, n)
        t_fv, fv = timed(lambda: criteria.functional_variance_linear(
            X, Y.T, ALPHA, 1.0, n_draws=T, random_state=np.random.RandomState(fv_ss.generate_state(1)[0])
        ))  # fmt: skip
        t_lfv, chains = timed(lambda: criteria.langevin_fv_chains(
            LinearPotential(torch.as_tensor(X), torch.as_tensor(Y), fit_intercept=False),
            torch.as_tensor(ridge_fit(X, Y, ALPHA)),  # gamma^(1) = beta_hat_alpha, one per response
            noise_variance=1.0, alpha=ALPHA, step_size=1.0 / (10 * n), n_iter=T, burn_in=0,
            seeds=lfv_ss.generate_state(n_rep).tolist(),
        ))  # fmt: skip
        fv_exact = criteria.functional_variance_linear(X, Y.T, ALPHA, 1.0)
        values = {
            "gap": np.full(n_rep, criteria.gibbs_generalization_gap_linear(X, ALPHA)),
            "tic0": criteria.tic_linear(X, Y.T, ALPHA, 1.0, kappa=0.0),
            "tic01": criteria.tic_linear(X, Y.T, ALPHA, 1.0, kappa=0.1),
            "fv": fv,
            "fv_exact": fv_exact,
            "efv": np.full(n_rep, criteria.expected_functional_variance_linear(X, beta0, ALPHA, 1.0)),
            "lfv": chains.lfv,
        }
        s = singular_values(setting, n)
        return {
            "setting": setting, "n": n, "p": p, "T": T, "rows": {k: _mean_sd(v) for k, v in values.items()},
            # differences on the same responses
            "fv_minus_exact_fv": _mean_sd(fv - fv_exact),
            "lfv_minus_exact_fv": _mean_sd(chains.lfv - fv_exact),
            "n_nonzero_s": int(np.sum(s > 0)), "n_s_above_0.1": int(np.sum(s > 0.1)),
            "n_refused": int(chains.n_refused.sum()), "seconds_fv": t_fv, "seconds_lfv": t_lfv,
        }  # fmt: skip


def _mean_sd(values):
    return {"mean": float(values.mean()), "sd": float(values.std(ddof=1))}


def _fmt(mean, sd):
    if sd is None or sd <= 1e-9 * abs(mean):  # a closed form of the design: no spread
        return f"{mean:.4g}"
    return f"{mean:.4g} ± {sd:.3g}"


def tables(result):
    out = []
    for setting, ns in NS.items():
        cells = {c["n"]: c for c in result["cells"] if c["setting"] == setting}
        ns = [n for n in ns if n in cells]
        if not ns:
            continue
        header = ["quantity"] + [h for n in ns for h in (f"n = {n}", "paper")]
        rows = []
        for key, label in LABELS.items():
            paper = PAPER[setting].get(key)
            row = [label]
            for n in ns:
                r = cells[n]["rows"][key]
                row += [_fmt(r["mean"], r["sd"]), _fmt(*paper[NS[setting].index(n)]) if paper else "n/a"]
            rows.append(row)
        out.append((TITLES[setting], header, rows))
    return out


def discussion(result):
    cells = result["cells"]
    ratio = {(c["setting"], c["n"]): c["rows"]["lfv"]["mean"] / c["rows"]["fv_exact"]["mean"] for c in cells}
    low, high = min(ratio, key=ratio.get), max(ratio, key=ratio.get)
    # sampled minus exact FV on the same responses, in standard errors of the paired mean
    diffs = [c["fv_minus_exact_fv"] for c in cells]
    z = max(abs(d["mean"]) / (d["sd"] / result["n_rep"] ** 0.5) for d in diffs)
    below = "everywhere" if max(ratio.values()) < 1 else "in most cells"
    kept = ", ".join(f"{c['n_s_above_0.1']} (n = {c['n']})" for c in cells if c["setting"] == "ii")
    return (
        f"Settings: alpha = {ALPHA}, sigma_0^2 = 1, {result['n_rep']} responses per design, T = "
        f"{result['t_factor']} n, seed {recorded(result, 'seed')}; total runtime {result['runtime_s']:.0f} s "
        f"with {result['n_jobs']} job(s). Delta, E_y[FV] and the exact FV are closed forms; Delta and "
        "E_y[FV] agree with the paper's up to the draw of the design. The sampled FV (T = 15 n draws) minus "
        f"the exact FV of the same response averages within {z:.1f} standard errors of zero in every cell. "
        f"LFV is below FV {below}: LFV / exact FV goes from {ratio[low]:.3f} (setting ({low[0]}), n = "
        f"{low[1]}) to {ratio[high]:.3f} (({high[0]}), n = {high[1]}). The process starts at the mode "
        "beta_hat_alpha; in the direction of the j-th singular vector it is an AR(1) that relaxes at the "
        "rate c_j = delta (s_j^2 + n alpha) / 2 = (s_j^2 / n + alpha) / 20 per step (between 0.005 and 0.055 "
        "here). Over T iterates started at the mode, the divisor-T variance of such a chain falls short of "
        "the stationary one by about 2.5 / (c_j T) (2 / (c_j T) from the autocorrelation, 1 / (2 c_j T) from "
        "the start at variance zero), while the Euler step inflates the stationary variance by c_j / 2. With "
        "T = 15 n the shortfall is largest where the gap comes from weakly determined directions ((ii), "
        "(iii): c_j near 0.005) and at small n, and shrinks as n grows -- the paper's LFV shows the same "
        "pattern (3.985 against FV 4.295 at n = 200 in setting (ii)). In setting (i) every direction that "
        "matters has c = 1.1 / 20 = 0.055: the inflation is +2.75% and the shortfall 2.5 / (0.055 * 15 n), "
        "3.0% at n = 100 and 0.8% at n = 400, so LFV passes FV from n = 200 on, again as in the paper (its "
        "LFV 8.951 against FV 8.781 at n = 400). TIC: with kappa = 0 it keeps every non-zero singular value, "
        "and its penalty is about the number of them (10 in (i), n in (ii) and (iii)) less the leverage of "
        "the fit; with kappa = 0.1 read as a threshold on the singular values s_j of X, setting (ii) keeps "
        f"{kept} directions, which reproduces the paper's TIC(0.1) row; in (i) and (iii) no non-zero s_j is "
        "below 0.1, so both kappas agree, as in the paper. Neither TIC estimates Delta."
    )


def report(results):
    """Tables 1-3 beside the paper's values, with the discussion."""
    result = results[NAME]
    caption = (
        f"Mean ± sd over {result['n_rep']} responses y ~ N(X beta_0, I) on one design per cell "
        f"({'quick run' if was_quick(result) else 'the paper uses 50'}); 'paper' is paper 004's value."
    )
    heading = "Paper 004 Tables 1-3: generalization gap, TIC, FV and LFV in linear models"
    return [Page(NAME, heading, tables(result), [caption, discussion(result)])]


#: responses per design (``--reps`` overrides), T / n (None: ``--t-factor``), designs per spectrum (None: all)
SIZES = {
    "full": {"reps": 50, "t_factor": None, "n_per_spectrum": None},
    "quick": {"reps": 5, "t_factor": 5, "n_per_spectrum": 1},
}


def add_arguments(parser):
    parser.add_argument("--reps", type=int, default=None, help="responses per design (default 50)")
    parser.add_argument("--t-factor", type=int, default=15, help="T = t_factor * n (default 15)")


def run(args):
    """Every cell (quick: the smallest n of each spectrum, 5 responses, T = 5 n), largest first."""
    n_rep = args.reps or args.size.reps
    t_factor = args.size.t_factor or args.t_factor
    n_jobs = args.n_jobs or 1
    cells = [(s, n) for s, ns in NS.items() for n in ns[: args.size.n_per_spectrum]]
    cells.sort(key=lambda c: -c[1])  # largest first: better load balance
    t0 = time.perf_counter()
    out = Parallel(n_jobs=n_jobs)(delayed(run_cell)(s, n, n_rep, t_factor, args.seed) for s, n in cells)
    out.sort(key=lambda c: (list(NS).index(c["setting"]), c["n"]))
    runtime = time.perf_counter() - t0
    result = {"alpha": ALPHA, "n_rep": n_rep, "t_factor": t_factor, "n_jobs": n_jobs, "runtime_s": runtime}
    return {NAME: {**result, "cells": out, "paper_values": PAPER}}


TITLE = "Paper 004 Tables 1-3: LFV in linear models"
BENCHMARK = Benchmark(
    NAME, "reproduction", TITLE, (Output(NAME, TITLE),), run, report, add_arguments, sizes=SIZES
)
