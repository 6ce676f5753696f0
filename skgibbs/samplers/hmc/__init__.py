"""Hamiltonian Monte Carlo: the pure kernel, its Gibbs step for hierarchical priors, the sampler object.

* :mod:`.kernel` -- one Metropolis-adjusted HMC transition of K chains
  (``init`` / ``step``, re-exported here);
* :mod:`.gibbs` -- HMC within Gibbs: the precisions of a hierarchical prior
  drawn from their conditionals between transitions;
* :mod:`.sampler` -- :class:`HMC` (``sampler="hmc"``): settings, the
  cross-chain warm-up of step size, metric and trajectory length, sampling.
"""

from . import gibbs, kernel
from .kernel import HMCInfo, HMCParams, HMCState, evaluator, init, leapfrog, step
from .sampler import HMC

__all__ = ["HMC", "HMCState", "HMCInfo", "HMCParams", "init", "step", "leapfrog", "evaluator", "gibbs", "kernel"]
