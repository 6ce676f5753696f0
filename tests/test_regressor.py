"""GibbsMLPRegressor: the scikit-learn shell, its outputs and its errors."""

import copy
import dataclasses
import pickle
import re
import warnings

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import skgibbs.problem as problem_module
from skgibbs import GibbsMLPRegressor, SamplerWarning
from skgibbs.samplers import CSMALA, HMC, MALA, MCLMC, SGHMC, SGLD, SMALA, SMC, AdjustedMCLMC, MeanFieldVI, Sampler

CHEAP = {
    "hidden_layer_sizes": (8,),
    "n_samples": 20,
    "burn_in": 50,
    "thin": 1,
    "pretrain_iter": 50,
    "n_chains": 2,
}


def _data(n=40, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)
    return X, y


def _fit(random_state=0, X=None, y=None, **params):
    if X is None:
        X, y = _data()
    est = GibbsMLPRegressor(**{**CHEAP, "random_state": random_state, **params})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        return est.fit(X, y)


@pytest.fixture(scope="module")
def fitted():
    """``_fit()``, fitted once: tests read it, and those that refit it take a ``copy.deepcopy``."""
    return _fit()


# ------------------------------------------------------------ fitted state
def test_fitted_attributes(fitted):
    X, _ = _data()
    est = fitted
    Q = est.spec_.n_params
    assert est.samples_.shape == (2, 20, Q) and Q == 2 * 8 + 8 + 8 + 1
    assert est.n_features_in_ == 2
    for name in ("step_size_", "n_divergent_", "decoherence_length_", "steps_per_transition_"):
        assert getattr(est, name).shape == (2,)
    # the defaults: ARD (one precision per input, three more groups) with the noise learned
    assert est.prior_ == "ard" and est.temperature_source_ == "learned"
    assert est.prior == "auto" and est.temperature == "auto"
    assert est.sample_stats_["precision"].shape == (2, 20, 2 + 3)
    assert est.sample_stats_["noise_variance"].shape == (2, 20)
    # MCLMC's preconditioner: the weights and the log-precisions of the non-centred target
    assert est.preconditioner_.shape == (2, Q + 2 + 3)
    assert est.lambda_ == pytest.approx(len(X) / est.temperature_)
    # "auto": MCLMC on the full data for the regressor's hierarchical defaults
    assert est.rho_ == 1.0 and est.sampler_name_ == "mclmc"
    # the sampler object used, with MCLMC's defaults; the parameter "auto" is left as it was
    assert isinstance(est.sampler_, MCLMC) and est.sampler_.get_params() == MCLMC().get_params()
    assert est.sampler == "auto"
    # neither HMC's results nor the Langevin family's (test_every_sampler_fits checks that they have them)
    for name in ("acceptance_rate_", "inverse_mass_", "trajectory_length_"):
        assert not hasattr(est, name), name
    for name in ("correction_", "lambda_prime_", "proposal_std_", "n_restarts_", "accepted_batch_sizes_"):
        assert not hasattr(est, name), name
    for name in (
        "surrogate_scale_",
        "noise_variance_",
        "credible_radius_",
        "credible_radius_params_",
        "lfv_",
        "train_loss_",
        "langevin_waic_",
        "generalization_loss_",
        "temperature_",
    ):
        assert np.isfinite(getattr(est, name)), name
    assert est.langevin_waic_ == pytest.approx(est.train_loss_ + est.lfv_ / len(X))
    assert len(est.unpack_samples()) == 40


def test_fitted_attributes_of_hmc_under_the_fixed_prior():
    # HMC's own results, where "auto" still picks it: the fixed prior at the plug-in temperature
    est = _fit(prior="fixed", temperature="plug-in")
    Q = est.spec_.n_params
    assert est.sampler_name_ == "hmc" and est.prior_ == "fixed" and est.temperature_source_ == "plug-in"
    assert isinstance(est.sampler_, HMC) and est.sampler_.get_params() == HMC().get_params()
    for name in ("acceptance_rate_", "step_size_", "n_divergent_"):
        assert getattr(est, name).shape == (2,)
    assert est.inverse_mass_.shape == (Q,)
    assert np.isfinite(est.trajectory_length_)
    assert "precision" not in est.sample_stats_ and "noise_variance" not in est.sample_stats_


def test_langevin_waic_is_the_training_loss_plus_the_functional_variance_per_example(fitted):
    X, _ = _data()
    assert fitted.langevin_waic_ == pytest.approx(fitted.train_loss_ + fitted.lfv_ / len(X))
    assert not hasattr(fitted, "waic_")  # its name before 0.2


def _torch_objects(obj, path="est", seen=None):
    """Paths of every torch object reachable from ``obj``."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, (torch.Tensor, torch.Generator, torch.device, torch.dtype, torch.nn.Module)):
        return [path]
    found = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            found += _torch_objects(v, f"{path}[{k!r}]", seen)
    elif isinstance(obj, (list, tuple, set)):
        for i, v in enumerate(obj):
            found += _torch_objects(v, f"{path}[{i}]", seen)
    elif dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            found += _torch_objects(getattr(obj, f.name), f"{path}.{f.name}", seen)
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        for k, v in vars(obj).items():
            found += _torch_objects(v, f"{path}.{k}", seen)
    elif isinstance(obj, np.ndarray) and obj.dtype == object:
        for i, v in enumerate(obj.ravel()):
            found += _torch_objects(v, f"{path}[{i}]", seen)
    return found


@pytest.mark.parametrize("sampler", ["csmala", "sgld"])
def test_fitted_state_is_numpy_only(sampler):
    est = _fit(sampler=sampler, rho=0.5)
    assert _torch_objects(est) == []
    # spec_ is the architecture: a frozen dataclass of plain Python values
    # (its embedding, where there is one, a frozen dataclass of the same)
    _assert_plain_frozen_dataclass(est.spec_)


@pytest.mark.parametrize("embedding", ["piecewise", "periodic"])
def test_fitted_state_with_an_embedding_is_numpy_only(embedding):
    est = _fit(sampler="csmala", rho=0.5, embedding=embedding)
    assert _torch_objects(est) == []
    _assert_plain_frozen_dataclass(est.spec_)
    assert dataclasses.is_dataclass(est.spec_.embedding)


def _assert_plain_frozen_dataclass(obj):
    assert dataclasses.is_dataclass(obj) and obj.__dataclass_params__.frozen
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value):
            _assert_plain_frozen_dataclass(value)
        else:
            assert value is None or _is_plain(value), (f.name, type(value))


def _is_plain(value):
    if isinstance(value, tuple):
        return all(_is_plain(v) for v in value)
    return isinstance(value, (bool, int, float, str))


# ------------------------------------------------------ reproducibility
def test_same_random_state_same_draws(fitted):
    a, b, c = fitted, _fit(0), _fit(1)  # fitted is _fit(0)
    np.testing.assert_array_equal(a.samples_, b.samples_)
    np.testing.assert_array_equal(a.predict(_data()[0]), b.predict(_data()[0]))
    assert not np.array_equal(a.samples_, c.samples_)


def test_pickle_round_trip_keeps_predictions(fitted):
    X, _ = _data(seed=3)
    loaded = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(loaded.samples_, fitted.samples_)
    np.testing.assert_array_equal(loaded.predict(X), fitted.predict(X))
    np.testing.assert_array_equal(loaded.predict_interval(X)[1], fitted.predict_interval(X)[1])
    np.testing.assert_array_equal(
        loaded.sample_y(X, 3, random_state=0), fitted.sample_y(X, 3, random_state=0)
    )


def test_clone_is_unfitted_with_same_params(fitted):
    twin = clone(fitted)
    assert twin.get_params() == fitted.get_params()
    assert not hasattr(twin, "samples_")
    with pytest.raises(NotFittedError):
        twin.predict(_data()[0])
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        np.testing.assert_array_equal(twin.fit(X, y).samples_, fitted.samples_)


# ------------------------------------------------------------ ecosystem
def test_in_a_pipeline():
    X, y = _data()
    X = 100 * X + 5
    pipe = make_pipeline(StandardScaler(), GibbsMLPRegressor(**CHEAP, random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        pipe.fit(X, y)
    mean, std = pipe.predict(X, return_std=True)
    assert mean.shape == std.shape == (40,) and np.all(std > 0)
    assert pipe.score(X, y) > 0.5
    y_pred, y_pis = pipe[-1].predict_interval(pipe[:-1].transform(X), confidence_level=0.9)
    np.testing.assert_allclose(y_pred, mean)
    assert y_pis.shape == (40, 2, 1)


def test_grid_search_over_temperature_and_rho():
    X, y = _data()
    grid = {"temperature": [0.5, 5.0], "rho": [0.5, 1.0]}
    search = GridSearchCV(
        GibbsMLPRegressor(**{**CHEAP, "n_samples": 5, "burn_in": 10}, random_state=0), grid, cv=2
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        search.fit(X, y)
    assert len(search.cv_results_["params"]) == 4
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    assert search.best_params_["temperature"] in grid["temperature"]
    assert search.best_estimator_.temperature_ == search.best_params_["temperature"]


def test_grid_search_over_a_setting_of_the_sampler_object():
    X, y = _data()
    sampler = HMC()
    est = GibbsMLPRegressor(**{**CHEAP, "n_samples": 5, "burn_in": 10}, sampler=sampler, random_state=0)
    grid = {"sampler__target_accept": [0.6, 0.95]}
    search = GridSearchCV(est, grid, cv=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        search.fit(X, y)
    tried = [p["sampler__target_accept"] for p in search.cv_results_["params"]]
    assert tried == grid["sampler__target_accept"]
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    best = search.best_estimator_
    assert best.sampler_.target_accept == search.best_params_["sampler__target_accept"]
    assert best.sampler.target_accept == search.best_params_["sampler__target_accept"]
    assert isinstance(best.sampler_, HMC) and best.sampler_name_ == "hmc"
    # the search worked on clones: the estimator and its sampler object are as they were
    assert sampler.target_accept == 0.8 and est.sampler is sampler and not hasattr(est, "samples_")


def test_clone_of_a_sampler_object_is_a_new_object_with_equal_settings():
    sampler = CSMALA(correction=0.5, step_size=1e-3)
    fitted = _fit(sampler=sampler, rho=0.5, temperature=20.0)
    assert fitted.get_params()["sampler__correction"] == 0.5
    twin = clone(fitted)
    assert not hasattr(twin, "samples_") and not hasattr(twin, "sampler_")
    assert twin.sampler is not sampler and type(twin.sampler) is CSMALA
    assert twin.sampler.get_params() == sampler.get_params()
    assert twin.get_params(deep=True).keys() == fitted.get_params(deep=True).keys()
    # fit used a copy of the object: neither the user's object nor the twin's is the fitted sampler_
    assert fitted.sampler is sampler and fitted.sampler_ is not sampler
    assert fitted.sampler_.get_params() == sampler.get_params()
    # changing the twin's sampler leaves the original's alone
    twin.set_params(sampler__correction=1.0)
    assert sampler.correction == 0.5 and fitted.sampler_.correction == 0.5
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        again = clone(fitted).fit(X, y)
    np.testing.assert_array_equal(again.samples_, fitted.samples_)
    assert again.correction_ == fitted.correction_ == 0.5


@pytest.mark.parametrize(
    "sampler", [HMC(target_accept=0.9), CSMALA(correction=0.5), MeanFieldVI(max_iter=50)], ids=repr
)
def test_pickle_with_a_sampler_object_keeps_predictions(sampler):
    X, _ = _data(seed=3)
    rho = 0.5 if isinstance(sampler, CSMALA) else "auto"
    burn_in = "auto" if "burn_in" in sampler.ignored_settings() else CHEAP["burn_in"]  # VI has no burn-in
    fitted = _fit(sampler=sampler, rho=rho, burn_in=burn_in)
    loaded = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(loaded.samples_, fitted.samples_)
    np.testing.assert_array_equal(loaded.predict(X), fitted.predict(X))
    np.testing.assert_array_equal(loaded.predict_interval(X)[1], fitted.predict_interval(X)[1])
    assert type(loaded.sampler_) is type(sampler) and loaded.sampler_.get_params() == sampler.get_params()
    assert loaded.sampler.get_params() == sampler.get_params() and loaded.sampler_name_ == fitted.sampler_name_


# Every dense kernel: its registered name, its class, and the rho it runs at.
KERNELS = [
    ("hmc", HMC, "auto"),
    ("mala", MALA, "auto"),
    ("smala", SMALA, 0.5),
    ("csmala", CSMALA, 0.5),
    ("sgld", SGLD, 0.5),
    ("sghmc", SGHMC, "auto"),
    ("vi", MeanFieldVI, "auto"),
    ("smc", SMC, "auto"),
    ("mclmc", MCLMC, "auto"),
    ("adjusted_mclmc", AdjustedMCLMC, "auto"),
]


@pytest.mark.parametrize("name, cls, rho", KERNELS, ids=[k[0] for k in KERNELS])
def test_a_name_and_its_default_object_give_identical_draws(name, cls, rho):
    # a name stands for the object with its defaults: same kernel, same seeds, the same draws bit for bit
    # the settings of CHEAP the sampler does not honour (SMC's, VI's burn_in) at the estimator's defaults
    defaults = {k: GibbsMLPRegressor().get_params()[k] for k in cls().ignored_settings() if k in CHEAP}
    by_name = _fit(sampler=name, rho=rho, temperature=20.0, **defaults)
    by_object = _fit(sampler=cls(), rho=rho, temperature=20.0, **defaults)
    assert by_name.sampler_name_ == by_object.sampler_name_ == name
    assert type(by_name.sampler_) is type(by_object.sampler_) is cls
    np.testing.assert_array_equal(by_name.samples_, by_object.samples_)
    np.testing.assert_array_equal(by_name.n_grad_evals_, by_object.n_grad_evals_)
    for key, value in by_name.sample_stats_.items():
        np.testing.assert_array_equal(by_object.sample_stats_[key], value, err_msg=key)
    # "auto" on the full data is MCLMC under the default prior="auto" (ARD) and HMC under the fixed
    # prior; on batches it is csMALA
    auto_settings = {"mclmc": {}, "hmc": {"prior": "fixed"}, "csmala": {}}
    if name in auto_settings:
        settings = auto_settings[name]
        auto = _fit(sampler="auto", rho=rho, temperature=20.0, **settings)
        named = _fit(sampler=name, rho=rho, temperature=20.0, **settings) if settings else by_name
        assert auto.sampler_name_ == named.sampler_name_ == name
        np.testing.assert_array_equal(auto.samples_, named.samples_)


def test_available_samplers_are_the_estimators_kernels():
    # the names the dense estimators take are the registered dense kernels, each a Sampler
    from skgibbs.samplers import available_samplers, get_sampler

    assert available_samplers("dense") == sorted(k[0] for k in KERNELS)
    for name, cls, _ in KERNELS:
        assert isinstance(get_sampler(name), cls) and issubclass(cls, Sampler) and cls.name == name


# ----------------------------------------------------------- predictions
def test_predict_interval_shapes_and_nesting(fitted):
    X, _ = _data(n=15, seed=5)
    y_pred, single = fitted.predict_interval(X, confidence_level=0.9)
    np.testing.assert_allclose(y_pred, fitted.predict(X))
    assert single.shape == (15, 2, 1)
    levels = [0.5, 0.8, 0.95]
    _, multi = fitted.predict_interval(X, confidence_level=levels)
    assert multi.shape == (15, 2, 3)
    assert np.all(multi[:, 0, :] <= y_pred[:, None] + 1e-9) and np.all(
        multi[:, 1, :] >= y_pred[:, None] - 1e-9
    )
    # a higher level gives a wider interval around the lower one
    assert np.all(np.diff(multi[:, 0, :], axis=1) < 0)
    assert np.all(np.diff(multi[:, 1, :], axis=1) > 0)
    _, default = fitted.predict_interval(X)
    _, at_default = fitted.predict_interval(X, confidence_level=fitted.confidence_level)
    np.testing.assert_array_equal(default, at_default)


def test_credible_interval_narrower_than_predictive(fitted):
    X, _ = _data(n=15, seed=5)
    _, pred = fitted.predict_interval(X, confidence_level=[0.5, 0.9], kind="predictive")
    _, cred = fitted.predict_interval(X, confidence_level=[0.5, 0.9], kind="credible")
    assert cred.shape == pred.shape
    assert np.all(cred[:, 1] - cred[:, 0] < pred[:, 1] - pred[:, 0])
    F = fitted.predict_samples(X)
    np.testing.assert_allclose(cred[:, 0, 1], np.quantile(F, 0.05, axis=1))


def test_predict_samples_and_return_std(fitted):
    X, _ = _data(n=15, seed=5)
    F = fitted.predict_samples(X)
    assert F.shape == (15, 2 * 20)
    mean, std = fitted.predict(X, return_std=True)
    np.testing.assert_allclose(F.mean(1), mean, rtol=1e-10, atol=1e-10)
    assert np.all(std > 0)
    np.testing.assert_allclose(std**2, F.var(1) + fitted.noise_variance_, rtol=1e-6)


def test_sample_y_shape_and_reproducibility(fitted):
    X, _ = _data(n=15, seed=5)
    a = fitted.sample_y(X, n_samples=7, random_state=3)
    assert a.shape == (15, 7)
    np.testing.assert_array_equal(a, fitted.sample_y(X, n_samples=7, random_state=3))
    assert not np.array_equal(a, fitted.sample_y(X, n_samples=7, random_state=4))
    assert fitted.sample_y(X).shape == (15, 1)


def test_credible_radius_on_training_inputs(fitted):
    X, _ = _data()
    assert fitted.credible_radius(X) == pytest.approx(fitted.credible_radius_, rel=1e-12)
    assert fitted.credible_radius(X, 0.5) <= fitted.credible_radius(X, 0.95)


def test_score_is_r2(fitted):
    X, y = _data()
    pred = fitted.predict(X)
    r2 = 1 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2)
    assert fitted.score(X, y) == pytest.approx(r2)


def test_predictions_are_on_the_scale_of_y(fitted):
    X, y = _data()
    small = fitted  # _fit() on these X and y
    big = _fit(X=1000 * X - 7, y=50 * y + 300)
    # the model sees the same standardized data, so it is the same model
    np.testing.assert_allclose(big.samples_, small.samples_, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(big.predict(1000 * X - 7), 50 * small.predict(X) + 300, rtol=1e-4)
    # and so are its intervals: they move and stretch with y
    _, pis = small.predict_interval(X, confidence_level=0.9)
    _, pis_big = big.predict_interval(1000 * X - 7, confidence_level=0.9)
    np.testing.assert_allclose(pis_big, 50 * pis + 300, rtol=1e-4)


# ------------------------------------------------------------ bad input
X0, Y0 = _data()


def _with_nan(a):
    a = a.copy()
    a.flat[3] = np.nan
    return a


def _with_inf(a):
    a = a.copy()
    a.flat[1] = np.inf
    return a


BAD_DATA = {
    "nan_X": (_with_nan(X0), Y0, r"\bX\b.*NaN"),
    "inf_X": (_with_inf(X0), Y0, r"\bX\b.*infinity"),
    "nan_y": (X0, _with_nan(Y0), r"\by\b.*NaN"),
    "inf_y": (X0, _with_inf(Y0), r"\by\b.*infinity"),
    "X_1d": (X0[:, 0], Y0, r"2D array"),
    "X_3d": (X0[None], Y0, r"dim 3"),
    "y_2d": (X0, np.c_[Y0, Y0], r"\by\b.*1d"),
    "length_mismatch": (X0, Y0[:10], r"inconsistent numbers of samples"),
    "empty": (X0[:0], Y0[:0], r"0 sample"),
    "one_sample": (X0[:1], Y0[:1], r"n_samples=1"),
    "strings_X": (np.full((40, 2), "a"), Y0, r"\bX\b"),
    "strings_y": (X0, np.array(["a"] * 40), r"\by\b"),
}


@pytest.mark.parametrize("case", sorted(BAD_DATA))
def test_bad_data_is_refused_with_a_clear_message(case):
    X, y, message = BAD_DATA[case]
    with pytest.raises((ValueError, TypeError), match=message):
        GibbsMLPRegressor(**CHEAP).fit(X, y)


BAD_PARAMS = [
    ("rho", 0.0),
    ("rho", 1.5),
    ("rho", -0.1),
    ("temperature", 0.0),
    ("temperature", -1.0),
    ("temperature", "hot"),
    ("sampler", "nuts"),
    ("sampler", "rjmcmc"),  # the sparse regressor's kernel
    ("sampler", HMC),  # the class, not an object
    ("activation", "gelu"),
    ("hidden_layer_sizes", (0,)),
    ("hidden_layer_sizes", (8, -2)),
    ("hidden_layer_sizes", (2.5,)),
    ("hidden_layer_sizes", "wide"),
    ("confidence_level", 0.0),
    ("confidence_level", 1.0),
    ("n_samples", 0),
    ("n_chains", 0),
    ("thin", 0),
    ("weight_bound", 0.0),
]


@pytest.mark.parametrize("name, value", BAD_PARAMS)
def test_bad_parameter_is_refused_naming_it(name, value):
    est = GibbsMLPRegressor(**{**CHEAP, name: value})
    with pytest.raises((ValueError, TypeError), match=name):
        est.fit(X0, Y0)


# Kernel settings, on the sampler objects: (sampler, rho, the setting the message must name).
BAD_KERNEL_SETTINGS = [
    (HMC(step_size=0.0), "auto", "step_size"),
    (HMC(target_accept=1.5), "auto", "target_accept"),
    (HMC(metric="dense"), "auto", "metric"),
    (HMC(target_accept="x"), "auto", "target_accept"),
    (HMC(trajectory_length=-1.0), "auto", "trajectory_length"),
    (MALA(target_accept="x"), "auto", "target_accept"),
    (MALA(step_size=-1e-3), "auto", "step_size"),
    (MALA(proposal_std=0.0), "auto", "proposal_std"),
    (MALA(target_accept=0.0), "auto", "target_accept"),
    (SMALA(restart_after=0), 0.5, "restart_after"),
    (CSMALA(correction=-1), 0.5, "correction"),
    (CSMALA(correction=-0.5), 0.5, "correction"),
    (SGLD(step_size=0.0), 0.5, "step_size"),
    (MeanFieldVI(parametrization="x"), "auto", "parametrization"),
    (MeanFieldVI(max_iter=0), "auto", "max_iter"),
    (MeanFieldVI(gradient="score"), "auto", "gradient"),
    (MeanFieldVI(kl_weight="x"), "auto", "kl_weight"),
]


@pytest.mark.parametrize("sampler, rho, name", BAD_KERNEL_SETTINGS, ids=lambda v: repr(v))
def test_bad_kernel_setting_is_refused_naming_it_and_keeps_the_fit(fitted, sampler, rho, name):
    est = copy.deepcopy(fitted)
    before = est.samples_.copy()
    kernel = est.sampler_
    est.set_params(sampler=sampler, rho=rho)
    with pytest.raises(ValueError, match=name):
        est.fit(X0, Y0)
    np.testing.assert_array_equal(est.samples_, before)
    # the first fit's sampler: "auto" is MCLMC under the regressor's defaults
    assert est.sampler_ is kernel and est.sampler_name_ == "mclmc" and est.rho_ == 1.0
    assert np.isfinite(est.predict(X0)).all()


@pytest.mark.parametrize(
    "name, value",
    [
        ("step_size", 1e-3),
        ("proposal_std", 0.01),
        ("target_accept", 0.9),
        ("metric", "adaptive"),
        ("trajectory_length", 1.0),
        ("restart_after", 50),
        ("correction", 0.5),
        ("kl_weight", 1.0),
        ("tau", 0.1),
        ("parametrization", "mean-field"),
        ("vi_max_iter", 100),
    ],
)
def test_kernel_settings_are_not_estimator_parameters(name, value):
    # the refactor moved them onto the sampler objects: the estimator refuses them by name
    with pytest.raises(TypeError, match=name):
        GibbsMLPRegressor(**{name: value})
    with pytest.raises(ValueError, match=name):
        GibbsMLPRegressor().set_params(**{name: value})


def test_bad_prediction_input(fitted):
    with pytest.raises(ValueError, match="features"):
        fitted.predict(X0[:, :1])
    with pytest.raises(ValueError, match="features"):
        fitted.predict_interval(np.c_[X0, X0])
    with pytest.raises(ValueError, match=r"\bX\b.*NaN"):
        fitted.predict(_with_nan(X0))
    with pytest.raises(ValueError, match="0 sample"):
        fitted.predict(X0[:0])
    with pytest.raises(NotFittedError):
        GibbsMLPRegressor().predict(X0)


@pytest.mark.parametrize("level", [0.0, 1.0, 1.5, -0.2, [0.5, 1.2]])
def test_confidence_level_out_of_range_at_predict(fitted, level):
    with pytest.raises(ValueError, match="confidence_level"):
        fitted.predict_interval(X0, confidence_level=level)


@pytest.mark.parametrize("level", [0.0, 1.0, 2.0])
def test_confidence_level_out_of_range_for_radius(fitted, level):
    with pytest.raises(ValueError, match="confidence_level"):
        fitted.credible_radius(X0, level)


def test_unknown_interval_kind(fitted):
    with pytest.raises(ValueError, match="kind"):
        fitted.predict_interval(X0, kind="bayesian")


@pytest.mark.parametrize(
    "bad",
    [
        lambda est: est.fit(_with_nan(X0), Y0),
        lambda est: est.fit(np.c_[X0, X0, X0][:, :5] + np.nan, Y0),
        lambda est: est.fit(X0[:1], Y0[:1]),
        lambda est: est.set_params(rho=2.0).fit(X0, Y0),
    ],
)
def test_failed_refit_keeps_the_earlier_fit(fitted, bad):
    est = copy.deepcopy(fitted)
    before = {
        k: v.copy() if isinstance(v, np.ndarray) else v for k, v in vars(est).items() if k.endswith("_")
    }
    pred = est.predict(X0)
    with pytest.raises(ValueError):
        bad(est)
    assert est.n_features_in_ == 2
    np.testing.assert_array_equal(est.samples_, before["samples_"])
    np.testing.assert_array_equal(est.predict(X0), pred)
    for k, v in before.items():
        if isinstance(v, np.ndarray):
            np.testing.assert_array_equal(getattr(est, k), v)
        elif isinstance(v, float) and np.isnan(v):
            assert np.isnan(getattr(est, k))
        else:
            assert getattr(est, k) == v, k


# -------------------------------------------------- divergence, warnings
@pytest.mark.parametrize("step_size", [1e3, 1e30])
def test_divergent_step_is_rejected_and_predictions_stay_finite(step_size):
    X, y = _data()
    est = GibbsMLPRegressor(
        **{**CHEAP, "sampler": MALA(step_size=step_size, proposal_std=0.05), "random_state": 0}
    )
    with pytest.warns(SamplerWarning, match="step_size"):
        est.fit(X, y)
    assert np.all(est.acceptance_rate_ < 0.01)
    assert np.isfinite(est.samples_).all()
    mean, std = est.predict(X, return_std=True)
    assert np.isfinite(mean).all() and np.isfinite(std).all()
    assert np.isfinite(est.predict_interval(X)[1]).all()
    for name in ("noise_variance_", "credible_radius_", "lfv_", "generalization_loss_"):
        assert np.isfinite(getattr(est, name))


def _surrogate_warnings(record):
    return [w for w in record if issubclass(w.category, SamplerWarning) and "surrogate" in str(w.message)]


def test_surrogate_warning_at_bayesian_temperature():
    X, y = _data()
    est = GibbsMLPRegressor(**{**CHEAP, "sampler": "csmala", "rho": 0.3, "random_state": 0})
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est.fit(X, y)
    assert est.temperature_ < 10 and est.surrogate_scale_ > 0.1
    assert len(_surrogate_warnings(record)) == 1
    text = str(_surrogate_warnings(record)[0].message)
    assert "rho=1" in text and f"{est.surrogate_scale_:.3g}" in text
    # the remedy it names first, followed, clears it
    again = clone(est).set_params(rho=1.0)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        again.fit(X, y)
    assert _surrogate_warnings(record) == []


def test_no_surrogate_warning_when_hot():
    X, y = _data()
    est = GibbsMLPRegressor(
        **{**CHEAP, "sampler": "csmala", "rho": 0.3, "temperature": 1000.0, "random_state": 0}
    )
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est.fit(X, y)
    assert est.surrogate_scale_ < 0.1
    assert _surrogate_warnings(record) == []


@pytest.mark.parametrize("sampler", ["mala", "smala", "csmala", "sgld"])
def test_every_sampler_fits(sampler):
    est = _fit(sampler=sampler, rho=0.5 if sampler != "mala" else "auto", temperature=20.0)  # MALA: full data
    X, y = _data()
    assert np.isfinite(est.predict(X)).all()
    assert est.sampler_name_ == sampler and est.sampler_.name == sampler
    assert est.step_size_.shape == (2,) and np.all(est.step_size_ > 0)
    if sampler == "mala":
        assert est.rho_ == 1.0 and est.accepted_batch_sizes_.size == 0
    else:
        assert est.rho_ == 0.5
    if sampler == "csmala":
        assert est.correction_ > 0 and est.lambda_prime_ > est.lambda_
    elif sampler in ("mala", "smala"):
        assert est.correction_ == 0.0 and est.lambda_prime_ == pytest.approx(est.lambda_)
    if sampler == "sgld":
        # no Metropolis-Hastings step: no acceptance rate (it was reported as 1 before), no proposal,
        # and no csMALA centring; its gradient weighs the batch by lambda / (n rho), as sMALA's does
        for name in ("acceptance_rate_", "proposal_std_", "correction_", "lambda_prime_", "n_restarts_"):
            assert not hasattr(est, name), name
        assert "acceptance_rate" not in est.sample_stats_
        losses = ((y[:, None] - est.predict_samples(X)) / est.y_scale_) ** 2
        c = est.lambda_ / (len(y) * est.rho_)
        assert est.surrogate_scale_ == pytest.approx(c * losses.mean(), rel=1e-5)
        assert est.batch_noise_ == 0.0
    else:
        # the Langevin family with its Metropolis-Hastings step and its proposal
        assert est.acceptance_rate_.shape == est.proposal_std_.shape == (2,)
        assert est.sample_stats_["acceptance_rate"].shape == (2, 20)
        assert hasattr(est, "n_restarts_") == (sampler != "mala")  # batch redraws: sMALA, csMALA only
    for name in ("trajectory_length_", "n_divergent_", "inverse_mass_"):  # HMC's own
        assert not hasattr(est, name), name


def test_keyboard_interrupt_keeps_the_draws_so_far(monkeypatch):
    calls = {"n": 0}
    burn_in = 20

    class Interrupted(problem_module.MLPPotential):
        def loss_sum_and_grad(self, theta, batch):
            calls["n"] += 1
            # one gradient at the start and one per step: fail in sampling step 6
            if calls["n"] > 1 + burn_in + 5:
                raise KeyboardInterrupt
            return super().loss_sum_and_grad(theta, batch)

    monkeypatch.setattr(problem_module, "MLPPotential", Interrupted)
    X, y = _data()
    est = GibbsMLPRegressor(
        **{**CHEAP, "sampler": MALA(proposal_std=0.01, step_size=1e-4), "burn_in": burn_in},
        random_state=0,
    )
    with pytest.warns(SamplerWarning, match="interrupted"):
        est.fit(X, y)
    assert 0 < est.samples_.shape[1] < CHEAP["n_samples"]
    assert np.isfinite(est.predict(X)).all()


def test_keyboard_interrupt_before_any_draw_propagates(fitted, monkeypatch):
    # nothing to keep: the interrupt reaches the user, the earlier fit survives
    est = copy.deepcopy(fitted)
    pred = est.predict(X0)
    burn_in = CHEAP["burn_in"]
    calls = {"n": 0}

    class Interrupted(problem_module.MLPPotential):
        def loss_sum_and_grad(self, theta, batch):
            calls["n"] += 1
            if calls["n"] > 1 + burn_in:
                raise KeyboardInterrupt
            return super().loss_sum_and_grad(theta, batch)

    monkeypatch.setattr(problem_module, "MLPPotential", Interrupted)
    est.set_params(sampler=MALA(proposal_std=0.01))
    with pytest.raises(KeyboardInterrupt):
        est.fit(X0, Y0)
    np.testing.assert_array_equal(est.predict(X0), pred)


def test_batch_noise_warns_for_stuck_stochastic_chains():
    # a cold target with small batches: the log MH ratio between two batches
    # fluctuates by far more than one, the chains stick, and the user is told
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (400, 2))
    y = X @ np.array([1.0, -2.0]) + 0.3 * rng.normal(size=400)
    est = GibbsMLPRegressor(
        hidden_layer_sizes=(), sampler="csmala", rho=0.2, temperature=0.05,
        n_samples=20, burn_in=100, thin=1, pretrain_iter=100, random_state=0,
    )
    with pytest.warns(SamplerWarning, match="fluctuates"):
        est.fit(X, y)
    assert est.batch_noise_ > 2.0
    # the same data at rho = 1 have no batch noise and no such warning
    exact = clone(est).set_params(rho=1.0)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        exact.fit(X, y)
    assert not [w for w in record if "fluctuates" in str(w.message)]
    assert exact.batch_noise_ == 0.0


def test_batch_noise_matches_its_formula():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (300, 1))
    y = 2 * X[:, 0] + 0.1 * rng.normal(size=300)
    est = GibbsMLPRegressor(
        hidden_layer_sizes=(), sampler="smala", rho=0.5, temperature=50.0,
        n_samples=10, burn_in=50, thin=1, pretrain_iter=50, random_state=0,
    ).fit(X, y)
    F = est.predict_samples(X).T
    losses = ((y - F) / est.y_scale_) ** 2
    c = est.lambda_ / (len(y) * est.rho_)  # sMALA: lambda l_i / (n rho), no offset
    expect = np.mean(np.sqrt(2 * 0.5 * 0.5 * ((c * losses) ** 2).sum(1)))
    assert est.batch_noise_ == pytest.approx(expect, rel=1e-6)


def test_mixing_diagnostics_use_the_library_functions():
    from skgibbs.diagnostics import effective_sample_size, rhat

    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 2))
    y = X @ np.array([1.0, -1.0]) + 0.5 * rng.normal(size=80)
    est = GibbsMLPRegressor(
        hidden_layer_sizes=(), sampler="mala", n_chains=3, n_samples=300, burn_in=300, thin=2,
        pretrain_iter=0, random_state=0,
    ).fit(X, y)
    F = est.predict_samples(X).T.reshape(3, 300, -1)
    assert est.rhat_ == pytest.approx(np.max(rhat(F)))
    assert est.ess_ == pytest.approx(np.min(effective_sample_size(F, split=True, rank_normalize=True)))
    assert est.rhat_ < 1.05 and est.ess_ > 100  # a linear Gaussian posterior mixes
    short = clone(est).set_params(n_samples=3).fit(X, y)
    assert np.isnan(short.rhat_) and np.isnan(short.ess_)


def test_the_default_width_is_sixteen_sixteen_on_small_data_fifty_to_the_medium_band_and_a_hundred_beyond():
    from skgibbs.plan import REGRESSOR_MEDIUM_DATA_ROWS, SMALL_DATA_ROWS, hidden_layers
    from skgibbs.problem import build_problem

    assert GibbsMLPRegressor().get_params()["hidden_layer_sizes"] == "auto"
    assert GibbsMLPRegressor._traits.medium_data_rows == REGRESSOR_MEDIUM_DATA_ROWS
    assert hidden_layers("auto", SMALL_DATA_ROWS) == (16, 16)
    assert hidden_layers("auto", SMALL_DATA_ROWS + 1) == (100, 100)  # no medium band unless asked for
    medium = REGRESSOR_MEDIUM_DATA_ROWS
    assert hidden_layers("auto", SMALL_DATA_ROWS + 1, medium_rows=medium) == (50, 50)
    assert hidden_layers("auto", medium, medium_rows=medium) == (50, 50)
    assert hidden_layers("auto", medium + 1, medium_rows=medium) == (100, 100)
    assert hidden_layers("auto", None) == (100, 100)
    rng = np.random.default_rng(0)
    settings = {"noise": "homoscedastic", "pretrain_iter": 5, "random_state": 0}
    sizes = ((SMALL_DATA_ROWS, 16), (SMALL_DATA_ROWS + 1, 50), (REGRESSOR_MEDIUM_DATA_ROWS + 1, 100))
    for n, width in sizes:
        X = rng.normal(size=(n, 2))
        problem = build_problem(GibbsMLPRegressor(**settings), X, X[:, 0])
        # a 2-w-w-1 network
        assert problem.theta0.shape[1] == 2 * width + width + width * width + width + width + 1
    X = rng.normal(size=(60, 2))
    reg = GibbsMLPRegressor(**settings, n_samples=10, burn_in=20).fit(X, X[:, 0])
    assert reg.spec_.hidden_layer_sizes == (16, 16) and reg.get_params()["hidden_layer_sizes"] == "auto"


@pytest.mark.parametrize("estimator", ["GibbsMLPRegressor", "GibbsMLPClassifier", "SparseGibbsMLPRegressor"])
def test_a_text_column_is_refused_naming_it_and_the_encoder_and_keeps_the_fit(estimator):
    """A frame's column of categories gets its name and the encoder to use, at fit and at predict.

    scikit-learn's own message ("could not convert string to float: 'x'") names neither the column
    nor what to do; a column of numbers written as text is a column of numbers.
    """
    import pandas as pd

    import skgibbs

    cls = getattr(skgibbs, estimator)
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=40), "b": [str(v) for v in rng.normal(size=40)]})
    target = (frame["a"] > 0).astype(int).to_numpy() if "Classifier" in estimator else frame["a"].to_numpy()
    settings = {**CHEAP, "n_chains": 2, "n_samples": 10, "burn_in": 10, "pretrain_iter": 20}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls(**settings, random_state=0).fit(frame, target)  # "b" is numbers written as text
    before = est.samples_.copy()
    texts = frame.assign(city=np.where(frame["a"] > 0, "Paris", "Lyon"))
    texts["city"] = texts["city"].astype("category")
    for call in (lambda: est.fit(texts, target), lambda: est.predict(texts)):
        with pytest.raises(ValueError, match=r"X's column 'city' holds '(Paris|Lyon)'.*OneHotEncoder.*\['city'\]"):
            call()
    with pytest.raises(ValueError, match=r"X's column 2 holds .*OneHotEncoder"):
        est.predict(texts.to_numpy())
    np.testing.assert_array_equal(est.samples_, before)


def test_noise_auto_chooses_on_networks_of_the_fits_own_widths(monkeypatch):
    """The noise models are compared on networks of the widths the fit then samples (medium band too)."""
    import skgibbs.problem
    from skgibbs.plan import SMALL_DATA_ROWS
    from skgibbs.problem import build_problem

    seen = []
    real = skgibbs.problem.resolve_noise

    def spy(params, data):
        seen.append(params["hidden_layer_sizes"])
        return real(params, data)

    monkeypatch.setattr(skgibbs.problem, "resolve_noise", spy)
    X = np.random.default_rng(0).normal(size=(SMALL_DATA_ROWS + 1, 2))
    problem = build_problem(GibbsMLPRegressor(pretrain_iter=5, random_state=0), X, X[:, 0])
    assert seen == [(50, 50)]
    assert problem.spec.hidden_layer_sizes == (50, 50)
