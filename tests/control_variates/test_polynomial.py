"""Polynomial Stein control variates (paper 003 Table 2 baseline): exact features, exact solutions."""

import warnings
from math import comb

import numpy as np
import pytest
import torch
from torch.func import hessian, jacrev, vmap

from skgibbs import ControlVariateWarning, PolynomialControlVariate
from skgibbs.control_variates import monomial_exponents, polynomial_stein_features
from skgibbs.diagnostics import spectral_variance


@pytest.mark.parametrize(("d", "k"), [(1, 1), (1, 4), (2, 3), (3, 2), (6, 4)])
def test_all_monomials_once(d, k):
    E = monomial_exponents(d, k)
    assert E.shape == (comb(d + k, k) - 1, d)
    assert len({tuple(r) for r in E}) == len(E)
    assert E.sum(1).min() == 1 and E.sum(1).max() == k and np.all(np.diff(E.sum(1)) >= 0)


def test_features_match_autograd():
    rng = np.random.default_rng(0)
    d, k = 3, 4
    E = monomial_exponents(d, k)
    X, S = rng.normal(size=(6, d)), rng.normal(size=(6, d))
    m, s = rng.normal(size=d), rng.uniform(0.5, 2.0, size=d)
    beta = rng.normal(size=len(E))
    Et, mt, st, bt = (torch.tensor(a, dtype=torch.float64) for a in (E, m, s, beta))

    def phi(x):
        return (torch.prod(((x - mt) / st) ** Et, dim=1) * bt).sum()

    Xt = torch.tensor(X)
    lap = vmap(hessian(phi))(Xt).diagonal(dim1=1, dim2=2).sum(1)
    expected = lap + (torch.tensor(S) * vmap(jacrev(phi))(Xt)).sum(1)
    G = polynomial_stein_features(X, S, E, m, s)
    np.testing.assert_allclose(G @ beta, expected.numpy(), rtol=1e-10)


def _fit_and_check_exact(target, f, degree, method, seed):
    Xtr, Xte = target.chain(3000, seed), target.chain(3000, seed + 1)
    cv = PolynomialControlVariate(grad_log_prob=target.score, degree=degree, method=method).fit(Xtr, f(Xtr))
    return cv, Xte


@pytest.mark.parametrize("method", ["esvm", "least_squares"])
def test_exact_solutions_on_a_gaussian(gaussian_ar1, method):
    # Poisson solutions are polynomials: f = x1 needs a linear phi, f = x1^2 a quadratic one,
    # so the residual f - g is the constant pi(f) on any chain
    t = gaussian_ar1
    for f, degree, truth in [
        (lambda X: X[:, 0], 1, t.mean[0]),
        (lambda X: X[:, 0] ** 2, 2, t.cov[0, 0] + t.mean[0] ** 2),
        (lambda X: X[:, 0] * X[:, 1], 2, t.cov[0, 1] + t.mean[0] * t.mean[1]),
    ]:
        cv, Xte = _fit_and_check_exact(t, f, degree, method, seed=degree)
        assert cv.estimate(Xte, f(Xte)) == pytest.approx(truth, abs=1e-9)
        residual = f(Xte) - (cv.predict(Xte) - cv.constant_)
        assert spectral_variance(residual) < 1e-16 * spectral_variance(f(Xte))
        assert cv.score(Xte, f(Xte)) > 1e12
        assert cv.predict(Xte) == pytest.approx(f(Xte), abs=1e-8)


def test_esvm_minimises_the_training_spectral_variance(gaussian_ar1):
    # f = sin(x1) + x2^3 has no polynomial Poisson solution; on the training chain the ESVM
    # solution has the smallest V_n of all polynomial control variates, least squares included
    t = gaussian_ar1
    X = t.chain(2000, 5)
    y = np.sin(X[:, 0]) + X[:, 1] ** 3
    esvm = PolynomialControlVariate(grad_log_prob=t.score, degree=2, truncation=30).fit(X, y)
    ls = PolynomialControlVariate(grad_log_prob=t.score, degree=2, method="least_squares", truncation=30)
    ls.fit(X, y)
    v_esvm = spectral_variance(y - esvm.predict(X), truncation=30)
    assert v_esvm < spectral_variance(y - ls.predict(X), truncation=30)
    rng = np.random.default_rng(0)
    for _ in range(5):  # and no nearby coefficients do better
        other = PolynomialControlVariate(grad_log_prob=t.score, degree=2, truncation=30).fit(X, y)
        other.coef_ = esvm.coef_ * (1 + 0.01 * rng.normal(size=esvm.coef_.shape))
        assert v_esvm < spectral_variance(y - other.predict(X), truncation=30)
    assert esvm.truncation_ == 30 and ls.truncation_ == 1


@pytest.mark.slow
def test_unbiased_where_no_exact_solution(gaussian_ar1):
    # f = sin(x1): ESVM reduces the variance and the 99.9% CLT interval covers pi(f)
    t = gaussian_ar1
    f = lambda X: np.sin(X[:, 0])  # noqa: E731
    truth = np.sin(t.mean[0]) * np.exp(-t.cov[0, 0] / 2)
    Xtr = t.chain(20_000, 11)
    cv = PolynomialControlVariate(grad_log_prob=t.score, degree=3).fit(Xtr, f(Xtr))
    Xte = t.chain(20_000, 12)
    est, bounds = cv.predict_interval(Xte, f(Xte), confidence_level=0.999)
    assert bounds[0, 0] < truth < bounds[1, 0]
    assert cv.score(Xte, f(Xte)) > 5


def test_ridge_shrinks_to_no_control_variate(gaussian_ar1):
    X = gaussian_ar1.chain(500, 0)
    y = X[:, 0] ** 2
    cv = PolynomialControlVariate(grad_log_prob=gaussian_ar1.score, alpha=1e12).fit(X, y)
    assert np.abs(cv.coef_).max() < 1e-9
    assert cv.score(X, y) == pytest.approx(1.0, rel=1e-6)


def test_indefinite_window_warns(gaussian_ar1):
    X = gaussian_ar1.chain(300, 0)
    y = np.sin(3 * X[:, 0])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        cv = PolynomialControlVariate(grad_log_prob=gaussian_ar1.score, degree=4, lag_window="rectangular")
        cv.fit(X, y)
    assert any(issubclass(w.category, ControlVariateWarning) for w in rec)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ControlVariateWarning)
        PolynomialControlVariate(grad_log_prob=gaussian_ar1.score, degree=4).fit(X, y)
