"""Tempered mean-field variational inference (paper 002).

* :mod:`.kernel` -- the pure step of the tempered ELBO (``init`` / ``step``),
  its KL term, the Laplace initial widths and the draws of ``q``;
* :mod:`.sampler` -- :class:`MeanFieldVI` (``sampler="vi"``): settings, the
  optimisation (:func:`fit`: batches, learning-rate schedule, early
  stopping) and the draws that stand in for chains.
"""

from . import kernel
from .kernel import *  # noqa: F401,F403  (the kernel's names, as before this package)
from .kernel import __all__ as _kernel_names
from .sampler import MeanFieldVI

__all__ = ["MeanFieldVI", "kernel", *_kernel_names]
