"""``sample_weight`` in the metric functions and the scorers of skgibbs.metrics.

The ground truth: integer weights give the value of the rows repeated that
many times (a weight of 0 drops the row), and weights all 1 give the
unweighted value exactly. The weighted sums and the sums over repeated rows
add the same terms in other orders (``k * t`` against ``t + ... + t``), so
they agree to a few units of rounding of float64; ``rtol=1e-10`` leaves
room for that and for nothing else. The skgibbs networks predict in
float32, and the last bits of a row's prediction depend on the other rows
of the batch; the scorers are therefore compared on an estimator that
predicts each row alone (:class:`_RowByRow`), whose predictions of a row are
the same in any batch.
"""

import pickle
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import brier_score_loss, log_loss
from sklearn.model_selection import GridSearchCV, KFold, cross_validate

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor
from skgibbs.metrics import (
    coverage_score,
    expected_calibration_error,
    interval_score,
    log_predictive_density_scorer,
    make_coverage_scorer,
    make_diagnostic_scorers,
    make_ece_scorer,
    make_interval_scorer,
    make_mce_scorer,
    make_width_scorer,
    maximum_calibration_error,
    mean_width_score,
    neg_brier_scorer,
    neg_expected_calibration_error_scorer,
    neg_log_loss_scorer,
    reliability_curve,
    waic_scorer,
)
from skgibbs.metrics import _scorers

RTOL = 1e-10
CHEAP = {"hidden_layer_sizes": (8,), "n_samples": 5, "burn_in": 5, "pretrain_iter": 50, "random_state": 0}
BAD_WEIGHTS = {
    "negative": lambda n: np.r_[-1.0, np.ones(n - 1)],
    "nan": lambda n: np.r_[np.nan, np.ones(n - 1)],
    "wrong length": lambda n: np.ones(n + 1),
    "all zero": lambda n: np.zeros(n),
}


def _weights(n, seed=0):
    """Integer weights in 0..3, with zeros, as floats."""
    w = np.random.default_rng(seed).integers(0, 4, n).astype(float)
    w[:2] = [0.0, 3.0]
    return w


def _repeat(w, *arrays):
    return [np.repeat(np.asarray(a), w.astype(int), axis=0) for a in arrays]


def _fit(est, X, y, **fit_params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y, **fit_params)


# ------------------------------------------------------------- metric functions
def _intervals(n=30, n_levels=2, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=n)
    centre = y + 0.5 * rng.normal(size=n)
    half = np.abs(rng.normal(size=(n, n_levels))) + [0.2 * k for k in range(n_levels)]
    return y, np.stack([centre[:, None] - half, centre[:, None] + half], axis=1)


def _interval_metrics():
    return {
        "coverage": lambda y, pis, **kw: coverage_score(y, pis, **kw),
        "width": lambda y, pis, **kw: mean_width_score(pis, **kw),
        "interval": lambda y, pis, **kw: interval_score(y, pis, [0.8, 0.9], **kw),
    }


@pytest.mark.parametrize("name", list(_interval_metrics()))
def test_interval_metrics_weigh_as_repeated_rows(name):
    metric = _interval_metrics()[name]
    y, pis = _intervals()
    w = _weights(len(y))
    np.testing.assert_allclose(metric(y, pis, sample_weight=w), metric(*_repeat(w, y, pis)), rtol=RTOL)
    np.testing.assert_array_equal(metric(y, pis, sample_weight=np.ones(len(y))), metric(y, pis))
    assert not np.allclose(metric(y, pis, sample_weight=w), metric(y, pis))  # the weights count


def _probabilities(n=60, n_classes=3, seed=0):
    rng = np.random.default_rng(seed)
    logits = 2.0 * rng.normal(size=(n, n_classes))
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    proba[:6] = np.round(proba[:6], 1)  # rounded rows: tied confidences, and confidences on the edges
    proba[:6] /= proba[:6].sum(axis=1, keepdims=True)
    y = np.array([rng.choice(n_classes, p=p) for p in proba])
    return y, proba


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_calibration_metrics_weigh_as_repeated_rows(strategy, n_classes):
    y, proba = _probabilities(n_classes=n_classes)
    if n_classes == 2:
        proba = proba[:, 1]  # the positive-class vector
    w = _weights(len(y))
    y_rep, proba_rep = _repeat(w, y, proba)
    for n_bins in (1, 4, 10):
        kw = {"n_bins": n_bins, "strategy": strategy}
        weighted = reliability_curve(y, proba, sample_weight=w, **kw)
        repeated = reliability_curve(y_rep, proba_rep, **kw)
        np.testing.assert_array_equal(weighted.edges, repeated.edges)  # the quantile edges to the bit
        np.testing.assert_array_equal(weighted.count, repeated.count)
        np.testing.assert_allclose(weighted.confidence, repeated.confidence, rtol=RTOL)
        np.testing.assert_allclose(weighted.accuracy, repeated.accuracy, rtol=RTOL)
        for metric in (expected_calibration_error, maximum_calibration_error):
            value = metric(y, proba, sample_weight=w, **kw)
            assert value == pytest.approx(metric(y_rep, proba_rep, **kw), rel=RTOL, abs=1e-15)
            assert metric(y, proba, sample_weight=np.ones(len(y)), **kw) == metric(y, proba, **kw)
        unit = reliability_curve(y, proba, sample_weight=np.ones(len(y)), **kw)
        unweighted = reliability_curve(y, proba, **kw)
        for field in ("confidence", "accuracy", "count", "edges"):
            np.testing.assert_array_equal(getattr(unit, field), getattr(unweighted, field))


def test_calibration_bins_of_zero_weight_are_empty():
    # uniform bins of thirds; the two samples of the middle bin weigh 0, which empties it
    y = np.array([0, 1, 0, 1, 0, 0])
    proba = np.array([0.1, 0.2, 0.45, 0.55, 0.9, 0.95])  # confidences 0.9, 0.8, 0.55, 0.55, 0.9, 0.95
    w = np.array([1.0, 1.0, 0.0, 0.0, 2.0, 1.0])
    curve = reliability_curve(y, proba, n_bins=3, sample_weight=w)
    np.testing.assert_allclose(curve.edges, [[2 / 3, 1.0]])
    assert curve.count.tolist() == [5.0]
    # by hand: one correct sample of weight 1 in 5, mean confidence (0.9 + 0.8 + 2 * 0.9 + 0.95) / 5
    np.testing.assert_allclose(curve.accuracy, [0.2])
    np.testing.assert_allclose(curve.confidence, [0.89])
    assert maximum_calibration_error(y, proba, n_bins=3, sample_weight=w) == pytest.approx(0.69)
    assert expected_calibration_error(y, proba, n_bins=3, sample_weight=w) == pytest.approx(0.69)
    # unweighted, the middle bin (both correct, confidence 0.55) is there: a gap of 0.45
    assert len(reliability_curve(y, proba, n_bins=3).count) == 2
    assert maximum_calibration_error(y, proba, n_bins=3) == pytest.approx(0.8875 - 0.25)


def test_quantile_edges_of_non_integer_weights_span_the_weighted_rows():
    y, proba = _probabilities(n=40)
    w = np.random.default_rng(1).uniform(0.2, 2.5, len(y))
    w[3] = 0.0
    confidence = proba.max(axis=1)
    curve = reliability_curve(y, proba, n_bins=5, strategy="quantile", sample_weight=w)
    assert curve.edges[0, 0] == confidence[w > 0].min() and curve.edges[-1, 1] == confidence[w > 0].max()
    assert curve.count.sum() == pytest.approx(w.sum())
    # scaled to integers, they are counts again
    w10 = np.round(10 * w)
    ece = expected_calibration_error(y, proba, n_bins=5, strategy="quantile", sample_weight=w10)
    y_rep, proba_rep = _repeat(w10, y, proba)
    assert ece == pytest.approx(expected_calibration_error(y_rep, proba_rep, n_bins=5, strategy="quantile"))


_METRIC_CALLS = {
    "coverage_score": lambda w: coverage_score([0.0, 1.0, 2.0], [[0, 1]] * 3, sample_weight=w),
    "mean_width_score": lambda w: mean_width_score([[0, 1]] * 3, sample_weight=w),
    "interval_score": lambda w: interval_score([0.0, 1.0, 2.0], [[0, 1]] * 3, 0.9, sample_weight=w),
    "reliability_curve": lambda w: reliability_curve([0, 1, 1], [0.2, 0.7, 0.9], sample_weight=w),
    "expected_calibration_error": lambda w: expected_calibration_error(
        [0, 1, 1], [0.2, 0.7, 0.9], strategy="quantile", sample_weight=w
    ),
    "maximum_calibration_error": lambda w: maximum_calibration_error(
        [0, 1, 1], [0.2, 0.7, 0.9], sample_weight=w
    ),
}


@pytest.mark.parametrize("bad", list(BAD_WEIGHTS))
@pytest.mark.parametrize("metric", list(_METRIC_CALLS))
def test_metric_functions_refuse_bad_weights(metric, bad):
    with pytest.raises(ValueError, match="sample_weight"):
        _METRIC_CALLS[metric](BAD_WEIGHTS[bad](3))


# ---------------------------------------------------------------------- scorers
def _regression(n, seed, noise=0.1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + noise * rng.normal(size=n)


def _held_out(n=30):
    return _regression(n, 1, noise=0.6)  # noisier than the training data: some rows miss their intervals


class _RowByRow:
    """A fitted estimator that predicts each row alone, so that a row's prediction ignores the batch."""

    def __init__(self, est):
        self.est = est

    def __getattr__(self, name):
        if name == "est":
            raise AttributeError(name)
        return getattr(self.est, name)

    def _each_row(self, method, X, **kwargs):
        rows = [getattr(self.est, method)(X[i : i + 1], **kwargs) for i in range(len(X))]
        if isinstance(rows[0], tuple):
            return tuple(np.concatenate(parts) for parts in zip(*rows))
        return np.concatenate(rows)

    def predict_interval(self, X, **kwargs):
        return self._each_row("predict_interval", X, **kwargs)

    def predict_samples(self, X):
        return self._each_row("predict_samples", X)

    def predict_proba(self, X):
        return self._each_row("predict_proba", X)


def _classification(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, "yes", "no")
    return X, y


@pytest.fixture(scope="module")
def regressor():
    return _fit(GibbsMLPRegressor(**CHEAP), *_regression(40, 0))


@pytest.fixture(scope="module")
def classifiers():
    X, y = _classification(60, 0)
    return _fit(GibbsMLPClassifier(**CHEAP), X, y), LogisticRegression().fit(X, y)


def test_a_row_by_row_estimator_predicts_as_the_estimator(regressor):
    X, _ = _held_out()
    row_by_row = _RowByRow(regressor)
    F = regressor.predict_samples(X)
    np.testing.assert_allclose(row_by_row.predict_samples(X), F, rtol=1e-5, atol=1e-6)
    assert row_by_row.noise_variance_ == regressor.noise_variance_


REGRESSION_SCORERS = {
    "coverage": make_coverage_scorer(0.8),
    "width": make_width_scorer(0.8),
    "interval": make_interval_scorer(0.8),
    "log_predictive_density": log_predictive_density_scorer,
}
CLASSIFICATION_SCORERS = {
    "ece": neg_expected_calibration_error_scorer,
    "ece_quantile": make_ece_scorer(n_bins=5, strategy="quantile"),
    "mce": make_mce_scorer(n_bins=4),
    "brier": neg_brier_scorer,
    "log_loss": neg_log_loss_scorer,
}


def _check_scorer(scorer, est, X, y):
    est = _RowByRow(est)
    w = _weights(len(y), seed=1)
    weighted = scorer(est, X, y, sample_weight=w)
    assert isinstance(weighted, float)
    assert weighted == pytest.approx(scorer(est, *_repeat(w, X, y)), rel=RTOL, abs=1e-15)
    assert scorer(est, X, y, sample_weight=np.ones(len(y))) == scorer(est, X, y)
    assert scorer(est, X, y, sample_weight=None) == scorer(est, X, y)
    assert weighted != scorer(est, X, y)  # the weights count
    for bad in BAD_WEIGHTS.values():
        with pytest.raises(ValueError, match="sample_weight"):
            scorer(est, X, y, sample_weight=bad(len(y)))


@pytest.mark.parametrize("name", list(REGRESSION_SCORERS))
def test_regression_scorers_weigh_as_repeated_rows(regressor, name):
    _check_scorer(REGRESSION_SCORERS[name], regressor, *_held_out())


@pytest.mark.parametrize("name", list(CLASSIFICATION_SCORERS))
@pytest.mark.parametrize("which", ["gibbs", "logistic"])
def test_classification_scorers_weigh_as_repeated_rows(classifiers, name, which):
    est = classifiers[0] if which == "gibbs" else classifiers[1]
    _check_scorer(CLASSIFICATION_SCORERS[name], est, *_classification(50, 1))


def test_scorers_pass_the_weights_to_their_metric(regressor, classifiers):
    X, y = _held_out()
    w = _weights(len(y), seed=1)
    _, pis = regressor.predict_interval(X, confidence_level=0.8)
    coverage = coverage_score(y, pis, sample_weight=w)[0]
    assert make_coverage_scorer(0.8)(regressor, X, y, sample_weight=w) == coverage
    assert make_interval_scorer(0.8)(regressor, X, y, sample_weight=w) == -interval_score(
        y, pis, 0.8, sample_weight=w
    )[0]
    F, s2 = regressor.predict_samples(X), regressor.noise_variance_
    density = np.mean(np.exp(-((y[:, None] - F) ** 2) / (2 * s2)) / np.sqrt(2 * np.pi * s2), axis=1)
    log_density = np.log(density)
    assert log_predictive_density_scorer(regressor, X, y, sample_weight=w) == pytest.approx(
        np.average(log_density, weights=w), rel=1e-12
    )
    clf = classifiers[0]
    X, y = _classification(50, 1)
    w = _weights(len(y), seed=1)
    proba = clf.predict_proba(X)
    assert neg_log_loss_scorer(clf, X, y, sample_weight=w) == pytest.approx(
        -log_loss(y, proba, labels=clf.classes_, sample_weight=w), rel=1e-12
    )
    assert neg_brier_scorer(clf, X, y, sample_weight=w) == pytest.approx(
        -brier_score_loss(y, proba[:, 1], pos_label=clf.classes_[1], sample_weight=w), rel=1e-12
    )
    assert neg_expected_calibration_error_scorer(clf, X, y, sample_weight=w) == pytest.approx(
        -expected_calibration_error(y, proba, labels=clf.classes_, sample_weight=w), rel=1e-12
    )


def test_scorers_of_the_fit_ignore_the_weights(regressor):
    X, y = _held_out()
    for scorer in (waic_scorer, *make_diagnostic_scorers().values()):
        unweighted = scorer(regressor, X, y)
        for w in (_weights(len(y)), BAD_WEIGHTS["negative"](len(y)), BAD_WEIGHTS["wrong length"](len(y))):
            np.testing.assert_array_equal(scorer(regressor, X, y, sample_weight=w), unweighted)
    assert waic_scorer(regressor, X, y, sample_weight=_weights(len(y))) == -regressor.generalization_loss_


# --------------------------------------------------------------- metadata routing
def test_scorers_request_sample_weight_and_say_otherwise_on_request():
    request = make_coverage_scorer(0.9).get_metadata_routing()
    assert request.score.requests == {"sample_weight": True}
    assert log_predictive_density_scorer.get_metadata_routing().score.requests == {"sample_weight": True}
    refused = neg_log_loss_scorer.set_score_request(sample_weight=False)
    assert refused.get_metadata_routing().score.requests == {"sample_weight": False}
    assert repr(refused) == "neg_log_loss_scorer.set_score_request(sample_weight=False)"
    assert neg_log_loss_scorer.get_metadata_routing().score.requests == {"sample_weight": True}  # unchanged
    assert repr(pickle.loads(pickle.dumps(refused))) == repr(refused)
    with pytest.raises(ValueError, match="sample_weight"):
        neg_log_loss_scorer.set_score_request(sample_weight=3)


def test_grid_search_routes_the_weights_to_the_scorer(monkeypatch):
    X, y = _regression(40, 2)
    w = _weights(len(y), seed=2)
    seen = []
    coverage = _scorers._coverage

    def recording(y_true, y_pis, confidence_level, sample_weight=None):
        seen.append(sample_weight)
        return coverage(y_true, y_pis, confidence_level, sample_weight=sample_weight)

    monkeypatch.setattr(_scorers, "_coverage", recording)
    scorer = make_coverage_scorer(0.9)  # made after the patch: it holds the recording metric
    est = GibbsMLPRegressor(**{**CHEAP, "n_samples": 2, "burn_in": 2})
    with sklearn.config_context(enable_metadata_routing=True):
        est = est.set_fit_request(sample_weight=True).set_score_request(sample_weight=True)
        search = GridSearchCV(est, {"temperature": [0.5, 2.0]}, scoring=scorer, cv=2)
        _fit(search, X, y, sample_weight=w)
        # beside it, WAIC requests nothing and reads the weighted fit
        scoring = {"c": scorer, "waic": waic_scorer}
        both = GridSearchCV(est, {"temperature": [0.5]}, scoring=scoring, refit=False, cv=2)
        _fit(both, X, y, sample_weight=w)
    splits = list(KFold(2).split(X))
    assert len(seen) == 4 + 2  # two candidates and two folds, then one candidate and two folds
    for weights in seen:
        assert any(np.array_equal(weights, w[test]) for _, test in splits)
    # the score of one split is the weighted coverage of the fit on its weighted training fold
    train, test = splits[0]
    for j, params in enumerate(search.cv_results_["params"]):
        fold = _fit(clone(est).set_params(**params), X[train], y[train], sample_weight=w[train])
        _, pis = fold.predict_interval(X[test], confidence_level=0.9)
        expected = coverage_score(y[test], pis, sample_weight=w[test])[0]
        assert search.cv_results_["split0_test_score"][j] == pytest.approx(expected, rel=1e-12)
        if params["temperature"] == 0.5:
            assert both.cv_results_["split0_test_c"][0] == search.cv_results_["split0_test_score"][j]
            waic = both.cv_results_["split0_test_waic"][0]
            assert waic == pytest.approx(-fold.generalization_loss_, rel=1e-9)


def test_cross_validate_routes_the_weights_as_each_scorer_requests():
    X, y = _classification(60, 2)
    w = _weights(len(y), seed=3)
    est = LogisticRegression()
    scoring = {
        "nll": neg_log_loss_scorer,
        "nll_unweighted": neg_log_loss_scorer.set_score_request(sample_weight=False),
        "ece": make_ece_scorer(n_bins=5),
    }
    with sklearn.config_context(enable_metadata_routing=True):
        est = est.set_fit_request(sample_weight=True)
        result = cross_validate(est, X, y, scoring=scoring, params={"sample_weight": w}, cv=2)
    for i, (train, test) in enumerate(KFold(2).split(X)):
        fold = clone(LogisticRegression()).fit(X[train], y[train], sample_weight=w[train])
        proba = fold.predict_proba(X[test])
        assert result["test_nll"][i] == pytest.approx(-log_loss(y[test], proba, sample_weight=w[test]))
        assert result["test_nll_unweighted"][i] == pytest.approx(-log_loss(y[test], proba))
        assert result["test_ece"][i] == pytest.approx(
            -expected_calibration_error(y[test], proba, n_bins=5, sample_weight=w[test])
        )
