"""Langevin functional variance (paper 004 §3): the Langevin process (10) and LFV (13).

Started at fitted parameters ``gamma^(1)``, the process

    ``gamma^(t+1) = gamma^(t) - (delta / 4) kappa_n grad rho_alpha(gamma^(t)) + delta^{1/2} e^(t)``   (10)

with ``kappa_n = n / sigma^2`` and ``rho_alpha(theta) = (1/n) sum_i (y_i -
g_theta(x_i))^2 + alpha |theta|^2`` (§3.3; (2) for the linear model) is the
unadjusted Langevin algorithm with step ``h = delta / 2`` on the potential
``U = (kappa_n / 2) rho_alpha``, i.e. the Gibbs posterior at temperature
``2 sigma^2`` under the Gaussian prior ``N(0, sigma^2 / (n alpha) I)``. LFV is
the sum over examples of the variance over the kept iterates of
``log f(y_i | x_i, gamma) = -(y_i - g_gamma(x_i))^2 / (2 sigma^2) + const``.
"""

from typing import NamedTuple

import numpy as np
import torch
from sklearn.utils import check_random_state

from .._random import normal
from .._threads import torch_threads
from .._warnings import warn
from ..exceptions import SamplerWarning
from ._adapters import langevin_problem
from .._data import check_sample_weight
from ._waic import langevin_waic

__all__ = ["LFVResult", "LangevinFVChains", "langevin_fv_chains", "langevin_functional_variance"]

# "auto" step: delta * lambda_max(hess U) / 4 = h lambda_max / 2 is the relative
# ULA bias of the stationary variance in the stiffest direction (2.5 % here);
# paper 004 §4.1's delta = 1/(10 n) gives delta lambda_max = 0.11 in its setting (i)
_AUTO_DELTA_TIMES_CURVATURE = 0.1


class LangevinFVChains(NamedTuple):
    """Per-process output of :func:`langevin_fv_chains`."""

    pointwise: np.ndarray  # (K, n) Var over kept iterates of log f(y_i | gamma)
    lfv: np.ndarray  # (K,) LFV (13) of each process
    step_size: np.ndarray  # (K,) delta
    n_refused: np.ndarray  # (K,) steps refused because the move was not finite


class LFVResult(NamedTuple):
    """Result of :func:`langevin_functional_variance`.

    ``lfv`` is LFV (13), averaged over the processes when there are several
    (one per chain of a fitted skgibbs estimator); ``waic`` is the
    "training loss + LFV" of paper 004 §4.3 per sample: ``train_loss + lfv /
    n``, on the scale of the paper's CV statistic, where the Gaussian
    normalising constant is dropped. ``lfv_loss`` adds it back,
    ``log(2 pi sigma^2) / 2 + waic``: the Langevin estimate of the held-out
    negative log-likelihood per sample, which stays comparable between
    models that estimate different ``sigma^2`` (use it to rank models;
    ``waic`` ranks them only under one shared ``noise_variance``). It
    estimates what an estimator's ``generalization_loss_`` (Watanabe's WAIC
    from posterior draws) estimates, by another route, and has its own name.
    """

    lfv: float
    train_loss: float
    waic: float
    noise_variance: float
    pointwise: np.ndarray  # (n,)
    lfv_chains: np.ndarray  # (K,)
    step_size: float
    n_iter: int
    burn_in: int
    lfv_loss: float
    n_refused: np.ndarray  # (K,) steps refused because the move was not finite


def _grad_potential(potential, theta, lam, prec):
    """Per-example losses ``(K, n)`` and ``grad U`` with ``U = lam sum_i l_i + |sqrt(prec) theta|^2 / 2``."""
    losses, grad = potential.per_example_loss_and_grad(theta)
    return losses, lam * grad + prec * theta


def _largest_curvature(potential, theta, lam, prec, generator, n_power=30):
    """``lambda_max`` of ``hess U`` per chain, by power iteration on finite-difference Hessian-vector products."""
    _, g0 = _grad_potential(potential, theta, lam, prec)
    v = torch.randn(theta.shape, generator=generator, dtype=theta.dtype, device=theta.device)
    curv = torch.zeros(theta.shape[0], dtype=theta.dtype, device=theta.device)
    for _ in range(n_power):
        v = v / v.norm(dim=1, keepdim=True)
        eps = 1e-4 * (1.0 + theta.norm(dim=1, keepdim=True))
        _, g1 = _grad_potential(potential, theta + eps * v, lam, prec)
        hv = (g1 - g0) / eps
        curv = (hv * v).sum(1)
        v = hv
    if not bool(torch.isfinite(curv).all()) or bool((curv <= 0).any()):
        raise FloatingPointError(
            "Could not estimate the curvature of the Langevin potential at the fitted parameters; "
            "pass step_size explicitly."
        )
    return curv


def langevin_fv_chains(
    potential, theta0, *, noise_variance, alpha, step_size="auto", n_iter=5000, burn_in=1000, seeds=(0,), penalty=None
):
    """Run K Langevin processes (10) and return LFV (13) of each.

    Low-level entry point on a potential (any model with per-example squared
    losses, see :mod:`skgibbs.potential`); :func:`langevin_functional_variance`
    builds the potential from a fitted model.

    Parameters
    ----------
    potential : MLPPotential, LinearPotential or FunctionPotential
        Per-example losses ``l_i(theta) = (y_i - g_theta(x_i))^2``; its
        ``per_example_loss_and_grad`` is called once per iteration.
    theta0 : torch.Tensor of shape (K, Q)
        Starting points ``gamma^(1)``, one per process.
    noise_variance : float or array-like of shape (K,)
        ``sigma^2``; ``kappa_n = n / sigma^2``.
    alpha : float >= 0
        Ridge weight of ``rho_alpha`` on the per-sample scale of (2).
    step_size : float or "auto", default="auto"
        ``delta`` of (10). ``"auto"`` is ``0.1 / lambda_max`` with
        ``lambda_max`` the largest eigenvalue of the Hessian of ``U`` at
        ``theta0`` (power iteration), per process.
    n_iter : int, default=5000
        Iterates kept for (13) (``T``).
    burn_in : int, default=1000
        Iterates run and discarded before them.
    seeds : sequence of int of length K, default=(0,)
        One ``torch.Generator`` per process.
    penalty : torch.Tensor of shape (Q,), default=None
        1 for the parameters that ``alpha |theta|^2`` penalises, 0 for the
        others (e.g. a linear model's intercept); all when None.

    Returns
    -------
    LangevinFVChains
    """
    theta = theta0.detach().clone()
    K, Q = theta.shape
    n = potential.total_weight  # the rows without weights, their weights' sum with
    sigma2 = torch.as_tensor(np.broadcast_to(np.asarray(noise_variance, dtype=float), (K,)).copy(), dtype=theta.dtype)
    pen = torch.ones(Q, dtype=theta.dtype) if penalty is None else torch.as_tensor(penalty, dtype=theta.dtype)
    lam = (1.0 / (2.0 * sigma2))[:, None]  # U = sum_i l_i / (2 sigma^2) + n alpha |theta_pen|^2 / (2 sigma^2)
    prec = (n * alpha / sigma2)[:, None] * pen[None, :]
    gens = [torch.Generator(device=theta.device).manual_seed(int(s)) for s in seeds]
    if step_size == "auto":
        curv = torch.stack([_largest_curvature(potential, theta[k : k + 1], lam[k], prec[k], g)[0] for k, g in enumerate(gens)])
        delta = _AUTO_DELTA_TIMES_CURVATURE / curv
    else:
        delta = torch.full((K,), float(step_size), dtype=theta.dtype)
    h = (delta / 2)[:, None]  # ULA step: theta - h grad U + sqrt(2 h) e is (10)
    refused = torch.zeros(K, dtype=torch.long)
    losses, grad = _grad_potential(potential, theta, lam, prec)
    ref = losses.clone()  # shift for a stable running variance
    s1, s2 = torch.zeros_like(losses), torch.zeros_like(losses)
    for t in range(burn_in + n_iter):
        if t >= burn_in:  # (13): iterates gamma^(burn_in + 1), ..., gamma^(burn_in + T)
            d = losses - ref
            s1 += d
            s2 += d * d
        new = theta - h * grad + torch.sqrt(2 * h) * normal(gens, Q, theta)
        new_losses, new_grad = _grad_potential(potential, new, lam, prec)
        ok = torch.isfinite(new_grad).all(1) & torch.isfinite(new_losses).all(1)
        refused += ~ok
        okc = ok[:, None]
        theta = torch.where(okc, new, theta)
        losses, grad = torch.where(okc, new_losses, losses), torch.where(okc, new_grad, grad)
    var_loss = (s2 / n_iter - (s1 / n_iter) ** 2).clamp_min(0.0)
    pointwise = (var_loss / (4.0 * sigma2[:, None] ** 2)).cpu().numpy()  # Var[-l_i / (2 sigma^2)]
    w = potential.weight
    lfv = pointwise.sum(1) if w is None else pointwise @ w.double().cpu().numpy()
    return LangevinFVChains(pointwise, lfv, delta.cpu().numpy(), refused.numpy())


def langevin_functional_variance(
    model, X, y, *, alpha, noise_variance=None, step_size="auto", n_iter=5000, burn_in=1000, random_state=None,
    sample_weight=None,
):
    """Langevin functional variance (13) of a fitted model, and training loss + LFV (paper 004 §3-§4).

    Parameters
    ----------
    model : fitted estimator or torch.nn.Module
        One of: a fitted linear regressor with ``coef_``/``intercept_``
        (``Ridge``, ``LinearRegression``, ...), a fitted
        ``sklearn.neural_network.MLPRegressor`` (its weights move into
        skgibbs' functional MLP), a fitted skgibbs estimator (one process per
        chain, started at its last draw, on its internal standardised scale),
        a ``torch.nn.Module`` mapping ``(n, d)`` inputs to ``n`` outputs, or a
        ``Pipeline`` ending in one of these (X goes through the other steps).
    X : array-like of shape (n, d)
    y : array-like of shape (n,)
    alpha : float > 0
        Ridge weight of ``rho_alpha`` on the per-sample scale (2):
        ``(1/n) sum_i (y_i - g(x_i))^2 + alpha |theta|^2`` (all network
        parameters; a linear model's intercept is not penalised). For a
        ``Ridge(alpha=a)`` fitted on n points this is ``a / n``. With 0
        (flat prior) the directions the data do not pin down diffuse freely,
        which leaves LFV intact for a linear model but may not for a
        network.
    noise_variance : float, default=None
        ``sigma^2`` on the scale of ``y``; None is ``RSS / (n - 1)`` of the
        model's prediction, as paper 004 §4.3.
    step_size : float or "auto", default="auto"
        ``delta`` of (10) (on the model's parameter scale); ``"auto"`` is
        ``0.1 / lambda_max`` of the Hessian of the potential at the start.
        Paper 004 uses ``1/(10 n)`` (§4.1), ``1e-5`` (§4.2) and
        ``5e-6 / sigma^2`` (§4.3).
    n_iter : int, default=5000
        Iterates kept (``T`` of (13)).
    burn_in : int, default=1000
        Iterates discarded first (§4.3: 2500 of 10000).
    random_state : int, RandomState instance or None, default=None
    sample_weight : array-like of shape (n,), default=None
        Weights of the examples: the potential's losses, the training loss
        and the functional variance are weighted sums, ``n`` is the sum of
        the weights (integer weights give the values of the data with rows
        repeated), and the default ``noise_variance`` is the weighted
        ``RSS / (n - 1)``. All 1 when None.

    Returns
    -------
    LFVResult

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 3)); y = X @ [1.0, -1.0, 0.5] + rng.normal(size=50)
    >>> res = langevin_functional_variance(Ridge(alpha=0.1).fit(X, y), X, y, alpha=0.002,
    ...                                    n_iter=2000, burn_in=200, random_state=0)
    >>> 2.5 < res.lfv < 5.5      # about the 4 parameters of the model
    True
    """
    for name, value in (("n_iter", n_iter), ("burn_in", burn_in)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < (1 if name == "n_iter" else 0):
            raise ValueError(f"{name} must be an integer >= {1 if name == 'n_iter' else 0}, got {value!r}.")
    if not (isinstance(alpha, (int, float, np.number)) and alpha >= 0):
        raise ValueError(f"alpha must be a number >= 0 (ridge weight of paper 004 (2)), got {alpha!r}.")
    if not (step_size == "auto" or (isinstance(step_size, (int, float, np.number)) and step_size > 0)):
        raise ValueError(f"step_size must be a positive number or 'auto', got {step_size!r}.")
    prob = langevin_problem(model, X, y)
    w = None
    if sample_weight is not None:
        w = check_sample_weight(sample_weight, len(prob.y))
        prob.potential._set_weight(w, prob.theta0)
    resid = prob.y - prob.y_pred
    if noise_variance is None:
        rss, n_w = (float(resid @ resid), len(resid)) if w is None else (float(w @ resid**2), float(w.sum()))
        sigma2 = rss / max(n_w - 1, 1)
    elif isinstance(noise_variance, (int, float, np.number)) and noise_variance > 0:
        sigma2 = float(noise_variance) / prob.var_scale
    else:
        raise ValueError(f"noise_variance must be a positive number or None, got {noise_variance!r}.")
    if not sigma2 > 0:
        raise ValueError("The model interpolates the data (zero residuals): pass noise_variance explicitly.")
    seeds = check_random_state(random_state).randint(0, 2**31 - 1, size=prob.theta0.shape[0])
    with torch_threads():
        out = langevin_fv_chains(
            prob.potential, prob.theta0, noise_variance=sigma2, alpha=float(alpha), step_size=step_size,
            n_iter=int(n_iter), burn_in=int(burn_in), seeds=seeds, penalty=prob.penalty,
        )  # fmt: skip
    _warn_refused(out.n_refused, burn_in + n_iter)
    pointwise = out.pointwise.mean(0)
    crit = langevin_waic(prob.y, prob.y_pred, pointwise, sigma2, sample_weight=w)
    sigma2_y = sigma2 * prob.var_scale
    return LFVResult(
        crit.functional_variance, crit.train_loss, crit.waic, sigma2_y, pointwise,
        out.lfv, float(out.step_size.min()), int(n_iter), int(burn_in),
        0.5 * np.log(2 * np.pi * sigma2_y) + crit.waic, out.n_refused,
    )  # fmt: skip


def _warn_refused(n_refused, total):
    if np.any(n_refused > 0.01 * total):
        warn(
            SamplerWarning(
                "The Langevin process produced non-finite values in more than 1% of its steps (those steps "
                "were refused; the warning's .n_refused of .n_steps). Lower step_size.",
                n_refused=int(n_refused.max()),
                n_steps=int(total),
            ),
            stacklevel=3,
        )
