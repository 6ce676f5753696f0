"""What a default fit costs at large n: full-data HMC against the batch kernels.

At the Bayesian temperature the per-example term of the batch potential, ``lambda' l_i / n``, is about 1/2
whatever ``n`` is, so csMALA's surrogate is far from the Gibbs posterior at every ``n``; full-data HMC is
exact at one full-data gradient per leapfrog step. On Friedman #1 (20 inputs, ``noise=1``) at ``n`` = 10^4,
3 * 10^4 and 10^5 rows, 20-100-100-1 network, four chains, float32, one thread, under ``sampler="hmc"``,
``prior="fixed"``, ``temperature="plug-in"`` (the target these rows were measured on): the time of a
full-data gradient and of a csMALA step at ``rho = 10000 / n``, a default fit's time projected from the
leapfrog steps per transition of a short warm-up at the smallest ``n``, and csMALA's per-example term.
The second part, the fits against n, is ``benchmarks/common/large_data.py``.

Run ``python -m benchmarks run large_n`` (``--no-fits``: the cost part alone; ``--no-cost``: the fits).
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
#: training rows of the HMC cost projection (warm-up measured at the first), warm-up transitions measured
#: and the pre-training's steps (the fits against n take theirs from large_data.FIT_SIZES)
SIZES = {
    "full": {"rows": [10000, 30000, 100000], "warmup_transitions": 10, "pretrain_iter": 1000},
    "quick": {"rows": [500], "warmup_transitions": 2, "pretrain_iter": 20},
}
#: the cost table: header and cell of each column (``minutes``: the projection's; ``reused``: the leapfrog
#: count taken from the smallest n)
COLUMNS = (
    ("n", "{n}"),
    ("pre-training s", "{pretrain_s:.1f}"),
    ("full gradient, 4 chains (s)", "{grad_4chains_s:.3f}"),
    ("csMALA step, rho = 10000/n (s)", "{csmala_step_4chains_s:.3f}"),
    ("leapfrog / transition", "{leapfrog_per_transition:.1f}{reused}"),
    ("projected default fit", "{minutes:.0f} min"),
    ("lambda' l_i / n", "{surrogate_scale:.2f}"),
)


def default_transitions():
    """Warm-up and sampling transitions of a default fit under HMC (what :func:`_measure` projects)."""
    est = GibbsMLPRegressor()
    warmup = HMC.default_burn_in if est.burn_in == "auto" else est.burn_in
    thin = HMC.default_thin if est.thin == "auto" else est.thin
    draws = HMC.default_n_samples if est.n_samples == "auto" else est.n_samples
    return warmup, draws * thin


def _timed(fn, repeat):
    fn()
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat


def _measure(n, warmup_transitions, steps_per_transition=None, pretrain_iter=1000):
    X, y = make_friedman1(n_samples=n, n_features=20, noise=1.0, random_state=0)
    # what the fit does before it samples: standardize, pre-train the four starts (Adam with early stopping
    # on a held-out fifth) and set temperature = 2 * held-out MSE
    est = GibbsMLPRegressor((100, 100), n_chains=K, pretrain_iter=pretrain_iter, sampler="hmc",
                            prior="fixed", temperature="plug-in", random_state=0)  # fmt: skip
    start = time.perf_counter()
    problem = build_problem(est, X, y)
    pretrain_s = time.perf_counter() - start
    target, theta = problem.target, problem.theta0
    lam, temperature = target.lambda_, problem.temperature
    gen = torch.Generator().manual_seed(0)
    grad_s = _timed(lambda: target.value_and_grad(theta), 3)
    rho = min(1.0, 10000 / n)
    idx = torch.stack([torch.randperm(n, generator=gen)[: int(rho * n)] for _ in range(K)])
    batch_s = _timed(lambda: problem.potential.loss_sum_and_grad(theta, Batch(idx, None, None)), 3)
    measured = steps_per_transition is None
    short_s, step_size = None, None
    if measured:  # a short warm-up; at larger n its count is reused (a lower bound)
        start = time.perf_counter()
        res = run_chains(target, theta, [1, 2, 3, 4], HMC(), n_samples=2, burn_in=warmup_transitions)
        short_s = time.perf_counter() - start
        steps_per_transition = float(res.n_grad.mean()) / (warmup_transitions + 2)
        step_size = res.step_size.tolist()
    with torch.no_grad():
        losses = (problem.y - problem.spec.forward(theta, problem.X)) ** 2
    warmup, sampling = default_transitions()
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
        "projected_default_fit_s": pretrain_s + (warmup + sampling) * steps_per_transition * grad_s,
        "warmup_transitions": warmup,
        "sampling_transitions": sampling,
        # csMALA's lambda' l_i / n at zeta = 1
        "surrogate_scale": float((lam * (2 - rho) / n * losses).mean()),
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


def report(results):
    """The cost table and why batches are no default at large n."""
    result = results[NAME]
    rows = result["rows"]
    table = []
    for r in rows:
        reused = "" if r["leapfrog_measured"] else " (from 10000)"
        minutes = r["projected_default_fit_s"] / 60
        table.append([cell.format(**r, minutes=minutes, reused=reused) for _, cell in COLUMNS])
    first = rows[0]
    if "warmup_transitions" in first:
        warmup, sampling = first["warmup_transitions"], first["sampling_transitions"]
        total = warmup + sampling
        stored = f"{total} HMC transitions ({warmup} warm-up, {sampling} draws)"
    else:  # an older run recorded the projection alone: (projected - pre-training) / (steps x gradient time)
        per_transition = first["leapfrog_per_transition"] * first["grad_4chains_s"]
        total = round((first["projected_default_fit_s"] - first["pretrain_s"]) / per_transition)
        stored = f"{total} HMC transitions (warm-up and draws; this run recorded only the total)"
    warmup_now, sampling_now = default_transitions()
    notes = [
        "Friedman #1 (20 inputs, noise 1), 20-100-100-1 ReLU network, four chains batched, float32, one "
        f"thread; load average during the run {load_after(result, lambda r: r['load_average'][0]):.1f}. The "
        f"projected fit is pre-training plus {stored} at the measured leapfrog steps "
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
    tables = [("Cost at large n", [header for header, _ in COLUMNS], table)]
    return [Page(NAME, "Default fits at large n", tables, notes)]


def report_all(results):
    pages = report(results) if NAME in results else []
    return pages + (report_fits(results[FITS]) if FITS in results else [])


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
