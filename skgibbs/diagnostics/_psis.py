"""Pareto smoothed importance sampling (PSIS) and PSIS leave-one-out densities, draws first."""

from typing import NamedTuple

import numpy as np
from scipy.special import logsumexp

__all__ = ["psis", "psis_loo", "loo_underconfidence", "PSISResult", "LooResult"]

#: largest (candidates x tail draws x columns) array of one block of the Pareto fit
_FIT_ELEMENTS = 2**22


class PSISResult(NamedTuple):
    """Smoothed, truncated and normalised log importance weights, and the Pareto shape of their tail."""

    log_weights: np.ndarray  # (S, ...), logsumexp over the draws is 0
    khat: object  # float or ndarray of the trailing shape; NaN where the tail could not be fitted


class LooResult(NamedTuple):
    """PSIS leave-one-out log predictive densities and the Pareto shape behind each."""

    elpd_pointwise: object  # log p(y_i | y_-i), float or ndarray of the trailing shape
    khat: object


def _gpd_fit(x):
    """Shape ``k`` and scale ``sigma`` of a generalized Pareto fitted to the exceedances ``x`` ``(M, m)``.

    Zhang and Stephens (2009): the profile likelihood of ``theta = -k /
    sigma`` on a grid of ``30 + sqrt(M)`` points placed by the data, whose
    posterior mean (flat weights on the grid) gives ``theta``, then ``k`` and
    ``sigma`` at that ``theta``. ``x`` is sorted in each column. The shape
    is then shrunk toward 0.5 by 10 pseudo-observations, the weakly
    informative prior of Vehtari et al. (2024, §3.2), which steadies it for
    short tails.
    """
    n, m = x.shape
    grid = 30 + int(np.sqrt(n))
    j = np.arange(1, grid + 1, dtype=float)[:, None]
    quartile = x[int(np.floor(n / 4 + 0.5)) - 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = 1.0 / x[-1] + (1.0 - np.sqrt(grid / (j - 0.5))) / (3.0 * quartile)  # (grid, m)
        block = max(1, _FIT_ELEMENTS // (grid * n))
        k_grid = np.empty((grid, m))
        for start in range(0, m, block):
            cols = slice(start, start + block)
            k_grid[:, cols] = np.log1p(-theta[:, None, cols] * x[None, :, cols]).mean(1)
        profile = n * (np.log(-theta / k_grid) - k_grid - 1.0)
        weights = np.exp(profile - logsumexp(profile, axis=0))
        theta_hat = np.sum(weights * theta, axis=0)
        k = np.log1p(-theta_hat * x).mean(0)
        sigma = -k / theta_hat
    k = (n * k + 10 * 0.5) / (n + 10)
    bad = ~(np.isfinite(k) & np.isfinite(sigma) & (sigma > 0))
    return np.where(bad, np.nan, k), np.where(bad, np.nan, sigma)


def _gpd_quantile(p, k, sigma):
    """Quantile ``sigma / k ((1 - p)^-k - 1)`` of the generalized Pareto (``-sigma log(1 - p)`` at ``k = 0``)."""
    log_tail = np.log1p(-p)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        q = sigma * np.expm1(-k * log_tail) / k
    return np.where(np.abs(k) < 1e-12, -sigma * log_tail, q)


def psis(log_ratios):
    r"""Pareto smoothed importance sampling of log importance ratios (Vehtari et al., 2024).

    For ``S`` draws from a proposal with log ratios ``r_s = log p(theta_s) -
    log q(theta_s)`` (up to a constant), the ``M = ceil(min(S / 5, 3
    sqrt(S)))`` largest ratios are replaced by the expected order
    statistics ``u + F^{-1}((j - 1/2) / M)``, ``j = 1..M``, of a generalized
    Pareto distribution fitted (Zhang and Stephens, 2009) to their
    exceedances over ``u``, the largest ratio outside the tail; then every
    weight is truncated at ``S^(3/4)`` times the mean weight and the weights
    are normalised. The fitted shape ``khat`` says how far the estimates can
    be trusted: below 0.5 the weights have finite variance and PSIS
    converges at the Monte Carlo rate; up to 0.7 it is still practical;
    above 0.7 the importance sampling estimate is unreliable (Vehtari et
    al., 2024, §3.2: the minimal ``S`` for a given accuracy grows fast in
    ``khat``). The ratios are treated as independent draws (an MCMC
    efficiency below 1 would call for a longer tail).

    Parameters
    ----------
    log_ratios : array-like of shape (S, ...)
        Draws first; every trailing index is a separate importance sampling
        problem. All finite, ``S >= 2``.

    Returns
    -------
    PSISResult
        ``log_weights`` of the shape of ``log_ratios`` (``logsumexp`` over
        the draws is 0) and ``khat`` of the trailing shape (a float for a
        1-D input); NaN where fewer than 5 draws form the tail or the tail
        is flat, and then the ratios are only truncated.

    References
    ----------
    Vehtari, A., Simpson, D., Gelman, A., Yao, Y., Gabry, J. (2024). Pareto
    smoothed importance sampling. J. Mach. Learn. Res. 25.
    Zhang, J., Stephens, M. A. (2009). A new and efficient estimation method
    for the generalized Pareto distribution. Technometrics 51.

    Examples
    --------
    Ratios of a Student-t target to a normal proposal have a heavy tail:

    >>> import numpy as np
    >>> from scipy import stats
    >>> x = np.random.default_rng(0).normal(size=4000)
    >>> light = psis(stats.norm.logpdf(x, scale=1.1) - stats.norm.logpdf(x))
    >>> heavy = psis(stats.t.logpdf(x, df=2) - stats.norm.logpdf(x))
    >>> bool(light.khat < 0.5), bool(heavy.khat > 0.7)
    (True, True)
    >>> bool(np.isclose(np.exp(light.log_weights).sum(), 1.0))
    True
    """
    lr = np.asarray(log_ratios, dtype=float)
    if lr.ndim == 0 or lr.shape[0] < 2:
        raise ValueError(f"log_ratios holds draws first, at least 2 of them; got shape {lr.shape}.")
    if not np.all(np.isfinite(lr)):
        raise ValueError("log_ratios holds NaN or infinite values; PSIS needs finite log ratios.")
    S, trailing = lr.shape[0], lr.shape[1:]
    lw = lr.reshape(S, -1)
    lw = lw - lw.max(0)  # the largest raw weight is 1: exp() stays finite
    M = int(np.ceil(min(S / 5.0, 3.0 * np.sqrt(S))))
    khat = np.full(lw.shape[1], np.nan)
    if 5 <= M < S:
        order = np.argsort(lw, axis=0, kind="stable")
        tail_rows = order[-M:]  # (M, m), ascending ratios
        cutoff = np.exp(np.take_along_axis(lw, order[-M - 1 : -M], axis=0))  # (1, m)
        exceed = np.exp(np.take_along_axis(lw, tail_rows, axis=0)) - cutoff
        k, sigma = _gpd_fit(exceed)
        fitted = np.isfinite(k)
        if fitted.any():
            p = (np.arange(1, M + 1) - 0.5) / M
            with np.errstate(divide="ignore"):
                smoothed = np.log(cutoff[:, fitted] + _gpd_quantile(p, k[fitted], sigma[fitted]))
            cols = lw[:, fitted]
            np.put_along_axis(cols, tail_rows[:, fitted], smoothed, axis=0)
            lw[:, fitted] = cols
        khat = k
    # truncation at S^(3/4) times the mean weight
    cap = 0.75 * np.log(S) + logsumexp(lw, axis=0) - np.log(S)
    lw = np.minimum(lw, cap)
    lw -= logsumexp(lw, axis=0)
    khat = khat.reshape(trailing)
    return PSISResult(lw.reshape(lr.shape), float(khat) if khat.ndim == 0 else khat)


def psis_loo(log_lik, beta=1.0):
    r"""Leave-one-out log predictive densities ``log p(y_i | y_-i)`` by PSIS.

    With draws ``theta_s`` from the posterior given all data, the
    leave-one-out posterior of example ``i`` is reached by the importance
    ratios ``1 / p(y_i | theta_s)``; :func:`psis` smooths them into
    normalised weights ``w_is`` and ``p(y_i | y_-i) ~ sum_s w_is p(y_i |
    theta_s)`` (Vehtari, Gelman and Gabry, 2017). For a tempered posterior,
    whose likelihood enters as ``prod_i p(y_i | theta)^beta`` (``beta = 1 /
    temperature``), leaving example ``i`` out divides it by
    ``p(y_i | theta)^beta``: the ratios are ``p(y_i | theta_s)^(-beta)``,
    and the predictive density is still ``p(y_i | theta_s)``'s mean under
    them, the held-out log density of the tempered posterior's predictive.

    Parameters
    ----------
    log_lik : array-like of shape (S, n) or (S, ...)
        ``log p(y_i | theta_s)``, draws first; every trailing index is one
        example (or one example of one chain).
    beta : float > 0, default=1.0
        The power of the likelihood in the posterior the draws come from.

    Returns
    -------
    LooResult
        ``elpd_pointwise`` and ``khat`` of the trailing shape: the
        leave-one-out log density of each example and the Pareto shape of
        its weights (above 0.7 that example's estimate is unreliable).

    References
    ----------
    Vehtari, A., Gelman, A., Gabry, J. (2017). Practical Bayesian model
    evaluation using leave-one-out cross-validation and WAIC. Stat. Comput.
    27.

    Examples
    --------
    A normal mean under a flat prior, where ``p(y_i | y_-i)`` is known:

    >>> import numpy as np
    >>> from scipy import stats
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=20)
    >>> mu = rng.normal(y.mean(), np.sqrt(1 / 20), size=4000)      # posterior draws
    >>> loo = psis_loo(stats.norm.logpdf(y[None, :], mu[:, None]))
    >>> rest = (y.sum() - y) / 19                                   # mean of the other 19
    >>> exact = stats.norm.logpdf(y, rest, np.sqrt(1 + 1 / 19))
    >>> bool(np.max(np.abs(loo.elpd_pointwise - exact)) < 0.02)
    True

    The same model tempered, the likelihood to the power ``beta = 2``: the
    posterior variance is ``1 / (beta n)``, and leaving ``y_i`` out gives the
    mean of the other 19 with variance ``1 / (beta 19)``:

    >>> mu = rng.normal(y.mean(), np.sqrt(1 / 40), size=4000)
    >>> loo = psis_loo(stats.norm.logpdf(y[None, :], mu[:, None]), beta=2.0)
    >>> exact = stats.norm.logpdf(y, rest, np.sqrt(1 + 1 / 38))
    >>> bool(np.max(np.abs(loo.elpd_pointwise - exact)) < 0.02)
    True
    """
    log_lik = np.asarray(log_lik, dtype=float)
    weights = psis(-float(beta) * log_lik)
    return LooResult(logsumexp(weights.log_weights + log_lik, axis=0), weights.khat)


def loo_underconfidence(log_proba, codes, sample_weight=None):
    r"""How much better leave-one-out predictions score than they expect of themselves, in nats.

    With ``p_i`` the leave-one-out predictive distribution of example
    ``i`` over the classes and ``y_i`` its label,

    .. math::

        D = \sum_i w_i \Big( \log p_i(y_i) + H(p_i) \Big), \qquad
        H(p_i) = -\sum_c p_i(c) \log p_i(c):

    the leave-one-out log score minus the one the predictions expect (their
    mean log probability under themselves). ``D`` is the derivative at
    ``s = 1`` of the log score of the sharpened predictions ``p_i^s``
    (renormalised), a concave function of ``s``, so ``D > 0`` exactly when
    some power above 1 scores better: the predictions are underconfident.
    A colder posterior sharpens the predictions; where ``D <= 0`` it cannot
    help (:class:`~skgibbs.GibbsMLPClassifier`'s ``temperature="auto"``
    then fits no colder candidate).

    Parameters
    ----------
    log_proba : ndarray of shape (n, n_classes)
        ``log p_i(c)``, each row a distribution.
    codes : ndarray of shape (n,)
        Each label's column.
    sample_weight : ndarray of shape (n,) or None

    Returns
    -------
    float

    Examples
    --------
    Labels drawn from ``q``; predictions ``q`` itself, ``q`` flattened (the
    power 1/2, renormalised) and ``q`` sharpened (the power 2), per example:

    >>> rng = np.random.default_rng(0)
    >>> q = rng.uniform(0.02, 0.98, size=20000)
    >>> codes = (rng.uniform(size=q.size) < q).astype(int)
    >>> def power(s):
    ...     a, b = q**s, (1 - q) ** s
    ...     return np.log(np.column_stack([b, a]) / (a + b)[:, None])
    >>> [round(loo_underconfidence(power(s), codes) / q.size, 2) for s in (1.0, 0.5, 2.0)]
    [0.01, 0.08, -0.23]

    (0 in expectation for calibrated predictions: here 0.006 per example,
    Monte Carlo noise.)
    """
    log_proba = np.asarray(log_proba, dtype=float)
    entropy = -np.sum(np.exp(log_proba) * log_proba, axis=1)
    pointwise = log_proba[np.arange(len(codes)), codes] + entropy
    return float(pointwise.sum() if sample_weight is None else np.asarray(sample_weight) @ pointwise)
