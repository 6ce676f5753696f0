"""Chains that each converge but disagree: nested R-hat, PSIS, stacking, and the warnings that tell them apart.

Ground truths: the nested R-hat of one chain per superchain is Gelman and
Rubin's R-hat plus ``1/N`` (and a hand-computed value on a constructed
array); PSIS leave-one-out densities of a normal mean under a flat prior
have a closed form, and exact generalized Pareto ratios have a known tail
shape; the stacking weights satisfy a closed-form stationarity condition.
Tolerances are Monte Carlo standard errors, computed in each test.
"""

import copy
import pickle
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from scipy import stats
from sklearn.base import clone
from sklearn.datasets import make_moons

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor, MultimodalWarning, SamplerWarning, _chunks
from skgibbs._mixing import (
    _warn_if_not_mixed,
    mixing_failure,
    pointwise_chain_mixing,
    pointwise_mixing,
    worst_chain_mixing,
    worst_mixing,
)
from skgibbs.datasets import make_gap_regression
from skgibbs.diagnostics import nested_rhat, psis, psis_loo, rhat, stacking_weights

K_SD = 4.0


# ------------------------------------------------------------ nested R-hat
def test_nested_rhat_of_one_chain_per_superchain_is_rhat_plus_one_over_n():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 100, 3)) + np.array([0.0, 0.2, 0.0, -0.3])[:, None, None]
    # the halves of the chains as chains of h = 50 draws, each its own superchain
    halves = np.concatenate([x[:, :50], x[:, 50:]])
    expected = np.sqrt(rhat(x, method="split") ** 2 + 1 / 50)
    np.testing.assert_allclose(nested_rhat(halves), expected, rtol=1e-12)


def test_nested_rhat_on_an_array_with_known_moments():
    # x[k, m, n] = a_k + b_km + c (-1)^n: chain means a_k + b_km, within-chain variance c^2 N / (N - 1)
    K, M, N, c = 3, 2, 6, 0.5
    a = np.array([0.0, 1.0, -2.0])
    b = np.array([[0.1, -0.1], [0.3, 0.5], [0.0, 0.2]])
    x = (a[:, None, None] + b[:, :, None] + c * (-1.0) ** np.arange(N)).reshape(K * M, N)
    between = np.var(a + b.mean(1), ddof=1)
    within = np.mean(np.var(b, axis=1, ddof=1)) + c**2 * N / (N - 1)
    assert nested_rhat(x, superchains=K) == pytest.approx(np.sqrt(1 + between / within), rel=1e-12)
    # labels instead of consecutive groups; ranks ignore monotone transforms
    labels = np.repeat([2, 0, 1], M)
    assert nested_rhat(x, superchains=labels) == pytest.approx(np.sqrt(1 + between / within), rel=1e-12)
    assert nested_rhat(np.exp(x), superchains=K, rank_normalize=True) == pytest.approx(
        nested_rhat(x, superchains=K, rank_normalize=True), rel=1e-12
    )


def test_nested_rhat_of_many_short_stationary_chains():
    # K superchains of M chains of N independent N(0, 1) draws: B_nu is the variance of means of M N
    # draws, a chi^2_{K-1} / (K - 1) multiple of 1 / (M N), and W_nu is about 1 + 1/N, so
    # (nR^2 - 1) M (N + 1) has mean 1 and sd sqrt(2 / (K - 1)), here averaged over P columns
    K, M, N, P = 16, 8, 4, 2000
    x = np.random.default_rng(1).normal(size=(K * M, N, P))
    scaled = (nested_rhat(x, superchains=K) ** 2 - 1) * M * (N + 1)
    assert abs(scaled.mean() - 1) < K_SD * np.sqrt(2 / (K - 1)) / np.sqrt(P)
    # one superchain shifted by d: B_nu grows by d^2 / K on average
    d = 2.0
    x[:M] += d
    moved = nested_rhat(x, superchains=K) ** 2 - 1
    expected = (1 / (M * N) + d**2 / K) / (1 + 1 / N)
    assert abs(moved.mean() - expected) < K_SD * moved.std() / np.sqrt(P)


def test_nested_rhat_refuses_unequal_superchains():
    x = np.zeros((6, 10))
    with pytest.raises(ValueError, match="same number of chains"):
        nested_rhat(x, superchains=[0, 0, 0, 1, 1, 2])
    with pytest.raises(ValueError, match="divisor"):
        nested_rhat(x, superchains=4)


# -------------------------------------------------------------------- PSIS
def test_psis_loo_of_a_normal_mean_matches_the_closed_form():
    # y_i ~ N(mu, 1), flat prior: the posterior given all n is N(ybar, 1/n), the one without y_i is
    # N(ybar_-i, 1/(n-1)), so p(y_i | y_-i) = N(y_i; ybar_-i, 1 + 1/(n-1))
    rng = np.random.default_rng(2)
    n, S = 20, 2000
    y = rng.normal(size=n)
    y[0] += 3.0  # an outlier: the heaviest weights
    mu = rng.normal(y.mean(), np.sqrt(1 / n), size=S)
    log_lik = stats.norm.logpdf(y[None, :], mu[:, None])
    loo = psis_loo(log_lik)
    rest = (y.sum() - y) / (n - 1)
    exact = stats.norm.logpdf(y, rest, np.sqrt(1 + 1 / (n - 1)))
    # Monte Carlo sd of the self-normalised estimate (delta method), on the log scale
    w = np.exp(psis(-log_lik).log_weights)
    p, p_hat = np.exp(log_lik), np.exp(loo.elpd_pointwise)
    sd = np.sqrt((w**2 * (p - p_hat) ** 2).sum(0)) / p_hat
    assert np.all(np.abs(loo.elpd_pointwise - exact) < K_SD * sd)
    assert np.all(loo.khat < 0.5)


def _tail_sd(S, k):
    """Asymptotic sd of the Pareto shape fitted to the M tail draws of S: (1 + k) / sqrt(M)."""
    M = np.ceil(min(S / 5, 3 * np.sqrt(S)))
    return (1 + k) / np.sqrt(M), M


@pytest.mark.parametrize("shape", [0.2, 1.2])
def test_psis_khat_of_exact_pareto_ratios(shape):
    S = 20000
    ratios = stats.genpareto.rvs(shape, size=S, random_state=np.random.default_rng(3))
    sd, M = _tail_sd(S, shape)
    expected = (M * shape + 5) / (M + 10)  # the weakly informative prior: 10 pseudo-draws at 0.5
    khat = psis(np.log(ratios)).khat
    assert abs(khat - expected) < K_SD * sd
    assert (khat < 0.5) if shape + K_SD * sd < 0.5 else (khat > 0.7)


def test_psis_khat_tells_light_from_heavy_importance_ratios():
    # a normal proposal for a wider normal target N(0, s^2): ratio tail shape 1 - 1/s^2
    S, s2 = 20000, 1.2
    x = np.random.default_rng(4).normal(size=S)
    light = psis(stats.norm.logpdf(x, scale=np.sqrt(s2)) - stats.norm.logpdf(x))
    sd, _ = _tail_sd(S, 1 - 1 / s2)
    assert abs(light.khat - (1 - 1 / s2)) < K_SD * sd and light.khat < 0.5
    assert np.exp(light.log_weights).sum() == pytest.approx(1.0)
    # truncation: no weight above S^(3/4) times the mean weight 1 / S
    assert np.exp(light.log_weights).max() <= S ** (-1 / 4) * (1 + 1e-12)
    with pytest.raises(ValueError, match="finite"):
        psis(np.array([0.0, np.nan, 1.0]))


# ---------------------------------------------------------------- stacking
def _chains_of_a_normal_mean(rng, n, S, offsets):
    """Per-chain PSIS-LOO ``(K, n)`` of chains drawing mu ~ N(ybar + offset_k, 1/n) for y_i ~ N(mu, 1)."""
    y = rng.normal(size=n)
    mu = rng.normal(y.mean(), np.sqrt(1 / n), size=(len(offsets), S)) + np.asarray(offsets)[:, None]
    log_lik = stats.norm.logpdf(y[None, None, :], mu[..., None])  # (K, S, n)
    weights = psis(-log_lik.transpose(1, 0, 2)).log_weights.transpose(1, 0, 2)
    loo = psis_loo(log_lik.transpose(1, 0, 2))
    # the Monte Carlo sd of every chain's estimate of p(y_i | y_-i), relative (delta method)
    p, p_hat = np.exp(log_lik), np.exp(loo.elpd_pointwise)[:, None, :]
    sd = np.sqrt((np.exp(2 * weights) * (p - p_hat) ** 2).sum(1)) / p_hat[:, 0]
    return loo.elpd_pointwise, sd


def _stationarity(lpd, w, c):
    """``c / (c K + sum_i (1 - p_ki / sum_j w_j p_ji))``: what each weight equals at the optimum."""
    P = np.exp(lpd - lpd.max(0))
    return c / (c * len(w) + np.sum(1 - P / (w @ P), axis=1))


def test_stacking_gives_a_chain_in_a_wrong_mode_no_weight():
    rng = np.random.default_rng(5)
    n = 200
    lpd, _ = _chains_of_a_normal_mean(rng, n, 500, offsets=[0.0, 0.0, 0.0, 4.0])
    plain = stacking_weights(lpd, pseudo_count=0.0)
    assert plain[3] < 1e-6 and plain.sum() == pytest.approx(1.0)
    w = stacking_weights(lpd)
    np.testing.assert_allclose(w, _stationarity(lpd, w, 1.0), rtol=1e-6)
    # the wrong chain predicts the data at most half as well as the mixture: weight below 2 / n
    P = np.exp(lpd - lpd.max(0))
    assert np.mean(P[3] / (w @ P)) < 0.5 and w[3] < 2 / n


def test_stacking_weighs_chains_that_agree_equally():
    # at the optimum w_k = c / (c K + n (1 - s_k)), s_k = mean_i p_ki / mix_i, so w_k - 1/K is about
    # n (s_k - 1) / (c K^2), and n |s_k - 1| is at most the sum over i of the Monte Carlo errors
    rng = np.random.default_rng(6)
    K, c = 4, 1.0
    lpd, sd = _chains_of_a_normal_mean(rng, 200, 500, offsets=[0.0] * K)
    w = stacking_weights(lpd, pseudo_count=c)
    tolerance = K_SD * sd.sum(1) / (c * K**2)
    assert np.all(np.abs(w - 1 / K) < tolerance)
    # plain stacking has nothing to go on: Monte Carlo noise decides
    assert stacking_weights(lpd, pseudo_count=0.0).max() > w.max()


# ------------------------------------------------- which warning, from draws
def _fake_fit(F, n_chains, chain_weights="equal"):
    """An object with what the mixing warning reads, from draws ``F`` ``(K S, n)``."""
    r, e = worst_mixing(*pointwise_mixing(F, n_chains))
    within_r, within_e, between = worst_chain_mixing(*pointwise_chain_mixing(F, n_chains))
    kernel = SimpleNamespace(mixing_remedies=lambda rho, failure: ["raise burn_in and n_samples"])
    return SimpleNamespace(
        rhat_=r, ess_=e, within_chain_rhat_=within_r, within_chain_ess_=within_e, between_chain_rhat_=between,
        samples_=np.zeros((n_chains, F.shape[0] // n_chains, 1)), sampler_=kernel, rho_=1.0,
        chain_weights=chain_weights,
    )


def _categories(fit):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        _warn_if_not_mixed(fit)
    return [(w.category, str(w.message)) for w in record]


def test_chains_converged_to_different_values_raise_the_multimodal_warning():
    rng = np.random.default_rng(7)
    S = 400
    F = rng.normal(size=(4 * S, 3)) + np.repeat([0.0, 0.0, 2.0, 2.0], S)[:, None]
    fit = _fake_fit(F, 4)
    assert fit.within_chain_rhat_ < 1.05 and fit.between_chain_rhat_ > 1.05
    assert mixing_failure(fit.rhat_, fit.ess_, fit.within_chain_rhat_, fit.within_chain_ess_,
                          fit.between_chain_rhat_, 4) == "between"
    [(category, message)] = _categories(fit)
    assert category is MultimodalWarning
    assert "sampler='smc'" in message and "chain_weights='stacking'" in message and "1/4" in message


def test_a_drifting_chain_raises_the_within_chain_warning():
    rng = np.random.default_rng(8)
    S = 400
    F = rng.normal(size=(4 * S, 3))
    F[:S] += np.linspace(0.0, 3.0, S)[:, None]  # the first chain drifts: not stationary
    fit = _fake_fit(F, 4)
    assert fit.within_chain_rhat_ > 1.05
    [(category, message)] = _categories(fit)
    assert category is SamplerWarning and "have not mixed" in message and "not converged on their own" in message


def test_chains_that_do_not_move_are_not_taken_for_modes():
    # every chain constant on its own (NaN within-chain values) while the pooled R-hat is finite and high
    assert mixing_failure(3.0, 5.0, np.nan, np.nan, 40.0, n_chains=4) == "within"
    # too few draws: every value NaN, nothing to judge
    assert mixing_failure(np.nan, np.nan, np.nan, np.nan, np.nan, n_chains=4) is None


def test_agreeing_stationary_chains_do_not_warn():
    F = np.random.default_rng(9).normal(size=(4 * 400, 3))
    assert _categories(_fake_fit(F, 4)) == []


# ----------------------------------------------------- the estimators
# HMC under the fixed prior at the plug-in temperature: one noise variance, the posterior mean of the
# training risk, for every draw (test_stacking_with_the_noise_learned_weighs_each_draws_noise: the defaults)
SMALL = {
    "hidden_layer_sizes": (16,), "n_samples": 40, "burn_in": 60, "pretrain_iter": 200, "prior": "fixed",
    "temperature": "plug-in", "random_state": 0,
}


@pytest.fixture(scope="module")
def gap_fits():
    X, y = make_gap_regression(200, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        equal = GibbsMLPRegressor(**SMALL).fit(X, y)
        stacked = GibbsMLPRegressor(**SMALL, chain_weights="stacking").fit(X, y)
    return X, y, equal, stacked


def _by_hand(est, X):
    """Function values of every draw, ``(K, S, n)``, from ``samples_`` alone."""
    K, S, Q = est.samples_.shape
    Xs = torch.as_tensor((X - est.x_mean_) / est.x_scale_, dtype=torch.float32)
    with torch.no_grad():
        G = est.spec_.forward(torch.as_tensor(est.samples_.reshape(-1, Q)), Xs).double().numpy()
    return (G * est.y_scale_ + est.y_mean_).reshape(K, S, -1)


def test_stacking_reweighs_the_predictions_of_the_same_draws(gap_fits):
    X, y, equal, stacked = gap_fits
    K = equal.samples_.shape[0]
    for est in (equal, stacked):
        for name in ("within_chain_rhat_", "within_chain_ess_", "between_chain_rhat_"):
            assert np.isfinite(getattr(est, name))
    np.testing.assert_array_equal(equal.chain_weights_, np.full(K, 1 / K))
    assert not hasattr(equal, "pareto_khat_") and stacked.pareto_khat_.shape == (K,)
    np.testing.assert_array_equal(stacked.samples_, equal.samples_)  # stacking does not touch the sampling
    w = stacked.chain_weights_
    assert w.shape == (K,) and np.all(w >= 0) and w.sum() == pytest.approx(1.0)
    assert stacked._draw_weights() is not None  # the chains weigh differently: the weighted reductions run
    F = _by_hand(stacked, X)
    mean = w @ F.mean(1)
    np.testing.assert_allclose(stacked.predict(X), mean, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(equal.predict(X), F.mean((0, 1)), rtol=1e-6, atol=1e-7)
    _, std = stacked.predict(X, return_std=True)
    var = w @ ((F - mean) ** 2).mean(1)
    np.testing.assert_allclose(std, np.sqrt(var + stacked.noise_variance_), rtol=1e-6)
    # the fitted noise variance: the weighted posterior mean of the training risk
    risk = ((y - F) ** 2).mean(2)  # (K, S)
    assert stacked.noise_variance_ == pytest.approx(w @ risk.mean(1), rel=1e-6)
    assert equal.noise_variance_ == pytest.approx(risk.mean(), rel=1e-6)
    # the radius (3.4): the smallest distance to the weighted mean whose draws weigh more than 95%
    S = F.shape[1]
    distance = np.sqrt(((F - mean) ** 2).mean(2)).ravel()
    order = np.argsort(distance)
    cdf = np.cumsum(np.repeat(w / S, S)[order])
    assert stacked.credible_radius_ == pytest.approx(distance[order][np.sum(cdf <= 0.95)], rel=1e-6)


def test_stacked_intervals_and_sampled_draws_follow_the_weights(gap_fits):
    X, _, _, stacked = gap_fits
    w, (K, S, _) = stacked.chain_weights_, stacked.samples_.shape
    F = _by_hand(stacked, X[:20]).reshape(K * S, -1)
    per_draw = np.repeat(w / S, S)
    _, bands = stacked.predict_interval(X[:20], confidence_level=0.8, kind="credible")
    for i in range(20):
        order = np.argsort(F[:, i])
        cdf = np.cumsum(per_draw[order])
        # the first draw whose cumulative weight reaches the level; where a cumulative weight lands on the
        # level itself, its rounding may pick the next draw
        first = np.searchsorted(cdf, [0.1 - 1e-9, 0.9 - 1e-9])
        last = np.searchsorted(cdf, [0.1 + 1e-9, 0.9 + 1e-9])
        for k in range(2):
            candidates = F[order, i][first[k] : last[k] + 1]
            assert np.any(np.isclose(bands[i, k, 0], candidates, rtol=1e-6, atol=0)), (bands[i, k, 0], candidates)
    # the predictive band: quantiles of the weighted mixture of N(f_theta(x), noise_variance_)
    _, pis = stacked.predict_interval(X[:20], confidence_level=0.8)
    sigma = np.sqrt(stacked.noise_variance_)
    for side, p in ((0, 0.1), (1, 0.9)):
        cdf = per_draw @ stats.norm.cdf((pis[:, side, 0] - F) / sigma)
        np.testing.assert_allclose(cdf, p, atol=1e-9)
    # sample_y picks draw j of chain k with probability w_k / S: without noise its draws are the picks
    quiet = copy.deepcopy(stacked)
    quiet.noise_variance_ = 0.0
    n_draws = 4000
    picked = quiet.sample_y(X[:1], n_samples=n_draws, random_state=0)[0]
    chain = np.searchsorted(np.sort(F[:, 0]), picked)
    chain = np.argsort(F[:, 0], kind="stable")[chain] // S
    share = np.bincount(chain, minlength=K) / n_draws
    assert np.all(np.abs(share - w) <= K_SD * np.sqrt(w * (1 - w) / n_draws) + 1e-12)


def test_stacking_with_the_noise_learned_weighs_each_draws_noise(gap_fits):
    # the defaults learn the noise: each draw has its own variance, which the stacked reductions weigh too
    X, y, _, _ = gap_fits
    settings = {k: v for k, v in SMALL.items() if k not in ("prior", "temperature")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        stacked = GibbsMLPRegressor(**settings, chain_weights="stacking").fit(X, y)
    assert stacked.temperature_source_ == "learned"
    w, (K, S, _) = stacked.chain_weights_, stacked.samples_.shape
    assert not np.allclose(w, w[0])  # the chains weigh differently
    noise = stacked.sample_stats_["noise_variance"]  # (K, S)
    assert stacked.noise_variance_ == pytest.approx(w @ noise.mean(1), rel=1e-9)
    F = _by_hand(stacked, X)
    mean = w @ F.mean(1)
    _, std = stacked.predict(X, return_std=True)
    var = w @ ((F - mean) ** 2).mean(1)
    np.testing.assert_allclose(std, np.sqrt(var + stacked.noise_variance_), rtol=1e-6)
    # the predictive band: quantiles of the weighted mixture of N(f_theta(x), the draw's noise variance)
    _, pis = stacked.predict_interval(X[:20], confidence_level=0.8)
    F, sigma = _by_hand(stacked, X[:20]).reshape(K * S, -1), np.sqrt(noise.reshape(-1, 1))
    for side, p in ((0, 0.1), (1, 0.9)):
        cdf = np.repeat(w / S, S) @ stats.norm.cdf((pis[:, side, 0] - F) / sigma)
        np.testing.assert_allclose(cdf, p, atol=1e-9)


def test_chain_weights_is_validated_and_survives_clone_and_pickle(gap_fits):
    X, y, _, stacked = gap_fits
    with pytest.raises(ValueError, match="chain_weights"):
        GibbsMLPRegressor(**SMALL, chain_weights="mass").fit(X, y)
    assert clone(stacked).get_params()["chain_weights"] == "stacking"
    again = pickle.loads(pickle.dumps(stacked))
    np.testing.assert_array_equal(again.predict(X), stacked.predict(X))


@pytest.mark.parametrize("setting", [{"n_chains": 1}, {"n_samples": 1}])
def test_stacking_without_two_chains_of_two_draws_weighs_the_chains_equally(gap_fits, setting):
    # one chain, or one draw a chain: no leave-one-out density to stack, so equal weights and no khat
    X, y, _, _ = gap_fits
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        est = GibbsMLPRegressor(**{**SMALL, **setting}, chain_weights="stacking").fit(X, y)
    K = est.samples_.shape[0]
    np.testing.assert_array_equal(est.chain_weights_, np.full(K, 1.0 / K))
    assert not hasattr(est, "pareto_khat_")
    assert np.all(np.isfinite(est.predict(X[:5])))


def test_chain_diagnostics_and_weights_do_not_depend_on_the_chunks(gap_fits, monkeypatch):
    # the network on the same blocks of 16 rows in both, so that both see the same bits
    X, y, _, stacked = gap_fits
    monkeypatch.setattr(_chunks, "ROW_BLOCK", 16)
    whole = copy.deepcopy(stacked)
    whole._summarise(X, y)  # one chunk of every row
    monkeypatch.setattr(_chunks, "CHUNK_BYTES", 1)
    chunked = copy.deepcopy(stacked)
    chunked._summarise(X, y)  # chunks of one block
    for name in ("within_chain_rhat_", "within_chain_ess_", "between_chain_rhat_", "chain_weights_",
                 "pareto_khat_", "noise_variance_", "credible_radius_"):
        np.testing.assert_allclose(getattr(chunked, name), getattr(whole, name), rtol=1e-10, err_msg=name)


def test_stacked_classifier_probabilities_are_the_weighted_mean():
    X, y = make_moons(80, noise=0.3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        clf = GibbsMLPClassifier(hidden_layer_sizes=(8,), n_samples=30, burn_in=40, pretrain_iter=100,
                                 chain_weights="stacking", random_state=0).fit(X, y)
    K, S, _ = clf.samples_.shape
    w = clf.chain_weights_
    assert w.sum() == pytest.approx(1.0) and clf.pareto_khat_.shape == (K,)
    P = clf.predict_samples(X).reshape(len(X), K, S, -1).mean(2)  # (n, K, classes): each chain's mean
    np.testing.assert_allclose(clf.predict_proba(X), np.einsum("k,nkc->nc", w, P), rtol=1e-10)
    proba, bands = clf.predict_interval(X, confidence_level=0.9)
    assert np.all(bands[:, 0] <= bands[:, 1])
