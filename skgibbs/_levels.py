"""Confidence levels given as a float or a sequence of floats, checked in one place."""

import numpy as np

__all__ = ["check_levels"]


def check_levels(confidence_level):
    """``confidence_level`` as a 1-D float array with every entry in (0, 1).

    Raises
    ------
    ValueError
        Naming ``confidence_level`` when an entry lies outside (0, 1) or
        the input is not a float or a flat sequence.
    """
    levels = np.atleast_1d(np.asarray(confidence_level, dtype=float))
    if levels.ndim != 1 or np.any(~(levels > 0) | ~(levels < 1)):
        raise ValueError(f"confidence_level must lie in (0, 1), got {confidence_level!r}.")
    return levels
