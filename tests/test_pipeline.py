"""skgibbs.pipeline: scikit-learn's Pipeline with the posterior methods forwarded."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn import pipeline as sk_pipeline
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.preprocessing import StandardScaler

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor, SamplerWarning
from skgibbs.metrics import make_coverage_scorer
from skgibbs.pipeline import Pipeline, make_pipeline
from skgibbs.samplers import HMC

CHEAP = dict(hidden_layer_sizes=(8,), n_samples=20, burn_in=20, pretrain_iter=100, random_state=0)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3)) * [1.0, 10.0, 100.0]
    y = X[:, 0] + 0.05 * X[:, 1] + 0.1 * rng.normal(size=80)
    return X, y


@pytest.fixture(scope="module")
def fitted(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        return make_pipeline(StandardScaler(), GibbsMLPRegressor(**CHEAP)).fit(*data)


def test_the_snippet_of_the_issue_returns_intervals(fitted, data):
    X, _ = data
    y_pred, y_pis = fitted.predict_interval(X[:5])
    assert y_pred.shape == (5,) and y_pis.shape == (5, 2, 1)
    Xt = fitted[0].transform(X[:5])
    expected = fitted[-1].predict_interval(Xt, confidence_level=0.8, kind="credible")
    got = fitted.predict_interval(X[:5], confidence_level=0.8, kind="credible")
    assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])


def test_every_posterior_method_is_forwarded(fitted, data):
    X, _ = data
    Xt = fitted[0].transform(X[:4])
    reg = fitted[-1]
    assert np.array_equal(fitted.predict_samples(X[:4]), reg.predict_samples(Xt))
    assert np.array_equal(fitted.sample_y(X[:4], 3, random_state=1), reg.sample_y(Xt, 3, random_state=1))
    assert fitted.credible_radius(X[:4]) == reg.credible_radius(Xt)
    assert fitted.credible_sets(X[:4]).radius == reg.credible_sets(Xt).radius
    assert np.array_equal(fitted.predict(X[:4]), reg.predict(Xt))


def test_methods_exist_only_when_the_last_step_has_them():
    pipe = make_pipeline(StandardScaler(), Ridge())
    assert not hasattr(pipe, "predict_interval") and not hasattr(pipe, "sample_y")
    assert hasattr(make_pipeline(StandardScaler(), GibbsMLPRegressor()), "predict_interval")
    assert not hasattr(make_pipeline(StandardScaler(), GibbsMLPClassifier()), "sample_y")


def test_classifier_bands_are_forwarded():
    X, y = make_classification(90, 4, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        pipe = make_pipeline(StandardScaler(), GibbsMLPClassifier(**CHEAP)).fit(X, y)
    proba, bands = pipe.predict_interval(X[:3], confidence_level=0.9)
    assert proba.shape == (3, 2) and bands.shape == (3, 2, 2, 1)
    assert pipe.predict_samples(X[:3]).shape == (3, 80, 2)


def test_a_scikit_learn_pipeline_in_every_other_respect(fitted):
    assert isinstance(fitted, sk_pipeline.Pipeline)
    assert [name for name, _ in fitted.steps] == ["standardscaler", "gibbsmlpregressor"]
    assert isinstance(fitted[:1], Pipeline) and isinstance(fitted[-1], GibbsMLPRegressor)
    copy = clone(fitted)
    assert isinstance(copy, Pipeline) and copy.get_params()["gibbsmlpregressor__n_samples"] == 20
    copy.set_params(gibbsmlpregressor__temperature=0.5)
    assert copy[-1].temperature == 0.5
    restored = pickle.loads(pickle.dumps(fitted))
    assert isinstance(restored, Pipeline)
    assert np.array_equal(
        restored.predict_interval(np.ones((1, 3)))[1], fitted.predict_interval(np.ones((1, 3)))[1]
    )
    assert Pipeline(fitted.steps).steps == fitted.steps
    assert make_pipeline(StandardScaler(), Ridge(), verbose=False).verbose is False


def test_set_output_and_feature_names(data):
    pd = pytest.importorskip("pandas")
    X, y = data
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        pipe = make_pipeline(StandardScaler(), GibbsMLPRegressor(**CHEAP)).set_output(transform="pandas")
        pipe.fit(frame, y)
    assert list(pipe[:-1].get_feature_names_out()) == ["a", "b", "c"]
    assert isinstance(pipe[:-1].transform(frame), pd.DataFrame)
    assert pipe.predict_interval(frame.iloc[:2])[1].shape == (2, 2, 1)


def test_grid_search_with_an_interval_scorer(data):
    X, y = data
    pipe = make_pipeline(StandardScaler(), GibbsMLPRegressor(**{**CHEAP, "n_chains": 2}))
    search = GridSearchCV(
        pipe, {"gibbsmlpregressor__temperature": [0.2, 1.0]}, scoring=make_coverage_scorer(0.9), cv=2
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        search.fit(X, y)
    assert search.best_params_["gibbsmlpregressor__temperature"] in (0.2, 1.0)
    assert isinstance(search.best_estimator_, Pipeline)
    assert search.best_estimator_.predict_interval(X[:2])[1].shape == (2, 2, 1)


def test_grid_search_reaches_the_sampler_objects_settings_through_the_pipeline(data):
    X, y = data
    pipe = make_pipeline(StandardScaler(), GibbsMLPRegressor(**{**CHEAP, "n_chains": 2}, sampler=HMC()))
    assert pipe.get_params()["gibbsmlpregressor__sampler__target_accept"] == 0.8
    key = "gibbsmlpregressor__sampler__target_accept"
    search = GridSearchCV(pipe, {key: [0.7, 0.9]}, cv=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        search.fit(X, y)
    best = search.best_estimator_
    assert best[-1].sampler_.target_accept == search.best_params_[key] == best[-1].sampler.target_accept
    assert pipe[-1].sampler.target_accept == 0.8  # the search set its clones' objects, not this one
    assert best.predict_interval(X[:2])[1].shape == (2, 2, 1)
