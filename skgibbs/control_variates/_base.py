"""What every Stein control variate estimator shares: validation, estimate, interval, score."""

import copy
from numbers import Integral

import numpy as np
from scipy.stats import norm
from sklearn.base import BaseEstimator

from .._compat import Interval, StrOptions, check_is_fitted, validate_data
from .._levels import check_levels
from ..diagnostics import LAG_WINDOWS, spectral_variance
from .esvm import _truncation, esvrr
from .stein import evaluate_score

__all__ = []

COMMON_CONSTRAINTS = {
    "grad_log_prob": [callable, None],
    "log_prob": [callable, None],
    "lag_window": [StrOptions(set(LAG_WINDOWS)), callable],
    "truncation": [Interval(Integral, 1, None, closed="left"), None],
}


class _SteinControlVariate(BaseEstimator):
    """Base class: subclasses define ``_fit(X, y, score)`` and ``_control(X, score)``."""

    def fit(self, X, y):
        """Choose the control variate on the training chain.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training chain ``X_0, ..., X_{n-1}`` in time order.
        y : array-like of shape (n_samples,)
            ``f(X_k)``.

        Returns
        -------
        self
        """
        saved = copy.copy(self.__dict__)
        try:
            self._validate_params()
            X, y = self._check_chain(X, y, reset=True)
            score = self._score(X)
            self._fit(X, y, score)
            self.constant_ = float(np.mean(y - self._control(X, score)))
            return self
        except BaseException:
            # a failed re-fit leaves the earlier fit intact
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    # ---------------------------------------------------------- validation
    def _check_chain(self, X, y=None, reset=False):
        if not reset:
            check_is_fitted(self)
        if y is None and not reset:
            X = validate_data(self, X, reset=False, dtype=np.float64)
        else:
            X, y = validate_data(self, X, y, reset=reset, dtype=np.float64, y_numeric=True)
        n = X.shape[0]
        if n < 2 and (reset or y is not None):
            raise ValueError(
                f"{type(self).__name__} needs a chain of at least 2 points (n_samples >= 2), "
                f"got n_samples={n}."
            )
        return X, y

    def _score(self, X):
        return evaluate_score(X, self.grad_log_prob, self.log_prob)

    def _truncation_for(self, n):
        return _truncation(n, self.truncation)

    def _residual(self, X, y):
        X, y = self._check_chain(X, y)
        return y - self._control(X, self._score(X))

    # -------------------------------------------------------------- public
    def predict(self, X):
        """Fitted approximation ``c + g_phi(x)`` of ``f``.

        ``c`` (``constant_``) is the control-variate estimate of ``pi(f)``
        on the training chain, so ``f - predict`` is what remains of ``f``
        after the control variate.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        X, _ = self._check_chain(X)
        return self.constant_ + self._control(X, self._score(X))

    def estimate(self, X, y):
        """Control-variate estimate ``pi_N(f - g_phi)`` of ``pi(f)`` on a new chain (Alg. 1, output).

        Parameters
        ----------
        X : array-like of shape (N, n_features)
            A chain in time order, best independent of the training chain.
        y : array-like of shape (N,)
            ``f(X_k)``.

        Returns
        -------
        float
        """
        return float(np.mean(self._residual(X, y)))

    def predict_interval(self, X, y, confidence_level=0.95):
        """Estimate of ``pi(f)`` and its Markov chain CLT confidence interval (paper 003 (1.4)).

        Parameters
        ----------
        X : array-like of shape (N, n_features)
            A chain in time order.
        y : array-like of shape (N,)
            ``f(X_k)``.
        confidence_level : float or array-like of floats in (0, 1), default=0.95

        Returns
        -------
        estimate : float
            ``pi_N(f - g_phi)``.
        bounds : ndarray of shape (2, n_levels)
            ``estimate -/+ z sqrt(V_N(f - g_phi) / N)`` with ``z`` the
            ``(1 + confidence_level) / 2`` normal quantile and ``V_N`` the
            spectral variance (3.2) of the residual on this chain.
        """
        levels = check_levels(confidence_level)
        residual = self._residual(X, y)
        n = residual.shape[0]
        var = spectral_variance(residual, self.lag_window, self._truncation_for(n))
        half = norm.ppf((1 + levels) / 2) * np.sqrt(max(var, 0.0) / n)
        est = float(residual.mean())
        return est, np.stack([est - half, est + half])

    def score(self, X, y):
        """ESVRR ``V_n(f) / V_n(f - g_phi)`` on the chain ``(X, y)``: greater is better.

        With contiguous folds, ``GridSearchCV(est, grid, cv=KFold(n_splits,
        shuffle=False))`` ranks candidates by their variance reduction on
        held-out stretches of the chain.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            A chain in time order.
        y : array-like of shape (n_samples,)
            ``f(X_k)``.

        Returns
        -------
        float
        """
        X, y = self._check_chain(X, y)
        residual = y - self._control(X, self._score(X))
        return esvrr(y, residual, self.lag_window, self._truncation_for(len(y)))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.non_deterministic = False
        return tags
