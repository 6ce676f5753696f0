"""Reproduce Fig. 6 of paper 000: validation risk of the posterior mean against n at n rho = 1000.

Paper 000 §5 keeps the average batch size ``n rho = 1000`` fixed while the
training sample grows and reports the empirical risk of the posterior mean
on 10000 validation points. Theory (Theorems 4 and 6): the risk falls with n
for MALA and for csMALA, whose surrogate uses the full sample, but not for
sMALA, whose surrogate only sees ``n rho`` points.

Both temperature conventions of ``repro_table2.py`` are run: (A) Table 1's
lambda per method, (B) skgibbs' single lambda = n. The chains at n = 10000
(rho = 0.1) and MALA's are shared with Table 2 through the cache when the
settings agree (the defaults do). At n = 1000, rho = 1 and all three samplers
are MALA.

Usage::

    nice -n 10 python -m benchmarks run fig6             # full run (about 14 CPU-minutes, 2 workers)
    python -m benchmarks run fig6 --quick                # smoke run (< 1 min)
"""

import dataclasses
import time

import numpy as np

from .. import Benchmark, Output
from ..common import paper000 as P
from ..common.environment import load_after
from ..common.writer import Page

NAME = "fig6"


def add_arguments(parser):
    parser.add_argument("--ns", type=int, nargs="+", default=[1000, 2000, 5000, 10000], help="training sizes")
    parser.add_argument("--batch", type=int, default=1000, help="average batch size n rho (paper: 1000)")
    parser.add_argument("--replicates", type=int, default=5, help="chains per point (paper: 10)")
    P.add_chain_arguments(parser, other="table2")


#: the flags a quick run sets (a tiny run: n in 250..1000 at n rho = 250, one replicate, chains of a few dozen
#: steps), the workers (``--n-jobs`` overrides) and the pre-training settings a quick run shrinks
SIZES = {
    "full": {"flags": {}, "n_jobs": 2, "setting": {}},
    "quick": {
        "flags": {"ns": [250, 500, 1000], "batch": 250, "replicates": 1, "burn_in": 5, "gap": 2, "draws": 10,
                  "adam_steps": 20},
        "n_jobs": 1,
        "setting": {"sgd_steps": 20, "pretrain_batch": 250},
    },
}  # fmt: skip


def rho_of(n, batch):
    return min(1.0, batch / n)


def tasks_for(n, batch):
    """MALA, and sMALA / csMALA in both conventions unless rho = 1 (then they are MALA)."""
    rho = rho_of(n, batch)
    out = [("mala", 1.0, "paper")]
    if rho < 1.0:
        out += [(m, rho, mode) for mode in P.MODES for m in ("smala", "csmala")]
    return out


def point(results, n, batch, method, mode, y_val, f_val):
    """Risks of the posterior means of one (n, method, convention) over the replicates."""
    rho = rho_of(n, batch)
    key = ("mala", 1.0, "paper") if (method == "mala" or rho >= 1.0) else (method, rho, mode)
    rows = [r["results"][key] for r in results if r["n"] == n]
    risk = [float(np.mean((y_val - r["fbar"].astype(float)) ** 2)) for r in rows]
    excess = [float(np.mean((f_val - r["fbar"].astype(float)) ** 2)) for r in rows]
    return {
        "rho": rho,
        "risk": risk,
        "excess": excess,
        "acceptance": float(np.mean([r["acceptance"] for r in rows])),
        "restarts": float(np.mean([r["restarts"] for r in rows])),
        "zeta": float(np.mean([r["zeta"] for r in rows])),
        "draw_train_risk": float(np.mean([np.mean(r["draw_train_risk"]) for r in rows])),
        "all_finite": bool(all(r["all_finite"] for r in rows)),
        "ms_per_step": float(np.mean([r["ms_per_step"] for r in rows])),
    }


def slope(ns, values):
    """Least-squares slope of log(mean risk) against log(n)."""
    return float(np.polyfit(np.log(ns), np.log([np.mean(v) for v in values]), 1)[0])


def plot(summary, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ns = summary["ns"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, mode in zip(axes, P.MODES):
        for k, m in enumerate(P.METHODS):
            pts = [summary[mode][str(n)][m] for n in ns]
            mean = [np.mean(p["risk"]) for p in pts]
            sd = [np.std(p["risk"]) for p in pts]
            ax.errorbar(np.array(ns) * (1 + 0.03 * (k - 1)), mean, yerr=sd, marker="o", capsize=3, label=m)
        ax.axhline(summary["noise"] ** 2, color="gray", ls="--", lw=1, label="noise variance")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(f"training size n (n rho = {summary['batch']})")
        ax.set_title(P.MODE_LABELS[mode])
    axes[0].set_ylabel("validation risk of the posterior mean")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def tables(summary):
    ns = summary["ns"]
    header = (
        ["convention", "n", "rho"]
        + [f"{m} risk·1e3" for m in P.METHODS]
        + [f"{m} excess·1e3" for m in P.METHODS]
        + ["acceptance (mala / smala / csmala)"]
    )
    rows = []
    for mode in P.MODES:
        for n in ns:
            pts = [summary[mode][str(n)][m] for m in P.METHODS]
            rows.append(
                [P.MODE_LABELS[mode], str(n), f"{rho_of(n, summary['batch']):g}"]
                + [fmt(p["risk"]) for p in pts]
                + [fmt(p["excess"]) for p in pts]
                + [" / ".join(f"{p['acceptance']:.2f}" for p in pts)]
            )
    sheader = ["convention"] + [f"{m} slope: risk / excess / predicted" for m in P.METHODS]
    srows = [
        [P.MODE_LABELS[mode]]
        + [
            f"{summary['slopes'][mode][m]:+.2f} / {summary['excess_slopes'][mode][m]:+.2f}"
            f" / {summary['predicted_excess_slopes'][mode][m]:+.2f}"
            for m in P.METHODS
        ]
        for mode in P.MODES
    ]
    return header, rows, sheader, srows


def fmt(values):
    m, s = P.mean_sd(np.asarray(values) * 1e3)
    return f"{m:.3f} ± {s:.3f}"


def predicted_slopes(summary):
    """Slopes of 1/lambda_eff against n: the excess risk's if it scales like the posterior's spread."""
    ns = summary["ns"]
    out = {}
    for mode in P.MODES:
        out[mode] = {}
        for m in P.METHODS:
            lam = [
                P.effective_lambda(
                    m if rho_of(n, summary["batch"]) < 1.0 else "mala",
                    mode,
                    n,
                    rho_of(n, summary["batch"]),
                    summary[mode][str(n)][m]["zeta"],
                )
                for n in ns
            ]
            # a constant lambda_eff has slope 0, which the least squares gives as +-1e-17 by platform:
            # rounded, so that the page shows the same sign everywhere
            out[mode][m] = round(slope(ns, [[1.0 / v] for v in lam]), 12) + 0.0
    return out


def texts(summary):
    L, sl, ex = summary["lengths"], summary["slopes"], summary["excess_slopes"]
    pred = summary["predicted_excess_slopes"]
    runtime = (
        f"Runtime of this invocation: {summary['runtime_s'] / 60:.1f} min with {summary['n_jobs']} "
        f"worker(s) ({summary['n_cached_runs']} of {summary.get('n_runs', '?')} chains read from the cache "
        f"shared with Table 2)"
    )
    if summary.get("chain_cpu_s") is not None:
        runtime += (
            f"; the chains took {summary['chain_wall_s'] / 60:.0f} worker-minutes of wall time and "
            f"{summary['chain_cpu_s'] / 60:.0f} CPU-minutes when computed"
        )
    load = load_after(summary, lambda s: s.get("load_average"))
    runtime += f"; load average {load:.1f} at the end." if load is not None else "."
    settings = (
        f"Settings actually used: n in {summary['ns']} with rho = {summary['batch']}/n, "
        f"{summary['replicates']} chains per point (paper 10), each with its own training sample and "
        f"pre-trained start (SGD lr 1e-3, {summary['setting']['sgd_steps']} steps as in the paper, then "
        f"{summary['setting']['adam_steps']} Adam steps standing in for the paper's long burn-in), "
        f"Table 1's gamma and s = 0.2/sqrt(Q) with h = gamma / lambda_batch, zeta adapted every 100 "
        f"burn-in steps, restart after 100 rejections. Reduced lengths: burn-in {L['burn_in']}/rho for "
        f"sMALA and csMALA and {2 * L['burn_in']} for MALA (paper 1e5/rho), gap c = {L['gap']} (paper "
        f"5000), N = {L['n_draws']} draws. Risk: mean over {summary['setting']['n_val']} noisy validation "
        f"points of (Y - fbar(X))^2 (the noise variance {summary['noise'] ** 2:.1e} is its floor); "
        f"'excess' is the mean squared distance of fbar to the true f. Error bars: population sd over "
        f"chains. At n = {min(summary['ns'])} rho = 1 and the three samplers are the same MALA chain. "
        + runtime
    )

    def verdict(v):
        return "falls" if v < -0.2 else ("rises" if v > 0.2 else "is flat")

    lo, hi = [
        (2 - rho_of(n, summary["batch"])) * summary["batch"] * min(1.0, n / summary["batch"])
        for n in (min(summary["ns"]), max(summary["ns"]))
    ]
    cs, ma = ex["paper"]["csmala"], ex["paper"]["mala"]
    if cs < -0.2 and cs > ma + 0.3:
        claim = "the paper's 'csMALA regains MALA's scaling' is reproduced in direction, not in rate"
    elif cs < -0.2:
        claim = "the paper's 'csMALA regains MALA's scaling' is reproduced"
    else:
        claim = "the paper's 'csMALA regains MALA's scaling' is not reproduced"

    parts = [
        f"({'A' if mode == 'paper' else 'B'}) "
        + ", ".join(
            f"{m} {sl[mode][m]:+.2f} (excess {ex[mode][m]:+.2f}, predicted {pred[mode][m]:+.2f})"
            for m in P.METHODS
        )
        for mode in P.MODES
    ]
    expl = (
        "Paper's claim: at fixed n rho the risk of the posterior mean falls with n for MALA and csMALA "
        "and not for sMALA. Log-log slopes against n of the mean risk (and of the excess risk), with "
        "the slope the excess would have if it scaled like 1/lambda_eff, the first-order inverse "
        "temperature of each surrogate (see table2): " + "; ".join(parts) + ". "
        f"In (A) the excess risk of MALA {verdict(ex['paper']['mala'])}, sMALA's "
        f"{verdict(ex['paper']['smala'])} and csMALA's {verdict(ex['paper']['csmala'])}. sMALA at "
        "lambda = n rho = 1000 has the same surrogate temperature at every n. csMALA at lambda = "
        "n(2 - rho) with the adapted zeta << 1 behaves to first order like exp(-rho(2 - rho) n R_n), "
        f"lambda_eff = (2 - rho) n rho, which grows only from {lo:.0f} to {hi:.0f} over the range, so "
        "Table 1's parameters let csMALA improve with n much more slowly than MALA: " + claim + ". In "
        "(B) every method targets lambda_eff = n; the excess risk of MALA "
        f"{verdict(ex['compensated']['mala'])}, sMALA's {verdict(ex['compensated']['smala'])} and "
        f"csMALA's {verdict(ex['compensated']['csmala'])}, so sMALA's flat curve in (A) is a "
        "temperature effect; the information loss of its surrogate (Lemma 1) is "
        "of second order in lambda l_i/(n rho) = l_i/rho, small here because l_i is about 4e-4. With "
        "chains this short, the posterior means also carry the Monte Carlo error of a slowly mixing "
        "random walk, part of the spread the error bars show."
    )
    return settings, expl


def run(args):
    """The chains of every n and replicate (largest n first), summarised per convention and method."""
    vars(args).update(args.size.flags)  # a quick run's sizes and chain lengths over the flags
    n_jobs = args.n_jobs or args.size.n_jobs
    setting = dataclasses.replace(P.Setting(adam_steps=args.adam_steps), **args.size.setting)
    lengths = P.Lengths(args.burn_in, args.gap, args.draws)
    cache = P.cache_dir(args)
    t0 = time.perf_counter()
    # largest n first: the costliest jobs start early and the workers stay busy
    jobs = [
        (n, r, tasks_for(n, args.batch))
        for n in sorted(args.ns, reverse=True)
        for r in range(args.replicates)
    ]
    results = P.run_all(jobs, setting, lengths, n_jobs=n_jobs, cache_dir=cache)
    runtime = time.perf_counter() - t0
    _, y_val, f_val = P.validation_set(setting)
    ns = sorted(args.ns)
    summary = {
        "ns": ns,
        "batch": args.batch,
        "replicates": args.replicates,
        "noise": setting.noise,
        "lengths": dataclasses.asdict(lengths),
        "setting": dataclasses.asdict(setting),
        "n_jobs": n_jobs,
        "runtime_s": runtime,
        **P.chain_totals(results),
        "engine": P.engine(),
    }
    for mode in P.MODES:
        summary[mode] = {
            str(n): {m: point(results, n, args.batch, m, mode, y_val, f_val) for m in P.METHODS} for n in ns
        }
    summary["slopes"] = {
        mode: {m: slope(ns, [summary[mode][str(n)][m]["risk"] for n in ns]) for m in P.METHODS}
        for mode in P.MODES
    }
    summary["excess_slopes"] = {
        mode: {m: slope(ns, [summary[mode][str(n)][m]["excess"] for n in ns]) for m in P.METHODS}
        for mode in P.MODES
    }
    summary["predicted_excess_slopes"] = predicted_slopes(summary)
    print(f"\nruntime {runtime / 60:.1f} min ({summary['n_cached_runs']} runs from cache)")
    return {NAME: summary}


def report(results):
    """The risk and slope tables, the figure and the explanation."""
    summary = results[NAME]
    summary["predicted_excess_slopes"] = predicted_slopes(summary)
    ns = summary["ns"]
    P.warn_non_finite(summary, ns)
    header, rows, sheader, srows = tables(summary)
    settings, expl = texts(summary)
    summary["settings_text"], summary["explanation"] = settings, expl
    caption = (
        f"Validation risk of the posterior mean against n at n rho = {summary['batch']} (paper 000, Fig. 6); "
        "mean ± sd over chains, ·1e3."
    )
    rst = [
        caption,
        "",
        P.rst_table(header, rows),
        "",
        "Log-log slopes against n of the mean risk, of the excess risk and of 1/lambda_eff:",
        "",
        P.rst_table(sheader, srows),
        "",
        # the .rst is included by doc/benchmarks.rst, whose directory anchors the path
        ".. image:: ../benchmarks/results/fig6.png",
        "",
        settings,
        "",
        expl,
        "",
    ]
    return [Page(NAME, "Paper 000, Fig. 6: validation risk against n", rst=rst, figure=lambda path: plot(summary, path))]


BENCHMARK = Benchmark(
    name=NAME,
    kind="reproduction",
    title="Fig. 6: validation risk against n at constant n rho",
    outputs=(Output(NAME, "Fig. 6: validation risk against n at constant n rho"),),
    run=run,
    report=report,
    add_arguments=add_arguments,
    sizes=SIZES,
)
