"""The variational kernel: KL in closed form, the two gradient estimators, the optimum of a linear model."""

import numpy as np
import pytest
import torch

from skgibbs.model import MLPSpec, per_example_loss
from skgibbs.samplers import vi


def test_softplus_and_its_inverse_agree():
    sigma = torch.tensor([1e-6, 1e-3, 0.5, 3.0, 40.0], dtype=torch.float64)
    assert torch.allclose(vi.softplus(vi.inverse_softplus(sigma)), sigma, rtol=1e-10)


def test_kl_divergence_matches_monte_carlo():
    gen = torch.Generator().manual_seed(0)
    mu, sigma, s = torch.tensor([0.3, -1.0]), torch.tensor([0.5, 2.0]), torch.tensor([1.0, 1.5])
    w = mu + sigma * torch.randn(400_000, 2, generator=gen, dtype=torch.float64)
    log_q = torch.distributions.Normal(mu, sigma).log_prob(w)
    log_p = torch.distributions.Normal(0.0, s).log_prob(w)
    mc = (log_q - log_p).mean(0)
    se = (log_q - log_p).std(0) / np.sqrt(len(w))
    exact = vi.kl_divergence(mu.double(), sigma.double(), s.double())
    assert torch.all((mc - exact).abs() < 4 * se)


@pytest.mark.parametrize("loss,n_outputs", [("squared", 1), ("cross_entropy", 1), ("cross_entropy", 3)])
def test_local_reparametrisation_has_the_marginal_of_weight_draws(loss, n_outputs):
    """Per example, the expected loss is the same whether weights or pre-activations are drawn."""
    spec = MLPSpec(2, (5,), "tanh", n_outputs)
    gen = torch.Generator().manual_seed(1)
    X = torch.randn(4, 2, generator=gen, dtype=torch.float64)
    y = torch.randint(0, max(2, n_outputs), (4,), generator=gen).double()
    mean = 0.5 * torch.randn(spec.n_params, generator=gen, dtype=torch.float64)
    std = 0.3 * torch.rand(spec.n_params, generator=gen, dtype=torch.float64)
    reps = 20000
    local = torch.stack(
        [per_example_loss(loss, vi._local_forward(spec, mean, std, X, gen), y[None])[0] for _ in range(reps)]
    )
    theta = mean + std * torch.randn(reps, spec.n_params, generator=gen, dtype=torch.float64)
    out = spec.forward(theta, X)
    flat = per_example_loss(loss, out, y.long().expand(out.shape[:2]) if n_outputs > 1 else y.expand(reps, 4))
    se = ((local.var(0) + flat.var(0)) / reps).sqrt()
    assert torch.all((local.mean(0) - flat.mean(0)).abs() < 4 * se)


def test_local_gradients_have_lower_variance():
    spec = MLPSpec(3, (20,))
    gen = torch.Generator().manual_seed(2)
    X = torch.randn(64, 3, generator=gen)
    y = torch.randn(64, generator=gen)
    mean = 0.3 * torch.randn(spec.n_params, generator=gen)
    std = torch.full((spec.n_params,), 0.2)

    def grads(local):
        out = []
        for _ in range(200):
            m = mean.clone().requires_grad_(True)
            val = vi.expected_loss_sample(spec, "squared", m, std, X, y, gen, local=local)
            out.append(torch.autograd.grad(val, m)[0])
        return torch.stack(out)

    g_local, g_flat = grads(True), grads(False)
    # same expectation, smaller spread (summed over coordinates)
    assert g_local.var(0).sum() < 0.5 * g_flat.var(0).sum()


def _linear_problem(seed=0, n=120, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[:, 1] += 0.7 * X[:, 0]  # correlated columns: the mean-field optimum differs from the marginals
    y = X @ np.array([1.0, -0.5, 0.3]) + 0.5 + 0.8 * rng.normal(size=n)
    return X, y


def mean_field_optimum(X, y, temperature, prior_std, eta):
    """Mean-field optimum of ELBO_eta for exp(-sum_i (y_i - x_i w - b)^2 / T) and N(0, s^2 I).

    The tempered ELBO is maximised over all q by the Gaussian N(m, Lambda^-1) with
    Lambda = I / s^2 + 2 X'X / (eta T), m = Lambda^-1 2 X'y / (eta T); the mean-field
    optimum of a Gaussian keeps its mean and takes the variances 1 / Lambda_jj.
    """
    Xa = np.c_[X, np.ones(len(X))]
    precision = np.eye(Xa.shape[1]) / prior_std**2 + 2 * Xa.T @ Xa / (eta * temperature)
    mean = np.linalg.solve(precision, 2 * Xa.T @ y / (eta * temperature))
    return mean, 1 / np.sqrt(np.diag(precision)), np.sqrt(np.diag(np.linalg.inv(precision)))


@pytest.mark.parametrize("eta", [1.0, 2.5])
@pytest.mark.parametrize("local", [True, False])
def test_fit_reaches_the_mean_field_optimum_of_a_linear_model(eta, local):
    X, y = _linear_problem()
    T, s0 = 0.6, 0.7
    # weight draws give noisier gradients than the local reparametrisation: four per step
    cfg = vi.VIConfig(
        lam=len(y) / T,
        eta=eta,
        n_iter=3000,
        batch_size=len(y),
        early_stopping=False,
        local=local,
        n_mc=1 if local else 4,
    )
    res = vi.fit(
        MLPSpec(3, ()),
        torch.as_tensor(X, dtype=torch.float32),
        torch.as_tensor(y, dtype=torch.float32),
        torch.zeros(4),
        s0,
        cfg,
        torch.Generator().manual_seed(3),
    )
    mean, sd, marginal_sd = mean_field_optimum(X, y, T, s0, eta)
    # the mean-field sd is clearly below the marginal one here, so the test tells them apart
    assert np.max(marginal_sd / sd) > 1.2
    # tolerance of the stochastic optimisation: 3000 steps end with Adam's rate at 1e-4; over
    # four seeds the means stayed within 0.025 sd (local) and 0.055 sd (weight draws) of the
    # optimum, the sds within 3.5%
    assert np.max(np.abs(res.mean - mean) / sd) < 0.08
    assert np.max(np.abs(res.std / sd - 1)) < 0.06
    assert res.n_iter == 3000 and not res.stopped_early and len(res.validation_objective) == 0
    assert np.isfinite(res.elbo).all() and res.kl > 0


def test_early_stopping_holds_out_data_and_keeps_the_best():
    X, y = _linear_problem(n=400)
    cfg = vi.VIConfig(lam=400.0, n_iter=5000, batch_size=64, check_every=20, patience=5)
    res = vi.fit(
        MLPSpec(3, ()),
        torch.as_tensor(X, dtype=torch.float32),
        torch.as_tensor(y, dtype=torch.float32),
        torch.zeros(4),
        1.0,
        cfg,
        torch.Generator().manual_seed(0),
    )
    assert res.stopped_early and res.n_iter < 5000
    assert len(res.validation_objective) == res.n_iter // 20


def test_scale_changes_the_coordinates_not_the_prior_in_theta():
    """With theta = scale * w and the prior given in theta, the optimum in theta is unchanged."""
    X, y = _linear_problem()
    kw = dict(lam=200.0, n_iter=3000, batch_size=len(y), early_stopping=False)
    args = (MLPSpec(3, ()), torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y, dtype=torch.float32))
    a = vi.fit(*args, torch.zeros(4), 0.5, vi.VIConfig(**kw), torch.Generator().manual_seed(0))
    scale = torch.tensor([0.5, 1.0, 1.0, 2.0])
    b = vi.fit(*args, torch.zeros(4), 0.5, vi.VIConfig(**kw), torch.Generator().manual_seed(0), scale=scale)
    assert np.allclose(a.mean, b.mean, atol=0.05) and np.allclose(a.std, b.std, rtol=0.08)


def test_divergence_raises():
    X, y = _linear_problem()
    cfg = vi.VIConfig(lam=1e30, n_iter=50, batch_size=len(y), early_stopping=False, learning_rate=1e6)
    # the message names the remedy, the sampler's learning_rate (MeanFieldVI(learning_rate=...));
    # the estimators' vi_learning_rate is gone
    with pytest.raises(FloatingPointError, match="learning_rate"):
        vi.fit(
            MLPSpec(3, (4,)),
            torch.as_tensor(X * 1e6, dtype=torch.float32),
            torch.as_tensor(y, dtype=torch.float32),
            torch.zeros(MLPSpec(3, (4,)).n_params),
            1.0,
            cfg,
            torch.Generator().manual_seed(0),
        )


def test_sample_draws_from_q():
    gen = torch.Generator().manual_seed(0)
    d = vi.sample(np.array([1.0, -2.0]), np.array([0.5, 3.0]), 100_000, gen, dtype=torch.float64).numpy()
    assert np.allclose(d.mean(0), [1.0, -2.0], atol=0.05) and np.allclose(d.std(0), [0.5, 3.0], rtol=0.02)


def test_step_is_pure_and_descends():
    X, y = _linear_problem()
    Xt, yt = torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y, dtype=torch.float32)
    spec = MLPSpec(3, ())
    ones = torch.ones(4)
    params = vi.VIParams(lam=200.0, eta=ones, prior_std=ones, scale=ones, learning_rate=0.05)
    state = vi.init(torch.zeros(4), params)
    mu0 = state.mu.clone()
    gen = torch.Generator().manual_seed(0)
    new, info = vi.step(gen, state, spec, Xt, yt, params)
    assert torch.equal(state.mu, mu0) and new.adam.t == 1 and np.isfinite(info.elbo)
    for _ in range(300):
        new, _ = vi.step(gen, new, spec, Xt, yt, params)
    before = vi.held_out_objective(gen, state, spec, Xt, yt, params, n_draws=64)
    after = vi.held_out_objective(gen, new, spec, Xt, yt, params, n_draws=64)
    assert after < before
