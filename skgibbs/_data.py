"""Checks and scales of the training data, shared by the estimators."""

import numpy as np
import torch

from ._compat import validate_data
from ._out_of_core import RowSource

__all__ = ["check_numeric", "safe_scale", "standardize", "validate_fit_data"]

#: what scikit-learn's ``validate_data(..., reset=True)`` sets on an estimator
INPUT_ATTRIBUTES = ("n_features_in_", "feature_names_in_")


def validate_fit_data(estimator, X, y, **check_params):
    """``validate_data(estimator, X, y, **check_params)`` as ``fit`` calls it, setting nothing on ``estimator``.

    scikit-learn's validation records ``n_features_in_`` (and
    ``feature_names_in_`` for ``X`` with string column names) on the object
    it validates for; here that object is an unfitted stand-in with the
    estimator's class and parameters, and the attributes come back for the
    estimator to store with the rest of its fit.

    Returns
    -------
    X, y : ndarray
    inputs : dict
        ``n_features_in_`` and, where ``X`` has them, ``feature_names_in_``.
    """
    stand_in = type(estimator).__new__(type(estimator))
    vars(stand_in).update(estimator.get_params(deep=False))
    X, y = validate_data(stand_in, X, y, **check_params)
    return X, y, {name: value for name, value in vars(stand_in).items() if name in INPUT_ATTRIBUTES}


def check_numeric(a, name):
    """Name the offending argument when strings cannot become numbers."""
    if hasattr(a, "tocsr") or hasattr(a, "dtypes"):
        return
    arr = np.asarray(a) if not hasattr(a, "dtype") else a
    if getattr(arr, "dtype", None) is not None and arr.dtype.kind in "USO":
        try:
            np.asarray(arr).astype(np.float64)
        except ValueError as exc:
            raise ValueError(f"{name} must hold numbers only, got dtype {arr.dtype}: {exc}") from exc


def safe_scale(std):
    """Standard deviations with zeros (constant columns) replaced by 1."""
    std = np.asarray(std, dtype=float)
    return np.where(std > 1e-12 * np.maximum(1.0, np.abs(std)), std, 1.0)


def standardize(X, mean, scale, device):
    """``(X - mean) / scale`` as float32 torch rows on ``device``.

    A tensor for in-memory ``X``; for a :class:`~skgibbs._out_of_core.RowSource`
    (a memmap or dask array) rows read on demand, with the same arithmetic.
    """
    if isinstance(X, RowSource):
        return X.standardized(mean, scale, device)
    return torch.as_tensor((X - mean) / scale, dtype=torch.float32, device=device)
