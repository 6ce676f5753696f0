"""skgibbs.problem.build_problem: the posterior problem a fit samples, without sampling it."""

import warnings

import numpy as np
import pytest
import torch
from sklearn.base import clone

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor, SamplerWarning, SparseGibbsMLPRegressor
from skgibbs.priors import HierarchicalPrior, MixingPrior, Prior
from skgibbs.problem import PosteriorProblem, build_problem, fitted_prior
from skgibbs.samplers import CSMALA, HMC, MALA, RJMCMC, ChainResult, MeanFieldVI, Target, run_chains

CHEAP = {"hidden_layer_sizes": (6,), "n_samples": 10, "burn_in": 20, "pretrain_iter": 50, "n_chains": 2}

ESTIMATORS = {
    # the regressor's defaults: MCLMC on ARD with the noise learned
    "mclmc": GibbsMLPRegressor(**CHEAP, random_state=5),
    # the fixed prior at the plug-in temperature: "auto" is HMC
    "hmc": GibbsMLPRegressor(**CHEAP, prior="fixed", temperature="plug-in", random_state=0),
    "csmala": GibbsMLPRegressor(
        **CHEAP, sampler=CSMALA(correction=0.5), rho=0.5, temperature=20.0, random_state=1
    ),
    "vi": GibbsMLPRegressor(  # no burn-in: VI refuses one
        **{**CHEAP, "burn_in": "auto"}, sampler=MeanFieldVI(max_iter=50, parametrization="mean-field"),
        random_state=2,
    ),
    "classifier": GibbsMLPClassifier(**CHEAP, sampler="mala", random_state=3),
    "sparse": SparseGibbsMLPRegressor(**CHEAP, sampler=RJMCMC(target_accept=0.7), random_state=4),
}


def _data(classify=False, n=50, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)
    return X, ((y > 0).astype(int) if classify else y)


def _quiet_fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        return est.fit(X, y)


def _std(prior):
    """The Gaussian part of a prior as a NumPy array (the base of a mixing prior)."""
    base = prior.base if isinstance(prior, MixingPrior) else prior
    return np.asarray(torch.as_tensor(base.std, dtype=torch.float32).cpu())


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_the_problem_is_what_fit_samples(name):
    est = ESTIMATORS[name]
    X, y = _data(classify=isinstance(est, GibbsMLPClassifier))
    problem = build_problem(clone(est), X, y)
    fitted = _quiet_fit(clone(est), X, y)
    assert isinstance(problem, PosteriorProblem)
    # the same temperature, lambda, prior, kernel and budget as the fit
    if fitted.temperature_source_ == "learned":
        # the chains start at the plug-in; the fit then sets temperature_ at the draws' mean noise variance
        assert problem.temperature == pytest.approx(2.0 * problem.heldout_loss) and problem.prior.learns_noise
        noise = fitted.sample_stats_["noise_variance"] / fitted.y_scale_**2  # standardized scale
        assert fitted.temperature_ == pytest.approx(2.0 * noise.mean(), rel=1e-12)
    else:
        assert problem.temperature == fitted.temperature_
        assert problem.target.lambda_ == fitted.lambda_
    assert fitted.lambda_ == len(y) / fitted.temperature_
    assert type(problem.sampler) is type(fitted.sampler_)
    assert problem.sampler.get_params() == fitted.sampler_.get_params()
    assert problem.sampler.name == fitted.sampler_name_
    assert problem.run.rho == fitted.rho_ and problem.run.n_samples == CHEAP["n_samples"]
    assert problem.run.burn_in == (CHEAP["burn_in"] if name != "vi" else fitted.sampler_.default_burn_in)
    assert problem.spec == fitted.spec_
    prior = fitted_prior(fitted)
    assert type(problem.prior) is type(prior) and problem.target.prior is problem.prior
    np.testing.assert_array_equal(_std(problem.prior), _std(prior))
    if isinstance(prior, MixingPrior):
        assert problem.prior.sparsity == prior.sparsity
    if isinstance(prior, HierarchicalPrior):
        assert problem.prior.names == prior.names and fitted.prior_ == "ard"
        np.testing.assert_array_equal(problem.prior.group.numpy(), prior.group.numpy())
    # the same standardized data and starting points: one per chain, VI one for its single q
    Xs = (X - fitted.x_mean_) / fitted.x_scale_
    np.testing.assert_array_equal(problem.X.numpy(), Xs.astype(np.float32))
    assert problem.theta0.shape == (1 if name == "vi" else CHEAP["n_chains"], fitted.spec_.n_params)
    assert len(problem.seeds) == CHEAP["n_chains"]
    # and so the same draws, bit for bit
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        result = problem.sample()
    assert isinstance(result, ChainResult)
    np.testing.assert_array_equal(result.samples, fitted.samples_)
    np.testing.assert_array_equal(result.n_grad, fitted.n_grad_evals_)


def test_building_twice_gives_the_same_problem_and_no_fit():
    X, y = _data()
    est = clone(ESTIMATORS["hmc"])
    a, b = build_problem(est, X, y), build_problem(est, X, y)
    assert a.seeds == b.seeds and a.temperature == b.temperature
    torch.testing.assert_close(a.theta0, b.theta0, rtol=0, atol=0)
    # build_problem reads the estimator and sets nothing on it: what it resolves is in the problem
    assert not [name for name in vars(est) if name.endswith("_")]
    assert a.sampler.name == "hmc" and a.run.rho == 1.0 and a.lambda_ == 50 / a.temperature
    assert (a.prior_kind, a.temperature_source) == ("fixed", "plug-in")
    assert a.inputs == {"n_features_in_": 3} and set(a.encoding) == {"y_mean_", "y_scale_"}
    # another random_state, other seeds and starting points
    c = build_problem(clone(est).set_params(random_state=1), X, y)
    assert c.seeds != a.seeds and not torch.equal(c.theta0, a.theta0)


@pytest.mark.parametrize(
    "est, burn_in, thin, n_samples",
    [
        (GibbsMLPRegressor(), 200, 1, 175),  # MCLMC
        (GibbsMLPRegressor(prior="fixed", temperature="plug-in"), 250, 1, 175),  # HMC
        (GibbsMLPRegressor(rho=0.5), 1000, 10, 175),
        (GibbsMLPRegressor(sampler="vi"), 0, 1, 50),  # independent draws
        (SparseGibbsMLPRegressor(), 250, 1, 175),
        (SparseGibbsMLPRegressor(sampler="rjmcmc"), 2000, 10, 175),
        (GibbsMLPClassifier(sampler=MALA()), 1000, 10, 175),
        (GibbsMLPClassifier(sampler="vi"), 0, 1, 50),
    ],
)
def test_auto_budget_is_the_samplers_default(est, burn_in, thin, n_samples):
    X, y = _data(classify=isinstance(est, GibbsMLPClassifier))
    problem = build_problem(clone(est).set_params(hidden_layer_sizes=(3,), pretrain_iter=0), X, y)
    assert (problem.run.burn_in, problem.run.thin, problem.run.n_samples) == (burn_in, thin, n_samples)
    assert (problem.sampler.default_burn_in, problem.sampler.default_thin) == (burn_in, thin)
    assert problem.sampler.default_n_samples == n_samples
    # a number given is kept whatever the sampler
    given = build_problem(clone(est).set_params(hidden_layer_sizes=(3,), pretrain_iter=0, n_samples=7), X, y)
    assert given.run.n_samples == 7


def test_the_problem_leaves_the_users_sampler_object_alone():
    X, y = _data()
    sampler = HMC(target_accept=0.9)
    est = GibbsMLPRegressor(**CHEAP, sampler=sampler, random_state=0)
    problem = build_problem(est, X, y)
    assert problem.sampler is not sampler and problem.sampler.get_params() == sampler.get_params()
    assert est.sampler is sampler and not hasattr(est, "sampler_")


def test_another_kernel_runs_on_the_same_problem():
    # what a comparison of kernels from the same starting points needs: no private method
    X, y = _data()
    problem = build_problem(clone(ESTIMATORS["hmc"]), X, y)
    assert isinstance(problem.target, Target) and isinstance(problem.prior, Prior)
    res = run_chains(problem.target, problem.theta0, problem.seeds, MALA(), n_samples=7, burn_in=10)
    assert res.samples.shape == (2, 7, problem.spec.n_params) and np.isfinite(res.samples).all()
    assert res.acceptance_rate.shape == (2,) and res.proposal_std.shape == (2,)
    # the problem's own kernel through run_chains is the problem's sample()
    same = run_chains(
        problem.target, problem.theta0, problem.seeds, problem.sampler, **problem.run._asdict(),
        vectorize=problem.vectorize, n_jobs=problem.n_jobs,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        np.testing.assert_array_equal(same.samples, problem.sample().samples)


@pytest.mark.parametrize(
    "est, match",
    [
        (GibbsMLPRegressor(sampler=CSMALA(correction=-1), rho=0.5), "correction"),
        (GibbsMLPRegressor(sampler=MeanFieldVI(), rho=0.5), "batch_size"),
        (GibbsMLPRegressor(temperature=-1.0), "temperature"),
        (SparseGibbsMLPRegressor(sampler=MeanFieldVI()), "MixingPrior"),
        (GibbsMLPRegressor(sampler=RJMCMC()), "sampler"),
    ],
)
def test_bad_settings_fail_as_in_fit(est, match):
    X, y = _data()
    with pytest.raises(ValueError, match=match):
        build_problem(clone(est), X, y)
    with pytest.raises(ValueError, match=match):
        clone(est).fit(X, y)
