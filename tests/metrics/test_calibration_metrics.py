"""Calibration metrics: reliability curve, ECE, MCE and predictive entropy."""

import numpy as np
import pytest
from scipy.stats import entropy

from skgibbs.metrics import (
    ReliabilityCurve,
    expected_calibration_error,
    maximum_calibration_error,
    predictive_entropy,
    reliability_curve,
)

# Six samples of four classes; with 3 uniform bins [0, 1/3), [1/3, 2/3), [2/3, 1]:
#   conf 0.30 (correct), 0.30 (wrong)  -> bin 0: acc 1/2, conf 0.30, gap 0.20
#   conf 0.50 (correct), 0.60 (wrong)  -> bin 1: acc 1/2, conf 0.55, gap 0.05
#   conf 0.90 (correct), 0.80 (correct) -> bin 2: acc 1,   conf 0.85, gap 0.15
PROBA6 = np.array(
    [
        [0.30, 0.25, 0.25, 0.20],
        [0.20, 0.30, 0.25, 0.25],
        [0.50, 0.20, 0.20, 0.10],
        [0.10, 0.60, 0.20, 0.10],
        [0.00, 0.00, 0.90, 0.10],
        [0.10, 0.80, 0.10, 0.00],
    ]
)
Y6 = np.array([0, 2, 0, 3, 2, 1])


# ------------------------------------------------------------------ by hand
def test_ece_and_mce_by_hand():
    curve = reliability_curve(Y6, PROBA6, n_bins=3)
    assert isinstance(curve, ReliabilityCurve)
    np.testing.assert_allclose(curve.confidence, [0.30, 0.55, 0.85])
    np.testing.assert_allclose(curve.accuracy, [0.5, 0.5, 1.0])
    assert curve.count.tolist() == [2, 2, 2]
    np.testing.assert_allclose(curve.edges, [[0, 1 / 3], [1 / 3, 2 / 3], [2 / 3, 1]])
    ece = 2 / 6 * 0.20 + 2 / 6 * 0.05 + 2 / 6 * 0.15
    assert expected_calibration_error(Y6, PROBA6, n_bins=3) == pytest.approx(ece, abs=1e-12)
    assert maximum_calibration_error(Y6, PROBA6, n_bins=3) == pytest.approx(0.20, abs=1e-12)
    # one bin: |accuracy - mean confidence| over everything
    overall = abs(4 / 6 - np.mean([0.3, 0.3, 0.5, 0.6, 0.9, 0.8]))
    assert expected_calibration_error(Y6, PROBA6, n_bins=1) == pytest.approx(overall, abs=1e-12)
    assert maximum_calibration_error(Y6, PROBA6, n_bins=1) == pytest.approx(overall, abs=1e-12)


def test_empty_bins_are_dropped():
    # 7 bins [k/7, (k+1)/7): the six confidences fill bins 2 to 6 (0.3, 0.3 | 0.5 | 0.6 | 0.8 | 0.9)
    curve = reliability_curve(Y6, PROBA6, n_bins=7)
    assert curve.count.tolist() == [2, 1, 1, 1, 1]
    np.testing.assert_allclose(curve.edges[:, 0], np.arange(2, 7) / 7)
    ece = (2 * 0.2 + 1 * 0.5 + 1 * 0.6 + 1 * 0.2 + 1 * 0.1) / 6
    assert expected_calibration_error(Y6, PROBA6, n_bins=7) == pytest.approx(ece, abs=1e-12)
    assert maximum_calibration_error(Y6, PROBA6, n_bins=7) == pytest.approx(0.6, abs=1e-12)


def test_edges_go_to_the_bin_above_and_one_to_the_last():
    # 2 uniform bins [0, 0.5), [0.5, 1]: 0.5 and 1.0 both belong to the upper bin
    curve = reliability_curve([0, 1], [[0.5, 0.5], [0.0, 1.0]], n_bins=2)
    assert curve.count.tolist() == [2]
    np.testing.assert_allclose(curve.edges, [[0.5, 1.0]])
    # a tie picks the first column: sample 0 is predicted 0 and right
    np.testing.assert_allclose(curve.accuracy, [1.0])
    np.testing.assert_allclose(curve.confidence, [0.75])


def test_labels_name_the_columns():
    names = np.array(["ant", "bee", "cat", "dog"])
    by_name = expected_calibration_error(names[Y6], PROBA6, n_bins=3, labels=names)
    assert by_name == pytest.approx(expected_calibration_error(Y6, PROBA6, n_bins=3))
    # y_true without class 3 (drops the wrong 0.6 of bin 1): the columns must be named
    keep = Y6 != 3
    assert expected_calibration_error(Y6[keep], PROBA6[keep], n_bins=3, labels=[0, 1, 2, 3]) == pytest.approx(
        2 / 5 * 0.20 + 1 / 5 * 0.50 + 2 / 5 * 0.15
    )
    with pytest.raises(ValueError, match="pass labels="):
        expected_calibration_error(Y6[keep], PROBA6[keep])
    # reversed labels: the same probabilities now predict other classes
    reversed_ = expected_calibration_error(Y6, PROBA6, n_bins=3, labels=[3, 2, 1, 0])
    assert reversed_ != pytest.approx(by_name)


def test_binary_vector_equals_two_columns():
    rng = np.random.default_rng(1)
    p = rng.uniform(size=300)
    y = np.where(rng.uniform(size=300) < p, "yes", "no")
    both = np.column_stack([1 - p, p])
    for strategy in ("uniform", "quantile"):
        for metric in (expected_calibration_error, maximum_calibration_error):
            assert metric(y, p, n_bins=7, strategy=strategy) == pytest.approx(
                metric(y, both, n_bins=7, strategy=strategy), abs=1e-12
            )
        a = reliability_curve(y, p, n_bins=7, strategy=strategy)
        b = reliability_curve(y, both, labels=["no", "yes"], n_bins=7, strategy=strategy)
        for field_a, field_b in zip(a, b, strict=True):
            np.testing.assert_allclose(field_a, field_b)
    # 1-d probabilities belong to the second label
    flipped = expected_calibration_error(y, p, labels=["yes", "no"])
    assert flipped == pytest.approx(expected_calibration_error(y, np.column_stack([p, 1 - p])))


# ------------------------------------------------------------- statistical
def _binned_tolerance(curve, k=4.0):
    """``sum_b |S_b|/n * k * sqrt(a(1 - a)/|S_b|)``: k binomial standard errors per bin."""
    a = curve.confidence
    return float(np.sum(curve.count / curve.count.sum() * k * np.sqrt(a * (1 - a) / curve.count)))


def test_calibrated_binary_has_small_ece():
    rng = np.random.default_rng(2)
    n = 200_000
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(int)
    for strategy in ("uniform", "quantile"):
        curve = reliability_curve(y, p, strategy=strategy)
        ece = expected_calibration_error(y, p, strategy=strategy)
        assert ece < _binned_tolerance(curve)
        assert ece < 0.01
    # a miscalibrated forecaster (over-confident) is caught
    sharp = np.clip(0.5 + 1.5 * (p - 0.5), 0, 1)
    assert expected_calibration_error(y, sharp) > 0.05


def test_calibrated_multiclass_has_small_ece():
    rng = np.random.default_rng(3)
    n = 200_000
    proba = rng.dirichlet([0.5, 0.5, 0.5, 0.5], size=n)
    y = (rng.uniform(size=(n, 1)) > np.cumsum(proba, axis=1)).sum(axis=1).clip(max=3)
    curve = reliability_curve(y, proba, labels=[0, 1, 2, 3])
    assert expected_calibration_error(y, proba, labels=[0, 1, 2, 3]) < _binned_tolerance(curve)


def test_quantile_bins_hold_equal_counts():
    rng = np.random.default_rng(4)
    p = rng.beta(5, 1, size=1000)  # most of the mass near confidence 1
    y = (rng.uniform(size=1000) < p).astype(int)
    curve = reliability_curve(y, p, n_bins=10, strategy="quantile")
    assert len(curve.count) == 10
    assert curve.count.sum() == 1000
    assert curve.count.min() >= 99 and curve.count.max() <= 101
    np.testing.assert_allclose(curve.edges[1:, 0], curve.edges[:-1, 1])  # contiguous
    uniform = reliability_curve(y, p, n_bins=10)
    assert np.ptp(uniform.count) > 100  # equal widths are far from equal mass here


def test_quantile_bins_merge_tied_edges():
    p = np.array([0.9] * 8 + [0.6, 0.7])  # the quantiles of 0.9 coincide
    y = np.array([1] * 7 + [0] + [1, 0])
    curve = reliability_curve(y, p, n_bins=5, strategy="quantile")
    assert curve.count.sum() == 10
    assert len(curve.count) < 5
    assert np.all(np.diff(curve.edges[:, 0]) > 0)
    all_tied = reliability_curve([1, 0, 1], [0.8, 0.8, 0.8], n_bins=4, strategy="quantile")
    assert all_tied.count.tolist() == [3]
    np.testing.assert_allclose(all_tied.edges, [[0.8, 0.8]])
    np.testing.assert_allclose(all_tied.accuracy, [2 / 3])


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"y_prob": [[0.5, 0.6], [0.5, 0.5]]}, "y_prob.*sum to 1"),
        ({"y_prob": [[1.2, -0.2], [0.5, 0.5]]}, r"y_prob.*\[0, 1\]"),
        ({"y_prob": [[np.nan, 0.5], [0.5, 0.5]]}, "y_prob.*finite"),
        ({"y_prob": [[np.inf, 0.5], [0.5, 0.5]]}, "y_prob.*finite"),
        ({"y_prob": [[1.0], [1.0]]}, "y_prob must have shape"),
        ({"y_prob": np.full((2, 2, 2), 0.5)}, "y_prob must have shape"),
        ({"y_prob": np.zeros((0, 2))}, "y_prob is empty"),
        ({"y_true": [0, 1, 1]}, r"y_true must have shape \(2,\)"),
        ({"y_prob": [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]}, "pass labels="),
        ({"y_true": [0, 0]}, "pass labels="),
        ({"y_true": [0, 2], "labels": [0, 1]}, "y_true holds labels that are not in labels"),
        ({"labels": [0, 1, 2]}, "labels must hold one label per column"),
        ({"labels": [0, 0]}, "labels must not repeat"),
        ({"n_bins": 0}, "n_bins must be an int >= 1"),
        ({"n_bins": 2.5}, "n_bins must be an int >= 1"),
        ({"n_bins": True}, "n_bins must be an int >= 1"),
        ({"strategy": "kmeans"}, "strategy must be 'uniform' or 'quantile'"),
    ],
)
@pytest.mark.parametrize("metric", [expected_calibration_error, maximum_calibration_error, reliability_curve])
def test_bad_input_names_the_parameter(metric, kwargs, match):
    args = {"y_true": [0, 1], "y_prob": [[0.6, 0.4], [0.3, 0.7]], **kwargs}
    y_true, y_prob = args.pop("y_true"), args.pop("y_prob")
    with pytest.raises(ValueError, match=match):
        metric(y_true, y_prob, **args)


def test_binary_vector_with_one_class_asks_for_labels():
    with pytest.raises(ValueError, match="pass labels="):
        expected_calibration_error([1, 1], [0.8, 0.6])
    assert expected_calibration_error([1, 1], [0.8, 0.6], labels=[0, 1]) == pytest.approx(0.3)


# ----------------------------------------------------------------- entropy
def test_predictive_entropy_matches_scipy():
    rng = np.random.default_rng(5)
    proba = rng.dirichlet([0.3] * 5, size=50)
    proba[0] = [1, 0, 0, 0, 0]
    proba[1] = [0.5, 0.5, 0, 0, 0]
    h = predictive_entropy(proba)
    assert h.shape == (50,)
    np.testing.assert_allclose(h, entropy(proba, axis=1), atol=1e-12)
    np.testing.assert_allclose(h[:2], [0.0, np.log(2)])
    p = rng.uniform(size=20)
    np.testing.assert_allclose(predictive_entropy(p), entropy(np.column_stack([p, 1 - p]), axis=1))
    with pytest.raises(ValueError, match="y_prob"):
        predictive_entropy([[0.7, 0.7]])


# ----------------------------------------------------------- curve fields
def test_curve_gives_ece_and_mce():
    curve = reliability_curve(Y6, PROBA6, n_bins=7)
    assert curve.ece == expected_calibration_error(Y6, PROBA6, n_bins=7)
    assert curve.mce == maximum_calibration_error(Y6, PROBA6, n_bins=7)
    # from stored bins, without the samples or the edges
    stored = ReliabilityCurve(curve.confidence.tolist(), curve.accuracy.tolist(), curve.count.tolist())
    assert stored.edges is None
    assert stored.ece == pytest.approx(curve.ece, abs=1e-15)
    assert stored.mce == pytest.approx(curve.mce, abs=1e-15)
    assert len(stored) == 4 and stored._fields == ("confidence", "accuracy", "count", "edges")
