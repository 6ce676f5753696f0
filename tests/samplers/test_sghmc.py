"""SGHMC on minibatches: the kernel, its warm-up, its diagnostic and ``sampler="auto"``."""

import math
import warnings

import numpy as np
import pytest
import torch

from skgibbs import GibbsMLPRegressor, SamplerWarning
from skgibbs.diagnostics import effective_sample_size
from skgibbs.potential import LinearPotential
from skgibbs.priors import Prior
from skgibbs.samplers import SGHMC, MeanFieldVI, Target, choose_sampler, get_sampler, run_chains, sghmc
from skgibbs.samplers.base import FULL_BATCH_WORK


def _gens(seeds):
    return [torch.Generator().manual_seed(int(s)) for s in seeds]


def _linear(n=2000, temperature=0.5, seed=1):
    """A Gaussian linear model: the tempered posterior in closed form."""
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 3, generator=g, dtype=torch.float64)
    y = X @ torch.tensor([1.0, -0.5, 0.2], dtype=torch.float64) + 0.5 * torch.randn(n, generator=g, dtype=torch.float64)
    lam = n / temperature
    target = Target(LinearPotential(X, y), Prior(std=1.0), lam)
    Xa = torch.cat([X, torch.ones(n, 1, dtype=X.dtype)], 1)
    precision = 2 * lam / n * Xa.T @ Xa + torch.eye(4, dtype=X.dtype)
    cov = torch.linalg.inv(precision)
    return target, cov @ (2 * lam / n * Xa.T @ y), cov, precision


def test_draw_rows_shapes_and_law():
    batch = sghmc.draw_rows(_gens([0, 1, 2]), 50, 20)
    assert batch.idx.shape == (3, 20) and batch.mask is None and batch.size.tolist() == [20] * 3
    assert int(batch.idx.min()) >= 0 and int(batch.idx.max()) < 50
    full = sghmc.draw_rows(_gens([0]), 50, 80)
    assert full.idx is None and full.size.tolist() == [50]
    # uniform with replacement: each row's count over 200 000 draws is Binomial(200 000, 1/50)
    gens = _gens([3])
    rows = torch.cat([sghmc.draw_rows(gens, 50, 40).idx[0] for _ in range(5000)])
    counts = torch.bincount(rows, minlength=50).double()
    sd = math.sqrt(200_000 * (1 / 50) * (49 / 50))
    assert float((counts - 4000).abs().max()) < 4.5 * sd


def test_a_chain_reads_only_its_generator():
    target, mean, _, _ = _linear(200)
    theta = mean.expand(3, -1).clone()
    params = sghmc.SGHMCParams(torch.full((4,), 1e-4, dtype=torch.float64), 0.1,
                               torch.full((4,), 1e-3, dtype=torch.float64), 20)
    gens = _gens([5, 6, 7])
    state, info = sghmc.step(gens, sghmc.init(gens, target, theta), target, params)
    alone = _gens([6])
    one, _ = sghmc.step(alone, sghmc.init(alone, target, theta[1:2]), target, params)
    assert torch.allclose(state.theta[1], one.theta[0], rtol=1e-12, atol=1e-14)
    assert info.is_finite.all() and info.grad.shape == (3, 4)


def test_step_is_momentum_sgd_with_its_noise():
    """One step from rest on the full batch: ``theta' = theta - eta grad U + sqrt(2 alpha eta) xi``."""
    target, mean, _, _ = _linear(100)
    theta = torch.zeros(1, 4, dtype=torch.float64)
    lr = torch.full((4,), 1e-3, dtype=torch.float64)
    params = sghmc.SGHMCParams(lr, 0.2, torch.sqrt(2 * 0.2 * lr), 100)
    gens = _gens([0])
    state, _ = sghmc.step(gens, sghmc.init(gens, target, theta), target, params)
    _, grad = target.value_and_grad(theta)
    xi = torch.randn(1, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    assert torch.allclose(state.theta, theta - lr * grad + torch.sqrt(2 * 0.2 * lr) * xi)


def test_curvature_is_the_largest_preconditioned_eigenvalue():
    target, _, _, precision = _linear(300)
    m = torch.tensor([0.5, 1.0, 2.0, 1.5], dtype=torch.float64) * 1e-3
    theta = torch.zeros(2, 4, dtype=torch.float64)
    lam = sghmc.kernel.curvature(_gens([0, 1]), target, theta, m, b=300, n_iter=200)
    exact = torch.linalg.eigvalsh(m.sqrt()[:, None] * precision * m.sqrt()[None]).max()
    assert torch.allclose(lam, exact.expand(2), rtol=1e-4)


@pytest.mark.slow
def test_draws_match_the_closed_form_posterior():
    """Moments within Monte Carlo error plus the bias a small step leaves (module docstring)."""
    target, mean, cov, _ = _linear()
    theta0 = mean.expand(4, -1).clone()
    res = run_chains(target, theta0, [0, 1, 2, 3], SGHMC(batch_size=1000),
                     n_samples=300, burn_in=1000, thin=30)
    draws = res.samples  # (4, 300, 4)
    sd = cov.diagonal().sqrt().numpy()
    for j in range(4):
        x = draws[:, :, j]
        ess = float(effective_sample_size(x))
        se_mean = sd[j] / math.sqrt(ess)
        assert abs(x.mean() - float(mean[j])) < 4 * se_mean
        # sd of a sample sd ~ sd / sqrt(2 ess); the step's bias: variance x (1 + eps^2 / (2 alpha)) at most
        ratio = x.std() / sd[j]
        assert 1 - 4 / math.sqrt(2 * ess) < ratio < 1 + 0.1**2 / 0.2 + 4 / math.sqrt(2 * ess)
    temp = res.configurational_temperature
    assert np.all(np.abs(temp - 1.0) < 0.15), temp


@pytest.mark.slow
def test_configurational_temperature_reads_an_over_dispersed_chain():
    """A constant step 0.4 inflates the variance; the diagnostic sees it, and a small step does not."""
    target, mean, cov, _ = _linear()
    theta0 = mean.expand(4, -1).clone()
    big = run_chains(target, theta0, [0, 1, 2, 3], SGHMC(step_size=0.4, schedule="constant", batch_size=20),
                     n_samples=200, burn_in=500, thin=20)
    ratio = big.samples.reshape(-1, 4).std(0) / cov.diagonal().sqrt().numpy()
    assert ratio.mean() > 1.1
    assert big.configurational_temperature.mean() > 1.1


def test_warmup_limits_the_step_to_the_curvature():
    target, mean, _, precision = _linear(500)
    res = run_chains(target, mean.expand(2, -1).clone(), [0, 1], SGHMC(step_size=10.0, batch_size=500),
                     n_samples=5, burn_in=200, thin=10)
    lam = res.curvature
    assert np.allclose(res.step_size, math.sqrt(sghmc.sampler.STABILITY / lam.max()))
    assert np.all(res.step_size < 10.0) and res.batch_size == 500
    assert res.n_refused.sum() == 0 and np.all(res.epochs > 0)


def test_settings_are_checked():
    target, mean, _, _ = _linear(50)
    for bad, match in [
        (SGHMC(batch_size=0), "batch_size"),
        (SGHMC(step_size=-1.0), "step_size"),
        (SGHMC(friction=1.5), "friction"),
        (SGHMC(schedule="linear"), "schedule"),
        (SGHMC(epochs_per_draw=0), "epochs_per_draw"),
    ]:
        with pytest.raises(ValueError, match=match):
            run_chains(target, mean[None].clone(), [0], bad, n_samples=2, burn_in=2)


def test_schedule_in_passes_over_the_data():
    assert sghmc.sampler.auto_batch_size(100_000) == 1000 and sghmc.sampler.auto_batch_size(300) == 256
    burn_in, thin = SGHMC().default_schedule(100_000)
    assert (burn_in, thin) == (2000, 100)  # 20 passes of 100 steps, one pass per draw
    assert SGHMC().default_schedule(442) == (1000, 50)  # the floors on small data
    assert SGHMC(batch_size=64).rows_per_step(10_000, 1.0) == 64


def test_auto_decides_by_rows_times_parameters():
    q = 11_301
    small = FULL_BATCH_WORK // q
    assert choose_sampler(1.0, small, q)[0] == "hmc"
    assert choose_sampler(1.0, small + 1, q)[0] == "vi"
    assert choose_sampler(1.0, small + 1, q, device="cuda")[0] == "hmc"
    assert choose_sampler(0.5, 10, q)[0] == "csmala"
    name, why = choose_sampler(1.0, 100_000, 12_301)
    assert name == "vi" and "100,000" in why and "12,301" in why
    assert isinstance(get_sampler("auto", n_rows=100_000, n_params=q), MeanFieldVI)
    assert get_sampler("auto").name == "hmc"  # without sizes (a bare run_chains call)


def test_estimator_runs_sghmc_and_reports_it(capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] - X[:, 1] ** 2 + 0.1 * rng.normal(size=300)
    est = GibbsMLPRegressor(hidden_layer_sizes=(8,), sampler="sghmc", n_samples=20, burn_in=100, thin=10,
                            pretrain_iter=50, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        est.fit(X, y)
    assert est.sampler_name_ == "sghmc" and isinstance(est.sampler_, SGHMC)
    assert est.samples_.shape == (4, 20, est.spec_.n_params)
    assert est.configurational_temperature_.shape == (4,) and est.batch_size_ == 256
    assert not hasattr(est, "acceptance_rate_")
    assert est.sample_stats_["refused"].shape == (4, 20)
    again = GibbsMLPRegressor(**est.get_params()).fit(X, y)
    np.testing.assert_array_equal(again.samples_, est.samples_)
    # verbose says why "auto" chose its sampler
    GibbsMLPRegressor(hidden_layer_sizes=(4,), n_samples=2, burn_in=2, pretrain_iter=2, verbose=1,
                      random_state=0).fit(X[:50], y[:50])
    assert "sampler='auto': rows x parameters" in capsys.readouterr().err


def test_a_blowing_up_step_is_refused():
    """A step whose kinetic temperature mean(v^2 / eta) is far above 1 leaves the chain put, at rest."""
    target, mean, _, _ = _linear(100)
    theta = (mean + 1.0).expand(2, -1).clone()
    lr = torch.tensor([[1e-9] * 4, [10.0] * 4], dtype=torch.float64)  # tiny for chain 0, absurd for chain 1
    params = sghmc.SGHMCParams(lr, 0.1, torch.sqrt(2 * 0.1 * lr), 100)
    gens = _gens([0, 1])
    state, info = sghmc.step(gens, sghmc.init(gens, target, theta), target, params)
    assert info.is_finite.tolist() == [True, False]
    assert torch.equal(state.theta[1], theta[1]) and torch.all(state.velocity[1] == 0)
    assert not torch.equal(state.theta[0], theta[0])
