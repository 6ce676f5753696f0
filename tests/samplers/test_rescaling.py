"""The rescaling moves: exact one-dimensional draws, the function unchanged, the prior kept."""

import numpy as np
import pytest
import torch
from scipy import stats

from skgibbs.model import MLPSpec
from skgibbs.potential import MLPPotential
from skgibbs.priors import HierarchicalPrior
from skgibbs.samplers import Target
from skgibbs.samplers.noncentered import NonCenteredTarget
from skgibbs.samplers.rescaling import RescalingMoves, draw_log_scale


def _moments(alpha, beta, gamma):
    """Mean and sd of ``p(s) ∝ exp(alpha s - beta e^{-2s} - gamma e^{2s})`` by quadrature on a fine grid."""
    s = np.linspace(-12.0, 12.0, 400_001)
    log_p = alpha * s - beta * np.exp(-2.0 * s) - gamma * np.exp(2.0 * s)
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    mean = float((p * s).sum())
    return mean, float(np.sqrt((p * (s - mean) ** 2).sum()))


@pytest.mark.parametrize(
    "alpha, beta, gamma",
    [(0.0, 2.0, 2.0), (3.0, 1.0, 0.5), (-5.0, 4.0, 1.0), (10.0, 0.1, 0.1), (-40.0, 30.0, 0.05)],
)
def test_the_draws_of_the_log_scale_have_the_exact_conditional_moments(alpha, beta, gamma):
    n = 20_000
    one = torch.ones(2, n // 2, dtype=torch.float64)
    gens = [torch.Generator().manual_seed(0), torch.Generator().manual_seed(1)]
    s = draw_log_scale(gens, alpha * one, beta * one, gamma * one).reshape(-1).numpy()
    mean, sd = _moments(alpha, beta, gamma)
    # a draw starts at s = 0 and is three independence steps: the draws are independent, each from a
    # kernel that leaves p invariant, but not yet exactly p; the moments of p within 4 standard errors
    assert abs(s.mean() - mean) < 4.0 * sd / np.sqrt(n)
    assert abs(s.std() / sd - 1.0) < 4.0 / np.sqrt(2.0 * n)


def test_a_draw_started_from_the_conditional_stays_there():
    # the kernel in s is what must be exact: draws of p moved once more are still p (KS test)
    alpha, beta, gamma = 2.0, 3.0, 0.7
    mean, sd = _moments(alpha, beta, gamma)
    gens = [torch.Generator().manual_seed(5)]
    one = torch.ones(1, 40_000, dtype=torch.float64)
    s = draw_log_scale(gens, alpha * one, beta * one, gamma * one, rounds=20)
    grid = np.linspace(-12.0, 12.0, 400_001)
    log_p = alpha * grid - beta * np.exp(-2.0 * grid) - gamma * np.exp(2.0 * grid)
    cdf = np.cumsum(np.exp(log_p - log_p.max()))
    cdf /= cdf[-1]
    assert stats.kstest(s.reshape(-1).numpy(), lambda x: np.interp(x, grid, cdf)).pvalue > 1e-3


def _network(kind="ard", activation="relu", hidden=(5, 4), n_outputs=1):
    spec = MLPSpec(3, hidden, activation, n_outputs=n_outputs)
    X = torch.randn(40, 3, generator=torch.Generator().manual_seed(0))
    y = X[:, 0] if n_outputs == 1 else X[:, 0]
    loss = "squared" if n_outputs == 1 else "gaussian"
    prior = HierarchicalPrior.for_network(
        spec, kind, torch.full((spec.n_params,), 0.7), 0.5, noise=n_outputs == 1
    )
    return spec, X, NonCenteredTarget(Target(MLPPotential(spec, X, y, loss=loss), prior))


@pytest.mark.parametrize("kind", ["ard", "layer"])
@pytest.mark.parametrize("activation, n_outputs", [("relu", 1), ("identity", 1), ("relu", 2)])
def test_a_move_changes_the_weights_and_not_the_function(kind, activation, n_outputs):
    spec, X, nc = _network(kind, activation, n_outputs=n_outputs)
    moves = RescalingMoves.for_target(nc, spec)
    assert all(sides is not None for sides, _, _ in moves.layers)  # the groups follow the layers
    theta = torch.randn(3, spec.n_params, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    x = nc.from_theta(theta)
    gens = [torch.Generator().manual_seed(k) for k in range(3)]
    x2 = moves.move(gens, x)
    theta2 = nc.to_theta(x2)
    assert not torch.allclose(theta, theta2)
    torch.testing.assert_close(spec.forward(theta2, X.double()), spec.forward(theta, X.double()))


def test_the_moves_do_not_apply_where_there_is_no_symmetry():
    spec, _, nc = _network(activation="tanh")
    assert RescalingMoves.for_target(nc, spec) is None
    spec, _, nc = _network(hidden=())
    assert RescalingMoves.for_target(nc, spec) is None


def test_the_moves_keep_the_prior():
    # with the likelihood flat along the orbits, a move that keeps the posterior keeps the prior too:
    # exact draws of the non-centred prior (z normal, each tau_g Gamma(a_g, b_g)) moved are still draws of it
    spec, _, nc = _network("ard", hidden=(6, 5))
    prior = nc.prior
    n = 4000
    g = torch.Generator().manual_seed(3)
    z = torch.randn(n, nc.n_weights, generator=g, dtype=torch.float64)
    a, b = prior.shape.double(), prior.rate.double()
    torch.manual_seed(3)
    tau = torch.distributions.Gamma(a, b).sample((n,))
    x = torch.cat([z, torch.log(tau)], 1)
    moves = RescalingMoves.for_target(nc, spec)
    gens = [torch.Generator().manual_seed(k) for k in range(n)]
    x2 = moves.move(gens, x)
    eta2 = x2[:, nc.n_weights :].numpy()
    p_values = [
        stats.kstest(eta2[:, j], stats.loggamma(float(a[j]), loc=-np.log(float(b[j]))).cdf).pvalue
        for j in range(nc.n_groups)
    ]
    # every group's log-precision keeps its log-Gamma law; every unit's z its normal law
    assert min(p_values) > 1e-3 / nc.n_groups
    z2 = x2[:, : nc.n_weights].numpy()
    assert stats.kstest(z2[:, ::7].reshape(-1)[:20000], "norm").pvalue > 1e-3
    # and the move did move them
    assert float((x2 - x).abs().mean()) > 0.1


@pytest.mark.filterwarnings("ignore::skgibbs.SamplerWarning")
@pytest.mark.parametrize("name", ["MCLMC", "AdjustedMCLMC"])
def test_both_kernels_run_with_and_without_the_moves(name):
    from skgibbs import GibbsMLPRegressor
    from skgibbs import samplers

    X = np.random.default_rng(0).normal(size=(60, 2))
    y = X[:, 0] + 0.1 * np.random.default_rng(1).normal(size=60)
    kernel = getattr(samplers, name)
    assert kernel().rescaling is False  # off by default
    fits = [
        GibbsMLPRegressor(
            hidden_layer_sizes=(4,), sampler=kernel(rescaling=r), n_samples=10, burn_in=10, n_chains=2,
            random_state=0,
        ).fit(X, y)
        for r in (True, False)
    ]  # fmt: skip
    assert fits[0].samples_.shape == fits[1].samples_.shape
    assert np.isfinite(fits[0].samples_).all()
    assert not np.allclose(fits[0].samples_, fits[1].samples_)
