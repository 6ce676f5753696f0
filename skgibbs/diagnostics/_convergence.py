"""Effective sample size and R-hat of several chains, chains first: ``x`` of shape ``(n_chains, n_draws, ...)``."""

import numpy as np
from scipy.special import ndtri

from ._spectral import _as_chain, autocovariance

__all__ = ["effective_sample_size", "ess", "rhat", "average_ranks", "rank_rhat_and_ess"]


def _as_chains(x, min_draws=4):
    """``(m, n, P)`` view of chains-first draws and the trailing shape."""
    x = np.asarray(x, dtype=float)
    x = x[None] if x.ndim == 1 else x
    _as_chain(x, min_draws, axis=1)
    return x.reshape(x.shape[0], x.shape[1], -1), x.shape[2:]


def _split(x):
    """Each chain cut into its first and last half (the middle draw of an odd length is dropped)."""
    half = x.shape[1] // 2
    return np.concatenate([x[:, :half], x[:, -half:]], axis=0)


def average_ranks(x):
    """Ranks from 1 of each column of ``x`` (shape ``(N, p)``), ties given their average rank.

    :func:`scipy.stats.rankdata` with ``axis=0`` to the bit, NaN included (a
    column holding one is NaN throughout), in a fraction of its time: one
    sort per column, the ties found on the sorted values (rankdata's
    handling of them cost about 17 times the sort on the function values of
    a classifier's draws, 1,404 draws of 13,470 columns).

    Examples
    --------
    >>> average_ranks(np.array([[3.0, 1.0], [1.0, 1.0], [2.0, 5.0], [1.0, 2.0]]))
    array([[4. , 1.5],
           [1.5, 1.5],
           [3. , 4. ],
           [1.5, 3. ]])
    """
    x = np.asarray(x, dtype=float)
    N, p = x.shape
    rows = np.ascontiguousarray(x.T)  # one column a row: the sort and the scans run on contiguous memory
    order = np.argsort(rows, axis=1)
    s = np.take_along_axis(rows, order, axis=1)
    ranks = np.empty((p, N))
    np.put_along_axis(ranks, order, np.broadcast_to(np.arange(1.0, N + 1.0), (p, N)), axis=1)
    # a tie group runs from the first sorted value equal to it to the last: its average position, plus 1
    tied = (s[:, 1:] == s[:, :-1]).any(1)
    if tied.any():
        st, od = s[tied], order[tied]
        position = np.arange(N, dtype=float)
        starts = np.ones(st.shape, dtype=bool)
        np.not_equal(st[:, 1:], st[:, :-1], out=starts[:, 1:])
        first = np.maximum.accumulate(np.where(starts, position, 0.0), axis=1)
        ends = np.ones(st.shape, dtype=bool)
        ends[:, :-1] = starts[:, 1:]
        last = np.minimum.accumulate(np.where(ends, position, N - 1.0)[:, ::-1], axis=1)[:, ::-1]
        sub = np.empty(st.shape)
        np.put_along_axis(sub, od, (first + last) / 2.0 + 1.0, axis=1)
        ranks[tied] = sub
    bad = np.isnan(rows).any(1)
    if bad.any():
        ranks[bad] = np.nan
    return ranks.T


def _rank_normalize(x):
    """Normal scores of the ranks pooled over all chains (Vehtari et al., 2021, eq. 14)."""
    m, n, p = x.shape
    N = m * n
    ranks = average_ranks(x.reshape(N, p))  # ties get their average rank
    if np.isnan(ranks).any():
        return ndtri((ranks - 0.375) / (N + 0.25)).reshape(m, n, p)
    # a rank is a multiple of 1/2 from 1 to N: the scores of the 2N + 1 halves, looked up (the same values)
    halves = np.arange(2 * N + 1) / 2.0
    table = ndtri((halves - 0.375) / (N + 0.25))
    return table[(2.0 * ranks).astype(np.intp)].reshape(m, n, p)


def _shape_out(values, trailing):
    values = values.reshape(trailing)
    return float(values) if values.ndim == 0 else values


def _ess(x):
    """Multi-chain ESS of each column of ``x`` (m, n, P), as Stan computes it."""
    m, n, p = x.shape
    acov = autocovariance(np.moveaxis(x, 1, 0))  # (n, m, P), divisor n
    within = acov[0].mean(0) * n / (n - 1)  # W: mean of the chains' variances
    var_plus = within * (n - 1) / n + (x.mean(1).var(0, ddof=1) if m > 1 else 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = 1.0 - (within - acov.mean(1)) / var_plus  # combined autocorrelation
    rho[0] = 1.0
    # Geyer (1992): sums of adjacent pairs are positive and non-increasing for
    # a reversible chain; keep the pairs before the first non-positive one
    # and replace them by their running minimum.
    n_pairs = (n - 1) // 2
    pairs = rho[: 2 * n_pairs].reshape(n_pairs, 2, p).sum(1)
    stop = pairs <= 0
    stop[0] = False
    last = np.where(stop.any(0), stop.argmax(0), n_pairs - 1)
    kept = np.arange(n_pairs)[:, None] < last
    tau = -1.0 + 2.0 * np.where(kept, np.minimum.accumulate(pairs, axis=0), 0.0).sum(0)
    # the even term of the truncating pair still counts where it is positive
    cols = np.arange(p)
    even = rho[2 * last, cols]
    tau = tau + np.where(pairs[last, cols] > 0, even, np.maximum(even, 0.0))
    tau = np.maximum(tau, 1.0 / np.log10(m * n))
    return np.where(var_plus > 0, m * n / tau, np.nan)


def effective_sample_size(x, *, split=False, rank_normalize=False):
    """Effective sample size of the mean over one or several chains.

    The multi-chain estimator of Stan and ArviZ: the autocorrelation at lag
    ``t`` combines the chains as ``1 - (W - mean_j acov_j(t)) / var_plus``,
    with ``W`` the mean within-chain variance and ``var_plus`` the pooled
    variance estimate of the split-R-hat; the sum of autocorrelations is
    truncated by Geyer's initial positive sequence and made monotone by his
    initial monotone sequence, and ``ESS = m n / tau``.

    Parameters
    ----------
    x : array-like of shape (n_draws,), (n_chains, n_draws) or (n_chains, n_draws, ...)
        Draws, chains first; every trailing index is a separate quantity.
        At least 4 draws per chain, all finite.
    split : bool, default=False
        Cut every chain in halves first, so that a drift within a chain
        lowers the ESS (ArviZ's ``method="mean"`` / ``"bulk"``).
    rank_normalize : bool, default=False
        Replace the draws by the normal scores of their pooled ranks first
        (Vehtari et al., 2021): the "bulk" ESS, defined for heavy tails.
        ``split=True, rank_normalize=True`` is ArviZ's default ``"bulk"``.

    Returns
    -------
    float or ndarray of shape ``x.shape[2:]``
        NaN for a series that is constant over all chains.

    References
    ----------
    Geyer, C. J. (1992). Practical Markov chain Monte Carlo. Statist. Sci. 7.
    Vehtari, A., Gelman, A., Simpson, D., Carpenter, B., Bürkner, P.-C.
    (2021). Rank-normalization, folding, and localization: an improved
    R-hat for assessing convergence of MCMC. Bayesian Anal. 16.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(4, 1000))             # independent draws: ESS about m n
    >>> bool(3600 < effective_sample_size(x) < 4400)
    True
    >>> e = effective_sample_size(np.stack([x, np.cumsum(x, axis=1)], axis=-1))
    >>> e.shape, bool(e[1] < 10)                   # a random walk: almost no information
    ((2,), True)
    """
    x, trailing = _as_chains(x, min_draws=8 if split else 4)  # split halves need 4 draws each
    if split:
        x = _split(x)
    if rank_normalize:
        x = _rank_normalize(x)
    return _shape_out(_ess(x), trailing)


ess = effective_sample_size


def _rhat(x):
    n = x.shape[1]
    between = n * x.mean(1).var(0, ddof=1)
    within = x.var(1, ddof=1).mean(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt(((n - 1) / n * within + between / n) / within)


def rhat(x, *, method="rank"):
    """Potential scale reduction factor R-hat of several chains.

    ``R = sqrt(var_plus / W)`` with ``W`` the mean within-chain variance and
    ``var_plus = (n - 1) / n W + B / n`` (``B / n`` the variance of the chain
    means), computed on the chains cut in halves (split-R-hat, Gelman et al.,
    BDA3 §11.4).

    Parameters
    ----------
    x : array-like of shape (n_draws,) or (n_chains, n_draws, ...)
        Draws, chains first; every trailing index is a separate quantity.
        At least 4 draws per chain, all finite.
    method : {"rank", "split"}, default="rank"
        ``"split"``: the split-R-hat of BDA3 on the raw draws.
        ``"rank"``: the rank-normalised split-R-hat of Vehtari et al.
        (2021), the larger of the split-R-hat of the rank-normalised draws
        (bulk) and of the rank-normalised distances to the median (tails),
        as Stan and ArviZ (default) report it.

    Returns
    -------
    float or ndarray of shape ``x.shape[2:]``
        Close to 1 when the chains agree; above 1.01 is the warning level
        Vehtari et al. recommend. NaN for a constant series.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(size=(4, 1000))
    >>> round(rhat(x), 2)
    1.0
    >>> x[0] += 2.0                                  # one chain elsewhere
    >>> bool(rhat(x) > 1.1)
    True
    """
    if method not in ("rank", "split"):
        raise ValueError(f"method must be 'rank' or 'split', got {method!r}.")
    x, trailing = _as_chains(x)
    x = _split(x)
    if method == "split":
        return _shape_out(_rhat(x), trailing)
    return _shape_out(_rank_rhat(x, _rank_normalize(x)), trailing)


def _rank_rhat(halves, bulk):
    """The rank-normalised R-hat of split chains ``halves`` whose normal scores are ``bulk``: the larger of
    the bulk R-hat and that of the scores of the distances to the median (the tails)."""
    folded = np.abs(halves - np.median(halves.reshape(-1, halves.shape[2]), axis=0))
    return np.fmax(_rhat(bulk), _rhat(_rank_normalize(folded)))


def rank_rhat_and_ess(x, scores=True):
    """``rhat(x)``, ``effective_sample_size(x, split=True, rank_normalize=True)`` and the pooled normal scores.

    The first two to the bit, with two rank transforms where the two calls
    make three (and one more for the scores when the number of draws is
    odd); the third, the normal scores of ``x``'s ranks pooled over
    its chains (shape ``(n_chains, n_draws, P)``), is what
    :func:`~skgibbs.diagnostics.nested_rhat` with ``rank_normalize=True``
    computes first, so that passing it with ``rank_normalize=False`` gives
    that value without a fourth. With an even number of draws the split
    chains hold the same values as the whole ones, so their scores are the
    whole ones' cut in halves; with an odd number the middle draw is
    dropped and they are computed again (and, with ``scores`` False,
    the whole ones' are not computed, and None is returned for them). At
    least 8 draws per chain.

    Examples
    --------
    >>> x = np.random.default_rng(0).normal(size=(4, 101, 3))
    >>> r, e, z = rank_rhat_and_ess(x)
    >>> bool(np.array_equal(r, rhat(x))), bool(np.array_equal(e, ess(x, split=True, rank_normalize=True)))
    (True, True)
    """
    x, trailing = _as_chains(x, min_draws=8)
    n = x.shape[1]
    halves = _split(x)
    z = _rank_normalize(x) if scores or n % 2 == 0 else None
    bulk = _split(z) if n % 2 == 0 else _rank_normalize(halves)
    return _shape_out(_rank_rhat(halves, bulk), trailing), _shape_out(_ess(bulk), trailing), z
