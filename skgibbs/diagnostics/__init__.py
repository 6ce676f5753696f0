"""Markov chain diagnostics: spectral variance, effective sample size, R-hat.

Pure NumPy functions, arrays in and arrays out, vectorised over series.

* One chain, time first: :func:`autocovariance`, :func:`spectral_variance`
  and :func:`mcse` take ``x`` of shape ``(n,)`` or ``(n, ...)``, every
  trailing index a separate scalar series.
* Several chains, chains first: :func:`effective_sample_size` and
  :func:`rhat` take ``x`` of shape ``(n_chains, n_draws, ...)`` (or one
  chain ``(n_draws,)``), as ArviZ and :class:`~skgibbs.samplers.ChainResult`
  lay draws out.

The spectral variance estimator is (3.2) of Belomestny, Goldman, Naumov and
Samsonov ("paper 003"), the ingredient of the empirical spectral variance
minimisation behind :mod:`skgibbs.control_variates`.
"""

from ._convergence import effective_sample_size, ess, rhat
from ._spectral import LAG_WINDOWS, autocovariance, lag_window, mcse, spectral_variance

__all__ = [
    "LAG_WINDOWS",
    "lag_window",
    "autocovariance",
    "spectral_variance",
    "mcse",
    "effective_sample_size",
    "ess",
    "rhat",
]
