"""The optimisation of ``q``: batches, learning-rate schedule, early stopping, averaging.

It drives the pure steps of :mod:`skgibbs.samplers.vi.kernel` as the chain
runner drives a Markov kernel, and alone prints progress (``verbose``).
:func:`fit_target` optimises on any :class:`~skgibbs.samplers.Target`;
:func:`fit` is the same for a network given as ``(spec, X, y)``.
"""

import math
from typing import NamedTuple

import numpy as np
import torch

from ..._progress import progress, progress_close
from ...potential import MLPPotential
from ...priors import Prior
from ..target import Target
from .kernel import VIParams, init, kl_divergence, laplace_std, precision_factors, softplus, step

__all__ = ["VIConfig", "VIResult", "fit", "fit_target"]

#: ``init_std="laplace"`` on a potential without a network: this fraction of the prior's standard deviation
GENERIC_INIT_STD = 0.01


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
        The decay phase's share of all the steps taken; its iterates are
        averaged (Polyak-Ruppert).
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
    rollbacks: int = 0  # steps that diverged, after which q went back to a checkpoint at half the rate


#: ``DIVERGENCE_STEPS`` ELBO estimates in a row each this many median absolute deviations below the
#: median of the last healthy window's, and 5% of that median's size below it (a noise-free estimate has
#: no deviation), or a step with non-finite parameters, mean that the optimisation diverged; one such
#: estimate alone is a batch of outlying rows, not a q thrown off
DIVERGENCE_MADS, DIVERGENCE_FRACTION, DIVERGENCE_STEPS = 50.0, 0.05, 3
#: the most rollbacks of one fit; after them only non-finite parameters stop it (they raise)
MAX_ROLLBACKS = 5


class _Guard:
    """Checkpoints of the optimisation, and the test of a step that diverged.

    A step's ELBO estimate is evaluated before its update, so a step that
    threw ``q`` far off shows at the next ones, all far below; a batch of
    outlying rows gives one low estimate and then normal ones. A checkpoint
    is taken at the end of every window of ``every`` healthy steps. The
    estimates are held to two references: the last healthy window (a step
    that threw ``q`` off at once), and the best window so far (a drift that
    takes ``q`` down over several windows, each a little below the last,
    which the last window alone follows down). A rollback returns to the
    checkpoint of the best window, else the older of the last two.
    """

    def __init__(self, every):
        self.every, self.recent, self.saved, self.count, self.low = every, [], [], 0, 0
        self.best = None  # (median, MAD, checkpoint) of the best healthy window

    @staticmethod
    def _below(value, median, mad):
        return value < median - max(DIVERGENCE_MADS * mad, DIVERGENCE_FRACTION * (abs(median) + 1.0))

    def diverged(self, value):
        if not math.isfinite(value):
            return True
        if len(self.recent) < self.every:
            return False
        median = float(np.median(self.recent))
        mad = float(np.median(np.abs(np.asarray(self.recent) - median)))
        low = self._below(value, median, mad) or (self.best is not None and self._below(value, *self.best[:2]))
        self.low = self.low + 1 if low else 0
        return self.low >= DIVERGENCE_STEPS

    def healthy(self, value, snapshot):
        """Record a step that did not diverge; every ``every`` healthy ones, keep ``snapshot`` (``() -> checkpoint``).

        A step of a run of low estimates is neither in the reference window
        nor a checkpoint.
        """
        if self.low:
            return
        self.recent = self.recent[-(self.every - 1) :] + [value]
        self.count += 1
        if self.count % self.every == 0:
            self.saved = self.saved[-1:] + [snapshot()]
            median = float(np.median(self.recent))
            if self.best is None or median > self.best[0]:
                mad = float(np.median(np.abs(np.asarray(self.recent) - median)))
                self.best = (median, mad, self.saved[-1])

    def restore(self):
        """The best window's checkpoint, else the older one (None before the first); the healthy window
        stays the reference."""
        self.count, self.low = 0, 0
        if self.best is not None:
            self.saved = [self.best[2]]
            return self.best[2]
        if not self.saved:
            return None
        self.saved = self.saved[:1]
        return self.saved[0]


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


def _hyper_std(hyper, shape, rate, dtype):
    """Every parameter's prior scale under the factors: ``E[tau_g]^(-1/2)``, or its fixed scale."""
    group = hyper.group.to(shape.device)
    mean_precision = (shape / rate)[group.clamp(min=0)]
    return torch.where(group >= 0, mean_precision.rsqrt(), hyper.std.to(shape.device, torch.float64)).to(dtype)


def fit_target(target, mu0, config, generator, scale=None, hyper=None):
    """Maximise the tempered ELBO of ``q`` over ``(mu, raw_std)`` by Adam.

    Parameters
    ----------
    target : Target
        The data term (any potential: a network's is sampled with the
        local reparametrisation, see :func:`~.kernel.expected_loss`) and
        the Gaussian prior, whose ``std`` (a float or ``(Q,)``, in the
        network's coordinates) the KL term reads. ``config.lam`` is the
        inverse temperature, as for :func:`fit`.
    mu0 : torch.Tensor of shape (Q,)
        Starting mean, in the network's coordinates.
    config : VIConfig
    generator : torch.Generator
        The only source of randomness (batches, Monte Carlo draws).
    loss : {"squared", "gaussian", "cross_entropy"}, default="squared"
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
    and ``q`` is the average of the iterates ``(mu, raw_std)`` over it
    (Polyak & Juditsky, 1992), which removes most of the gradient noise
    left in the ``sigma_j``. Every step uses all ``n`` examples'
    permutation, so the optimum is that of the full data.

    A step whose estimate falls far below the last window's (more than 50
    median absolute deviations and 5% of the median's size: a single
    update that threw ``q`` off, which the heavy tails of the
    ``"gaussian"`` loss's gradients can cause), or whose update leaves
    non-finite parameters, sends ``q`` back to a checkpoint taken at least
    one healthy window earlier, with the average of the iterates, and
    halves the learning rate from there (``VIResult.rollbacks``; at most
    five times, after which only non-finite parameters stop the fit).

    Examples
    --------
    A user's potential: the mean of 40 observations under a ``N(0, 10^2)``
    prior, whose posterior ``q`` is the exact Gaussian at ``eta = 1``::

        >>> from skgibbs.potential import FunctionPotential
        >>> from skgibbs.priors import Prior
        >>> from skgibbs.samplers import Target
        >>> y = torch.linspace(-1, 1, 40, dtype=torch.float64) + 0.5
        >>> pot = FunctionPotential(lambda th, idx: (y[idx] - th[:, :1]) ** 2, n_data=40)
        >>> cfg = VIConfig(lam=20.0, n_iter=3000, batch_size=40, early_stopping=False, init_std=0.1)
        >>> res = fit_target(Target(pot, Prior(std=10.0)), torch.zeros(1, dtype=torch.float64), cfg,
        ...                  torch.Generator().manual_seed(0))
        >>> bool(abs(res.mean[0] - 0.5) < 0.05), bool(abs(res.std[0] - 40 ** -0.5) < 0.02)
        (True, True)
    """
    like = getattr(target.potential, "X", mu0)  # a network's q lives in its inputs' dtype and device
    device, dtype = like.device, like.dtype
    Q = mu0.shape[-1]
    scale = torch.ones(Q, dtype=dtype, device=device) if scale is None else scale.to(device, dtype)
    prior_std = torch.as_tensor(target.prior.std, dtype=dtype, device=device).expand(Q)
    params = VIParams(
        lam=float(config.lam),
        eta=torch.as_tensor(config.eta, dtype=dtype, device=device).expand(Q),
        prior_std=prior_std / scale,  # the prior in the variational coordinates
        scale=scale,
        learning_rate=config.learning_rate,
        n_mc=config.n_mc,
        local=config.local,
    )
    n = getattr(target, "n_rows", target.n_data)  # batches are drawn over the rows
    mu0 = mu0.to(device, dtype)
    state = init(mu0, params, _initial_std(target, mu0, params, config, generator))
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
    guard, lr_factor, rollbacks = _Guard(config.check_every), 1.0, 0
    healthy = np.zeros(n_iter, dtype=bool)  # the steps the plateau rule reads (not those that diverged)
    for it in range(n_iter):
        if decay_start is None and it >= latest:
            decay_start, decay_len = it, n_iter - it
        if pos + batch > n:  # a new epoch
            perm, pos = torch.randperm(n, generator=generator).to(device), 0
            if hyper is not None and it > 0:  # the Gamma factors given the current q(theta)
                with torch.no_grad():
                    factors = precision_factors(hyper, scale * state.mu, scale * softplus(state.raw_std), params.eta)
                    params = params._replace(prior_std=_hyper_std(hyper, *factors, dtype) / scale)
        idx = perm[pos : pos + batch]
        pos += batch
        lr = lr_factor * _learning_rate(config, it, decay_start, decay_len)
        try:
            new, info = step([generator], state, target, params._replace(learning_rate=lr, rows=idx))
            value = info.elbo
        except FloatingPointError:
            new, value = None, -math.inf
        elbo[it] = value
        progress(config, "vi", it, n_iter)
        if new is None or (rollbacks < MAX_ROLLBACKS and guard.diverged(value)):
            # q went far off (a step with non-finite parameters, or an estimate far below the last
            # window's): back to a checkpoint, iterates' average included, at half the rate
            checkpoint = guard.restore()
            if checkpoint is None or rollbacks == MAX_ROLLBACKS:
                raise FloatingPointError(
                    f"The variational optimisation diverged (non-finite parameters, after {rollbacks} "
                    "returns to a checkpoint at half the learning rate); lower the learning rate "
                    "(MeanFieldVI(learning_rate=...))."
                )
            state, average, n_average = checkpoint
            lr_factor, rollbacks = 0.5 * lr_factor, rollbacks + 1
            continue
        state, healthy[it] = new, True
        if decay_start is not None:  # Polyak-Ruppert averaging over the decay phase
            n_average += 1
            current = (state.mu, state.raw_std)
            average = current if average is None else tuple(a + (c - a) / n_average for a, c in zip(average, current))
        guard.healthy(value, lambda: (state, average, n_average))
        if decay_start is not None and it + 1 >= decay_start + decay_len:
            break
        if config.early_stopping and decay_start is None and (it + 1) % config.check_every == 0:
            window = slice(it + 1 - config.check_every, it + 1)
            if plateau.update(-elbo[window][healthy[window]]):
                stopped = True
                decay_start, decay_len = it + 1, min(_decay_length(config, it + 1), n_iter - it - 1)
    progress_close(config, "vi")
    n_done = it + 1
    if average is not None:
        state = state._replace(mu=average[0], raw_std=average[1])
    with torch.no_grad():
        sigma = softplus(state.raw_std)
        kl_j = kl_divergence(state.mu, sigma, params.prior_std)
        kl, wkl = float(kl_j.sum()), float((params.eta * kl_j).sum())
        mean, std = (scale * state.mu).cpu().double().numpy(), (scale * sigma).cpu().double().numpy()
    windows = np.asarray(plateau.means) if config.early_stopping else np.empty(0)
    if hyper is not None:
        with torch.no_grad():
            factors = precision_factors(hyper, scale * state.mu, scale * sigma, params.eta)
        factors = tuple(f.cpu().numpy() for f in factors)
        return VIResult(mean, std, elbo[:n_done], kl, wkl, n_done, stopped, windows, *factors, rollbacks)
    return VIResult(mean, std, elbo[:n_done], kl, wkl, n_done, stopped, windows, rollbacks=rollbacks)


def fit(spec, X, y, mu0, prior_std, config, generator, loss="squared", scale=None, hyper=None):
    """Maximise the tempered ELBO of ``q`` over ``(mu, raw_std)`` by Adam.

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
    loss : {"squared", "gaussian", "cross_entropy"}, default="squared"
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

    See Also
    --------
    fit_target : the same on a :class:`~skgibbs.samplers.Target` with any potential.

    Notes
    -----
    The learning rate stays at ``learning_rate`` until the objective stops
    improving (``early_stopping``) or the last ``decay_fraction`` of
    ``n_iter`` steps begins; a decay phase then anneals it to
    ``final_lr_fraction`` of that, lasting ``decay_fraction`` of all the
    steps (at least ``min_decay_iter``, at most what ``n_iter`` leaves),
    and ``q`` is the average of the iterates ``(mu, raw_std)`` over it
    (Polyak & Juditsky, 1992), which removes most of the gradient noise
    left in the ``sigma_j``. Every step uses all ``n`` examples'
    permutation, so the optimum is that of the full data. A step that
    diverges sends ``q`` back to a checkpoint (:func:`fit_target`).

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
    target = Target(MLPPotential(spec, X, y, loss), Prior(std=prior_std), lambda_=config.lam)
    return fit_target(target, mu0, config, generator, scale=scale, hyper=hyper)




LAPLACE_ROWS = 4096  # the Gauss-Newton diagonal of the initial sigma on at most this many examples


def _initial_std(target, mu0, params, config, generator):
    """``init_std`` as a fraction of the prior's standard deviation (in the variational coordinates).

    ``"laplace"`` needs a network (its Gauss-Newton diagonal); any other
    potential starts at :data:`GENERIC_INIT_STD`.
    """
    if config.init_std != "laplace":
        return float(config.init_std)
    pot = target.potential
    spec = getattr(pot, "spec", None)
    if spec is None:
        return GENERIC_INIT_STD
    X, y, n = pot.X, pot.y, getattr(target, "n_rows", target.n_data)
    idx = torch.randperm(n, generator=generator)[:LAPLACE_ROWS].to(X.device) if n > LAPLACE_ROWS else slice(None)
    w = None if pot.weight is None else pot.weight[idx]
    std = laplace_std(spec, pot.loss, mu0, X[idx], y[idx], params.lam, params.eta, params.prior_std * params.scale,
                      target.n_data, weight=w, n_rows=n)
    return std / params.scale / params.prior_std
