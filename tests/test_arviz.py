"""GibbsMLPRegressor.to_arviz: posterior, sample stats and log-likelihood with (chain, draw) dimensions."""

import sys
import types
import warnings

import numpy as np
import pytest

from skgibbs import GibbsMLPRegressor
from skgibbs.criteria import functional_variance, gaussian_log_likelihood, waic
from skgibbs.samplers import SGLD, MeanFieldVI


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(40, 2))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=40)
    # HMC's per-draw records, and lp of the fixed Gaussian prior at the plug-in temperature
    reg = GibbsMLPRegressor(
        (6,), sampler="hmc", prior="fixed", temperature="plug-in", n_samples=15, burn_in=60, thin=3,
        n_chains=2, pretrain_iter=100, random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg.fit(X, y)
    return reg, X, y


def test_sample_stats_per_draw(fitted):
    reg, X, y = fitted
    acc = reg.sample_stats_["acceptance_rate"]
    assert acc.shape == (2, 15) and np.all((acc >= 0) & (acc <= 1))
    # every sampling step lies in exactly one thinning window
    np.testing.assert_allclose(acc.mean(1), reg.acceptance_rate_)
    lp = reg.sample_stats_["lp"]
    theta = reg.samples_[1, 4].astype(float)
    R_n = np.mean(((y - reg.predict_samples(X)[:, 15 + 4]) / reg.y_scale_) ** 2)
    std = np.concatenate([np.full((a + 1) * b, a**-0.5) for a, b in reg.spec_.shapes])
    expected = -reg.lambda_ * R_n - 0.5 * np.sum((theta / std) ** 2)
    assert lp[1, 4] == pytest.approx(expected, rel=1e-4)


def test_to_arviz_groups_and_waic(fitted):
    az = pytest.importorskip("arviz")
    reg, X, y = fitted
    idata = reg.to_arviz(X, y)
    post = idata.posterior
    assert post["coefs_0"].shape == (2, 15, 2, 6) and post["intercepts_1"].shape == (2, 15, 1)
    np.testing.assert_allclose(post["coefs_0"].values[1, 3].ravel(), reg.samples_[1, 3, :12])
    assert idata.sample_stats["acceptance_rate"].dims == ("chain", "draw")
    ll = idata.log_likelihood["y"].values
    assert ll.shape == (2, 15, 40)
    ours = waic(ll)
    np.testing.assert_allclose(ll.reshape(30, 40), gaussian_log_likelihood(y, reg.predict_samples(X).T, reg.noise_variance_))
    assert ours.p_waic == pytest.approx(reg.lfv_)  # one functional variance, divisor S
    if int(az.__version__.split(".")[0]) < 1:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            ref = az.waic(idata)
        assert float(ref.elpd_waic) == pytest.approx(ours.elpd_waic, rel=1e-6)
        assert float(ref.p_waic) == pytest.approx(functional_variance(ll.reshape(30, 40)), rel=1e-6)


def test_to_arviz_with_the_defaults_uses_each_draws_noise(fitted):
    # the defaults (MCLMC, ARD, the noise learned): each draw's own noise variance in the log-likelihood
    pytest.importorskip("arviz")
    _, X, y = fitted
    reg = GibbsMLPRegressor(
        (6,), n_samples=15, burn_in=60, thin=3, n_chains=2, pretrain_iter=100, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg.fit(X, y)
    assert (reg.sampler_name_, reg.prior_, reg.temperature_source_) == ("mclmc", "ard", "learned")
    idata = reg.to_arviz(X, y)
    assert set(idata.sample_stats.data_vars) >= {"lp", "step_size", "noise_variance", "precision"}
    ll = idata.log_likelihood["y"].values
    assert ll.shape == (2, 15, 40)
    noise = reg.sample_stats_["noise_variance"].reshape(-1, 1)
    expected = gaussian_log_likelihood(y, reg.predict_samples(X).T, noise)
    np.testing.assert_allclose(ll.reshape(30, 40), expected)
    assert not np.allclose(noise, reg.noise_variance_)  # the draws' noise variances differ
    assert waic(ll).p_waic == pytest.approx(reg.lfv_)


def test_to_arviz_without_data_and_bad_input(fitted):
    pytest.importorskip("arviz")
    reg, X, y = fitted
    idata = reg.to_arviz()
    assert "log_likelihood" not in idata.groups() and "posterior" in idata.groups()
    with pytest.raises(ValueError, match="both X and y"):
        reg.to_arviz(y=y)
    alone = reg.to_arviz(X)  # X alone: the posterior predictive draws, no likelihood
    assert "posterior_predictive" in alone.groups() and "log_likelihood" not in alone.groups()
    with pytest.raises(ValueError, match="rows"):
        reg.to_arviz(X, y[:-1])
    with pytest.raises(ValueError, match="features"):
        reg.to_arviz(X[:, :1], y)


def test_to_arviz_speaks_the_1x_api(fitted, monkeypatch):
    # ArviZ 1.x takes one positional mapping {group: {var: array}}; 0.x takes one keyword per group
    reg, X, y = fitted
    calls = []
    fake = types.ModuleType("arviz")
    fake.__version__ = "1.2.0"
    fake.from_dict = lambda *args, **kwargs: calls.append((args, kwargs)) or "tree"
    monkeypatch.setitem(sys.modules, "arviz", fake)
    assert reg.to_arviz(X, y) == "tree"
    (args, kwargs), = calls
    assert set(args[0]) == {"posterior", "sample_stats", "posterior_predictive", "log_likelihood", "observed_data"}
    assert args[0]["log_likelihood"]["y"].shape == (2, 15, 40) and kwargs["dims"]["y"] == ["obs"]
    fake.__version__ = "0.22.0"
    reg.to_arviz()
    assert "posterior" in calls[-1][1] and not calls[-1][0]


@pytest.mark.parametrize(
    "sampler, absent",
    [
        # no Metropolis-Hastings step: no acceptance rate (SGLD reported 1 and VI NaN before)
        (SGLD(step_size=1e-4), {"acceptance_rate"}),
        # independent draws of q: no step size either, and the draws' log q instead
        (MeanFieldVI(max_iter=50), {"acceptance_rate", "step_size"}),
    ],
    ids=["sgld", "vi"],
)
def test_sample_stats_hold_only_what_the_kernel_records(fitted, sampler, absent):
    _, X, y = fitted
    reg = GibbsMLPRegressor(
        (6,), sampler=sampler, rho=0.5 if isinstance(sampler, SGLD) else "auto", n_samples=15,
        burn_in=20 if isinstance(sampler, SGLD) else "auto",  # VI has no burn-in (and refuses one)
        n_chains=2, pretrain_iter=50, random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg.fit(X, y)
    assert not absent & set(reg.sample_stats_) and "lp" in reg.sample_stats_
    assert not hasattr(reg, "acceptance_rate_")
    if isinstance(sampler, SGLD):
        step = np.repeat(reg.step_size_[:, None], 15, axis=1)
        np.testing.assert_array_equal(reg.sample_stats_["step_size"], step)
    else:
        assert reg.sample_stats_["log_q"].shape == (2, 15)
    pytest.importorskip("arviz")
    idata = reg.to_arviz(X, y)
    assert set(idata.sample_stats.data_vars) == set(reg.sample_stats_)
    # the independent draws of q are exported as one chain (not as made-up chains)
    shape = (2, 15, 40) if isinstance(sampler, SGLD) else (1, 30, 40)
    assert idata.log_likelihood["y"].shape == shape


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # ArviZ 0.x on recent matplotlib
def test_trace_and_rank_recipe_of_the_diagnostics_page(fitted):
    """doc/user_guide/diagnostics.rst: function values as ArviZ data, plotted, and R-hat as fitted."""
    az = pytest.importorskip("arviz")
    if int(str(az.__version__).split(".")[0]) >= 1:
        pytest.skip("the recipe is written for ArviZ 0.x")
    matplotlib = pytest.importorskip("matplotlib", reason="the plots need matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    reg, X, y = fitted
    n_chains, n_draws = reg.samples_.shape[:2]
    X_show = X[:3]
    pp = reg.to_arviz(X_show).posterior_predictive
    np.testing.assert_allclose(pp["f"].values[1, 4], reg.predict_samples(X_show)[:, n_draws + 4], rtol=1e-6)
    try:
        assert az.plot_trace(pp, var_names=["f"], compact=False).shape == (3, 2)
        assert az.plot_rank(pp, var_names=["f"]).shape == (3,)
        idata = reg.to_arviz(X, y, random_state=0)
        az.plot_trace(idata.sample_stats, var_names=["lp", "acceptance_rate"])
        az.plot_rank(idata.sample_stats, var_names=["lp"])
    finally:
        plt.close("all")
    f = idata.posterior_predictive[["f"]]
    assert float(az.rhat(f)["f"].max()) == pytest.approx(reg.rhat_)
    assert float(az.ess(f)["f"].min()) == pytest.approx(reg.ess_)


def test_energy_and_bfmi(fitted):
    # HMC records H = U + K after each transition (Stan's energy__): ArviZ's BFMI reads it per chain
    az = pytest.importorskip("arviz")
    reg, X, y = fitted
    energy = reg.sample_stats_["energy"]
    assert energy.shape == (2, 15) and np.all(np.isfinite(energy))
    idata = reg.to_arviz()
    np.testing.assert_array_equal(idata.sample_stats["energy"].values, energy)
    bfmi = az.bfmi(idata)
    assert bfmi.shape == (2,) and np.all(np.isfinite(bfmi) & (bfmi > 0))


def test_posterior_predictive_gives_the_librarys_rhat_and_ess(fitted):
    # R-hat and ESS of the function values at the training inputs, as ArviZ computes them by default
    az = pytest.importorskip("arviz")
    reg, X, y = fitted
    idata = reg.to_arviz(X, y, random_state=0)
    f = idata.posterior_predictive["f"]
    assert f.dims == ("chain", "draw", "obs") and f.shape == (2, 15, 40)
    np.testing.assert_allclose(f.values.reshape(30, 40), reg.predict_samples(X).T)
    assert float(az.rhat(f)["f"].max()) == pytest.approx(reg.rhat_, rel=1e-12)
    assert float(az.ess(f)["f"].min()) == pytest.approx(reg.ess_, rel=1e-12)
    # y: f plus each draw's noise, reproducible from random_state
    y_draws = idata.posterior_predictive["y"].values
    np.testing.assert_array_equal(y_draws, reg.to_arviz(X, random_state=0).posterior_predictive["y"].values)
    assert not np.array_equal(y_draws, reg.to_arviz(X, random_state=1).posterior_predictive["y"].values)
    resid = (y_draws - f.values).ravel()
    assert resid.std() == pytest.approx(np.sqrt(reg.noise_variance_), rel=0.2)


def test_log_likelihood_gives_the_librarys_waic_and_loo(fitted):
    # ArviZ's WAIC is untempered: the library's scales the penalty by waic_tempering_, the power of the likelihood
    az = pytest.importorskip("arviz")
    from skgibbs.diagnostics import psis_loo

    reg, X, y = fitted
    idata = reg.to_arviz(X, y)
    assert reg.waic_tempering_ != pytest.approx(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ref = az.waic(idata)
        loo = az.loo(idata, reff=1.0, pointwise=True)
    beta = reg.waic_tempering_
    expected = -(float(ref.elpd_waic) + (1 - beta) * float(ref.p_waic)) / 40
    assert reg.generalization_loss_ == pytest.approx(expected, rel=1e-9)
    # PSIS-LOO: the same Pareto fits; the elpd differs only by where the smoothed weights are truncated
    ours = psis_loo(idata.log_likelihood["y"].values.reshape(30, 40))
    np.testing.assert_allclose(loo.pareto_k.values, ours.khat, rtol=1e-9)
    assert float(loo.elpd_loo) == pytest.approx(ours.elpd_pointwise.sum(), rel=0.1)


def test_untempered_waic_is_the_generalization_loss():
    # the classifier at temperature=1: the Bayesian posterior, az.waic per example is generalization_loss_;
    # R-hat and ESS of the predicted probabilities are rhat_ and ess_
    az = pytest.importorskip("arviz")
    from skgibbs import GibbsMLPClassifier

    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(40, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, "b", "a")
    clf = GibbsMLPClassifier(
        (4,), sampler="hmc", n_samples=15, burn_in=40, thin=2, n_chains=2, pretrain_iter=50, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y)
    assert clf.waic_tempering_ == 1.0
    idata = clf.to_arviz(X, y, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ref = az.waic(idata)
    assert clf.generalization_loss_ == pytest.approx(-float(ref.elpd_waic) / 40, rel=1e-9)
    proba = idata.posterior_predictive["proba"]
    assert proba.dims == ("chain", "draw", "obs", "class") and proba.shape == (2, 15, 40, 2)
    # with two classes the checks judge the second class's probability: the first's is one minus it, and its
    # folded (tail) R-hat can differ from the second's in the last digits
    second = proba.isel({"class": 1})
    assert float(az.rhat(second)["proba"].max()) == pytest.approx(clf.rhat_, rel=1e-6)
    assert float(az.ess(second)["proba"].min()) == pytest.approx(clf.ess_, rel=1e-6)
    labels = idata.posterior_predictive["y"].values
    assert labels.shape == (2, 15, 40) and set(np.unique(labels)) <= {0, 1}
    np.testing.assert_array_equal(idata.observed_data["y"].values, (y == "b").astype(int))
