"""Designs of paper 004 §4.1 for the criteria tests."""

import numpy as np
import pytest


def _spectral_design(n, p, decay, seed):
    """X = U diag(s) V' with random orthonormal U (n x n), V (p x n) and s_i = sqrt(n) i^(-decay)."""
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.normal(size=(n, n)))
    V, _ = np.linalg.qr(rng.normal(size=(p, n)))
    s = np.sqrt(n) * np.arange(1, n + 1, dtype=float) ** (-decay)
    return (U * s) @ V.T


@pytest.fixture
def spectral_design():
    """``f(n, p, decay, seed) -> X`` with singular values ``sqrt(n) i^(-decay)`` (paper 004 §4.1)."""
    return _spectral_design
