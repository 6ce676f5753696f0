"""The Stein operator (3.3): exact batched derivatives of an MLP and the score callables."""

import numpy as np
import pytest
import torch
from torch.func import hessian, jacrev, vmap

from skgibbs import ControlVariateWarning
from skgibbs.control_variates import STEIN_ACTIVATIONS, evaluate_score, mlp_derivatives, stein_operator


def _net(sizes, seed=0, scale=1.0):
    gen = torch.Generator().manual_seed(seed)
    shapes = list(zip(sizes[:-1], sizes[1:]))
    coefs = [scale * torch.randn(a, b, generator=gen, dtype=torch.float64) for a, b in shapes]
    intercepts = [scale * torch.randn(b, generator=gen, dtype=torch.float64) for b in sizes[1:]]
    return coefs, intercepts


def _phi(coefs, intercepts, activation):
    act = STEIN_ACTIVATIONS[activation]

    def phi(x):  # one point, plain forward pass
        a = x
        for W, b in zip(coefs[:-1], intercepts[:-1]):
            a = act(a @ W + b)[0]
        return (a @ coefs[-1] + intercepts[-1])[0]

    return phi


@pytest.mark.parametrize("activation", sorted(STEIN_ACTIVATIONS))
@pytest.mark.parametrize("hidden", [(), (5,), (4, 3), (3, 4, 2)])
def test_derivatives_match_autograd_hessian(activation, hidden):
    d = 3
    coefs, intercepts = _net((d, *hidden, 1), seed=len(hidden))
    X = torch.randn(7, d, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    phi = _phi(coefs, intercepts, activation)
    value, grad, lap = mlp_derivatives(X, coefs, intercepts, activation)
    torch.testing.assert_close(value, vmap(phi)(X), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(grad, vmap(jacrev(phi))(X), rtol=1e-10, atol=1e-10)
    H = vmap(hessian(phi))(X)
    torch.testing.assert_close(lap, H.diagonal(dim1=1, dim2=2).sum(1), rtol=1e-10, atol=1e-10)
    assert mlp_derivatives(X, coefs, intercepts, activation, value=False)[0] is None


def test_laplacian_matches_finite_differences():
    d, h = 4, 1e-4
    coefs, intercepts = _net((d, 6, 5, 1), seed=3, scale=0.7)
    X = torch.randn(5, d, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    value, grad, lap = mlp_derivatives(X, coefs, intercepts, "tanh")
    f = lambda Z: mlp_derivatives(Z, coefs, intercepts, "tanh")[0]  # noqa: E731
    eye = torch.eye(d, dtype=torch.float64)
    fd_grad = torch.stack([(f(X + h * e) - f(X - h * e)) / (2 * h) for e in eye], 1)
    fd_lap = sum((f(X + h * e) - 2 * value + f(X - h * e)) / h**2 for e in eye)
    torch.testing.assert_close(grad, fd_grad, rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(lap, fd_lap, rtol=1e-5, atol=1e-5)


def test_hand_derived_polynomial_networks():
    # sum_k a_k (w_k . x + b_k)_+^p with b_k large: every unit is active on the points, so
    # phi is a polynomial with Laplacian p (p - 1) sum_k a_k (w_k . x + b_k)^(p - 2) |w_k|^2
    rng = np.random.default_rng(0)
    d, m = 3, 4
    W = rng.normal(size=(d, m))
    b = 20.0 + rng.uniform(size=m)
    a = rng.normal(size=m)
    X = rng.uniform(-1, 1, size=(6, d))
    z = X @ W + b
    coefs = [torch.tensor(W), torch.tensor(a[:, None])]
    intercepts = [torch.tensor(b), torch.zeros(1, dtype=torch.float64)]
    norms = (W**2).sum(0)
    for name, p in (("requ", 2), ("recu", 3)):
        value, grad, lap = mlp_derivatives(torch.tensor(X), coefs, intercepts, name)
        np.testing.assert_allclose(value.numpy(), (z**p) @ a, rtol=1e-12)
        np.testing.assert_allclose(grad.numpy(), (p * z ** (p - 1) * a) @ W.T, rtol=1e-12)
        np.testing.assert_allclose(lap.numpy(), (p * (p - 1) * z ** (p - 2) * norms) @ a, rtol=1e-12)
        score = -X
        g = stein_operator(torch.tensor(X), torch.tensor(score), coefs, intercepts, name)
        np.testing.assert_allclose(g.numpy(), lap.numpy() + (score * grad.numpy()).sum(1), rtol=1e-12)


@pytest.mark.parametrize(("activation", "hidden"), [("tanh", (8, 8)), ("recu", (8,)), ("requ", (6, 4))])
def test_stein_control_variate_has_mean_zero_under_the_target(activation, hidden):
    # pi(g_phi) = 0 by integration by parts: exact i.i.d. draws of N(mu, Sigma)
    rng = np.random.default_rng(0)
    mu, cov = np.array([0.5, -1.0]), np.array([[1.0, 0.3], [0.3, 0.5]])
    X = rng.multivariate_normal(mu, cov, size=200_000)
    coefs, intercepts = _net((2, *hidden, 1), seed=4, scale=0.5)
    Xt = torch.tensor(X)
    P = np.linalg.inv(cov)
    g = stein_operator(Xt, torch.tensor(-(X - mu) @ P), coefs, intercepts, activation).numpy()
    se = g.std() / np.sqrt(len(g))
    assert abs(g.mean()) < 4 * se
    # power: the score of a shifted Gaussian breaks the identity by many standard errors
    wrong = stein_operator(Xt, torch.tensor(-(X - mu - 0.3) @ P), coefs, intercepts, activation)
    wrong = wrong.numpy()
    assert abs(wrong.mean()) > 10 * wrong.std() / np.sqrt(len(wrong))


def test_relu_warns_and_has_no_laplacian():
    coefs, intercepts = _net((2, 5, 1))
    X = torch.randn(10, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    with pytest.warns(ControlVariateWarning, match="not twice continuously differentiable"):
        g = stein_operator(X, -X, coefs, intercepts, "relu")
    _, grad, lap = mlp_derivatives(X, coefs, intercepts, "relu")
    assert torch.all(lap == 0)
    torch.testing.assert_close(g, (-X * grad).sum(1))


def test_stein_operator_is_differentiable_in_the_parameters():
    coefs, intercepts = _net((2, 3, 2, 1), seed=5, scale=0.5)
    X = torch.randn(6, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    params = [p.requires_grad_(True) for pair in zip(coefs, intercepts) for p in pair]

    def g(*flat):
        return stein_operator(X, -X, list(flat[0::2]), list(flat[1::2]), "tanh")

    assert torch.autograd.gradcheck(g, tuple(params))


def test_unknown_activation_is_rejected():
    coefs, intercepts = _net((2, 3, 1))
    with pytest.raises(ValueError, match="activation must be one of"):
        mlp_derivatives(torch.zeros(2, 2, dtype=torch.float64), coefs, intercepts, "sigmoid")


# ---------------------------------------------------------------- the score
def _gauss_grad(X):
    return -2.0 * X


def test_score_from_log_prob_equals_score_from_gradient():
    X = np.random.default_rng(0).normal(size=(20, 3))
    by_autograd = evaluate_score(X, log_prob=lambda x: -(x**2).sum(1))
    np.testing.assert_allclose(by_autograd, evaluate_score(X, grad_log_prob=_gauss_grad), rtol=1e-14)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({}, ValueError, "exactly one of grad_log_prob"),
        ({"grad_log_prob": _gauss_grad, "log_prob": lambda x: -x.sum(1)}, ValueError, "exactly one of"),
        ({"grad_log_prob": "score"}, TypeError, "grad_log_prob must be a callable"),
        ({"grad_log_prob": lambda X: X[:, :1]}, ValueError, r"must give gradients of shape \(4, 2\)"),
        ({"grad_log_prob": lambda X: np.where(X > 0, np.nan, X)}, ValueError, "grad_log_prob gave NaN"),
        ({"log_prob": lambda x: -x}, ValueError, r"log_prob must return a torch tensor of shape \(4,\)"),
        ({"log_prob": lambda x: torch.zeros(len(x))}, ValueError, "differentiable torch operations"),
        ({"log_prob": lambda x: torch.log(x).sum(1)}, ValueError, "log_prob gave NaN"),
        ({"log_prob": lambda x: (x - 1.0).abs().sqrt().sum(1)}, ValueError, "log_prob gave NaN or inf"),
    ],
)
def test_bad_score_callables_are_named(kwargs, error, match):
    X = np.array([[1.0, -1.0], [2.0, 0.5], [-0.5, 0.1], [0.3, 0.2]])
    with pytest.raises(error, match=match):
        evaluate_score(X, **kwargs)
