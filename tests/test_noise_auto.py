"""noise="auto": the noise model chosen by the held-out log-likelihood of short pre-trainings."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from skgibbs import GibbsMLPRegressor
from skgibbs._noise_choice import MARGIN_SE, MIN_HELD_OUT, choose, held_out_log_density, select_noise
from skgibbs.problem import prepare_data
from skgibbs.criteria import gaussian_log_likelihood
from skgibbs.samplers import MeanFieldVI


def _simulated(kind, n, seed):
    """Two uniform inputs, a smooth mean and a noise of known model."""
    rng = np.random.default_rng(100 + seed)
    X = rng.uniform(-2, 2, size=(n, 2))
    f = np.sin(X[:, 0]) + 0.5 * X[:, 1]
    if kind == "homoscedastic":
        noise = 0.3 * rng.normal(size=n)
    elif kind == "heteroscedastic":  # sd 0.1 + 0.5 |x1|
        noise = (0.1 + 0.5 * np.abs(X[:, 0])) * rng.normal(size=n)
    else:  # Student-t, 3 degrees of freedom
        noise = 0.3 * rng.standard_t(3, size=n)
    return X, f + noise


def _quick(**kw):
    settings = {"hidden_layer_sizes": (8,), "sampler": MeanFieldVI(max_iter=100), "n_samples": 5,
                "pretrain_iter": 100, "random_state": 0}  # fmt: skip
    return GibbsMLPRegressor(**{**settings, **kw})


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


@pytest.mark.slow
@pytest.mark.parametrize("truth", ["homoscedastic", "heteroscedastic", "student"])
def test_the_choice_finds_the_noise_model_of_simulated_data(truth):
    # the function fit runs, on the fit's default network and pre-training cap, at n = 500
    picks = []
    for seed in range(10):
        est = GibbsMLPRegressor(random_state=seed)
        picks.append(select_noise(est.get_params(), prepare_data(est, *_simulated(truth, 500, seed)))[0])
    assert picks.count(truth) >= 9, picks


def test_the_rule_prefers_the_simpler_model_unless_the_richer_wins_by_the_margin():
    rng = np.random.default_rng(0)
    base = rng.normal(size=400)
    noise = rng.normal(size=400)
    se = noise.std(ddof=1) / np.sqrt(400)
    # a richer model better by the margin plus a little, or less a little, than the simpler one
    above = {"homoscedastic": base, "heteroscedastic": base + noise - noise.mean() + 1.05 * MARGIN_SE * se}
    below = {"homoscedastic": base, "heteroscedastic": base + noise - noise.mean() + 0.95 * MARGIN_SE * se}
    winner, evidence = choose(above)
    assert winner == "heteroscedastic" and evidence["winner"] == winner
    assert evidence["standard_errors"]["heteroscedastic - homoscedastic"] == pytest.approx(se)
    assert choose(below)[0] == "homoscedastic"
    # the t must beat the current choice (the normal with a varying variance), not only the first one
    three = {**above, "student": above["heteroscedastic"] + 0.001 * rng.normal(size=400)}
    assert choose(three)[0] == "heteroscedastic"
    # a candidate with a non-finite density loses; identical densities are no evidence
    assert choose({"homoscedastic": base, "student": np.full(400, -np.inf)})[0] == "homoscedastic"
    assert choose({"homoscedastic": base, "heteroscedastic": base.copy()})[0] == "homoscedastic"


def test_the_held_out_density_of_one_variance_is_the_normal_of_the_held_out_mean_squared_error():
    rng = np.random.default_rng(1)
    y, out = rng.normal(size=50), rng.normal(size=(1, 50))
    mse = ((y - out[0]) ** 2).mean()
    expected = gaussian_log_likelihood(y, out, mse)[0]
    np.testing.assert_allclose(held_out_log_density("homoscedastic", out, y), expected)
    # a varying noise's level is fitted the same way: a constant log variance gives the same density
    varying = np.stack([out, np.full_like(out, 3.0)], axis=-1)
    np.testing.assert_allclose(held_out_log_density("heteroscedastic", varying, y), expected)


def test_auto_records_the_evidence_and_a_given_noise_skips_the_choice():
    X, y = _simulated("heteroscedastic", 300, 0)
    auto = _fit(_quick(), X, y)
    sel = auto.noise_selection_
    assert auto.noise == "auto" and sel["winner"] == auto.noise_
    assert sel["candidates"] == ("homoscedastic", "heteroscedastic", "student")
    assert sel["n_held_out"] == 60 and set(sel["held_out_log_likelihood"]) == set(sel["candidates"])
    assert all(isinstance(v, float) for v in sel["held_out_log_likelihood"].values())
    assert auto.spec_.n_outputs == (1 if auto.noise_ == "homoscedastic" else 2)
    given = _fit(_quick(noise="student"), X, y)
    assert given.noise_ == "student" and given.noise_selection_ is None
    # a refit with the noise given drops the evidence of the earlier "auto" fit
    assert _fit(auto.set_params(noise="homoscedastic"), X, y).noise_selection_ is None


def test_plug_in_temperature_keeps_one_variance_and_says_why():
    X, y = _simulated("heteroscedastic", 300, 1)
    est = _fit(_quick(temperature="plug-in"), X, y)
    assert est.noise_ == "homoscedastic" and est.spec_.n_outputs == 1
    assert est.noise_selection_["candidates"] == ("homoscedastic",)
    assert "plug-in" in est.noise_selection_["reason"]


def test_without_held_out_evidence_the_row_rule_applies(monkeypatch):
    import skgibbs._noise_choice

    X, y = _simulated("homoscedastic", 5 * MIN_HELD_OUT - 5, 2)  # one row short of the held-out minimum
    est = _fit(_quick(), X, y)
    assert est.noise_ == "homoscedastic" and "fewer than" in est.noise_selection_["reason"]
    monkeypatch.setattr(skgibbs._noise_choice, "HETEROSCEDASTIC_ROWS", 200)
    est = _fit(_quick(pretrain_iter=0), X, y)
    assert est.noise_ == "student" and "pretrain_iter=0" in est.noise_selection_["reason"]


def test_a_random_state_instance_gives_the_choice_the_fit_s_seeds():
    X, y = _simulated("student", 300, 3)
    a = _fit(_quick(random_state=np.random.RandomState(5)), X, y)
    b = _fit(_quick(random_state=np.random.RandomState(5)), X, y)
    assert a.noise_selection_ == b.noise_selection_
    np.testing.assert_array_equal(a.samples_, b.samples_)


def test_clone_and_pickle_keep_the_choice():
    X, y = _simulated("heteroscedastic", 300, 4)
    est = _fit(_quick(), X, y)
    back = pickle.loads(pickle.dumps(est))
    assert back.noise_ == est.noise_ and back.noise_selection_ == est.noise_selection_
    np.testing.assert_array_equal(back.predict(X[:5]), est.predict(X[:5]))
    fresh = clone(est)
    assert fresh.noise == "auto" and not hasattr(fresh, "noise_selection_")
