"""Input checks shared by the metrics and the scorers.

Each check names the offending parameter in its message and returns the
input in the one form the metrics compute with, so that the metric
functions themselves hold no validation.
"""

from numbers import Integral

import numpy as np

__all__ = ["check_pis", "check_y", "check_proba", "check_targets", "check_binning"]

_STRATEGIES = ("uniform", "quantile")
_ROW_SUM_TOL = 1e-6  # rows sum to 1 up to rounding, float32 predict_proba included


def check_pis(y_pis):
    """Prediction intervals as a float array of shape (n, 2, n_levels).

    Parameters
    ----------
    y_pis : array-like of shape (n, 2, n_levels) or (n, 2)

    Returns
    -------
    ndarray of shape (n, 2, n_levels)

    Examples
    --------
    >>> check_pis([[0.0, 1.0], [2.0, 3.0]]).shape
    (2, 2, 1)
    """
    pis = np.asarray(y_pis, dtype=float)
    if pis.ndim == 2:
        pis = pis[:, :, None]
    if pis.ndim != 3 or pis.shape[1] != 2:
        raise ValueError(f"y_pis must have shape (n, 2) or (n, 2, n_levels), got {np.shape(y_pis)}.")
    if not np.all(np.isfinite(pis)):
        raise ValueError("y_pis must hold finite numbers only.")
    return pis


def check_y(y_true, pis):
    """Targets as a float column of shape (n, 1), to broadcast against the levels of ``pis``.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    pis : ndarray of shape (n, 2, n_levels)
        Output of :func:`check_pis`.

    Returns
    -------
    ndarray of shape (n, 1)

    Examples
    --------
    >>> check_y([1.0, 2.0], check_pis([[0, 1], [2, 3]])).shape
    (2, 1)
    """
    y = np.asarray(y_true, dtype=float)
    if y.ndim != 1 or y.shape[0] != pis.shape[0]:
        raise ValueError(f"y_true must have shape ({pis.shape[0]},) to match y_pis, got {np.shape(y_true)}.")
    return y[:, None]


def check_proba(y_prob):
    """Probabilities as a float array of shape (n, n_classes).

    Parameters
    ----------
    y_prob : array-like of shape (n, n_classes) or (n,)
        Rows in ``[0, 1]`` summing to 1; a 1-d array is the probability of
        the positive class of a binary problem and becomes ``[1 - p, p]``.

    Returns
    -------
    ndarray of shape (n, n_classes)

    Examples
    --------
    >>> check_proba([0.25, 1.0])
    array([[0.75, 0.25],
           [0.  , 1.  ]])
    """
    try:
        proba = np.asarray(y_prob, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"y_prob must be an array of probabilities, got {type(y_prob).__name__}.") from exc
    if proba.ndim not in (1, 2) or (proba.ndim == 2 and proba.shape[1] < 2):
        raise ValueError(
            "y_prob must have shape (n_samples, n_classes) with n_classes >= 2, or (n_samples,) for the "
            f"probability of the positive class of a binary problem; got shape {proba.shape}."
        )
    if proba.shape[0] == 0:
        raise ValueError("y_prob is empty: pass the probabilities of at least one sample.")
    if not np.all(np.isfinite(proba)):
        raise ValueError("y_prob must hold finite probabilities; it has NaN or infinite entries.")
    if proba.min() < 0 or proba.max() > 1:
        raise ValueError(
            f"y_prob must hold probabilities in [0, 1], got values in [{proba.min():g}, {proba.max():g}]; "
            "pass predict_proba output, not decision_function scores."
        )
    if proba.ndim == 1:
        return np.column_stack([1.0 - proba, proba])
    sums = proba.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > _ROW_SUM_TOL)
    if bad.size:
        raise ValueError(
            f"Each row of y_prob must sum to 1 (within {_ROW_SUM_TOL:g}); row {bad[0]} sums to "
            f"{sums[bad[0]]:.9g}. Normalise the rows, or pass predict_proba output."
        )
    return proba


def check_targets(y_true, proba, labels):
    """Labels as an array of shape (n,), and the class of each column of ``proba``.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    proba : ndarray of shape (n, n_classes)
        Output of :func:`check_proba`.
    labels : array-like of shape (n_classes,) or None
        None names the columns by ``np.unique(y_true)``, which then must
        hold ``n_classes`` labels.

    Returns
    -------
    y : ndarray of shape (n,)
    labels : ndarray of shape (n_classes,)

    Examples
    --------
    >>> check_targets(["b", "a"], check_proba([0.2, 0.9]), None)[1]
    array(['a', 'b'], dtype='<U1')
    """
    n_samples, n_classes = proba.shape
    y = np.asarray(y_true)
    if y.ndim != 1 or y.shape[0] != n_samples:
        raise ValueError(f"y_true must have shape ({n_samples},) to match y_prob, got {np.shape(y_true)}.")
    if labels is None:
        labels = np.unique(y)
        if len(labels) != n_classes:
            raise ValueError(
                f"y_true holds {len(labels)} distinct labels but y_prob has {n_classes} columns, so the "
                "columns cannot be named from y_true; pass labels= (e.g. the estimator's classes_), one "
                "label per column of y_prob."
            )
        return y, labels
    labels = np.asarray(labels)
    if labels.ndim != 1 or len(labels) != n_classes:
        raise ValueError(
            f"labels must hold one label per column of y_prob ({n_classes}), got shape {labels.shape}."
        )
    if len(np.unique(labels)) != n_classes:
        raise ValueError(f"labels must not repeat a label, got {labels.tolist()}.")
    missing = ~np.isin(y, labels)
    if np.any(missing):
        raise ValueError(
            f"y_true holds labels that are not in labels: {np.unique(y[missing])[:5].tolist()}; "
            "labels must name every class of y_true."
        )
    return y, labels


def check_binning(n_bins, strategy):
    """The binning of a reliability curve, checked.

    Parameters
    ----------
    n_bins : int >= 1
    strategy : {"uniform", "quantile"}

    Returns
    -------
    n_bins : int
    strategy : str

    Examples
    --------
    >>> check_binning(10, "quantile")
    (10, 'quantile')
    """
    if isinstance(n_bins, bool) or not isinstance(n_bins, Integral) or n_bins < 1:
        raise ValueError(f"n_bins must be an int >= 1, got {n_bins!r}.")
    if not isinstance(strategy, str) or strategy not in _STRATEGIES:
        raise ValueError(f"strategy must be 'uniform' or 'quantile', got {strategy!r}.")
    return int(n_bins), strategy
