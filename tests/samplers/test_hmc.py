"""The HMC kernel: caching, reversibility, divergences, batching, and ground truth."""

import numpy as np
import pytest
import torch

from skgibbs.model import MLPSpec
from skgibbs.potential import LogDensityPotential, MLPPotential
from skgibbs.priors import Prior
from skgibbs.samplers import HMC, Target, hmc, run_chains
from skgibbs.known_posteriors import Banana, Funnel, sample_chains

PRIOR = Prior(std=1.0)
N = 25
# the potential's scale c = lambda / n = 2 of the kernel-level tests
LAM = 2.0 * N


def _problem(K=3, n=N):
    gen = torch.Generator().manual_seed(0)
    spec = MLPSpec(2, (5,), "tanh")
    X = torch.randn(n, 2, generator=gen, dtype=torch.float64)
    y = torch.sin(X[:, 0]) + 0.1 * torch.randn(n, generator=gen, dtype=torch.float64)
    return MLPPotential(spec, X, y), spec.init_params(gen, K)


def _target(pot, prior=PRIOR, lam=LAM):
    return Target(pot, prior, lam)


def _params(K, h=0.01, steps=5, Q=None):
    m = torch.ones(Q, dtype=torch.float64)
    return hmc.HMCParams(torch.full((K,), h, dtype=torch.float64), m, torch.full((K,), steps))


def _gens(K, seed=0):
    return [torch.Generator().manual_seed(seed + k) for k in range(K)]


def test_state_caches_potential_and_gradient():
    pot, theta = _problem()
    target = _target(pot)
    state = hmc.init(_gens(3), target, theta)
    assert isinstance(state, hmc.HMCState)
    u, g = target.value_and_grad(theta)
    torch.testing.assert_close(state.potential, u)
    torch.testing.assert_close(state.grad, g)
    new, info = hmc.step(_gens(3), state, target, _params(3, Q=theta.shape[1]))
    assert isinstance(info, hmc.HMCInfo)
    u, g = target.value_and_grad(new.theta)
    torch.testing.assert_close(new.potential, u)
    torch.testing.assert_close(new.grad, g)
    assert torch.all((info.acceptance_prob >= 0) & (info.acceptance_prob <= 1))
    assert torch.equal(info.num_steps, torch.full((3,), 5))


@pytest.mark.parametrize("h", [0.05, 0.2], ids=["accepted", "rejected"])
def test_energy_is_the_hamiltonian_of_the_state_moved_to(h):
    # H = U + K at the end of the transition: H_L when accepted, H_0 (the start, its fresh momentum) when not
    pot, theta = _problem(K=4)
    target = _target(pot)
    state = hmc.init(_gens(4), target, theta)
    new, info = hmc.step(_gens(4), state, target, _params(4, h=h, steps=5, Q=theta.shape[1]))
    p0 = torch.stack([torch.randn(theta.shape[1], generator=g, dtype=theta.dtype) for g in _gens(4)])
    h0 = state.potential + 0.5 * (p0 * p0).sum(1)
    h_end = target.value_and_grad(info.proposal)[0] + 0.5 * (info.momentum**2).sum(1)
    torch.testing.assert_close(info.energy, torch.where(info.is_accepted, h_end, h0))
    assert bool(info.is_accepted.all()) if h < 0.1 else not bool(info.is_accepted.any())
    torch.testing.assert_close(info.energy, target.value_and_grad(new.theta)[0] + 0.5 * torch.where(
        info.is_accepted[:, None], info.momentum, p0).pow(2).sum(1))


def test_params_carry_no_loss_scale():
    # the scale c = lambda / n is the target's: the same params on a target at twice the
    # temperature halve the data term of U
    assert hmc.HMCParams._fields == ("step_size", "inverse_mass", "num_steps", "max_energy_error")
    pot, theta = _problem()
    hot, cold = _target(pot, Prior(), LAM / 2), _target(pot, Prior(), LAM)
    u_hot, u_cold = hmc.init(_gens(3), hot, theta).potential, hmc.init(_gens(3), cold, theta).potential
    torch.testing.assert_close(2 * u_hot, u_cold)


def test_leapfrog_is_reversible():
    # forward L steps, flip the momentum, L steps back: the start again
    pot, theta = _problem()
    target = _target(pot)
    state = hmc.init(_gens(3), target, theta)
    params = _params(3, h=0.05, steps=20, Q=theta.shape[1])
    p0 = torch.randn(theta.shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)

    end, p_end, divergent, steps = hmc.leapfrog(state, p0, params, hmc.evaluator(target))
    assert not divergent.any() and torch.equal(steps, params.num_steps)
    back, p_back, _, _ = hmc.leapfrog(end, -p_end, params, hmc.evaluator(target))
    torch.testing.assert_close(back.theta, theta, rtol=0, atol=1e-10)
    torch.testing.assert_close(-p_back, p0, rtol=0, atol=1e-10)


def test_tiny_step_conserves_energy_and_same_generator_same_draw():
    pot, theta = _problem()
    target = _target(pot)
    state = hmc.init(_gens(3), target, theta)
    params = _params(3, h=1e-4, steps=10, Q=theta.shape[1])
    a, info = hmc.step(_gens(3), state, target, params)
    assert torch.all(info.energy_error.abs() < 1e-5) and info.is_accepted.all()
    b, _ = hmc.step(_gens(3), state, target, params)
    torch.testing.assert_close(a.theta, b.theta, rtol=0, atol=0)


def test_batched_chains_with_their_own_lengths_match_single_chains():
    pot, theta = _problem()
    target = _target(pot)
    state = hmc.init(_gens(3), target, theta)
    h = torch.tensor([0.01, 0.02, 0.03], dtype=torch.float64)
    steps = torch.tensor([3, 7, 1])
    params = hmc.HMCParams(h, torch.ones(theta.shape[1], dtype=torch.float64), steps)
    gens = _gens(3)
    batched, info = hmc.step(gens, state, target, params)
    assert torch.equal(info.num_steps, steps)
    for k in range(3):
        single = hmc.init(_gens(3)[k : k + 1], target, theta[k : k + 1])
        p = hmc.HMCParams(h[k : k + 1], params.inverse_mass, steps[k : k + 1])
        one, _ = hmc.step(_gens(3)[k : k + 1], single, target, p)
        torch.testing.assert_close(one.theta[0], batched.theta[k], rtol=1e-10, atol=1e-12)


def test_non_finite_and_energy_blow_up_are_divergences():
    # log pi = -x^2/2 on x < 1, -inf beyond: a trajectory that crosses is divergent
    def log_prob(th):
        value = -0.5 * (th**2).sum(1)
        return torch.where(th[:, 0] < 1.0, value, torch.full_like(value, -torch.inf))

    # one "example" (n = 1) and lambda = 1: U = -log pi
    target = Target(LogDensityPotential(log_prob, lambda th: -th), Prior(), 1.0)
    theta = torch.tensor([[0.9], [-0.5]], dtype=torch.float64)
    state = hmc.init(_gens(2), target, theta)
    params = hmc.HMCParams(torch.tensor([0.5, 0.5], dtype=torch.float64), torch.ones(1), torch.tensor([4, 4]))
    # find momenta that push chain 0 across the wall
    for seed in range(50):
        gens = [torch.Generator().manual_seed(seed), torch.Generator().manual_seed(seed + 100)]
        new, info = hmc.step(gens, state, target, params)
        if info.is_divergent[0]:
            break
    assert info.is_divergent[0] and not info.is_accepted[0] and info.acceptance_prob[0] == 0
    assert torch.equal(new.theta[0], theta[0])
    assert info.num_steps[0] < 4 or torch.isinf(info.energy_error[0])
    # an energy error above the threshold is a divergence too
    # the other chain of the batch, which shares the trajectory's length, integrates as it would alone
    alone = hmc.HMCParams(params.step_size[1:], params.inverse_mass, params.num_steps[1:])
    gen = [torch.Generator().manual_seed(seed + 100)]
    one, one_info = hmc.step(gen, hmc.init(None, target, theta[1:]), target, alone)
    assert not info.is_divergent[1] and int(info.num_steps[1]) == 4
    assert torch.equal(one.theta[0], new.theta[1]) and torch.equal(one_info.proposal[0], info.proposal[1])
    steep = Target(LogDensityPotential(lambda th: -1e4 * (th**2).sum(1)), Prior(), 1.0)
    state = hmc.init(_gens(1), steep, torch.tensor([[1.0]], dtype=torch.float64))
    params = hmc.HMCParams(torch.tensor([1.0], dtype=torch.float64), torch.ones(1), torch.tensor([3]))
    _, info = hmc.step(_gens(1), state, steep, params)
    assert info.is_divergent.all() and not info.is_accepted.any()


def test_run_chains_reports_hmc_statistics():
    pot, theta = _problem()
    target = Target(pot, PRIOR, 25.0)
    run = dict(n_samples=30, burn_in=60, thin=2)
    res = run_chains(target, theta, [1, 2, 3], HMC(step_size=0.01), **run)
    assert res.samples.shape == (3, 30, theta.shape[1])
    assert res.n_divergent.shape == (3,) and res.trajectory_length > 0
    assert set(res.draw_stats) >= {"acceptance_rate", "diverging", "n_steps", "energy_error"}
    assert res.draw_stats["n_steps"].shape == (3, 30)
    assert np.all(res.n_grad > 60)
    assert np.all(res.acceptance_rate > 0.3)
    # HMC reports its own results only: the Langevin kernels' restarts, correction and
    # proposal sd were NaN/0 fillers before and are gone
    assert set(res.info) == {"step_size", "trajectory_length", "inverse_mass", "n_divergent"}
    for name in ("n_restarts", "correction", "proposal_std", "lambda_prime", "accepted_batch_sizes"):
        assert not hasattr(res, name), name
    assert res.inverse_mass.shape == (theta.shape[1],)
    again = run_chains(target, theta, [1, 2, 3], HMC(step_size=0.01), **run)
    np.testing.assert_array_equal(res.samples, again.samples)
    # chains evaluated one at a time: the same chains up to rounding, which the chaotic
    # leapfrog dynamics of a network amplify, so compare a short run
    short = HMC(step_size=0.01, trajectory_length=0.1)
    looped = run_chains(target, theta, [1, 2, 3], short, n_samples=4, burn_in=8, thin=2, vectorize=False)
    batched = run_chains(target, theta, [1, 2, 3], short, n_samples=4, burn_in=8, thin=2)
    np.testing.assert_allclose(looped.samples, batched.samples, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize(
    "field, value, match",
    [
        ("metric", "dense", "metric"),
        ("trajectory_length", -1.0, "trajectory_length"),
        ("trajectory_length", "nuts", "trajectory_length"),
        ("target_accept", 1.2, "target_accept"),
        ("max_leapfrog", 0, "max_leapfrog"),
        ("step_size", 0.0, "step_size"),
    ],
)
def test_bad_hmc_settings_are_refused(field, value, match):
    pot, theta = _problem()
    with pytest.raises(ValueError, match=match):
        run_chains(Target(pot, PRIOR, 25.0), theta, [1, 2, 3], HMC(**{field: value}), n_samples=2, burn_in=2)


# ------------------------------------------------------------ ground truth
@pytest.mark.slow
def test_hmc_linear_model_matches_closed_form_posterior(ess, moment_errors, linear_posterior):
    pot, lam, beta_hat, Sigma = linear_posterior
    A = np.array([[0.0, 0.0, 1.0], [1.0, -1.0, 1.0], [2.0, 1.0, 1.0]])

    for metric in ("adaptive", "identity"):
        res = run_chains(
            Target(pot, Prior(), lam),
            torch.zeros(4, 3, dtype=torch.float64),
            [1, 2, 3, 4],
            HMC(step_size=0.01, metric=metric),
            n_samples=2000,
            burn_in=400,
        )
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
