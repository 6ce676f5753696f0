"""Warm-up adaptation as small objects, each a state plus an update, frozen after warm-up.

* :class:`DualAveraging` -- step size toward a target acceptance
  (Nesterov's dual averaging as in Hoffman & Gelman, 2014, §3.2.1), one
  step size per chain.
* :class:`RunningVariance` and :func:`metric_windows` -- Stan's windowed
  estimate of a diagonal metric: a fast first window, slow windows that
  double in length, a fast last window (Stan Reference Manual, "HMC
  algorithm parameters"), the variance pooled over the chains and shrunk
  toward a small multiple of a reference scale.
* :class:`ChEES` -- the trajectory length of jittered HMC by stochastic
  gradient ascent on the ChEES criterion (Hoffman, Radul & Sountsov, 2021),
  estimated across the batched chains.
* :func:`halton` -- the quasi-random jitter of the trajectory length.
* :func:`search_step_size` -- the starting step size of the dual averaging.
"""

import math

import torch

__all__ = [
    "DualAveraging",
    "RunningVariance",
    "ChEES",
    "metric_windows",
    "halton",
    "search_step_size",
]


def search_step_size(trial, h, generators, threshold=0.5, max_iter=40):
    """Double or halve each chain's step size until its trial acceptance crosses ``threshold``.

    Parameters
    ----------
    trial : callable
        ``trial(h) -> (K,)``: the acceptance probability of one proposal
        from the current points at step sizes ``h``, leaving them as they
        were.
    h : torch.Tensor of shape (K,)
    generators : list of torch.Generator
        The chains' generators. A chain that is done does not consume
        random numbers, so that its path does not depend on the chains
        batched beside it.

    Returns
    -------
    torch.Tensor of shape (K,)
    """
    h = h.clone()
    acc = trial(h)
    direction = torch.where(acc > threshold, 2.0, 0.5).to(h.dtype)
    done = torch.zeros(h.shape, dtype=torch.bool, device=h.device)
    for _ in range(max_iter):
        new_h = torch.where(done, h, h * direction)
        frozen = [(g, g.get_state()) for g, d in zip(generators, done.tolist()) if d]
        acc = trial(new_h)
        for g, st in frozen:
            g.set_state(st)
        crossed = torch.where(direction > 1, acc <= threshold, acc > threshold)
        h = torch.where(done, h, new_h)
        done = done | crossed
        if bool(done.all()):
            break
    return h


class DualAveraging:
    """Dual averaging of ``log h`` per chain (Hoffman & Gelman, 2014, (6)).

    Parameters
    ----------
    h0 : torch.Tensor of shape (K,)
        Initial step sizes; the iterates are shrunk toward ``log(10 h0)``.
    target : float
        Acceptance aimed at.
    gamma, t0, kappa : float
        The constants of Hoffman & Gelman (0.05, 10, 0.75).
    span : float
        ``log h`` stays within ``[h0 / span, h0 span]``: where batch noise,
        not ``h``, limits the acceptance (stochastic MH), the average would
        otherwise drift to 0.
    """

    def __init__(self, h0, target, gamma=0.05, t0=10.0, kappa=0.75, span=1e3):
        self.lo, self.hi = torch.log(h0 / span), torch.log(h0 * span)
        self.mu = torch.log(10 * h0)
        self.target, self.gamma, self.t0, self.kappa = target, gamma, t0, kappa
        self.hbar = torch.zeros_like(h0)
        self.log_h_avg = torch.log(h0)
        self.t = 0

    def update(self, acc):
        """Take the acceptance of the last step ``(K,)``; return the next step sizes."""
        self.t += 1
        eta = 1.0 / (self.t + self.t0)
        self.hbar = (1 - eta) * self.hbar + eta * (self.target - acc)
        log_h = self.mu - math.sqrt(self.t) / self.gamma * self.hbar
        log_h = torch.minimum(torch.maximum(log_h, self.lo), self.hi)
        w = self.t ** (-self.kappa)
        self.log_h_avg = w * log_h + (1 - w) * self.log_h_avg
        return torch.exp(log_h)

    def final(self):
        """The averaged step sizes, to be frozen."""
        return torch.exp(self.log_h_avg)


class RunningVariance:
    """Welford's running mean and variance of the positions, pooled over chains.

    Parameters
    ----------
    n_params : int
    dtype, device : torch dtype and device
    """

    def __init__(self, n_params, dtype, device):
        self.n = 0
        self.mean = torch.zeros(n_params, dtype=dtype, device=device)
        self.m2 = torch.zeros(n_params, dtype=dtype, device=device)

    def update(self, theta):
        """Add the rows of ``theta`` (shape ``(K, Q)``)."""
        for row in theta:
            self.n += 1
            delta = row - self.mean
            self.mean += delta / self.n
            self.m2 += delta * (row - self.mean)

    def variance(self):
        """The sample variance of the positions added so far, shape ``(Q,)``."""
        return self.m2 / max(self.n - 1, 1)

    def metric(self, reference):
        """Inverse mass ``m = (N var + 5e-3 ref) / (N + 5)``, Stan's shrinkage.

        ``reference`` (scalar or ``(Q,)``) sets the scale of the floor:
        Stan uses 1; here it is the prior variance when there is one, so the
        floor scales with the parameters.
        """
        var = self.variance()
        return (self.n * var + 5e-3 * reference) / (self.n + 5.0)


def metric_windows(n_warmup, init_buffer=75, term_buffer=50, base_window=25):
    """The slow windows ``(first, last)`` (0-based, inclusive) of a warm-up of ``n_warmup`` iterations.

    Stan's schedule: ``init_buffer`` iterations adapt only the step size,
    then windows of ``base_window``, ``2 base_window``, ... (the last one
    stretched to end ``term_buffer`` before the end), then ``term_buffer``
    iterations of step size alone. The metric is re-estimated at the end of
    each window from the positions inside it. Short warm-ups scale the three
    parts to 15%, 75% and 10%.

    Examples
    --------
    >>> metric_windows(1000)
    [(75, 99), (100, 149), (150, 249), (250, 449), (450, 949)]
    >>> metric_windows(100)
    [(15, 89)]
    """
    if n_warmup < 20:
        return []
    if init_buffer + term_buffer + base_window > n_warmup:
        init_buffer, term_buffer = int(0.15 * n_warmup), int(0.1 * n_warmup)
        base_window = n_warmup - init_buffer - term_buffer
    windows, start, size = [], init_buffer, base_window
    last = n_warmup - term_buffer
    while start + size <= last:
        end = start + size
        if end + 2 * size > last:  # the next window would not fit: stretch this one
            end = last
        windows.append((start, end - 1))
        start, size = end, 2 * size
    return windows


def halton(i, base=2):
    """The ``i``-th element (``i >= 1``) of the van der Corput sequence in ``base``, in (0, 1).

    Examples
    --------
    >>> [halton(i) for i in range(1, 5)]
    [0.5, 0.25, 0.75, 0.125]
    """
    out, f = 0.0, 1.0
    while i > 0:
        f /= base
        out += f * (i % base)
        i //= base
    return out


class ChEES:
    """Trajectory length by the ChEES criterion (Hoffman, Radul & Sountsov, 2021).

    ChEES is ``E[(|theta' - E theta|^2 - |theta - E theta|^2)^2] / 4``, the
    change in the squared distance from the mean over one transition, in the
    coordinates ``theta / sqrt(m)`` that the metric makes isotropic. Its
    derivative in the trajectory length ``T`` at the end of a trajectory of
    length ``u T`` is, per chain, ``u T (|x'|^2 - |x|^2) <x', v'>`` (``x``
    centred, ``v'`` the velocity; in these coordinates ``<x', v'> = <theta' -
    mean, p'>``). The acceptance-weighted average over the chains drives Adam
    on ``log T`` (updates clipped to ``clip``); the estimate kept is an
    average of the iterates with weights ``t**-decay``.

    ChEES ignores what a longer trajectory costs. With ``per_gradient=True``
    (a departure from the paper) the target is ChEES per unit of trajectory
    length, i.e. per gradient: ``d log(ChEES / T) / d log T`` has the sign
    of ``dChEES / d log T - ChEES``, so each chain contributes its
    derivative minus its ``(|x'|^2 - |x|^2)^2 / 4``. The learning rate
    and Adam's constants are also ours (the paper runs hundreds of chains;
    with four, a larger rate and no momentum adapted faster in our tests).

    Parameters
    ----------
    trajectory_length : float
        Initial ``T``.
    learning_rate : float, default=0.05
    clip : float, default=0.35
    decay : float, default=0.5
    betas : tuple of float, default=(0.0, 0.95)
        Adam's moment decays: no momentum, a short memory of the gradient's
        scale, so that ``log T`` moves by about ``learning_rate`` a step.
    per_gradient : bool, default=True
        Maximise ChEES per unit of trajectory length instead of ChEES.
    """

    def __init__(
        self,
        trajectory_length,
        learning_rate=0.05,
        clip=0.35,
        decay=0.5,
        betas=(0.0, 0.95),
        per_gradient=True,
    ):
        self.per_gradient = per_gradient
        self.log_t = math.log(trajectory_length)
        self.betas = betas
        self.log_t_avg = self.log_t
        self.lr, self.max_move, self.decay = learning_rate, clip, decay
        self.m1 = self.m2 = 0.0
        self.t = 0

    @property
    def trajectory_length(self):
        """The current iterate ``T``."""
        return math.exp(self.log_t)

    def update(self, start, end, momentum, acceptance, divergent, jitter, inverse_mass, center=None):
        """One Adam step of ``log T`` from a transition of the K chains.

        ``start``/``end``/``momentum`` have shape ``(K, Q)``, ``acceptance``
        and ``divergent`` shape ``(K,)``, ``jitter`` is the ``u`` of this
        transition. ``center`` (shape ``(K, Q)``) is each chain's estimate of
        the mean; None uses the means across the chains (the paper's
        estimator, which needs the chains in one mode). Returns the new ``T``
        (unchanged without a usable signal).
        """
        w = torch.where(divergent, torch.zeros_like(acceptance), acceptance)
        if int((w > 0).sum()) < (1 if center is not None else 2):
            return self.trajectory_length
        if center is None:
            c0, c1 = start.mean(0), (w[:, None] * end).sum(0) / w.sum()
        else:
            c0 = c1 = center
        scale = torch.rsqrt(inverse_mass.expand_as(start))
        x0, x1 = (start - c0) * scale, (end - c1) * scale
        speed = ((end - c1) * momentum).sum(1)
        change = (x1 * x1).sum(1) - (x0 * x0).sum(1)
        per_chain = jitter * self.trajectory_length * change * speed
        if self.per_gradient:  # d/dlog T of log(ChEES / T) has the sign of dChEES/dlog T - ChEES
            per_chain = per_chain - 0.25 * change * change
        per_chain = torch.where(divergent, torch.zeros_like(per_chain), per_chain)
        grad = float((w * per_chain).sum() / w.sum())
        if not math.isfinite(grad):
            return self.trajectory_length
        self.t += 1
        # Adam, maximising: ascend the gradient
        b1, b2 = self.betas
        self.m1 = b1 * self.m1 + (1 - b1) * grad
        self.m2 = b2 * self.m2 + (1 - b2) * grad * grad
        m1_hat, m2_hat = self.m1 / (1 - b1**self.t), self.m2 / (1 - b2**self.t)
        move = self.lr * m1_hat / (math.sqrt(m2_hat) + 1e-8)
        self.log_t += max(-self.max_move, min(self.max_move, move))
        weight = self.t ** (-self.decay)
        self.log_t_avg = weight * self.log_t + (1 - weight) * self.log_t_avg
        return self.trajectory_length

    def bound(self, low, high):
        """Keep ``T`` (iterate and average) within ``[low, high]``, e.g. one to ``max_leapfrog`` steps.

        Beyond the cap on the leapfrog steps the trajectory no longer
        changes with ``T``, so the criterion's gradient would push ``T`` on
        without bound.
        """
        lo, hi = math.log(low), math.log(high)
        self.log_t = min(max(self.log_t, lo), hi)
        self.log_t_avg = min(max(self.log_t_avg, lo), hi)

    def rescale(self, factor):
        """Multiply ``T`` (iterate and average) by ``factor``, e.g. when the metric changes."""
        self.log_t += math.log(factor)
        self.log_t_avg += math.log(factor)

    def final(self):
        """The averaged ``T``, to be frozen."""
        return math.exp(self.log_t_avg)
