"""Interval metrics: coverage, mean width and interval score."""

import numpy as np
import pytest

from skgibbs.metrics import coverage_score, interval_score, mean_width_score


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


def test_one_level_applies_to_every_slice():
    y = np.array([0.0, 3.0])
    pis = np.stack([np.array([[-1, 1], [0, 2]], dtype=float)] * 2, axis=2)
    np.testing.assert_allclose(interval_score(y, pis, 0.8), [7.0, 7.0])


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
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
