"""Paper 002 §5 Fig. 1 analogue: VI against the cooling tau (part ``fig1``).

``GibbsMLPClassifier(sampler=MeanFieldVI(kl_weight="auto", tau=tau n / N), hidden_layer_sizes=(100, 100))`` with
50 draws of ``q`` (the paper's ``m = 50``) on digits (stratified 75/25 splits, seeds 0..4), for ``tau`` from
1e-4 to 1 and for ``kl_weight=1.0`` (the classical ELBO, the paper's red line): test accuracy, NLL, ECE (15
equal bins), mean confidence and fit time. The same grid for ``GibbsMLPRegressor((100, 100),
sampler="vi", temperature="plug-in")`` (both pinned: the defaults when this part was first run) on diabetes
(random 90/10 splits): the test
log-likelihood of the posterior predictive mixture, the RMSE and the coverage of ``predict_interval(X, 0.9)``.
Both use MeanFieldVI's default parametrization ("standard": with ``kl_weight="auto"`` only the hidden layers'
KL is cooled, App. D).
"""

import itertools
import math
import time

import numpy as np
from scipy.special import logsumexp
from sklearn.model_selection import train_test_split

from skgibbs import GibbsMLPRegressor

from ... import pick_sizes
from ...common.environment import recorded
from ...common.stats import mean_se
from .shared import FIT_COLUMNS, QUICK_FIT, cells, errorbar, figure, fit_digits, fit_timed, fitted, load
from .shared import mean_cell, n_seeds, se_cell, select, vi_estimator

STEM = "vi_fig1"
HEADING = "Paper 002 Fig. 1 analogue: VI against the cooling tau"
DOC_FIGURE = None

#: the tau grid, the seeds (splits) per tau (``--seeds`` overrides), the estimators' settings over the part's
SIZES = {
    "full": {"taus": (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0), "seeds": 5, "fit": {}},
    "quick": {"taus": (1e-2, 1.0), "seeds": 1, "fit": QUICK_FIT},
}
COLORS = {"digits": "C0", "diabetes": "C2"}  # of the data sets' curves
WIDTH = 100  # N, the neurons of each hidden layer
ETA = {"eta (hidden layers)": ("eta", mean_cell(".3g"))}
#: per data set, the table's title and its columns after tau: header -> (field, cell over the seeds)
TABLES = {
    "digits": (
        "Digits: GibbsMLPClassifier(sampler='vi', (100, 100))",
        {
            **ETA,
            "accuracy": ("accuracy", se_cell()),
            "NLL": ("nll", se_cell()),
            "ECE": ("ece", se_cell()),
            "mean confidence": ("confidence", se_cell()),
            **FIT_COLUMNS,
        },
    ),
    "diabetes": (
        "Diabetes: GibbsMLPRegressor(sampler='vi')",
        {
            **ETA,
            "test log-lik": ("log_lik", se_cell()),
            "RMSE": ("rmse", se_cell(".2f")),
            "90% coverage": ("coverage", se_cell()),
            "90% width": ("width", se_cell(".1f")),
            **FIT_COLUMNS,
        },
    ),
}


def cooled(vi_params, n_train):
    """A row's settings of MeanFieldVI: the paper's ``eta = tau n / N`` on the hidden layers is ``kl_weight="auto"``
    (``eta = tau``, App. D's weighting) at ``tau n / N``; the classical ELBO's row as it is."""
    if "tau" not in vi_params:
        return vi_params
    return {**vi_params, "tau": vi_params["tau"] * n_train / WIDTH}


def fig1_classifier(label, vi_params, seed, fit):
    n = len(load("digits")[1])
    n_train = n - math.ceil(0.25 * n)  # the size of fit_digits' training split
    est, scores, record = fit_digits((WIDTH, WIDTH), cooled(vi_params, n_train), seed, fit)
    return dict(config=label, seed=seed, **scores, eta=float(est.kl_weight_), kl=float(est.kl_), **record)


def fig1_regressor(label, vi_params, seed, fit):
    X, y = load("diabetes")
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.1, random_state=seed)
    est = vi_estimator(
        GibbsMLPRegressor,
        (WIDTH, WIDTH),  # the default network when this part was first run
        vi_params=cooled(vi_params, len(y_train)),
        fit=fit,
        temperature="plug-in",  # what "auto" was when this part was first run
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
        **fitted(est, seconds, messages),
    )


def run(args):
    size = pick_sizes(SIZES, args.quick)
    configs = {f"{tau:g}": {"kl_weight": "auto", "tau": tau} for tau in size.taus}  # eta = tau n / N: cooled
    configs["eta=1"] = {"kl_weight": 1.0}  # the classical ELBO, last
    seeds = range(args.seeds or size.seeds)
    runs, start = {"digits": [], "diabetes": []}, time.perf_counter()
    for model, runner in (("digits", fig1_classifier), ("diabetes", fig1_regressor)):
        for (label, vi_params), seed in itertools.product(configs.items(), seeds):
            runs[model].append(runner(label, vi_params, seed, size.fit))
            print(f"fig1 {model} tau={label} seed {seed}: {runs[model][-1]['fit_s']:.0f} s", flush=True)
    return {STEM: {"configs": list(configs), "runs": runs, "runtime_s": time.perf_counter() - start}}


def render(result):
    """``(tables, notes)`` of the page, from the stored runs."""
    configs, runs, runtime = result["configs"], result["runs"], result["runtime_s"]
    seeds, quick = range(n_seeds(runs["digits"])), recorded(result, "quick", False)
    tables = []
    for model, (title, columns) in TABLES.items():
        rows = [[label, *cells(runs[model], columns.values(), config=label)] for label in configs]
        rows[-1][0] = "eta = 1 (classical ELBO)"
        tables.append((title, ["tau", *columns], rows))
    taus = list(configs)[:-1]

    def best(model, field, sign):
        means = {label: np.mean(select(runs[model], field, config=label)) for label in taus}
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
        "MeanFieldVI(kl_weight='auto', tau=tau n / 100) for the tau of the row (eta = tau n / 100 on the hidden "
        "layers, the output layer's KL unweighted: parametrization='standard', App. D) or "
        "MeanFieldVI(kl_weight=1.0) (last row, the paper's red line). Diabetes: 90/10 splits with "
        "random_state = seed, GibbsMLPRegressor((100, 100), sampler=MeanFieldVI(...), "
        "temperature='plug-in', random_state=seed) (the plug-in temperature was what 'auto' resolved to "
        "when this part was first run), its defaults otherwise (700 draws); test log-lik = mean_i log "
        "mean_s N(y_i; f_s(x_i), noise_variance\\_), RMSE of predict, the coverage and mean width of "
        "predict_interval(X, 0.9). "
        f"{'Quick run: ' + str(QUICK_FIT) + '. ' if quick else ''}Mean ± s.e. over {len(seeds)} "
        f"seed(s); {n_warned} fit(s) raised a warning (see the JSON). Runtime {runtime:.0f} s.",
        f"Best tau (mean over seeds): digits NLL {best_tau['digits_nll']}, ECE {best_tau['digits_ece']}, "
        f"accuracy {best_tau['digits_accuracy']}; diabetes log-likelihood {best_tau['diabetes_log_lik']}, "
        f"RMSE {best_tau['diabetes_rmse']}.",
        "Paper (Fig. 1, linear BNN on MNIST, described in its text): for large tau the accuracy falls and "
        "the NLL rises (q stays near the prior, underfitting) with a low ECE and low confidence; for small "
        "tau high accuracy, low NLL, high confidence and a low ECE; in between the confidence falls faster "
        "than the accuracy and the ECE rises.",
    ]
    return tables, notes


def plot(result, path):
    runs, configs = result["runs"], result["configs"]
    taus = [c for c in configs if c != "eta=1"]
    panels = [  # (data set, field, title)
        ("digits", "accuracy", "digits: accuracy"),
        ("digits", "nll", "digits: NLL"),
        ("digits", "ece", "digits: ECE"),
        ("digits", "confidence", "digits: mean confidence"),
        ("diabetes", "log_lik", "diabetes: test log-likelihood"),
        ("diabetes", "rmse", "diabetes: RMSE"),
        ("diabetes", "coverage", "diabetes: 90% coverage"),
        ("both", "fit_s", "fit seconds"),
    ]
    with figure(path, 2, 4, figsize=(16, 7)) as (fig, axes):
        for ax, (model, field, title) in zip(axes.ravel(), panels):
            for m in ["digits", "diabetes"] if model == "both" else [model]:
                groups = [select(runs[m], field, config=t) for t in taus]
                label, color = m if model == "both" else "eta = tau n / N", COLORS[m]
                errorbar(ax, [float(t) for t in taus], groups, marker="o", color=color, label=label)
                ref, ref_se = mean_se(select(runs[m], field, config="eta=1"))
                ref_label = "eta = 1" + (f" ({m})" if model == "both" else "")
                ax.axhline(ref, color="red", lw=1.2, ls="-" if m == "digits" else "--", label=ref_label)
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
