"""The known posteriors of paper 003 §6 (skgibbs.known_posteriors) and the chains drawn on them.

Densities and gradients are checked against direct formulas and autograd;
the samplers against the targets' exact moments, with tolerances of
``K_SD = 4`` Monte Carlo standard errors ``sd / sqrt(ESS)`` (the
``moment_errors`` fixture). All seeds are fixed.
"""

import numpy as np
import pytest
import torch
from scipy.stats import multivariate_normal, norm

from skgibbs.diagnostics import effective_sample_size
from skgibbs.known_posteriors import (
    Banana,
    Funnel,
    Gaussian,
    LogisticRegressionGPrior,
    Mixture2,
    sample_chains,
)


def _logistic_problem(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * [1.0, 5.0, 0.2] + [0.0, 2.0, -1.0]
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ [1.0, -0.3, 2.0])))).astype(float)
    return X, y


TARGETS = {
    "gaussian": lambda: Gaussian([1.0, -2.0, 0.5], [[2.0, 0.3, 0.0], [0.3, 1.0, -0.2], [0.0, -0.2, 0.5]]),
    "funnel": lambda: Funnel(3, a=1.5, b=0.5),
    "banana": lambda: Banana(),
    "logistic": lambda: LogisticRegressionGPrior(*_logistic_problem()),
}


def _points(target, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return 1.5 * torch.randn(5, target.dim, generator=gen, dtype=torch.float64)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_gradient_matches_autograd(name):
    target = TARGETS[name]()
    theta = _points(target).requires_grad_(True)
    value = target.log_prob(theta)
    assert value.shape == (5,) and value.dtype == torch.float64
    (grad,) = torch.autograd.grad(value.sum(), theta)
    torch.testing.assert_close(target.grad_log_prob(theta.detach()), grad)


def test_gaussian_log_prob_is_the_normal_density():
    target = TARGETS["gaussian"]()
    theta = _points(target)
    expected = multivariate_normal(target.mean, target.cov).logpdf(theta.numpy())
    np.testing.assert_allclose(target.log_prob(theta).numpy(), expected)


def test_funnel_log_prob_is_the_hierarchical_density():
    # paper 003 §6.2: x_1 ~ N(0, a), x_i | x_1 ~ N(0, exp(2 b x_1)) (variances)
    target = Funnel(3, a=1.5, b=0.5)
    x = _points(target).numpy()
    sd = np.exp(0.5 * x[:, :1])
    expected = norm(0, np.sqrt(1.5)).logpdf(x[:, 0]) + norm(0, sd).logpdf(x[:, 1:]).sum(1)
    np.testing.assert_allclose(target.log_prob(torch.as_tensor(x)).numpy(), expected)


def test_banana_log_prob_is_the_twisted_density():
    # paper 003 §6.3: x_1 ~ N(0, p), x_2 | x_1 ~ N(p b - b x_1^2, 1), the rest N(0, 1)
    target = Banana()
    x = _points(target).numpy()
    expected = (
        norm(0, np.sqrt(20.0)).logpdf(x[:, 0])
        + norm(20 * 0.05 - 0.05 * x[:, 0] ** 2, 1).logpdf(x[:, 1])
        + norm.logpdf(x[:, 2:]).sum(1)
    )
    np.testing.assert_allclose(target.log_prob(torch.as_tensor(x)).numpy(), expected)


def test_logistic_target_is_the_g_prior_posterior_in_whitened_coordinates():
    X, y = _logistic_problem()
    target = LogisticRegressionGPrior(X, y, g=100.0)
    Z = np.c_[X, np.ones(len(X))]
    np.testing.assert_allclose(target.Z.T @ target.Z, np.eye(4), atol=1e-10)
    np.testing.assert_allclose(target.whiten(X), target.Z)
    xt = _points(target).numpy()
    # back to the original coefficients x = (Z'Z)^{-1/2} x~: same linear predictor,
    # and the g-prior N(0, g (Z'Z)^{-1}) has log density -x'Z'Zx / (2g) = -|x~|^2 / (2g)
    coef = np.linalg.solve(np.real(_sqrtm(Z.T @ Z)), xt.T).T
    eta = coef @ Z.T
    log_lik = (y * eta - np.logaddexp(0, eta)).sum(1)
    prior = -np.einsum("ki,ij,kj->k", coef, Z.T @ Z, coef) / 200.0
    np.testing.assert_allclose(target.log_prob(torch.as_tensor(xt)).numpy(), log_lik + prior)
    lik = np.exp(y * eta - np.logaddexp(0, eta)).mean(1)
    np.testing.assert_allclose(target.average_likelihood(torch.as_tensor(xt), X, y).numpy(), lik)


def _sqrtm(a):
    w, v = np.linalg.eigh(a)
    return (v * np.sqrt(w)) @ v.T


def test_exact_moments_of_the_papers_targets():
    assert np.allclose(Funnel().cov, np.diag([1.0, np.exp(0.5)]))
    assert np.allclose(Banana().cov, np.diag([20.0, 3.0, 1.0, 1.0, 1.0, 1.0]))
    assert Funnel().dim == 2 and Banana().dim == 6


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: Funnel(dim=1), "dim"),
        (lambda: Funnel(a=0.0), "a must be"),
        (lambda: Banana(b=-1.0), "b must be"),
        (lambda: Gaussian([0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]]), "positive definite"),
        (lambda: Gaussian([0.0, 0.0], np.eye(3)), "cov"),
        (lambda: LogisticRegressionGPrior(np.ones((5, 1)), np.zeros(5)), "collinear"),
        (lambda: LogisticRegressionGPrior(np.arange(5.0)[:, None], np.arange(5.0)), "labels"),
        (lambda: LogisticRegressionGPrior(*_logistic_problem(), g=0), "g must be"),
    ],
)
def test_bad_target_parameters(make, match):
    with pytest.raises(ValueError, match=match):
        make()


# ------------------------------------------------------------- sampling
@pytest.mark.slow
def test_gaussian_moments_from_ula_with_small_step(moment_errors):
    # ULA's stationary covariance is (A - h A^2 / 2)^{-1} (A the precision);
    # at h = 0.02 its distance to cov is a small fraction of the tolerance
    target = Gaussian([1.0, -1.0], [[1.0, 0.6], [0.6, 2.0]])
    h = 0.02
    x = sample_chains(target, 5000, sampler="ula", step_size=h, n_chains=8, thin=2, random_state=0)
    errors = moment_errors(x, target.mean, target.cov)
    assert max(errors.values()) < 1, errors
    A = np.linalg.inv(target.cov)
    bias = np.abs(np.linalg.inv(A - h * A @ A / 2) - target.cov).max()
    z = (x[..., 1] - x[..., 1].mean()) ** 2
    assert bias < 0.2 * 4 * z.std() / np.sqrt(effective_sample_size(z))


@pytest.mark.slow
def test_gaussian_moments_from_adapted_mala(moment_errors):
    target = TARGETS["gaussian"]()
    kwargs = dict(sampler="mala", step_size=0.1, adapt_step_size=True, n_chains=8, random_state=1)
    x, res = sample_chains(target, 3000, return_result=True, **kwargs)
    assert np.all(np.abs(res.acceptance_rate - 0.574) < 0.1)
    errors = moment_errors(x, target.mean, target.cov)
    assert max(errors.values()) < 1, errors


@pytest.mark.slow
@pytest.mark.parametrize("make, n_samples", [(Funnel, 5000), (Banana, 10000)])
def test_mala_reproduces_the_known_marginals(make, n_samples, moment_errors):
    """Funnel: x_1 ~ N(0, a), E x_2^2 = exp(2 a b^2); banana: x_1 ~ N(0, p), E x_2^2 = 1 + 2 b^2 p^2.

    The paper's parameters; ``E x_2^2`` is its test function ``f``.
    """
    target = make()
    kwargs = dict(sampler="mala", step_size=0.5, adapt_step_size=True, burn_in=2000, n_chains=8)
    x = sample_chains(target, n_samples, random_state=2, **kwargs)
    errors = moment_errors(x[..., :2], target.mean[:2], target.cov[:2, :2])
    assert max(errors.values()) < 1, errors


def test_same_random_state_same_draws():
    target = Funnel()
    kwargs = dict(sampler="mala", step_size=0.3, burn_in=50, n_chains=3)
    a = sample_chains(target, 100, random_state=5, **kwargs)
    b = sample_chains(target, 100, random_state=5, **kwargs)
    c = sample_chains(target, 100, random_state=6, **kwargs)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    state = torch.get_rng_state()
    sample_chains(target, 10, random_state=5, sampler="ula", burn_in=5)
    assert torch.equal(state, torch.get_rng_state())  # the global torch RNG is untouched


def test_sample_chains_shapes_thinning_and_start():
    x0 = np.array([[0.5, 0.5], [-0.5, 1.0]])
    kwargs = dict(thin=3, burn_in=0, n_chains=2, x0=x0, random_state=0)
    x, res = sample_chains(Funnel(), 7, return_result=True, **kwargs)
    assert x.shape == (2, 7, 2) and x.dtype == np.float64
    np.testing.assert_array_equal(res.samples, x)
    # the default sampler is ULA: no Metropolis-Hastings step, so no acceptance rate (1 before)
    assert res.acceptance_rate is None and "acceptance_rate" not in res.draw_stats
    np.testing.assert_array_equal(res.step_size, 0.01)
    # thin=3, burn_in=0: the first kept draw is the third step from x0, not x0 itself
    assert not np.array_equal(x[:, 0], x0)


class _GradientOnly:
    def grad_log_prob(self, theta):
        return -theta


def test_sample_chains_with_a_gradient_only_target():
    x = sample_chains(_GradientOnly(), 20, x0=np.zeros(3), burn_in=10, random_state=0)
    assert x.shape == (1, 20, 3) and np.all(np.isfinite(x))
    with pytest.raises(ValueError, match="log_prob"):
        sample_chains(_GradientOnly(), 20, sampler="mala", x0=np.zeros(3))
    with pytest.raises(ValueError, match="x0"):
        sample_chains(_GradientOnly(), 20)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"sampler": "nuts"}, "sampler"),
        ({"adapt_step_size": True}, "adapt_step_size"),
        ({"n_samples": 0}, "n_samples"),
        ({"n_chains": 1.5}, "n_chains"),
        ({"step_size": -0.1}, "step_size"),
        ({"x0": np.zeros(3)}, "x0"),
        ({"x0": [np.nan, 0.0]}, "x0"),
    ],
)
def test_sample_chains_bad_arguments(kwargs, match):
    args = {"n_samples": 10, **kwargs}
    with pytest.raises(ValueError, match=match):
        sample_chains(Funnel(), args.pop("n_samples"), **args)


# ------------------------------------------------------------- the two-component mixture
def _mixture():
    return Mixture2(weights=(1.0, 3.0), means=[[-3.0, 0.5, 0.0], [2.0, -1.0, 1.0]], std=0.7)


def test_mixture_log_prob_is_the_weighted_normal_density_and_its_gradient_is_exact():
    target = _mixture()
    theta = _points(target).requires_grad_(True)
    value = target.log_prob(theta)
    x = theta.detach().numpy()
    parts = [
        np.log(w) + multivariate_normal(mu, 0.49 * np.eye(3)).logpdf(x)
        for w, mu in zip((0.25, 0.75), target.means)
    ]
    np.testing.assert_allclose(value.detach().numpy(), np.logaddexp(*parts))
    (grad,) = torch.autograd.grad(value.sum(), theta)
    torch.testing.assert_close(target.grad_log_prob(theta.detach()), grad)
    r = target.responsibilities(theta.detach()).numpy()
    np.testing.assert_allclose(r[:, 1], 1 / (1 + np.exp(parts[0] - parts[1])))


def test_mixture_moments_and_weights_against_exact_draws():
    """Exact draws of the mixture (component, then its normal): moments and mean responsibility.

    Tolerances are 4 Monte Carlo standard errors of the 200 000 independent draws.
    """
    target = _mixture()
    rng = np.random.default_rng(0)
    n = 200_000
    component = rng.random(n) < target.weights[1]
    x = target.means[component.astype(int)] + target.std * rng.normal(size=(n, 3))
    se = x.std(0) / np.sqrt(n)
    assert np.all(np.abs(x.mean(0) - target.mean) < 4 * se)
    z = (x - target.mean)[:, :, None] * (x - target.mean)[:, None, :]
    assert np.all(np.abs(z.mean(0) - target.cov) < 4 * z.std(0) / np.sqrt(n))
    # E_pi[P(component k | x)] = w_k exactly: the mean responsibility is an unbiased estimate
    r = target.responsibilities(torch.as_tensor(x[:20_000])).numpy()[:, 1]
    assert abs(r.mean() - 0.75) < 4 * r.std() / np.sqrt(r.size)
    assert np.isclose(target.weights.sum(), 1.0) and target.dim == 3


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"weights": (0.5, 0.0)}, "weights"),
        ({"weights": (0.2, 0.3, 0.5)}, "weights"),
        ({"means": [[0.0, 1.0]]}, "means"),
        ({"std": -1.0}, "std"),
    ],
)
def test_bad_mixture_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Mixture2(**kwargs)
