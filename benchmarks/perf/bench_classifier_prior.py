"""The scale of GibbsMLPClassifier's default prior: test log loss against the factor of 1 / sqrt(fan_in).

``prior_std="auto"`` gives each parameter of a layer with ``n_in`` inputs the prior
``N(0, (g / sqrt(n_in))^2)`` (regressors ``g = 1``, the classifier ``g = 2``). On breast cancer, Pima (MASS
``Pima.tr`` + ``Pima.te``) and Ripley's data (its own test set; the others a stratified quarter held out, seed
0), this fits ``GibbsMLPClassifier(prior="fixed", sampler="hmc", random_state=0)`` with ``prior_std = g *
MLPSpec(...).fan_in_std()`` for ``g`` in {1, sqrt 2, 2, 3}: test log loss, accuracy, mean confidence,
leapfrog steps per transition, R-hat and fit time (one torch thread), beside ``LogisticRegression`` and
``GaussianProcessClassifier``. Run ``python -m benchmarks run classifier_prior``.
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
#: data sets and factors (None: ``--datasets``, ``--factors``), the classifier's settings beyond the defaults
SIZES = {
    "full": {"datasets": None, "factors": None, "classifier": {}},
    "quick": {"datasets": ["breast_cancer"], "factors": ["1", "2"],
              "classifier": dict(hidden_layer_sizes=(8,), n_samples=10, burn_in=20, pretrain_iter=20)},
}  # fmt: skip
#: the prior whose scale is measured (``prior="auto"`` is ARD) and its sampler
FIXED = {"prior": "fixed", "sampler": "hmc"}
#: the table's columns after the data set and the model: a row's key, the header and the format
COLUMNS = (
    ("nll", "test NLL", ".3f"), ("accuracy", "accuracy", ".3f"), ("confidence", "mean confidence", ".3f"),
    ("leapfrog", "leapfrog steps", ".1f"), ("rhat", "R-hat", ".3f"), ("fit_s", "fit s", ".0f"),
)  # fmt: skip


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


def _scores(model, X, y):
    """Test log loss and accuracy of the fitted ``model``, and its predicted probabilities."""
    proba = model.predict_proba(X)
    nll, accuracy = log_loss(y, proba, labels=model.classes_), accuracy_score(y, model.predict(X))
    return {"nll": nll, "accuracy": accuracy}, proba


def _fit(name, split, label, settings):
    """The row of the classifier at the factor ``label``."""
    X_train, X_test, y_train, y_test = split
    clf = GibbsMLPClassifier(random_state=0, **FIXED, **settings)
    clf.set_params(prior_std=fan_in_prior_std(clf, X_train, y_train, FACTORS[label]))
    seconds = timed_fit(clf, X_train, y_train).seconds
    scores, proba = _scores(clf, X_test, y_test)
    steps = float(clf.sample_stats_["n_steps"].mean())
    print(f"{name} g={label}: NLL {scores['nll']:.3f}, {steps:.1f} steps, {seconds:.0f} s", flush=True)
    confidence = float(proba.max(1).mean())
    return {"dataset": name, "model": f"skgibbs g={label}", **scores, "confidence": confidence,
            "leapfrog": steps, "rhat": float(clf.rhat_), "fit_s": seconds}  # fmt: skip


def fit_all(datasets, factors, settings=None):
    rows = []
    loaded, _ = data.load_available(datasets, load)
    for name, (X_train, X_test, y_train, y_test) in loaded.items():
        gpc = GaussianProcessClassifier(1.0 * RBF(1.0), random_state=0)
        for label, model in {"logistic": LogisticRegression(max_iter=5000), "gpc": gpc}.items():
            model = make_pipeline(StandardScaler(), model).fit(X_train, y_train)
            rows.append({"dataset": name, "model": label, **_scores(model, X_test, y_test)[0]})
        rows += [_fit(name, loaded[name], label, settings or {}) for label in factors]
    return rows


def add_arguments(parser):
    parser.add_argument("--datasets", nargs="+", default=[",".join(DATASETS)], help=", ".join(DATASETS))
    parser.add_argument("--factors", nargs="+", default=[",".join(FACTORS)], help=", ".join(FACTORS))


def run(args):
    """Fit the classifier at each factor and the peers on each data set."""
    datasets = args.size.datasets or names(args.datasets, DATASETS, "data set")
    factors = args.size.factors or names(args.factors, tuple(FACTORS), "factor")
    start = time.perf_counter()
    rows = fit_all(datasets, factors, args.size.classifier)
    return {NAME: {"rows": rows, "runtime_s": time.perf_counter() - start}}


def _cell(value, spec):
    return "" if value is None or (isinstance(value, float) and np.isnan(value)) else format(value, spec)


def report(results):
    result = results[NAME]
    runtime = f"; runtime {result['runtime_s']:.0f} s" if "runtime_s" in result else ""  # not stored before
    header = ["data set", "model", *(title for _, title, _ in COLUMNS)]
    table = [[r["dataset"], r["model"], *(_cell(r.get(k), f) for k, _, f in COLUMNS)] for r in result["rows"]]
    notes = [
        "One split per data set (a quarter held out, stratified, seed 0; Ripley's data: its own 1000 test "
        "points). skgibbs g: GibbsMLPClassifier(prior='fixed', sampler='hmc', random_state=0), its other settings "
        "at the defaults of the run's date, with prior_std='auto' scaled "
        "by g (N(0, (g / sqrt(fan_in))^2) per parameter); leapfrog steps: mean per HMC transition. "
        "Peers: LogisticRegression(max_iter=5000) and GaussianProcessClassifier(1.0 * RBF(1.0)) on "
        f"standardized inputs. One torch thread{runtime}."
    ]
    return [Page(NAME, TITLE, [("Test log loss", header, table)], notes)]


TITLE = "The scale of the classifier's default prior"
OUTPUTS = (Output(NAME, TITLE),)
BENCHMARK = Benchmark(NAME, "performance", TITLE, OUTPUTS, run, report, add_arguments, sizes=SIZES)
