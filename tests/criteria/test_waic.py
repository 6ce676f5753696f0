"""Functional variance, WAIC and the Gaussian log-likelihood (paper 004)."""

import warnings

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
    p = np.var(L, axis=0)  # divisor S, as ArviZ
    np.testing.assert_allclose(res.elpd_pointwise, lppd - p)
    np.testing.assert_allclose(res.p_pointwise, p)
    assert res.elpd_waic == pytest.approx(np.sum(lppd - p))
    assert res.p_waic == pytest.approx(np.sum(p))
    assert res.waic == pytest.approx(-2 * res.elpd_waic)
    assert res.p_waic == pytest.approx(functional_variance(L))
    assert res.se == pytest.approx(np.sqrt(8 * np.var(lppd - p)))


def test_tempered_waic_scales_the_penalty():
    L = np.random.default_rng(5).normal(size=(30, 6))
    plain, hot = waic(L), waic(L, beta=0.25)
    assert hot.p_waic == pytest.approx(plain.p_waic)  # p_waic stays the functional variance
    assert hot.elpd_waic == pytest.approx(plain.elpd_waic + 0.75 * plain.p_waic)
    with pytest.raises(ValueError, match="beta"):
        waic(L, beta=0.0)


def test_waic_single_draw_has_no_penalty():
    L = np.array([[-1.0, -2.0]])
    res = waic(L)
    assert res.p_waic == 0.0 and res.elpd_waic == pytest.approx(-3.0)


def test_langevin_waic_by_hand():
    from skgibbs.criteria import langevin_waic

    y, pred, v = np.array([1.0, 2.0, 0.0]), np.array([0.5, 2.5, 1.0]), np.array([0.1, 0.2, 0.3])
    res = langevin_waic(y, pred, v, 2.0)
    assert res.train_loss == pytest.approx(np.mean((y - pred) ** 2) / 4.0)
    assert res.functional_variance == pytest.approx(0.6)
    assert res.waic == pytest.approx(res.train_loss + 0.2)


def test_waic_equals_arviz():
    az = pytest.importorskip("arviz")
    rng = np.random.default_rng(4)
    L = rng.normal(size=(2, 300, 12)) - 2.0  # (chain, draw, observation)
    ours = waic(L.reshape(-1, 12))
    if int(az.__version__.split(".")[0]) >= 1:
        pytest.skip("ArviZ 1.x has no waic(); see test_to_arviz for the 1.x path")
    idata = az.from_dict(posterior={"a": rng.normal(size=(2, 300))}, log_likelihood={"y": L})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # ArviZ's "WAIC starting to fail" note
        ref = az.waic(idata, pointwise=True)
    assert ours.elpd_waic == pytest.approx(float(ref.elpd_waic), rel=1e-10)
    assert ours.p_waic == pytest.approx(float(ref.p_waic), rel=1e-10)
    assert ours.se == pytest.approx(float(ref.se), rel=1e-10)
    np.testing.assert_allclose(ours.elpd_pointwise, np.asarray(ref.waic_i).ravel(), rtol=1e-10)
