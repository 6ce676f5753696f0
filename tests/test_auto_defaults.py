"""``prior="auto"`` and ``temperature="auto"``: what each registered sampler gets, and a fit that runs.

The regressor's defaults learn what the resolved sampler can sample: the
ARD prior where it samples hierarchical priors, the noise where it samples
the noise precision, the fixed prior and the plug-in temperature elsewhere.
The classifier's are the fixed prior and a temperature selected from its
candidates, under every kernel. ``prior_`` and ``temperature_source_`` say
which.
"""

import warnings

import numpy as np
import pytest

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor, SparseGibbsMLPRegressor
from skgibbs.samplers import available_samplers, get_sampler
from skgibbs.samplers.base import _REGISTRY

TINY = dict(hidden_layer_sizes=(3,), n_samples=8, burn_in=8, n_chains=2, pretrain_iter=20, random_state=0)
#: settings that keep each kernel's fit small (VI's optimisation, SMC's particles)
SMALL_KERNEL = {"vi": {"max_iter": 50}, "smc": {"n_particles": 16}}


def _kernel(name):
    return get_sampler(name).set_params(**SMALL_KERNEL.get(name, {}))


def _tiny(name):
    """``TINY`` without the settings sampler ``name`` does not honour (SMC's, VI's ``burn_in``)."""
    ignored = get_sampler(name).ignored_settings()
    return {key: value for key, value in TINY.items() if key not in ignored}


def _data(n=40, classes=False):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2))
    y = X[:, 0] + 0.1 * rng.normal(size=n)
    return X, (y > 0).astype(int) if classes else y


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # chains this short warn; what is tested is what the fit resolved
        return est.fit(X, y)


@pytest.mark.parametrize("name", available_samplers("dense"))
def test_the_regressor_learns_what_each_sampler_can(name):
    cls = _REGISTRY[name]
    X, y = _data()
    reg = _fit(GibbsMLPRegressor(sampler=_kernel(name), **_tiny(name)), X, y)
    assert reg.prior_ == ("ard" if cls.hierarchical else "fixed")
    assert reg.temperature_source_ == ("learned" if cls.learns_noise else "plug-in")
    assert ("noise_variance" in reg.sample_stats_) == cls.learns_noise
    assert ("precision" in reg.sample_stats_) == cls.hierarchical
    assert np.isfinite(reg.predict(X[:3])).all() and np.isfinite(reg.temperature_)


@pytest.mark.parametrize("name", available_samplers("dense"))
def test_the_classifier_keeps_the_fixed_prior_and_selects_its_temperature(name):
    """The classifier's ``prior="auto"`` is the fixed prior under every kernel (its ARD chains did not converge
    on the classification benchmark); ``prior="ard"`` is sampled where the kernel can; ``temperature="auto"``
    keeps one of the candidates it fitted."""
    from skgibbs.plan import AUTO_TEMPERATURES

    cls = _REGISTRY[name]
    X, y = _data(classes=True)
    clf = _fit(GibbsMLPClassifier(sampler=_kernel(name), **_tiny(name)), X, y)
    assert clf.prior_ == "fixed"
    assert clf.temperature_source_ == "selected" and clf.temperature_ in AUTO_TEMPERATURES
    assert clf.temperature_selection_["temperature"] == clf.temperature_
    assert np.isfinite(clf.predict_proba(X[:3])).all()
    if cls.hierarchical:
        ard = _fit(GibbsMLPClassifier(sampler=_kernel(name), prior="ard", temperature=1.0, **_tiny(name)), X, y)
        assert (ard.prior_, ard.temperature_source_) == ("ard", "given")


def test_the_defaults_resolve_to_mclmc_ard_and_a_learned_noise():
    X, y = _data()
    reg = _fit(GibbsMLPRegressor(**TINY), X, y)
    assert (reg.sampler_name_, reg.prior_, reg.temperature_source_) == ("mclmc", "ard", "learned")
    assert reg.input_relevance_.shape == (2,)
    # the classifier's default: MCLMC on the fixed prior, the temperature selected
    clf = _fit(GibbsMLPClassifier(**TINY), *_data(classes=True))
    assert (clf.sampler_name_, clf.prior_, clf.temperature_source_) == ("mclmc", "fixed", "selected")


def test_a_box_or_a_flat_prior_keeps_auto_fixed():
    X, y = _data()
    boxed = _fit(GibbsMLPRegressor(weight_bound=5.0, **TINY), X, y)
    assert (boxed.sampler_name_, boxed.prior_, boxed.temperature_source_) == ("hmc", "fixed", "plug-in")
    flat = _fit(GibbsMLPRegressor(prior_std=None, **TINY), X, y)
    assert (flat.prior_, flat.temperature_source_) == ("fixed", "plug-in")


def test_explicit_settings_are_kept():
    X, y = _data()
    reg = _fit(GibbsMLPRegressor(prior="fixed", temperature=0.5, **TINY), X, y)
    assert (reg.sampler_name_, reg.prior_, reg.temperature_source_, reg.temperature_) == ("hmc", "fixed", "given", 0.5)
    layer = _fit(GibbsMLPRegressor(prior="layer", sampler="hmc", **TINY), X, y)
    assert (layer.prior_, layer.temperature_source_) == ("layer", "learned")


def test_the_sparse_regressor_keeps_its_mixing_prior():
    X, y = _data()
    sparse = _fit(SparseGibbsMLPRegressor(**TINY), X, y)
    assert sparse.prior_ == "mixing" and sparse.temperature_source_ == "plug-in"


def _rho_data(classify):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int) if classify else np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=60)
    return X, y


def _model_changes(seen):
    return [w for w in seen if issubclass(w.category, UserWarning) and "another model at rho < 1" in str(w.message)]


def test_a_grid_over_rho_says_once_that_auto_changes_the_model_and_its_remedy_makes_it_one():
    """``sampler="auto"`` at ``rho < 1`` fits csMALA on the fixed prior: a search over ``rho`` hears it once.

    The warning names the two models and the settings that make them one; with those settings every
    ``rho`` fits the same prior and temperature source, by HMC on the full data and csMALA on batches, and
    the warning is gone.
    """
    from sklearn.model_selection import GridSearchCV

    cls = GibbsMLPRegressor

    X, y = _rho_data(False)
    search = GridSearchCV(cls(**TINY), {"rho": [1.0, 0.5]}, cv=3, refit=False)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")
        search.fit(X, y)
    (shown,) = _model_changes(seen)  # three folds fit rho = 0.5; the search shows it once
    text = str(shown.message)
    fixed = "prior='fixed', temperature='plug-in'"
    assert "At rho=0.5 this fit runs csmala on the fixed prior" in text and f"set that model for every rho: {fixed}" in text
    # its remedy: the same model at every rho
    remedy = {"prior": "fixed", "temperature": "plug-in"}
    fits = {}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for rho in (1.0, 0.5):
            fits[rho] = cls(**TINY, **remedy, rho=rho).fit(X, y)
    assert not _model_changes(seen)
    assert fits[1.0].sampler_name_ == "hmc" and fits[0.5].sampler_name_ == "csmala"
    assert {(f.prior_, f.temperature_source_) for f in fits.values()} == {(fits[1.0].prior_, fits[1.0].temperature_source_)}


def test_the_classifiers_defaults_are_one_model_across_a_grid_over_rho():
    """The classifier's defaults (the fixed prior, the temperature selected) are what csMALA samples at
    ``rho < 1`` too: a search over ``rho`` compares batch fractions of one model, without the warning."""
    from sklearn.model_selection import GridSearchCV

    X, y = _rho_data(True)
    search = GridSearchCV(GibbsMLPClassifier(**TINY), {"rho": [1.0, 0.5]}, cv=3, refit=False)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        search.fit(X, y)
    assert not _model_changes(seen)
    fits = {rho: _fit(GibbsMLPClassifier(**TINY, rho=rho), X, y) for rho in (1.0, 0.5)}
    assert fits[1.0].sampler_name_ == "mclmc" and fits[0.5].sampler_name_ == "csmala"
    assert {(f.prior_, f.temperature_source_) for f in fits.values()} == {("fixed", "selected")}
