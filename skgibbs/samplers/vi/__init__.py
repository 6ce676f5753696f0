"""Tempered mean-field variational inference (paper 002).

* :mod:`.kernel` -- the pure step of the tempered ELBO
  (``init`` / ``step(generators, state, target, params)``), its KL term,
  the Laplace initial widths and the draws of ``q``;
* :mod:`.optimize` -- the optimisation (:func:`fit_target`, :func:`fit`):
  batches, learning-rate schedule, early stopping, averaging;
* :mod:`.sampler` -- :class:`MeanFieldVI` (``sampler="vi"``): settings and
  the draws of ``q`` that stand in for chains.
"""

from . import kernel, optimize
from .kernel import *  # noqa: F401,F403  (the kernel's names, as before this package)
from .kernel import __all__ as _kernel_names
from .optimize import VIConfig, VIResult, fit, fit_target
from .sampler import MeanFieldVI

__all__ = ["MeanFieldVI", "VIConfig", "VIResult", "fit", "fit_target", "kernel", "optimize", *_kernel_names]
