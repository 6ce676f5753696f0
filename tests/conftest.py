"""Shared test settings and Monte Carlo helpers."""

import pytest
import torch

from skgibbs.diagnostics import effective_sample_size

# One thread: the tests run beside other processes, and two spinning OpenMP
# threads on a busy core slow a step down by an order of magnitude (DESIGN §6).
torch.set_num_threads(1)


@pytest.fixture
def ess():
    """Multi-chain effective sample size, :func:`skgibbs.diagnostics.effective_sample_size`.

    Takes draws of shape ``(n_draws,)`` or ``(n_chains, n_draws)`` (and
    trailing axes) and returns a float (an array with trailing axes).
    """
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
