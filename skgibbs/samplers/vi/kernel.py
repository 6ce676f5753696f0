r"""Tempered mean-field Gaussian variational inference (Bayes by Backprop), paper 002.

The variational family is ``q = prod_j N(mu_j, sigma_j^2)`` over the flat
parameters, ``sigma_j = softplus(s_j)`` (paper 002 App. F). For the Gibbs
target :math:`\pi_\lambda \propto \Pi \exp(-\lambda R_n)` the tempered ELBO
(paper 002 (6), (9)) is

.. math::

    \mathrm{ELBO}_\eta(q) = -\lambda\, \mathbb{E}_q R_n(\theta)
        - \sum_j \eta_j \mathrm{KL}(q_j \,\|\, \Pi_j),

the log-likelihood of example ``i`` being ``-lambda l_i / n`` (so that the
estimator's ``temperature`` keeps its meaning) and ``eta`` the cooling of the
KL term, one value per coordinate (App. D rescales only part of it). Its
maximiser over all distributions is :math:`\propto \Pi\exp(-\lambda R_n/\eta)`
for a scalar ``eta``: ``eta = 1`` is the classical ELBO of
:math:`\pi_\lambda`.

The optimisation runs in *variational coordinates* ``w`` with the network's
parameters ``theta = scale * w`` (``scale`` is 1 except for the output layer
of the mean-field parametrization, paper 002 (3)), so that Adam's steps have
the size the parametrization implies. Each step draws a batch of ``B``
examples without replacement (an epoch's permutation) and one Monte Carlo
sample; the loss term ``lambda / B sum_{i in B} l_i`` is an unbiased estimate of
``lambda E_q R_n``. With ``local=True`` the sample is taken per example of the
pre-activations (the local reparametrisation of Kingma, Salimans & Welling,
2015), which is exact for each example's marginal and lowers the variance of
the gradient; otherwise the weights themselves are drawn
(``w = mu + sigma * eps``, Alg. 1 of App. F).

As for the Markov kernels, :func:`init` and :func:`step` are pure functions
of NamedTuple states, tensors, the :class:`~skgibbs.samplers.Target` and an
explicit ``torch.Generator``: ``step(generators, state, target, params)``.
The data term is the target's potential's: a network's
(:class:`~skgibbs.potential.MLPPotential`) with the local
reparametrisation, any other potential (a
:class:`~skgibbs.potential.FunctionPotential`, a linear model) by draws of
the weights. :func:`skgibbs.samplers.vi.fit` drives the steps (batches,
learning-rate schedule, early stopping) as the runner drives a chain
(:mod:`skgibbs.samplers.vi.optimize`), and only it prints progress.
"""

import math
from typing import NamedTuple

import torch

from ..._random import Batch
from ...model import (
    ACTIVATIONS,
    LOG_VARIANCE_BOUND,
    SCALE_LOSSES,
    log_variance,
    per_example_loss,
    scale_loss_fisher,
)
from ..target import FULL_BATCH

__all__ = [
    "VIParams",
    "VIState",
    "VIInfo",
    "AdamState",
    "init",
    "step",
    "negative_elbo",
    "held_out_objective",
    "laplace_std",
    "softplus",
    "inverse_softplus",
    "kl_divergence",
    "precision_factors",
    "expected_loss_sample",
    "expected_loss",
    "sample",
]


class AdamState(NamedTuple):
    """First and second moments of Adam (Kingma & Ba, 2015) and the step count."""

    m: tuple
    v: tuple
    t: int


def softplus(raw_std):
    """``log(1 + e^s)`` of the raw parameter ``s``, the standard deviation of a coordinate (App. F)."""
    return torch.nn.functional.softplus(raw_std)


def inverse_softplus(sigma):
    """The raw parameter ``s`` with ``softplus(s) = sigma`` (stable for small and large ``sigma``)."""
    sigma = torch.as_tensor(sigma)
    return sigma + torch.log(-torch.expm1(-sigma))


def kl_divergence(mu, sigma, prior_std):
    """Per-coordinate ``KL(N(mu, sigma^2) || N(0, prior_std^2))``.

    Examples
    --------
    >>> kl_divergence(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 1.0]), 1.0)
    tensor([0.0000, 0.5000])
    """
    ratio = sigma / prior_std
    return 0.5 * (ratio * ratio + (mu / prior_std) ** 2 - 1.0) - torch.log(ratio)


def _adam_init(params):
    return AdamState(
        tuple(torch.zeros_like(p) for p in params), tuple(torch.zeros_like(p) for p in params), 0
    )


def _adam_step(params, grads, state, lr, beta1=0.9, beta2=0.999, eps=1e-8):
    """One Adam update in place of ``params``; returns the new moments."""
    t = state.t + 1
    ms, vs = [], []
    for p, g, m, v in zip(params, grads, state.m, state.v):
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        m_hat, v_hat = m / (1 - beta1**t), v / (1 - beta2**t)
        p.sub_(lr * m_hat / (v_hat.sqrt() + eps))
        ms.append(m)
        vs.append(v)
    return AdamState(tuple(ms), tuple(vs), t)


def _local_forward(spec, mean, std, X, generator, moments=False):
    """One draw of the outputs per example by the local reparametrisation; ``(1, m)`` or ``(1, m, C)``.

    With ``moments`` the output layer is not drawn: its mean and variance
    given the drawn hidden layers, each ``(1, m)`` or ``(1, m, C)``.
    """
    act = ACTIVATIONS[spec.activation]
    h = X
    if spec.embedding is not None:
        # the embedding's parameters are drawn once for the batch (the plain reparametrisation):
        # its layer is per input, not a sum over inputs whose pre-activations could be drawn instead
        E = spec.n_embedding_params
        eps = torch.randn((1, E), generator=generator, dtype=mean.dtype, device=mean.device)
        h = spec.embedding.forward(mean[None, :E] + std[None, :E] * eps, X)[0]
    var = std * std
    n_layers = len(spec.shapes)
    for layer, (n_in, n_out, w, b) in enumerate(spec._slices()):
        m = torch.addmm(mean[b], h, mean[w].view(n_in, n_out))
        v = torch.addmm(var[b], h * h, var[w].view(n_in, n_out))
        if moments and layer == n_layers - 1:
            return (m[None], v[None]) if spec.n_outputs > 1 else (m[None, :, 0], v[None, :, 0])
        eps = torch.randn(m.shape, generator=generator, dtype=m.dtype, device=m.device)
        h = m + eps * v.clamp_min(1e-30).sqrt()
        if layer < n_layers - 1:
            h = act(h)
    return h[None] if spec.n_outputs > 1 else h[None, :, 0]


def expected_loss_sample(spec, loss, mean, std, X, y, generator, n_mc=1, local=True, weight=None):
    """A one-draw (per Monte Carlo sample) estimate of ``sum_i w_i E_q l_i`` on ``(X, y)``, differentiable.

    Parameters
    ----------
    spec : MLPSpec
    loss : {"squared", "gaussian", "cross_entropy"}
    mean, std : torch.Tensor of shape (Q,)
        ``q`` in the network's coordinates.
    X : torch.Tensor of shape (m, d)
    y : torch.Tensor of shape (m,)
    generator : torch.Generator
    n_mc : int, default=1
    local : bool, default=True
        Draw the pre-activations per example (local reparametrisation) rather
        than one weight vector shared by the examples. With the squared loss
        the output layer is then integrated out:
        ``E[(y - f)^2 | h] = (y - m(h))^2 + v(h)`` with ``m(h), v(h)`` the
        output's mean and variance given the drawn hidden layers ``h``, so
        that only the hidden layers are drawn (exact for a linear model);
        with the ``"gaussian"`` loss of a mean ``f`` and a log-variance
        ``s``, independent normals given ``h``, ``E[(y - f)^2 e^{-s} + s | h]
        = ((y - m_f)^2 + v_f) e^{-m_s + v_s / 2} + m_s`` (the clipping of
        ``s`` left out).
    weight : torch.Tensor of shape (m,), default=None
        The examples' weights ``w_i`` (all 1 when None).

    Returns
    -------
    torch.Tensor
        Scalar: the mean over the ``n_mc`` draws of ``sum_i l_i``.
    """
    def total(terms):
        return terms.sum() if weight is None else (terms * weight.to(terms.dtype)).sum()

    if local and loss in ("squared", "gaussian"):
        out = 0.0
        for _ in range(n_mc):
            m, v = _local_forward(spec, mean, std, X, generator, moments=True)
            if loss == "squared":
                out = out + total((y[None] - m) ** 2 + v)
                continue
            # the mean and the log-variance outputs are independent normals given h (their weights are
            # independent): E[(y - f)^2 e^{-s} + s | h] = ((y - m_f)^2 + v_f) e^{-m_s + v_s / 2} + m_s.
            # m_s and v_s / 2 are clipped as the loss clips s, in both terms, so that no direction
            # lowers the estimate without end
            m_s = m[..., 1].clamp(-LOG_VARIANCE_BOUND, LOG_VARIANCE_BOUND)
            precision = torch.exp(0.5 * v[..., 1].clamp_max(2 * LOG_VARIANCE_BOUND) - m_s)
            out = out + total(((y[None] - m[..., 0]) ** 2 + v[..., 0]) * precision + m_s)
        return out / n_mc
    if local:
        out = sum(
            total(per_example_loss(loss, _local_forward(spec, mean, std, X, generator), y[None]))
            for _ in range(n_mc)
        )
        return out / n_mc
    eps = torch.randn((n_mc, mean.shape[0]), generator=generator, dtype=mean.dtype, device=mean.device)
    theta = mean + std * eps
    out = spec.forward(theta, X)
    return total(per_example_loss(loss, out, y.expand(out.shape[:2]))) / n_mc


class VIParams(NamedTuple):
    """The constants of a step, in the variational coordinates ``w`` (``theta = scale * w``)."""

    lam: float
    eta: torch.Tensor  # (Q,) KL weights
    prior_std: torch.Tensor  # (Q,) the Gaussian prior of w
    scale: torch.Tensor  # (Q,)
    learning_rate: float = 1e-2
    n_mc: int = 1
    local: bool = True
    rows: torch.Tensor = None  # the step's batch: row indices of the target's data (None: every row)


class VIState(NamedTuple):
    """``q`` in the variational coordinates, ``sigma = softplus(raw_std)``, and Adam's moments."""

    mu: torch.Tensor
    raw_std: torch.Tensor
    adam: AdamState


class VIInfo(NamedTuple):
    """What a step saw: its estimate of ``ELBO_eta`` (the full-data scale) before the update."""

    elbo: float


def init(mu0, params, init_std=0.01):
    """The state with means ``mu0`` (network coordinates) and ``sigma = init_std * prior_std``.

    ``init_std`` is a float or a tensor of shape (Q,), one fraction per coordinate.
    """
    mu = (mu0 / params.scale).clone()
    raw_std = inverse_softplus(init_std * params.prior_std).to(mu.dtype).clone()
    return VIState(mu, raw_std, _adam_init((mu, raw_std)))


def expected_loss(potential, mean, std, rows, generator, n_mc=1, local=True):
    """A one-draw (per Monte Carlo sample) estimate of ``sum_{i in rows} E_q l_i``, differentiable.

    A network's potential (one with a ``spec``) takes the estimate of
    :func:`expected_loss_sample`, with the local reparametrisation when
    ``local``; any other potential is evaluated at ``n_mc`` draws of the
    weights ``theta = mean + std * eps``.

    Parameters
    ----------
    potential : the target's potential
    mean, std : torch.Tensor of shape (Q,)
        ``q`` in the potential's coordinates.
    rows : torch.Tensor of shape (m,) or None
        Row indices of the potential's data (None: every row).
    generator : torch.Generator
    n_mc : int, default=1
    local : bool, default=True

    Returns
    -------
    torch.Tensor
        Scalar: the mean over the ``n_mc`` draws of ``sum_i l_i``.
    """
    spec = getattr(potential, "spec", None)
    if spec is not None:
        X = potential.X if rows is None else potential.X[rows]
        y = potential.y if rows is None else potential.y[rows]
        w = potential.weight
        w = w if w is None or rows is None else w[rows]
        return expected_loss_sample(spec, potential.loss, mean, std, X, y, generator, n_mc, local, weight=w)
    eps = torch.randn((n_mc, mean.shape[0]), generator=generator, dtype=mean.dtype, device=mean.device)
    theta = mean + std * eps
    if rows is None:
        batch = FULL_BATCH
    else:
        size = torch.full((n_mc,), rows.numel(), device=rows.device)
        batch = Batch(rows.expand(n_mc, -1), None, size)
    return potential.loss_sum(theta, batch).sum() / n_mc


def _rows_in(target, params):
    """The examples the step's loss sum counts: ``n``, or the batch's rows in units of ``n / n_rows``."""
    if params.rows is None:
        return target.n_data
    return int(params.rows.numel()) * target.n_data / getattr(target, "n_rows", target.n_data)


def negative_elbo(generator, mu, raw_std, target, params):
    """Unbiased one-batch estimate of ``-ELBO_eta`` at ``(mu, raw_std)``, differentiable.

    ``lambda / B sum_{i in B} l_i`` at one draw of ``q`` (per example with the
    local reparametrisation) plus ``sum_j eta_j KL_j`` in closed form; ``B``
    are the rows ``params.rows`` of ``target``'s data.
    """
    sigma = softplus(raw_std)
    kl = (params.eta * kl_divergence(mu, sigma, params.prior_std)).sum()
    data = expected_loss(
        target.potential, params.scale * mu, params.scale * sigma, params.rows, generator, params.n_mc, params.local
    )
    return params.lam * data / _rows_in(target, params) + kl


def _generator(generators):
    """The one generator of ``q``: a list of one (every kernel's signature) or a bare generator."""
    return generators[0] if isinstance(generators, (list, tuple)) else generators


def step(generators, state, target, params):
    """One Adam step on the rows ``params.rows`` of ``target``'s data; returns ``(VIState, VIInfo)``.

    ``generators`` is a list of one ``torch.Generator`` (``q`` is one
    distribution, not a chain per generator). Raises
    ``FloatingPointError`` when the update leaves non-finite parameters
    (the state is never propagated).
    """
    generator = _generator(generators)
    mu = state.mu.detach().requires_grad_(True)
    raw_std = state.raw_std.detach().requires_grad_(True)
    neg = negative_elbo(generator, mu, raw_std, target, params)
    grads = torch.autograd.grad(neg, (mu, raw_std))
    with torch.no_grad():
        mu, raw_std = mu.detach().clone(), raw_std.detach().clone()
        adam = _adam_step((mu, raw_std), grads, state.adam, params.learning_rate)
    if not (torch.isfinite(mu).all() and torch.isfinite(raw_std).all()):
        raise FloatingPointError(
            "The variational optimisation diverged (non-finite parameters); lower the learning rate "
            "(MeanFieldVI(learning_rate=...))."
        )
    return VIState(mu, raw_std, adam), VIInfo(-float(neg.detach()))


def held_out_objective(generators, state, target, params, *, n_draws=8):
    """``lambda`` times the mean loss on ``target``'s data over ``n_draws`` draws of ``q``, plus the weighted KL."""
    generator, potential = _generator(generators), target.potential
    with torch.no_grad():
        sigma = softplus(state.raw_std)
        eps = torch.randn(
            (n_draws, state.mu.shape[0]), generator=generator, dtype=state.mu.dtype, device=state.mu.device
        )
        theta = params.scale * (state.mu + sigma * eps)
        spec = getattr(potential, "spec", None)
        if spec is not None:
            out = spec.forward(theta, potential.X)
            losses = per_example_loss(potential.loss, out, potential.y.expand(out.shape[:2]))
            w = potential.weight
            risk = losses.mean() if w is None else (losses * w).sum(1).mean() / potential.total_weight
        else:
            risk = potential.loss_sum(theta, FULL_BATCH).mean() / potential.total_weight
        kl = (params.eta * kl_divergence(state.mu, sigma, params.prior_std)).sum()
        return float(params.lam * risk + kl)


def _output_hessian_factors(loss, out, y):
    """Vectors ``a_c`` (per example) with ``sum_c a_c a_c' = d^2 l / d out^2``; shape ``(C', m, n_outputs)``."""
    if loss == "squared":
        return torch.full((1, *out.shape), math.sqrt(2.0), dtype=out.dtype, device=out.device)
    if loss in SCALE_LOSSES:
        # the expected (Fisher) Hessian of the loss in (m, s), positive where the Hessian itself need not be
        location, log_scale = scale_loss_fisher(loss)
        factors = torch.zeros((2, *out.shape), dtype=out.dtype, device=out.device)
        factors[0, ..., 0] = math.sqrt(location) * torch.exp(-0.5 * log_variance(out[..., 1]))
        factors[1, ..., 1] = math.sqrt(log_scale)
        return factors
    if out.shape[-1] == 1:  # binary cross-entropy on one logit: l'' = p (1 - p)
        p = torch.sigmoid(out)
        return (p * (1 - p)).sqrt()[None]
    # softmax: diag(p) - p p' = A A' with the columns a_c = sqrt(p_c) (e_c - p)
    p = torch.softmax(out, dim=-1)
    root = p.sqrt()
    eye = torch.eye(out.shape[-1], dtype=out.dtype, device=out.device)
    return (root.T[:, :, None] * (eye[:, None, :] - p[None])).contiguous()


def laplace_std(spec, loss, mean, X, y, lam, eta, prior_std, n_data=None, weight=None, n_rows=None):
    """The mean-field optimum of the Gauss-Newton (Laplace) approximation at ``mean``.

    For a Gaussian target ``q_j`` of the tempered ELBO has
    ``sigma_j^-2 = lambda H_jj / (n eta_j) + prior_std_j^-2``, with ``H`` the
    Hessian of ``sum_i l_i``; here ``H_jj`` is the exact diagonal of the
    generalized Gauss-Newton matrix ``sum_i J_i' (d^2 l_i / d f^2) J_i``
    on ``(X, y)``, scaled by ``n_data / m`` when ``X`` holds ``m`` of the
    ``n_data`` examples. For a linear model with the squared loss it is the
    mean-field optimum itself.

    Parameters
    ----------
    spec : MLPSpec
    loss : {"squared", "gaussian", "cross_entropy"}
    mean : torch.Tensor of shape (Q,)
    X : torch.Tensor of shape (m, d)
    y : torch.Tensor of shape (m,)
    lam : float
    eta, prior_std : torch.Tensor of shape (Q,)
    n_data : int or float, default=None
        ``n`` (with weights their sum ``n_w``); None: ``m``.
    weight : torch.Tensor of shape (m,), default=None
        The weights of the rows ``X`` (all 1 when None).
    n_rows : int, default=None
        The rows ``X`` is a sample of; ``n_data`` when None.

    Returns
    -------
    torch.Tensor of shape (Q,)

    Examples
    --------
    >>> from skgibbs.model import MLPSpec
    >>> X = torch.tensor([[1.0], [-1.0]])
    >>> ones = torch.ones(2)
    >>> laplace_std(MLPSpec(1, ()), "squared", torch.zeros(2), X, torch.zeros(2), 1.5, ones, ones)
    tensor([0.5000, 0.5000])
    """
    act = ACTIVATIONS[spec.activation]
    with torch.enable_grad():
        h, inputs, pre = X, [], []
        if spec.embedding is not None:
            phi, a_emb, h = _embedding_graph(spec.embedding, mean, X)
        n_layers = len(spec.shapes)
        for layer, (n_in, n_out, w, b) in enumerate(spec._slices()):
            inputs.append(h)
            a = torch.addmm(mean[b].detach(), h, mean[w].detach().view(n_in, n_out)).requires_grad_(True)
            pre.append(a)
            h = act(a) if layer < n_layers - 1 else a
        curvature = torch.zeros_like(mean)
        factors = _output_hessian_factors(loss, h.detach(), y)
        if weight is not None:  # sum_i w_i J_i' H_i J_i: each row's factors times sqrt(w_i)
            factors = factors * weight.to(factors.dtype).sqrt().reshape(1, -1, *([1] * (factors.dim() - 2)))
        leaves = pre if spec.embedding is None else pre + [a_emb, phi]
        for c, factor in enumerate(factors):
            deltas = torch.autograd.grad(h, leaves, grad_outputs=factor, retain_graph=c < len(factors) - 1)
            for x_in, delta, (_, _, w, b) in zip(inputs, deltas, spec._slices()):
                d2 = delta * delta
                curvature[w] += (x_in.detach() ** 2).T.mm(d2).reshape(-1)
                curvature[b] += d2.sum(0)
            if spec.embedding is not None:
                curvature[: spec.n_embedding_params] += _embedding_curvature(
                    spec.embedding, mean, X, phi, *deltas[-2:]
                )
    m = X.shape[0]
    n = m if n_data is None else n_data
    curvature *= (n if n_rows is None else n_rows) / m
    return (lam * curvature / n / eta + prior_std**-2).rsqrt()


def _embedding_graph(embedding, mean, X):
    """``(phi, a, z)`` of the embedding at ``mean``: ``phi`` a leaf, ``a`` its pre-activations, ``z = relu(a)``.

    Shapes ``(m, d, width)``, ``(m, d, d_embedding)`` and ``(m, d * d_embedding)``.
    """
    d, k, theta = embedding.n_features, embedding.d_embedding, mean.detach()[None]
    phi = embedding.encode(theta, X).reshape(X.shape[0], d, embedding.width).requires_grad_(True)
    sl = embedding.slices()
    W = theta[0, sl["weights"]].view(d, embedding.width, k)
    a = torch.einsum("ndm,dmo->ndo", phi, W) + theta[0, sl["biases"]].view(d, k)
    return phi, a, torch.relu(a).reshape(X.shape[0], d * k)


def _embedding_curvature(embedding, mean, X, phi, delta_a, delta_phi):
    """The Gauss-Newton diagonal of the embedding's parameters from one factor's per-example derivatives.

    ``delta_a`` ``(m, d, k)`` and ``delta_phi`` ``(m, d, width)`` are the
    derivatives of ``a_c' f(x_i)`` by the embedding's pre-activations and
    encodings; each parameter's per-example derivative is squared and
    summed over the examples, as for the dense layers.
    """
    out = torch.zeros(embedding.n_params, dtype=mean.dtype, device=mean.device)
    sl = embedding.slices()
    out[sl["weights"]] = torch.einsum("ndm,ndo->dmo", phi.detach() ** 2, delta_a**2).reshape(-1)
    out[sl["biases"]] = (delta_a**2).sum(0).reshape(-1)
    if embedding.kind == "periodic":
        F = embedding.n_basis
        c = mean.detach()[sl["frequencies"]].view(embedding.n_features, F)
        arg = (2 * math.pi) * X[..., None] * c
        # d sin(2 pi c x) / dc = 2 pi x cos(.), d cos(2 pi c x) / dc = -2 pi x sin(.)
        g = (
            (2 * math.pi)
            * X[..., None]
            * (delta_phi[..., :F] * torch.cos(arg) - delta_phi[..., F:] * torch.sin(arg))
        )
        out[sl["frequencies"]] = (g**2).sum(0).reshape(-1)
    return out


def precision_factors(hyper, mean, std, eta):
    """The mean-field Gamma factors ``q(tau_g)`` of a hierarchical prior given ``q(theta)``.

    With ``q(theta) = prod_j N(m_j, s_j^2)`` (network coordinates) and the
    tempered objective ``-sum_j eta_j E_q KL(q_j || N(0, 1 / tau_g(j))) -
    KL(q(tau) || p(tau))``, the optimal factor is
    ``Gamma(a_g + sum_{j in g} eta_j / 2, b_g + sum_{j in g} eta_j (m_j^2 + s_j^2) / 2)``
    (coordinate ascent; Bishop, 2006, §10.1.1). Returns its shapes and rates, ``(G,)`` each.
    """
    group = hyper.group.to(mean.device)
    G = hyper.n_groups
    index, inside = group.clamp(min=0), (group >= 0).to(mean.dtype)
    weight = eta * inside
    shape = hyper.shape.to(mean.device, torch.float64) + 0.5 * torch.zeros(G, dtype=torch.float64, device=mean.device).index_add_(0, index, weight.double())
    second = weight.double() * (mean.double() ** 2 + std.double() ** 2)
    rate = hyper.rate.to(mean.device, torch.float64) + 0.5 * torch.zeros(G, dtype=torch.float64, device=mean.device).index_add_(0, index, second)
    return shape, rate


def sample(mean, std, n_draws, generator, dtype=torch.float32):
    """``n_draws`` independent draws from ``q = N(mean, diag(std^2))``, shape ``(n_draws, Q)``."""
    mean = torch.as_tensor(mean, dtype=dtype)
    std = torch.as_tensor(std, dtype=dtype)
    eps = torch.randn((n_draws, mean.shape[0]), generator=generator, dtype=dtype)
    return mean + std * eps
