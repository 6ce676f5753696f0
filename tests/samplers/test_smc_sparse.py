"""Tempered SMC over sparse networks: exact model probabilities and evidence, two unequal modes, mechanics.

The ground truth is the linear model of ``rj_models`` (two inputs and a bias,
seven active sets, each model's evidence in closed form). Tolerances are
Monte Carlo errors: the standard error of the mean over independent runs
(every run carries its own population from its own seeds).
"""

import math

import numpy as np
import pytest
import torch
from rj_models import SETS, data, exact_model_probabilities, log_evidence_gaussian

from skgibbs.potential import LinearPotential
from skgibbs.priors import MixingPrior, Prior
from skgibbs.samplers import SMC, RunSettings, Target
from skgibbs.samplers.smc import sparse

C, S = 1 / (2 * 0.25), 2.0  # lambda / n and the sparsity of the mixing prior


def _target(X, y, prior=None):
    prior = MixingPrior(Prior(std=1.0), S) if prior is None else prior
    return Target(LinearPotential(torch.as_tensor(X), torch.as_tensor(y)), prior, C * len(y))


def _evidence(A, y, c):
    return log_evidence_gaussian(A, y, c, 1.0)


def _exact_log_evidence(X, y):
    """``log sum_I Pi(I) Z_I``: the normalised mixing prior's model probabilities times each evidence."""
    A = np.c_[X, np.ones(len(y))]
    C_s = sum(S**-k for k in range(1, 4))
    logs = [
        -sum(act) * math.log(S)
        - math.log(math.comb(3, sum(act)) * C_s)
        + _evidence(A[:, np.array(act, bool)], y, C)
        for act in SETS
    ]
    return float(np.logaddexp.reduce(logs))


def _runs(target, n_runs, n_particles, **settings):
    """Active-set frequencies ``(n_runs, 7)`` and log evidences ``(n_runs,)`` of independent runs."""
    freqs, log_z = [], []
    for r in range(n_runs):
        res = SMC(n_particles=n_particles, n_jumps=1, **settings).sample(
            target, torch.zeros(1, 3, dtype=torch.float64), [100 * r + k for k in range(4)], RunSettings()
        )
        active = res.samples[0] != 0
        freqs.append([np.all(active == np.array(act, bool), -1).mean() for act in SETS])
        log_z.append(res.log_evidence)
    return np.array(freqs), np.array(log_z)


@pytest.fixture(scope="module")
def linear_runs():
    X, y = data()
    return X, y, _runs(_target(X, y), n_runs=10, n_particles=256)


def test_active_set_frequencies_match_exact_model_probabilities(linear_runs):
    X, y, (freqs, _) = linear_runs
    exact = exact_model_probabilities(X, y, C, S, _evidence)
    assert exact.min() > 0.02 and exact.max() < 0.4  # every model matters
    mean, se = freqs.mean(0), freqs.std(0, ddof=1) / math.sqrt(len(freqs))
    assert np.all(np.abs(mean - exact) < 4 * se), (mean, exact, se)
    # the errors are Monte Carlo errors: within a run, about a binomial error of the particles
    assert np.all(freqs.std(0, ddof=1) < 3 * np.sqrt(exact * (1 - exact) / 256))


def test_log_evidence_matches_the_exact_sum_over_models(linear_runs):
    X, y, (_, log_z) = linear_runs
    exact = _exact_log_evidence(X, y)
    se = log_z.std(ddof=1) / math.sqrt(len(log_z))
    assert abs(log_z.mean() - exact) < 4 * se, (log_z.mean(), exact, se)
    assert se < 0.05  # a precise estimate, not a wide tolerance


def _two_inputs(seed=2, n=20):
    """Two noisy copies of one signal: y is explained by either input (unequal masses) or by both."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    X = np.c_[z + 0.15 * rng.normal(size=n), z + 0.15 * rng.normal(size=n)]
    return X, 0.6 * z + 0.5 * rng.normal(size=n)


def test_two_unequal_modes_of_active_sets_carry_their_exact_masses():
    X, y = _two_inputs()
    exact = exact_model_probabilities(X, y, C, S, _evidence)
    first = np.array([a[0] == 1 and a[1] == 0 for a in SETS])  # x1 without x2, and the reverse
    second = np.array([a[0] == 0 and a[1] == 1 for a in SETS])
    masses = np.array([exact[first].sum(), exact[second].sum()])
    assert 0.5 < masses[0] < 0.7 and 0.15 < masses[1] < 0.3  # two modes, one about three times the other
    freqs, _ = _runs(_target(X, y), n_runs=8, n_particles=256)
    per_run = np.stack([freqs[:, first].sum(1), freqs[:, second].sum(1)], 1)
    mean, se = per_run.mean(0), per_run.std(0, ddof=1) / math.sqrt(len(per_run))
    assert np.all(np.abs(mean - masses) < 4 * se), (mean, masses, se)
    assert np.all(per_run[:, 1] > 0.1)  # every run holds the smaller mode


def test_small_runs_pooled_by_their_evidence_carry_the_exact_mode_masses():
    """``monte_carlo_error(weights="evidence")``: ``Z_r`` times a run's particle average is unbiased for
    the unnormalised integral, so the runs pooled by their evidence estimate the posterior masses, and the
    ratio estimator's error covers the exact masses."""
    from types import SimpleNamespace

    from skgibbs.estimators.sparse import evidence_weights, monte_carlo_error

    X, y = _two_inputs()
    exact = exact_model_probabilities(X, y, C, S, _evidence)
    first = np.array([a[0] == 1 and a[1] == 0 for a in SETS])
    second = np.array([a[0] == 0 and a[1] == 1 for a in SETS])
    masses = np.array([exact[first].sum(), exact[second].sum()])
    freqs, log_z = _runs(_target(X, y), n_runs=16, n_particles=32)
    fits = [
        SimpleNamespace(log_evidence_=z, masses_=np.array([f[first].sum(), f[second].sum()]))
        for f, z in zip(freqs, log_z)
    ]
    mean, se = monte_carlo_error(fits, "masses_", weights="evidence")
    assert np.all(np.abs(mean - masses) < 4 * se), (mean, masses, se)
    assert np.all(se < 0.05)  # sixteen runs of 32 particles: a precise pooled estimate
    w, runs = evidence_weights(fits)
    np.testing.assert_allclose(mean, w @ np.stack([f.masses_ for f in fits]))
    assert 8 < runs <= 16  # runs of one posterior: their evidences agree, no run dominates


def test_evidence_weights_need_the_evidence_of_every_fit():
    from types import SimpleNamespace

    from skgibbs.estimators.sparse import monte_carlo_error

    fits = [SimpleNamespace(log_evidence_=v, feature_inclusion_=np.ones(2)) for v in (-1.0, np.nan)]
    with pytest.raises(ValueError, match="sampler='smc'"):
        monte_carlo_error(fits, weights="evidence")
    with pytest.raises(ValueError, match="weights must be None or 'evidence'"):
        monte_carlo_error(fits, weights="uniform")
    # one run 20 nats above the other carries the estimate: no error can be told from one run
    fits = [SimpleNamespace(log_evidence_=v, feature_inclusion_=np.array([m])) for v, m in ((-1.0, 0.2), (-21.0, 0.4))]
    mean, se = monte_carlo_error(fits, weights="evidence")
    assert mean[0] == pytest.approx(0.2) and np.isnan(se[0])


def test_initial_particles_are_exact_mixing_prior_draws():
    Q, s, K = 6, 3.0, 6000
    prior = MixingPrior(Prior(std=2.0), s)
    gens = [torch.Generator().manual_seed(k) for k in range(K)]
    theta = prior.sample(gens, Q, torch.empty(0, dtype=torch.float64))
    active = theta != 0
    sizes = active.sum(1).numpy()
    p = np.array([s**-k for k in range(1, Q + 1)])
    p /= p.sum()
    freq = np.array([(sizes == k).mean() for k in range(1, Q + 1)])
    assert np.all(np.abs(freq - p) < 4 * np.sqrt(p * (1 - p) / K) + 1e-12)
    # given its size, the set is uniform: every coordinate equally often
    share = active[torch.as_tensor(sizes == 2)].double().mean(0).numpy()
    assert np.all(np.abs(share - 2 / Q) < 4 * math.sqrt((2 / Q) * (1 - 2 / Q) / (sizes == 2).sum()))
    values = theta[active].numpy()
    assert abs(values.std() - 2.0) < 0.1 and abs(values.mean()) < 0.1
    # the uniform density on [-B, B]: within the box, and the same generators give the same draws
    box = MixingPrior(Prior(bound=0.5), s).sample(gens[:50], Q, torch.empty(0, dtype=torch.float64))
    assert box.abs().max() <= 0.5 and bool((box != 0).any(1).all())
    again = prior.sample([torch.Generator().manual_seed(k) for k in range(5)], Q, torch.empty(0))
    assert torch.equal(
        again, prior.sample([torch.Generator().manual_seed(k) for k in range(5)], Q, torch.empty(0))
    )


def test_stages_move_until_the_particles_decorrelate_within_their_bounds():
    X, y = data()
    target = _target(X, y)
    theta0 = torch.zeros(1, 3, dtype=torch.float64)
    res = SMC(n_particles=64, n_mcmc_steps=2, max_mcmc_steps=12, decorrelation=0.2).sample(
        target, theta0, [0, 1], RunSettings()
    )
    path = res.temperature_path
    steps, remembered = path["n_mcmc_steps"][1:], path["decorrelation"][1:]
    assert np.all((steps >= 2) & (steps <= 12))
    # a stage stops early only once the copies of its resampled particles have come apart
    assert np.all(remembered[steps < 12] < 0.2)
    assert np.all((path["active_fraction"][1:] > 0) & (path["active_fraction"][1:] <= 1))
    assert np.all(np.isfinite(path["birth_acceptance"][1:]))
    # the first stage is capped at beta = 1 / (lambda mean R_n) and beta at most doubles a stage
    beta = path["beta"]
    assert np.all(beta[2:] <= 2 * beta[1:-1] + 1e-12) and beta[-1] == 1.0
    # a fixed number of transitions: max_mcmc_steps=None
    fixed = SMC(n_particles=32, n_mcmc_steps=3, max_mcmc_steps=None).sample(
        target, theta0, [0], RunSettings()
    )
    assert np.all(fixed.temperature_path["n_mcmc_steps"][1:] == 3)
    # the draws are exact zeros off their active sets, and the same seeds give the same draws
    again = SMC(n_particles=32, n_mcmc_steps=3, max_mcmc_steps=None).sample(
        target, theta0, [0], RunSettings()
    )
    np.testing.assert_array_equal(fixed.samples, again.samples)
    assert fixed.samples.shape == (1, 32, 3)


def test_family_resemblance_and_the_active_variance_metric():
    from skgibbs.samplers.rj.rjhmc import RJHMCState

    def particles(data, active):
        return RJHMCState(None, None, None, torch.tensor(active), torch.tensor(data, dtype=torch.float64))

    ancestors = torch.tensor([0, 0, 0, 3, 3, 5])  # two families of copies and one lone particle
    copies = particles([1.0, 1.0, 1.0, 4.0, 4.0, 2.0], [[1, 0]] * 3 + [[0, 1]] * 2 + [[1, 1]])
    assert sparse.family_resemblance(ancestors, copies) == 1.0
    # the copies as different as the population: nothing left to separate
    mixed = particles([1.0, 4.0, 2.0, 1.0, 4.0, 2.0], [[1, 0], [0, 1], [1, 1], [1, 0], [0, 1], [1, 1]])
    assert sparse.family_resemblance(ancestors, mixed) < 0.1
    # the data terms separated, the active sets not yet: the larger resemblance counts
    half = particles([1.0, 4.0, 2.0, 1.0, 4.0, 2.0], [[1, 0]] * 3 + [[0, 1]] * 2 + [[1, 1]])
    assert sparse.family_resemblance(ancestors, half) == 1.0
    assert sparse.family_resemblance(torch.arange(6), copies) == 0.0  # no copies: nothing to separate
    theta = torch.tensor([[1.0, 0.0, 0.0], [3.0, 0.0, 0.0], [2.0, 5.0, 0.0]], dtype=torch.float64)
    ref = torch.full((3,), 4.0, dtype=torch.float64)
    var = sparse.active_variance(theta, theta != 0, ref, min_active=2)
    assert var.tolist() == pytest.approx([2 / 3, 4.0, 4.0])  # too few active particles: the prior's


def test_settings_are_checked_and_a_dense_sampler_refuses_the_mixing_prior():
    X, y = data()
    target = _target(X, y)
    theta0 = torch.zeros(1, 3, dtype=torch.float64)
    for bad, match in [
        ({"n_jumps": 0}, "n_jumps"),
        ({"max_mcmc_steps": 0}, "max_mcmc_steps"),
        ({"decorrelation": 1.5}, "decorrelation"),
        ({"max_beta_growth": 1.0}, "max_beta_growth"),
    ]:
        with pytest.raises(ValueError, match=match):
            SMC(**bad).sample(target, theta0, [0], RunSettings())
    improper = _target(X, y, MixingPrior(Prior(), S))
    with pytest.raises(ValueError, match="proper density"):
        SMC().sample(improper, theta0, [0], RunSettings())
    from skgibbs.samplers import HMC

    with pytest.raises(ValueError, match="'smc'"):  # the message lists the samplers of sparse networks
        HMC().check(target.prior, 1.0)


def test_the_bridge_from_the_reference_to_the_mixing_prior_is_normalised_and_drawn_exactly():
    Q, s, r = 5, 2.0, 0.3
    prior = MixingPrior(Prior(std=1.0), s, reference=r)
    k = torch.arange(1, Q + 1)
    n_sets = torch.tensor([math.comb(Q, int(i)) for i in k], dtype=torch.float64)
    log_pi0 = k * math.log(r) + (Q - k) * math.log(1 - r) - math.log(1 - (1 - r) ** Q)
    # Pi_0 sums to one over the non-empty sets, and so does Pi = Pi_0 exp(log ratio)
    assert float((n_sets * torch.exp(log_pi0)).sum()) == pytest.approx(1.0)
    log_pi = log_pi0 + prior.reference_log_ratio(k, Q)
    assert float((n_sets * torch.exp(log_pi)).sum()) == pytest.approx(1.0)
    expected = torch.tensor([s**-i for i in range(1, Q + 1)], dtype=torch.float64)
    assert torch.allclose(n_sets * torch.exp(log_pi), expected / expected.sum())
    # at power = beta the sizes follow Pi^beta Pi_0^(1 - beta), normalised, and the draws are exact
    beta, K = 0.4, 8000
    bridge = prior._replace(power=beta)
    p = n_sets * torch.exp(beta * log_pi + (1 - beta) * log_pi0)
    p = (p / p.sum()).numpy()
    gens = [torch.Generator().manual_seed(i) for i in range(K)]
    sizes = (bridge.sample(gens, Q, torch.empty(0, dtype=torch.float64)) != 0).sum(1).numpy()
    freq = np.array([(sizes == i).mean() for i in range(1, Q + 1)])
    assert np.all(np.abs(freq - p) < 4 * np.sqrt(p * (1 - p) / K))
    # the kernels' size terms: log_size_step is the difference of log_size_weight at every power
    for power in (0.0, beta, 1.0):
        b = prior._replace(power=power)
        w = b.log_size_weight(list(range(1, Q + 1)), Q)
        np.testing.assert_allclose(b.log_size_step(np.arange(1, Q), Q), np.diff(w))
    with pytest.raises(ValueError, match="power"):
        prior._replace(power=1.5).check()


def test_auto_jumps_propose_one_birth_or_death_per_eight_parameters_within_bounds(monkeypatch):
    """``n_jumps="auto"``: ``ceil(Q / 8)`` proposals per transition within ``[8, 32]``; an int is taken as given."""
    assert [SMC()._n_jumps(q) for q in (3, 64, 65, 241, 256, 257, 961)] == [8, 8, 9, 31, 32, 32, 32]
    assert SMC(n_jumps=2)._n_jumps(961) == 2
    X, y = data()
    seen = []
    real = sparse.move

    def spy(*args):
        seen.append(args[-1])
        return real(*args)

    monkeypatch.setattr(sparse, "move", spy)
    SMC(n_particles=16, n_mcmc_steps=1, max_mcmc_steps=None).sample(
        _target(X, y), torch.zeros(1, 3, dtype=torch.float64), [0], RunSettings()
    )
    assert seen and set(seen) == {8}
    with pytest.raises(ValueError, match=r"'n_jumps' parameter of SMC must be .*'auto'"):
        SMC(n_jumps="many").sample(_target(X, y), torch.zeros(1, 3, dtype=torch.float64), [0], RunSettings())


def test_remaining_cost_extrapolates_the_recent_stages_and_the_path_records_their_seconds(capsys):
    """``remaining_cost``: ``-log beta`` over the recent mean ``log beta`` step (at most ``log`` of the
    growth cap) stages, each at the recent mean time; a run's path records the seconds of every stage,
    and its verbose progress prints the estimate."""
    from skgibbs.samplers.smc import remaining_cost

    path = {"beta": [0.0, 1e-3], "seconds": [0.1, 1.0]}
    assert remaining_cost(path) == (None, None)  # one step says nothing of the next
    path = {"beta": [0.0, 1e-3, 1e-2, 1e-1], "seconds": [0.1, 1.0, 2.0, 3.0]}
    assert remaining_cost(path) == (1, 2.0)  # steps of a factor 10 from 0.1: one more, at (1 + 2 + 3) / 3
    assert remaining_cost(path, max_growth=2.0) == (4, 8.0)  # at most doubling: 0.1 needs four more
    path = {"beta": [0.0, 1e-4, 1e-3, 1e-2, 0.1, 0.3], "seconds": [0.1, 9.0, 1.0, 1.0, 2.0, 3.0]}
    stages, seconds = remaining_cost(path)  # the last three steps: factors 10, 10, 3
    step = np.mean(np.log([10.0, 10.0, 3.0]))
    assert stages == math.ceil(-math.log(0.3) / step) and seconds == pytest.approx(stages * 2.0)
    assert remaining_cost({"beta": [0.0, 0.5, 1.0], "seconds": [0.1, 1.0, 1.0]}) == (0, 0.0)

    X, y = data()
    run = RunSettings(verbose=1)
    res = SMC(n_particles=16, n_jumps=1, n_mcmc_steps=1, max_mcmc_steps=2).sample(
        _target(X, y), torch.zeros(1, 3, dtype=torch.float64), [0], run
    )
    path = res.temperature_path
    assert len(path["seconds"]) == len(path["beta"]) and np.all(path["seconds"] > 0)
    assert remaining_cost(path) == (0, 0.0)
    assert "SMC path" in capsys.readouterr().err
