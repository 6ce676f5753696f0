"""The reliability diagram."""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skgibbs.metrics import expected_calibration_error, reliability_curve


def _problem(n_classes, string_labels=False, n=240, seed=0):
    X, y = make_classification(
        n_samples=n,
        n_features=6,
        n_informative=4,
        n_classes=n_classes,
        n_clusters_per_class=1,
        random_state=seed,
    )
    if string_labels:
        y = np.array(["zebra", "ant", "moth", "cow"])[y]
    return X, y


@pytest.fixture
def pyplot():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


def test_display_from_estimator(pyplot):
    from skgibbs.display import ReliabilityDisplay

    X, y = _problem(3, string_labels=True)
    pipe = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)
    disp = ReliabilityDisplay.from_estimator(pipe, X, y, n_bins=8)
    curve = reliability_curve(y, pipe.predict_proba(X), n_bins=8, labels=pipe.classes_)
    np.testing.assert_allclose(disp.line_.get_xdata(), curve.confidence)
    np.testing.assert_allclose(disp.line_.get_ydata(), curve.accuracy)
    np.testing.assert_array_equal(disp.count, curve.count)
    assert disp.ece == pytest.approx(expected_calibration_error(y, pipe.predict_proba(X), n_bins=8))
    assert disp.estimator_name == "LogisticRegression"
    assert disp.line_.get_label() == f"LogisticRegression (ECE {disp.ece:.3f})"
    assert disp.ax_.get_xlabel().startswith("Confidence") and disp.ax_.get_ylabel() == "Accuracy"
    assert disp.figure_ is disp.ax_.figure
    legend = [text.get_text() for text in disp.ax_.get_legend().get_texts()]
    assert legend == ["Perfectly calibrated", disp.line_.get_label()]
    heights = [bar.get_height() for bar in disp.bars_]
    np.testing.assert_allclose(heights, curve.count / curve.count.sum())
    np.testing.assert_allclose([bar.get_x() for bar in disp.bars_], curve.edges[:, 0])


def test_display_from_predictions_shares_axes(pyplot):
    from skgibbs.display import ReliabilityDisplay

    rng = np.random.default_rng(6)
    p = rng.uniform(size=500)
    y = (rng.uniform(size=500) < p).astype(int)
    first = ReliabilityDisplay.from_predictions(y, p, n_bins=5, name="calibrated")
    sharp = np.clip(0.5 + 1.5 * (p - 0.5), 0, 1)
    second = ReliabilityDisplay.from_predictions(y, sharp, n_bins=5, ax=first.ax_, color="tab:red")
    assert second.ax_ is first.ax_ and second.counts_ax_ is first.counts_ax_
    labels = [line.get_label() for line in first.ax_.get_lines()]
    assert labels.count("Perfectly calibrated") == 1
    assert labels[1] == f"calibrated (ECE {expected_calibration_error(y, p, n_bins=5):.3f})"
    assert labels[2] == f"ECE {expected_calibration_error(y, sharp, n_bins=5):.3f}"
    assert second.line_.get_color() == "tab:red"
    assert len(first.counts_ax_.patches) == len(first.count) + len(second.count)


def test_display_options(pyplot):
    from skgibbs.display import ReliabilityDisplay

    y_prob = [[0.9, 0.1], [0.8, 0.2], [0.4, 0.6], [0.3, 0.7]]
    disp = ReliabilityDisplay.from_predictions(
        ["a", "b", "a", "b"], y_prob, n_bins=4, ref_line=False, show_counts=False, label="mine"
    )
    assert disp.bars_ is None and disp.counts_ax_ is None
    assert [line.get_label() for line in disp.ax_.get_lines()] == ["mine"]
    assert len(disp.figure_.axes) == 1
    np.testing.assert_allclose(disp.confidence, [0.65, 0.85])
    assert disp.ece == pytest.approx(0.25)
    bare = ReliabilityDisplay([0.6], [0.5], [3])
    with pytest.raises(ValueError, match="edges"):
        bare.plot()
    assert bare.plot(show_counts=False).line_.get_label() == "ECE 0.100"
    with pytest.raises(TypeError, match="predict_proba"):
        ReliabilityDisplay.from_estimator(StandardScaler().fit([[0.0], [1.0]]), [[0.0]], [0])
