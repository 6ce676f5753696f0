"""The microcanonical kernels: the integrator, exactness of the adjusted kernel, the bias of the unadjusted one."""

import math

import numpy as np
import pytest
import torch
from sklearn.base import clone

from skgibbs.model import MLPSpec
from skgibbs.potential import LinearPotential, LogDensityPotential
from skgibbs.priors import HierarchicalPrior, Prior
from skgibbs.samplers import MCLMC, AdjustedMCLMC, Target, get_sampler, run_chains
from skgibbs.samplers.hmc import evaluator
from skgibbs.samplers.mclmc import adjusted, integrator, kernel
from test_hmc_gibbs import _conjugate_gibbs, _linear_data, _within_monte_carlo_error


def _gaussian(scales, mean=None):
    """``N(mean, diag(scales^2))`` as a target on the full data."""
    mean = torch.zeros_like(scales) if mean is None else mean
    return Target(LogDensityPotential(lambda th: -0.5 * (((th - mean) / scales) ** 2).sum(1)))


def _gens(K, seed=0):
    return [torch.Generator().manual_seed(seed + k) for k in range(K)]


def _correlated(d=12, seed=1):
    A = torch.randn(d, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    P = A @ A.T / d + torch.eye(d, dtype=torch.float64)
    return Target(LogDensityPotential(lambda th: -0.5 * ((th @ P) * th).sum(1)))


# -- the integrator ------------------------------------------------------------------------
@pytest.mark.parametrize("scheme", ["leapfrog", "mclachlan"])
def test_the_isokinetic_integrator_is_reversible_to_round_off(scheme):
    target, d = _correlated(), 12
    theta = torch.randn(3, d, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    u0, g0 = target.value_and_grad(theta)
    v = integrator.random_direction(_gens(3), theta)
    eps, steps, sigma = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64), torch.tensor([20, 15, 9]), torch.ones(d)
    ev = evaluator(target)
    th1, v1, u1, g1, err, div, n = integrator.integrate(theta, v, u0, g0, eps, sigma, steps, ev, scheme)
    assert n.tolist() == [20, 15, 9] and not div.any()
    assert torch.allclose(v1.norm(dim=1), torch.ones(3, dtype=torch.float64), atol=1e-14)
    th2, v2, u2, g2, err2, _, _ = integrator.integrate(th1, -v1, u1, g1, eps, sigma, steps, ev, scheme)
    assert torch.allclose(th2, theta, atol=1e-12) and torch.allclose(-v2, v, atol=1e-12)
    # the backward trajectory's energy error undoes the forward one's: the involution of MAMS
    assert torch.allclose(err + err2, torch.zeros(3, dtype=torch.float64), atol=1e-10)


@pytest.mark.parametrize("scheme", ["leapfrog", "mclachlan"])
def test_the_energy_error_vanishes_as_the_step_squared(scheme):
    target, d = _correlated(), 12
    theta = torch.randn(1, d, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    u0, g0 = target.value_and_grad(theta)
    v = integrator.random_direction(_gens(1), theta)
    errors = []
    for eps in (0.2, 0.1, 0.05):
        steps = torch.tensor([round(2.0 / eps)])
        out = integrator.integrate(theta, v, u0, g0, torch.tensor([eps], dtype=torch.float64), torch.ones(d), steps,
                                   evaluator(target), scheme)
        errors.append(abs(float(out[4][0])))
    # a second-order integrator over a fixed time: the error falls by 4 when the step halves
    assert 3.0 < errors[0] / errors[1] < 5.0 and 3.0 < errors[1] / errors[2] < 5.0, errors


def test_the_velocity_update_is_the_same_on_python_floats_and_on_tensors():
    """The CPU's scalar path (Python floats) and the other devices' (tensors) give the same update."""
    g = torch.Generator().manual_seed(3)
    K, Q = 5, 40
    u = torch.randn(K, Q, generator=g, dtype=torch.float64)
    u /= u.norm(dim=1, keepdim=True)
    grad = torch.randn(K, Q, generator=g, dtype=torch.float64) * torch.tensor([0.0, 1e-3, 1.0, 30.0, 1e3])[:, None]
    sg = grad * 0.7
    norm, dot = sg.norm(dim=1), (u * sg).sum(1)
    eps = torch.tensor([0.1, 0.5, 0.05, 0.2, 1.0], dtype=torch.float64)
    coef, kinetic = integrator._coefficients(norm.tolist(), dot.tolist(), eps.tolist(), Q - 1, torch.float64)
    coef_t, kinetic_t = integrator._coefficient_tensors(norm, dot, eps, Q - 1, torch.float64)
    assert torch.allclose(coef, coef_t, rtol=1e-12, atol=0) and torch.allclose(kinetic, kinetic_t, rtol=1e-12, atol=1e-15)
    # a zero gradient leaves the velocity as it is, with no kinetic change
    assert coef[0, 0] == 2.0 and coef[1, 0] == 0.0 and kinetic[0] == 0.0


def test_frozen_coordinates_do_not_move_and_get_no_velocity():
    target = _gaussian(torch.ones(4, dtype=torch.float64))
    sigma = torch.tensor([1.0, 0.0, 1.0, 1.0], dtype=torch.float64)
    params = kernel.MCLMCParams(torch.tensor([0.5]), torch.tensor([1.0]), sigma)
    state = kernel.init(_gens(1), target, torch.full((1, 4), 0.7, dtype=torch.float64), params)
    for _ in range(20):
        state, _ = kernel.step(_gens(1), state, target, params)
    assert float(state.theta[0, 1]) == 0.7 and float(state.momentum[0, 1]) == 0.0


def test_kernels_cache_the_potential_and_draw_only_from_their_generators():
    target = _correlated()
    theta = torch.randn(2, 12, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    p = kernel.MCLMCParams(torch.tensor([0.3, 0.3]), torch.tensor([2.0, 2.0]), torch.ones(12))
    s1, _ = kernel.step(_gens(2), kernel.init(_gens(2), target, theta, p), target, p)
    u, g = target.value_and_grad(s1.theta)
    assert torch.allclose(s1.potential, u) and torch.allclose(s1.grad, g)
    alone, _ = kernel.step(_gens(1, 1), kernel.init(_gens(1, 1), target, theta[1:], p), target,
                           p._replace(step_size=p.step_size[1:], L=p.L[1:]))
    # the same draws (a chain drawing from another's generator would move elsewhere); the bits may differ
    # where the BLAS sums a batch of two rows in another order than one row
    torch.testing.assert_close(alone.theta[0], s1.theta[1], rtol=1e-12, atol=1e-12)
    q = adjusted.MAMSParams(torch.tensor([0.3, 0.3]), torch.ones(12), torch.tensor([4, 7]))
    a1, info = adjusted.step(_gens(2), adjusted.init(_gens(2), target, theta), target, q)
    u, g = target.value_and_grad(a1.theta)
    assert torch.allclose(a1.potential, u) and torch.allclose(a1.grad, g)
    assert info.num_steps.tolist() == [4, 7] and info.num_grads.tolist() == [8, 14]
    assert ((info.acceptance_prob >= 0) & (info.acceptance_prob <= 1)).all()


def test_a_non_finite_trajectory_is_a_rejected_divergence(nan_gradient_where):
    target = Target(LogDensityPotential(
        lambda th: -0.5 * (nan_gradient_where(th, lambda t: t[:, :1] > 1.0) ** 2).sum(1)
    ))
    theta = torch.tensor([[0.9, 0.0], [-3.0, 0.0]], dtype=torch.float64)
    q = adjusted.MAMSParams(torch.tensor([0.5, 0.5]), torch.ones(2), torch.tensor([10, 10]))
    state = adjusted.init(_gens(2), target, theta)
    hits = 0
    for _ in range(10):
        new, info = adjusted.step(_gens(2), state, target, q)
        hits += int(info.is_divergent[0])
        assert not info.is_accepted[info.is_divergent].any()
        assert torch.isfinite(new.theta).all()
    assert hits > 0


# -- ground truth ----------------------------------------------------------------------------
@pytest.mark.slow
def test_adjusted_mclmc_matches_the_closed_form_posterior_of_the_linear_model(ess, moment_errors, linear_posterior):
    pot, lam, beta_hat, Sigma = linear_posterior
    res = run_chains(Target(pot, Prior(), lam), torch.zeros(4, 3, dtype=torch.float64), [1, 2, 3, 4],
                     AdjustedMCLMC(), n_samples=1000, burn_in=200)
    errors = moment_errors(res.samples, beta_hat, Sigma)
    assert max(errors.values()) < 1.0, errors
    assert min(ess(res.samples[..., j]) for j in range(3)) > 1000  # the tolerance is not vacuous
    wrong = moment_errors(res.samples, beta_hat, 1.5 * Sigma)
    assert all(wrong[f"cov[{j},{j}]"] > 1.0 for j in range(3)), wrong
    assert res.n_divergent.sum() == 0


@pytest.mark.slow
def test_adjusted_kernel_is_exact_at_a_large_step_on_two_unequal_components(moment_errors):
    """A mixture of two Gaussians of weights 0.3 and 0.7, close enough to be crossed; a step with many rejections."""
    mu, w = torch.tensor([[-1.0, 0.0], [1.0, 0.5]], dtype=torch.float64), torch.tensor([0.3, 0.7])

    def log_prob(th):
        comps = -0.5 * ((th[:, None, :] - mu) ** 2).sum(2) + torch.log(w).to(th.dtype)
        return torch.logsumexp(comps, 1)

    target = Target(LogDensityPotential(log_prob))
    K, gens = 16, _gens(16, 10)
    q = adjusted.MAMSParams(torch.full((K,), 3.0, dtype=torch.float64), torch.ones(2), torch.full((K,), 3))
    state, xs, acc = adjusted.init(gens, target, torch.zeros(K, 2, dtype=torch.float64)), [], []
    for i in range(2500):
        state, info = adjusted.step(gens, state, target, q)
        if i >= 200:
            xs.append(state.theta)
            acc.append(info.acceptance_prob)
    draws = torch.stack(xs, 1).numpy()
    mean = (w[:, None].double() * mu).sum(0).numpy()
    m = mu.numpy()
    cov = np.eye(2) + sum(float(w[j]) * np.outer(m[j] - mean, m[j] - mean) for j in range(2))
    assert float(torch.stack(acc).mean()) < 0.9  # the correction has work to do
    errors = moment_errors(draws, mean, cov)
    assert max(errors.values()) < 1.0, errors


@pytest.mark.slow
def test_unadjusted_bias_on_a_gaussian_stays_below_the_energy_error_variance_per_dimension():
    """Robnik and Seljak (2024): on a Gaussian the squared relative bias of the variances is about EEVPD.

    ``b^2 = mean_i (Var_i / sigma_i^2 - 1)^2`` from long chains, less its Monte Carlo part (the same
    statistic between two independent halves of the draws). Their analysis bounds ``b^2`` by the energy
    error variance per dimension; at a large step of McLachlan's integrator it measures within a few
    percent of it (1.03 times here), so the check asks for the predicted order, ``b^2 / EEVPD`` in
    [0.5, 1.5]. At a tiny step ``b^2`` is Monte Carlo noise alone.
    """
    d, K = 50, 8
    scales = torch.exp(torch.linspace(math.log(0.5), math.log(2.0), d, dtype=torch.float64))
    target = _gaussian(scales)
    out = {}
    for eps in (2.0, 8.0):
        gens = _gens(K, 3)
        p = kernel.MCLMCParams(torch.full((K,), eps, dtype=torch.float64), torch.full((K,), math.sqrt(d),
                                                                                       dtype=torch.float64),
                               torch.ones(d, dtype=torch.float64))
        state = kernel.init(gens, target, torch.randn(K, d, generator=gens[0], dtype=torch.float64) * scales, p)
        squares, energy = [], []
        for i in range(3000):
            state, info = kernel.step(gens, state, target, p)
            if i >= 200:
                squares.append(state.theta**2)
                energy.append(info.energy_change)
        sq = torch.stack(squares)  # (steps, K, d)
        rel = sq.mean((0, 1)) / scales**2 - 1
        halves = sq[:, : K // 2].mean((0, 1)) - sq[:, K // 2 :].mean((0, 1))
        noise = float(((halves / scales**2) ** 2).mean()) / 4  # Var of the mean of two halves
        eevpd = float(torch.stack(energy).var() / d)
        out[eps] = (float((rel**2).mean()), noise, eevpd)
    b2, noise, eevpd = out[8.0]
    assert 0.5 * eevpd < b2 - noise < 1.5 * eevpd, out
    b2, noise, eevpd = out[2.0]
    assert eevpd < 1e-5 and b2 < 3 * noise + eevpd, out


@pytest.mark.slow
@pytest.mark.parametrize("sampler", [
    AdjustedMCLMC(), MCLMC(desired_energy_var=1e-4),
    AdjustedMCLMC(parametrization="centered"), MCLMC(desired_energy_var=1e-4, parametrization="centered"),
], ids=["adjusted-noncentered", "mclmc-noncentered", "adjusted-centered", "mclmc-centered"])
def test_weights_precisions_and_noise_match_the_conjugate_gibbs_sampler(sampler):
    X, y = _linear_data()
    spec = MLPSpec(X.shape[1], (), "identity")
    prior = HierarchicalPrior.for_network(spec, "ard", torch.ones(5, dtype=torch.float64), 1.0, noise=True)
    target = Target(LinearPotential(torch.tensor(X), torch.tensor(y)), prior)
    res = run_chains(target, torch.zeros(4, 5, dtype=torch.float64), [1, 2, 3, 4], sampler, n_samples=600,
                     burn_in=200)
    draws = np.concatenate(
        [res.samples, res.draw_stats["precision"], res.draw_stats["noise_precision"][..., None]], axis=2
    )
    truth = _conjugate_gibbs(X, y, prior, 40_000, seed=5)
    _within_monte_carlo_error(draws, truth, repr(sampler))


# -- the sampler objects ----------------------------------------------------------------------
@pytest.mark.parametrize("name, cls", [("mclmc", MCLMC), ("adjusted_mclmc", AdjustedMCLMC)])
def test_names_settings_and_records(name, cls):
    sampler = get_sampler(name)
    assert type(sampler) is cls and sampler.hierarchical
    target = _gaussian(torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64))
    res = run_chains(target, torch.zeros(2, 3, dtype=torch.float64), [0, 1], sampler, n_samples=30, burn_in=40)
    assert res.samples.shape == (2, 30, 3)
    assert res.step_size.shape == (2,) and res.decoherence_length.shape == (2,)
    assert res.preconditioner.shape == (2, 3) and res.n_divergent.tolist() == [0, 0]
    assert np.all(np.isfinite(res.decoherence_length)) and np.all(res.step_size > 0)
    # the same seeds give the same draws
    again = run_chains(target, torch.zeros(2, 3, dtype=torch.float64), [0, 1], get_sampler(name), n_samples=30,
                       burn_in=40)
    assert np.array_equal(res.samples, again.samples)
    # with a fixed budget a chain's draws do not depend on the chain beside it (steps_per_transition="auto"
    # takes the group's median decoherence length)
    fixed = cls(steps_per_transition=3) if cls is MCLMC else cls()
    pair = run_chains(target, torch.zeros(2, 3, dtype=torch.float64), [0, 1], fixed, n_samples=30, burn_in=40)
    alone = run_chains(target, torch.zeros(1, 3, dtype=torch.float64), [1], clone(fixed), n_samples=30, burn_in=40)
    assert np.allclose(alone.samples[0], pair.samples[1])


@pytest.mark.parametrize("cls, field, value, match", [
    (MCLMC, "desired_energy_var", 0.0, "desired_energy_var"),
    (MCLMC, "steps_per_transition", 0, "steps_per_transition"),
    (MCLMC, "integrator", "euler", "integrator"),
    (AdjustedMCLMC, "target_accept", 1.5, "target_accept"),
    (AdjustedMCLMC, "max_steps", 0, "max_steps"),
    (MCLMC, "parametrization", "centred", "parametrization"),
    (AdjustedMCLMC, "parametrization", None, "parametrization"),
])
def test_bad_settings_are_refused(cls, field, value, match):
    with pytest.raises(ValueError, match=match):
        run_chains(_gaussian(torch.ones(2)), torch.zeros(1, 2), [0], cls(**{field: value}), n_samples=2, burn_in=2)


def test_the_step_size_follows_the_energy_error_and_a_wild_step_only_halves_it():
    from skgibbs.samplers.mclmc.tuning import EnergyVarianceStepSize

    d, target = 100, 1e-3
    adapt = EnergyVarianceStepSize(torch.tensor([1.0, 1.0], dtype=torch.float64), d, target)
    # energy errors with E^2 / d = 64 target at step 1: the eps^6 law asks for a step of 1/2
    e = torch.full((2,), math.sqrt(64 * d * target), dtype=torch.float64)
    for _ in range(300):
        eps = adapt.update(e * adapt.eps**3, torch.zeros(2, dtype=torch.bool))
    assert torch.allclose(eps, torch.full((2,), 0.5, dtype=torch.float64), rtol=1e-3)
    wild = torch.tensor([1e6, 0.0], dtype=torch.float64) + e * eps**3
    assert adapt.is_wild(wild).tolist() == [True, False]
    before = adapt.avg.clone()
    eps = adapt.update(wild, torch.zeros(2, dtype=torch.bool))
    assert float(eps[0]) == pytest.approx(0.25) and float(eps[1]) == pytest.approx(0.5, rel=1e-3)
    assert float(adapt.avg[0]) == pytest.approx(float(before[0]) * adapt.decay)  # left out of the average


def test_auto_steps_per_transition_are_half_the_decoherence_length():
    target = _gaussian(torch.tensor([0.5, 1.0, 2.0, 1.5], dtype=torch.float64))
    res = run_chains(target, torch.zeros(2, 4, dtype=torch.float64), [0, 1], MCLMC(), n_samples=20, burn_in=30)
    ratio = float(np.median(res.decoherence_length / res.step_size))
    assert res.steps_per_transition.tolist() == [min(max(round(ratio / 2), 1), 32)] * 2


def test_the_kernel_modules_import_only_downward():
    """integrator, kernel, adjusted and tuning import no driver, sampler object, criteria or estimator,
    and no private name of another module."""
    import ast
    from pathlib import Path

    import skgibbs.samplers.mclmc as package

    folder = Path(package.__file__).parent
    upward = {"sampler", "runner", "base", "_hmc_chains", "_langevin_chains", "_rj_chains", "_rjhmc_chains",
              "_vi_sampler", "criteria", "regressor", "classifier", "sparse", "_base", "_dense", "problem"}
    for name in ("integrator", "kernel", "adjusted", "tuning"):
        tree = ast.parse((folder / f"{name}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level > 0:
                parts = set((node.module or "").split("."))
                assert not parts & upward, (name, node.module)
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private, (name, node.module, private)
