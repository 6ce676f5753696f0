"""Markov chain diagnostics: spectral variance, effective sample size, R-hat, PSIS, stacking.

Pure NumPy functions, arrays in and arrays out, vectorised over series.

* One chain, time first: :func:`autocovariance`, :func:`spectral_variance`
  and :func:`mcse` take ``x`` of shape ``(n,)`` or ``(n, ...)``, every
  trailing index a separate scalar series.
* Several chains, chains first: :func:`effective_sample_size`,
  :func:`rhat`, :func:`rank_rhat_and_ess` (the two at once, sharing their
  rank transforms) and :func:`nested_rhat` take ``x`` of shape ``(n_chains,
  n_draws, ...)`` (or one chain ``(n_draws,)``), as ArviZ and
  :class:`~skgibbs.samplers.ChainResult` lay draws out.
* Draws first, without chains: :func:`psis` smooths importance ratios of
  shape ``(S, ...)`` and :func:`psis_loo` gives leave-one-out densities
  from a log-likelihood ``(S, n)``, :func:`loo_underconfidence` whether
  leave-one-out class predictions are sharper or flatter than their
  labels support; :func:`stacking_weights` weighs ``K``
  predictive distributions from their leave-one-out densities ``(K, n)``
  (the estimators' ``chain_weights="stacking"``).

The spectral variance estimator is (3.2) of Belomestny, Goldman, Naumov and
Samsonov ("paper 003"), the ingredient of the empirical spectral variance
minimisation behind :mod:`skgibbs.control_variates`.
"""

from ._convergence import effective_sample_size, ess, rank_rhat_and_ess, rhat
from ._nested import nested_rhat
from ._psis import LooResult, PSISResult, loo_underconfidence, psis, psis_loo
from ._spectral import LAG_WINDOWS, autocovariance, lag_window, mcse, spectral_variance
from ._stacking import stacking_weights

__all__ = [
    "LAG_WINDOWS",
    "lag_window",
    "autocovariance",
    "spectral_variance",
    "mcse",
    "effective_sample_size",
    "ess",
    "rhat",
    "rank_rhat_and_ess",
    "nested_rhat",
    "psis",
    "psis_loo",
    "loo_underconfidence",
    "PSISResult",
    "LooResult",
    "stacking_weights",
]
