"""A search of many fits: one warning per kind under the default filter, each fit's diagnostics in cv_results_."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from skgibbs import GibbsMLPRegressor, SamplerWarning
from skgibbs._warnings import kind
from skgibbs.metrics import make_diagnostic_scorers, waic_scorer


def _search():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(40, 2))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=40)
    # chains far too short to mix: every one of the 10 fits warns, each with its own numbers
    reg = GibbsMLPRegressor(
        (4,), sampler="hmc", n_samples=10, burn_in=5, n_chains=2, pretrain_iter=20, random_state=0
    )
    scoring = {"waic": waic_scorer, **make_diagnostic_scorers()}
    search = GridSearchCV(reg, {"thin": [1, 2, 3, 4, 5]}, cv=2, scoring=scoring, refit="waic", error_score="raise")
    return search, X, y


def test_a_search_shows_one_warning_per_kind_with_the_numbers_as_attributes():
    search, X, y = _search()
    with warnings.catch_warnings(record=True) as every:
        warnings.simplefilter("always")
        search.fit(X, y)
    raised = [w for w in every if issubclass(w.category, SamplerWarning)]
    assert len(raised) >= 10  # every fit falls short
    kinds = {(w.category, kind(str(w.message))) for w in raised}
    assert len(kinds) < len(raised)
    for w in raised:
        if hasattr(w.message, "values"):  # a sampler's own check: its numbers, in the order of the text
            assert w.message.values and all(np.isfinite(w.message.values)) and w.message.text == str(w.message)
            assert all(f"{v:g}" in str(w.message) or f"{100 * v:g}%" in str(w.message) for v in w.message.values)
        assert w.message.estimator == "GibbsMLPRegressor"
        if "have not mixed" in str(w.message) or "disagree" in str(w.message):
            assert {"rhat", "ess", "within_chain_rhat", "between_chain_rhat", "n_chains"} <= set(w.message.details)
            assert w.message.details["rhat"] is w.message.rhat
    # the first lines, numbers aside, are the same for every fit that falls short the same way, so a search
    # sees a few kinds, not one per fit, while each text states its own fit's numbers
    reg = search.estimator
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        for thin in (1, 2, 3, 4, 5) * 2:
            clone(reg).set_params(thin=thin).fit(X, y)
    shown = [(w.category, kind(str(w.message))) for w in shown if issubclass(w.category, SamplerWarning)]
    assert len(shown) >= 10 and len(set(shown)) <= 4
    # which fits they came from: cv_results_ holds every fit's diagnostics
    res = search.cv_results_
    for key in ("rhat", "ess", "within_chain_rhat", "between_chain_rhat", "n_divergent"):
        assert f"mean_test_{key}" in res and res[f"split1_test_{key}"].shape == (5,)
    fits = np.concatenate([res["split0_test_rhat"], res["split1_test_rhat"]])
    warned = np.sort([w.message.rhat for w in raised if hasattr(w.message, "rhat")])
    # each fold's fit warned with its own R-hat (the refit on all the data warned too)
    assert all(np.any(warned == r) for r in fits[np.isfinite(fits)])
    assert search.best_params_ == res["params"][int(np.argmax(res["mean_test_waic"]))]


def _kinds(record):
    return [
        (w.category, str(w.message), w.filename, w.lineno)
        for w in record
        if issubclass(w.category, SamplerWarning)
    ]


def test_the_default_filter_shows_each_kind_once_per_place_though_every_fit_clears_pythons_record():
    search, X, y = _search()
    with warnings.catch_warnings(record=True) as record:
        warnings.resetwarnings()  # no filter: Python's "default" action, as in a fresh interpreter
        search.fit(X, y)
        loop = len(record)
        reg = search.estimator
        for thin in (1, 2, 3):  # a loop of fits in the user's code: one line, the same kinds
            clone(reg).set_params(thin=thin).fit(X, y)
    shown = _kinds(record)
    # every one of the 10 fits and the refit falls short (the test above), yet each kind shows once
    # per line it is raised from: the fits in the search, the refit, the user's loop
    assert 0 < len(shown) == len(set(shown)) <= 12
    assert len({s[2:] for s in shown}) == 3
    assert len(_kinds(record[loop:])) >= 1  # the loop is another place: its kinds show there once


def test_the_record_is_kept_for_the_default_actions_only_and_restarts_with_a_new_recording():
    from skgibbs._warnings import warn

    def three(text="The chains have not mixed."):
        return [warn(SamplerWarning(text, rhat=r)) for r in (1.2, 1.3, 1.4)]

    with warnings.catch_warnings(record=True) as record:
        warnings.resetwarnings()
        assert three() == [True, False, False]
        assert three("A chain diverged.") == [True, False, False]  # another kind
        assert warn(SamplerWarning("The chains have not mixed.")) is True  # another line
        warnings.simplefilter("always", SamplerWarning)
        assert three() == [True, True, True]
        warnings.filterwarnings("error", "The chains", SamplerWarning)
        with pytest.raises(SamplerWarning):
            warn(SamplerWarning("The chains have not mixed."))
    assert record[0].message.rhat == 1.2 and len(record) == 6
    with warnings.catch_warnings(record=True) as again:  # a new list: the kinds show again
        warnings.resetwarnings()
        assert three() == [True, False, False]
        warnings.simplefilter("module", SamplerWarning)
        assert warn(SamplerWarning("A kind per module.")) is True
        assert warn(SamplerWarning("A kind per module.")) is False  # another line, the same module
        warnings.simplefilter("ignore", SamplerWarning)
        three("Ignored.")
    assert [str(w.message) for w in again] == ["The chains have not mixed.", "A kind per module."]
