"""Reversible-jump kernel: exact model probabilities on an enumerable model, and its mechanics."""

import math

import numpy as np
import pytest
import torch

from skgibbs.potential import LinearPotential
from skgibbs.priors import MixingPrior, Prior
from skgibbs.samplers import MALA, RJMCMC, Target, run_chains
from skgibbs.samplers.rj import rjmcmc

from rj_models import SETS, data, exact_model_probabilities, log_evidence_box, log_evidence_gaussian


def _target(X, y, lam, potential=LinearPotential):
    """The linear model's posterior under the mixing prior with N(0, 1) active weights, s = 2."""
    return Target(potential(torch.as_tensor(X), torch.as_tensor(y)), MixingPrior(Prior(std=1.0), 2.0), lam)


def _sampled_model_frequencies(X, y, c, prior, n_chains=8, n_samples=12000, seed=0):
    target = Target(LinearPotential(torch.as_tensor(X), torch.as_tensor(y)), prior, c * len(y))
    theta0 = torch.full((n_chains, 3), 0.1, dtype=torch.float64)
    seeds = list(range(seed, seed + n_chains))
    res = run_chains(target, theta0, seeds, RJMCMC(step_size=0.01), n_samples=n_samples, burn_in=500)
    active = res.samples != 0  # (K, S, 3)
    per_chain = np.stack([[np.all(a == np.array(act, bool), -1).mean() for act in SETS] for a in active])
    return per_chain, res


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
    per_chain, res = _sampled_model_frequencies(X, y, c, MixingPrior(base, s))
    freq = per_chain.mean(0)
    # Monte Carlo error from the spread between the independent chains (autocorrelation included)
    se = per_chain.std(0, ddof=1) / math.sqrt(len(per_chain))
    assert np.all(np.abs(freq - exact) < 4 * se + 2e-3), (freq, exact, se)
    tv = 0.5 * np.abs(freq - exact).sum()
    assert tv < 0.5 * (4 * se + 2e-3).sum()
    # every kind of move is tried and accepted
    assert np.all(res.move_acceptance > 0.02)


def test_within_model_moves_match_the_posterior_of_a_fixed_active_set():
    X, y = data()
    c = 1 / (2 * 0.25)
    act = np.array([True, False, True])
    A = np.c_[X, np.ones(len(y))][:, act]
    P = 2 * c * A.T @ A + np.eye(2)  # N(0, 1) prior on the active coordinates
    cov = np.linalg.inv(P)
    mean = cov @ (2 * c * A.T @ y)
    target = _target(X, y, c * len(y))
    K = 8
    theta = torch.zeros(K, 3, dtype=torch.float64)
    theta[:, act] = 0.1
    gens = [torch.Generator().manual_seed(k) for k in range(K)]
    state = rjmcmc.init(gens, target, theta)
    h = torch.full((K,), 0.2 * float(np.min(np.diag(cov))), dtype=torch.float64)
    params = rjmcmc.RJParams(h, torch.sqrt(2 * h), (0.0, 1.0, 0.0))
    draws = []
    for i in range(6000):
        state, info = rjmcmc.step(gens, state, target, params)
        assert bool((info.move == 0).all())
        if i >= 500:
            draws.append(state.theta.numpy().copy())
    D = np.array(draws)  # (S, K, 3)
    assert np.all(D[..., 1] == 0.0)  # the inactive coordinate stays an exact zero
    chain_means = D[..., act].mean(0)  # (K, 2)
    se = chain_means.std(0, ddof=1) / math.sqrt(K)
    assert np.all(np.abs(chain_means.mean(0) - mean) < 4 * se + 1e-3)
    pooled = D[..., act].reshape(-1, 2)
    assert np.allclose(
        np.cov(pooled.T), cov, rtol=0.15, atol=0.1 * np.sqrt(np.outer(np.diag(cov), np.diag(cov))).max()
    )


def test_birth_weights_are_squared_gradient_ranks_with_ties():
    grad = torch.tensor([[0.5, -2.0, 0.1, 0.5, 3.0]])
    active = torch.tensor([[False, False, False, False, True]])
    w = rjmcmc.birth_weights(grad, active)
    # inactive |grad| = 0.5, 2.0, 0.1, 0.5: ranks (count <=) 3, 4, 1, 3
    assert w.tolist() == [[9.0, 16.0, 1.0, 9.0, 0.0]]
    d = rjmcmc.death_weights(torch.tensor([[0.0, 1.0, -2.0]]), torch.tensor([[False, True, True]]))
    assert torch.allclose(d, torch.tensor([[0.0, math.exp(-1.0), math.exp(-2.0)]]))


def test_boundary_moves_and_one_gradient_per_step():
    X, y = data()
    calls = {"n": 0}

    class Counting(LinearPotential):
        def loss_sum_and_grad(self, theta, batch):
            calls["n"] += 1
            return super().loss_sum_and_grad(theta, batch)

    # c = lambda / n = 2
    target = _target(X, y, 2.0 * len(y), Counting)
    theta = torch.tensor([[0.3, 0.0, 0.0], [0.1, -0.2, 0.3]], dtype=torch.float64)
    gens = [torch.Generator().manual_seed(k) for k in range(2)]
    state = rjmcmc.init(gens, target, theta)
    h = torch.full((2,), 1e-3, dtype=torch.float64)
    params = rjmcmc.RJParams(h, torch.sqrt(2 * h))
    assert params.moves == rjmcmc.MOVES
    calls["n"] = 0
    moves = []
    for _ in range(300):
        k_before = state.active.sum(1)
        state, info = rjmcmc.step(gens, state, target, params)
        moves.append(info.move)
        assert not bool(((k_before == 1) & (info.move < 0)).any())  # |act| = 1: no death
        assert not bool(((k_before == 3) & (info.move > 0)).any())  # |act| = Q: no birth
        assert torch.equal(state.active, state.theta != 0)
        assert bool((state.active.sum(1) >= 1).all())
    assert calls["n"] == 300
    moves = torch.stack(moves)
    assert set(moves.unique().tolist()) == {-1, 0, 1}


def test_same_seeds_same_draws_and_non_finite_proposals_are_rejected():
    X, y = data()
    target = _target(X, y, 24.0)
    theta0 = torch.full((2, 3), 0.1, dtype=torch.float64)
    a = run_chains(target, theta0, [1, 2], RJMCMC(step_size=0.01), n_samples=50, burn_in=50).samples
    b = run_chains(target, theta0, [1, 2], RJMCMC(step_size=0.01), n_samples=50, burn_in=50).samples
    assert np.array_equal(a, b)
    # a step so large that the proposal overflows is rejected, never propagated
    gens = [torch.Generator().manual_seed(0) for _ in range(2)]
    state = rjmcmc.init(gens, target, theta0)
    h = torch.full((2,), 1e300, dtype=torch.float64)
    new, info = rjmcmc.step(gens, state, target, rjmcmc.RJParams(h, torch.sqrt(h)))
    assert not bool(info.is_accepted.any()) and torch.equal(new.theta, state.theta)


def test_mixing_prior_density_and_checks():
    prior = MixingPrior(Prior(std=torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64)), 3.0)
    theta = torch.tensor([[0.5, 0.0, -1.0]], dtype=torch.float64)
    norm = lambda x, s: -0.5 * (x / s) ** 2 - math.log(s) - 0.5 * math.log(2 * math.pi)  # noqa: E731
    expected = -2 * math.log(3.0) - math.log(math.comb(3, 2)) + norm(0.5, 1.0) + norm(-1.0, 0.5)
    assert float(prior.log_density(theta)) == pytest.approx(expected)
    box = MixingPrior(Prior(bound=2.0), 2.0)
    assert float(box.log_density(theta)) == pytest.approx(-2 * math.log(2) - math.log(3) - 2 * math.log(4.0))
    assert float(box.log_density(torch.tensor([[3.0, 0.0, 0.0]]))) == -math.inf
    assert float(prior.log_density(torch.zeros(1, 3))) == -math.inf  # |act| >= 1
    # the normalising constants of the active coordinates, cached while the sets are fixed: the same floats
    active = theta != 0
    cached = prior.active_norm(active, theta)
    assert float(cached[0]) == pytest.approx(math.log(1.0) + math.log(0.5) + math.log(2 * math.pi))
    assert torch.equal(prior.coordinate_part(theta, active, cached), prior.coordinate_part(theta, active))
    assert box.active_norm(active, theta) is None  # one constant for all: size_part holds it
    assert MixingPrior(Prior(std=2.0), 2.0).active_norm(active, theta) is None
    with pytest.raises(ValueError, match="proper density"):
        MixingPrior(Prior(), 2.0).check()
    with pytest.raises(ValueError, match="sparsity must be >= 2"):
        MixingPrior(Prior(std=1.0), 1.5).check()


def test_runner_pairs_rjmcmc_with_the_mixing_prior_only():
    X, y = data()
    pot = LinearPotential(torch.as_tensor(X), torch.as_tensor(y))
    theta0 = torch.full((1, 3), 0.1, dtype=torch.float64)
    run = dict(n_samples=2, burn_in=0)
    with pytest.raises(ValueError, match="MixingPrior"):
        run_chains(Target(pot, Prior(std=1.0)), theta0, [0], RJMCMC(), **run)
    with pytest.raises(ValueError, match="MixingPrior"):
        run_chains(Target(pot, MixingPrior(Prior(std=1.0))), theta0, [0], MALA(), **run)
    zeros = torch.zeros(1, 3, dtype=torch.float64)
    with pytest.raises(ValueError, match="at least one non-zero"):
        run_chains(Target(pot, MixingPrior(Prior(std=1.0))), zeros, [0], RJMCMC(), **run)
    # the kernel itself refuses a dense prior too
    with pytest.raises(TypeError, match="MixingPrior"):
        rjmcmc.init([torch.Generator()], Target(pot, Prior(std=1.0)), theta0)


def test_chains_one_by_one_or_in_workers_give_the_batched_draws():
    X, y = data()
    target = _target(X, y, 24.0)
    theta0 = torch.full((2, 3), 0.1, dtype=torch.float64)
    run = dict(n_samples=30, burn_in=30)
    batched = run_chains(target, theta0, [1, 2], RJMCMC(step_size=0.01), **run)
    workers = run_chains(target, theta0, [1, 2], RJMCMC(step_size=0.01), **run, vectorize=False, n_jobs=2)
    assert np.allclose(batched.samples, workers.samples, atol=1e-10)
    assert np.array_equal(batched.samples != 0, workers.samples != 0)
    assert workers.move_acceptance.shape == (2, 3)
    # the reversible-jump summary, and nothing of the other kernels
    assert set(workers.info) == {"step_size", "proposal_std", "move_acceptance"}
    assert not hasattr(workers, "n_restarts") and not hasattr(workers, "correction")


def test_host_draws_follow_the_reference_weights_with_ties():
    """The vectorised host draws: every row at once, each with the reference weights (ties, a row
    whose active coordinates sit between inactive ones), and the log weight of what they drew."""
    grad = torch.tensor([[0.5, -2.0, 0.0, 0.5, 3.0, 0.0, 0.0, 1.0]])
    active = torch.tensor([[False, False, False, False, True, False, False, True]])
    theta = torch.tensor([[0.0, 0.0, 0.0, 0.0, -0.3, 0.0, 0.0, 1.2]])
    n = 20000
    u = np.random.default_rng(0).random(n)
    g, act, th = (np.repeat(t.numpy(), n, 0) for t in (grad, active, theta))
    birth_ref = rjmcmc.birth_weights(grad, active)[0]
    death_ref = rjmcmc.death_weights(theta, active)[0]
    assert np.array_equal(rjmcmc.birth_weights_host(g[:1], act[:1])[0], birth_ref.double().numpy())
    born, log_b = rjmcmc.pick_birth_host(g, act, u)
    died, log_d = rjmcmc.pick_host(rjmcmc.death_weights_host(th, act), u, rjmcmc._last_active(act))
    for (index, log_w), ref, log_weight in [
        ((born, log_b), birth_ref, lambda i: rjmcmc.log_birth_host(g[:1], act[:1], np.array([i]))[0]),
        (
            (died, log_d),
            death_ref,
            lambda i: rjmcmc.log_weight_host(rjmcmc.death_weights_host(th[:1], act[:1]), np.array([i]))[0],
        ),
    ]:
        probs = (ref / ref.sum()).double().numpy()
        assert np.allclose(log_w, np.log(probs[index]), rtol=1e-6)
        freq = np.bincount(index, minlength=8) / n
        assert np.all(np.abs(freq - probs) < 4 * np.sqrt(probs * (1 - probs) / n) + 1e-12)
        for i in np.flatnonzero(probs):
            assert log_weight(i) == pytest.approx(np.log(probs[i]), rel=1e-6)


def test_host_weights_of_many_rows_are_those_of_each_row_alone():
    """No loop over the chains, and no row leaks into another: the weights and draws of a batch of
    rows are those of each row on its own, rows with ties, NaN and infinite slopes included."""
    gen = torch.Generator().manual_seed(5)
    grad = torch.randn(6, 30, generator=gen, dtype=torch.float64)
    grad[0, :5] = 0.0  # dead units: exact zeros tie
    grad[1, 2], grad[2, 4] = math.nan, math.inf
    active = torch.rand(6, 30, generator=gen) < 0.3
    active[:, 0] = True
    g, act = grad.numpy(), active.numpy()
    u = np.linspace(0.05, 0.95, 6)
    batch = rjmcmc.pick_birth_host(g, act, u)
    for k in range(6):
        alone = rjmcmc.pick_birth_host(g[k : k + 1], act[k : k + 1], u[k : k + 1])
        assert batch[0][k] == alone[0][0] and batch[1][k] == alone[1][0]
        assert not act[k, batch[0][k]]  # a birth adds an inactive coordinate
        assert np.array_equal(
            rjmcmc.birth_weights_host(g[k : k + 1], act[k : k + 1])[0],
            rjmcmc.birth_weights(grad[k : k + 1], active[k : k + 1])[0].numpy(),
        )
    w = rjmcmc.death_weights_host(g, act)
    index, _ = rjmcmc.pick_host(w, np.full(6, 1.0 - 1e-17), rjmcmc._last_active(act))
    assert act[np.arange(6), index].all()  # a death removes an active coordinate, even at u near 1
