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

__all__ = ["function_space_mixing", "warn_if_unreliable", "RHAT_WARN", "ESS_WARN"]

RHAT_WARN, ESS_WARN = 1.05, 100.0
_PACKAGE = os.path.dirname(os.path.abspath(__file__))
# The surrogates approach pi_lambda only while lambda' l_i / n << 1 (Lemmas 1, 3).
SURROGATE_WARN = 0.1
# Beyond this spread of the log MH ratio between two independent batches,
# proposals pass only when the batch happens to favour them: chains stick.
BATCH_NOISE_WARN = 2.0


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
    S = F.shape[0] // n_chains
    if S < 8:
        return np.nan, np.nan
    chains = F.reshape(n_chains, S, -1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.atleast_1d(rhat(chains))
        e = np.atleast_1d(effective_sample_size(chains, split=True, rank_normalize=True))
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
    """Raise a :class:`~skgibbs.SamplerWarning` for each way the fitted ``est`` falls short."""
    sampler, rho = est.sampler_, est.rho_
    if sampler in ("smala", "csmala") and rho < 1 and est.surrogate_scale_ > SURROGATE_WARN:
        _warn(
            f"lambda' l_i / n averages {est.surrogate_scale_:.3g} (> {SURROGATE_WARN}): the "
            f"{sampler} surrogate is far from the Gibbs posterior at rho={rho:.3g}. Raise rho or temperature."
        )
    if rho < 1 and est.batch_noise_ > BATCH_NOISE_WARN:
        _warn(
            f"The log Metropolis-Hastings ratio fluctuates by about {est.batch_noise_:.3g} between "
            "two Bernoulli batches, so proposals pass only when the batch favours them and the "
            f"chains stick (acceptance {float(est.acceptance_rate_.mean()):.1%}). Raise temperature or rho."
        )
    if sampler != "sgld" and np.any(est.acceptance_rate_ < 0.01):
        _warn(
            f"A chain accepted only {float(est.acceptance_rate_.min()):.1%} of its proposals after burn-in, "
            "so its draws barely move. Lower step_size, raise burn_in, or raise rho or temperature."
        )
    if sampler == "vi" and len(est.vi_validation_objective_) and not est.vi_stopped_early_:
        _warn(
            f"The variational optimisation ran all vi_max_iter={est.n_iter_} steps while its held-out "
            "objective was still improving, so q may be far from the optimum of the tempered ELBO. "
            "Raise vi_max_iter or vi_learning_rate."
        )
    n_div = int(np.sum(est.n_divergent_))
    if n_div:
        _warn(
            f"{n_div} divergent HMC transitions after warm-up: the step size is too large for parts of "
            "the posterior, which may then be missed. Raise target_accept (e.g. 0.9) or burn_in."
        )
    if sampler != "vi":  # independent draws of q: R-hat and ESS cannot judge q
        _warn_if_not_mixed(est)


def _watched(est):
    """What R-hat and ESS are computed on."""
    return "predicted probabilities" if hasattr(est, "classes_") else "function values"


def _warn_if_not_mixed(est):
    r, e = est.rhat_, est.ess_
    if not (r > RHAT_WARN or e < ESS_WARN):  # NaN (too few draws) passes
        return
    remedies = ["raise burn_in and n_samples"]
    if est.sampler_ not in ("hmc", "rjmcmc") and est.rho_ >= 1:
        remedies.append("use sampler='hmc'")
    remedies.append("run more chains (n_chains)")
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
