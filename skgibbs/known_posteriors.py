"""Known posteriors: the benchmark densities of paper 003 §6, and a sampler for them.

Densities whose scores (and, where they exist in closed form, moments) are
known exactly, for testing samplers and control variates against ground
truth; not to be confused with :class:`skgibbs.samplers.Target`, the
``pi_lambda`` every kernel samples.

Each density has ``log_prob(theta) -> (K,)`` and ``grad_log_prob(theta) ->
(K, d)`` on torch tensors of shape ``(K, d)`` (analytic gradients, computed
in ``theta``'s dtype; float64 is the intended one), its dimension ``dim``,
and, where they are known in closed form, its exact ``mean`` and ``cov``
(NumPy) for ground truth. :func:`sample_chains` draws from any such object
with skgibbs' own kernels through :class:`~skgibbs.potential.LogDensityPotential`.
"""

import math

import numpy as np
import torch
from sklearn.utils import check_random_state

from .potential import LogDensityPotential
from .samplers import HMC, MALA, SGLD, Target, run_chains

__all__ = ["Gaussian", "Funnel", "Banana", "LogisticRegressionGPrior", "Mixture2", "sample_chains"]

_LOG_2PI = math.log(2.0 * math.pi)


def _positive(name, value):
    value = float(value)
    if not value > 0 or not math.isfinite(value):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}.")
    return value


def _dimension(dim, least):
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < least:
        raise ValueError(f"dim must be an integer >= {least}, got {dim!r}.")
    return int(dim)


class _KnownPosterior:
    mean = None
    cov = None

    def log_prob(self, theta):  # pragma: no cover - interface
        """``log pi(theta)`` at K points: tensor ``(K, d)`` -> ``(K,)``."""
        raise NotImplementedError

    def grad_log_prob(self, theta):  # pragma: no cover - interface
        """``grad log pi(theta)``, in closed form: tensor ``(K, d)`` -> ``(K, d)``."""
        raise NotImplementedError

    def potential(self):
        """:class:`~skgibbs.potential.LogDensityPotential` of this target."""
        return LogDensityPotential(self.log_prob, self.grad_log_prob)

    def __repr__(self):
        return f"{type(self).__name__}(dim={self.dim})"


class Gaussian(_KnownPosterior):
    """Normal target ``N(mean, cov)``, normalised.

    Parameters
    ----------
    mean : array-like of shape (d,)
    cov : array-like of shape (d, d)
        Symmetric positive definite.

    Examples
    --------
    >>> import torch
    >>> target = Gaussian([0.0, 1.0], [[1.0, 0.5], [0.5, 2.0]])
    >>> target.grad_log_prob(torch.tensor([[0.0, 1.0]], dtype=torch.float64))
    tensor([[0., 0.]], dtype=torch.float64)
    """

    def __init__(self, mean, cov):
        mean = np.asarray(mean, dtype=float)
        cov = np.asarray(cov, dtype=float)
        if mean.ndim != 1 or cov.shape != (mean.size, mean.size) or not np.allclose(cov, cov.T):
            raise ValueError(f"cov must be a symmetric (d, d) matrix for a mean of shape (d,), got {cov.shape}.")
        try:
            chol = np.linalg.cholesky(cov)
        except np.linalg.LinAlgError:
            raise ValueError("cov must be positive definite.") from None
        self.mean, self.cov, self.dim = mean, cov, mean.size
        self._mu = torch.as_tensor(mean)
        self._precision = torch.as_tensor(np.linalg.inv(cov))
        self._log_norm = -0.5 * self.dim * _LOG_2PI - np.log(np.diag(chol)).sum()

    def grad_log_prob(self, theta):
        return -(theta - self._mu.to(theta)) @ self._precision.to(theta)

    def log_prob(self, theta):
        r = theta - self._mu.to(theta)
        return -0.5 * ((r @ self._precision.to(theta)) * r).sum(1) + self._log_norm


class Funnel(_KnownPosterior):
    """Neal's funnel as in paper 003 §6.2, normalised.

    ``x_1 ~ N(0, a)`` and, given ``x_1``, ``x_i ~ N(0, exp(2 b x_1))`` for
    ``i = 2..d`` (``a`` and ``exp(2 b x_1)`` are variances), so the
    potential is ``U = x_1^2 / (2a) + (d-1) b x_1 + exp(-2 b x_1) sum_i x_i^2 / 2``.
    Exact moments: ``mean = 0``, ``cov = diag(a, exp(2 a b^2), ...)``
    (``E exp(2 b x_1) = exp(2 a b^2)``). The paper's experiment has
    ``d = 2, a = 1, b = 0.5``, the defaults.

    Examples
    --------
    >>> target = Funnel()
    >>> round(float(target.cov[1, 1]), 4)        # E x_2^2 = exp(1/2), paper 003's f
    1.6487
    """

    def __init__(self, dim=2, a=1.0, b=0.5):
        self.dim, self.a, self.b = _dimension(dim, 2), _positive("a", a), _positive("b", b)
        self.mean = np.zeros(self.dim)
        self.cov = np.diag([self.a] + [math.exp(2 * self.a * self.b**2)] * (self.dim - 1))

    def log_prob(self, theta):
        x1, rest = theta[:, 0], theta[:, 1:]
        k = self.dim - 1
        u = x1**2 / (2 * self.a) + k * self.b * x1 + torch.exp(-2 * self.b * x1) * (rest**2).sum(1) / 2
        return -u - 0.5 * math.log(self.a) - 0.5 * self.dim * _LOG_2PI

    def grad_log_prob(self, theta):
        x1, rest = theta[:, :1], theta[:, 1:]
        scale = torch.exp(-2 * self.b * x1)
        d1 = -x1 / self.a - (self.dim - 1) * self.b + self.b * scale * (rest**2).sum(1, keepdim=True)
        return torch.cat([d1, -scale * rest], 1)


class Banana(_KnownPosterior):
    """Banana-shaped (twisted Gaussian) target of paper 003 §6.3, normalised.

    ``U = x_1^2 / (2p) + (x_2 + b x_1^2 - p b)^2 / 2 + sum_{k>=3} x_k^2 / 2``:
    ``x_1 ~ N(0, p)``, ``x_2 | x_1 ~ N(p b - b x_1^2, 1)``, the rest
    ``N(0, 1)``. Exact moments: ``mean = 0``, ``cov = diag(p, 1 + 2 b^2 p^2,
    1, ...)``. The paper has ``d = 6, p = 20, b = 0.05``, the defaults.

    Examples
    --------
    >>> round(float(Banana().cov[1, 1]), 6)       # E x_2^2 = 1 + 2 b^2 p^2
    3.0
    """

    def __init__(self, dim=6, p=20.0, b=0.05):
        self.dim, self.p, self.b = _dimension(dim, 2), _positive("p", p), _positive("b", b)
        self.mean = np.zeros(self.dim)
        self.cov = np.diag([self.p, 1 + 2 * self.b**2 * self.p**2] + [1.0] * (self.dim - 2))

    def _twist(self, theta):
        return theta[:, 1] + self.b * theta[:, 0] ** 2 - self.p * self.b

    def log_prob(self, theta):
        u = theta[:, 0] ** 2 / (2 * self.p) + self._twist(theta) ** 2 / 2 + (theta[:, 2:] ** 2).sum(1) / 2
        return -u - 0.5 * math.log(self.p) - 0.5 * self.dim * _LOG_2PI

    def grad_log_prob(self, theta):
        r = self._twist(theta)
        d1 = -theta[:, 0] / self.p - 2 * self.b * theta[:, 0] * r
        return torch.cat([d1[:, None], -r[:, None], -theta[:, 2:]], 1)


class LogisticRegressionGPrior(_KnownPosterior):
    """Bayesian logistic regression with Zellner's g-prior, paper 003 §6.4.

    With design ``Z`` (``X`` and, by default, a column of ones) the prior
    ``x ~ N(0, g (Z'Z)^{-1})`` becomes ``N(0, g I)`` for the whitened
    parameter ``x~ = (Z'Z)^{1/2} x`` on whitened covariates
    ``Z~_i = (Z'Z)^{-1/2} Z_i`` (``<x, Z_i> = <x~, Z~_i>``). The target is
    the posterior of ``x~`` (unnormalised):

        ``U(x~) = -sum_i [y_i <Z~_i, x~> - log(1 + exp(<Z~_i, x~>))] + |x~|^2 / (2 g)``.

    The g-prior makes the posterior of ``<x, Z_i>`` invariant to linear
    maps of the covariates, so standardising ``X`` first changes nothing.

    Parameters
    ----------
    X : array-like of shape (n, p)
    y : array-like of shape (n,)
        Labels in {0, 1}.
    g : float, default=100.0
        The paper's value.
    fit_intercept : bool, default=True
        Append a column of ones (Pima's 8 covariates give ``d = 9``).

    Attributes
    ----------
    dim : int
        ``d = p + fit_intercept``.
    Z : ndarray of shape (n, d)
        Whitened design ``Z (Z'Z)^{-1/2}``.

    Examples
    --------
    >>> import numpy as np, torch
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 2)); y = (X[:, 0] > 0).astype(float)
    >>> target = LogisticRegressionGPrior(X, y)
    >>> target.dim, np.allclose(target.Z.T @ target.Z, np.eye(3))
    (3, True)
    """

    def __init__(self, X, y, g=100.0, fit_intercept=True):
        X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
        if X.ndim != 2 or y.shape != (X.shape[0],) or not np.all(np.isfinite(X)):
            raise ValueError(f"X must be finite of shape (n, p) and y of shape (n,), got {X.shape}, {y.shape}.")
        if not np.all((y == 0) | (y == 1)):
            raise ValueError("y must hold labels 0 and 1.")
        self.g, self.fit_intercept = _positive("g", g), bool(fit_intercept)
        Z = np.c_[X, np.ones(len(X))] if self.fit_intercept else X
        evals, evecs = np.linalg.eigh(Z.T @ Z)
        if evals.min() <= 1e-10 * evals.max():
            raise ValueError("X (with the intercept column) has collinear columns: Z'Z is singular.")
        self._inv_sqrt = (evecs / np.sqrt(evals)) @ evecs.T  # (Z'Z)^{-1/2}, symmetric
        self.Z, self.dim = Z @ self._inv_sqrt, Z.shape[1]
        self._Z, self._y = torch.as_tensor(self.Z), torch.as_tensor(y)

    def whiten(self, X):
        """Whitened covariates ``Z~`` of new inputs, as for training: ``(m, p)`` -> ``(m, d)``."""
        X = np.asarray(X, dtype=float)
        Z = np.c_[X, np.ones(len(X))] if self.fit_intercept else X
        return Z @ self._inv_sqrt

    def log_prob(self, theta):
        eta = theta @ self._Z.to(theta).T  # (K, n)
        log_lik = (self._y.to(theta) * eta - torch.nn.functional.softplus(eta)).sum(1)
        return log_lik - (theta**2).sum(1) / (2 * self.g)

    def grad_log_prob(self, theta):
        Z = self._Z.to(theta)
        return (self._y.to(theta) - torch.sigmoid(theta @ Z.T)) @ Z - theta / self.g

    def average_likelihood(self, theta, X, y):
        """Mean of ``p(y_j | x~, Z~_j)`` over a test set, shape ``(K,)``: the ``f`` of paper 003 §6.4."""
        Z = torch.as_tensor(self.whiten(X)).to(theta)
        eta = theta @ Z.T
        y = torch.as_tensor(np.asarray(y, dtype=float)).to(theta)
        return torch.exp(y * eta - torch.nn.functional.softplus(eta)).mean(1)


def _initial_points(x0, n_chains, dim):
    x0 = np.zeros(dim) if x0 is None else np.asarray(x0, dtype=float)
    x0 = np.broadcast_to(x0, (n_chains, x0.shape[-1])) if x0.ndim == 1 else x0
    if x0.shape != (n_chains, dim) or not np.all(np.isfinite(x0)):
        raise ValueError(f"x0 must be finite of shape ({dim},) or ({n_chains}, {dim}), got {x0.shape}.")
    return torch.tensor(x0, dtype=torch.float64)


# sample_chains' names: ULA is SGLD on the one "example" of a log density (rho = 1)
_KERNELS = {"ula": SGLD, "mala": MALA, "hmc": HMC}


def sample_chains(
    target,
    n_samples,
    *,
    sampler="ula",
    step_size=0.01,
    burn_in=1000,
    n_chains=1,
    thin=1,
    adapt_step_size=False,
    target_accept=None,
    metric="adaptive",
    trajectory_length="auto",
    x0=None,
    random_state=None,
    return_result=False,
):
    """Markov chains on a target with skgibbs' Langevin kernels.

    Runs :func:`~skgibbs.samplers.run_chains` on
    ``LogDensityPotential(target.log_prob, target.grad_log_prob)`` with
    ``lam = 1``, ``rho = 1`` and a flat prior, in float64.

    Parameters
    ----------
    target : object
        Has ``grad_log_prob`` (and ``log_prob`` for MALA) on ``(K, d)``
        tensors, and ``dim`` unless ``x0`` gives it.
    n_samples : int
        Draws kept per chain (after thinning).
    sampler : {"ula", "mala", "hmc"}, default="ula"
        ``"ula"``: ``x' = x + h grad log pi(x) + sqrt(2h) xi`` with fixed
        ``h``, biased by O(h) as in paper 003 §6. ``"mala"``: the same
        proposal with a Metropolis-Hastings correction, exact for any ``h``.
        ``"hmc"``: Hamiltonian Monte Carlo (:mod:`skgibbs.samplers.hmc`),
        its step size, metric and trajectory length adapted during burn-in.
    step_size : float, default=0.01
        ``h``; for MALA with ``adapt_step_size=True`` only the start of
        the adaptation.
    burn_in : int, default=1000
        Steps discarded first (``n_burn`` of the paper's tables).
    n_chains, thin : int, default=1
    adapt_step_size : bool, default=False
        MALA only: tune ``h`` during burn-in (step doubling, then dual
        averaging toward ``target_accept``) and freeze it for sampling.
    target_accept : float, default=None
        Acceptance aimed at by the adaptation: None is 0.574 for MALA and
        0.8 for HMC.
    metric : {"adaptive", "identity"}, default="adaptive"
        HMC only: the diagonal metric (Stan's windowed estimate, or none).
    trajectory_length : float, "auto" or "chees", default="auto"
        HMC only: see :class:`~skgibbs.samplers.HMC`.
    x0 : array-like of shape (d,) or (n_chains, d), default=None
        Starting points; the origin when None.
    random_state : int, RandomState instance or None, default=None
        Seeds one ``torch.Generator`` per chain; the global torch RNG is
        never used.
    return_result : bool, default=False
        Also return the :class:`~skgibbs.samplers.ChainResult` (acceptance
        rates, final step sizes).

    Returns
    -------
    samples : ndarray of shape (n_chains, n_samples, d)
    result : ChainResult
        Only with ``return_result=True``.

    Examples
    --------
    >>> x = sample_chains(Funnel(), 500, sampler="mala", step_size=0.5, n_chains=2, random_state=0)
    >>> x.shape
    (2, 500, 2)
    """
    kernel_class = _KERNELS.get(sampler) if isinstance(sampler, str) else None
    if kernel_class is None:
        raise ValueError(f"sampler must be one of {sorted(_KERNELS)}, got {sampler!r}.")
    log_prob = getattr(target, "log_prob", None)
    if kernel_class is not SGLD and log_prob is None:
        raise ValueError(f"sampler={sampler!r} needs target.log_prob for the Metropolis-Hastings ratio; use 'ula'.")
    if adapt_step_size and kernel_class is not MALA:
        raise ValueError("adapt_step_size needs sampler='mala': ULA has no acceptance rate to adapt to.")
    counts = {"n_samples": (n_samples, 1), "n_chains": (n_chains, 1), "thin": (thin, 1)}
    counts["burn_in"] = (burn_in, 0)
    for name, (value, least) in counts.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            raise ValueError(f"{name} must be an integer >= {least}, got {value!r}.")
    h = _positive("step_size", step_size)
    dim = getattr(target, "dim", None)
    dim = np.shape(x0)[-1] if dim is None and x0 is not None and np.ndim(x0) > 0 else dim
    if dim is None:
        raise ValueError("target has no dim: pass x0 of shape (d,) or (n_chains, d).")
    theta0 = _initial_points(x0, int(n_chains), dim)
    seeds = np.random.SeedSequence(check_random_state(random_state).randint(2**31)).generate_state(n_chains)
    settings = {
        SGLD: {"step_size": h},
        MALA: {"step_size": h, "proposal_std": "auto" if adapt_step_size else math.sqrt(2.0 * h)},
        HMC: {"step_size": h, "metric": metric, "trajectory_length": trajectory_length},
    }[kernel_class]
    if target_accept is not None and kernel_class is not SGLD:
        settings["target_accept"] = float(target_accept)
    kernel = kernel_class(**settings)
    potential = LogDensityPotential(log_prob, getattr(target, "grad_log_prob", None))
    result = run_chains(
        Target(potential, lambda_=1.0),
        theta0,
        [int(s) for s in seeds],
        kernel,
        n_samples=int(n_samples),
        burn_in=int(burn_in),
        thin=int(thin),
    )
    return (result.samples, result) if return_result else result.samples


class Mixture2(_KnownPosterior):
    """Two Gaussian components with unequal, known weights, normalised.

    ``pi(x) = w_1 N(x; mu_1, s^2 I) + w_2 N(x; mu_2, s^2 I)``. Well separated
    components (``|mu_1 - mu_2| / s`` of 8 or more) make a chain started in
    one of them stay there, while the weights are known: the test of a
    sampler's mode proportions. Exact moments: ``mean = sum_k w_k mu_k``,
    ``cov = s^2 I + sum_k w_k (mu_k - mean)(mu_k - mean)'``.

    Parameters
    ----------
    weights : pair of float, default=(0.25, 0.75)
        Positive; normalised to sum to one.
    means : array-like of shape (2, d), default=((-4.0, 0.0), (4.0, 0.0))
    std : float, default=1.0
        ``s``, the standard deviation of every coordinate of a component.

    Examples
    --------
    >>> import torch
    >>> target = Mixture2()
    >>> target.mean, target.cov[0, 0]          # 0.75 * 4 - 0.25 * 4; 1 + 0.25 * 36 + 0.75 * 4
    (array([2., 0.]), np.float64(13.0))
    >>> target.responsibilities(torch.tensor([[4.0, 0.0]], dtype=torch.float64)).argmax(1)
    tensor([1])
    """

    def __init__(self, weights=(0.25, 0.75), means=((-4.0, 0.0), (4.0, 0.0)), std=1.0):
        weights = np.asarray(weights, dtype=float)
        means = np.asarray(means, dtype=float)
        if weights.shape != (2,) or not np.all(np.isfinite(weights) & (weights > 0)):
            raise ValueError(f"weights must be two positive numbers, got {weights!r}.")
        if means.ndim != 2 or means.shape[0] != 2 or not np.all(np.isfinite(means)):
            raise ValueError(f"means must be finite of shape (2, d), got shape {means.shape}.")
        self.std, self.dim = _positive("std", std), means.shape[1]
        self.weights, self.means = weights / weights.sum(), means
        self.mean = self.weights @ means
        centred = means - self.mean
        self.cov = self.std**2 * np.eye(self.dim) + (self.weights[:, None] * centred).T @ centred
        self._log_w = torch.as_tensor(np.log(self.weights))
        self._mu = torch.as_tensor(means)
        self._log_norm = -0.5 * self.dim * (_LOG_2PI + 2.0 * math.log(self.std))

    def _component_log_probs(self, theta):
        """``log w_k + log N(theta; mu_k, s^2 I)``, shape ``(K, 2)``."""
        r = theta[:, None, :] - self._mu.to(theta)
        return self._log_w.to(theta) + self._log_norm - 0.5 * (r * r).sum(2) / self.std**2

    def log_prob(self, theta):
        return torch.logsumexp(self._component_log_probs(theta), 1)

    def responsibilities(self, theta):
        """``P(component k | theta)``, shape ``(K, 2)``; their mean under ``pi`` is exactly ``weights``."""
        return torch.softmax(self._component_log_probs(theta), 1)

    def grad_log_prob(self, theta):
        r = self.responsibilities(theta)
        return -(theta - r @ self._mu.to(theta)) / self.std**2

