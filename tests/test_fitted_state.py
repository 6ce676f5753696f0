"""Fitted state: the fitted sampler is ``sampler_`` (the object) and ``sampler_name_`` (its name).

``kernel_``, its name before 0.2, is a deprecated alias of ``sampler_``;
a fit saved with the old names loads with the new.
"""

import pickle
import warnings

import numpy as np
import pytest

from skgibbs import GibbsMLPRegressor
from skgibbs.samplers import HMC

SMALL = {"hidden_layer_sizes": (3,), "n_samples": 5, "burn_in": 10, "n_chains": 2, "pretrain_iter": 50}


def _data(n=40):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2))
    return X, np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)


def _quiet_fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short chains warn that they have not mixed
        return est.fit(X, y)


def test_kernel_is_a_deprecated_name_of_sampler():
    X, y = _data()
    assert not hasattr(GibbsMLPRegressor(), "kernel_")  # before fit: no attribute, no warning
    est = _quiet_fit(GibbsMLPRegressor(**SMALL, sampler=HMC(target_accept=0.9), random_state=0), X, y)
    with pytest.warns(FutureWarning, match="kernel_ was renamed sampler_.*sampler_name_"):
        kernel = est.kernel_
    assert kernel is est.sampler_ and isinstance(kernel, HMC) and kernel.target_accept == 0.9
    assert est.sampler_name_ == "hmc" and "kernel_" not in vars(est)


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
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    sio = pytest.importorskip("skops.io")
    from skgibbs.persistence import load

    sio.dump(old, tmp_path / "old.skops")
    loaded = load(tmp_path / "old.skops")
    assert loaded.sampler_name_ == "hmc" and isinstance(loaded.sampler_, HMC)
