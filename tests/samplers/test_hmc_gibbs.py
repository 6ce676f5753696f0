"""HMC within Gibbs under hierarchical priors, against conjugate ground truth."""

import numpy as np
import pytest
import torch
from scipy import stats

from skgibbs.problem import fitted_prior
from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor
from skgibbs.diagnostics import effective_sample_size
from skgibbs.model import MLPSpec
from skgibbs.potential import LinearPotential
from skgibbs.priors import HierarchicalPrior
from skgibbs.samplers import HMC, MALA, Target, run_chains
from skgibbs.samplers.hmc import gibbs as hmc_gibbs
from skgibbs._random import gamma


# -- the pieces --------------------------------------------------------------------
@pytest.mark.parametrize("shape", [0.3, 1.0, 4.5])
def test_gamma_draws_follow_the_gamma_law(shape):
    gens = [torch.Generator().manual_seed(s) for s in range(2)]
    x = gamma(gens, torch.full((2, 4000), shape))
    for row in x.numpy():
        assert stats.kstest(row, stats.gamma(shape).cdf).pvalue > 1e-3


def test_gamma_rows_depend_only_on_their_generator():
    conc = torch.tensor([[0.5, 2.0, 7.0]])
    alone = gamma([torch.Generator().manual_seed(3)], conc)
    group = gamma([torch.Generator().manual_seed(9), torch.Generator().manual_seed(3)], conc.expand(2, -1))
    assert torch.equal(alone[0], group[1])


def test_groups_of_layer_and_ard():
    spec = MLPSpec(3, (4, 2), "tanh")
    layer = HierarchicalPrior.for_network(spec, "layer", spec.fan_in_std(), 0.5)
    assert layer.names == ("weights 1", "biases 1", "weights 2", "biases 2", "output weights", "output biases")
    assert layer.counts().tolist() == [12, 4, 8, 2, 2, 1]
    ard = HierarchicalPrior.for_network(spec, "ard", spec.fan_in_std(), 0.5)
    assert ard.names[:3] == ("input 0", "input 1", "input 2") and ard.counts()[:3].tolist() == [4, 4, 4]
    # input i's group holds the weights out of input i: row i of coefs_[0]
    assert ard.group[:12].view(3, 4).tolist() == [[0] * 4, [1] * 4, [2] * 4]
    # each group's Gamma prior has mean precision 1 / std^2 of its layer
    assert torch.allclose(layer.mean_precision(), torch.tensor([3.0, 3.0, 4.0, 4.0, 2.0, 2.0], dtype=torch.float64))


def test_log_density_is_the_normal_and_gamma_log_densities():
    spec = MLPSpec(2, (), "identity")
    prior = HierarchicalPrior.for_network(spec, "ard", torch.full((3,), 0.7), 1.5)
    theta = torch.tensor([[0.3, -1.0, 0.2], [1.1, 0.4, -0.5]], dtype=torch.float64)
    tau = torch.tensor([[0.5, 2.0, 1.0], [3.0, 0.1, 0.7]], dtype=torch.float64)
    a, b = prior.shape.numpy(), prior.rate.numpy()
    want = stats.norm.logpdf(theta.numpy(), scale=1 / np.sqrt(tau.numpy())).sum(1)
    want += stats.gamma.logpdf(tau.numpy(), a, scale=1 / b).sum(1)
    got = prior.log_density(theta, tau).numpy()
    # equal up to one constant (the normalisers dropped)
    assert np.allclose(got - want, (got - want)[0])


def test_only_hierarchical_samplers_take_a_hierarchical_prior():
    X, y = np.random.default_rng(0).normal(size=(30, 2)), np.zeros(30)
    with pytest.raises(ValueError, match="sampler='adjusted_mclmc' or 'hmc' or 'mclmc'"):
        GibbsMLPRegressor((3,), prior="ard", sampler="mala", pretrain_iter=0).fit(X, y)
    with pytest.raises(ValueError, match="weight_bound=None"):
        GibbsMLPRegressor((3,), prior="layer", weight_bound=3.0, pretrain_iter=0).fit(X, y)
    with pytest.raises(ValueError, match="prior_std"):
        GibbsMLPRegressor((3,), temperature="learn", prior_std=None, pretrain_iter=0).fit(X, y)
    with pytest.raises(ValueError, match="temperature"):
        GibbsMLPClassifier((3,), temperature="learn").fit(X, (y > 0).astype(int) + np.arange(30) % 2)


# -- ground truth: the Gaussian linear model, by a Gibbs sampler written here --------------
def _conjugate_gibbs(X, y, prior, n_iter, seed):
    """Blocked Gibbs sampler of (theta, tau, s) from the conjugate conditionals, in NumPy."""
    n, Q = X.shape
    Xa = np.c_[X, np.ones(n)]
    a, b, group = prior.shape.numpy(), prior.rate.numpy(), prior.group.numpy()
    grouped, fixed = group >= 0, prior.std.numpy() ** -2.0  # a parameter in no group keeps its fixed prior
    count = np.bincount(group[grouped], minlength=len(a))
    rng = np.random.default_rng(seed)
    theta, tau, s = np.zeros(Q + 1), a / b, 1.0
    out = []
    for _ in range(n_iter):
        A = s * Xa.T @ Xa + np.diag(np.where(grouped, tau[group.clip(0)] if len(a) else 0.0, fixed))
        chol = np.linalg.cholesky(A)
        theta = np.linalg.solve(A, s * Xa.T @ y) + np.linalg.solve(chol.T, rng.normal(size=Q + 1))
        squares = np.bincount(group[grouped], theta[grouped] ** 2, minlength=len(a))
        tau = rng.gamma(a + count / 2, 1 / (b + squares / 2))
        rss = np.sum((y - Xa @ theta) ** 2)
        s = rng.gamma(prior.noise_shape + n / 2, 1 / (prior.noise_rate + rss / 2))
        out.append(np.concatenate([theta, tau, [s]]))
    return np.array(out[n_iter // 10 :])


def _linear_data(seed=0, n=60, coef=(1.0, -0.5, 0.0, 0.0)):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, len(coef)))
    return X, X @ np.array(coef) + 0.3 + 0.5 * rng.normal(size=n)


def _within_monte_carlo_error(draws, truth, what):
    """Mean and sd of every column of the chains ``(K, S, p)`` against the exact sampler's long run."""
    K, S, p = draws.shape
    flat = draws.reshape(-1, p)
    for j in range(p):
        ess = float(effective_sample_size(draws[:, :, j]))
        mcse = flat[:, j].std() / np.sqrt(ess) + truth[:, j].std() / np.sqrt(len(truth) / 10)
        assert abs(flat[:, j].mean() - truth[:, j].mean()) < 4.5 * mcse, (what, j)
        # the sd of a sample sd is about sd / sqrt(2 ESS)
        assert abs(flat[:, j].std() / truth[:, j].std() - 1) < 4.5 / np.sqrt(2 * ess) + 0.02, (what, j)


def test_weights_precisions_and_noise_match_the_conjugate_gibbs_sampler():
    X, y = _linear_data()
    spec = MLPSpec(X.shape[1], (), "identity")
    prior = HierarchicalPrior.for_network(spec, "ard", torch.ones(5, dtype=torch.float64), 1.0, noise=True)
    target = Target(LinearPotential(torch.tensor(X), torch.tensor(y)), prior)
    res = run_chains(target, torch.zeros(4, 5, dtype=torch.float64), [1, 2, 3, 4], HMC(), n_samples=1200, burn_in=300)
    draws = np.concatenate(
        [res.samples, res.draw_stats["precision"], res.draw_stats["noise_precision"][..., None]], axis=2
    )
    truth = _conjugate_gibbs(X, y, prior, 40_000, seed=5)
    _within_monte_carlo_error(draws, truth, "theta, tau, s")


def test_the_estimator_samples_the_same_joint_posterior_on_the_standardized_scale():
    X, y = _linear_data(seed=1, n=80)
    reg = GibbsMLPRegressor(
        (), prior="layer", temperature="learn", n_samples=600, burn_in=300, pretrain_iter=0, random_state=0
    ).fit(X, y)
    Xs, ys = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
    prior = fitted_prior(reg)
    truth = _conjugate_gibbs(Xs, ys, prior, 40_000, seed=2)
    noise_precision = reg.y_scale_**2 / reg.sample_stats_["noise_variance"]
    draws = np.concatenate([reg.samples_, reg.sample_stats_["precision"], noise_precision[..., None]], axis=2)
    _within_monte_carlo_error(draws.astype(np.float64), truth, "estimator")
    # the fitted noise variance is the posterior mean of the draws, on the scale of y
    assert reg.noise_variance_ == pytest.approx(reg.sample_stats_["noise_variance"].mean())
    assert reg.waic_tempering_ == 1.0


def test_the_fixed_prior_with_the_noise_learned_draws_the_noise_alone():
    # prior="fixed", temperature="learn": no precision group, the Gibbs step draws the noise precision only
    X, y = _linear_data(seed=2, n=80)
    reg = GibbsMLPRegressor(
        (), sampler="hmc", prior="fixed", temperature="learn", n_samples=600, burn_in=300, pretrain_iter=0,
        random_state=0,
    ).fit(X, y)
    assert reg.sample_stats_["precision"].shape[2] == 0 and reg.prior_groups_.tolist() == []
    Xs, ys = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
    prior = fitted_prior(reg)
    truth = _conjugate_gibbs(Xs, ys, prior, 40_000, seed=3)
    noise_precision = reg.y_scale_**2 / reg.sample_stats_["noise_variance"]
    draws = np.concatenate([reg.samples_, noise_precision[..., None]], axis=2)
    _within_monte_carlo_error(draws.astype(np.float64), truth, "fixed prior, noise learned")


def test_ard_shrinks_the_irrelevant_inputs_and_each_draw_follows_its_conditional():
    rng = np.random.default_rng(0)
    n, d = 200, 10
    X = rng.normal(size=(n, d))
    y = 2.0 * X[:, 0] - 1.5 * X[:, 1] + 0.5 * rng.normal(size=n)
    reg = GibbsMLPRegressor(
        (), sampler="hmc", prior="ard", temperature="plug-in", n_samples=400, burn_in=300, random_state=0
    ).fit(X, y)
    tau = reg.sample_stats_["precision"][..., :d].reshape(-1, d)
    prior = fitted_prior(reg)
    prior_mean = float(prior.mean_precision()[0])
    # One weight per input: an irrelevant input's weight is pinned near 0 by the data (theta^2 << b), so its
    # precision's posterior tends to Gamma(a + 1/2, b), whose mean is (1 + 1 / (2a)) = 2 times the prior's;
    # a relevant input's large weight pulls its precision below the prior mean.
    assert np.all(tau[:, 2:].mean(0) > 1.7 * prior_mean)
    assert np.all(tau[:, :2].mean(0) < prior_mean)
    assert set(np.argsort(reg.input_relevance_)[-2:]) == {0, 1}
    # every recorded tau was drawn from Gamma(a + n_g / 2, b + theta_g^2 / 2) given the recorded theta:
    # its conditional CDF values are uniform
    theta = torch.as_tensor(reg.samples_.reshape(-1, reg.spec_.n_params), dtype=torch.float64)
    shape, rate = prior.conditional(theta)
    all_tau = reg.sample_stats_["precision"].reshape(len(theta), -1)
    pit = stats.gamma.cdf(all_tau * rate.numpy(), shape.numpy())
    for g in range(pit.shape[1]):
        assert stats.kstest(pit[:, g], "uniform").pvalue > 1e-3, reg.prior_groups_[g]


def test_a_transition_keeps_the_cached_potential_exact():
    X, y = _linear_data(n=30)
    spec = MLPSpec(X.shape[1], (), "identity")
    for noise in (False, True):
        prior = HierarchicalPrior.for_network(spec, "layer", torch.ones(5, dtype=torch.float64), 1.0, noise=noise)
        target = Target(LinearPotential(torch.tensor(X), torch.tensor(y)), prior, lambda_=30.0)
        gens = [torch.Generator().manual_seed(k) for k in range(3)]
        state = hmc_gibbs.init(gens, target, 0.1 * torch.ones(3, 5, dtype=torch.float64))
        params = hmc_gibbs.hmc.HMCParams(torch.full((3,), 0.05, dtype=torch.float64), torch.ones(5), torch.full((3,), 5))
        for _ in range(5):
            state, _, _ = hmc_gibbs.step(gens, state, target, params)
        fresh = hmc_gibbs.ConditionalTarget(target, state.precision, state.scale).value_and_grad(state.theta)
        assert torch.allclose(state.potential, fresh[0]) and torch.allclose(state.grad, fresh[1])
        if not noise:
            assert torch.allclose(state.scale, torch.ones(3, dtype=torch.float64))  # lambda / n


def test_the_runner_keeps_vector_records_per_draw():
    X, y = _linear_data(n=30)
    prior = HierarchicalPrior.for_network(MLPSpec(4, (), "identity"), "ard", torch.ones(5), 1.0)
    target = Target(LinearPotential(torch.tensor(X, dtype=torch.float32), torch.tensor(y, dtype=torch.float32)), prior)
    res = run_chains(target, torch.zeros(2, 5), [1, 2], HMC(), n_samples=7, burn_in=5, thin=2)
    assert res.draw_stats["precision"].shape == (2, 7, 5)
    with pytest.raises(ValueError, match="hierarchical"):
        run_chains(target, torch.zeros(2, 5), [1, 2], MALA(), n_samples=3, burn_in=2)


def test_chains_one_by_one_and_in_jobs_draw_what_batched_chains_draw():
    X, y = _linear_data(n=40)
    prior = HierarchicalPrior.for_network(MLPSpec(4, (), "identity"), "layer", torch.ones(5), 1.0, noise=True)
    target = Target(LinearPotential(torch.tensor(X), torch.tensor(y)), prior)
    theta0 = torch.zeros(3, 5, dtype=torch.float64)
    runs = [
        run_chains(target, theta0, [1, 2, 3], HMC(), n_samples=20, burn_in=30, vectorize=vectorize, n_jobs=jobs)
        for vectorize, jobs in ((True, None), (False, None), (True, 2))
    ]
    # groups of chains in jobs: the same arithmetic; one chain at a time: the same chains up to rounding
    # (a single row's matrix product rounds differently, and 50 transitions amplify it)
    for other, tol in zip(runs[1:], (1e-4, 1e-12)):
        np.testing.assert_allclose(other.samples, runs[0].samples, rtol=tol, atol=tol)
        np.testing.assert_allclose(other.draw_stats["precision"], runs[0].draw_stats["precision"], rtol=tol)
