"""What the estimators' responses (y) differ in, declared as data: skgibbs._response and the traits that name it.

build_problem reads an estimator's settings and its class's EstimatorTraits and calls none of its methods;
the regressor's noise choice runs inside it, so a problem built directly is the one fit samples.
"""

import ast
import inspect
import warnings

import numpy as np
import pytest

import skgibbs.problem
from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor, SparseGibbsMLPRegressor
from skgibbs._response import RESPONSES, encode_response, n_outputs, response_loss, validate_response, watched_values
from skgibbs.plan import SAMPLER_SETTING_DEFAULTS, check_settings
from skgibbs.problem import build_problem, prepare_data


@pytest.mark.parametrize(
    ("cls", "response"),
    [(GibbsMLPRegressor, "continuous"), (SparseGibbsMLPRegressor, "continuous"), (GibbsMLPClassifier, "classes")],
)
def test_each_estimator_declares_its_response(cls, response):
    assert cls._traits.response == response and response in RESPONSES
    assert set(cls._traits.sampler_setting_defaults) == set(SAMPLER_SETTING_DEFAULTS)


def test_the_encodings_outputs_and_losses():
    y = np.array([3.0, 5.0, 7.0])
    z, enc = encode_response("continuous", y)
    np.testing.assert_allclose(z.mean(), 0.0, atol=1e-12)
    assert enc["y_mean_"] == 5.0 and enc["y_scale_"] > 0
    codes, enc = encode_response("classes", np.array(["b", "c", "a", "c"]))
    assert codes.tolist() == [1.0, 2.0, 0.0, 2.0] and enc["classes_"].tolist() == ["a", "b", "c"]
    assert n_outputs("classes", enc) == 3 and n_outputs("classes", {"classes_": np.array([0, 1])}) == 1
    assert [n_outputs("continuous", None, noise) for noise in (None, "homoscedastic", "student")] == [1, 1, 2]
    assert response_loss("classes") == "cross_entropy" and response_loss("continuous") == "squared"
    assert response_loss("continuous", "heteroscedastic") == "gaussian"


def test_what_the_mixing_checks_judge():
    outputs = np.zeros((2, 5, 3))  # two draws, five rows, three classes: equal probabilities
    np.testing.assert_allclose(watched_values("classes")(outputs), np.full((2, 15), 1 / 3))
    np.testing.assert_allclose(watched_values("classes")(np.zeros((2, 5))), np.full((2, 5), 0.5))
    two = np.stack([np.ones((2, 5)), np.full((2, 5), 7.0)], axis=-1)  # location and log-scale outputs
    np.testing.assert_array_equal(watched_values("continuous")(two), np.ones((2, 5)))


def test_classes_and_numbers_are_validated_as_such():
    X = np.zeros((4, 2))
    with pytest.raises(ValueError, match="continuous"):
        validate_response(GibbsMLPClassifier(), X, np.array([0.5, 1.5, 2.5, 3.5]), "classes")
    with pytest.raises(ValueError, match="at least 2 classes"):
        encode_response("classes", np.array([1, 1, 1]), owner="GibbsMLPClassifier")
    with pytest.raises(ValueError, match="non-zero sample_weight"):
        encode_response("classes", np.array([0, 1, 1]), np.array([0.0, 1.0, 1.0]))


def test_the_rules_that_join_two_settings_are_refused_before_any_work():
    est = GibbsMLPRegressor(noise="student", temperature="plug-in")
    with pytest.raises(ValueError, match="temperature='plug-in' sets one noise variance"):
        check_settings(GibbsMLPRegressor, est.get_params())
    sparse = SparseGibbsMLPRegressor(prior_std=None)
    with pytest.raises(ValueError, match="proper density"):
        prepare_data(sparse, np.zeros((5, 2)), np.arange(5.0))


def _calls_on_the_estimator(function):
    """Private methods of the estimator that ``function``'s source calls (``est._x(...)``, ``estimator._x(...)``)."""
    tree = ast.parse(inspect.getsource(function))
    return sorted(
        node.func.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in ("est", "estimator")
        and node.func.attr.startswith("_")
    )


@pytest.mark.parametrize("name", ["build_problem", "prepare_data", "initial_points"])
def test_building_the_problem_calls_no_method_of_the_estimator(name):
    assert _calls_on_the_estimator(getattr(skgibbs.problem, name)) == []


def test_a_problem_built_directly_has_the_noise_model_fit_chooses():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    y = X[:, 0] + (0.1 + np.abs(X[:, 1])) * rng.normal(size=400)  # the noise grows with an input
    est = GibbsMLPRegressor(hidden_layer_sizes=(8,), sampler="vi", n_samples=5, pretrain_iter=300, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        problem = build_problem(est, X, y)
        fitted = est.fit(X, y)
    assert problem.plan.noise == fitted.noise_ != "homoscedastic"
    assert problem.noise_selection == fitted.noise_selection_
    assert problem.spec.n_outputs == fitted.spec_.n_outputs == 2
