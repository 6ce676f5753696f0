r"""NeuralControlVariate: a Stein control variate with an MLP ``phi``, fitted by ESVM (paper 003)."""

import contextlib
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.utils import check_random_state

from .._compat import Interval, LayerWidths, StrOptions
from .._progress import progress, progress_close
from .._warnings import warn
from ..exceptions import ControlVariateWarning
from ._base import COMMON_CONSTRAINTS, _SteinControlVariate
from .esvm import spectral_variance_torch
from .stein import RELU_MESSAGE, STEIN_ACTIVATIONS, mlp_derivatives

__all__ = ["NeuralControlVariate"]

# predict-time chunks hold at most this many entries of the (chunk, d, width) Jacobian
_CHUNK_ENTRIES = 4_000_000


class NeuralControlVariate(_SteinControlVariate):
    r"""Stein control variate ``g_phi`` with a neural ``phi``, by spectral variance minimisation.

    Given a training chain ``X_0, ..., X_{n-1}`` from ``pi`` (time order) and
    ``y_k = f(X_k)``, ``fit`` minimises the spectral variance estimate
    ``V_n(f - g_phi)`` (3.2) over the weights of an MLP ``phi`` with Adam
    (Alg. 1), where

    .. math::

        g_\varphi(x) = \Delta\varphi(x) + \langle\nabla\log\pi(x), \nabla\varphi(x)\rangle

    is computed exactly and for all points at once (see
    :func:`~skgibbs.control_variates.mlp_derivatives`). On a new chain,
    ``pi_N(f - g_phi)`` (:meth:`estimate`) estimates ``pi(f)`` with the
    asymptotic variance ``V(f - g_phi)`` in place of ``V(f)``.

    Parameters
    ----------
    grad_log_prob : callable, default=None
        ``grad log pi``: NumPy array ``(n, d)`` in, array ``(n, d)`` out.
        Give this or ``log_prob``. Pickling the estimator (and
        ``GridSearchCV(n_jobs>1)``) needs a picklable callable, e.g. a
        module-level function rather than a lambda.
    log_prob : callable, default=None
        ``log pi`` up to a constant: float64 torch tensor ``(n, d)`` in,
        tensor ``(n,)`` out, written with differentiable torch operations;
        the score is its gradient by autograd, taken once per chain.
    hidden_layer_sizes : tuple of int, default=(32,)
        Widths of the hidden layers of ``phi``. Paper 003 §6 uses one hidden
        layer (its widths are not reported); ``()`` is a linear ``phi``.
    activation : {"recu", "requ", "tanh", "relu"}, default="recu"
        ``max(z, 0)**3`` (the class of the paper's theory), ``max(z, 0)**2``,
        ``tanh`` or ``max(z, 0)``. ReLU is not ``C^2``: its Laplacian is 0
        almost everywhere, ``g_phi`` degenerates to ``<grad log pi, grad
        phi>`` and a :class:`~skgibbs.ControlVariateWarning` is raised.
    lag_window : str or callable, default="triangular"
        Lag window of ``V_n``, see :func:`skgibbs.diagnostics.lag_window`;
        the paper's §6 default. Also used by :meth:`predict_interval` and
        :meth:`score`.
    truncation : int, default=None
        ``b_n``: lags ``|s| < b_n`` enter ``V_n``. ``floor(sqrt(n))`` of the
        chain at hand when None (the training part in ``fit``; for
        contiguous sub-chains of ``batch_size`` in training that length);
        paper 003 §6 uses 15 to 30 for ``n = 2-3 * 10^4``.
    learning_rate : float > 0, default=1e-2
        Adam's step size (on standardized ``x`` and ``f``).
    weight_decay : float >= 0, default=0.0
        Adam's L2 penalty on the weights.
    max_iter : int, default=1000
        Adam steps.
    batch_size : int or None, default=None
        None: every step uses the whole training chain. An int: every step
        uses a random contiguous stretch of that many points (contiguous, so
        that the autocovariances of ``V_n`` survive).
    early_stopping : bool, default=False
        Hold out the contiguous tail (``validation_fraction``) of the chain,
        keep the weights with the smallest ``V_n`` on it and stop after
        ``n_iter_no_change`` steps without a relative improvement of ``tol``.
    validation_fraction : float in (0, 1), default=0.2
    n_iter_no_change : int, default=50
    tol : float >= 0, default=1e-4
    random_state : int, RandomState instance or None, default=None
        Seeds the initial weights and the stretches of ``batch_size``
        through a private ``torch.Generator``; the global torch RNG is
        never used.
    verbose : int, default=0
        With 1, a live progress bar on stderr with the objective ``V_n`` of
        the last batch and the best held-out ``V_n`` (standardized ``f``);
        a ``tqdm`` bar when tqdm is installed.

    Attributes
    ----------
    coefs_ : list of ndarray
        Weights of ``phi`` on the original scale of ``x`` and ``f``,
        ``coefs_[l]`` of shape ``(n_in, n_out)`` as in ``MLPRegressor``.
    intercepts_ : list of ndarray
        ``intercepts_[l]`` of shape ``(n_out,)``.
    constant_ : float
        ``pi_n(f - g_phi)`` on the whole training chain; :meth:`predict`
        returns ``constant_ + g_phi``.
    loss_curve_ : ndarray of shape (n_iter,)
        ``V_n(f - g_phi)`` on the (batch of the) training part, per step.
    validation_loss_curve_ : ndarray of shape (n_iter,) or None
        ``V_n(f - g_phi)`` on the held-out tail, per step.
    n_iter_ : int
    truncation_ : int
        ``b_n`` used for the training objective.
    n_features_in_ : int

    Notes
    -----
    Alg. 1 of paper 003: ``g_hat = argmin_g V_n(f - g)`` over
    ``{g_phi : phi an MLP}``, then ``pi_N(f - g_hat)`` on a test chain. The
    objective does not see constants, so ``constant_`` is set afterwards.
    Inputs and ``f`` are standardized during training; the stored weights
    act on the original scale. Training runs in float64 on one CPU thread.
    With ``V_N`` the spectral variance of ``f - g_phi`` on a chain of length
    ``N``, :meth:`predict_interval` is the CLT interval (1.4),
    ``pi_N(f - g_phi) -/+ z sqrt(V_N / N)``; :meth:`score` is the ESVRR
    ``V_n(f) / V_n(f - g_phi)`` of §6.

    References
    ----------
    .. [1] Belomestny, Goldman, Naumov, Samsonov. Theoretical guarantees for
       neural control variates in MCMC, §3 (Alg. 1, (3.1)-(3.3)), §6.

    Examples
    --------
    >>> import numpy as np
    >>> def score(x):
    ...     return -x                                   # pi = N(0, I)
    >>> X = np.random.default_rng(0).normal(size=(1000, 2))
    >>> cv = NeuralControlVariate(grad_log_prob=score, hidden_layer_sizes=(8,), max_iter=200,
    ...                           random_state=0).fit(X, X[:, 0] ** 2)
    >>> bool(cv.score(X, X[:, 0] ** 2) > 10)           # ESVRR on the training chain
    True
    >>> est, bounds = cv.predict_interval(X, X[:, 0] ** 2, confidence_level=0.95)
    >>> bounds.shape
    (2, 1)
    """

    _parameter_constraints = {
        **COMMON_CONSTRAINTS,
        "hidden_layer_sizes": [LayerWidths()],
        "activation": [StrOptions(set(STEIN_ACTIVATIONS))],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "weight_decay": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 2, None, closed="left"), None],
        "early_stopping": ["boolean"],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        grad_log_prob=None,
        log_prob=None,
        *,
        hidden_layer_sizes=(32,),
        activation="recu",
        lag_window="triangular",
        truncation=None,
        learning_rate=1e-2,
        weight_decay=0.0,
        max_iter=1000,
        batch_size=None,
        early_stopping=False,
        validation_fraction=0.2,
        n_iter_no_change=50,
        tol=1e-4,
        random_state=None,
        verbose=0,
    ):
        self.grad_log_prob = grad_log_prob
        self.log_prob = log_prob
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.lag_window = lag_window
        self.truncation = truncation
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ fit
    def _fit(self, X, y, score):
        layers = tuple(int(w) for w in self.hidden_layer_sizes)
        if self.activation == "relu":
            warn(ControlVariateWarning(RELU_MESSAGE), stacklevel=3)
        n_train, n_val = self._split(X.shape[0])
        head = slice(0, n_train)
        m, s = X[head].mean(0), _scale(X[head].std(0))
        y_scale = float(_scale(np.array([y[head].std()]))[0])
        gen = torch.Generator().manual_seed(int(check_random_state(self.random_state).randint(2**31)))
        sizes = (X.shape[1], *layers, 1)
        data = [torch.tensor(a, dtype=torch.float64) for a in (X, score, y / y_scale)]
        transform = _Standardize(m, s)
        with _one_thread():
            params = _init_params(sizes, gen)
            best, curves = self._train(params, transform, data, n_train, n_val, gen)
        coefs, intercepts = transform.fold([p.detach() for p in best], y_scale)
        self.coefs_ = [c.numpy() for c in coefs]
        self.intercepts_ = [b.numpy() for b in intercepts]
        self.loss_curve_ = np.asarray(curves[0]) * y_scale**2
        self.validation_loss_curve_ = np.asarray(curves[1]) * y_scale**2 if n_val else None
        self.n_iter_ = len(curves[0])
        return self

    def _split(self, n):
        n_val = int(round(self.validation_fraction * n)) if self.early_stopping else 0
        if self.early_stopping and (n_val < 2 or n - n_val < 2):
            raise ValueError(
                f"early_stopping holds out {n_val} of n_samples={n} points; both parts need at least 2. "
                "Give a longer chain, change validation_fraction or set early_stopping=False."
            )
        n_train = n - n_val
        batch = n_train if self.batch_size is None else min(self.batch_size, n_train)
        self.truncation_ = self._truncation_for(batch)
        return n_train, n_val

    def _train(self, params, transform, data, n_train, n_val, gen):
        """Adam on V_n(f - g_phi) (Alg. 1, step 2), early stopping on the tail."""
        X, S, y = data
        opt = torch.optim.Adam(params, lr=self.learning_rate, weight_decay=self.weight_decay)
        batch = n_train if self.batch_size is None else min(self.batch_size, n_train)
        best, best_val, stale = [p.detach().clone() for p in params], np.inf, 0
        losses, val_losses = [], []
        for it in range(self.max_iter):
            start = int(torch.randint(n_train - batch + 1, (1,), generator=gen)) if batch < n_train else 0
            idx = slice(start, start + batch)
            opt.zero_grad()
            loss = self._objective(params, transform, X[idx], S[idx], y[idx], self.truncation_)
            if not torch.isfinite(loss):
                raise FloatingPointError(
                    f"The ESVM objective became {loss.item()} at step {it}; lower learning_rate "
                    "(or use activation='tanh')."
                )
            loss.backward()
            opt.step()
            losses.append(loss.item())
            if n_val:
                with torch.no_grad():
                    tail = slice(n_train, None)
                    b_val = self._truncation_for(X.shape[0] - n_train)
                    val = self._objective(params, transform, X[tail], S[tail], y[tail], b_val).item()
                val_losses.append(val)
                if val < best_val * (1 - self.tol) or not np.isfinite(best_val):
                    best, best_val, stale = [p.detach().clone() for p in params], val, 0
                else:
                    stale += 1
            self._report(it, losses, val_losses)
            if n_val and stale >= self.n_iter_no_change:
                break
        progress_close(self, "ESVM")
        return (best if n_val else params), (losses, val_losses)

    def _objective(self, params, transform, X, S, y, truncation):
        coefs, intercepts = transform.fold(params, 1.0)
        _, grad, lap = mlp_derivatives(X, coefs, intercepts, self.activation, value=False)
        g = lap + (S * grad).sum(1)  # (3.3)
        return spectral_variance_torch(y - g, self.lag_window, truncation)  # (3.2)

    def _report(self, it, losses, val_losses):
        if self.verbose:
            stats = {"V_n": lambda: f"{losses[-1]:.4g}"}
            if val_losses:
                stats["held_out_V_n"] = lambda: f"{min(val_losses):.4g}"
            progress(self, "ESVM", it, self.max_iter, **stats)

    # -------------------------------------------------------------- predict
    def _control(self, X, score):
        coefs = [torch.tensor(c) for c in self.coefs_]
        intercepts = [torch.tensor(b) for b in self.intercepts_]
        width = max([X.shape[1], *(c.shape[1] for c in self.coefs_)])
        chunk = max(1, _CHUNK_ENTRIES // (X.shape[1] * width))
        out = []
        with torch.no_grad(), _one_thread():
            for i in range(0, X.shape[0], chunk):
                Xc = torch.tensor(X[i : i + chunk])
                _, grad, lap = mlp_derivatives(Xc, coefs, intercepts, self.activation, value=False)
                out.append((lap + (torch.tensor(score[i : i + chunk]) * grad).sum(1)).numpy())
        return np.concatenate(out) if out else np.zeros(0)


class _Standardize:
    """phi(x) = psi((x - m) / s): the first layer's weights absorb the standardization."""

    def __init__(self, mean, scale):
        self.mean = torch.as_tensor(mean, dtype=torch.float64)
        self.scale = torch.as_tensor(scale, dtype=torch.float64)

    def fold(self, params, y_scale):
        coefs, intercepts = list(params[0::2]), list(params[1::2])
        W0 = coefs[0]
        coefs[0] = W0 / self.scale[:, None]
        intercepts[0] = intercepts[0] - (self.mean / self.scale) @ W0
        coefs[-1] = coefs[-1] * y_scale  # g_phi is linear in phi
        intercepts[-1] = intercepts[-1] * y_scale
        return coefs, intercepts


def _init_params(sizes, gen):
    """Uniform(+-1/sqrt(fan_in)) hidden layers; a zero output layer, so training starts at g = 0."""
    params = []
    for k, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        bound = 0.0 if k == len(sizes) - 2 else 1.0 / np.sqrt(n_in)
        W = (torch.rand(n_in, n_out, generator=gen, dtype=torch.float64) * 2 - 1) * bound
        b = (torch.rand(n_out, generator=gen, dtype=torch.float64) * 2 - 1) * bound
        params += [W.requires_grad_(True), b.requires_grad_(True)]
    return params


def _scale(std):
    std = np.asarray(std, dtype=float)
    return np.where(std > 1e-12, std, 1.0)


@contextlib.contextmanager
def _one_thread():
    # one thread: small matmuls gain nothing from two, and a busy second core
    # collapses two spinning OpenMP threads (:doc:`/developers`, Rules)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
