"""MLPSpec: flat parameter order, forward pass and the hand-written backward pass."""

import warnings

import numpy as np
import pytest
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPRegressor

from skgibbs.model import ACTIVATIONS, LOG_VARIANCE_BOUND, LOSSES, MLPSpec, per_example_loss

ACTS = sorted(ACTIVATIONS)


def _data(n=25, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(X[:, 0]) + X[:, 1] ** 2 - 0.5 * X[:, 2]
    return X, y


@pytest.mark.parametrize("activation", ACTS)
@pytest.mark.parametrize("layers", [(5,), (4, 3), ()])
def test_flat_order_matches_sklearn_mlpregressor(activation, layers):
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        mlp = MLPRegressor(hidden_layer_sizes=layers, activation=activation, max_iter=30, random_state=0).fit(
            X, y
        )
    spec = MLPSpec(X.shape[1], layers, activation)
    theta = spec.pack(mlp.coefs_, mlp.intercepts_)
    assert theta.shape == (spec.n_params,)
    out = spec.forward(torch.as_tensor(theta)[None], torch.as_tensor(X))
    np.testing.assert_allclose(out[0].numpy(), mlp.predict(X), rtol=1e-12, atol=1e-12)
    # the same network with several chains and the batched code path
    out3 = spec.forward(torch.as_tensor(theta).expand(3, -1).contiguous(), torch.as_tensor(X))
    np.testing.assert_allclose(out3.numpy(), np.tile(mlp.predict(X), (3, 1)), rtol=1e-12, atol=1e-12)


def test_unpack_pack_round_trip_and_shapes():
    spec = MLPSpec(3, (4, 2), "tanh")
    theta = np.random.default_rng(1).normal(size=spec.n_params)
    coefs, intercepts = spec.unpack(theta)
    assert [c.shape for c in coefs] == [(3, 4), (4, 2), (2, 1)]
    assert [b.shape for b in intercepts] == [(4,), (2,), (1,)]
    np.testing.assert_array_equal(spec.pack(coefs, intercepts), theta)
    # unpack copies the biases: editing them leaves theta alone
    intercepts[0][:] = 0.0
    assert np.all(spec.unpack(theta)[1][0] == theta[12:16])


def test_unpack_of_packed_sklearn_lists_is_identity():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        mlp = MLPRegressor(hidden_layer_sizes=(6, 2), max_iter=5, random_state=0).fit(X, y)
    spec = MLPSpec(3, (6, 2), "relu")
    coefs, intercepts = spec.unpack(spec.pack(mlp.coefs_, mlp.intercepts_))
    for a, b in zip(coefs + intercepts, mlp.coefs_ + mlp.intercepts_):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("activation", ACTS)
def test_empty_hidden_layers_is_linear_model(activation):
    spec = MLPSpec(4, (), activation)
    assert spec.n_params == 5
    assert spec.shapes == [(4, 1)]
    gen = torch.Generator().manual_seed(0)
    theta = torch.randn(3, 5, generator=gen, dtype=torch.float64)
    X = torch.randn(7, 4, generator=gen, dtype=torch.float64)
    expected = X @ theta[:, :4].T + theta[:, 4]
    torch.testing.assert_close(spec.forward(theta, X), expected.T)


@pytest.mark.parametrize(
    "n_features, layers, expected",
    [(1, (100, 100), 10401), (3, (5, 2), 4 * 5 + 6 * 2 + 3), (2, (), 3), (7, (1,), 8 + 2)],
)
def test_n_params(n_features, layers, expected):
    spec = MLPSpec(n_features, layers, "relu")
    assert spec.n_params == expected
    assert spec.fan_in_std().shape == (expected,)


def test_forward_shapes_and_per_chain_inputs():
    spec = MLPSpec(2, (3,), "tanh")
    gen = torch.Generator().manual_seed(0)
    theta = torch.randn(4, spec.n_params, generator=gen, dtype=torch.float64)
    X = torch.randn(4, 6, 2, generator=gen, dtype=torch.float64)  # one batch per chain
    out = spec.forward(theta, X)
    assert out.shape == (4, 6)
    for k in range(4):
        torch.testing.assert_close(out[k], spec.forward(theta[k : k + 1], X[k])[0])


@pytest.mark.parametrize("activation", ACTS)
@pytest.mark.parametrize("chains, n_outputs", [(1, 1), (3, 1), (3, 2)])
def test_forward_without_autograd_is_the_same_bits_and_leaves_its_inputs(activation, chains, n_outputs):
    # outside autograd the activations and the first layer's bias overwrite their tensors in place
    spec = MLPSpec(3, (5, 4), activation, n_outputs=n_outputs)
    gen = torch.Generator().manual_seed(1)
    theta = torch.randn(chains, spec.n_params, generator=gen)
    X = torch.randn(7, 3, generator=gen)
    theta_before, X_before = theta.clone(), X.clone()
    with torch.no_grad():
        fast = spec.forward(theta, X)
    slow = spec.forward(theta.clone().requires_grad_(True), X)
    assert torch.equal(fast, slow.detach())
    assert torch.equal(theta, theta_before) and torch.equal(X, X_before)


def test_fan_in_std_matches_layer_widths():
    spec = MLPSpec(4, (9,), "relu")
    std = spec.fan_in_std().numpy()
    np.testing.assert_allclose(std[: 4 * 9 + 9], 0.5)  # first layer: n_in = 4
    np.testing.assert_allclose(std[4 * 9 + 9 :], 1 / 3)  # output layer: n_in = 9


@pytest.mark.parametrize("activation", ACTS)
def test_init_params_glorot_bounds_and_determinism(activation):
    spec = MLPSpec(3, (5,), activation)
    a = spec.init_params(torch.Generator().manual_seed(3), n_chains=2)
    b = spec.init_params(torch.Generator().manual_seed(3), n_chains=2)
    c = spec.init_params(torch.Generator().manual_seed(4), n_chains=2)
    assert a.shape == (2, spec.n_params) and a.dtype == torch.float64
    assert torch.equal(a, b) and not torch.equal(a, c)
    factor = 2.0 if activation == "logistic" else 6.0
    for (n_in, n_out), W in zip(spec.shapes, spec.unpack(a[0].numpy())[0]):
        assert np.abs(W).max() <= np.sqrt(factor / (n_in + n_out))
    assert spec.init_params(torch.Generator().manual_seed(0), 1, torch.float32).dtype == torch.float32


def _autograd_loss_and_grad(spec, theta, X, y, mask=None):
    th = theta.detach().clone().requires_grad_(True)
    yy = y if y.dim() == 2 else y.expand(theta.shape[0], -1)
    resid = yy - spec.forward(th, X)
    if mask is not None:
        resid = resid * mask
    loss = (resid**2).sum(1)
    (grad,) = torch.autograd.grad(loss.sum(), th)
    return loss.detach(), grad


@pytest.mark.parametrize("activation", ACTS)
@pytest.mark.parametrize("layers", [(), (4,), (5, 3)])
@pytest.mark.parametrize("case", ["single", "single_mask", "shared", "per_chain", "per_chain_mask"])
def test_squared_loss_and_grad_equals_autograd(activation, layers, case):
    spec = MLPSpec(3, layers, activation)
    gen = torch.Generator().manual_seed(11)
    K = 1 if case.startswith("single") else 3
    n = 11
    theta = torch.randn(K, spec.n_params, generator=gen, dtype=torch.float64)
    if case.startswith("per_chain"):
        X = torch.randn(K, n, 3, generator=gen, dtype=torch.float64)
        y = torch.randn(K, n, generator=gen, dtype=torch.float64)
    else:
        X = torch.randn(n, 3, generator=gen, dtype=torch.float64)
        y = torch.randn(n, generator=gen, dtype=torch.float64)
    mask = None
    if case.endswith("mask"):
        mask = (torch.rand(K, n, generator=gen) < 0.6).to(torch.float64)
        mask[:, 0] = 0.0  # at least one padding entry per chain
    loss, grad = spec.squared_loss_and_grad(theta, X, y, mask)
    ref_loss, ref_grad = _autograd_loss_and_grad(spec, theta, X, y, mask)
    assert loss.shape == (K,) and grad.shape == theta.shape
    torch.testing.assert_close(loss, ref_loss, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(grad, ref_grad, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("layers", [(), (4,), (5, 3)])
@pytest.mark.parametrize("mask", [False, True])
def test_chains_on_wide_shared_inputs_take_one_product_with_the_same_results(layers, mask):
    """From SHARED_INPUT_GEMM inputs on, the first layer of several chains is one product: the outputs are
    the batched product's to rounding, and the loss and gradient equal autograd's.

    To rounding, not bit for bit: the two products sum in the same order where MKL's kernels do (Intel
    processors), but on an AMD EPYC they differ in the last bit (3.6e-15 on values of order 10)."""
    from skgibbs import model

    d = model.SHARED_INPUT_GEMM + 3
    spec = MLPSpec(d, layers, "relu")
    gen = torch.Generator().manual_seed(5)
    K, n = 4, 23
    theta = torch.randn(K, spec.n_params, generator=gen, dtype=torch.float64)
    X = torch.randn(n, d, generator=gen, dtype=torch.float64)
    y = torch.randn(n, generator=gen, dtype=torch.float64)
    m = (torch.rand(K, n, generator=gen) < 0.6).to(torch.float64) if mask else None
    assert model._shared(X, K) and not model._shared(X[:, : d - 4], K) and not model._shared(X, 1)
    n_in, n_out, w, _ = next(iter(spec._slices()))
    W = theta[:, w].view(K, n_in, n_out)
    torch.testing.assert_close(model._shared_inputs_times(X, W), torch.matmul(X, W), rtol=1e-14, atol=1e-13)
    G = torch.randn(K, n, n_out, generator=gen, dtype=torch.float64)
    torch.testing.assert_close(model._shared_inputs_grad(X, G), torch.matmul(X.t().unsqueeze(0), G))
    loss, grad = spec.squared_loss_and_grad(theta, X, y, m)
    ref_loss, ref_grad = _autograd_loss_and_grad(spec, theta, X, y, m)
    torch.testing.assert_close(loss, ref_loss, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(grad, ref_grad, rtol=1e-10, atol=1e-12)
    with torch.no_grad():
        out = spec.forward(theta, X)
    torch.testing.assert_close(out, torch.stack([spec.forward(theta[k : k + 1], X)[0] for k in range(K)]))


class _RowsFirst(MLPSpec):
    """The same network forced onto the rows-first code path."""

    def _rows_last(self):
        return False


@pytest.mark.parametrize(
    "layers, n_outputs, loss",
    [((8, 8, 8), 1, "squared"), ((4,), 2, "gaussian"), ((12,), 2, "student"), ((5, 6), 3, "cross_entropy"),
     ((8,), 1, "cross_entropy")],
)  # fmt: skip
@pytest.mark.parametrize("inputs", ["shared", "wide shared", "per chain"])
@pytest.mark.parametrize("weighted", [False, True])
def test_narrow_networks_run_with_the_rows_last_and_the_same_results(
    layers, n_outputs, loss, inputs, weighted
):
    """Hidden layers at most NARROW_WIDTH wide take the rows-last path; its outputs, losses and gradients
    are the rows-first path's to rounding (the same dot products, summed in another order), with shared
    or per-chain inputs, a mask and weights."""
    from skgibbs import model

    d = model.SHARED_INPUT_GEMM + 3 if inputs == "wide shared" else 3
    spec, reference = MLPSpec(d, layers, "relu", n_outputs), _RowsFirst(d, layers, "relu", n_outputs)
    assert spec._rows_last()
    gen = torch.Generator().manual_seed(11)
    K, n = 5, 29
    theta = torch.randn(K, spec.n_params, generator=gen, dtype=torch.float64) * 0.5
    shape = (K, n, d) if inputs == "per chain" else (n, d)
    X = torch.randn(*shape, generator=gen, dtype=torch.float64)
    if loss == "cross_entropy":
        y = torch.randint(0, max(n_outputs, 2), (n,), generator=gen)
    else:
        y = torch.randn(n, generator=gen, dtype=torch.float64)
    m = (torch.rand(K, n, generator=gen) < 0.7).to(torch.float64)
    w = torch.rand(n, generator=gen, dtype=torch.float64) * 2 if weighted else None
    got = spec.loss_and_grad(theta, X, y, m, loss=loss, weight=w)
    expected = reference.loss_and_grad(theta, X, y, m, loss=loss, weight=w)
    for a, b in zip(got, expected):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
    with torch.no_grad():
        out = spec.forward(theta, X)
    torch.testing.assert_close(out, reference.forward(theta, X), rtol=1e-12, atol=1e-12)
    # with autograd on, the forward pass is differentiable and agrees with the hand-written gradient
    if loss == "squared":
        ref_loss, ref_grad = _autograd_loss_and_grad(spec, theta, X, y, m)
        loss_value, grad = spec.squared_loss_and_grad(theta, X, y, m)
        torch.testing.assert_close(loss_value, ref_loss, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(grad, ref_grad, rtol=1e-10, atol=1e-12)


def test_networks_wider_than_narrow_keep_the_rows_first_path():
    """The defaults' 16-wide layers, an embedding and the linear model keep the rows-first products (and
    their draws)."""
    from skgibbs import model
    from skgibbs.model import NumericEmbedding

    assert not MLPSpec(3, (model.NARROW_WIDTH + 1,), "relu")._rows_last()
    assert not MLPSpec(3, (16, 16), "relu")._rows_last()
    assert not MLPSpec(3, (), "relu")._rows_last()
    assert MLPSpec(3, (model.NARROW_WIDTH, 2), "relu")._rows_last()
    embedding = NumericEmbedding("periodic", 3, 4, 4)
    assert not MLPSpec(3, (8,), "relu", embedding=embedding)._rows_last()


def test_squared_loss_and_grad_single_chain_with_per_chain_input():
    # K = 1 with a 3-D batch takes the batched path, not the 2-D fast path
    spec = MLPSpec(2, (4,), "tanh")
    gen = torch.Generator().manual_seed(5)
    theta = torch.randn(1, spec.n_params, generator=gen, dtype=torch.float64)
    X = torch.randn(1, 8, 2, generator=gen, dtype=torch.float64)
    y = torch.randn(1, 8, generator=gen, dtype=torch.float64)
    loss, grad = spec.squared_loss_and_grad(theta, X, y)
    ref_loss, ref_grad = _autograd_loss_and_grad(spec, theta, X, y)
    torch.testing.assert_close(loss, ref_loss)
    torch.testing.assert_close(grad, ref_grad)


@pytest.mark.parametrize("n_outputs", [1, 3])
@pytest.mark.parametrize("layers", [(), (5, 3)])
@pytest.mark.parametrize("case", ["single", "single_mask", "shared", "per_chain_mask"])
def test_cross_entropy_loss_and_grad_equals_autograd(n_outputs, layers, case):
    # the sigmoid head (one output, labels 0/1) and the softmax head (class indices)
    spec = MLPSpec(3, layers, "tanh", n_outputs=n_outputs)
    gen = torch.Generator().manual_seed(7)
    K = 1 if case.startswith("single") else 3
    n, n_classes = 11, max(2, n_outputs)
    theta = torch.randn(K, spec.n_params, generator=gen, dtype=torch.float64)
    shape = (K, n) if case.startswith("per_chain") else (n,)
    X = torch.randn(*shape, 3, generator=gen, dtype=torch.float64)
    y = torch.randint(n_classes, shape, generator=gen).to(torch.float64)
    mask = None
    if case.endswith("mask"):
        mask = (torch.rand(K, n, generator=gen) < 0.6).to(torch.float64)
        mask[:, 0] = 0.0
    loss, grad = spec.loss_and_grad(theta, X, y, mask, loss="cross_entropy")
    th = theta.clone().requires_grad_(True)
    logits = spec.forward(th, X).reshape(K, n, n_outputs)
    log_p = torch.log_softmax(torch.cat([torch.zeros_like(logits), logits], -1), -1) if n_outputs == 1 else (
        torch.log_softmax(logits, -1)
    )
    # one output is the logit of class 1 against a zero logit of class 0
    nll = -log_p.gather(-1, y.long().expand(K, n).unsqueeze(-1))[..., 0]
    ref_loss = (nll if mask is None else nll * mask).sum(1)
    (ref_grad,) = torch.autograd.grad(ref_loss.sum(), th)
    torch.testing.assert_close(loss, ref_loss.detach(), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(grad, ref_grad, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("layers", [(), (5, 3)])
@pytest.mark.parametrize("case", ["single", "single_mask", "shared", "per_chain_mask"])
def test_gaussian_loss_and_grad_equals_autograd(layers, case):
    # two outputs: the mean m and the log-variance s; l = (y - m)^2 e^{-s} + s
    spec = MLPSpec(3, layers, "tanh", n_outputs=2)
    gen = torch.Generator().manual_seed(11)
    K = 1 if case.startswith("single") else 3
    n = 13
    theta = 0.5 * torch.randn(K, spec.n_params, generator=gen, dtype=torch.float64)
    shape = (K, n) if case.startswith("per_chain") else (n,)
    X = torch.randn(*shape, 3, generator=gen, dtype=torch.float64)
    y = torch.randn(shape, generator=gen, dtype=torch.float64)
    mask = None
    if case.endswith("mask"):
        mask = (torch.rand(K, n, generator=gen) < 0.6).to(torch.float64)
        mask[:, 0] = 0.0
    loss, grad = spec.loss_and_grad(theta, X, y, mask, loss="gaussian")
    th = theta.clone().requires_grad_(True)
    out = spec.forward(th, X)
    terms = (y - out[..., 0]) ** 2 * torch.exp(-out[..., 1]) + out[..., 1]
    ref_loss = (terms if mask is None else terms * mask).sum(1)
    (ref_grad,) = torch.autograd.grad(ref_loss.sum(), th)
    torch.testing.assert_close(loss, ref_loss.detach(), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(grad, ref_grad, rtol=1e-10, atol=1e-12)


def test_gaussian_loss_is_twice_the_negative_log_density_and_bounds_the_variance():
    out = torch.tensor([[0.5, np.log(0.25)], [0.0, -50.0]], dtype=torch.float64)
    y = torch.tensor([1.0, 0.0], dtype=torch.float64)
    losses = per_example_loss("gaussian", out, y)
    normal = torch.distributions.Normal(0.5, 0.5)
    assert losses[0].item() == pytest.approx(-2 * normal.log_prob(torch.tensor(1.0)).item() - np.log(2 * np.pi))
    # a log-variance below the bound counts as the bound, and its gradient is zero there
    assert losses[1].item() == pytest.approx(-LOG_VARIANCE_BOUND)
    _, grad = LOSSES["gaussian"](out, y, None)
    assert grad[1, 1].item() == 0.0
