"""The HMC kernel: caching, reversibility, divergences, batching, and ground truth."""

import numpy as np
import pytest
import torch

from skgibbs.model import MLPSpec
from skgibbs.potential import LogDensityPotential, MLPPotential, Prior
from skgibbs.samplers import ChainConfig, hmc, run_chains
from skgibbs.targets import Banana, Funnel, sample_chains

PRIOR = Prior(std=1.0)


def _problem(K=3, n=25):
    gen = torch.Generator().manual_seed(0)
    spec = MLPSpec(2, (5,), "tanh")
    X = torch.randn(n, 2, generator=gen, dtype=torch.float64)
    y = torch.sin(X[:, 0]) + 0.1 * torch.randn(n, generator=gen, dtype=torch.float64)
    return MLPPotential(spec, X, y), spec.init_params(gen, K)


def _params(K, h=0.01, steps=5, scale=2.0, Q=None):
    m = torch.ones(Q, dtype=torch.float64)
    return hmc.HMCParams(scale, torch.full((K,), h, dtype=torch.float64), m, torch.full((K,), steps))


def _gens(K, seed=0):
    return [torch.Generator().manual_seed(seed + k) for k in range(K)]


def test_state_caches_potential_and_gradient():
    pot, theta = _problem()
    state = hmc.init(theta, pot, PRIOR, 2.0)
    assert isinstance(state, hmc.HMCState)
    u, g = hmc.potential_and_grad(pot, PRIOR, 2.0, theta)
    torch.testing.assert_close(state.potential, u)
    torch.testing.assert_close(state.grad, g)
    new, info = hmc.step(_gens(3), state, pot, _params(3, Q=theta.shape[1]), PRIOR)
    assert isinstance(info, hmc.HMCInfo)
    u, g = hmc.potential_and_grad(pot, PRIOR, 2.0, new.theta)
    torch.testing.assert_close(new.potential, u)
    torch.testing.assert_close(new.grad, g)
    assert torch.all((info.acceptance_prob >= 0) & (info.acceptance_prob <= 1))
    assert torch.equal(info.num_steps, torch.full((3,), 5))


def test_leapfrog_is_reversible():
    # forward L steps, flip the momentum, L steps back: the start again
    pot, theta = _problem()
    state = hmc.init(theta, pot, PRIOR, 2.0)
    params = _params(3, h=0.05, steps=20, Q=theta.shape[1])
    p0 = torch.randn(theta.shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)

    def evaluate(th):
        return hmc.potential_and_grad(pot, PRIOR, 2.0, th)

    end, p_end, divergent, steps = hmc.leapfrog(state, p0, params, evaluate)
    assert not divergent.any() and torch.equal(steps, params.num_steps)
    back, p_back, _, _ = hmc.leapfrog(end, -p_end, params, evaluate)
    torch.testing.assert_close(back.theta, theta, rtol=0, atol=1e-10)
    torch.testing.assert_close(-p_back, p0, rtol=0, atol=1e-10)


def test_tiny_step_conserves_energy_and_same_generator_same_draw():
    pot, theta = _problem()
    state = hmc.init(theta, pot, PRIOR, 2.0)
    params = _params(3, h=1e-4, steps=10, Q=theta.shape[1])
    a, info = hmc.step(_gens(3), state, pot, params, PRIOR)
    assert torch.all(info.energy_error.abs() < 1e-5) and info.is_accepted.all()
    b, _ = hmc.step(_gens(3), state, pot, params, PRIOR)
    torch.testing.assert_close(a.theta, b.theta, rtol=0, atol=0)


def test_batched_chains_with_their_own_lengths_match_single_chains():
    pot, theta = _problem()
    state = hmc.init(theta, pot, PRIOR, 2.0)
    h = torch.tensor([0.01, 0.02, 0.03], dtype=torch.float64)
    steps = torch.tensor([3, 7, 1])
    params = hmc.HMCParams(2.0, h, torch.ones(theta.shape[1], dtype=torch.float64), steps)
    gens = _gens(3)
    batched, info = hmc.step(gens, state, pot, params, PRIOR)
    assert torch.equal(info.num_steps, steps)
    for k in range(3):
        single = hmc.init(theta[k : k + 1], pot, PRIOR, 2.0)
        p = hmc.HMCParams(2.0, h[k : k + 1], params.inverse_mass, steps[k : k + 1])
        one, _ = hmc.step(_gens(3)[k : k + 1], single, pot, p, PRIOR)
        torch.testing.assert_close(one.theta[0], batched.theta[k], rtol=1e-10, atol=1e-12)


def test_non_finite_and_energy_blow_up_are_divergences():
    # log pi = -x^2/2 on x < 1, -inf beyond: a trajectory that crosses is divergent
    def log_prob(th):
        value = -0.5 * (th**2).sum(1)
        return torch.where(th[:, 0] < 1.0, value, torch.full_like(value, -torch.inf))

    pot = LogDensityPotential(log_prob, lambda th: -th)
    theta = torch.tensor([[0.9], [-0.5]], dtype=torch.float64)
    state = hmc.init(theta, pot, Prior(), 1.0)
    params = hmc.HMCParams(
        1.0, torch.tensor([0.5, 0.5], dtype=torch.float64), torch.ones(1), torch.tensor([4, 4])
    )
    # find momenta that push chain 0 across the wall
    for seed in range(50):
        gens = [torch.Generator().manual_seed(seed), torch.Generator().manual_seed(seed + 100)]
        new, info = hmc.step(gens, state, pot, params, Prior())
        if info.is_divergent[0]:
            break
    assert info.is_divergent[0] and not info.is_accepted[0] and info.acceptance_prob[0] == 0
    assert torch.equal(new.theta[0], theta[0])
    assert info.num_steps[0] < 4 or torch.isinf(info.energy_error[0])
    # an energy error above the threshold is a divergence too
    steep = LogDensityPotential(lambda th: -1e4 * (th**2).sum(1))
    state = hmc.init(torch.tensor([[1.0]], dtype=torch.float64), steep, Prior(), 1.0)
    params = hmc.HMCParams(1.0, torch.tensor([1.0], dtype=torch.float64), torch.ones(1), torch.tensor([3]))
    _, info = hmc.step(_gens(1), state, steep, params, Prior())
    assert info.is_divergent.all() and not info.is_accepted.any()


def test_run_chains_reports_hmc_statistics():
    pot, theta = _problem()
    cfg = ChainConfig(sampler="hmc", lam=25.0, n_samples=30, burn_in=60, thin=2, step_size=0.01)
    res = run_chains(pot, theta, [1, 2, 3], cfg, prior=PRIOR)
    assert res.samples.shape == (3, 30, theta.shape[1])
    assert res.n_divergent.shape == (3,) and res.trajectory_length > 0
    assert set(res.draw_stats) >= {"acceptance_rate", "diverging", "n_steps", "energy_error"}
    assert res.draw_stats["n_steps"].shape == (3, 30)
    assert np.all(res.n_grad > 60)
    assert np.all(res.acceptance_rate > 0.3)
    again = run_chains(pot, theta, [1, 2, 3], cfg, prior=PRIOR)
    np.testing.assert_array_equal(res.samples, again.samples)
    # chains evaluated one at a time: the same chains up to rounding, which the chaotic
    # leapfrog dynamics of a network amplify, so compare a short run
    short = cfg._replace(burn_in=8, n_samples=4, trajectory_length=0.1)
    looped = run_chains(pot, theta, [1, 2, 3], short, prior=PRIOR, vectorize=False)
    batched = run_chains(pot, theta, [1, 2, 3], short, prior=PRIOR)
    np.testing.assert_allclose(looped.samples, batched.samples, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize(
    "field, value, match",
    [
        ("metric", "dense", "metric"),
        ("trajectory_length", -1.0, "trajectory_length"),
        ("trajectory_length", "nuts", "trajectory_length"),
        ("target_accept", 1.2, "target_accept"),
        ("max_leapfrog", 0, "max_leapfrog"),
    ],
)
def test_bad_hmc_settings_are_refused(field, value, match):
    pot, theta = _problem()
    cfg = ChainConfig(sampler="hmc", lam=25.0, n_samples=2, burn_in=2)._replace(**{field: value})
    with pytest.raises(ValueError, match=match):
        run_chains(pot, theta, [1, 2, 3], cfg, prior=PRIOR)


# ------------------------------------------------------------ ground truth
@pytest.mark.slow
def test_hmc_linear_model_matches_closed_form_posterior(ess, moment_errors):
    # exp(-(n/T) R_n) with a flat prior is N(beta_hat, (T/2) (X1'X1)^-1), X1 = [X, 1]
    rng = np.random.default_rng(0)
    n, d, T = 50, 2, 0.5
    X = rng.normal(size=(n, d))
    y = X @ np.array([1.0, -0.5]) + 0.3 + 0.5 * rng.normal(size=n)
    X1 = np.c_[X, np.ones(n)]
    beta_hat = np.linalg.lstsq(X1, y, rcond=None)[0]
    Sigma = 0.5 * T * np.linalg.inv(X1.T @ X1)
    A = np.array([[0.0, 0.0, 1.0], [1.0, -1.0, 1.0], [2.0, 1.0, 1.0]])

    spec = MLPSpec(d, (), "identity")
    pot = MLPPotential(spec, torch.as_tensor(X), torch.as_tensor(y))
    for metric in ("adaptive", "identity"):
        cfg = ChainConfig(
            sampler="hmc", lam=n / T, n_samples=2000, burn_in=400, step_size=0.01, metric=metric
        )
        res = run_chains(pot, torch.zeros(4, 3, dtype=torch.float64), [1, 2, 3, 4], cfg, prior=Prior())
        F = res.samples @ A.T
        errors = moment_errors(F, A @ beta_hat, A @ Sigma @ A.T)
        assert max(errors.values()) < 1.0, (metric, errors)
        assert min(ess(F[..., j]) for j in range(3)) > 1000  # the tolerance is not vacuous
        wrong = moment_errors(F, A @ beta_hat, 2 * A @ Sigma @ A.T)
        assert all(wrong[f"cov[{j},{j}]"] > 1.0 for j in range(3)), wrong
        assert res.n_divergent.sum() == 0


@pytest.mark.slow
@pytest.mark.parametrize("make, n_samples", [(Funnel, 4000), (Banana, 4000)])
def test_hmc_reproduces_the_known_marginals(make, n_samples, moment_errors):
    """Funnel: x_1 ~ N(0, a), E x_2^2 = exp(2 a b^2); banana: x_1 ~ N(0, p), E x_2^2 = 1 + 2 b^2 p^2."""
    target = make()
    x, res = sample_chains(
        target,
        n_samples,
        sampler="hmc",
        step_size=0.1,
        burn_in=1000,
        n_chains=4,
        random_state=3,
        return_result=True,
    )
    errors = moment_errors(x[..., :2], target.mean[:2], target.cov[:2, :2])
    assert max(errors.values()) < 1, errors
    assert np.all(res.acceptance_rate > 0.6) and res.n_divergent.sum() < 0.01 * x.shape[0] * x.shape[1]
