"""The HMC sampler object (skgibbs.samplers.hmc.sampler) through the estimator: "auto", metrics, trajectory, step size, divergences, settings."""

import warnings

import numpy as np
import pytest

from skgibbs import GibbsMLPRegressor, SamplerWarning
from skgibbs.samplers import CSMALA, HMC, MCLMC

CHEAP = {"hidden_layer_sizes": (8,), "n_samples": 20, "burn_in": 30, "pretrain_iter": 50}


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)


def _fit(**params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        return GibbsMLPRegressor(**{**CHEAP, "random_state": 0, **params}).fit(*_data())


def _messages(record):
    return [str(w.message) for w in record if issubclass(w.category, SamplerWarning)]


def test_auto_is_hmc_on_the_full_data_under_the_fixed_prior_and_csmala_on_batches():
    # the regressor's defaults (prior="auto", temperature="auto") ask for ARD and a learned noise: MCLMC
    default = _fit()
    assert default.sampler_name_ == "mclmc" and default.rho_ == 1.0 and isinstance(default.sampler_, MCLMC)
    # the fixed prior at the plug-in temperature: exact HMC on the full data
    est = _fit(prior="fixed", temperature="plug-in")
    assert est.sampler_name_ == "hmc" and est.rho_ == 1.0
    assert est.samples_.shape[:2] == (4, 20)  # four chains by default, thin=1 for HMC
    assert est.trajectory_length_ == pytest.approx(np.pi / 2)
    assert est.n_divergent_.shape == (4,) and np.all(est.n_grad_evals_ > 30)
    assert np.all(est.acceptance_rate_ > 0.3)
    assert isinstance(est.sampler_, HMC) and est.sampler_.get_params() == HMC().get_params()
    batched = _fit(rho=0.5, temperature=50.0)
    assert batched.sampler_name_ == "csmala" and isinstance(batched.sampler_, CSMALA)
    # HMC's own results belong to HMC fits only; csMALA reports its own instead
    for name in ("trajectory_length_", "n_divergent_", "inverse_mass_"):
        assert hasattr(est, name) and not hasattr(batched, name), name
    for name in ("correction_", "lambda_prime_", "proposal_std_", "n_restarts_"):
        assert hasattr(batched, name) and not hasattr(est, name), name


def test_hmc_sample_stats_reach_arviz():
    est = _fit(sampler="hmc", n_samples=12)
    stats = est.sample_stats_
    for name in ("acceptance_rate", "step_size", "diverging", "n_steps", "energy_error", "lp"):
        assert stats[name].shape == (4, 12), name
    assert stats["diverging"].dtype == bool
    np.testing.assert_allclose(stats["step_size"][:, 0], est.step_size_)
    az = pytest.importorskip("arviz")
    idata = est.to_arviz()
    assert {"diverging", "step_size", "n_steps"} <= set(idata.sample_stats.data_vars)
    summary = az.summary(idata, var_names=["intercepts_1"])
    assert "r_hat" in summary.columns


@pytest.mark.parametrize("metric", ["prior", "adaptive", "identity"])
def test_every_metric_samples_the_posterior_with_its_own_inverse_mass(metric, moment_errors):
    # a linear model on n = 200 examples: the posterior is Gaussian and known, and its sds are about
    # 20 times smaller than the prior's, so that the three metrics differ by orders of magnitude
    rng = np.random.default_rng(5)
    n = 200
    X = rng.normal(size=(n, 2))
    y = X @ np.array([1.0, -0.5]) + 0.5 * rng.normal(size=n)
    est = GibbsMLPRegressor(
        hidden_layer_sizes=(), sampler=HMC(metric=metric), temperature=0.5, n_samples=200, burn_in=200,
        pretrain_iter=0, random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", SamplerWarning)  # a posterior HMC samples without trouble
        est.fit(X, y)
    # U = (lambda / n) |ys - Z theta|^2 + |theta / s|^2 / 2 on the standardized data, Z = [Xs, 1]
    Z = np.c_[(X - est.x_mean_) / est.x_scale_, np.ones(n)]
    ys = (y - est.y_mean_) / est.y_scale_
    prior_var = est.spec_.fan_in_std().numpy() ** 2  # prior_std="auto": 1 / fan_in
    cov = np.linalg.inv(2 * est.lambda_ / n * Z.T @ Z + np.diag(1 / prior_var))
    mean = cov @ (2 * est.lambda_ / n * Z.T @ ys)
    errors = moment_errors(est.samples_.astype(np.float64), mean, cov)
    assert max(errors.values()) < 1, errors
    assert est.inverse_mass_.shape == (3,)
    ratio = est.inverse_mass_ / np.diag(cov)
    if metric == "prior":
        np.testing.assert_allclose(est.inverse_mass_, prior_var, rtol=1e-6)
    elif metric == "identity":
        np.testing.assert_array_equal(est.inverse_mass_, 1.0)
    else:
        # Stan's windowed estimate from the positions of the chains: the posterior variances, up to the
        # Monte Carlo error of the last window, 4 chains x 50 positions (a relative sd of about 0.1)
        assert np.all((ratio > 0.5) & (ratio < 2)), ratio
    if metric != "adaptive":
        assert np.all(ratio > 100), ratio  # the fixed metrics do not see the posterior's scale
    # and on a network, whose posterior has no closed form, the draws stay finite
    net = _fit(sampler=HMC(metric=metric), burn_in=60)
    assert np.isfinite(net.predict(_data()[0])).all() and np.isfinite(net.samples_).all()
    assert net.inverse_mass_.shape == (net.spec_.n_params,) and np.all(net.inverse_mass_ > 0)


def test_fixed_trajectory_length_sets_the_leapfrog_steps():
    est = _fit(sampler=HMC(trajectory_length=0.05))
    assert est.trajectory_length_ == 0.05
    # ceil(u T / h) with u in (0, 1): no transition runs more than ceil(T / h) steps
    assert np.all(est.sample_stats_["n_steps"] <= np.ceil(0.05 / est.step_size_)[:, None])


def test_target_accept_moves_the_step_size():
    low = _fit(sampler=HMC(target_accept=0.6), burn_in=100)
    high = _fit(sampler=HMC(target_accept=0.95), burn_in=100)
    assert np.all(high.step_size_ < low.step_size_)
    assert high.acceptance_rate_.mean() > low.acceptance_rate_.mean()


def test_divergences_are_counted_and_reported(monkeypatch):
    import skgibbs.samplers.hmc.sampler as chains

    # a step size frozen far too large for the posterior: every trajectory diverges
    monkeypatch.setattr(chains.HMCChains, "_search", lambda self: self.h * 0 + 50.0)
    monkeypatch.setattr(chains.DualAveraging, "final", lambda self: self.mu * 0 + 50.0)
    X, y = _data()
    est = GibbsMLPRegressor(**{**CHEAP, "burn_in": 5, "sampler": "hmc", "random_state": 0})
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est.fit(X, y)
    assert est.n_divergent_.sum() > 0
    assert est.sample_stats_["diverging"].any()
    assert any("divergent" in m and "target_accept" in m for m in _messages(record))
    assert np.isfinite(est.samples_).all()


@pytest.mark.parametrize(
    "name, value",
    [
        ("target_accept", 0.0),
        ("target_accept", 1.0),
        ("target_accept", 1.5),
        ("trajectory_length", 0.0),
        ("trajectory_length", -1.0),
        ("trajectory_length", "long"),
        ("metric", "dense"),
        ("max_leapfrog", 0),
        ("step_size", 0.0),
    ],
)
def test_bad_hmc_settings_are_refused_naming_them(name, value):
    # the kernel's settings live on the sampler object; the fit refuses them with a ValueError
    est = GibbsMLPRegressor(**CHEAP, sampler=HMC(**{name: value}))
    with pytest.raises(ValueError, match=name):
        est.fit(*_data())


@pytest.mark.parametrize(
    "name, value",
    [
        ("burn_in", "long"),
        ("thin", "some"),
        ("sampler", "nuts"),
    ],
)
def test_bad_run_parameters_are_refused_naming_them(name, value):
    est = GibbsMLPRegressor(**{**CHEAP, name: value})
    with pytest.raises((ValueError, TypeError), match=name):
        est.fit(*_data())


@pytest.mark.parametrize(
    "name", ["target_accept", "metric", "trajectory_length", "step_size", "max_leapfrog"]
)
def test_hmc_settings_are_not_estimator_parameters(name):
    # they moved onto HMC(...): the estimator's constructor and set_params refuse them by name
    with pytest.raises(TypeError, match=name):
        GibbsMLPRegressor(**{name: getattr(HMC(), name)})
    with pytest.raises(ValueError, match=name):
        GibbsMLPRegressor().set_params(**{name: getattr(HMC(), name)})
    est = GibbsMLPRegressor(sampler=HMC()).set_params(**{f"sampler__{name}": getattr(HMC(), name)})
    assert est.get_params()[f"sampler__{name}"] == getattr(HMC(), name)
