"""Deprecated: renamed :mod:`skgibbs.known_posteriors` in 0.2; this module is removed in 0.3."""

import warnings

from .known_posteriors import *
from .known_posteriors import __all__  # noqa: F401

warnings.warn(
    "skgibbs.targets was renamed skgibbs.known_posteriors in 0.2 and will be removed in 0.3 (its densities are "
    "known posteriors for testing samplers, not the Target the kernels sample): import from "
    "skgibbs.known_posteriors instead.",
    FutureWarning,
    stacklevel=2,
)
