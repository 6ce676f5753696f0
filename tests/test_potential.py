"""Per-example losses (skgibbs.potential): MLP, function and log-density potentials."""

import numpy as np
import pytest
import torch

from skgibbs.model import MLPSpec
from skgibbs.potential import Batch, FunctionPotential, LogDensityPotential, MLPPotential
from skgibbs.samplers import MALA, SGLD, Target, draw_batch, run_chains


def _gens(*seeds):
    return [torch.Generator().manual_seed(s) for s in seeds]


def _mlp_problem(n=30, seed=0):
    gen = torch.Generator().manual_seed(seed)
    spec = MLPSpec(2, (4,), "tanh")
    X = torch.randn(n, 2, generator=gen, dtype=torch.float64)
    y = torch.randn(n, generator=gen, dtype=torch.float64)
    theta = torch.randn(3, spec.n_params, generator=gen, dtype=torch.float64)
    return spec, X, y, theta


def _same_loss_as_function(spec, X, y):
    # the MLP squared loss written as a user's per-example loss (autograd path)
    def loss_fn(theta, idx):
        return (y[idx] - spec.forward(theta, X[idx])) ** 2

    return FunctionPotential(loss_fn, n_data=X.shape[0])


# ---------------------------------------------------------- potentials
def test_mlp_potential_full_data_matches_direct_computation():
    spec, X, y, theta = _mlp_problem()
    pot = MLPPotential(spec, X, y)
    full = Batch(None, None, torch.full((3,), 30))
    expected = ((y - spec.forward(theta, X)) ** 2).sum(1)
    torch.testing.assert_close(pot.loss_sum(theta, full), expected)
    torch.testing.assert_close(pot.mean_loss(theta), expected / 30)
    torch.testing.assert_close(pot.mean_loss(theta, chunk=7), expected / 30)


@pytest.mark.parametrize("n_chains", [1, 3])
@pytest.mark.parametrize("rho", [0.4, 1.0])
def test_mlp_potential_gradient_matches_function_potential(n_chains, rho):
    spec, X, y, theta = _mlp_problem()
    theta = theta[:n_chains]
    batch = draw_batch(_gens(*range(n_chains)), 30, rho)
    fast = MLPPotential(spec, X, y)
    reference = _same_loss_as_function(spec, X, y)
    loss, grad = fast.loss_sum_and_grad(theta, batch)
    ref_loss, ref_grad = reference.loss_sum_and_grad(theta, batch)
    torch.testing.assert_close(loss, ref_loss)
    torch.testing.assert_close(grad, ref_grad)
    torch.testing.assert_close(fast.loss_sum(theta, batch), ref_loss)


def test_padded_entries_do_not_count():
    spec, X, y, theta = _mlp_problem()
    idx = torch.tensor([[0, 5, 9], [4, 0, 0]])
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]], dtype=torch.float64)
    batch = Batch(idx, mask, torch.tensor([3, 1]))
    pot = MLPPotential(spec, X, y)
    loss, grad = pot.loss_sum_and_grad(theta[:2], batch)
    single, single_grad = pot.loss_sum_and_grad(
        theta[1:2], Batch(torch.tensor([[4]]), None, torch.tensor([1]))
    )
    torch.testing.assert_close(loss[1], single[0])
    torch.testing.assert_close(grad[1], single_grad[0])


def test_function_potential_full_data_and_doctest_value():
    y = torch.tensor([0.1, -0.2, 0.3], dtype=torch.float64)
    pot = FunctionPotential(lambda th, idx: (y[idx] - th[:, :1]) ** 2, n_data=3)
    theta = torch.tensor([[0.0], [1.0]], dtype=torch.float64)
    loss, grad = pot.loss_sum_and_grad(theta, Batch(None, None, None))
    torch.testing.assert_close(loss, ((y[None] - theta) ** 2).sum(1))
    torch.testing.assert_close(grad[:, 0], -2 * (y[None] - theta).sum(1))
    torch.testing.assert_close(pot.mean_loss(theta), loss / 3)


def test_mlp_potential_predict_has_no_graph():
    spec, X, y, theta = _mlp_problem()
    out = MLPPotential(spec, X, y).predict(theta.requires_grad_(True), X)
    assert out.shape == (3, 30) and not out.requires_grad


# ------------------------------------------------- log-density potential
# A 2-D Gaussian target N(MU, SIGMA), log density written out (autograd path).
MU = np.array([1.0, -0.5])
SIGMA = np.array([[1.0, 0.6], [0.6, 2.0]])
PRECISION = np.linalg.inv(SIGMA)


def _gauss_log_prob(theta):
    r = theta - torch.as_tensor(MU).to(theta)
    return -0.5 * ((r @ torch.as_tensor(PRECISION).to(theta)) * r).sum(1)


def _gauss_grad(theta):
    return -(theta - torch.as_tensor(MU).to(theta)) @ torch.as_tensor(PRECISION).to(theta)


def test_log_density_potential_value_and_gradient():
    theta = torch.randn(4, 2, dtype=torch.float64)
    full = Batch(None, None, torch.ones(4, dtype=torch.long))
    for pot in (LogDensityPotential(_gauss_log_prob), LogDensityPotential(_gauss_log_prob, _gauss_grad)):
        value, grad = pot.loss_sum_and_grad(theta, full)
        torch.testing.assert_close(value, -_gauss_log_prob(theta))
        torch.testing.assert_close(grad, -_gauss_grad(theta))
        torch.testing.assert_close(pot.loss_sum(theta, full), value)
        torch.testing.assert_close(pot.mean_loss(theta), value)
        assert pot.n_data == 1 and not value.requires_grad and not grad.requires_grad
    # a chain whose (Bernoulli) batch missed the one term has loss 0
    empty = Batch(None, None, torch.tensor([1, 0, 1, 0]))
    value, grad = LogDensityPotential(_gauss_log_prob).loss_sum_and_grad(theta, empty)
    assert torch.all(value[[1, 3]] == 0) and torch.all(grad[[1, 3]] == 0)


def test_log_density_potential_without_log_prob_serves_ula_only():
    pot = LogDensityPotential(grad_log_prob=_gauss_grad)
    theta = torch.zeros(2, 2, dtype=torch.float64)
    value, grad = pot.loss_sum_and_grad(theta, Batch())
    assert torch.isnan(value).all()
    torch.testing.assert_close(grad, -_gauss_grad(theta))
    with pytest.raises(ValueError, match="log_prob"):
        pot.loss_sum(theta, Batch())


def test_log_density_potential_bad_arguments():
    with pytest.raises(ValueError, match="log_prob, grad_log_prob"):
        LogDensityPotential()
    with pytest.raises(TypeError, match="grad_log_prob must be a callable"):
        LogDensityPotential(_gauss_log_prob, grad_log_prob=3.0)
    theta = torch.zeros(3, 2, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"log_prob must return shape \(K,\)"):
        LogDensityPotential(lambda th: th).loss_sum(theta)
    with pytest.raises(ValueError, match=r"grad_log_prob must return shape \(K, d\)"):
        LogDensityPotential(grad_log_prob=lambda th: th[:, 0]).loss_sum_and_grad(theta)


def _gauss_chains(sampler, pot, n_samples=4000):
    # one "example" and lambda = 1 on the full data, flat prior: U = -log pi
    theta0 = torch.zeros(8, 2, dtype=torch.float64)
    return run_chains(Target(pot, lambda_=1.0), theta0, list(range(8)), sampler, n_samples=n_samples, burn_in=500)


@pytest.mark.slow
def test_mala_on_log_density_potential_samples_the_gaussian(moment_errors):
    res = _gauss_chains(MALA(step_size=0.5), LogDensityPotential(_gauss_log_prob))
    assert 0.4 < res.acceptance_rate.mean() < 0.75
    errors = moment_errors(res.samples, MU, SIGMA)
    assert max(errors.values()) < 1, errors
    # power: a covariance 20 % off is rejected
    assert max(moment_errors(res.samples, MU, 1.2 * SIGMA).values()) > 1


@pytest.mark.slow
def test_ula_on_log_density_potential_has_the_exact_ula_law(moment_errors):
    """ULA on N(mu, Sigma) with precision A is stationary at N(mu, (A - h A^2 / 2)^{-1}).

    ``x' = x - h A (x - mu) + sqrt(2h) xi`` has ``S = (I - hA) S (I - hA) + 2h I``.
    At h = 0.3 that law is far enough from N(mu, Sigma) to tell them apart,
    so the test checks the gradient's scale, not only its direction.
    """
    h = 0.3
    res = _gauss_chains(SGLD(step_size=h), LogDensityPotential(grad_log_prob=_gauss_grad))
    ula_cov = np.linalg.inv(PRECISION - h * PRECISION @ PRECISION / 2)
    assert np.all(res.step_size == h)
    assert res.acceptance_rate is None  # no Metropolis-Hastings step (a constant 1 before)
    errors = moment_errors(res.samples, MU, ula_cov)
    assert max(errors.values()) < 1, errors
    assert max(moment_errors(res.samples, MU, SIGMA).values()) > 1
