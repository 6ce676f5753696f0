"""run_chains: adaptation, thinning, restarts, scheduling and interruption."""

import math

import joblib
import numpy as np
import pytest
import torch

from skgibbs import SamplerWarning
from skgibbs.model import MLPSpec
from skgibbs.potential import FunctionPotential, MLPPotential
from skgibbs.priors import Prior
from skgibbs.samplers import (
    CSMALA,
    HMC,
    MALA,
    SGLD,
    SMALA,
    ChainResult,
    RunSettings,
    Target,
    chain_groups,
    get_sampler,
    run_chains,
    runner,
    surrogate_constants,
)
from skgibbs.samplers.langevin import mala
from skgibbs.samplers.langevin import sgld as langevin

K = 3
SEEDS = [11, 12, 13]


def _mlp_problem(n=30):
    gen = torch.Generator().manual_seed(0)
    spec = MLPSpec(2, (4,), "tanh")
    X = torch.randn(n, 2, generator=gen, dtype=torch.float64)
    y = torch.sin(X[:, 0]) + 0.1 * torch.randn(n, generator=gen, dtype=torch.float64)
    return MLPPotential(spec, X, y), spec.init_params(gen, K)


Y = torch.linspace(-1.0, 1.0, 40, dtype=torch.float64)


class _MeanModel(FunctionPotential):
    """``l_i(theta) = (y_i - theta_1)^2`` with a record of the full-data risk evaluations."""

    def __init__(self, fail_after=None):
        super().__init__(lambda th, idx: (Y[idx] - th[:, :1]) ** 2, n_data=len(Y))
        self.risk_points, self.n_grad, self.fail_after, self.threads = [], 0, fail_after, set()

    def mean_loss(self, theta, chunk=65536):
        self.risk_points.append(theta.detach().clone())
        return super().mean_loss(theta, chunk)

    def loss_sum_and_grad(self, theta, batch):
        self.n_grad += 1
        self.threads.add(torch.get_num_threads())
        if self.fail_after is not None and self.n_grad > self.fail_after:
            raise KeyboardInterrupt
        return super().loss_sum_and_grad(theta, batch)


def _theta0_1d():
    return torch.tensor([[0.0], [0.5], [-0.5]], dtype=torch.float64)


# (sampler, rho) per kernel; every sampler object with the settings the run needs
CONFIGS = {
    "mala": (MALA(), 1.0),
    "smala": (SMALA(restart_after=None), 0.5),
    "csmala_fixed": (CSMALA(correction=0.8, restart_after=None), 0.5),
    "csmala_auto": (CSMALA(correction="auto", correction_every=20, restart_after=None), 0.5),
    # restarts redraw the batch of the stuck chains only
    "smala_restarts": (SMALA(restart_after=3), 0.5),
    "csmala_restarts": (CSMALA(correction=1.0, restart_after=3), 0.5),
    "sgld": (SGLD(step_size=1e-3), 0.5),
}

# the summary each kernel reports (and nothing else: HMC's entries are HMC's alone)
_LANGEVIN = {"step_size", "proposal_std", "correction", "lambda_prime", "accepted_batch_sizes"}
INFO = {
    "mala": _LANGEVIN,
    "smala": _LANGEVIN | {"n_restarts"},
    "csmala": _LANGEVIN | {"n_restarts"},
    "sgld": {"step_size"},
    "hmc": {"step_size", "trajectory_length", "inverse_mass", "n_divergent"},
}


def _assert_same_info(a, b, rtol):
    """The kernels' summaries of two runs agree entry by entry."""
    assert set(a.info) == set(b.info)
    for key, value in a.info.items():
        if isinstance(value, np.ndarray) and value.dtype.kind in "iub":
            np.testing.assert_array_equal(value, b.info[key], err_msg=key)
        else:
            np.testing.assert_allclose(value, b.info[key], rtol=rtol, err_msg=key)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_vectorized_and_sequential_chains_agree(name):
    # a chain's draws depend only on its own seed (runner docstring)
    pot, theta0 = _mlp_problem()
    sampler, rho = CONFIGS[name]
    target = Target(pot, Prior(std=1.0), 30.0)
    run = dict(rho=rho, n_samples=40, burn_in=100, thin=2)
    a = run_chains(target, theta0, SEEDS, sampler, **run, vectorize=True)
    b = run_chains(target, theta0, SEEDS, sampler, **run, vectorize=False)
    np.testing.assert_allclose(a.samples, b.samples, rtol=1e-8, atol=1e-10)
    assert set(a.info) == INFO[sampler.name]
    np.testing.assert_allclose(a.step_size, b.step_size, rtol=1e-8)
    if "n_restarts" in a.info:
        np.testing.assert_array_equal(a.n_restarts, b.n_restarts)
    if "correction" in a.info:
        assert math.isclose(a.correction, b.correction, rel_tol=1e-8)
    _assert_same_info(a, b, rtol=1e-8)


def test_n_jobs_gives_the_same_draws():
    pot, theta0 = _mlp_problem()
    target = Target(pot, Prior(std=1.0), 30.0)
    run = dict(rho=0.5, n_samples=20, burn_in=50)
    a = run_chains(target, theta0, SEEDS, CSMALA(correction=0.9), **run, vectorize=False, n_jobs=None)
    b = run_chains(target, theta0, SEEDS, CSMALA(correction=0.9), **run, vectorize=False, n_jobs=2)
    np.testing.assert_allclose(a.samples, b.samples, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(a.acceptance_rate, b.acceptance_rate)


def test_chain_groups():
    assert chain_groups(5, True, None) == [[0, 1, 2, 3, 4]]
    assert chain_groups(5, True, 1) == [[0, 1, 2, 3, 4]]
    assert chain_groups(5, True, -1) == [[0, 1, 2, 3, 4]]  # only a positive n_jobs splits
    assert chain_groups(5, True, 2) == [[0, 1, 2], [3, 4]]
    assert chain_groups(3, True, 8) == [[0], [1], [2]]
    assert chain_groups(3, False, 2) == [[0], [1], [2]]


GROUPED = {
    "csmala": (CSMALA(correction="auto", correction_every=20), 0.5),
    "hmc": (HMC(metric="adaptive", trajectory_length="chees"), 1.0),
}


@pytest.mark.parametrize("name", sorted(GROUPED))
def test_batched_groups_sample_what_one_batch_samples(name):
    # n_jobs splits the batched chains into groups; a chain's draws stay those of its seed.
    # HMC adapts T and the metric over all chains, so its warm-up is the same either way.
    pot, theta0 = _mlp_problem()
    sampler, rho = GROUPED[name]
    target = Target(pot, Prior(std=1.0), 30.0)
    a = run_chains(target, theta0, SEEDS, sampler, rho=rho, n_samples=30, burn_in=100, n_jobs=None)
    b = run_chains(target, theta0, SEEDS, sampler, rho=rho, n_samples=30, burn_in=100, n_jobs=2)
    np.testing.assert_allclose(a.samples, b.samples, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(a.step_size, b.step_size, rtol=1e-8)
    assert set(a.info) == INFO[sampler.name]
    _assert_same_info(a, b, rtol=1e-8)
    if name == "hmc":
        # HMC has no csMALA correction (a 0.0 filler before)
        assert "correction" not in a.info and "correction" not in b.info
        assert math.isclose(a.trajectory_length, b.trajectory_length, rel_tol=1e-8)
        np.testing.assert_allclose(a.inverse_mass, b.inverse_mass, rtol=1e-8)
        np.testing.assert_array_equal(a.draw_stats["n_steps"], b.draw_stats["n_steps"])
    else:
        assert math.isclose(a.correction, b.correction, rel_tol=1e-8)


@pytest.mark.parametrize("name", sorted(GROUPED))
def test_groups_give_identical_draws_on_any_backend(name):
    # the grouping depends on the arguments only: worker processes repeat an in-process run bit for bit
    pot, theta0 = _mlp_problem()
    pot = MLPPotential(pot.spec, pot.X.float(), pot.y.float())
    theta0 = theta0.float()
    sampler, rho = GROUPED[name]
    target = Target(pot, Prior(std=1.0), 30.0)
    run = dict(rho=rho, n_samples=20, burn_in=50, vectorize=True, n_jobs=2)
    with joblib.parallel_backend("sequential"):
        a = run_chains(target, theta0, SEEDS, sampler, **run)
    with joblib.parallel_backend("loky", n_jobs=2):
        b = run_chains(target, theta0, SEEDS, sampler, **run)
    np.testing.assert_array_equal(a.samples, b.samples)
    np.testing.assert_array_equal(a.step_size, b.step_size)


@pytest.mark.parametrize("name", ["csmala", "hmc"])
def test_a_job_accepts_chains_whose_arrays_arrive_read_only(name):
    # Ray's object store (and joblib's memory-mapping of large arrays) hands a job read-only arrays
    pot, theta0 = _mlp_problem()
    sampler = get_sampler(name)
    rho = sampler.check(Prior(std=1.0), 0.5 if sampler.uses_batches else 1.0)
    run = RunSettings(n_samples=5, burn_in=5, thin=1, rho=rho)
    target = Target(pot, Prior(std=1.0), 30.0)
    chains, states = runner._warmup_job(sampler, target, theta0, SEEDS, run, True)
    frozen = [v for v in vars(chains).values() if isinstance(v, np.ndarray)]
    assert frozen  # the check is not vacuous: the driver keeps NumPy counters
    for array in frozen:
        array.flags.writeable = False
    chains, (draws, _, kept, _, _), _ = runner._sample_job(sampler, chains, states, sampler.pool([chains]), run)
    assert kept == 5 and draws.shape[:2] == (K, 5)


def test_result_fields_are_numpy_with_documented_shapes():
    pot, theta0 = _mlp_problem()
    target = Target(pot, lambda_=30.0)
    res = run_chains(target, theta0, SEEDS, CSMALA(), rho=0.5, n_samples=15, burn_in=20)
    assert isinstance(res, ChainResult)
    assert res.samples.shape == (K, 15, theta0.shape[1])
    for field in ("acceptance_rate", "n_restarts", "step_size", "proposal_std"):
        value = getattr(res, field)
        assert isinstance(value, np.ndarray) and value.shape == (K,)
    assert isinstance(res.accepted_batch_sizes, np.ndarray)
    # one entry per accepted sampling step
    assert len(res.accepted_batch_sizes) == round(float(res.acceptance_rate.sum()) * 15)
    assert np.all((res.acceptance_rate >= 0) & (res.acceptance_rate <= 1))
    assert not res.interrupted
    full = run_chains(target, theta0, SEEDS, MALA(), n_samples=15, burn_in=20)  # the full data
    assert len(full.accepted_batch_sizes) == 0 and full.correction == 0.0


def test_thinning_keeps_every_thin_th_state():
    pot, theta0 = _mlp_problem()
    target = Target(pot, lambda_=30.0)
    thin = run_chains(target, theta0, SEEDS, MALA(), n_samples=10, thin=3, burn_in=30)
    dense = run_chains(target, theta0, SEEDS, MALA(), n_samples=30, thin=1, burn_in=30)
    assert thin.samples.shape == (K, 10, theta0.shape[1])
    np.testing.assert_array_equal(thin.samples, dense.samples[:, 2::3])


@pytest.fixture
def used_params(monkeypatch):
    """(step_size, proposal_std) of every kernel call, in order."""
    used = []
    original = mala.step

    def spy(generators, state, target, params):
        used.append((params.step_size.clone(), params.proposal_std.clone()))
        return original(generators, state, target, params)

    monkeypatch.setattr(mala, "step", spy)
    return used


def test_step_size_is_frozen_after_burn_in(used_params):
    used = used_params
    pot, theta0 = _mlp_problem()
    n_samples, thin = 12, 2
    res = run_chains(
        Target(pot, lambda_=30.0), theta0, SEEDS, MALA(step_size=1e-4), n_samples=n_samples, burn_in=60, thin=thin
    )
    sampling = used[-n_samples * thin :]
    for h, s in sampling:
        np.testing.assert_array_equal(h.numpy(), res.step_size)
        np.testing.assert_array_equal(s.numpy(), res.proposal_std)
    np.testing.assert_allclose(res.proposal_std, np.sqrt(2 * res.step_size))
    burn_in = torch.stack([h for h, _ in used[: -n_samples * thin]])
    assert len(torch.unique(burn_in[:, 0])) > 5  # the step size was adapted before
    assert not np.allclose(res.step_size, 1e-4)


def test_fixed_proposal_is_not_adapted(used_params):
    used = used_params
    pot, theta0 = _mlp_problem()
    sampler = MALA(step_size=1e-3, proposal_std=0.05)
    res = run_chains(Target(pot, lambda_=30.0), theta0, SEEDS, sampler, n_samples=5, burn_in=20)
    assert len(used) == 25  # one kernel call per transition, no step-size search
    assert all(torch.all(h == 1e-3) and torch.all(s == 0.05) for h, s in used)
    np.testing.assert_array_equal(res.step_size, 1e-3)
    np.testing.assert_array_equal(res.proposal_std, 0.05)


@pytest.mark.parametrize("restart_after, expect", [(2, True), (None, False)])
def test_restarts_are_counted(restart_after, expect):
    pot, theta0 = _mlp_problem()
    # fixed, too large proposal: long runs of rejections
    sampler = CSMALA(correction=1.0, step_size=1e-3, proposal_std=0.5, restart_after=restart_after)
    res = run_chains(Target(pot, lambda_=30.0), theta0, SEEDS, sampler, rho=0.5, n_samples=30, burn_in=0)
    assert res.acceptance_rate.max() < 0.5
    if expect:
        assert res.n_restarts.sum() > 0
    else:
        np.testing.assert_array_equal(res.n_restarts, 0)


@pytest.mark.parametrize("sampler", [SMALA, CSMALA])
def test_no_restarts_on_full_data(sampler):
    # at rho = 1 a batch kernel has nothing to redraw, however often it rejects
    pot, theta0 = _mlp_problem()
    kernel = sampler(step_size=1e-3, proposal_std=0.5, restart_after=1)
    res = run_chains(Target(pot, lambda_=30.0), theta0, SEEDS, kernel, rho=1.0, n_samples=30, burn_in=0)
    assert res.acceptance_rate.max() < 0.5
    np.testing.assert_array_equal(res.n_restarts, 0)


def test_mala_has_no_restarts_to_report():
    # MALA never reads batches: it has no restart_after and reports no n_restarts
    # (it reported a zero filler before)
    pot, theta0 = _mlp_problem()
    assert "restart_after" not in MALA().get_params()
    res = run_chains(Target(pot, lambda_=30.0), theta0, SEEDS, MALA(step_size=1e-3), n_samples=3, burn_in=0)
    assert "n_restarts" not in res.info
    with pytest.raises(AttributeError, match="n_restarts"):
        res.n_restarts


def test_keyboard_interrupt_keeps_the_draws_so_far():
    sampler = MALA(step_size=1e-3, proposal_std=0.2)
    run = dict(n_samples=50, burn_in=10)
    full = run_chains(Target(_MeanModel(), lambda_=10.0), _theta0_1d(), SEEDS, sampler, **run)
    # one gradient at the start and one per step: fail in the 26th sampling step
    pot = _MeanModel(fail_after=1 + run["burn_in"] + 25)
    with pytest.warns(SamplerWarning, match="interrupted") as record:
        res = run_chains(Target(pot, lambda_=10.0), _theta0_1d(), SEEDS, sampler, **run)
    assert res.interrupted
    kept = res.samples.shape[1]
    assert [w.message.n_kept for w in record if "interrupted" in str(w.message)] == [kept]
    assert 0 < kept < run["n_samples"]
    np.testing.assert_array_equal(res.samples, full.samples[:, :kept])
    assert np.isfinite(res.samples).all() and np.all((res.acceptance_rate >= 0) & (res.acceptance_rate <= 1))


def test_keyboard_interrupt_before_any_draw_propagates():
    # interrupted in the first sampling step (after the one gradient at the start):
    # nothing kept to return, so the interrupt reaches the caller
    pot = _MeanModel(fail_after=1)
    with pytest.raises(KeyboardInterrupt):
        run_chains(Target(pot, lambda_=10.0), _theta0_1d(), SEEDS, MALA(proposal_std=0.2), n_samples=5, burn_in=0)


@pytest.mark.parametrize("vectorize", [True, False])
def test_auto_correction_centres_at_the_pooled_risk(vectorize):
    # paper 000 §5: zeta log rho = -lambda' Rbar / n with Rbar the full-data risk
    # averaged over the chains at the end of burn-in
    pot = _MeanModel()
    lam, rho = 20.0, 0.3
    theta0 = torch.tensor([[0.0], [1.5], [-2.0]], dtype=torch.float64)
    sampler = CSMALA(correction="auto", correction_every=10, step_size=1e-3, proposal_std=0.05)
    res = run_chains(
        Target(pot, lambda_=lam), theta0, SEEDS, sampler, rho=rho, n_samples=5, burn_in=40, vectorize=vectorize
    )
    # each chain group evaluates the risk the same number of times, the
    # last time at the end of its burn-in
    calls = pot.risk_points
    per_group = len(calls) // (1 if vectorize else K)
    points = torch.cat(calls[per_group - 1 :: per_group])[:, 0].numpy()
    assert len(points) == K
    pooled = np.mean([np.mean((Y.numpy() - t) ** 2) for t in points])
    zeta = res.correction
    _, d, lam_eff = surrogate_constants("csmala", lam, len(Y), rho, zeta)
    assert zeta > 0
    assert abs(lam_eff * pooled / len(Y) + d) < 1e-8
    assert math.isclose(res.lambda_prime, lam_eff, rel_tol=1e-10)
    # chains started apart: the pooled risk is not any single chain's risk
    assert len(np.unique(np.round(points, 6))) == K


def test_fixed_correction_is_kept():
    pot = _MeanModel()
    res = run_chains(
        Target(pot, lambda_=20.0), _theta0_1d(), SEEDS, CSMALA(correction=0.4), rho=0.3, n_samples=5, burn_in=5
    )
    assert res.correction == 0.4
    assert math.isclose(res.lambda_prime, surrogate_constants("csmala", 20.0, 40, 0.3, 0.4)[2])
    assert pot.risk_points == []  # no full-data pass needed for a fixed zeta


def test_sgld_runner_follows_the_sgld_recursion_without_acceptance():
    # SGLD has no Metropolis-Hastings step: no acceptance rate at all (a constant 1 before,
    # which held whatever the kernel did), a step size that is never adapted, and draws that
    # are the SGLD recursion itself, replayed here from the chains' seeds
    lam, rho, h, burn_in, n_samples, thin = 20.0, 0.5, 1e-3, 10, 20, 2
    target = Target(_MeanModel(), lambda_=lam)
    run = dict(rho=rho, n_samples=n_samples, burn_in=burn_in, thin=thin)
    res = run_chains(target, _theta0_1d(), SEEDS, SGLD(step_size=h), **run)
    assert res.acceptance_rate is None
    assert "acceptance_rate" not in res.draw_stats
    np.testing.assert_array_equal(res.step_size, h)
    gens = [torch.Generator().manual_seed(s) for s in SEEDS]
    state = langevin.init(gens, target, _theta0_1d())
    params = langevin.SGLDParams(rho, torch.full((K,), h, dtype=torch.float64))
    kept = []
    for i in range(burn_in + n_samples * thin):
        state, _ = langevin.step(gens, state, target, params)
        if i >= burn_in and (i - burn_in + 1) % thin == 0:
            kept.append(state.theta.numpy().copy())
    np.testing.assert_array_equal(res.samples, np.stack(kept, 1))
    assert np.isfinite(res.samples).all() and len(np.unique(res.samples[0, :, 0])) == n_samples
    np.testing.assert_array_equal(res.n_grad, burn_in + n_samples * thin)


def test_jobs_run_single_threaded_and_restore_the_thread_setting():
    # the suite runs at one thread (conftest), which is also what the jobs set: start from
    # two so that a setting leaked by a job, or one not restored after an interrupt, shows
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        pot = _MeanModel()
        run_chains(Target(pot, lambda_=5.0), _theta0_1d(), SEEDS, MALA(), n_samples=3, burn_in=3)
        assert pot.threads == {1}  # the kernel ran inside a job, at one thread
        assert torch.get_num_threads() == 2
        with pytest.raises(KeyboardInterrupt):
            run_chains(Target(_MeanModel(fail_after=0), lambda_=5.0), _theta0_1d(), SEEDS, MALA())
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("sampler", [SMALA, CSMALA])
def test_stochastic_step_size_adapts_near_malas(sampler):
    # With rho < 1 the acceptance is capped by batch noise whatever h is, so the
    # runner adapts h on the acceptance of the parameter move alone. The adapted
    # step then lands near MALA's on the same target, instead of collapsing
    # toward zero as it does when the capped acceptance is chased.
    y = torch.as_tensor(np.random.default_rng(3).normal(1.0, 0.5, 200))
    pot = FunctionPotential(lambda th, idx: (y[idx] - th[:, :1]) ** 2, n_data=200)
    theta0 = torch.zeros(2, 1, dtype=torch.float64)
    steps = {}
    for kernel in (MALA(step_size=1e-3), sampler(step_size=1e-3)):
        rho = 0.5 if kernel.uses_batches else 1.0  # MALA reads the full data
        res = run_chains(Target(pot, lambda_=400.0), theta0, [0, 1], kernel, rho=rho, n_samples=10, burn_in=400)
        steps[kernel.name] = res.step_size
    ratio = steps[sampler.name] / steps["mala"]
    assert np.all((ratio > 1 / 3) & (ratio < 3)), ratio
