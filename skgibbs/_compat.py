"""The scikit-learn internals skgibbs relies on, imported in one place."""

from sklearn.utils._param_validation import (  # noqa: F401
    HasMethods,
    InvalidParameterError,
    Interval,
    StrOptions,
    validate_parameter_constraints,
)
from sklearn.utils.validation import check_is_fitted, validate_data  # noqa: F401

__all__ = [
    "HasMethods",
    "InvalidParameterError",
    "Interval",
    "StrOptions",
    "check_is_fitted",
    "validate_data",
    "validate_parameter_constraints",
]
