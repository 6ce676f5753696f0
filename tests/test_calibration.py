"""Default settings give calibrated predictive intervals on held-out data.

Every point is predicted once, by the model fitted on the other folds, so the
coverage is an average of n Bernoulli indicators; the tolerance is four
binomial standard errors around the nominal level.
"""

import numpy as np
import pytest
from sklearn.datasets import load_diabetes, make_friedman1
from sklearn.model_selection import KFold

from skgibbs import GibbsMLPRegressor


def _cross_fitted(X, y, n_splits=3):
    """One default fit per fold: ``(test indices, fitted regressor)`` pairs."""
    folds = KFold(n_splits, shuffle=True, random_state=0).split(X)
    return [
        (test, GibbsMLPRegressor(random_state=k).fit(X[train], y[train]))
        for k, (train, test) in enumerate(folds)
    ]


def _coverage(fits, X, y, level):
    hits, widths = np.zeros(len(y), dtype=bool), np.zeros(len(y))
    for test, reg in fits:
        _, pis = reg.predict_interval(X[test], confidence_level=level)
        hits[test] = (y[test] >= pis[:, 0, 0]) & (y[test] <= pis[:, 1, 0])
        widths[test] = pis[:, 1, 0] - pis[:, 0, 0]
    return hits.mean(), widths.mean()


def _cross_fitted_coverage(X, y, level):
    return _coverage(_cross_fitted(X, y), X, y, level)


@pytest.mark.slow
def test_default_intervals_cover_diabetes():
    X, y = load_diabetes(return_X_y=True)
    fits = _cross_fitted(X, y)  # one set of fits for both levels
    for level in (0.9, 0.5):
        coverage, _ = _coverage(fits, X, y, level)
        se = np.sqrt(level * (1 - level) / len(y))
        assert abs(coverage - level) < 4 * se, (level, coverage)


@pytest.mark.slow
def test_default_intervals_cover_friedman_on_any_scale():
    # cross-fitted coverage in the data's own units; then the first fold refitted in other units (the
    # same rows and seed): its intervals scale with y and cover its test points as well
    X, y = make_friedman1(n_samples=400, noise=1.0, random_state=0)
    fits = _cross_fitted(X, y)
    cov, _ = _coverage(fits, X, y, 0.9)
    se = np.sqrt(0.9 * 0.1 / len(y))
    assert abs(cov - 0.9) < 4 * se, cov
    test, reg = fits[0]
    train = np.setdiff1d(np.arange(len(y)), test)
    big = GibbsMLPRegressor(random_state=0).fit(X[train] * 1e3, y[train] * 1e4)
    _, pis = reg.predict_interval(X[test], confidence_level=0.9)
    _, pis_big = big.predict_interval(X[test] * 1e3, confidence_level=0.9)
    hits_big = (y[test] * 1e4 >= pis_big[:, 0, 0]) & (y[test] * 1e4 <= pis_big[:, 1, 0])
    assert abs(hits_big.mean() - 0.9) < 4 * np.sqrt(0.9 * 0.1 / len(test)), hits_big.mean()
    ratio = (pis_big[:, 1, 0] - pis_big[:, 0, 0]).mean() / (pis[:, 1, 0] - pis[:, 0, 0]).mean()
    assert ratio == pytest.approx(1e4, rel=0.05)
