"""Fits against n on Friedman #1 (``large_n``'s second part), and the fitters it shares with ``tabular``.

Per training size ``n``, every method is fitted once, on one core, on ``make_friedman1(n + 10000,
n_features=20, noise=1.0, random_state=0)`` with the last 10^4 rows held out. skgibbs: the default fit, and
``sampler="vi"`` or ``"sghmc"`` on the fixed prior at the plug-in temperature, where those rows were measured
(the stored ``skgibbs_vi`` rows drew 175 samples of ``q`` per group, 100 now). Peers, one thread each: five
``MLPRegressor((100, 100), early_stopping=True)`` (their mixture, with the residual variance of their
early-stopping splits); ``HistGradientBoostingRegressor`` and RealMLP (pytabkit's tuned defaults, on four
fifths of the rows) with the sd of their residuals on a held-out fifth; CatBoost's ``RMSEWithUncertainty``
with the total uncertainty of its virtual ensembles; NGBoost. CatBoost, RealMLP (the ``tabular`` extra) and
NGBoost are skipped where missing. Scored: the time; the test log-likelihood, RMSE and 90% coverage of the
normal with the predictive mean and sd, and for skgibbs of its own predictive (``_own``: the mixture over
the draws of each draw's noise distribution).
"""

import importlib
import time
import warnings
from functools import partial

import numpy as np
from scipy.stats import norm
from sklearn.datasets import make_friedman1
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPRegressor
from sklearn.preprocessing import StandardScaler

from .. import pick_sizes
from .environment import load_after, was_quick
from .fits import mixing_note
from .stats import timed_fit
from .writer import Page

FITS = "large_n_fits"
METHODS = ("skgibbs", "skgibbs_vi", "skgibbs_sghmc", "mlp_ensemble", "hgb", "ngboost")
TEST_ROWS = 10_000
#: training rows (``--sizes`` overrides), held-out rows, and the settings a quick run shrinks (CatBoost's
#: iterations and RealMLP's settings at their defaults in a full run)
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
    X, y = make_friedman1(n + test_rows, n_features=20, noise=1.0, random_state=0)
    return X[:n], y[:n], X[n:], y[n:]


def _scores(mean, sd, y):
    """Test log-likelihood, RMSE and 90% coverage of the normal with the predictive mean and sd."""
    return {
        "log_lik": float(norm.logpdf(y, mean, sd).mean()),
        "rmse": float(np.sqrt(np.mean((y - mean) ** 2))),
        "coverage90": float(np.mean(np.abs(y - mean) <= Z90 * sd)),
    }


def _skgibbs(X, y, Xt, yt, size, sampler="auto", embedding=None, noise="auto"):
    from skgibbs import GibbsMLPRegressor, SamplerWarning
    from skgibbs.metrics import log_predictive_density_scorer

    kw = {"sampler": sampler, "embedding": embedding, "noise": noise, **size.skgibbs}
    if sampler != "auto":  # the target these rows were measured on (prior="auto" is ARD under VI now)
        kw.update(prior="fixed", temperature="plug-in")
    if sampler != "vi":
        kw.update(size.skgibbs_mcmc)
    est = GibbsMLPRegressor(random_state=0, **kw)
    fit = timed_fit(est, X, y)
    mean, sd = est.predict(Xt, return_std=True)
    _, pis = est.predict_interval(Xt, confidence_level=0.9)
    epochs = getattr(est, "epochs_", None)
    if epochs is None and est.sampler_name_ != "vi":  # full-data kernels: one pass per gradient
        epochs = est.n_grad_evals_
    return {
        **_scores(mean, sd, yt),
        "log_lik_own": float(log_predictive_density_scorer(est, Xt, yt)),
        "coverage90_own": float(((yt >= pis[:, 0, 0]) & (yt <= pis[:, 1, 0])).mean()),
        "fit_s": fit.seconds,
        "sampler": est.sampler_name_,
        "passes_per_chain": None if epochs is None else float(np.mean(epochs)),
        "warnings": [m[:200] for m in fit.messages(SamplerWarning)],
    }


def _timed(fit, X, y, Xt, yt, size):
    """Time ``fit(X, y, Xt, size)``, which returns a function giving the predictive mean and sd on ``Xt``,
    called once the clock has stopped."""
    start = time.perf_counter()
    predictive = fit(X, y, Xt, size)
    seconds = time.perf_counter() - start
    return {**_scores(*predictive(), yt), "fit_s": seconds}


def _mlp_ensemble(X, y, Xt, size):
    scaler = StandardScaler().fit(X)
    ym, ys = y.mean(), y.std()
    preds, resid = [], []
    settings = {"hidden_layer_sizes": (100, 100), "early_stopping": True, "max_iter": size.mlp_max_iter}
    for seed in range(5):
        mlp = MLPRegressor(random_state=seed, **settings)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mlp.fit(scaler.transform(X), (y - ym) / ys)
        preds.append(mlp.predict(scaler.transform(Xt)) * ys + ym)
        resid.append(1.0 - mlp.best_validation_score_)  # 1 - R^2 (standardized y) on its validation split

    def predictive():
        members = np.array(preds)
        return members.mean(0), np.sqrt(members.var(0) + float(np.mean(resid)) * ys**2)

    return predictive


def _hgb(X, y, Xt, size):
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.2, random_state=0)
    sd = float(np.std(yb - HistGradientBoostingRegressor(random_state=0).fit(Xa, ya).predict(Xb)))
    model = HistGradientBoostingRegressor(random_state=0).fit(X, y)
    return lambda: (model.predict(Xt), np.full(len(Xt), sd))


def _ngboost(X, y, Xt, size):
    from ngboost import NGBRegressor

    model = NGBRegressor(n_estimators=size.ngboost_estimators, verbose=False, random_state=0).fit(X, y)

    def predictive():
        dist = model.pred_dist(Xt)
        return dist.params["loc"], dist.params["scale"]

    return predictive


def _catboost(X, y, Xt, size):
    from catboost import CatBoostRegressor

    model = CatBoostRegressor(loss_function="RMSEWithUncertainty", iterations=size.catboost_iterations,
                              random_seed=0, thread_count=1, verbose=False, allow_writing_files=False).fit(X, y)  # fmt: skip

    def predictive():
        # columns: the mean, the variance of the members' means and the mean of their variances
        pred = model.virtual_ensembles_predict(Xt, prediction_type="TotalUncertainty")
        return pred[:, 0], np.sqrt(pred[:, 1] + pred[:, 2])

    return predictive


def _realmlp(X, y, Xt, size):
    from pytabkit import RealMLP_TD_Regressor

    Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.2, random_state=0)  # RealMLP validates within Xa
    model = RealMLP_TD_Regressor(random_state=0, n_threads=1, device="cpu", verbosity=0, **size.realmlp)
    model.fit(np.asarray(Xa, dtype=np.float32), np.asarray(ya, dtype=np.float32))
    sd = float(np.std(yb - model.predict(np.asarray(Xb, dtype=np.float32))))
    return lambda: (model.predict(np.asarray(Xt, dtype=np.float32)), np.full(len(Xt), sd))


FITTERS = {
    "skgibbs": _skgibbs,
    "skgibbs_vi": partial(_skgibbs, sampler="vi"),
    "skgibbs_sghmc": partial(_skgibbs, sampler="sghmc"),
    "skgibbs_piecewise": partial(_skgibbs, embedding="piecewise"),
    "skgibbs_periodic": partial(_skgibbs, embedding="periodic"),
    "skgibbs_homoscedastic": partial(_skgibbs, noise="homoscedastic"),
    "skgibbs_heteroscedastic": partial(_skgibbs, noise="heteroscedastic"),
    "mlp_ensemble": partial(_timed, _mlp_ensemble),
    "hgb": partial(_timed, _hgb),
    "ngboost": partial(_timed, _ngboost),
    "catboost": partial(_timed, _catboost),
    "realmlp": partial(_timed, _realmlp),
}
#: the optional packages of the peers, imported before the clock starts (missing: the method is skipped)
OPTIONAL = {"ngboost": "ngboost", "catboost": "catboost", "realmlp": "pytabkit"}


def fit_methods(split, methods, quick, skipped, label, **fields):
    """One row per method fitted on ``split = (X, y, Xt, yt)``; a method that cannot import goes to ``skipped``."""
    rows, size = [], pick_sizes(FIT_SIZES, quick)
    for method in methods:
        try:
            if method in OPTIONAL:
                importlib.import_module(OPTIONAL[method])
            row = FITTERS[method](*split, size)
        except ImportError as exc:
            skipped[method] = str(exc)
            continue
        row.update(method=method, **fields)
        print(f"{label} {method}: log-lik {row['log_lik']:.3f}, RMSE {row['rmse']:.4f}, "
              f"coverage {row['coverage90']:.3f}, {row['fit_s']:.0f} s", flush=True)  # fmt: skip
        rows.append(row)
    return rows


def warning_cells(row):
    """The cells ``warnings`` (their count) and ``function-space mixing`` of a fit's row; "—" for a peer."""
    count = str(len(row["warnings"])) if "warnings" in row else "—"
    return [count, mixing_note(row["warnings"]) if row.get("sampler") not in (None, "vi") else "—"]


def run_fits(args):
    size = pick_sizes(FIT_SIZES, args.quick)
    rows, skipped = [], {}
    for n in args.sizes or size.rows:
        split = _data(int(n), size.test_rows)
        rows += fit_methods(split, args.methods or METHODS, args.quick, skipped, f"n={n}", n=int(n))
    return {"rows": rows, "skipped": skipped, "threads": 1}


def _figure(rows, path):
    """Fit time and test log-likelihood against n, one line per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    for method in dict.fromkeys(r["method"] for r in rows):
        mine = sorted((r for r in rows if r["method"] == method), key=lambda r: r["n"])
        ns = [r["n"] for r in mine]
        axes[0].loglog(ns, [r["fit_s"] for r in mine], "o-", label=method)
        axes[1].semilogx(ns, [r["log_lik"] for r in mine], "o-", label=method)
    axes[0].set(xlabel="training rows", ylabel="fit time (s)")
    axes[1].set(xlabel="training rows", ylabel="test log-likelihood")
    axes[1].axhline(BEST, color="k", lw=0.8, ls=":")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def report_fits(res):
    header = ["n", "method", "sampler", "fit s", "passes / chain", "test log-lik", "RMSE", "90% coverage",
              "warnings", "function-space mixing"]  # fmt: skip
    table = [
        [str(r["n"]), r["method"], r.get("sampler", "—"), f"{r['fit_s']:.0f}",
         "—" if r.get("passes_per_chain") is None else f"{r['passes_per_chain']:.0f}",
         f"{r['log_lik']:.3f}", f"{r['rmse']:.3f}", f"{r['coverage90']:.3f}", *warning_cells(r)]
        for r in res["rows"]
    ]  # fmt: skip
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
    for r in res["rows"]:
        if x := r.get("refitted"):  # a row refitted alone after a change of the defaults, merged into the run
            notes.append(
                f"The {r['method']} row at n = {r['n']} was refitted alone on {x['date'][:10]} at the defaults of "
                f"that day ({x['command']}, on {x['cpu_model']}, load average {x['load_before']:.1f} before) and "
                "replaces the fit of the run above; the other rows are that run's."
                + (
                    f" The fit it replaced ({x['before']['date'][:10]}, {x['before']['cpu_model']}): test "
                    f"log-likelihood {x['before']['log_lik']:.3f} in {x['before']['fit_s']:.0f} s, "
                    f"{x['before']['passes_per_chain']:.0f} passes a chain."
                    if "before" in x
                    else ""
                )
            )
    if was_quick(res):
        notes.append("Quick run: short chains and few iterations; not the documented numbers.")
    notes += [f"Skipped {k}: {v}" for k, v in res.get("skipped", {}).items()]
    title = "Fits against n: skgibbs, VI and the tools users already have"
    table = ("Friedman #1 at growing n", header, table)
    return [Page(FITS, title, [table], notes, figure=partial(_figure, res["rows"]))]
