"""The fit's plan: every "auto" resolved once, from the settings and the data's shape, with its reasons."""

import dataclasses
import warnings

import numpy as np
import pytest

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor, SamplerWarning, SparseGibbsMLPRegressor
from skgibbs.plan import EstimatorTraits, FitPlan, hidden_layers, model_choices, plan_fit, torch_device
from skgibbs.problem import build_problem
from skgibbs.samplers import HMC, MCLMC, choose_sampler

CHEAP = dict(hidden_layer_sizes=(4,), n_samples=5, burn_in=5, pretrain_iter=10, random_state=0)


def _data(n=60, classes=False):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] > 0).astype(int) if classes else np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    return X, y


@pytest.mark.parametrize(
    "make, classes",
    [
        (lambda: GibbsMLPRegressor(**CHEAP, noise="homoscedastic"), False),
        (lambda: GibbsMLPRegressor(**CHEAP, noise="heteroscedastic"), False),
        (lambda: GibbsMLPRegressor(**CHEAP, noise="homoscedastic", sampler="csmala", rho=0.5), False),
        (lambda: GibbsMLPRegressor(**CHEAP, noise="homoscedastic", temperature=0.5, prior="layer"), False),
        (lambda: GibbsMLPRegressor(**CHEAP, noise="homoscedastic", weight_bound=2.0), False),
        (lambda: GibbsMLPClassifier(**CHEAP), True),
        (lambda: SparseGibbsMLPRegressor(**CHEAP), False),
    ],
    ids=["regressor", "heteroscedastic", "csmala", "given-temperature", "box", "classifier", "sparse"],
)
def test_the_plan_is_what_the_fit_records(make, classes):
    X, y = _data(classes=classes)
    est = make()
    before = est.get_params(deep=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a pre-training of 10 steps
        plan = build_problem(est, X, y).plan
    assert isinstance(plan, FitPlan) and est.get_params(deep=False) == before
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = make().fit(X, y)
    assert plan.prior == fitted.prior_ and plan.temperature_source == fitted.temperature_source_
    assert plan.sampler.name == fitted.sampler_name_ and plan.layers == fitted.spec_.hidden_layer_sizes
    assert plan.rho == fitted.rho_ or plan.sampler.name != "csmala"
    # every choice has its reason, in words
    assert set(plan.reasons) >= {"layers", "sampler", "prior", "temperature", "run"}
    assert all(isinstance(v, str) and v for v in plan.reasons.values())


def test_the_plan_is_a_pure_function_of_the_settings_and_the_shape():
    params = GibbsMLPRegressor().get_params()
    traits = GibbsMLPRegressor._traits
    one = plan_fit(params, traits, n_rows=442, n_params=465, noise="homoscedastic")
    two = plan_fit(params, traits, n_rows=442, n_params=465, noise="homoscedastic")
    assert one.prior == two.prior and one.sampler.get_params() == two.sampler.get_params()
    assert dict(one.reasons) == dict(two.reasons)
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.prior = "fixed"
    with pytest.raises(TypeError):
        one.reasons["prior"] = "changed"
    # "auto" chose the sampler, and says why in choose_sampler's words
    assert one.sampler_chosen == choose_sampler(1.0, 442, 465, "cpu", hierarchical=True)[1]
    assert one.layers == (16, 16) and one.adaptive and one.n_samples == MCLMC().default_n_samples


def test_a_named_sampler_and_the_settings_give_their_own_reasons():
    params = {**GibbsMLPRegressor().get_params(), "sampler": HMC(), "prior": "layer", "n_samples": 50}
    plan = plan_fit(params, GibbsMLPRegressor._traits, n_rows=100, n_params=50, noise="homoscedastic")
    assert plan.sampler_chosen is None and plan.reasons["sampler"] == "sampler=HMC()"
    assert plan.prior == "layer" and plan.reasons["prior"] == "prior='layer'"
    assert not plan.adaptive and plan.n_samples == 50


@pytest.mark.parametrize(
    "temperature, noise, heldout, expected",
    [("auto", "homoscedastic", 0.3, 0.6), ("auto", "heteroscedastic", 0.3, 2.0), (0.25, "homoscedastic", 0.3, 0.25)],
)
def test_the_temperature_is_the_setting_the_plug_in_or_the_likelihood_s(temperature, noise, heldout, expected):
    params = {**GibbsMLPRegressor().get_params(), "temperature": temperature}
    plan = plan_fit(params, GibbsMLPRegressor._traits, n_rows=100, n_params=50, noise=noise)
    assert plan.temperature(heldout) == pytest.approx(expected)


def test_the_prior_under_another_sampler_and_a_sparse_estimator_s_own():
    params = GibbsMLPRegressor().get_params()
    traits = GibbsMLPRegressor._traits
    # a kernel without hierarchical priors: "auto" is the fixed prior, and the temperature a plug-in
    prior, learns, source, why = model_choices(params, traits, HMC(), "homoscedastic")
    assert (prior, learns, source) == ("ard", True, "learned")
    from skgibbs.samplers import CSMALA

    prior, learns, source, why = model_choices(params, traits, CSMALA(), "homoscedastic")
    assert (prior, learns, source) == ("fixed", False, "plug-in")
    assert "csmala samples no hierarchical prior" in why["prior"]
    sparse = SparseGibbsMLPRegressor()
    assert model_choices(sparse.get_params(), sparse._traits, sparse.sampler, None)[0] == "mixing"
    assert EstimatorTraits().prior_kind == "dense" and sparse._traits.prior_kind == "sparse"


def test_bad_widths_and_devices_are_refused_naming_the_parameter():
    assert hidden_layers("auto", 10) == (16, 16) and hidden_layers(3) == (3,) and hidden_layers(()) == ()
    X, y = _data()
    # the widths are refused by the estimators' constraints (one mechanism), before the data are read
    for bad in ((4, 0), [4, 2.5], (True,), "4"):
        with pytest.raises(ValueError, match="'hidden_layer_sizes' parameter of GibbsMLPRegressor must be a sequence "
                                             "of positive ints"):  # fmt: skip
            GibbsMLPRegressor(hidden_layer_sizes=bad).fit(X, y)
    with pytest.raises(ValueError, match="device='gpu0' is not a torch device"):
        torch_device("gpu0")


def test_a_rho_below_one_under_auto_warns_with_the_plans_of_both():
    X, y = _data()
    est = GibbsMLPRegressor(**CHEAP, noise="homoscedastic", rho=0.5)
    with pytest.warns(UserWarning, match="samples another model at rho < 1") as record:
        plan = build_problem(est, X, y).plan
    message = next(str(w.message) for w in record if "another model" in str(w.message))
    assert f"runs {plan.sampler.name} on the {plan.prior} prior" in message
    assert not any(issubclass(w.category, SamplerWarning) for w in record)
