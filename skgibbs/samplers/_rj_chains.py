"""Reversible-jump chains for the runner: warm-up of the Langevin step, then frozen sampling.

During burn-in the step size ``h`` (with ``s = sqrt(2 h)`` when
``proposal_std="auto"``) follows dual averaging toward ``target_accept``
on the acceptance of the within-model moves only: a jump's acceptance also
reflects how likely the data make the other model, which ``h`` cannot
change. The step is started by the doubling/halving search on within-model
trial moves.
"""

import numpy as np
import torch

from . import rjmcmc
from ._progress import progress
from .adaptation import DualAveraging, search_step_size

__all__ = ["RJChains"]


class RJChains:
    """K reversible-jump chains advanced together in one process."""

    rho = 1.0
    mean_risk = None

    def __init__(self, potential, prior, theta0, generators, cfg):
        self.pot, self.prior, self.cfg, self.gens = potential, prior.check(), cfg, generators
        K = theta0.shape[0]
        self.K, self.dtype, self.device = K, theta0.dtype, theta0.device
        self.scale = cfg.lam / potential.n_data
        self.h = torch.full((K,), float(cfg.step_size), dtype=self.dtype, device=self.device)
        self.tied = isinstance(cfg.proposal_std, str)
        self.s_fixed = None if self.tied else float(cfg.proposal_std)
        self.state = rjmcmc.init(theta0, potential, prior)
        self.n_grad = np.ones(K, dtype=np.int64)
        # proposed / accepted per move type (death, within, birth) after burn-in
        self.proposed = np.zeros((K, 3), dtype=np.int64)
        self.accepted = np.zeros((K, 3), dtype=np.int64)

    def params(self, h=None, moves=rjmcmc.MOVES):
        h = self.h if h is None else h
        s = torch.sqrt(2 * h) if self.tied else torch.full_like(h, self.s_fixed)
        return rjmcmc.RJParams(self.scale, h, s, moves)

    def _trial(self, h):
        """Acceptance probability of one within-model proposal at ``h``; the state is kept."""
        self.n_grad += 1
        _, info = rjmcmc.step(self.gens, self.state, self.pot, self.params(h, (0.0, 1.0, 0.0)), self.prior)
        return torch.where(info.is_finite, info.acceptance_prob, torch.zeros_like(info.acceptance_prob)).to(
            self.dtype
        )

    def warmup(self):
        cfg = self.cfg
        if self.tied and cfg.burn_in > 0:
            self.h = search_step_size(self._trial, self.h, self.gens)
        target = 0.574 if cfg.target_accept is None else cfg.target_accept
        averager = DualAveraging(self.h, target) if self.tied else None
        for i in range(cfg.burn_in):
            self.n_grad += 1
            self.state, info = rjmcmc.step(self.gens, self.state, self.pot, self.params(), self.prior)
            if averager is not None:
                within = info.move == 0
                acc = info.acceptance_prob.to(self.dtype)
                # chains that jumped keep their step: feed the target itself
                h_new = averager.update(torch.where(within, acc, torch.full_like(acc, target)))
                self.h = h_new
            progress(cfg, "burn-in", i, cfg.burn_in)
        if averager is not None and cfg.burn_in > 0:
            self.h = averager.final()

    def frozen_params(self):
        return self.params()

    def sample_step(self, params):
        self.n_grad += 1
        self.state, info = rjmcmc.step(self.gens, self.state, self.pot, params, self.prior)
        kind = (info.move + 1).cpu().numpy()
        rows = np.arange(self.K)
        self.proposed[rows, kind] += 1
        self.accepted[rows, kind] += info.is_accepted.cpu().numpy()
        return {"accepted": info.is_accepted, "n_active": info.n_active}

    def summary(self):
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = self.accepted / self.proposed
        return {
            "n_restarts": np.zeros(self.K, dtype=np.int64),
            "step_size": self.h.cpu().numpy(),
            "proposal_std": self.params().proposal_std.cpu().numpy(),
            "correction": 0.0,
            "lambda_prime": self.cfg.lam,
            "n_grad": self.n_grad,
            "move_acceptance": rates,
        }
