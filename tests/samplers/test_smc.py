"""sampler="smc": adaptive tempered SMC against closed forms, a two-mode target and the estimators.

Ground truth: the Gaussian linear model, whose tempered evidence
``log int Pi exp(-beta lambda R_n)`` and posterior are closed forms, and the
two-component mixture of :class:`skgibbs.known_posteriors.Mixture2`, whose weights
are known. The Monte Carlo error of SMC is measured by repetition: ten runs
with independent seeds, compared through their mean and the standard
deviation between them (``K_SD`` standard errors of the mean).
"""

import math
import pickle
import warnings

import numpy as np
import pytest
import torch
from scipy.stats import multivariate_normal, truncnorm
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor, SamplerWarning
from skgibbs.potential import LinearPotential, LogDensityPotential
from skgibbs.priors import Prior
from skgibbs.samplers import HMC, SMC, RunSettings, Target, get_sampler, run_chains, smc
from skgibbs.known_posteriors import Mixture2

K_SD = 4.0  # standard errors of a mean of ten runs (t with 9 degrees of freedom: two-sided p = 0.003)
N_RUNS = 10


def _gens(seeds):
    return [torch.Generator().manual_seed(int(s)) for s in seeds]


# -- the Gaussian linear model ------------------------------------------------------------------
N, TEMPERATURE, PRIOR_STD = 100, 0.5, 1.0


@pytest.fixture(scope="module")
def linear():
    """``y = X b + c + noise``: target, design with intercept, and the tempered log evidence."""
    g = torch.Generator().manual_seed(1)
    X = torch.randn(N, 2, generator=g, dtype=torch.float64)
    y = (
        X @ torch.tensor([1.0, -0.5], dtype=torch.float64)
        + 0.3
        + 0.5 * torch.randn(N, generator=g, dtype=torch.float64)
    )
    lam = N / TEMPERATURE
    target = Target(LinearPotential(X, y), Prior(std=PRIOR_STD), lam)
    Xa, yn = np.c_[X.numpy(), np.ones(N)], y.numpy()

    def log_evidence(beta):
        # int N(theta; 0, s0^2 I) exp(-c |y - Xa theta|^2) dtheta, c = beta lambda / n, completing the square
        c = beta * lam / N
        A = np.eye(3) / PRIOR_STD**2 + 2 * c * Xa.T @ Xa
        b = 2 * c * Xa.T @ yn
        return (
            -1.5 * math.log(PRIOR_STD**2)
            - 0.5 * np.linalg.slogdet(A)[1]
            - c * yn @ yn
            + 0.5 * b @ np.linalg.solve(A, b)
        )

    precision = np.eye(3) / PRIOR_STD**2 + 2 * lam / N * Xa.T @ Xa
    cov = np.linalg.inv(precision)
    return target, Xa, yn, log_evidence, cov @ (2 * lam / N * Xa.T @ yn), cov


@pytest.fixture(scope="module")
def linear_runs(linear):
    target = linear[0]
    theta0 = torch.zeros(1, 3, dtype=torch.float64)
    return [SMC(n_particles=256).sample(target, theta0, [run], RunSettings()) for run in range(N_RUNS)]


def test_log_evidence_at_every_stage_matches_the_closed_form(linear, linear_runs):
    """Every stage's running ``log Z_beta`` against ``log int Pi exp(-beta lambda R_n)`` at its own ``beta``.

    The runs choose their own temperatures, so stage ``s`` of the runs is compared through the
    errors ``log Z_hat - log Z`` at each run's ``beta_s``: their mean over the ten runs within
    ``K_SD`` standard errors of zero (``log Z_hat`` is biased by about ``-Var / 2``, a few
    hundredths here, well inside the tolerance), at every stage the runs share and at the last.
    """
    _, Xa, yn, log_evidence, _, _ = linear
    errors = []
    for res in linear_runs:
        path = res.temperature_path
        assert set(path) >= {"beta", "temperature", "log_evidence", "ess", "acceptance_rate", "step_size"}
        assert len({len(v) for v in path.values()}) == 1 and path["beta"][0] == 0 and path["beta"][-1] == 1
        assert np.all(np.diff(path["beta"]) > 0) and res.n_stages == len(path["beta"]) - 1 > 2
        assert path["temperature"][0] == np.inf and path["temperature"][-1] == pytest.approx(TEMPERATURE)
        assert res.log_evidence == path["log_evidence"][-1]
        errors.append([z - log_evidence(b) for b, z in zip(path["beta"], path["log_evidence"])])
    shared = min(len(e) for e in errors)
    stages = np.array([e[1:shared] for e in errors])
    final = np.array([e[-1] for e in errors])
    for err in list(stages.T) + [final]:
        assert abs(err.mean()) < K_SD * err.std(ddof=1) / math.sqrt(N_RUNS) + 0.01, err
    # the evidence moved far from 0 (the test compares something), and the Monte Carlo error is small
    assert log_evidence(1.0) < -30 and final.std(ddof=1) < 0.5
    # with the squared loss, log Z - (n / 2) log(pi T) is log N(y; 0, sigma^2 I + Xa S0 Xa'), sigma^2 = T / 2
    exact = multivariate_normal(np.zeros(N), TEMPERATURE / 2 * np.eye(N) + PRIOR_STD**2 * Xa @ Xa.T).logpdf(
        yn
    )
    lml = np.array([res.log_marginal_likelihood for res in linear_runs])
    assert abs(lml.mean() - exact) < K_SD * lml.std(ddof=1) / math.sqrt(N_RUNS) + 0.01
    log_z = np.array([res.log_evidence for res in linear_runs])
    np.testing.assert_allclose(lml - log_z, -N / 2 * math.log(math.pi * TEMPERATURE))


def test_final_particles_have_the_posterior_mean_and_covariance(linear, linear_runs):
    """Each run's particle mean and covariance; their means over the runs within ``K_SD`` standard errors."""
    _, _, _, _, mean, cov = linear
    draws = [res.samples.reshape(-1, 3) for res in linear_runs]
    means = np.array([d.mean(0) for d in draws])
    covs = np.array([np.cov(d.T, bias=True) for d in draws])
    sd = np.sqrt(np.diag(cov))
    se = means.std(0, ddof=1) / math.sqrt(N_RUNS)
    assert np.all(np.abs(means.mean(0) - mean) < K_SD * se), (means.mean(0) - mean) / se
    cov_se = covs.std(0, ddof=1) / math.sqrt(N_RUNS)
    assert np.all(np.abs(covs.mean(0) - cov) < K_SD * cov_se), (covs.mean(0) - cov) / cov_se
    # the error bars are a small fraction of the posterior's width, so the comparisons have power
    assert np.all(means.std(0, ddof=1) < 0.2 * sd) and np.all(covs.std(0, ddof=1) < 0.3 * np.outer(sd, sd))


def _linear_criteria(linear, beta):
    """The stage criteria of exact draws of the tempered linear posterior at ``beta``, in closed form.

    The posterior is ``N(mu, S)``, so the residual ``r_i = y_i - x_i' theta`` is ``N(m_i, v_i)``:
    ``E r^2 = m^2 + v``, ``Var r^2 = 2 v^2 + 4 m^2 v``, and ``E N(y_i; x_i' theta, s2)`` is
    ``N(m_i; 0, s2 + v_i)``.
    """
    target, Xa, yn = linear[0], linear[1], linear[2]
    c = beta * target.lambda_ / N
    S = np.linalg.inv(np.eye(3) / PRIOR_STD**2 + 2 * c * Xa.T @ Xa)
    m = yn - Xa @ (S @ (2 * c * Xa.T @ yn))
    v = np.einsum("ij,jk,ik->i", Xa, S, Xa)
    s2 = np.mean(m**2 + v)  # the posterior mean of the mean squared residual
    var = (2 * v**2 + 4 * m**2 * v) / (4 * s2**2)  # Var log N(y_i; x_i' theta, s2)
    lppd = -0.5 * np.log(2 * np.pi * (s2 + v)) - 0.5 * m**2 / (s2 + v)
    power = 2 * s2 * beta * target.lambda_ / N  # 2 s2 / T_beta
    return {
        "noise_variance": s2,
        "functional_variance": var.sum(),
        "train_loss": np.mean(m**2) / (2 * s2),
        "generalization_loss": -np.mean(lppd - power * var),
    }


def test_stage_criteria_match_the_closed_form_at_every_stage(linear, linear_runs):
    """WAIC, functional variance, training loss and noise variance of each stage's particles.

    As for the evidence: the errors against the closed form of exact draws at each run's own
    ``beta_s``, their mean over the ten runs within ``K_SD`` standard errors (plus 0.2% of the
    value, the plug-in bias of the noise variance and of ``log mean exp`` with 256 particles).
    """
    names = ("noise_variance", "functional_variance", "train_loss", "generalization_loss")
    errors = {name: [] for name in names}
    for res in linear_runs:
        path = res.temperature_path
        assert np.all(np.isnan([path[name][0] for name in names]))  # beta = 0: the prior
        np.testing.assert_allclose(
            path["langevin_waic"], path["train_loss"] + path["functional_variance"] / N, rtol=1e-12
        )
        exact = [_linear_criteria(linear, b) for b in path["beta"][1:]]
        for name in names:
            errors[name].append([path[name][s + 1] - e[name] for s, e in enumerate(exact)])
    final = _linear_criteria(linear, 1.0)
    for name in names:
        shared = min(len(e) for e in errors[name])
        columns = list(np.array([e[:shared] for e in errors[name]]).T) + [
            np.array([e[-1] for e in errors[name]])
        ]
        for err in columns:
            assert abs(err.mean()) < K_SD * err.std(ddof=1) / math.sqrt(N_RUNS) + 2e-3 * abs(final[name]), (
                name
            )
    # the functional variance is estimated to a few per cent: the comparison has power
    fv = np.array([res.temperature_path["functional_variance"][-1] for res in linear_runs])
    assert fv.std(ddof=1) < 0.1 * final["functional_variance"]


def test_stage_criteria_at_the_target_are_the_fitted_criteria():
    """The path's last stage holds what the estimators compute from the same draws (on the scale of y)."""
    X, y = make_regression(120, 3, noise=5.0, random_state=0)
    y = 3 * y + 40  # far from the standardized scale
    smc_ = SMC(n_particles=32, n_mcmc_steps=2, n_leapfrog=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        reg = GibbsMLPRegressor((6,), sampler=smc_, temperature=0.3, pretrain_iter=30, random_state=0).fit(
            X, y
        )
        Xc, yc = make_classification(120, 4, random_state=0)
        clf = GibbsMLPClassifier((6,), sampler=smc_, pretrain_iter=30, random_state=0).fit(Xc, yc)
    pairs = {
        "generalization_loss": "generalization_loss_",
        "functional_variance": "lfv_",
        "train_loss": "train_loss_",
    }
    for est, extra in (
        (reg, {"langevin_waic": "langevin_waic_", "noise_variance": "noise_variance_"}),
        (clf, {}),
    ):
        path = est.temperature_path_
        for key, attribute in {**pairs, **extra}.items():
            assert path[key][-1] == pytest.approx(getattr(est, attribute), rel=1e-5), key
            assert np.all(np.isfinite(path[key][1:])), key
    assert "noise_variance" not in clf.temperature_path_


# -- the two modes ------------------------------------------------------------------------------------
def test_smc_recovers_the_weights_of_two_modes_that_hmc_chains_miss():
    """``Mixture2``: weights 0.25 / 0.75 of two components 8 sds apart.

    SMC tempers from the prior ``N(0, 5^2 I)`` to the mixture (the loss is ``-log pi + log Pi``,
    so ``Pi exp(-loss)`` is the mixture); the mean responsibility of the first component over the
    particles is an unbiased estimate of its weight (``E_pi[P(k | x)] = w_k``). Tolerance:
    ``K_SD`` standard errors of the mean of ten runs, from their spread (a run of 200 particles
    has a standard deviation of about 0.04; the binomial one of 200 independent draws is 0.03).
    Four HMC chains started in the heavier mode stay there: their estimate is near 0.
    """
    mixture, s0 = Mixture2(weights=(0.25, 0.75), means=((-4.0, 0.0), (4.0, 0.0))), 5.0
    pot = LogDensityPotential(lambda th: mixture.log_prob(th) + 0.5 * (th**2).sum(1) / s0**2)
    target = Target(pot, Prior(std=s0), lambda_=1.0)
    theta0 = torch.zeros(1, 2, dtype=torch.float64)
    weights, log_z = [], []
    for run in range(N_RUNS):
        res = SMC(n_particles=200).sample(target, theta0, [run], RunSettings())
        weights.append(
            float(mixture.responsibilities(torch.as_tensor(res.samples.reshape(-1, 2)))[:, 0].mean())
        )
        log_z.append(res.log_evidence)
    weights, log_z = np.array(weights), np.array(log_z)
    tol = K_SD * weights.std(ddof=1) / math.sqrt(N_RUNS)
    assert abs(weights.mean() - 0.25) < tol < 0.1
    # the evidence: Pi exp(-loss) = mixture / (2 pi s0^2), so Z = 1 / (2 pi s0^2) exactly
    assert (
        abs(log_z.mean() + math.log(2 * math.pi * s0**2))
        < K_SD * log_z.std(ddof=1) / math.sqrt(N_RUNS) + 0.01
    )
    start = torch.tensor([[4.0, 0.0]] * 4, dtype=torch.float64)
    chains = run_chains(
        Target(mixture.potential(), lambda_=1.0), start, [0, 1, 2, 3], HMC(), n_samples=300, burn_in=150
    )
    hmc_weight = float(mixture.responsibilities(torch.as_tensor(chains.samples.reshape(-1, 2)))[:, 0].mean())
    assert hmc_weight < 0.01 and abs(hmc_weight - 0.25) > 3 * tol


# -- the pieces ----------------------------------------------------------------------------------------
def test_systematic_resampling_keeps_floor_or_ceil_of_the_expected_counts():
    gen = torch.Generator().manual_seed(0)
    log_w = torch.randn(50, generator=gen, dtype=torch.float64) * 2
    expected = 50 * torch.softmax(log_w, 0)
    for u in (1e-9, 0.3, 0.999999):
        counts = torch.bincount(smc.systematic_resample(log_w, u), minlength=50).double()
        assert counts.sum() == 50 and torch.all((counts >= expected.floor()) & (counts <= expected.ceil()))


def test_conditional_ess_next_beta_and_the_evidence_increment(linear):
    target = linear[0]
    gens = _gens(range(64))
    state = smc.init(gens, target, target.prior.sample(gens, 3, torch.zeros(1, dtype=torch.float64)))
    assert state.beta == 0.0 and state.log_evidence == 0.0 and state.theta.shape == (64, 3)
    beta = smc.next_beta(state, target, 0.5)
    assert 0 < beta < 1
    log_w, increment, ess = smc.reweight(state, target, beta)
    # the bisection meets the target ESS; uniform weights before: the CESS is the ESS / P
    assert ess / 64 == pytest.approx(0.5, abs=1e-6)
    assert smc.conditional_ess(torch.zeros(64, dtype=torch.float64), log_w) == pytest.approx(ess / 64)
    # with non-uniform weights before, the CESS of Zhou et al. (2016) weighs by them
    W = torch.softmax(log_w, 0)
    incr = torch.linspace(-1, 0, 64, dtype=torch.float64)
    expected = float((W * incr.exp()).sum() ** 2 / (W * (2 * incr).exp()).sum())
    assert smc.conditional_ess(log_w, incr) == pytest.approx(expected)
    loss = target.scale * state.loss
    assert increment == pytest.approx(math.log(float(torch.exp(-beta * loss).mean())))
    # a target the particles already agree with is reached at once
    assert smc.next_beta(state._replace(loss=torch.ones(64, dtype=torch.float64)), target, 0.5) == 1.0


def test_initial_particles_are_exact_prior_draws_inside_the_box():
    pot = LogDensityPotential(lambda th: (0.0 * th).sum(1))  # the prior alone
    gens, like, prior = _gens(range(2000)), torch.zeros(1, dtype=torch.float64), Prior(std=2.0, bound=1.0)
    state = smc.init(gens, Target(pot, prior), prior.sample(gens, 2, like))
    theta = state.theta.numpy()
    assert np.abs(theta).max() <= 1.0
    # N(0, 4) restricted to [-1, 1]; the sample variance has standard error sqrt((m4 - var^2) / n)
    law = truncnorm(-0.5, 0.5, scale=2.0)
    se = math.sqrt((law.moment(4) - law.var() ** 2) / theta.shape[0])
    assert np.all(np.abs(theta.var(0) - law.var()) < K_SD * se)
    assert law.var() < 0.5 * 4.0  # far from the unrestricted variance
    # particle i draws from generator i only
    torch.testing.assert_close(prior.sample(_gens([5]), 2, like)[0], state.theta[5])


def test_step_size_update_aims_at_the_target_acceptance():
    h = 0.1
    assert smc.adapt_step_size(h, 0.8, 0.8) == pytest.approx(h)
    assert smc.adapt_step_size(h, 0.5, 0.8) < h < smc.adapt_step_size(h, 0.95, 0.8)
    assert (
        smc.adapt_step_size(h, 0.0, 0.8) == pytest.approx(h / 2) and smc.adapt_step_size(h, 1.0, 0.8) == 2 * h
    )


def test_same_seeds_same_draws_and_the_global_rng_untouched(linear):
    target, theta0 = linear[0], torch.zeros(1, 3, dtype=torch.float64)
    sampler = SMC(n_particles=30, n_mcmc_steps=2, n_leapfrog=4)
    state = torch.get_rng_state()
    a = sampler.sample(target, theta0, [3, 4, 5], RunSettings())
    assert torch.equal(state, torch.get_rng_state())
    b = sampler.sample(target, theta0, [3, 4, 5], RunSettings())
    c = sampler.sample(target, theta0, [3, 4, 6], RunSettings())
    np.testing.assert_array_equal(a.samples, b.samples)
    # one population of particles: one group of draws, whatever the number of seeds
    assert a.samples.shape == (1, 30, 3) and not np.array_equal(a.samples, c.samples)
    assert (
        a.n_particles == 30
        and a.acceptance_rate.shape == (1,)
        and a.draw_stats["acceptance_rate"].shape == (1, 30)
    )
    # gradients per particle: one at the start, the Gauss-Newton probe and the leapfrog steps of every
    # stage, and the loss at the moved particles of every stage but the last
    assert a.n_grad[0] == 1 + a.n_stages * (1 + 2 * 4) + a.n_stages - 1
    fixed = SMC(n_particles=30, n_mcmc_steps=2, n_leapfrog=4, metric="variances")
    d = fixed.sample(target, theta0, [3, 4, 5], RunSettings())
    assert d.n_grad[0] == 1 + d.n_stages * 2 * 4 + d.n_stages - 1
    # n_particles is rounded up to a multiple of the seeds
    assert SMC(n_particles=31, n_mcmc_steps=1, n_leapfrog=2).sample(
        target, theta0, [1, 2], RunSettings()
    ).samples.shape == (1, 32, 3)


def test_diagnose_reports_collapsed_weights_and_stuck_moves():
    path = {
        "beta": np.array([0.0, 0.1, 1.0]),
        "ess": np.array([64.0, 32.0, 40.0]),
        "acceptance_rate": np.array([np.nan, 0.8, 0.7]),
    }
    assert SMC().diagnose({"temperature_path_": path}) == []
    bad = {**path, "ess": np.array([64.0, 3.0, 40.0]), "acceptance_rate": np.array([np.nan, 0.8, 0.01])}
    messages = SMC().diagnose({"temperature_path_": bad})
    assert len(messages) == 2 and "stage 1" in messages[0] and "n_particles" in messages[0]
    assert "stage 2" in messages[1] and "n_mcmc_steps" in messages[1]


# -- the estimators -----------------------------------------------------------------------------------
CHEAP = {
    "hidden_layer_sizes": (8,),
    "sampler": SMC(n_particles=32, n_mcmc_steps=2, n_leapfrog=8),
    "pretrain_iter": 50,
}


@pytest.fixture(scope="module")
def regression():
    return make_regression(60, 3, noise=10.0, random_state=0)


@pytest.fixture(scope="module")
def fitted(regression):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        return GibbsMLPRegressor(**CHEAP, random_state=0).fit(*regression)


def test_regressor_fit_has_the_smc_results(fitted, regression):
    X, y = regression
    reg, Q = fitted, fitted.spec_.n_params
    assert reg.sampler_name_ == "smc" and isinstance(reg.sampler_, SMC) and reg.samples_.shape == (1, 32, Q)
    path = reg.temperature_path_
    assert len({len(v) for v in path.values()}) == 1 and len(path["beta"]) == reg.n_stages_ + 1
    assert np.all(np.diff(path["beta"]) > 0) and path["beta"][-1] == 1.0
    assert path["temperature"][-1] == pytest.approx(reg.temperature_)
    assert np.isfinite(reg.log_evidence_) and reg.log_evidence_ == path["log_evidence"][-1]
    n = len(y)
    assert reg.log_marginal_likelihood_ == pytest.approx(
        reg.log_evidence_ - n / 2 * math.log(math.pi * reg.temperature_)
    )
    assert reg.n_particles_ == 32 and reg.acceptance_rate_.shape == (1,)
    y_mean, y_std = reg.predict(X[:5], return_std=True)
    assert y_mean.shape == (5,) and np.all(y_std > 0)
    assert reg.predict_interval(X[:5])[1].shape == (5, 2, 1)
    # the particles are the draws: no Markov chains, so no R-hat warning whatever they show
    assert not SMC.mixing_diagnostics and SMC().n_starts(4) == 1
    assert get_sampler("smc").name == "smc"


def test_to_arviz_holds_the_particles(fitted, regression):
    """The particles as ArviZ draws: one chain of independent draws, with the log-likelihood for az.loo."""
    az = pytest.importorskip("arviz")
    X, y = regression
    data = fitted.to_arviz(X, y)
    assert data.posterior["coefs_0"].shape[:2] == (1, fitted.n_particles_)
    assert data.log_likelihood["y"].shape == (1, fitted.n_particles_, len(y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # Pareto k of a small fit: beside the point here
        loo = az.loo(data)
    assert np.isfinite(loo.elpd_loo)


def test_regressor_is_reproducible_and_survives_clone_pickle_and_skops(fitted, regression, tmp_path):
    X, y = regression
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        again = clone(fitted).fit(X, y)
    np.testing.assert_array_equal(again.samples_, fitted.samples_)
    assert again.log_evidence_ == fitted.log_evidence_
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.predict(X), fitted.predict(X))
    persistence = pytest.importorskip("skgibbs.persistence")
    pytest.importorskip("skops.io")
    assert "skgibbs.samplers.smc.sampler.SMC" in persistence.TRUSTED_TYPES
    persistence.dump(fitted, tmp_path / "smc.skops")
    loaded = persistence.load(tmp_path / "smc.skops")
    np.testing.assert_array_equal(loaded.predict(X), fitted.predict(X))
    np.testing.assert_array_equal(loaded.temperature_path_["beta"], fitted.temperature_path_["beta"])


def test_classifier_fits_with_smc():
    X, y = make_classification(80, 4, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        clf = GibbsMLPClassifier(**CHEAP, random_state=0).fit(X, y)
    assert clf.sampler_name_ == "smc" and clf.samples_.shape[:2] == (1, 32)
    assert np.isfinite(clf.log_evidence_) and clf.temperature_path_["beta"][-1] == 1.0
    assert not hasattr(clf, "log_marginal_likelihood_")  # the cross-entropy has no Gaussian normaliser
    assert clf.predict_proba(X[:5]).shape == (5, 2) and clf.score(X, y) > 0.7


@pytest.mark.parametrize(
    "sampler, match",
    [
        (SMC(n_particles=0), "n_particles"),
        (SMC(target_ess=1.0), "target_ess"),
        (SMC(n_mcmc_steps=0), "n_mcmc_steps"),
        (SMC(n_leapfrog=2.5), "n_leapfrog"),
        (SMC(target_accept=0.0), "target_accept"),
        (SMC(step_size=-1.0), "step_size"),
        (SMC(metric="dense"), "metric"),
        (SMC(trajectory_length=0.0), "trajectory_length"),
        (SMC(max_leapfrog=0), "max_leapfrog"),
    ],
)
def test_bad_settings_name_the_setting(sampler, match, regression):
    with pytest.raises(ValueError, match=match):
        GibbsMLPRegressor(**{**CHEAP, "sampler": sampler}).fit(*regression)


@pytest.mark.parametrize("params, match", [({"prior_std": None}, "prior_std"), ({"rho": 0.5}, "rho")])
def test_a_flat_prior_or_batches_are_refused(params, match, regression):
    with pytest.raises(ValueError, match=match):
        GibbsMLPRegressor(**CHEAP, **params).fit(*regression)
    with pytest.raises(ValueError, match="prior_std"):
        SMC().check(Prior(bound=1.0), 1.0)


def test_verbose_shows_a_bar_per_stage_and_one_by_one_evaluation_gives_the_same_draws(linear, capsys):
    target, theta0 = linear[0], torch.zeros(1, 3, dtype=torch.float64)
    sampler = SMC(n_particles=12, n_mcmc_steps=2, n_leapfrog=3)
    batched = sampler.sample(target, theta0, [0, 1], RunSettings(verbose=1))
    assert capsys.readouterr().err.count("SMC stage beta=") >= batched.n_stages
    alone = sampler.sample(target, theta0, [0, 1], RunSettings(), vectorize=False)
    np.testing.assert_allclose(alone.samples, batched.samples, rtol=1e-10, atol=1e-12)


# -- the metric of the moves ------------------------------------------------------------------
def test_low_rank_metric_is_the_linear_map_of_the_dense_metric():
    """``L L' = (D^-1 + U U')^-1``; ``to_phi`` inverts ``to_theta``; ``grad_to_phi`` is ``L'``."""
    g = torch.Generator().manual_seed(3)
    Q, r = 7, 3
    D = torch.rand(Q, generator=g, dtype=torch.float64) + 0.5
    U = torch.randn(Q, r, generator=g, dtype=torch.float64) * 2.0
    metric = smc.LowRankMetric(D, U)
    eye = torch.eye(Q, dtype=torch.float64)
    L = metric.to_theta(eye).T  # column j is L e_j
    inverse = torch.linalg.inv(torch.diag(1 / D) + U @ U.T)
    torch.testing.assert_close(L @ L.T, inverse)
    torch.testing.assert_close(metric.grad_to_phi(eye).T, L.T)
    x = torch.randn(5, Q, generator=g, dtype=torch.float64)
    torch.testing.assert_close(metric.to_phi(metric.to_theta(x)), x)
    torch.testing.assert_close(metric.inverse_mass, torch.diagonal(inverse))
    # no columns: the diagonal metric D^-1
    flat = smc.LowRankMetric(D, U[:, :0])
    torch.testing.assert_close(flat.to_theta(x), x * D.sqrt())
    torch.testing.assert_close(flat.inverse_mass, D)


def _gauss_newton(spec, theta, X, loss):
    """``sum_i J_i' H_i J_i`` of one network ``theta`` ``(Q,)``, exactly, with the Jacobian by autograd."""
    out = spec.forward(theta[None], X)[0]  # (n,) or (n, C)
    J = torch.autograd.functional.jacobian(lambda t: spec.forward(t[None], X)[0], theta)
    if loss == "squared":
        return 2.0 * J.T @ J
    if out.dim() == 1:
        p = torch.sigmoid(out)
        return J.T @ ((p * (1 - p))[:, None] * J)
    p = torch.softmax(out, -1)
    H = torch.diag_embed(p) - p[:, :, None] * p[:, None, :]  # (n, C, C)
    return torch.einsum("icq,icd,idr->qr", J, H, J)


@pytest.mark.parametrize("loss,n_outputs", [("squared", 1), ("cross_entropy", 1), ("cross_entropy", 3)])
def test_gauss_newton_probes_have_the_gauss_newton_matrix_as_second_moment(loss, n_outputs):
    """``E[g g'] = sum_i J_i' H_i J_i`` for the probes of :func:`smc.fisher_metric`, entry by entry."""
    from skgibbs.model import MLPSpec
    from skgibbs.potential import MLPPotential

    g = torch.Generator().manual_seed(4)
    spec = MLPSpec(n_features=2, hidden_layer_sizes=(3,), activation="tanh", n_outputs=n_outputs)
    X = torch.randn(6, 2, generator=g, dtype=torch.float64)
    y = torch.zeros(6, dtype=torch.float64)
    theta = torch.randn(spec.n_params, generator=g, dtype=torch.float64)
    P = 4000
    pot = MLPPotential(spec, X, y, loss)
    probes = smc.metric._gauss_newton_probes(pot, theta.expand(P, -1).clone(), _gens(range(P)))
    products = probes[:, :, None] * probes[:, None, :]  # (P, Q, Q)
    exact = _gauss_newton(spec, theta, X, loss)
    se = products.std(0) / math.sqrt(P)
    z = (products.mean(0) - exact) / se.clamp_min(1e-12)
    assert float(z.abs().max()) < 5.0
    assert float(exact.abs().max()) > 20 * float(se.max())  # the test has power


def test_gauss_newton_probes_of_the_linear_model_and_a_potential_without_outputs(linear):
    """The linear model's probes have second moment ``2 X' X``; a potential without outputs has none."""
    target = linear[0]
    X = target.potential.X
    P = 4000
    theta = torch.zeros(P, 3, dtype=torch.float64)
    probes = smc.metric._gauss_newton_probes(target.potential, theta, _gens(range(P)))
    products = probes[:, :, None] * probes[:, None, :]
    z = (products.mean(0) - 2 * X.T @ X) / (products.std(0) / math.sqrt(P))
    assert float(z.abs().max()) < 5.0
    pot = LogDensityPotential(Mixture2().log_prob)
    assert smc.metric._gauss_newton_probes(pot, torch.zeros(4, 2, dtype=torch.float64), _gens(range(4))) is None


@pytest.mark.parametrize("metric", smc.sampler.METRICS)
def test_every_metric_reaches_the_gaussian_posterior(linear, metric):
    """Final particles' mean against the closed form for each metric (one run of 256, 4 standard errors)."""
    target, _, _, _, mean, cov = linear
    res = SMC(n_particles=256, metric=metric).sample(
        target, torch.zeros(1, 3, dtype=torch.float64), [11], RunSettings()
    )
    draws = res.samples.reshape(-1, 3)
    z = (draws.mean(0) - mean) / np.sqrt(np.diag(cov) / draws.shape[0])
    assert np.abs(z).max() < 4.0
    np.testing.assert_allclose(draws.var(0), np.diag(cov), rtol=0.35)


def test_trajectory_length_sets_the_leapfrog_steps_within_their_bounds(linear):
    """``ceil(trajectory_length / h)`` leapfrog steps, at least ``n_leapfrog`` and at most ``max_leapfrog``."""
    sampler = SMC(n_leapfrog=4, trajectory_length=1.0, max_leapfrog=32)
    assert [sampler._n_leapfrog(h) for h in (0.5, 0.1, 0.01)] == [4, 10, 32]
    assert SMC(n_leapfrog=7)._n_leapfrog(0.001) == 7
    target, theta0 = linear[0], torch.zeros(1, 3, dtype=torch.float64)
    fixed = SMC(n_particles=32, n_mcmc_steps=1, n_leapfrog=2).sample(target, theta0, [0], RunSettings())
    longer = SMC(n_particles=32, n_mcmc_steps=1, n_leapfrog=2, trajectory_length=1.0).sample(
        target, theta0, [0], RunSettings()
    )
    assert longer.n_grad[0] > fixed.n_grad[0]
