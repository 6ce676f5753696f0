"""Mean ± standard error, its text, and the timed fit: the one way every benchmark computes and records them.

The standard error of a single value is NaN: one value says nothing of its
spread (its sample standard deviation is undefined). :func:`fmt` prints such
a standard error as ``n/a`` (``"0.969 ± n/a"``), so that a cell of one split
or one seed is never read as a spread of zero. No values at all give NaN for
the mean as well.
"""

import math
import operator
import time
import warnings
from typing import NamedTuple

import numpy as np

__all__ = ["NA", "TimedFit", "fmt", "fmt_values", "mean_se", "paired", "timed_fit"]

#: how :func:`fmt` prints a standard error that is not defined (a single value)
NA = "n/a"


def mean_se(values):
    """``(mean, standard error)`` of ``values`` as floats.

    The standard error is the sample standard deviation (``ddof=1``) over the
    square root of the number of values; NaN for a single value (see the
    module's docstring). Both are NaN for no values.
    """
    v = np.asarray(values, dtype=float).ravel()
    if v.size == 0:
        return math.nan, math.nan
    se = float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else math.nan
    return float(v.mean()), se


def _spec(spec):
    return f".{spec}f" if isinstance(spec, int) else spec


def fmt(pair, spec=3, se_spec=None):
    """``"mean ± se"`` of ``pair = (mean, se)``, e.g. from :func:`mean_se`.

    Parameters
    ----------
    pair : (float, float)
    spec : int or str, default=3
        Digits after the point, or a format spec (``".3g"``), of the mean and,
        unless ``se_spec`` is given, of the standard error.
    se_spec : int or str, optional
        The standard error's own digits or format spec.

    A NaN standard error (a single value) is printed as :data:`NA`.
    """
    mean, se = pair
    se_text = NA if math.isnan(se) else format(se, _spec(spec if se_spec is None else se_spec))
    return f"{format(mean, _spec(spec))} ± {se_text}"


def fmt_values(values, spec=3, scale=1.0, se_spec=None):
    """:func:`fmt` of the mean and standard error of ``values * scale``."""
    return fmt(mean_se(np.asarray(values, dtype=float) * scale), spec, se_spec)


class TimedFit(NamedTuple):
    """What :func:`timed_fit` records of one fit: its time and every warning it raised, in order."""

    seconds: float
    warnings: list

    def messages(self, category=Warning):
        """The messages of the warnings of ``category`` (and its subclasses), in the order raised."""
        return [str(w.message) for w in self.warnings if issubclass(w.category, category)]

    def count(self, category=Warning):
        """How many warnings of ``category`` (and its subclasses) the fit raised."""
        return len(self.messages(category))

    def categories(self):
        """``{category name: count}`` of every warning raised."""
        out = {}
        for w in self.warnings:
            out[w.category.__name__] = out.get(w.category.__name__, 0) + 1
        return out


def paired(rows, setting, value, base, column, combine=operator.sub):
    """``combine(at value, at base)`` of ``column`` for each data set and split of ``rows``, in one order.

    ``rows`` are dicts with ``"dataset"``, ``"split"`` and ``setting``; the
    row whose ``setting`` is ``value`` is paired with the one at ``base``.

    Examples
    --------
    >>> rows = [{"dataset": "a", "split": 0, "k": k, "ll": ll} for k, ll in ((1, -2.0), (2, -1.5))]
    >>> paired(rows, "k", 1, 2, "ll")
    [-0.5]
    """
    key = {(r["dataset"], r["split"], r[setting]): r for r in rows}
    pairs = sorted({(r["dataset"], r["split"]) for r in rows})
    return [combine(key[d, s, value][column], key[d, s, base][column]) for d, s in pairs]


def timed_fit(est, X, y=None, clock=time.perf_counter, **fit_params):
    """Fit ``est`` on ``(X, y)``; the time on ``clock`` (wall time by default; ``time.process_time`` for
    CPU time) and every warning raised (each one, repeats included).

    Returns a :class:`TimedFit`; the fitted estimator is ``est``. The
    benchmarks store what their pages read from it: the messages of the
    :class:`skgibbs.SamplerWarning` raised (``fit.messages(SamplerWarning)``),
    or counts of a category (``fit.count(ConvergenceWarning)``).
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = clock()
        est.fit(X, y, **fit_params)
        seconds = clock() - start
    return TimedFit(seconds, list(caught))
