"""The warm-up objects of skgibbs.samplers.adaptation, each alone."""

import math

import numpy as np
import torch

from skgibbs.samplers.adaptation import ChEES, DualAveraging, RunningVariance, halton, metric_windows


def test_dual_averaging_finds_the_step_of_the_target_acceptance():
    # acceptance exp(-h) per chain: the target 0.8 is reached at h = -log 0.8
    da = DualAveraging(torch.tensor([1e-3, 1.0], dtype=torch.float64), target=0.8)
    h = da.final()
    for _ in range(2000):
        h = da.update(torch.exp(-h))
    np.testing.assert_allclose(da.final().numpy(), -math.log(0.8), rtol=0.05)


def test_running_variance_pools_the_chains():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 4, 3)) * np.array([0.1, 1.0, 10.0])
    var = RunningVariance(3, torch.float64, "cpu")
    for row in x:
        var.update(torch.as_tensor(row))
    pooled = x.reshape(-1, 3)
    np.testing.assert_allclose(var.mean.numpy(), pooled.mean(0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(var.variance().numpy(), pooled.var(0, ddof=1), rtol=1e-12)
    n = len(pooled)  # Stan's shrinkage toward the reference
    expected = (n * pooled.var(0, ddof=1) + 5e-3 * 2.0) / (n + 5)
    np.testing.assert_allclose(var.metric(2.0).numpy(), expected, rtol=1e-12)


def test_metric_windows_tile_the_slow_phase():
    for n in (100, 300, 1000, 5000):
        windows = metric_windows(n)
        assert windows[0][0] > 0 and windows[-1][1] < n - 1
        for (a, b), (c, _) in zip(windows, windows[1:]):
            assert c == b + 1 and b >= a  # contiguous, non-empty
    assert metric_windows(10) == []


def test_halton_fills_the_unit_interval_evenly():
    u = np.array([halton(i) for i in range(1, 1025)])
    assert np.all((u > 0) & (u < 1))
    assert np.histogram(u, bins=8, range=(0, 1))[0].tolist() == [128] * 8


def test_chees_lengthens_a_short_trajectory_on_a_gaussian():
    # standard normal, exact flow x(t) = x cos t + p sin t: ChEES grows from t << pi/2
    gen = torch.Generator().manual_seed(0)
    chees = ChEES(0.05, per_gradient=False)
    m = torch.ones(3, dtype=torch.float64)
    x = torch.randn(16, 3, generator=gen, dtype=torch.float64)
    for _ in range(100):
        u, t = 0.5, chees.trajectory_length
        p = torch.randn(16, 3, generator=gen, dtype=torch.float64)
        end = x * math.cos(u * t) + p * math.sin(u * t)
        p_end = -x * math.sin(u * t) + p * math.cos(u * t)
        ones, none = torch.ones(16, dtype=torch.float64), torch.zeros(16, dtype=torch.bool)
        chees.update(x, end, p_end, ones, none, u, m)
        x = end
    assert chees.trajectory_length > 0.5
    chees.bound(0.01, 0.2)
    assert chees.trajectory_length == 0.2 and chees.final() <= 0.2
