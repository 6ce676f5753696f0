"""The default's slow directions: the precisions' Gamma prior and the rescaling moves, against mixing and prediction.

``GibbsMLPRegressor()`` samples its ARD precisions in non-centred coordinates under ``Gamma(a, a sigma_g^2)``,
``a = prior_shape``; where the data say nothing (a ReLU layer's scale traded against the next one's, an
unused input) a vague ``a`` leaves long directions that the chains walk slowly. This fits the default at
several shapes, and at the default shape with the rescaling moves of MCLMC (``MCLMC(rescaling=True)``: each
hidden layer's and unit's scale drawn exactly along the network's rescaling symmetry,
:mod:`skgibbs.samplers.rescaling`), on the first splits of ``bench_uq``'s Boston, concrete and auto (where
its chains reach their cap; :func:`benchmarks.common.fits.regression_split`): the test log-likelihood (and
its paired difference from the default's), the 90% interval's coverage, the pooled and worst chain's R-hat
and ESS, the share of training inputs where a chain alone falls short (split R-hat above 1.05 or bulk ESS
below 100 / 4), the worst and the median chain's ESS of the log-precisions and the CPU time (one thread).

Run ``python -m benchmarks run hyperprior_mixing`` (``--n-jobs 2``: two fits at a time); ``--quick`` fits
diabetes once at two shapes and with the moves.
"""

import time

import numpy as np
import torch
from joblib import Parallel, delayed

from skgibbs import GibbsMLPRegressor, SamplerWarning
from skgibbs._mixing import ESS_WARN, RHAT_WARN, pointwise_chain_mixing
from skgibbs.metrics import log_predictive_density_scorer
from skgibbs.samplers import MCLMC

from .. import Benchmark, Output
from ..common.environment import load_after
from ..common.fits import regression_split
from ..common.stats import fmt, mean_se, paired, timed_fit
from ..common.writer import Page

NAME = "hyperprior_mixing"
SIZES = {
    "full": {"shapes": [0.5, 2.0, 5.0], "datasets": ["boston", "concrete", "auto"], "splits": 3,
             "settings": {}},
    "quick": {"shapes": [0.5, 5.0], "datasets": ["diabetes"], "splits": 1,
              "settings": {"hidden_layer_sizes": [4], "pretrain_iter": 10, "burn_in": 10, "n_samples": 16}},
}  # fmt: skip
#: the variant with the rescaling moves, at the default shape
MOVES = "moves"
DEFAULT_SHAPE = GibbsMLPRegressor().get_params()["prior_shape"]


def split_fit(reg, name, split):
    """Fit ``reg`` on a split of ``bench_uq``'s ``name``: the fit (CPU time), its inputs and test scores."""
    Xtr, Xte, ytr, yte = regression_split(name, split)
    fit = timed_fit(reg, Xtr, ytr, clock=time.process_time)
    _, pis = reg.predict_interval(Xte, confidence_level=0.9)
    ll = float(log_predictive_density_scorer(reg, Xte, yte))
    coverage = float(np.mean((yte >= pis[:, 0, 0]) & (yte <= pis[:, 1, 0])))
    return fit, Xtr, {"ll": ll, "coverage": coverage}


def column_mean(rows, key):
    """The mean of ``key`` over ``rows``."""
    return np.mean([r[key] for r in rows])


def _short_share(F, n_chains):
    """The share of the columns of draws ``F`` ``(K S, m)`` at which some chain alone falls short."""
    within_r, within_e, _ = pointwise_chain_mixing(F, n_chains=n_chains)
    short = (within_r > RHAT_WARN) | (within_e < ESS_WARN / n_chains)
    return float(np.mean(short)), float(np.nanmin(within_e))


def _fit(name, split, variant, settings):
    shape = DEFAULT_SHAPE if variant == MOVES else variant
    moves = {"sampler": MCLMC(rescaling=True)} if variant == MOVES else {}
    reg = GibbsMLPRegressor(prior_shape=shape, random_state=split, **settings, **moves)
    fit, Xtr, scores = split_fit(reg, name, split)
    K = reg.samples_.shape[0]
    inputs_short, _ = _short_share(reg.predict_samples(Xtr).T, K)
    log_precision = np.log(reg.sample_stats_["precision"])  # (K, S, G)
    _, within_e, _ = pointwise_chain_mixing(log_precision.reshape(-1, log_precision.shape[-1]), n_chains=K)
    per_chain = [pointwise_chain_mixing(chain, n_chains=1)[1] for chain in log_precision]
    return {
        "dataset": name, "split": split, "variant": variant, "cpu_s": fit.seconds, **scores,
        "rhat": float(reg.rhat_), "ess": float(reg.ess_), "within_chain_rhat": float(reg.within_chain_rhat_),
        "within_chain_ess": float(reg.within_chain_ess_), "inputs_short": inputs_short,
        "precision_ess": float(np.nanmin(within_e)), "precision_ess_median": float(np.nanmedian(per_chain)),
        "draws": int(reg.samples_.shape[1]), "warned": fit.count(SamplerWarning),
    }  # fmt: skip


def _one_thread_fit(*args):
    torch.set_num_threads(1)
    return _fit(*args)


def run(args):
    size = args.size
    variants = [*size.shapes, MOVES]
    jobs = [(name, split, v, size.settings) for name in size.datasets for split in range(size.splits)
            for v in variants]  # fmt: skip
    rows = Parallel(n_jobs=args.n_jobs or 1)(delayed(_one_thread_fit)(*job) for job in jobs)
    default = GibbsMLPRegressor().get_params()["prior_shape"]
    return {NAME: {"rows": rows, "variants": variants, "default": default, "n_jobs": args.n_jobs or 1}}


def _label(variant):
    return f"{DEFAULT_SHAPE:g}, rescaling moves" if variant == MOVES else f"{variant:g}"


def report(results):
    """Per data set and variant, the means over the splits; the paired LL differences from the default."""
    result = results[NAME]
    rows, variants, base = result["rows"], result["variants"], result["default"]
    header = ["data set", "prior_shape", "test LL", "LL - LL of the default", "90% coverage", "R-hat / ESS",
              "worst chain: R-hat / ESS", "inputs short", "log-precisions: chain ESS, worst / median", "CPU s",
              "fits warned"]  # fmt: skip
    table = []
    for name in dict.fromkeys(r["dataset"] for r in rows):
        mine = [r for r in rows if r["dataset"] == name]
        for v in variants:
            rs = [r for r in mine if r["variant"] == v]
            table.append([
                name, _label(v), fmt(mean_se([r["ll"] for r in rs])),
                fmt(mean_se(paired(mine, "variant", v, base, "ll"))), f"{column_mean(rs, 'coverage'):.3f}",
                f"{column_mean(rs, 'rhat'):.2f} / {column_mean(rs, 'ess'):.1f}",
                f"{column_mean(rs, 'within_chain_rhat'):.2f} / {column_mean(rs, 'within_chain_ess'):.1f}",
                f"{column_mean(rs, 'inputs_short'):.0%}",
                f"{column_mean(rs, 'precision_ess'):.1f} / {column_mean(rs, 'precision_ess_median'):.1f}",
                f"{column_mean(rs, 'cpu_s'):.1f}", f"{sum(r['warned'] > 0 for r in rs)} of {len(rs)}",
            ])  # fmt: skip
    overall = [f"{_label(v)}, from {min(d):+.3f} to {max(d):+.3f} (mean {np.mean(d):+.3f})"
               for v in variants if v != base for d in [paired(rows, "variant", v, base, "ll")]]  # fmt: skip
    load = load_after(result, lambda r: r["load_average"])
    n_splits = max(r["split"] for r in rows) + 1
    notes = [
        "GibbsMLPRegressor(prior_shape=a), everything else its defaults (ARD with the noise learned, MCLMC "
        "in non-centred coordinates, the adaptive run length and its cap), and at the default shape with "
        "sampler=MCLMC(rescaling=True) (each hidden layer's and unit's scale drawn from its exact conditional "
        "along the network's rescaling symmetry between transitions), on the first "
        f"{n_splits} splits of bench_uq (90/10, seeded with the split). The default shape is {base:g}. "
        "'LL - LL of the default': the paired difference of each split's test log-likelihood (mean ± s.e.); "
        f"over every fit, {'; '.join(overall)}. 'R-hat / ESS': the fit's rhat_ and ess_ (pooled over the "
        "chains); 'worst chain': within_chain_rhat_ and within_chain_ess_, each chain judged alone, the "
        f"worst over the training inputs (the fit's check wants at most {RHAT_WARN} and at least "
        f"{ESS_WARN:g} / 4 chains); 'inputs short': the share of the training inputs at which some chain "
        "alone has a split R-hat or a bulk ESS past those thresholds; 'log-precisions': the bulk ESS of one "
        "chain alone of a group's log-precision (sample_stats_['precision']), the smallest and the median "
        "over the chains and groups. 'fits warned': fits that ended with a SamplerWarning. Means over the "
        f"splits. One thread a fit, {result['n_jobs']} fit(s) at a time; load average {load:.1f}.",
    ]
    return [
        Page(
            NAME,
            HEADING,
            [("Shape of the Gamma prior of the precisions, and the rescaling moves", header, table)],
            notes,
        )
    ]


HEADING = "The precisions' prior and the rescaling moves: mixing and prediction"
TITLE = (
    "The precisions' Gamma prior and the rescaling moves: how far the default's chains mix, and the test LL"
)
BENCHMARK = Benchmark(NAME, "reproduction", TITLE, (Output(NAME, HEADING),), run, report, sizes=SIZES)
