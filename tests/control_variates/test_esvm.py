"""The ESVM objective (3.2) in torch and as a quadratic form agree with diagnostics.spectral_variance."""

import numpy as np
import pytest
import torch

from skgibbs.control_variates import default_truncation, esvrr, spectral_variance_torch, windowed
from skgibbs.diagnostics import LAG_WINDOWS, spectral_variance


def _series(n=500, seed=0, columns=None):
    rng = np.random.default_rng(seed)
    shape = (n,) if columns is None else (n, columns)
    e = rng.normal(size=shape)
    x = np.empty(shape)
    x[0] = e[0]
    for k in range(1, n):
        x[k] = 0.7 * x[k - 1] + e[k]
    return x + 3.0


def _parabola(u):
    return np.clip(1 - u**2, 0, None)


@pytest.mark.parametrize("window", [*sorted(LAG_WINDOWS), _parabola])
@pytest.mark.parametrize("truncation", [None, 1, 7, 40, 10_000])
def test_torch_estimator_equals_diagnostics(window, truncation):
    x = _series()
    expected = spectral_variance(x, window, min(truncation or default_truncation(len(x)), len(x)))
    got = spectral_variance_torch(torch.tensor(x), window, truncation)
    assert got.item() == pytest.approx(expected, rel=1e-10)
    hc = x - x.mean()
    assert hc @ windowed(hc, window, truncation) / len(x) == pytest.approx(expected, rel=1e-10)


def test_columns_are_separate_series():
    x = _series(columns=3)
    got = spectral_variance_torch(torch.tensor(x), "tukey-hanning", 12).numpy()
    np.testing.assert_allclose(got, spectral_variance(x, "tukey-hanning", 12), rtol=1e-10)
    Wx = windowed(x - x.mean(0), "tukey-hanning", 12)
    np.testing.assert_allclose(Wx, np.stack([windowed(c - c.mean(), "tukey-hanning", 12) for c in x.T], 1))


def test_objective_is_differentiable():
    h = torch.tensor(_series(n=40), requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: spectral_variance_torch(t, "triangular", 6), (h,))
    # V_n(h) = hc^T W hc / n with hc = C h, C the centring projection: gradient 2 C W hc / n
    spectral_variance_torch(h, "triangular", 6).backward()
    hc = h.detach().numpy() - h.detach().numpy().mean()
    Whc = windowed(hc, "triangular", 6)
    np.testing.assert_allclose(h.grad.numpy(), 2 * (Whc - Whc.mean()) / 40, rtol=1e-10, atol=1e-12)


def test_esvrr():
    y = _series()
    assert esvrr(y, 0.5 * y + 2.0) == pytest.approx(4.0)
    assert esvrr(y, np.full_like(y, 7.0)) == np.inf
    assert esvrr(np.ones(10), np.ones(10)) == 1.0
    assert esvrr(y, y, truncation=5) == pytest.approx(1.0)


def test_the_lag_window_is_named_lag_window():
    x = _series(200)
    hc = x - x.mean()
    assert spectral_variance_torch(torch.tensor(x), lag_window="rectangular", truncation=6).item() == (
        spectral_variance_torch(torch.tensor(x), "rectangular", 6).item()
    )
    np.testing.assert_array_equal(
        windowed(hc, lag_window="rectangular", truncation=6), windowed(hc, "rectangular", 6)
    )
    for fn, args in [(spectral_variance_torch, (torch.tensor(x),)), (windowed, (hc,)), (esvrr, (x, 0.5 * x))]:
        with pytest.raises(TypeError, match="window"):  # its name before 0.2
            fn(*args, window="rectangular", truncation=6)


def test_short_series_is_rejected():
    with pytest.raises(ValueError, match="at least 2 time points"):
        spectral_variance_torch(torch.ones(1))
