"""The cap of the regressor's adaptive run length: what the sampling past it buys.

Under ``n_samples="auto"`` a run whose chains do not pass their checks
stops at a cap, ``max_grad_evals="auto"``: a multiple of its first block's
gradient evaluations (:attr:`~skgibbs.plan.EstimatorTraits.cap_factor`).
On the ``uq_defaults`` sets where the default's chains reach it (Boston,
concrete, auto), this study fits ``GibbsMLPRegressor()`` on the first
splits of ``bench_uq`` (90/10, the inputs standardised on the training
part, seeded with the split) at several multiples, everything else the
defaults, and reports the test log-likelihood, the coverage of the 90%
predictive interval, the worst chain's own ESS and the CPU time of each
fit (one thread). The draws of a run with a larger cap continue those of a
smaller one (the same seed), and each keeps the second half of its run.

Run ``python -m benchmarks run run_length_cap`` (about 20 minutes on one
core); ``--quick`` fits diabetes once at two small caps with a tiny network.
"""

import dataclasses
import operator
import time

import numpy as np
import torch

from skgibbs import GibbsMLPRegressor, SamplerWarning
from skgibbs.metrics import log_predictive_density_scorer

from .. import Benchmark, Output
from ..common.environment import load_after
from ..common.fits import regression_split
from ..common.stats import fmt, mean_se, paired, timed_fit
from ..common.writer import Page

NAME = "run_length_cap"
SIZES = {
    "full": {"factors": [2, 4, 8], "datasets": ["boston", "concrete", "auto"], "splits": 3, "settings": {}},
    "quick": {"factors": [1, 2], "datasets": ["diabetes"], "splits": 1,
              "settings": {"hidden_layer_sizes": [4], "pretrain_iter": 10, "burn_in": 10}},
}  # fmt: skip


def _capped(factor):
    """``GibbsMLPRegressor`` whose class declares the cap multiple ``factor`` (the plan reads the class's)."""
    traits = dataclasses.replace(GibbsMLPRegressor._traits, cap_factor=factor)
    return type("GibbsMLPRegressor", (GibbsMLPRegressor,), {"_traits": traits})


def _fit(name, split, factor, settings):
    Xtr, Xte, ytr, yte = regression_split(name, split)
    reg = _capped(factor)(random_state=split, **settings)
    fit = timed_fit(reg, Xtr, ytr, clock=time.process_time)
    _, pis = reg.predict_interval(Xte, confidence_level=0.9)
    record = reg.run_length_
    return {
        "dataset": name, "split": split, "factor": factor, "cpu_s": fit.seconds,
        "ll": float(log_predictive_density_scorer(reg, Xte, yte)),
        "coverage": float(np.mean((yte >= pis[:, 0, 0]) & (yte <= pis[:, 1, 0]))),
        "noise": reg.noise_, "draws": int(record["n_draws"]), "stopped_by": record["stopped_by"],
        "within_chain_ess": float(reg.within_chain_ess_), "max_grad_evals": int(record["max_grad_evals"]),
        "grads_per_draw": float(record["grads_per_draw"]),
        "warned": fit.count(SamplerWarning),
    }  # fmt: skip


def run(args):
    """Fit every data set and split at every cap multiple."""
    torch.set_num_threads(1)
    size = args.size
    rows = [_fit(name, split, factor, size.settings) for name in size.datasets for split in range(size.splits)
            for factor in size.factors]  # fmt: skip
    return {NAME: {"rows": rows, "factors": size.factors, "default": GibbsMLPRegressor._traits.cap_factor}}


def _paired(rows, factor, top):
    """Each data set's and split's test LL at ``factor`` less that at ``top``, and the ratio of their CPU."""
    ll = paired(rows, "factor", factor, top, "ll")
    return ll, paired(rows, "factor", factor, top, "cpu_s", operator.truediv)


def report(results):
    """Per data set and multiple, the means over the splits; the paired differences from the largest."""
    result = results[NAME]
    rows, factors = result["rows"], result["factors"]
    top = max(factors)
    header = ["data set", "cap (x first block)", "test LL", f"LL - LL at {top}", "90% coverage",
              "draws a chain (run)", "worst chain's ESS", "CPU s", f"CPU / CPU at {top}"]  # fmt: skip
    table = []
    for name in dict.fromkeys(r["dataset"] for r in rows):
        mine = [r for r in rows if r["dataset"] == name]
        for f in factors:
            rs = [r for r in mine if r["factor"] == f]
            diff, ratio = _paired(mine, f, top)
            table.append([
                name, f"{f:g}", fmt(mean_se([r["ll"] for r in rs])), fmt(mean_se(diff)),
                f"{np.mean([r['coverage'] for r in rs]):.3f}", f"{np.mean([r['draws'] for r in rs]):.0f}",
                f"{np.mean([r['within_chain_ess'] for r in rs]):.1f}",
                f"{np.mean([r['cpu_s'] for r in rs]):.1f}", f"{np.mean(ratio):.2f}",
            ])  # fmt: skip
    overall = []
    for f in factors:
        if f != top:
            d, ratio = _paired(rows, f, top)
            overall.append(f"at {f:g}, LL - LL at {top} from {min(d):+.3f} to {max(d):+.3f} (mean "
                           f"{np.mean(d):+.3f}), CPU {np.mean(ratio):.2f} times")  # fmt: skip
    steps = []
    for low, high in zip(sorted(factors)[:-1], sorted(factors)[1:]):
        d, ratio = _paired(rows, high, low)
        steps.append(f"from {low:g} to {high:g}, LL from {min(d):+.3f} to {max(d):+.3f} (mean {np.mean(d):+.3f}), "
                     f"CPU {np.mean(ratio):.2f} times")  # fmt: skip
    default, now = result["default"], GibbsMLPRegressor._traits.cap_factor
    default_note = f"The regressor's default multiple is {now:g}." if default == now else (
        f"The regressor's default multiple was {default:g} when these fits ran and is {now:g} now (the "
        "diagnostics guide says why).")
    load = load_after(result, lambda r: r["load_average"])
    n_splits = max(r["split"] for r in rows) + 1
    warned = sum(r["warned"] > 0 for r in rows)
    notes = [
        "GibbsMLPRegressor() with the cap of its adaptive run length (max_grad_evals='auto') set to the "
        "given multiple of its first block's gradients, everything else its defaults, on the first "
        f"{n_splits} splits of bench_uq (90/10, seeded with the split). 'LL - LL at {top}': the paired "
        "difference of each split's test log-likelihood (mean ± s.e.); 'draws a chain (run)': the run's "
        "length, whose second half is kept; 'worst chain's ESS': within_chain_ess_ (100 / 4 chains "
        f"wanted). Over every fit: {'; '.join(overall)}. {warned} of the {len(rows)} fits ended with a "
        "SamplerWarning (their chains had not converged on their own: the LL and coverage are those of "
        f"chains short of their checks at every cap). Each step up: {'; '.join(steps)}. {default_note} One "
        f"thread; load average {load:.1f}.",
    ]
    title = "The cap of the regressor's adaptive run"
    return [Page(NAME, title, [("Cap of the run length", header, table)], notes)]


BENCHMARK = Benchmark(
    name=NAME,
    kind="reproduction",
    title="The cap of the regressor's adaptive run length: test log-likelihood and CPU per multiple",
    outputs=(Output(NAME, "The cap of the regressor's adaptive run"),),
    run=run,
    report=report,
    sizes=SIZES,
)
