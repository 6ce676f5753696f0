"""The displays: reliability diagram, prediction bands, inclusion of a sparse network."""

import sys
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris, make_classification
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline as SkPipeline
from sklearn.preprocessing import StandardScaler

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor, SamplerWarning, SparseGibbsMLPRegressor
from skgibbs.datasets import make_gap_regression
from skgibbs.display import InclusionDisplay, InputRelevanceDisplay, PredictionBandDisplay
from skgibbs.metrics import expected_calibration_error, reliability_curve
from skgibbs.pipeline import make_pipeline


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
    reason = "the displays draw with matplotlib (the plot extra)"
    matplotlib = pytest.importorskip("matplotlib", reason=reason)
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


def _pixels(ax, x, y):
    return ax.transData.transform(np.column_stack([x, y]))


def _marker_boxes(disp):
    from matplotlib.transforms import Bbox

    half = disp.line_.get_markersize() * disp.figure_.dpi / 72.0 / 2.0
    xy = _pixels(disp.ax_, disp.line_.get_xdata(), disp.line_.get_ydata())
    return [Bbox.from_extents(x - half, y - half, x + half, y + half) for x, y in xy]


def _check_readable(displays):
    """What a reader of the figure needs, read off its artists (the figure drawn first, as when saved)."""
    first = displays[0]
    ax, fig = first.ax_, first.figure_
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    legend = ax.get_legend().get_window_extent(renderer)
    lo = min(min(d.edges[:, 0].min(), d.confidence.min(), d.accuracy.min()) for d in displays)
    for d in displays:
        # the axes start where the bins do (not at 0), and end past 1 so that no marker is cut
        assert ax.get_xlim()[0] > lo - 0.1 * (1 - lo) and ax.get_xlim()[0] < lo
        assert ax.get_xlim() == ax.get_ylim()  # the diagonal at 45 degrees
        for box in _marker_boxes(d):
            assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
            assert not legend.overlaps(box)  # the legend covers no marker ...
        # ... no point of a curve (sampled between the markers), no bar, no bar label
        xy = _pixels(ax, d.line_.get_xdata(), d.line_.get_ydata())
        t = np.linspace(0, 1, 50)[:, None]
        along = np.vstack([a + t * (b - a) for a, b in zip(xy[:-1], xy[1:])] or [xy])
        assert not np.any(
            (along[:, 0] > legend.x0) & (along[:, 0] < legend.x1) & (along[:, 1] > legend.y0) & (along[:, 1] < legend.y1)
        )
        for bar in d.bars_:
            assert not legend.overlaps(bar.get_window_extent(renderer))
    # every bin's count is written on its bar, inside the figure
    texts = [text for text in first.counts_ax_.texts if text.get_text()]
    assert sorted(int(text.get_text()) for text in texts) == sorted(np.concatenate([d.count for d in displays]))
    for text in texts:
        box = text.get_window_extent(renderer)
        assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1 and box.y1 <= fig.bbox.y1
    # and the legend itself is inside the figure
    assert fig.bbox.x0 <= legend.x0 and legend.x1 <= fig.bbox.x1 and fig.bbox.y0 <= legend.y0 and legend.y1 <= fig.bbox.y1


@pytest.mark.parametrize("load", [load_breast_cancer, load_iris], ids=["two_classes", "three_classes"])
def test_reliability_diagram_of_an_easy_problem_is_readable(pyplot, load):
    from skgibbs.display import ReliabilityDisplay

    # easy problems: most confidences near 1, bins of accuracy 1.0 at the top edge
    X, y = load(return_X_y=True)
    n_classes = len(np.unique(y))
    clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(X, y)
    disp = ReliabilityDisplay.from_estimator(clf, X, y)
    assert disp.confidence.max() > 0.97 and disp.accuracy.max() == 1.0
    assert disp.ax_.get_xlim()[0] > 1 / n_classes - 0.05  # the impossible confidences below 1/C are not shown
    _check_readable([disp])


def test_reliability_diagram_keeps_every_curve_readable_on_shared_axes(pyplot):
    from skgibbs.display import ReliabilityDisplay

    rng = np.random.default_rng(6)
    p = rng.uniform(size=500)
    y = (rng.uniform(size=500) < p).astype(int)
    first = ReliabilityDisplay.from_predictions(y, p, n_bins=10, name="calibrated")
    second = ReliabilityDisplay.from_predictions(y, np.clip(0.5 + 1.5 * (p - 0.5), 0, 1), n_bins=10, ax=first.ax_)
    _check_readable([first, second])


# ------------------------------------------------------------------ prediction bands
def _fit_quietly(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)  # short chains: the mixing warning is expected
        return est.fit(X, y)


def _small(cls=GibbsMLPRegressor, **kwargs):
    settings = dict(hidden_layer_sizes=(8,), n_samples=20, burn_in=20, pretrain_iter=100, random_state=0)
    if cls is SparseGibbsMLPRegressor:
        settings["burn_in"] = 200
    return cls(**{**settings, **kwargs})


@pytest.fixture(scope="module")
def gap_fit():
    # the fixed prior at the plug-in temperature: a noise variance wide against the draws' spread, whose
    # predictive bands hold the credible ones (test_bands_are_nested), and no input relevance
    X, y = make_gap_regression(n_samples=120, random_state=0)
    return _fit_quietly(_small(prior="fixed", temperature="plug-in"), X, y), X, y


@pytest.fixture(scope="module")
def pd():
    return pytest.importorskip("pandas", reason="column names come from a DataFrame")


@pytest.fixture(scope="module")
def three_inputs(pd):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(-1, 1, (80, 3)), columns=["age", "bmi", "bp"])
    X["bmi"] *= 4.0
    y = np.sin(3 * X["age"].to_numpy()) + 0.1 * rng.normal(size=80)
    return X, y


def test_bands_are_predict_interval_on_the_grid(pyplot, gap_fit):
    reg, X, y = gap_fit
    disp = PredictionBandDisplay.from_estimator(
        reg, X, confidence_level=[0.5, 0.9], grid_resolution=50, X_train=X, y_train=y
    )
    np.testing.assert_allclose(disp.x, np.linspace(X.min(), X.max(), 50))
    np.testing.assert_allclose(disp.X_grid[:, 0], disp.x)
    for kind in ("predictive", "credible"):
        y_pred, y_pis = reg.predict_interval(disp.X_grid, confidence_level=[0.5, 0.9], kind=kind)
        assert disp.y_pis[kind].shape == y_pis.shape == (50, 2, 2)
        np.testing.assert_allclose(disp.y_pis[kind], y_pis)
        np.testing.assert_allclose(disp.y_pred, y_pred)
        assert [band.get_label() for band in disp.bands_[kind]] == [f"50% {kind} band", f"90% {kind} band"]
        for i, band in enumerate(disp.bands_[kind]):  # the drawn polygon spans the bounds
            vertices = band.get_paths()[0].vertices
            assert vertices[:, 1].min() == pytest.approx(y_pis[:, 0, i].min())
            assert vertices[:, 1].max() == pytest.approx(y_pis[:, 1, i].max())
    np.testing.assert_allclose(disp.line_.get_xdata(), disp.x)
    np.testing.assert_allclose(disp.line_.get_ydata(), disp.y_pred)
    np.testing.assert_allclose(disp.scatter_.get_offsets(), np.column_stack([X[:, 0], y]))
    np.testing.assert_allclose(disp.confidence_level, [0.5, 0.9])
    assert disp.feature_name == "x0" and disp.ax_.get_xlabel() == "x0"
    assert disp.figure_ is disp.ax_.figure
    # by default the estimator's own level, both kinds
    default = PredictionBandDisplay.from_estimator(reg, X, grid_resolution=20)
    np.testing.assert_allclose(default.confidence_level, [reg.confidence_level])
    assert list(default.bands_) == ["predictive", "credible"] and default.scatter_ is None


def test_bands_are_nested(pyplot, gap_fit):
    reg, X, _ = gap_fit
    # over the data's range (|x| < 0.8), where the noise is wide against the draws' spread; beyond it the
    # spread of f grows past the noise, and the quantiles of a mixture over 80 draws need not nest there
    disp = PredictionBandDisplay.from_estimator(
        reg, X, confidence_level=[0.5, 0.8, 0.95], grid_resolution=60, grid_range=(-0.8, 0.8)
    )
    pred, cred = disp.y_pis["predictive"], disp.y_pis["credible"]
    tol = 1e-12
    assert np.all(pred[:, 0] <= cred[:, 0] + tol) and np.all(cred[:, 1] <= pred[:, 1] + tol)
    for bounds in (pred, cred):
        assert np.all(bounds[:, 0] <= bounds[:, 1])
        assert np.all(np.diff(bounds[:, 0], axis=-1) <= tol)  # higher level, lower bound
        assert np.all(np.diff(bounds[:, 1], axis=-1) >= -tol)
    assert disp.x[0] == -0.8 and disp.x[-1] == 0.8


def test_bands_hold_the_other_inputs_at_their_median(pyplot, pd, three_inputs):
    X, y = three_inputs
    reg = _fit_quietly(_small(), X, y)
    disp = PredictionBandDisplay.from_estimator(reg, X, feature="bmi", grid_resolution=30, kind="credible")
    assert isinstance(disp.X_grid, pd.DataFrame) and list(disp.X_grid.columns) == ["age", "bmi", "bp"]
    np.testing.assert_allclose(disp.X_grid["age"], X["age"].median())
    np.testing.assert_allclose(disp.X_grid["bp"], X["bp"].median())
    np.testing.assert_allclose(disp.x, np.linspace(X["bmi"].min(), X["bmi"].max(), 30))
    assert list(disp.bands_) == ["credible"] and disp.feature_name == "bmi"
    np.testing.assert_allclose(disp.y_pis["credible"], reg.predict_interval(disp.X_grid, kind="credible")[1])
    # the same slice from an array, by index
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="X does not have valid feature names")
        arr = PredictionBandDisplay.from_estimator(
            reg, X.to_numpy(), feature=1, grid_resolution=30, kind="credible"
        )
    np.testing.assert_allclose(arr.X_grid, disp.X_grid.to_numpy())
    assert arr.feature_name == "x1"


def test_bands_of_pipelines(pyplot, three_inputs):
    X, y = three_inputs
    X = X.to_numpy()
    pipe = _fit_quietly(make_pipeline(StandardScaler(), _small()), X, y)
    disp = PredictionBandDisplay.from_estimator(pipe, X, feature=2, grid_resolution=25, confidence_level=0.8)
    for kind in ("predictive", "credible"):
        np.testing.assert_allclose(disp.y_pis[kind], pipe.predict_interval(disp.X_grid, 0.8, kind=kind)[1])
    # scikit-learn's Pipeline has no predict_interval: the display reaches the last step itself
    sk_pipe = SkPipeline(pipe.steps)
    sk = PredictionBandDisplay.from_estimator(sk_pipe, X, feature=2, grid_resolution=25, confidence_level=0.8)
    np.testing.assert_allclose(sk.y_pis["predictive"], disp.y_pis["predictive"])


def test_bands_refuse_what_they_cannot_draw(pyplot, gap_fit):
    reg, X, y = gap_fit
    with pytest.raises(TypeError, match="needs a skgibbs regressor.*GibbsMLPClassifier"):
        PredictionBandDisplay.from_estimator(GibbsMLPClassifier(), X)
    clf = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y > 0.3)
    with pytest.raises(TypeError, match="LogisticRegression"):
        PredictionBandDisplay.from_estimator(clf, X)
    with pytest.raises(NotFittedError):
        PredictionBandDisplay.from_estimator(GibbsMLPRegressor(), X)
    with pytest.raises(ValueError, match="kind"):
        PredictionBandDisplay.from_estimator(reg, X, kind="posterior")
    with pytest.raises(ValueError, match="feature"):
        PredictionBandDisplay.from_estimator(reg, X, feature=1)
    with pytest.raises(ValueError, match="no column names"):
        PredictionBandDisplay.from_estimator(reg, X, feature="x0")
    with pytest.raises(ValueError, match="grid_resolution"):
        PredictionBandDisplay.from_estimator(reg, X, grid_resolution=1)
    with pytest.raises(ValueError, match="low < high"):
        PredictionBandDisplay.from_estimator(reg, X, grid_range=(1.0, 1.0))
    with pytest.raises(ValueError, match="confidence_level"):
        PredictionBandDisplay.from_estimator(reg, X, confidence_level=1.5)


def test_bands_share_axes(pyplot, gap_fit):
    reg, X, _ = gap_fit
    first = PredictionBandDisplay.from_estimator(reg, X, grid_resolution=20, kind="credible", name="first")
    second = PredictionBandDisplay.from_estimator(
        reg, X, grid_resolution=20, kind="credible", name="second", ax=first.ax_, line_kw={"color": "tab:red"}
    )
    assert second.ax_ is first.ax_ and second.figure_ is first.figure_
    assert second.line_.get_color() == "tab:red" and first.line_.get_color() != "tab:red"
    from matplotlib.colors import to_rgb

    red = to_rgb("tab:red")
    np.testing.assert_allclose(second.bands_["credible"][0].get_facecolor()[0][:3], red)
    labels = [text.get_text() for text in first.ax_.get_legend().get_texts()]
    assert "first: posterior mean" in labels and "second: 95% credible band" in labels
    # plot() draws again, on new axes
    again = second.plot(band_kw={"alpha": 0.5})
    assert again.ax_ is not first.ax_ and again.bands_["credible"][0].get_alpha() == 0.5


def test_bands_from_predictions():
    x = np.array([0.3, 0.1, 0.2])
    y_pis = np.stack([x - 0.1, x + 0.1], axis=1)
    disp = PredictionBandDisplay(x, x, {"credible": y_pis})
    np.testing.assert_allclose(disp.x, [0.1, 0.2, 0.3])  # sorted, and the bounds with it
    np.testing.assert_allclose(disp.y_pis["credible"][:, 0, 0], [0.0, 0.1, 0.2])
    assert disp.confidence_level is None
    with pytest.raises(ValueError, match="levels but the bands have 1"):
        PredictionBandDisplay(x, x, {"credible": y_pis}, confidence_level=[0.5, 0.9])
    with pytest.raises(ValueError, match="shape"):
        PredictionBandDisplay(x, x, {"credible": y_pis[:2]})
    with pytest.raises(ValueError, match="x_train and y_train"):
        PredictionBandDisplay(x, x, {"credible": y_pis}, x_train=x)


def test_bands_from_predictions_draws(pyplot, gap_fit):
    reg, X, y = gap_fit
    y_pred, y_pis = reg.predict_interval(X, confidence_level=[0.9], kind="predictive")
    disp = PredictionBandDisplay.from_predictions(
        X[:, 0], y_pred, y_pis, confidence_level=0.9, x_train=X[:, 0], y_train=y, feature_name="input"
    )
    order = np.argsort(X[:, 0], kind="stable")
    np.testing.assert_allclose(disp.line_.get_ydata(), y_pred[order])
    assert [band.get_label() for band in disp.bands_["predictive"]] == ["90% predictive band"]
    assert disp.ax_.get_xlabel() == "input"
    unnamed = PredictionBandDisplay.from_predictions(X[:, 0], y_pred, y_pis[:, :, 0], kind="credible")
    assert unnamed.bands_["credible"][0].get_label() == "credible band"


# ------------------------------------------------------------------ inclusion
@pytest.fixture(scope="module")
def sparse_fit(three_inputs):
    X, y = three_inputs
    return _fit_quietly(_small(SparseGibbsMLPRegressor, hidden_layer_sizes=(6, 4)), X, y), X, y


def test_inclusion_bars_are_feature_inclusion(pyplot, sparse_fit):
    reg, X, _ = sparse_fit
    disp = InclusionDisplay.from_estimator(reg, highlight=["bmi"])
    np.testing.assert_array_equal(disp.order_, np.argsort(-reg.feature_inclusion_, kind="stable"))
    heights = [bar.get_height() for bar in disp.bars_]
    np.testing.assert_allclose(heights, reg.feature_inclusion_[disp.order_])
    names = [label.get_text() for label in disp.ax_.get_xticklabels()]
    assert names == list(np.asarray(X.columns)[disp.order_])
    colors = [tuple(bar.get_facecolor()) for bar in disp.bars_]
    marked = list(disp.order_).index(1)
    assert len({colors[marked]} | {c for i, c in enumerate(colors) if i != marked}) == 2
    assert disp.images_ == [] and disp.colorbar_ is None and disp.figure_ is disp.ax_.figure

    in_order = InclusionDisplay.from_estimator(reg, sort=False, max_features=2, feature_names=["a", "b", "c"])
    np.testing.assert_array_equal(in_order.order_, [0, 1])
    np.testing.assert_allclose([bar.get_height() for bar in in_order.bars_], reg.feature_inclusion_[:2])
    assert [label.get_text() for label in in_order.ax_.get_xticklabels()] == ["a", "b"]


def test_inclusion_heat_maps_are_unpack_inclusion(pyplot, sparse_fit):
    reg, _, _ = sparse_fit
    coefs, _ = reg.unpack_inclusion()
    disp = InclusionDisplay.from_estimator(reg, kind="weights")
    assert len(disp.images_) == len(coefs) == 3 and len(disp.axes_) == 3
    for image, W in zip(disp.images_, coefs):
        np.testing.assert_allclose(image.get_array(), W)
    assert disp.colorbar_ is not None and disp.bars_ is None
    assert [label.get_text() for label in disp.ax_.get_yticklabels()] == ["age", "bmi", "bp"]
    # one layer on given axes
    fig, ax = pyplot.subplots()
    first = InclusionDisplay.from_estimator(reg, kind="weights", layers=[0], ax=ax, colorbar=False)
    assert first.ax_ is ax and first.colorbar_ is None
    np.testing.assert_array_equal(first.layers_, [0])
    with pytest.raises(ValueError, match="one Axes per layer"):
        InclusionDisplay.from_estimator(reg, kind="weights", ax=ax)
    with pytest.raises(ValueError, match="layers"):
        InclusionDisplay.from_estimator(reg, kind="weights", layers=[3])


def test_inclusion_of_pipelines_and_wrong_estimators(pyplot, sparse_fit, gap_fit):
    _, X, y = sparse_fit
    # the bars are the last step's feature_inclusion_ whatever the length of its chains: a short run does
    short = _small(SparseGibbsMLPRegressor, burn_in=20)
    pipe = _fit_quietly(make_pipeline(StandardScaler(), short), X.to_numpy(), y)
    disp = InclusionDisplay.from_estimator(pipe, sort=False)
    np.testing.assert_allclose([bar.get_height() for bar in disp.bars_], pipe[-1].feature_inclusion_)
    assert disp.feature_names.tolist() == ["x0", "x1", "x2"]
    dense, _, _ = gap_fit
    with pytest.raises(TypeError, match="SparseGibbsMLPRegressor.*GibbsMLPRegressor"):
        InclusionDisplay.from_estimator(dense)
    with pytest.raises(NotFittedError):
        InclusionDisplay.from_estimator(SparseGibbsMLPRegressor())
    with pytest.raises(ValueError, match="kind"):
        InclusionDisplay.from_estimator(pipe, kind="inputs")
    with pytest.raises(ValueError, match="highlight"):
        InclusionDisplay.from_estimator(pipe, highlight=["nope"])


def test_inclusion_display_checks_its_input():
    with pytest.raises(ValueError, match="1-d"):
        InclusionDisplay(np.ones((2, 2)))
    with pytest.raises(ValueError, match="2 names for 3 inputs"):
        InclusionDisplay([0.1, 0.2, 0.3], feature_names=["a", "b"])
    weights = InclusionDisplay([np.ones((3, 2)), np.ones((2, 1))], kind="weights")
    assert weights.feature_names.tolist() == ["x0", "x1", "x2"]


# ------------------------------------------------------------------ input relevance (ARD)
def test_relevance_bars_are_input_relevance(pyplot, three_inputs, gap_fit):
    X, y = three_inputs
    reg = _fit_quietly(_small(prior="ard"), X, y)
    disp = InputRelevanceDisplay.from_estimator(reg)
    np.testing.assert_array_equal(disp.order_, np.argsort(-reg.input_relevance_, kind="stable"))
    np.testing.assert_allclose([bar.get_height() for bar in disp.bars_], reg.input_relevance_[disp.order_])
    assert [label.get_text() for label in disp.ax_.get_xticklabels()] == list(np.asarray(X.columns)[disp.order_])
    assert disp.ax_.get_yscale() == "log" and disp.prior_scale == pytest.approx(3**-0.5)
    lo, hi = reg.input_relevance_interval_.T
    assert np.all((lo <= reg.input_relevance_) & (reg.input_relevance_ <= hi))
    # a pipeline's last step, names from the steps before it
    pipe = _fit_quietly(make_pipeline(StandardScaler(), _small(prior="ard")), X.to_numpy(), y)
    names = InputRelevanceDisplay.from_estimator(pipe, sort=False, log_scale=False).feature_names
    assert names.tolist() == ["x0", "x1", "x2"]
    dense, _, _ = gap_fit
    with pytest.raises(TypeError, match="prior='ard'.*prior='fixed'"):
        InputRelevanceDisplay.from_estimator(dense)
    # prior="auto" under a sampler without hierarchical priors: the message names the prior sampled
    auto_fixed = _fit_quietly(_small(sampler="mala", n_samples=5, burn_in=5, pretrain_iter=10), X, y)
    assert auto_fixed.prior == "auto" and auto_fixed.prior_ == "fixed"
    with pytest.raises(TypeError, match="prior='ard'.*prior='fixed'"):
        InputRelevanceDisplay.from_estimator(auto_fixed)
    with pytest.raises(NotFittedError):
        InputRelevanceDisplay.from_estimator(GibbsMLPRegressor(prior="ard"))
    with pytest.raises(ValueError, match="shape"):
        InputRelevanceDisplay([1.0, 2.0], interval=np.ones((3, 2)))


def test_displays_name_the_plot_extra_without_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)  # import matplotlib.pyplot fails
    x = np.linspace(0, 1, 3)
    bands = PredictionBandDisplay(x, x, {"credible": np.stack([x, x], axis=1)})
    with pytest.raises(ImportError, match=r'PredictionBandDisplay needs matplotlib.*skgibbs\[plot\]'):
        bands.plot()
    with pytest.raises(ImportError, match="InclusionDisplay needs matplotlib"):
        InclusionDisplay([0.5, 0.1]).plot()
    with pytest.raises(ImportError, match="InputRelevanceDisplay needs matplotlib"):
        InputRelevanceDisplay([0.5, 0.1]).plot()
