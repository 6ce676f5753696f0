"""Warm-up of the microcanonical kernels: step size from the energy error, L from the ESS, a preconditioner.

* :class:`EnergyVarianceStepSize` -- the step size of unadjusted MCLMC from
  the energy error of each step (Robnik and Seljak, 2024, §4; Robnik et
  al., JMLR 2023, §3.2): for the isokinetic integrators ``Var[E] / d``
  grows as ``eps^6``, so each step's ``xi = E^2 / (d v)`` (``v`` the
  desired variance per dimension) predicts the step ``eps xi^(-1/6)`` at
  which ``Var[E] / d = v``; the predictions are averaged with an
  exponential memory of about ``n_eff`` steps and with weights that
  discount steps far from the target (``exp(-(log xi)^2 / (2 (6 trust)^2))``).
  A divergence caps the step size below the one that diverged.
* :func:`decoherence_length` -- ``L`` from the autocorrelation of the
  positions: ``L = factor * eps * mean_i(n / ESS_i)``, the distance the
  dynamics travel in one autocorrelation time (their §4, ``factor = 0.4``).
* :class:`WeightedMoments` -- the mean and variance of the positions,
  each step weighted by its step size (the time it represents), for a
  diagonal preconditioner.

Each is a small state and an update, per chain, frozen when warm-up ends.
"""

import math

import numpy as np
import torch

from ...diagnostics import effective_sample_size

__all__ = ["EnergyVarianceStepSize", "WeightedMoments", "decoherence_length"]


class EnergyVarianceStepSize:
    """Step sizes ``(K,)`` aiming at ``Var[energy error] / d = desired_energy_var``.

    Parameters
    ----------
    step_size : torch.Tensor of shape (K,)
        Initial step sizes.
    dim : int
        ``d``.
    desired_energy_var : float
    n_eff : float, default=150
        Memory of the average, in steps.
    trust : float, default=1.5
        Width (in units of ``6 log``) of the weights around the target.
    """

    def __init__(self, step_size, dim, desired_energy_var, n_eff=150.0, trust=1.5):
        self.eps = step_size.to(torch.float64).clone()
        self.dim, self.target, self.trust = dim, float(desired_energy_var), float(trust)
        self.decay = (n_eff - 1.0) / (n_eff + 1.0)
        self.time = torch.zeros_like(self.eps)
        self.avg = torch.zeros_like(self.eps)
        self.cap = torch.full_like(self.eps, math.inf)

    #: a step whose ``xi`` exceeds this (an energy error a hundred times the target's sd) is *wild*
    wild = 1e4

    def update(self, energy_change, divergent):
        """Take a step's energy errors ``(K,)`` and divergences; return the next step sizes.

        A divergent step caps the step size below the one that diverged
        (Robnik et al.'s rule). A *wild* step (``xi > wild``) halves the
        step size and is left out of the average: on a ReLU network a
        step far too large (a trial step of the search that overshot, a
        kink crossed) has an energy error of thousands of nats, and one
        such ``xi`` would dominate the exponential average for thousands
        of steps (a departure from the papers, where ``xi`` enters with a
        weight that falls only as ``exp(-(log xi)^2 / 2 (6 trust)^2)``).
        """
        e = torch.where(divergent, torch.zeros_like(energy_change), energy_change.to(torch.float64))
        self.cap = torch.where(divergent, 0.8 * self.eps, self.cap)
        xi = e * e / (self.dim * self.target) + 1e-8
        skip = divergent | (xi > self.wild)
        w = torch.exp(-0.5 * (torch.log(xi) / (6.0 * self.trust)) ** 2)
        w = torch.where(skip, torch.zeros_like(w), w)
        self.avg = self.decay * self.avg + w * xi / self.eps**6
        self.time = self.decay * self.time + w
        new = torch.where(self.time > 0, (self.avg / self.time.clamp_min(1e-300)) ** (-1.0 / 6.0), self.eps)
        new = torch.where(divergent, 0.8 * self.eps, torch.where(skip, 0.5 * self.eps, new))
        self.eps = torch.minimum(new, self.cap)
        return self.eps

    def is_wild(self, energy_change):
        """The steps ``(K,)`` whose energy error is wild: the warm-up does not keep where they led."""
        e = energy_change.to(torch.float64)
        return ~torch.isfinite(e) | (e * e / (self.dim * self.target) > self.wild)

    def restart(self):
        """Forget the average (after a change of preconditioner), keeping the step sizes."""
        self.time.zero_()
        self.avg.zero_()


class WeightedMoments:
    """Per-chain mean and variance of the positions, each weighted (by its step size)."""

    def __init__(self, K, Q, device):
        self.w = torch.zeros(K, 1, dtype=torch.float64, device=device)
        self.s1 = torch.zeros(K, Q, dtype=torch.float64, device=device)
        self.s2 = torch.zeros(K, Q, dtype=torch.float64, device=device)

    def update(self, theta, weight):
        """Add the positions ``theta`` ``(K, Q)`` with the weights ``weight`` ``(K,)``."""
        th = theta.to(torch.float64)
        w = weight.to(torch.float64)[:, None]
        self.w += w
        self.s1 += w * th
        self.s2 += w * th * th

    def variance(self):
        """``(K, Q)`` variances of the positions added (0 before any)."""
        w = self.w.clamp_min(1e-300)
        mean = self.s1 / w
        return (self.s2 / w - mean * mean).clamp_min(0.0)


def decoherence_length(positions, step_size, factor=0.4):
    """``L = factor * eps * mean_i(n / ESS_i)`` per chain from its positions.

    Parameters
    ----------
    positions : ndarray of shape (K, n, m)
        ``m`` coordinates of each chain at ``n`` successive steps.
    step_size : ndarray of shape (K,)
    factor : float

    Returns
    -------
    ndarray of shape (K,)
        NaN for a chain none of whose coordinates moved.
    """
    K, n = positions.shape[:2]
    out = np.full(K, np.nan)
    for k in range(K):
        ess = np.asarray(effective_sample_size(positions[k][None]), dtype=np.float64)
        ess = ess[np.isfinite(ess) & (ess > 0)]
        if ess.size:
            out[k] = factor * float(step_size[k]) * float(np.mean(n / ess))
    return out
