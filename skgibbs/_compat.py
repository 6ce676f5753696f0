"""The scikit-learn internals skgibbs relies on, imported in one place."""

from sklearn.utils._param_validation import HasMethods, Interval, StrOptions  # noqa: F401
from sklearn.utils.validation import check_is_fitted, validate_data  # noqa: F401

__all__ = ["HasMethods", "Interval", "StrOptions", "check_is_fitted", "validate_data"]
