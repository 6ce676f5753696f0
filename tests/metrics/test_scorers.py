"""The scorers, all of one design, and final_step."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import brier_score_loss, log_loss, make_scorer
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import skgibbs.pipeline
from skgibbs import GibbsMLPRegressor, SamplerWarning
from skgibbs._levels import check_level, check_levels
from skgibbs.metrics import (
    coverage_score,
    expected_calibration_error,
    final_step,
    interval_score,
    log_predictive_density_scorer,
    make_coverage_scorer,
    make_ece_scorer,
    make_interval_scorer,
    make_mce_scorer,
    make_width_scorer,
    maximum_calibration_error,
    mean_width_score,
    neg_brier_scorer,
    neg_expected_calibration_error_scorer,
    neg_log_loss_scorer,
    neg_maximum_calibration_error_scorer,
    waic_scorer,
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


# -------------------------------------------------------------- regression
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
    # the scores are compared with refits, not with a threshold: the smallest budget does
    est = GibbsMLPRegressor(**{**CHEAP, "n_samples": 2, "burn_in": 2}, random_state=0)
    search = GridSearchCV(est, {"temperature": [0.1, 10.0]}, scoring=scoring, refit="r2", cv=2)
    _fit(search, X, y)
    res = search.cv_results_
    assert np.all((res["mean_test_coverage"] >= 0) & (res["mean_test_coverage"] <= 1))
    # each split's score is minus the WAIC generalization loss of the fit on its training fold (a loss
    # per sample that is negative where the predictive density exceeds 1, as a well fitted T=0.1 gives)
    for i, (train, _) in enumerate(KFold(2).split(X)):
        for j, params in enumerate(res["params"]):
            fold = _fit(clone(est).set_params(**params), X[train], y[train])
            assert res[f"split{i}_test_neg_waic"][j] == pytest.approx(-fold.generalization_loss_, rel=1e-9)
    assert search.best_index_ == int(np.argmax(res["mean_test_r2"]))


# ---------------------------------------------------------- classification
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


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("string_labels", [False, True])
@pytest.mark.parametrize("pipeline", [False, True])
def test_scorers_equal_minus_the_metrics(n_classes, string_labels, pipeline):
    X, y = _problem(n_classes, string_labels)
    est = make_pipeline(StandardScaler(), LogisticRegression()) if pipeline else LogisticRegression()
    est.fit(X[:160], y[:160])
    X_te, y_te = X[160:], y[160:]
    proba = est.predict_proba(X_te)
    expected = {
        neg_expected_calibration_error_scorer: expected_calibration_error(y_te, proba),
        neg_maximum_calibration_error_scorer: maximum_calibration_error(y_te, proba),
        make_ece_scorer(n_bins=5, strategy="quantile"): expected_calibration_error(
            y_te, proba, n_bins=5, strategy="quantile"
        ),
        make_mce_scorer(n_bins=4): maximum_calibration_error(y_te, proba, n_bins=4),
        neg_log_loss_scorer: log_loss(y_te, proba),
        neg_brier_scorer: brier_score_loss(y_te, proba, labels=est.classes_),
    }
    for scorer, value in expected.items():
        score = scorer(est, X_te, y_te)
        assert isinstance(score, float)
        assert score == pytest.approx(-value, abs=1e-12), repr(scorer)


def test_scorers_name_columns_by_classes_when_a_class_is_missing():
    X, y = _problem(3, string_labels=True)
    est = LogisticRegression().fit(X, y)
    keep = y != "moth"  # the test data lack one class: np.unique(y) cannot name the columns
    proba = est.predict_proba(X[keep])
    assert neg_expected_calibration_error_scorer(est, X[keep], y[keep]) == pytest.approx(
        -expected_calibration_error(y[keep], proba, labels=est.classes_)
    )
    assert neg_log_loss_scorer(est, X[keep], y[keep]) == pytest.approx(
        -log_loss(y[keep], proba, labels=est.classes_)
    )
    assert neg_brier_scorer(est, X[keep], y[keep]) == pytest.approx(
        -brier_score_loss(y[keep], proba, labels=est.classes_)
    )
    with pytest.raises(ValueError, match="pass labels="):
        expected_calibration_error(y[keep], proba)


def test_binary_scorer_with_one_class_in_the_fold():
    X, y = _problem(2, string_labels=True)
    est = LogisticRegression().fit(X, y)
    keep = y == est.classes_[0]
    proba = est.predict_proba(X[keep])
    assert neg_expected_calibration_error_scorer(est, X[keep], y[keep]) == pytest.approx(
        -expected_calibration_error(y[keep], proba, labels=est.classes_)
    )
    assert neg_brier_scorer(est, X[keep], y[keep]) == pytest.approx(
        -brier_score_loss(y[keep], proba[:, 1], pos_label=est.classes_[1])
    )


@pytest.mark.parametrize("n_classes", [2, 3])
def test_grid_search_with_calibration_scorers(n_classes):
    X, y = _problem(n_classes, string_labels=True, n=150)
    search = GridSearchCV(
        LogisticRegression(), {"C": [0.01, 1, 100]}, scoring=neg_expected_calibration_error_scorer, cv=3
    ).fit(X, y)
    scores = search.cv_results_["mean_test_score"]
    assert scores.shape == (3,) and np.all((scores <= 0) & (scores >= -1))
    pipe = make_pipeline(StandardScaler(), LogisticRegression())
    scoring = {
        "ece": make_ece_scorer(n_bins=10),
        "mce": neg_maximum_calibration_error_scorer,
        "nll": neg_log_loss_scorer,
        "brier": neg_brier_scorer,
    }
    search = GridSearchCV(pipe, {"logisticregression__C": [0.01, 1]}, scoring=scoring, refit="ece", cv=3)
    search.fit(X, y)
    for key in scoring:
        assert np.all(np.isfinite(search.cv_results_[f"mean_test_{key}"]))
    assert search.best_params_["logisticregression__C"] in (0.01, 1)


def test_scorer_factories_validate_and_print():
    assert repr(make_ece_scorer(n_bins=10, strategy="quantile")) == (
        "make_ece_scorer(n_bins=10, strategy='quantile')"
    )
    assert repr(neg_maximum_calibration_error_scorer) == "make_mce_scorer(n_bins=15, strategy='uniform')"
    with pytest.raises(ValueError, match="n_bins"):
        make_ece_scorer(n_bins=0)
    with pytest.raises(ValueError, match="strategy"):
        make_mce_scorer(strategy="equal")


# ------------------------------------------------------------ levels
@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5, float("nan"), "0.9", True, None])
def test_one_level_check_for_levels_metrics_and_scorers(bad):
    expected = f"confidence_level must lie in (0, 1), got {bad!r}."
    calls = [
        lambda: check_levels(bad),
        lambda: check_level(bad),
        lambda: make_coverage_scorer(bad),
        lambda: make_width_scorer(bad),
        lambda: make_interval_scorer(bad),
        lambda: interval_score([0.0], [[0.0, 1.0]], bad),
    ]
    for call in calls:
        with pytest.raises(ValueError) as error:
            call()
        assert str(error.value) == expected


def test_scorer_factories_take_one_level():
    with pytest.raises(ValueError, match=r"confidence_level must be one float in \(0, 1\), got \[0.5, 0.9\]"):
        make_coverage_scorer([0.5, 0.9])
    assert check_level(np.float32(0.5)) == 0.5 and type(check_level(np.float32(0.5))) is float
    np.testing.assert_array_equal(check_levels([0.5, 0.9]), [0.5, 0.9])


# ---------------------------------------------------------- final_step
def test_final_step_splits_a_pipeline():
    X, y = _data()
    pipe = make_pipeline(StandardScaler(), Ridge()).fit(X, y)
    final, Xt = final_step(pipe, X)
    assert final is pipe[-1]
    np.testing.assert_array_equal(Xt, pipe[0].transform(X))
    assert final_step(pipe) == (pipe[-1], None)
    ridge = Ridge().fit(X, y)
    assert final_step(ridge, X)[0] is ridge and final_step(ridge, X)[1] is X
    alone = make_pipeline(Ridge()).fit(X, y)  # no transformer: X is left as it is
    assert final_step(alone, X)[0] is alone[-1] and final_step(alone, X)[1] is X
    gibbs_pipe = skgibbs.pipeline.make_pipeline(StandardScaler(), Ridge()).fit(X, y)
    np.testing.assert_array_equal(final_step(gibbs_pipe, X)[1], Xt)


# ----------------------------------------------------- one scorer design
def _all_scorers():
    return [
        make_coverage_scorer(0.8),
        make_width_scorer(0.8),
        make_interval_scorer(0.8),
        make_ece_scorer(n_bins=5, strategy="quantile"),
        make_mce_scorer(n_bins=4),
        neg_expected_calibration_error_scorer,
        neg_maximum_calibration_error_scorer,
        neg_brier_scorer,
        neg_log_loss_scorer,
    ]


def test_scorers_are_one_class_that_pickles_and_prints():
    scorers = _all_scorers()
    assert len({type(scorer) for scorer in scorers}) == 1
    assert [repr(scorer) for scorer in scorers] == [
        "make_coverage_scorer(confidence_level=0.8)",
        "make_width_scorer(confidence_level=0.8)",
        "make_interval_scorer(confidence_level=0.8)",
        "make_ece_scorer(n_bins=5, strategy='quantile')",
        "make_mce_scorer(n_bins=4, strategy='uniform')",
        "make_ece_scorer(n_bins=15, strategy='uniform')",
        "make_mce_scorer(n_bins=15, strategy='uniform')",
        "neg_brier_scorer",
        "neg_log_loss_scorer",
    ]
    for scorer in [*scorers, waic_scorer, log_predictive_density_scorer]:
        copy = pickle.loads(pickle.dumps(scorer))
        assert repr(copy) == repr(scorer)
        assert type(copy) is type(scorer)


@pytest.fixture(scope="module")
def gibbs_fits():
    """The same regressor, fitted alone and at the end of skgibbs' own Pipeline."""
    X, y = _data()
    plain = _fit(GibbsMLPRegressor(**CHEAP, random_state=0), StandardScaler().fit_transform(X), y)
    pipe = _fit(
        skgibbs.pipeline.make_pipeline(StandardScaler(), GibbsMLPRegressor(**CHEAP, random_state=0)), X, y
    )
    return plain, pipe


@pytest.mark.parametrize("through_pipeline", [False, True])
def test_regression_scorers_keep_their_values(gibbs_fits, through_pipeline):
    plain, pipe = gibbs_fits
    X, y = _data(30, seed=1)
    est, Xin = (pipe, X) if through_pipeline else (plain, pipe[:-1].transform(X))
    reg = final_step(est)[0]
    _, y_pis = est.predict_interval(Xin, confidence_level=0.8)
    assert make_coverage_scorer(0.8)(est, Xin, y) == float(coverage_score(y, y_pis)[0])
    assert make_width_scorer(0.8)(est, Xin, y) == -float(mean_width_score(y_pis)[0])
    assert make_interval_scorer(0.8)(est, Xin, y) == -float(interval_score(y, y_pis, 0.8)[0])
    assert waic_scorer(est, Xin, y) == -float(reg.generalization_loss_)
    F = reg.predict_samples(pipe[:-1].transform(X))
    s2 = reg.noise_variance_
    dens = np.mean(np.exp(-((y[:, None] - F) ** 2) / (2 * s2)) / np.sqrt(2 * np.pi * s2), axis=1)
    assert log_predictive_density_scorer(est, Xin, y) == pytest.approx(np.mean(np.log(dens)), rel=1e-12)
    # the pickled scorer scores the same
    scorer = pickle.loads(pickle.dumps(make_interval_scorer(0.8)))
    assert scorer(est, Xin, y) == make_interval_scorer(0.8)(est, Xin, y)


def _sklearn_scorer(loss, est, **kwargs):
    """The scikit-learn scorer of ``loss`` with the columns named as the skgibbs scorers name them."""
    classes = est.classes_
    names = (
        {"pos_label": classes[-1]} if loss is brier_score_loss and len(classes) == 2 else {"labels": classes}
    )
    return make_scorer(loss, greater_is_better=False, response_method="predict_proba", **names, **kwargs)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("through_pipeline", [False, True])
def test_probability_scorers_keep_their_values(n_classes, through_pipeline):
    X, y = _problem(n_classes, string_labels=True)
    if through_pipeline:
        est = skgibbs.pipeline.make_pipeline(StandardScaler(), LogisticRegression()).fit(X[:160], y[:160])
        X_te = X[160:]
    else:
        scaler = StandardScaler().fit(X[:160])
        est = LogisticRegression().fit(scaler.transform(X[:160]), y[:160])
        X_te = scaler.transform(X[160:])
    y_te = y[160:]
    expected = {
        neg_expected_calibration_error_scorer: _sklearn_scorer(expected_calibration_error, est),
        make_ece_scorer(n_bins=5, strategy="quantile"): _sklearn_scorer(
            expected_calibration_error, est, n_bins=5, strategy="quantile"
        ),
        make_mce_scorer(n_bins=4): _sklearn_scorer(
            maximum_calibration_error, est, n_bins=4, strategy="uniform"
        ),
        neg_brier_scorer: _sklearn_scorer(brier_score_loss, est),
        neg_log_loss_scorer: _sklearn_scorer(log_loss, est),
    }
    for scorer, reference in expected.items():
        assert scorer(est, X_te, y_te) == float(reference(est, X_te, y_te)), repr(scorer)
        assert pickle.loads(pickle.dumps(scorer))(est, X_te, y_te) == scorer(est, X_te, y_te)


@pytest.mark.parametrize(
    "scorer, missing",
    [
        (make_coverage_scorer(0.8), "Ridge lacks predict_interval"),
        (neg_log_loss_scorer, "Ridge lacks predict_proba and classes_"),
        (log_predictive_density_scorer, "Ridge lacks predict_samples and noise_variance_"),
        (waic_scorer, "Ridge lacks generalization_loss_"),
    ],
)
def test_scorers_name_what_the_last_step_lacks(scorer, missing):
    X, y = _data()
    pipe = make_pipeline(StandardScaler(), Ridge()).fit(X, y)
    with pytest.raises(TypeError, match=f"needs .*, or a Pipeline ending in one, .*; {missing}"):
        scorer(pipe, X, y)
