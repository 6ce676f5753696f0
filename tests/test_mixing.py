"""Whether a fit can be trusted (skgibbs._mixing): the mixing warning, its remedies, and its silence."""

import warnings

import numpy as np

from skgibbs import GibbsMLPRegressor, SamplerWarning
from skgibbs._mixing import function_space_mixing

CHEAP = {"hidden_layer_sizes": (8,), "n_samples": 20, "burn_in": 30, "pretrain_iter": 50}


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)


def _messages(record):
    return [str(w.message) for w in record if issubclass(w.category, SamplerWarning)]


def test_unmixed_chains_warn_with_the_remedy():
    X, y = _data()
    est = GibbsMLPRegressor(**{**CHEAP, "n_samples": 10, "burn_in": 5, "random_state": 0})
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est.fit(X, y)
    assert est.ess_ < 100
    mixing = [m for m in _messages(record) if "have not mixed" in m]
    assert len(mixing) == 1
    # a chain not converged on its own asks for a longer run; chains that agree on too few draws, for more
    if "not converged on their own" in mixing[0]:
        assert "raise burn_in and n_samples" in mixing[0] and "n_chains" not in mixing[0]
    else:
        assert "raise n_samples" in mixing[0] and "n_chains" in mixing[0]
    mala = GibbsMLPRegressor(**{**CHEAP, "sampler": "mala", "n_samples": 10, "burn_in": 5, "random_state": 0})
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        mala.fit(X, y)
    assert any("sampler='hmc'" in m for m in _messages(record))


def test_a_mixed_linear_posterior_does_not_warn():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 2))
    y = X @ np.array([1.0, -1.0]) + 0.5 * rng.normal(size=80)
    # HMC on the fixed prior at the plug-in temperature: a Gaussian posterior these chains mix on
    est = GibbsMLPRegressor(
        hidden_layer_sizes=(), prior="fixed", temperature="plug-in", pretrain_iter=0, n_samples=150,
        burn_in=150, random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", SamplerWarning)
        est.fit(X, y)
    assert est.rhat_ <= 1.05 and est.ess_ >= 100


def test_function_space_mixing_of_independent_and_of_disagreeing_chains():
    rng = np.random.default_rng(0)
    same = rng.normal(size=(4 * 200, 3))
    r, e = function_space_mixing(same, n_chains=4)
    assert r < 1.02 and e > 400
    # chains centred at 0, 1, 2, 3 with unit spread: between-chain variance 1.25 against
    # within 1, so R-hat is about sqrt(1 + 1.25) = 1.5 and the effective draws collapse
    apart = same + np.repeat(np.arange(4.0), 200)[:, None]
    r, e = function_space_mixing(apart, n_chains=4)
    assert 1.3 < r < 1.8 and e < 100
    # too few draws per chain (split halves of fewer than 4): NaN for both
    assert np.isnan(function_space_mixing(same[:28], n_chains=4)).all()
