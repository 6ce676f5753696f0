"""The scale of GibbsMLPClassifier's default prior: test log loss against the factor of 1 / sqrt(fan_in).

``prior_std="auto"`` gives every weight and bias of a layer with ``n_in``
inputs the prior ``N(0, (g / sqrt(n_in))^2)``; the regressors use ``g = 1``,
the classifier ``g = 2``. This script measures what the factor changes: on
one stratified split of breast cancer, Pima (MASS ``Pima.tr`` + ``Pima.te``)
and Ripley's data (``synth.tr`` / ``synth.te``), a quarter held out with
``train_test_split(..., test_size=0.25, stratify=y, random_state=0)`` (Ripley:
its own test set), it fits ``GibbsMLPClassifier(prior="fixed",
sampler="hmc", random_state=0)`` (HMC on the fixed prior, the default
until 2026-11-27, under which the stored results were measured) at the
defaults otherwise with the factor ``g`` in {1, sqrt 2, 2, 3} and reports the test log
loss, accuracy, mean confidence, mean leapfrog steps per transition, R-hat
and the fit time, beside ``LogisticRegression`` and
``GaussianProcessClassifier`` on the same split. The factor enters as
``prior_std``, an array of one standard deviation per parameter:
``g * MLPSpec(n_features, hidden_layer_sizes, activation, n_outputs).fan_in_std()``
(at ``g = 2`` the draws are those of ``prior_std="auto"``). One torch
thread; about 15 minutes on one core.

Run ``python -m benchmarks run classifier_prior``; it writes
``benchmarks/results/classifier_prior.{json,rst}``.
"""

import time

import numpy as np
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skgibbs import GibbsMLPClassifier
from skgibbs.model import MLPSpec

from .. import Benchmark, Output
from ..common import data
from ..common.stats import timed_fit
from ..common.tables import names
from ..common.writer import Page

NAME = "classifier_prior"
FACTORS = {"1": 1.0, "sqrt2": 2**0.5, "2": 2.0, "3": 3.0}
DATASETS = ("breast_cancer", "pima", "synth")


QUICK = {"hidden_layer_sizes": (8,), "n_samples": 10, "burn_in": 20, "pretrain_iter": 20}
#: data sets and factors (None: ``--datasets``, ``--factors``) and the classifier's settings beyond the defaults
SIZES = {
    "full": {"datasets": None, "factors": None, "classifier": {}},
    "quick": {"datasets": ["breast_cancer"], "factors": ["1", "2"], "classifier": QUICK},
}
#: the prior whose scale is measured (``prior="auto"`` is ARD since 2026-11-27) and its sampler
FIXED = {"prior": "fixed", "sampler": "hmc"}


def load(name):
    """``(X_train, X_test, y_train, y_test)``: Ripley's own split, else a stratified quarter held out."""
    X, y, n_train = data.load(name)
    if n_train is not None:
        return X[:n_train], X[n_train:], y[:n_train], y[n_train:]
    return train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)


def fan_in_prior_std(clf, X, y, gain):
    """``prior_std`` of ``gain / sqrt(fan_in)`` per parameter of ``clf`` on ``(X, y)``, as ``samples_``."""
    layers = clf.hidden_layer_sizes
    layers = (layers,) if np.isscalar(layers) else tuple(layers)
    n_classes = len(np.unique(y))
    spec = MLPSpec(X.shape[1], layers, clf.activation, 1 if n_classes == 2 else n_classes)
    return gain * spec.fan_in_std().numpy()


def fit_all(datasets, factors, settings=None):
    rows = []
    loaded, _ = data.load_available(datasets, load)
    for name in loaded:
        X_train, X_test, y_train, y_test = loaded[name]
        peers = {
            "logistic": LogisticRegression(max_iter=5000),
            "gpc": GaussianProcessClassifier(1.0 * RBF(1.0), random_state=0),
        }
        for label, model in peers.items():
            model = make_pipeline(StandardScaler(), model).fit(X_train, y_train)
            proba = model.predict_proba(X_test)
            rows.append(
                dict(
                    dataset=name,
                    model=label,
                    nll=log_loss(y_test, proba, labels=model.classes_),
                    accuracy=accuracy_score(y_test, model.predict(X_test)),
                )
            )
        for label in factors:
            clf = GibbsMLPClassifier(random_state=0, **FIXED, **(settings or {}))
            clf.set_params(prior_std=fan_in_prior_std(clf, X_train, y_train, FACTORS[label]))
            seconds = timed_fit(clf, X_train, y_train).seconds
            proba = clf.predict_proba(X_test)
            rows.append(
                dict(
                    dataset=name,
                    model=f"skgibbs g={label}",
                    nll=log_loss(y_test, proba, labels=clf.classes_),
                    accuracy=accuracy_score(y_test, clf.predict(X_test)),
                    confidence=float(proba.max(1).mean()),
                    leapfrog=float(clf.sample_stats_["n_steps"].mean()),
                    rhat=float(clf.rhat_),
                    fit_s=seconds,
                )
            )
            print(
                f"{name} g={label}: NLL {rows[-1]['nll']:.3f}, {rows[-1]['leapfrog']:.1f} steps, "
                f"{seconds:.0f} s",
                flush=True,
            )
    return rows


def add_arguments(parser):
    parser.add_argument("--datasets", nargs="+", default=[",".join(DATASETS)], help=", ".join(DATASETS))
    parser.add_argument("--factors", nargs="+", default=[",".join(FACTORS)], help=", ".join(FACTORS))


def run(args):
    """Fit the classifier at each factor and the peers on each data set (quick: breast cancer, a tiny network)."""
    datasets = args.size.datasets or names(args.datasets, DATASETS, "data set")
    factors = args.size.factors or names(args.factors, tuple(FACTORS), "factor")
    start = time.perf_counter()
    rows = fit_all(datasets, factors, args.size.classifier)
    return {NAME: {"rows": rows, "runtime_s": time.perf_counter() - start}}


def report(results):
    """The test log-loss table."""
    result = results[NAME]
    rows = result["rows"]
    runtime = f"; runtime {result['runtime_s']:.0f} s" if "runtime_s" in result else ""  # not stored before

    def fmt(value, spec):
        return "" if value is None or (isinstance(value, float) and np.isnan(value)) else format(value, spec)

    header = [
        "data set",
        "model",
        "test NLL",
        "accuracy",
        "mean confidence",
        "leapfrog steps",
        "R-hat",
        "fit s",
    ]
    table = [
        [
            r["dataset"],
            r["model"],
            fmt(r["nll"], ".3f"),
            fmt(r["accuracy"], ".3f"),
            fmt(r.get("confidence"), ".3f"),
            fmt(r.get("leapfrog"), ".1f"),
            fmt(r.get("rhat"), ".3f"),
            fmt(r.get("fit_s"), ".0f"),
        ]
        for r in rows
    ]
    notes = [
        "One split per data set (a quarter held out, stratified, seed 0; Ripley's data: its own 1000 test "
        "points). skgibbs g: GibbsMLPClassifier(random_state=0) at the defaults with prior_std='auto' scaled "
        "by g (N(0, (g / sqrt(fan_in))^2) per parameter); leapfrog steps: mean per HMC transition. "
        "Peers: LogisticRegression(max_iter=5000) and GaussianProcessClassifier(1.0 * RBF(1.0)) on "
        f"standardized inputs. One torch thread{runtime}."
    ]
    return [Page(NAME, "The scale of the classifier's default prior", [("Test log loss", header, table)], notes)]


BENCHMARK = Benchmark(
    name=NAME,
    kind="performance",
    title="The scale of the classifier's default prior",
    outputs=(Output(NAME, "The scale of the classifier's default prior"),),
    run=run,
    report=report,
    add_arguments=add_arguments,
    sizes=SIZES,
)
