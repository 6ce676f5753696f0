"""Summaries and predictions read the rows in chunks, with the results of the whole data at once.

The estimators never hold an ``(S, n)`` array of every draw at every row
(:mod:`skgibbs._chunks`). Here the chunks are one block of 16 rows, and every
fitted summary and prediction is compared with its formula evaluated on the
full ``(S, n)`` arrays, as the estimators computed them before chunking. The
network is evaluated on the same fixed blocks of rows in both, so the
outputs are the same bits and the results agree to float rounding.
"""

import copy
import warnings

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn.datasets import make_moons

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor, SamplerWarning, SparseGibbsMLPRegressor, _chunks
from skgibbs._levels import mixture_quantiles
from skgibbs._mixing import function_space_mixing
from skgibbs.credible import credible_radius, credible_sets, parameter_radius
from skgibbs.criteria import gaussian_log_likelihood, langevin_waic, waic
from skgibbs.metrics import log_predictive_density_scorer
from skgibbs.samplers import CSMALA, HMC, MALA, SGLD, SMALA, BatchSurrogate, MeanFieldVI

BLOCK = 16
RTOL = 1e-10  # float64 sums in another order; the per-row terms are the same bits
CHEAP = {"hidden_layer_sizes": (8,), "n_samples": 20, "burn_in": 50, "thin": 1, "pretrain_iter": 50, "n_chains": 2}


@pytest.fixture
def tiny_chunks(monkeypatch):
    """Blocks of 16 rows, and a chunk budget so small that every chunk is one block."""
    monkeypatch.setattr(_chunks, "ROW_BLOCK", BLOCK)
    monkeypatch.setattr(_chunks, "CHUNK_BYTES", 1)


def _quiet_fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        return est.fit(X, y)


def _regression_data(n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.2 * rng.normal(size=n)


def _spied(est):
    """A copy of ``est`` that records the rows of every evaluation of the network."""
    est = copy.deepcopy(est)
    est.rows_seen = []
    network_outputs = est._network_outputs

    def spy(X):
        est.rows_seen.append(X.shape[0])
        return network_outputs(X)

    est._network_outputs = spy
    return est


def _resummarised(est, X, y):
    """``est`` summarised again, chunk by chunk; checks that the chunks were small."""
    chunked = _spied(est)
    chunked._summarise(X, y)
    assert len(chunked.rows_seen) > len(y) // BLOCK and max(chunked.rows_seen) <= BLOCK
    return chunked


def _loss_statistics(est, losses):
    """The loss statistics of the ``(S, n)`` losses as the samplers computed them from the matrix."""
    info = {k[:-1]: v for k, v in vars(est).items() if k.endswith("_") and not k.startswith("_")}
    sampler, n = est.sampler_, losses.shape[1]
    c, d = sampler.batch_terms(est.lambda_, n, est.rho_, info) if isinstance(sampler, BatchSurrogate) else (est.lambda_ / n, 0.0)
    rho = est.rho_
    noise = np.sqrt(2 * rho * (1 - rho) * ((c * losses + d) ** 2).sum(1))
    out = {
        "surrogate_scale_": c * losses.mean(),
        "batch_noise_": 0.0 if est.sampler_.name == "sgld" else noise.mean(),
        "lp": est._log_prior_of_draws() - est.lambda_ * losses.mean(1),
    }
    if est.sampler_.name == "vi":
        out["expected_log_likelihood_"] = -est.lambda_ * losses.mean()
    return out


def _regressor_reference(est, X, y):
    """The regressor's summaries from the full ``(S, n)`` arrays."""
    G = est._network_outputs(X)
    out = _loss_statistics(est, ((y - est.y_mean_) / est.y_scale_ - G) ** 2)
    F = G * est.y_scale_ + est.y_mean_
    s2 = float(((y[None, :] - F) ** 2).mean())
    out["noise_variance_"] = s2
    out["rhat_"], out["ess_"] = function_space_mixing(F, est.samples_.shape[0])
    if not est.sampler_.mixing_diagnostics:  # independent draws (VI): not judged
        out["rhat_"] = out["ess_"] = np.nan
    out["credible_radius_"] = credible_radius(F, est.confidence_level)
    out["credible_radius_params_"] = parameter_radius(est.samples_.reshape(-1, est.spec_.n_params), 0.95)
    beta = 2.0 * s2 / est.y_scale_**2 / est.temperature_
    tempered = waic(gaussian_log_likelihood(y, F, s2), beta=beta)
    crit = langevin_waic(y, F.mean(0), tempered.p_pointwise, s2)
    out.update(
        waic_tempering_=beta,
        generalization_loss_=-tempered.elpd_waic / len(y),
        lfv_=crit.functional_variance,
        train_loss_=crit.train_loss,
        langevin_waic_=crit.waic,
    )
    return out


def _classifier_reference(clf, X, y):
    """The classifier's summaries from the full ``(S, n, n_classes)`` arrays."""
    codes = np.searchsorted(clf.classes_, y)
    log_p = clf._log_proba_draws(X)
    log_lik = log_p[:, np.arange(len(codes)), codes]
    out = _loss_statistics(clf, -log_lik)
    P = np.exp(log_p)
    watched = P[..., 1] if P.shape[-1] == 2 else P.reshape(P.shape[0], -1)
    out["rhat_"], out["ess_"] = function_space_mixing(watched, clf.samples_.shape[0])
    if not clf.sampler_.mixing_diagnostics:
        out["rhat_"] = out["ess_"] = np.nan
    tempered = waic(log_lik, beta=1.0 / clf.temperature_)
    out.update(
        waic_tempering_=1.0 / clf.temperature_,
        generalization_loss_=-tempered.elpd_waic / len(y),
        train_loss_=float(-np.mean(np.log(P.mean(0)[np.arange(len(codes)), codes]))),
        lfv_=tempered.p_waic,
    )
    return out


def _assert_summaries(chunked, expected):
    for name, value in expected.items():
        got = chunked.sample_stats_["lp"].ravel() if name == "lp" else getattr(chunked, name)
        np.testing.assert_allclose(got, value, rtol=RTOL, atol=0, equal_nan=True, err_msg=name)


# the kernels' loss statistics: batch noise with an offset d (csMALA), without (sMALA), none (SGLD, VI)
REGRESSORS = {
    "csmala": lambda: GibbsMLPRegressor(**CHEAP, sampler=CSMALA(), rho=0.5, temperature=20.0, random_state=0),
    "hmc": lambda: GibbsMLPRegressor(**CHEAP, sampler="hmc", temperature="plug-in", random_state=1),
    "vi": lambda: GibbsMLPRegressor(**{**CHEAP, "burn_in": "auto"}, sampler=MeanFieldVI(max_iter=100), random_state=0),
    # the references below weigh every draw alike: the sparse regressor's stacked chains (its default) apart
    "sparse": lambda: SparseGibbsMLPRegressor(**{**CHEAP, "burn_in": 100}, chain_weights="equal", random_state=0),
}


@pytest.fixture(scope="module", params=list(REGRESSORS))
def regressor(request):
    X, y = _regression_data()
    return _quiet_fit(REGRESSORS[request.param](), X, y), X, y


@pytest.fixture(scope="module", params=["binary", "three classes"])
def classifier(request):
    if request.param == "binary":
        X, y = make_moons(150, noise=0.3, random_state=0)
        est = GibbsMLPClassifier(**CHEAP, random_state=0)
    else:  # with batches, so that the batch noise enters
        X, y = _regression_data()
        y = np.digitize(X[:, 0] + X[:, 1], [-0.5, 0.5])
        est = GibbsMLPClassifier(**CHEAP, sampler=CSMALA(), rho=0.5, temperature=5.0, random_state=0)
    return _quiet_fit(est, X, y), X, y


def test_regressor_summaries_in_chunks_equal_those_of_the_whole_data(regressor, tiny_chunks):
    est, X, y = regressor
    chunked = _resummarised(est, X, y)
    expected = _regressor_reference(est, X, y)
    if est.sampler_.name == "csmala":  # the offset d = zeta log rho enters the batch noise
        assert est.correction_ > 0 and expected["batch_noise_"] > 0
    _assert_summaries(chunked, expected)


@pytest.mark.parametrize("regressor", ["sparse"], indirect=True)
def test_sparse_regressor_keeps_its_own_attributes(regressor, tiny_chunks, function_draws):
    est, X, y = regressor
    assert isinstance(est, SparseGibbsMLPRegressor)
    chunked = _resummarised(est, X, y)
    for name in ("active_fraction_", "inclusion_probability_", "feature_inclusion_", "input_relevance_"):
        np.testing.assert_array_equal(getattr(chunked, name), getattr(est, name))
    F = function_draws(est, X)
    theta = est.samples_.reshape(-1, est.spec_.n_params)
    f_true = np.sin(2 * X[:, 0])
    expected = credible_sets(F, theta, f_true, 0.9, np.log(est.n_train_))
    got = chunked.credible_sets(X, f_true, confidence_level=0.9)
    np.testing.assert_allclose(got, expected, rtol=RTOL)


def test_sparse_regressor_with_stacked_chains_weighs_its_inclusions_alike_in_chunks(tiny_chunks):
    X, y = _regression_data()
    est = _quiet_fit(SparseGibbsMLPRegressor(**{**CHEAP, "burn_in": 100}, random_state=0), X, y)
    assert est.chain_weights == "stacking"
    chunked = _resummarised(est, X, y)
    np.testing.assert_array_equal(chunked.active_fraction_, est.active_fraction_)
    # the inclusions weigh the draws by the chains' stacking weights, an optimum that the leave-one-out
    # densities summed in another order move in its last digits (L-BFGS-B to a gradient of 1e-12)
    np.testing.assert_allclose(chunked.chain_weights_, est.chain_weights_, rtol=0, atol=1e-7)
    S = est.samples_.shape[1]
    w = np.repeat(est.chain_weights_ / S, S)
    active = (est.samples_ != 0).reshape(len(w), -1)
    np.testing.assert_allclose(est.inclusion_probability_, w @ active, rtol=1e-12)
    for name in ("inclusion_probability_", "feature_inclusion_", "input_relevance_"):
        np.testing.assert_allclose(getattr(chunked, name), getattr(est, name), rtol=0, atol=1e-7)


def test_classifier_summaries_in_chunks_equal_those_of_the_whole_data(classifier, tiny_chunks):
    clf, X, y = classifier
    assert (clf.batch_noise_ > 0) == (clf.rho_ < 1)
    chunked = _resummarised(clf, X, y)
    _assert_summaries(chunked, _classifier_reference(clf, X, y))


def test_a_single_chunk_is_evaluated_once(regressor):
    # with the default budget the 150 rows are one chunk: its outputs serve both passes
    est, X, y = regressor
    once = _spied(est)
    once._summarise(X, y)
    assert once.rows_seen == [len(y)]
    _assert_summaries(once, _regressor_reference(est, X, y))


def test_the_second_pass_evaluates_only_the_rows_it_did_not_keep(regressor, monkeypatch):
    # chunks of 4 rows; the first pass keeps half the budget of float32 outputs: 16 chunks of 4 rows
    est, X, y = regressor
    S = est.samples_.shape[0] * est.samples_.shape[1]
    monkeypatch.setattr(_chunks, "ROW_BLOCK", 4)
    monkeypatch.setattr(_chunks, "CHUNK_BYTES", 8 * S * 4 * est._summary_width)
    chunked = _spied(est)
    chunked._summarise(X, y)
    n_chunks = -(-len(y) // 4)
    assert chunked.rows_seen == [4] * (n_chunks - 1) + [2] + [4] * (n_chunks - 17) + [2]
    _assert_summaries(chunked, _regressor_reference(est, X, y))


def test_regressor_predictions_in_chunks(regressor, tiny_chunks, function_draws):
    est, _, _ = regressor
    X, y = _regression_data(70, seed=1)
    F = function_draws(est, X)  # (S, n), the same blocks of rows
    s2 = est.noise_variance_
    spied = _spied(est)
    mean, std = spied.predict(X, return_std=True)
    assert max(spied.rows_seen) <= BLOCK and len(spied.rows_seen) == -(-len(y) // BLOCK)
    np.testing.assert_allclose(mean, F.mean(0), rtol=RTOL)
    np.testing.assert_allclose(std, np.sqrt(F.var(0) + s2), rtol=RTOL)
    np.testing.assert_array_equal(est.predict_samples(X), F.T)
    levels = np.array([0.5, 0.9])
    probs = np.concatenate([(1 - levels) / 2, (1 + levels) / 2])
    quantiles = {"credible": np.quantile(F, probs, axis=0), "predictive": mixture_quantiles(F, np.sqrt(s2), probs)}
    for kind, q in quantiles.items():
        y_pred, y_pis = est.predict_interval(X, levels, kind=kind)
        np.testing.assert_allclose(y_pred, F.mean(0), rtol=RTOL)
        np.testing.assert_allclose(y_pis, np.stack([q[:2].T, q[2:].T], axis=1), rtol=RTOL)
    rng = np.random.RandomState(3)
    pick = rng.randint(F.shape[0], size=4)
    expected = F[pick].T + rng.normal(scale=np.sqrt(s2), size=(len(y), 4))
    np.testing.assert_allclose(est.sample_y(X, 4, random_state=3), expected, rtol=RTOL)
    assert est.credible_radius(X, 0.9) == pytest.approx(credible_radius(F, 0.9), rel=RTOL)
    np.testing.assert_allclose(est._log_likelihood(X, y), gaussian_log_likelihood(y, F, s2), rtol=RTOL)
    lpd = np.mean(logsumexp(gaussian_log_likelihood(y, F, s2), axis=0) - np.log(F.shape[0]))
    assert log_predictive_density_scorer(est, X, y) == pytest.approx(lpd, rel=RTOL)


def test_classifier_predictions_in_chunks(classifier, tiny_chunks):
    clf, X, y = classifier
    X, y = X[:70] + 0.1, y[:70]
    log_p = clf._log_proba_draws(X)  # (S, n, C)
    P = np.exp(log_p)
    spied = _spied(clf)
    proba = spied.predict_proba(X)
    assert max(spied.rows_seen) <= BLOCK and len(spied.rows_seen) == -(-len(X) // BLOCK)
    np.testing.assert_allclose(proba, P.mean(0), rtol=RTOL)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[np.argmax(P.mean(0), axis=1)])
    np.testing.assert_array_equal(clf.predict_samples(X), P.transpose(1, 0, 2))
    codes = np.searchsorted(clf.classes_, y)
    np.testing.assert_allclose(clf._log_likelihood(X, codes), log_p[:, np.arange(70), codes], rtol=RTOL)
    levels = np.array([0.5, 0.9])
    q = np.quantile(P, np.concatenate([(1 - levels) / 2, (1 + levels) / 2]), axis=0)
    _, bands = clf.predict_interval(X, levels)
    np.testing.assert_allclose(bands, np.stack([q[:2], q[2:]], axis=0).transpose(2, 0, 3, 1), rtol=RTOL)


def test_chunks_hold_whole_blocks_within_the_budget(monkeypatch):
    monkeypatch.setattr(_chunks, "ROW_BLOCK", 8)
    monkeypatch.setattr(_chunks, "CHUNK_BYTES", 8 * 100 * 3 * 20)  # 20 rows of three (100, rows) arrays
    chunks = _chunks.row_chunks(50, n_draws=100, width=3)
    assert [(c.start, c.stop) for c in chunks] == [(0, 16), (16, 32), (32, 48), (48, 50)]
    assert _chunks.row_chunks(5, n_draws=10**6, width=3) == [slice(0, 5)]  # one block at the least


@pytest.mark.parametrize("sampler", [MALA(), SMALA(), CSMALA(), SGLD(), HMC(), MeanFieldVI()], ids=repr)
@pytest.mark.parametrize("rho", [0.2, 1.0])
def test_loss_statistics_from_per_draw_sums_equal_those_of_the_loss_matrix(sampler, rho):
    # squared-error losses of S = 30 draws at n = 500 examples (sigma^2 chi^2_1), at csMALA's centring
    rng = np.random.default_rng(0)
    losses = 0.3 * rng.normal(size=(30, 500)) ** 2
    lam, info = 500 / 0.4, {"correction": 0.8}
    # the full data's terms (lambda / n, 0) for a kernel that reads no Bernoulli batches
    c, d = sampler.batch_terms(lam, 500, rho, info) if isinstance(sampler, BatchSurrogate) else (lam / 500, 0.0)
    stats = sampler.loss_statistics(losses.sum(1), (losses**2).sum(1), 500, lam, rho, info)
    noise = np.sqrt(2 * rho * (1 - rho) * ((c * losses + d) ** 2).sum(1))
    assert stats["surrogate_scale"] == pytest.approx(c * losses.mean(), rel=1e-12)
    if sampler.name == "sgld":  # no Metropolis-Hastings ratio to disturb
        assert stats["batch_noise"] == 0.0
    else:
        assert stats["batch_noise"] == pytest.approx(noise.mean(), rel=1e-12, abs=0)
        assert (stats["batch_noise"] > 0) == (rho < 1)
    if sampler.name == "vi":
        assert stats["expected_log_likelihood"] == pytest.approx(-lam * losses.mean(), rel=1e-12)
