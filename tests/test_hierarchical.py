"""The estimators under hierarchical priors: parameters, fitted state and the learned noise."""

import pickle
import warnings

import numpy as np
import pytest
import torch
from scipy import stats
from scipy.special import ndtr
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError

from skgibbs.problem import fitted_prior
from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor, SamplerWarning
from skgibbs.samplers import choose_sampler

SMALL = dict(hidden_layer_sizes=(6,), n_samples=15, burn_in=30, pretrain_iter=30, random_state=0)


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        return est.fit(X, y)


@pytest.fixture(scope="module")
def learned():
    X, y = _data()
    return _fit(GibbsMLPRegressor(prior="ard", temperature="learn", sampler="hmc", **SMALL), X, y), X, y


def test_bad_prior_names_the_options():
    X, y = _data()
    with pytest.raises(InvalidParameterError, match="'prior' parameter.*'ard'"):
        GibbsMLPRegressor(prior="neal").fit(X, y)
    with pytest.raises(InvalidParameterError, match="prior_shape"):
        GibbsMLPRegressor(prior="ard", prior_shape=0.0).fit(X, y)


def test_fitted_state_of_ard(learned):
    reg, X, _ = learned
    K, S = reg.samples_.shape[:2]
    G = len(reg.prior_groups_)
    assert reg.prior_groups_.tolist() == ["input 0", "input 1", "input 2", "biases 1", "output weights",
                                          "output biases"]  # fmt: skip
    assert reg.sample_stats_["precision"].shape == (K, S, G)
    assert reg.sample_stats_["noise_variance"].shape == (K, S)
    assert reg.input_relevance_.shape == (3,) and reg.input_relevance_interval_.shape == (3, 2)
    scale = reg.sample_stats_["precision"][..., :3].reshape(-1, 3) ** -0.5
    np.testing.assert_allclose(reg.input_relevance_, scale.mean(0))
    assert reg.sampler_name_ == "hmc"
    # temperature_ is 2 sigma^2 at the posterior mean of the noise variance (standardized scale)
    assert reg.temperature_ == pytest.approx(2 * reg.sample_stats_["noise_variance"].mean() / reg.y_scale_**2)
    assert reg.lambda_ == pytest.approx(len(X) / reg.temperature_)


def test_learned_noise_enters_every_prediction(learned):
    reg, X, _ = learned
    sigma = np.sqrt(reg.sample_stats_["noise_variance"].reshape(-1))
    F = reg.predict_samples(X[:4]).T  # (S, 4)
    _, pis = reg.predict_interval(X[:4], confidence_level=0.8)
    # the interval's ends are the 10% and 90% quantiles of the mixture of N(f_s, sigma_s^2)
    for end, p in ((pis[:, 0, 0], 0.1), (pis[:, 1, 0], 0.9)):
        cdf = ndtr((end[None, :] - F) / sigma[:, None]).mean(0)
        np.testing.assert_allclose(cdf, p, atol=1e-6)
    mean, std = reg.predict(X[:4], return_std=True)
    np.testing.assert_allclose(std**2, F.var(0) + reg.noise_variance_, rtol=1e-6)
    draws = reg.sample_y(X[:1], n_samples=4000, random_state=0)[0]
    assert abs(draws.var() / (F[:, 0].var() + np.mean(sigma**2)) - 1) < 0.1


def test_lp_is_the_joint_log_density_of_each_draw(learned):
    reg, X, y = learned
    prior = fitted_prior(reg)
    theta = torch.as_tensor(reg.samples_[0, :3], dtype=torch.float64)
    tau = torch.as_tensor(reg.sample_stats_["precision"][0, :3])
    s = reg.y_scale_**2 / reg.sample_stats_["noise_variance"][0, :3]
    f = reg.spec_.forward(theta.float(), torch.as_tensor((X - reg.x_mean_) / reg.x_scale_, dtype=torch.float32))
    loss = (((y - reg.y_mean_) / reg.y_scale_ - f.double().numpy()) ** 2).sum(1)
    a = reg.prior_shape
    want = prior.log_density(theta, tau).numpy() - 0.5 * s * loss + (len(y) / 2 + a - 1) * np.log(s) - a * s
    lp = reg.sample_stats_["lp"][0, :3]
    np.testing.assert_allclose(lp - want, (lp - want)[0], atol=1e-3)  # equal up to one constant


def test_reproducible_and_round_trips(learned):
    reg, X, y = learned
    again = _fit(clone(reg), X, y)
    np.testing.assert_array_equal(again.sample_stats_["precision"], reg.sample_stats_["precision"])
    np.testing.assert_array_equal(again.samples_, reg.samples_)
    back = pickle.loads(pickle.dumps(reg))
    np.testing.assert_array_equal(back.predict(X), reg.predict(X))
    np.testing.assert_array_equal(back.input_relevance_, reg.input_relevance_)


def test_safe_persistence_keeps_the_hierarchical_state(learned, tmp_path):
    pytest.importorskip("skops")
    from skgibbs import persistence

    reg, X, _ = learned
    persistence.dump(reg, tmp_path / "ard.skops")
    back = persistence.load(tmp_path / "ard.skops")
    np.testing.assert_array_equal(back.prior_groups_, reg.prior_groups_)
    np.testing.assert_array_equal(back.sample_stats_["noise_variance"], reg.sample_stats_["noise_variance"])
    np.testing.assert_array_equal(back.predict_interval(X[:3])[1], reg.predict_interval(X[:3])[1])


def test_auto_chooses_mclmc_for_a_learned_noise():
    assert choose_sampler(1.0, n_rows=10**6, n_params=10**4)[0] == "vi"
    assert choose_sampler(1.0, n_rows=10**6, n_params=10**4, learned_noise=True)[0] == "mclmc"
    # a hierarchical prior asked for where a full batch is affordable; beyond it VI's Gamma factors
    assert choose_sampler(1.0, n_rows=500, n_params=10**4, hierarchical=True)[0] == "mclmc"
    assert choose_sampler(1.0, n_rows=10**6, n_params=10**4, hierarchical=True)[0] == "vi"
    X, y = _data()
    with pytest.raises(ValueError, match="sampler='vi' keeps the temperature fixed.*'adjusted_mclmc' or 'hmc' or 'mclmc'"):
        GibbsMLPRegressor(prior="layer", temperature="learn", sampler="vi", **SMALL).fit(X, y)


def test_vi_has_a_gamma_factor_per_group():
    X, y = _data(n=80)
    reg = _fit(GibbsMLPRegressor((8,), prior="ard", sampler="vi", n_samples=20, pretrain_iter=30,
                                 random_state=0), X, y)  # fmt: skip
    shape, rate = reg.precision_shape_, reg.precision_rate_
    tau = reg.sample_stats_["precision"]
    assert tau.shape == (4, 20, len(reg.prior_groups_)) and reg.input_relevance_.shape == (3,)
    # log_q holds q(theta) and the Gamma factors q(tau) of each draw
    theta = reg.samples_[0, 0].astype(np.float64)
    z = (theta - reg.variational_mean_) / reg.variational_std_
    log_q = -0.5 * z @ z - np.log(reg.variational_std_).sum()
    log_q += stats.gamma.logpdf(tau[0, 0], shape, scale=1 / rate).sum()  # the Gaussian's 2 pi dropped, as there
    assert reg.sample_stats_["log_q"][0, 0] == pytest.approx(log_q, rel=1e-6)


def test_relevance_weighs_the_chains_like_every_prediction():
    X, y = _data()
    reg = _fit(GibbsMLPRegressor(prior="ard", temperature="learn", chain_weights="stacking", **SMALL), X, y)
    w = reg.chain_weights_
    assert not np.allclose(w, w[0])  # the check below has power: the chains weigh differently
    K, S = reg.samples_.shape[:2]
    # (K, S, inputs), computed as the fit computes it (tau ** -0.5 may differ from it in the last bit)
    scale = 1.0 / np.sqrt(reg.sample_stats_["precision"][..., :3])
    np.testing.assert_allclose(reg.input_relevance_, np.einsum("k,ksp->p", w, scale) / S)
    assert not np.allclose(reg.input_relevance_, scale.reshape(-1, 3).mean(0))
    # the interval: the weighted quantiles, inside the range of the draws of the chains that weigh
    kept = scale[w > 0].reshape(-1, 3)
    assert np.all(reg.input_relevance_interval_[:, 0] >= kept.min(0))
    assert np.all(reg.input_relevance_interval_[:, 1] <= kept.max(0))
    # a refit under another prior leaves no relevance of the earlier one behind
    _fit(reg.set_params(prior="layer", chain_weights="equal"), X, y)
    assert not hasattr(reg, "input_relevance_") and len(reg.prior_groups_) == 4
    # the fixed prior with the noise learned: no group, the noise precision drawn alone
    _fit(reg.set_params(prior="fixed"), X, y)
    assert reg.prior_groups_.tolist() == [] and reg.sample_stats_["precision"].shape == (K, S, 0)
    assert reg.sample_stats_["noise_variance"].shape == (K, S) and np.isfinite(reg.noise_variance_)
    # the plug-in temperature (what "auto" was before it learned the noise): nothing hierarchical is left
    _fit(reg.set_params(temperature="plug-in"), X, y)
    assert not hasattr(reg, "prior_groups_") and "noise_variance" not in reg.sample_stats_
    assert (reg.sampler_name_, reg.prior_, reg.temperature_source_) == ("hmc", "fixed", "plug-in")


def test_classifier_ard_names_its_inputs():
    pd = pytest.importorskip("pandas")
    X, y = _data(n=80)
    frame = pd.DataFrame(X, columns=["age", "bmi", "bp"])
    clf = _fit(GibbsMLPClassifier(prior="ard", **SMALL), frame, (y > 0).astype(int))
    assert clf.prior_groups_[:3].tolist() == ["input age", "input bmi", "input bp"]
    assert clf.input_relevance_.shape == (3,)
    assert "noise_variance" not in clf.sample_stats_
    layer = _fit(GibbsMLPClassifier(prior="layer", **SMALL), X, (y > 0).astype(int))
    assert not hasattr(layer, "input_relevance_") and len(layer.prior_groups_) == 4
