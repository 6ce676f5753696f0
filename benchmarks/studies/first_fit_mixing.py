"""Why the first fit's chains do not converge on their own: the same posterior under other samplers and models.

The README's first fit (:func:`~skgibbs.datasets.make_gap_regression`, 300 points, noise sd 0.02, a 1-16-1
ReLU network, four chains, one seed) at one budget (``burn_in`` 200, ``n_samples`` 400) under variants that
each change one thing (:data:`VARIANTS`; ``reference`` is the default at five times the budget): the pooled
R-hat and bulk ESS of the function at the training inputs, the worst chain's own split R-hat and bulk ESS,
the between-chain (nested) R-hat, gradients a chain, step size and CPU time (one thread); and each chain's
own bulk ESS (the worst chain's) of the log density, the noise, the prior's precisions (the worst group),
the function at the training inputs (median and worst input) and in the gap (worst of x = -0.1, 0, 0.1).

Run ``python -m benchmarks run first_fit_mixing``; ``--quick`` runs two variants at a tiny budget.
"""

import time

import numpy as np
import torch

from skgibbs import GibbsMLPRegressor
from skgibbs.datasets import make_gap_regression
from skgibbs.diagnostics import ess
from skgibbs.samplers import MCLMC

from .. import Benchmark, Output
from ..common.stats import timed_fit
from ..common.writer import Page

NAME = "first_fit_mixing"
#: the variants: label and the keyword arguments that differ from the first fit's ("centered": MCLMC on
#: the centred target, Gibbs sweeps of the scales and the noise; pretrain_iter=20000: where the held-out
#: loss levels off, past the default cap)
VARIANTS = {
    "default (MCLMC, ARD, noise learned)": {},
    "prior='fixed', temperature='learn'": {"prior": "fixed", "temperature": "learn"},
    "prior='fixed', temperature='plug-in' (HMC)": {"prior": "fixed", "temperature": "plug-in"},
    "MCLMC(parametrization='centered')": {"sampler": "centered"},
    "sampler='adjusted_mclmc'": {"sampler": "adjusted_mclmc"},
    "sampler='hmc'": {"sampler": "hmc"},
    "activation='tanh'": {"activation": "tanh"},
    "n_samples='auto'": {"n_samples": "auto"},
    "pretrain_iter=500 (the README's)": {"pretrain_iter": 500},
    "pretrain_iter=20000 (to the plateau)": {"pretrain_iter": 20000},
    "reference: 5x the budget": {"burn_in": 1000, "n_samples": 1000},
}
SIZES = {
    "full": {"n": 300, "burn_in": 200, "n_samples": 400, "variants": tuple(VARIANTS)},
    "quick": {"n": 80, "burn_in": 20, "n_samples": 20, "variants": tuple(VARIANTS)[:2]},
}
#: points in the data gap ``(-0.2, 0.2)`` where the slow movement of the function is measured
GAP = (-0.1, 0.0, 0.1)
#: the fit's own mixing diagnostics, stored as they are
MIXING = ("rhat", "ess", "within_chain_rhat", "within_chain_ess", "between_chain_rhat")


def _fit(size, extra, seed):
    X, y = make_gap_regression(n_samples=size.n, noise=0.02, random_state=seed)
    params = {"hidden_layer_sizes": (16,), "burn_in": size.burn_in, "n_samples": size.n_samples,
              "noise": "homoscedastic", "random_state": seed, **extra}  # fmt: skip
    if params.get("sampler") == "centered":
        params["sampler"] = MCLMC(parametrization="centered")
    reg = GibbsMLPRegressor(**params)
    fit = timed_fit(reg, X, y, clock=time.process_time)
    return {
        "pretrain_steps": int(reg.pretrain_n_iter_), "pretrain_converged": bool(reg.pretrain_converged_),
        "chain_ess": _chain_ess(reg, X), "sampler": reg.sampler_name_, "n_draws": int(reg.samples_.shape[1]),
        **{key: float(getattr(reg, f"{key}_")) for key in MIXING},
        "grad_evals": int(np.mean(reg.n_grad_evals_)),
        "step_size": float(np.median(getattr(reg, "step_size_", [np.nan]))),
        "noise_sd": float(np.sqrt(reg.noise_variance_)), "cpu_s": fit.seconds,
        "warnings": [str(w.message).split("\n")[0] for w in fit.warnings if "Sampler" in w.category.__name__],
        "run_length": {k: v for k, v in getattr(reg, "run_length_", {}).items() if k != "checks"},
    }  # fmt: skip


def _worst_chain(draws):
    """The smallest bulk ESS of one chain alone over the chains, ``draws`` of shape ``(chains, n)``."""
    return float(min(ess(chain[None, :]) for chain in np.asarray(draws, dtype=float)))


def _chain_ess(reg, X):
    """Each quantity's worst single-chain bulk ESS of the kept draws (at the data: the median input's too)."""
    stats = reg.sample_stats_
    n_chains = stats["lp"].shape[0]
    out = {"lp": _worst_chain(stats["lp"])}
    if "noise_variance" in stats:
        out["noise"] = _worst_chain(np.log(stats["noise_variance"]))
    if "precision" in stats and np.shape(stats["precision"])[-1]:
        precision = np.log(stats["precision"])
        out["precision"] = min(_worst_chain(precision[:, :, g]) for g in range(precision.shape[2]))
    f = reg.predict_samples(X).reshape(len(X), n_chains, -1)
    per_input = np.array([_worst_chain(f_i) for f_i in f])
    out["f_data_median"], out["f_data_worst"] = float(np.median(per_input)), float(per_input.min())
    gap = reg.predict_samples(np.asarray(GAP)[:, None]).reshape(len(GAP), n_chains, -1)
    out["f_gap"] = min(_worst_chain(g) for g in gap)
    return out


def run(args):
    torch.set_num_threads(1)
    size = args.size
    rows = {label: _fit(size, VARIANTS[label], args.seed) for label in size.variants}
    return {NAME: {"n": size.n, "burn_in": size.burn_in, "n_samples": size.n_samples, "rows": rows}}


#: the first table's columns after the variant: a row's key, the header and the format ("": as stored)
COLUMNS = (
    ("sampler", "sampler", ""), ("n_draws", "draws", ""), ("rhat", "R-hat", ".3f"), ("ess", "ESS", ".1f"),
    ("within_chain_rhat", "chain R-hat", ".3f"), ("within_chain_ess", "chain ESS", ".1f"),
    ("between_chain_rhat", "between R-hat", ".3f"), ("grad_evals", "grads", ""), ("step_size", "step", ".3g"),
    ("noise_sd", "noise sd", ".4f"), ("cpu_s", "CPU s", ".1f"),
)  # fmt: skip
#: the second table's columns after the pre-training: a key of ``chain_ess`` and the header
SLOW = {"lp": "log density", "noise": "noise", "precision": "precisions (worst group)",
        "f_data_median": "f at the data: median input", "f_data_worst": "f at the data: worst input",
        "f_gap": "f in the gap"}  # fmt: skip


def report(results):
    result = results[NAME]
    header = ["variant", *(title for _, title, _ in COLUMNS)]
    rows = [[label, *(format(r[k], spec) for k, _, spec in COLUMNS)] for label, r in result["rows"].items()]
    slow_header = ["variant", "pre-training steps", *SLOW.values()]
    slow = []
    for label, r in result["rows"].items():
        e = r["chain_ess"]
        steps = f"{r['pretrain_steps']}" + ("" if r["pretrain_converged"] else " (cap)")
        slow.append([label, steps, *(f"{e[k]:.1f}" if k in e else "-" for k in SLOW)])
    notes = [
        f"The first fit's problem: {result['n']} points, noise sd 0.02, a 1-16-1 ReLU network, four chains, "
        f"burn_in={result['burn_in']} and n_samples={result['n_samples']} unless the variant says otherwise "
        "(the reference row: 1000 and 1000), noise='homoscedastic'. 'R-hat' and 'ESS': pooled, the worst "
        "over the training inputs; 'chain R-hat' and 'chain ESS': the worst chain's own split R-hat and "
        "bulk ESS (wanted: at most 1.05, at least 25); 'between R-hat': nested R-hat of the chains against "
        "each other; 'grads': gradient evaluations a chain; 'step': the median step size (not comparable "
        "across samplers); 'noise sd': the learned or plug-in noise sd on the scale of y (the data's is "
        "0.02); 'CPU s': one thread.",
        "What moves slowly: each quantity's bulk ESS in one chain alone, the worst of the four chains, of the kept "
        "draws (the variant's 'draws' a chain): the log density of the draws (lp), the log noise variance "
        "(where it is learned), the log precisions of the prior's groups (the worst group; ARD and the layer "
        "prior), the function at the training inputs (the median input's, and the worst input's) and at "
        "x = -0.1, 0 and 0.1 in the data gap (the worst). 'pre-training steps': Adam steps of the chains' "
        "pre-training, '(cap)' where it reached pretrain_iter before its held-out loss levelled off.",
    ]
    tables = [
        ("Variants at one budget", header, rows),
        ("What moves slowly: the worst chain's own ESS of each quantity", slow_header, slow),
    ]
    return [Page(NAME, TITLE, tables, notes)]


TITLE = "Why the first fit's chains do not converge on their own"
BENCHMARK = Benchmark(NAME, "reproduction", TITLE, (Output(NAME, TITLE),), run, report, sizes=SIZES)
