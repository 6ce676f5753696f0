"""Gaussian targets with exact autoregressive chains: every asymptotic variance in closed form."""

import numpy as np
import pytest


class GaussianAR1:
    """``X_{k+1} = mu + a (X_k - mu) + sqrt(1 - a^2) L xi_k``, stationary ``N(mu, Sigma)``, ``Sigma = L L^T``.

    Started in the stationary law, so every ``X_k ~ N(mu, Sigma)`` exactly;
    ``Cov(X_0, X_s) = a^s Sigma``.
    """

    def __init__(self, mean, cov, a):
        self.mean = np.asarray(mean, dtype=float)
        self.cov = np.asarray(cov, dtype=float)
        self.precision = np.linalg.inv(self.cov)
        self.chol = np.linalg.cholesky(self.cov)
        self.a = float(a)

    def score(self, X):
        """``grad log pi(x) = -Sigma^{-1} (x - mu)``."""
        return -(X - self.mean) @ self.precision

    def chain(self, n, seed):
        rng = np.random.default_rng(seed)
        d = len(self.mean)
        noise = rng.normal(size=(n, d)) @ self.chol.T
        out = np.empty((n, d))
        cur = noise[0]  # stationary start (centred)
        step = np.sqrt(1.0 - self.a**2)
        for k in range(n):
            if k:
                cur = self.a * cur + step * noise[k]
            out[k] = cur
        return out + self.mean

    def asymptotic_variance_linear(self, v):
        """``V_inf(v . x) = v^T Sigma v (1 + a) / (1 - a)``."""
        v = np.asarray(v, dtype=float)
        return float(v @ self.cov @ v) * (1 + self.a) / (1 - self.a)

    def asymptotic_variance_square(self, i):
        """``V_inf(x_i^2)`` from ``Cov(x_0^2, x_s^2) = 2 S^2 a^(2s) + 4 m^2 S a^s``.

        ``S = Sigma_ii`` and ``m = mu_i``.
        """
        S, m, a = self.cov[i, i], self.mean[i], self.a
        return 2 * S**2 * (1 + a**2) / (1 - a**2) + 4 * m**2 * S * (1 + a) / (1 - a)


@pytest.fixture(scope="session")
def gaussian_ar1():
    """A correlated 2-D Gaussian target and its AR(1) chain with a = 0.5."""
    return GaussianAR1([1.0, -0.5], [[1.0, 0.6], [0.6, 2.0]], 0.5)
