"""Credible radii of paper 000 (3.4) from posterior draws."""

import numpy as np
import pytest
from scipy.stats import norm

from skgibbs.credible import credible_radius, parameter_radius, posterior_quantile


def _smallest_tau(h, level):
    """Brute force of (3.4): the smallest draw value tau with #{h_k <= tau} / N > level."""
    h = np.asarray(h, dtype=float)
    candidates = [t for t in np.sort(h) if np.mean(h <= t) > level]
    return candidates[0] if candidates else h.max()


@pytest.mark.parametrize("n", [1, 2, 7, 100, 101])
@pytest.mark.parametrize("level", [0.01, 0.5, 0.9, 0.95, 0.99])
def test_posterior_quantile_is_the_definition(n, level):
    h = np.random.default_rng(n).exponential(size=n)
    assert posterior_quantile(h, level) == _smallest_tau(h, level)


def test_posterior_quantile_with_ties_and_exact_fractions():
    h = [0.1, 0.2, 0.2, 0.2, 0.5]
    # #{h <= 0.2} / 5 = 0.8: not > 0.8, so at level 0.8 the radius is 0.5
    assert posterior_quantile(h, 0.79) == 0.2
    assert posterior_quantile(h, 0.8) == 0.5
    assert posterior_quantile([3.0, 1.0, 2.0, 4.0], 0.5) == 3.0


def test_posterior_quantile_is_monotone_in_level():
    h = np.random.default_rng(0).normal(size=300) ** 2
    taus = [posterior_quantile(h, a) for a in np.linspace(0.01, 0.99, 50)]
    assert np.all(np.diff(taus) >= 0)


def test_credible_radius_by_hand():
    F = np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0], [1.0, 1.0, 1.0], [1.0, 4.0, 1.0]])
    fbar = F.mean(0)
    h = np.sqrt(((F - fbar) ** 2).mean(1))
    for level in (0.3, 0.6, 0.9):
        assert credible_radius(F, level) == pytest.approx(_smallest_tau(h, level))


def test_credible_radius_equivariance():
    rng = np.random.default_rng(1)
    F = rng.normal(size=(200, 6))
    r = credible_radius(F, 0.9)
    # a shift of every draw by the same function leaves the ball's radius alone
    assert credible_radius(F + rng.normal(size=6), 0.9) == pytest.approx(r)
    assert credible_radius(-3.0 * F, 0.9) == pytest.approx(3.0 * r)


def test_credible_radius_gaussian_ground_truth():
    # f_k = z_k v with mean(v^2) = 1 and z_k ~ N(0, 1): h_k = |z_k - zbar| ~ |N(0, 1)|,
    # whose 0.9 quantile is Phi^{-1}(0.95)
    N, level = 20000, 0.9
    rng = np.random.default_rng(2)
    v = rng.normal(size=8)
    v /= np.sqrt(np.mean(v**2))
    F = rng.normal(size=(N, 1)) * v[None, :] + 5.0
    q = norm.ppf(0.5 + level / 2)
    # Monte Carlo sd of a sample quantile: sqrt(p (1 - p) / N) / density of |Z| at q
    sd = np.sqrt(level * (1 - level) / N) / (2 * norm.pdf(q))
    assert abs(credible_radius(F, level) - q) < 4 * sd


def test_parameter_radius():
    S = np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0], [1.0, 0.0]])
    center = np.zeros(2)
    assert parameter_radius(S, 0.5, center=center) == 1.0
    assert parameter_radius(S, 0.9, center=center) == 5.0
    mean = S.mean(0)
    d = np.linalg.norm(S - mean, axis=1)
    assert parameter_radius(S, 0.5) == pytest.approx(_smallest_tau(d, 0.5))
