r"""The Stein operator (3.3) of paper 003 applied to a multilayer perceptron.

For a twice differentiable ``phi: R^d -> R`` and a target ``pi`` on ``R^d``,

.. math::

    g_\varphi(x) = \Delta\varphi(x) + \langle \nabla \log\pi(x), \nabla\varphi(x) \rangle,

and integration by parts gives ``pi(g_phi) = 0`` under mild conditions on
the tails. Here ``phi`` is an MLP and its gradient and Laplacian are pushed
forward through the layers together with its value, exactly and for all
points at once: no per-point Hessian is ever formed.

The functions below work on torch tensors and are differentiable with
respect to the network parameters (the training of
:class:`~skgibbs.control_variates.NeuralControlVariate` relies on it). The
score ``grad log pi`` enters as an array of values at the points, computed
once per chain by :func:`evaluate_score`, because it does not depend on
``phi``.
"""

import numpy as np
import torch

from .._warnings import warn
from ..exceptions import ControlVariateWarning

__all__ = ["STEIN_ACTIVATIONS", "mlp_derivatives", "stein_operator", "evaluate_score"]


# Each activation returns (sigma(z), sigma'(z), sigma''(z)).
def _recu(z):
    r = torch.relu(z)
    r2 = r * r
    return r2 * r, 3.0 * r2, 6.0 * r


def _requ(z):
    r = torch.relu(z)
    return r * r, 2.0 * r, 2.0 * (z > 0).to(z.dtype)


def _tanh(z):
    t = torch.tanh(z)
    d1 = 1.0 - t * t
    return t, d1, -2.0 * t * d1


def _relu(z):
    step = (z > 0).to(z.dtype)
    return torch.relu(z), step, torch.zeros_like(z)


STEIN_ACTIVATIONS = {"recu": _recu, "requ": _requ, "tanh": _tanh, "relu": _relu}

RELU_MESSAGE = (
    "activation='relu' is not twice continuously differentiable: the Laplacian of the network "
    "vanishes almost everywhere, the control variate degenerates to <grad log pi, grad phi> and "
    "pi(g_phi) = 0 may fail (paper 003 §6.2 reports a bias). Use 'recu' (default), 'requ' or 'tanh'."
)


def _activation(name):
    if name not in STEIN_ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(STEIN_ACTIVATIONS)}, got {name!r}.")
    return STEIN_ACTIVATIONS[name]


def mlp_derivatives(X, coefs, intercepts, activation="recu", value=True):
    r"""Value, gradient and Laplacian in ``x`` of an MLP, for all points at once.

    The network is ``phi(x) = a_L W_L + b_L`` with ``a_0 = x`` and
    ``a_l = sigma(a_{l-1} W_l + b_l)`` (scikit-learn's layout: ``coefs[l]``
    has shape ``(n_in, n_out)``).

    Parameters
    ----------
    X : torch.Tensor of shape (n, d)
    coefs : list of torch.Tensor
        Weights, ``coefs[l]`` of shape ``(n_in, n_out)``; the last one has
        ``n_out = 1``. One tensor is the linear function ``x W + b``.
    intercepts : list of torch.Tensor
        Biases, ``intercepts[l]`` of shape ``(n_out,)``.
    activation : {"recu", "requ", "tanh", "relu"}, default="recu"
        Hidden-layer activation: ``max(z, 0)**3``, ``max(z, 0)**2``,
        ``tanh(z)`` or ``max(z, 0)`` (whose second derivative is taken as 0).
    value : bool, default=True
        Also compute ``phi(x)``; the Stein operator does not need it.

    Returns
    -------
    value : torch.Tensor of shape (n,) or None
    gradient : torch.Tensor of shape (n, d)
    laplacian : torch.Tensor of shape (n,)

    Notes
    -----
    With ``J`` the Jacobian of a layer's output in ``x`` (shape ``(n, d, m)``)
    and ``L`` its Laplacian (shape ``(n, m)``):

    - affine ``z = a W + b``: ``J_z = J_a W``, ``L_z = L_a W``;
    - activation ``h = sigma(z)``: ``J_h = sigma'(z) J_z``,
      ``L_h = sigma''(z) sum_j (J_z)_j^2 + sigma'(z) L_z``, elementwise,
      the sum over the ``d`` input directions.

    The first layer has ``J_z = W`` for every point and ``L_z = 0``. The cost
    is ``O(n d width^2)``, against ``O(n d^2 width^2)`` and more for
    per-point Hessians.

    Examples
    --------
    >>> import torch
    >>> W1, b1 = torch.ones(2, 1), torch.tensor([1.0])      # phi(x) = (x1 + x2 + 1)_+^2
    >>> W2, b2 = torch.ones(1, 1), torch.zeros(1)
    >>> v, g, lap = mlp_derivatives(torch.tensor([[1.0, 2.0]]), [W1, W2], [b1, b2], "requ")
    >>> v.item(), g.tolist(), lap.item()                     # 16, 2 * 4 * (1, 1), 2 * 2
    (16.0, [[8.0, 8.0]], 4.0)
    """
    act = _activation(activation)
    n, d = X.shape
    a, Jz, Lz = X, None, None  # first layer: J_z = W for every point, L_z = 0
    for k, (W, b) in enumerate(zip(coefs[:-1], intercepts[:-1])):
        if k > 0:
            Jh = s1.unsqueeze(1) * (W_prev if Jz is None else Jz)  # (n, d, m)
            Lh = s2 * _sum_sq(W_prev, Jz) + (0.0 if Lz is None else s1 * Lz)
            Jz, Lz = Jh @ W, Lh @ W
        z = a @ W + b
        a, s1, s2 = act(z)
        W_prev = W
    W, b = coefs[-1], intercepts[-1]
    phi = (a @ W + b)[:, 0] if value else None
    if len(coefs) == 1:  # linear phi
        return phi, W[:, 0].expand(n, d), X.new_zeros(n)
    # contract the last hidden layer with the output weights v before forming its Jacobian
    v = W[:, 0]
    u1, u2 = s1 * v, s2 * v
    if Jz is None:  # one hidden layer: grad = (sigma' v) W^T, no (n, d, m) tensor at all
        grad = u1 @ W_prev.T
    else:
        grad = torch.einsum("ndm,nm->nd", Jz, u1)
    lap = (u2 * _sum_sq(W_prev, Jz)).sum(1)
    if Lz is not None:
        lap = lap + (u1 * Lz).sum(1)
    return phi, grad, lap


def _sum_sq(W_first, Jz):
    """``sum_j (J_z)_j^2`` over the input directions: ``(m,)`` for the first layer, else ``(n, m)``."""
    return (W_first * W_first).sum(0) if Jz is None else (Jz * Jz).sum(1)


def stein_operator(X, score, coefs, intercepts, activation="recu"):
    r"""Stein control variate ``g_phi = Laplacian phi + <grad log pi, grad phi>`` (3.3).

    Parameters
    ----------
    X : torch.Tensor of shape (n, d)
        Points (a chain, in any order: ``g_phi`` acts pointwise).
    score : torch.Tensor of shape (n, d)
        ``grad log pi`` at the points (see :func:`evaluate_score`).
    coefs, intercepts : list of torch.Tensor
        The network ``phi``, as in :func:`mlp_derivatives`.
    activation : {"recu", "requ", "tanh", "relu"}, default="recu"
        ``"relu"`` raises a :class:`~skgibbs.ControlVariateWarning`: its
        Laplacian is 0 almost everywhere.

    Returns
    -------
    torch.Tensor of shape (n,)
        Differentiable with respect to ``coefs`` and ``intercepts``.

    Notes
    -----
    If ``phi`` is ``C^2`` and ``pi`` decays fast enough,
    ``pi(g_phi) = 0``; if ``g_phi* = f - pi(f)`` solves the Poisson
    equation (3.4), the control variate removes all of the asymptotic
    variance of ``pi_n(f)``.

    References
    ----------
    .. [1] Belomestny, Goldman, Naumov, Samsonov. Theoretical guarantees for
       neural control variates in MCMC, §3, (3.3)-(3.4).

    Examples
    --------
    >>> import torch
    >>> X = torch.tensor([[0.5, -1.0]])
    >>> W1, b1 = torch.tensor([[1.0], [2.0]]), torch.tensor([3.0])   # phi(x) = (x1 + 2 x2 + 3)_+^3
    >>> W2, b2 = torch.ones(1, 1), torch.zeros(1)
    >>> g = stein_operator(X, -X, [W1, W2], [b1, b2])                  # pi = N(0, I): score -x
    >>> round(g.item(), 4)     # 6 * 1.5 * 5 - 3 * 1.5**2 * (0.5 - 2)
    55.125
    """
    if activation == "relu":
        warn(ControlVariateWarning(RELU_MESSAGE), stacklevel=2)
    _, grad, lap = mlp_derivatives(X, coefs, intercepts, activation, value=False)
    return lap + (score * grad).sum(1)


def evaluate_score(X, grad_log_prob=None, log_prob=None):
    """``grad log pi`` at the points, from exactly one of two callables, checked.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    grad_log_prob : callable, default=None
        NumPy in, NumPy out: ``grad_log_prob(X)`` with ``X`` of shape
        ``(n, d)`` returns an array of shape ``(n, d)``.
    log_prob : callable, default=None
        torch in, torch out: ``log_prob(X)`` with ``X`` a float64 tensor of
        shape ``(n, d)`` returns the log density (up to a constant) of shape
        ``(n,)``, written with differentiable torch operations; the score is
        its gradient by autograd.

    Returns
    -------
    ndarray of shape (n, d)

    Examples
    --------
    >>> import numpy as np
    >>> evaluate_score(np.array([[1.0, 2.0]]), log_prob=lambda x: -0.5 * (x**2).sum(1))
    array([[-1., -2.]])
    """
    X = np.asarray(X, dtype=np.float64)
    if (grad_log_prob is None) == (log_prob is None):
        raise ValueError(
            "Give exactly one of grad_log_prob (NumPy (n, d) -> (n, d)) and log_prob "
            "(torch (n, d) -> (n,)) to define the target pi."
        )
    if grad_log_prob is not None:
        if not callable(grad_log_prob):
            raise TypeError(f"grad_log_prob must be a callable, got {type(grad_log_prob).__name__}.")
        score, name = np.asarray(grad_log_prob(X.copy()), dtype=np.float64), "grad_log_prob"
    else:
        if not callable(log_prob):
            raise TypeError(f"log_prob must be a callable, got {type(log_prob).__name__}.")
        score, name = _autograd_score(X, log_prob), "log_prob"
    if score.shape != X.shape:
        raise ValueError(
            f"{name} must give gradients of shape {X.shape} (one row per point of X), got {score.shape}."
        )
    if not np.all(np.isfinite(score)):
        bad = int(np.sum(~np.all(np.isfinite(score), axis=1)))
        raise ValueError(
            f"{name} gave NaN or infinite gradients at {bad} of {X.shape[0]} points; check the "
            "callable (and that the chain stays where the target density is positive)."
        )
    return score


def _autograd_score(X, log_prob):
    Xt = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    with torch.enable_grad():
        lp = log_prob(Xt)
        if not isinstance(lp, torch.Tensor) or lp.shape != (X.shape[0],):
            shape = tuple(lp.shape) if hasattr(lp, "shape") else type(lp).__name__
            raise ValueError(f"log_prob must return a torch tensor of shape ({X.shape[0]},), got {shape}.")
        if not bool(torch.isfinite(lp).all()):
            bad = int((~torch.isfinite(lp)).sum())
            raise ValueError(
                f"log_prob gave NaN or infinite values at {bad} of {X.shape[0]} points; check the callable "
                "(and that the chain stays where the target density is positive)."
            )
        if not lp.requires_grad:
            raise ValueError("log_prob must be written with differentiable torch operations on its input.")
        (grad,) = torch.autograd.grad(lp.sum(), Xt)
    return grad.detach().numpy()
