"""WAIC and the functional variance from posterior draws (paper 004 (5), (13)).

Pure functions; ``log_lik`` arrays have shape ``(S, n)``: S draws, n
examples.
"""

from typing import NamedTuple

import numpy as np
from scipy.special import gammaln, logsumexp

__all__ = [
    "gaussian_log_likelihood",
    "student_log_likelihood",
    "functional_variance",
    "waic",
    "WAICResult",
    "GibbsCriterion",
    "langevin_waic",
]


def gaussian_log_likelihood(y, draws, noise_variance):
    """``log N(y_i; f_k(x_i), sigma^2)`` for every draw and example.

    Parameters
    ----------
    y : array-like of shape (n,)
    draws : array-like of shape (S, n)
    noise_variance : float or array-like of shape (S, 1)
        One variance, or one per draw (a learned noise).

    Returns
    -------
    ndarray of shape (S, n)
    """
    r = np.asarray(y, dtype=float)[None, :] - np.asarray(draws, dtype=float)
    return -0.5 * r**2 / noise_variance - 0.5 * np.log(2 * np.pi * noise_variance)


def student_log_likelihood(y, draws, noise_variance, df):
    """``log t_df(y_i; f_k(x_i), s^2)`` for every draw and example, the t given by its variance.

    The Student-t of ``df > 2`` degrees of freedom, location ``f_k(x_i)`` and
    variance ``noise_variance`` (its squared scale ``s^2 = noise_variance
    (df - 2) / df``), as :func:`gaussian_log_likelihood` is the normal of
    that variance.

    Parameters
    ----------
    y : array-like of shape (n,)
    draws : array-like of shape (S, n)
    noise_variance : float or array-like of shape (S, 1) or (S, n)
        The variance of the noise: one, one per draw, or one per draw and
        example (a noise that varies with the inputs).
    df : float
        Degrees of freedom, above 2.

    Returns
    -------
    ndarray of shape (S, n)

    Examples
    --------
    >>> from scipy import stats
    >>> value = student_log_likelihood([1.0], [[0.0]], 5.0 / 3.0, 5.0)[0, 0]
    >>> bool(np.isclose(value, stats.t.logpdf(1.0, 5.0)))
    True
    """
    if not df > 2:
        raise ValueError(f"df must be above 2 (a t with a variance), got {df!r}.")
    scale2 = np.asarray(noise_variance, dtype=float) * ((df - 2.0) / df)
    r = np.asarray(y, dtype=float)[None, :] - np.asarray(draws, dtype=float)
    const = gammaln(0.5 * (df + 1.0)) - gammaln(0.5 * df) - 0.5 * np.log(df * np.pi)
    return const - 0.5 * np.log(scale2) - 0.5 * (df + 1.0) * np.log1p(r**2 / (df * scale2))


def functional_variance(log_lik, pointwise=False):
    """Functional variance ``sum_i Var_theta[log p(y_i | theta)]`` ((5), (13) of paper 004).

    The variance over draws uses the divisor S, as (13) does.

    Parameters
    ----------
    log_lik : array-like of shape (S, n)
    pointwise : bool, default=False
        Return the n variances instead of their sum.

    Returns
    -------
    float, or ndarray of shape (n,) when ``pointwise``

    Examples
    --------
    >>> functional_variance([[0.0, 1.0], [2.0, 1.0]])
    1.0
    """
    v = np.var(np.asarray(log_lik, dtype=float), axis=0)
    return v if pointwise else float(np.sum(v))


class WAICResult(NamedTuple):
    """WAIC on ArviZ's log scale (``elpd``), with its deviance form ``waic = -2 elpd_waic``."""

    elpd_waic: float
    se: float  # standard error of elpd_waic, sqrt(n Var_i elpd_i)
    p_waic: float
    waic: float  # -2 * elpd_waic
    elpd_pointwise: np.ndarray  # (n,)
    p_pointwise: np.ndarray  # (n,)


def waic(log_lik, beta=1.0):
    """Widely applicable information criterion (Watanabe, 2010), as ArviZ computes it.

    ``elpd_waic = sum_i log mean_k p(y_i | theta_k) - beta * p_waic`` with
    ``p_waic = sum_i Var_k log p(y_i | theta_k)``, the variance over draws
    with divisor S (ArviZ's ``az.waic``): ``p_waic`` is then exactly the
    functional variance (5) of the draws.

    Parameters
    ----------
    log_lik : array-like of shape (S, n) or (n_chains, n_draws, n)
        Pointwise log-likelihood of S draws (chains are pooled).
    beta : float > 0, default=1.0
        Power of the likelihood in a tempered posterior
        ``Pi(theta) prod_i p(y_i | theta)^beta``. Watanabe's equation of
        state ``E[B_g] = E[B_t] + (beta / n) E[V]`` scales the penalty by
        it; 1 is the Bayesian posterior and ArviZ's value.

    Returns
    -------
    WAICResult

    Examples
    --------
    >>> import numpy as np
    >>> res = waic(np.zeros((4, 3)))
    >>> res.elpd_waic, res.p_waic
    (0.0, 0.0)
    """
    L = np.asarray(log_lik, dtype=float)
    L = L.reshape(-1, L.shape[-1])
    S = L.shape[0]
    if not beta > 0:
        raise ValueError(f"beta must be > 0 (the power of the likelihood), got {beta!r}.")
    lppd_i = logsumexp(L, axis=0) - np.log(S)
    p_i = np.var(L, axis=0)
    return waic_from_pointwise(lppd_i - beta * p_i, p_i)


def waic_from_pointwise(elpd_pointwise, p_pointwise, sample_weight=None):
    """The :class:`WAICResult` of pointwise values, e.g. those of :func:`waic` on chunks of examples.

    WAIC is a sum over examples of per-example terms, so the pointwise
    values of disjoint sets of examples, concatenated, give the WAIC of
    their union.

    Parameters
    ----------
    elpd_pointwise : array-like of shape (n,)
        ``log mean_k p(y_i | theta_k) - beta Var_k log p(y_i | theta_k)``.
    p_pointwise : array-like of shape (n,)
        ``Var_k log p(y_i | theta_k)``.
    sample_weight : array-like of shape (n,), default=None
        Weights ``w_i`` of the examples: example ``i`` counts ``w_i`` times
        in the sums (integer weights give the WAIC of the data with rows
        repeated), and the standard error is that of ``n_w = sum_i w_i``
        examples with the weighted spread of the terms.

    Returns
    -------
    WAICResult

    Examples
    --------
    >>> res = waic_from_pointwise([-1.0, -2.0], [0.1, 0.2], sample_weight=[2, 1])
    >>> res.elpd_waic, round(res.p_waic, 6)
    (-4.0, 0.4)
    """
    elpd_i = np.asarray(elpd_pointwise, dtype=float)
    p_i = np.asarray(p_pointwise, dtype=float)
    if sample_weight is None:
        elpd = float(np.sum(elpd_i))
        se = float(np.sqrt(len(elpd_i) * np.var(elpd_i)))
        return WAICResult(elpd, se, float(np.sum(p_i)), -2.0 * elpd, elpd_i, p_i)
    w = np.asarray(sample_weight, dtype=float)
    n_w, elpd = float(w.sum()), float(w @ elpd_i)
    se = float(np.sqrt(w @ (elpd_i - elpd / n_w) ** 2))  # sqrt(n var) of the rows repeated
    return WAICResult(elpd, se, float(w @ p_i), -2.0 * elpd, elpd_i, p_i)


class GibbsCriterion(NamedTuple):
    """Training loss, functional variance and their sum per sample (paper 004 §4.3)."""

    train_loss: float  # (1/n) sum_i (y_i - yhat_i)^2 / (2 sigma^2)
    functional_variance: float  # sum_i Var[log p(y_i | theta)]
    waic: float  # train_loss + functional_variance / n


def langevin_waic(y, y_pred, pointwise_variance, noise_variance, sample_weight=None):
    """Training loss plus functional variance, per sample (paper 004 §4.3).

    ``train_loss = (1/n) sum_i (y_i - yhat_i)^2 / (2 sigma^2)`` and
    ``waic = train_loss + FV / n`` with ``FV = sum_i v_i``: the "training
    loss + LFV" of paper 004's Table 7 divided by n, on the scale of its
    10-fold CV statistic ``(1/(2 sigma^2)) * mean held-out squared error``.
    The Gaussian normalising constant is left out, as in the paper, so with
    each model's own ``sigma^2`` the value hardly differs between models:
    rank them by Watanabe's WAIC (:func:`waic`; a fitted estimator's
    ``generalization_loss_``). The skgibbs regressors keep this value as
    ``langevin_waic_``.

    Parameters
    ----------
    y : array-like of shape (n,)
    y_pred : array-like of shape (n,)
        The point prediction on the training inputs (the fitted network,
        or the posterior mean).
    pointwise_variance : array-like of shape (n,)
        ``v_i = Var[log p(y_i | theta)]`` over posterior draws or Langevin
        iterates.
    noise_variance : float
        ``sigma^2``.
    sample_weight : array-like of shape (n,), default=None
        Weights ``w_i`` of the examples: the mean and the sum over the
        examples weighted, ``n`` their sum ``n_w`` (integer weights give the
        values of the data with rows repeated).

    Returns
    -------
    GibbsCriterion

    Examples
    --------
    >>> langevin_waic([1.0, -1.0], [0.0, 0.0], [0.5, 0.5], 1.0)
    GibbsCriterion(train_loss=0.5, functional_variance=1.0, waic=1.0)
    """
    y, y_pred = np.asarray(y, dtype=float), np.asarray(y_pred, dtype=float)
    if sample_weight is None:
        train_loss = float(np.mean((y - y_pred) ** 2) / (2.0 * noise_variance))
        fv = float(np.sum(pointwise_variance))
        return GibbsCriterion(train_loss, fv, train_loss + fv / len(y))
    w = np.asarray(sample_weight, dtype=float)
    n_w = float(w.sum())
    train_loss = float(w @ (y - y_pred) ** 2 / n_w / (2.0 * noise_variance))
    fv = float(w @ np.asarray(pointwise_variance, dtype=float))
    return GibbsCriterion(train_loss, fv, train_loss + fv / n_w)
