"""Confidence levels given as a float or a sequence of floats, checked in one place."""

import numpy as np
from scipy.special import ndtr

__all__ = ["check_levels", "mixture_quantiles"]


def check_levels(confidence_level):
    """``confidence_level`` as a 1-D float array with every entry in (0, 1).

    Raises
    ------
    ValueError
        Naming ``confidence_level`` when an entry lies outside (0, 1) or
        the input is not a float or a flat sequence.
    """
    levels = np.atleast_1d(np.asarray(confidence_level, dtype=float))
    if levels.ndim != 1 or np.any(~(levels > 0) | ~(levels < 1)):
        raise ValueError(f"confidence_level must lie in (0, 1), got {confidence_level!r}.")
    return levels


def mixture_quantiles(F, sigma, probs, n_iter=60):
    """Quantiles of the equal-weight mixture of N(F[k, i], sigma^2) per column i."""
    lo = F.min(0) - 10 * sigma
    hi = F.max(0) + 10 * sigma
    lo = np.broadcast_to(lo, (len(probs), F.shape[1])).copy()
    hi = np.broadcast_to(hi, (len(probs), F.shape[1])).copy()
    p = np.asarray(probs)[:, None]
    for _ in range(n_iter):
        mid = 0.5 * (lo + hi)
        cdf = ndtr((mid[:, None, :] - F[None]) / sigma).mean(1)
        below = cdf < p
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return 0.5 * (lo + hi)
