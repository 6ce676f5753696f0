"""Checks and scales of the training data, shared by the estimators."""

import numpy as np
import torch

from ._compat import validate_data
from ._out_of_core import RowSource

__all__ = [
    "check_numeric",
    "check_sample_weight",
    "column_moments",
    "fit_weights",
    "safe_scale",
    "standardize",
    "validate_fit_data",
]

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


def check_sample_weight(sample_weight, n_samples):
    """``sample_weight`` as a new float64 array of shape ``(n_samples,)``, or an error naming it.

    A number is that weight for every row. Refused, with what is wrong and
    where: another length or shape, a non-number, NaN or an infinity, a
    negative weight, and weights that are all 0 (nothing to fit). The
    array given is not changed.

    Examples
    --------
    >>> check_sample_weight([1, 2.5, 0], 3)
    array([1. , 2.5, 0. ])
    >>> check_sample_weight([1, -1], 2)
    Traceback (most recent call last):
    ...
    ValueError: sample_weight must be >= 0 (a weight counts its row that many times); row 1 has -1.
    """
    if isinstance(sample_weight, (int, float, np.number)) and not isinstance(sample_weight, bool):
        sample_weight = np.full(n_samples, float(sample_weight))
    try:
        w = np.array(sample_weight, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"sample_weight must hold numbers, one weight per row of X: {err}") from None
    if w.ndim != 1 or w.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight must have one weight per row of X, shape ({n_samples},), got shape {w.shape}."
        )
    bad = np.flatnonzero(~np.isfinite(w))
    if bad.size:
        raise ValueError(
            f"sample_weight has {bad.size} NaN or infinite weight(s), first at row {bad[0]} ({w[bad[0]]}); "
            "every weight must be a finite number >= 0."
        )
    negative = np.flatnonzero(w < 0)
    if negative.size:
        i = negative[0]
        raise ValueError(
            f"sample_weight must be >= 0 (a weight counts its row that many times); row {i} has {w[i]:g}."
        )
    if not w.any():
        raise ValueError(
            "sample_weight is zero for every row, which leaves no example to weigh. Give at least one row a "
            "non-zero weight."
        )
    return w


def fit_weights(sample_weight, n_samples):
    """The weights a fit uses: :func:`check_sample_weight`'s array, or None for no weights or all 1.

    Weights all equal to 1 are no weights: the fit is then the unweighted
    one, bit for bit.
    """
    if sample_weight is None:
        return None
    w = check_sample_weight(sample_weight, n_samples)
    return None if np.all(w == 1.0) else w


def column_moments(X, sample_weight=None):
    """``(mean, scale)`` of the columns of ``X``, weighted by ``sample_weight``; the scale by :func:`safe_scale`.

    Without weights ``X.mean(0)`` and ``X.std(0)``; with weights their
    weighted counterparts ``sum_i w_i x_i / n_w`` and ``(sum_i w_i (x_i -
    mean)^2 / n_w)^(1/2)``, ``n_w = sum_i w_i``: the moments of the rows
    repeated by integer weights.

    Examples
    --------
    >>> X = np.array([[0.0], [2.0]])
    >>> column_moments(X, np.array([3.0, 1.0]))
    (array([0.5]), array([0.8660254]))
    """
    if sample_weight is None:
        return X.mean(0), safe_scale(X.std(0))
    if isinstance(X, RowSource):
        mean, std = X.weighted_moments(sample_weight)
        return mean, safe_scale(std)
    w = np.asarray(sample_weight, dtype=np.float64)
    total = w.sum()
    mean = w @ X / total
    return mean, safe_scale(np.sqrt(np.maximum(w @ (X - mean) ** 2 / total, 0.0)))


#: what to do with a column of categories, said by every refusal of one
ENCODE_HINT = (
    "encode it before the estimator: sklearn.preprocessing.OneHotEncoder (OrdinalEncoder for ordered "
    "categories) in a sklearn.compose.ColumnTransformer, e.g. make_pipeline(make_column_transformer("
    "(OneHotEncoder(handle_unknown='ignore'), [{column!r}]), remainder='passthrough'), estimator)"
)


def _first_non_number(values):
    """The first text entry of ``values`` that is not a number, or ``None``.

    Only text is named: other objects (a dict in an object array) are left
    to scikit-learn's validation, whose ``TypeError`` says what they are.
    """
    try:
        np.asarray(values, dtype=np.float64)
        return None
    except (ValueError, TypeError):
        pass
    for v in np.asarray(values, dtype=object).ravel():
        if not isinstance(v, (str, bytes)):
            continue
        try:
            float(v)
        except ValueError:
            return v
    return None


def _frame_columns(a):
    """``(name, values)`` of each column of a pandas or polars frame whose dtype is not numeric."""
    for column in list(a.columns):
        values = a[column]
        dtype = values.dtype
        try:  # pandas
            from pandas.api.types import is_bool_dtype, is_numeric_dtype

            if is_numeric_dtype(dtype) or is_bool_dtype(dtype):
                continue
        except (ImportError, TypeError):
            pass
        if callable(getattr(dtype, "is_numeric", None)) and (dtype.is_numeric() or str(dtype) == "Boolean"):
            continue  # polars
        yield column, dtype, (values.to_numpy() if hasattr(values, "to_numpy") else values)


def check_numeric(a, name):
    """Refuse inputs that hold text, naming the argument, the column and the encoder to use.

    ``a`` is ``X`` or ``y`` as the user passed it: for a pandas or polars
    frame each column that is not numeric is tried, and the first that holds
    a value that is not a number is named; for an array of strings or
    objects, the first column that holds one. Sparse matrices and numeric
    arrays pass untouched (scikit-learn's validation checks the rest).

    Examples
    --------
    >>> import numpy as np
    >>> check_numeric(np.array([["1.5", "2"], ["3", "4"]]), "X")  # numbers written as text are numbers
    >>> check_numeric(np.array([[1.0, "red"]], dtype=object), "X")
    Traceback (most recent call last):
        ...
    ValueError: X's column 1 holds 'red', which is not a number; encode it before the estimator: ...
    """
    if hasattr(a, "tocsr"):
        return
    if hasattr(a, "dtypes") and hasattr(a, "columns"):
        for column, dtype, values in _frame_columns(a):
            bad = _first_non_number(values)
            if bad is not None:
                raise ValueError(
                    f"{name}'s column {column!r} holds {bad!r}, which is not a number (dtype {dtype}); "
                    + ENCODE_HINT.format(column=column)
                )
        return
    if hasattr(a, "dtypes") or not hasattr(a, "__len__"):
        return
    arr = np.asarray(a) if not hasattr(a, "dtype") else a
    if getattr(arr, "dtype", None) is None or arr.dtype.kind not in "USO":
        return
    arr = np.asarray(arr)
    columns = arr.reshape(len(arr), -1).T if arr.ndim == 2 else [arr]
    for j, values in enumerate(columns):
        bad = _first_non_number(values)
        if bad is None:
            continue
        where = f"{name}'s column {j}" if arr.ndim == 2 else name
        hint = ENCODE_HINT.format(column=j) if arr.ndim == 2 else "pass numbers"
        raise ValueError(f"{where} holds {bad!r}, which is not a number; {hint}")


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
