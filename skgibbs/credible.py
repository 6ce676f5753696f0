"""Credible balls of paper 000 §3.2 from posterior draws.

Pure functions: arrays in, arrays out.
"""

import numpy as np

__all__ = ["posterior_quantile", "credible_radius", "parameter_radius"]


def posterior_quantile(distances, confidence_level):
    """Smallest ``tau`` with ``#{h_k <= tau} / N > confidence_level``.

    The empirical version of ``argmin_tau {Pi(h <= tau) > 1 - alpha}`` in
    (3.4), with ``confidence_level = 1 - alpha``: the order statistic
    ``h_(j)``, ``j = floor(confidence_level * N) + 1`` (capped at N).

    Parameters
    ----------
    distances : array-like of shape (N,)
    confidence_level : float in (0, 1)

    Returns
    -------
    float

    Examples
    --------
    >>> posterior_quantile([0.1, 0.4, 0.2, 0.3], 0.5)
    0.3
    """
    h = np.sort(np.asarray(distances, dtype=float).ravel())
    j = min(int(np.floor(confidence_level * len(h))), len(h) - 1)
    return float(h[j])


def credible_radius(draws, confidence_level=0.95):
    """Radius ``tau_alpha`` of the empirical-L2 credible ball (3.4).

    Parameters
    ----------
    draws : array-like of shape (N, n)
        Function values ``f_{theta_k}(x_i)`` of N posterior draws at n inputs.
    confidence_level : float, default=0.95
        ``1 - alpha``.

    Returns
    -------
    float
        The ``confidence_level`` posterior quantile of
        ``h_k = (mean_i (f_k(x_i) - fbar(x_i))**2)**0.5``, ``fbar`` the mean
        over draws. Paper 000's Table 2 reports the quantile of ``h_k**2``
        (a mean squared distance), i.e. the square of this radius.

    Examples
    --------
    >>> import numpy as np
    >>> draws = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
    >>> credible_radius(draws, 0.5)
    1.0
    """
    F = np.asarray(draws, dtype=float)
    h = np.sqrt(np.mean((F - F.mean(0)) ** 2, axis=1))
    return posterior_quantile(h, confidence_level)


def parameter_radius(samples, confidence_level=0.95, center=None):
    """Parameter-level radius: quantile of ``|theta_k - theta_0|_2`` (paper 000 §3.2).

    Paper 000 writes ``tau^{theta_0}_alpha = Delta * radius`` with ``Delta``
    the Lipschitz constant of ``theta -> f_theta``; this returns the radius
    in parameter space (multiply by ``Delta`` for the paper's scale).

    Parameters
    ----------
    samples : array-like of shape (N, Q)
    confidence_level : float, default=0.95
    center : array-like of shape (Q,), default=None
        ``theta_0``; the posterior mean when None.

    Returns
    -------
    float
    """
    S = np.asarray(samples, dtype=float)
    c = S.mean(0) if center is None else np.asarray(center, dtype=float)
    return posterior_quantile(np.linalg.norm(S - c, axis=1), confidence_level)
