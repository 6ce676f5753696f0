"""The data-gap regression problem of paper 000 §5."""

import numpy as np
import pytest

from skgibbs.datasets import gap_regression_function, make_gap_regression


def test_regression_function_values():
    x = np.array([-0.8, -0.5, -0.2, 0.2, 0.5, 0.8])
    expected = np.r_[1.5 * (x[:3] + 0.5) ** 2, 0.3 * np.sin(10 * x[3:] - 2) + 0.5]
    np.testing.assert_allclose(gap_regression_function(x), expected)
    assert gap_regression_function(-0.5) == 0.0
    assert gap_regression_function(np.zeros((2, 3))).shape == (2, 3)


def test_shapes_support_and_gap():
    X, y = make_gap_regression(2000, random_state=0)
    assert X.shape == (2000, 1) and y.shape == (2000,)
    x = X[:, 0]
    assert np.all((np.abs(x) >= 0.2) & (np.abs(x) <= 0.8))
    # both intervals equally populated: Bin(n, 1/2)
    assert abs(np.mean(x < 0) - 0.5) < 4 * 0.5 / np.sqrt(2000)


def test_noise_level():
    n, noise = 20000, 0.05
    X, y = make_gap_regression(n, noise=noise, random_state=1)
    resid = y - gap_regression_function(X[:, 0])
    assert abs(resid.mean()) < 4 * noise / np.sqrt(n)
    # sd of the sample standard deviation of a Gaussian: noise / sqrt(2 n)
    assert abs(resid.std() - noise) < 4 * noise / np.sqrt(2 * n)


def test_noise_free_and_reproducible():
    X, y = make_gap_regression(50, noise=0.0, random_state=3)
    np.testing.assert_array_equal(y, gap_regression_function(X[:, 0]))
    X2, _y2 = make_gap_regression(50, noise=0.0, random_state=3)
    np.testing.assert_array_equal(X, X2)
    X3, _ = make_gap_regression(50, random_state=4)
    assert not np.array_equal(X, X3)


@pytest.mark.parametrize("n", [1, 10])
def test_small_sizes(n):
    X, y = make_gap_regression(n, random_state=0)
    assert X.shape == (n, 1) and y.shape == (n,)
