"""The variational kernel: KL in closed form, the two gradient estimators, the optimum of a linear model."""

import numpy as np
import pytest
import torch

from skgibbs.model import MLPSpec, per_example_loss
from skgibbs.potential import MLPPotential
from skgibbs.samplers import Target, vi


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
        [per_example_loss(loss, vi.kernel._local_forward(spec, mean, std, X, gen), y[None])[0] for _ in range(reps)]
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
    # tolerance of the stochastic optimisation: the last 900 of the 3000 steps are averaged; over
    # four seeds the means stayed within 0.025 sd (local) and 0.055 sd (weight draws) of the
    # optimum, the sds within 3.5%
    assert np.max(np.abs(res.mean - mean) / sd) < 0.08
    assert np.max(np.abs(res.std / sd - 1)) < 0.06
    assert res.n_iter == 3000 and not res.stopped_early and len(res.window_objective) == 0
    assert np.isfinite(res.elbo).all() and res.kl > 0


def test_early_stopping_starts_the_averaged_decay_at_the_plateau():
    X, y = _linear_problem(n=400)
    cfg = vi.VIConfig(lam=400.0, n_iter=20000, batch_size=64, check_every=20, patience=5, min_decay_iter=100)
    res = vi.fit(
        MLPSpec(3, ()),
        torch.as_tensor(X, dtype=torch.float32),
        torch.as_tensor(y, dtype=torch.float32),
        torch.zeros(4),
        1.0,
        cfg,
        torch.Generator().manual_seed(0),
    )
    assert res.stopped_early and res.n_iter < 20000
    # the plateau after k windows, then a decay phase of decay_fraction of all the steps
    k = len(res.window_objective)
    decay = max(cfg.min_decay_iter, int(np.ceil(cfg.decay_fraction / (1 - cfg.decay_fraction) * 20 * k)))
    assert k > cfg.patience and res.n_iter == 20 * k + decay
    # the windows' means are those of the steps' estimates of -ELBO
    assert np.allclose(res.window_objective, -res.elbo[: 20 * k].reshape(k, 20).mean(1))


def test_plateau_rule_needs_a_clear_drop():
    """A steady fall of a few standard errors per window keeps going; noise alone stops after patience."""
    rng = np.random.default_rng(0)
    falling, flat = vi.optimize._Plateau(3), vi.optimize._Plateau(3)
    for k in range(20):
        assert not falling.update(1000.0 - 5.0 * k + rng.normal(size=100))
    assert not any(flat.update(rng.normal(size=100)) for _ in range(3))
    assert flat.update(rng.normal(size=100)) or flat.update(rng.normal(size=100))


def _diag_ggn_by_jacobians(spec, loss, mean, X, y):
    """sum_i diag(J_i' H_i J_i) from the per-example Jacobians of the outputs, one example at a time."""
    out = []
    for i in range(X.shape[0]):
        jac = torch.autograd.functional.jacobian(lambda t: spec.forward(t[None], X[i : i + 1])[0].reshape(-1), mean)
        f = spec.forward(mean[None], X[i : i + 1])[0].reshape(-1)
        if loss == "squared":
            H = 2 * torch.eye(1, dtype=f.dtype)
        elif f.numel() == 1:
            p = torch.sigmoid(f)
            H = (p * (1 - p)).reshape(1, 1)
        else:
            p = torch.softmax(f, 0)
            H = torch.diag(p) - torch.outer(p, p)
        out.append(torch.einsum("cj,cd,dj->j", jac, H, jac))
    return torch.stack(out).sum(0)


@pytest.mark.parametrize("loss,n_outputs", [("squared", 1), ("cross_entropy", 1), ("cross_entropy", 3)])
def test_laplace_std_is_the_gauss_newton_diagonal(loss, n_outputs):
    spec = MLPSpec(3, (5, 4), "tanh", n_outputs)
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(12, 3, generator=gen, dtype=torch.float64)
    y = torch.randint(0, max(2, n_outputs), (12,), generator=gen).double()
    mean = 0.7 * torch.randn(spec.n_params, generator=gen, dtype=torch.float64)
    eta = torch.rand(spec.n_params, generator=gen, dtype=torch.float64) + 0.5
    prior = torch.full((spec.n_params,), 0.8, dtype=torch.float64)
    lam = 30.0
    ggn = _diag_ggn_by_jacobians(spec, loss, mean, X, y)
    expected = (lam * ggn / 12 / eta + prior**-2).rsqrt()
    assert torch.allclose(vi.laplace_std(spec, loss, mean, X, y, lam, eta, prior), expected, rtol=1e-10)
    # on 12 of 48 examples, the diagonal is scaled to the 48
    scaled = vi.laplace_std(spec, loss, mean, X, y, lam, eta, prior, n_data=48)
    assert torch.allclose(scaled, (lam * ggn / 12 / eta + prior**-2).rsqrt(), rtol=1e-10)


def test_laplace_std_is_the_mean_field_optimum_of_a_linear_model():
    X, y = _linear_problem()
    T, s0, eta = 0.6, 0.7, 2.5
    _, sd, _ = mean_field_optimum(X, y, T, s0, eta)
    ones = torch.ones(4, dtype=torch.float64)
    got = vi.laplace_std(
        MLPSpec(3, ()), "squared", torch.zeros(4, dtype=torch.float64), torch.as_tensor(X), torch.as_tensor(y),
        len(y) / T, eta * ones, s0 * ones,
    )  # fmt: skip
    assert np.allclose(got.numpy(), sd, rtol=1e-10)


def test_squared_loss_integrates_the_output_layer_out():
    """The local estimate with the output layer integrated out has the expectation of weight draws."""
    spec = MLPSpec(2, (5,), "tanh")
    gen = torch.Generator().manual_seed(1)
    X = torch.randn(6, 2, generator=gen, dtype=torch.float64)
    y = torch.randn(6, generator=gen, dtype=torch.float64)
    mean = 0.5 * torch.randn(spec.n_params, generator=gen, dtype=torch.float64)
    std = 0.3 * torch.rand(spec.n_params, generator=gen, dtype=torch.float64)
    reps = 20000
    local = torch.stack([vi.expected_loss_sample(spec, "squared", mean, std, X, y, gen) for _ in range(reps)])
    flat = torch.stack([vi.expected_loss_sample(spec, "squared", mean, std, X, y, gen, local=False) for _ in range(reps)])
    assert abs(local.mean() - flat.mean()) < 4 * ((local.var() + flat.var()) / reps).sqrt()
    assert local.var() < 0.5 * flat.var()
    # a linear model: no draw at all, the expected loss in closed form
    lin = MLPSpec(2, ())
    m, s = mean[:3], std[:3]
    exact = ((y - X @ m[:2] - m[2]) ** 2 + (X**2) @ s[:2] ** 2 + s[2] ** 2).sum()
    assert torch.allclose(vi.expected_loss_sample(lin, "squared", m, s, X, y, gen), exact)


def test_gaussian_loss_integrates_the_output_layer_out():
    """With a mean and a log-variance output, the integrated local estimate has the expectation of weight draws."""
    spec = MLPSpec(2, (5,), "tanh", n_outputs=2)
    gen = torch.Generator().manual_seed(2)
    X = torch.randn(6, 2, generator=gen, dtype=torch.float64)
    y = torch.randn(6, generator=gen, dtype=torch.float64)
    mean = 0.5 * torch.randn(spec.n_params, generator=gen, dtype=torch.float64)
    std = 0.3 * torch.rand(spec.n_params, generator=gen, dtype=torch.float64)
    reps = 20000
    local = torch.stack([vi.expected_loss_sample(spec, "gaussian", mean, std, X, y, gen) for _ in range(reps)])
    flat = torch.stack(
        [vi.expected_loss_sample(spec, "gaussian", mean, std, X, y, gen, local=False) for _ in range(reps)]
    )
    assert abs(local.mean() - flat.mean()) < 4 * ((local.var() + flat.var()) / reps).sqrt()
    assert local.var() < 0.5 * flat.var()
    # a linear model: the expected loss in closed form (mean-field: f and s independent normals)
    lin = MLPSpec(2, (), n_outputs=2)
    m, s = mean[:6], std[:6]  # flat order: W (2 x 2) row-major, then the two intercepts
    W, b, Wv, bv = m[:4].view(2, 2), m[4:6], s[:4].view(2, 2) ** 2, s[4:6] ** 2
    mf, ms = X @ W[:, 0] + b[0], X @ W[:, 1] + b[1]
    vf, vs = (X**2) @ Wv[:, 0] + bv[0], (X**2) @ Wv[:, 1] + bv[1]
    exact = (((y - mf) ** 2 + vf) * torch.exp(-ms + vs / 2) + ms).sum()
    assert torch.allclose(vi.expected_loss_sample(lin, "gaussian", m, s, X, y, gen), exact)


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


def _thrown_off(monkeypatch, at):
    """Make the steps ``at`` (a set of step numbers) throw ``q``'s means far off, as a blown-up update does."""
    real, calls = vi.optimize.step, [0]

    def step(generators, state, target, params):
        new, info = real(generators, state, target, params)
        calls[0] += 1
        if calls[0] - 1 in at:
            new = new._replace(mu=new.mu + 1e3)
        return new, info

    monkeypatch.setattr(vi.optimize, "step", step)


def _fit_linear(n_iter=3000):
    X, y = _linear_problem()
    cfg = vi.VIConfig(lam=len(y) / 0.6, n_iter=n_iter, batch_size=len(y), early_stopping=False)
    res = vi.fit(MLPSpec(3, ()), torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y, dtype=torch.float32),
                 torch.zeros(4), 0.7, cfg, torch.Generator().manual_seed(3))  # fmt: skip
    return res, mean_field_optimum(X, y, 0.6, 0.7, 1.0)


def test_a_step_that_throws_q_off_goes_back_to_a_checkpoint(monkeypatch):
    # one blown-up update inside the averaged decay phase (the last 30% of the 3000 steps): without the
    # rollback it would enter the average of the iterates; with it the fit reaches the optimum as a clean one
    _thrown_off(monkeypatch, {2500})
    res, (mean, sd, _) = _fit_linear()
    assert res.rollbacks == 1 and res.n_iter == 3000
    assert res.elbo[2501] < np.median(res.elbo[2400:2500]) - 1e6  # the step after it, evaluated off course
    assert np.max(np.abs(res.mean - mean) / sd) < 0.08
    assert np.max(np.abs(res.std / sd - 1)) < 0.06


def test_one_low_estimate_is_an_outlying_batch_not_a_divergence(monkeypatch):
    # a batch of outlying rows gives one estimate far below the others, with q where it was: no rollback,
    # and the same fit to the bit
    clean, _ = _fit_linear()
    real, calls = vi.optimize.step, [0]

    def step(generators, state, target, params):
        new, info = real(generators, state, target, params)
        calls[0] += 1
        return new, (info._replace(elbo=info.elbo - 1e9) if calls[0] == 2001 else info)

    monkeypatch.setattr(vi.optimize, "step", step)
    res, _ = _fit_linear()
    assert res.rollbacks == 0 and res.elbo[2000] < clean.elbo[2000] - 1e8
    np.testing.assert_array_equal(res.mean, clean.mean)
    np.testing.assert_array_equal(res.std, clean.std)


def test_five_rollbacks_at_most_then_non_finite_parameters_raise(monkeypatch):
    # q thrown off at every step from step 500 on: five rollbacks, then the means grow by 1e3 a step
    _thrown_off(monkeypatch, set(range(500, 3000)))
    res, (mean, sd, _) = _fit_linear()
    assert res.rollbacks == 5 and np.max(np.abs(res.mean - mean) / sd) > 1e3
    def non_finite(*args):
        raise FloatingPointError("non-finite")

    monkeypatch.setattr(vi.optimize, "step", non_finite)
    with pytest.raises(FloatingPointError, match="after 0 returns to a checkpoint.*learning_rate"):
        _fit_linear()


def test_sample_draws_from_q():
    gen = torch.Generator().manual_seed(0)
    d = vi.sample(np.array([1.0, -2.0]), np.array([0.5, 3.0]), 100_000, gen, dtype=torch.float64).numpy()
    assert np.allclose(d.mean(0), [1.0, -2.0], atol=0.05) and np.allclose(d.std(0), [0.5, 3.0], rtol=0.02)


def test_step_is_pure_and_descends():
    X, y = _linear_problem()
    Xt, yt = torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y, dtype=torch.float32)
    spec = MLPSpec(3, ())
    target = Target(MLPPotential(spec, Xt, yt), lambda_=200.0)
    ones = torch.ones(4)
    params = vi.VIParams(lam=200.0, eta=ones, prior_std=ones, scale=ones, learning_rate=0.05)
    state = vi.init(torch.zeros(4), params)
    mu0 = state.mu.clone()
    gen = [torch.Generator().manual_seed(0)]
    new, info = vi.step(gen, state, target, params)
    assert torch.equal(state.mu, mu0) and new.adam.t == 1 and np.isfinite(info.elbo)
    for _ in range(300):
        new, _ = vi.step(gen, new, target, params)
    before = vi.held_out_objective(gen, state, target, params, n_draws=64)
    after = vi.held_out_objective(gen, new, target, params, n_draws=64)
    assert after < before


def test_gamma_factors_of_a_hierarchical_prior_reach_the_coordinate_ascent_fixed_point():
    """Mean-field q(theta) q(tau) on a linear model with ARD: the fit against coordinate ascent run here."""
    from skgibbs.priors import HierarchicalPrior

    X, y = _linear_problem(seed=1)
    T, eta = 0.6, 1.0
    prior = HierarchicalPrior.for_network(MLPSpec(3, ()), "ard", torch.full((4,), 0.7), 1.0)
    a, b, group = prior.shape.numpy(), prior.rate.numpy(), prior.group.numpy()
    Xa = np.c_[X, np.ones(len(X))]
    precision = a / b
    for _ in range(500):  # coordinate ascent: q(theta) given E[tau], then q(tau) given q(theta)
        lam = np.diag(precision[group]) + 2 * Xa.T @ Xa / (eta * T)
        mean = np.linalg.solve(lam, 2 * Xa.T @ y / (eta * T))
        sd = 1 / np.sqrt(np.diag(lam))
        shape = a + eta * np.bincount(group, minlength=len(a)) / 2
        rate = b + eta * np.bincount(group, mean**2 + sd**2, minlength=len(a)) / 2
        precision = shape / rate
    cfg = vi.VIConfig(lam=len(y) / T, eta=eta, n_iter=3000, batch_size=len(y), early_stopping=False)
    res = vi.fit(
        MLPSpec(3, ()),
        torch.as_tensor(X, dtype=torch.float32),
        torch.as_tensor(y, dtype=torch.float32),
        torch.zeros(4),
        prior.std,
        cfg,
        torch.Generator().manual_seed(3),
        hyper=prior,
    )
    # the squared loss of a linear model is integrated exactly (no Monte Carlo noise): the fit lands on the
    # fixed point (measured: means within 4e-6 sd, rates within 2e-7), and the rates moved well off the prior
    assert np.max(np.abs(res.mean - mean) / sd) < 1e-3
    assert np.max(np.abs(res.std / sd - 1)) < 1e-3
    np.testing.assert_allclose(res.precision_shape, shape)
    np.testing.assert_allclose(res.precision_rate, rate, rtol=1e-3)
    assert np.min(rate / b) > 1.1
