"""``noise="student"``: a Student-t noise whose scale is the network's second output."""

import math
import warnings

import numpy as np
import pytest
import torch
from scipy import stats
from scipy.optimize import minimize
from scipy.special import logsumexp

from skgibbs import GibbsMLPRegressor
from skgibbs.criteria import langevin_functional_variance, student_log_likelihood, waic
from skgibbs.metrics import log_predictive_density_scorer
from skgibbs.model import LOSSES, STUDENT_DF, log_density_constant, per_example_loss, scale_loss_fisher
from skgibbs.samplers import HMC, SMC, MeanFieldVI

NU = STUDENT_DF


def _design(n, seed=0, df=3.0):
    # y = 1 + 2 x + e^{(-1 + 1.5 x) / 2} t_df: a heavy-tailed noise whose log squared scale is linear in x
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, n)
    y = 1.0 + 2.0 * x + np.exp(0.5 * (-1.0 + 1.5 * x)) * rng.standard_t(df, n)
    return x[:, None], y


def test_the_loss_is_twice_the_negative_t_log_density_and_its_gradient_autograds():
    gen = torch.Generator().manual_seed(0)
    out = torch.randn(3, 11, 2, generator=gen, dtype=torch.float64)
    out[0, 0, 1] = 25.0  # a clipped log squared scale: no gradient through it
    y = 3.0 * torch.randn(3, 11, generator=gen, dtype=torch.float64)
    mask = (torch.rand(3, 11, generator=gen) > 0.3).double()
    loss = per_example_loss("student", out, y).numpy()
    s = np.clip(out[..., 1].numpy(), -20, 20)
    expected = stats.t.logpdf(y.numpy(), NU, out[..., 0].numpy(), np.exp(0.5 * s))
    np.testing.assert_allclose(-0.5 * loss - log_density_constant("student"), expected, rtol=1e-12)
    for m in (None, mask):
        leaf = out.clone().requires_grad_(True)
        value, grad = LOSSES["student"](leaf, y, m)
        (auto,) = torch.autograd.grad(value.sum(), leaf)
        np.testing.assert_allclose(grad.detach().numpy(), auto.numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="loss must be one of"):
        log_density_constant("squared")


@pytest.mark.parametrize("loss", ["gaussian", "student"])
def test_the_fisher_factors_are_the_expected_hessian(loss):
    # E[g g'] / 2 of the loss's gradient g under its own noise is the expected Hessian diag(a e^{-s}, b)
    n, s = 400_000, 0.7
    gen = torch.Generator().manual_seed(1)
    z = torch.randn(n, generator=gen, dtype=torch.float64)
    if loss == "student":  # t = z / sqrt(chi2_nu / nu)
        chi2 = 2.0 * torch._standard_gamma(torch.full((n,), NU / 2, dtype=torch.float64), generator=gen)
        z = z / torch.sqrt(chi2 / NU)
    out = torch.zeros(n, 2, dtype=torch.float64)
    out[:, 1] = s
    _, g = LOSSES[loss](out, z * math.exp(s / 2), None)
    fisher = (g.T @ g).numpy() / n / 2
    a, b = scale_loss_fisher(loss)
    # the relative Monte Carlo error of a second moment of 4e5 draws is below 1% (t_5: finite fourth moment)
    np.testing.assert_allclose(np.diag(fisher), [a * math.exp(-s), b], rtol=0.03)
    assert abs(fisher[0, 1]) < 0.01


def _negative_log_likelihood(params, xs, ys):
    # standardized scale: m = a x + b, s = c x + d, in the flat order [a, c, b, d] of the linear network
    a, c, b, d = params
    s = c * xs + d
    return 0.5 * np.sum((NU + 1) * np.log1p((ys - a * xs - b) ** 2 * np.exp(-s) / NU) + s)


@pytest.mark.slow
def test_linear_posterior_is_centred_on_the_t_likelihood_maximum_with_its_curvature():
    # Bernstein-von Mises, as for the normal noise: at n = 2000 the posterior of the four coefficients is
    # N(MLE, H^-1) up to O(1/n), H the Hessian of the t negative log-likelihood at its maximum
    X, y = _design(2000, df=NU)
    xs, ys = (X[:, 0] - X.mean()) / X.std(), (y - y.mean()) / y.std()
    options = {"gtol": 1e-10}
    mle = minimize(_negative_log_likelihood, np.zeros(4), args=(xs, ys), method="BFGS", options=options).x
    p = torch.tensor(mle, requires_grad=True, dtype=torch.float64)
    xt, yt = torch.tensor(xs), torch.tensor(ys)

    def nll(q):
        s = q[1] * xt + q[3]
        return 0.5 * torch.sum((NU + 1) * torch.log1p((yt - q[0] * xt - q[2]) ** 2 * torch.exp(-s) / NU) + s)

    cov = np.linalg.inv(torch.autograd.functional.hessian(nll, p).numpy())
    sd = np.sqrt(np.diag(cov))
    # the windowed metric: under the prior's, a posterior this much narrower than the prior takes steps of
    # about 0.007 and 64 leapfrog steps a transition, six times the gradients for about the same ESS a second
    est = GibbsMLPRegressor(
        hidden_layer_sizes=(), noise="student", sampler=HMC(metric="adaptive"), prior="fixed",
        n_samples=500, pretrain_iter=300, random_state=0,
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    assert est.temperature_ == 2.0 and est.noise_ == "student"
    draws = est.samples_.reshape(-1, 4).astype(float)
    # Monte Carlo error of the mean: sd / sqrt(ESS), with ESS at least 200 of the 2000 draws here
    assert np.all(np.abs(draws.mean(0) - mle) < 4 * sd / np.sqrt(200) + 0.05 * sd), (draws.mean(0), mle, sd)
    np.testing.assert_allclose(draws.std(0), sd, rtol=0.2)


@pytest.fixture(scope="module")
def fitted():
    X, y = _design(300, seed=1)
    est = GibbsMLPRegressor(
        hidden_layer_sizes=(8,), noise="student", sampler="hmc", n_samples=40, burn_in=100,
        pretrain_iter=300, random_state=0,
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y), X, y


def _t_scale(est, X):
    """Each draw's t scale at ``X`` ``(S, n)``, from the network's outputs."""
    return np.exp(0.5 * np.clip(est._network_outputs(X)[..., 1], -20, 20)) * est.y_scale_


def test_log_likelihood_criteria_and_variances_are_the_ts(fitted, function_draws):
    est, X, y = fitted
    assert est.noise_ == "student" and est.spec_.n_outputs == 2
    scale = _t_scale(est, X)
    idata = est.to_arviz(X, y, random_state=0)
    log_lik = idata.log_likelihood["y"].values.reshape(-1, len(y))
    np.testing.assert_allclose(log_lik, stats.t.logpdf(y, NU, function_draws(est, X), scale), rtol=1e-6, atol=1e-8)
    assert est.waic_tempering_ == 1.0
    assert est.generalization_loss_ == pytest.approx(-waic(log_lik).elpd_waic / len(y), rel=1e-6)
    variance = scale**2 * NU / (NU - 2)  # the variance of the t, reported wherever a variance is
    np.testing.assert_allclose(est.predict_noise_samples(X).T, variance, rtol=1e-5)
    assert est.noise_variance_ == pytest.approx(variance.mean(), rel=1e-5)
    _, std = est.predict(X[:5], return_std=True)
    F = function_draws(est, X[:5])
    np.testing.assert_allclose(std, np.sqrt(F.var(0) + variance[:, :5].mean(0)), rtol=1e-5)


@pytest.mark.parametrize("df", [3.0, 5.0, 7.0, 11.0, 4.0, 2.5, 30.0])
def test_the_t_cdf_of_the_intervals_is_scipys(df):
    # the finite sum for odd integer df, scipy's stdtr for any other: the same function to rounding
    from skgibbs._levels import student_cdf

    z = np.concatenate([np.linspace(-1e4, 1e4, 20_001), np.random.default_rng(0).standard_t(df, 10_000)])
    np.testing.assert_allclose(student_cdf(z, df), stats.t.cdf(z, df), rtol=0, atol=1e-15)
    assert student_cdf(np.array([-np.inf, np.inf]), df).tolist() == [0.0, 1.0]


def test_intervals_are_quantiles_of_the_mixture_of_ts(fitted, function_draws):
    est, X, y = fitted
    grid = np.linspace(-1, 1, 4)[:, None]
    _, pis = est.predict_interval(grid, confidence_level=0.9)
    F, scale = function_draws(est, grid), _t_scale(est, grid)
    for bound, p in ((pis[:, 0, 0], 0.05), (pis[:, 1, 0], 0.95)):
        cdf = stats.t.cdf((bound[None] - F) / scale, NU).mean(0)
        np.testing.assert_allclose(cdf, p, atol=1e-9)
    # heavier tails than a normal of the same sd: the 90% interval is narrower than 2 * 1.645 sd
    _, std = est.predict(grid, return_std=True)
    assert np.all(pis[:, 1, 0] - pis[:, 0, 0] < 2 * stats.norm.ppf(0.95) * std)


def test_sample_y_draws_t_noise_of_each_draw_at_each_input(fitted):
    est, X, y = fitted
    grid = np.array([[-0.9], [0.9]])
    draws = est.sample_y(grid, n_samples=20_000, random_state=0)
    _, std = est.predict(grid, return_std=True)
    # the sd of 2e4 draws of a t_5 mixture: relative standard error about sqrt((2 + 6) / 2e4) / 2 = 1%
    np.testing.assert_allclose(draws.std(1), std, rtol=0.05)
    _, pis = est.predict_interval(grid, confidence_level=0.9)
    inside = (draws >= pis[:, :1, 0]) & (draws <= pis[:, 1:, 0])
    # coverage of 2e4 draws: standard error 0.002
    np.testing.assert_allclose(inside.mean(1), 0.9, atol=0.01)
    pp = est.to_arviz(grid, random_state=0).posterior_predictive
    assert np.isfinite(pp["y"].values).all()


def test_the_held_out_scorer_reads_the_t(fitted):
    est, X, y = fitted
    rows = slice(0, 50)
    F, V = est.predict_samples(X[rows]), est.predict_noise_samples(X[rows])
    log_lik = stats.t.logpdf(y[rows, None], NU, F, np.sqrt(V * (NU - 2) / NU))
    expected = np.mean(logsumexp(log_lik, axis=1) - np.log(F.shape[1]))
    assert log_predictive_density_scorer(est, X[rows], y[rows]) == pytest.approx(expected, rel=1e-9)


def test_student_log_likelihood_is_the_t_of_that_variance():
    y, F = np.array([0.3, -2.0]), np.array([[0.0, 1.0], [1.0, -1.0]])
    V = np.array([[2.0, 0.5], [1.0, 3.0]])
    expected = stats.t.logpdf(y, 7.0, F, np.sqrt(V * 5.0 / 7.0))
    np.testing.assert_allclose(student_log_likelihood(y, F, V, 7.0), expected, rtol=1e-12)
    with pytest.raises(ValueError, match="df must be above 2"):
        student_log_likelihood(y, F, V, 2.0)


@pytest.mark.parametrize(
    "sampler", ["mclmc", "csmala", "sghmc", MeanFieldVI(max_iter=300), SMC(n_particles=16, max_mcmc_steps=2)]
)
def test_every_sampler_learns_the_scale_of_each_input(sampler):
    X, y = _design(300, seed=3)
    settings = {} if isinstance(sampler, SMC) else {"n_samples": 20}
    est = GibbsMLPRegressor(hidden_layer_sizes=(8,), noise="student", sampler=sampler, pretrain_iter=300,
                            random_state=0, **settings)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    _, std = est.predict(np.array([[-0.9], [0.9]]), return_std=True)
    assert std[1] > 2 * std[0]
    assert np.isfinite(est.generalization_loss_)


def test_heavy_tails_are_better_predicted_by_the_t():
    # t_3 noise: the held-out log predictive density of the t fit beats the normal's, at the same settings
    X, y = _design(1500, seed=5)
    X_test, y_test = _design(2000, seed=6)
    scores = {}
    for noise in ("heteroscedastic", "student"):
        est = GibbsMLPRegressor(hidden_layer_sizes=(8,), noise=noise, sampler=MeanFieldVI(max_iter=500),
                                n_samples=20, pretrain_iter=300, random_state=0)  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
        scores[noise] = log_predictive_density_scorer(est, X_test, y_test)
    # a t_3 against its best normal: about 0.1 nats per example, far above the 0.02 standard error of a
    # difference of 2000 held-out log-densities
    assert scores["student"] > scores["heteroscedastic"] + 0.04, scores


def test_settings_that_contradict_the_noise_model_name_it(fitted):
    est, X, y = fitted
    with pytest.raises(ValueError, match="temperature='plug-in'.*noise='student'"):
        GibbsMLPRegressor(noise="student", temperature="plug-in").fit(X, y)
    with pytest.raises(ValueError, match="noise='student'.*generalization_loss_"):
        langevin_functional_variance(est, X, y, alpha=0.1)
