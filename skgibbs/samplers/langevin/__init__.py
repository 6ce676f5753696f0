"""Langevin kernels: MALA and its minibatch forms (sMALA, csMALA, paper 000), and SGLD.

* :mod:`.mala` -- the Metropolis-adjusted Langevin kernel on the full data
  or on Bernoulli batches, with the surrogate's constants;
* :mod:`.sgld` -- unadjusted Langevin on minibatches (SGLD; ULA at
  ``rho = 1``);
* :mod:`.sampler` -- :class:`MALA`, :class:`SMALA`, :class:`CSMALA` and
  :class:`SGLD`: settings, warm-up, sampling.
"""

from . import mala, sgld
from .sampler import CSMALA, MALA, SGLD, SMALA

__all__ = ["MALA", "SMALA", "CSMALA", "SGLD", "mala", "sgld"]

