"""SGLD / ULA kernel: ``theta' = theta - h grad U_B(theta) + sqrt(2 h) xi``."""

import math

import numpy as np
import pytest
import torch

from skgibbs.potential import FunctionPotential
from skgibbs.priors import Prior
from skgibbs.samplers import Target
from skgibbs.samplers.langevin import sgld as langevin

N = 20
Y = torch.linspace(-1.0, 1.0, N, dtype=torch.float64)


def _gens(seeds):
    return [torch.Generator().manual_seed(int(s)) for s in seeds]


class _Recorder:
    def __init__(self, potential):
        self.potential, self.n_data, self.batches = potential, potential.n_data, []

    def loss_sum_and_grad(self, theta, batch):
        self.batches.append(batch)
        return self.potential.loss_sum_and_grad(theta, batch)


def _quadratic():
    return FunctionPotential(lambda th, idx: (Y[idx] - th[:, :1]) ** 2 + 0.5 * th[:, 1:2] ** 2, N)


def _zero():
    return FunctionPotential(lambda th, idx: (th[:, :1] * 0.0).expand(-1, idx.shape[1]), N)


def _step(seeds, theta, potential, lam, rho, h, prior=Prior()):
    """One SGLD step of ``len(seeds)`` chains from ``theta``, fresh generators."""
    target = Target(potential, prior, lam)
    gens = _gens(seeds)
    step = torch.full((len(seeds),), h, dtype=torch.float64) if np.ndim(h) == 0 else h
    return langevin.step(gens, langevin.init(gens, target, theta), target, langevin.SGLDParams(rho, step))


def test_state_and_info_types():
    theta = torch.zeros(2, 2, dtype=torch.float64)
    target = Target(_quadratic(), Prior(), 5.0)
    state = langevin.init(_gens([0, 1]), target, theta)
    assert isinstance(state, langevin.SGLDState) and state._fields == ("theta",)
    assert langevin.SGLDParams._fields == ("rho", "step_size")
    params = langevin.SGLDParams(0.5, torch.full((2,), 1e-3, dtype=torch.float64))
    state, info = langevin.step(_gens([0, 1]), state, target, params)
    assert isinstance(info, langevin.SGLDInfo)
    assert info._fields == ("batch_loss", "batch_size", "is_finite")
    assert state.theta.shape == (2, 2) and all(t.shape == (2,) for t in info)


@pytest.mark.parametrize("rho", [1.0, 0.4])
@pytest.mark.parametrize("prior_std", [None, 0.7])
def test_one_step_equals_the_formula(rho, prior_std):
    """Two potentials, the same seeds: the noise and the batch coincide, so the
    difference of the two steps isolates ``-h grad U_B``; the zero-loss step
    isolates ``sqrt(2h) xi - h grad(-log prior)``, with ``xi`` standard normal
    from the chain's generator."""
    lam, h = 8.0, 0.01
    theta = torch.tensor([[0.3, -0.2], [-0.5, 0.6]], dtype=torch.float64)
    prior = Prior(std=prior_std)
    rec = _Recorder(_quadratic())
    new, info = _step([3, 4], theta, rec, lam, rho, h, prior)
    base, _ = _step([3, 4], theta, _zero(), lam, rho, h, prior)
    batch = rec.batches[-1]
    for k in range(2):
        if batch.idx is None:
            rows = torch.arange(N)
        else:
            rows = batch.idx[k] if batch.mask is None else batch.idx[k, batch.mask[k] > 0]
        # U_B = lam / (n rho) sum_B l_i: the unbiased batch estimate of lam R_n
        grad = lam / (N * rho) * torch.stack([-2 * (Y[rows] - theta[k, 0]).sum(), len(rows) * theta[k, 1]])
        torch.testing.assert_close(new.theta[k] - base.theta[k], -h * grad)
        expected_mean_loss = ((Y[rows] - theta[k, 0]) ** 2 + 0.5 * theta[k, 1] ** 2).mean()
        torch.testing.assert_close(info.batch_loss[k], expected_mean_loss)
        assert int(info.batch_size[k]) == len(rows)
    assert info.is_finite.all()
    if rho == 1.0:
        # the full-data step written out, noise replayed from the same seeds
        prior_grad = 0.0 if prior_std is None else theta / prior_std**2
        xi = torch.stack([torch.randn(2, generator=g, dtype=torch.float64) for g in _gens([3, 4])])
        expected = theta - h * prior_grad + math.sqrt(2 * h) * xi
        torch.testing.assert_close(base.theta, expected)


def test_noise_has_variance_two_h():
    # zero loss, flat prior: theta' - theta = sqrt(2h) xi with xi ~ N(0, I)
    h, Q = 0.02, 400
    new, _ = _step([0], torch.zeros(1, Q, dtype=torch.float64), _zero(), 1.0, 1.0, h)
    z = new.theta[0].numpy() / math.sqrt(2 * h)
    assert abs(z.mean()) < 4 / math.sqrt(Q)
    assert abs(z.var() - 1) < 4 * math.sqrt(2 / Q)


def test_non_finite_step_is_refused(nan_gradient_where):
    def loss_fn(theta, idx):
        return (Y[idx] - nan_gradient_where(theta[:, :1], lambda t: t > 0.5)) ** 2

    pot = FunctionPotential(loss_fn, N)
    theta = torch.tensor([[0.0], [0.9]], dtype=torch.float64)  # chain 1 sits where the gradient is NaN
    state, info = _step([0, 1], theta, pot, 5.0, 1.0, 1e-3)
    assert info.is_finite.tolist() == [True, False]
    assert state.theta[1] == theta[1] and state.theta[0] != theta[0]


def test_step_outside_prior_box_is_refused():
    theta = torch.full((3, 1), 0.99, dtype=torch.float64)
    target = Target(_zero(), Prior(bound=1.0), 1.0)
    state = langevin.init(_gens(range(3)), target, theta)
    params = langevin.SGLDParams(1.0, torch.full((3,), 0.01, dtype=torch.float64))
    refused = 0
    for _ in range(20):
        state, info = langevin.step(_gens(range(3)), state, target, params)
        refused += int((~info.is_finite).sum())
        assert torch.all(state.theta.abs() <= 1.0)
    assert refused > 0


def test_overflowing_step_is_refused():
    theta = torch.zeros(2, 2, dtype=torch.float64)
    state, info = _step([0, 1], theta, _quadratic(), 5.0, 1.0, 1e308)
    assert not info.is_finite.any() and torch.equal(state.theta, theta)


def test_same_seed_same_step():
    theta = torch.zeros(2, 2, dtype=torch.float64)
    a, _ = _step([1, 2], theta, _quadratic(), 5.0, 0.5, 1e-2)
    b, _ = _step([1, 2], theta, _quadratic(), 5.0, 0.5, 1e-2)
    c, _ = _step([1, 3], theta, _quadratic(), 5.0, 0.5, 1e-2)
    assert torch.equal(a.theta, b.theta) and torch.equal(a.theta[0], c.theta[0])
    assert not torch.equal(a.theta[1], c.theta[1])


def test_batch_loss_is_a_mean():
    theta = torch.zeros(1, 2, dtype=torch.float64)
    _, info = _step([0], theta, _quadratic(), 1.0, 1.0, 1e-3)
    np.testing.assert_allclose(float(info.batch_loss[0]), float((Y**2).mean()))
