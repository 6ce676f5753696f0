"""Embeddings of numeric inputs, the ``embedding`` setting of the dense estimators.

On tabular data an MLP on standardized inputs fits irregular functions of a
single input poorly; embedding each input first, piecewise-linearly on
quantile bins or by periodic functions of learned frequencies, closes much
of the gap to gradient-boosted trees (Gorishniy, Rubachev and Babenko, 2022).
Here the embedding is the first layer of the network
(:class:`~skgibbs.model.NumericEmbedding`): its weights, and the periodic
embedding's frequencies, are parameters of ``theta`` under the prior and the
posterior like every other weight, sampled by whichever sampler the
estimator runs. Only the piecewise-linear encoding's bin edges are fitted
before sampling: quantiles of each training input, fixed for the fit.

``embedding="piecewise"`` and ``embedding="periodic"`` stand for
:class:`PiecewiseLinearEmbedding` and :class:`PeriodicEmbedding` with their
defaults; ``GridSearchCV`` reaches an object's settings as
``embedding__n_bins``.

References
----------
Gorishniy, Rubachev and Babenko, *On Embeddings for Numerical Features in
Tabular Deep Learning*, NeurIPS 2022.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator

from ._compat import Interval
from .model import NumericEmbedding

__all__ = ["PiecewiseLinearEmbedding", "PeriodicEmbedding", "quantile_bins", "resolve_embedding"]

#: rows the bin edges are computed on, at most (evenly spaced rows of a larger ``X``)
BIN_ROWS = 100_000


def quantile_bins(X, n_bins):
    """The edges of ``n_bins`` quantile bins of every column of ``X``.

    The ``0, 1 / n_bins, ..., 1`` quantiles with repeated values merged, so
    that a column with few distinct values (a count, a binary flag) has
    fewer bins, and a constant column none.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    n_bins : int

    Returns
    -------
    list of ndarray
        Increasing edges per column, at most ``n_bins + 1`` each.

    Examples
    --------
    >>> X = np.column_stack([np.arange(9.0), np.r_[np.zeros(6), np.ones(3)]])
    >>> [e.tolist() for e in quantile_bins(X, 4)]
    [[0.0, 2.0, 4.0, 6.0, 8.0], [0.0, 1.0]]
    """
    q = np.quantile(X, np.linspace(0.0, 1.0, n_bins + 1), axis=0)
    return [np.unique(q[:, j]) for j in range(X.shape[1])]


def _training_rows(X):
    """At most :data:`BIN_ROWS` evenly spaced rows of ``X`` (ndarray, memmap rows or dask rows) as NumPy."""
    n = X.shape[0]
    if n <= BIN_ROWS:
        return np.asarray(X[0:n], dtype=np.float64)
    return np.asarray(X[np.unique(np.linspace(0, n - 1, BIN_ROWS).astype(np.int64))], dtype=np.float64)


class PiecewiseLinearEmbedding(BaseEstimator):
    """Piecewise-linear encoding of each input on its quantile bins, then a linear layer and a ReLU.

    Input ``j`` with bin edges ``e_0 < ... < e_T`` (quantiles of the
    training values, fitted in ``fit``) is encoded as
    ``phi_t(x) = clip((x - e_{t-1}) / (e_t - e_{t-1}), 0, 1)``, ``t = 1..T``
    (linear beyond the outer edges), and embedded as
    ``relu(phi(x) W_j + b_j)`` with ``W_j`` of shape ``(n_bins,
    d_embedding)``. ``W_j`` and ``b_j`` are parameters of the network with
    the prior ``N(0, 1 / n_bins)`` of ``prior_std="auto"``.

    Parameters
    ----------
    n_bins : int, default=8
        Quantile bins per input (fewer for an input with fewer distinct
        values).
    d_embedding : int, default=8
        Width of each input's embedding: the first dense layer reads
        ``n_features * d_embedding`` values.

    Examples
    --------
    >>> import numpy as np
    >>> from skgibbs import GibbsMLPRegressor
    >>> from skgibbs.embeddings import PiecewiseLinearEmbedding
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2))
    >>> y = np.abs(X[:, 0]) + 0.1 * rng.normal(size=60)
    >>> reg = GibbsMLPRegressor(hidden_layer_sizes=(8,), embedding=PiecewiseLinearEmbedding(n_bins=4),
    ...                         sampler="mala", n_samples=10, burn_in=20, pretrain_iter=50,
    ...                         random_state=0).fit(X, y)
    >>> reg.embedding_bins_[0].shape
    (5,)
    """

    _parameter_constraints = {
        "n_bins": [Interval(Integral, 1, None, closed="left")],
        "d_embedding": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_bins=8, d_embedding=8):
        self.n_bins = n_bins
        self.d_embedding = d_embedding

    def build(self, X, x_mean, x_scale):
        """The network's embedding for training inputs ``X`` (unscaled): bins on the standardized scale.

        Returns
        -------
        embedding : NumericEmbedding
        bins : list of ndarray
            The edges on the scale of ``X`` (``embedding_bins_``).
        """
        self._validate_params()
        bins = quantile_bins(_training_rows(X), int(self.n_bins))
        edges = tuple(tuple(float(v) for v in (e - m) / s) for e, m, s in zip(bins, x_mean, x_scale))
        emb = NumericEmbedding("piecewise", X.shape[1], int(self.n_bins), int(self.d_embedding), edges=edges)
        return emb, bins


class PeriodicEmbedding(BaseEstimator):
    """Periodic embedding of each input: sines and cosines of learned frequencies, a linear layer, a ReLU.

    Input ``j`` (standardized) is encoded as
    ``phi(x) = [sin(2 pi c_j x), cos(2 pi c_j x)]`` with ``n_frequencies``
    frequencies ``c_j`` and embedded as ``relu(phi(x) W_j + b_j)`` (the
    "PLR" embedding of Gorishniy et al., 2022). The frequencies, ``W_j`` and
    ``b_j`` are all parameters of the network: under ``prior_std="auto"``
    the frequencies have the prior ``N(0, frequency_scale^2)`` and the
    weights ``N(0, 1 / (2 n_frequencies))``.

    Parameters
    ----------
    n_frequencies : int, default=8
        Frequencies per input.
    frequency_scale : float, default=1.0
        Prior standard deviation of the frequencies (cycles per standard
        deviation of the input); the paper's sigma, its most sensitive
        setting.
    d_embedding : int, default=8
        Width of each input's embedding.
    """

    _parameter_constraints = {
        "n_frequencies": [Interval(Integral, 1, None, closed="left")],
        "frequency_scale": [Interval(Real, 0, None, closed="neither")],
        "d_embedding": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_frequencies=8, frequency_scale=1.0, d_embedding=8):
        self.n_frequencies = n_frequencies
        self.frequency_scale = frequency_scale
        self.d_embedding = d_embedding

    def build(self, X, x_mean, x_scale):
        """The network's embedding for training inputs ``X``; no bins (None)."""
        self._validate_params()
        emb = NumericEmbedding(
            "periodic",
            X.shape[1],
            int(self.n_frequencies),
            int(self.d_embedding),
            frequency_scale=float(self.frequency_scale),
        )
        return emb, None


#: the names ``embedding`` accepts
EMBEDDINGS = {"piecewise": PiecewiseLinearEmbedding, "periodic": PeriodicEmbedding}


def resolve_embedding(value):
    """The embedding object ``embedding=value`` stands for: None, a name's default object, or ``value``."""
    if value is None:
        return None
    if isinstance(value, str):
        return EMBEDDINGS[value]()
    return value
