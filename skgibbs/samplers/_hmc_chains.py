"""HMC chains for :func:`~skgibbs.samplers.run_chains`: warm-up and sampling.

Warm-up of ``burn_in`` transitions, everything frozen afterwards:

* step size per chain by dual averaging toward ``target_accept`` (0.8 by
  default), started by doubling/halving until one leapfrog step crosses it,
  and started afresh after every update of the metric (as Stan does);
* diagonal metric: ``"prior"`` keeps the prior variances (the coordinates
  the prior makes isotropic), ``"adaptive"`` re-estimates it at the end of
  Stan's windows (:func:`~.adaptation.metric_windows`) from the positions of
  all chains in the window, ``"identity"`` is the unit metric;
* trajectory length ``T``: ``"auto"`` is ``pi / 2``, a quarter period of
  a direction of unit variance in the coordinates ``theta / sqrt(m)``, the
  scale of every direction the data leave to the prior (with the prior
  metric) or of every direction (with a well-estimated metric): such a
  direction is decorrelated in one transition. ``"chees"`` adapts ``T`` by
  the ChEES criterion (:class:`~.adaptation.ChEES`) with each chain's
  running mean as the centre; on the networks we measured it chose
  trajectories of a hundred or more steps, dominated by weight directions
  that do not change the function (``benchmarks/bench_mixing.py``).

Transition ``t`` runs ``L_k = ceil(u_t T / h_k)`` leapfrog steps (at most
``max_leapfrog``) with the quasi-random jitter ``u_t`` of
:func:`~.adaptation.halton`, shared by the chains, so that chains with
similar step sizes finish together.
"""

import copy
import math

import numpy as np
import torch

from . import hmc
from ._progress import progress
from .adaptation import (
    ChEES,
    DualAveraging,
    RunningVariance,
    halton,
    metric_windows,
    search_step_size,
)

__all__ = ["HMCChains"]

# trajectory_length="auto": a quarter period of a unit-variance direction of the metric.
AUTO_LENGTH = math.pi / 2
# ChEES starts from trajectories of this many steps of the searched step size.
_CHEES_STEPS = 4
# Memory (transitions) of each chain's running mean, the centre of ChEES.
_CENTER_MEMORY = 100


class _RowLoop:
    """A potential evaluated one chain at a time (networks too large to batch)."""

    def __init__(self, potential):
        self.pot, self.n_data = potential, potential.n_data

    def loss_sum_and_grad(self, theta, batch):
        parts = [self.pot.loss_sum_and_grad(theta[k : k + 1], batch) for k in range(theta.shape[0])]
        return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])


def _prior_variance(prior, n_params, dtype, device):
    if prior.std is None:
        return torch.ones(n_params, dtype=dtype, device=device)
    std = torch.as_tensor(prior.std, dtype=dtype, device=device)
    return (std * std).expand(n_params).clone()


class HMCChains:
    """K chains of :mod:`~skgibbs.samplers.hmc` with cross-chain warm-up."""

    def __init__(self, potential, prior, theta0, generators, cfg, vectorize=True):
        K, Q = theta0.shape
        self.pot = potential if (vectorize or K == 1) else _RowLoop(potential)
        self.prior, self.cfg, self.gens = prior, cfg, generators
        self.K, self.dtype, self.device = K, theta0.dtype, theta0.device
        self.rho, self.mean_risk = 1.0, None
        self.scale = cfg.lam / potential.n_data
        self.target = 0.8 if cfg.target_accept is None else float(cfg.target_accept)
        self.reference = _prior_variance(prior, Q, self.dtype, self.device)
        self.m = torch.ones_like(self.reference) if cfg.metric == "identity" else self.reference
        self.h = torch.full((K,), float(cfg.step_size), dtype=self.dtype, device=self.device)
        length = cfg.trajectory_length
        self.T = AUTO_LENGTH if length == "auto" else (None if length == "chees" else float(length))
        self.state = hmc.init(theta0, self.pot, prior, self.scale)
        self.n_grad = np.ones(K, dtype=np.int64)
        self.t = 0  # transitions so far: the index of the jitter

    # -- one transition -----------------------------------------------------
    def _params(self, h, T, u, m):
        """``ceil(u T / h)`` leapfrog steps per chain, at least 1 and at most ``max_leapfrog``."""
        steps = torch.ceil(u * T / h).clamp(1, int(self.cfg.max_leapfrog)).long()
        return hmc.HMCParams(self.scale, h, m, steps)

    def _transition(self, h, T, m):
        self.t += 1
        u = halton(self.t)
        start = self.state.theta
        params = self._params(h, T, u, m)
        self.state, info = hmc.step(self.gens, self.state, self.pot, params, self.prior)
        self.n_grad += info.num_steps.cpu().numpy()
        return start, u, info

    def _trial(self, h):
        """Acceptance of one leapfrog step at ``h``; the state is left as it was."""
        _, info = hmc.step(self.gens, self.state, self.pot, self._params(h, h, 1.0, self.m), self.prior)
        self.n_grad += 1
        return info.acceptance_prob

    def _search(self):
        return search_step_size(self._trial, self.h, self.gens, threshold=self.target)

    # -- the runner's interface --------------------------------------------
    def warmup(self):
        cfg = self.cfg
        self.h = self._search()
        chees = ChEES(_CHEES_STEPS * float(self.h.mean())) if cfg.trajectory_length == "chees" else None
        windows = metric_windows(cfg.burn_in) if cfg.metric == "adaptive" else []
        ends = {end for _, end in windows}
        first = windows[0][0] if windows else cfg.burn_in
        averager, var = DualAveraging(self.h, self.target), None
        center = self.state.theta.clone()
        for i in range(cfg.burn_in):
            if chees is not None:
                self.T = chees.trajectory_length
            start, u, info = self._transition(self.h, self.T, self.m)
            self.h = averager.update(info.acceptance_prob)
            if chees is not None:
                # each chain's own running mean: the chains of a network sit in different modes
                center += (self.state.theta - center) / min(i + 2, _CENTER_MEMORY)
                args = (
                    start,
                    info.proposal,
                    info.momentum,
                    info.acceptance_prob,
                    info.is_divergent,
                    u,
                    self.m,
                )
                chees.update(*args, center=center)
                h_mean = float(self.h.mean())
                chees.bound(h_mean, int(cfg.max_leapfrog) * h_mean)
            if i >= first and var is None:
                var = RunningVariance(self.m.shape[0], self.dtype, self.device)
            if var is not None:
                var.update(self.state.theta)
            if i in ends:
                averager, var = self._new_metric(var, averager, chees), None
            progress(cfg, "burn-in", i, cfg.burn_in)
        if cfg.burn_in > 0:
            self.h = averager.final()
        if chees is not None:
            self.T = chees.final()

    def _new_metric(self, var, averager, chees):
        """End of a slow window: new metric and step size; ChEES's ``T`` follows the change of scale.

        ChEES measures ``T`` in the coordinates ``theta / sqrt(m)``; ``T`` is
        rescaled by the change of the root mean square of ``sd_i / sqrt(m_i)``
        (``sd_i`` from the window), so that ChEES resumes near its optimum.
        """
        sd2 = var.variance()
        old_width = float((sd2 / self.m).mean().sqrt())
        self.m = var.metric(self.reference)
        new_width = float((sd2 / self.m).mean().sqrt())
        self.h = self._search()
        if chees is not None and old_width > 0 and new_width > 0:
            chees.rescale(new_width / old_width)
        return DualAveraging(self.h, self.target)

    def frozen_params(self):
        return self.h, self.T, self.m

    def take(self, rows):
        """The chains ``rows`` after warm-up, as chains of their own: what the sampling phase needs.

        The adapted ``T`` and metric and the jitter's position are shared;
        states, generators, step sizes and counts are sliced.
        """
        part = copy.copy(self)
        part.state = type(self.state)(*(v[rows] for v in self.state))
        part.gens = [self.gens[k] for k in rows]
        part.h, part.n_grad, part.K = self.h[rows], self.n_grad[rows], len(rows)
        return part

    def sample_step(self, params):
        _, _, info = self._transition(*params)
        return {
            "accepted": info.is_accepted,
            "diverging": info.is_divergent,
            "n_steps": info.num_steps,
            "energy_error": info.energy_error,
        }

    def summary(self):
        h = self.h.cpu().numpy()
        return {
            "n_restarts": np.zeros(self.K, dtype=np.int64),
            "step_size": h,
            "proposal_std": np.full(self.K, np.nan),
            "correction": 0.0,
            "lambda_prime": self.cfg.lam,
            "n_grad": self.n_grad,
            "trajectory_length": float(self.T),
            "inverse_mass": self.m.cpu().numpy(),
        }
