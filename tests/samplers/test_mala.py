"""The MALA / sMALA / csMALA kernel (paper 000, Alg. 1), unit by unit."""

import math

import numpy as np
import pytest
import torch
from scipy.stats import multivariate_normal

from skgibbs._random import normal
from skgibbs.model import MLPSpec
from skgibbs.potential import Batch, FunctionPotential, MLPPotential
from skgibbs.priors import Prior
from skgibbs.samplers import (
    MALAInfo,
    MALAParams,
    MALAState,
    Target,
    draw_batch,
    solve_correction,
    surrogate_constants,
)
from skgibbs.samplers.langevin import mala

K = 3


def _gens(seeds):
    return [torch.Generator().manual_seed(int(s)) for s in seeds]


def _mlp_potential(n=40):
    gen = torch.Generator().manual_seed(0)
    spec = MLPSpec(2, (5,), "tanh")
    X = torch.randn(n, 2, generator=gen, dtype=torch.float64)
    y = torch.sin(X[:, 0]) + 0.1 * torch.randn(n, generator=gen, dtype=torch.float64)
    theta0 = spec.init_params(gen, K)
    return MLPPotential(spec, X, y), theta0


def _params(sampler, lam, n, rho, h, s=None, zeta=1.0, k=K):
    c, d, _ = surrogate_constants(sampler, lam, n, rho, zeta)
    h = torch.full((k,), float(h), dtype=torch.float64)
    s = torch.sqrt(2 * h) if s is None else torch.full((k,), float(s), dtype=torch.float64)
    return MALAParams(c, d, rho, h, s)


class _Recorder:
    """Wraps a potential and records the point and batch of every gradient evaluation."""

    def __init__(self, potential):
        self.potential, self.n_data, self.calls = potential, potential.n_data, []

    def loss_sum_and_grad(self, theta, batch):
        self.calls.append((theta.clone(), batch))
        return self.potential.loss_sum_and_grad(theta, batch)

    def loss_sum(self, theta, batch):
        return self.potential.loss_sum(theta, batch)

    def mean_loss(self, theta):
        return self.potential.mean_loss(theta)


def _rows(batch, k, n):
    """Indices of chain ``k``'s batch as a NumPy array."""
    if batch.idx is None:
        return np.arange(n)
    idx = batch.idx[k]
    if batch.mask is not None:
        idx = idx[batch.mask[k] > 0]
    return idx.numpy()


# ------------------------------------------------------------ State / Info
@pytest.mark.parametrize("rho", [1.0, 0.5])
def test_state_and_info_are_namedtuples_with_documented_shapes(rho):
    pot, theta0 = _mlp_potential()
    Q = theta0.shape[1]
    gens = _gens(range(K))
    target = Target(pot, Prior(std=1.0), 40.0)
    params = _params("csmala", 40.0, 40, rho, 1e-3)
    assert params._fields == ("loss_scale", "batch_offset", "rho", "step_size", "proposal_std", "move_scale")
    assert params.move_scale is None  # the move's acceptance is measured only on request
    state = mala.init(gens, target, theta0, params)
    assert isinstance(state, MALAState) and isinstance(state, tuple)
    assert state._fields == ("theta", "loss_sum", "loss_grad", "batch_size", "log_prior")
    state, info = mala.step(gens, state, target, params)
    assert isinstance(info, MALAInfo) and info._fields == (
        "acceptance_prob",
        "is_accepted",
        "batch_size",
        "is_finite",
        "move_acceptance",
    )
    assert info.move_acceptance is None  # only filled on request
    assert state.theta.shape == (K, Q) and state.loss_grad.shape == (K, Q)
    for t in (state.loss_sum, state.batch_size, state.log_prior):
        assert t.shape == (K,)
    for t in info[:-1]:
        assert t.shape == (K,)
    assert info.is_accepted.dtype == torch.bool and info.is_finite.dtype == torch.bool


# ------------------------------------------------------------- cached value
def test_cached_values_equal_recomputation_full_data():
    pot, theta0 = _mlp_potential()
    gens = _gens(range(K))
    prior = Prior(std=0.8)
    target = Target(pot, prior, 40.0)
    params = _params("mala", 40.0, 40, 1.0, 5e-3)
    state = mala.init(gens, target, theta0, params)
    n_accepted = 0
    for _ in range(15):
        state, info = mala.step(gens, state, target, params)
        n_accepted += int(info.is_accepted.sum())
        full = Batch(None, None, None)
        loss, grad = pot.loss_sum_and_grad(state.theta, full)
        torch.testing.assert_close(state.loss_sum, loss)
        torch.testing.assert_close(state.loss_grad, grad)
        torch.testing.assert_close(state.log_prior, prior.log_density(state.theta))
        assert state.batch_size.tolist() == [40] * K
    assert n_accepted > 0  # the check covered accepted proposals


def test_init_caches_the_seeded_batch():
    pot, theta0 = _mlp_potential()
    target = Target(pot, Prior(), 40.0)
    state = mala.init(_gens([4, 5, 6]), target, theta0, _params("csmala", 40.0, 40, 0.3, 1e-3))
    batch = draw_batch(_gens([4, 5, 6]), pot.n_data, 0.3)
    loss, grad = pot.loss_sum_and_grad(theta0, batch)
    torch.testing.assert_close(state.loss_sum, loss)
    torch.testing.assert_close(state.loss_grad, grad)
    assert torch.equal(state.batch_size, batch.size)


def test_cached_values_follow_the_accepted_batch():
    # rho < 1: the state keeps the terms of the batch its point was accepted on
    pot, theta0 = _mlp_potential()
    rec = _Recorder(pot)
    gens = _gens(range(K))
    target = Target(rec, Prior(std=1.0), 40.0)
    params = _params("csmala", 40.0, 40, 0.4, 1e-3)
    state = mala.init(gens, target, theta0, params)
    current = [rec.calls[-1][1]] * K
    for _ in range(15):
        state, info = mala.step(gens, state, target, params)
        for k in range(K):
            if info.is_accepted[k]:
                current[k] = rec.calls[-1][1]
            rows = torch.as_tensor(_rows(current[k], k, 40))[None]
            loss, grad = pot.loss_sum_and_grad(state.theta[k : k + 1], Batch(rows, None, None))
            torch.testing.assert_close(state.loss_sum[k], loss[0])
            torch.testing.assert_close(state.loss_grad[k], grad[0])
            assert int(state.batch_size[k]) == rows.shape[1]


# ------------------------------------------------------ acceptance behaviour
@pytest.mark.parametrize("sampler, rho", [("mala", 1.0), ("smala", 0.5), ("csmala", 0.5)])
def test_acceptance_probability_in_unit_interval(sampler, rho):
    pot, theta0 = _mlp_potential()
    gens = _gens(range(K))
    target = Target(pot, Prior(std=1.0), 40.0)
    state = mala.init(gens, target, theta0, _params(sampler, 40.0, 40, rho, 1e-3))
    probs = []
    for h in (1e-6, 1e-3, 1e-1, 10.0):
        params = _params(sampler, 40.0, 40, rho, h)
        for _ in range(5):
            state, info = mala.step(gens, state, target, params)
            probs.append(info.acceptance_prob)
    probs = torch.cat(probs)
    assert torch.all((probs >= 0) & (probs <= 1))
    assert probs.max() > 0.5 and probs.min() < 0.5  # both regimes were visited


def test_tiny_step_is_almost_always_accepted_at_rho_one():
    pot, theta0 = _mlp_potential()
    gens = _gens(range(K))
    target = Target(pot, Prior(std=1.0), 40.0)
    params = _params("mala", 40.0, 40, 1.0, 1e-8)
    state = mala.init(gens, target, theta0, params)
    probs = []
    for _ in range(30):
        state, info = mala.step(gens, state, target, params)
        probs.append(info.acceptance_prob)
    assert float(torch.cat(probs).mean()) > 0.99


def test_same_generator_seed_gives_identical_draw():
    pot, theta0 = _mlp_potential()
    target = Target(pot, Prior(std=1.0), 40.0)
    params = _params("csmala", 40.0, 40, 0.5, 1e-3)

    def run(seeds):
        gens = _gens(seeds)
        state = mala.init(gens, target, theta0, params)
        for _ in range(10):
            state, _ = mala.step(gens, state, target, params)
        return state.theta

    assert torch.equal(run([1, 2, 3]), run([1, 2, 3]))
    assert not torch.equal(run([1, 2, 3]), run([1, 2, 4]))


def test_kernel_does_not_touch_global_rng():
    pot, theta0 = _mlp_potential()
    target = Target(pot, Prior(), 40.0)
    params = _params("csmala", 40.0, 40, 0.5, 1e-3)
    before = torch.random.get_rng_state()
    gens = _gens(range(K))
    state = mala.init(gens, target, theta0, params)
    mala.step(gens, state, target, params)
    assert torch.equal(before, torch.random.get_rng_state())


# ----------------------------------------------------- non-finite proposals
def _nan_outside_unit_interval(y):
    def loss_fn(theta, idx):
        t = theta[:, :1]
        return torch.where(t.abs() > 1.0, torch.full_like(t, torch.nan), (y[idx] - t) ** 2)

    return FunctionPotential(loss_fn, n_data=len(y))


def test_nan_potential_proposal_is_rejected():
    y = torch.linspace(-0.5, 0.5, 10, dtype=torch.float64)
    target = Target(_nan_outside_unit_interval(y), Prior(), 10.0)
    gens = _gens(range(K))
    params = _params("mala", 10.0, 10, 1.0, 1e-4, s=3.0)
    state = mala.init(gens, target, torch.zeros(K, 1, dtype=torch.float64), params)
    n_nonfinite = 0
    for _ in range(40):
        old = state
        state, info = mala.step(gens, state, target, params)
        bad = ~info.is_finite
        n_nonfinite += int(bad.sum())
        assert torch.all(info.acceptance_prob[bad] == 0) and not torch.any(info.is_accepted[bad])
        assert torch.equal(state.theta[bad], old.theta[bad])
        for t in state:
            assert torch.isfinite(t.double()).all()
        assert torch.all(state.theta.abs() <= 1.0)
    assert n_nonfinite > 20  # most proposals of std 3 leave [-1, 1]


def test_nan_gradient_proposal_is_rejected(nan_gradient_where):
    y = torch.full((5,), 2.0, dtype=torch.float64)

    def loss_fn(theta, idx):
        return (y[idx] - nan_gradient_where(theta[:, :1], lambda t: t < 1.0)) ** 2

    target = Target(FunctionPotential(loss_fn, n_data=5), Prior(), 5.0)
    gens = _gens(range(K))
    params = _params("mala", 5.0, 5, 1.0, 1e-3, s=0.8)
    state = mala.init(gens, target, torch.full((K, 1), 2.0, dtype=torch.float64), params)
    seen_nan = 0
    for _ in range(60):
        state, info = mala.step(gens, state, target, params)
        seen_nan += int((~info.is_finite).sum())
        assert not info.is_accepted[~info.is_finite].any()
        assert torch.all(state.theta >= 1.0) and torch.isfinite(state.loss_grad).all()
    assert seen_nan > 0


@pytest.mark.parametrize("h", [1e30, 1e300])
def test_huge_step_is_rejected_and_state_stays_finite(h):
    pot, theta0 = _mlp_potential()
    gens = _gens(range(K))
    target = Target(pot, Prior(std=1.0), 40.0)
    params = _params("mala", 40.0, 40, 1.0, h)
    state = mala.init(gens, target, theta0, params)
    for _ in range(5):
        state, info = mala.step(gens, state, target, params)
        assert not info.is_accepted.any() and torch.all(info.acceptance_prob == 0)
    assert torch.equal(state.theta, theta0)
    for t in state:
        assert torch.isfinite(t.double()).all()


def test_proposals_outside_the_prior_box_are_rejected():
    # zero loss and flat prior inside the box: the proposal is a symmetric
    # random walk, so alpha is exactly 1 inside the box and 0 outside
    pot = FunctionPotential(lambda th, idx: (th[:, :1] * 0.0).expand(-1, idx.shape[1]), n_data=4)
    gens = _gens(range(K))
    target = Target(pot, Prior(bound=0.5), 4.0)
    params = _params("mala", 4.0, 4, 1.0, 1e-3, s=0.5)
    state = mala.init(gens, target, torch.zeros(K, 2, dtype=torch.float64), params)
    probs = []
    for _ in range(100):
        state, info = mala.step(gens, state, target, params)
        probs.append(info.acceptance_prob)
        assert torch.all(state.theta.abs() <= 0.5)
    probs = torch.cat(probs)
    assert torch.all((probs == 0) | (probs > 1 - 1e-12))  # 1 up to rounding of the q-ratio
    assert 0.1 < float(probs.mean()) < 0.9


# ------------------------------------------------------ surrogate constants
def test_surrogate_constants_mala_and_rho_one():
    assert surrogate_constants("mala", 50.0, 100, 0.3) == (0.5, 0.0, 50.0)
    for sampler in ("smala", "csmala", "sgld"):
        assert surrogate_constants(sampler, 50.0, 100, 1.0, zeta=0.7) == (0.5, 0.0, 50.0)


def test_surrogate_constants_smala_scales_by_rho():
    c, d, lam_eff = surrogate_constants("smala", 50.0, 100, 0.25)
    assert math.isclose(c, 50.0 / (100 * 0.25)) and d == 0.0 and lam_eff == 50.0


@pytest.mark.parametrize("rho", [0.05, 0.3, 0.9])
def test_csmala_lemma3_compensation_at_zeta_one(rho):
    c, d, lam_eff = surrogate_constants("csmala", 80.0, 200, rho, zeta=1.0)
    assert math.isclose(lam_eff, (2 - rho) * 80.0)
    assert math.isclose(c, lam_eff / 200) and math.isclose(d, math.log(rho))


@pytest.mark.parametrize("rho", [0.05, 0.3, 0.9])
def test_csmala_at_zeta_zero_is_smala(rho):
    c, d, lam_eff = surrogate_constants("csmala", 80.0, 200, rho, zeta=0.0)
    assert math.isclose(lam_eff, 80.0 / rho) and d == 0.0
    assert math.isclose(c, surrogate_constants("smala", 80.0, 200, rho)[0])


def test_csmala_without_compensation_uses_lambda():
    c, d, lam_eff = surrogate_constants("csmala", 80.0, 200, 0.2, zeta=0.6, compensate=False)
    assert lam_eff == 80.0 and math.isclose(c, 0.4) and math.isclose(d, 0.6 * math.log(0.2))


@pytest.mark.parametrize("rho", [0.1, 0.5])
@pytest.mark.parametrize("zeta", [0.0, 0.3, 1.0, 1.7])
def test_compensated_surrogate_matches_gibbs_to_first_order(rho, zeta):
    # d/dl log(a exp(-lam' l / n) + 1 - rho) at l = 0 must be -lam / n, the slope of pi_lambda
    lam, n = 30.0, 60
    c, d, lam_eff = surrogate_constants("csmala", lam, n, rho, zeta)
    a = rho ** (1 - zeta)
    assert math.isclose(d, zeta * math.log(rho)) and math.isclose(c, lam_eff / n)

    def log_term(ell):
        return math.log(a * math.exp(-c * ell) + 1 - rho)

    eps = 1e-6
    slope = (log_term(eps) - log_term(-eps)) / (2 * eps)
    assert math.isclose(slope, -lam / n, rel_tol=1e-6)


# -------------------------------------------------------- solve_correction
@pytest.mark.parametrize("rho", [0.01, 0.1, 0.5, 0.9])
@pytest.mark.parametrize("risk", [0.01, 0.3, 2.0])
def test_solve_correction_centres_the_per_example_term(rho, risk):
    lam, n = 500.0, 1000
    zeta = solve_correction(risk, lam, n, rho)
    _, d, lam_eff = surrogate_constants("csmala", lam, n, rho, zeta)
    # paper 000 §5: lambda' Rbar / n + zeta log rho = 0, with lambda'(zeta) compensated
    assert zeta > 0
    assert abs(lam_eff * risk / n + d) < 1e-8 * max(1.0, lam_eff * risk / n)


@pytest.mark.parametrize("rho", [0.1, 0.5])
def test_solve_correction_uncompensated_is_explicit(rho):
    zeta = solve_correction(0.4, 300.0, 1000, rho, compensate=False)
    assert math.isclose(zeta, 300.0 * 0.4 / 1000 / -math.log(rho))
    _, d, lam_eff = surrogate_constants("csmala", 300.0, 1000, rho, zeta, compensate=False)
    assert math.isclose(lam_eff * 0.4 / 1000 + d, 0.0, abs_tol=1e-12)


def test_solve_correction_is_monotone_in_risk_and_lambda():
    risks = np.linspace(0.01, 3.0, 25)
    zetas = [solve_correction(r, 100.0, 100, 0.2) for r in risks]
    assert np.all(np.diff(zetas) > 0)
    lams = np.linspace(1.0, 400.0, 25)
    zetas = [solve_correction(0.5, lam, 100, 0.2) for lam in lams]
    assert np.all(np.diff(zetas) > 0)


def test_solve_correction_trivial_cases():
    assert solve_correction(0.5, 10.0, 10, 1.0) == 0.0
    assert solve_correction(0.0, 10.0, 10, 0.5) == 0.0


# ------------------------------------------------ the MH ratio (Alg. 1 (c)(iii))
def test_log_acceptance_equals_gaussian_proposal_densities():
    gen = torch.Generator().manual_seed(0)
    Q = 3
    theta = torch.randn(2, Q, generator=gen, dtype=torch.float64)
    theta_prop = theta + 0.3 * torch.randn(2, Q, generator=gen, dtype=torch.float64)
    g_cur = torch.randn(2, Q, generator=gen, dtype=torch.float64)
    g_prop = torch.randn(2, Q, generator=gen, dtype=torch.float64)
    u_cur = torch.tensor([1.3, -0.2], dtype=torch.float64)
    u_prop = torch.tensor([0.7, 0.4], dtype=torch.float64)
    params = MALAParams(
        1.0,
        0.0,
        1.0,
        torch.tensor([0.05, 0.2], dtype=torch.float64),
        torch.tensor([0.4, 0.25], dtype=torch.float64),
    )
    got = mala.log_acceptance(u_cur, u_prop, theta, theta_prop, g_cur, g_prop, params)
    for k in range(2):
        h, s = float(params.step_size[k]), float(params.proposal_std[k])
        cov = s**2 * np.eye(Q)
        back = multivariate_normal(theta_prop[k] - h * g_prop[k], cov).logpdf(theta[k].numpy())
        fwd = multivariate_normal(theta[k] - h * g_cur[k], cov).logpdf(theta_prop[k].numpy())
        expected = float(u_cur[k] - u_prop[k]) + back - fwd
        assert math.isclose(float(got[k]), expected, rel_tol=1e-10, abs_tol=1e-10)


@pytest.mark.parametrize("sampler, rho", [("mala", 1.0), ("smala", 0.5), ("csmala", 0.5)])
def test_step_acceptance_equals_hand_written_mh_ratio(sampler, rho):
    """Every quantity of Alg. 1 (c)(iii) recomputed by hand in NumPy and SciPy.

    Per-example loss l_i = (y_i - t1 x_i - t2)^2, Gaussian prior, decoupled
    proposal (s != sqrt(2h)); the kernel's batch and proposal are read from
    the potential's calls, everything else is recomputed here.
    """
    n, lam, zeta, prior_std = 12, 30.0, 0.7, 1.5
    rng = np.random.default_rng(0)
    x = rng.normal(size=n)
    y = 0.5 * x - 0.3 + 0.4 * rng.normal(size=n)
    xt, yt = torch.as_tensor(x), torch.as_tensor(y)
    pot = _Recorder(FunctionPotential(lambda th, idx: (yt[idx] - th[:, :1] * xt[idx] - th[:, 1:2]) ** 2, n))
    c, d, _ = surrogate_constants(sampler, lam, n, rho, zeta)
    h, s = 0.01, 0.15
    params = MALAParams(
        c, d, rho, torch.full((2,), h, dtype=torch.float64), torch.full((2,), s, dtype=torch.float64)
    )
    target = Target(pot, Prior(std=prior_std), lam)

    def potential_and_grad(t, rows):
        r = y[rows] - t[0] * x[rows] - t[1]
        u = c * np.sum(r**2) + d * len(rows) + 0.5 * np.sum(t**2) / prior_std**2
        g = c * np.array([-2 * np.sum(r * x[rows]), -2 * np.sum(r)]) + t / prior_std**2
        return u, g

    gens = _gens([11, 12])
    state = mala.init(gens, target, torch.zeros(2, 2, dtype=torch.float64), params)
    current = [_rows(pot.calls[-1][1], k, n) for k in range(2)]
    probs = []
    for _ in range(30):
        theta = state.theta.numpy().copy()
        state, info = mala.step(gens, state, target, params)
        theta_prop, batch = pot.calls[-1]
        for k in range(2):
            t, tp = theta[k], theta_prop[k].numpy()
            rows_prop = _rows(batch, k, n)
            u_cur, g_cur = potential_and_grad(t, current[k])
            u_prop, g_prop = potential_and_grad(tp, rows_prop)
            cov = s**2 * np.eye(2)
            log_alpha = (
                u_cur
                - u_prop
                + multivariate_normal(tp - h * g_prop, cov).logpdf(t)
                - multivariate_normal(t - h * g_cur, cov).logpdf(tp)
            )
            expected = min(1.0, math.exp(log_alpha))
            assert math.isclose(float(info.acceptance_prob[k]), expected, rel_tol=1e-9, abs_tol=1e-12)
            # the proposal is the Langevin step of the *current* batch potential (Alg. 1 (c)(ii))
            if info.is_accepted[k]:
                current[k] = rows_prop
                np.testing.assert_array_equal(state.theta[k].numpy(), tp)
            else:
                np.testing.assert_array_equal(state.theta[k].numpy(), t)
            probs.append(expected)
    probs = np.array(probs)
    assert np.any((probs > 0.05) & (probs < 0.95))  # the check saw informative ratios


def test_proposal_mean_is_the_langevin_drift():
    # the same generator seeds and the same batches, two potentials: the
    # proposals differ by exactly -h (grad U_1 - grad U_2)
    y = torch.linspace(-1, 1, 8, dtype=torch.float64)
    pot_a = _Recorder(FunctionPotential(lambda th, idx: (y[idx] - th[:, :1]) ** 2, 8))
    pot_b = _Recorder(FunctionPotential(lambda th, idx: (th[:, :1] * 0.0).expand(-1, idx.shape[1]), 8))
    theta0 = torch.full((2, 1), 0.4, dtype=torch.float64)
    target_a, target_b = Target(pot_a, Prior(), 8.0), Target(pot_b, Prior(), 8.0)
    params = MALAParams(
        0.9, 0.0, 1.0, torch.full((2,), 0.05, dtype=torch.float64), torch.full((2,), 0.3, dtype=torch.float64)
    )
    state_a = mala.init(_gens([1, 2]), target_a, theta0, params)
    state_b = mala.init(_gens([1, 2]), target_b, theta0, params)
    mala.step(_gens([5, 6]), state_a, target_a, params)
    mala.step(_gens([5, 6]), state_b, target_b, params)
    prop_a, prop_b = pot_a.calls[-1][0], pot_b.calls[-1][0]
    grad_a = 0.9 * (-2 * (y - 0.4).sum())
    torch.testing.assert_close(
        prop_a - prop_b, torch.full((2, 1), -0.05 * float(grad_a), dtype=torch.float64)
    )


# ------------------------------------------------------------------ refresh
def test_refresh_redraws_only_selected_chains():
    pot, theta0 = _mlp_potential()
    target = Target(pot, Prior(), 40.0)
    gens = _gens(range(K))
    params = _params("csmala", 40.0, 40, 0.3, 1e-3)
    state = mala.init(gens, target, theta0, params)
    which = torch.tensor([True, False, True])
    untouched = gens[1].get_state()
    new = mala.refresh(gens, state, target, params, which)
    assert torch.equal(gens[1].get_state(), untouched)  # only the chosen chains draw
    assert torch.equal(new.theta, state.theta)
    assert new.loss_sum[1] == state.loss_sum[1]
    assert not torch.equal(new.batch_size[[0, 2]], state.batch_size[[0, 2]]) or not torch.equal(
        new.loss_sum[[0, 2]], state.loss_sum[[0, 2]]
    )
    everything = mala.refresh(gens, state, target, params)
    assert torch.equal(everything.theta, state.theta)


@pytest.mark.parametrize("rho", [1.0, 0.5])
def test_move_acceptance_judges_the_move_on_one_batch(rho):
    # with move_scale the kernel also reports min(1, exp(-dU_hat + log q ratio)),
    # dU_hat the change of move_scale * sum_{B'} l_i between the two points on the
    # proposal's own batch B'; recompute it from the parts with a second seed copy
    pot, theta0 = _mlp_potential()
    prior = Prior(std=1.0)
    target = Target(pot, prior, 40.0)
    params = _params("csmala", 40.0, 40, rho, 1e-3)
    state = mala.init(_gens(range(K)), target, theta0, params)
    scale = 40.0 / (40 * rho)
    new, info = mala.step(_gens(range(10, 10 + K)), state, target, params._replace(move_scale=scale))
    assert info.move_acceptance.shape == (K,)
    assert torch.all((info.move_acceptance >= 0) & (info.move_acceptance <= 1))
    # replay the proposal: same generators give the same batch and noise
    gens = _gens(range(10, 10 + K))
    batch = draw_batch(gens, pot.n_data, rho)
    noise = normal(gens, theta0.shape[1], theta0)
    c = params.loss_scale
    grad_cur = target.grad(state.loss_grad, state.theta, c)
    prop = mala.langevin_proposal(state.theta, grad_cur, params.step_size, params.proposal_std, noise)
    l_prop, g_prop = pot.loss_sum_and_grad(prop, batch)
    l_cur = pot.loss_sum(state.theta, batch)
    grad_prop = target.grad(g_prop, prop, c)
    log_q = mala.log_proposal_ratio(state.theta, prop, grad_cur, grad_prop, params, noise)
    expect = scale * (l_cur - l_prop) + prior.log_density(prop) - prior.log_density(state.theta) + log_q
    torch.testing.assert_close(info.move_acceptance, torch.exp(expect.clamp(max=0.0)))
    # the move's signal changes nothing else: the same step without it
    plain, plain_info = mala.step(_gens(range(10, 10 + K)), state, target, params)
    assert all(torch.equal(a, b) for a, b in zip(new, plain))
    assert torch.equal(info.acceptance_prob, plain_info.acceptance_prob)


@pytest.mark.parametrize("name", ["mala", "smala", "csmala", "sgld"])
@pytest.mark.parametrize("rho", [0.3, 1.0])
def test_surrogate_constants_are_those_of_the_sampler_objects(name, rho):
    # the kernel module's table and the sampler objects' constants are two routes to one formula
    from skgibbs.samplers import get_sampler

    expected = get_sampler(name).constants(80.0, 200, rho, 0.6, True)
    assert surrogate_constants(name, 80.0, 200, rho, zeta=0.6) == expected
    with pytest.raises(ValueError, match="sampler must be one of"):
        surrogate_constants("hmc", 80.0, 200, rho)
