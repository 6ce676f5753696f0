"""run_chains: adaptation, thinning, restarts, scheduling and interruption."""

import math

import joblib
import numpy as np
import pytest
import torch

from skgibbs import SamplerWarning
from skgibbs.model import MLPSpec
from skgibbs.potential import FunctionPotential, MLPPotential, Prior
from skgibbs.samplers import (
    ChainConfig,
    ChainResult,
    chain_groups,
    mala,
    run_chains,
    runner,
    surrogate_constants,
)

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
        self.risk_points, self.n_grad, self.fail_after = [], 0, fail_after

    def mean_loss(self, theta, chunk=65536):
        self.risk_points.append(theta.detach().clone())
        return super().mean_loss(theta, chunk)

    def loss_sum_and_grad(self, theta, batch):
        self.n_grad += 1
        if self.fail_after is not None and self.n_grad > self.fail_after:
            raise KeyboardInterrupt
        return super().loss_sum_and_grad(theta, batch)


def _theta0_1d():
    return torch.tensor([[0.0], [0.5], [-0.5]], dtype=torch.float64)


CONFIGS = {
    "mala": {"sampler": "mala"},
    "smala": {"sampler": "smala", "rho": 0.5, "restart_after": None},
    "csmala_fixed": {"sampler": "csmala", "rho": 0.5, "correction": 0.8, "restart_after": None},
    "csmala_auto": {
        "sampler": "csmala",
        "rho": 0.5,
        "correction": "auto",
        "correction_every": 20,
        "restart_after": None,
    },
    # restarts redraw the batch of the stuck chains only
    "smala_restarts": {"sampler": "smala", "rho": 0.5, "restart_after": 3},
    "csmala_restarts": {"sampler": "csmala", "rho": 0.5, "correction": 1.0, "restart_after": 3},
    "sgld": {"sampler": "sgld", "rho": 0.5, "step_size": 1e-3},
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_vectorized_and_sequential_chains_agree(name):
    # a chain's draws depend only on its own seed (runner docstring)
    pot, theta0 = _mlp_problem()
    cfg = ChainConfig(lam=30.0, n_samples=40, burn_in=100, thin=2, **CONFIGS[name])
    prior = Prior(std=1.0)
    a = run_chains(pot, theta0, SEEDS, cfg, prior=prior, vectorize=True)
    b = run_chains(pot, theta0, SEEDS, cfg, prior=prior, vectorize=False)
    np.testing.assert_allclose(a.samples, b.samples, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(a.step_size, b.step_size, rtol=1e-8)
    np.testing.assert_array_equal(a.n_restarts, b.n_restarts)
    assert math.isclose(a.correction, b.correction, rel_tol=1e-8)


def test_n_jobs_gives_the_same_draws():
    pot, theta0 = _mlp_problem()
    cfg = ChainConfig(sampler="csmala", lam=30.0, rho=0.5, n_samples=20, burn_in=50, correction=0.9)
    a = run_chains(pot, theta0, SEEDS, cfg, prior=Prior(std=1.0), vectorize=False, n_jobs=None)
    b = run_chains(pot, theta0, SEEDS, cfg, prior=Prior(std=1.0), vectorize=False, n_jobs=2)
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
    "csmala": {"sampler": "csmala", "rho": 0.5, "correction": "auto", "correction_every": 20},
    "hmc": {"sampler": "hmc", "metric": "adaptive", "trajectory_length": "chees"},
}


@pytest.mark.parametrize("name", sorted(GROUPED))
def test_batched_groups_sample_what_one_batch_samples(name):
    # n_jobs splits the batched chains into groups; a chain's draws stay those of its seed.
    # HMC adapts T and the metric over all chains, so its warm-up is the same either way.
    pot, theta0 = _mlp_problem()
    cfg = ChainConfig(lam=30.0, n_samples=30, burn_in=100, **GROUPED[name])
    a = run_chains(pot, theta0, SEEDS, cfg, prior=Prior(std=1.0), vectorize=True, n_jobs=None)
    b = run_chains(pot, theta0, SEEDS, cfg, prior=Prior(std=1.0), vectorize=True, n_jobs=2)
    np.testing.assert_allclose(a.samples, b.samples, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(a.step_size, b.step_size, rtol=1e-8)
    assert math.isclose(a.correction, b.correction, rel_tol=1e-8)
    if name == "hmc":
        assert math.isclose(a.trajectory_length, b.trajectory_length, rel_tol=1e-8)
        np.testing.assert_allclose(a.inverse_mass, b.inverse_mass, rtol=1e-8)
        np.testing.assert_array_equal(a.draw_stats["n_steps"], b.draw_stats["n_steps"])


@pytest.mark.parametrize("name", sorted(GROUPED))
def test_groups_give_identical_draws_on_any_backend(name):
    # the grouping depends on the arguments only: worker processes repeat an in-process run bit for bit
    pot, theta0 = _mlp_problem()
    pot = MLPPotential(pot.spec, pot.X.float(), pot.y.float())
    theta0 = theta0.float()
    cfg = ChainConfig(lam=30.0, n_samples=20, burn_in=50, **GROUPED[name])
    with joblib.parallel_backend("sequential"):
        a = run_chains(pot, theta0, SEEDS, cfg, prior=Prior(std=1.0), vectorize=True, n_jobs=2)
    with joblib.parallel_backend("loky", n_jobs=2):
        b = run_chains(pot, theta0, SEEDS, cfg, prior=Prior(std=1.0), vectorize=True, n_jobs=2)
    np.testing.assert_array_equal(a.samples, b.samples)
    np.testing.assert_array_equal(a.step_size, b.step_size)


@pytest.mark.parametrize("sampler", ["csmala", "hmc"])
def test_a_job_accepts_chains_whose_arrays_arrive_read_only(sampler):
    # Ray's object store (and joblib's memory-mapping of large arrays) hands a job read-only arrays
    pot, theta0 = _mlp_problem()
    rho = 0.5 if sampler == "csmala" else 1.0
    cfg = ChainConfig(sampler=sampler, lam=30.0, rho=rho, n_samples=5, burn_in=5)
    chains, states = runner._warmup_job(pot, Prior(std=1.0), theta0, SEEDS, cfg, True)
    frozen = [v for v in vars(chains).values() if isinstance(v, np.ndarray)]
    for array in frozen:
        array.flags.writeable = False
    chains, (draws, _, kept, _) = runner._sample_job(chains, states, None)
    assert kept == 5 and draws.shape[:2] == (K, 5)


def test_result_fields_are_numpy_with_documented_shapes():
    pot, theta0 = _mlp_problem()
    cfg = ChainConfig(sampler="csmala", lam=30.0, rho=0.5, n_samples=15, burn_in=20)
    res = run_chains(pot, theta0, SEEDS, cfg)
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
    full = run_chains(pot, theta0, SEEDS, cfg._replace(sampler="mala"))
    assert len(full.accepted_batch_sizes) == 0 and full.correction == 0.0


def test_thinning_keeps_every_thin_th_state():
    pot, theta0 = _mlp_problem()
    base = ChainConfig(sampler="mala", lam=30.0, burn_in=30)
    thin = run_chains(pot, theta0, SEEDS, base._replace(n_samples=10, thin=3))
    dense = run_chains(pot, theta0, SEEDS, base._replace(n_samples=30, thin=1))
    assert thin.samples.shape == (K, 10, theta0.shape[1])
    np.testing.assert_array_equal(thin.samples, dense.samples[:, 2::3])


@pytest.fixture
def used_params(monkeypatch):
    """(step_size, proposal_std) of every kernel call, in order."""
    used = []
    original = mala.step

    def spy(generators, state, potential, params, prior, move_scale=None):
        used.append((params.step_size.clone(), params.proposal_std.clone()))
        return original(generators, state, potential, params, prior, move_scale)

    monkeypatch.setattr(mala, "step", spy)
    return used


def test_step_size_is_frozen_after_burn_in(used_params):
    used = used_params
    pot, theta0 = _mlp_problem()
    cfg = ChainConfig(sampler="mala", lam=30.0, n_samples=12, burn_in=60, thin=2, step_size=1e-4)
    res = run_chains(pot, theta0, SEEDS, cfg)
    sampling = used[-cfg.n_samples * cfg.thin :]
    for h, s in sampling:
        np.testing.assert_array_equal(h.numpy(), res.step_size)
        np.testing.assert_array_equal(s.numpy(), res.proposal_std)
    np.testing.assert_allclose(res.proposal_std, np.sqrt(2 * res.step_size))
    burn_in = torch.stack([h for h, _ in used[: -cfg.n_samples * cfg.thin]])
    assert len(torch.unique(burn_in[:, 0])) > 5  # the step size was adapted before
    assert not np.allclose(res.step_size, 1e-4)


def test_fixed_proposal_is_not_adapted(used_params):
    used = used_params
    pot, theta0 = _mlp_problem()
    cfg = ChainConfig(sampler="mala", lam=30.0, n_samples=5, burn_in=20, step_size=1e-3, proposal_std=0.05)
    res = run_chains(pot, theta0, SEEDS, cfg)
    assert all(torch.all(h == 1e-3) and torch.all(s == 0.05) for h, s in used)
    np.testing.assert_array_equal(res.step_size, 1e-3)
    np.testing.assert_array_equal(res.proposal_std, 0.05)


@pytest.mark.parametrize("restart_after, expect", [(2, True), (None, False)])
def test_restarts_are_counted(restart_after, expect):
    pot, theta0 = _mlp_problem()
    # fixed, too large proposal: long runs of rejections
    cfg = ChainConfig(
        sampler="csmala",
        lam=30.0,
        rho=0.5,
        correction=1.0,
        n_samples=30,
        burn_in=0,
        step_size=1e-3,
        proposal_std=0.5,
        restart_after=restart_after,
    )
    res = run_chains(pot, theta0, SEEDS, cfg)
    assert res.acceptance_rate.max() < 0.5
    if expect:
        assert res.n_restarts.sum() > 0
    else:
        np.testing.assert_array_equal(res.n_restarts, 0)


def test_no_restarts_on_full_data():
    pot, theta0 = _mlp_problem()
    cfg = ChainConfig(
        sampler="mala", lam=30.0, n_samples=30, burn_in=0, step_size=1e-3, proposal_std=0.5, restart_after=1
    )
    res = run_chains(pot, theta0, SEEDS, cfg)
    assert res.acceptance_rate.max() < 0.5
    np.testing.assert_array_equal(res.n_restarts, 0)


def test_keyboard_interrupt_keeps_the_draws_so_far():
    cfg = ChainConfig(sampler="mala", lam=10.0, n_samples=50, burn_in=10, step_size=1e-3, proposal_std=0.2)
    full = run_chains(_MeanModel(), _theta0_1d(), SEEDS, cfg)
    # one gradient at the start and one per step: fail in the 26th sampling step
    pot = _MeanModel(fail_after=1 + cfg.burn_in + 25)
    with pytest.warns(SamplerWarning, match="interrupted"):
        res = run_chains(pot, _theta0_1d(), SEEDS, cfg)
    assert res.interrupted
    kept = res.samples.shape[1]
    assert 0 < kept < cfg.n_samples
    np.testing.assert_array_equal(res.samples, full.samples[:, :kept])
    assert np.isfinite(res.samples).all() and np.all((res.acceptance_rate >= 0) & (res.acceptance_rate <= 1))


@pytest.mark.parametrize("vectorize", [True, False])
def test_auto_correction_centres_at_the_pooled_risk(vectorize):
    # paper 000 §5: zeta log rho = -lambda' Rbar / n with Rbar the full-data risk
    # averaged over the chains at the end of burn-in
    pot = _MeanModel()
    lam, rho = 20.0, 0.3
    theta0 = torch.tensor([[0.0], [1.5], [-2.0]], dtype=torch.float64)
    cfg = ChainConfig(
        sampler="csmala",
        lam=lam,
        rho=rho,
        correction="auto",
        n_samples=5,
        burn_in=40,
        correction_every=10,
        step_size=1e-3,
        proposal_std=0.05,
    )
    res = run_chains(pot, theta0, SEEDS, cfg, vectorize=vectorize)
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
    cfg = ChainConfig(sampler="csmala", lam=20.0, rho=0.3, correction=0.4, n_samples=5, burn_in=5)
    res = run_chains(pot, _theta0_1d(), SEEDS, cfg)
    assert res.correction == 0.4
    assert math.isclose(res.lambda_prime, surrogate_constants("csmala", 20.0, 40, 0.3, 0.4)[2])
    assert pot.risk_points == []  # no full-data pass needed for a fixed zeta


def test_sgld_runner_keeps_step_size_and_accepts_everything():
    pot = _MeanModel()
    cfg = ChainConfig(sampler="sgld", lam=20.0, rho=0.5, n_samples=20, burn_in=10, step_size=1e-3)
    res = run_chains(pot, _theta0_1d(), SEEDS, cfg)
    np.testing.assert_array_equal(res.acceptance_rate, 1.0)
    np.testing.assert_array_equal(res.step_size, 1e-3)
    assert np.isfinite(res.samples).all() and len(np.unique(res.samples[0, :, 0])) == 20


def test_does_not_leak_thread_setting():
    before = torch.get_num_threads()
    pot = _MeanModel()
    run_chains(pot, _theta0_1d(), SEEDS, ChainConfig(sampler="mala", lam=5.0, n_samples=3, burn_in=3))
    assert torch.get_num_threads() == before


@pytest.mark.parametrize("sampler", ["smala", "csmala"])
def test_stochastic_step_size_adapts_near_malas(sampler):
    # With rho < 1 the acceptance is capped by batch noise whatever h is, so the
    # runner adapts h on the acceptance of the parameter move alone. The adapted
    # step then lands near MALA's on the same target, instead of collapsing
    # toward zero as it does when the capped acceptance is chased.
    y = torch.as_tensor(np.random.default_rng(3).normal(1.0, 0.5, 200))
    pot = FunctionPotential(lambda th, idx: (y[idx] - th[:, :1]) ** 2, n_data=200)
    theta0 = torch.zeros(2, 1, dtype=torch.float64)
    steps = {}
    for name in ("mala", sampler):
        cfg = ChainConfig(sampler=name, lam=400.0, rho=0.5, n_samples=10, burn_in=400, step_size=1e-3)
        steps[name] = run_chains(pot, theta0, [0, 1], cfg).step_size
    ratio = steps[sampler] / steps["mala"]
    assert np.all((ratio > 1 / 3) & (ratio < 3)), ratio
