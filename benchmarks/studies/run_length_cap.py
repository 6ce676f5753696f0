"""The cap of the regressor's adaptive run length: what the sampling past it buys.

Under ``n_samples="auto"`` a run whose chains fail their checks stops at ``max_grad_evals="auto"``, a multiple
of its first block's gradients (:attr:`~skgibbs.plan.EstimatorTraits.cap_factor`). This fits
``GibbsMLPRegressor()`` at several multiples on the first splits of ``bench_uq``'s Boston, concrete and auto
(where the default reaches it; :func:`benchmarks.common.fits.regression_split`): test log-likelihood, 90%
coverage, the worst chain's own ESS and CPU time (one thread). A larger cap's draws continue a smaller one's
(same seed); each run keeps its second half.

Run ``python -m benchmarks run run_length_cap``; ``--quick`` fits diabetes once at two small caps.
"""

import dataclasses
import operator

import numpy as np
import torch

from skgibbs import GibbsMLPRegressor, SamplerWarning

from .. import Benchmark, Output
from ..common.environment import load_after
from ..common.stats import fmt, mean_se, paired
from ..common.writer import Page
from .hyperprior_mixing import column_mean, split_fit

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
    reg = _capped(factor)(random_state=split, **settings)
    fit, _, scores = split_fit(reg, name, split)
    record = reg.run_length_
    return {
        "dataset": name, "split": split, "factor": factor, "cpu_s": fit.seconds, **scores,
        "noise": reg.noise_, "draws": int(record["n_draws"]), "stopped_by": record["stopped_by"],
        "within_chain_ess": float(reg.within_chain_ess_), "max_grad_evals": int(record["max_grad_evals"]),
        "grads_per_draw": float(record["grads_per_draw"]), "warned": fit.count(SamplerWarning),
    }  # fmt: skip


def run(args):
    torch.set_num_threads(1)
    size = args.size
    rows = [_fit(name, split, factor, size.settings) for name in size.datasets for split in range(size.splits)
            for factor in size.factors]  # fmt: skip
    return {NAME: {"rows": rows, "factors": size.factors, "default": GibbsMLPRegressor._traits.cap_factor}}


def _paired(rows, factor, top):
    """Each data set's and split's test LL at ``factor`` less that at ``top``, and the ratio of their CPU."""
    ll = paired(rows, "factor", factor, top, "ll")
    return ll, paired(rows, "factor", factor, top, "cpu_s", operator.truediv)


def _span(d, ratio):
    """The range and mean of the LL differences ``d`` and the mean CPU ratio, as the notes state them."""
    return f"from {min(d):+.3f} to {max(d):+.3f} (mean {np.mean(d):+.3f}), CPU {np.mean(ratio):.2f} times"


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
                f"{column_mean(rs, 'coverage'):.3f}", f"{column_mean(rs, 'draws'):.0f}",
                f"{column_mean(rs, 'within_chain_ess'):.1f}", f"{column_mean(rs, 'cpu_s'):.1f}",
                f"{np.mean(ratio):.2f}",
            ])  # fmt: skip
    overall = [f"at {f:g}, LL - LL at {top} {_span(*_paired(rows, f, top))}" for f in factors if f != top]
    steps = [f"from {low:g} to {high:g}, LL {_span(*_paired(rows, high, low))}"
             for low, high in zip(sorted(factors)[:-1], sorted(factors)[1:])]  # fmt: skip
    default, now = result["default"], GibbsMLPRegressor._traits.cap_factor
    default_note = f"The regressor's default multiple is {now:g}." if default == now else (
        f"The regressor's default multiple was {default:g} when these fits ran and is {now:g} now (the "
        "diagnostics guide says why).")  # fmt: skip
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
    return [Page(NAME, HEADING, [("Cap of the run length", header, table)], notes)]


HEADING = "The cap of the regressor's adaptive run"
TITLE = "The cap of the regressor's adaptive run length: test log-likelihood and CPU per multiple"
BENCHMARK = Benchmark(NAME, "reproduction", TITLE, (Output(NAME, HEADING),), run, report, sizes=SIZES)
