"""Fit sklearn-contrib-bde on one split, in bde's own environment (run by :mod:`benchmarks.common.bde_peer`)::

    <bde python> _bde_worker.py fit IN.npz OUT.npz
    <bde python> _bde_worker.py airfoil      # prints the path of bde's airfoil.csv

It imports only NumPy, JAX and bde (never skgibbs or torch), JAX on one CPU device with one thread.
``IN.npz`` holds ``X_train``, ``y_train``, ``X_test``, ``task`` ("regression" or "classification") and
``settings`` (JSON: the estimator's keyword arguments). Regression standardises ``y`` on the training part
(as bde's README does by hand) and writes the mixture's components on ``y``'s scale, ``mu`` and ``sd``
(members x draws, n_test; ``sd`` is bde's ``softplus(second output) + 1e-6``), and bde's own Monte Carlo 5%
and 95% quantiles ``bde_lo`` and ``bde_hi``; classification writes ``proba`` (averaged over members and
draws) and ``classes``. Both write ``cpu_s`` (``time.process_time`` of the fit), ``wall_s`` and
``versions`` (of bde, JAX and BlackJAX).
"""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import json
import sys
import time

import numpy as np


def _timed_fit(model, x, y):
    """Fit ``model``: its CPU and wall time."""
    cpu, wall = time.process_time(), time.perf_counter()
    model.fit(x=x, y=y)
    return {"cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall}


def _fit_regression(data, settings):
    from bde import BdeRegressor
    from bde.loss import GaussianNLL

    y = data["y_train"].astype(float)
    loc, scale = y.mean(), y.std() + 1e-8  # the scaling of bde's README example
    model = BdeRegressor(loss=GaussianNLL(), **settings)
    times = _timed_fit(model, data["X_train"], ((y - loc) / scale)[:, None])
    raw = np.asarray(model.predict(data["X_test"], raw=True), dtype=float)  # (E, T, n, 2)
    raw = raw.reshape(-1, *raw.shape[2:])
    sd = scale * (np.logaddexp(0.0, raw[..., 1]) + 1e-6)  # softplus, as bde's evaluator and likelihood
    _, q = model.predict(data["X_test"], credible_intervals=[0.05, 0.95])
    q = loc + scale * np.asarray(q, dtype=float)
    return {"mu": loc + scale * raw[..., 0], "sd": sd, "bde_lo": q[0], "bde_hi": q[1], **times}


def _fit_classification(data, settings):
    from bde import BdeClassifier
    from bde.loss import CategoricalCrossEntropy

    model = BdeClassifier(loss=CategoricalCrossEntropy(), **settings)
    times = _timed_fit(model, data["X_train"], data["y_train"])
    proba = np.asarray(model.predict_proba(data["X_test"]), dtype=float)
    return {"proba": proba, "classes": np.asarray(model.classes_), **times}


def main(argv):
    if argv[:1] == ["airfoil"]:
        from importlib.resources import files

        print(files("bde.data").joinpath("airfoil.csv"))
        return
    from importlib.metadata import version

    _, source, target = argv
    with np.load(source) as f:
        data = {k: f[k] for k in f.files}
    fit = _fit_regression if str(data["task"]) == "regression" else _fit_classification
    versions = ", ".join(f"{name} {version(name)}" for name in ("sklearn-contrib-bde", "jax", "blackjax"))
    np.savez(target, **fit(data, json.loads(str(data["settings"]))), versions=versions)


if __name__ == "__main__":
    main(sys.argv[1:])
