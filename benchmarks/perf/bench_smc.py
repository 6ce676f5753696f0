"""Tempered SMC beside HMC: the band of ``f`` in a data gap, and the fit on diabetes.

``sampler="smc"`` (:class:`~skgibbs.samplers.SMC`) starts its particles from the prior and tempers them to
the Gibbs posterior. Here it stands next to exact full-batch HMC on the same network: HMC runs at the
plug-in temperature and SMC is given HMC's fitted temperature, so that both target the same ``pi_lambda``;
both on the fixed prior, ``GibbsMLPRegressor(random_state=0)`` defaults otherwise.

* ``gap``: ``make_gap_regression(2000, random_state=0)``, no inputs in the gap ``(-0.2, 0.2)``. On a grid
  in the gap and in the data region: the coverage of the true ``f`` by the central 95% credible band of
  ``f`` (``predict_interval(kind="credible")``), the band's mean width and the ratio gap / data region;
  the Gaussian test log-likelihood of fresh data over the whole interval; the fit time; SMC's stages and
  particles. Targets: coverage in the gap at least 0.8 while it stays at least 0.9 in the data region.
* ``diabetes``: one 75/25 split (seed 0): the test log-likelihood, the fit time ratio SMC / HMC, the RMS
  difference of the predictive means in HMC's posterior sd of ``f``, and the ratio of the posterior sds.

``--part metrics`` (``smc_metrics``) fits SMC alone on the gap data at the stored HMC fit's temperature,
once per variant of its moves (:data:`VARIANTS`); ``--part seeds`` (``smc_seeds``) fits the default SMC
once per seed, to tell the band of the posterior from that of one run. Both replace only the stored rows of
the variants or seeds they fit.

    python -m benchmarks run smc [--part metrics|seeds] [--quick]
"""

import numpy as np
from scipy.stats import norm
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split

from skgibbs import GibbsMLPRegressor, SamplerWarning
from skgibbs.datasets import gap_regression_function, make_gap_regression
from skgibbs.samplers import HMC, SMC

from .. import Benchmark, Output, pick_sizes
from ..common.environment import load_after, was_quick
from ..common.fits import escape, mixing_note
from ..common.stats import timed_fit
from ..common.tables import dict_table
from ..common.writer import Page, load

NAME = "smc"
LEVEL = 0.95
GAP, EDGE = 0.2, 0.8  # no training input in (-GAP, GAP); the data fill GAP <= |x| <= EDGE
N_GAP, N_FULL, QUICK_N_GAP = 2000, 1000, 200
#: the targets of the issue: coverage of the true f by the 95% band in the gap, and in the data region
GAP_COVERAGE, DATA_COVERAGE = 0.8, 0.9
#: rows of the gap data, and the network's, HMC's and SMC's settings beyond the defaults
SIZES = {
    "full": {"n_gap": N_GAP, "network": {}, "hmc": {}, "smc": {}},
    "quick": {"n_gap": QUICK_N_GAP, "network": {"hidden_layer_sizes": (16,), "pretrain_iter": 200},
              "hmc": {"n_samples": 40, "burn_in": 60},
              "smc": {"n_particles": 32, "n_mcmc_steps": 2, "n_leapfrog": 5}},
}  # fmt: skip
METRICS_NAME = "smc_metrics"
SEEDS_NAME = "smc_seeds"
#: the seeds of ``--part seeds``: independent SMC runs of the default sampler
SEEDS = (0, 1, 2, 3)
_TRAJ = {"trajectory_length": 1.0, "max_leapfrog": 64, "n_mcmc_steps": 2}
#: what the smc_metrics page quotes of the smc page's default SMC fit on the gap data
REFERENCE_KEYS = ("log_evidence", "log_lik", "coverage_gap", "coverage_data", "width_gap")
#: the variant that is SMC's default
DEFAULT_VARIANT = "fisher"
#: the variants of the moves that ``--part metrics`` compares: name -> SMC settings
VARIANTS = {
    "variances": {"metric": "variances"},
    "gradients": {"metric": "gradients"},
    "fisher": {"metric": "fisher"},
    "gradients+traj": {"metric": "gradients", **_TRAJ},
    "fisher+traj": {"metric": "fisher", **_TRAJ},
    # more of the same work: does the band in the gap change with the particles or the moves?
    "fisher x4 particles": {"metric": "fisher", "n_particles": 512},
    "fisher x4 moves": {"metric": "fisher", "n_mcmc_steps": 12},
}


def _gap_inputs():
    """Grids of test inputs in the gap and in the data region, ``(gap (n, 1), data (m, 1))``."""
    gap = np.linspace(-GAP, GAP, 41)[1:-1]
    side = np.linspace(GAP, EDGE, 61)
    return gap[:, None], np.concatenate([-side[::-1], side])[:, None]


def _gap_data(n_gap):
    X, y = make_gap_regression(n_gap, random_state=0)
    # fresh data over the whole interval, the gap included, for the test log-likelihood
    rng = np.random.default_rng(1000)
    Xte = rng.uniform(-EDGE, EDGE, size=(N_FULL, 1))
    yte = gap_regression_function(Xte[:, 0]) + 0.02 * rng.normal(size=N_FULL)
    return X, Xte, y, yte


def _diabetes_data():
    X, y = load_diabetes(return_X_y=True)
    return train_test_split(X, y, test_size=0.25, random_state=0)


def _warnings(fit):
    """The first 200 characters of each SamplerWarning of a :class:`TimedFit`."""
    return [m[:200] for m in fit.messages(SamplerWarning)]


def _fit(sampler, X, y, size, temperature="plug-in"):
    kw = {**size.network, **(size.hmc if sampler == "hmc" else {})}
    obj = HMC() if sampler == "hmc" else SMC(**size.smc)
    # the fixed prior and (HMC) the plug-in temperature: "auto" would give HMC ARD and a learned noise
    est = GibbsMLPRegressor(sampler=obj, prior="fixed", temperature=temperature, random_state=0, **kw)
    fit = timed_fit(est, X, y)
    row = {"sampler": sampler, "fit_s": fit.seconds, "temperature": float(est.temperature_),
           "warnings": _warnings(fit)}  # fmt: skip
    if sampler == "smc":
        row.update(n_stages=int(est.n_stages_), n_particles=int(est.n_particles_),
                   log_evidence=float(est.log_evidence_),
                   log_marginal_likelihood=float(getattr(est, "log_marginal_likelihood_", np.nan)))  # fmt: skip
    return est, row


def _loglik(est, Xte, yte):
    mean, std = est.predict(Xte, return_std=True)
    return {"log_lik": float(norm.logpdf(yte, mean, std).mean())}


def _gap_scores(est, Xte, yte):
    """The test log-likelihood, and the coverage of f by the central ``LEVEL`` credible band and its width."""
    out = _loglik(est, Xte, yte)
    for region, X in zip(("gap", "data"), _gap_inputs()):
        lo, hi = est.predict_interval(X, confidence_level=LEVEL, kind="credible")[1][:, :, 0].T
        f = gap_regression_function(X[:, 0])
        out[f"coverage_{region}"] = float(np.mean((lo <= f) & (f <= hi)))
        out[f"width_{region}"] = float(np.mean(hi - lo))
    out["width_ratio"] = out["width_gap"] / out["width_data"]
    return out


def _pair(name, X, Xte, y, yte, size, score):
    """HMC at ``temperature="plug-in"``, then SMC at HMC's fitted temperature; both rows."""
    hmc, h = _fit("hmc", X, y, size)
    smc, s = _fit("smc", X, y, size, temperature=h["temperature"])
    for est, row in ((hmc, h), (smc, s)):
        row.update(data=name, n_train=len(y), **score(est, Xte, yte))
        print(f"{name} {row['sampler']}: log-lik {row['log_lik']:.3f}, {row['fit_s']:.0f} s", flush=True)
    # SMC's predictive mean and posterior spread of f against HMC's
    sd_h, sd_s = hmc.predict_samples(Xte).std(1), smc.predict_samples(Xte).std(1)
    diff = (smc.predict(Xte) - hmc.predict(Xte)) / sd_h
    s.update(mean_diff_sd=float(np.sqrt(np.mean(diff**2))), sd_ratio=float(sd_s.mean() / sd_h.mean()))
    s["time_ratio"] = s["fit_s"] / h["fit_s"]
    return [h, s]


def _stored_gap_fits(args):
    """The temperature of the smc page's stored HMC fit of the gap data, its SMC row or None, the data."""
    stored = load(args.out, [NAME]).get(NAME)
    rows = {(r["data"], r["sampler"]): r for r in (stored or {"rows": []})["rows"]}
    if ("gap", "hmc") not in rows or was_quick(stored) != args.quick:
        quick = " --quick" if args.quick else ""
        raise SystemExit(
            "--part metrics needs the stored HMC fit of the gap data: run "
            f"`python -m benchmarks run {NAME}{quick}`."
        )
    return rows["gap", "hmc"]["temperature"], rows.get(("gap", "smc")), _gap_data(args.size.n_gap)


def _smc_gap_row(est, data, head, n_grad=False):
    """Fit ``est`` on the gap ``data``; its row after the keys ``head`` (and the gradients per particle)."""
    X, Xte, y, yte = data
    fit = timed_fit(est, X, y)
    row = {**head, "fit_s": fit.seconds, "n_stages": int(est.n_stages_)}
    if n_grad:
        row["n_grad"] = int(np.max(est.n_grad_evals_))
    row.update(log_evidence=float(est.log_evidence_), warnings=_warnings(fit), **_gap_scores(est, Xte, yte))
    return row


def _merged_rows(args, stem, new, key, order):
    """``new`` rows with the stored rows of ``stem`` whose ``key`` they do not refit, sorted by ``order(key)``.
    The stored rows are read at the end of the run, so that runs side by side keep each other's rows."""
    stored = load(args.out, [stem]).get(stem)
    keep = [] if stored is None or was_quick(stored) != args.quick else stored["rows"]
    fitted = {r[key] for r in new}
    return sorted([r for r in keep if r[key] not in fitted] + new, key=lambda r: order(r[key]))


def _run_metrics(args):
    """SMC on the gap data once per variant, at the stored HMC temperature; merged into the stored rows."""
    variants = args.variants or list(VARIANTS)
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        raise SystemExit(f"unknown variants {unknown}: choose among {list(VARIANTS)}")
    temperature, smc_row, data = _stored_gap_fits(args)
    new = []
    for name in variants:
        sampler = SMC(**dict(VARIANTS[name], **args.size.smc))
        est = GibbsMLPRegressor(sampler=sampler, temperature=temperature, random_state=0, **args.size.network)
        row = _smc_gap_row(est, data, {"variant": name, "settings": VARIANTS[name]}, n_grad=True)
        path = est.temperature_path_
        row["final_acceptance"] = float(path["acceptance_rate"][-1])
        row["final_step_size"] = float(path["step_size"][-1])
        new.append(row)
        print(f"{name}: log Z {row['log_evidence']:.1f}, log-lik {row['log_lik']:.3f}, gap coverage "
              f"{row['coverage_gap']:.3f}, {row['fit_s']:.0f} s", flush=True)  # fmt: skip
    rows = _merged_rows(args, METRICS_NAME, new, "variant", list(VARIANTS).index)
    # the smc page's default SMC fit, at the same temperature: a second run of the default variant
    reference = None if smc_row is None else {key: smc_row[key] for key in REFERENCE_KEYS}
    return {METRICS_NAME: {"rows": rows, "temperature": temperature, "threads": 1, "reference": reference}}


def _run_seeds(args):
    """The default SMC on the gap data once per seed, at the stored HMC temperature; merged by seed."""
    temperature, _, data = _stored_gap_fits(args)
    gap, _ = _gap_inputs()
    new = []
    for seed in args.seeds:
        est = GibbsMLPRegressor(
            sampler=SMC(**args.size.smc), temperature=temperature, random_state=seed, **args.size.network
        )
        row = _smc_gap_row(est, data, {"seed": seed})
        # the particles' function values on the gap grid (n_gap, P): what the comparison across seeds needs
        row["f_gap"] = np.round(est.predict_samples(gap), 6).tolist()
        new.append(row)
        print(f"seed {seed}: log Z {row['log_evidence']:.1f}, gap coverage {row['coverage_gap']:.3f}, "
              f"width {row['width_gap']:.3f}, {row['fit_s']:.0f} s", flush=True)  # fmt: skip
    rows = _merged_rows(args, SEEDS_NAME, new, "seed", int)
    return {SEEDS_NAME: {"rows": rows, "temperature": temperature, "threads": 1}}


def seeds_agreement(f_runs, f_true, level=LEVEL):
    """How independent runs' draws of ``f`` (one ``(n_inputs, n_draws)`` array each) agree, and where the
    true ``f`` (``(n_inputs,)``) lies.

    Returns a dict: ``between_within``, the median over the inputs of the standard deviation of the runs'
    posterior means over the mean posterior standard deviation within a run (near ``1 / sqrt(draws)`` when
    the runs sample one posterior, near or above 1 when they sit in different modes); ``mean_range``, the
    largest difference between two runs' means at an input; ``truth_sd_median`` and ``truth_sd_max`` of
    ``|f - pooled mean| / pooled sd`` over the inputs; ``pooled_coverage`` and ``pooled_width`` of the
    central ``level`` band of every run's draws pooled.
    """
    means = np.stack([F.mean(1) for F in f_runs])  # (runs, inputs)
    within = np.mean([F.std(1) for F in f_runs], axis=0)
    pooled = np.concatenate(f_runs, axis=1)
    lo, hi = np.quantile(pooled, [(1 - level) / 2, (1 + level) / 2], axis=1)
    z = np.abs(f_true - pooled.mean(1)) / pooled.std(1)
    return {
        "between_within": float(np.median(means.std(0, ddof=1) / within)),
        "mean_range": float(np.max(means.max(0) - means.min(0))),
        "truth_sd_median": float(np.median(z)),
        "truth_sd_max": float(np.max(z)),
        "pooled_coverage": float(np.mean((lo <= f_true) & (f_true <= hi))),
        "pooled_width": float(np.mean(hi - lo)),
    }


def run(args):
    if getattr(args, "part", None) == "metrics":
        return _run_metrics(args)
    if getattr(args, "part", None) == "seeds":
        return _run_seeds(args)
    rows = _pair("diabetes", *_diabetes_data(), args.size, _loglik)
    rows += _pair("gap", *_gap_data(args.size.n_gap), args.size, _gap_scores)
    return {NAME: {"rows": rows, "threads": 1}}


def add_arguments(parser):
    parser.add_argument("--part", choices=["compare", "metrics", "seeds"], default="compare",
                        help="compare: SMC beside HMC (smc); metrics: SMC's move variants on the gap data "
                             "(smc_metrics); seeds: independent SMC runs on the gap data (smc_seeds)")  # fmt: skip
    parser.add_argument("--variants", nargs="+", help=f"variants of --part metrics among {list(VARIANTS)}")
    parser.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS),
                        help="random_state of each SMC run of --part seeds")  # fmt: skip


def _band_cells(r):
    """The cells of a gap row: test log-likelihood, coverage of f and widths of the band."""
    return {
        "test log-lik": f"{r['log_lik']:.3f}",
        "f coverage, gap": f"{r['coverage_gap']:.3f}",
        "f coverage, data": f"{r['coverage_data']:.3f}",
        "band width, gap": f"{r['width_gap']:.3f}",
        "band width, data": f"{r['width_data']:.3f}",
    }


def _gap_setup(res, what):
    """The first words of the smc_metrics and smc_seeds pages' first note."""
    return (
        f"{what} on make_gap_regression({pick_sizes(SIZES, was_quick(res)).n_gap}, random_state=0) at the "
        f"temperature of the stored HMC fit ({res['temperature']:.4g}, standardized scale)"
    )


def _closing_notes(res, rows, label, *after_load):
    """The last notes of the smc_metrics and smc_seeds pages: the load, ``after_load``, each fit that warned
    (``label(row)``), a quick run."""
    load = load_after(res, lambda r: r["load_average"][0])
    notes = [
        f"One core; load average at the end {load:.1f} (other work ran beside: fit times are rough).",
        *after_load,
    ]
    notes += [
        f"{label(r)} warned: " + " / ".join(escape(m) for m in r["warnings"]) for r in rows if r["warnings"]
    ]
    if was_quick(res):
        notes.append(f"Quick run: {QUICK_N_GAP} rows, a 16-unit network, 32 particles and short moves; "
                     "not the documented numbers.")  # fmt: skip
    return notes


def _report_seeds(res):
    rows = res["rows"]
    table = [
        {
            "seed": str(r["seed"]),
            "log evidence": f"{r['log_evidence']:.1f}",
            **_band_cells(r),
            "stages": str(r["n_stages"]),
            "fit s": f"{r['fit_s']:.0f}",
        }
        for r in rows
    ]
    tables = [dict_table("SMC runs from independent draws of the prior: the data gap", table)]
    gap, _ = _gap_inputs()
    if len(rows) > 1:
        a = seeds_agreement([np.asarray(r["f_gap"]) for r in rows], gap_regression_function(gap[:, 0]))
        agree = {
            "runs": str(len(rows)),
            "between-run sd of the mean / within-run sd (median)": f"{a['between_within']:.3f}",
            "its value for one posterior": f"{1 / np.sqrt(len(rows[0]['f_gap'][0])):.3f}",
            "largest difference of two runs' means": f"{a['mean_range']:.3f}",
            "distance of f from the mean in sd, median": f"{a['truth_sd_median']:.1f}",
            "distance of f from the mean in sd, max": f"{a['truth_sd_max']:.1f}",
            "pooled band: gap coverage": f"{a['pooled_coverage']:.3f}",
            "pooled band: width": f"{a['pooled_width']:.3f}",
        }
        tables.append(dict_table("Do the runs agree in the gap?", [agree]))
    notes = [
        _gap_setup(
            res, "The default SMC (GibbsMLPRegressor(sampler=SMC(), random_state=seed), defaults otherwise)"
        )
        + ", one run per seed: each run draws its own particles from the prior and its own moves. Coverage, "
        "widths and the test log-likelihood as on the smc page.",
        "Agreement, on the 38 gap inputs of the smc page: at each input the standard deviation of the runs' "
        "posterior means of f is divided by the mean posterior standard deviation of f within a run, and "
        "the median over the inputs is shown. Runs that sample one posterior give about 1/sqrt(P) (the "
        "Monte Carlo error of a mean of P independent draws; resampling makes SMC's draws less than "
        "independent, so somewhat more); runs that find different modes give about 1 or more. "
        "'Distance of f from the mean in sd' is the absolute difference of the true f and the pooled "
        "particles' mean, in pooled posterior standard deviations: a band that covers f at 95% has it below "
        "2 at most inputs.",
    ]
    notes += _closing_notes(res, rows, lambda r: f"seed {r['seed']}")
    return Page(SEEDS_NAME, "SMC runs from independent seeds on the data gap", tables, notes)


def _report_metrics(res):
    rows = [
        {
            "variant": r["variant"],
            "log evidence": f"{r['log_evidence']:.1f}",
            **_band_cells(r),
            "stages": str(r["n_stages"]),
            "gradients per particle": str(r["n_grad"]),
            "final step size": f"{r['final_step_size']:.2g}",
            "fit s": f"{r['fit_s']:.0f}",
        }
        for r in res["rows"]
    ]
    notes = [
        _gap_setup(res, "SMC alone")
        + ", GibbsMLPRegressor(random_state=0) defaults otherwise; coverage, widths "
        "and the test log-likelihood as on the smc page. "
        "The variants change only the moves: 'variances' is the diagonal metric of the particles' variances, "
        "'gradients' and 'fisher' the prior's variances plus a low-rank matrix from the particles (the "
        "covariance of their data gradients, or their sketched Gauss-Newton matrix); '+traj' adds "
        "trajectory_length=1 (at most 64 leapfrog steps) with two transitions per stage; 'x4 particles' "
        "runs 512 particles instead of 128, 'x4 moves' 12 HMC transitions per stage instead of 3. All target "
        "the same posterior: a larger log evidence estimate (it is biased low by the Monte Carlo error) means "
        "particles closer to it.",
    ]
    reference = []
    ref, same = res.get("reference"), [r for r in res["rows"] if r["variant"] == DEFAULT_VARIANT]
    if ref and same:
        r = same[0]
        reference.append(
            f"One fit per variant. The smc page's SMC row is a separate fit of the '{DEFAULT_VARIANT}' "
            "variant on the same data at the same temperature: log evidence "
            f"{ref['log_evidence']:.1f}, test log-likelihood {ref['log_lik']:.3f}, f coverage in the gap "
            f"{ref['coverage_gap']:.3f} and in the data region {ref['coverage_data']:.3f}, against "
            f"{r['log_evidence']:.1f}, {r['log_lik']:.3f}, {r['coverage_gap']:.3f} and "
            f"{r['coverage_data']:.3f} here. Where the two differ, the difference measures the noise of "
            "one fit (an SMC run is chaotic: a change of rounding anywhere gives another run)."
        )
    notes += _closing_notes(res, res["rows"], lambda r: r["variant"], *reference)
    title = "SMC's moves on the data gap: metric and trajectory length"
    return Page(METRICS_NAME, title, [dict_table(title, rows)], notes)


def report(results):
    pages = [_report_metrics(results[METRICS_NAME])] if METRICS_NAME in results else []
    pages += [_report_seeds(results[SEEDS_NAME])] if SEEDS_NAME in results else []
    if NAME not in results:
        return pages
    return _report_smc(results) + pages


def _report_smc(results):
    res = results[NAME]
    by = {(r["data"], r["sampler"]): r for r in res["rows"]}
    gap_rows, targets = [], []
    for sampler in ("hmc", "smc"):
        r = by.get(("gap", sampler))
        if r is None:
            continue
        gap_rows.append([
            sampler, f"{r['coverage_gap']:.3f}", f"{r['coverage_data']:.3f}", f"{r['width_gap']:.3f}",
            f"{r['width_data']:.3f}", f"{r['width_ratio']:.1f}", f"{r['log_lik']:.3f}", f"{r['fit_s']:.0f}",
            *(format(r[key], "d") if key in r else "—" for key in ("n_stages", "n_particles")),
            mixing_note(r["warnings"]) if sampler == "hmc" else "—",
        ])  # fmt: skip
        targets.append([sampler])
        for region, goal in (("gap", GAP_COVERAGE), ("data", DATA_COVERAGE)):
            coverage = r[f"coverage_{region}"]
            targets[-1] += [f"{coverage:.3f} (>= {goal})", "met" if coverage >= goal else "not met"]
    tables = []
    if gap_rows:
        header = ["sampler", "f coverage, gap", "f coverage, data", "band width, gap", "band width, data",
                  "width ratio gap/data", "test log-lik", "fit s", "stages", "particles", "HMC mixing"]  # fmt: skip
        tables.append(("Data gap: the 95% credible band of f", header, gap_rows))
        tables.append(("Data gap: the targets (coverage of the true f by the 95% band)",
                       ["sampler", "gap coverage", "", "data-region coverage", ""], targets))  # fmt: skip
    h, s = by.get(("diabetes", "hmc")), by.get(("diabetes", "smc"))
    if h and s:
        header = ["temperature", "test log-lik HMC", "test log-lik SMC", "HMC fit s", "SMC fit s",
                  "time SMC/HMC", "RMS mean difference / sd of f", "sd of f SMC/HMC", "stages", "particles",
                  "HMC mixing"]  # fmt: skip
        row = [
            f"{h['temperature']:.3f}", f"{h['log_lik']:.3f}", f"{s['log_lik']:.3f}", f"{h['fit_s']:.0f}",
            f"{s['fit_s']:.0f}", f"{s['time_ratio']:.2f}", f"{s['mean_diff_sd']:.3f}", f"{s['sd_ratio']:.3f}",
            str(s["n_stages"]), str(s["n_particles"]), mixing_note(h["warnings"]),
        ]  # fmt: skip
        tables.append(("Diabetes: SMC against HMC at the same temperature", header, [row]))
    temps = ", ".join(f"{r['data']} {r['temperature']:.4g}" for r in res["rows"] if r["sampler"] == "hmc")
    notes = [
        f"One core; load average at the end {load_after(res, lambda r: r['load_average'][0]):.1f} (the "
        "machine ran other work: times are noisy, their ratio within the run less so). Both samplers at the "
        "defaults of GibbsMLPRegressor(random_state=0) but the sampler; HMC at temperature='auto', SMC given "
        f"HMC's fitted temperature (standardized scale: {temps}), so that both sample the same posterior.",
        f"Data gap: make_gap_regression({pick_sizes(SIZES, was_quick(res)).n_gap}, random_state=0). "
        f"Coverage and width of the central {LEVEL:.0%} credible band of f (predict_interval with "
        "kind='credible': quantiles of the draws' function values, no noise) on 38 equispaced inputs of "
        "the gap (-0.2, 0.2) and 122 of the data region 0.2 <= abs(x) <= 0.8, against the true function "
        "gap_regression_function; the test log-likelihood is the mean Gaussian log density of the "
        "predictive N(mean, sd^2) at 1,000 fresh points of the whole interval (noise sd 0.02). "
        f"Targets: gap coverage at least {GAP_COVERAGE} with data-region coverage at least {DATA_COVERAGE}.",
        "Diabetes: load_diabetes, one 75/25 split (seed 0). 'RMS mean difference / sd of f' is the root mean "
        "square over the test inputs of (SMC mean - HMC mean) / (HMC posterior sd of f); 'sd of f SMC/HMC' "
        "the ratio of the mean posterior standard deviations of f over the test inputs.",
        "'HMC mixing' gives the largest R-hat and smallest bulk ESS of HMC's function values at the "
        "training inputs where its chains had not mixed; SMC's particles are independent draws and carry "
        "no such diagnostic.",
    ]
    for r in res["rows"]:
        if r["sampler"] == "smc" and r["warnings"]:
            notes.append(f"SMC on {r['data']} warned: " + " / ".join(escape(m) for m in r["warnings"]))
    if was_quick(res):
        notes.append(f"Quick run: {QUICK_N_GAP} rows of gap data, a 16-unit network, 40 HMC draws after 60 "
                     "warm-up transitions, 32 particles; not the documented numbers.")  # fmt: skip
    return [Page(NAME, "Tempered SMC beside HMC: the data gap and diabetes", tables, notes)]


BENCHMARK = Benchmark(
    name=NAME,
    kind="performance",
    title="Tempered SMC beside HMC at the same temperature: band of f in a data gap, diabetes",
    outputs=(
        Output(NAME, "Tempered SMC beside HMC: the data gap and diabetes"),
        Output(
            METRICS_NAME, "SMC's moves on the data gap: metric and trajectory length", flags="--part metrics"
        ),
        Output(SEEDS_NAME, "SMC runs from independent seeds on the data gap", flags="--part seeds"),
    ),
    run=run,
    report=report,
    add_arguments=add_arguments,
    sizes=SIZES,
)
