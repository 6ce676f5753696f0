"""Shared test settings and Monte Carlo helpers."""

import numpy as np
import pytest
import torch

# One thread: the tests run beside other processes, and two spinning OpenMP
# threads on a busy core slow a step down by an order of magnitude (DESIGN §6).
torch.set_num_threads(1)


def effective_sample_size(draws):
    """Effective sample size of one scalar quantity over one or more chains.

    Multi-chain autocorrelation (within-chain autocovariances pooled over the
    chains, normalised by the between/within variance estimate) truncated by
    Geyer's initial positive and initial monotone sequence.

    Parameters
    ----------
    draws : array-like of shape (n_draws,) or (n_chains, n_draws)

    Returns
    -------
    float
    """
    x = np.atleast_2d(np.asarray(draws, dtype=float))
    m, n = x.shape
    if n < 4:
        return float(m * n)
    centred = x - x.mean(1, keepdims=True)
    size = 2 ** int(np.ceil(np.log2(2 * n)))
    spec = np.fft.rfft(centred, size, axis=1)
    acov = np.fft.irfft(spec * np.conj(spec), size, axis=1)[:, :n] / n  # biased, as Geyer's estimator wants
    within = acov[:, 0].mean() * n / (n - 1)
    between = n * x.mean(1).var(ddof=1) if m > 1 else 0.0
    var_plus = within * (n - 1) / n + between / n
    if var_plus <= 0:
        return float(m * n)
    rho = 1.0 - (within - acov.mean(0)) / var_plus
    rho[0] = 1.0
    # Geyer: sums of adjacent pairs are positive and decreasing for a reversible chain
    n_pairs = n // 2
    pairs = rho[: 2 * n_pairs].reshape(n_pairs, 2).sum(1)
    positive = np.flatnonzero(pairs <= 0)
    pairs = pairs[: positive[0]] if len(positive) else pairs
    pairs = np.minimum.accumulate(pairs)
    tau = -1.0 + 2.0 * pairs.sum()
    return float(m * n / max(tau, 1.0 / np.log10(max(m * n, 10))))


@pytest.fixture
def ess():
    """The :func:`effective_sample_size` estimator."""
    return effective_sample_size


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
