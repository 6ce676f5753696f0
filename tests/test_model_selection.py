"""CriterionGridSearch and compare_with_cv."""

import warnings
from typing import NamedTuple

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.model_selection import KFold
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import skgibbs.criteria
from skgibbs import GibbsMLPRegressor, SamplerWarning
from skgibbs.model_selection import CriterionGridSearch, CVComparison, compare_with_cv

GIBBS = {"hidden_layer_sizes": (8,), "n_samples": 40, "burn_in": 300, "thin": 2, "pretrain_iter": 200}


class _Result(NamedTuple):
    lfv: float
    train_loss: float
    waic: float
    noise_variance: float
    pointwise: np.ndarray
    lfv_loss: float


@pytest.fixture
def lfv_calls(monkeypatch):
    """Fast, deterministic stand-in for criteria.langevin_functional_variance; records its calls.

    Training loss as documented; in place of LFV, the effective number of
    parameters: tr of the ridge hat matrix of (2) in paper 004 for linear
    models, the number of weights otherwise.
    """
    calls = []

    def stand_in(model, X, y, *, alpha, noise_variance=None, random_state=None, **kwargs):
        X, y = np.asarray(X), np.asarray(y)
        n = len(y)
        resid = y - model.predict(X)
        s2 = float(resid @ resid / (n - 1)) if noise_variance is None else noise_variance
        if hasattr(model, "coef_"):
            Xc = X - X.mean(0)
            dof = np.trace(Xc @ np.linalg.solve(Xc.T @ Xc / n + alpha * np.eye(X.shape[1]), Xc.T) / n)
        else:
            dof = sum(w.size for w in model.coefs_ + model.intercepts_)
        train = float(np.mean(resid**2) / (2 * s2))
        calls.append({"model": model, "X": X, "alpha": alpha, "noise_variance": noise_variance})
        loss = 0.5 * np.log(2 * np.pi * s2) + train + dof / n
        return _Result(float(dof), train, train + dof / n, s2, np.full(n, dof / n), loss)

    monkeypatch.setattr(skgibbs.criteria, "langevin_functional_variance", stand_in, raising=False)
    return calls


def _linear(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    return X, X @ [1.0, -2.0, 0.5, 0.0] + 0.5 * rng.normal(size=n)


def _sine(n=60):
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, (n, 1))
    return X, np.sin(2 * X[:, 0]) + 0.2 * rng.normal(size=n)


def _quiet(fit, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fit(*args)


# ------------------------------------------------------------- ranking
def test_lfv_ranks_ridge_and_forwards_each_candidates_alpha(lfv_calls):
    X, y = _linear()
    grid = {"alpha": [1e-2, 1.0, 1e4]}
    lfv_params = {"noise_variance": 0.25}
    search = CriterionGridSearch(Ridge(), grid, criterion="lfv", lfv_params=lfv_params).fit(X, y)
    res = search.cv_results_
    assert search.best_params_ == {"alpha": 1e-2} and search.best_index_ == 0
    assert res["rank_criterion"].tolist() == [1, 2, 3]
    # each candidate's own penalty, on the mean-squared-error scale of (2): alpha / n
    assert [c["alpha"] for c in lfv_calls] == pytest.approx([a / len(y) for a in grid["alpha"]])
    assert all(c["noise_variance"] == 0.25 for c in lfv_calls)
    assert np.all(np.diff(res["penalty"]) < 0)  # stronger ridge, fewer effective parameters
    np.testing.assert_allclose(res["criterion"], res["train_loss"] + res["penalty"])
    assert search.best_score_ == res["criterion"][0]
    assert search.best_estimator_ is lfv_calls[0]["model"]  # the fitted candidate, not a refit


def test_lfv_ranks_mlp_regressor(lfv_calls):
    X, y = _sine()
    est = MLPRegressor(hidden_layer_sizes=(16,), max_iter=300, learning_rate_init=0.01, random_state=0)
    lfv_params = {"noise_variance": 0.04}
    search = CriterionGridSearch(est, {"alpha": [1e-4, 1e3]}, criterion="lfv", lfv_params=lfv_params)
    _quiet(search.fit, X, y)
    assert search.best_params_ == {"alpha": 1e-4}  # alpha=1e3 flattens the network
    assert [c["alpha"] for c in lfv_calls] == pytest.approx([1e-4 / 60, 1e3 / 60])


def test_waic_rejects_a_badly_mis_set_temperature():
    # the answer is known: 2 sigma^2 on the standardized scale is about 0.15 here,
    # and temperature 1000 leaves the posterior at the prior
    X, y = _sine()
    grid = {"temperature": [0.1, 1000.0]}
    search = _quiet(CriterionGridSearch(GibbsMLPRegressor(**GIBBS, random_state=0), grid).fit, X, y)
    assert search.best_params_ == {"temperature": 0.1}
    reg = search.best_estimator_
    assert search.best_score_ == reg.generalization_loss_
    assert search.cv_results_["penalty"][0] == pytest.approx(reg.waic_tempering_ * reg.lfv_ / len(y))
    assert search.cv_results_["noise_variance"][0] == reg.noise_variance_
    assert search.predict(X[:5]).tolist() == reg.predict(X[:5]).tolist()
    assert search.score(X, y) == reg.score(X, y)


def test_waic_search_ranks_by_generalization_loss_in_a_pipeline():
    # generalization_loss_ is the criterion users rank by: the search, the scorer and the
    # attribute of each candidate fitted alone must agree, candidate by candidate
    from skgibbs.metrics import waic_scorer
    from skgibbs.pipeline import make_pipeline as gibbs_pipeline

    X, y = _sine()
    est = GibbsMLPRegressor((4,), n_samples=10, burn_in=20, pretrain_iter=20, random_state=0)
    pipe = gibbs_pipeline(StandardScaler(), est)
    grid = {"gibbsmlpregressor__temperature": [0.2, 1.0, 50.0]}
    search = _quiet(CriterionGridSearch(pipe, grid, criterion="waic").fit, X, y)
    fitted = [_quiet(clone(pipe).set_params(**params).fit, X, y) for params in search.cv_results_["params"]]
    losses = np.array([f[-1].generalization_loss_ for f in fitted])
    np.testing.assert_array_equal(search.cv_results_["criterion"], losses)
    assert search.cv_results_["rank_criterion"].tolist() == (np.argsort(np.argsort(losses)) + 1).tolist()
    assert search.best_index_ == int(np.argmin(losses)) and search.best_score_ == losses.min()
    assert [waic_scorer(f) for f in fitted] == (-losses).tolist()


def test_pipeline_final_step_gets_transformed_inputs(lfv_calls):
    X, y = _linear()
    X = 10 * X + 3
    pipe = make_pipeline(StandardScaler(), Ridge())
    search = CriterionGridSearch(
        pipe, {"ridge__alpha": [1e-2, 1e4]}, criterion="lfv", lfv_params={"noise_variance": 0.25}
    ).fit(X, y)
    assert search.best_params_ == {"ridge__alpha": 1e-2}
    assert all(isinstance(c["model"], Ridge) for c in lfv_calls)
    np.testing.assert_allclose(lfv_calls[0]["X"].mean(0), 0, atol=1e-12)
    assert search.n_features_in_ == 4


def test_callable_criterion_and_masked_param_columns():
    X, y = _linear()
    grid = [{"alpha": [0.1, 10.0]}, {"fit_intercept": [False]}]
    est = make_pipeline(StandardScaler(), Ridge())
    grid = [{f"ridge__{k}": v for k, v in g.items()} for g in grid]

    def mse(fitted, X, y):
        return float(np.mean((y - fitted.predict(X)) ** 2))

    search = CriterionGridSearch(est, grid, criterion=mse, refit=False).fit(X, y)
    res = search.cv_results_
    assert search.n_candidates_ == 3 and len(res["params"]) == 3
    for key in ("criterion", "train_loss", "penalty", "rank_criterion", "fit_time", "criterion_time"):
        assert res[key].shape == (3,), key
    assert res["param_ridge__alpha"].mask.tolist() == [False, False, True]
    assert res["param_ridge__fit_intercept"].mask.tolist() == [True, True, False]
    assert np.all(np.isnan(res["train_loss"])) and np.all(res["fit_time"] > 0)
    assert not hasattr(search, "best_estimator_")
    with pytest.raises(AttributeError, match="refit"):
        search.predict(X)


def _neg_r2(fitted, X, y):
    return -fitted.score(X, y)


def test_parallel_candidates_match_serial():
    X, y = _linear()
    grid = {"alpha": [0.1, 1.0, 10.0]}
    serial = CriterionGridSearch(Ridge(), grid, criterion=_neg_r2).fit(X, y)
    parallel = CriterionGridSearch(Ridge(), grid, criterion=_neg_r2, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(serial.cv_results_["criterion"], parallel.cv_results_["criterion"])


# ------------------------------------------------------- sklearn contract
def test_clone_and_nested_params():
    pipe = make_pipeline(StandardScaler(), Ridge())
    search = CriterionGridSearch(pipe, {"ridge__alpha": [1.0]}, criterion="lfv")
    params = search.get_params()
    assert params["criterion"] == "lfv" and params["estimator__ridge__alpha"] == 1.0
    copy = clone(search)
    assert copy.get_params()["param_grid"] == {"ridge__alpha": [1.0]}
    copy.set_params(estimator__ridge__alpha=5.0, lfv_params={"n_iter": 10})
    assert copy.estimator[-1].alpha == 5.0 and search.estimator[-1].alpha == 1.0


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        ({"param_grid": {"alpha": [1.0]}, "criterion": "aic"}, ValueError, "criterion"),
        ({"param_grid": {}}, ValueError, "param_grid"),
        ({"param_grid": []}, ValueError, "param_grid"),
        ({"param_grid": {"alpha": []}}, ValueError, "param_grid"),
        ({"param_grid": {"alpha": [1.0]}, "lfv_params": 3}, ValueError, "lfv_params"),
        ({"param_grid": {"alpha": [1.0]}, "criterion": "waic"}, TypeError, "criterion='waic'"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, error, name):
    with pytest.raises(error, match=name):
        CriterionGridSearch(Ridge(), **kwargs).fit(*_linear())


# --------------------------------------------------------- compare_with_cv
def test_compare_with_cv_statistic_by_hand(lfv_calls):
    X, y = _linear()
    grid = {"alpha": [0.1, 100.0, 1e4]}
    lfv_params = {"noise_variance": 0.25, "random_state": 0}
    res = compare_with_cv(Ridge(), grid, X, y, criterion="lfv", lfv_params=lfv_params, cv=5, random_state=0)
    assert isinstance(res, CVComparison)
    s2 = res.noise_variance
    assert np.all(s2 == 0.25) and all(c["noise_variance"] == 0.25 for c in lfv_calls)
    folds = KFold(5, shuffle=True, random_state=0).split(X)
    held_out = np.array(
        [
            [np.mean((y[te] - Ridge(alpha=a).fit(X[tr], y[tr]).predict(X[te])) ** 2) for a in grid["alpha"]]
            for tr, te in folds
        ]
    )
    # held-out Gaussian negative log-likelihood with each candidate's sigma^2
    np.testing.assert_allclose(res.cv_score, 0.5 * np.log(2 * np.pi * 0.25) + held_out.mean(0) / 0.5)
    np.testing.assert_allclose(res.cv_std, held_out.std(0) / 0.5)
    assert res.best_index_cv == 0 and res.same_best and res.spearman == pytest.approx(1.0)
    assert res.n_splits == 5 and res.criterion_time > 0 and res.cv_time > 0
    assert res.speedup == pytest.approx(res.cv_time / res.criterion_time)
    assert "Spearman" in res.as_table()


def test_compare_with_cv_gibbs_waic_and_scoring():
    X, y = _sine(40)
    est = GibbsMLPRegressor(**{**GIBBS, "n_samples": 10, "burn_in": 50}, random_state=0)
    # the fields and the scoring of a comparison, not its ranking: the smallest budget does
    cheap = GibbsMLPRegressor(**{**GIBBS, "n_samples": 2, "burn_in": 2, "pretrain_iter": 20}, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        res = compare_with_cv(cheap, {"temperature": [0.1, 1.0, 1000.0]}, X, y, cv=3, scoring="r2")
    assert res.params == [{"temperature": t} for t in (0.1, 1.0, 1000.0)]
    for name in ("criterion", "train_loss", "penalty", "cv_score", "cv_std"):
        assert getattr(res, name).shape == (3,), name
    assert -1 <= res.spearman <= 1 and res.criterion_time > 0 and res.cv_time > 0
    assert res.cv_name == "minus mean r2" and res.noise_variance.shape == (3,)
    assert np.all(res.cv_score > -1)  # minus R^2
    # by default the folds are scored by the held-out log predictive density that WAIC estimates
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        res = compare_with_cv(est, {"temperature": [0.1, 1000.0]}, X, y, cv=3, random_state=0)
    assert "log predictive density" in res.cv_name
    assert res.best_index_cv == 0 and res.best_index_criterion == 0  # the prior-like posterior loses


def test_compare_with_cv_to_frame_and_bad_cv():
    pd = pytest.importorskip("pandas")
    X, y = _linear()
    res = compare_with_cv(LinearRegression(), {"fit_intercept": [True, False]}, X, y, criterion=_neg_r2, cv=3)
    frame = res.to_frame()
    assert isinstance(frame, pd.DataFrame) and frame.shape == (2, 8)
    assert res.cv_name == "held-out MSE"
    with pytest.raises(ValueError, match="cv"):
        compare_with_cv(Ridge(), {"alpha": [1.0]}, X, y, criterion=_neg_r2, cv=1)


def test_real_langevin_functional_variance_ranks_ridge():
    X, y = _linear()
    lfv_params = {"noise_variance": 0.25, "n_iter": 2000, "burn_in": 500, "random_state": 0}
    search = CriterionGridSearch(Ridge(), {"alpha": [1e-2, 1e4]}, criterion="lfv", lfv_params=lfv_params)
    res = search.fit(X, y).cv_results_
    assert search.best_params_ == {"alpha": 1e-2}
    assert np.all(res["noise_variance"] == 0.25) and np.all(res["penalty"] > 0)
    np.testing.assert_allclose(res["criterion"], res["train_loss"] + res["penalty"])
    # each candidate's own sigma^2 = RSS / (n - 1): the normalising constant keeps them comparable
    lfv_params.pop("noise_variance")
    search = CriterionGridSearch(Ridge(), {"alpha": [1e-2, 1e4]}, criterion="lfv", lfv_params=lfv_params)
    res = search.fit(X, y).cv_results_
    assert search.best_params_ == {"alpha": 1e-2}
    assert res["noise_variance"][1] > 4 * res["noise_variance"][0]
