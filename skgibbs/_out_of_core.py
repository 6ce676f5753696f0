"""Training data larger than memory: rows of a NumPy memmap or a ``dask.array``, read when needed.

``fit`` takes ``X`` as a :class:`numpy.memmap` (``np.load(path,
mmap_mode="r")``) or a :class:`dask.array.Array` without copying it
(:doc:`/developers`, Performance rules): :func:`check_lazy_fit_data` scans
``X`` once, block by block, for the column means and standard deviations
(float64 accumulation) and for NaN or inf, and reads ``y`` into memory (one
number per row). The scan gives a :class:`RowSource`, which slices like
``X`` (``X[a:b]``, float64 NumPy rows, for the summaries after the fit); its
:meth:`RowSource.standardized` rows (:class:`ScaledRows`) index like the
standardized float32 tensor of an in-memory fit, so that the pre-training
and the potential gather their batches from it and read only those rows.

dask is optional and only imported when ``X`` already is a dask array.
"""

import sys

import numpy as np
import torch
from sklearn.utils.validation import column_or_1d

__all__ = ["RowSource", "ScaledRows", "check_lazy_fit_data", "is_lazy", "read_rows", "validate_lazy_fit_data"]

#: a memmap is scanned in blocks of about this many bytes of float64 (a dask array in its own chunks)
BLOCK_BYTES = 2**25


def _is_dask(a):
    da = sys.modules.get("dask.array")  # an object cannot be a dask array unless dask is imported
    return da is not None and isinstance(a, da.Array)


def is_lazy(a):
    """Whether ``a`` is data that ``fit`` reads in blocks: a NumPy memmap or a dask array."""
    return isinstance(a, np.memmap) or _is_dask(a)


def _blocks(a, name="X"):
    """``(start, stop)`` of the row blocks of ``a``: dask's chunks, or about :data:`BLOCK_BYTES` each."""
    if _is_dask(a) and any(np.isnan(c) for c in a.chunks[0]):
        raise ValueError(
            f"{name} is a dask array of unknown chunk sizes; call {name}.compute_chunk_sizes() before fit."
        )
    n = a.shape[0]
    if _is_dask(a):
        stops = np.cumsum(a.chunks[0]).astype(int).tolist()
        return list(zip([0] + stops[:-1], stops))
    width = int(np.prod(a.shape[1:], dtype=np.int64)) if a.ndim > 1 else 1
    step = max(1, BLOCK_BYTES // (8 * max(width, 1)))
    return [(start, min(start + step, n)) for start in range(0, n, step)]


def read_rows(a, start, stop, dtype=np.float64):
    """Rows ``start:stop`` of a memmap or dask array as an in-memory NumPy array."""
    return np.asarray(a[start:stop], dtype=dtype)


def _block_moments(block):
    """``(count, mean, M2, first non-finite (row, column) or None)`` of a float64 block ``(m, d)``."""
    finite = np.isfinite(block)
    if not finite.all():
        row, col = np.argwhere(~finite)[0]
        return len(block), None, None, (int(row), int(col))
    # the same operations as ndarray.mean and ndarray.std, so that one block gives their values exactly
    mean = block.sum(0) / len(block)
    dev = block - mean
    np.multiply(dev, dev, out=dev)
    return len(block), mean, dev.sum(0), None


def _bad_block(name, index, start, stop, where, what):
    row, col = where
    at = f"row {start + row:,}" + ("" if col is None else f", column {col}")
    return ValueError(
        f"{name} has {what} in rows {start:,}-{stop - 1:,} (block {index}); the first at {at}. Remove or "
        f"impute those rows before fit (nothing was fitted)."
    )


def _scan(X):
    """Column means and standard deviations of ``X`` in one pass, refusing NaN and inf by block.

    Blocks are combined by the parallel update of Chan, Golub and LeVeque
    (1979), in float64.
    """
    spans = _blocks(X)
    if _is_dask(X):
        import dask

        parts = dask.compute(*[dask.delayed(_block_moments)(X[a:b].astype(np.float64)) for a, b in spans])
    else:
        parts = (_block_moments(read_rows(X, a, b)) for a, b in spans)
    count, mean, m2 = 0, None, None
    for index, ((start, stop), (c, mu, m2_block, bad)) in enumerate(zip(spans, parts)):
        if bad is not None:
            raise _bad_block("X", index, start, stop, bad, "a NaN or inf")
        if mean is None:
            count, mean, m2 = c, mu, m2_block
            continue
        total = count + c
        delta = mu - mean
        mean = mean + delta * (c / total)
        m2 = m2 + m2_block + delta * delta * (count * c / total)
        count = total
    return mean, np.sqrt(m2 / count)


class RowSource:
    """``X`` of a fit as it is stored (a memmap or dask array), scanned once.

    Slicing gives float64 NumPy rows (``X[a:b]``), ``mean(0)`` and
    ``std(0)`` the scanned column statistics, and ``np.asarray`` the whole
    array (only for code that needs it whole).

    Parameters
    ----------
    data : numpy.memmap or dask.array.Array of shape (n_samples, n_features)
        Numeric and finite (checked block by block: a ``ValueError`` names
        the first block with a NaN or inf).
    """

    dtype = np.dtype(np.float64)
    ndim = 2

    def __init__(self, data):
        self.data = data
        self.shape = tuple(int(s) for s in data.shape)
        self._mean, self._std = _scan(data)

    def __len__(self):
        return self.shape[0]

    def __getitem__(self, key):
        return np.asarray(self.data[key], dtype=np.float64)

    def __array__(self, dtype=None, copy=None):
        whole = np.empty(self.shape, dtype=np.float64 if dtype is None else dtype)
        for start, stop in _blocks(self.data):
            whole[start:stop] = read_rows(self.data, start, stop)
        return whole

    def _statistic(self, value, axis):
        if axis != 0:
            raise ValueError("only the column statistics (axis=0) of the rows are known.")
        return value.copy()

    def mean(self, axis=None):
        """Column means, shape ``(n_features,)``."""
        return self._statistic(self._mean, axis)

    def std(self, axis=None):
        """Column standard deviations (``ddof=0``), shape ``(n_features,)``."""
        return self._statistic(self._std, axis)

    def weighted_moments(self, weight):
        """Column means and standard deviations weighted by ``weight`` ``(n,)``, in one more pass over the blocks.

        Sums of ``w (x - m)`` and ``w (x - m)^2`` about the unweighted means
        ``m`` of the first scan, in float64.
        """
        w = np.asarray(weight, dtype=np.float64)
        first = second = 0.0
        for start, stop in _blocks(self.data):
            dev = read_rows(self.data, start, stop) - self._mean
            wb = w[start:stop]
            first = first + wb @ dev
            second = second + wb @ (dev * dev)
        total = w.sum()
        shift = first / total
        return self._mean + shift, np.sqrt(np.maximum(second / total - shift * shift, 0.0))

    def standardized(self, mean, scale, device="cpu"):
        """``(X - mean) / scale`` as float32 torch rows read on demand (:class:`ScaledRows`)."""
        return ScaledRows(self.data, mean, scale, device)


class ScaledRows:
    """``(X - mean) / scale`` in float32 torch rows, read from ``X`` only where indexed.

    Indexing with a LongTensor ``idx`` of any shape gives the rows of shape
    ``(*idx.shape, d)`` (:meth:`take`); a slice gives a block of rows. The
    arithmetic is the in-memory fit's (float64, then rounded to float32), so
    both see the same numbers.

    Parameters
    ----------
    data : numpy.memmap or dask.array.Array of shape (n, d)
    mean, scale : ndarray of shape (d,)
    device : str or torch.device, default="cpu"
        Where the rows go; they are read and scaled on the CPU.
    """

    dtype = torch.float32

    def __init__(self, data, mean, scale, device="cpu"):
        self.data = data
        self.mean = np.asarray(mean, dtype=np.float64)
        self.scale = np.asarray(scale, dtype=np.float64)
        self.device = torch.device(device)
        self.shape = torch.Size(int(s) for s in data.shape)

    def __len__(self):
        return self.shape[0]

    def dim(self):
        return 2

    def _scaled(self, raw):
        scaled = (np.asarray(raw, dtype=np.float64) - self.mean) / self.scale
        return torch.as_tensor(scaled, dtype=torch.float32)

    def rows(self, start, stop):
        """Rows ``start:stop``, shape ``(stop - start, d)``."""
        return self._scaled(self.data[start:stop]).to(self.device)

    def take(self, idx):
        """The rows ``idx`` (a LongTensor of shape ``(m,)`` or ``(K, m)``), shape ``(*idx.shape, d)``.

        A run of consecutive rows is read as one slice. Several chains'
        index sets are merged first, so that a row they share is read once
        (the full-data chunks of :meth:`MLPPotential.mean_loss
        <skgibbs.potential.MLPPotential.mean_loss>` are one run repeated per
        chain). A single index set is read as it is: on a memmap, sorting
        it first cost more than it saved (``benchmarks/perf/bench_memmap.py``).
        """
        flat = idx.reshape(-1).cpu().numpy()
        inverse = None
        if idx.dim() > 1 and idx.shape[0] > 1:
            flat, inverse = np.unique(flat, return_inverse=True)
        if len(flat) > 1 and flat[-1] - flat[0] + 1 == len(flat) and bool((np.diff(flat) == 1).all()):
            raw = self.data[int(flat[0]) : int(flat[-1]) + 1]
        else:
            raw = self.data[flat]
        rows = self._scaled(raw)
        if inverse is not None:
            rows = rows[torch.from_numpy(inverse.reshape(-1))]
        return rows.reshape(*idx.shape, self.shape[1]).to(self.device)

    def __getitem__(self, key):
        if isinstance(key, slice):
            start, stop, step = key.indices(self.shape[0])
            if step == 1:
                return self.rows(start, stop)
            key = torch.arange(start, stop, step)
        return self.take(torch.as_tensor(key, dtype=torch.long))


def _first_bad_row(block):
    bad = ~np.isfinite(block.reshape(len(block), -1)).all(1)
    return int(np.argmax(bad)) if bad.any() else None


def _read_targets(y, n, numeric):
    """``y`` in memory, 1-D, one entry per row, finite when it holds floats (checked by block when lazy)."""
    dtype = np.float64 if numeric else None
    if is_lazy(y) and y.ndim > 0:
        parts = []
        for index, (start, stop) in enumerate(_blocks(y, "y")):
            parts.append(np.asarray(y[start:stop], dtype=dtype))
            row = _first_bad_row(parts[-1]) if parts[-1].dtype.kind == "f" else None
            if row is not None:
                raise _bad_block("y", index, start, stop, (row, None), "a NaN or inf")
        y = np.concatenate(parts)
    y = column_or_1d(np.asarray(y, dtype=dtype), warn=True)
    if y.dtype.kind == "f" and _first_bad_row(y) is not None:
        raise ValueError(f"Input y contains NaN or infinity (first at row {_first_bad_row(y):,}).")
    if len(y) != n:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: [{n}, {len(y)}]")
    return y


def validate_lazy_fit_data(X, y, y_numeric=True):
    """``validate_data``'s checks and the input attributes for a memmap or dask ``X``, which is not copied.

    ``(X, y, {"n_features_in_": ...})`` as :func:`~skgibbs._data.validate_fit_data`
    returns them (an array has no column names): :func:`check_lazy_fit_data`.
    """
    X, y = check_lazy_fit_data(X, y, y_numeric=y_numeric)
    return X, y, {"n_features_in_": X.shape[1]}


def check_lazy_fit_data(X, y, y_numeric=True):
    """``(RowSource(X), y)``: the checks of ``validate_data`` without a copy of ``X``.

    ``X`` must be 2-D, numeric, non-empty and finite (checked by block);
    ``y`` is read into memory as a 1-D array (float64 with ``y_numeric``),
    finite, one entry per row of ``X``.

    Parameters
    ----------
    X : numpy.memmap or dask.array.Array of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    y_numeric : bool, default=True

    Returns
    -------
    X : RowSource
    y : ndarray of shape (n_samples,)
    """
    if X.ndim != 2:
        raise ValueError(
            f"Expected a 2D array, got a {X.ndim}D {type(X).__name__} of shape {X.shape}; reshape it to "
            "(n_samples, n_features)."
        )
    if X.dtype.kind not in "biuf":
        raise ValueError(f"X must hold numbers only, got dtype {X.dtype}.")
    n, d = X.shape
    if n == 0 or d == 0:
        raise ValueError(
            f"Found array with {n} sample(s) and {d} feature(s) (shape={X.shape}); fit needs at least one "
            "of each."
        )
    y = _read_targets(y, n, y_numeric)
    return RowSource(X), y
