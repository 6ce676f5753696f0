"""NeuralControlVariate: variance reduction on Gaussian chains, the scikit-learn shell and its errors."""

import pickle
import warnings

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, KFold

from skgibbs import ControlVariateWarning, NeuralControlVariate
from skgibbs.control_variates import evaluate_score, stein_operator
from skgibbs.diagnostics import spectral_variance
from skgibbs import _progress

CHEAP = {"hidden_layer_sizes": (16,), "max_iter": 300, "random_state": 0}


def standard_score(X):
    return -X


def _square(X):
    return X[:, 0] ** 2


@pytest.fixture(scope="module")
def fitted(gaussian_ar1):
    X = gaussian_ar1.chain(2000, 0)
    return NeuralControlVariate(grad_log_prob=gaussian_ar1.score, **CHEAP).fit(X, _square(X))


# ----------------------------------------------------------- variance reduction
def test_large_reduction_and_unbiased_on_a_gaussian(gaussian_ar1, fitted):
    # f = x1^2 has a quadratic Poisson solution; on an independent chain the control variate
    # removes most of the asymptotic variance and the estimate is within its CLT error
    t = gaussian_ar1
    Xte = t.chain(20_000, 1)
    y = _square(Xte)
    truth = t.cov[0, 0] + t.mean[0] ** 2
    assert fitted.score(Xte, y) > 100
    est, bounds = fitted.predict_interval(Xte, y, confidence_level=0.999)
    assert bounds[0, 0] < truth < bounds[1, 0]
    # the interval is honest: its half-width is the CLT one, far below plain MCMC's
    plain = 3.29 * np.sqrt(t.asymptotic_variance_square(0) / len(y))
    assert bounds[1, 0] - est < plain / 10


@pytest.mark.slow
@pytest.mark.parametrize("activation", ["recu", "tanh"])
def test_linear_and_quadratic_targets_over_repeated_chains(gaussian_ar1, activation):
    # 20 independent (training, test) pairs: the z-scores of the estimates are N(0, 1)-sized
    t = gaussian_ar1
    z = []
    for rep in range(20):
        Xtr, Xte = t.chain(1000, 100 + 2 * rep), t.chain(4000, 101 + 2 * rep)
        f = (lambda X: X[:, 1]) if rep % 2 else _square  # noqa: E731
        truth = t.mean[1] if rep % 2 else t.cov[0, 0] + t.mean[0] ** 2
        cv = NeuralControlVariate(grad_log_prob=t.score, activation=activation, **{**CHEAP, "max_iter": 200})
        cv.fit(Xtr, f(Xtr))
        assert cv.score(Xte, f(Xte)) > 20
        est, bounds = cv.predict_interval(Xte, f(Xte), confidence_level=0.6827)
        z.append((est - truth) / (bounds[1, 0] - est))
    z = np.asarray(z)
    assert np.abs(z).max() < 4.5 and np.mean(z**2) < 3.0


def test_linear_phi_solves_a_linear_target(gaussian_ar1):
    # f = x2: the Poisson solution is linear, phi = -(Sigma e_2) . x, in the class hidden_layer_sizes=()
    X = gaussian_ar1.chain(1000, 12)
    cv = NeuralControlVariate(grad_log_prob=gaussian_ar1.score, hidden_layer_sizes=(), learning_rate=0.05,
                              max_iter=1000, random_state=0).fit(X, X[:, 1])
    np.testing.assert_allclose(cv.coefs_[0][:, 0], -gaussian_ar1.cov[:, 1], rtol=1e-3)
    assert cv.estimate(X, X[:, 1]) == pytest.approx(gaussian_ar1.mean[1], abs=1e-3)


def test_relu_is_warned_and_weaker(gaussian_ar1):
    X = gaussian_ar1.chain(1000, 2)
    with pytest.warns(ControlVariateWarning, match="not twice continuously differentiable"):
        relu = NeuralControlVariate(grad_log_prob=gaussian_ar1.score, activation="relu", **CHEAP)
        relu.fit(X, _square(X))
    recu = NeuralControlVariate(grad_log_prob=gaussian_ar1.score, **CHEAP).fit(X, _square(X))
    Xte = gaussian_ar1.chain(4000, 3)
    assert relu.score(Xte, _square(Xte)) < recu.score(Xte, _square(Xte)) / 10


# ----------------------------------------------------------------- fitted state
def test_training_starts_at_no_control_variate_and_descends(gaussian_ar1, fitted):
    X = gaussian_ar1.chain(2000, 0)
    assert fitted.loss_curve_[0] == pytest.approx(spectral_variance(_square(X)), rel=1e-10)
    assert fitted.loss_curve_[-1] < fitted.loss_curve_[0] / 100
    assert fitted.n_iter_ == 300 and fitted.validation_loss_curve_ is None
    assert fitted.truncation_ == 44


def test_weights_act_on_the_original_scale(gaussian_ar1, fitted):
    # training standardizes x and f; the stored phi is the one on the raw scale
    X = gaussian_ar1.chain(50, 7) * 3.0 + 5.0
    score = gaussian_ar1.score(X)
    g = stein_operator(
        torch.tensor(X),
        torch.tensor(score),
        [torch.tensor(c) for c in fitted.coefs_],
        [torch.tensor(b) for b in fitted.intercepts_],
    )
    np.testing.assert_allclose(fitted.predict(X), fitted.constant_ + g.numpy(), rtol=1e-12)
    assert [c.shape for c in fitted.coefs_] == [(2, 16), (16, 1)]
    assert fitted.estimate(X, _square(X)) == pytest.approx(np.mean(_square(X) - g.numpy()))


def test_constant_is_the_training_estimate(gaussian_ar1, fitted):
    X = gaussian_ar1.chain(2000, 0)
    assert fitted.constant_ == pytest.approx(fitted.estimate(X, _square(X)), rel=1e-12)


def test_early_stopping_keeps_the_best_tail_weights(gaussian_ar1):
    X = gaussian_ar1.chain(1500, 4)
    y = np.sin(2 * X[:, 0]) * X[:, 1]
    cv = NeuralControlVariate(
        grad_log_prob=gaussian_ar1.score,
        early_stopping=True,
        validation_fraction=0.2,
        n_iter_no_change=10,
        learning_rate=0.05,
        hidden_layer_sizes=(32,),
        max_iter=2000,
        random_state=0,
    ).fit(X, y)
    assert cv.n_iter_ < 2000
    assert len(cv.validation_loss_curve_) == len(cv.loss_curve_) == cv.n_iter_
    tail = slice(1200, None)
    held_out = spectral_variance(y[tail] - (cv.predict(X[tail]) - cv.constant_))
    assert held_out == pytest.approx(cv.validation_loss_curve_.min(), rel=1e-8)
    assert cv.truncation_ == 34  # floor(sqrt(1200)), the training head


def test_contiguous_batches(gaussian_ar1):
    X = gaussian_ar1.chain(1000, 5)
    cv = NeuralControlVariate(grad_log_prob=gaussian_ar1.score, batch_size=250, **CHEAP).fit(X, _square(X))
    assert cv.truncation_ == 15
    assert cv.score(X, _square(X)) > 20


def test_log_prob_gives_the_same_fit(gaussian_ar1):
    t = gaussian_ar1
    X = t.chain(300, 6)
    P = torch.tensor(t.precision)
    mu = torch.tensor(t.mean)

    def log_prob(x):
        return -0.5 * (((x - mu) @ P) * (x - mu)).sum(1)

    params = {**CHEAP, "max_iter": 30}
    a = NeuralControlVariate(grad_log_prob=t.score, **params).fit(X, _square(X))
    b = NeuralControlVariate(log_prob=log_prob, **params).fit(X, _square(X))
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-9)


def test_same_random_state_same_fit_and_pickles(gaussian_ar1):
    X = gaussian_ar1.chain(300, 6)
    params = {"grad_log_prob": standard_score, **CHEAP, "max_iter": 30}
    a = NeuralControlVariate(**params).fit(X, _square(X))
    b = clone(a).fit(X, _square(X))
    for ca, cb in zip(a.coefs_, b.coefs_):
        np.testing.assert_array_equal(ca, cb)
    c = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(a.predict(X), c.predict(X))
    assert not any(isinstance(v, torch.Tensor) for v in vars(a).values())
    assert all(isinstance(c, np.ndarray) for c in a.coefs_ + a.intercepts_)
    other = NeuralControlVariate(**{**params, "random_state": 1}).fit(X, _square(X))
    assert not np.array_equal(a.coefs_[0], other.coefs_[0])


def test_verbose_shows_a_bar_with_the_objective(gaussian_ar1, capsys, monkeypatch):
    monkeypatch.setattr(_progress, "_tqdm", None)  # the plain line: its text does not depend on tqdm
    X = gaussian_ar1.chain(200, 13)
    params = dict(grad_log_prob=standard_score, early_stopping=True, **{**CHEAP, "max_iter": 20})
    NeuralControlVariate(verbose=1, **params).fit(X, _square(X))
    err = capsys.readouterr().err
    assert "[skgibbs] ESVM: 1/20" in err and "V_n" in err and "held_out_V_n" in err
    assert err.endswith("\n") and not _progress._BARS  # closed, also after an early stop
    NeuralControlVariate(verbose=0, **params).fit(X, _square(X))
    assert capsys.readouterr().err == ""


def test_predict_interval_levels(fitted, gaussian_ar1):
    X = gaussian_ar1.chain(500, 8)
    est, bounds = fitted.predict_interval(X, _square(X), confidence_level=[0.5, 0.9, 0.99])
    assert bounds.shape == (2, 3)
    assert est == pytest.approx(fitted.estimate(X, _square(X)))
    np.testing.assert_allclose(bounds.mean(0), est)
    assert np.all(np.diff(bounds[1] - bounds[0]) > 0)
    for bad in (0.0, 1.0, [0.5, 1.2]):
        with pytest.raises(ValueError, match="confidence_level must lie in"):
            fitted.predict_interval(X, _square(X), confidence_level=bad)


def test_grid_search_on_contiguous_folds(gaussian_ar1):
    X = gaussian_ar1.chain(900, 9)
    search = GridSearchCV(
        NeuralControlVariate(grad_log_prob=standard_score, max_iter=60, random_state=0),
        {"hidden_layer_sizes": [(4,), (16,)], "truncation": [5, 20]},
        cv=KFold(3, shuffle=False),
    ).fit(X, _square(X))
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    assert search.best_score_ == search.cv_results_["mean_test_score"].max()


# ----------------------------------------------------------------------- errors
def test_errors_name_the_parameter(gaussian_ar1, fitted):
    X = gaussian_ar1.chain(100, 10)
    y = _square(X)
    with pytest.raises(ValueError, match="exactly one of grad_log_prob"):
        NeuralControlVariate(**CHEAP).fit(X, y)
    with pytest.raises(ValueError, match=r"grad_log_prob must give gradients of shape \(100, 2\)"):
        NeuralControlVariate(grad_log_prob=lambda X: X[:, :1], **CHEAP).fit(X, y)
    with pytest.raises(ValueError, match="hidden_layer_sizes.* must be a sequence of positive ints"):
        NeuralControlVariate(grad_log_prob=standard_score, hidden_layer_sizes=(4, 0)).fit(X, y)
    with pytest.raises(ValueError, match="activation"):
        NeuralControlVariate(grad_log_prob=standard_score, activation="sigmoid").fit(X, y)
    with pytest.raises(ValueError, match="early_stopping holds out"):
        NeuralControlVariate(grad_log_prob=standard_score, early_stopping=True).fit(X[:4], y[:4])
    with pytest.raises(ValueError, match="n_samples >= 2"):
        NeuralControlVariate(grad_log_prob=standard_score).fit(X[:1], y[:1])
    with pytest.raises(ValueError, match="NaN"):
        NeuralControlVariate(grad_log_prob=standard_score).fit(np.where(X > 2, np.nan, X), y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        NeuralControlVariate(grad_log_prob=standard_score).fit(X, y[:-1])
    with pytest.raises(ValueError, match="X has 3 features, but NeuralControlVariate is expecting 2"):
        fitted.predict(np.ones((5, 3)))
    with pytest.raises(NotFittedError):
        NeuralControlVariate(grad_log_prob=standard_score).estimate(X, y)


def test_failed_refit_keeps_the_previous_fit(gaussian_ar1):
    X = gaussian_ar1.chain(300, 11)
    cv = NeuralControlVariate(grad_log_prob=standard_score, **{**CHEAP, "max_iter": 20}).fit(X, _square(X))
    before = cv.predict(X)
    cv.set_params(grad_log_prob=lambda Z: np.full_like(Z, np.inf))
    with pytest.raises(ValueError, match="grad_log_prob gave NaN or infinite gradients"):
        cv.fit(X, _square(X))
    cv.set_params(grad_log_prob=standard_score)
    np.testing.assert_array_equal(cv.predict(X), before)
    with pytest.raises(FloatingPointError, match="lower learning_rate"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        cv.set_params(learning_rate=1e30, max_iter=50).fit(X * 1e100, _square(X))
    np.testing.assert_array_equal(cv.set_params(learning_rate=1e-2).predict(X), before)


def test_score_callable_output_is_checked_at_predict(fitted):
    fitted = clone(fitted).set_params(grad_log_prob=standard_score, max_iter=5)
    X = np.random.default_rng(0).normal(size=(50, 2))
    fitted.fit(X, _square(X))
    fitted.set_params(grad_log_prob=lambda Z: np.where(Z > 1, np.nan, Z))
    with pytest.raises(ValueError, match="grad_log_prob gave NaN"):
        fitted.predict(X)
    assert evaluate_score(X, standard_score).shape == X.shape


def test_exported_lazily_from_the_package():
    import skgibbs
    import skgibbs.control_variates as cv_module

    assert skgibbs.NeuralControlVariate is cv_module.NeuralControlVariate
    assert skgibbs.PolynomialControlVariate is cv_module.PolynomialControlVariate
    assert {"NeuralControlVariate", "PolynomialControlVariate", "ControlVariateWarning"} <= set(skgibbs.__all__)
