"""The sampler protocol: the registry, sampler objects as estimators, ChainResult, and a new kernel.

The last part defines a kernel the library does not have (a random-walk
Metropolis sampler with its own driver, records and summary), registers it
for the duration of a test, and runs it through
:func:`~skgibbs.samplers.run_chains` unchanged: what the runner promises to
any kernel.
"""

import inspect
import math
import pickle
from typing import NamedTuple

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError

from skgibbs import GibbsMLPRegressor
from skgibbs._random import normal, select, uniform
from skgibbs.diagnostics import effective_sample_size
from skgibbs.potential import FunctionPotential
from skgibbs.priors import MixingPrior, Prior
from skgibbs.samplers import (
    CSMALA,
    HMC,
    MALA,
    MCLMC,
    RJHMC,
    RJMCMC,
    SGHMC,
    SGLD,
    SMALA,
    SMC,
    AdjustedMCLMC,
    ChainResult,
    ChainSampler,
    MeanFieldVI,
    Sampler,
    Target,
    available_samplers,
    base,
    get_sampler,
    register,
    run_chains,
)

LIBRARY = {
    "hmc": HMC,
    "mala": MALA,
    "smala": SMALA,
    "csmala": CSMALA,
    "sgld": SGLD,
    "sghmc": SGHMC,
    "rjmcmc": RJMCMC,
    "rjhmc": RJHMC,
    "vi": MeanFieldVI,
    "smc": SMC,
    "mclmc": MCLMC,
    "adjusted_mclmc": AdjustedMCLMC,
}

# every constructor parameter of every sampler set away from its default
NON_DEFAULT = {
    HMC: dict(
        step_size=0.01, target_accept=0.9, metric="adaptive", trajectory_length="chees", max_leapfrog=16
    ),
    MALA: dict(step_size=1e-3, proposal_std=0.1, target_accept=0.6),
    SMALA: dict(step_size=1e-3, proposal_std=0.1, target_accept=0.6, restart_after=10),
    CSMALA: dict(
        step_size=1e-3,
        proposal_std=0.1,
        target_accept=0.6,
        restart_after=None,
        correction=0.5,
        correction_every=10,
        compensate=False,
    ),
    SGLD: dict(step_size=1e-3),
    SGHMC: dict(batch_size=8, step_size=0.05, friction=0.2, schedule="constant", burn_in_epochs=5, epochs_per_draw=2),
    RJMCMC: dict(step_size=1e-3, proposal_std=0.1, target_accept=0.5),
    RJHMC: dict(
        step_size=1e-3, target_accept=0.9, trajectory_length=1.0, max_leapfrog=16, n_jumps=2, hold_active=0.25
    ),
    MeanFieldVI: dict(
        kl_weight=1.0,
        tau=0.1,
        parametrization="mean-field",
        max_iter=10,
        learning_rate=0.1,
        batch_size=32,
        early_stopping=False,
        gradient="reparam",
    ),
    SMC: dict(
        n_particles=16,
        target_ess=0.3,
        n_mcmc_steps=1,
        n_leapfrog=4,
        target_accept=0.7,
        step_size=0.05,
        metric="gradients",
        trajectory_length=0.5,
        max_leapfrog=32,
        n_jumps=2,
        max_mcmc_steps=5,
        decorrelation=0.3,
        max_beta_growth=4.0,
    ),
    MCLMC: dict(
        desired_energy_var=1e-3, steps_per_transition=4, integrator="leapfrog", preconditioning=False, L_factor=0.3,
        parametrization="centered", rescaling=True,
    ),
    AdjustedMCLMC: dict(target_accept=0.8, max_steps=16, integrator="leapfrog", preconditioning=False, L_factor=0.3,
                        parametrization="centered", rescaling=True),
}

Y = torch.linspace(-1.0, 1.0, 20, dtype=torch.float64)


def _mean_target(lam=2.0, prior=Prior()):
    """``l_i(theta) = (y_i - theta_1)^2`` on 20 points."""
    return Target(FunctionPotential(lambda th, idx: (Y[idx] - th[:, :1]) ** 2, n_data=len(Y)), prior, lam)


# ------------------------------------------------------------------ registry
@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_get_sampler_makes_a_new_default_object_per_name(name):
    a, b = get_sampler(name), get_sampler(name)
    assert type(a) is LIBRARY[name] and a.name == name
    assert a is not b  # a fresh object each time: the caller may change it freely
    assert a.get_params() == LIBRARY[name]().get_params()


def test_auto_is_hmc_on_the_full_data_and_csmala_on_batches():
    assert type(get_sampler("auto")) is HMC and type(get_sampler("auto", rho=1.0)) is HMC
    assert type(get_sampler("auto", rho=0.5)) is CSMALA
    # and the runner's default follows it: HMC's summary at rho = 1, csMALA's below
    run = dict(n_samples=2, burn_in=2)
    theta0 = torch.zeros(2, 1, dtype=torch.float64)
    assert "n_divergent" in run_chains(_mean_target(), theta0, [0, 1], **run).info
    assert "correction" in run_chains(_mean_target(), theta0, [0, 1], rho=0.5, **run).info


def test_get_sampler_clones_an_object():
    mine = HMC(target_accept=0.9, metric="identity")
    got = get_sampler(mine, rho=0.5)
    assert type(got) is HMC and got is not mine  # an object is kept, whatever rho
    assert got.get_params() == mine.get_params()
    got.set_params(target_accept=0.7)
    assert mine.target_accept == 0.9  # the caller's object is never changed
    # run_chains resolves its sampler the same way
    run_chains(_mean_target(), torch.zeros(1, 1, dtype=torch.float64), [0], mine, n_samples=2, burn_in=2)
    assert mine.get_params() == HMC(target_accept=0.9, metric="identity").get_params()


@pytest.mark.parametrize("bad", ["nuts", "", "HMC"])
def test_unknown_name_raises_naming_the_options(bad):
    with pytest.raises(ValueError, match=repr(bad)) as err:
        get_sampler(bad)
    message = str(err.value)
    assert "'auto'" in message
    for name in LIBRARY:
        assert repr(name) in message, name


def test_register_refuses_a_duplicate_or_empty_name():
    before = dict(base._REGISTRY)
    for name in ("hmc", "", None):
        cls = type("Refused", (Sampler,), {"name": name})
        with pytest.raises(ValueError, match="new, non-empty name"):
            register(cls)
    assert base._REGISTRY == before  # nothing was replaced or added
    assert get_sampler("hmc").__class__ is HMC


def test_available_samplers_by_kind_of_prior():
    assert available_samplers("dense") == [
        "adjusted_mclmc", "csmala", "hmc", "mala", "mclmc", "sghmc", "sgld", "smala", "smc", "vi"
    ]
    # tempered SMC serves both kinds (its prior_kinds); every other sampler its prior_kind
    assert available_samplers("sparse") == ["rjhmc", "rjmcmc", "smc"]
    assert available_samplers() == sorted(LIBRARY)
    assert available_samplers("no such kind") == []
    for name in available_samplers("dense"):
        assert LIBRARY[name].prior_kind == "dense"
    assert LIBRARY["smc"].prior_kinds == ("dense", "sparse")


# ------------------------------------------------------------ ChainResult
def test_chain_result_reads_info_entries_as_attributes():
    step = np.array([0.1, 0.2])
    res = ChainResult(np.zeros((2, 3, 1)), None, np.ones(2, dtype=int), {}, False, {"step_size": step})
    assert res.step_size is step and res.info["step_size"] is step
    assert res.samples.shape == (2, 3, 1) and res.acceptance_rate is None  # the fields themselves
    with pytest.raises(AttributeError, match=r"no 'n_divergent' \(its info has \['step_size'\]\)"):
        res.n_divergent
    assert not hasattr(res, "n_divergent") and getattr(res, "n_divergent", "absent") == "absent"
    again = pickle.loads(pickle.dumps(res))
    np.testing.assert_array_equal(again.step_size, step)


def test_each_kernel_result_has_its_own_entries_only():
    theta0 = torch.zeros(2, 1, dtype=torch.float64)
    run = dict(n_samples=3, burn_in=3)
    hmc = run_chains(_mean_target(), theta0, [0, 1], HMC(), **run)
    csmala = run_chains(_mean_target(), theta0, [0, 1], CSMALA(), rho=0.5, **run)
    assert hmc.n_divergent.shape == (2,) and isinstance(csmala.correction, float)
    with pytest.raises(AttributeError, match="n_divergent"):
        csmala.n_divergent
    with pytest.raises(AttributeError, match="correction"):
        hmc.correction


# ------------------------------------------------- sampler objects as estimators
@pytest.mark.parametrize("cls", list(NON_DEFAULT), ids=lambda c: c.__name__)
def test_get_params_set_params_and_clone(cls):
    params = NON_DEFAULT[cls]
    defaults = cls().get_params()
    # get_params reports exactly the constructor's parameters, and the test changes all of them
    assert set(defaults) == set(inspect.signature(cls.__init__).parameters) - {"self"} == set(params)
    assert all(params[k] != defaults[k] for k in params)
    obj = cls(**params)
    assert obj.get_params() == params
    copy = clone(obj)
    assert type(copy) is cls and copy is not obj and copy.get_params() == params
    fresh = cls()
    assert fresh.set_params(**params) is fresh and fresh.get_params() == params
    with pytest.raises(ValueError, match="no_such_setting"):
        cls().set_params(no_such_setting=1)
    assert repr(obj).startswith(f"{cls.__name__}(")


@pytest.mark.parametrize("cls", list(NON_DEFAULT), ids=lambda c: c.__name__)
def test_sampler_objects_pickle(cls):
    obj = cls(**NON_DEFAULT[cls])
    again = pickle.loads(pickle.dumps(obj))
    assert type(again) is cls and again.get_params() == obj.get_params()


@pytest.mark.parametrize("cls", list(NON_DEFAULT), ids=lambda c: c.__name__)
def test_every_setting_has_a_declared_constraint_that_check_applies(cls):
    # one validation mechanism: scikit-learn's constraints, declared on the class, as on the estimators
    assert set(cls._parameter_constraints) == set(cls().get_params())
    prior = MixingPrior(Prior(std=1.0)) if "sparse" in base._kinds(cls) else Prior(std=1.0)
    for params in ({}, NON_DEFAULT[cls]):  # the defaults and every other value the tests use pass
        cls(**params).check(prior, 1.0)
    for name in cls().get_params():
        # a value no constraint admits: scikit-learn's error, a ValueError, naming the setting and the sampler
        with pytest.raises(InvalidParameterError, match=f"The '{name}' parameter of {cls.__name__} must be"):
            cls(**{name: object()}).check(prior, 1.0)


def test_a_setting_is_refused_before_the_prior_and_rho_are_read():
    # validation comes first: a bad setting is named even where the prior or rho would be refused too
    with pytest.raises(InvalidParameterError, match="'target_accept' parameter of HMC"):
        HMC(target_accept=2.0).check(MixingPrior(Prior(std=1.0)), 0.5)


def test_a_pickled_sampler_draws_what_the_original_draws():
    target, theta0 = _mean_target(), torch.zeros(2, 1, dtype=torch.float64)
    sampler = CSMALA(correction=0.5, step_size=1e-3)
    again = pickle.loads(pickle.dumps(sampler))
    run = dict(rho=0.5, n_samples=10, burn_in=10)
    a = run_chains(target, theta0, [3, 4], sampler, **run)
    b = run_chains(target, theta0, [3, 4], again, **run)
    np.testing.assert_array_equal(a.samples, b.samples)


def test_an_estimator_reaches_its_samplers_settings():
    # the reason samplers are estimators: clone, get_params and set_params of the
    # estimator reach sampler__<setting>, as GridSearchCV needs
    est = GibbsMLPRegressor(sampler=HMC(target_accept=0.9))
    assert est.get_params()["sampler__target_accept"] == 0.9
    est.set_params(sampler__metric="adaptive")
    assert est.sampler.metric == "adaptive"
    copy = clone(est)
    assert copy.sampler is not est.sampler
    assert copy.sampler.get_params() == HMC(target_accept=0.9, metric="adaptive").get_params()


# ------------------------------------------------------- a kernel of one's own
TOY = "test_base_random_walk"
TARGET_ACCEPT = 0.44  # a good acceptance of one-dimensional random-walk Metropolis


def _random_walk_class():
    """A random-walk Metropolis sampler written against the protocol alone.

    ``theta' = theta + s xi``, accepted with ``min(1, exp(U(theta) - U(theta')))``;
    warm-up adapts each chain's ``s`` toward an acceptance of 0.44
    (Robbins-Monro on ``log s``), the groups' adapted ``s`` are pooled into one
    before sampling (``pool``/``share``). Records: ``accepted``, ``moved``
    (reduced by ``any``), ``sq_jump`` (``sum``), ``energy`` (the last) and
    ``scratch`` (dropped). Defined in a function, so that it is nothing the
    library knows of.
    """

    class State(NamedTuple):
        theta: torch.Tensor  # (K, Q)
        energy: torch.Tensor  # (K,) U(theta), cached

    class Chains:
        def __init__(self, sampler, target, theta0, generators, run):
            self.target, self.run, self.gens = target, run, generators
            self.K = theta0.shape[0]
            self.s = torch.full((self.K,), float(sampler.scale), dtype=theta0.dtype)
            self.state = State(theta0, self._energy(theta0))
            self.n_grad = np.zeros(self.K, dtype=np.int64)  # no gradient: stays 0
            self.n_warm = 0
            self.warm_s = None

        def _energy(self, theta):
            return self.target.scale * self.target.loss_sum(theta) - self.target.log_prior(theta)

        def _transition(self, s):
            theta = self.state.theta
            prop = theta + s[:, None] * normal(self.gens, theta.shape[1], theta)
            proposal = State(prop, self._energy(prop))
            log_alpha = self.state.energy - proposal.energy
            accept = torch.log(uniform(self.gens, theta)) < log_alpha
            self.state = select(accept, proposal, self.state)
            return accept, torch.exp(log_alpha.clamp(max=0.0)), ((self.state.theta - theta) ** 2).sum(1)

        def warmup(self):
            for i in range(self.run.burn_in):
                _, prob, _ = self._transition(self.s)
                self.s = self.s * torch.exp((prob - TARGET_ACCEPT) / math.sqrt(i + 1))
                self.n_warm += 1
            self.warm_s = self.s.clone()

        def frozen_params(self):
            return self.s.clone()

        def sample_step(self, s):
            accept, _, jump = self._transition(s)
            return {
                "accepted": accept,
                "moved": accept.clone(),
                "sq_jump": jump,
                "energy": self.state.energy.clone(),
                "scratch": torch.zeros_like(jump),
            }

        def summary(self):
            return {
                "warm_scale": self.warm_s.numpy(),  # per chain: concatenated over the groups
                "scale": float(self.s[0]),  # shared: the pooled scale
                "n_warmup": self.n_warm,
            }

    class RandomWalk(ChainSampler):
        """Random-walk Metropolis with step ``scale`` (see :func:`_random_walk_class`)."""

        name = TOY
        default_burn_in, default_thin = 200, 2
        record_reductions = {"moved": "any", "sq_jump": "sum", "scratch": None}
        shared_info = ("scale",)

        def __init__(self, scale=0.5):
            self.scale = scale

        def chains(self, target, theta0, generators, run, vectorize=True):
            return Chains(self, target, theta0, generators, run)

        def pool(self, drivers):
            return float(np.mean(np.concatenate([d.warm_s.numpy() for d in drivers])))

        def share(self, driver, pooled):
            driver.s = torch.full_like(driver.s, pooled)

        def summarize_records(self, logs, rho):
            return {"n_moves": logs["moved"].sum(0).numpy()}

    return RandomWalk


@pytest.fixture
def random_walk():
    """The toy sampler, registered under a name of its own for the test, and removed after."""
    assert TOY not in base._REGISTRY
    cls = register(_random_walk_class())
    yield cls
    base._REGISTRY.pop(TOY, None)


def _toy_target():
    # l_i = (y_i - theta_1)^2 and a N(0, 1) prior on both coordinates at lambda = 2:
    # U = 2 (theta_1 - ybar)^2 + (theta_1^2 + theta_2^2) / 2 + const, so theta_1 ~
    # N(4 ybar / 5, 1 / 5) and theta_2 ~ N(0, 1), independent
    return _mean_target(lam=2.0, prior=Prior(std=1.0))


TOY_MEAN = np.array([4 * float(Y.mean()) / 5, 0.0])
TOY_VAR = np.array([1 / 5, 1.0])


def test_a_registered_kernel_is_reachable_by_name(random_walk):
    assert TOY in available_samplers() and TOY in available_samplers("dense")
    assert type(get_sampler(TOY)) is random_walk
    theta0 = torch.zeros(2, 2, dtype=torch.float64)
    by_name = run_chains(_toy_target(), theta0, [0, 1], TOY, n_samples=5, burn_in=5)
    by_object = run_chains(_toy_target(), theta0, [0, 1], random_walk(), n_samples=5, burn_in=5)
    np.testing.assert_array_equal(by_name.samples, by_object.samples)


@pytest.mark.parametrize("vectorize, n_jobs", [(True, 2), (False, None)])
def test_a_new_kernel_runs_through_run_chains_unchanged(random_walk, vectorize, n_jobs):
    target = _toy_target()
    K, burn_in, n_samples, thin = 4, 300, 40, 3
    theta0 = torch.tensor([[2.0, -2.0], [-2.0, 2.0], [0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    seeds = [21, 22, 23, 24]
    res = run_chains(target, theta0, seeds, random_walk(), n_samples=n_samples, burn_in=burn_in, thin=thin)
    # the same chains split into groups (worker processes for n_jobs=2) or one by one
    split = run_chains(
        target,
        theta0,
        seeds,
        random_walk(),
        n_samples=n_samples,
        burn_in=burn_in,
        thin=thin,
        vectorize=vectorize,
        n_jobs=n_jobs,
    )
    np.testing.assert_allclose(split.samples, res.samples, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(split.acceptance_rate, res.acceptance_rate)

    # warm-up happened and adapted: the pooled scale is the mean of the chains' adapted ones
    assert res.n_warmup == burn_in
    assert res.warm_scale.shape == (K,) and not np.allclose(res.warm_scale, 0.5)
    assert math.isclose(res.scale, float(np.mean(res.warm_scale)), rel_tol=1e-12)
    np.testing.assert_allclose(split.warm_scale, res.warm_scale, rtol=1e-12)
    assert math.isclose(split.scale, res.scale, rel_tol=1e-12)
    # its summary and summarize_records are merged into info, nothing else is
    assert set(res.info) == {"warm_scale", "scale", "n_warmup", "n_moves"}
    with pytest.raises(AttributeError, match="step_size"):
        res.step_size

    # sampling and thinning: every thin-th state of the same chains
    dense = run_chains(target, theta0, seeds, random_walk(), n_samples=n_samples * thin, burn_in=burn_in)
    assert res.samples.shape == (K, n_samples, 2)
    np.testing.assert_array_equal(res.samples, dense.samples[:, thin - 1 :: thin])
    np.testing.assert_array_equal(res.n_grad, 0)

    # its own records, reduced as its record_reductions say, per draw over the thin transitions
    stats = res.draw_stats
    assert set(stats) == {"acceptance_rate", "moved", "sq_jump", "energy"}  # "scratch" dropped
    accepted = dense.draw_stats["acceptance_rate"].reshape(K, n_samples, thin)  # 0 or 1 per transition
    np.testing.assert_array_equal(stats["acceptance_rate"], accepted.mean(2))
    np.testing.assert_array_equal(stats["moved"], accepted.max(2) > 0)  # "any"
    np.testing.assert_array_equal(res.n_moves, accepted.sum((1, 2)))
    np.testing.assert_allclose(res.acceptance_rate, accepted.mean((1, 2)), rtol=1e-12)
    # "sum": the squared jumps of the thin transitions add up to the states' differences
    steps = np.diff(dense.samples, axis=1) ** 2
    jumps = steps.sum(2)[:, thin - 1 :].reshape(K, n_samples - 1, thin).sum(2)
    np.testing.assert_allclose(stats["sq_jump"][:, 1:], jumps, rtol=1e-10, atol=1e-14)
    # the last transition's energy: U at the kept draw
    u = target.scale * target.loss_sum(torch.as_tensor(res.samples.reshape(-1, 2)))
    u = u - target.log_prior(torch.as_tensor(res.samples.reshape(-1, 2)))
    np.testing.assert_allclose(stats["energy"], u.numpy().reshape(K, n_samples), rtol=1e-12)


def test_a_new_kernel_samples_its_target(random_walk):
    # the toy kernel's draws have the closed-form moments, within k = 4 Monte Carlo
    # standard errors sd / sqrt(ESS) of the very quantity compared
    theta0 = torch.zeros(4, 2, dtype=torch.float64)
    res = run_chains(_toy_target(), theta0, [1, 2, 3, 4], random_walk(), n_samples=8000, burn_in=500)
    x = res.samples
    assert np.all((res.acceptance_rate > 0.3) & (res.acceptance_rate < 0.6))
    mean = x.reshape(-1, 2).mean(0)
    for j in range(2):
        ess = effective_sample_size(x[..., j])
        assert ess > 1000  # the tolerance is not vacuous
        assert abs(mean[j] - TOY_MEAN[j]) < 4 * x[..., j].std() / math.sqrt(ess), j
        z = (x[..., j] - mean[j]) ** 2
        tol = 4 * z.std() / math.sqrt(effective_sample_size(z))
        assert abs(z.mean() - TOY_VAR[j]) < tol, (j, z.mean(), TOY_VAR[j], tol)
        # power: a variance 30 % off is rejected
        assert abs(z.mean() - 1.3 * TOY_VAR[j]) > tol, j


def test_the_toy_kernel_left_the_registry():
    # the fixture's teardown removed it: only the library's kernels remain
    assert TOY not in base._REGISTRY
    assert available_samplers() == sorted(LIBRARY)


def test_a_mean_record_keeps_its_own_name_and_a_bad_reduction_is_refused(random_walk):
    # "mean" of a kernel's own record is that record's per-draw mean; it does not
    # replace the acceptance rate
    theta0 = torch.zeros(2, 2, dtype=torch.float64)
    thin = 4
    random_walk.record_reductions = {"sq_jump": "mean"}
    res = run_chains(_toy_target(), theta0, [5, 6], random_walk(), n_samples=30, burn_in=20, thin=thin)
    random_walk.record_reductions = {"sq_jump": "sum"}
    summed = run_chains(_toy_target(), theta0, [5, 6], random_walk(), n_samples=30, burn_in=20, thin=thin)
    np.testing.assert_allclose(res.draw_stats["sq_jump"], summed.draw_stats["sq_jump"] / thin, rtol=1e-12)
    np.testing.assert_array_equal(res.draw_stats["acceptance_rate"], summed.draw_stats["acceptance_rate"])
    random_walk.record_reductions = {"sq_jump": "max"}
    with pytest.raises(ValueError, match=r"record_reductions\['sq_jump'\] must be one of"):
        run_chains(_toy_target(), theta0, [5, 6], random_walk(), n_samples=3, burn_in=2)


def test_run_chains_hands_a_kernel_without_chains_to_its_own_sample():
    # VI has no driver: run_chains returns its fitted q's draws through MeanFieldVI.sample
    from skgibbs.model import MLPSpec
    from skgibbs.potential import MLPPotential

    gen = torch.Generator().manual_seed(0)
    X = torch.randn(40, 2, generator=gen)
    y = X[:, 0] + 0.1 * torch.randn(40, generator=gen)
    spec = MLPSpec(2, (), "relu")
    target = Target(MLPPotential(spec, X, y), Prior(std=1.0), lambda_=40.0)
    kernel = get_sampler("vi").set_params(max_iter=2000, early_stopping=False)
    res = run_chains(target, torch.zeros(1, spec.n_params), [0, 1], kernel, n_samples=7, burn_in=0)
    assert res.samples.shape == (2, 7, spec.n_params) and res.acceptance_rate is None
    assert res.n_iter == 2000 and set(res.draw_stats) == {"log_q"}
    # the draws scatter around q's mean, which fits the slope of about 1
    assert abs(float(res.variational_mean[0]) - 1.0) < 0.2
