"""Langevin kernels: MALA and its minibatch forms (sMALA, csMALA, paper 000), and SGLD.

* :mod:`.mala` -- the Metropolis-adjusted Langevin kernel on the full data
  or on Bernoulli batches, with the surrogate's constants;
* :mod:`.sgld` -- unadjusted Langevin on minibatches (SGLD; ULA at
  ``rho = 1``);
* :mod:`.sampler` -- :class:`MALA`, :class:`SMALA`, :class:`CSMALA` and
  :class:`SGLD`: settings, warm-up, sampling.
"""

import importlib
import warnings

from . import mala, sgld
from .sampler import CSMALA, MALA, SGLD, SMALA

__all__ = ["MALA", "SMALA", "CSMALA", "SGLD", "mala", "sgld"]

# Until this release, ``skgibbs.samplers.langevin`` was the SGLD kernel module.
_SGLD_NAMES = ("SGLDState", "SGLDInfo", "SGLDParams", "init", "step")


def __getattr__(name):
    if name in _SGLD_NAMES:
        warnings.warn(
            f"skgibbs.samplers.langevin.{name} moved to skgibbs.samplers.langevin.sgld.{name}; the old "
            "name will be removed in the next release.",
            FutureWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(".sgld", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
