"""GibbsMLPClassifier: labels, outputs, criteria, bad input and the logistic-regression ground truth."""

import functools
import pickle
import warnings

import numpy as np
import pytest
from scipy.special import expit
from sklearn.base import clone
from sklearn.datasets import load_iris, make_moons

from skgibbs import GibbsMLPClassifier, SamplerWarning
from skgibbs.diagnostics import effective_sample_size
from skgibbs.known_posteriors import LogisticRegressionGPrior, sample_chains
from skgibbs.samplers import CSMALA, SMC

CHEAP = {"hidden_layer_sizes": (8,), "n_samples": 30, "burn_in": 40, "pretrain_iter": 100, "n_chains": 2}


def _quiet_fit(est, X, y):
    """Fit without the SamplerWarning that a short cheap run may earn."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        return est.fit(X, y)


@pytest.fixture(scope="module")
def binary():
    X, y = make_moons(120, noise=0.2, random_state=0)
    labels = np.array(["no", "yes"])[y]
    return _quiet_fit(GibbsMLPClassifier(**CHEAP, random_state=0), X, labels), X, labels


@pytest.fixture(scope="module")
def multiclass():
    X, y = load_iris(return_X_y=True)  # at temperature 1: the criteria's untempered case
    return _quiet_fit(GibbsMLPClassifier(**CHEAP, temperature=1.0, random_state=0), X, y), X, y


def test_binary_outputs_and_string_labels(binary):
    clf, X, y = binary
    assert clf.classes_.tolist() == ["no", "yes"] and clf.spec_.n_outputs == 1
    P = clf.predict_proba(X[:10])
    assert P.shape == (10, 2) and np.allclose(P.sum(1), 1)
    assert set(clf.predict(X)) <= {"no", "yes"} and clf.score(X, y) > 0.8
    # predict_proba is the mean over the draws of the sigmoid of the logit of classes_[1]
    logits = clf._network_outputs(X[:10])
    assert np.allclose(P[:, 1], expit(logits).mean(0))
    draws = clf.predict_samples(X[:10])
    assert draws.shape == (10, 2 * 30, 2) and np.allclose(draws.mean(1), P)
    assert np.allclose(clf.predict_log_proba(X[:10]), np.log(P))


def test_multiclass_outputs(multiclass):
    clf, X, y = multiclass
    assert clf.classes_.tolist() == [0, 1, 2] and clf.spec_.n_outputs == 3
    P = clf.predict_proba(X)
    assert P.shape == (150, 3) and np.allclose(P.sum(1), 1)
    assert np.array_equal(clf.predict(X), np.argmax(P, 1)) and clf.score(X, y) > 0.9


def test_predict_interval_bands(multiclass):
    clf, X, _ = multiclass
    proba, bands = clf.predict_interval(X[:7], confidence_level=[0.5, 0.9])
    assert bands.shape == (7, 2, 3, 2) and np.allclose(proba, clf.predict_proba(X[:7]))
    assert np.all(bands[:, 0] <= bands[:, 1]) and np.all((bands >= 0) & (bands <= 1))
    # the 90% band holds the 50% band
    assert np.all(bands[:, 0, :, 1] <= bands[:, 0, :, 0]) and np.all(bands[:, 1, :, 0] <= bands[:, 1, :, 1])
    draws = clf.predict_samples(X[:7])
    assert np.allclose(bands[:, 0, :, 1], np.quantile(draws, 0.05, axis=1))
    _, default = clf.predict_interval(X[:7])
    assert default.shape == (7, 2, 3, 1)
    with pytest.raises(ValueError, match="confidence_level"):
        clf.predict_interval(X[:7], confidence_level=1.5)


def test_criteria_from_the_categorical_likelihood(multiclass):
    clf, X, y = multiclass
    draws = clf.predict_samples(X)  # (n, S, C)
    log_lik = np.log(draws[np.arange(len(y)), :, y]).T  # (S, n)
    lppd = np.log(np.mean(np.exp(log_lik), 0))
    fv = np.var(log_lik, 0)
    assert clf.waic_tempering_ == 1.0
    assert np.isclose(clf.lfv_, fv.sum(), rtol=1e-6)
    assert np.isclose(clf.generalization_loss_, -(lppd - fv).mean(), rtol=1e-6)
    pbar = clf.predict_proba(X)[np.arange(len(y)), y]
    assert np.isclose(clf.train_loss_, -np.mean(np.log(pbar)), rtol=1e-6)
    # at temperature=1, generalization_loss_ is the untempered WAIC, train_loss_ + lfv_ / n
    assert np.isclose(clf.generalization_loss_, clf.train_loss_ + clf.lfv_ / len(y))
    assert not hasattr(clf, "waic_")
    assert np.isfinite(clf.rhat_) and clf.ess_ > 0
    # lp holds log pi_lambda = -lambda R_n + log Pi; with the flat prior's zero it is -sum_i l_i
    assert clf.sample_stats_["lp"].shape == (2, 30)


def test_tempered_waic_uses_the_power_of_the_likelihood():
    X, y = load_iris(return_X_y=True)
    clf = _quiet_fit(GibbsMLPClassifier(**CHEAP, temperature=4.0, random_state=0), X, y)
    assert clf.waic_tempering_ == 0.25 and clf.lambda_ == len(y) / 4.0


def test_to_arviz_log_likelihood(binary):
    az = pytest.importorskip("arviz")
    clf, X, y = binary
    data = clf.to_arviz(X, y)
    log_lik = np.asarray(data["log_likelihood"]["y"]).reshape(-1, len(y))
    draws = clf.predict_samples(X)
    codes = (y == "yes").astype(int)
    assert np.allclose(log_lik, np.log(draws[np.arange(len(y)), :, codes]).T, atol=1e-6)
    elpd = az.waic(data)
    elpd = float(getattr(elpd, "elpd_waic", getattr(elpd, "elpd", np.nan)))
    assert np.isclose(-elpd / len(y), clf.generalization_loss_, rtol=1e-6)
    with pytest.raises(ValueError, match="labels"):
        clf.to_arviz(X[:3], ["no", "maybe", "yes"])


def test_every_sampler_runs():
    X, y = make_moons(60, noise=0.2, random_state=1)
    batches = {"rho": 0.5, "temperature": 20.0}
    for sampler, extra in [("mala", {}), ("csmala", batches), ("sgld", batches)]:
        clf = _quiet_fit(GibbsMLPClassifier(**CHEAP, sampler=sampler, random_state=0, **extra), X, y)
        assert clf.sampler_name_ == sampler and clf.samples_.shape[:2] == (2, 30)
        assert np.all(np.isfinite(clf.predict_proba(X)))
        # SGLD has no Metropolis-Hastings step, hence no acceptance rate; the MALA family has one
        assert hasattr(clf, "acceptance_rate_") == (sampler != "sgld")
    clf = _quiet_fit(GibbsMLPClassifier(**CHEAP, rho=0.5, temperature=20.0, random_state=0), X, y)
    assert clf.sampler_name_ == "csmala" and clf.surrogate_scale_ > 0
    # a sampler object carries its settings to the fit
    clf = _quiet_fit(GibbsMLPClassifier(**CHEAP, sampler=CSMALA(correction=0.5), rho=0.5, random_state=0), X, y)
    assert clf.sampler_name_ == "csmala" and clf.correction_ == 0.5 and clf.sampler_.correction == 0.5


def test_reproducible_clone_and_pickle(binary):
    clf, X, y = binary
    again = _quiet_fit(clone(clf), X, y)
    assert np.array_equal(again.samples_, clf.samples_)
    loaded = pickle.loads(pickle.dumps(clf))
    assert np.array_equal(loaded.predict_proba(X), clf.predict_proba(X))


@pytest.mark.parametrize(
    "y, match",
    [
        (np.zeros(30), "at least 2 classes"),
        (np.linspace(0, 1, 30), "Unknown label type"),
    ],
)
def test_bad_targets(y, match):
    X = np.random.default_rng(0).normal(size=(30, 2))
    with pytest.raises(ValueError, match=match):
        GibbsMLPClassifier(**CHEAP).fit(X, y)


def test_labels_the_fit_never_saw_are_refused_at_score_time(binary):
    clf, X, y = binary  # fitted on "no" and "yes"
    with pytest.raises(ValueError, match=r"not fitted on: \[0, 1\]; classes_ are \['no', 'yes'\]"):
        clf.score(X, np.where(y == "yes", 1, 0))  # the same classes, coded as 0 and 1
    with pytest.raises(ValueError, match=r"not fitted on: \['maybe'\]"):
        clf.score(X, np.where(np.arange(len(y)) == 0, "maybe", y))
    # known labels score as scikit-learn's accuracy does, weights included
    w = np.linspace(1, 2, len(y))
    assert clf.score(X, y, sample_weight=w) == pytest.approx(np.average(clf.predict(X) == y, weights=w))


def test_bad_input_keeps_the_earlier_fit(binary):
    clf, X, y = binary
    clf = clone(clf)
    _quiet_fit(clf, X, y)
    before = clf.samples_.copy()
    X_bad = X.copy()
    X_bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clf.fit(X_bad, y)
    X_bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        clf.fit(X_bad, y)
    with pytest.raises(ValueError, match="temperature"):
        clf.set_params(temperature="learn").fit(X, y)
    clf.set_params(temperature=1.0)
    with pytest.raises(ValueError, match="sample_weight"):
        clf.fit(X, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(TypeError, match="sample_weights"):
        clf.fit(X, y, sample_weights=np.ones(len(y)))  # a misspelt keyword is named
    assert np.array_equal(clf.samples_, before)
    assert clf.predict_proba(X[:2]).shape == (2, 2)


def _orthogonal_design(n, d, seed):
    """Centred columns with ``X'X = n I``: the g-prior is then isotropic (``Z'Z = n I`` with the ones)."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, d))
    A -= A.mean(0)
    Q, _ = np.linalg.qr(A)
    return Q * np.sqrt(n)


_G_PRIOR = {"n": 60, "d": 2, "g": 4.0 * 60}


@functools.lru_cache(maxsize=1)
def _g_prior_problem():
    """The design, labels and reference draws (long MALA on the known posterior, on the fit's scale)."""
    n, d, g = _G_PRIOR["n"], _G_PRIOR["d"], _G_PRIOR["g"]
    X = _orthogonal_design(n, d, seed=3)
    rng = np.random.default_rng(4)
    y = (rng.random(n) < expit(X @ np.array([1.5, -1.0]) + 0.5)).astype(int)
    target = LogisticRegressionGPrior(X, y, g=g)
    ref = sample_chains(
        target, 10000, sampler="mala", step_size=0.5, adapt_step_size=True, burn_in=2000, n_chains=4, thin=2,
        random_state=1,
    )
    return X, y, ref / np.sqrt(n)


#: every kernel the classifier runs on the full data, with the settings that give each over 1000 effective
#: draws. MCLMC is unadjusted: its variances came out 3-5% below the reference's (1.2 to 2.0 Monte Carlo
#: standard errors), a bias below this test's tolerance, not zero
_EXACT_KERNELS = {
    "hmc": {"n_samples": 2000, "burn_in": 300},
    "mala": {"n_samples": 2000, "burn_in": 2000},
    "csmala": {"n_samples": 2000, "burn_in": 2000},  # rho = 1: every row, exact
    "adjusted_mclmc": {"n_samples": 2000},
    "mclmc": {"n_samples": 2000},
    "smc": {"sampler": SMC(n_particles=2048)},
}


@pytest.mark.slow
@pytest.mark.parametrize("kernel", list(_EXACT_KERNELS))
def test_logistic_regression_matches_the_g_prior_posterior(kernel):
    # With hidden_layer_sizes=() the classifier is Bayesian logistic regression on the standardized
    # inputs, prior N(0, prior_std^2 I) on (w, b). On a design with X'X = n I and centred columns,
    # Z = [X, 1] has Z'Z = n I, so Zellner's g-prior N(0, g (Z'Z)^{-1}) is N(0, g/n I) and the target
    # samples x~ = sqrt(n) (w, b): the same posterior, sampled by a different kernel (long MALA).
    n, g = _G_PRIOR["n"], _G_PRIOR["g"]
    X, y, ref = _g_prior_problem()
    assert np.allclose(X.std(0), 1.0) and np.allclose(X.mean(0), 0.0)
    settings = {"sampler": kernel, **_EXACT_KERNELS[kernel]}
    clf = GibbsMLPClassifier(
        hidden_layer_sizes=(),
        prior="fixed",  # the g-prior's fixed Gaussian
        prior_std=float(np.sqrt(g / n)),
        temperature=1.0,  # the posterior itself (temperature="auto" may keep a cold one)
        random_state=0,
        **settings,
    ).fit(X, y)
    _assert_same_moments(clf.samples_.astype(np.float64), ref)


def _assert_same_moments(draws_a, draws_b):
    """Means and variances of every coordinate agree within 4 Monte Carlo standard errors.

    A mean's standard error is ``sd / sqrt(ESS)``; a variance's is that of
    the mean of the squared deviations ``z = (x - m)^2``, ``sd(z) /
    sqrt(ESS(z))``: the ESS of ``x`` itself can be far larger than that of
    ``z`` for the antithetic draws of HMC and MCLMC.
    """
    ess_a = np.atleast_1d(effective_sample_size(draws_a))
    ess_b = np.atleast_1d(effective_sample_size(draws_b))
    assert ess_a.min() > 1000 and ess_b.min() > 1000
    flat_a, flat_b = draws_a.reshape(-1, draws_a.shape[-1]), draws_b.reshape(-1, draws_b.shape[-1])
    mean_a, mean_b = flat_a.mean(0), flat_b.mean(0)
    se_mean = np.sqrt(flat_a.var(0) / ess_a + flat_b.var(0) / ess_b)
    assert np.all(np.abs(mean_a - mean_b) < 4 * se_mean), (mean_a, mean_b, se_mean)
    z_a, z_b = (draws_a - mean_a) ** 2, (draws_b - mean_b) ** 2
    ess_za = np.atleast_1d(effective_sample_size(z_a))
    ess_zb = np.atleast_1d(effective_sample_size(z_b))
    var_a, var_b = z_a.reshape(flat_a.shape).mean(0), z_b.reshape(flat_b.shape).mean(0)
    se_var = np.sqrt(z_a.reshape(flat_a.shape).var(0) / ess_za + z_b.reshape(flat_b.shape).var(0) / ess_zb)
    assert np.all(np.abs(var_a - var_b) < 4 * se_var), (var_a, var_b, se_var)


def test_model_selection_by_waic_and_by_calibration():
    from sklearn.model_selection import GridSearchCV

    from skgibbs.metrics import neg_expected_calibration_error_scorer, neg_log_loss_scorer
    from skgibbs.model_selection import CriterionGridSearch

    X, y = make_moons(80, noise=0.3, random_state=2)
    est = GibbsMLPClassifier((4,), n_samples=10, burn_in=10, pretrain_iter=20, n_chains=2, random_state=0)
    grid = {"temperature": [0.5, 2.0]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        search = CriterionGridSearch(est, grid, criterion="waic").fit(X, y)
        cv = GridSearchCV(
            est, grid, cv=2, refit="nll",
            scoring={"ece": neg_expected_calibration_error_scorer, "nll": neg_log_loss_scorer},
        ).fit(X, y)
    values = search.cv_results_["criterion"]
    fitted = [_quiet_fit(clone(est).set_params(temperature=t), X, y) for t in grid["temperature"]]
    assert np.allclose(values, [f.generalization_loss_ for f in fitted])
    assert search.best_params_["temperature"] == grid["temperature"][int(np.argmin(values))]
    assert np.isnan(search.cv_results_["noise_variance"]).all()
    assert np.all(cv.cv_results_["mean_test_ece"] <= 0)
    assert cv.best_params_["temperature"] in grid["temperature"]
