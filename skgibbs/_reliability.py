"""Whether a fit can be trusted: mixing diagnostics and the warnings that say what to change.

Function-space diagnostics (Vehtari, Gelman, Simpson, Carpenter & Bürkner,
2021): the weights of a network are not identifiable (permuted hidden units
give the same function), so R-hat and ESS are computed on the function
values at the training inputs. The thresholds are the issue-level ones of
the library: R-hat above 1.05 or a bulk ESS below 100 means that the draws
do not yet represent the posterior (Vehtari et al. recommend 1.01 and 400
for final results).
"""

import os
import sys
import warnings

import numpy as np

from .diagnostics import effective_sample_size, rhat
from .exceptions import SamplerWarning

__all__ = [
    "function_space_mixing",
    "pointwise_mixing",
    "worst_mixing",
    "warn_if_unreliable",
    "RHAT_WARN",
    "ESS_WARN",
]

RHAT_WARN, ESS_WARN = 1.05, 100.0
_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def function_space_mixing(F, n_chains):
    """Largest rank-normalised split R-hat and smallest bulk ESS of ``F`` (shape ``(K S, n)``).

    NaN for both with fewer than 8 draws per chain (split halves of 4).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> r, e = function_space_mixing(rng.normal(size=(4 * 100, 3)), n_chains=4)
    >>> r < 1.05, e > 300
    (True, True)
    """
    return worst_mixing(*pointwise_mixing(F, n_chains))


def pointwise_mixing(F, n_chains):
    """Rank-normalised split R-hat and bulk ESS of every column of ``F`` (shape ``(K S, m)``).

    Each column is judged on its own, so that the columns of a large ``F``
    can be judged chunk by chunk and the results concatenated.

    Returns
    -------
    rhat, ess : ndarray of shape (m,)
        NaN with fewer than 8 draws per chain.
    """
    S = F.shape[0] // n_chains
    if S < 8:
        nan = np.full(int(np.prod(F.shape[1:], dtype=np.int64)), np.nan)
        return nan, nan.copy()
    chains = F.reshape(n_chains, S, -1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.atleast_1d(rhat(chains))
        e = np.atleast_1d(effective_sample_size(chains, split=True, rank_normalize=True))
    return r, e


def worst_mixing(r, e):
    """The largest finite R-hat and the smallest finite ESS of :func:`pointwise_mixing` (NaN: none)."""
    r_max = float(np.nanmax(r)) if np.isfinite(r).any() else np.nan
    e_min = float(np.nanmin(e)) if np.isfinite(e).any() else np.nan
    return r_max, e_min


def _warn(message):
    """Warn at the first frame outside skgibbs (the user's ``fit`` call)."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, SamplerWarning, stacklevel=level)


def warn_if_unreliable(est):
    """Raise a :class:`~skgibbs.SamplerWarning` for each way the fitted ``est`` falls short.

    The sampler object (``est.kernel_``) says what falls short for its kernel
    (:meth:`~skgibbs.samplers.Sampler.diagnose`) and whether R-hat and ESS
    can judge its draws (``mixing_diagnostics``).
    """
    fit = {k: v for k, v in vars(est).items() if k.endswith("_") and not k.startswith("_")}
    fit.setdefault("acceptance_rate_", None)
    for message in est.kernel_.diagnose(fit):
        _warn(message)
    if est.kernel_.mixing_diagnostics:
        _warn_if_not_mixed(est)


def _watched(est):
    """What R-hat and ESS are computed on."""
    return "predicted probabilities" if hasattr(est, "classes_") else "function values"


def _warn_if_not_mixed(est):
    r, e = est.rhat_, est.ess_
    if not (r > RHAT_WARN or e < ESS_WARN):  # NaN (too few draws) passes
        return
    remedies = est.kernel_.mixing_remedies(est.rho_)
    disagree = (
        f" The chains disagree (R-hat {r:.3g} > {RHAT_WARN}): the posterior may have several modes, "
        "and more chains sample more of them."
        if r > RHAT_WARN
        else ""
    )
    _warn(
        f"The chains have not mixed: at the training inputs the {_watched(est)} have R-hat up to "
        f"{r:.3g} and a bulk effective sample size down to {e:.3g} (thresholds {RHAT_WARN} and "
        f"{ESS_WARN:g}), so intervals, radii and criteria rest on fewer effective draws than they "
        f"show.{disagree} To improve: {', '.join(remedies)}."
    )
