"""The priors (skgibbs.priors): flat, Gaussian, box; their old home still resolves."""

import numpy as np
import pytest
import torch

from skgibbs import potential
from skgibbs.priors import MixingPrior, Prior


def test_priors_are_still_reachable_from_their_old_home():
    # skgibbs.priors is their home; skgibbs.potential keeps the names for old imports
    # without exporting them
    assert potential.Prior is Prior and potential.MixingPrior is MixingPrior
    assert "Prior" not in potential.__all__ and "MixingPrior" not in potential.__all__


def test_flat_prior_is_zero_without_gradient():
    theta = torch.randn(4, 3, dtype=torch.float64)
    prior = Prior()
    torch.testing.assert_close(prior.log_density(theta), torch.zeros(4, dtype=torch.float64))
    assert prior.grad_log_density(theta) is None


@pytest.mark.parametrize("std", [0.7, torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64)])
def test_gaussian_prior_density_and_gradient(std):
    theta = torch.randn(4, 3, dtype=torch.float64)
    prior = Prior(std=std)
    expected = -0.5 * ((theta / std) ** 2).sum(1)
    torch.testing.assert_close(prior.log_density(theta), expected)
    th = theta.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(prior.log_density(th).sum(), th)
    torch.testing.assert_close(prior.grad_log_density(theta), grad)


def test_box_prior_is_minus_infinity_outside():
    theta = torch.tensor([[0.5, -0.9], [1.2, 0.0], [0.0, -1.0], [-1.0001, 0.3]], dtype=torch.float64)
    out = Prior(bound=1.0).log_density(theta)
    assert out[0] == 0 and out[2] == 0  # the boundary belongs to the box
    assert out[1] == -np.inf and out[3] == -np.inf
    gauss_box = Prior(std=2.0, bound=1.0).log_density(theta)
    assert torch.isfinite(gauss_box[[0, 2]]).all() and torch.isinf(gauss_box[[1, 3]]).all()


