"""Functional variance, WAIC and the Gaussian log-likelihood (paper 004)."""

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import norm

from skgibbs.criteria import WAICResult, functional_variance, gaussian_log_likelihood, waic


def test_gaussian_log_likelihood_matches_scipy():
    rng = np.random.default_rng(0)
    y, F = rng.normal(size=5), rng.normal(size=(7, 5))
    L = gaussian_log_likelihood(y, F, 0.3)
    assert L.shape == (7, 5)
    np.testing.assert_allclose(L, norm.logpdf(y[None, :], loc=F, scale=np.sqrt(0.3)))


def test_functional_variance_uses_divisor_s():
    L = np.random.default_rng(1).normal(size=(9, 4))
    assert functional_variance(L) == pytest.approx(np.sum(np.var(L, axis=0, ddof=0)))
    assert functional_variance(np.ones((5, 3))) == 0.0


def test_functional_variance_gaussian_ground_truth():
    # f_i ~ N(m_i, v_i) independently: log N(y_i; f_i, s2) = -(y_i - f_i)^2 / (2 s2) + const,
    # and Var[(y - f)^2] = 2 v^2 + 4 (y - m)^2 v for y - f ~ N(y - m, v)
    S, s2 = 40000, 0.5
    rng = np.random.default_rng(2)
    m, v, y = rng.normal(size=6), rng.uniform(0.05, 0.5, size=6), rng.normal(size=6)
    F = m + np.sqrt(v) * rng.normal(size=(S, 6))
    L = gaussian_log_likelihood(y, F, s2)
    exact = np.sum((2 * v**2 + 4 * (y - m) ** 2 * v) / (4 * s2**2))
    # Monte Carlo sd of each sample variance: sd of the squared deviations / sqrt(S)
    sd = np.sqrt(np.sum(np.var((L - L.mean(0)) ** 2, axis=0) / S))
    assert abs(functional_variance(L) - exact) < 4 * sd


def test_waic_by_hand():
    L = np.random.default_rng(3).normal(size=(50, 8)) - 1.0
    res = waic(L)
    assert isinstance(res, WAICResult)
    lppd = logsumexp(L, axis=0) - np.log(50)
    p = np.var(L, axis=0, ddof=1)
    np.testing.assert_allclose(res.elpd_pointwise, lppd - p)
    np.testing.assert_allclose(res.p_pointwise, p)
    assert res.elpd_waic == pytest.approx(np.sum(lppd - p))
    assert res.p_waic == pytest.approx(np.sum(p))
    assert res.waic == pytest.approx(-2 * res.elpd_waic)


def test_waic_single_draw_has_no_penalty():
    L = np.array([[-1.0, -2.0]])
    res = waic(L)
    assert res.p_waic == 0.0 and res.elpd_waic == pytest.approx(-3.0)
