"""compare_temperatures: evidence path, WAIC, LFV and k-fold CV over one set of temperatures.

Ground truth: on the Gaussian linear model the log marginal likelihood of the
standardized targets is largest at ``temperature = 2 sigma^2``, the
empirical-Bayes noise level, which the residuals of least squares estimate.
"""

import math
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import Ridge
from sklearn.metrics import log_loss
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor, SamplerWarning
from skgibbs.metrics import log_predictive_density_scorer
from skgibbs.model_selection import CriterionGridSearch, TemperatureComparison, compare_temperatures
from skgibbs.samplers import SMC

TEMPERATURES = [0.1, 0.4, 1.5]
#: the chains' budget: the tests compare the comparison with the searches it stands for, fit for fit,
#: which does not depend on the length of the chains
CHEAP = {"hidden_layer_sizes": (), "n_samples": 10, "burn_in": 5, "n_chains": 2, "pretrain_iter": 30}
CHEAP_SMC = SMC(n_particles=32, n_mcmc_steps=2, n_leapfrog=8)
#: an SMC fit's settings: the chains' budget of CHEAP is not SMC's (it refuses n_samples, burn_in, n_chains)
CHEAP_FOR_SMC = {k: v for k, v in CHEAP.items() if k in ("hidden_layer_sizes", "pretrain_iter")}
LFV = {"n_iter": 300, "burn_in": 100, "random_state": 0}


def _linear(n, noise, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, X @ [1.0, -1.0] + noise * rng.normal(size=n)


@pytest.fixture(scope="module")
def data():
    X, y = _linear(120, 0.6, 0)
    return X[:90], y[:90], X[90:], y[90:]


@pytest.fixture(scope="module")
def result(data):
    X, y, X_test, y_test = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        return compare_temperatures(
            GibbsMLPRegressor(**CHEAP, random_state=0),
            X,
            y,
            TEMPERATURES,
            cv=3,
            X_test=X_test,
            y_test=y_test,
            smc=CHEAP_SMC,
            lfv_params=LFV,
            random_state=0,
        )


def test_result_fields(result):
    res = result
    assert isinstance(res, TemperatureComparison)
    np.testing.assert_array_equal(res.temperatures, TEMPERATURES)
    columns = res.to_dict()
    assert set(columns) == {"temperature", "log_marginal_likelihood", "stage_temperature", "waic", "lfv"} | {
        "waic_path",
        "lfv_path",
        "cv_loss",
        "cv_std",
    }
    assert all(np.shape(v) == (3,) and np.all(np.isfinite(v)) for v in columns.values())
    methods = {"evidence", "waic_path", "lfv_path", "waic", "lfv", "cv"}
    assert set(res.picks) == methods == set(res.test_log_density)
    for method in ("waic", "lfv", "cv"):
        assert res.picks[method] in TEMPERATURES
    for method in ("evidence", "waic_path", "lfv_path"):
        assert res.picks[method] in res.temperature_path["temperature"]
    assert all(np.isfinite(v) for v in res.test_log_density.values())
    assert set(res.times) == {"path", "criteria", "cv"} and all(t > 0 for t in res.times.values())
    assert res.n_splits == 3 and "evidence picks" in repr(res) and "cv picks" in repr(res)


def test_path_picks_are_the_best_stages_of_the_one_fit(result):
    """The path picks: its criteria read at the nearest stage, and minimised over the stages."""
    path = result.temperature_path
    t = path["temperature"]
    lfv = path["langevin_waic"] + 0.5 * np.log(2 * np.pi * path["noise_variance"])
    for name, values in (("waic_path", path["generalization_loss"]), ("lfv_path", lfv)):
        stages = np.arange(1, len(t))
        assert result.picks[name] == t[stages[np.argmin(values[1:])]]
        for j, cand in enumerate(TEMPERATURES):
            k = stages[np.argmin(np.abs(np.log(t[1:]) - math.log(cand)))]
            assert getattr(result, name)[j] == values[k]


def test_one_fit_alone_with_refit_false_and_no_cv(data):
    """``refit=False, cv=None``: the SMC fit only; its path picks equal those of the full comparison."""
    X, y, _, _ = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        res = compare_temperatures(
            GibbsMLPRegressor(**CHEAP, random_state=0),
            X,
            y,
            TEMPERATURES,
            cv=None,
            refit=False,
            smc=CHEAP_SMC,
        )
    assert set(res.times) == {"path"} and res.n_splits == 0 and res.test_log_density is None
    assert [m for m, t in res.picks.items() if t is not None] == ["evidence", "waic_path", "lfv_path"]
    assert all(np.all(np.isnan(v)) for v in (res.waic, res.lfv, res.cv_loss, res.cv_std))
    assert np.all(np.isfinite(res.waic_path)) and "waic picks: does not apply" in repr(res)


def test_evidence_pick_is_the_argmax_of_the_path(result, data):
    path = result.temperature_path
    t, lml = path["temperature"], path["log_marginal_likelihood"]
    assert t[-1] == pytest.approx(min(TEMPERATURES)) and not np.isfinite(lml[0])
    assert result.picks["evidence"] == t[np.nanargmax(np.where(np.isfinite(lml), lml, -np.inf))]
    for j, cand in enumerate(TEMPERATURES):
        finite = np.isfinite(t)
        k = np.argmin(np.abs(np.log(t[finite]) - math.log(cand)))
        assert result.stage_temperature[j] == t[finite][k]
        assert result.log_marginal_likelihood[j] == lml[finite][k]
    # the path is the one a plain SMC fit at the coldest candidate gives
    X, y, _, _ = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        reg = GibbsMLPRegressor(**CHEAP_FOR_SMC, sampler=CHEAP_SMC, temperature=0.1, random_state=0).fit(X, y)
    np.testing.assert_array_equal(reg.temperature_path_["log_evidence"], path["log_evidence"])


def test_cv_pick_is_grid_search_cv(result, data):
    X, y, X_test, y_test = data
    est = GibbsMLPRegressor(**CHEAP, random_state=0)
    grid = GridSearchCV(
        est,
        {"temperature": TEMPERATURES},
        scoring=log_predictive_density_scorer,
        cv=KFold(3, shuffle=True, random_state=0),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        grid.fit(X, y)
    assert result.picks["cv"] == grid.best_params_["temperature"]
    np.testing.assert_allclose(result.cv_loss, -grid.cv_results_["mean_test_score"], rtol=1e-12)
    # held-out score at the CV pick: the candidate fitted on all the training data
    assert result.test_log_density["cv"] == pytest.approx(
        log_predictive_density_scorer(grid.best_estimator_, X_test, y_test), rel=1e-12
    )


def test_waic_and_lfv_are_the_criterion_search(result, data):
    X, y, _, _ = data
    est = GibbsMLPRegressor(**CHEAP, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        for criterion, values in (("waic", result.waic), ("lfv", result.lfv)):
            search = CriterionGridSearch(
                est, {"temperature": TEMPERATURES}, criterion=criterion, lfv_params=LFV
            )
            search.fit(X, y)
            np.testing.assert_allclose(values, search.cv_results_["criterion"], rtol=1e-12)
            assert result.picks[criterion] == search.best_params_["temperature"]


@pytest.mark.parametrize("temperatures", [[], [0.5, 0.0], [-1.0], [1.0, float("nan")], ["a"]])
def test_bad_temperatures_raise(temperatures):
    with pytest.raises(ValueError, match="temperatures"):
        compare_temperatures(GibbsMLPRegressor(), [[0.0], [1.0]], [0.0, 1.0], temperatures)


def test_refit_must_be_a_bool():
    with pytest.raises(TypeError, match="refit"):
        compare_temperatures(GibbsMLPRegressor(), [[0.0], [1.0]], [0.0, 1.0], [1.0], refit="no")


@pytest.mark.parametrize("estimator", [Ridge(), make_pipeline(StandardScaler(), Ridge())])
def test_estimator_without_temperature_raises(estimator):
    with pytest.raises(TypeError, match="temperature"):
        compare_temperatures(estimator, [[0.0], [1.0]], [0.0, 1.0], [1.0])


@pytest.mark.slow
def test_evidence_maximiser_estimates_twice_the_noise_variance():
    """The evidence pick brackets the empirical-Bayes ``2 sigma_hat^2`` and estimates ``2 sigma^2``.

    On the standardized scale ``log p(y | T) ~ -(n/2) log(pi T) - RSS / T``
    (3 coefficients against n = 400 rows: the prior moves the maximiser by
    O(3/n)) is maximised at ``T_hat = 2 RSS / n``; its curvature in
    ``log T`` is ``n / 2``, so one stage away (log-spacing ~0.2) it is ~4
    nats lower, well beyond the Monte Carlo error of ``log Z`` with 64
    particles. By unimodality the best stage is then the one whose two
    neighbours bracket ``T_hat``. ``T_hat`` estimates ``2 sigma^2 /
    y_scale^2`` with relative standard deviation ``sqrt(2 / n)``: four of
    them, plus the stage spacing, bound the distance to the truth in
    ``log T``.
    """
    n, noise = 400, 0.7
    X, y = _linear(n, noise, 1)
    smc = SMC(n_particles=64, target_ess=0.95)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        reg = GibbsMLPRegressor(**CHEAP_FOR_SMC, sampler=smc, temperature=0.1, random_state=0).fit(X, y)
    path = reg.temperature_path_
    t, lml = path["temperature"], path["log_marginal_likelihood"]
    best = int(np.argmax(lml))
    assert 0 < best < len(t) - 1
    A = np.c_[X, np.ones(n)]
    rss = np.sum((y - A @ np.linalg.lstsq(A, y, rcond=None)[0]) ** 2) / reg.y_scale_**2
    t_hat = 2 * rss / n
    assert t[best + 1] < t_hat < t[best - 1]
    spacing = math.log(t[best - 1] / t[best + 1]) / 2
    truth = 2 * noise**2 / reg.y_scale_**2
    assert abs(math.log(t[best] / truth)) < 4 * math.sqrt(2 / n) + spacing
    # the shape: rising from the prior's side up to the pick, falling after it
    assert np.all(np.diff(lml[1 : best + 1]) > 0) and np.all(np.diff(lml[best:]) < 0)


@pytest.mark.slow
def test_classifier_has_a_waic_path_but_no_evidence_or_lfv_pick():
    X, y = make_classification(90, 3, n_informative=2, n_redundant=0, random_state=0)
    clf = GibbsMLPClassifier(
        (4,), **{k: v for k, v in CHEAP.items() if k != "hidden_layer_sizes"}, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        res = compare_temperatures(
            clf, X[:60], y[:60], [0.5, 2.0], cv=3, X_test=X[60:], y_test=y[60:], smc=CHEAP_SMC
        )
        refit = clf.set_params(temperature=res.picks["cv"]).fit(X[:60], y[:60])
    assert res.picks["evidence"] is None and res.picks["lfv"] is None and res.picks["lfv_path"] is None
    assert np.all(np.isnan(res.log_marginal_likelihood)) and np.all(np.isnan(res.lfv))
    assert np.all(np.isnan(res.lfv_path)) and np.all(np.isfinite(res.waic_path))
    assert res.picks["waic_path"] in res.temperature_path["temperature"]
    assert res.picks["waic"] in (0.5, 2.0) and np.all(np.isfinite(res.cv_loss))
    # held-out log predictive density of a classifier: minus the log loss of predict_proba
    assert res.test_log_density["cv"] == pytest.approx(
        -log_loss(y[60:], refit.predict_proba(X[60:])), rel=1e-12
    )
    assert "evidence picks: does not apply" in repr(res)


def test_weights_reach_every_fit_of_the_comparison(data):
    """With ``sample_weight`` the candidates' WAIC and LFV are those of weighted fits, the path a weighted SMC fit's."""
    X, y, _, _ = data
    w = np.random.default_rng(1).integers(0, 4, size=len(y))
    est = GibbsMLPRegressor(**CHEAP, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compare_temperatures(est, X, y, TEMPERATURES, cv=None, smc=CHEAP_SMC, lfv_params=LFV,
                                   sample_weight=w)  # fmt: skip
        search = CriterionGridSearch(est, {"temperature": TEMPERATURES}).fit(X, y, sample_weight=w)
        unweighted = compare_temperatures(est, X, y, TEMPERATURES, cv=None, refit=False, smc=CHEAP_SMC)
    np.testing.assert_array_equal(res.waic, search.cv_results_["criterion"])
    assert not np.allclose(res.waic_path, unweighted.waic_path, equal_nan=True)  # the weights changed the path
