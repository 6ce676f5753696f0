"""What a default fit costs at large n: full-data HMC against the batch kernels.

At the Bayesian temperature the per-example term of the batch potential,
``lambda' l_i / n``, is about 1/2 whatever ``n`` is (``temperature = 2
sigma^2`` and ``l_i ~ sigma^2``), so csMALA's surrogate is far from the
Gibbs posterior at every ``n`` and its chains stick (the old default at
``n > 10000``: R-hat 3.3 on Friedman #1 with 100000 rows). The exact
alternative, full-data HMC, costs one full-data gradient per leapfrog step.
This script measures that cost where it matters: Friedman #1 (20 inputs,
``noise=1``) with the default 20-100-100-1 network, four chains, float32, one
thread, at ``n`` = 10000, 30000 and 100000 rows:

* the time of one batched gradient of the four chains on the full data
  (the floor of a leapfrog step), and of one csMALA step at ``rho = 10000 /
  n`` for comparison;
* the projected time of a default fit (the warm-up and sampling
  transitions of HMC at the estimator's current defaults, recorded in the
  JSON; leapfrog steps per transition from a short warm-up at n = 10000,
  reused at larger n as a lower bound);
* csMALA's per-example term at the Bayesian temperature, i.e. why batches
  are not a valid default there.

This part measures full-data HMC (``sampler="hmc"``) on the target of the
defaults until 2026-11-27, the fixed prior at the plug-in temperature
(``prior="fixed", temperature="plug-in"``), pre-trained by at most 1000
Adam steps (``pretrain_iter=1000``, the cap then); the defaults now
(``prior="auto"``, ``temperature="auto"``) give ARD and a learned noise.

Run ``python -m benchmarks run large_n`` (about ten minutes on one core);
``--quick`` measures a short fit at n = 500 only.

The second part fits, on the same data with 10^4 rows held out, what a user
would run at ``n`` = 10^3, 10^4 and 10^5 rows (``--sizes`` for others,
e.g. ``--sizes 1000 10000 100000 1000000``): ``GibbsMLPRegressor`` at its
defaults (``sampler="auto"``: exact HMC where rows x weights <= 5e7,
SGHMC beyond), ``sampler="vi"``, five scikit-learn ``MLPRegressor((100,
100), early_stopping=True)`` with different seeds (a Gaussian mixture of
their predictions with the variance of the held-out residuals of their
early-stopping split, as in ``bench_uq``), and ``HistGradientBoostingRegressor``
with the standard deviation of its residuals on a held-out fifth of the
training data; NGBoost where it is installed. Per fit: the time, the passes
over the data per chain (skgibbs), the mean Gaussian test log-likelihood,
the RMSE and the coverage of the central 90% predictive interval, and the
number of ``SamplerWarning``. A figure shows time and log-likelihood against
``n``. ``--no-fits`` runs the cost part alone; ``--no-cost`` the fits alone.
"""

import math
import time

import torch
from sklearn.datasets import make_friedman1

from skgibbs import GibbsMLPRegressor
from skgibbs.potential import Batch
from skgibbs.problem import build_problem
from skgibbs.samplers import HMC, run_chains

from .. import Benchmark, Output
from ..common.environment import load_after
from ..common.large_data import FITS, METHODS, report_fits, run_fits
from ..common.writer import Page

NAME = "large_n"
K = 4


def default_transitions():
    """Warm-up and sampling transitions of a default fit under HMC, the sampler on the full data of the fixed
    prior and plug-in temperature (the defaults until 2026-11-27) that :func:`_measure` projects."""
    est = GibbsMLPRegressor()
    warmup = HMC.default_burn_in if est.burn_in == "auto" else est.burn_in
    thin = HMC.default_thin if est.thin == "auto" else est.thin
    draws = HMC.default_n_samples if est.n_samples == "auto" else est.n_samples
    return warmup, draws * thin


def _data(n, seed=0):
    return make_friedman1(n_samples=n, n_features=20, noise=1.0, random_state=seed)


def _timed(fn, repeat):
    fn()
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat


def _measure(n, warmup_transitions, steps_per_transition=None, pretrain_iter=1000):
    X, y = _data(n)
    # what a default fit did before it sampled (until 2026-11-27: HMC on the fixed prior at the plug-in
    # temperature): standardize, pre-train the four starts (Adam with early stopping on a held-out fifth)
    # and set temperature = 2 * held-out MSE
    est = GibbsMLPRegressor((100, 100), n_chains=K, pretrain_iter=pretrain_iter, sampler="hmc",
                            prior="fixed", temperature="plug-in", random_state=0)  # fmt: skip
    start = time.perf_counter()
    problem = build_problem(est, X, y)
    pretrain_s = time.perf_counter() - start
    spec, Xt, yt, theta, target = problem.spec, problem.X, problem.y, problem.theta0, problem.target
    pot = problem.potential
    gen = torch.Generator().manual_seed(0)
    grad_s = _timed(lambda: target.value_and_grad(theta), 3)
    rho = min(1.0, 10000 / n)
    m = int(rho * n)
    idx = torch.stack([torch.randperm(n, generator=gen)[:m] for _ in range(K)])
    batch_s = _timed(lambda: pot.loss_sum_and_grad(theta, Batch(idx, None, None)), 3)
    temperature = problem.temperature
    lam = target.lambda_
    measured = steps_per_transition is None
    short_s, step_size = None, None
    if measured:  # a short warm-up; at larger n its count is reused (a lower bound)
        start = time.perf_counter()
        res = run_chains(target, theta, [1, 2, 3, 4], HMC(), n_samples=2, burn_in=warmup_transitions)
        short_s = time.perf_counter() - start
        steps_per_transition = float(res.n_grad.mean()) / (warmup_transitions + 2)
        step_size = res.step_size.tolist()
    with torch.no_grad():
        losses = (yt - spec.forward(theta, Xt)) ** 2
    scale = float((lam * (2 - rho) / n * losses).mean())  # csMALA's lambda' l_i / n at zeta = 1
    warmup, sampling = default_transitions()
    projected = pretrain_s + (warmup + sampling) * steps_per_transition * grad_s
    return {
        "n": n,
        "pretrain_s": pretrain_s,
        "grad_4chains_s": grad_s,
        "csmala_step_4chains_s": batch_s,
        "rho_auto_old": rho,
        "temperature": temperature,
        "step_size": step_size,
        "leapfrog_per_transition": steps_per_transition,
        "leapfrog_measured": measured,
        "short_warmup_s": short_s,
        "projected_default_fit_s": projected,
        "warmup_transitions": warmup,
        "sampling_transitions": sampling,
        "surrogate_scale": scale,
    }


#: training rows of the HMC cost projection (warm-up measured at the first), warm-up transitions measured
#: and the pre-training's steps (the fits against n take theirs from large_data.FIT_SIZES)
SIZES = {
    "full": {"rows": [10000, 30000, 100000], "warmup_transitions": 10, "pretrain_iter": 1000},
    "quick": {"rows": [500], "warmup_transitions": 2, "pretrain_iter": 20},
}


def run(args):
    """The HMC cost projection (largest sizes from the leapfrog count at the smallest), then the fits."""
    out = {}
    if not args.no_cost:
        sizes, pretrain_iter = args.size.rows, args.size.pretrain_iter
        rows = [_measure(sizes[0], args.size.warmup_transitions, pretrain_iter=pretrain_iter)]
        rows += [_measure(n, 0, rows[0]["leapfrog_per_transition"], pretrain_iter) for n in sizes[1:]]
        out[NAME] = {"rows": rows, "threads": 1}
    if not args.no_fits:
        out[FITS] = run_fits(args)
    return out


def add_arguments(parser):
    parser.add_argument("--sizes", type=int, nargs="+", default=None, help="training rows of the fits")
    parser.add_argument("--no-fits", action="store_true", help="only the HMC cost projection")
    parser.add_argument("--no-cost", action="store_true", help="only the fits")
    parser.add_argument("--methods", nargs="+", default=None, help=f"a subset of {METHODS}")


def _transitions_of(row):
    """The (warm-up, sampling) transitions a stored row projected; the total alone for older runs.

    Runs before the counts were recorded hold only the projection, from
    which the total follows: (projected - pre-training) / (leapfrog steps x
    gradient time).
    """
    if "warmup_transitions" in row:
        return row["warmup_transitions"], row["sampling_transitions"]
    per_transition = row["leapfrog_per_transition"] * row["grad_4chains_s"]
    return round((row["projected_default_fit_s"] - row["pretrain_s"]) / per_transition), None


def report(results):
    """The cost table and why batches are no default at large n."""
    result = results[NAME]
    rows = result["rows"]
    header = [
        "n",
        "pre-training s",
        "full gradient, 4 chains (s)",
        "csMALA step, rho = 10000/n (s)",
        "leapfrog / transition",
        "projected default fit",
        "lambda' l_i / n",
    ]
    table = [
        [
            r["n"],
            f"{r['pretrain_s']:.1f}",
            f"{r['grad_4chains_s']:.3f}",
            f"{r['csmala_step_4chains_s']:.3f}",
            f"{r['leapfrog_per_transition']:.1f}" + ("" if r["leapfrog_measured"] else " (from 10000)"),
            f"{r['projected_default_fit_s'] / 60:.0f} min",
            f"{r['surrogate_scale']:.2f}",
        ]
        for r in rows
    ]
    first, sampling = _transitions_of(rows[0])
    if sampling is None:
        total = first
        stored = f"{total} HMC transitions (warm-up and draws; this run recorded only the total)"
    else:
        total = first + sampling
        stored = f"{total} HMC transitions ({first} warm-up, {sampling} draws)"
    warmup_now, sampling_now = default_transitions()
    notes = [
        "Friedman #1 (20 inputs, noise 1), 20-100-100-1 ReLU network, four chains batched, float32, one "
        f"thread; load average during the run {load_after(result, lambda r: r['load_average'][0]):.1f}. The "
        "projected fit is "
        f"pre-training plus {stored} at the measured leapfrog steps "
        "per transition of a short warm-up (10 transitions at n = 10000; the larger n reuse that count, a "
        "lower bound since the step size shrinks as n grows), each step one full-data gradient of the "
        "four chains.",
        "The last column is csMALA's per-example term at the pre-trained starts and the Bayesian "
        "temperature, lambda (2 - rho) l_i / n: it does not fall with n and stays far above the 0.1 at "
        "which the surrogate approaches the Gibbs posterior, so batches are no valid default at large n; "
        "full-data HMC is exact but its cost grows at least linearly in n.",
    ]
    if total != warmup_now + sampling_now:
        notes.append(
            f"This run used the defaults of its time: a default fit now runs {warmup_now + sampling_now} "
            f"transitions ({warmup_now} warm-up, {sampling_now} draws), so the projected times above are "
            "those of the older settings; python -m benchmarks run large_n measures them again."
        )
    if not math.isfinite(rows[-1]["projected_default_fit_s"]):
        notes.append("The projection failed.")
    return [Page(NAME, "Default fits at large n", [("Cost at large n", header, table)], notes)]


def report_all(results):
    pages = report(results) if NAME in results else []
    if FITS in results:
        pages += report_fits(results[FITS])
    return pages


BENCHMARK = Benchmark(
    name=NAME,
    kind="performance",
    title="Default fits at large n",
    outputs=(Output(NAME, "Default fits at large n"), Output(FITS, "Fits against n")),
    run=run,
    report=report_all,
    add_arguments=add_arguments,
    sizes=SIZES,
)
