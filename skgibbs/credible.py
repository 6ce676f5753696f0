"""Credible balls of paper 000 §3.2 from posterior draws.

Pure functions: arrays in, arrays out. :func:`credible_sets` adds the
parameter-level and inflated balls of paper 001 §3.2.
"""

from typing import NamedTuple

import numpy as np

__all__ = ["posterior_quantile", "credible_radius", "parameter_radius", "credible_sets", "CredibleSets"]


def posterior_quantile(distances, confidence_level, weights=None):
    """Smallest ``r`` with ``#{h_k <= r} / N > confidence_level``.

    The empirical version of ``argmin_r {Pi(h <= r) > 1 - alpha}`` in
    (3.4), with ``confidence_level = 1 - alpha``: the order statistic
    ``h_(j)``, ``j = floor(confidence_level * N) + 1`` (capped at N). With
    ``weights``, the smallest ``r`` whose draws ``h_k <= r`` weigh more
    than ``confidence_level`` of the total.

    Parameters
    ----------
    distances : array-like of shape (N,)
    confidence_level : float in (0, 1)
    weights : array-like of shape (N,), default=None
        Non-negative weights of the draws (e.g. the draws of chains weighted
        by stacking); None weighs them equally.

    Returns
    -------
    float

    Examples
    --------
    >>> posterior_quantile([0.1, 0.4, 0.2, 0.3], 0.5)
    0.3
    >>> posterior_quantile([0.1, 0.4, 0.2, 0.3], 0.5, weights=[0.6, 0.0, 0.2, 0.2])
    0.1
    """
    h = np.asarray(distances, dtype=float).ravel()
    if weights is not None:
        order = np.argsort(h, kind="stable")
        cum = np.cumsum(np.asarray(weights, dtype=float).ravel()[order])
        j = min(int(np.sum(cum <= confidence_level * cum[-1])), len(h) - 1)
        return float(h[order][j])
    h = np.sort(h)
    j = min(int(np.floor(confidence_level * len(h))), len(h) - 1)
    return float(h[j])


def credible_radius(draws, confidence_level=0.95):
    """Radius ``r_alpha`` of the empirical-L2 credible ball (3.4).

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


def parameter_radius(samples, confidence_level=0.95, center=None, ord=2, weights=None):
    """Parameter-level radius: quantile of ``|theta_k - theta_0|`` (paper 000 §3.2, paper 001 §3.2).

    Paper 000 writes ``tau^{theta_0}_alpha`` (``r^{theta_0}_alpha`` in these
    pages) ``= Delta * radius`` with ``Delta`` the Lipschitz constant of
    ``theta -> f_theta``; this returns the radius in parameter space
    (multiply by ``Delta`` for the paper's scale).

    Parameters
    ----------
    samples : array-like of shape (N, Q)
    confidence_level : float, default=0.95
    center : array-like of shape (Q,), default=None
        ``theta_0``; the posterior mean when None.
    ord : {2, inf}, default=2
        The norm: Euclidean (paper 000) or the sup-norm of paper 001's
        ``r_alpha^I``.
    weights : array-like of shape (N,), default=None
        Weights of the draws, for the mean and the quantile
        (:func:`posterior_quantile`); None weighs them equally.

    Returns
    -------
    float
    """
    S = np.asarray(samples, dtype=float)
    if center is not None:
        c = np.asarray(center, dtype=float)
    else:
        c = S.mean(0) if weights is None else np.asarray(weights, dtype=float) @ S / np.sum(weights)
    if ord not in (2, np.inf):
        raise ValueError(f"ord must be 2 or numpy.inf, got {ord!r}.")
    return posterior_quantile(np.linalg.norm(S - c, ord=ord, axis=1), confidence_level, weights)


class CredibleSets(NamedTuple):
    """Radii of the credible balls of paper 001 §3.2 and whether they hold a known function.

    Distances are empirical L2 norms on the evaluation inputs,
    ``||h|| = (mean_j h(x_j)**2)**0.5``; every ball is centred at the
    posterior mean ``fbar``.
    """

    radius: float  # r_alpha: quantile of ||f_theta - fbar||
    parameter_radius: float  # r_alpha^I: quantile of |theta - theta_bar|_inf
    inflated_radius: float  # inflation * r_alpha^I
    inflation: float
    distance: float  # ||f - fbar|| (NaN without f)
    covered: float  # distance <= radius (1.0 / 0.0; NaN without f)
    covered_inflated: float  # distance <= inflated_radius


def credible_sets(draws, samples, f_true=None, confidence_level=0.95, inflation=1.0):
    """The function-level and inflated parameter-level credible balls of paper 001 §3.2.

    ``r_alpha`` is the ``confidence_level`` posterior quantile of
    ``||f_theta - fbar||`` (:func:`credible_radius`); ``r_alpha^I`` the
    quantile of the sup-norm distance ``|theta - theta_bar|_inf`` of the
    parameter draws to their mean, and the second ball
    ``C(inflation * r_alpha^I)`` has the inflated radius (paper 001 uses
    ``inflation = log(n_train)``, after Theorem 5). Paper 001 §4 compares
    the squared distance ``z = ||f - fbar||**2`` with the quantile of the
    squared distances of the draws; for ``r_alpha`` that is the same test
    as here (squaring is monotone), and the parameter-level radius, a norm,
    is compared with the norm ``||f - fbar||``.

    Parameters
    ----------
    draws : array-like of shape (N, M)
        Function values of N posterior draws at M inputs.
    samples : array-like of shape (N, Q)
        The parameter draws behind ``draws``.
    f_true : array-like of shape (M,), default=None
        The true function at the M inputs (a simulation); without it the
        coverage fields are NaN.
    confidence_level : float, default=0.95
        ``1 - alpha``.
    inflation : float, default=1.0

    Returns
    -------
    CredibleSets

    Examples
    --------
    >>> import numpy as np
    >>> F = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
    >>> theta = np.array([[0.0], [1.0], [2.0]])
    >>> cs = credible_sets(F, theta, f_true=np.array([1.5, 1.5]), confidence_level=0.5, inflation=2.0)
    >>> cs.radius, cs.parameter_radius, cs.inflated_radius, cs.covered, cs.covered_inflated
    (1.0, 1.0, 2.0, 1.0, 1.0)
    """
    F = np.asarray(draws, dtype=float)
    tau = credible_radius(F, confidence_level)
    return credible_sets_of(tau, F.mean(0), samples, f_true, confidence_level, inflation)


def credible_sets_of(radius, fbar, samples, f_true=None, confidence_level=0.95, inflation=1.0, weights=None):
    """:func:`credible_sets` from the radius ``r_alpha`` and the posterior mean ``fbar`` of the draws.

    For draws evaluated chunk by chunk of inputs: ``fbar`` is a mean per
    input and ``r_alpha`` a quantile of per-draw sums over the inputs,
    both of which the chunks give without holding every draw at every input.

    Parameters
    ----------
    radius : float
        ``r_alpha`` (:func:`credible_radius` of the draws).
    fbar : array-like of shape (M,)
        Posterior mean of the function values at the M inputs.
    samples, f_true, confidence_level, inflation
        As for :func:`credible_sets`.
    weights : array-like of shape (N,), default=None
        Weights of the draws for ``r_alpha^I`` (:func:`parameter_radius`),
        the weights behind ``radius`` and ``fbar``; None weighs them equally.

    Returns
    -------
    CredibleSets
    """
    fbar, tau = np.asarray(fbar, dtype=float), float(radius)
    tau_param = parameter_radius(samples, confidence_level, ord=np.inf, weights=weights)
    inflated = float(inflation) * tau_param
    if f_true is None:
        dist = covered = covered_inflated = float("nan")
    else:
        dist = float(np.sqrt(np.mean((np.asarray(f_true, dtype=float) - fbar) ** 2)))
        covered, covered_inflated = float(dist <= tau), float(dist <= inflated)
    return CredibleSets(tau, tau_param, inflated, float(inflation), dist, covered, covered_inflated)
