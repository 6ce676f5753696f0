"""Reversible jump with HMC moves: exact model probabilities, exact moments inside a model, mechanics."""

import math

import numpy as np
import pytest
import torch

from skgibbs.potential import LinearPotential
from skgibbs.priors import MixingPrior, Prior
from skgibbs.samplers import HMC, RJHMC, Target, hmc, run_chains
from skgibbs.samplers.rj import rjhmc

from rj_models import SETS, data, exact_model_probabilities, log_evidence_box, log_evidence_gaussian


def _target(X, y, lam, base=None, potential=LinearPotential):
    base = Prior(std=1.0) if base is None else base
    return Target(potential(torch.as_tensor(X), torch.as_tensor(y)), MixingPrior(base, 2.0), lam)


@pytest.mark.slow
@pytest.mark.parametrize(
    "base, evidence",
    [
        (Prior(std=1.0), lambda A, y, c: log_evidence_gaussian(A, y, c, 1.0)),
        (Prior(bound=1.5), lambda A, y, c: log_evidence_box(A, y, c, 1.5)),
    ],
    ids=["gaussian", "uniform-box"],
)
def test_active_set_frequencies_match_exact_model_probabilities(base, evidence):
    X, y = data()
    c, s = 1 / (2 * 0.25), 2.0
    exact = exact_model_probabilities(X, y, c, s, evidence)
    assert exact.min() > 0.004 and exact.max() < 0.5  # every model matters
    K = 8
    target = _target(X, y, c * len(y), base)
    theta0 = torch.full((K, 3), 0.1, dtype=torch.float64)
    res = run_chains(target, theta0, list(range(K)), RJHMC(n_jumps=1), n_samples=4000, burn_in=300)
    active = res.samples != 0
    per_chain = np.stack([[np.all(a == np.array(act, bool), -1).mean() for act in SETS] for a in active])
    freq = per_chain.mean(0)
    # Monte Carlo error from the spread between the independent chains (autocorrelation included)
    se = per_chain.std(0, ddof=1) / math.sqrt(K)
    assert np.all(np.abs(freq - exact) < 4 * se + 2e-3), (freq, exact, se)
    assert 0.5 * np.abs(freq - exact).sum() < 0.5 * (4 * se + 2e-3).sum()
    # deaths, HMC moves and births are all tried and accepted
    assert res.move_acceptance.shape == (K, 3) and np.all(res.move_acceptance > 0.05)
    assert res.draw_stats["n_active"].shape == (K, 4000)
    assert np.array_equal(res.draw_stats["n_active"], active.sum(-1))


def test_hmc_moves_alone_match_the_posterior_of_a_fixed_active_set():
    X, y = data()
    c = 1 / (2 * 0.25)
    act = np.array([True, False, True])
    A = np.c_[X, np.ones(len(y))][:, act]
    P = 2 * c * A.T @ A + np.eye(2)  # N(0, 1) prior on the active coordinates
    cov = np.linalg.inv(P)
    mean = cov @ (2 * c * A.T @ y)
    K = 8
    theta0 = torch.zeros(K, 3, dtype=torch.float64)
    theta0[:, act] = 0.1
    res = run_chains(
        _target(X, y, c * len(y)), theta0, list(range(K)), RJHMC(n_jumps=0), n_samples=3000, burn_in=200
    )
    D = res.samples  # (K, S, 3)
    assert np.all(D[..., 1] == 0.0)  # the inactive coordinate stays an exact zero
    assert np.isnan(res.move_acceptance[:, [0, 2]]).all()  # no jump tried
    chain_means = D[..., act].mean(1)
    se = chain_means.std(0, ddof=1) / math.sqrt(K)
    assert np.all(np.abs(chain_means.mean(0) - mean) < 4 * se + 1e-3)
    pooled = D[..., act].reshape(-1, 2)
    assert np.allclose(
        np.cov(pooled.T), cov, rtol=0.1, atol=0.05 * np.sqrt(np.outer(np.diag(cov), np.diag(cov))).max()
    )


def test_newborn_proposal_is_the_exact_conditional_of_a_linear_model():
    X, y = data()
    c = 2.0
    target = _target(X, y, c * len(y))
    theta = torch.tensor([[0.3, 0.0, -0.2]], dtype=torch.float64)
    A = np.c_[X, np.ones(len(y))]
    for i, b in [(1, theta), (0, torch.tensor([[0.0, 0.4, -0.2]], dtype=torch.float64))]:
        state = rjhmc.init(None, target, b)
        idx = torch.tensor([i])
        var = rjhmc.reference_variance(target.prior, 3, b)[idx]
        delta = rjhmc.CURVATURE_STEP * var.sqrt()
        plus = rjhmc._shifted_loss(target, b, idx, delta).numpy()
        loss = ((state.potential + target.prior.log_density(b)) / target.scale).numpy()
        slope = state.grad[0, idx].numpy()
        mean, v = rjhmc.newborn_proposal(c, slope, loss, plus, delta.numpy(), var.numpy())
        # theta_i | rest ~ N: precision 2c |a_i|^2 + 1, mean 2c a_i' r / precision, r the residual without i
        rest = b[0].numpy().copy()
        rest[i] = 0.0
        r = y - A @ rest
        prec = 2 * c * A[:, i] @ A[:, i] + 1.0
        assert v[0] == pytest.approx(1 / prec, rel=1e-8)
        assert mean[0] == pytest.approx(2 * c * A[:, i] @ r / prec, rel=1e-8)


def test_jumps_respect_the_boundaries_and_cost_one_gradient_each():
    X, y = data()
    calls = {"grad": 0, "loss": 0}

    class Counting(LinearPotential):  # counts the points evaluated, whatever the calls group them into
        def loss_sum_and_grad(self, theta, batch):
            calls["grad"] += theta.shape[0]
            return super().loss_sum_and_grad(theta, batch)

        def loss_sum(self, theta, batch):
            calls["loss"] += theta.shape[0]
            return super().loss_sum(theta, batch)

    target = _target(X, y, 2.0 * len(y), potential=Counting)
    theta = torch.tensor([[0.3, 0.0, 0.0], [0.1, -0.2, 0.3]], dtype=torch.float64)
    gens = [torch.Generator().manual_seed(k) for k in range(2)]
    state = rjhmc.init(gens, target, theta)
    kinds = set()
    for _ in range(200):
        k_before = state.active.sum(1)
        state, move, accepted = rjhmc.jump(gens, state, target)
        assert not bool(((k_before == 1) & (move < 0)).any())  # |I| = 1: no death
        assert not bool(((k_before == 3) & (move > 0)).any())  # |I| = Q: no birth
        assert torch.equal(state.active, state.theta != 0)
        kinds |= set((move * accepted).tolist())
    # the K = 2 chains' init, then per jump and chain one gradient (at tau) and one loss (the curvature)
    assert calls == {"grad": 2 + 2 * 200, "loss": 2 * 200}
    assert {-1, 1} <= kinds
    # the potential cached in the state is U at the state's point
    u, g = rjhmc.ActiveSetTarget(target, state.active).value_and_grad(state.theta)
    assert torch.allclose(u, state.potential) and torch.allclose(g, state.grad)


def test_zero_inverse_mass_freezes_a_coordinate_in_hmc():
    X, y = data()
    target = Target(LinearPotential(torch.as_tensor(X), torch.as_tensor(y)), Prior(std=1.0), 24.0)
    gens = [torch.Generator().manual_seed(0)]
    state = hmc.init(gens, target, torch.tensor([[0.1, 0.5, 0.1]], dtype=torch.float64))
    params = hmc.HMCParams(
        torch.tensor([0.05]), torch.tensor([1.0, 0.0, 1.0], dtype=torch.float64), torch.tensor([5])
    )
    for _ in range(20):
        state, info = hmc.step(gens, state, target, params)
        assert float(state.theta[0, 1]) == 0.5 and bool(torch.isfinite(info.energy_error).all())


def test_same_seeds_same_draws_whatever_the_grouping_and_what_the_summary_holds():
    X, y = data()
    target = _target(X, y, 24.0)
    theta0 = torch.full((2, 3), 0.1, dtype=torch.float64)
    run = dict(n_samples=30, burn_in=30)
    a = run_chains(target, theta0, [1, 2], RJHMC(), **run)
    b = run_chains(target, theta0, [1, 2], RJHMC(), **run)
    assert np.array_equal(a.samples, b.samples)
    workers = run_chains(target, theta0, [1, 2], RJHMC(), **run, n_jobs=2)
    assert np.allclose(a.samples, workers.samples, atol=1e-10)
    assert {"step_size", "trajectory_length", "inverse_mass", "move_acceptance", "n_divergent"} <= set(a.info)
    assert a.move_acceptance.shape == (2, 3) and a.n_grad.min() > 30 * 8  # eight jumps a transition


def test_hold_active_runs_the_first_part_of_the_warm_up_without_jumps(monkeypatch):
    X, y = data()
    target = _target(X, y, 24.0)
    theta0 = torch.tensor([[0.1, 0.0, 0.2], [0.0, 0.3, 0.0]], dtype=torch.float64)
    jumps, sets, step = [], [], rjhmc.step

    def recording(generators, state, target, params):
        jumps.append(params.n_jumps)
        sets.append(state.active.clone())
        return step(generators, state, target, params)

    monkeypatch.setattr(rjhmc, "step", recording)
    held = run_chains(target, theta0, [1, 2], RJHMC(hold_active=0.4), n_samples=6, burn_in=20)
    # floor(0.4 * 20) = 8 transitions of HMC alone, then 12 of warm-up and 6 draws with the jumps
    assert jumps == [0] * 8 + [8] * 18
    # the active sets are those of the start until the jumps begin, and move afterwards
    assert all(torch.equal(active, theta0 != 0) for active in sets[:9])
    assert any(not torch.equal(active, theta0 != 0) for active in sets[9:])
    jumps.clear()
    free = run_chains(target, theta0, [1, 2], RJHMC(), n_samples=6, burn_in=20)
    assert jumps == [8] * 26
    assert held.samples.shape == free.samples.shape == (2, 6, 3)


def test_settings_and_priors_are_checked():
    X, y = data()
    pot = LinearPotential(torch.as_tensor(X), torch.as_tensor(y))
    theta0 = torch.full((1, 3), 0.1, dtype=torch.float64)
    run = dict(n_samples=2, burn_in=0)
    with pytest.raises(ValueError, match="MixingPrior"):
        run_chains(Target(pot, Prior(std=1.0)), theta0, [0], RJHMC(), **run)
    with pytest.raises(ValueError, match="MixingPrior"):
        run_chains(Target(pot, MixingPrior(Prior(std=1.0))), theta0, [0], HMC(), **run)
    with pytest.raises(ValueError, match=r"'n_jumps' parameter of RJHMC must be an int in the range \[0,"):
        run_chains(Target(pot, MixingPrior(Prior(std=1.0))), theta0, [0], RJHMC(n_jumps=-1), **run)
    with pytest.raises(ValueError, match="trajectory_length"):
        run_chains(
            Target(pot, MixingPrior(Prior(std=1.0))), theta0, [0], RJHMC(trajectory_length="chees"), **run
        )
    for bad in (1.0, -0.1, True, "half"):
        match = r"'hold_active' parameter of RJHMC must be a float in the range \[0.0, 1.0\)"
        with pytest.raises(ValueError, match=match):
            run_chains(Target(pot, MixingPrior(Prior(std=1.0))), theta0, [0], RJHMC(hold_active=bad), **run)
    with pytest.raises(ValueError, match="at least one non-zero"):
        run_chains(
            Target(pot, MixingPrior(Prior(std=1.0))),
            torch.zeros(1, 3, dtype=torch.float64),
            [0],
            RJHMC(),
            **run,
        )
    with pytest.raises(TypeError, match="MixingPrior"):
        rjhmc.init(None, Target(pot, Prior(std=1.0)), theta0)


def test_host_birth_weights_are_those_of_rjmcmc_ties_and_non_finite_gradients_included():
    from skgibbs.samplers.rj import rjmcmc

    gen = torch.Generator().manual_seed(3)
    grad = torch.randn(5, 40, generator=gen, dtype=torch.float64)
    grad[0, :6] = grad[0, 6]  # ties share the larger rank
    grad[1, 3], grad[2, 7], grad[3, 1] = math.nan, math.inf, -math.inf
    active = torch.rand(5, 40, generator=gen) < 0.4
    active[4] = False  # a row with every coordinate inactive
    expected = rjmcmc.birth_weights(grad, active).numpy()
    got = rjmcmc.birth_weights_host(grad.numpy(), active.numpy())
    assert np.array_equal(got, expected)
    assert np.all(got[active.numpy()] == 0) and np.all(got[~active.numpy()] >= 1)
