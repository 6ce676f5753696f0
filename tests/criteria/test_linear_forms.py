"""Closed forms of paper 004 for ridge regression: hat matrix, Lemma 2, exact FV, TIC."""

import numpy as np
import pytest
from sklearn.linear_model import Ridge

from skgibbs.criteria import (
    expected_functional_variance_linear,
    functional_variance_linear,
    gibbs_generalization_gap_linear,
    quasi_posterior_linear,
    ridge_hat_matrix,
    tic_linear,
)


def _hat_direct(X, alpha):
    n, p = X.shape
    return X @ np.linalg.solve(X.T @ X / n + alpha * np.eye(p), X.T) / n


@pytest.mark.parametrize("shape", [(30, 12), (20, 45)])
def test_hat_matrix_and_gap_match_definition(shape):
    X = np.random.default_rng(0).normal(size=shape)
    H = _hat_direct(X, 0.3)
    np.testing.assert_allclose(ridge_hat_matrix(X, 0.3), H, atol=1e-12)
    assert gibbs_generalization_gap_linear(X, 0.3) == pytest.approx(np.trace(H))


def test_gap_setting_i_is_paper_value():
    # Table 1: ten singular values sqrt(n), the rest 0, alpha = 0.1 -> 10 / 1.1 = 9.091 for every n
    for n in (100, 400):
        X = np.zeros((n, int(1.5 * n)))
        X[np.arange(10), np.arange(10)] = np.sqrt(n)
        assert gibbs_generalization_gap_linear(X, 0.1) == pytest.approx(9.0909, abs=1e-4)


def test_expected_fv_matches_hadamard_form_of_lemma_2(spectral_design):
    rng = np.random.default_rng(1)
    X, beta0 = spectral_design(25, 40, 0.5, 1), rng.normal(size=40) / np.sqrt(40)
    H = _hat_direct(X, 0.2)
    m = (np.eye(25) - H) @ X @ beta0
    gap = np.trace(H)
    rhs = -1.5 * np.trace(H * H) + np.trace(H * (H @ H)) + np.trace(H * np.outer(m, m)) / 0.7  # (7)
    assert expected_functional_variance_linear(X, beta0, 0.2, 0.7) == pytest.approx(gap + rhs, rel=1e-10)


def test_quasi_posterior_mean_is_ridge():
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(30, 50)), rng.normal(size=30)
    beta_hat, cov = quasi_posterior_linear(X, y, 0.1, 2.0)
    ridge = Ridge(alpha=30 * 0.1, fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(beta_hat, ridge.coef_, atol=1e-10)
    np.testing.assert_allclose(np.linalg.inv(cov), (X.T @ X / 30 + 0.1 * np.eye(50)) * 30 / 2.0, rtol=1e-8)


def test_exact_fv_equals_lemma_2_in_expectation(spectral_design):
    # E_y over K independent responses of the exact FV of each equals (7)
    n, p, K, sigma2 = 30, 45, 4000, 1.0
    rng = np.random.default_rng(3)
    X = spectral_design(n, p, 0.5, 3)
    beta0 = rng.normal(size=p) / np.sqrt(p)
    Y = (X @ beta0)[:, None] + np.sqrt(sigma2) * rng.normal(size=(n, K))
    fv = functional_variance_linear(X, Y, 0.1, sigma2)
    expected = expected_functional_variance_linear(X, beta0, 0.1, sigma2)
    assert fv.shape == (K,)
    assert abs(fv.mean() - expected) < 4 * fv.std() / np.sqrt(K)


def test_exact_fv_equals_quasi_posterior_sampling(spectral_design):
    rng = np.random.default_rng(4)
    X = spectral_design(20, 30, 0.5, 4)
    y = X @ (rng.normal(size=30) / np.sqrt(30)) + rng.normal(size=20)
    exact = functional_variance_linear(X, y, 0.1, 1.0)
    mc = np.array([functional_variance_linear(X, y, 0.1, 1.0, n_draws=4000, random_state=s) for s in range(8)])
    assert abs(mc.mean() - exact) < 4 * mc.std(ddof=1) / np.sqrt(len(mc))
    assert mc.std() < 0.1 * exact  # the sampling path is not just noise


def _tic_direct(X, y, alpha, sigma2, kappa):
    n, p = X.shape
    beta_hat = np.linalg.solve(X.T @ X / n + alpha * np.eye(p), X.T @ y / n)
    r = y - X @ beta_hat
    scores = X * (r / sigma2)[:, None]
    F = scores.T @ scores
    G = X.T @ X / sigma2
    w, V = np.linalg.eigh(G)
    keep = np.sqrt(np.clip(w * sigma2, 0, None)) > max(kappa, 1e-6)  # singular values of X above kappa (and numerical zero)
    G_plus = (V[:, keep] / w[keep]) @ V[:, keep].T
    return np.trace(F @ G_plus)


@pytest.mark.parametrize("kappa", [0.0, 0.5, 2.0])
def test_tic_matches_direct_generalised_inverse(kappa, spectral_design):
    rng = np.random.default_rng(5)
    X = spectral_design(15, 25, 1.0, 5)
    y = rng.normal(size=15)
    assert tic_linear(X, y, 0.1, 0.8, kappa=kappa) == pytest.approx(_tic_direct(X, y, 0.1, 0.8, kappa), rel=1e-8)


def test_tic_counts_nonzero_singular_values_instead_of_the_gap(spectral_design):
    # paper 004 §4.1: with s_i = sqrt(n)/i (setting (ii)) every singular value is non-zero,
    # so TIC(0) grows like n while the gap tr(H) stays near 4.4
    n = 200
    rng = np.random.default_rng(6)
    X = spectral_design(n, 300, 1.0, 6)
    y = X @ (rng.normal(size=300) / np.sqrt(300)) + rng.normal(size=n)
    gap = gibbs_generalization_gap_linear(X, 0.1)
    assert gap < 5.0
    assert tic_linear(X, y, 0.1, 1.0) > 0.85 * n
    # a threshold on the singular values removes directions: sqrt(n)/i > 0.1 keeps i < 10 sqrt(n) = 141
    assert tic_linear(X, y, 0.1, 1.0, kappa=0.1) < 0.8 * tic_linear(X, y, 0.1, 1.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [({"alpha": 0.0}, "alpha"), ({"alpha": -1.0}, "alpha"), ({"noise_variance": 0.0}, "noise_variance")],
)
def test_bad_input_names_the_parameter(kwargs, match):
    X, y = np.ones((4, 2)), np.ones(4)
    args = {"alpha": 0.1, "noise_variance": 1.0, **kwargs}
    with pytest.raises(ValueError, match=match):
        functional_variance_linear(X, y, args["alpha"], args["noise_variance"])
    with pytest.raises(ValueError, match="X"):
        ridge_hat_matrix(np.ones(3), 0.1)
    with pytest.raises(ValueError, match="kappa"):
        tic_linear(X, y, 0.1, 1.0, kappa=-1.0)


def test_sampled_fv_of_several_responses_uses_independent_draws(spectral_design):
    X = spectral_design(15, 20, 0.5, 7)
    y = np.random.default_rng(8).normal(size=15)
    two = functional_variance_linear(X, np.c_[y, y], 0.1, 1.0, n_draws=500, random_state=0)
    assert two.shape == (2,) and two[0] != two[1]  # same response, different Monte Carlo draws
    assert two[0] == pytest.approx(functional_variance_linear(X, y, 0.1, 1.0, n_draws=500, random_state=0))
