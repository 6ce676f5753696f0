"""Paper 002 App. E.1 (Fig. 4): the predictive spread of VI as the width grows (part ``e1``).

On the ``x^3`` toy (``n = 500``, noise variance 0.001, a fresh data set per seed),
``GibbsMLPRegressor((N,), sampler=MeanFieldVI(parametrization="mean-field"))`` for ``N`` from 10 to 10000 with
``kl_weight=1.0`` (the classical ELBO) or ``eta = tau n / N``, at the temperature of the true noise; and the
same objective through ``skgibbs.samplers.vi.fit`` from a draw of the prior ("prior-draw start"). Measured
over 200 points of ``[-1, 1]``: ``E_x sd_q f(x)`` against the prior's, ``KL(q || P0)``, the RMSE to ``x^3``
and the fit time, after at most 3000 Adam steps (1000 for 10000 neurons, which are not quite converged then).
The notes of the page (:func:`render`) state every setting.
"""

import time
from types import SimpleNamespace

import numpy as np
import torch
from sklearn.base import clone

from skgibbs import GibbsMLPRegressor
from skgibbs.problem import build_problem
from skgibbs.samplers import MeanFieldVI, vi

from ... import pick_sizes
from ...common.environment import recorded
from .shared import QUICK_FIT, cells, errorbar, figure, fit_timed, mean_cell, n_seeds, se_cell, select, slope

STEM = "vi_e1"
HEADING = "Paper 002 App. E.1: the predictive spread of VI as the width grows"
DOC_FIGURE = "vi_e1.png"  # the user guide shows the committed figure from doc/_static

E1_N, E1_NOISE_VAR, E1_TAU = 500, 1e-3, 1.0
E1_MAX_ITER, E1_MAX_ITER_WIDE, E1_WIDE = 3000, 1000, 5000  # cap for N >= E1_WIDE: E1_MAX_ITER_WIDE
E1_DRAWS, E1_PRIOR_DRAWS = {"n_chains": 2, "n_samples": 100}, 400  # draws of q; draws of the prior
GRID = np.linspace(-1.0, 1.0, 200)[:, None]
#: the widths, the seeds per width (``--seeds`` overrides) and the estimator's settings over the part's (fit)
SIZES = {
    "full": {"widths": [10, 20, 100, 200, 1000, 2000, 10000], "seeds": 3, "fit": {}},
    "quick": {"widths": [10, 100], "seeds": 1, "fit": QUICK_FIT},
}
#: variant -> (label, q's means start at a draw of the prior, eta = 1)
E1_VARIANTS = {
    "est_1": ("estimator, eta = 1", False, True),
    "est_auto": ("estimator, eta = tau n / N", False, False),
    "pd_1": ("prior-draw start, eta = 1", True, True),
    "pd_auto": ("prior-draw start, eta = tau n / N", True, False),
}
E1_COLUMNS = {  # header: (field, its cell over the seeds)
    "eta": ("eta", mean_cell(".3g")),
    "E_x sd_q f (1e-2)": ("sd", se_cell(".2f", 100)),
    "prior sd (1e-2)": ("prior_sd", se_cell(".2f", 100)),
    "Var_q f / Var_P0 f": ("var_ratio", se_cell(".3g")),
    "KL(q||P0)": ("kl", se_cell(".3g")),
    "KL per param": ("kl_per_param", se_cell(".3g")),
    "RMSE to x^3 (1e-2)": ("rmse", se_cell(".2f", 100)),
    "Adam steps": ("n_iter", mean_cell(".0f")),
    "fit s": ("fit_s", mean_cell(".1f")),
}
SLOPES = {  # field: its header
    "sd": "E_x sd_q f",
    "var_ratio": "Var_q f / Var_P0 f",
    "kl_per_param": "KL per param",
    "rmse": "RMSE to x^3",
}


def e1_data(seed):
    """``(X, y, temperature)``: the data set of ``seed`` and the temperature of its Gaussian likelihood."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, E1_N)
    y = x**3 + rng.normal(0.0, np.sqrt(E1_NOISE_VAR), E1_N)
    return x[:, None], y, 2.0 * E1_NOISE_VAR / y.var()


def estimator_prior(est, X, y):
    """Network and prior standard deviations (one per parameter) that ``est`` samples under on ``(X, y)``
    (from a copy without pre-training, on which the prior does not depend)."""
    problem = build_problem(clone(est).set_params(pretrain_iter=0), X, y)
    std = torch.as_tensor(problem.prior.std, dtype=torch.float32).expand(problem.spec.n_params).clone()
    return problem.spec, std


def forward_draws(spec, theta, Xs, chunk=20):
    """Network outputs ``(S, n)`` of the draws ``theta`` ``(S, Q)``, ``chunk`` draws at a time (memory)."""
    Xs = torch.as_tensor(Xs, dtype=torch.float32)
    with torch.no_grad():
        parts = [spec.forward(theta[i : i + chunk], Xs) for i in range(0, theta.shape[0], chunk)]
    return torch.cat(parts).double().numpy()


def prior_output_variance(spec, std, Xs, generator):
    """``mean_x Var_P0 f(x)`` on the standardized inputs ``Xs`` from draws of the prior."""
    theta = vi.sample(torch.zeros(spec.n_params), std, E1_PRIOR_DRAWS, generator)
    return float(forward_draws(spec, theta, Xs).var(0).mean())


def e1_summary(fit, F, prior_var, start, seconds, messages):
    """The record of one fit: predictive spread (scale of y), RMSE to x^3, KL and the optimisation; ``F`` is
    (200, S), ``fit`` the fitted estimator or what ``vi.fit`` gave under the estimator's attribute names."""
    var, kl = F.var(1), float(fit.kl_)
    return dict(
        sd=float(np.sqrt(var).mean()),
        var_ratio=float(var.mean() / prior_var),
        prior_sd=float(np.sqrt(prior_var)),
        rmse=float(np.sqrt(np.mean((F.mean(1) - GRID[:, 0] ** 3) ** 2))),
        kl=kl,
        kl_per_param=kl / fit.spec_.n_params,
        start=start,
        eta=float(fit.kl_weight_),
        n_iter=int(fit.n_iter_),
        stopped_early=bool(fit.vi_stopped_early_),
        temperature=float(fit.temperature_),
        fit_s=seconds,
        warnings=messages,
    )


def e1_estimator(N, eta_one, seed, fit, max_iter):
    X, y, temperature = e1_data(seed)
    kl_weight = 1.0 if eta_one else E1_TAU * E1_N / N  # the paper's eta (kl_weight="auto" is eta = tau)
    sampler = MeanFieldVI(parametrization="mean-field", kl_weight=kl_weight, tau=E1_TAU, max_iter=max_iter)
    settings = {"prior": "fixed", "temperature": temperature, "random_state": seed, **E1_DRAWS}
    est = GibbsMLPRegressor((N,), sampler=sampler, **settings).set_params(**fit)
    seconds, messages = fit_timed(est, X, y)
    _, std = estimator_prior(est, X, y)
    Xs = (GRID - est.x_mean_) / est.x_scale_
    prior_var = prior_output_variance(est.spec_, std, Xs, torch.Generator().manual_seed(10_000 + seed))
    F = est.predict_samples(GRID)
    return e1_summary(est, F, prior_var * est.y_scale_**2, "estimator", seconds, messages)


def e1_prior_start(N, eta_one, seed, fit, max_iter):
    """The estimator's objective through ``vi.fit``, ``q``'s means started at a draw of the prior."""
    X, y, temperature = e1_data(seed)
    x_mean, x_scale, y_mean, y_scale = X.mean(0), X.std(0), y.mean(), y.std()
    Xt = torch.as_tensor((X - x_mean) / x_scale, dtype=torch.float32)
    yt = torch.as_tensor((y - y_mean) / y_scale, dtype=torch.float32)
    sampler = MeanFieldVI(parametrization="mean-field")  # the estimator's prior and coordinates
    spec, std = estimator_prior(GibbsMLPRegressor((N,), sampler=sampler, prior="fixed"), X, y)
    eta = 1.0 if eta_one else E1_TAU * E1_N / N
    n_iter = fit.get("sampler__max_iter", max_iter)
    config = vi.VIConfig(lam=E1_N / temperature, eta=eta, n_iter=n_iter, learning_rate=1e-2, batch_size=128)
    gen = torch.Generator().manual_seed(seed)
    start = time.perf_counter()
    with torch.no_grad():
        mu0 = std * torch.randn(spec.n_params, generator=gen)
    res = vi.fit(spec, Xt, yt, mu0, std, config, gen, loss="squared", scale=sampler.output_scale(spec))
    seconds = time.perf_counter() - start
    Xs = (GRID - x_mean) / x_scale
    theta = vi.sample(res.mean, res.std, E1_DRAWS["n_chains"] * E1_DRAWS["n_samples"], gen)
    F = forward_draws(spec, theta, Xs).T * y_scale + y_mean
    prior_var = prior_output_variance(spec, std, Xs, gen) * y_scale**2
    attributes = {"kl_": res.kl, "kl_weight_": eta, "temperature_": temperature}  # the estimator's names
    fitted = SimpleNamespace(
        spec_=spec, n_iter_=res.n_iter, vi_stopped_early_=res.stopped_early, **attributes
    )
    return e1_summary(fitted, F, prior_var, "prior draw", seconds, [])


def run(args):
    size = pick_sizes(SIZES, args.quick)
    widths, seeds = size.widths, range(args.seeds or size.seeds)
    runs, start = [], time.perf_counter()
    for N in widths:
        max_iter = E1_MAX_ITER if N < E1_WIDE else E1_MAX_ITER_WIDE
        for key, (label, from_prior, eta_one) in E1_VARIANTS.items():
            for seed in seeds:
                r = (e1_prior_start if from_prior else e1_estimator)(N, eta_one, seed, size.fit, max_iter)
                r.update(variant=key, N=N, seed=seed)
                runs.append(r)
                print(f"e1 N={N} {label} seed {seed}: sd {r['sd']:.4f}, {r['fit_s']:.0f} s", flush=True)
    return {STEM: {"widths": widths, "runs": runs, "runtime_s": time.perf_counter() - start}}


def render(result):
    """``(tables, notes)`` of the page, from the stored runs."""
    widths, runs, runtime = result["widths"], result["runs"], result["runtime_s"]
    seeds, quick = range(n_seeds(runs)), recorded(result, "quick", False)

    def means(key, field):
        return [np.mean(select(runs, field, variant=key, N=N)) for N in widths]

    def seq(key, field, scale=1.0):
        return " → ".join(f"{m * scale:.3g}" for m in means(key, field))

    rows = [
        [label, str(N), *cells(runs, E1_COLUMNS.values(), variant=key, N=N)]
        for key, (label, _, _) in E1_VARIANTS.items()
        for N in widths
    ]
    slopes = {key: {field: slope(widths, means(key, field)) for field in SLOPES} for key in E1_VARIANTS}
    prior_slope = slope(widths, means("est_auto", "prior_sd"))
    slope_rows = [
        [label, *(f"{slopes[key][f]:+.2f}" for f in SLOPES)] for key, (label, _, _) in E1_VARIANTS.items()
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
        f"{'Quick run: ' + str(QUICK_FIT) if quick else 'Capped at ' + capped}; early stopping "
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
    tables = [
        ("Expected predictive sd, KL and fit on the x^3 toy", ["variant", "N", *E1_COLUMNS], rows),
        ("Slope of log value on log N (all widths)", ["variant", *SLOPES.values()], slope_rows),
        ("Against the paper", cmp_header, cmp_rows),
    ]
    return tables, notes


def plot(result, path):
    widths, runs = result["widths"], result["runs"]
    panels = {
        "sd": "E_x sd_q f(x)  (scale of y)",
        "kl_per_param": "KL(q || P0) per parameter",
        "rmse": "RMSE of the predictive mean to x^3",
    }
    with figure(path, 1, 3, figsize=(14, 4.2)) as (fig, axes):
        for ax, (field, ylabel) in zip(axes, panels.items()):
            for key, (label, from_prior, eta_one) in E1_VARIANTS.items():
                style = {"color": "C3" if eta_one else "C0", "ls": "--" if from_prior else "-"}
                groups = [select(runs, field, variant=key, N=N) for N in widths]
                errorbar(ax, widths, groups, marker="s" if from_prior else "o", label=label, **style)
            if field == "sd":
                prior = [np.mean(select(runs, "prior_sd", variant="est_auto", N=N)) for N in widths]
                ax.plot(widths, prior, color="gray", ls=":", marker=".", label="prior")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("neurons N")
            ax.set_ylabel(ylabel)
        axes[0].legend(fontsize=8)
        fig.suptitle("x^3 toy, mean-field VI: eta = 1 (red) against eta = n / N (blue)")
