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


@pytest.mark.slow
def test_default_intervals_cover_diabetes():
    X, y = load_diabetes(return_X_y=True)
    fits = _cross_fitted(X, y)  # one set of fits for both levels
    for level in (0.9, 0.5):
        coverage, _ = _coverage(fits, X, y, level)
        se = np.sqrt(level * (1 - level) / len(y))
        assert abs(coverage - level) < 4 * se, (level, coverage)


@pytest.mark.slow
def test_default_intervals_cover_friedman():
    # cross-fitted coverage in the data's own units (that the intervals move and stretch with the units
    # of y is tests/test_regressor.py::test_predictions_are_on_the_scale_of_y, on a fit of a few seconds)
    X, y = make_friedman1(n_samples=400, noise=1.0, random_state=0)
    cov, _ = _coverage(_cross_fitted(X, y, n_splits=2), X, y, 0.9)  # two fits of 200 rows
    se = np.sqrt(0.9 * 0.1 / len(y))
    assert abs(cov - 0.9) < 4 * se, cov
