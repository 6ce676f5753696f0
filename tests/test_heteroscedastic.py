"""``noise="heteroscedastic"``: a noise variance per input, the network's second output."""

import warnings

import numpy as np
import pytest
import torch
from scipy.optimize import minimize
from scipy.special import logsumexp
from scipy.stats import norm
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils._param_validation import InvalidParameterError

from skgibbs import GibbsMLPRegressor
from skgibbs.criteria import langevin_functional_variance, waic
from skgibbs.metrics import log_predictive_density_scorer
from skgibbs.pipeline import make_pipeline
from skgibbs.samplers import HMC, SMC, MeanFieldVI


def _design(n, seed=0):
    # y = 1 + 2 x + e^{(-1 + 1.5 x) / 2} eps: the log-variance is linear in x
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, n)
    y = 1.0 + 2.0 * x + np.exp(0.5 * (-1.0 + 1.5 * x)) * rng.standard_normal(n)
    return x[:, None], y


def _negative_log_likelihood(params, xs, ys):
    # standardized scale: m = a x + b, s = c x + d, in the flat order [a, c, b, d] of the linear network
    a, c, b, d = params
    s = c * xs + d
    return 0.5 * np.sum((ys - a * xs - b) ** 2 * np.exp(-s) + s)


@pytest.mark.slow
def test_linear_posterior_is_centred_on_the_likelihood_maximum_with_its_curvature():
    # Bernstein-von Mises: at n = 2000 the posterior of the four coefficients is N(MLE, H^-1) up to O(1/n)
    # (H the Hessian of the negative log-likelihood at the MLE); the prior (fan-in Gaussian) moves the mean
    # by about sd^2 / prior_sd^2 = O(1/n) of a posterior sd
    X, y = _design(2000)
    xs, ys = (X[:, 0] - X.mean()) / X.std(), (y - y.mean()) / y.std()
    mle = minimize(_negative_log_likelihood, np.zeros(4), args=(xs, ys), method="BFGS", options={"gtol": 1e-10}).x
    p = torch.tensor(mle, requires_grad=True, dtype=torch.float64)
    xt, yt = torch.tensor(xs), torch.tensor(ys)

    def nll(q):
        s = q[1] * xt + q[3]
        return 0.5 * torch.sum((yt - q[0] * xt - q[2]) ** 2 * torch.exp(-s) + s)

    cov = np.linalg.inv(torch.autograd.functional.hessian(nll, p).numpy())
    sd = np.sqrt(np.diag(cov))
    # the windowed metric: under the prior's, a posterior this much narrower than the prior takes steps of
    # about 0.007 and 64 leapfrog steps a transition, six times the gradients for a third of the ESS a second
    est = GibbsMLPRegressor(
        hidden_layer_sizes=(), noise="heteroscedastic", sampler=HMC(metric="adaptive"), prior="fixed",
        n_samples=500, pretrain_iter=300, random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    assert est.temperature_ == 2.0 and est.temperature_source_ == "learned"
    draws = est.samples_.reshape(-1, 4).astype(float)
    # Monte Carlo error of the mean: sd / sqrt(ESS), with ESS at least 200 of the 2000 draws here
    assert np.all(np.abs(draws.mean(0) - mle) < 4 * sd / np.sqrt(200) + 0.05 * sd), (draws.mean(0), mle, sd)
    np.testing.assert_allclose(draws.std(0), sd, rtol=0.2)


@pytest.fixture(scope="module")
def fitted():
    X, y = _design(300, seed=1)
    est = GibbsMLPRegressor(
        hidden_layer_sizes=(8,), noise="heteroscedastic", sampler="hmc", n_samples=40, burn_in=100,
        pretrain_iter=300, random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y), X, y


def test_predictive_spread_follows_the_noise(fitted):
    est, X, y = fitted
    grid = np.linspace(-1, 1, 5)[:, None]
    _, std = est.predict(grid, return_std=True)
    _, pis = est.predict_interval(grid, confidence_level=0.9)
    width = pis[:, 1, 0] - pis[:, 0, 0]
    # the true sd grows from e^{-1.25} = 0.29 to e^{0.25} = 1.28: the fit's grows with it
    assert np.all(np.diff(std) > 0) and np.all(np.diff(width) > 0)
    true_sd = np.exp(0.5 * (-1.0 + 1.5 * grid[:, 0]))
    np.testing.assert_allclose(std, true_sd, rtol=0.35)
    # a mixture of normals of the sd the fit reports: its 90% interval is about 2 * 1.645 sd wide
    np.testing.assert_allclose(width, 2 * norm.ppf(0.95) * std, rtol=0.1)


def test_sample_y_draws_each_draws_noise_at_each_input(fitted):
    est, X, y = fitted
    grid = np.array([[-0.9], [0.9]])
    draws = est.sample_y(grid, n_samples=4000, random_state=0)
    _, std = est.predict(grid, return_std=True)
    # the sd of 4000 draws has a relative standard error of about 1/sqrt(2 * 4000) = 1.1%
    np.testing.assert_allclose(draws.std(1), std, rtol=0.05)


def test_criteria_and_log_likelihood_use_the_noise_of_each_input(fitted, function_draws):
    est, X, y = fitted
    idata = est.to_arviz(X, y, random_state=0)
    log_lik = idata.log_likelihood["y"].values.reshape(-1, len(y))
    mean, var = function_draws(est, X), np.exp(est._network_outputs(X)[..., 1]) * est.y_scale_**2
    expected = norm.logpdf(y, mean, np.sqrt(var))
    np.testing.assert_allclose(log_lik, expected, rtol=1e-6, atol=1e-8)
    # at the Bayesian temperature (2) the power of the likelihood is 1: WAIC of the pointwise log-likelihood
    assert est.waic_tempering_ == 1.0
    assert est.generalization_loss_ == pytest.approx(-waic(log_lik).elpd_waic / len(y), rel=1e-6)
    assert est.noise_variance_ == pytest.approx(var.mean(), rel=1e-6)


def test_a_tempered_fit_scales_the_waic_penalty():
    X, y = _design(200, seed=2)
    est = GibbsMLPRegressor(
        hidden_layer_sizes=(4,), noise="heteroscedastic", temperature=4.0, sampler=HMC(), n_samples=10,
        burn_in=20, pretrain_iter=50, random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    assert est.temperature_ == 4.0 and est.temperature_source_ == "given" and est.waic_tempering_ == 0.5


@pytest.mark.parametrize(
    "sampler", ["mclmc", "csmala", "sghmc", MeanFieldVI(max_iter=300), SMC(n_particles=16, max_mcmc_steps=2)]
)
def test_every_sampler_learns_the_noise_of_each_input(sampler):
    X, y = _design(300, seed=3)
    settings = {} if isinstance(sampler, SMC) else {"n_samples": 20}
    est = GibbsMLPRegressor(
        hidden_layer_sizes=(8,), noise="heteroscedastic", sampler=sampler, pretrain_iter=300, random_state=0,
        **settings,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    _, std = est.predict(np.array([[-0.9], [0.9]]), return_std=True)
    # true sd 0.31 and 1.19: every kernel sees the noise grow (the pre-training alone gets most of it)
    assert std[1] > 2 * std[0]
    assert np.isfinite(est.generalization_loss_)


def test_settings_that_contradict_the_noise_model_fail_before_any_work():
    X, y = _design(50)
    with pytest.raises(ValueError, match="temperature='plug-in'.*noise='heteroscedastic'"):
        GibbsMLPRegressor(noise="heteroscedastic", temperature="plug-in").fit(X, y)
    with pytest.raises(InvalidParameterError, match="noise"):
        GibbsMLPRegressor(noise="poisson").fit(X, y)


def test_a_bad_setting_keeps_the_previous_fit(fitted):
    est, X, y = fitted
    before = est.samples_.copy()
    est.set_params(temperature="plug-in")
    try:
        with pytest.raises(ValueError, match="plug-in"):
            est.fit(X, y)
    finally:
        est.set_params(temperature="auto")
    np.testing.assert_array_equal(est.samples_, before)


def test_the_held_out_scorer_reads_each_draws_noise(fitted):
    est, X, y = fitted
    rows = slice(0, 50)
    F, V = est.predict_samples(X[rows]), est.predict_noise_samples(X[rows])
    assert F.shape == V.shape == (50, est.samples_.shape[0] * est.samples_.shape[1])
    log_lik = norm.logpdf(y[rows, None], F, np.sqrt(V))
    expected = np.mean(logsumexp(log_lik, axis=1) - np.log(F.shape[1]))
    assert log_predictive_density_scorer(est, X[rows], y[rows]) == pytest.approx(expected, rel=1e-9)
    # and through a pipeline, which forwards both
    pipe = make_pipeline(FunctionTransformer().fit(X), est)
    assert log_predictive_density_scorer(pipe, X[rows], y[rows]) == pytest.approx(expected, rel=1e-9)


def test_the_langevin_process_of_a_fitted_model_refuses_a_varying_noise(fitted):
    est, X, y = fitted
    with pytest.raises(ValueError, match="noise='heteroscedastic'.*generalization_loss_"):
        langevin_functional_variance(est, X, y, alpha=0.1)


@pytest.mark.parametrize("embedding", ["piecewise", "periodic"])
def test_an_embedding_and_a_memory_map_carry_the_noise_model(embedding, tmp_path):
    X, y = _design(300, seed=4)
    path = tmp_path / "X.npy"
    np.save(path, X)
    est = GibbsMLPRegressor(
        hidden_layer_sizes=(8,), embedding=embedding, noise="heteroscedastic", sampler=MeanFieldVI(max_iter=300),
        n_samples=20, pretrain_iter=200, random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(np.load(path, mmap_mode="r"), y)
    _, std = est.predict(np.array([[-0.9], [0.9]]), return_std=True)
    assert std[1] > 2 * std[0]


def _quick_vi(**kw):
    return GibbsMLPRegressor(hidden_layer_sizes=(4,), sampler=MeanFieldVI(max_iter=100), n_samples=5,
                             pretrain_iter=20, random_state=0, **kw)  # fmt: skip


def test_auto_noise_varies_from_the_row_threshold_on_without_held_out_evidence(monkeypatch):
    import skgibbs._noise_choice

    monkeypatch.setattr(skgibbs._noise_choice, "HETEROSCEDASTIC_ROWS", 200)  # the rule, on small data
    monkeypatch.setattr(skgibbs._noise_choice, "MIN_HELD_OUT", 10**6)  # too few held-out rows to choose by
    X, y = _design(300, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        small = _quick_vi().fit(X[:199], y[:199])
        large = _quick_vi().fit(X, y)
        plug_in = _quick_vi(temperature="plug-in").fit(X, y)
        fixed = _quick_vi(noise="homoscedastic").fit(X, y)
    assert small.noise == large.noise == "auto"  # the setting is kept; noise_ is what it stood for
    assert (small.noise_, small.spec_.n_outputs, small.temperature_source_) == ("homoscedastic", 1, "plug-in")
    assert (large.noise_, large.spec_.n_outputs, large.temperature_source_) == ("student", 2, "learned")
    assert large.predict_noise_samples(X[:3]).shape == (3, 4 * 5)
    # a plug-in temperature has one variance to plug in: "auto" then keeps one noise variance
    assert (plug_in.noise_, plug_in.spec_.n_outputs) == ("homoscedastic", 1)
    assert (fixed.noise_, fixed.spec_.n_outputs) == ("homoscedastic", 1)


def test_the_default_threshold_is_documented_and_applies():
    from skgibbs._noise_choice import allowed_noise, resolve_noise
    from skgibbs.estimators.regressor import HETEROSCEDASTIC_ROWS

    est = GibbsMLPRegressor()
    assert est.noise == "auto" and HETEROSCEDASTIC_ROWS == 10_000
    assert allowed_noise(est.temperature)[0] == ("homoscedastic", "heteroscedastic", "student")
    assert allowed_noise("plug-in")[0] == ("homoscedastic",)
    given = est.set_params(noise="heteroscedastic", temperature=1.0)
    assert resolve_noise(given.get_params(), data=None) == ("heteroscedastic", None)


def test_a_failed_refit_keeps_the_noise_model_of_the_previous_fit(monkeypatch):
    import skgibbs._noise_choice

    monkeypatch.setattr(skgibbs._noise_choice, "HETEROSCEDASTIC_ROWS", 200)
    monkeypatch.setattr(skgibbs._noise_choice, "MIN_HELD_OUT", 10**6)
    X, y = _design(300, seed=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = _quick_vi().fit(X, y)
    before = est.samples_.copy()
    est.set_params(sampler=MeanFieldVI(max_iter=100), burn_in=7)  # refused by VI, after the noise is resolved
    with pytest.raises(ValueError, match="burn_in"):
        est.fit(X[:150], y[:150])
    assert est.noise_ == "student" and "_noise_of_fit" not in vars(est)
    np.testing.assert_array_equal(est.samples_, before)
    assert est.predict_noise_samples(X[:2]).shape == (2, 20)


@pytest.mark.parametrize("noise, temperature", [("heteroscedastic", "auto"), ("homoscedastic", "learn")])
def test_one_pass_criteria_equal_those_of_a_second_pass(noise, temperature, monkeypatch):
    # with each draw's variance known from the draw, the summaries compute the pointwise WAIC terms in
    # their first pass over the rows; in chunks of a few rows (several chunks) they equal a second pass's
    import skgibbs._chunks

    monkeypatch.setattr(skgibbs._chunks, "CHUNK_BYTES", 2**14)
    X, y = _design(1500, seed=7)
    est = GibbsMLPRegressor(hidden_layer_sizes=(4,), noise=noise, temperature=temperature, sampler="hmc",
                            prior="fixed", n_samples=20, burn_in=20, n_chains=2, pretrain_iter=50,
                            chain_weights="stacking", random_state=0)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    first = est._first_pass(X, y, criteria=True)[3]
    second = est._criteria_pass(X, y, {})
    assert set(first) == set(second) == {"elpd", "penalty", "loo", "khat"}
    for name in first:
        np.testing.assert_allclose(first[name], second[name], rtol=1e-12, atol=1e-12)
    assert est.waic_tempering_ == 1.0  # 2 / T at T = 2, and the learned noise's Bayesian posterior
