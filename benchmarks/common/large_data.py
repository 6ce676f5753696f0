"""Fits against n on Friedman #1: skgibbs at its defaults and with VI beside the tools users already have.

Used by ``bench_large_n`` (its second part): per training size, every
method is fitted once on ``make_friedman1(n + 10000, n_features=20,
noise=1.0, random_state=0)`` with the last 10^4 rows held out, on one core.
The ``skgibbs`` row is the default fit; the rows with a sampler given
(``sampler="vi"``, ``"sghmc"``) keep the fixed prior and the plug-in
temperature, the defaults until 2026-11-27, under which they were measured.
At the plug-in temperature ``noise="auto"`` keeps one noise variance, so
those rows are unchanged by it; the stored ``skgibbs_vi`` rows kept 175
draws of ``q`` per group, the ``n_samples`` of VI before ``"auto"`` made it
100.
"""

import time
import warnings

import numpy as np
from scipy.stats import norm

from .. import pick_sizes
from .environment import load_after, was_quick
from .fits import mixing_note
from .stats import timed_fit
from .writer import Page

FITS = "large_n_fits"
METHODS = ("skgibbs", "skgibbs_vi", "skgibbs_sghmc", "mlp_ensemble", "hgb", "ngboost")
TEST_ROWS = 10_000
#: training rows of the fits against n (``--sizes`` overrides), their held-out rows, and the settings that a
#: quick run shrinks: skgibbs' draws and pre-training (and, for the MCMC samplers, warm-up and thinning), the
#: MLPs' iterations, NGBoost's estimators, CatBoost's iterations (1000, its default) and RealMLP's settings
#: (its defaults)
FIT_SIZES = {
    "full": {"rows": (1000, 10_000, 100_000), "test_rows": TEST_ROWS, "skgibbs": {}, "skgibbs_mcmc": {},
             "mlp_max_iter": 200, "ngboost_estimators": 500, "catboost_iterations": 1000, "realmlp": {}},
    "quick": {"rows": (100,), "test_rows": 200, "skgibbs": {"n_samples": 10, "pretrain_iter": 20},
              "skgibbs_mcmc": {"burn_in": 10, "thin": 2}, "mlp_max_iter": 20, "ngboost_estimators": 50,
              "catboost_iterations": 50, "realmlp": {"n_epochs": 8}},
}  # fmt: skip
Z90 = norm.ppf(0.95)
#: E log N(y; f(x), 1) for y = f(x) + N(0, 1): the best a predictive can score on average
BEST = -0.5 * np.log(2 * np.pi) - 0.5


def _data(n, test_rows=TEST_ROWS):
    from sklearn.datasets import make_friedman1

    X, y = make_friedman1(n + test_rows, n_features=20, noise=1.0, random_state=0)
    return X[:n], y[:n], X[n:], y[n:]


def _scores(mean, sd, y):
    return {
        "log_lik": float(norm.logpdf(y, mean, sd).mean()),
        "rmse": float(np.sqrt(np.mean((y - mean) ** 2))),
        "coverage90": float(np.mean(np.abs(y - mean) <= Z90 * sd)),
    }


def _own_scores(est, Xt, yt):
    """The test log-likelihood and 90% coverage of a fit's own predictive distribution.

    The mixture over the draws of each draw's noise distribution (normal,
    or Student-t with ``noise="student"``): what
    :func:`~skgibbs.metrics.log_predictive_density_scorer` and
    ``predict_interval`` give, where :func:`_scores` takes the normal of the
    predictive mean and sd, the one summary every peer has.
    """
    from skgibbs.metrics import log_predictive_density_scorer

    _, pis = est.predict_interval(Xt, confidence_level=0.9)
    inside = (yt >= pis[:, 0, 0]) & (yt <= pis[:, 1, 0])
    return {"log_lik_own": float(log_predictive_density_scorer(est, Xt, yt)), "coverage90_own": float(inside.mean())}


def _skgibbs(X, y, Xt, yt, size, sampler="auto", embedding=None, noise="auto"):
    from skgibbs import GibbsMLPRegressor, SamplerWarning

    kw = {"sampler": sampler, "embedding": embedding, "noise": noise}
    if sampler != "auto":  # the target these rows were measured on (prior="auto" is ARD under VI now)
        kw.update(prior="fixed", temperature="plug-in")
    kw.update(size.skgibbs)
    if sampler != "vi":
        kw.update(size.skgibbs_mcmc)
    est = GibbsMLPRegressor(random_state=0, **kw)
    fit = timed_fit(est, X, y)
    seconds, messages = fit.seconds, fit.messages(SamplerWarning)
    mean, sd = est.predict(Xt, return_std=True)
    out = _scores(mean, sd, yt)
    out.update(_own_scores(est, Xt, yt))
    epochs = getattr(est, "epochs_", None)
    if epochs is None and est.sampler_name_ != "vi":  # full-data kernels: one pass per gradient
        epochs = est.n_grad_evals_
    out.update(
        fit_s=seconds,
        sampler=est.sampler_name_,
        passes_per_chain=None if epochs is None else float(np.mean(epochs)),
        warnings=[m[:200] for m in messages],
    )
    return out


def _mlp_ensemble(X, y, Xt, yt, size):
    from sklearn.neural_network import MLPRegressor
    from sklearn.preprocessing import StandardScaler

    start = time.perf_counter()
    scaler = StandardScaler().fit(X)
    ym, ys = y.mean(), y.std()
    preds, resid = [], []
    for seed in range(5):
        mlp = MLPRegressor(hidden_layer_sizes=(100, 100), early_stopping=True, random_state=seed, max_iter=size.mlp_max_iter)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mlp.fit(scaler.transform(X), (y - ym) / ys)
        preds.append(mlp.predict(scaler.transform(Xt)) * ys + ym)
        resid.append(1.0 - mlp.best_validation_score_)  # 1 - R^2 on its validation split
    seconds = time.perf_counter() - start
    preds = np.array(preds)
    # the members' spread plus the validation residual variance (1 - R^2 of the standardized target)
    noise = float(np.mean(resid)) * ys**2
    mean = preds.mean(0)
    out = _scores(mean, np.sqrt(preds.var(0) + noise), yt)
    out["fit_s"] = seconds
    return out


def _hgb(X, y, Xt, yt, size):
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.model_selection import train_test_split

    start = time.perf_counter()
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.2, random_state=0)
    sd = float(np.std(yb - HistGradientBoostingRegressor(random_state=0).fit(Xa, ya).predict(Xb)))
    model = HistGradientBoostingRegressor(random_state=0).fit(X, y)
    seconds = time.perf_counter() - start
    out = _scores(model.predict(Xt), np.full(len(yt), sd), yt)
    out["fit_s"] = seconds
    return out


def _ngboost(X, y, Xt, yt, size):
    from ngboost import NGBRegressor  # optional

    start = time.perf_counter()
    model = NGBRegressor(n_estimators=size.ngboost_estimators, verbose=False, random_state=0).fit(X, y)
    seconds = time.perf_counter() - start
    dist = model.pred_dist(Xt)
    out = _scores(dist.params["loc"], dist.params["scale"], yt)
    out["fit_s"] = seconds
    return out


def _catboost(X, y, Xt, yt, size):
    from catboost import CatBoostRegressor  # optional: the tabular extra

    start = time.perf_counter()
    # its uncertainty loss (a mean and a log-variance per row) at the documented defaults, one thread
    model = CatBoostRegressor(loss_function="RMSEWithUncertainty", iterations=size.catboost_iterations,
                              random_seed=0, thread_count=1, verbose=False, allow_writing_files=False).fit(X, y)  # fmt: skip
    seconds = time.perf_counter() - start
    # virtual ensembles: columns mean, knowledge uncertainty (variance of the members' means) and data
    # uncertainty (mean of their variances); their sum is the total predictive variance
    pred = model.virtual_ensembles_predict(Xt, prediction_type="TotalUncertainty")
    out = _scores(pred[:, 0], np.sqrt(pred[:, 1] + pred[:, 2]), yt)
    out["fit_s"] = seconds
    return out


def _realmlp(X, y, Xt, yt, size):
    from pytabkit import RealMLP_TD_Regressor  # optional: the tabular extra
    from sklearn.model_selection import train_test_split

    start = time.perf_counter()
    # its tuned defaults on four fifths of the rows (RealMLP holds out its own validation rows within
    # them); the residual sd on the last fifth, as for gradient boosting
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.2, random_state=0)
    model = RealMLP_TD_Regressor(random_state=0, n_threads=1, device="cpu", verbosity=0, **size.realmlp)
    model.fit(np.asarray(Xa, dtype=np.float32), np.asarray(ya, dtype=np.float32))
    sd = float(np.std(yb - model.predict(np.asarray(Xb, dtype=np.float32))))
    seconds = time.perf_counter() - start
    out = _scores(model.predict(np.asarray(Xt, dtype=np.float32)), np.full(len(yt), sd), yt)
    out["fit_s"] = seconds
    return out


FITTERS = {
    "skgibbs": lambda *a: _skgibbs(*a),
    "skgibbs_vi": lambda *a: _skgibbs(*a, sampler="vi"),
    "skgibbs_sghmc": lambda *a: _skgibbs(*a, sampler="sghmc"),
    "skgibbs_piecewise": lambda *a: _skgibbs(*a, embedding="piecewise"),
    "skgibbs_periodic": lambda *a: _skgibbs(*a, embedding="periodic"),
    "skgibbs_homoscedastic": lambda *a: _skgibbs(*a, noise="homoscedastic"),
    "skgibbs_heteroscedastic": lambda *a: _skgibbs(*a, noise="heteroscedastic"),
    "mlp_ensemble": _mlp_ensemble,
    "hgb": _hgb,
    "ngboost": _ngboost,
    "catboost": _catboost,
    "realmlp": _realmlp,
}


def fit_methods(split, methods, quick, skipped, label, **fields):
    """One row per method fitted on ``split = (X, y, Xt, yt)``; a method that cannot import goes to ``skipped``."""
    rows, size = [], pick_sizes(FIT_SIZES, quick)
    for method in methods:
        try:
            row = FITTERS[method](*split, size)
        except ImportError as exc:
            skipped[method] = str(exc)
            continue
        row.update(method=method, **fields)
        print(f"{label} {method}: log-lik {row['log_lik']:.3f}, RMSE {row['rmse']:.4f}, "
              f"coverage {row['coverage90']:.3f}, {row['fit_s']:.0f} s", flush=True)  # fmt: skip
        rows.append(row)
    return rows


def run_fits(args):
    size = pick_sizes(FIT_SIZES, args.quick)
    methods = args.methods or METHODS
    rows, skipped = [], {}
    for n in args.sizes or size.rows:
        rows += fit_methods(_data(int(n), size.test_rows), methods, args.quick, skipped, f"n={n}", n=int(n))
    return {"rows": rows, "skipped": skipped, "threads": 1}


def report_fits(res):
    header = ["n", "method", "sampler", "fit s", "passes / chain", "test log-lik", "RMSE", "90% coverage",
              "warnings", "function-space mixing"]
    table = [
        [
            str(r["n"]), r["method"], r.get("sampler", "—"), f"{r['fit_s']:.0f}",
            "—" if r.get("passes_per_chain") is None else f"{r['passes_per_chain']:.0f}",
            f"{r['log_lik']:.3f}", f"{r['rmse']:.3f}", f"{r['coverage90']:.3f}",
            str(len(r.get("warnings", []))) if "warnings" in r else "—",
            mixing_note(r["warnings"]) if r.get("sampler") not in (None, "vi") else "—",
        ]
        for r in res["rows"]
    ]
    notes = [
        f"Friedman #1 (20 inputs, noise sd 1, so the true function with its noise scores a test "
        f"log-likelihood of {BEST:.3f}) with {TEST_ROWS} held-out rows; one core; load average at the end "
        f"{load_after(res, lambda r: r['load_average'][0]):.1f}. skgibbs: GibbsMLPRegressor(random_state=0) at its defaults "
        "(the sampler column says what sampler='auto' ran), and with sampler='vi'. 'passes / chain' "
        "counts gradients over the full data (HMC) or passes of the minibatches (SGHMC) per chain, "
        "warm-up included, pre-training and summaries not. 'not mixed': the numbers of that row come from "
        "chains that had not mixed (largest R-hat, smallest bulk ESS of the function values), not from the "
        "posterior; VI draws independent samples of q, which R-hat cannot judge.",
    ]
    if any(r["method"] == "skgibbs" and r.get("sampler") == "sghmc" for r in res["rows"]):
        notes.append(
            "The skgibbs rows with sampler sghmc ran when sampler='auto' chose SGHMC beyond 5e7 rows x "
            "weights; after these measurements it chooses VI there (the skgibbs_vi rows)."
        )
    for r in res["rows"]:
        if r.get("refitted"):  # a row refitted alone after a change of the defaults, merged into the stored run
            x = r["refitted"]
            notes.append(
                f"The {r['method']} row at n = {r['n']} was refitted alone on {x['date'][:10]} at the defaults of "
                f"that day ({x['command']}, on {x['cpu_model']}, load average {x['load_before']:.1f} before) and "
                "replaces the fit of the run above; the other rows are that run's."
                + (
                    f" The fit it replaced ({x['before']['date'][:10]}, {x['before']['cpu_model']}): test "
                    f"log-likelihood {x['before']['log_lik']:.3f} in {x['before']['fit_s']:.0f} s, "
                    f"{x['before']['passes_per_chain']:.0f} passes a chain."
                    if "before" in x else ""
                )
            )
    if was_quick(res):
        notes.append("Quick run: short chains and few iterations; not the documented numbers.")
    notes += [f"Skipped {k}: {v}" for k, v in res.get("skipped", {}).items()]

    def figure(path):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
        for method in dict.fromkeys(r["method"] for r in res["rows"]):
            rows = sorted((r for r in res["rows"] if r["method"] == method), key=lambda r: r["n"])
            ns = [r["n"] for r in rows]
            axes[0].loglog(ns, [r["fit_s"] for r in rows], "o-", label=method)
            axes[1].semilogx(ns, [r["log_lik"] for r in rows], "o-", label=method)
        axes[0].set(xlabel="training rows", ylabel="fit time (s)")
        axes[1].set(xlabel="training rows", ylabel="test log-likelihood")
        axes[1].axhline(BEST, color="k", lw=0.8, ls=":")
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)

    return [Page(FITS, "Fits against n: skgibbs, VI and the tools users already have",
                 [("Friedman #1 at growing n", header, table)], notes, figure=figure)]
