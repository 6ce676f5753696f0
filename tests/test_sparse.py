"""SparseGibbsMLPRegressor: parameters, fitted state, variable selection and credible sets."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from skgibbs import SamplerWarning, SparseGibbsMLPRegressor
from skgibbs.credible import CredibleSets
from skgibbs.samplers import HMC, RJHMC, RJMCMC, SMC, MeanFieldVI
from skgibbs.model import MLPSpec
from skgibbs.estimators.sparse import input_relevance

CHEAP = {"hidden_layer_sizes": (6,), "n_samples": 20, "burn_in": 100, "thin": 2, "pretrain_iter": 50, "n_chains": 2}


def _quiet_fit(est, X, y):
    """Fit without the SamplerWarning that a short cheap run always earns."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        return est.fit(X, y)


def _data(n=80, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    return X, y


@pytest.fixture(scope="module")
def fitted():
    X, y = _data()
    return _quiet_fit(SparseGibbsMLPRegressor(**CHEAP, random_state=0), X, y), X, y


def test_fitted_state_shapes_and_exact_zeros(fitted):
    est, X, y = fitted
    Q = est.spec_.n_params
    assert est.samples_.shape == (2, 20, Q) and est.sampler_name_ == "rjhmc"
    assert isinstance(est.sampler_, RJHMC) and est.sampler_.get_params() == RJHMC().get_params()
    for name in ("acceptance_rate_", "step_size_", "n_divergent_"):
        assert getattr(est, name).shape == (2,), name
    assert est.trajectory_length_ > 0
    # the reversible-jump kernel reports its own results, not those of the other kernels
    for name in ("correction_", "lambda_prime_", "n_restarts_", "proposal_std_"):
        assert not hasattr(est, name), name
    assert est.active_fraction_.shape == (2, 20)
    assert np.allclose(est.active_fraction_, (est.samples_ != 0).mean(-1))
    assert np.all(est.active_fraction_ > 0) and np.all(est.active_fraction_ <= 1)
    assert est.inclusion_probability_.shape == (Q,)
    assert np.all((0 <= est.inclusion_probability_) & (est.inclusion_probability_ <= 1))
    assert est.feature_inclusion_.shape == (3,)
    # the probability that an input is in the model: the draws in which it has a live path, each chain's
    # draws weighed by its stacking weight (the default chain_weights), as in the predictions
    live = input_relevance(est.spec_, est.samples_.reshape(-1, Q)) > 0
    w = np.repeat(est.chain_weights_ / 20, 20)
    assert est.chain_weights == "stacking" and np.isclose(w.sum(), 1.0)
    np.testing.assert_allclose(est.input_relevance_, w @ live, rtol=1e-12)
    np.testing.assert_allclose(est.inclusion_probability_, w @ (est.samples_ != 0).reshape(-1, Q), rtol=1e-12)
    assert np.array_equal(est.input_relevance_ > 0, est.feature_inclusion_ > 0)
    assert est.move_acceptance_.shape == (2, 3)
    coefs, intercepts = est.unpack_inclusion()
    assert [c.shape for c in coefs] == [(3, 6), (6, 1)] and [b.shape for b in intercepts] == [(6,), (1,)]
    assert np.array_equal(est.spec_.pack(coefs, intercepts), est.inclusion_probability_)
    assert est.sample_stats_["n_active"].shape == (2, 20)
    # the outputs of the regressor base work unchanged
    y_pred, y_pis = est.predict_interval(X[:5], confidence_level=[0.5, 0.9])
    assert y_pis.shape == (5, 2, 2) and np.all(y_pis[:, 0] <= y_pis[:, 1])
    assert np.isfinite(est.generalization_loss_) and np.isfinite(est.rhat_)


def test_starting_density_and_reproducibility():
    X, y = _data()
    kw = {**CHEAP, "burn_in": 0, "n_samples": 1, "thin": 1, "pretrain_iter": 0}
    for density in (0.2, 1.0):
        est = _quiet_fit(SparseGibbsMLPRegressor(**kw, init_density=density, random_state=1), X, y)
        assert abs(est.active_fraction_.mean() - density) < 0.2
    # reproducibility does not depend on the length of the chains: a short run does
    a = _quiet_fit(SparseGibbsMLPRegressor(**{**CHEAP, "burn_in": 10, "n_samples": 5}, random_state=3), X, y)
    b = _quiet_fit(clone(a), X, y)
    assert np.array_equal(a.samples_, b.samples_)
    c = pickle.loads(pickle.dumps(a))
    assert np.array_equal(c.predict(X), a.predict(X))


@pytest.mark.parametrize(
    "params, match",
    [
        ({"sparsity": 1.5}, "sparsity"),
        ({"init_density": 0.0}, "init_density"),
        ({"init_density": 1.5}, "init_density"),
        ({"prior_std": None}, "proper density"),
        ({"sampler": "vi"}, r"sampler.*'rjmcmc'"),
        ({"sampler": "hmc"}, r"sampler.*'rjmcmc'"),
        ({"sampler": HMC()}, "MixingPrior of sparse networks needs sampler='rjhmc', 'rjmcmc' or 'smc'"),
        ({"sampler": MeanFieldVI()}, "MixingPrior of sparse networks needs sampler='rjhmc', 'rjmcmc' or 'smc'"),
        ({"sampler": RJHMC(n_jumps=-1)}, "n_jumps"),
        ({"sampler": RJHMC(n_jumps=2.5)}, "n_jumps"),
        ({"sampler": RJHMC(n_jumps=10**6)}, r"n_jumps=1000000 of sampler='rjhmc' exceeds the \d+ parameters"),
        ({"sampler": SMC(n_jumps=10**6)}, r"n_jumps=1000000 of sampler='smc' exceeds the \d+ parameters"),
        ({"sampler": RJHMC(target_accept=1.5)}, "target_accept"),
        ({"sampler": RJHMC(max_leapfrog=0)}, "max_leapfrog"),
        ({"sampler": RJMCMC(target_accept=1.5)}, "target_accept"),
        ({"sampler": RJMCMC(target_accept=0.0)}, "target_accept"),
        ({"sampler": RJMCMC(target_accept="x")}, "target_accept"),
        ({"sampler": RJMCMC(step_size=0.0)}, "step_size"),
        ({"sampler": RJMCMC(step_size=-1.0)}, "step_size"),
        ({"sampler": RJMCMC(proposal_std=-0.1)}, "proposal_std"),
    ],
)
def test_bad_parameters_get_clear_errors_and_keep_the_fit(fitted, params, match):
    est, X, y = fitted
    before = est.samples_.copy()
    kernel = est.sampler_
    with pytest.raises(ValueError, match=match):
        est.set_params(**params).fit(X, y)
    est.set_params(**{k: SparseGibbsMLPRegressor().get_params()[k] for k in params})
    assert np.array_equal(est.samples_, before)
    assert est.sampler_ is kernel and est.sampler_name_ == "rjhmc"


@pytest.mark.parametrize("name", ["rho", "step_size", "proposal_std", "target_accept"])
def test_kernel_settings_are_not_parameters_of_the_sparse_regressor(name):
    # rho did not apply (the jump ratio is exact on the full data only) and the rest moved onto RJMCMC(...)
    with pytest.raises(TypeError, match=name):
        SparseGibbsMLPRegressor(**{name: 0.5})
    with pytest.raises(ValueError, match=name):
        SparseGibbsMLPRegressor().set_params(**{name: 0.5})
    if name != "rho":
        est = SparseGibbsMLPRegressor(sampler=RJMCMC()).set_params(**{f"sampler__{name}": 0.5})
        assert getattr(est.sampler, name) == 0.5


@pytest.mark.parametrize("name, cls", [("rjmcmc", RJMCMC), ("rjhmc", RJHMC)])
def test_the_name_and_the_default_object_give_identical_draws(name, cls):
    X, y = _data()
    short = {**CHEAP, "burn_in": 10, "n_samples": 5}  # identical draws, whatever the length of the chains
    by_name = _quiet_fit(SparseGibbsMLPRegressor(**short, sampler=name, random_state=0), X, y)
    by_object = _quiet_fit(SparseGibbsMLPRegressor(**short, sampler=cls(), random_state=0), X, y)
    np.testing.assert_array_equal(by_name.samples_, by_object.samples_)
    np.testing.assert_array_equal(by_name.move_acceptance_, by_object.move_acceptance_)
    assert type(by_name.sampler_) is type(by_object.sampler_) is cls


def test_rjmcmc_settings_reach_the_kernel():
    X, y = _data()
    # a fixed proposal (the paper's sigma = gamma): h and s are the given ones, nothing adapts
    fixed = RJMCMC(step_size=1e-4, proposal_std=0.01)
    est = _quiet_fit(SparseGibbsMLPRegressor(**CHEAP, sampler=fixed, random_state=0), X, y)
    np.testing.assert_allclose(est.step_size_, 1e-4, rtol=1e-6)
    np.testing.assert_allclose(est.proposal_std_, 0.01, rtol=1e-6)
    # an adapted step: a higher target acceptance of the within-model moves gives smaller steps
    low, high = (
        _quiet_fit(SparseGibbsMLPRegressor(**CHEAP, sampler=RJMCMC(target_accept=a), random_state=0), X, y)
        for a in (0.3, 0.9)
    )
    assert np.all(high.step_size_ < low.step_size_)


def test_rjhmc_settings_reach_the_kernel():
    X, y = _data()
    fixed = _quiet_fit(SparseGibbsMLPRegressor(**CHEAP, sampler=RJHMC(n_jumps=0), random_state=0), X, y)
    active = fixed.samples_ != 0
    assert np.array_equal(active, np.broadcast_to(active[:, :1], active.shape))  # no jump: the sets stay
    assert np.isnan(fixed.move_acceptance_[:, [0, 2]]).all() and np.all(fixed.move_acceptance_[:, 1] > 0)
    low, high = (
        _quiet_fit(SparseGibbsMLPRegressor(**CHEAP, sampler=RJHMC(target_accept=a), random_state=0), X, y)
        for a in (0.6, 0.95)
    )
    assert np.all(high.step_size_ < low.step_size_)
    assert np.all(np.isfinite(low.move_acceptance_))


def test_uniform_box_prior_of_the_paper_keeps_weights_in_the_box():
    X, y = _data()
    est = _quiet_fit(SparseGibbsMLPRegressor(**CHEAP, prior_std=None, weight_bound=3.0, random_state=0), X, y)
    assert np.abs(est.samples_).max() <= 3.0


def test_input_relevance_follows_live_paths():
    spec = MLPSpec(3, (2, 2), "relu")
    coefs = [
        np.array([[1.0, 1.0], [0.0, 2.0], [0.0, 0.0]]),  # input 2 unwired
        np.array([[1.0, 0.0], [0.0, 1.0]]),
        np.array([[1.0], [0.0]]),  # only the first unit of layer 2 reaches the output
    ]
    theta = spec.pack(coefs, [np.ones(2), np.ones(2), np.ones(1)])
    # layer-2 unit 0 is fed only by layer-1 unit 0, so only layer-1 unit 0 is live
    assert input_relevance(spec, theta[None]).tolist() == [[0.5, 0.0, 0.0]]


def test_sparsity_drops_an_irrelevant_linear_input():
    # a linear model with one relevant and two pure-noise inputs: the posterior keeps the first
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = 2.0 * X[:, 0] + 0.5 * rng.normal(size=200)
    est = SparseGibbsMLPRegressor(
        hidden_layer_sizes=(), n_samples=200, burn_in=500, pretrain_iter=0, n_chains=4, random_state=0
    )
    _quiet_fit(est, X, y)
    assert np.isclose(est.feature_inclusion_[0], 1.0, rtol=1e-12)  # a weighted mean of ones
    assert np.all(est.feature_inclusion_[1:] < 0.5)
    # without hidden layers an input is in the model exactly when its weight is: the same probability
    np.testing.assert_allclose(est.input_relevance_, est.unpack_inclusion()[0][0][:, 0], rtol=1e-12)
    # the median probability model's inputs: the relevant one alone
    assert (est.input_relevance_ >= 0.5).tolist() == [True, False, False]


def test_credible_sets_of_paper_001(fitted):
    est, X, y = fitted
    f = np.sin(X[:, 0])
    cs = est.credible_sets(X, f_true=f)
    assert isinstance(cs, CredibleSets)
    assert cs.radius == pytest.approx(est.credible_radius(X))
    assert cs.inflation == pytest.approx(np.log(len(y)))
    assert cs.inflated_radius == pytest.approx(np.log(len(y)) * cs.parameter_radius)
    # the radius is the weighted 95% quantile of the sup-distance to the weighted mean, the draws weighed by
    # their chains (the sparse regressor stacks its chains by default)
    theta = est.samples_.reshape(-1, est.samples_.shape[-1]).astype(np.float64)
    w = est._draw_weights()
    w = np.full(len(theta), 1 / len(theta)) if w is None else np.asarray(w, dtype=float) / np.sum(w)
    sup = np.abs(theta - w @ theta).max(1)
    assert w @ (sup <= cs.parameter_radius) >= 0.95 - 1e-12
    assert cs.covered == float(cs.distance <= cs.radius)
    none = est.credible_sets(X, inflation=2.0)
    assert np.isnan(none.distance) and none.inflated_radius == pytest.approx(2 * cs.parameter_radius)
    with pytest.raises(ValueError, match="f_true"):
        est.credible_sets(X, f_true=f[:-1])
    with pytest.raises(ValueError, match="inflation"):
        est.credible_sets(X, inflation=-1.0)


# ------------------------------------------------------------------ tempered SMC

SMC_CHEAP = {"hidden_layer_sizes": (6,), "pretrain_iter": 50, "temperature": 0.1}


@pytest.fixture(scope="module")
def smc_fitted():
    from skgibbs.samplers import SMC

    X, y = _data()
    est = SparseGibbsMLPRegressor(**SMC_CHEAP, sampler=SMC(n_particles=32, max_mcmc_steps=6), random_state=0)
    return _quiet_fit(est, X, y), X, y


def test_smc_fit_is_one_population_with_its_evidence_and_inclusions(smc_fitted):
    est, X, y = smc_fitted
    Q = est.spec_.n_params
    assert est.sampler_name_ == "smc" and est.samples_.shape == (1, 32, Q)
    assert np.isfinite(est.log_evidence_) and np.isfinite(est.log_marginal_likelihood_)
    path = est.temperature_path_
    assert path["beta"][-1] == 1.0 and len(path["beta"]) == est.n_stages_ + 1
    for name in ("n_mcmc_steps", "decorrelation", "birth_acceptance", "death_acceptance", "active_fraction"):
        assert path[name].shape == path["beta"].shape and np.isnan(path[name][0]), name
    # the inclusions are means over the one population of equally weighted particles
    active = est.samples_[0] != 0
    np.testing.assert_allclose(est.inclusion_probability_, active.mean(0))
    np.testing.assert_allclose(est.feature_inclusion_, input_relevance(est.spec_, est.samples_[0]).mean(0))
    assert est.active_fraction_.shape == (1, 32)
    assert est.predict(X).shape == (len(y),) and est.score(X, y) > 0.5
    _, std = est.predict(X[:5], return_std=True)
    assert np.all(std > 0)


def test_smc_fit_is_reproducible_and_pickles(smc_fitted):
    est, X, y = smc_fitted
    again = _quiet_fit(clone(est), X, y)
    np.testing.assert_array_equal(est.samples_, again.samples_)
    assert est.log_evidence_ == again.log_evidence_
    loaded = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))


@pytest.mark.parametrize(
    "setting, value",
    [("n_samples", 50), ("burn_in", 100), ("n_chains", 2), ("thin", 3)],
)
def test_smc_refuses_the_settings_of_chains(setting, value):
    X, y = _data(n=30)
    est = SparseGibbsMLPRegressor(**SMC_CHEAP, sampler="smc", **{setting: value})
    with pytest.raises(ValueError, match=f"{setting}={value!r} is not honoured by sampler='smc'"):
        est.fit(X, y)
    assert not hasattr(est, "samples_")


@pytest.mark.parametrize("chain_weights", ["stacking", "equal"])
def test_smc_takes_either_chain_weights_and_weighs_its_one_population_fully(chain_weights):
    # "stacking" is the estimator's default and "equal" what one population means: SMC accepts both
    X, y = _data(n=30)
    est = _quiet_fit(SparseGibbsMLPRegressor(**SMC_CHEAP, sampler="smc", chain_weights=chain_weights), X, y)
    assert est.samples_.shape[0] == 1
    np.testing.assert_array_equal(est.chain_weights_, [1.0])
    assert not hasattr(est, "pareto_khat_")  # nothing was stacked


def test_monte_carlo_error_of_independent_smc_fits():
    from skgibbs.samplers import SMC
    from skgibbs.estimators.sparse import independent_fits, monte_carlo_error

    X, y = _data(n=40)
    est = SparseGibbsMLPRegressor(**SMC_CHEAP, sampler=SMC(n_particles=16, max_mcmc_steps=3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        fits = independent_fits(est, X, y, n_runs=3, random_state=0)
    assert len({float(f.log_evidence_) for f in fits}) == 3  # three runs, three seeds
    assert not hasattr(est, "samples_")  # the estimator itself is not fitted
    mean, se = monte_carlo_error(fits)
    values = np.stack([f.feature_inclusion_ for f in fits])
    np.testing.assert_allclose(mean, values.mean(0))
    np.testing.assert_allclose(se, values.std(0, ddof=1) / np.sqrt(3))
    mean, se = monte_carlo_error(fits, "log_evidence_")
    assert np.ndim(mean) == 0 and se > 0
    with pytest.raises(ValueError, match="at least two"):
        monte_carlo_error(fits[:1])


def test_a_default_n_jumps_above_a_small_networks_parameters_is_left_to_the_sampler():
    """RJHMC's default of 8 jumps on a network of 4 weights fits; only a value the user gives is refused."""
    X, y = _data()
    est = _quiet_fit(SparseGibbsMLPRegressor(hidden_layer_sizes=(), n_samples=2, burn_in=2, pretrain_iter=10), X[:, :3], y)
    assert est.spec_.n_params < RJHMC().n_jumps
