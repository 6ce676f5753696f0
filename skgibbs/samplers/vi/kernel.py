r"""Tempered mean-field Gaussian variational inference (Bayes by Backprop), paper 002.

The variational family is ``q = prod_j N(mu_j, sigma_j^2)`` over the flat
parameters, ``sigma_j = softplus(rho_j)`` (paper 002 App. F). For the Gibbs
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
of NamedTuple states, tensors and an explicit ``torch.Generator``;
:func:`fit` drives them (batches, learning-rate schedule, early stopping)
as the runner drives a chain, and only it prints progress, with
``verbose``.
"""

import math
from typing import NamedTuple

import numpy as np
import torch

from ..._progress import progress, progress_close
from ...model import ACTIVATIONS, per_example_loss

__all__ = [
    "VIConfig",
    "VIResult",
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
    "fit",
    "sample",
]


class VIConfig(NamedTuple):
    """Settings of :func:`fit`.

    Attributes
    ----------
    lam : float
        Inverse temperature ``lambda`` of the target ``exp(-lambda R_n)``.
    eta : float or torch.Tensor of shape (Q,)
        KL weight (cooling) ``eta``, per coordinate when a tensor.
    n_iter : int
        Maximal number of Adam steps.
    learning_rate : float
        Adam's learning rate until the decay phase, which anneals it (cosine)
        to ``final_lr_fraction * learning_rate``.
    batch_size : int
        Examples per step (all of them when larger than ``n``).
    n_mc : int
        Monte Carlo samples per step.
    local : bool
        Local reparametrisation of the pre-activations.
    early_stopping : bool
        Start the decay phase as soon as the objective has stopped
        improving: every ``check_every`` steps the mean of the steps'
        estimates of ``-ELBO_eta`` over that window is compared with the
        reference window's, and after ``patience`` windows none of which
        is lower by more than twice the standard error of the difference
        the decay begins. False (or no plateau): the decay phase is the
        last ``decay_fraction`` of ``n_iter``.
    check_every, patience : int
        Window length and number of windows of the plateau rule.
    decay_fraction : float in (0, 1)
        The decay phase's share of all the steps taken; its second half
        is averaged (Polyak-Ruppert).
    min_decay_iter : int
        Shortest decay phase.
    init_std : float or "laplace"
        Initial ``sigma``: a fraction of the prior standard deviation, or
        ``"laplace"``, the mean-field optimum of the Gauss-Newton
        (Laplace) approximation at the starting mean (:func:`laplace_std`).
    verbose : int
        Print progress to stderr.
    """

    lam: float = 1.0
    eta: object = 1.0
    n_iter: int = 3000
    learning_rate: float = 1e-2
    batch_size: int = 128
    n_mc: int = 1
    local: bool = True
    early_stopping: bool = True
    check_every: int = 100
    patience: int = 5
    decay_fraction: float = 0.3
    min_decay_iter: int = 1000
    init_std: object = "laplace"
    final_lr_fraction: float = 0.3
    verbose: int = 0


class VIResult(NamedTuple):
    """Output of :func:`fit`; all arrays are NumPy, in the network's coordinates ``theta``."""

    mean: np.ndarray  # (Q,)
    std: np.ndarray  # (Q,)
    elbo: np.ndarray  # (n_iter,) the per-step estimate of ELBO_eta (full-data scale)
    kl: float  # KL(q || prior), unweighted
    weighted_kl: float  # sum_j eta_j KL_j
    n_iter: int
    stopped_early: bool  # the objective reached its plateau before the last decay_fraction of n_iter
    window_objective: np.ndarray  # (n_checks,) mean -ELBO_eta estimate per window until the decay (empty without)
    precision_shape: np.ndarray = None  # (G,) the Gamma factors q(tau_g) of a hierarchical prior (None without)
    precision_rate: np.ndarray = None  # (G,)


class AdamState(NamedTuple):
    """First and second moments of Adam (Kingma & Ba, 2015) and the step count."""

    m: tuple
    v: tuple
    t: int


def softplus(rho):
    """``log(1 + e^rho)``, the standard deviation of a coordinate (App. F)."""
    return torch.nn.functional.softplus(rho)


def inverse_softplus(sigma):
    """``rho`` with ``softplus(rho) = sigma`` (stable for small and large ``sigma``)."""
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


def expected_loss_sample(spec, loss, mean, std, X, y, generator, n_mc=1, local=True):
    """A one-draw (per Monte Carlo sample) estimate of ``sum_i E_q l_i`` on ``(X, y)``, differentiable.

    Parameters
    ----------
    spec : MLPSpec
    loss : {"squared", "cross_entropy"}
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
        that only the hidden layers are drawn (exact for a linear model).

    Returns
    -------
    torch.Tensor
        Scalar: the mean over the ``n_mc`` draws of ``sum_i l_i``.
    """
    if local and loss == "squared":
        total = 0.0
        for _ in range(n_mc):
            m, v = _local_forward(spec, mean, std, X, generator, moments=True)
            total = total + ((y[None] - m) ** 2 + v).sum()
        return total / n_mc
    if local:
        total = sum(
            per_example_loss(loss, _local_forward(spec, mean, std, X, generator), y[None]).sum()
            for _ in range(n_mc)
        )
        return total / n_mc
    eps = torch.randn((n_mc, mean.shape[0]), generator=generator, dtype=mean.dtype, device=mean.device)
    theta = mean + std * eps
    out = spec.forward(theta, X)
    return per_example_loss(loss, out, y.expand(out.shape[:2])).sum() / n_mc


class VIParams(NamedTuple):
    """The constants of a step, in the variational coordinates ``w`` (``theta = scale * w``)."""

    lam: float
    eta: torch.Tensor  # (Q,) KL weights
    prior_std: torch.Tensor  # (Q,) the Gaussian prior of w
    scale: torch.Tensor  # (Q,)
    loss: str = "squared"
    learning_rate: float = 1e-2
    n_mc: int = 1
    local: bool = True


class VIState(NamedTuple):
    """``q`` in the variational coordinates, ``sigma = softplus(rho)``, and Adam's moments."""

    mu: torch.Tensor
    rho: torch.Tensor
    adam: AdamState


class VIInfo(NamedTuple):
    """What a step saw: its estimate of ``ELBO_eta`` (the full-data scale) before the update."""

    elbo: float


def init(mu0, params, init_std=0.01):
    """The state with means ``mu0`` (network coordinates) and ``sigma = init_std * prior_std``.

    ``init_std`` is a float or a tensor of shape (Q,), one fraction per coordinate.
    """
    mu = (mu0 / params.scale).clone()
    rho = inverse_softplus(init_std * params.prior_std).to(mu.dtype).clone()
    return VIState(mu, rho, _adam_init((mu, rho)))


def negative_elbo(generator, mu, rho, spec, X, y, params):
    """Unbiased one-batch estimate of ``-ELBO_eta`` at ``(mu, rho)``, differentiable.

    ``lambda / B sum_{i in B} l_i`` at one draw of ``q`` (per example with the
    local reparametrisation) plus ``sum_j eta_j KL_j`` in closed form.
    """
    sigma = softplus(rho)
    kl = (params.eta * kl_divergence(mu, sigma, params.prior_std)).sum()
    data = expected_loss_sample(
        spec, params.loss, params.scale * mu, params.scale * sigma, X, y, generator, params.n_mc, params.local
    )
    return params.lam * data / X.shape[0] + kl


def step(generator, state, spec, X, y, params):
    """One Adam step on the batch ``(X, y)``; returns ``(VIState, VIInfo)``.

    Raises ``FloatingPointError`` when the update leaves non-finite
    parameters (the state is never propagated).
    """
    mu = state.mu.detach().requires_grad_(True)
    rho = state.rho.detach().requires_grad_(True)
    neg = negative_elbo(generator, mu, rho, spec, X, y, params)
    grads = torch.autograd.grad(neg, (mu, rho))
    with torch.no_grad():
        mu, rho = mu.detach().clone(), rho.detach().clone()
        adam = _adam_step((mu, rho), grads, state.adam, params.learning_rate)
    if not (torch.isfinite(mu).all() and torch.isfinite(rho).all()):
        raise FloatingPointError(
            "The variational optimisation diverged (non-finite parameters); lower the learning rate "
            "(MeanFieldVI(learning_rate=...))."
        )
    return VIState(mu, rho, adam), VIInfo(-float(neg.detach()))


def held_out_objective(generator, state, spec, X, y, params, n_draws=8):
    """``lambda`` times the mean loss on ``(X, y)`` over ``n_draws`` draws of ``q``, plus the weighted KL."""
    with torch.no_grad():
        sigma = softplus(state.rho)
        eps = torch.randn(
            (n_draws, state.mu.shape[0]), generator=generator, dtype=state.mu.dtype, device=state.mu.device
        )
        out = spec.forward(params.scale * (state.mu + sigma * eps), X)
        risk = per_example_loss(params.loss, out, y.expand(out.shape[:2])).mean()
        kl = (params.eta * kl_divergence(state.mu, sigma, params.prior_std)).sum()
        return float(params.lam * risk + kl)


def _output_hessian_factors(loss, out, y):
    """Vectors ``a_c`` (per example) with ``sum_c a_c a_c' = d^2 l / d out^2``; shape ``(C', m, n_outputs)``."""
    if loss == "squared":
        return torch.full((1, *out.shape), math.sqrt(2.0), dtype=out.dtype, device=out.device)
    if out.shape[-1] == 1:  # binary cross-entropy on one logit: l'' = p (1 - p)
        p = torch.sigmoid(out)
        return (p * (1 - p)).sqrt()[None]
    # softmax: diag(p) - p p' = A A' with the columns a_c = sqrt(p_c) (e_c - p)
    p = torch.softmax(out, dim=-1)
    root = p.sqrt()
    eye = torch.eye(out.shape[-1], dtype=out.dtype, device=out.device)
    return (root.T[:, :, None] * (eye[:, None, :] - p[None])).contiguous()


def laplace_std(spec, loss, mean, X, y, lam, eta, prior_std, n_data=None):
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
    loss : {"squared", "cross_entropy"}
    mean : torch.Tensor of shape (Q,)
    X : torch.Tensor of shape (m, d)
    y : torch.Tensor of shape (m,)
    lam : float
    eta, prior_std : torch.Tensor of shape (Q,)
    n_data : int, default=None
        ``n``; None: ``m``.

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
        n_layers = len(spec.shapes)
        for layer, (n_in, n_out, w, b) in enumerate(spec._slices()):
            inputs.append(h)
            a = torch.addmm(mean[b].detach(), h, mean[w].detach().view(n_in, n_out)).requires_grad_(True)
            pre.append(a)
            h = act(a) if layer < n_layers - 1 else a
        curvature = torch.zeros_like(mean)
        factors = _output_hessian_factors(loss, h.detach(), y)
        for c, factor in enumerate(factors):
            deltas = torch.autograd.grad(h, pre, grad_outputs=factor, retain_graph=c < len(factors) - 1)
            for x_in, delta, (_, _, w, b) in zip(inputs, deltas, spec._slices()):
                d2 = delta * delta
                curvature[w] += (x_in.detach() ** 2).T.mm(d2).reshape(-1)
                curvature[b] += d2.sum(0)
    m = X.shape[0]
    curvature *= (m if n_data is None else n_data) / m
    return (lam * curvature / (m if n_data is None else n_data) / eta + prior_std**-2).rsqrt()


class _Plateau:
    """The plateau rule of :func:`fit` on windows of the steps' objective estimates."""

    def __init__(self, patience):
        self.patience, self.reference, self.since, self.means = patience, None, 0, []

    def update(self, values):
        """Add one window of ``-ELBO`` estimates; True once ``patience`` windows brought no clear drop."""
        values = np.asarray(values)
        mean = float(values.mean())
        # noise of a window's mean from successive differences, free of the trend within it
        var = float(np.mean(np.diff(values) ** 2)) / 2 / len(values)
        self.means.append(mean)
        if self.reference is None or mean < self.reference[0] - 2 * math.sqrt(var + self.reference[1]):
            self.reference, self.since = (mean, var), 0
        else:
            self.since += 1
        return self.since >= self.patience


def _learning_rate(config, it, decay_start, decay_len):
    if decay_start is None or it < decay_start:
        return config.learning_rate
    frac = (it - decay_start) / max(1, decay_len - 1)
    low = config.final_lr_fraction
    return config.learning_rate * (low + (1 - low) * 0.5 * (1 + math.cos(math.pi * min(1.0, frac))))


def _decay_length(config, it):
    """Steps of a decay phase begun after ``it`` steps: ``decay_fraction`` of the total."""
    f = config.decay_fraction
    return max(int(config.min_decay_iter), int(math.ceil(f / (1 - f) * it)))


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


def _hyper_std(hyper, shape, rate, dtype):
    """Every parameter's prior scale under the factors: ``E[tau_g]^(-1/2)``, or its fixed scale."""
    group = hyper.group.to(shape.device)
    mean_precision = (shape / rate)[group.clamp(min=0)]
    return torch.where(group >= 0, mean_precision.rsqrt(), hyper.std.to(shape.device, torch.float64)).to(dtype)


def fit(spec, X, y, mu0, prior_std, config, generator, loss="squared", scale=None, hyper=None):
    """Maximise the tempered ELBO of ``q`` over ``(mu, rho)`` by Adam.

    Parameters
    ----------
    spec : MLPSpec
    X : torch.Tensor of shape (n, d)
    y : torch.Tensor of shape (n,)
        Targets (class indices for ``"cross_entropy"``).
    mu0 : torch.Tensor of shape (Q,)
        Starting mean, in the network's coordinates.
    prior_std : torch.Tensor of shape (Q,) or float
        The Gaussian prior's standard deviations, in the network's
        coordinates.
    config : VIConfig
    generator : torch.Generator
        The only source of randomness (batches, Monte Carlo draws).
    loss : {"squared", "cross_entropy"}, default="squared"
    scale : torch.Tensor of shape (Q,), default=None
        ``theta = scale * w``: the variational coordinates ``w`` in which
        Adam moves (None: ``w = theta``).
    hyper : HierarchicalPrior, default=None
        Groups of parameters whose precisions have Gamma priors: ``q`` then
        has a mean-field Gamma factor per group (:func:`precision_factors`),
        updated at the start of every epoch from the current ``q(theta)``,
        and the KL term of each parameter uses ``E_q[tau_g]``, the only
        moment of ``q(tau)`` its gradient depends on. ``prior_std`` is the
        start (the Gamma priors' means).

    Returns
    -------
    VIResult

    Notes
    -----
    The learning rate stays at ``learning_rate`` until the objective stops
    improving (``early_stopping``) or the last ``decay_fraction`` of
    ``n_iter`` steps begins; a decay phase then anneals it to
    ``final_lr_fraction`` of that, lasting ``decay_fraction`` of all the
    steps (at least ``min_decay_iter``, at most what ``n_iter`` leaves),
    and ``q`` is the average of the iterates ``(mu, rho)`` over its second
    half (Polyak & Juditsky, 1992), which removes most of the gradient
    noise left in the ``sigma_j``. Every step uses all ``n`` examples'
    permutation, so the optimum is that of the full data.

    Examples
    --------
    A linear model, whose optimal ``q`` is known in closed form (see the
    tests)::

        >>> from skgibbs.model import MLPSpec
        >>> spec = MLPSpec(1, ())
        >>> X = torch.linspace(-1, 1, 50)[:, None]
        >>> y = 2 * X[:, 0]
        >>> cfg = VIConfig(lam=50.0, n_iter=1000, learning_rate=0.05, batch_size=50, early_stopping=False)
        >>> res = fit(spec, X, y, torch.zeros(2), 1.0, cfg, torch.Generator().manual_seed(0))
        >>> bool(abs(res.mean[0] - 2.0) < 0.2), res.std.shape
        (True, (2,))
    """
    device, dtype = X.device, X.dtype
    Q = spec.n_params
    if loss == "cross_entropy" and spec.n_outputs > 1:
        y = y.long()
    scale = torch.ones(Q, dtype=dtype, device=device) if scale is None else scale.to(device, dtype)
    prior_std = torch.as_tensor(prior_std, dtype=dtype, device=device).expand(Q)
    params = VIParams(
        lam=float(config.lam),
        eta=torch.as_tensor(config.eta, dtype=dtype, device=device).expand(Q),
        prior_std=prior_std / scale,  # the prior in the variational coordinates
        scale=scale,
        loss=loss,
        learning_rate=config.learning_rate,
        n_mc=config.n_mc,
        local=config.local,
    )
    n = X.shape[0]
    mu0 = mu0.to(device, dtype)
    state = init(mu0, params, _initial_std(spec, loss, mu0, X, y, params, config, generator))
    batch = min(int(config.batch_size), n)
    n_iter = int(config.n_iter)
    # without a plateau, the decay phase is the last decay_fraction of n_iter
    latest = n_iter - max(1, min(n_iter, int(math.ceil(config.decay_fraction * n_iter))))
    elbo = np.empty(n_iter)
    plateau = _Plateau(config.patience)
    decay_start = decay_len = None
    stopped, average, n_average = False, None, 0
    perm, pos, it = None, n, 0
    factors = None
    for it in range(n_iter):
        if decay_start is None and it >= latest:
            decay_start, decay_len = it, n_iter - it
        if pos + batch > n:  # a new epoch
            perm, pos = torch.randperm(n, generator=generator).to(device), 0
            if hyper is not None and it > 0:  # the Gamma factors given the current q(theta)
                with torch.no_grad():
                    factors = precision_factors(hyper, scale * state.mu, scale * softplus(state.rho), params.eta)
                    params = params._replace(prior_std=_hyper_std(hyper, *factors, dtype) / scale)
        idx = perm[pos : pos + batch]
        pos += batch
        lr = _learning_rate(config, it, decay_start, decay_len)
        state, info = step(generator, state, spec, X[idx], y[idx], params._replace(learning_rate=lr))
        elbo[it] = info.elbo
        progress(config, "vi", it, n_iter)
        if decay_start is not None:  # Polyak-Ruppert averaging over the decay phase
            n_average += 1
            current = (state.mu, state.rho)
            average = current if average is None else tuple(a + (c - a) / n_average for a, c in zip(average, current))
        if decay_start is not None and it + 1 >= decay_start + decay_len:
            break
        if config.early_stopping and decay_start is None and (it + 1) % config.check_every == 0:
            if plateau.update(-elbo[it + 1 - config.check_every : it + 1]):
                stopped = True
                decay_start, decay_len = it + 1, min(_decay_length(config, it + 1), n_iter - it - 1)
    progress_close(config, "vi")
    n_done = it + 1
    if average is not None:
        state = state._replace(mu=average[0], rho=average[1])
    with torch.no_grad():
        sigma = softplus(state.rho)
        kl_j = kl_divergence(state.mu, sigma, params.prior_std)
        kl, wkl = float(kl_j.sum()), float((params.eta * kl_j).sum())
        mean, std = (scale * state.mu).cpu().double().numpy(), (scale * sigma).cpu().double().numpy()
    windows = np.asarray(plateau.means) if config.early_stopping else np.empty(0)
    if hyper is not None:
        with torch.no_grad():
            factors = precision_factors(hyper, scale * state.mu, scale * sigma, params.eta)
        factors = tuple(f.cpu().numpy() for f in factors)
        return VIResult(mean, std, elbo[:n_done], kl, wkl, n_done, stopped, windows, *factors)
    return VIResult(mean, std, elbo[:n_done], kl, wkl, n_done, stopped, windows)


LAPLACE_ROWS = 4096  # the Gauss-Newton diagonal of the initial sigma on at most this many examples


def _initial_std(spec, loss, mu0, X, y, params, config, generator):
    """``init_std`` as a fraction of the prior's standard deviation (in the variational coordinates)."""
    if config.init_std != "laplace":
        return float(config.init_std)
    n = X.shape[0]
    idx = torch.randperm(n, generator=generator)[:LAPLACE_ROWS].to(X.device) if n > LAPLACE_ROWS else slice(None)
    std = laplace_std(spec, loss, mu0, X[idx], y[idx], params.lam, params.eta, params.prior_std * params.scale, n)
    return std / params.scale / params.prior_std


def sample(mean, std, n_draws, generator, dtype=torch.float32):
    """``n_draws`` independent draws from ``q = N(mean, diag(std^2))``, shape ``(n_draws, Q)``."""
    mean = torch.as_tensor(mean, dtype=dtype)
    std = torch.as_tensor(std, dtype=dtype)
    eps = torch.randn((n_draws, mean.shape[0]), generator=generator, dtype=dtype)
    return mean + std * eps
