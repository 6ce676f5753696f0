"""Stochastic-gradient HMC on fixed-size minibatches: the kernel for large data.

Full-data gradients cost ``n`` examples each; beyond about 10^4 rows of a
default network on a CPU, an exact kernel needs hours
(:func:`~skgibbs.samplers.base.choose_sampler`). Stochastic-gradient
Hamiltonian Monte Carlo (Chen, Fox & Guestrin, 2014) reads ``b`` rows per
step and replaces the Metropolis-Hastings correction by friction.

**The dynamics.** With the unbiased batch potential of ``b`` rows drawn
uniformly with replacement,

    ``U_B(theta) = (lambda / b) sum_{i in B} l_i(theta) - log Pi(theta)``,
    ``E_B[grad U_B] = grad U = lambda grad R_n - grad log Pi``,

a diagonal mass ``M = diag(1 / m)`` and friction ``C``, SGHMC simulates
``dtheta = M^-1 p dt``, ``dp = -grad U_B dt - C M^-1 p dt + N(0, 2 C dt)``
(Chen et al., eq. (9) with their noise estimate ``B = 0``). In the
variables ``v = epsilon M^-1 p`` (the displacement of one step of size
``epsilon``) and with the friction proportional to the mass,
``epsilon M^-1 C = alpha I``, one Euler step is (their eq. (15))

    ``v <- (1 - alpha) v - eta * grad U_B(theta) + sqrt(2 alpha eta) * xi``,
    ``theta <- theta + v``,   ``eta = epsilon^2 m``,   ``xi ~ N(0, I)``:

momentum SGD with the noise that makes ``pi_lambda`` its stationary law as
``epsilon -> 0`` (for ``epsilon > 0`` the batch noise adds
``eta^2 Var(grad U_B)`` to the injected ``2 alpha eta``, a bias of
relative size at most ``epsilon^2 / (2 alpha)`` under the preconditioner
below).

**The preconditioner.** ``m_j = 1 / E[g_j^2]``, ``g = grad U_B`` over the
second half of the warm-up. In its first half, while the chains leave
their pre-trained starting points, ``m_j`` follows
``1 / max(running mean of g_j^2, current g_j^2)`` at every step, so that a
gradient that grows shortens the step at once (updated every 100 steps
instead, the chains of a 10^5-row fit overshot and thousands of steps
were refused). Under ``pi_lambda``,
``E[(d_j U)^2] = E[d_j^2 U]`` (integration by parts), so
``E[g_j^2] = E[d_j^2 U] + Var_B(g_j)``: the diagonal curvature where the
data dominate the gradient noise (Jacobi's preconditioner), the prior
variance where the prior dominates, and the batch-noise scale where the
noise does. In the coordinates ``theta_j / sqrt(m_j)`` one step moves at
most ``epsilon`` and the gradient noise is at most ``epsilon^2`` of the
injected noise, whatever the data size.

**The schedule.** ``"cyclical"`` (Zhang et al., 2020, cSG-MCMC) runs the
step size down a cosine from ``epsilon`` to zero over each block of
``thin`` steps and keeps the state at the block's end: large steps explore,
the draw is taken where the discretisation error is smallest; ``v`` is
rescaled with ``epsilon`` so that the momentum ``p`` carries over.
``"constant"`` keeps ``epsilon``.

**The check.** Under ``pi_lambda``, ``E[(theta_j - a) d_j U(theta)] = 1``
for every coordinate and constant ``a`` (integration by parts again), and
``E_B[g] = grad U`` makes the batch gradient an unbiased estimate of it.
The average over the coordinates is the *configurational temperature*
(1 for an exact sampler); an over-dispersed chain (too much gradient
noise, too large a step: the kernel's own bias) reads above 1 and is
reported. A chain that has not spread over the flat directions of the
weights reads below 1; whether that matters for predictions is what R-hat
and ESS of the function values judge, so it is not reported here (on the
networks measured it read 0.26-0.97: with the right predictive coverage on
four data sets, too narrow against HMC on the data-gap problem).

A step whose update is not finite, leaves the prior's box, or whose kinetic
temperature ``mean_j v_j^2 / eta_j`` (about 1 while the chain samples)
exceeds ``KINETIC_LIMIT`` (a chain blowing up) is refused: the chain stays
put, loses its momentum, and the refusal is counted (``n_refused_``) and
reported.
"""

import math
from numbers import Integral
from typing import NamedTuple

import numpy as np
import torch

from ..potential import Batch
from ._progress import progress
from ._random import normal
from .base import Sampler, check_setting, register

__all__ = ["SGHMC", "SGHMCState", "SGHMCInfo", "SGHMCParams", "init", "step", "draw_rows"]


# -- the pure kernel -------------------------------------------------------------
class SGHMCState(NamedTuple):
    theta: torch.Tensor  # (K, Q)
    velocity: torch.Tensor  # (K, Q): the displacement v of the last step


class SGHMCInfo(NamedTuple):
    grad: torch.Tensor  # (K, Q) grad U_B at the old point
    batch_loss: torch.Tensor  # (K,) mean loss of the batch at the old point
    is_finite: torch.Tensor  # (K,) the step was taken


class SGHMCParams(NamedTuple):
    """Constants of one step.

    ``learning_rate`` is ``eta = epsilon^2 m`` of shape ``(Q,)`` or
    ``(K, Q)``; ``friction`` is ``alpha``; ``noise_std`` is
    ``sqrt(2 alpha eta)`` (same shape as ``learning_rate``);
    ``batch_size`` is ``b``.
    """

    learning_rate: torch.Tensor
    friction: float
    noise_std: torch.Tensor
    batch_size: int


def draw_rows(generators, n, b, device=None):
    """``b`` rows drawn uniformly with replacement per chain: a :class:`~skgibbs.potential.Batch` of shape ``(K, b)``.

    Row ``k`` comes from ``generators[k]`` alone; the work is ``O(b)``,
    whatever ``n``.
    """
    if b >= n:
        return Batch(None, None, torch.full((len(generators),), n, device=device))
    idx = torch.stack([torch.randint(n, (b,), generator=g, device=device) for g in generators])
    return Batch(idx, None, torch.full((len(generators),), b, device=device))


def init(generators, target, theta, params=None):
    """State at ``theta`` at rest; draws nothing."""
    theta = theta.detach()
    return SGHMCState(theta, torch.zeros_like(theta))


def batch_gradient(generators, target, theta, b):
    """``grad U_B`` ``(K, Q)`` on a new batch of ``b`` rows, and the batch's mean loss ``(K,)``."""
    n = target.n_data
    batch = draw_rows(generators, n, b, theta.device)
    loss_sum, loss_grad = target.loss_sum_and_grad(theta, batch)
    rows = min(b, n)
    return target.grad(loss_grad, theta, target.lam / rows), loss_sum / rows


def curvature(generators, target, theta, m, b, n_iter=20):
    """Largest eigenvalue ``(K,)`` of ``diag(m)^1/2 H diag(m)^1/2`` on one batch per chain, by power iteration.

    ``H`` is the Hessian of ``U_B`` at ``theta``; its products with a vector
    are central differences of the batch gradient (the same batch
    throughout). Momentum SGD on a quadratic is stable while
    ``eta * lambda_max < 2 (2 - alpha)`` (``eta = epsilon^2 m``), so this
    bounds the step size. Costs ``2 n_iter`` batch gradients.
    """
    n = target.n_data
    batch = draw_rows(generators, n, b, theta.device)
    c = target.lam / min(b, n)
    root = m.sqrt()

    def grad(point):
        _, loss_grad = target.loss_sum_and_grad(point, batch)
        return target.grad(loss_grad, point, c)

    u = normal(generators, theta.shape[1], theta)
    u = u / u.norm(dim=1, keepdim=True)
    lam = torch.zeros(theta.shape[0], dtype=theta.dtype, device=theta.device)
    r = 1e-2  # the difference's half-width in the preconditioned coordinates
    for _ in range(n_iter):
        w = r * root * u
        hw = (grad(theta + w) - grad(theta - w)) / (2 * r)
        au = root * hw
        lam = (au * u).sum(1).abs()
        norm = au.norm(dim=1, keepdim=True)
        u = torch.where(norm > 0, au / norm.clamp_min(1e-30), u)
    return torch.nan_to_num(lam, nan=float("inf"))


def step(generators, state, target, params):
    """One SGHMC step of K chains (module docstring); returns ``(state, info)``.

    Parameters
    ----------
    generators : list of torch.Generator
        One per chain: its batch, then its noise.
    state : SGHMCState
    target : Target
    params : SGHMCParams
    """
    theta, v = state
    grad, batch_loss = batch_gradient(generators, target, theta, params.batch_size)
    noise = normal(generators, theta.shape[1], theta)
    v_new = (1.0 - params.friction) * v - params.learning_rate * grad + params.noise_std * noise
    new = theta + v_new
    # the kinetic temperature mean_j v_j^2 / eta_j is about 1 at stationarity (its spread over
    # 10^4 weights is about 0.01): far above it the chain is blowing up, not sampling
    kinetic = (v_new * v_new / params.learning_rate).mean(1)
    ok = torch.isfinite(new).all(1) & torch.isfinite(target.log_prior(new)) & (kinetic < KINETIC_LIMIT)
    new = torch.where(ok[:, None], new, theta)
    v_new = torch.where(ok[:, None], v_new, torch.zeros_like(v_new))
    return SGHMCState(new, v_new), SGHMCInfo(grad, batch_loss, ok)


# -- the sampler object ------------------------------------------------------------
SCHEDULES = ("cyclical", "constant")
#: ``batch_size="auto"``: about a hundredth of the rows, at least this many
MIN_AUTO_BATCH = 256
#: ``epsilon^2 lambda_max`` at most this (momentum SGD diverges beyond ``2 (2 - alpha)``)
STABILITY = 0.5
#: a step whose kinetic temperature ``mean_j v_j^2 / eta_j`` (about 1 when sampling) exceeds this is refused
KINETIC_LIMIT = 100.0
#: a configurational temperature above ``1 + TEMPERATURE_WARN`` is reported
TEMPERATURE_WARN = 0.1
# batches at the starting point that start the preconditioner's estimate
_PROBE_BATCHES = 10


def auto_batch_size(n):
    """``batch_size="auto"``: ``max(256, n / 100)`` rows, at most ``n``.

    Examples
    --------
    >>> auto_batch_size(442), auto_batch_size(100_000), auto_batch_size(100)
    (256, 1000, 100)
    """
    return int(min(n, max(MIN_AUTO_BATCH, round(n / 100))))


@register
class SGHMC(Sampler):
    """Stochastic-gradient HMC on minibatches (Chen, Fox & Guestrin, 2014), cyclical steps (Zhang et al., 2020).

    Each step reads ``batch_size`` rows (drawn with replacement) and moves
    every chain by momentum SGD plus the noise that makes ``pi_lambda`` its
    stationary law as the step goes to zero (module docstring); no
    Metropolis-Hastings step, so the draws carry a bias that shrinks with
    ``step_size`` and that the fit measures (``configurational_temperature_``,
    1 when exact). The warm-up estimates a diagonal preconditioner from the
    batch gradients; afterwards nothing adapts. ``rho`` does not apply: the
    batch has a fixed size.

    Parameters
    ----------
    batch_size : int or "auto", default="auto"
        Rows per step ``b``; ``"auto"`` is ``max(256, n / 100)`` (at most
        ``n``): about a hundred steps per pass over large data.
    step_size : float > 0, default=0.1
        The largest ``epsilon``: the move of one step in the preconditioned
        coordinates (at the start of each cycle with ``"cyclical"``). The
        warm-up lowers it to ``sqrt(0.5 / lambda_max)``, ``lambda_max`` the
        largest eigenvalue of the preconditioned batch Hessian (power
        iteration, the stiffest chain), where that is smaller.
    friction : float in (0, 1), default=0.1
        ``alpha``: the fraction of the velocity lost per step (momentum
        ``1 - alpha``).
    schedule : {"cyclical", "constant"}, default="cyclical"
        Step size over each block of ``thin`` steps: a cosine from
        ``step_size`` down to zero, the draw at the block's end, or constant.
    burn_in_epochs : float > 0, default=20
        ``burn_in="auto"``: this many passes over the data (at least 1000
        steps).
    epochs_per_draw : float > 0, default=1
        ``thin="auto"``: this many passes over the data between two draws
        (at least 50 steps).

    Examples
    --------
    >>> from skgibbs import GibbsMLPRegressor
    >>> from skgibbs.samplers import SGHMC
    >>> GibbsMLPRegressor(sampler=SGHMC(batch_size=512)).get_params()["sampler__batch_size"]
    512
    """

    name = "sghmc"
    record_reductions = {"refused": "sum", "batch_loss": "mean"}
    shared_info = ("batch_size", "inverse_mass")

    def __init__(
        self,
        batch_size="auto",
        step_size=0.1,
        friction=0.1,
        schedule="cyclical",
        burn_in_epochs=20,
        epochs_per_draw=1,
    ):
        self.batch_size = batch_size
        self.step_size = step_size
        self.friction = friction
        self.schedule = schedule
        self.burn_in_epochs = burn_in_epochs
        self.epochs_per_draw = epochs_per_draw

    def check(self, prior, rho):
        check_setting("batch_size", self.batch_size, "count", auto=True)
        check_setting("step_size", self.step_size, "positive")
        check_setting("friction", self.friction, "probability")
        check_setting("burn_in_epochs", self.burn_in_epochs, "positive")
        check_setting("epochs_per_draw", self.epochs_per_draw, "positive")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}.")
        return super().check(prior, rho)

    def rows(self, n):
        """The batch size ``b`` for ``n`` rows."""
        if self.batch_size == "auto":
            return auto_batch_size(n)
        return int(min(n, self.batch_size)) if isinstance(self.batch_size, Integral) else auto_batch_size(n)

    def rows_per_step(self, n, rho):
        return self.rows(n)

    def default_schedule(self, n):
        """``(burn_in, thin)`` for ``"auto"``: ``burn_in_epochs`` and ``epochs_per_draw`` passes in steps."""
        steps_per_epoch = n / self.rows(n)
        burn_in = max(1000, math.ceil(float(self.burn_in_epochs) * steps_per_epoch))
        thin = max(50, math.ceil(float(self.epochs_per_draw) * steps_per_epoch))
        return burn_in, thin

    def chains(self, target, theta0, generators, run, vectorize=True):
        return SGHMCChains(self, target, theta0, generators, run)

    def diagnose(self, fit):
        out = []
        refused = int(np.sum(fit.get("n_refused_", 0)))
        if refused:
            out.append(
                f"{refused} SGHMC steps were refused (a non-finite update, one outside weight_bound, or a "
                "momentum blowing up): "
                "the step is too large for parts of the posterior. Lower step_size."
            )
        temp = np.asarray(fit.get("configurational_temperature_", np.ones(1)))
        if np.nanmax(temp) > 1.0 + TEMPERATURE_WARN:
            out.append(
                f"A chain's configurational temperature is {float(np.nanmax(temp)):.3g} (1 for exact draws): "
                "the minibatch draws are over-dispersed, so their bias is large. Lower step_size or raise "
                "batch_size, or use sampler='hmc' where the data are small enough."
            )
        return out

    def mixing_remedies(self, rho, failure="within"):
        if failure == "draws":
            return ["raise n_samples or epochs_per_draw", "run more chains (n_chains)"]
        return ["raise burn_in_epochs", "raise n_samples or epochs_per_draw"]


class SGHMCChains:
    """K SGHMC chains in one process: preconditioner warm-up, then a fixed schedule."""

    def __init__(self, sampler, target, theta0, generators, run):
        K, Q = theta0.shape
        self.kernel, self.target, self.run, self.gens = sampler, target, run, generators
        self.K, self.dtype, self.device = K, theta0.dtype, theta0.device
        self.b = sampler.rows(target.n_data)
        self.eps = torch.full((K,), float(sampler.step_size), dtype=self.dtype, device=self.device)
        self.alpha = float(sampler.friction)
        self.m = None
        self.state = init(generators, target, theta0)
        self.n_grad = np.zeros(K, dtype=np.int64)
        self.refused = np.zeros(K, dtype=np.int64)
        self.t = 0  # sampling steps so far: the position in the cycle
        self.scale = 1.0  # epsilon_t / epsilon of the last step (always > 0)
        self.sums = None

    # -- constants ---------------------------------------------------------------
    def params(self, scale=1.0):
        """Step constants at ``scale * epsilon``."""
        lr = (scale * self.eps[:, None]) ** 2 * self.m
        return SGHMCParams(lr, self.alpha, torch.sqrt(2.0 * self.alpha * lr), self.b)

    @staticmethod
    def _inverse(second_moment):
        floor = 1e-6 * float(second_moment.mean()) + 1e-30
        return 1.0 / second_moment.clamp_min(floor)

    def _set_mass(self, m):
        """New inverse mass; the velocity rescaled so that the momentum p = v / (epsilon m) carries over."""
        if self.m is not None:
            self.state = SGHMCState(self.state.theta, self.state.velocity * (m / self.m))
        self.m = m

    def _limit_step(self):
        """``epsilon = min(step_size, sqrt(STABILITY / lambda_max))`` per chain, at the current mass."""
        lam = curvature(self.gens, self.target, self.state.theta, self.m, self.b)
        self.n_grad += 40
        # one step size for all chains, from the stiffest: the estimate is noisy per batch
        limit = math.sqrt(STABILITY / max(float(lam.max()), 1e-30))
        self.eps = torch.full_like(self.eps, min(limit, float(self.kernel.step_size)))
        self.curvature = lam

    def _advance(self, params):
        self.n_grad += 1
        self.state, info = step(self.gens, self.state, self.target, params)
        self.refused += (~info.is_finite).cpu().numpy()
        return info

    # -- the runner's interface ------------------------------------------------------
    def warmup(self):
        """Preconditioner from the batch gradients: at the start, then over the warm-up's second half."""
        theta = self.state.theta
        moment = torch.zeros_like(theta[0])
        for _ in range(_PROBE_BATCHES):
            grad, _ = batch_gradient(self.gens, self.target, theta, self.b)
            moment += (grad * grad).mean(0) / _PROBE_BATCHES
        self.n_grad += _PROBE_BATCHES
        self._set_mass(self._inverse(moment))
        self._limit_step()
        burn_in, half = self.run.burn_in, self.run.burn_in // 2
        running, count = torch.zeros_like(moment), 0
        for i in range(burn_in):
            info = self._advance(self.params())
            g2 = (info.grad * info.grad).mean(0)
            moment += 0.01 * (g2 - moment)  # a short memory while the chains settle
            if i >= half:
                running += g2
                count += 1
            if i < half:
                # the mass follows the larger of the running and the current second moment, so a
                # gradient that grows while the chains settle shortens the effective step at once
                self._set_mass(self._inverse(torch.maximum(moment, g2)))
            if (i + 1) % 100 == 0 and i < half:
                self._limit_step()
            progress(self.run, "burn-in", i, burn_in)
        if count:
            self._set_mass(self._inverse(running / count))
        self._limit_step()
        self.refused[:] = 0  # the warm-up's refusals are not the sampling phase's

    def frozen_params(self):
        return self.params()

    def _scale(self):
        """``epsilon_t / epsilon`` of the sampling step ``t``."""
        if self.kernel.schedule == "constant":
            return 1.0
        thin = self.run.thin
        # Zhang et al. (2020), eq. (1): a cosine from 1 down to 0 over each block; the
        # step after the draw starts the next cycle at 1
        position = self.t % thin
        return 0.5 * (1.0 + math.cos(math.pi * position / thin))

    def sample_step(self, params):
        scale = self._scale()
        if scale != self.scale:
            # v = epsilon M^-1 p: keep p as epsilon changes
            self.state = SGHMCState(self.state.theta, self.state.velocity * (scale / self.scale))
            self.scale = scale
        theta = self.state.theta
        info = self._advance(params if scale == 1.0 else self.params(scale))
        self.t += 1
        self._accumulate(theta, info.grad)
        return {"refused": ~info.is_finite, "batch_loss": info.batch_loss}

    def _accumulate(self, theta, grad):
        """Running sums for the configurational temperature ``E[(theta_j - a_j) d_j U] = 1``."""
        if self.sums is None:
            self.sums = [torch.zeros_like(theta, dtype=torch.float64) for _ in range(3)] + [0]
        th, g = theta.double(), grad.double()
        self.sums[0] += th * g
        self.sums[1] += th
        self.sums[2] += g
        self.sums[3] += 1

    def configurational_temperature(self):
        if self.sums is None or self.sums[3] == 0:
            return np.full(self.K, np.nan)
        thg, th, g, count = self.sums
        per_coord = thg / count - (th / count) * (g / count)
        return per_coord.mean(1).cpu().numpy()

    def summary(self):
        n = self.target.n_data
        return {
            "step_size": self.eps.cpu().numpy(),
            "curvature": self.curvature.cpu().numpy(),
            "batch_size": int(self.b),
            "inverse_mass": self.m.cpu().numpy(),
            "epochs": self.n_grad * min(self.b, n) / n,
            "n_refused": self.refused.copy(),
            "configurational_temperature": self.configurational_temperature(),
        }
