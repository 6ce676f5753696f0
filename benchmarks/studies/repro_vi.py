"""Reproduce the tempering experiments of paper 002 (App. E.1, E.2, §5 Figs. 1, 3) with ``sampler="vi"``.

Paper 002 fits mean-field Gaussian variational posteriors to one-hidden-layer
networks and argues that the KL term of the ELBO must be cooled by
``eta = tau p / N`` (``p`` training examples, ``N`` neurons): without it the
KL term dominates as ``N`` grows and ``q`` collapses onto the prior
(Prop. 1). The paper shows figures only; the tables below put our numbers
next to what its figures show, in words. Four parts, chosen by ``--parts``:

``e1`` (App. E.1, Fig. 4): ``x ~ U[-1, 1]``, ``y = x^3 + eps``,
``eps ~ N(0, 0.001)`` (variance), ``n = 500`` examples, a fresh data set per
seed. ``GibbsMLPRegressor(sampler=MeanFieldVI(parametrization="mean-field"),
hidden_layer_sizes=(N,))`` for ``N`` in {10, 20, 100, 200, 1000, 2000,
10000} with (a) ``MeanFieldVI(kl_weight=1.0)`` (the classical ELBO) and (b)
``kl_weight="auto"``, ``eta = tau n / N`` with ``tau = 1`` (the paper's form
with its constant set to one), 3 seeds each. The likelihood is the correctly
specified Gaussian one, ``temperature = 2 * 0.001 / Var(y)`` on the
standardized scale (the same for every ``N``, where the default ``"auto"``
would follow each pre-trained network). The prior is the estimator's
``prior_std="auto"``: ``N(0, 1)`` on the hidden weights and biases (one
input) and on the unscaled output weights ``a_j``, ``N(0, 1/N)`` on the
output bias, so the prior variance of ``f(x)`` shrinks as ``1/N``. Reported:
the expected predictive standard deviation ``E_x sd_q f(x)`` over 200 points
of ``[-1, 1]`` (200 draws of ``q``: ``n_chains=2, n_samples=100``, from
``predict_samples``, scale of ``y``), its ratio (as variances) to the
prior's (400 prior draws), ``KL(q || P0)`` (``kl_``), the RMSE of the
predictive mean to ``x^3`` on the same points, and the fit time. The
estimator starts ``q``'s means at its pre-trained network (pre-trained in
the mean-field coordinates, so the ``a_j`` start at the prior's order); a
second pair of rows ("prior-draw start") runs the same objective through
``skgibbs.samplers.vi.fit`` from a draw of the prior without pre-training,
to show how much the starting point matters. To keep the part near 12
minutes on one core the Adam steps are capped at ``max_iter=3000`` (10000
neurons: 1000, where a step costs about 30 ms) instead of the default 5000.
Early stopping ends the fits of up to 2000 neurons before the cap (after
1500 to 3000 steps); the 10000-neuron fits reach theirs and are not quite
converged.

``e2`` (App. E.2, Figs. 5-6, no training): the ratio
``|E_q sum_i log L_i| / (eta KL(q || P0))`` of the two ELBO terms as ``N``
grows, for ``eta = 1`` and ``eta = tau p / N`` with ``tau`` in {0.1, 1, 10}.
One hidden ReLU layer with the output scaled by ``1/N`` (paper (3)); every
unscaled weight and bias has the prior ``N(0, 1/5)`` (the output bias is not
divided by ``N``); ``q`` has means drawn from ``N(0, 0.01^2)`` and
``sigma = 1e-3``. Diabetes stands in for Boston (standardized ``X`` and
``y``, ``log L_i = -(y_i - f(x_i))^2``, temperature 1), digits for MNIST
(standardized ``X``, 10 outputs, cross-entropy); all examples are used
(``p`` = 442 and 1797). The data term is estimated from four draws of ``q``
(``vi.expected_loss_sample`` with weight draws), the KL term is exact;
three seeds of the means.

``fig1`` (§5 Fig. 1 analogue): digits, a stratified 75/25 split with
``random_state=s`` for seed ``s`` in 0..4, and
``GibbsMLPClassifier(sampler=MeanFieldVI(kl_weight="auto", tau=tau),
hidden_layer_sizes=(100, 100), n_chains=2, n_samples=25, random_state=s)`` (50
draws of ``q``, the paper's ``m = 50``) for ``tau`` in {1e-3, 3e-3, 1e-2,
3e-2, 0.1, 0.3, 1} and, below it, {1e-4, 3e-4} (the digits optimum sat at the
lower end of the first grid), plus ``MeanFieldVI(kl_weight=1.0)`` (the classical ELBO,
the paper's red line). Test accuracy, NLL (``log_loss`` of ``predict_proba``), ECE
(15 equal bins), mean confidence and fit time, mean ± standard error over
the seeds. The same grid for ``GibbsMLPRegressor(sampler="vi")`` (its
defaults otherwise: two layers of 100, 700 draws, the plug-in temperature,
``temperature="plug-in"``, the default ``"auto"`` of the stored fits)
on diabetes over 5 random 90/10 splits: the test log-likelihood of the
posterior predictive mixture ``mean_i log mean_s N(y_i; f_s(x_i),
noise_variance_)``, the RMSE of ``predict`` and the coverage of
``predict_interval(X, 0.9)``. Both use MeanFieldVI's default parametrization
("standard": with ``kl_weight="auto"`` only the hidden layers' KL is cooled,
App. D).

``fig3`` (§5 Fig. 3 analogue): the classical ELBO (``MeanFieldVI(kl_weight=1.0)``) on
digits (splits as ``fig1``, seeds 0..2) with one hidden layer of ``N`` in
{16, 32, ..., 2048} neurons, 50 draws, the estimator's defaults otherwise
(at most ``max_iter=5000`` Adam steps, early stopping); test NLL and accuracy against ``N``.

Every estimator here has the paper's fixed Gaussian prior,
``prior="fixed"``, the default until 2026-11-27 (``"auto"`` is ARD under
VI since). Everything runs on one core (one torch thread, BLAS limited to
one thread).
The full run took about 30 minutes on a shared two-core machine (``e1``
12, ``e2`` under 1, ``fig1`` 10, ``fig3`` 8); ``--quick`` is a smoke run on
small grids and one seed that writes to a temporary directory, never to
``benchmarks/results``.

Usage::

    python -m benchmarks run vi                   # all parts, writes results/vi_{e1,e2,fig1,fig3}.*
    python -m benchmarks run vi --parts e2 fig3   # some parts
    python -m benchmarks run vi --quick           # smoke run
"""

import shutil
import time
from pathlib import Path

import numpy as np
import torch
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import train_test_split

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor
from skgibbs.metrics import expected_calibration_error
from skgibbs.model import MLPSpec
from skgibbs.problem import build_problem
from skgibbs.samplers import MeanFieldVI, vi

from .. import Benchmark, Output
from ..common import data
from ..common.stats import fmt_values, mean_se, timed_fit
from ..common.tables import names
from ..common.writer import RESULTS, Page


def load_diabetes(return_X_y=True):
    return data.load("diabetes")[:2]


def load_digits(return_X_y=True):
    return data.load("digits")[:2]

PARTS = ("e1", "e2", "fig1", "fig3")
DOC_STATIC = Path(__file__).resolve().parents[2] / "doc" / "_static"

E1_WIDTHS = (10, 20, 100, 200, 1000, 2000, 10000)
E1_N, E1_NOISE_VAR, E1_TAU, E1_GRID, E1_SEEDS = 500, 1e-3, 1.0, 200, 3
E1_MAX_ITER, E1_MAX_ITER_WIDE, E1_WIDE = 3000, 1000, 5000  # cap for N >= E1_WIDE: E1_MAX_ITER_WIDE
E1_DRAWS, E1_PRIOR_DRAWS = (2, 100), 400  # (n_chains, n_samples) of q; draws of the prior

E2_WIDTHS = (10, 30, 100, 300, 1000, 3000, 10000)
E2_TAUS = (0.1, 1.0, 10.0)
E2_PRIOR_VAR, E2_MU_SD, E2_SIGMA, E2_MC, E2_SEEDS = 0.2, 1e-2, 1e-3, 4, 3

FIG1_TAUS = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0)
FIG1_SEEDS, FIG1_DRAWS = 5, (2, 25)  # (n_chains, n_samples): m = 50 draws
FIG3_WIDTHS = (16, 32, 64, 128, 256, 512, 1024, 2048)
FIG3_SEEDS = 3

QUICK_FIT = {"sampler__max_iter": 50, "pretrain_iter": 20}  # set_params of the quick fits


# ------------------------------------------------------------------ helpers
def slope(xs, ys):
    """Least-squares slope of ``log y`` against ``log x``."""
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def fit_timed(est, X, y):
    """Fit; return the fit seconds and the distinct warning messages raised (their first 120 characters)."""
    fit = timed_fit(est, X, y)
    return fit.seconds, sorted({m[:120] for m in fit.messages()})


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def vi_estimator(cls, *args, vi_params=None, quick=False, **params):
    """``cls(*args, sampler=MeanFieldVI(**vi_params), prior="fixed", **params)``, then :data:`QUICK_FIT` if
    ``quick``: paper 002's fixed Gaussian prior (``prior="auto"`` is ARD under VI since 2026-11-27)."""
    est = cls(*args, sampler=MeanFieldVI(**(vi_params or {})), **{"prior": "fixed", **params})
    return est.set_params(**QUICK_FIT) if quick else est


def estimator_prior(est, X, y):
    """Network and prior standard deviations (one per parameter) that ``est`` samples under on ``(X, y)``.

    Read off the posterior problem of a copy of ``est`` (without its
    pre-training, on which the prior does not depend).
    """
    problem = build_problem(clone(est).set_params(pretrain_iter=0), X, y)
    std = torch.as_tensor(problem.prior.std, dtype=torch.float32).expand(problem.spec.n_params).clone()
    return problem.spec, std


def mean_field_prior(N, X, y):
    """Network, prior standard deviations and output scale of the mean-field estimator with ``N`` neurons.

    Read off ``GibbsMLPRegressor(sampler=MeanFieldVI(parametrization="mean-field"))``
    itself, so the low-level fits of part ``e1`` use exactly the estimator's
    prior and coordinates.
    """
    sampler = MeanFieldVI(parametrization="mean-field")
    spec, std = estimator_prior(GibbsMLPRegressor((N,), sampler=sampler, prior="fixed"), X, y)
    return spec, std, sampler.output_scale(spec)


def forward_draws(spec, theta, Xs, chunk=20):
    """Network outputs ``(S, n)`` of the draws ``theta`` ``(S, Q)``, ``chunk`` draws at a time (memory)."""
    Xs = torch.as_tensor(Xs, dtype=torch.float32)
    with torch.no_grad():
        parts = [spec.forward(theta[i : i + chunk], Xs) for i in range(0, theta.shape[0], chunk)]
    return torch.cat(parts).double().numpy()


def prior_output_variance(spec, std, Xs, draws, generator):
    """``mean_x Var_P0 f(x)`` on the standardized inputs ``Xs`` by ``draws`` draws of the prior."""
    theta = vi.sample(torch.zeros(spec.n_params), std, draws, generator)
    return float(forward_draws(spec, theta, Xs).var(0).mean())


# ------------------------------------------------------------------ part e1
def e1_data(seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, E1_N)
    return x[:, None], x**3 + rng.normal(0.0, np.sqrt(E1_NOISE_VAR), E1_N)


def e1_summary(F, grid, kl, n_params, prior_var):
    """Predictive spread (scale of y), RMSE to x^3 and KL of one fit; ``F`` is (200, S)."""
    var = F.var(1)
    return dict(
        sd=float(np.sqrt(var).mean()),
        var_ratio=float(var.mean() / prior_var),
        prior_sd=float(np.sqrt(prior_var)),
        rmse=float(np.sqrt(np.mean((F.mean(1) - grid[:, 0] ** 3) ** 2))),
        kl=float(kl),
        kl_per_param=float(kl) / n_params,
    )


def e1_estimator(N, eta_label, seed, quick):
    X, y = e1_data(seed)
    grid = np.linspace(-1.0, 1.0, E1_GRID)[:, None]
    temperature = 2.0 * E1_NOISE_VAR / y.var()
    max_iter = E1_MAX_ITER if N < E1_WIDE else E1_MAX_ITER_WIDE
    est = vi_estimator(
        GibbsMLPRegressor,
        (N,),
        vi_params={
            "parametrization": "mean-field",
            "kl_weight": 1.0 if eta_label == "1" else "auto",
            "tau": E1_TAU,
            "max_iter": max_iter,
        },
        quick=quick,
        temperature=temperature,
        n_chains=E1_DRAWS[0],
        n_samples=E1_DRAWS[1],
        random_state=seed,
    )
    seconds, messages = fit_timed(est, X, y)
    _, std = estimator_prior(est, X, y)
    Xs = (grid - est.x_mean_) / est.x_scale_
    gen = torch.Generator().manual_seed(10_000 + seed)
    prior_var = prior_output_variance(est.spec_, std, Xs, E1_PRIOR_DRAWS, gen) * est.y_scale_**2
    out = e1_summary(est.predict_samples(grid), grid, est.kl_, est.spec_.n_params, prior_var)
    out.update(
        start="estimator",
        eta=float(est.kl_weight_),
        n_iter=int(est.n_iter_),
        stopped_early=bool(est.vi_stopped_early_),
        temperature=float(est.temperature_),
        fit_s=seconds,
        warnings=messages,
    )
    return out


def e1_prior_start(N, eta_label, seed, quick):
    """The estimator's objective through ``vi.fit``, ``q``'s means started at a draw of the prior."""
    X, y = e1_data(seed)
    grid = np.linspace(-1.0, 1.0, E1_GRID)[:, None]
    x_mean, x_scale, y_mean, y_scale = X.mean(0), X.std(0), y.mean(), y.std()
    Xt = torch.as_tensor((X - x_mean) / x_scale, dtype=torch.float32)
    yt = torch.as_tensor((y - y_mean) / y_scale, dtype=torch.float32)
    spec, std, scale = mean_field_prior(N, X, y)
    temperature = 2.0 * E1_NOISE_VAR / y.var()
    eta = 1.0 if eta_label == "1" else E1_TAU * E1_N / N
    max_iter = E1_MAX_ITER if N < E1_WIDE else E1_MAX_ITER_WIDE
    config = vi.VIConfig(
        lam=E1_N / temperature,
        eta=eta,
        n_iter=QUICK_FIT["sampler__max_iter"] if quick else max_iter,
        learning_rate=1e-2,
        batch_size=128,
    )
    gen = torch.Generator().manual_seed(seed)
    start = time.perf_counter()
    with torch.no_grad():
        mu0 = std * torch.randn(spec.n_params, generator=gen)
    res = vi.fit(spec, Xt, yt, mu0, std, config, gen, loss="squared", scale=scale)
    seconds = time.perf_counter() - start
    Xs = (grid - x_mean) / x_scale
    theta = vi.sample(res.mean, res.std, E1_DRAWS[0] * E1_DRAWS[1], gen)
    F = forward_draws(spec, theta, Xs).T * y_scale + y_mean
    prior_var = prior_output_variance(spec, std, Xs, E1_PRIOR_DRAWS, gen) * y_scale**2
    out = e1_summary(F, grid, res.kl, spec.n_params, prior_var)
    out.update(
        start="prior draw",
        eta=float(eta),
        n_iter=int(res.n_iter),
        stopped_early=bool(res.stopped_early),
        temperature=float(temperature),
        fit_s=seconds,
        warnings=[],
    )
    return out


E1_VARIANTS = {  # key: (label, runner, eta label)
    "est_1": ("estimator, eta = 1", e1_estimator, "1"),
    "est_auto": ("estimator, eta = tau n / N", e1_estimator, "auto"),
    "pd_1": ("prior-draw start, eta = 1", e1_prior_start, "1"),
    "pd_auto": ("prior-draw start, eta = tau n / N", e1_prior_start, "auto"),
}


def run_e1(args):
    widths = [10, 100] if args.quick else list(E1_WIDTHS)
    seeds = range(args.seeds or (1 if args.quick else E1_SEEDS))
    runs = []
    start = time.perf_counter()
    for N in widths:
        for key, (label, runner, eta_label) in E1_VARIANTS.items():
            for seed in seeds:
                r = runner(N, eta_label, seed, args.quick)
                r.update(variant=key, N=N, seed=seed)
                runs.append(r)
                print(
                    f"e1 N={N} {label} seed {seed}: sd {r['sd']:.4f} (prior {r['prior_sd']:.4f}), "
                    f"KL {r['kl']:.3g}, RMSE {r['rmse']:.4f}, {r['n_iter']} steps, {r['fit_s']:.0f} s",
                    flush=True,
                )
    runtime = time.perf_counter() - start

    def pick(key, N, field):
        return [r[field] for r in runs if r["variant"] == key and r["N"] == N]

    header = [
        "variant",
        "N",
        "eta",
        "E_x sd_q f (1e-2)",
        "prior sd (1e-2)",
        "Var_q f / Var_P0 f",
        "KL(q||P0)",
        "KL per param",
        "RMSE to x^3 (1e-2)",
        "Adam steps",
        "fit s",
    ]
    rows, slopes = [], {}
    for key, (label, _, _) in E1_VARIANTS.items():
        for N in widths:
            rows.append(
                [
                    label,
                    str(N),
                    f"{np.mean(pick(key, N, 'eta')):.3g}",
                    fmt_values(pick(key, N, "sd"), ".2f", 100),
                    fmt_values(pick(key, N, "prior_sd"), ".2f", 100),
                    fmt_values(pick(key, N, "var_ratio"), ".3g"),
                    fmt_values(pick(key, N, "kl"), ".3g"),
                    fmt_values(pick(key, N, "kl_per_param"), ".3g"),
                    fmt_values(pick(key, N, "rmse"), ".2f", 100),
                    f"{np.mean(pick(key, N, 'n_iter')):.0f}",
                    f"{np.mean(pick(key, N, 'fit_s')):.1f}",
                ]
            )
        slopes[key] = {
            field: slope(widths, [np.mean(pick(key, N, field)) for N in widths])
            for field in ("sd", "var_ratio", "kl_per_param", "rmse")
        }
    prior_slope = slope(widths, [np.mean(pick("est_auto", N, "prior_sd")) for N in widths])

    def seq(key, field, scale=1.0):
        return " → ".join(f"{np.mean(pick(key, N, field)) * scale:.3g}" for N in widths)

    slope_header = ["variant", "E_x sd_q f", "Var_q f / Var_P0 f", "KL per param", "RMSE to x^3"]
    slope_rows = [
        [label] + [f"{slopes[key][f]:+.2f}" for f in ("sd", "var_ratio", "kl_per_param", "rmse")]
        for key, (label, _, _) in E1_VARIANTS.items()
    ] + [["prior", f"{prior_slope:+.2f}", "", "", ""]]
    cmp_header = ["claim", "paper (App. E.1, Prop. 1)", f"this run, N = {' → '.join(map(str, widths))}"]
    cmp_rows = [
        [
            "eta = tau n / N: E_x sd_q f (1e-2) against N",
            "Fig. 4: no trend toward zero as N grows (N = 10 to 1e5)",
            f"estimator: {seq('est_auto', 'sd', 100)}; prior-draw start: {seq('pd_auto', 'sd', 100)}; "
            f"prior: {seq('est_auto', 'prior_sd', 100)}",
        ],
        [
            "eta = 1: KL(q || P0) per parameter against N",
            "Prop. 1: KL(q || P0) -> 0, q collapses onto the prior (not plotted)",
            f"estimator: {seq('est_1', 'kl_per_param')}; prior-draw start: {seq('pd_1', 'kl_per_param')}",
        ],
        [
            "RMSE to x^3 (1e-2) against N",
            "§2: without cooling q tends to ignore the data-fitting term as N grows (not plotted)",
            f"prior-draw start, eta = 1: {seq('pd_1', 'rmse', 100)}; eta = tau n / N: "
            f"{seq('pd_auto', 'rmse', 100)}; estimator, eta = 1: {seq('est_1', 'rmse', 100)}; "
            f"eta = tau n / N: {seq('est_auto', 'rmse', 100)}",
        ],
    ]
    capped = f"{E1_MAX_ITER} Adam steps ({E1_MAX_ITER_WIDE} for N >= {E1_WIDE})"
    notes = [
        f"x ~ U[-1, 1], y = x^3 + N(0, {E1_NOISE_VAR:g}), n = {E1_N}, one data set per seed "
        f"({len(seeds)} seeds); one hidden ReLU layer of N neurons, mean-field parametrization "
        "(f = (1/N) sum_j a_j relu(b_j x + c_j) + bias), prior_std='auto' (N(0, 1) on b_j, c_j and "
        "a_j, N(0, 1/N) on the output bias); temperature 2 * 0.001 / Var(y) (the Gaussian likelihood of "
        f"the true noise); eta = 1 or eta = tau n / N with tau = {E1_TAU:g}. "
        f"{'Quick run: ' + str(QUICK_FIT) if args.quick else 'Capped at ' + capped}; early stopping "
        "(the plateau rule) as the estimator's default. sd and RMSE on the scale of y over 200 points of "
        "[-1, 1], from 200 draws of q; the prior's variance from 400 draws of the prior. "
        f"Mean ± s.e. over seeds. Runtime {runtime:.0f} s.",
        "Rows 'estimator': GibbsMLPRegressor(sampler=MeanFieldVI(parametrization='mean-field')), q's means "
        "started at its pre-trained network (Adam on the unscaled a_j, so they start at the prior's "
        "order). Rows 'prior-draw start': the same objective (prior, temperature, eta, Adam settings, "
        "early stopping, sigma started at the Laplace approximation's) through skgibbs.samplers.vi.fit "
        "from a draw of the prior without pre-training.",
        "Under a product q, Var_q f(x) = (1/N^2) sum_j Var_q(a_j relu(b_j x + c_j)) plus the output "
        "bias's variance: it falls like 1/N, as the prior's does, unless the per-neuron variances grow "
        "with N. The slope of E_x sd_q f against that of the prior sd (-1/2) says whether they do.",
    ]
    result = {
        "widths": widths,
        "runs": runs,
        "slopes": slopes,
        "prior_sd_slope": prior_slope,
        "runtime_s": runtime,
    }
    # the tables are kept with the runs: they are built from intermediate results the JSON does not hold
    result["page"] = {
        "heading": "Paper 002 App. E.1: the predictive spread of VI as the width grows",
        "tables": [
        ("Expected predictive sd, KL and fit on the x^3 toy", header, rows),
        ("Slope of log value on log N (all widths)", slope_header, slope_rows),
        ("Against the paper", cmp_header, cmp_rows),
        ],
        "notes": notes,
    }
    return {"vi_e1": result}


def plot_e1(result, path):
    plt = pyplot()
    widths, runs = result["widths"], result["runs"]
    styles = {
        "est_1": ("C3", "-", "o"),
        "est_auto": ("C0", "-", "o"),
        "pd_1": ("C3", "--", "s"),
        "pd_auto": ("C0", "--", "s"),
    }
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    panels = [
        ("sd", "E_x sd_q f(x)  (scale of y)"),
        ("kl_per_param", "KL(q || P0) per parameter"),
        ("rmse", "RMSE of the predictive mean to x^3"),
    ]
    for ax, (field, ylabel) in zip(axes, panels):
        for key, (label, _, _) in E1_VARIANTS.items():
            color, ls, marker = styles[key]
            vals = [[r[field] for r in runs if r["variant"] == key and r["N"] == N] for N in widths]
            m = [np.mean(v) for v in vals]
            se = [0.0 if np.isnan(s) else s for _, s in map(mean_se, vals)]  # no bar for one value
            ax.errorbar(widths, m, yerr=se, color=color, ls=ls, marker=marker, capsize=3, label=label)
        if field == "sd":
            prior = [
                np.mean([r["prior_sd"] for r in runs if r["variant"] == "est_auto" and r["N"] == N])
                for N in widths
            ]
            ax.plot(widths, prior, color="gray", ls=":", marker=".", label="prior")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("neurons N")
        ax.set_ylabel(ylabel)
    axes[0].legend(fontsize=8)
    fig.suptitle("x^3 toy, mean-field VI: eta = 1 (red) against eta = n / N (blue)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"figure: {path}")
    if path.parent.resolve() == RESULTS.resolve():  # the committed results are also the docs' figure
        DOC_STATIC.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, DOC_STATIC / "vi_e1.png")
        print(f"figure: {DOC_STATIC / 'vi_e1.png'}")


# ------------------------------------------------------------------ part e2
def e2_data():
    """``{name: (X, y, loss)}``: standardized diabetes and digits, as torch tensors (float64)."""
    out = {}
    X, y = load_diabetes(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    y = (y - y.mean()) / y.std()
    out["diabetes"] = (torch.as_tensor(X), torch.as_tensor(y), "squared", 1)
    X, y = load_digits(return_X_y=True)
    scale = X.std(0)
    X = (X - X.mean(0)) / np.where(scale > 0, scale, 1.0)
    out["digits"] = (torch.as_tensor(X), torch.as_tensor(y), "cross_entropy", 10)
    return out


def e2_terms(X, y, loss, n_outputs, N, seed, n_mc):
    """``(|E_q sum_i log L_i|, KL(q || P0), Q)`` of the untrained ``q`` at width ``N``."""
    spec = MLPSpec(X.shape[1], (N,), "relu", n_outputs)
    Q = spec.n_params
    scale = torch.ones(Q, dtype=torch.float64)
    _, _, w, _ = spec.output_layer()
    scale[w] = 1.0 / N  # theta_out = a / N, paper (3)
    gen = torch.Generator().manual_seed(seed)
    mu = E2_MU_SD * torch.randn(Q, generator=gen, dtype=torch.float64)
    sigma = torch.full((Q,), E2_SIGMA, dtype=torch.float64)
    kl = float(vi.kl_divergence(mu, sigma, E2_PRIOR_VAR**0.5).sum())
    with torch.no_grad():
        data = np.mean(
            [
                float(
                    vi.expected_loss_sample(spec, loss, scale * mu, scale * sigma, X, y, gen, 1, local=False)
                )
                for _ in range(n_mc)
            ]
        )
    return data, kl, Q  # temperature 1: |E_q sum log L_i| = E_q sum l_i


def run_e2(args):
    widths = [10, 100] if args.quick else list(E2_WIDTHS)
    seeds = range(args.seeds or (1 if args.quick else E2_SEEDS))
    n_mc = 2 if args.quick else E2_MC
    data = e2_data()
    runs = []
    start = time.perf_counter()
    for name, (X, y, loss, n_outputs) in data.items():
        p = X.shape[0]
        for N in widths:
            for seed in seeds:
                t0 = time.perf_counter()
                term, kl, Q = e2_terms(X, y, loss, n_outputs, N, seed, n_mc)
                ratios = {"eta=1": term / kl}
                ratios.update({f"tau={tau:g}": term / (tau * p / N * kl) for tau in E2_TAUS})
                runs.append(
                    dict(dataset=name, N=N, seed=seed, p=p, Q=Q, data_term=term, kl=kl, ratios=ratios)
                )
                print(
                    f"e2 {name} N={N} seed {seed}: data {term:.4g}, KL {kl:.4g}, ratio(eta=1) "
                    f"{ratios['eta=1']:.3g} ({time.perf_counter() - t0:.1f} s)",
                    flush=True,
                )
    runtime = time.perf_counter() - start
    etas = ["eta=1"] + [f"tau={tau:g}" for tau in E2_TAUS]
    header = ["data set", "N", "Q", "abs(E_q sum log L_i)", "KL(q||P0)"] + [
        "ratio, eta = 1" if e == "eta=1" else f"ratio, eta = {e.split('=')[1]} p/N" for e in etas
    ]
    rows, slopes = [], {}
    for name in data:
        for N in widths:
            rs = [r for r in runs if r["dataset"] == name and r["N"] == N]
            rows.append(
                [
                    name,
                    str(N),
                    str(rs[0]["Q"]),
                    fmt_values([r["data_term"] for r in rs], ".4g"),
                    fmt_values([r["kl"] for r in rs], ".4g"),
                ]
                + [f"{np.mean([r['ratios'][e] for r in rs]):.3g}" for e in etas]
            )
        slopes[name] = {
            e: slope(
                widths,
                [
                    np.mean([r["ratios"][e] for r in runs if r["dataset"] == name and r["N"] == N])
                    for N in widths
                ],
            )
            for e in etas
        }
    cmp_header = [
        "data set",
        "paper (Figs. 5-6)",
        "slope of log ratio on log N: eta = 1",
        "eta = tau p/N (tau = 0.1 / 1 / 10)",
    ]
    cmp_rows = [
        [
            name,
            "eta = 1: one term dominates as N grows; eta = tau p/N: the ratio stays balanced",
            f"{slopes[name]['eta=1']:+.2f}",
            " / ".join(f"{slopes[name][f'tau={tau:g}']:+.2f}" for tau in E2_TAUS),
        ]
        for name in data
    ]
    notes = [
        "No training. One hidden ReLU layer of N neurons, output (1/N) sum_j a_j relu(<b_j, x> + c_j) + "
        f"bias; every unscaled weight and bias has the prior N(0, {E2_PRIOR_VAR:g}); q has means drawn from "
        f"N(0, {E2_MU_SD:g}^2) and sigma = {E2_SIGMA:g} everywhere. Diabetes (p = 442, standardized X and "
        "y, log L_i = -(y_i - f(x_i))^2, temperature 1) stands in for Boston; digits (p = 1797, "
        "standardized X, softmax cross-entropy) for MNIST. abs(E_q sum log L_i) from "
        f"{n_mc} weight draws of q, KL(q || P0) exact; ratio = abs(E_q sum log L_i) / (eta KL). Mean over "
        f"{len(seeds)} seed(s) of q's means. Runtime {runtime:.0f} s.",
        "Why: with sigma this small every coordinate of q pays about log(prior sd / sigma) - 1/2 = 5.6 "
        "nats, so KL(q || P0) grows like the number of parameters Q, about (d + 2 + C) N, while f is "
        "near 0 and the data term stays near its value there (p for diabetes, p log 10 for digits). "
        "With eta = 1 the ratio therefore falls like 1/N; eta = tau p / N makes eta KL about "
        "5.6 tau (d + 2 + C) p whatever N, so the ratio levels off at a value set by tau.",
    ]
    result = {"widths": widths, "runs": runs, "slopes": slopes, "runtime_s": runtime}
    # the tables are kept with the runs: they are built from intermediate results the JSON does not hold
    result["page"] = {
        "heading": "Paper 002 App. E.2: the two terms of the ELBO as the width grows",
        "tables": [
        ("Ratio of the ELBO terms (untrained q)", header, rows),
        ("Against the paper", cmp_header, cmp_rows),
        ],
        "notes": notes,
    }
    return {"vi_e2": result}


def plot_e2(result, path):
    plt = pyplot()
    widths, runs = result["widths"], result["runs"]
    names_ = sorted({r["dataset"] for r in runs})
    fig, axes = plt.subplots(1, len(names_), figsize=(5.5 * len(names_), 4.2))
    for ax, name in zip(np.atleast_1d(axes), names_):
        for k, e in enumerate(["eta=1"] + [f"tau={tau:g}" for tau in E2_TAUS]):
            m = [
                np.mean([r["ratios"][e] for r in runs if r["dataset"] == name and r["N"] == N])
                for N in widths
            ]
            label = "eta = 1" if e == "eta=1" else f"eta = {e.split('=')[1]} p / N"
            ax.plot(widths, m, marker="o", color="C3" if e == "eta=1" else f"C{k - 1}", label=label)
        ax.axhline(1.0, color="gray", ls=":", lw=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("neurons N")
        ax.set_ylabel("|E_q sum log L_i| / (eta KL(q || P0))")
        ax.set_title(f"{name} (untrained q)")
    np.atleast_1d(axes)[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"figure: {path}")


# ------------------------------------------------------------------ part fig1
def fig1_configs(quick):
    """``[(label, tau or None, kl_weight)]``: the tau grid with eta = tau n / N, then the classical ELBO."""
    taus = (1e-2, 1.0) if quick else FIG1_TAUS
    return [(f"{tau:g}", tau, "auto") for tau in taus] + [("eta=1", None, 1.0)]


def fig1_classifier(label, tau, kl_weight, seed, quick):
    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, stratify=y, random_state=seed)
    n_chains, n_samples = FIG1_DRAWS
    est = vi_estimator(
        GibbsMLPClassifier,
        (100, 100),
        vi_params={"kl_weight": kl_weight, **({} if tau is None else {"tau": tau})},
        quick=quick,
        n_chains=n_chains,
        n_samples=n_samples,
        random_state=seed,
    )
    seconds, messages = fit_timed(est, X_train, y_train)
    proba = est.predict_proba(X_test)
    return dict(
        config=label,
        seed=seed,
        accuracy=float(accuracy_score(y_test, est.classes_[proba.argmax(1)])),
        nll=float(log_loss(y_test, proba, labels=est.classes_)),
        ece=float(expected_calibration_error(y_test, proba, labels=est.classes_)),
        confidence=float(proba.max(1).mean()),
        eta=float(est.kl_weight_),
        kl=float(est.kl_),
        n_iter=int(est.n_iter_),
        stopped_early=bool(est.vi_stopped_early_),
        fit_s=seconds,
        warnings=messages,
    )


def fig1_regressor(label, tau, kl_weight, seed, quick):
    X, y = load_diabetes(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.1, random_state=seed)
    est = vi_estimator(
        GibbsMLPRegressor,
        vi_params={"kl_weight": kl_weight, **({} if tau is None else {"tau": tau})},
        quick=quick,
        temperature="plug-in",  # what "auto" was when the stored fits were made
        random_state=seed,
    )
    seconds, messages = fit_timed(est, X_train, y_train)
    F = est.predict_samples(X_test)  # (n_test, S)
    s2 = est.noise_variance_
    log_dens = -0.5 * np.log(2 * np.pi * s2) - (y_test[:, None] - F) ** 2 / (2 * s2)
    log_lik = logsumexp(log_dens, axis=1) - np.log(F.shape[1])
    _, pis = est.predict_interval(X_test, 0.9)
    lo, hi = pis[:, 0, 0], pis[:, 1, 0]
    return dict(
        config=label,
        seed=seed,
        log_lik=float(log_lik.mean()),
        rmse=float(np.sqrt(np.mean((est.predict(X_test) - y_test) ** 2))),
        coverage=float(np.mean((lo <= y_test) & (y_test <= hi))),
        width=float(np.mean(hi - lo)),
        eta=float(est.kl_weight_),
        kl=float(est.kl_),
        temperature=float(est.temperature_),
        n_iter=int(est.n_iter_),
        stopped_early=bool(est.vi_stopped_early_),
        fit_s=seconds,
        warnings=messages,
    )


def run_fig1(args):
    configs = fig1_configs(args.quick)
    seeds = range(args.seeds or (1 if args.quick else FIG1_SEEDS))
    runs = {"digits": [], "diabetes": []}
    start = time.perf_counter()
    for model, runner in (("digits", fig1_classifier), ("diabetes", fig1_regressor)):
        for label, tau, kl_weight in configs:
            for seed in seeds:
                r = runner(label, tau, kl_weight, seed, args.quick)
                runs[model].append(r)
                main = (
                    f"acc {r['accuracy']:.3f}, NLL {r['nll']:.3f}, ECE {r['ece']:.3f}"
                    if model == "digits"
                    else f"log-lik {r['log_lik']:.3f}, RMSE {r['rmse']:.1f}, cover {r['coverage']:.2f}"
                )
                print(
                    f"fig1 {model} tau={label} seed {seed}: {main}, eta {r['eta']:.3g}, "
                    f"{r['n_iter']} steps, {r['fit_s']:.0f} s",
                    flush=True,
                )
    runtime = time.perf_counter() - start

    def vals(model, label, field):
        return [r[field] for r in runs[model] if r["config"] == label]

    def row_label(label):
        return "eta = 1 (classical ELBO)" if label == "eta=1" else label

    c_header = [
        "tau",
        "eta (hidden layers)",
        "accuracy",
        "NLL",
        "ECE",
        "mean confidence",
        "KL(q||P0)",
        "Adam steps",
        "fit s",
    ]
    c_rows = [
        [row_label(label), f"{np.mean(vals('digits', label, 'eta')):.3g}"]
        + [fmt_values(vals("digits", label, f)) for f in ("accuracy", "nll", "ece", "confidence")]
        + [
            f"{np.mean(vals('digits', label, 'kl')):.4g}",
            f"{np.mean(vals('digits', label, 'n_iter')):.0f}",
            f"{np.mean(vals('digits', label, 'fit_s')):.1f}",
        ]
        for label, _, _ in configs
    ]
    r_header = [
        "tau",
        "eta (hidden layers)",
        "test log-lik",
        "RMSE",
        "90% coverage",
        "90% width",
        "KL(q||P0)",
        "Adam steps",
        "fit s",
    ]
    r_rows = [
        [
            row_label(label),
            f"{np.mean(vals('diabetes', label, 'eta')):.3g}",
            fmt_values(vals("diabetes", label, "log_lik")),
            fmt_values(vals("diabetes", label, "rmse"), ".2f"),
            fmt_values(vals("diabetes", label, "coverage")),
            fmt_values(vals("diabetes", label, "width"), ".1f"),
            f"{np.mean(vals('diabetes', label, 'kl')):.4g}",
            f"{np.mean(vals('diabetes', label, 'n_iter')):.0f}",
            f"{np.mean(vals('diabetes', label, 'fit_s')):.1f}",
        ]
        for label, _, _ in configs
    ]
    taus = [label for label, tau, _ in configs if tau is not None]

    def best(model, field, sign):
        means = {label: np.mean(vals(model, label, field)) for label in taus}
        return min(means, key=lambda k: sign * means[k])

    best_tau = {
        "digits_nll": best("digits", "nll", 1),
        "digits_ece": best("digits", "ece", 1),
        "digits_accuracy": best("digits", "accuracy", -1),
        "diabetes_log_lik": best("diabetes", "log_lik", -1),
        "diabetes_rmse": best("diabetes", "rmse", 1),
    }
    n_warned = sum(bool(r["warnings"]) for rs in runs.values() for r in rs)
    notes = [
        "Digits: a stratified 75/25 split with random_state = seed, "
        "GibbsMLPClassifier(sampler=MeanFieldVI(...), hidden_layer_sizes=(100, 100), n_chains=2, "
        "n_samples=25, random_state=seed) (m = 50 draws of q, as the paper), "
        "MeanFieldVI(kl_weight='auto', tau=tau) with the tau of the row (eta = tau n / 100 on the hidden "
        "layers, the output layer's KL unweighted: parametrization='standard', App. D) or "
        "MeanFieldVI(kl_weight=1.0) (last row, the paper's red line). Diabetes: 90/10 splits with "
        "random_state = seed, GibbsMLPRegressor(sampler=MeanFieldVI(...), random_state=seed) at its "
        "defaults otherwise (two layers of 100, temperature 'auto', 700 "
        "draws); test log-lik = mean_i log mean_s N(y_i; f_s(x_i), noise_variance\\_), RMSE of predict, the "
        "coverage and mean width of predict_interval(X, 0.9). "
        f"{'Quick run: ' + str(QUICK_FIT) + '. ' if args.quick else ''}Mean ± s.e. over {len(seeds)} "
        f"seed(s); {n_warned} fit(s) raised a warning (see the JSON). Runtime {runtime:.0f} s.",
        f"Best tau (mean over seeds): digits NLL {best_tau['digits_nll']}, ECE {best_tau['digits_ece']}, "
        f"accuracy {best_tau['digits_accuracy']}; diabetes log-likelihood {best_tau['diabetes_log_lik']}, "
        f"RMSE {best_tau['diabetes_rmse']}.",
        "Paper (Fig. 1, linear BNN on MNIST, described in its text): for large tau the accuracy falls and "
        "the NLL rises (q stays near the prior, underfitting) with a low ECE and low confidence; for small "
        "tau high accuracy, low NLL, high confidence and a low ECE; in between the confidence falls faster "
        "than the accuracy and the ECE rises.",
    ]
    result = {
        "configs": [c[0] for c in configs],
        "runs": runs,
        "best_tau": best_tau,
        "runtime_s": runtime,
    }
    # the tables are kept with the runs: they are built from intermediate results the JSON does not hold
    result["page"] = {
        "heading": "Paper 002 Fig. 1 analogue: VI against the cooling tau",
        "tables": [
        ("Digits: GibbsMLPClassifier(sampler='vi', (100, 100))", c_header, c_rows),
        ("Diabetes: GibbsMLPRegressor(sampler='vi')", r_header, r_rows),
        ],
        "notes": notes,
    }
    return {"vi_fig1": result}


def plot_fig1(result, path):
    plt = pyplot()
    runs, configs = result["runs"], result["configs"]
    taus = [c for c in configs if c != "eta=1"]
    x = [float(t) for t in taus]
    panels = [
        ("digits", "accuracy", "digits: accuracy"),
        ("digits", "nll", "digits: NLL"),
        ("digits", "ece", "digits: ECE"),
        ("digits", "confidence", "digits: mean confidence"),
        ("diabetes", "log_lik", "diabetes: test log-likelihood"),
        ("diabetes", "rmse", "diabetes: RMSE"),
        ("diabetes", "coverage", "diabetes: 90% coverage"),
        ("both", "fit_s", "fit seconds"),
    ]
    fig, axes = plt.subplots(2, 4, figsize=(16, 7))
    for ax, (model, field, title) in zip(axes.ravel(), panels):
        for m in ["digits", "diabetes"] if model == "both" else [model]:
            color = {"digits": "C0", "diabetes": "C2"}[m]
            stats = [mean_se([r[field] for r in runs[m] if r["config"] == t]) for t in taus]
            se = [0.0 if np.isnan(s) else s for _, s in stats]
            ax.errorbar(
                x,
                [mu for mu, _ in stats],
                yerr=se,
                marker="o",
                capsize=3,
                color=color,
                label=m if model == "both" else "eta = tau n / N",
            )
            ref, ref_se = mean_se([r[field] for r in runs[m] if r["config"] == "eta=1"])
            ax.axhline(
                ref,
                color="red",
                lw=1.2,
                ls="-" if m == "digits" else "--",
                label="eta = 1" + (f" ({m})" if model == "both" else ""),
            )
            if not np.isnan(ref_se):
                ax.axhspan(ref - ref_se, ref + ref_se, color="red", alpha=0.1)
        if field == "coverage":
            ax.axhline(0.9, color="gray", ls=":", lw=1)
        if field == "nll":
            ax.set_yscale("log")
        ax.set_xscale("log")
        ax.set_xlabel("tau")
        ax.set_title(title)
        if field in ("accuracy", "fit_s"):
            ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"figure: {path}")


# ------------------------------------------------------------------ part fig3
def fig3_fit(N, seed, quick):
    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, stratify=y, random_state=seed)
    n_chains, n_samples = FIG1_DRAWS
    est = vi_estimator(
        GibbsMLPClassifier,
        (N,),
        vi_params={"kl_weight": 1.0},
        quick=quick,
        n_chains=n_chains,
        n_samples=n_samples,
        random_state=seed,
    )
    seconds, messages = fit_timed(est, X_train, y_train)
    proba = est.predict_proba(X_test)
    return dict(
        N=N,
        seed=seed,
        n_params=int(est.spec_.n_params),
        n_over_N=est.n_train_ / N,
        accuracy=float(accuracy_score(y_test, est.classes_[proba.argmax(1)])),
        nll=float(log_loss(y_test, proba, labels=est.classes_)),
        ece=float(expected_calibration_error(y_test, proba, labels=est.classes_)),
        confidence=float(proba.max(1).mean()),
        kl=float(est.kl_),
        n_iter=int(est.n_iter_),
        stopped_early=bool(est.vi_stopped_early_),
        fit_s=seconds,
        warnings=messages,
    )


def run_fig3(args):
    widths = [8, 16] if args.quick else list(FIG3_WIDTHS)
    seeds = range(args.seeds or (1 if args.quick else FIG3_SEEDS))
    runs = []
    start = time.perf_counter()
    for N in widths:
        for seed in seeds:
            r = fig3_fit(N, seed, args.quick)
            runs.append(r)
            print(
                f"fig3 N={N} seed {seed}: acc {r['accuracy']:.3f}, NLL {r['nll']:.3f}, KL {r['kl']:.4g}, "
                f"{r['n_iter']} steps, {r['fit_s']:.0f} s",
                flush=True,
            )
    runtime = time.perf_counter() - start

    def vals(N, field):
        return [r[field] for r in runs if r["N"] == N]

    header = [
        "N",
        "parameters",
        "n / N",
        "test NLL",
        "accuracy",
        "ECE",
        "mean confidence",
        "KL(q||P0)",
        "Adam steps",
        "fit s",
    ]
    rows = [
        [
            str(N),
            str(vals(N, "n_params")[0]),
            f"{vals(N, 'n_over_N')[0]:.3g}",
            fmt_values(vals(N, "nll")),
            fmt_values(vals(N, "accuracy")),
            fmt_values(vals(N, "ece")),
            fmt_values(vals(N, "confidence")),
            f"{np.mean(vals(N, 'kl')):.4g}",
            f"{np.mean(vals(N, 'n_iter')):.0f}",
            f"{np.mean(vals(N, 'fit_s')):.1f}",
        ]
        for N in widths
    ]
    nll = [np.mean(vals(N, "nll")) for N in widths]
    acc = [np.mean(vals(N, "accuracy")) for N in widths]
    best_nll = widths[int(np.argmin(nll))]
    cmp_header = ["", "paper (Fig. 3, MNIST, 7 widths)", "this run (digits)"]
    cmp_rows = [
        [
            "test NLL against N",
            "rises as N grows",
            f"lowest at N = {best_nll}; {nll[0]:.3f} at N = {widths[0]}, {nll[-1]:.3f} at N = {widths[-1]}",
        ],
        [
            "accuracy against N",
            "falls as N grows",
            f"highest at N = {widths[int(np.argmax(acc))]}; {acc[0]:.3f} at N = {widths[0]}, "
            f"{acc[-1]:.3f} at N = {widths[-1]}",
        ],
    ]
    notes = [
        "The classical ELBO (MeanFieldVI(kl_weight=1.0)) on digits: stratified 75/25 splits with "
        "random_state = seed, GibbsMLPClassifier(sampler=MeanFieldVI(kl_weight=1.0), "
        "hidden_layer_sizes=(N,), n_chains=2, n_samples=25, random_state=seed) with its default prior "
        "(N(0, (2 / sqrt(fan_in))^2)) and MeanFieldVI's default parametrization ('standard'); "
        + (f"quick run: {QUICK_FIT}" if args.quick else "at most max_iter=5000 Adam steps (the default)")
        + f", early stopping as the default. Mean ± s.e. over {len(seeds)} seed(s). Runtime {runtime:.0f} s.",
    ]
    result = {"widths": widths, "runs": runs, "runtime_s": runtime}
    # the tables are kept with the runs: they are built from intermediate results the JSON does not hold
    result["page"] = {
        "heading": "Paper 002 Fig. 3 analogue: the classical ELBO against the width",
        "tables": [
        ("Digits, classical ELBO, one hidden layer of N", header, rows),
        ("Against the paper", cmp_header, cmp_rows),
        ],
        "notes": notes,
    }
    return {"vi_fig3": result}


def plot_fig3(result, path):
    plt = pyplot()
    widths, runs = result["widths"], result["runs"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, (field, title) in zip(axes, (("nll", "test NLL"), ("accuracy", "test accuracy"))):
        stats = [mean_se([r[field] for r in runs if r["N"] == N]) for N in widths]
        ax.errorbar(
            widths,
            [m for m, _ in stats],
            yerr=[0.0 if np.isnan(s) else s for _, s in stats],
            marker="o",
            capsize=3,
            color="C3",
        )
        ax.set_xscale("log", base=2)
        ax.set_xlabel("neurons N (one hidden layer)")
        ax.set_title(f"digits, classical ELBO: {title}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"figure: {path}")


# ------------------------------------------------------------------ main
RUNNERS = {"e1": run_e1, "e2": run_e2, "fig1": run_fig1, "fig3": run_fig3}


PLOTS = {"vi_e1": plot_e1, "vi_e2": plot_e2, "vi_fig1": plot_fig1, "vi_fig3": plot_fig3}


def add_arguments(parser):
    parser.add_argument("--parts", nargs="+", default=[",".join(PARTS)], help=", ".join(PARTS))
    parser.add_argument("--seeds", type=int, default=None, help="seeds per point (default: per part)")


def run(args):
    """The parts asked for, in order (quick: small grids, one seed, few steps)."""
    results, start = {}, time.perf_counter()
    for part in names(args.parts, PARTS, "part"):
        print(f"== part {part}", flush=True)
        results.update(RUNNERS[part](args))
    print(f"\ntotal {time.perf_counter() - start:.0f} s")
    return results


def _figure(stem, result):
    return lambda path: PLOTS[stem](result, path)


def report(results):
    """Each part's tables (stored with its runs) and figure."""
    pages = []
    for stem, result in results.items():
        page = result.get("page")
        if page is None:
            print(f"{stem}: stored without its tables; run its part again to render them")
            continue
        tables = [(title, header, rows) for title, header, rows in page["tables"]]
        pages.append(Page(stem, page["heading"], tables, page["notes"], figure=_figure(stem, result)))
    return pages


BENCHMARK = Benchmark(
    name="vi",
    kind="reproduction",
    title="Paper 002: tempered variational inference (App. E.1, E.2, Figs. 1 and 3)",
    outputs=(
        Output("vi_e1", "Paper 002 App. E.1: the predictive spread of VI as the width grows", flags="--parts e1"),
        Output("vi_e2", "Paper 002 App. E.2: the two terms of the ELBO as the width grows", flags="--parts e2"),
        Output("vi_fig1", "Paper 002 Fig. 1 analogue: VI against the cooling tau", flags="--parts fig1"),
        Output("vi_fig3", "Paper 002 Fig. 3 analogue: the classical ELBO against the width", flags="--parts fig3"),
    ),
    run=run,
    report=report,
    add_arguments=add_arguments,
)
