"""Paper 002 App. E.1 (Fig. 4): the predictive spread of VI as the width grows (part ``e1``).

``x ~ U[-1, 1]``, ``y = x^3 + eps``,
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
"""

import time

import numpy as np
import torch

from skgibbs import GibbsMLPRegressor
from skgibbs.samplers import vi

from ... import pick_sizes
from ...common.stats import fmt_values, mean_se
from .shared import (
    QUICK_FIT,
    estimator_prior,
    fit_timed,
    forward_draws,
    mean_field_prior,
    prior_output_variance,
    pyplot,
    slope,
    vi_estimator,
)

STEM = "vi_e1"
DOC_FIGURE = "vi_e1.png"  # the user guide shows the committed figure from doc/_static

E1_WIDTHS = (10, 20, 100, 200, 1000, 2000, 10000)
E1_N, E1_NOISE_VAR, E1_TAU, E1_GRID, E1_SEEDS = 500, 1e-3, 1.0, 200, 3
E1_MAX_ITER, E1_MAX_ITER_WIDE, E1_WIDE = 3000, 1000, 5000  # cap for N >= E1_WIDE: E1_MAX_ITER_WIDE
E1_DRAWS, E1_PRIOR_DRAWS = (2, 100), 400  # (n_chains, n_samples) of q; draws of the prior
#: the widths and the seeds per width (``--seeds`` overrides),
#: and the estimator's settings over the part's (fit)
SIZES = {
    "full": {"widths": list(E1_WIDTHS), "seeds": E1_SEEDS, "fit": {}},
    "quick": {"widths": [10, 100], "seeds": 1, "fit": QUICK_FIT},
}


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


def e1_estimator(N, eta_label, seed, fit):
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
        fit=fit,
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


def e1_prior_start(N, eta_label, seed, fit):
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
        n_iter=fit.get("sampler__max_iter", max_iter),
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


def run(args):
    size = pick_sizes(SIZES, args.quick)
    widths, seeds = size.widths, range(args.seeds or size.seeds)
    runs = []
    start = time.perf_counter()
    for N in widths:
        for key, (label, runner, eta_label) in E1_VARIANTS.items():
            for seed in seeds:
                r = runner(N, eta_label, seed, size.fit)
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


def plot(result, path):
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
