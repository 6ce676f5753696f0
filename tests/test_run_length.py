"""A run length that adapts (``n_samples="auto"``): when it stops, what it keeps, and what its warning says.

Ground truth: chains of known mixing (AR(1) series, whose autocorrelation
fixes the ESS a length gives) and known posteriors of
:mod:`skgibbs.known_posteriors` (a Gaussian of condition number 100, and
Neal's funnel under HMC), on which the length the checks need is found by
brute force on one long run, and the adaptive run must stop within a
factor 2 of it with draws that pass the exactness checks. On the funnel a
run stopped on a single passing check stopped at its first block in 3 of
10 seeds, four to six times short of the length the checks need, with the
variance of the wide coordinate at half its value: a pass is confirmed on
a longer run before the run stops.
"""

import copy
import warnings

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor, SamplerWarning
from skgibbs._run_length import DEFAULT_CAP_FACTOR, GROWTH, RunLength, retained_draws
from skgibbs.known_posteriors import Funnel, Gaussian
from skgibbs.potential import LogDensityPotential
from skgibbs.samplers import HMC, Target, run_chains


def _ar1(rng, n_chains, length, phi):
    """``n_chains`` stationary AR(1) series of autocorrelation ``phi`` and unit variance, ``(K, T, 1)``."""
    x = np.empty((n_chains, length))
    x[:, 0] = rng.normal(size=n_chains)
    noise = rng.normal(size=(n_chains, length)) * np.sqrt(1 - phi**2)
    for t in range(1, length):
        x[:, t] = phi * x[:, t - 1] + noise[:, t]
    return x[..., None]


def _identity(theta):
    return theta


def _drive(rule, draws, grads_per_draw=10.0):
    """Ask ``rule`` as the runner does, on prefixes of ``draws``; the total it stopped at."""
    total = rule.min_draws
    while True:
        nxt = rule.next_total(draws[:, :total], grads_per_draw, elapsed=0.0)
        if nxt <= total:
            return total
        total = nxt


def _passes(draws, total, min_draws):
    """Whether the retained part of the first ``total`` draws passes the checks (one check of the rule)."""
    rule = RunLength(_identity, draws.shape[0], total, max_grad_evals=10**12)
    kept = draws[:, total - retained_draws(total, min_draws) : total]
    return rule._check(kept)["failure"] is None


def _needed(draws, min_draws, step=25):
    """The oracle: the shortest run (on a grid of ``step``) from which on every longer run's retained draws pass.

    A single check passes or fails by chance near its thresholds; the
    length a run needs is the one past which it passes for good.
    """
    grid = list(range(min_draws, draws.shape[1] + 1, step))
    passes = [_passes(draws, total, min_draws) for total in grid]
    assert passes[-1], "the long run does not pass"
    failed = [t for t, ok in zip(grid, passes) if not ok]
    return grid[0] if not failed else failed[-1] + step


def test_retained_draws_are_all_of_a_minimal_run_then_the_second_half():
    assert [retained_draws(t, 50) for t in (50, 60, 100, 101, 400)] == [50, 50, 50, 50, 200]


def test_independent_draws_stop_once_the_first_pass_is_confirmed():
    draws = np.random.default_rng(0).normal(size=(4, 213, 3))
    rule = RunLength(_identity, 4, 150)
    assert _drive(rule, draws) == 213 == int(np.ceil(GROWTH * 150))
    record = rule.record
    assert record["converged"] and record["confirmed"] and record["stopped_by"] == "checks"
    assert [c["failure"] for c in record["checks"]] == [None, None]


def test_a_pass_that_a_longer_run_does_not_repeat_does_not_stop_the_run():
    # four chains that look stationary for their first 100 draws, then one moves to another level for 60
    # draws and comes back: the first block passes, its confirmation does not, and the run goes on until it
    # passes twice
    rng = np.random.default_rng(5)
    draws = rng.normal(size=(4, 3000, 1))
    draws[0, 110:170, 0] += 6.0
    rule = RunLength(_identity, 4, 100, max_grad_evals=10**9)
    stopped = _drive(rule, draws)
    failures = [c["failure"] for c in rule.record["checks"]]
    assert failures[0] is None and failures[1] == "within"
    assert failures[-2:] == [None, None] and rule.record["confirmed"]
    assert stopped - retained_draws(stopped, 100) >= 170  # the excursion is outside what it keeps


@pytest.mark.parametrize("phi", [0.9, 0.97])
def test_slow_chains_stop_within_a_factor_two_of_the_length_the_checks_need(phi):
    rng = np.random.default_rng(1)
    draws = _ar1(rng, 4, 12_000, phi)
    rule = RunLength(_identity, 4, 100, max_grad_evals=10**9)
    stopped = _drive(rule, draws)
    needed = _needed(draws, 100)
    assert rule.record["converged"]
    assert needed / 2 <= stopped <= 2 * needed, (needed, stopped)
    # ESS per draw of an AR(1): (1 - phi) / (1 + phi); the retained half holds about 25 per chain or more
    assert retained_draws(stopped, 100) * (1 - phi) / (1 + phi) > 0.5 * 25


def test_a_cap_stops_the_run_and_the_length_it_states_is_enough():
    rng = np.random.default_rng(2)
    draws = _ar1(rng, 4, 40_000, 0.97)
    rule = RunLength(_identity, 4, 100, max_grad_evals=3_000)  # 300 draws at 10 gradients a draw
    stopped = _drive(rule, draws)
    assert stopped == 300 and not rule.record["converged"] and rule.record["stopped_by"] == "max_grad_evals"
    needed, grads = rule.record["needed_draws"], rule.record["needed_grad_evals"]
    assert grads == pytest.approx(10 * needed) and needed > 2 * stopped
    # raising the cap to the stated number lets the same chains pass before it
    again = RunLength(_identity, 4, 100, max_grad_evals=grads)
    assert _drive(again, draws) <= needed and again.record["converged"]


@pytest.mark.slow
def test_the_length_a_capped_run_states_is_enough_and_not_thousands_of_times_too_long():
    """Chains that mix but are capped long before their checks pass: the stated length lets them pass.

    AR(1) series of autocorrelation 0.95 capped at 300 draws hold two to
    eight effective draws a chain, too few for the ratio of two checks to
    say how the ESS grows (the ratio of the last two checks once stated
    0.72 to 2,263 times the length needed on these seeds, three of them
    over a hundred times); the stated cap must let the same chains pass,
    at most a few times longer than they need.
    """
    for seed in range(8):
        draws = _ar1(np.random.default_rng(seed), 4, 16_000, 0.95)
        rule = RunLength(_identity, 4, 100, max_grad_evals=300)
        _drive(rule, draws, grads_per_draw=1.0)
        if rule.record["stopped_by"] != "max_grad_evals":
            continue
        needed, truth = rule.record["needed_draws"], _needed(draws, 100, step=100)
        assert truth <= needed <= 8 * truth, (seed, needed, truth)
        again = RunLength(_identity, 4, 100, max_grad_evals=rule.record["needed_grad_evals"])
        assert _drive(again, draws, grads_per_draw=1.0) <= needed and again.record["converged"], seed


def test_the_growth_is_measured_only_on_checks_with_ten_effective_draws():
    """Readings of a few effective draws leave the growth at 1 (unmeasured); from ten on, the log-log slope."""
    rule = RunLength(_identity, 4, 100)

    def checks(pairs):
        rule.record["checks"] = [{"n_retained": r, "within_chain_ess": e} for r, e in pairs]
        return rule._growth()

    # the last two readings of a few draws would say 0.25 (1.5 after 3.1); they do not count
    assert checks([(100, 1.9), (200, 1.5), (283, 3.1), (400, 1.5)]) == (1.0, False)
    g, measured = checks([(100, 2.0), (200, 10.0), (400, 14.1), (800, 20.0)])
    assert measured and g == pytest.approx(0.5, abs=1e-3)
    assert checks([(200, 12.0), (400, 11.0), (800, 10.5)]) == (0.25, True)  # clipped to the slowest growth
    assert checks([(200, 10.0), (400, 40.0)]) == (1.0, True)


def test_the_default_cap_is_a_multiple_of_the_first_block():
    draws = _ar1(np.random.default_rng(3), 4, 4000, 0.995)
    rule = RunLength(_identity, 4, 100)
    stopped = _drive(rule, draws, grads_per_draw=7.0)
    assert rule.record["max_grad_evals"] == DEFAULT_CAP_FACTOR * 7 * 100
    assert stopped == DEFAULT_CAP_FACTOR * 100 and rule.record["stopped_by"] == "max_grad_evals"


def test_each_estimator_class_caps_its_runs_at_the_multiple_it_declares():
    """``max_grad_evals="auto"``: the regressor's runs stop at twice the first block, others at eight."""
    from skgibbs.plan import REGRESSOR_CAP_FACTOR, plan_fit

    assert GibbsMLPRegressor._traits.cap_factor == REGRESSOR_CAP_FACTOR == 2
    assert GibbsMLPClassifier._traits.cap_factor == DEFAULT_CAP_FACTOR == 8
    for est, noise in ((GibbsMLPRegressor(), "homoscedastic"), (GibbsMLPClassifier(), None)):
        plan = plan_fit(est.get_params(), est._traits, n_rows=300, n_params=100, noise=noise)
        assert plan.cap_factor == est._traits.cap_factor
    draws = _ar1(np.random.default_rng(3), 4, 4000, 0.995)
    rule = RunLength(_identity, 4, 100, cap_factor=REGRESSOR_CAP_FACTOR)
    assert _drive(rule, draws, grads_per_draw=7.0) == REGRESSOR_CAP_FACTOR * 100
    assert rule.record["max_grad_evals"] == REGRESSOR_CAP_FACTOR * 7 * 100


def test_a_kernel_without_gradients_counts_a_draw_as_one_evaluation():
    # chains that never pass (a random walk that barely moves), under a kernel that evaluates no gradient:
    # the cap still binds, at one evaluation a draw, by default and when set
    draws = _ar1(np.random.default_rng(4), 4, 40_000, 0.999)
    default = RunLength(_identity, 4, 100)
    assert _drive(default, draws, grads_per_draw=0.0) == DEFAULT_CAP_FACTOR * 100
    assert default.record["stopped_by"] == "max_grad_evals" and default.record["grads_per_draw"] == 0.0
    capped = RunLength(_identity, 4, 100, max_grad_evals=1)
    assert _drive(capped, draws, grads_per_draw=0.0) == 100  # the first block, checked once, not extended
    assert capped.record["n_checks"] == 1 and capped.record["needed_grad_evals"] == capped.record["needed_draws"]


def test_chains_in_different_modes_are_not_extended():
    rng = np.random.default_rng(4)
    draws = rng.normal(size=(4, 200, 1)) + np.array([0.0, 0.0, 0.0, 4.0])[:, None, None]
    rule = RunLength(_identity, 4, 200)
    assert _drive(rule, draws) == 200
    assert rule.record["stopped_by"] == "checks" and not rule.record["converged"]
    assert rule.record["checks"][-1]["failure"] == "between"


# --------------------------------------------------- through the runner
def _known(target, stop, n_samples, seed=0):
    pot = LogDensityPotential(target.log_prob, target.grad_log_prob)
    x0 = torch.as_tensor(np.random.default_rng(seed).normal(size=(4, target.dim)))
    return run_chains(Target(pot, lambda_=1.0), x0, [10 + seed + k for k in range(4)], HMC(),
                      n_samples=n_samples, burn_in=300, stop=stop)


def _ill_conditioned(dim=10):
    # condition number 100: standard deviations from 0.1 to 1
    return Gaussian(np.zeros(dim), np.diag(np.geomspace(0.01, 1.0, dim)))


def test_an_extended_run_continues_the_chains_exactly():
    target = _ill_conditioned()
    rule = RunLength(_identity, 4, 50, max_grad_evals=10**9)
    rule.next_total = lambda draws, g, t: 150 if draws.shape[1] < 150 else draws.shape[1]  # extend once
    rule.retained = lambda total: total  # keep everything, to compare with one run
    extended = _known(target, rule, 50)
    once = _known(target, None, 150)
    np.testing.assert_array_equal(extended.samples, once.samples)
    np.testing.assert_array_equal(extended.n_grad, once.n_grad)


def _exact_moments(samples, target):
    """Every coordinate's mean and variance against the target's, within 4.5 Monte Carlo standard errors.

    The standard error of a variance is that of the mean of ``(x - m)^2``,
    from that quantity's own ESS (the funnel's wide coordinates have heavy
    tails, for which ``sd^2 sqrt(2 / ESS)`` is far too narrow).
    """
    from skgibbs.diagnostics import effective_sample_size

    dev2 = (samples - target.mean) ** 2
    draws, dev2_flat = samples.reshape(-1, target.dim), dev2.reshape(-1, target.dim)
    ess = np.atleast_1d(effective_sample_size(samples))
    ess2 = np.atleast_1d(effective_sample_size(dev2))
    sd = np.sqrt(np.diag(target.cov))
    assert np.all(np.abs(draws.mean(0) - target.mean) < 4.5 * sd / np.sqrt(ess))
    se_var = dev2_flat.std(0) / np.sqrt(ess2)
    assert np.all(np.abs(dev2_flat.mean(0) - sd**2) < 4.5 * se_var)


@pytest.mark.slow
@pytest.mark.parametrize(
    "target, seed, longer",
    [(_ill_conditioned(), 0, 4)] + [(Funnel(), seed, 8) for seed in range(5)],
    ids=["gaussian_cond100"] + [f"funnel_seed{seed}" for seed in range(5)],
)
def test_known_posteriors_stop_near_the_needed_length_and_are_exact(target, seed, longer):
    stop = RunLength(_identity, 4, 50, max_grad_evals=10**9)
    result = _known(target, stop, 50, seed)
    record = result.info["run_length"]
    assert record["converged"] and record["confirmed"] and record["stopped_by"] == "checks"
    total = record["n_draws"]
    assert result.samples.shape[1] == retained_draws(total, 50)
    # the needed length, by brute force on one run ``longer`` times as long (at least 800 draws a chain)
    long = _known(target, None, max(longer * total, 800), seed).samples
    needed = _needed(long, 50, step=10)
    assert needed / 2 <= total <= 2 * needed, (needed, total)
    _exact_moments(result.samples, target)


# --------------------------------------------------- the estimators
def _data(n=60, seed=0, d=2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    return X, X[:, 0] - 0.5 * X[:, 1] + 0.3 * rng.normal(size=n)


LINEAR = {"hidden_layer_sizes": (), "pretrain_iter": 200, "burn_in": 100, "noise": "homoscedastic", "random_state": 0}


def test_a_fit_records_its_run_length_and_passes_the_checks_it_stopped_on():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", SamplerWarning)
        reg = GibbsMLPRegressor(**LINEAR).fit(X, y)
    record = reg.run_length_
    assert record["converged"] and record["stopped_by"] == "checks"
    assert reg.samples_.shape[1] == record["n_retained"]
    assert reg.rhat_ <= 1.05 and reg.ess_ >= 100  # what the fit's warning checks, which did not fire
    # the cap of max_grad_evals="auto": the class's multiple of the first block's gradients
    first_block = reg.sampler_.default_n_samples
    cap = GibbsMLPRegressor._traits.cap_factor * record["grads_per_draw"] * first_block
    assert record["max_grad_evals"] == int(cap)
    # an integer n_samples is a fixed length, with no record
    fixed = GibbsMLPRegressor(**LINEAR, n_samples=30).fit(X, y)
    assert fixed.samples_.shape[1] == 30 and not hasattr(fixed, "run_length_")


def test_the_capped_warning_states_its_numbers_and_its_remedy_clears_it():
    # MALA without thinning on a linear model of ten inputs: 175 draws are too few, the cap stops it there
    X, y = _data(d=10)
    capped = GibbsMLPRegressor(**LINEAR, sampler="mala", thin=1, max_grad_evals=1)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        capped.fit(X, y)
    [w] = [w for w in seen if issubclass(w.category, SamplerWarning)]
    text = str(w.message)
    record = capped.run_length_
    assert record["stopped_by"] == "max_grad_evals" and not record["converged"]
    first, rest = text.split("\n", 1)
    assert first.startswith("The chains have not mixed") and not any(c.isdigit() for c in first)
    assert f"{capped.within_chain_ess_:.3g}" in rest and f"max_grad_evals={record['needed_grad_evals']}" in rest
    assert ("a first estimate" in rest) == (not record["ess_growth_measured"])
    assert "#" not in text
    # the remedy, followed: the same fit with the cap it names ends without a warning
    remedied = clone(capped).set_params(max_grad_evals=record["needed_grad_evals"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", SamplerWarning)
        remedied.fit(X, y)
    assert remedied.run_length_["converged"]


def test_a_fixed_length_warning_names_the_adaptive_length_and_it_clears_it():
    X, y = _data()
    short = GibbsMLPRegressor(**LINEAR, n_samples=12)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        short.fit(X, y)
    [w] = [w for w in seen if issubclass(w.category, SamplerWarning)]
    assert 'n_samples="auto"' in str(w.message)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SamplerWarning)
        clone(short).set_params(n_samples="auto").fit(X, y)


def test_the_classifier_adapts_its_run_length_on_its_probabilities():
    X, y = _data()
    clf = GibbsMLPClassifier(hidden_layer_sizes=(), pretrain_iter=100, burn_in=100, random_state=0)
    clf.fit(X, (y > 0).astype(int))
    assert clf.run_length_["n_checks"] >= 1 and clf.samples_.shape[1] == clf.run_length_["n_retained"]


@pytest.fixture(scope="module")
def linear_fit():
    """``(X, y, fit)``: a short fit of the linear model, made once for the bad-cap tests."""
    X, y = _data()
    return X, y, GibbsMLPRegressor(**LINEAR, n_samples=20).fit(X, y)


@pytest.mark.parametrize(
    "name, value", [("max_grad_evals", 0), ("max_grad_evals", -5), ("max_grad_evals", "lots"),
                    ("max_grad_evals", 2.5), ("max_time", 0.0), ("max_time", -1.0), ("max_time", "soon")],
)
def test_a_bad_cap_is_refused_before_any_work_and_keeps_the_earlier_fit(name, value, linear_fit):
    X, y, fitted = linear_fit
    reg = copy.deepcopy(fitted)  # each bad value meets a fit of its own
    before = reg.samples_.copy()
    with pytest.raises(InvalidParameterError, match=name):
        reg.set_params(**{name: value}).fit(X, y)
    np.testing.assert_array_equal(reg.samples_, before)


def test_independent_draws_keep_their_own_stopping_rule():
    X, y = _data()
    vi = GibbsMLPRegressor(**{**LINEAR, "burn_in": "auto"}, sampler="vi", max_grad_evals=10).fit(X, y)
    assert not hasattr(vi, "run_length_")
