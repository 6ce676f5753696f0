"""sklearn-contrib-bde (MILE) as a peer of the uncertainty and classification benchmarks.

Microcanonical Langevin Ensembles (Sommer et al., ICLR 2025): a deep ensemble whose members, once trained,
are continued by MCLMC; the predictive is the mixture over members and draws. bde brings JAX and BlackJAX
1.2.2, which have no place in skgibbs's environment: it is never imported here, each fit runs
``_bde_worker.py`` in a subprocess with the Python of bde's environment (``$SKGIBBS_BDE_PYTHON``, else
``.venv-bde/bin/python``: :data:`INSTALL`), the arrays passed through a temporary ``.npz`` file, on one
thread (one XLA CPU device); the fit's CPU time is its ``time.process_time``.

Settings: :data:`REGRESSION` is bde's README regression example (eight members of 16-16 ReLU networks with
a mean and a softplus scale output, early stopping with patience 10 on 15% of the training part, 5000
warm-up steps, 2000 draws per member thinned by 2), ``y`` standardised on the training part as the README
does; :data:`CLASSIFICATION` the same sampling with the classification example's 1000 epochs.

Scoring (:func:`score_mixture`): the test log-likelihood of the mixture on the original scale, ``log
mean_m N(y; mu_m, sd_m)``, and its 5% and 95% quantiles solved on its CDF. The log-likelihood is also taken
with every ``sd_m`` floored at :data:`SD_FLOOR` times sd(y_train): where ``y`` takes a few integer values
the scales of some components collapse onto them, and the raw mixture gains nats that say nothing about
prediction.
"""

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.special import logsumexp, ndtr
from sklearn.base import BaseEstimator, ClassifierMixin

__all__ = [
    "CLASSIFICATION", "ENV_VAR", "INSTALL", "QUICK", "REGRESSION", "SD_FLOOR", "BdePeerClassifier",
    "available", "bde_python", "fit_classifier", "fit_regressor", "load_airfoil", "missing",
    "mixture_log_density", "mixture_quantiles", "score_mixture",
]  # fmt: skip

ENV_VAR = "SKGIBBS_BDE_PYTHON"
ROOT = Path(__file__).resolve().parents[2]
DEFAULT_PYTHON = ROOT / ".venv-bde" / "bin" / "python"
WORKER = Path(__file__).with_name("_bde_worker.py")
INSTALL = (
    "python -m venv .venv-bde && .venv-bde/bin/pip install sklearn-contrib-bde "
    f"(at the repository root; or name another environment's Python in {ENV_VAR})"
)
#: BdeRegressor's settings: bde's README regression example
REGRESSION = {
    "n_members": 8, "hidden_layers": [16, 16], "activation": "relu", "epochs": 200, "validation_split": 0.15,
    "lr": 1e-3, "weight_decay": 1e-4, "patience": 10, "warmup_steps": 5000, "n_samples": 2000,
    "n_thinning": 2,
}  # fmt: skip
#: BdeClassifier's settings: the sampling of the regression example, the classification example's epochs
CLASSIFICATION = {**REGRESSION, "epochs": 1000}
#: a quick run's settings (seconds): two members, a few epochs and steps
QUICK = {"n_members": 2, "epochs": 5, "warmup_steps": 20, "n_samples": 20, "n_thinning": 2}
#: the floor of the components' sd in the floored log-likelihood, as a fraction of sd(y_train)
SD_FLOOR = 0.05
THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
XLA_ONE_THREAD = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


def bde_python():
    """The interpreter of bde's environment: ``$SKGIBBS_BDE_PYTHON``, else ``.venv-bde/bin/python``."""
    return Path(os.environ.get(ENV_VAR) or DEFAULT_PYTHON)


def available():
    """Whether bde's environment exists (its Python is a file)."""
    return bde_python().is_file()


def missing():
    """A message when bde's environment is missing, else None."""
    if available():
        return None
    return f"the environment of sklearn-contrib-bde is missing ({bde_python()}): {INSTALL}"


def _run_worker(*args):
    env = {**os.environ, **dict.fromkeys(THREADS, "1"), "JAX_PLATFORMS": "cpu"}
    env.setdefault("XLA_FLAGS", XLA_ONE_THREAD)
    command = [str(bde_python()), str(WORKER), *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"the bde worker failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return done.stdout


def _fit(task, X, y, X_test, settings):
    """Run the worker on one split: its output arrays and times, and the wall time of the subprocess."""
    with tempfile.TemporaryDirectory(prefix="skgibbs-bde-") as tmp:
        source, target = Path(tmp, "in.npz"), Path(tmp, "out.npz")
        arrays = {
            "X_train": np.asarray(X, float),
            "y_train": np.asarray(y),
            "X_test": np.asarray(X_test, float),
        }
        np.savez(source, **arrays, task=task, settings=json.dumps(settings))
        start = time.perf_counter()
        _run_worker("fit", str(source), str(target))
        seconds = time.perf_counter() - start
        with np.load(target) as f:
            out = {k: f[k] for k in f.files}
    times = {"cpu_s": float(out["cpu_s"]), "wall_s": float(out["wall_s"]), "worker_s": seconds}
    return out, {**times, "bde_versions": str(out["versions"])}


# ---------------------------------------------------------------- scoring (pure NumPy)
def mixture_log_density(y, mu, sd, floor=0.0):
    """``log mean_m N(y; mu_m, max(sd_m, floor))`` per point: ``y`` (n,), ``mu`` and ``sd`` (M, n), one
    component per row."""
    sd = np.maximum(sd, floor)
    z = (np.asarray(y)[None, :] - mu) / sd
    log_pdf = -0.5 * z**2 - np.log(sd) - 0.5 * np.log(2 * np.pi)
    return logsumexp(log_pdf, axis=0) - np.log(mu.shape[0])


def mixture_quantiles(mu, sd, q, iterations=60):
    """The ``q`` quantile of each point's mixture (``mu``, ``sd``: (M, n)), by bisection on its CDF."""
    lo, hi = (mu - 10 * sd).min(0), (mu + 10 * sd).max(0)
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        below = ndtr((mid[None, :] - mu) / sd).mean(0) < q
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return 0.5 * (lo + hi)


def score_mixture(mu, sd, y, y_train_sd, level=0.9):
    """The mixture's mean, central ``level`` interval (``lo``, ``hi``) and log-likelihood per point on ``y``,
    and ``ll_floored``: the mean log-likelihood with each sd floored at ``SD_FLOOR * y_train_sd``."""
    tail = (1 - level) / 2
    floored = mixture_log_density(y, mu, sd, SD_FLOOR * y_train_sd)
    return {
        "mean": mu.mean(0), "lo": mixture_quantiles(mu, sd, tail), "hi": mixture_quantiles(mu, sd, 1 - tail),
        "loglik": mixture_log_density(y, mu, sd), "ll_floored": float(floored.mean()),
    }  # fmt: skip


# ---------------------------------------------------------------- fits
def fit_regressor(X, y, X_test, seed, settings=None):
    """Fit ``BdeRegressor`` on ``(X, y)``: ``predict(y_test)`` scores the prediction on ``X_test``
    (:func:`score_mixture`, with bde's own interval as ``bde_lo``/``bde_hi``); ``extras`` the fit's CPU and
    wall time, the worker's (start-up and prediction included), the floor and the versions."""
    out, times = _fit("regression", X, y, X_test, {**REGRESSION, **(settings or {}), "seed": int(seed)})
    y_sd = float(np.std(y))

    def predict(y_test):
        pred = score_mixture(out["mu"], out["sd"], y_test, y_sd)
        return {**pred, "bde_lo": out["bde_lo"], "bde_hi": out["bde_hi"]}

    return predict, {**times, "sd_floor": SD_FLOOR}


def fit_classifier(X, y, X_test, seed, settings=None):
    """Fit ``BdeClassifier``; the test class probabilities (columns in ``classes``) and the times."""
    out, times = _fit(
        "classification", X, y, X_test, {**CLASSIFICATION, **(settings or {}), "seed": int(seed)}
    )
    return out["proba"], out["classes"], times


class BdePeerClassifier(ClassifierMixin, BaseEstimator):
    """``BdeClassifier`` behind a classifier's methods. ``fit`` only keeps the data: the worker fits and
    predicts at once, on the first inputs ``predict_proba`` is given (kept for a second call on them); then
    ``times_`` holds the fit's CPU and wall time."""

    def __init__(self, *, random_state=0, settings=None):
        self.random_state = random_state
        self.settings = settings

    def fit(self, X, y):
        self.X_, self.y_ = np.asarray(X, float), np.asarray(y)
        self.classes_ = np.unique(self.y_)
        self._cache = None
        return self

    def predict_proba(self, X):
        X = np.asarray(X, float)
        if self._cache is None or not np.array_equal(self._cache[0], X):
            codes = np.searchsorted(self.classes_, self.y_)  # labels as 0..k-1: object arrays do not travel
            proba, classes, self.times_ = fit_classifier(self.X_, codes, X, self.random_state, self.settings)
            if not np.array_equal(classes, np.arange(len(self.classes_))):
                raise RuntimeError(
                    f"bde's classes {classes} are not the training labels 0..{len(self.classes_) - 1}"
                )
            self._cache = (X, proba)
        return self._cache[1]

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


def load_airfoil():
    """``(X, y)`` of NASA's airfoil self-noise table (UCI) that bde ships, read from bde's environment."""
    path = _run_worker("airfoil").strip()
    table = np.loadtxt(path, delimiter=",", skiprows=1)
    return table[:, :-1], table[:, -1]
