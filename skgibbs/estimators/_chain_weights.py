"""The chains' weights: equal, or stacked on their leave-one-out predictive densities.

Under ``chain_weights="stacking"`` each chain of a fit is scored by the
PSIS leave-one-out log densities of its own draws (:func:`chain_loo`), and
the chains are weighted by stacking those scores
(:func:`~skgibbs.diagnostics.stacking_weights`; Yao, Vehtari and Gelman,
*Stacking for non-mixing Bayesian computations*, 2022); otherwise each
chain weighs ``1 / n_chains``. :func:`draw_weights` spreads a chain's
weight over its draws for every weighted reduction of the estimators.
"""

import numpy as np

from ..diagnostics import psis_loo, stacking_weights

__all__ = ["chain_loo", "chain_weights_state", "draw_weights"]


def chain_loo(log_lik, n_chains):
    """PSIS leave-one-out log densities of every chain alone: ``(elpd, khat)``, each ``(n_chains, rows)``.

    ``log_lik`` ``(S, rows)`` holds the draws of the chains one after the
    other (the order of ``samples_``); each chain's draws form the
    importance sample of its own leave-one-out densities.

    Examples
    --------
    >>> log_lik = np.random.default_rng(0).normal(-1.0, 0.1, size=(2 * 50, 3))
    >>> elpd, khat = chain_loo(log_lik, n_chains=2)
    >>> elpd.shape, khat.shape
    ((2, 3), (2, 3))
    """
    S = log_lik.shape[0] // n_chains
    per_chain = log_lik.reshape(n_chains, S, -1).transpose(1, 0, 2)  # (S, K, rows): draws first
    loo = psis_loo(per_chain)
    return loo.elpd_pointwise, loo.khat


def chain_weights_state(setting, n_chains, elpd=None, khat=None, sample_weight=None):
    """The fitted ``chain_weights_`` (and, stacked, ``pareto_khat_``) of a fit with ``chain_weights=setting``.

    ``"stacking"`` stacks the chains' leave-one-out densities ``elpd``
    ``(K, n)``, the rows' log scores weighted by ``sample_weight``, and
    records the largest Pareto shape over the rows of each chain's PSIS
    weights (``khat`` ``(K, n)``); any other setting, or ``"stacking"``
    without ``elpd`` (fewer than two chains, or of one draw each), weighs
    the chains equally.

    Examples
    --------
    >>> chain_weights_state("equal", 4)
    {'chain_weights_': array([0.25, 0.25, 0.25, 0.25])}
    """
    if setting != "stacking" or elpd is None:
        return {"chain_weights_": np.full(n_chains, 1.0 / n_chains)}
    weights = stacking_weights(elpd, sample_weight=sample_weight)
    with np.errstate(invalid="ignore"):
        khat = np.array([np.nanmax(k) if np.isfinite(k).any() else np.nan for k in khat])
    return {"chain_weights_": weights, "pareto_khat_": khat}


def draw_weights(chain_weights, n_samples):
    """Weight of every retained draw, ``(n_chains * n_samples,)``, or None where the chains weigh the same.

    Draw ``j`` of chain ``k`` weighs ``chain_weights[k] / n_samples``.
    None (also for ``chain_weights`` None) lets a reduction over the draws
    take the plain mean, the same bits as for a fit whose chains were
    never weighted.

    Examples
    --------
    >>> draw_weights(np.array([0.75, 0.25]), 2)
    array([0.375, 0.375, 0.125, 0.125])
    >>> draw_weights(np.array([0.5, 0.5]), 2) is None
    True
    """
    if chain_weights is None or np.all(chain_weights == chain_weights[0]):
        return None
    return np.repeat(np.asarray(chain_weights, dtype=np.float64) / n_samples, n_samples)
