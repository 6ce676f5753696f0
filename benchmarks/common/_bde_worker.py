"""Fit sklearn-contrib-bde on one split, in bde's own environment.

Run by :mod:`benchmarks.common.bde_peer` with the interpreter of the
environment where ``sklearn-contrib-bde`` is installed::

    <bde python> _bde_worker.py fit IN.npz OUT.npz
    <bde python> _bde_worker.py airfoil      # prints the path of bde's airfoil.csv

It imports only NumPy, JAX and bde (never skgibbs or torch). ``IN.npz``
holds ``X_train``, ``y_train``, ``X_test``, ``task`` ("regression" or
"classification") and ``settings`` (JSON: the estimator's keyword arguments).
JAX runs on one CPU device with one thread.

Regression: ``y`` is standardised with the training part's mean and standard
deviation before the fit (bde does not scale ``y`` itself; its README does
this by hand), and ``OUT.npz`` holds the mixture's components on the
original scale of ``y``: ``mu`` and ``sd`` of shape (members x draws, n_test),
``sd`` being ``softplus(second output) + 1e-6`` (bde's own scale map) times
the standard deviation of ``y``. It also holds bde's own 5% and 95%
predictive quantiles (``predict(credible_intervals=...)``, Monte Carlo
draws from the mixture), rescaled. Classification: ``proba``, the class
probabilities averaged over members and draws (``predict_proba``), and
``classes``. Both: ``cpu_s`` (``time.process_time`` of the fit), ``wall_s``
and ``versions`` (of bde, JAX and BlackJAX).
"""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import json
import sys
import time

import numpy as np


def _airfoil_path():
    from importlib.resources import files

    return str(files("bde.data").joinpath("airfoil.csv"))


def _fit_regression(data, settings):
    from bde import BdeRegressor
    from bde.loss import GaussianNLL

    y = data["y_train"].astype(float)
    loc, scale = y.mean(), y.std() + 1e-8  # the scaling of bde's README example
    model = BdeRegressor(loss=GaussianNLL(), **settings)
    cpu, wall = time.process_time(), time.perf_counter()
    model.fit(x=data["X_train"], y=((y - loc) / scale)[:, None])
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    raw = np.asarray(model.predict(data["X_test"], raw=True), dtype=float)  # (E, T, n, 2)
    raw = raw.reshape(-1, *raw.shape[2:])
    mu = loc + scale * raw[..., 0]
    sd = scale * (np.logaddexp(0.0, raw[..., 1]) + 1e-6)  # softplus, as bde's evaluator and likelihood
    _, q = model.predict(data["X_test"], credible_intervals=[0.05, 0.95])
    q = loc + scale * np.asarray(q, dtype=float)
    return {"mu": mu, "sd": sd, "bde_lo": q[0], "bde_hi": q[1], "cpu_s": cpu, "wall_s": wall}


def _fit_classification(data, settings):
    from bde import BdeClassifier
    from bde.loss import CategoricalCrossEntropy

    model = BdeClassifier(loss=CategoricalCrossEntropy(), **settings)
    cpu, wall = time.process_time(), time.perf_counter()
    model.fit(x=data["X_train"], y=data["y_train"])
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    proba = np.asarray(model.predict_proba(data["X_test"]), dtype=float)
    return {"proba": proba, "classes": np.asarray(model.classes_), "cpu_s": cpu, "wall_s": wall}


def _versions():
    from importlib.metadata import version

    return ", ".join(f"{name} {version(name)}" for name in ("sklearn-contrib-bde", "jax", "blackjax"))


def main(argv):
    if argv[:1] == ["airfoil"]:
        print(_airfoil_path())
        return
    _, source, target = argv
    with np.load(source) as f:
        data = {k: f[k] for k in f.files}
    settings = json.loads(str(data["settings"]))
    fit = _fit_regression if str(data["task"]) == "regression" else _fit_classification
    np.savez(target, **fit(data, settings), versions=_versions())


if __name__ == "__main__":
    main(sys.argv[1:])
