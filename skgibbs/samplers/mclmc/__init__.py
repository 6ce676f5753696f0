"""Microcanonical Langevin Monte Carlo: the unadjusted kernel, its Metropolis-adjusted form, their samplers.

* :mod:`.integrator` -- the isokinetic velocity map and integrators;
* :mod:`.kernel` -- unadjusted MCLMC (Robnik and Seljak, 2024);
* :mod:`.adjusted` -- Metropolis-adjusted microcanonical HMC (Robnik,
  Cohn-Gordon and Seljak, 2025);
* :mod:`.tuning` -- step size from the energy error, ``L`` from the ESS, a
  diagonal preconditioner;
* :mod:`.sampler` -- :class:`MCLMC` and :class:`AdjustedMCLMC`
  (``sampler="mclmc"``, ``"adjusted_mclmc"``).
"""

from . import adjusted, integrator, kernel, tuning
from .sampler import MCLMC, AdjustedMCLMC

__all__ = ["MCLMC", "AdjustedMCLMC", "adjusted", "integrator", "kernel", "tuning"]
