"""Interval metrics and the scorers of skgibbs.metrics."""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skgibbs import GibbsMLPRegressor, SamplerWarning
from skgibbs.metrics import (
    coverage_score,
    interval_score,
    make_coverage_scorer,
    make_interval_scorer,
    make_width_scorer,
    mean_width_score,
    waic_scorer,
    log_predictive_density_scorer,
)

CHEAP = {"hidden_layer_sizes": (4,), "n_samples": 10, "burn_in": 30, "thin": 1, "pretrain_iter": 30}


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        return est.fit(X, y)


# ----------------------------------------------------------------- metrics
def test_metrics_by_hand():
    y = np.array([0.0, 1.0, 2.0, 5.0])
    pis = np.array([[-1, 1], [1, 2], [0, 1], [4, 6]], dtype=float)  # bounds are inside
    assert coverage_score(y, pis).tolist() == [0.75]
    assert mean_width_score(pis).tolist() == [1.5]
    # misses: y=2 above [0, 1] by 1 at a = 0.5 costs 2 / 0.5 * 1 = 4
    assert interval_score(y, pis, 0.5).tolist() == [(2 + 1 + 1 + 2 + 4) / 4]


def test_levels_are_independent():
    y = np.array([0.0, 1.0, 2.0])
    wide = np.array([[-5, 5]] * 3, dtype=float)
    narrow = np.array([[-0.5, 0.5]] * 3, dtype=float)
    pis = np.stack([narrow, wide], axis=2)  # (3, 2, 2)
    np.testing.assert_allclose(coverage_score(y, pis), [1 / 3, 1.0])
    np.testing.assert_allclose(mean_width_score(pis), [1.0, 10.0])
    np.testing.assert_allclose(
        interval_score(y, pis, [0.8, 0.9]),
        [1.0 + (0 + 10 * 0.5 + 10 * 1.5) / 3, 10.0],
    )


def test_against_mapie_definitions():
    # MAPIE v1: coverage is mean(lower <= y <= upper) per level, width mean(upper - lower)
    rng = np.random.default_rng(0)
    y = rng.normal(size=200)
    centre = rng.normal(size=(200, 1))
    half = rng.uniform(0.1, 2.0, size=(200, 3))
    pis = np.stack([centre - half, centre + half], axis=1)
    expected = [np.mean((pis[:, 0, k] <= y) & (y <= pis[:, 1, k])) for k in range(3)]
    np.testing.assert_allclose(coverage_score(y, pis), expected)
    np.testing.assert_allclose(mean_width_score(pis), (2 * half).mean(0))
    assert coverage_score(y, pis).shape == mean_width_score(pis).shape == (3,)
    np.testing.assert_allclose(coverage_score(y, pis[:, :, 1]), expected[1:2])


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: coverage_score([0.0, 1.0], np.zeros((2, 3))), "y_pis"),
        (lambda: coverage_score([0.0, 1.0], np.zeros((2, 2, 1, 1))), "y_pis"),
        (lambda: coverage_score([0.0], np.zeros((2, 2))), "y_true"),
        (lambda: mean_width_score([[0.0, np.nan]]), "y_pis"),
        (lambda: interval_score([0.0], [[0.0, 1.0]], 1.5), "confidence_level"),
        (lambda: interval_score([0.0], np.zeros((1, 2, 2)), [0.5, 0.6, 0.7]), "confidence_level"),
        (lambda: make_coverage_scorer(0.0), "confidence_level"),
        (lambda: make_width_scorer("0.9"), "confidence_level"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ----------------------------------------------------------------- scorers
@pytest.fixture(scope="module")
def fitted_pipe():
    X, y = _data()
    return _fit(make_pipeline(StandardScaler(), GibbsMLPRegressor(**CHEAP, random_state=0)), X, y)


def test_log_predictive_density_scorer_by_hand(fitted_pipe):
    X, y = _data(seed=1)
    reg = fitted_pipe[-1]
    F = reg.predict_samples(fitted_pipe[:-1].transform(X))  # (n, S)
    s2 = reg.noise_variance_
    dens = np.mean(np.exp(-((y[:, None] - F) ** 2) / (2 * s2)) / np.sqrt(2 * np.pi * s2), axis=1)
    assert log_predictive_density_scorer(fitted_pipe, X, y) == pytest.approx(np.mean(np.log(dens)))
    with pytest.raises(TypeError, match="skgibbs estimator"):
        log_predictive_density_scorer(Ridge().fit(X, y), X, y)


def test_waic_scorer_reads_the_fitted_criterion(fitted_pipe):
    reg = fitted_pipe[-1]
    assert waic_scorer(fitted_pipe, None, None) == -reg.generalization_loss_
    assert waic_scorer(reg, np.zeros((3, 2)), np.zeros(3)) == -reg.generalization_loss_  # test data ignored
    with pytest.raises(TypeError, match="generalization_loss_"):
        waic_scorer(Ridge().fit(*_data()), None, None)


def test_interval_scorers_go_through_the_pipeline(fitted_pipe):
    X, y = _data(30, seed=1)
    _, y_pis = fitted_pipe[-1].predict_interval(fitted_pipe[:-1].transform(X), confidence_level=0.8)
    assert make_coverage_scorer(0.8)(fitted_pipe, X, y) == coverage_score(y, y_pis)[0]
    assert make_width_scorer(0.8)(fitted_pipe, X, y) == -mean_width_score(y_pis)[0]
    assert make_interval_scorer(0.8)(fitted_pipe, X, y) == -interval_score(y, y_pis, 0.8)[0]
    with pytest.raises(TypeError, match="predict_interval"):
        make_coverage_scorer(0.8)(Ridge().fit(X, y), X, y)


def test_grid_search_with_skgibbs_scorers():
    X, y = _data()
    scoring = {"r2": "r2", "coverage": make_coverage_scorer(0.9), "neg_waic": waic_scorer}
    est = GibbsMLPRegressor(**CHEAP, random_state=0)
    search = GridSearchCV(est, {"temperature": [0.1, 10.0]}, scoring=scoring, refit="r2", cv=2)
    _fit(search, X, y)
    res = search.cv_results_
    assert np.all((res["mean_test_coverage"] >= 0) & (res["mean_test_coverage"] <= 1))
    assert np.all(res["mean_test_neg_waic"] < 0)
    assert search.best_index_ == int(np.argmax(res["mean_test_r2"]))
