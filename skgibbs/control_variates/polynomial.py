r"""Polynomial Stein control variates: the baseline of paper 003's Table 2.

``phi(x) = sum_alpha beta_alpha u^alpha`` over all monomials of degree
``1..k`` in the standardized coordinates ``u = (x - m) / s`` (the constant
has ``g = 0``). The Stein operator (3.3) is linear in ``beta``:
``g_phi = G beta`` with ``G[:, alpha] = Laplacian u^alpha + <grad log pi,
grad u^alpha>``, so the ESVM objective ``V_n(f - G beta)`` is a quadratic in
``beta`` and is minimised exactly by a linear solve.
"""

from itertools import combinations_with_replacement
from numbers import Integral, Real

import numpy as np
import scipy.linalg

from .._compat import Interval, StrOptions
from .._warnings import warn
from ..exceptions import ControlVariateWarning
from ._base import COMMON_CONSTRAINTS, _SteinControlVariate
from .esvm import windowed

__all__ = ["monomial_exponents", "polynomial_stein_features", "PolynomialControlVariate"]


def monomial_exponents(n_features, degree):
    """Exponents of all monomials of degree ``1..degree`` in ``n_features`` variables.

    Parameters
    ----------
    n_features : int
    degree : int

    Returns
    -------
    ndarray of shape (n_terms, n_features)
        ``n_terms = C(n_features + degree, degree) - 1``, ordered by degree.

    Examples
    --------
    >>> monomial_exponents(2, 2).tolist()
    [[1, 0], [0, 1], [2, 0], [1, 1], [0, 2]]
    """
    rows = []
    for k in range(1, degree + 1):
        for combo in combinations_with_replacement(range(n_features), k):
            rows.append(np.bincount(combo, minlength=n_features))
    return np.array(rows, dtype=int).reshape(-1, n_features)


def polynomial_stein_features(X, score, exponents, x_mean=None, x_scale=None):
    r"""Stein operator (3.3) of each monomial ``u^alpha``, ``u = (x - x_mean) / x_scale``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    score : ndarray of shape (n, d)
        ``grad log pi`` at ``X``.
    exponents : ndarray of shape (n_terms, d)
        See :func:`monomial_exponents`.
    x_mean, x_scale : ndarray of shape (d,), default=None
        Standardization; 0 and 1 when None.

    Returns
    -------
    ndarray of shape (n, n_terms)

    Notes
    -----
    With ``F_j = u_j^{alpha_j}`` and ``O_k = prod_{j != k} F_j``:
    ``d u^alpha / d x_k = alpha_k u_k^{alpha_k - 1} O_k / s_k`` and
    ``d^2 u^alpha / d x_k^2 = alpha_k (alpha_k - 1) u_k^{alpha_k - 2} O_k / s_k^2``,
    all terms at once by prefix and suffix products over the coordinates.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[2.0, 3.0]])
    >>> polynomial_stein_features(X, -X, monomial_exponents(2, 2))   # N(0, I): g(x^a) for a above
    array([[ -2.,  -3.,  -6., -12., -16.]])
    """
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[1]
    m = np.zeros(d) if x_mean is None else np.asarray(x_mean, dtype=np.float64)
    s = np.ones(d) if x_scale is None else np.asarray(x_scale, dtype=np.float64)
    u = (X - m) / s
    alpha = np.asarray(exponents, dtype=int)
    top = int(alpha.max()) if alpha.size else 0
    powers = u[:, :, None] ** np.arange(top + 1)  # (n, d, top + 1)
    F = [powers[:, k, alpha[:, k]] for k in range(d)]  # u_k^{alpha_k}, each (n, T)
    prefix, suffix = [np.ones_like(F[0])], [np.ones_like(F[0])]
    for k in range(d - 1):
        prefix.append(prefix[-1] * F[k])
        suffix.append(suffix[-1] * F[d - 1 - k])
    G = np.zeros_like(F[0])
    for k in range(d):
        others = prefix[k] * suffix[d - 1 - k]  # prod_{j != k} F_j
        a = alpha[:, k]
        first = a * powers[:, k, np.maximum(a - 1, 0)] * others / s[k]
        second = a * (a - 1) * powers[:, k, np.maximum(a - 2, 0)] * others / s[k] ** 2
        G += second + score[:, k : k + 1] * first
    return G


class PolynomialControlVariate(_SteinControlVariate):
    r"""Stein control variate with a polynomial ``phi``, fitted by ESVM or least squares.

    Parameters
    ----------
    grad_log_prob : callable, default=None
        ``grad log pi``: NumPy array ``(n, d)`` in, array ``(n, d)`` out.
        Give this or ``log_prob``; a module-level function keeps the
        estimator picklable.
    log_prob : callable, default=None
        ``log pi`` up to a constant: float64 torch tensor ``(n, d)`` in,
        tensor ``(n,)`` out, differentiable (the score is taken by autograd).
    degree : int, default=2
        Highest total degree of ``phi``; all ``C(d + degree, degree) - 1``
        non-constant monomials enter.
    method : {"esvm", "least_squares"}, default="esvm"
        ``"esvm"`` minimises the spectral variance ``V_n(f - g)`` (3.2)
        (Alg. 1); ``"least_squares"`` minimises the sample variance of
        ``f - g`` (the zero-variance regression, which ignores the
        autocorrelation; it is ESVM with ``truncation=1``).
    lag_window : str or callable, default="triangular"
        See :func:`skgibbs.diagnostics.lag_window`; also used by
        :meth:`predict_interval` and :meth:`score`.
    truncation : int, default=None
        ``b_n``; ``floor(sqrt(n))`` of the chain at hand when None.
    alpha : float >= 0, default=0.0
        Ridge penalty on the coefficients of the standardized features.

    Attributes
    ----------
    exponents_ : ndarray of shape (n_terms, n_features)
    coef_ : ndarray of shape (n_terms,)
        ``beta``, for the monomials of ``u = (x - x_mean_) / x_scale_``.
    x_mean_, x_scale_ : ndarray of shape (n_features,)
    constant_ : float
        ``pi_n(f - g)`` on the training chain.
    truncation_ : int
        ``b_n`` used in training.
    n_features_in_ : int

    Notes
    -----
    With ``Gc`` the centred Stein features, ``fc`` the centred ``f`` and ``W``
    the lag-window Toeplitz matrix, ``V_n(f - G beta) = V_n(f) - 2 beta^T
    Gc^T W fc / n + beta^T Gc^T W Gc beta / n``; its minimiser solves
    ``(Gc^T W Gc / n + alpha I) beta = Gc^T W fc / n``. For the triangular
    window ``W`` is positive semi-definite; for windows where it is not, the
    quadratic can be unbounded below and a warning is raised.

    References
    ----------
    .. [1] Belomestny, Goldman, Naumov, Samsonov. Theoretical guarantees for
       neural control variates in MCMC, Alg. 1, (3.2)-(3.3), Table 2.

    Examples
    --------
    >>> import numpy as np
    >>> def score(x):
    ...     return -x                                    # pi = N(0, I)
    >>> X = np.random.default_rng(0).normal(size=(2000, 2))
    >>> cv = PolynomialControlVariate(grad_log_prob=score, degree=2).fit(X, X[:, 0] ** 2)
    >>> round(cv.estimate(X, X[:, 0] ** 2), 6)          # pi(x1^2) = 1, exactly
    1.0
    """

    _parameter_constraints = {
        **COMMON_CONSTRAINTS,
        "degree": [Interval(Integral, 1, None, closed="left")],
        "method": [StrOptions({"esvm", "least_squares"})],
        "alpha": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        grad_log_prob=None,
        log_prob=None,
        *,
        degree=2,
        method="esvm",
        lag_window="triangular",
        truncation=None,
        alpha=0.0,
    ):
        self.grad_log_prob = grad_log_prob
        self.log_prob = log_prob
        self.degree = degree
        self.method = method
        self.lag_window = lag_window
        self.truncation = truncation
        self.alpha = alpha

    def _fit(self, X, y, score):
        n = X.shape[0]
        self.x_mean_ = X.mean(0)
        std = X.std(0)
        self.x_scale_ = np.where(std > 1e-12 * np.maximum(1.0, np.abs(self.x_mean_)), std, 1.0)
        self.exponents_ = monomial_exponents(X.shape[1], self.degree)
        G = polynomial_stein_features(X, score, self.exponents_, self.x_mean_, self.x_scale_)
        Gc, fc = G - G.mean(0), y - y.mean()
        sd = Gc.std(0)
        sd = np.where(sd > 0, sd, 1.0)  # equilibrate the columns
        Gs = Gc / sd
        self.truncation_ = 1 if self.method == "least_squares" else self._truncation_for(n)
        WG = Gs if self.truncation_ == 1 else windowed(Gs, self.lag_window, self.truncation_)
        A = Gs.T @ WG / n  # cross spectral variances of the features
        b = WG.T @ fc / n  # (W symmetric) cross spectral variances with f
        self._warn_if_indefinite(A)
        A[np.diag_indices_from(A)] += self.alpha
        beta, *_ = scipy.linalg.lstsq(A, b, cond=1e-12, lapack_driver="gelsy")
        self.coef_ = beta / sd
        return self

    def _warn_if_indefinite(self, A):
        if A.size and np.linalg.eigvalsh(A)[0] < -1e-8 * max(1.0, float(np.abs(A).max())):
            warn(
                ControlVariateWarning(
                    f"lag_window={self.lag_window!r} does not give a positive semi-definite spectral variance "
                    "here, so the ESVM quadratic has no minimum and its stationary point is returned. Use "
                    "lag_window='triangular', or method='least_squares'."
                ),
                stacklevel=4,
            )

    def _control(self, X, score):
        G = polynomial_stein_features(X, score, self.exponents_, self.x_mean_, self.x_scale_)
        return G @ self.coef_
