"""The non-centred hierarchical target: its density, its gradient and its map to the weights."""

import numpy as np
import pytest
import torch
from scipy import integrate, stats

from skgibbs.model import MLPSpec
from skgibbs.potential import LinearPotential
from skgibbs.priors import HierarchicalPrior
from skgibbs.samplers import Target
from skgibbs.samplers.noncentered import NonCenteredTarget
from test_hmc_gibbs import _linear_data


def _target(kind="ard", noise=True, shape=1.0):
    X, y = _linear_data(n=25)
    spec = MLPSpec(X.shape[1], (), "identity")
    prior = HierarchicalPrior.for_network(spec, kind, torch.full((5,), 0.7, dtype=torch.float64), shape, noise=noise)
    return Target(LinearPotential(torch.tensor(X), torch.tensor(y)), prior, lambda_=3.0), prior


def _points(K=3, seed=0):
    return torch.randn(K, 5 + 5, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 0.5


def _log_joint(target, prior, x):
    """``log p(y, z, eta)`` of the model by its definition, the noise precision integrated by quadrature."""
    nc = NonCenteredTarget(target)
    theta = nc.to_theta(x)[0]
    z, eta = (v[0].numpy() for v in nc.split(x))
    loss = float(target.loss_sum(theta[None])[0])
    n = target.n_data
    # theta = z exp(-eta / 2): p(theta | tau) d theta = N(z; 0, 1) d z; tau = exp(eta): p(tau) d tau = p(tau) tau d eta
    out = stats.norm.logpdf(z).sum()
    a, b = prior.shape.numpy(), prior.rate.numpy()
    out += (stats.gamma.logpdf(np.exp(eta), a, scale=1 / b) + eta).sum()
    if prior.learns_noise:
        a_s, b_s = prior.noise_shape, prior.noise_rate
        # sum_i log N(y_i; f_i, 1 / s) = n/2 log s - s L / 2 - n/2 log(2 pi); s ~ Gamma(a_s, b_s)
        def integrand(s):
            return np.exp(0.5 * n * np.log(s) - 0.5 * s * loss + stats.gamma.logpdf(s, a_s, scale=1 / b_s) - shift)
        shift = 0.5 * n * np.log(n / loss) - 0.5 * n  # the integrand's log near its peak
        peak = n / loss
        value = sum(integrate.quad(integrand, lo, hi, limit=200)[0]
                    for lo, hi in [(0, peak), (peak, 4 * peak), (4 * peak, np.inf)])
        out += np.log(value) + shift
    else:
        out += -target.scale * loss
    return out


@pytest.mark.parametrize("kind, noise", [("ard", True), ("layer", True), ("ard", False), ("fixed", True)])
def test_the_potential_is_the_joint_density_with_the_noise_integrated_out(kind, noise):
    target, prior = _target(kind, noise)
    nc = NonCenteredTarget(target)
    G = prior.n_groups
    x = _points()[:, : 5 + G]
    u, _ = nc.value_and_grad(x)
    exact = np.array([_log_joint(target, prior, x[k : k + 1]) for k in range(len(x))])
    # the same density up to one constant
    diff = u.numpy() + exact
    assert np.allclose(diff, diff[0], atol=1e-7), diff


@pytest.mark.parametrize("kind, noise", [("ard", True), ("layer", False), ("fixed", True)])
def test_the_gradient_is_that_of_the_potential(kind, noise):
    target, prior = _target(kind, noise)
    nc = NonCenteredTarget(target)
    x = _points(seed=3)[:, : 5 + prior.n_groups].requires_grad_(True)
    _, grad = nc.value_and_grad(x.detach())

    def u_of(v):
        # the potential rebuilt in autograd: the loss of the linear model is (y - X theta)^2 summed
        z, eta = nc.split(v)
        if prior.n_groups:
            theta = z * torch.where(prior.group >= 0, torch.exp(-0.5 * eta)[:, prior.group.clamp(min=0)], prior.std)
        else:
            theta = z * prior.std
        pot = target.potential
        loss = ((pot.y - theta @ pot.X.T) ** 2).sum(1)  # X holds the column of ones
        data = (prior.noise_shape + 12.5) * torch.log(prior.noise_rate + 0.5 * loss) if noise else target.scale * loss
        return data + 0.5 * (z * z).sum(1) + (prior.rate * torch.exp(eta) - prior.shape * eta).sum(1)

    auto = torch.autograd.grad(u_of(x).sum(), x)[0]
    assert torch.allclose(grad, auto, rtol=1e-9, atol=1e-9)


def test_a_point_maps_to_its_weights_and_back_and_records_the_precisions():
    target, prior = _target()
    nc = NonCenteredTarget(target)
    theta = torch.randn(4, 5, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    x = nc.from_theta(theta)
    assert x.shape == (4, 5 + prior.n_groups)
    assert torch.allclose(nc.to_theta(x), theta)
    shape, rate = prior.conditional(theta)
    gens = [torch.Generator().manual_seed(k) for k in range(4)]
    rec = nc.hyperparameters(gens, x)
    assert torch.allclose(rec["precision"], shape / rate)  # the start: each precision its conditional mean
    assert rec["noise_precision"].shape == (4,) and bool((rec["noise_precision"] > 0).all())
