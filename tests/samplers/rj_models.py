"""The enumerable model both reversible-jump kernels are tested on: a linear model with two inputs and a
bias, whose seven active sets have posterior probabilities in closed form (Gaussian weights) or by
quadrature (uniform weights)."""

import itertools
import math

import numpy as np

SETS = [act for act in itertools.product([0, 1], repeat=3) if any(act)]


def data(seed=3, n=12):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = 0.25 * X[:, 0] + 0.15 + 0.5 * rng.normal(size=n)
    return X, y


def log_evidence_gaussian(A, y, c, std):
    """log of int exp(-c |y - A t|^2) prod_j N(t_j; 0, std^2) dt (closed form)."""
    k = A.shape[1]
    P = 2 * c * A.T @ A + np.eye(k) / std**2
    m = np.linalg.solve(P, 2 * c * A.T @ y)
    return -k * math.log(std) - 0.5 * np.linalg.slogdet(P)[1] + 0.5 * m @ P @ m - c * y @ y


def log_evidence_box(A, y, c, bound, n_grid=161):
    """log of int_{[-B, B]^k} exp(-c |y - A t|^2) (2B)^(-k) dt by the midpoint rule."""
    k = A.shape[1]
    P = 2 * c * A.T @ A
    centre = np.linalg.solve(P, 2 * c * A.T @ y)
    sd = np.sqrt(np.diag(np.linalg.inv(P)))
    axes, widths = [], []
    for j in range(k):
        lo, hi = max(-bound, centre[j] - 9 * sd[j]), min(bound, centre[j] + 9 * sd[j])
        edges = np.linspace(lo, hi, n_grid + 1)
        axes.append(0.5 * (edges[1:] + edges[:-1]))
        widths.append(edges[1] - edges[0])
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, k)
    log_f = -c * ((y[None, :] - grid @ A.T) ** 2).sum(1)
    top = log_f.max()
    return top + math.log(np.exp(log_f - top).sum() * np.prod(widths)) - k * math.log(2 * bound)


def exact_model_probabilities(X, y, c, sparsity, log_evidence):
    A_full = np.c_[X, np.ones(len(y))]
    logs = {}
    for act in SETS:
        k = sum(act)
        log_size = -k * math.log(sparsity) - math.log(math.comb(3, k))
        logs[act] = log_size + log_evidence(A_full[:, np.array(act, bool)], y, c)
    top = max(logs.values())
    total = sum(math.exp(v - top) for v in logs.values())
    return np.array([math.exp(logs[act] - top) / total for act in SETS])
