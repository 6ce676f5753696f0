"""Stacking weights of several predictive distributions, e.g. of chains that do not mix."""

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_softmax, softmax

__all__ = ["stacking_weights"]


def _objective(logits, P, pseudo_count, point_weight=None):
    """Minus the penalised mean log score of the mixture ``softmax(0, logits)`` of ``P`` ``(K, n)``; its gradient.

    ``point_weight`` ``(n,)``, summing to ``n``, weighs the points' log scores (all 1 when None).
    """
    a = np.concatenate([[0.0], logits])
    w, log_w = softmax(a), log_softmax(a)
    n = P.shape[1]
    mix = w @ P
    if point_weight is None:
        value = -np.mean(np.log(mix)) - pseudo_count / n * log_w.sum()
        g_w = -(P / mix).mean(1)  # d/dw_k of minus the mean log score
    else:
        value = -(point_weight @ np.log(mix)) / n - pseudo_count / n * log_w.sum()
        g_w = -((P / mix) @ point_weight) / n
    g_logits = w * (g_w - w @ g_w)  # through the softmax
    g_logits -= pseudo_count / n * (1.0 - len(w) * w)  # d/da_k of sum_j log w_j is 1 - K w_k
    return value, g_logits[1:]


def stacking_weights(lpd, *, pseudo_count=1.0, sample_weight=None):
    r"""Weights on the simplex that maximise the log score of the weighted mixture (stacking).

    For ``K`` predictive distributions with leave-one-out log densities
    ``lpd[k, i] = log p_k(y_i | y_-i)`` at ``n`` points, the stacking
    weights (Yao, Vehtari, Simpson and Gelman, 2018) are

    .. math::

        \hat w = \arg\max_{w \in \Delta_K} \sum_{i=1}^n \log \sum_{k=1}^K w_k\, p_k(y_i \mid y_{-i}),

    a concave maximisation over the simplex, here with the log density of
    a Dirichlet(``1 + pseudo_count``) prior on ``w`` added:
    ``pseudo_count * sum_k log w_k``. As in the EM update of mixture
    weights, each candidate then counts ``pseudo_count`` extra points; the
    stationarity condition gives

    .. math::

        \hat w_k = \frac{c}{c K + \sum_i \big(1 - p_k(y_i \mid y_{-i}) /
        \textstyle\sum_j \hat w_j p_j(y_i \mid y_{-i})\big)}

    with ``c = pseudo_count``, so a candidate that predicts nothing well gets about ``c / n`` and
    candidates that predict alike get about ``1 / K``. Without the prior
    (``pseudo_count=0``) the weights of candidates that predict alike are
    not determined: the log score is flat to Monte Carlo noise along the
    simplex, and the maximiser lands on a corner decided by that noise.

    Yao, Vehtari and Gelman (2022) stack the chains of a sampler that does
    not mix, each chain's draws giving its own leave-one-out densities
    (:func:`psis_loo` over that chain's draws): a chain stuck in a mode
    that predicts poorly gets a small weight, chains that predict equally
    well share the weight. The weights are found by L-BFGS on the softmax
    parametrisation ``w = softmax(0, a_2, ..., a_K)`` of the penalised mean
    log score (so that the tolerances do not depend on ``n``).

    The weights are a predictive choice, not posterior masses: stacking
    does not tell the posterior mass of each mode, and a mode is judged
    only where there are data to leave out.

    Parameters
    ----------
    lpd : array-like of shape (K, n)
        Log predictive densities; every column finite.
    pseudo_count : float >= 0, default=1.0
        ``c``: the Dirichlet prior's concentration minus 1. 0 is plain
        stacking (then a solution on the boundary is approached, not
        reached: weights below about 1e-8 stand for 0).
    sample_weight : array-like of shape (n,), default=None
        Weights ``s_i >= 0`` of the points: the log score is ``sum_i s_i
        log sum_k w_k p_k(y_i | y_-i)`` and the prior counts against
        ``n_s = sum_i s_i`` points (integer weights give the weights of the
        points repeated). All 1 when None.

    Returns
    -------
    ndarray of shape (K,)
        Non-negative, summing to 1.

    References
    ----------
    Yao, Y., Vehtari, A., Simpson, D., Gelman, A. (2018). Using stacking to
    average Bayesian predictive distributions. Bayesian Anal. 13.
    Yao, Y., Vehtari, A., Gelman, A. (2022). Stacking for non-mixing
    Bayesian computations: the curse and blessing of multimodal posteriors.
    J. Mach. Learn. Res. 23.

    Examples
    --------
    Two predictive densities, one right (``N(0, 1)``) and one off by 3:

    >>> import numpy as np
    >>> from scipy import stats
    >>> y = np.random.default_rng(0).normal(size=200)
    >>> lpd = np.stack([stats.norm.logpdf(y), stats.norm.logpdf(y, loc=3.0)])
    >>> w = stacking_weights(lpd)
    >>> bool(w[0] > 0.99), bool(np.isclose(w.sum(), 1.0))
    (True, True)
    """
    lpd = np.asarray(lpd, dtype=float)
    if lpd.ndim != 2 or lpd.shape[0] < 1 or lpd.shape[1] < 1:
        raise ValueError(f"lpd holds the log densities of K candidates at n points, shape (K, n); got {lpd.shape}.")
    if not (np.isfinite(pseudo_count) and pseudo_count >= 0):
        raise ValueError(f"pseudo_count must be a finite float >= 0, got {pseudo_count!r}.")
    if not np.all(np.isfinite(lpd)):
        raise ValueError("lpd holds NaN or infinite values; stacking needs finite log densities.")
    K = lpd.shape[0]
    if K == 1:
        return np.ones(1)
    point_weight = None
    if sample_weight is not None:
        s = np.asarray(sample_weight, dtype=float)
        if s.shape != (lpd.shape[1],) or not np.all(np.isfinite(s)) or np.any(s < 0) or not s.any():
            raise ValueError(f"sample_weight must hold {lpd.shape[1]} finite weights >= 0, not all 0.")
        # the pseudo count counts against sum(s) points: on the scale of n points, c n / sum(s)
        pseudo_count = pseudo_count * lpd.shape[1] / s.sum()
        point_weight = s * lpd.shape[1] / s.sum()
    # each column scaled so that its largest density is 1: the mixture cannot underflow
    P = np.exp(lpd - lpd.max(0))
    start = np.zeros(K - 1)
    result = minimize(
        _objective,
        start,
        args=(P, float(pseudo_count), point_weight),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 1000},
    )
    return softmax(np.concatenate([[0.0], result.x]))
