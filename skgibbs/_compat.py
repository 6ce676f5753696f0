"""The scikit-learn internals skgibbs relies on, imported in one place."""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import (  # noqa: F401
    HasMethods,
    InvalidParameterError,
    Interval,
    Options,
    StrOptions,
    validate_parameter_constraints,
)
from sklearn.utils.validation import check_is_fitted, validate_data  # noqa: F401

__all__ = [
    "LayerWidths",
    "HasMethods",
    "InvalidParameterError",
    "Interval",
    "StrOptions",
    "check_is_fitted",
    "validate_data",
    "validate_parameter_constraints",
]


class LayerWidths(Options):
    """A sequence of positive ints, one width per hidden layer (``()``: no hidden layer).

    scikit-learn's ``"array-like"`` checks no element, so the widths get a
    constraint of their own, checked by the same ``_parameter_constraints``
    machinery as every other setting (an ``Options`` whose test is on the
    elements: scikit-learn takes constraints of the kinds it knows).

    Examples
    --------
    >>> c = LayerWidths()
    >>> c.is_satisfied_by((16, 16)), c.is_satisfied_by([]), c.is_satisfied_by((4, 0)), c.is_satisfied_by("4")
    (True, True, False, False)
    """

    def __init__(self):
        super().__init__(object, set())

    def is_satisfied_by(self, val):
        if isinstance(val, (str, bytes)) or np.ndim(val) != 1:
            return False
        return all(isinstance(w, Integral) and not isinstance(w, (bool, np.bool_)) and w >= 1 for w in val)

    def __str__(self):
        return "a sequence of positive ints (one width per hidden layer; () for a linear model)"
