"""Hierarchical priors (Neal's ARD) sampled by HMC within Gibbs: which inputs matter, and what the metric needs.

*relevance*: paper 001's design (``make_sparse_sine``, 1000 points, 750 to train, at most four relevant
inputs) at p = 10 and 100, five seeds, the (p, 8, 8, 8, 1) network, ``sampler="hmc"``: the ranks of the
relevant inputs by ``input_relevance_`` of ``prior="ard"``, beside a screen by ``|corr(x_j, y)|`` and the
sparse regressor's stored by the ``sparse`` benchmark; held-out RMSE beside ``prior="fixed"``. Two settings
(``--settings``; a run's rows replace the stored ones): the paper's temperature (``paper``), and Neal's
set-up (``learned``: ``temperature="learn"``, 1000 warm-up transitions, ``chain_weights="stacking"``).

*metric*: ``prior="ard"`` at the plug-in temperature on diabetes (default network) and on a linear model, under
HMC with ``metric="prior"``, ``"adaptive"`` and *moving*, each chain's current conditional prior variances
at every transition (defined here). *cost*: one Gibbs sweep of the precisions against one gradient.

Run ``python -m benchmarks run hierarchical`` (``--part`` for one part).
"""

import json
import time

import numpy as np
import torch
from sklearn.datasets import load_diabetes

from skgibbs import GibbsMLPRegressor, SamplerWarning
from skgibbs.datasets import make_sparse_sine
from skgibbs.diagnostics import effective_sample_size
from skgibbs.samplers import HMC
from skgibbs.samplers.hmc.sampler import HMCGibbsChains

from .. import Benchmark, Output
from ..common.environment import load_after
from ..common.stats import timed_fit
from ..common.writer import RESULTS, Page, load

NAME = "hierarchical"
QUICK = {"n_samples": 5, "burn_in": 5, "pretrain_iter": 10}
#: seeds and input dimensions of the relevance part (None: ``--seeds``, ``--dims``), the settings of its fits
#: and of the metric part's beyond the defaults, and the repetitions of each timing of the cost part
SIZES = {
    "full": {"seeds": None, "dims": None, "relevance_fit": {}, "metric_fit": {"n_samples": 200}, "repeat": 30},
    "quick": {"seeds": 1, "dims": 1, "relevance_fit": QUICK, "metric_fit": QUICK, "repeat": 1},
}  # fmt: skip
#: the settings of both estimators of the relevance part (ARD and the fixed prior), beside the network, the
#: paper's temperature (which "learned" replaces) and HMC within Gibbs (sampler="hmc", MCLMC under "auto")
SETTINGS = {"paper": {}, "learned": {"temperature": "learn", "burn_in": 1000, "chain_weights": "stacking"}}
LABELS = {"paper": "paper's temperature, defaults", "learned": "noise learned, 1000 warm-up, stacking"}


def _ranks(score, relevant):
    order = np.argsort(-np.asarray(score), kind="stable")
    return sorted(int(np.flatnonzero(order == j)[0]) + 1 for j in relevant)


def _rmse(reg, X, y):
    return float(np.sqrt(np.mean((reg.predict(X) - y) ** 2)))


def relevance(dims, seeds, settings, fit_settings):
    torch.set_num_threads(1)
    rows = []
    for p in dims:
        for seed in seeds:
            X, y, A = make_sparse_sine(1000, p, random_state=seed)
            Xtr, ytr, Xte, yte = X[:750], y[:750], X[750:], y[750:]
            relevant = np.flatnonzero((A != 0).any(0))
            temperature = 1.0 / (5.0 * ytr.var())  # lambda = 5 n on the raw scale, as paper 001
            for setting in settings:
                common = {"hidden_layer_sizes": (8, 8, 8), "temperature": temperature, "sampler": "hmc",
                          "random_state": seed, **SETTINGS[setting], **fit_settings}  # fmt: skip
                ard, fixed = (GibbsMLPRegressor(**common, prior=prior) for prior in ("ard", "fixed"))
                fit_ard, fit_fixed = timed_fit(ard, Xtr, ytr), timed_fit(fixed, Xtr, ytr)
                corr = np.abs([np.corrcoef(Xtr[:, j], ytr)[0, 1] for j in range(p)])
                ranks = _ranks(ard.input_relevance_, relevant)
                rows.append({
                    "p": p, "seed": seed, "setting": setting, "relevant": relevant.tolist(), "ranks": ranks,
                    "relevant_first": ranks == list(range(1, len(relevant) + 1)),
                    "correlation_ranks": _ranks(corr, relevant),
                    "scale_relevant": ard.input_relevance_[relevant].round(4).tolist(),
                    "scale_median_other": float(np.median(np.delete(ard.input_relevance_, relevant))),
                    "rmse_ard": _rmse(ard, Xte, yte), "rmse_fixed": _rmse(fixed, Xte, yte),
                    "time_ard_s": fit_ard.seconds, "time_fixed_s": fit_fixed.seconds,
                    "rhat_ard": float(ard.rhat_), "warnings_ard": fit_ard.count(SamplerWarning),
                })  # fmt: skip
                print(rows[-1], flush=True)
    return rows


class _MovingChains(HMCGibbsChains):
    """HMC within Gibbs whose metric is each chain's conditional prior variances, renewed every transition."""

    def _transition(self, h, T, m):
        self.m = self.base.prior.parameter_precision(self.state.precision).to(self.dtype).reciprocal()
        return super()._transition(h, T, self.m)


class MovingMetricHMC(HMC):
    """:class:`~skgibbs.samplers.HMC` with the moving metric of :class:`_MovingChains` (this benchmark only)."""

    def chains(self, target, theta0, generators, run, vectorize=True):
        return _MovingChains(self, target, theta0, generators, run, vectorize)


def metric(settings):
    torch.set_num_threads(1)
    rows = []
    samplers = {"prior": HMC(metric="prior"), "adaptive": HMC(metric="adaptive")}
    samplers["moving"] = MovingMetricHMC(metric="prior")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 10))
    datasets = {
        "linear": (X, 2.0 * X[:, 0] - 1.5 * X[:, 1] + 0.5 * rng.normal(size=200), ()),
        "diabetes": (*load_diabetes(return_X_y=True), (100, 100)),
    }
    for data, (X, y, hidden) in datasets.items():
        for name, sampler in samplers.items():
            reg = GibbsMLPRegressor(hidden, prior="ard", sampler=sampler, temperature="plug-in",
                                    random_state=0, **settings)  # fmt: skip
            seconds = timed_fit(reg, X, y).seconds
            log_tau = np.log(reg.sample_stats_["precision"])
            ess_tau = [float(effective_sample_size(log_tau[:, :, g])) for g in range(log_tau.shape[2])]
            rows.append({
                "data": data, "metric": name, "time_s": seconds, "n_divergent": int(reg.n_divergent_.sum()),
                "acceptance": float(reg.acceptance_rate_.mean()), "ess_f": float(reg.ess_),
                "rhat_f": float(reg.rhat_), "ess_log_tau_min": min(ess_tau),
                "worst_group": str(reg.prior_groups_[int(np.argmin(ess_tau))]),
                "n_grad": float(reg.n_grad_evals_.mean()), "draws": int(reg.samples_.shape[0] * reg.samples_.shape[1]),
            })  # fmt: skip
            print(rows[-1], flush=True)
    return rows


def _seconds(fn, repeat):
    fn()  # warm
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat


def cost(repeat):
    """Seconds of one Gibbs sweep of the precisions (and of the noise) against one gradient of the potential."""
    from skgibbs.problem import build_problem
    from skgibbs.samplers.hmc import gibbs as hmc_gibbs

    torch.set_num_threads(1)
    rows = []
    X, y = load_diabetes(return_X_y=True)
    for hidden in ((100, 100), (50,)):
        for learn in (False, True):
            # one noise variance, sampled or plugged in: build_problem would otherwise choose the noise model
            est = GibbsMLPRegressor(hidden, prior="ard", temperature="learn" if learn else "plug-in",
                                    noise="homoscedastic", sampler="hmc", pretrain_iter=10,
                                    random_state=0)  # fmt: skip
            problem = build_problem(est, X, y)
            target, theta = problem.target, problem.theta0
            gens = [torch.Generator().manual_seed(k) for k in range(len(problem.seeds))]
            state = hmc_gibbs.init(gens, target, theta)
            cond = hmc_gibbs.ConditionalTarget(target, state.precision, state.scale)
            loss = target.loss_sum(theta)
            gradient = _seconds(lambda: cond.value_and_grad(theta), repeat)
            gibbs = _seconds(lambda: hmc_gibbs.draw_hyperparameters(gens, target, theta, loss), repeat)
            rows.append({
                "network": f"10-{'-'.join(map(str, hidden))}-1", "n_params": problem.spec.n_params,
                "chains": len(gens), "groups": problem.prior.n_groups, "noise": learn,
                "gradient_s": gradient, "gibbs_s": gibbs,
            })  # fmt: skip
            print(rows[-1], flush=True)
    return rows


def add_arguments(parser):
    parser.add_argument("--part", choices=["relevance", "metric", "cost", "both"], default="both")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--dims", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--settings", nargs="+", choices=list(SETTINGS), default=list(SETTINGS))


def run(args):
    """The parts asked for; a part not re-run keeps its stored measurements (full runs only)."""
    result = {"args": {k: getattr(args, k) for k in ("part", "seeds", "dims", "settings")}}
    previous = load(args.out, [NAME]).get(NAME)
    if args.part != "both" and not args.quick and previous is not None:
        result.update({k: v for k, v in previous.items() if k in ("relevance", "metric", "cost")})
    if args.part in ("relevance", "both"):
        seeds = list(range(args.size.seeds or args.seeds))
        rows = relevance(args.dims[: args.size.dims], seeds, args.settings, args.size.relevance_fit)
        # this run's rows replace the stored ones of the same (p, seed, setting)
        fresh = {(r["p"], r["seed"], r["setting"]) for r in rows}
        stored = result.get("relevance", [])
        kept = [r for r in stored if (r["p"], r["seed"], r.get("setting", "paper")) not in fresh]
        result["relevance"] = kept + rows
        result["sparse"] = _sparse_ranks()
    if args.part in ("metric", "both"):
        result["metric"] = metric(args.size.metric_fit)
    if args.part in ("cost", "both"):
        result["cost"] = cost(args.size.repeat)
    return {NAME: result}


def _sparse_ranks():
    """What the stored ``sparse`` benchmark found per (p, seed): whether the relevant inputs came first."""
    try:
        stored = load(RESULTS, ["sparse"]).get("sparse") or {}
    except (OSError, json.JSONDecodeError):
        return []
    rows = stored.get("structure", [])
    kernels = {r.get("kernel", "rjmcmc") for r in rows}
    kernel = "rjhmc" if "rjhmc" in kernels else "rjmcmc"  # the estimator's default kernel where stored
    return [
        {"p": r["p"], "seed": r["seed"], "relevant_first": r["relevant_first"], "kernel": kernel,
         "burn_in": r.get("burn_in", 20_000)}
        for r in rows if r.get("kernel", "rjmcmc") == kernel
    ]  # fmt: skip


def _relevance_row(p, setting, rs, sparse):
    """One row of the relevance table: the fits ``rs`` of one (p, setting) over the seeds."""

    def mean(key, of=lambda v: v):
        return np.mean([of(r[key]) for r in rs])

    def in_top(key):  # how many of the k relevant inputs hold the k largest scores, on average
        return np.mean([sum(x <= len(r["relevant"]) for x in r[key]) for r in rs])

    sp = [sparse.get((p, r["seed"])) for r in rs]
    return [
        p, LABELS[setting], f"{sum(r['relevant_first'] for r in rs)} / {len(rs)}",
        "; ".join(",".join(map(str, r["ranks"])) for r in rs),
        f"{sum(s['relevant_first'] for s in sp if s)} / {sum(bool(s) for s in sp)}" if any(sp) else "—",
        f"{in_top('ranks'):.1f} / {in_top('correlation_ranks'):.1f}",
        f"{mean('scale_relevant', np.mean):.3f} / {mean('scale_median_other'):.3f}",
        f"{mean('rmse_ard'):.3f}", f"{mean('rmse_fixed'):.3f}",
        f"{mean('time_ard_s'):.0f} / {mean('time_fixed_s'):.0f}", f"{np.median([r['rhat_ard'] for r in rs]):.2f}",
    ]  # fmt: skip


def report(results):
    result = results[NAME]
    tables, notes = [], []
    if "relevance" in result:
        sparse = {(r["p"], r["seed"]): r for r in result.get("sparse", [])}
        rows = []
        for p in sorted({r["p"] for r in result["relevance"]}):
            for setting in SETTINGS:
                rs = [r for r in result["relevance"] if r["p"] == p and r.get("setting", "paper") == setting]
                if rs:
                    rows.append(_relevance_row(p, setting, rs, sparse))
        header = ["p", "setting", "ARD: relevant first", "ARD ranks of the relevant inputs (per seed)",
                  "sparse regressor: relevant first", "in top k: ARD / correlation",
                  "scale: relevant (mean) / others (median)", "RMSE ARD", "RMSE fixed prior",
                  "fit s: ARD / fixed", "R-hat ARD (median)"]  # fmt: skip
        tables.append(("Which inputs matter: input_relevance_ on paper 001's design", header, rows))
        stored = result.get("sparse") or [{}]
        sparse_run = (
            f"{stored[0].get('kernel', 'rjmcmc')}, {stored[0].get('burn_in', 20_000):,} warm-up transitions"
        )
        notes.append(
            "Relevance: GibbsMLPRegressor((8, 8, 8), prior='ard') and the same with the fixed prior, both "
            "with the row's setting: the paper's temperature, otherwise the defaults (HMC, 4 chains of 175 "
            "draws after 250 warm-up transitions); or the noise learned (temperature='learn'), 1000 warm-up "
            "transitions and chain_weights='stacking'. 'relevant first': all k relevant inputs hold the k largest input_relevance\\_; "
            "'in top k': how many of them do, on average, for ARD and for a screen by the absolute correlation of each input with y. The "
            f"sparse regressor's column is read from the stored 'sparse' benchmark ({sparse_run}, the same "
            "data). Held-out RMSE on the 250 test points (noise sd 0.1)."
        )
        unmixed = sum(r["rhat_ard"] > 1.05 for r in result["relevance"])
        notes.append(
            f"Mixing: R-hat of the function values at the training inputs above 1.05 on {unmixed} of the "
            f"{len(result['relevance'])} ARD fits, so their ranks and RMSEs are those of chains that have not "
            "mixed: pooled with equal weights at the paper's setting (as for the sparse regressor's fits), "
            "weighed by stacking with the noise learned."
        )
    if "metric" in result:
        rows = [[
            r["data"], r["metric"], r["n_divergent"], f"{r['acceptance']:.2f}", f"{r['ess_log_tau_min']:.0f}",
            r["worst_group"], f"{r['ess_f']:.0f}", f"{r['rhat_f']:.3f}", f"{r['n_grad']:.0f}", f"{r['time_s']:.0f}",
        ] for r in result["metric"]]  # fmt: skip
        header = ["data", "metric", "divergent", "acceptance", "min ESS log tau", "its group", "ESS f",
                  "R-hat f", "gradients per chain", "fit s"]  # fmt: skip
        tables.append(("What the HMC metric needs under prior='ard'", header, rows))
        draws = result["metric"][0]["draws"]
        notes.append(
            f"Metric: GibbsMLPRegressor(prior='ard') with {draws} draws (4 chains) after 250 warm-up "
            "transitions; 'linear': hidden_layer_sizes=(), 200 rows, y = 2 x0 - 1.5 x1 + N(0, 0.25), eight "
            "irrelevant inputs; 'diabetes': the default (100, 100) network. ESS: bulk effective sample size "
            "(the smallest over the groups' log precisions; of the function values at the training inputs, "
            "the estimator's ess\\_). 'moving' (each chain's current 1 / tau at every transition) is exact: "
            "the metric depends on the precisions only, which stay fixed along a trajectory."
        )
    if "cost" in result:
        rows = [[
            r["network"], r["n_params"], r["chains"], r["groups"], "yes" if r["noise"] else "no",
            f"{1e3 * r['gradient_s']:.2f}", f"{1e3 * r['gibbs_s']:.2f}", f"{r['gibbs_s'] / r['gradient_s']:.2f}",
        ] for r in result["cost"]]  # fmt: skip
        header = ["network", "weights", "chains", "precisions", "noise learned", "one gradient (ms)",
                  "one Gibbs sweep (ms)", "sweep / gradient"]  # fmt: skip
        tables.append(("What the Gibbs steps cost", header, rows))
        notes.append(
            "Cost: on the diabetes data (442 rows), the chains batched, one thread: one evaluation of the "
            "conditional potential and its gradient against one Gibbs sweep (every chain's precisions, and "
            "its noise precision where learned, drawn from their Gamma conditionals; the loss sum it needs "
            "is the HMC transition's). An HMC transition runs up to 64 leapfrog steps, one gradient each, "
            "and one sweep; with the noise learned it also evaluates the loss and gradient at its end point "
            "once."
        )
    load = load_after(result, lambda r: r.get("load_average", float("nan")))
    notes.append(f"Load average at the end of the run: {load:.1f}.")
    return [Page(NAME, "Hierarchical priors: input relevance and the metric", tables, notes)]


BENCHMARK = Benchmark(
    name=NAME,
    kind="performance",
    title="Hierarchical priors: input relevance (ARD) and what the HMC metric needs",
    outputs=(Output(NAME, "Hierarchical priors: input relevance and the metric"),),
    run=run,
    report=report,
    add_arguments=add_arguments,
    sizes=SIZES,
)
