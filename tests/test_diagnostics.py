"""Lag windows, autocovariance, spectral variance, ESS and R-hat.

The estimators are checked against direct sums, and on AR(1) chains
``x_t = phi x_{t-1} + e_t`` (``e_t ~ N(0, 1)``, stationary start), whose
autocovariance ``phi^|s| / (1 - phi^2)``, asymptotic variance
``1 / (1 - phi)^2`` and integrated autocorrelation time
``tau = (1 + phi) / (1 - phi)`` (ESS ``= N / tau``) are known. Statistical
tolerances are ``K_SD`` Monte Carlo standard errors over replicate chains;
all seeds are fixed.
"""

import numpy as np
import pytest
from scipy.signal import lfilter

from skgibbs.diagnostics import (
    LAG_WINDOWS,
    autocovariance,
    effective_sample_size,
    ess,
    lag_window,
    mcse,
    nested_rhat,
    rhat,
    spectral_variance,
)

K_SD = 4.0
WINDOWS = sorted(LAG_WINDOWS)


def _ar1(rng, phi, shape, axis=0):
    """Stationary AR(1) paths with unit innovations, time along ``axis``."""
    e = rng.normal(size=shape)
    np.moveaxis(e, axis, 0)[0] /= np.sqrt(1.0 - phi**2)
    return lfilter([1.0], [1.0, -phi], e, axis=axis)


# ------------------------------------------------------------ lag windows
@pytest.mark.parametrize("name", WINDOWS)
def test_lag_window_is_symmetric_bounded_and_supported_on_unit_interval(name):
    u = np.linspace(-2.0, 2.0, 801)
    w = LAG_WINDOWS[name](u)
    np.testing.assert_array_equal(w, LAG_WINDOWS[name](-u))
    assert np.all((w >= 0) & (w <= 1))
    assert np.all(w[np.abs(u) > 1] == 0)
    assert LAG_WINDOWS[name](np.zeros(1))[0] == 1.0


def test_flat_top_window_is_one_on_half_interval():
    # paper 003 §3: w(s) = 1 on [-1/2, 1/2]
    u = np.linspace(-0.5, 0.5, 101)
    np.testing.assert_array_equal(LAG_WINDOWS["flat-top"](u), 1.0)
    assert LAG_WINDOWS["flat-top"](np.array([0.75]))[0] == pytest.approx(0.5)


@pytest.mark.parametrize("name", WINDOWS)
def test_lag_window_weights_are_the_kernel_at_s_over_b(name):
    b = 7
    np.testing.assert_allclose(lag_window(name, b), LAG_WINDOWS[name](np.arange(b) / b))


def test_callable_lag_window():
    np.testing.assert_allclose(lag_window(lambda u: 1.0 - u**2, 4), 1.0 - (np.arange(4) / 4) ** 2)
    with pytest.raises(ValueError, match="callable"):
        lag_window(lambda u: np.ones(3), 4)


# ------------------------------------------------------ autocovariance (3.1)
def _direct_autocovariance(x, s):
    n = x.shape[0]
    c = x - x.mean(0)
    return sum(c[k] * c[k + s] for k in range(n - s)) / n


@pytest.mark.parametrize("shape", [(50,), (37, 3, 2)])
def test_autocovariance_matches_direct_sums(shape):
    x = np.random.default_rng(0).normal(size=shape)
    acov = autocovariance(x)
    assert acov.shape == shape
    for s in range(shape[0]):
        np.testing.assert_allclose(acov[s], _direct_autocovariance(x, s), atol=1e-12)
    np.testing.assert_allclose(autocovariance(x, max_lag=5), acov[:6])


# --------------------------------------------------- spectral variance (3.2)
def _direct_spectral_variance(x, window, b):
    # (3.2) term by term: sum_{|s| < b} w(s / b) rho_n(|s|), O(n b)
    n = x.shape[0]
    c = x - x.mean(0)
    total = np.zeros(x.shape[1:])
    for s in range(-(b - 1), b):
        rho = sum(c[k] * c[k + abs(s)] for k in range(n - abs(s))) / n
        total = total + LAG_WINDOWS[window](np.array([s / b]))[0] * rho
    return total


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("b", [1, 5, 12])
def test_spectral_variance_matches_direct_double_loop(window, b):
    x = _ar1(np.random.default_rng(1), 0.6, (60, 3))
    np.testing.assert_allclose(spectral_variance(x, window, b), _direct_spectral_variance(x, window, b))
    one = _direct_spectral_variance(x[:, :1], window, b)[0]
    np.testing.assert_allclose(spectral_variance(x[:, 0], window, b), one)


def test_spectral_variance_default_truncation_is_sqrt_n():
    x = np.random.default_rng(2).normal(size=(150, 2))
    np.testing.assert_allclose(spectral_variance(x), spectral_variance(x, "triangular", 12))


def test_mcse_is_root_spectral_variance_over_n():
    x = _ar1(np.random.default_rng(3), 0.5, (400, 3))
    np.testing.assert_allclose(mcse(x, "flat-top", 10), np.sqrt(spectral_variance(x, "flat-top", 10) / 400))
    assert isinstance(mcse(x[:, 0]), float)
    # an alternating series: V_n = rho(0) + 2 rho(1) < 0 with the rectangular window, b = 2
    alternating = np.tile([1.0, -1.0], 50)
    assert spectral_variance(alternating, "rectangular", 2) < 0
    assert np.isnan(mcse(alternating, "rectangular", 2))


def _expected_spectral_variance(phi, n, window, b):
    """E V_n for a stationary AR(1) up to O(b / n^2).

    ``E rho_n(s) = (1 - s/n) (gamma(s) - Var(xbar)) + O(1/n^2)`` with
    ``Var(xbar) ~ V / n``: the lag window's truncation bias and the bias
    from centring at the sample mean.
    """
    s = np.arange(-(b - 1), b)
    gamma = phi ** np.abs(s) / (1 - phi**2)
    w = LAG_WINDOWS[window](s / b)
    return np.sum(w * (1 - np.abs(s) / n) * (gamma - 1 / (n * (1 - phi) ** 2)))


@pytest.mark.slow
@pytest.mark.parametrize("window, b", [(w, 40) for w in WINDOWS if w != "bartlett"] + [("triangular", 10)])
def test_spectral_variance_of_ar1_has_its_expected_value(window, b):
    phi, n, reps = 0.5, 40000, 100
    v = spectral_variance(_ar1(np.random.default_rng(4), phi, (n, reps)), window, b)
    tol = K_SD * v.std(ddof=1) / np.sqrt(reps)
    assert abs(v.mean() - _expected_spectral_variance(phi, n, window, b)) < tol


@pytest.mark.slow
def test_flat_top_spectral_variance_of_ar1_is_the_asymptotic_variance():
    # the flat-top window of paper 003 has no lag-window bias for a
    # geometrically mixing chain: V_n -> sigma^2 / (1 - phi)^2
    phi, n, b, reps = 0.5, 40000, 40, 100
    exact = 1.0 / (1.0 - phi) ** 2
    v = spectral_variance(_ar1(np.random.default_rng(5), phi, (n, reps)), "flat-top", b)
    tol = K_SD * v.std(ddof=1) / np.sqrt(reps)
    assert abs(_expected_spectral_variance(phi, n, "flat-top", b) - exact) < 0.1 * tol  # bias negligible
    assert abs(v.mean() - exact) < tol
    assert tol < 0.02 * exact  # not vacuous
    # power: the triangular window's O(1/b) bias at b = 10 (about 13 %) is
    # several tolerances away
    v_tri = spectral_variance(_ar1(np.random.default_rng(5), phi, (n, reps)), "triangular", 10)
    assert exact - v_tri.mean() > 2 * tol


# ------------------------------------------------------ effective sample size
@pytest.mark.slow
@pytest.mark.parametrize("phi", [0.0, 0.5, 0.9, -0.3])
@pytest.mark.parametrize("split, rank", [(False, False), (True, True)])
def test_ess_of_ar1_chains_matches_known_value(phi, split, rank):
    """Mean of ``tau_hat = m n / ESS`` over replicates against ``(1 + phi) / (1 - phi)``.

    Geyer's truncation at the first non-positive pair adds a few noise pairs
    on average, an upward bias of ``tau_hat`` of about a quarter of its own
    standard deviation, whatever the chain length. With 40 replicates the
    Monte Carlo tolerance is ``K_SD / sqrt(40) ~ 0.63`` standard deviations,
    well above that bias; with hundreds of replicates the bias would show.
    """
    m, n, reps = 4, 5000, 40
    x = _ar1(np.random.default_rng(6), phi, (m, n, reps), axis=1)
    tau_hat = m * n / effective_sample_size(x, split=split, rank_normalize=rank)
    tau = (1 + phi) / (1 - phi)
    tol = K_SD * tau_hat.std(ddof=1) / np.sqrt(reps)
    assert abs(tau_hat.mean() - tau) < tol
    assert tol < 0.1 * tau  # not vacuous: a 10 % error in the ESS fails


def test_ess_shapes_and_vectorisation():
    rng = np.random.default_rng(8)
    x = _ar1(rng, 0.7, (3, 500, 2, 4), axis=1)
    e = effective_sample_size(x)
    assert e.shape == (2, 4)
    for i in range(2):
        for j in range(4):
            assert e[i, j] == pytest.approx(effective_sample_size(x[:, :, i, j]))
    one = x[0, :, 0, 0]
    assert isinstance(effective_sample_size(one), float)
    assert effective_sample_size(one) == effective_sample_size(one[None])
    assert ess is effective_sample_size


def test_ess_is_nan_for_a_constant_series_and_penalises_disagreeing_chains():
    assert np.isnan(effective_sample_size(np.ones((2, 10))))
    x = np.random.default_rng(9).normal(size=(4, 1000))
    shifted = x + np.array([0.0, 0.0, 0.0, 3.0])[:, None]
    assert effective_sample_size(shifted) < 0.1 * effective_sample_size(x)


def test_ess_rank_normalisation_is_invariant_to_monotone_maps():
    x = _ar1(np.random.default_rng(10), 0.5, (4, 400), axis=1)
    bulk = effective_sample_size(x, split=True, rank_normalize=True)
    assert effective_sample_size(np.exp(3 * x), split=True, rank_normalize=True) == pytest.approx(bulk)


# --------------------------------------------------------------------- R-hat
@pytest.mark.parametrize("method", ["rank", "split"])
def test_rhat_near_one_for_chains_of_one_law(method):
    x = _ar1(np.random.default_rng(11), 0.5, (4, 1000, 50), axis=1)
    r = rhat(x, method=method)
    assert r.shape == (50,)
    assert np.all(np.abs(r - 1) < 0.01)


@pytest.mark.parametrize("method", ["rank", "split"])
def test_rhat_flags_chains_with_shifted_means(method):
    x = np.random.default_rng(12).normal(size=(4, 1000))
    x[3] += 2.0
    assert rhat(x, method=method) > 1.1


def test_split_rhat_flags_a_drift_within_one_chain():
    x = np.random.default_rng(13).normal(size=(4, 1000))
    x[:, :500] += 1.0  # every chain has the same mean, but each drifts
    assert rhat(x, method="split") > 1.1


def test_rank_rhat_flags_chains_with_different_scales():
    # same mean, one chain three times wider: only the folded (tail) part sees it
    x = np.random.default_rng(14).normal(size=(4, 1000))
    x[3] *= 3.0
    assert rhat(x, method="split") < 1.01
    assert rhat(x, method="rank") > 1.1


# ------------------------------------------------------------------ ArviZ
def test_ess_and_rhat_agree_with_arviz():
    az = pytest.importorskip("arviz")
    rng = np.random.default_rng(15)
    x = _ar1(rng, 0.7, (4, 1001, 3), axis=1)
    x[..., 2] = np.exp(2 * x[..., 2])  # heavy right tail
    x[1, :, 1] += 0.5
    methods = {"identity": {}, "mean": {"split": True}, "bulk": {"split": True, "rank_normalize": True}}
    for name, kwargs in methods.items():
        ours = effective_sample_size(x, **kwargs)
        theirs = [float(az.ess(x[..., j], method=name)) for j in range(3)]
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, err_msg=name)
    for method in ("rank", "split"):
        theirs = [float(az.rhat(x[..., j], method=method)) for j in range(3)]
        np.testing.assert_allclose(rhat(x, method=method), theirs, rtol=1e-10, err_msg=method)


# -------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "fn", [autocovariance, spectral_variance, mcse, effective_sample_size, rhat], ids=lambda f: f.__name__
)
def test_nan_or_too_short_input_names_x(fn):
    bad = np.random.default_rng(16).normal(size=(2, 20))
    bad[1, 3] = np.nan
    with pytest.raises(ValueError, match="x holds NaN"):
        fn(bad)
    with pytest.raises(ValueError, match="x needs at least"):
        fn(np.ones((1, 1)) if fn in (effective_sample_size, rhat) else [1.0])


@pytest.mark.parametrize("fn", [spectral_variance, mcse], ids=lambda f: f.__name__)
@pytest.mark.parametrize("truncation", [0, -3, 2.5, True])
def test_bad_truncation_names_truncation(fn, truncation):
    with pytest.raises(ValueError, match="truncation"):
        fn(np.random.default_rng(17).normal(size=50), truncation=truncation)


@pytest.mark.parametrize("fn", [spectral_variance, mcse], ids=lambda f: f.__name__)
def test_unknown_window_names_lag_window(fn):
    with pytest.raises(ValueError, match="lag_window"):
        fn(np.random.default_rng(18).normal(size=50), lag_window="parzen")


@pytest.mark.parametrize("fn", [spectral_variance, mcse], ids=lambda f: f.__name__)
def test_the_lag_window_is_named_lag_window(fn):
    # the name of the control-variate estimators too; window=, its name before 0.2, is gone
    x = np.random.default_rng(19).normal(size=200)
    assert fn(x, lag_window="rectangular", truncation=5) == fn(x, "rectangular", 5)
    with pytest.raises(TypeError, match="window"):
        fn(x, window="rectangular", truncation=5)
    with pytest.raises(TypeError, match="window"):
        lag_window(window="flat-top", truncation=4)


def test_unknown_rhat_method_names_method():
    with pytest.raises(ValueError, match="method"):
        rhat(np.zeros((2, 10)), method="bulk")


def test_split_ess_needs_four_draws_per_half():
    with pytest.raises(ValueError, match="at least 8"):
        effective_sample_size(np.random.default_rng(0).normal(size=(2, 7)), split=True)


def test_average_ranks_are_scipys_to_the_bit():
    """Ties (repeated draws, as rejections make, and rounded values), infinities and NaN columns: the ranks of
    :func:`scipy.stats.rankdata` along axis 0, exactly."""
    from scipy.stats import rankdata

    from skgibbs.diagnostics._convergence import average_ranks

    rng = np.random.default_rng(0)
    for trial in range(300):
        N, p = int(rng.integers(1, 60)), int(rng.integers(1, 8))
        if trial % 2:
            x = rng.integers(0, int(rng.integers(1, 10)), size=(N, p)).astype(float)
        else:
            x = rng.normal(size=(N, p))
        if trial % 5 == 0:
            x[rng.integers(N), rng.integers(p)] = np.nan
        if trial % 7 == 0 and N > 2:
            x[:2, 0] = np.inf
        assert np.array_equal(average_ranks(x), rankdata(x, axis=0), equal_nan=True)


@pytest.mark.parametrize("n_draws", [50, 51])
def test_shared_rank_transforms_give_the_separate_calls_values(n_draws):
    """``rank_rhat_and_ess`` against ``rhat``, the bulk ESS and ``nested_rhat`` called on their own, with ties:
    the same numbers, for an even and an odd number of draws (whose split halves drop the middle draw)."""
    from skgibbs.diagnostics import rank_rhat_and_ess

    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, n_draws, 5))
    x[:, 1::2, 0] = x[:, ::2, 0][:, : x[:, 1::2].shape[1]]  # repeated draws
    x[..., 1] = np.round(x[..., 1])
    r, e, scores = rank_rhat_and_ess(x)
    assert np.array_equal(r, rhat(x))
    assert np.array_equal(e, effective_sample_size(x, split=True, rank_normalize=True))
    assert np.array_equal(nested_rhat(scores), nested_rhat(x, rank_normalize=True))
    r_alone, e_alone, none = rank_rhat_and_ess(x, scores=False)
    assert np.array_equal(r_alone, r) and np.array_equal(e_alone, e)
    assert (none is None) == (n_draws % 2 == 1)
