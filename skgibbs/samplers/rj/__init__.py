"""Reversible jump over the active sets of sparse networks (paper 001).

* :mod:`.rjmcmc` -- Langevin moves inside a model, births and deaths
  between models (``init`` / ``step``);
* :mod:`.rjhmc` -- the same jumps with HMC moves on the active weights;
* :mod:`.sampler` -- :class:`RJMCMC` (``sampler="rjmcmc"``);
* :mod:`.hmc_sampler` -- :class:`RJHMC` (``sampler="rjhmc"``).
"""

from . import rjhmc, rjmcmc
from .hmc_sampler import RJHMC
from .sampler import RJMCMC

__all__ = ["RJMCMC", "RJHMC", "rjmcmc", "rjhmc"]
