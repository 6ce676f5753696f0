"""``sample_weight``: a weight counts its example that many times.

Ground truth: integer weights give the target of the data with rows
repeated (the same density and gradient to rounding, for every kernel's
potential and the learned noise's conditionals), the minibatch estimates
stay unbiased under weights, a weighted Gaussian linear model's posterior
matches its closed form, and the weighted criteria equal those of the
repeated rows computed from the same draws. Bad weights are refused before
any work with an error naming ``sample_weight``, and the earlier fit is kept.
"""

import warnings

import numpy as np
import pytest
import sklearn
import torch
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor, SparseGibbsMLPRegressor
from skgibbs._noise_choice import choose
from skgibbs.criteria import gaussian_log_likelihood, langevin_functional_variance, waic
from skgibbs.criteria._waic import waic_from_pointwise
from skgibbs.diagnostics import stacking_weights
from skgibbs.model import MLPSpec
from skgibbs.potential import Batch, MLPPotential
from skgibbs.priors import Prior
from skgibbs.problem import build_problem
from skgibbs.samplers import MALA, SMC, Target, run_chains
from skgibbs.samplers.hmc.gibbs import draw_hyperparameters
from skgibbs.samplers.noncentered import NonCenteredTarget
from skgibbs.samplers.sghmc.kernel import batch_gradient

K_SD = 4.0


def _data(n=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * [1.0, 5.0, 0.2] + [0.0, 2.0, -1.0]
    y = np.sin(X[:, 0]) + 0.1 * X[:, 1] + 0.2 * rng.normal(size=n)
    w = rng.integers(0, 4, size=n)
    w[:2] = [1, 3]  # at least two rows of non-zero weight
    return X, y, w


def _repeated(X, y, w):
    return np.repeat(X, w, axis=0), np.repeat(y, w)


def _quiet_fit(est, X, y, **fit_params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clone(est).fit(X, y, **fit_params)


# ---------------------------------------------------------------------------------------------
# Integer weights give the target of repeated rows, kernel by kernel
# ---------------------------------------------------------------------------------------------
#: every kernel the dense regressor runs, with the rho it runs at and its prior
KERNELS = {
    "mala": {"sampler": "mala"},
    "hmc": {"sampler": "hmc"},
    "mclmc": {"sampler": "mclmc"},
    "adjusted_mclmc": {"sampler": "adjusted_mclmc"},
    "csmala": {"sampler": "csmala", "rho": 0.5},
    "smala": {"sampler": "smala", "rho": 0.5},
    "sgld": {"sampler": "sgld", "rho": 0.5},
    "sghmc": {"sampler": "sghmc"},
    "vi": {"sampler": "vi"},
    "smc": {"sampler": "smc"},
}


@pytest.mark.parametrize("settings", KERNELS.values(), ids=KERNELS.keys())
def test_integer_weights_give_the_target_of_repeated_rows(settings):
    X, y, w = _data()
    est = GibbsMLPRegressor(hidden_layer_sizes=(6,), pretrain_iter=0, random_state=0, **settings)
    weighted = build_problem(est, X, y, sample_weight=w)
    repeated = build_problem(est, *_repeated(X, y, w))
    tw, tr = weighted.target, repeated.target
    assert tw.n_data == tr.n_data == w.sum() and tw.n_rows == len(y)
    assert tw.lambda_ == pytest.approx(tr.lambda_, rel=1e-12)
    np.testing.assert_allclose(weighted.x_mean, repeated.x_mean, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(weighted.x_scale, repeated.x_scale, rtol=1e-12)
    assert weighted.encoding["y_mean_"] == pytest.approx(repeated.encoding["y_mean_"], rel=1e-12, abs=1e-14)
    assert weighted.encoding["y_scale_"] == pytest.approx(repeated.encoding["y_scale_"], rel=1e-12)
    theta = 0.3 * torch.randn(3, weighted.spec.n_params, generator=torch.Generator().manual_seed(0))
    # the data term lambda R_n and its gradient (the prior, the same object of the same parameters, aside:
    # a hierarchical one needs its scales, which the learned-noise test below compares)
    for a, b in zip(tw.loss_sum_and_grad(theta), tr.loss_sum_and_grad(theta)):
        torch.testing.assert_close(tw.scale * a, tr.scale * b, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(tw.mean_loss(theta), tr.mean_loss(theta), rtol=1e-5, atol=1e-6)


def test_the_learned_noise_and_the_scales_see_the_weights_as_repeats():
    """The non-centred target (MCLMC's default) and HMC-within-Gibbs's conditionals agree to rounding."""
    X, y, w = _data()
    est = GibbsMLPRegressor(hidden_layer_sizes=(6,), pretrain_iter=0, prior="ard", temperature="learn",
                            random_state=0)  # fmt: skip
    weighted = build_problem(est.set_params(sampler="hmc"), X, y, sample_weight=w)
    repeated = build_problem(est, *_repeated(X, y, w))
    assert weighted.prior.learns_noise
    x = 0.3 * torch.randn(3, weighted.spec.n_params, generator=torch.Generator().manual_seed(1))
    nw, nr = NonCenteredTarget(weighted.target), NonCenteredTarget(repeated.target)
    point = nw.from_theta(x)
    for a, b in zip(nw.value_and_grad(point), nr.value_and_grad(point)):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)
    draws = []
    for problem in (weighted, repeated):
        gens = [torch.Generator().manual_seed(k) for k in range(3)]
        loss = problem.target.loss_sum(x)
        draws.append(draw_hyperparameters(gens, problem.target, x, loss))
    for a, b in zip(*draws):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_minibatch_estimates_are_unbiased_under_weights():
    """Bernoulli batches (csMALA, sMALA, SGLD) and SGHMC's uniform batches estimate the weighted sums."""
    rng = np.random.default_rng(2)
    n, d = 30, 2
    X = torch.as_tensor(rng.normal(size=(n, d)))
    y = torch.as_tensor(rng.normal(size=n))
    w = rng.uniform(0.0, 3.0, size=n)
    spec = MLPSpec(d, (4,), "tanh")
    target = Target(MLPPotential(spec, X, y, sample_weight=w), Prior(), lambda_=7.0)
    theta = 0.5 * torch.randn(1, spec.n_params, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    full = float(target.scale * target.loss_sum(theta)[0])  # lambda R_n
    rho, m = 0.4, 4000
    gens = [torch.Generator().manual_seed(k) for k in range(m)]
    batch = target.draw_batch(gens, rho)
    values = target.scale / rho * target.loss_sum(theta.expand(m, -1), batch)
    mean, se = float(values.mean()), float(values.std() / np.sqrt(m))
    assert abs(mean - full) < K_SD * se, (mean, full, se)
    assert se < 0.05 * abs(full)  # the tolerance is not vacuous
    # SGHMC: n / b times a batch's weighted gradient estimates the full gradient of lambda R_n
    _, full_grad = target.loss_sum_and_grad(theta)
    full_grad = target.grad(full_grad, theta)[0]
    grads = torch.stack([batch_gradient([torch.Generator().manual_seed(k)], target, theta, 8)[0][0]
                         for k in range(3000)])  # fmt: skip
    z = (grads.mean(0) - full_grad) / (grads.std(0) / np.sqrt(len(grads)))
    assert float(z.abs().max()) < K_SD + 1.0, z


# ---------------------------------------------------------------------------------------------
# A weighted conjugate posterior: the Gaussian linear model
# ---------------------------------------------------------------------------------------------
def _weighted_linear_posterior(X1, y, w, T):
    """``exp(-sum_i w_i r_i^2 / T)`` under a flat prior: ``N(beta_w, (T / 2) (X1' W X1)^-1)``."""
    XtW = X1.T * w
    precision = XtW @ X1
    return np.linalg.solve(precision, XtW @ y), 0.5 * T * np.linalg.inv(precision)


@pytest.mark.slow
def test_weighted_linear_posterior_matches_closed_form(ess, moment_errors):
    rng = np.random.default_rng(3)
    n, d, T = 40, 2, 0.5
    X = rng.normal(size=(n, d))
    y = X @ np.array([1.0, -0.5]) + 0.3 + 0.5 * rng.normal(size=n)
    w = rng.uniform(0.2, 3.0, size=n)
    beta, Sigma = _weighted_linear_posterior(np.c_[X, np.ones(n)], y, w, T)
    A = np.array([[0.0, 0.0, 1.0], [1.0, -1.0, 1.0], [2.0, 1.0, 1.0]])
    pot = MLPPotential(MLPSpec(d, (), "identity"), torch.as_tensor(X), torch.as_tensor(y), sample_weight=w)
    target = Target(pot, Prior(), pot.total_weight / T)
    res = run_chains(target, torch.zeros(4, 3, dtype=torch.float64), [1, 2, 3, 4], MALA(), n_samples=4000,
                     burn_in=500)  # fmt: skip
    F = res.samples @ A.T
    errors = moment_errors(F, A @ beta, A @ Sigma @ A.T, K_SD)
    assert max(errors.values()) < 1.0, errors
    assert min(ess(F[..., j]) for j in range(3)) > 1000
    # power: the unweighted posterior is rejected
    beta0, Sigma0 = _weighted_linear_posterior(np.c_[X, np.ones(n)], y, np.ones(n) * w.mean(), T)
    wrong = moment_errors(F, A @ beta0, A @ Sigma0 @ A.T, K_SD)
    assert max(wrong.values()) > 1.0, wrong


@pytest.mark.slow
def test_weighted_estimator_matches_the_closed_form(moment_errors):
    """End to end: the weighted standardization, the temperature's scale n_w / T and the draws mapped back."""
    rng = np.random.default_rng(4)
    n, d, T = 50, 2, 0.5
    X = 3 * rng.normal(size=(n, d)) + 1
    y = 10 * (X @ np.array([1.0, -0.5]) + 0.3 + 2 * rng.normal(size=n)) + 7
    w = rng.integers(1, 4, size=n).astype(float)
    total = w.sum()
    x_mean = w @ X / total
    x_std = np.sqrt(w @ (X - x_mean) ** 2 / total)
    y_mean = w @ y / total
    y_std = np.sqrt(w @ (y - y_mean) ** 2 / total)
    beta, Sigma = _weighted_linear_posterior(np.c_[(X - x_mean) / x_std, np.ones(n)], (y - y_mean) / y_std, w, T)
    X_test = np.array([[0.0, 0.0], [1.0, -1.0], [4.0, 3.0]])
    A = np.c_[(X_test - x_mean) / x_std, np.ones(3)]
    mean, cov = y_mean + y_std * A @ beta, y_std**2 * A @ Sigma @ A.T
    est = GibbsMLPRegressor(hidden_layer_sizes=(), sampler="mala", prior_std=None, temperature=T, pretrain_iter=0,
                            n_chains=4, n_samples=2000, burn_in=500, thin=2, random_state=0)  # fmt: skip
    est = _quiet_fit(est, X, y, sample_weight=w)
    assert est.sample_weight_sum_ == total and est.lambda_ == pytest.approx(total / T)
    F = est.predict_samples(X_test).T.reshape(4, 2000, 3)
    errors = moment_errors(F, mean, cov, K_SD)
    assert max(errors.values()) < 1.0, errors


# ---------------------------------------------------------------------------------------------
# The criteria: the weighted ones are those of the repeated rows, from the same draws
# ---------------------------------------------------------------------------------------------
#: the network's outputs are float32, and a row's rounding may depend on how many rows a block of the
#: matrix product holds: the fit's rows and the repeated rows are evaluated in other blocks
OUTPUT_RTOL = 1e-6


@pytest.mark.parametrize("noise", ["learned", "plug-in"])
def test_weighted_criteria_are_those_of_the_repeated_rows(noise):
    X, y, w = _data(n=60)
    settings = {"temperature": "plug-in", "sampler": "mala"} if noise == "plug-in" else {}
    est = GibbsMLPRegressor(hidden_layer_sizes=(6,), n_samples=20, burn_in=20, pretrain_iter=50,
                            noise="homoscedastic", random_state=0, **settings)  # fmt: skip
    est = _quiet_fit(est, X, y, sample_weight=w)
    assert est.temperature_source_ == noise
    Xr, yr = _repeated(X, y, w)
    F = est.predict_samples(Xr).T  # (S, n_w)
    V = est.predict_noise_samples(Xr).T
    if noise == "plug-in":
        # the plug-in variance: the mean squared residual of the draws, over the repeated rows
        assert est.noise_variance_ == pytest.approx(np.mean((yr - F) ** 2), rel=OUTPUT_RTOL)
    log_lik = gaussian_log_likelihood(yr, F, V)
    ref = waic(log_lik, beta=est.waic_tempering_)
    assert est.generalization_loss_ == pytest.approx(-ref.elpd_waic / len(yr), rel=OUTPUT_RTOL)
    assert est.lfv_ == pytest.approx(ref.p_waic, rel=OUTPUT_RTOL)
    fbar = F.mean(0)
    assert est.train_loss_ == pytest.approx(np.mean((yr - fbar) ** 2) / (2 * est.noise_variance_), rel=OUTPUT_RTOL)


def test_weighted_classifier_criteria_are_those_of_the_repeated_rows():
    X, _, w = _data(n=60)
    y = (X[:, 0] + 0.3 * X[:, 2] > 0).astype(int)
    est = GibbsMLPClassifier(hidden_layer_sizes=(6,), n_samples=20, burn_in=20, pretrain_iter=50, random_state=0)
    est = _quiet_fit(est, X, y, sample_weight=w)
    Xr, yr = _repeated(X, y, w)
    P = est.predict_samples(Xr).transpose(1, 0, 2)  # (S, n_w, classes)
    log_lik = np.log(np.take_along_axis(P, yr[None, :, None], axis=2)[..., 0])
    ref = waic(log_lik, beta=est.waic_tempering_)
    assert est.generalization_loss_ == pytest.approx(-ref.elpd_waic / len(yr), rel=OUTPUT_RTOL)
    assert est.lfv_ == pytest.approx(ref.p_waic, rel=OUTPUT_RTOL)
    assert est.train_loss_ == pytest.approx(-np.mean(np.log(np.exp(log_lik).mean(0))), rel=OUTPUT_RTOL)


def test_weighted_pointwise_sums_are_those_of_repeated_rows():
    rng = np.random.default_rng(5)
    elpd, p, w = rng.normal(size=12), rng.uniform(size=12), rng.integers(0, 4, size=12)
    res, ref = waic_from_pointwise(elpd, p, w), waic_from_pointwise(np.repeat(elpd, w), np.repeat(p, w))
    assert res.elpd_waic == pytest.approx(ref.elpd_waic, rel=1e-12)
    assert res.p_waic == pytest.approx(ref.p_waic, rel=1e-12)
    assert res.se == pytest.approx(ref.se, rel=1e-12)
    lpd = rng.normal(size=(3, 12)) - 1.0
    np.testing.assert_allclose(stacking_weights(lpd, sample_weight=w), stacking_weights(np.repeat(lpd, w, axis=1)),
                               rtol=1e-6, atol=1e-8)  # fmt: skip (both solved to L-BFGS's tolerance)
    # the noise choice's evidence: the means and standard errors of the repeated rows
    a, b = rng.normal(size=12), rng.normal(size=12) + 0.2
    mine = choose({"homoscedastic": a, "heteroscedastic": b}, sample_weight=w)[1]
    theirs = choose({"homoscedastic": np.repeat(a, w), "heteroscedastic": np.repeat(b, w)})[1]
    for key in ("differences", "standard_errors"):
        for k in mine[key]:
            assert mine[key][k] == pytest.approx(theirs[key][k], rel=1e-12)


def test_langevin_functional_variance_of_weights_is_that_of_repeated_rows():
    from sklearn.linear_model import Ridge

    X, y, w = _data(n=30)
    Xr, yr = _repeated(X, y, w)
    model = Ridge(alpha=0.1).fit(Xr, yr)
    settings = {"alpha": 0.002, "n_iter": 400, "burn_in": 100, "random_state": 0}
    mine = langevin_functional_variance(model, X, y, sample_weight=w, **settings)
    theirs = langevin_functional_variance(model, Xr, yr, **settings)
    assert mine.noise_variance == pytest.approx(theirs.noise_variance, rel=OUTPUT_RTOL)
    assert mine.train_loss == pytest.approx(theirs.train_loss, rel=OUTPUT_RTOL)
    # the same Langevin process on the same potential, to the rounding of its sums
    assert mine.lfv == pytest.approx(theirs.lfv, rel=1e-4)


# ---------------------------------------------------------------------------------------------
# Bad weights, weights of one, and the scikit-learn tools that route them
# ---------------------------------------------------------------------------------------------
CHEAP = {"hidden_layer_sizes": (6,), "n_samples": 5, "burn_in": 5, "pretrain_iter": 20, "random_state": 0}
BAD = {
    "negative": (lambda n: np.r_[-1.0, np.ones(n - 1)], ">= 0"),
    "nan": (lambda n: np.r_[np.nan, np.ones(n - 1)], "NaN or infinite"),
    "inf": (lambda n: np.r_[np.inf, np.ones(n - 1)], "NaN or infinite"),
    "too_short": (lambda n: np.ones(n - 1), "one weight per row"),
    "two_columns": (lambda n: np.ones((n, 2)), "one weight per row"),
    "all_zero": (lambda n: np.zeros(n), "zero for every row"),
    "one_row": (lambda n: np.r_[1.0, np.zeros(n - 1)], "at least 2 samples of non-zero sample_weight"),
    "text": (lambda n: np.array(["a"] * n), "must hold numbers"),
}


@pytest.mark.parametrize("Estimator", [GibbsMLPRegressor, GibbsMLPClassifier, SparseGibbsMLPRegressor])
@pytest.mark.parametrize("case", BAD.values(), ids=BAD.keys())
def test_bad_weights_are_refused_before_any_work_and_keep_the_fit(Estimator, case, monkeypatch):
    X, y, _ = _data()
    if Estimator is GibbsMLPClassifier:
        y = (y > np.median(y)).astype(int)
    est = _quiet_fit(Estimator(**CHEAP), X, y)
    before = est.samples_.copy()
    make, words = case

    def no_work(*args, **kwargs):
        raise AssertionError("the fit started")

    monkeypatch.setattr(type(est), "_fit", no_work)
    with pytest.raises(ValueError, match="sample_weight") as info:
        est.fit(X, y, sample_weight=make(len(y)))
    assert words in str(info.value)
    np.testing.assert_array_equal(est.samples_, before)


def test_weights_of_one_are_no_weights():
    X, y, _ = _data()
    est = GibbsMLPRegressor(**CHEAP)
    a, b = _quiet_fit(est, X, y), _quiet_fit(est, X, y, sample_weight=np.ones(len(y)))
    np.testing.assert_array_equal(a.samples_, b.samples_)
    assert a.generalization_loss_ == b.generalization_loss_


def test_a_class_left_without_weight_is_refused_naming_it():
    X, y, _ = _data()
    y = (y > np.median(y)).astype(int)
    with pytest.raises(ValueError, match="2 classes with a non-zero sample_weight"):
        GibbsMLPClassifier(**CHEAP).fit(X, y, sample_weight=y.astype(float))


def test_grid_search_and_pipeline_pass_the_weights():
    X, y, w = _data(n=48)
    est = GibbsMLPRegressor(**CHEAP)
    direct = _quiet_fit(est, X, y, sample_weight=w)
    # without metadata routing: the pipeline's step__param and GridSearchCV's fit parameters
    pipe = make_pipeline(FunctionTransformer(), est)
    piped = _quiet_fit(pipe, X, y, gibbsmlpregressor__sample_weight=w)
    np.testing.assert_array_equal(piped[-1].samples_, direct.samples_)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = GridSearchCV(est, {"temperature": [0.5, "auto"]}, cv=2).fit(X, y, sample_weight=w)
    refit = _quiet_fit(est.set_params(**search.best_params_), X, y, sample_weight=w)
    np.testing.assert_array_equal(search.best_estimator_.samples_, refit.samples_)
    # with metadata routing: the estimator asks for the weights, the pipeline routes them
    with sklearn.config_context(enable_metadata_routing=True):
        routed = make_pipeline(FunctionTransformer(), clone(est).set_fit_request(sample_weight=True))
        routed = _quiet_fit(routed, X, y, sample_weight=w)
        np.testing.assert_array_equal(routed[-1].samples_, direct.samples_)
        unasked = make_pipeline(FunctionTransformer(), clone(est))
        with pytest.raises(Exception, match="sample_weight"):
            unasked.fit(X, y, sample_weight=w)


def test_weighted_memmap_fit_is_the_weighted_in_memory_fit(tmp_path):
    X, y, w = _data(n=60)
    np.save(tmp_path / "X.npy", X)
    lazy_X = np.load(tmp_path / "X.npy", mmap_mode="r")
    est = GibbsMLPRegressor(**CHEAP, sampler="sgld", rho=0.5)
    ref, lazy = _quiet_fit(est, X, y, sample_weight=w), _quiet_fit(est, lazy_X, y, sample_weight=w)
    # the weighted column moments of a memmap are summed about its unweighted means: equal to rounding
    np.testing.assert_allclose(lazy.x_mean_, ref.x_mean_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(lazy.x_scale_, ref.x_scale_, rtol=1e-12)
    np.testing.assert_allclose(lazy.predict(X), ref.predict(X), rtol=1e-4, atol=1e-4)
    assert lazy.sample_weight_sum_ == ref.sample_weight_sum_ == w.sum()


def test_the_weighted_potential_reads_weights_by_batch():
    """A batch's loss sum is the sum of its rows' weighted losses, on every path of the potential."""
    rng = np.random.default_rng(6)
    X = torch.as_tensor(rng.normal(size=(10, 2)), dtype=torch.float32)
    y = torch.as_tensor(rng.normal(size=10), dtype=torch.float32)
    w = rng.uniform(0.5, 2.0, size=10)
    spec = MLPSpec(2, (3,), "relu")
    pot = MLPPotential(spec, X, y, sample_weight=w)
    theta = torch.randn(2, spec.n_params, generator=torch.Generator().manual_seed(0))
    losses = pot.per_example_loss(theta, Batch())  # unweighted l_i
    wt = torch.as_tensor(w, dtype=torch.float32)
    idx = torch.tensor([[0, 3, 3, 7], [1, 2, 9, 9]])
    expected = (losses.gather(1, idx) * wt[idx]).sum(1)
    value, grad = pot.loss_sum_and_grad(theta, Batch(idx, None, None))
    torch.testing.assert_close(value, expected, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(pot.loss_sum(theta, Batch(idx, None, None)), expected, rtol=1e-5, atol=1e-5)
    # the hand-written gradient against autograd on the weighted sum, one chain and several
    for th in (theta[:1], theta):
        with torch.enable_grad():
            t = th.detach().requires_grad_(True)
            total = (pot.per_example_loss(t, Batch()) * wt).sum()
            (auto,) = torch.autograd.grad(total, t)
        torch.testing.assert_close(pot.loss_sum_and_grad(th, Batch())[1], auto, rtol=1e-4, atol=1e-5)
    assert pot.total_weight == pytest.approx(w.sum())
    torch.testing.assert_close(pot.mean_loss(theta), (losses * wt).sum(1) / float(w.sum()), rtol=1e-5, atol=1e-6)


def test_the_criterion_search_passes_the_weights_and_ranks_their_criteria():
    from skgibbs.model_selection import CriterionGridSearch

    X, y, w = _data(n=48)
    est = GibbsMLPRegressor(**CHEAP)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = CriterionGridSearch(est, {"temperature": [0.5, 1.0]}).fit(X, y, sample_weight=w)
    for i, params in enumerate(search.cv_results_["params"]):
        fit = _quiet_fit(clone(est).set_params(**params), X, y, sample_weight=w)
        assert search.cv_results_["criterion"][i] == fit.generalization_loss_
        assert search.cv_results_["penalty"][i] == pytest.approx(fit.waic_tempering_ * fit.lfv_ / w.sum())


@pytest.mark.parametrize("settings", KERNELS.values(), ids=KERNELS.keys())
def test_every_kernel_fits_with_weights(settings):
    """A short weighted fit of every kernel runs to its summaries, which count the weights."""
    X, y, w = _data()
    budget = {"hidden_layer_sizes": (6,), "pretrain_iter": 20, "random_state": 0}
    if settings["sampler"] == "smc":
        settings = {"sampler": SMC(n_particles=16, n_leapfrog=2)}
    elif settings["sampler"] != "vi":
        budget.update(n_samples=5, burn_in=5)
    est = _quiet_fit(GibbsMLPRegressor(**budget, **settings), X, y, sample_weight=w)
    assert est.sample_weight_sum_ == w.sum() and est.n_train_ == len(y)
    assert np.isfinite(est.generalization_loss_) and np.isfinite(est.predict(X)).all()


def test_the_sparse_regressor_fits_with_weights_by_both_kernels():
    X, y, w = _data()
    for sampler in ("rjhmc", SMC(n_particles=16, n_leapfrog=2)):
        est = SparseGibbsMLPRegressor(hidden_layer_sizes=(4,), sampler=sampler, pretrain_iter=20, random_state=0)
        if sampler == "rjhmc":
            est.set_params(n_samples=5, burn_in=5)
        est = _quiet_fit(est, X, y, sample_weight=w)
        assert est.sample_weight_sum_ == w.sum() and np.isfinite(est.generalization_loss_)


def test_the_meta_estimators_pass_the_weights():
    """TransformedTargetRegressor, StackingRegressor and CalibratedClassifierCV hand the weights to the fit."""
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.ensemble import StackingRegressor
    from sklearn.linear_model import Ridge

    X, y, w = _data(n=48)
    est = GibbsMLPRegressor(**CHEAP)
    direct = _quiet_fit(est, X, y, sample_weight=w)
    wrapped = _quiet_fit(TransformedTargetRegressor(regressor=est), X, y, sample_weight=w)
    # the identity transform: the same data, the same weights, the same draws
    np.testing.assert_array_equal(wrapped.regressor_.samples_, direct.samples_)
    stack = _quiet_fit(StackingRegressor([("gibbs", est)], final_estimator=Ridge(), cv=2), X, y, sample_weight=w)
    np.testing.assert_array_equal(stack.named_estimators_["gibbs"].samples_, direct.samples_)
    yc = (y > np.median(y)).astype(int)
    clf = GibbsMLPClassifier(**CHEAP)
    calibrated = _quiet_fit(CalibratedClassifierCV(clf, cv=2), X, yc, sample_weight=w)
    fold = calibrated.calibrated_classifiers_[0].estimator
    assert fold.sample_weight_sum_ < w.sum()  # a fold's weights, not the rows counted once each
    assert fold.sample_weight_sum_ != fold.n_train_
