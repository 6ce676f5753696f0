"""sampler="vi": the estimators' tempered mean-field VI (paper 002)."""

import pickle
import warnings

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression

from skgibbs.problem import build_prior, fitted_prior
from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor, SamplerWarning, SparseGibbsMLPRegressor
from skgibbs.samplers import CSMALA, HMC, MeanFieldVI, vi

CHEAP = dict(hidden_layer_sizes=(8,), sampler=MeanFieldVI(max_iter=300), n_samples=20, pretrain_iter=100)


def _vi(**settings):
    """``CHEAP`` with other settings of the VI sampler (``max_iter=300`` unless given)."""
    return {**CHEAP, "sampler": MeanFieldVI(**{"max_iter": 300, **settings})}


@pytest.fixture(scope="module")
def data():
    X, y = make_regression(80, 3, noise=5.0, random_state=0)
    return X, y


@pytest.fixture(scope="module")
def fitted(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        # the fixed Gaussian prior, whose KL divergence test_fitted_state_and_every_method_work checks
        return GibbsMLPRegressor(**CHEAP, prior="fixed", random_state=0).fit(*data)


def _standardized(reg, X, y):
    return (X - reg.x_mean_) / reg.x_scale_, (y - reg.y_mean_) / reg.y_scale_


@pytest.mark.slow
@pytest.mark.parametrize("n,eta", [(200, 1.0), (200, 4.0), (2000, 1.0), (2000, 4.0)])
def test_linear_model_recovers_the_mean_field_optimum_at_the_defaults(n, eta):
    """Gaussian prior and likelihood: q* has the means of N(m, Lambda_eta^-1), variances 1 / (Lambda_eta)_jj.

    ``exp(-sum_i (y_i - x_i theta)^2 / T)`` is the Gaussian likelihood with ``sigma^2 = T / 2``, and
    ELBO_eta is maximised by the posterior of the likelihood to the power 1 / eta:
    Lambda_eta = S0^-1 + X'X / (eta sigma^2), m_eta = Lambda_eta^-1 X'y / (eta sigma^2). Every setting of
    MeanFieldVI but the KL weight is its default, early stopping included.
    """
    rng = np.random.default_rng(1)
    X = rng.normal(size=(n, 3))
    X[:, 2] += 0.8 * X[:, 0]
    y = X @ np.array([1.0, -0.5, 0.3]) + rng.normal(size=n)
    T, s0 = 0.5, 1.0
    reg = GibbsMLPRegressor(
        hidden_layer_sizes=(), sampler=MeanFieldVI(kl_weight=eta), temperature=T, prior_std=s0, prior="fixed",
        random_state=0,
    ).fit(X, y)
    Xs, ys = _standardized(reg, X, y)
    Xa = np.c_[Xs, np.ones(len(ys))]
    sigma2 = T / 2
    precision = np.eye(4) / s0**2 + Xa.T @ Xa / (eta * sigma2)
    mean = np.linalg.solve(precision, Xa.T @ ys / (eta * sigma2))
    sd = 1 / np.sqrt(np.diag(precision))
    # the mean-field sd is clearly below the marginal one, so the test tells them apart
    assert np.max(np.sqrt(np.diag(np.linalg.inv(precision))) / sd) > 1.2
    # the fit stopped at its plateau, not at max_iter
    assert reg.vi_stopped_early_ and reg.n_iter_ < MeanFieldVI().max_iter
    # Monte Carlo error of the averaged iterates, measured over four seeds at n = 200 and 2000: the
    # means 0.035 sd from the optimum (root mean square over coordinates), at most 0.08; the sds,
    # whose gradients carry no Monte Carlo noise here (the output layer is integrated out), within
    # 0.3%. The bounds are about 3 root mean squares for the means and 2% for the sds.
    assert np.max(np.abs(reg.variational_mean_ - mean) / sd) < 0.1
    assert np.max(np.abs(reg.variational_std_ / sd - 1)) < 0.02
    # the draws are q's: their spread is the variational sd
    draws = reg.samples_.reshape(-1, 4)
    assert np.allclose(draws.std(0), reg.variational_std_, rtol=0.15)
    assert reg.kl_weight_ == eta and len(reg.elbo_) == reg.n_iter_


def test_fitted_state_and_every_method_work(fitted, data):
    X, y = data
    reg = fitted
    Q = reg.spec_.n_params
    assert reg.sampler_name_ == "vi" and reg.samples_.shape == (4, 20, Q)
    assert isinstance(reg.sampler_, MeanFieldVI) and reg.sampler_.max_iter == 300
    # independent draws of q: no Metropolis-Hastings step and no step size (VI had NaN ones before),
    # and none of the Markov chain kernels' results
    for name in ("acceptance_rate_", "step_size_", "proposal_std_", "n_divergent_", "correction_"):
        assert not hasattr(reg, name), name
    assert "acceptance_rate" not in reg.sample_stats_ and "step_size" not in reg.sample_stats_
    assert reg.variational_mean_.shape == (Q,) and np.all(reg.variational_std_ > 0)
    assert len(reg.elbo_) == reg.n_iter_ and np.isfinite(reg.elbo_).all()
    y_pred, y_pis = reg.predict_interval(X[:5], confidence_level=[0.5, 0.9])
    assert y_pis.shape == (5, 2, 2) and np.all(y_pis[:, 0] <= y_pis[:, 1])
    assert reg.predict(X[:5], return_std=True)[1].shape == (5,)
    assert np.isfinite([reg.lfv_, reg.langevin_waic_, reg.credible_radius_, reg.generalization_loss_]).all()
    assert reg.sample_y(X[:3], 2, random_state=0).shape == (3, 2)
    idata = reg.to_arviz(X, y)
    stats = idata["sample_stats"] if not hasattr(idata, "sample_stats") else idata.sample_stats
    assert "log_q" in stats and "lp" in stats
    # KL(q || prior) in closed form, with the default prior 1 / sqrt(fan_in)
    prior = reg.spec_.fan_in_std().numpy()
    kl = vi.kl_divergence(
        torch.as_tensor(reg.variational_mean_), torch.as_tensor(reg.variational_std_), torch.as_tensor(prior)
    )
    assert reg.kl_ == pytest.approx(float(kl.sum()), rel=1e-4)
    # E_q sum_i log L_i = -lambda E_q R_n, with R_n on the standardized scale
    F = reg.predict_samples(X)
    risk = (((y[:, None] - F) / reg.y_scale_) ** 2).mean(0)
    assert reg.expected_log_likelihood_ == pytest.approx(-reg.lambda_ * risk.mean(), rel=1e-4)
    # the draws' log q
    d = reg.samples_[0, 0].astype(float)
    z = (d - reg.variational_mean_) / reg.variational_std_
    assert reg.sample_stats_["log_q"][0, 0] == pytest.approx(
        -0.5 * (z**2).sum() - np.log(reg.variational_std_).sum(), rel=1e-4
    )


def test_kl_weight_auto_is_tau_on_the_hidden_layers(data):
    X, y = data
    reg = GibbsMLPRegressor(**{**_vi(tau=0.5), "hidden_layer_sizes": (6, 10)}, random_state=0)
    reg.set_params(sampler__max_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        reg.fit(X, y)
    assert reg.kl_weight_ == pytest.approx(0.5)  # whatever n and N (the sweep_vi_tau study's rule)
    assert MeanFieldVI().kl_weights(reg.spec_.__class__(3, (100, 100)), 50_000)[1] == pytest.approx(0.3)
    weights, eta = reg.sampler_.kl_weights(reg.spec_, reg.n_train_)
    n_out = (10 + 1) * 1
    # standard parametrization: App. D cools the hidden layers only
    assert (
        eta == reg.kl_weight_
        and np.all(weights[:-n_out].numpy() == eta)
        and np.all(weights[-n_out:].numpy() == 1)
    )
    reg.set_params(sampler__parametrization="mean-field")
    assert np.all(reg.sampler.kl_weights(reg.spec_, 80)[0].numpy() == eta)
    reg.set_params(sampler__kl_weight=3.0)
    assert np.all(reg.sampler.kl_weights(reg.spec_, 80)[0].numpy() == 3.0)
    lin = MeanFieldVI(tau=0.7)
    assert lin.kl_weights(reg.spec_.__class__(3, ()), 80)[1] == 0.7


def test_mean_field_parametrization_scales_the_output_layer(data):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        reg = GibbsMLPRegressor(**_vi(parametrization="mean-field"), random_state=0).fit(X, y)
    spec = reg.spec_
    n_in, _, w, b = list(spec._slices())[-1]
    prior = fitted_prior(reg).std.numpy()
    fan_in = spec.fan_in_std().numpy()
    # a_j ~ N(0, 1) on the unscaled output weights, theta = a / N
    assert np.allclose(prior[w], 1.0 / n_in) and np.allclose(prior[: w.start], fan_in[: w.start])
    assert np.allclose(prior[b], fan_in[b])
    scale = reg.sampler_.output_scale(spec).numpy()
    assert np.allclose(scale[w], 1 / n_in) and np.all(scale[: w.start] == 1) and np.all(scale[b] == 1)
    reg.set_params(prior_std=0.5)
    assert np.allclose(fitted_prior(reg).std.numpy()[w], 0.5 / n_in)
    # the standard parametrization keeps the estimator's prior and the unit scale
    standard = MeanFieldVI()
    np.testing.assert_array_equal(build_prior(reg.get_params(), reg._traits, spec, standard, reg.prior_, False).std, 0.5)
    assert np.all(standard.output_scale(spec).numpy() == 1)


def test_a_larger_kl_weight_keeps_q_closer_to_the_prior(data):
    X, y = data
    kls = []
    for eta in (0.05, 20.0):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SamplerWarning)
            reg = GibbsMLPRegressor(
                **_vi(max_iter=1500, early_stopping=False, kl_weight=eta), random_state=0
            ).fit(X, y)
        kls.append(reg.kl_)
    assert kls[1] < 0.5 * kls[0]


def test_reproducible_and_survives_clone_and_pickle(fitted, data):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        again = clone(fitted).fit(X, y)
    assert np.array_equal(again.samples_, fitted.samples_)
    assert np.array_equal(again.elbo_, fitted.elbo_)
    restored = pickle.loads(pickle.dumps(fitted))
    assert np.array_equal(restored.predict(X), fitted.predict(X))


@pytest.mark.parametrize(
    "params,match",
    [
        (dict(sampler=MeanFieldVI(tau=0.0)), "tau"),
        (dict(sampler=MeanFieldVI(tau=-1.0)), "tau"),
        (dict(sampler=MeanFieldVI(parametrization="ntk")), "parametrization"),
        (dict(sampler=MeanFieldVI(kl_weight=0.0)), "kl_weight"),
        (dict(sampler=MeanFieldVI(kl_weight="cold")), "kl_weight"),
        (dict(sampler=MeanFieldVI(gradient="score")), "gradient"),
        (dict(sampler=MeanFieldVI(learning_rate=0.0)), "learning_rate"),
        (dict(sampler=MeanFieldVI(batch_size=0)), "batch_size"),
        (dict(rho=0.5), "batch_size"),
        (dict(prior_std=None), "Gaussian prior"),
        (dict(weight_bound=3.0), "weight_bound=None"),
    ],
)
def test_bad_parameters_raise_and_keep_the_earlier_fit(fitted, data, params, match):
    reg = pickle.loads(pickle.dumps(fitted))
    before = reg.samples_.copy()
    reg.set_params(**params)
    with pytest.raises(ValueError, match=match):
        reg.fit(*data)
    assert np.array_equal(reg.samples_, before)
    assert reg.sampler_.get_params() == fitted.sampler_.get_params()


@pytest.mark.parametrize(
    "sampler, setting",
    [
        (HMC(), "kl_weight"),
        (CSMALA(), "kl_weight"),
        (HMC(), "parametrization"),
        (HMC(), "tau"),
    ],
)
def test_vi_settings_cannot_reach_another_kernel(sampler, setting):
    # before, kl_weight or parametrization with another sampler was refused at fit ("only applies to
    # sampler='vi'"); now they are settings of MeanFieldVI alone, which no other sampler object has
    reg = GibbsMLPRegressor(sampler=sampler)
    with pytest.raises(ValueError, match=setting):
        reg.set_params(**{f"sampler__{setting}": getattr(MeanFieldVI(), setting)})
    with pytest.raises(TypeError, match=setting):
        GibbsMLPRegressor(**{setting: getattr(MeanFieldVI(), setting)})
    assert f"sampler__{setting}" in GibbsMLPRegressor(sampler=MeanFieldVI()).get_params()


def test_sparse_regressor_refuses_vi(data):
    # the name is not among the sparse regressor's kernels; the object cannot take its mixing prior
    with pytest.raises(ValueError, match=r"sampler.*'rjmcmc'"):
        SparseGibbsMLPRegressor(sampler="vi").fit(*data)
    with pytest.raises(ValueError, match="MixingPrior of sparse networks needs sampler='rjhmc'"):
        SparseGibbsMLPRegressor(sampler=MeanFieldVI()).fit(*data)


def test_unfinished_optimisation_warns(data):
    X, y = data
    reg = GibbsMLPRegressor(**_vi(max_iter=300), random_state=0)
    with pytest.warns(SamplerWarning, match=r"max_iter=300 steps.*Raise the sampler's max_iter"):
        reg.fit(X, y)
    # no plateau is possible before patience windows of 100 steps; the decay phase is the last 30%
    assert not reg.vi_stopped_early_ and reg.n_iter_ == 300 and len(reg.vi_validation_objective_) == 2


def test_no_early_stopping_uses_all_steps(data):
    reg = GibbsMLPRegressor(**_vi(early_stopping=False, max_iter=50), random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reg.fit(*data)
    assert not any("max_iter" in str(w.message) for w in caught)  # nothing held out to judge by
    assert reg.n_iter_ == 50 and len(reg.vi_validation_objective_) == 0


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_vi(n_classes):
    X, y = make_classification(150, 4, n_informative=3, n_redundant=0, n_classes=n_classes, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        clf = GibbsMLPClassifier(**_vi(max_iter=1000), random_state=0).fit(X, y)
    P = clf.predict_proba(X)
    assert P.shape == (150, n_classes) and np.allclose(P.sum(1), 1)
    assert clf.score(X, y) > 0.7
    proba, bands = clf.predict_interval(X[:4], confidence_level=0.9)
    assert bands.shape == (4, 2, n_classes, 1)
    assert np.isfinite([clf.generalization_loss_, clf.lfv_, clf.kl_, clf.expected_log_likelihood_]).all()
    # the classifier's likelihood is the categorical one at temperature 1: lambda = n
    assert clf.lambda_ == 150


def test_progress_is_printed_with_verbose(data, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        GibbsMLPRegressor(**_vi(max_iter=100), verbose=1, random_state=0).fit(*data)
    err = capsys.readouterr().err
    assert "[skgibbs] vi" in err and "100/100" in err


def test_mean_field_pretrains_in_its_own_coordinates():
    """q starts (and ends) with output weights a_j = N theta_j of the prior's order, not sqrt(N) larger."""
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, 300)
    y = x**3 + 0.03 * rng.normal(size=300)
    reg = GibbsMLPRegressor(
        hidden_layer_sizes=(400,),
        sampler=MeanFieldVI(parametrization="mean-field", max_iter=300),
        pretrain_iter=300,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        reg.fit(x[:, None], y)
    n_in, _, w, _ = list(reg.spec_._slices())[-1]
    a = reg.variational_mean_[w] * n_in
    assert np.sqrt(np.mean(a**2)) < 5  # a standard network's N theta_j has rms about sqrt(6 N / 3) = 28
    assert reg.kl_ / reg.spec_.n_params < 10
    assert reg.score(x[:, None], y) > 0.5


def test_any_potential_runs_under_mean_field_vi_through_run_chains():
    # the mean of n observations under N(0, s^2), a user's FunctionPotential: at kl_weight=1 the
    # Gaussian q is the exact posterior N(m, 1 / P), P = 2 lambda + 1 / s^2 (lambda = n / temperature)
    from skgibbs.potential import FunctionPotential
    from skgibbs.priors import Prior
    from skgibbs.samplers import Target, run_chains

    y = torch.linspace(-1.0, 1.0, 60, dtype=torch.float64) + 0.7
    pot = FunctionPotential(lambda th, idx: (y[idx] - th[:, :1]) ** 2, n_data=60)
    lam, s = 30.0, 5.0
    target = Target(pot, Prior(std=s), lambda_=lam)
    res = run_chains(target, torch.zeros(2, 1, dtype=torch.float64), [0, 1],
                     MeanFieldVI(kl_weight=1.0, batch_size=60, max_iter=4000), n_samples=2000)
    precision = 2 * lam + s**-2
    mean = (2 * lam / 60) * float(y.sum()) / precision
    # q's parameters: the optimiser's noise after Polyak averaging is far below these tolerances
    assert res.variational_mean[0] == pytest.approx(mean, abs=0.02 * precision**-0.5 * 10)
    assert res.variational_std[0] == pytest.approx(precision**-0.5, rel=0.05)
    # the draws are q's: their mean within 4 Monte Carlo standard errors
    draws = res.samples.reshape(-1)
    assert abs(draws.mean() - res.variational_mean[0]) < 4 * res.variational_std[0] / np.sqrt(draws.size)
