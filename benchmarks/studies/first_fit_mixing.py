"""Why the first fit's chains do not converge on their own: the same posterior under other samplers and models.

The README's first fit (:func:`~skgibbs.datasets.make_gap_regression`, 300
points, noise sd 0.02, a 1-16-1 ReLU network) ends with a mixing warning in
which each chain alone falls short, not only the chains against each
other. This study fits that problem at one fixed budget (``burn_in`` 200,
``n_samples`` 400, four chains, the same seed) under variants that change
one thing at a time, and reports for each the pooled R-hat and bulk ESS of
the function values at the training inputs, the worst chain's own split
R-hat and bulk ESS, the between-chain (nested) R-hat, gradient evaluations
a chain, the step size and the CPU time:

* the default (MCLMC on the non-centred target of the ARD prior, the noise
  learned and integrated out);
* the fixed prior with the noise learned, and with the plug-in temperature
  (twice the pre-training's held-out loss: a wider posterior, since that
  loss is above the noise the chains learn);
* MCLMC on the centred target (Gibbs sweeps of the scales and the noise);
* adjusted MCLMC and HMC within Gibbs on the default model;
* a smooth activation (``tanh``) in place of ReLU;
* the default with ``n_samples="auto"`` (the run length that adapts);
* the default started from shorter and longer pre-training: the README's
  ``pretrain_iter=500``, and 20,000 steps, where the held-out loss levels
  off (the default cap, 3,000, stops while it is still falling).

A second table says what moves slowly within a chain: for each variant,
the effective sample size of each chain alone (the worst chain's, of the
kept draws) of the log density, the noise variance, the prior's group
precisions (the worst group), the function at the training inputs (the
median input, and the worst) and in the gap (the worst of ``x`` = -0.1, 0
and 0.1).

A last row, ``reference``, is the default at five times the budget
(``burn_in`` and ``n_samples`` 1000), to see whether length alone brings
the chains together.

Run ``python -m benchmarks run first_fit_mixing`` (about 10 minutes on one
core); ``--quick`` runs two variants at a tiny budget.
"""

import time
import warnings

import numpy as np
import torch

from skgibbs import GibbsMLPRegressor
from skgibbs.datasets import make_gap_regression
from skgibbs.diagnostics import ess
from skgibbs.samplers import MCLMC

from .. import Benchmark, Output
from ..common.writer import Page

NAME = "first_fit_mixing"
#: the variants: label and the keyword arguments that differ from the first fit's
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


def _estimator(size, extra, seed):
    params = {"hidden_layer_sizes": (16,), "burn_in": size.burn_in, "n_samples": size.n_samples,
              "noise": "homoscedastic", "random_state": seed}
    params.update(extra)
    if params.get("sampler") == "centered":
        params["sampler"] = MCLMC(parametrization="centered")
    return GibbsMLPRegressor(**params)


def _fit(size, extra, seed):
    X, y = make_gap_regression(n_samples=size.n, noise=0.02, random_state=seed)
    reg = _estimator(size, extra, seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        start = time.process_time()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            reg.fit(X, y)
        cpu = time.process_time() - start
    finally:
        torch.set_num_threads(threads)
    record = getattr(reg, "run_length_", {})
    return {
        "pretrain_steps": int(reg.pretrain_n_iter_),
        "pretrain_converged": bool(reg.pretrain_converged_),
        "chain_ess": _chain_ess(reg, X),
        "sampler": reg.sampler_name_,
        "n_draws": int(reg.samples_.shape[1]),
        "rhat": float(reg.rhat_),
        "ess": float(reg.ess_),
        "within_chain_rhat": float(reg.within_chain_rhat_),
        "within_chain_ess": float(reg.within_chain_ess_),
        "between_chain_rhat": float(reg.between_chain_rhat_),
        "grad_evals": int(np.mean(reg.n_grad_evals_)),
        "step_size": float(np.median(getattr(reg, "step_size_", [np.nan]))),
        "noise_sd": float(np.sqrt(reg.noise_variance_)),
        "cpu_s": cpu,
        "warnings": [str(w.message).split("\n", 1)[0] for w in caught if "Sampler" in w.category.__name__],
        "run_length": {k: v for k, v in record.items() if k != "checks"},
    }


#: points in the data gap ``(-0.2, 0.2)`` where the slow movement of the function is measured
GAP = (-0.1, 0.0, 0.1)


def _worst_chain(draws):
    """The smallest bulk ESS of one chain alone over the chains, ``draws`` of shape ``(chains, n)``."""
    return float(min(ess(chain[None, :]) for chain in np.asarray(draws, dtype=float)))


def _chain_ess(reg, X):
    """Each quantity's worst single-chain bulk ESS (of the kept draws), the function's at the median input too."""
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
    size = args.size
    rows = {label: _fit(size, VARIANTS[label], args.seed) for label in size.variants}
    return {NAME: {"n": size.n, "burn_in": size.burn_in, "n_samples": size.n_samples, "rows": rows}}


def report(results):
    result = results[NAME]
    header = ["variant", "sampler", "draws", "R-hat", "ESS", "chain R-hat", "chain ESS", "between R-hat",
              "grads", "step", "noise sd", "CPU s"]
    rows = []
    for label, r in result["rows"].items():
        rows.append([label, r["sampler"], r["n_draws"], f"{r['rhat']:.3f}", f"{r['ess']:.1f}",
                     f"{r['within_chain_rhat']:.3f}", f"{r['within_chain_ess']:.1f}",
                     f"{r['between_chain_rhat']:.3f}", r["grad_evals"], f"{r['step_size']:.3g}",
                     f"{r['noise_sd']:.4f}", f"{r['cpu_s']:.1f}"])
    slow_header = ["variant", "pre-training steps", "log density", "noise", "precisions (worst group)",
                   "f at the data: median input", "f at the data: worst input", "f in the gap"]
    slow = []
    for label, r in result["rows"].items():
        e = r["chain_ess"]
        steps = f"{r['pretrain_steps']}" + ("" if r["pretrain_converged"] else " (cap)")
        slow.append([label, steps] + [f"{e[k]:.1f}" if k in e else "-" for k in
                                      ("lp", "noise", "precision", "f_data_median", "f_data_worst", "f_gap")])
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
        "x = -0.1, 0 and 0.1 in the data gap (the worst). 'pre-training steps': Adam steps of the chains' pre-training, '(cap)' where "
        "it reached pretrain_iter before its held-out loss levelled off.",
    ]
    return [Page(NAME, "Why the first fit's chains do not converge on their own",
                 tables=[("Variants at one budget", header, rows),
                         ("What moves slowly: the worst chain's own ESS of each quantity", slow_header, slow)],
                 notes=notes)]


BENCHMARK = Benchmark(
    name=NAME,
    kind="reproduction",
    title="Why the first fit's chains do not converge on their own",
    outputs=(Output(NAME, "Why the first fit's chains do not converge on their own"),),
    run=run,
    report=report,
    sizes=SIZES,
)
