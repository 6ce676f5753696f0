"""Nested R-hat: do groups of chains (superchains) agree? Chains first, as :func:`rhat`."""

import numpy as np

from ._convergence import _as_chains, _rank_normalize, _shape_out

__all__ = ["nested_rhat"]


def _superchain_labels(superchains, n_chains):
    """``(n_superchains, order)``: the chains of each superchain, consecutive after ``order``."""
    if superchains is None:
        return n_chains, np.arange(n_chains)
    if np.ndim(superchains) == 0:
        k = int(superchains)
        if k != superchains or k < 2 or n_chains % k:
            raise ValueError(
                f"superchains as an int is the number of superchains of equal size, at least 2 and a divisor "
                f"of the {n_chains} chains; got {superchains!r}."
            )
        return k, np.arange(n_chains)
    labels = np.asarray(superchains)
    if labels.shape != (n_chains,):
        raise ValueError(f"superchains gives one label per chain: shape ({n_chains},), got {labels.shape}.")
    names, counts = np.unique(labels, return_counts=True)
    if len(names) < 2 or counts.min() != counts.max():
        raise ValueError(
            f"superchains must name at least 2 superchains with the same number of chains each; got "
            f"{dict(zip(names.tolist(), counts.tolist()))}."
        )
    return len(names), np.argsort(labels, kind="stable")


def nested_rhat(x, superchains=None, *, rank_normalize=False):
    r"""Nested R-hat of chains grouped into superchains (Margossian et al., 2024).

    The chains of one superchain start from the same point, so a
    superchain forgets its start only when its chains' spread reaches the
    target's: nested R-hat compares the variance between superchain means
    with the variance inside a superchain (its chains' spread plus their
    within-chain variance), and stays meaningful for many short chains, even
    of one draw each. With ``K`` superchains of ``M`` chains of ``N`` draws,

    .. math::

        \hat B_\nu = \frac{1}{K-1} \sum_k (\bar\theta_{..k} - \bar\theta_{...})^2,
        \quad
        \hat W_\nu = \frac1K \sum_k \big(\tilde B_k + \tilde W_k\big),
        \quad
        \mathfrak{n}\hat R = \sqrt{1 + \hat B_\nu / \hat W_\nu},

    with :math:`\tilde B_k` the variance (divisor ``M - 1``, 0 when ``M =
    1``) of the chain means of superchain ``k`` and :math:`\tilde W_k` the
    mean over its chains of their variances (divisor ``N - 1``, 0 when ``N
    = 1``).

    With one chain per superchain (``M = 1``, the default) it is the R-hat
    of Gelman and Rubin on chains that are not split, without the ``(N - 1)
    / N`` factor of its within-chain term: :math:`\mathfrak{n}\hat R^2 =
    \hat R^2 + 1/N`. The halves of chains of ``2 h`` draws, each half its
    own superchain, give ``sqrt(rhat(x, method="split")**2 + 1 / h)``.

    Parameters
    ----------
    x : array-like of shape (n_chains, n_draws, ...)
        Draws, chains first; every trailing index is a separate quantity.
        All finite; one draw per chain is allowed when superchains hold
        several chains.
    superchains : None, int or array-like of shape (n_chains,), default=None
        None: every chain its own superchain. An int ``K``: ``K``
        superchains of consecutive chains (chains ``0 .. n_chains/K - 1``
        form the first). An array: the superchain label of each chain;
        every superchain must hold the same number of chains.
    rank_normalize : bool, default=False
        Replace the draws by the normal scores of their ranks pooled over
        all chains first (Vehtari et al., 2021), so that the value depends
        on the draws' order only and is defined for heavy tails.

    Returns
    -------
    float or ndarray of shape ``x.shape[2:]``
        At least 1; close to 1 when the superchains agree. Margossian et
        al. suggest ``1 + delta`` with a small ``delta`` (0.01 for many
        superchains) as the threshold. NaN where the within-superchain
        variance is 0.

    References
    ----------
    Margossian, C. C., Hoffman, M. D., Sountsov, P., Riou-Durand, L.,
    Vehtari, A., Gelman, A. (2024). Nested R-hat: assessing the convergence
    of Markov chain Monte Carlo when running many short chains. Bayesian
    Anal.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(size=(8, 50))
    >>> bool(abs(nested_rhat(x, superchains=4) - 1) < 0.01)
    True
    >>> x[:2] += 3.0                       # the first superchain elsewhere
    >>> bool(nested_rhat(x, superchains=4) > 1.2)
    True
    >>> from skgibbs.diagnostics import rhat
    >>> halves = np.concatenate([x[:, :25], x[:, 25:]])
    >>> bool(np.isclose(nested_rhat(halves), np.sqrt(rhat(x, method="split") ** 2 + 1 / 25)))
    True
    """
    x = np.asarray(x, dtype=float)
    if x.ndim < 2:
        raise ValueError(f"x holds chains first, shape (n_chains, n_draws, ...); got shape {x.shape}.")
    x, trailing = _as_chains(x, min_draws=1)
    n_chains, n_draws, _ = x.shape
    K, order = _superchain_labels(superchains, n_chains)
    M = n_chains // K
    if M == 1 and n_draws < 2:
        raise ValueError("With one chain per superchain every chain needs at least 2 draws.")
    if rank_normalize:
        x = _rank_normalize(x)
    x = x[order].reshape(K, M, n_draws, -1)
    chain_means = x.mean(2)  # (K, M, P)
    within = x.var(2, ddof=1).mean(1) if n_draws > 1 else 0.0  # W~_k
    spread = chain_means.var(1, ddof=1) if M > 1 else 0.0  # B~_k
    between = chain_means.mean(1).var(0, ddof=1)  # B_nu
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.sqrt(1.0 + between / np.mean(within + spread, axis=0))
    return _shape_out(value, trailing)
