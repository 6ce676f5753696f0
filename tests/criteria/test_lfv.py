"""Langevin functional variance (paper 004 §3): ground truth on ridge regression and model adapters."""

import warnings

import numpy as np
import pytest
import torch
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skgibbs import GibbsMLPRegressor
from skgibbs.criteria import (
    LFVResult,
    expected_functional_variance_linear,
    functional_variance_linear,
    gibbs_generalization_gap_linear,
    langevin_functional_variance,
    langevin_fv_chains,
)
from skgibbs.criteria._adapters import langevin_problem
from skgibbs.potential import LinearPotential


@pytest.mark.slow
def test_lfv_converges_to_expected_fv_of_lemma_2(spectral_design):
    # p = 1.5 n, spectrum (iii), K responses; each process starts at its ridge estimate (§4.1)
    n, p, alpha, K, T = 40, 60, 0.5, 64, 40000
    X = spectral_design(n, p, 0.5, 0)
    rng = np.random.default_rng(1)
    beta0 = rng.normal(size=p) / np.sqrt(p)
    Y = (X @ beta0)[None, :] + rng.normal(size=(K, n))
    start = np.linalg.solve(X.T @ X / n + alpha * np.eye(p), X.T @ Y.T / n).T
    lam_max = np.linalg.svd(X, compute_uv=False)[0] ** 2 + n * alpha  # hess U, sigma^2 = 1
    # delta lambda_max = 0.02: the ULA bias of the stationary variance is below 0.5 %
    out = langevin_fv_chains(
        LinearPotential(torch.tensor(X), torch.tensor(Y), fit_intercept=False), torch.tensor(start),
        noise_variance=1.0, alpha=alpha, step_size=0.02 / lam_max, n_iter=T, burn_in=1000, seeds=range(K),
    )  # fmt: skip
    assert out.lfv.shape == (K,) and out.pointwise.shape == (K, n) and not out.n_refused.any()
    expected = expected_functional_variance_linear(X, beta0, alpha, 1.0)
    assert abs(out.lfv.mean() - expected) < 4 * out.lfv.std() / np.sqrt(K)
    # paired with the exact FV of each response: only the chains' own Monte Carlo error is left
    diff = out.lfv - functional_variance_linear(X, Y.T, alpha, 1.0)
    assert abs(diff.mean()) < 4 * diff.std() / np.sqrt(K)
    assert diff.std() < 0.1 * expected


def test_lfv_tracks_the_gap_across_alpha(spectral_design):
    X = spectral_design(30, 45, 0.5, 2)
    y = X @ (np.random.default_rng(2).normal(size=45) / np.sqrt(45)) + np.random.default_rng(3).normal(size=30)
    lfv, gap = [], []
    for alpha in (0.03, 0.3, 3.0):
        model = Ridge(alpha=30 * alpha, fit_intercept=False).fit(X, y)
        res = langevin_functional_variance(
            model, X, y, alpha=alpha, noise_variance=1.0, n_iter=3000, burn_in=300, random_state=0
        )
        lfv.append(res.lfv)
        gap.append(gibbs_generalization_gap_linear(X, alpha))
    assert np.all(np.diff(lfv) < 0) and np.all(np.diff(gap) < 0)
    assert lfv[0] > 3 * lfv[-1]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.2 * rng.normal(size=60)
    return X, y


def test_result_fields_and_scale(data):
    X, y = data
    res = langevin_functional_variance(Ridge(alpha=0.5).fit(X, y), X, y, alpha=0.01, n_iter=500, burn_in=50,
                                       random_state=0)  # fmt: skip
    assert isinstance(res, LFVResult)
    assert res.pointwise.shape == (60,) and res.lfv == pytest.approx(res.pointwise.sum())
    assert res.waic == pytest.approx(res.train_loss + res.lfv / 60)
    assert res.lfv_loss == pytest.approx(0.5 * np.log(2 * np.pi * res.noise_variance) + res.waic)
    assert not hasattr(res, "generalization_loss")  # an estimator's generalization_loss_ is WAIC
    resid = y - Ridge(alpha=0.5).fit(X, y).predict(X)
    assert res.noise_variance == pytest.approx(resid @ resid / 59)  # RSS / (n - 1), §4.3
    assert res.train_loss == pytest.approx(np.mean(resid**2) / (2 * res.noise_variance))
    # rescaling y rescales the parameters, sigma^2 and the auto step together: LFV is unchanged
    big = langevin_functional_variance(Ridge(alpha=0.5).fit(X, 1e3 * y), X, 1e3 * y, alpha=0.01, n_iter=500,
                                       burn_in=50, random_state=0)  # fmt: skip
    assert big.lfv == pytest.approx(res.lfv, rel=1e-6)
    assert big.noise_variance == pytest.approx(1e6 * res.noise_variance)


def test_same_random_state_same_value(data):
    X, y = data
    model = LinearRegression().fit(X, y)
    a, b, c = (
        langevin_functional_variance(model, X, y, alpha=0.01, n_iter=300, burn_in=0, random_state=s).lfv
        for s in (1, 1, 2)
    )
    assert a == b and a != c


def test_linear_adapter_starts_at_the_fit(data):
    X, y = data
    for model in (Ridge(alpha=1.0), LinearRegression(fit_intercept=False)):
        model.fit(X, y)
        prob = langevin_problem(model, X, y)
        np.testing.assert_allclose(prob.y_pred, model.predict(X), atol=1e-10)
        losses, _ = prob.potential.per_example_loss_and_grad(prob.theta0)
        np.testing.assert_allclose(losses[0].numpy(), (y - model.predict(X)) ** 2, atol=1e-10)
        assert float(prob.penalty[-1]) == (0.0 if model.fit_intercept else 1.0)


def test_mlp_regressor_weights_move_into_the_functional_mlp(data):
    X, y = data
    for activation in ("relu", "tanh", "logistic", "identity"):
        mlp = MLPRegressor(hidden_layer_sizes=(7, 5), activation=activation, max_iter=200, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ConvergenceWarning
            mlp.fit(X, y)
        prob = langevin_problem(mlp, X, y)
        np.testing.assert_allclose(prob.y_pred, mlp.predict(X), atol=1e-10)
    res = langevin_functional_variance(mlp, X, y, alpha=1e-3, n_iter=300, burn_in=50, random_state=0)
    assert np.isfinite(res.lfv) and res.lfv > 0


def test_pipeline_and_torch_module(data):
    X, y = data
    pipe = make_pipeline(StandardScaler(), Ridge(alpha=1.0)).fit(X, y)
    res = langevin_functional_variance(pipe, X, y, alpha=0.01, n_iter=300, burn_in=0, random_state=0)
    assert res.train_loss == pytest.approx(np.mean((y - pipe.predict(X)) ** 2) / (2 * res.noise_variance))

    torch.manual_seed(0)  # only to initialise the user's module here
    net = torch.nn.Sequential(torch.nn.Linear(3, 6), torch.nn.Tanh(), torch.nn.Linear(6, 1)).double()
    prob = langevin_problem(net, X, y)
    with torch.no_grad():
        np.testing.assert_allclose(prob.y_pred, net(torch.tensor(X)).numpy().ravel(), atol=1e-12)
    before = [p.detach().clone() for p in net.parameters()]
    res = langevin_functional_variance(net, X, y, alpha=0.01, n_iter=200, burn_in=0, random_state=0)
    assert np.isfinite(res.lfv) and res.lfv > 0
    assert all(torch.equal(a, b) for a, b in zip(before, net.parameters()))  # the user's module is untouched


def test_skgibbs_estimator_one_process_per_chain(data):
    X, y = data
    reg = GibbsMLPRegressor((8,), n_samples=10, burn_in=50, pretrain_iter=100, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg.fit(X, y)
    prob = langevin_problem(reg, X, y)
    np.testing.assert_allclose(prob.y_pred * reg.y_scale_ + reg.y_mean_, reg.predict(X), atol=1e-5)
    res = langevin_functional_variance(reg, X, y, alpha=1e-3, n_iter=200, burn_in=20, random_state=0)
    assert res.lfv_chains.shape == (reg.n_chains,) and res.lfv == pytest.approx(res.lfv_chains.mean())
    assert res.noise_variance == pytest.approx(np.sum((y - reg.predict(X)) ** 2) / 59, rel=1e-4)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"alpha": -0.1}, "alpha"),
        ({"alpha": "big"}, "alpha"),
        ({"n_iter": 0}, "n_iter"),
        ({"burn_in": -1}, "burn_in"),
        ({"step_size": -1.0}, "step_size"),
        ({"noise_variance": -2.0}, "noise_variance"),
    ],
)
def test_bad_parameters(data, kwargs, match):
    X, y = data
    model = Ridge().fit(X, y)
    with pytest.raises(ValueError, match=match):
        langevin_functional_variance(model, X, y, **{"alpha": 0.1, **kwargs})


def test_bad_models_and_data(data):
    X, y = data
    with pytest.raises(TypeError, match="model"):
        langevin_functional_variance(object(), X, y, alpha=0.1)
    with pytest.raises(Exception, match="not fitted"):
        langevin_functional_variance(Ridge(), X, y, alpha=0.1)
    model = Ridge().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        langevin_functional_variance(model, X[:, :2], y, alpha=0.1)
    with pytest.raises(ValueError, match="rows"):
        langevin_functional_variance(model, X, y[:-1], alpha=0.1)
    with pytest.raises(ValueError, match="single-output"):
        langevin_functional_variance(Ridge().fit(X, np.c_[y, y]), X, y, alpha=0.1)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        langevin_functional_variance(model, bad, y, alpha=0.1)
