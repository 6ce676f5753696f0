"""Target: the potential U = lambda R_n - log Pi every kernel samples, and its batch terms."""

import math

import numpy as np
import pytest
import torch

from skgibbs.model import MLPSpec
from skgibbs.potential import Batch, MLPPotential
from skgibbs.priors import MixingPrior, Prior
from skgibbs.samplers import MALAParams, Target, draw_batch, hmc
from skgibbs.samplers.langevin import mala
from skgibbs.samplers.langevin import sgld as langevin
from skgibbs.samplers.rj import rjmcmc
from skgibbs._random import normal

K, N = 3, 30


def _problem():
    gen = torch.Generator().manual_seed(0)
    spec = MLPSpec(2, (4,), "tanh")
    X = torch.randn(N, 2, generator=gen, dtype=torch.float64)
    y = torch.sin(X[:, 0]) + 0.1 * torch.randn(N, generator=gen, dtype=torch.float64)
    theta = torch.randn(K, spec.n_params, generator=gen, dtype=torch.float64)
    return spec, X, y, theta


def _gens(seeds=range(K)):
    return [torch.Generator().manual_seed(int(s)) for s in seeds]


def _autograd_potential(spec, X, y, theta, lam, log_prior):
    """``lambda R_n(theta) - log Pi(theta)`` and its gradient, written out and differentiated by autograd."""
    th = theta.clone().requires_grad_(True)
    risk = ((y - spec.forward(th, X)) ** 2).mean(1)
    u = lam * risk - log_prior(th)
    (grad,) = torch.autograd.grad(u.sum(), th)
    return u.detach(), grad


PRIORS = {
    "flat": (Prior(), lambda th: torch.zeros(th.shape[0], dtype=th.dtype)),
    "gaussian": (Prior(std=0.7), lambda th: -0.5 * ((th / 0.7) ** 2).sum(1)),
    "gaussian per coordinate": (
        Prior(std=torch.linspace(0.5, 2.0, 17, dtype=torch.float64)),
        lambda th: -0.5 * ((th / torch.linspace(0.5, 2.0, 17, dtype=torch.float64)) ** 2).sum(1),
    ),
}


@pytest.mark.parametrize("name", sorted(PRIORS))
@pytest.mark.parametrize("lam", [1.0, 45.0])
def test_value_and_grad_is_lambda_risk_minus_log_prior(name, lam):
    spec, X, y, theta = _problem()
    prior, log_prior = PRIORS[name]
    assert spec.n_params == 17
    target = Target(MLPPotential(spec, X, y), prior, lam)
    u, grad = target.value_and_grad(theta)
    expected_u, expected_grad = _autograd_potential(spec, X, y, theta, lam, log_prior)
    torch.testing.assert_close(u, expected_u)
    torch.testing.assert_close(grad, expected_grad)
    assert u.shape == (K,) and grad.shape == theta.shape
    assert not u.requires_grad and not grad.requires_grad


def test_defaults_and_attributes():
    spec, X, y, _ = _problem()
    pot = MLPPotential(spec, X, y)
    target = Target(pot)
    assert target.prior == Prior() and target.lambda_ == 1.0  # the flat prior, lambda = 1
    target = Target(pot, Prior(std=1.0), 60)
    assert isinstance(target.lambda_, float) and target.n_data == N and target.scale == 60 / N
    assert target.potential is pot


def test_box_prior_puts_infinity_outside():
    spec, X, y, theta = _problem()
    flat = Target(MLPPotential(spec, X, y), Prior(), 10.0)
    box = Target(MLPPotential(spec, X, y), Prior(bound=1.0), 10.0)
    inside = theta.clamp(-0.9, 0.9)
    torch.testing.assert_close(box.value_and_grad(inside)[0], flat.value_and_grad(inside)[0])
    outside = inside.clone()
    outside[1, 0] = 1.5
    u, _ = box.value_and_grad(outside)
    assert torch.isinf(u[1]) and u[1] > 0 and torch.isfinite(u[[0, 2]]).all()


@pytest.mark.parametrize("prior", [Prior(), Prior(std=0.7)], ids=["flat", "gaussian"])
def test_grad_with_a_per_chain_scale(prior):
    # c grad sum_B l_i - grad log Pi, with each chain its own c (csMALA's burn-in)
    spec, X, y, theta = _problem()
    target = Target(MLPPotential(spec, X, y), prior, 45.0)
    _, loss_grad = target.loss_sum_and_grad(theta)
    c = torch.tensor([0.5, 1.0, 3.0], dtype=torch.float64)
    got = target.grad(loss_grad, theta, c)
    for k in range(K):
        one = target.grad(loss_grad[k : k + 1], theta[k : k + 1], float(c[k]))
        torch.testing.assert_close(got[k], one[0])
        prior_grad = 0.0 if prior.std is None else -theta[k] / prior.std**2
        torch.testing.assert_close(got[k], float(c[k]) * loss_grad[k] - prior_grad)
    # c defaults to the full-data scale lambda / n: the gradient of value_and_grad
    torch.testing.assert_close(target.grad(loss_grad, theta), target.value_and_grad(theta)[1])


def test_energy_of_the_cached_batch_terms():
    loss_sum = torch.tensor([2.0, 5.0, 0.5], dtype=torch.float64)
    size = torch.tensor([10, 12, 3])
    log_prior = torch.tensor([-1.0, 0.0, -2.5], dtype=torch.float64)
    got = Target.energy(loss_sum, size, log_prior, 0.3, -0.2)
    torch.testing.assert_close(got, 0.3 * loss_sum - 0.2 * size.double() - log_prior)
    assert got.dtype == torch.float64
    # per-chain constants, as during csMALA's burn-in
    c = torch.tensor([0.3, 0.1, 2.0], dtype=torch.float64)
    d = torch.tensor([-0.2, 0.0, -1.0], dtype=torch.float64)
    got = Target.energy(loss_sum, size, log_prior, c, d)
    expected = [float(c[k] * loss_sum[k] + d[k] * size[k] - log_prior[k]) for k in range(K)]
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-15)


def test_data_terms_and_batches_are_the_potentials():
    spec, X, y, theta = _problem()
    pot = MLPPotential(spec, X, y)
    target = Target(pot, Prior(std=1.0), 45.0)
    loss, grad = target.loss_sum_and_grad(theta)
    ref_loss, ref_grad = pot.loss_sum_and_grad(theta, Batch())
    torch.testing.assert_close(loss, ref_loss)
    torch.testing.assert_close(grad, ref_grad)
    torch.testing.assert_close(target.loss_sum(theta), ref_loss)
    torch.testing.assert_close(target.mean_loss(theta), ref_loss / N)
    batch = target.draw_batch(_gens(), 0.4)
    expected = draw_batch(_gens(), N, 0.4)
    assert torch.equal(batch.idx, expected.idx) and torch.equal(batch.size, expected.size)
    torch.testing.assert_close(target.loss_sum(theta, batch), pot.loss_sum(theta, batch))
    assert target.draw_batch(_gens(), 1.0).idx is None  # the full data at rho = 1


# --------------------------------------------------- the kernels evaluate it
def test_hmc_state_holds_the_targets_potential():
    spec, X, y, theta = _problem()
    target = Target(MLPPotential(spec, X, y), Prior(std=0.7), 45.0)
    state = hmc.init(_gens(), target, theta)
    u, grad = target.value_and_grad(theta)
    torch.testing.assert_close(state.potential, u, rtol=0, atol=0)
    torch.testing.assert_close(state.grad, grad, rtol=0, atol=0)
    params = hmc.HMCParams(torch.full((K,), 0.01, dtype=torch.float64), torch.ones(17), torch.full((K,), 3))
    new, _ = hmc.step(_gens(), state, target, params)
    u, grad = target.value_and_grad(new.theta)
    torch.testing.assert_close(new.potential, u)
    torch.testing.assert_close(new.grad, grad)


def test_mala_on_the_full_data_sees_the_targets_potential():
    # rho = 1, c = lambda / n, d = 0: the cached batch terms are U and grad U
    spec, X, y, theta = _problem()
    target = Target(MLPPotential(spec, X, y), Prior(std=0.7), 45.0)
    h = torch.full((K,), 1e-3, dtype=torch.float64)
    params = MALAParams(target.scale, 0.0, 1.0, h, torch.sqrt(2 * h))
    state = mala.init(_gens(), target, theta, params)
    u, grad = target.value_and_grad(theta)
    energy = Target.energy(state.loss_sum, state.batch_size, state.log_prior, target.scale, 0.0)
    torch.testing.assert_close(energy, u)
    torch.testing.assert_close(target.grad(state.loss_grad, state.theta, params.loss_scale), grad)


def test_sgld_step_on_the_full_data_follows_the_targets_gradient():
    spec, X, y, theta = _problem()
    target = Target(MLPPotential(spec, X, y), Prior(std=0.7), 45.0)
    h = 1e-3
    params = langevin.SGLDParams(1.0, torch.full((K,), h, dtype=torch.float64))
    new, _ = langevin.step(_gens(), langevin.init(_gens(), target, theta), target, params)
    xi = normal(_gens(), theta.shape[1], theta)  # the step's noise, replayed
    expected = theta - h * target.value_and_grad(theta)[1] + math.sqrt(2 * h) * xi
    torch.testing.assert_close(new.theta, expected)


def test_rjmcmc_state_holds_the_targets_terms():
    spec, X, y, theta = _problem()
    theta = theta.clone()
    theta[:, ::3] = 0.0  # sparse starting points
    prior = MixingPrior(Prior(std=0.7), 2.0)
    target = Target(MLPPotential(spec, X, y), prior, 45.0)
    state = rjmcmc.init(_gens(), target, theta)
    u, _ = target.value_and_grad(theta)
    torch.testing.assert_close(state.log_prior, prior.log_density(theta))
    torch.testing.assert_close(target.scale * state.loss_sum - state.log_prior, u)
