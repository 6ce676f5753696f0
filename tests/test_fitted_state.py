"""Fitted state: one writer, a refit replaces it whole, bad input changes nothing, and the renamed names.

An estimator refitted under one sampler after another holds exactly the
fitted attributes (a trailing underscore, no leading one) of a fresh fit
under the last sampler, with the same draws: nothing of an earlier fit
outlives it. Before this, a VI fit after an HMC fit kept HMC's
``acceptance_rate_``, ``step_size_``, ``inverse_mass_``, ``n_divergent_``
and ``trajectory_length_``, which the sampler checks after the fit read as
the VI fit's.
"""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor, SparseGibbsMLPRegressor
from skgibbs.samplers import HMC, Sampler, available_samplers, get_sampler

SMALL = {"hidden_layer_sizes": (3,), "n_samples": 5, "burn_in": 10, "n_chains": 2, "pretrain_iter": 50}

ESTIMATORS = {
    "regressor": (GibbsMLPRegressor, "dense"),
    "classifier": (GibbsMLPClassifier, "dense"),
    "sparse": (SparseGibbsMLPRegressor, "sparse"),
}


def _data(classify=False, n=40):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    return X, ((y > 0).astype(int) if classify else y)


def _fitted(est):
    """The public fitted attributes of ``est``, by name."""
    return {name: value for name, value in vars(est).items() if name.endswith("_") and not name.startswith("_")}


def _settings(est, name):
    """``sampler=name``, with ``rho=0.5`` for a sampler that reads batches (where the estimator has ``rho``).

    The settings of ``SMALL`` the sampler does not honour (SMC's ``n_samples``, ``burn_in``,
    ``n_chains``, VI's ``burn_in``) go back to the estimator's defaults, which it accepts.
    """
    sampler = get_sampler(name)
    params = {"sampler": name}
    if "rho" in est.get_params():
        params["rho"] = 0.5 if sampler.uses_batches else "auto"
    defaults = type(est)().get_params()
    params.update({key: (value if key not in sampler.ignored_settings() else defaults[key])
                   for key, value in SMALL.items()})
    return params


def _quiet_fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short chains warn that they have not mixed
        return est.fit(X, y)


@pytest.mark.parametrize("kind", sorted(ESTIMATORS))
def test_a_refit_under_each_sampler_holds_what_a_fresh_fit_holds(kind):
    cls, prior_kind = ESTIMATORS[kind]
    X, y = _data(classify=kind == "classifier")
    one = cls(**SMALL, random_state=0)  # refitted under every sampler in turn
    for name in available_samplers(prior_kind):
        one.set_params(**_settings(one, name))
        fresh = _quiet_fit(clone(one), X, y)
        _quiet_fit(one, X, y)
        assert sorted(_fitted(one)) == sorted(_fitted(fresh)), name
        np.testing.assert_array_equal(one.samples_, fresh.samples_)
        assert one.sampler_name_ == name and isinstance(one.sampler_, Sampler)


def test_a_vi_refit_keeps_nothing_of_an_hmc_fit():
    # the report: fit with HMC, then set_params(sampler="vi").fit(...)
    X, y = _data()
    est = _quiet_fit(GibbsMLPRegressor(**SMALL, sampler="hmc", random_state=0), X, y)
    hmc_only = {"acceptance_rate_", "inverse_mass_", "n_divergent_", "step_size_", "trajectory_length_"}
    assert hmc_only <= set(_fitted(est))
    _quiet_fit(est.set_params(sampler="vi", burn_in="auto"), X, y)
    assert not hmc_only & set(_fitted(est))
    assert est.sampler_name_ == "vi" and "step_size" not in est.sample_stats_


def test_a_refit_without_column_names_drops_the_earlier_ones():
    X, y = _data()
    est = _quiet_fit(GibbsMLPRegressor(**SMALL, sampler="hmc", random_state=0), pd.DataFrame(X, columns=["a", "b"]), y)
    assert list(est.feature_names_in_) == ["a", "b"]
    _quiet_fit(est, X, y)
    assert not hasattr(est, "feature_names_in_") and est.n_features_in_ == 2


@pytest.mark.parametrize(
    "kind, bad",
    [
        ("regressor", {"rho": 2.0}),
        ("regressor", {"temperature": -1.0}),
        ("regressor", {"sampler": "nuts"}),
        ("regressor", {"prior": "ard", "weight_bound": 1.0}),  # refused by the prior, after validation
        ("classifier", {"n_chains": 0}),
        ("sparse", {"sparsity": 1.0}),
    ],
)
def test_an_invalid_parameter_on_refit_keeps_the_earlier_fit(kind, bad):
    cls, _ = ESTIMATORS[kind]
    X, y = _data(classify=kind == "classifier")
    est = _quiet_fit(cls(**SMALL, random_state=0), X, y)
    before = _fitted(est)
    with pytest.raises(ValueError):
        est.set_params(**bad).fit(X, y)
    after = _fitted(est)
    assert list(after) == list(before)
    assert all(after[name] is before[name] for name in before)  # the same objects, untouched


@pytest.mark.parametrize("bad", ["nan", "inf", "one row", "empty"])
def test_invalid_data_on_refit_keeps_the_earlier_fit(bad):
    X, y = _data()
    est = _quiet_fit(GibbsMLPRegressor(**SMALL, sampler="hmc", random_state=0), X, y)
    before = _fitted(est)
    Xb, yb = X.copy(), y
    if bad in ("nan", "inf"):
        Xb[3, 1] = np.nan if bad == "nan" else np.inf
    else:
        rows = 1 if bad == "one row" else 0
        Xb, yb = X[:rows], y[:rows]
    with pytest.raises(ValueError):
        est.fit(Xb, yb)
    after = _fitted(est)
    assert list(after) == list(before) and all(after[name] is before[name] for name in before)


def test_a_failure_after_sampling_restores_the_earlier_fit(monkeypatch):
    X, y = _data()
    est = _quiet_fit(GibbsMLPRegressor(**SMALL, sampler="hmc", random_state=0), X, y)
    before = _fitted(est)

    def broken(*args):
        raise RuntimeError("summaries failed")

    # the new fit's state has replaced the earlier one when its summaries fail
    monkeypatch.setattr(GibbsMLPRegressor, "_summarise", broken)
    with pytest.raises(RuntimeError, match="summaries failed"):
        _quiet_fit(est.set_params(sampler="vi", burn_in="auto"), X, y)
    after = _fitted(est)
    assert list(after) == list(before) and all(after[name] is before[name] for name in before)


def test_building_the_problem_sets_nothing():
    from skgibbs.problem import build_problem

    X, y = _data()
    est = _quiet_fit(GibbsMLPRegressor(**SMALL, sampler="hmc", random_state=0), X, y)
    before = _fitted(est)
    fresh = GibbsMLPRegressor(**SMALL, sampler="mala", random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the short pre-training's ConvergenceWarning
        problem = build_problem(clone(est).set_params(sampler="mala"), X, y)
        build_problem(fresh, X, y)
    assert not _fitted(fresh) and problem.sampler.name == "mala"
    assert all(_fitted(est)[name] is before[name] for name in before)


def test_fitted_state_has_one_writer(monkeypatch):
    """Every public fitted attribute a fit sets goes through ``_set_fitted``."""
    from skgibbs.estimators._base import BaseGibbsMLP

    written, real = set(), BaseGibbsMLP._set_fitted

    def recording(self, state, replace=False):
        written.update(state)
        return real(self, state, replace)

    monkeypatch.setattr(BaseGibbsMLP, "_set_fitted", recording)
    X, y = _data()
    for est in [
        GibbsMLPRegressor(**SMALL, chain_weights="stacking", random_state=0),
        GibbsMLPClassifier(**{**SMALL, "burn_in": "auto"}, sampler="vi", random_state=0),
        SparseGibbsMLPRegressor(**SMALL, random_state=0),
    ]:
        written.clear()
        _quiet_fit(est, X, (y > 0).astype(int) if isinstance(est, GibbsMLPClassifier) else y)
        assert set(_fitted(est)) == written


def test_a_fit_saved_with_the_old_names_loads_with_the_new(tmp_path):
    X, y = _data()
    est = _quiet_fit(GibbsMLPRegressor(**SMALL, sampler="hmc", random_state=0), X, y)
    state = dict(vars(est))
    # what a fit saved before 0.2 held: the sampler object as kernel_, its name as sampler_
    state["kernel_"], state["sampler_"] = state.pop("sampler_"), state.pop("sampler_name_")
    old = GibbsMLPRegressor.__new__(GibbsMLPRegressor)
    vars(old).update(state)
    back = pickle.loads(pickle.dumps(old))
    assert back.sampler_name_ == "hmc" and isinstance(back.sampler_, HMC) and "kernel_" not in vars(back)
    assert not hasattr(est, "kernel_") and not hasattr(back, "kernel_")  # sampler_ is the only name
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    sio = pytest.importorskip("skops.io")
    from skgibbs.persistence import load

    sio.dump(old, tmp_path / "old.skops")
    loaded = load(tmp_path / "old.skops")
    assert loaded.sampler_name_ == "hmc" and isinstance(loaded.sampler_, HMC)
