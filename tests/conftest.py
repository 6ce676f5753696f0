"""Shared test settings and Monte Carlo helpers."""

import numpy as np
import pytest
import torch

from skgibbs.diagnostics import effective_sample_size

# One thread: the tests run beside other processes, and two spinning OpenMP
# threads on a busy core slow a step down by an order of magnitude (doc/developers.rst, Rules).
torch.set_num_threads(1)


def pytest_collection_modifyitems(config, items):
    """The tests marked ``slow`` first, the rest after them, each group in its collected order.

    The long statistical tests then start at the beginning of a run on two
    workers, and the last minutes are spent on short tests that either
    worker can take, instead of one worker finishing a long test while the
    other waits.
    """
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def _function_draws(est, X):
    """Every draw's ``f`` at ``X``, ``(S, n)`` on the scale of ``y``: a fitted regressor's network on all rows at once.

    The mean output where the network also gives a log-variance; the
    reference the chunked predictions are held to.
    """
    G = est._network_outputs(X)
    return (G[..., 0] if G.ndim == 3 else G) * est.y_scale_ + est.y_mean_


@pytest.fixture
def function_draws():
    """``f(est, X) -> (S, n)``: a fitted regressor's draws of ``f`` at ``X``, on the scale of ``y``."""
    return _function_draws


@pytest.fixture
def ess():
    """Multi-chain effective sample size, :func:`skgibbs.diagnostics.effective_sample_size`.

    Takes draws of shape ``(n_draws,)`` or ``(n_chains, n_draws)`` (and
    trailing axes) and returns a float (an array with trailing axes).
    """
    return effective_sample_size


def _moment_errors(draws, mean, cov, k_sd=4.0):
    """Errors of the mean and covariance of draws, in units of their Monte Carlo tolerance.

    ``draws`` has shape ``(n_chains, n_draws, d)``. The mean of coordinate
    ``j`` has Monte Carlo sd ``sd_j / sqrt(ESS_j)``; the covariance entry
    ``(a, b)`` is the mean of ``z = (x_a - m_a)(x_b - m_b)`` with sd
    ``sd(z) / sqrt(ESS(z))`` (delta method). An error below 1 is within
    ``k_sd`` Monte Carlo standard errors.
    """
    m = draws.reshape(-1, draws.shape[-1]).mean(0)
    errors = {}
    for j in range(draws.shape[-1]):
        tol = k_sd * draws[..., j].std() / np.sqrt(effective_sample_size(draws[..., j]))
        errors[f"mean[{j}]"] = abs(m[j] - mean[j]) / tol
    for a in range(draws.shape[-1]):
        for b in range(a, draws.shape[-1]):
            z = (draws[..., a] - m[a]) * (draws[..., b] - m[b])
            tol = k_sd * z.std() / np.sqrt(effective_sample_size(z))
            errors[f"cov[{a},{b}]"] = abs(z.mean() - cov[a, b]) / tol
    return errors


@pytest.fixture
def moment_errors():
    """``f(draws, mean, cov, k_sd=4.0) -> dict``: moment errors in units of ``k_sd`` Monte Carlo sds."""
    return _moment_errors


class _NaNGradientWhere(torch.autograd.Function):
    """Identity whose derivative is NaN where ``broken(t)``: a finite loss with a broken gradient."""

    @staticmethod
    def forward(ctx, t, broken):
        ctx.save_for_backward(broken(t))
        return t.clone()

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return torch.where(mask, torch.full_like(grad, torch.nan), grad), None


@pytest.fixture
def nan_gradient_where():
    """``f(t, broken)``: the identity on ``t`` with a NaN gradient where ``broken(t)`` holds."""
    return _NaNGradientWhere.apply


def _linear_posterior():
    """The Gibbs posterior of a linear model at temperature 0.5 under a flat prior, in closed form.

    ``exp(-(n/T) R_n)`` is ``N(beta_hat, (T/2) (X1'X1)^-1)``, ``X1 = [X, 1]``. Returns
    ``(potential, lam, beta_hat, Sigma)`` with an :class:`~skgibbs.potential.MLPPotential`
    of the linear network on the same data.
    """
    import torch

    from skgibbs.model import MLPSpec
    from skgibbs.potential import MLPPotential

    rng = np.random.default_rng(0)
    n, d, T = 50, 2, 0.5
    X = rng.normal(size=(n, d))
    y = X @ np.array([1.0, -0.5]) + 0.3 + 0.5 * rng.normal(size=n)
    X1 = np.c_[X, np.ones(n)]
    beta_hat = np.linalg.lstsq(X1, y, rcond=None)[0]
    Sigma = 0.5 * T * np.linalg.inv(X1.T @ X1)
    pot = MLPPotential(MLPSpec(d, (), "identity"), torch.as_tensor(X), torch.as_tensor(y))
    return pot, n / T, beta_hat, Sigma


@pytest.fixture
def linear_posterior():
    """``(potential, lam, beta_hat, Sigma)`` of a linear model whose Gibbs posterior is known exactly."""
    return _linear_posterior()
