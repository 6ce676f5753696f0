"""The SGHMC sampler object: warm-up of the mass, step size and friction, and its chains.

The dynamics are described in :mod:`skgibbs.samplers.sghmc`.
"""


import math
from numbers import Integral, Real

import numpy as np
import torch

from ..._compat import Interval, StrOptions
from ..._progress import progress
from ..base import register
from ..runner import ChainSampler
from .kernel import SGHMCParams, SGHMCState, batch_gradient, curvature, init, step

__all__ = ["SGHMC", "SGHMCChains", "auto_batch_size"]


# -- the sampler object ------------------------------------------------------------
SCHEDULES = ("cyclical", "constant")
#: ``batch_size="auto"``: about a hundredth of the rows, at least this many
MIN_AUTO_BATCH = 256
#: ``epsilon^2 lambda_max`` at most this (momentum SGD diverges beyond ``2 (2 - alpha)``)
STABILITY = 0.5
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
class SGHMC(ChainSampler):
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

    Notes
    -----
    A fit by this sampler sets these attributes on the estimator, besides
    those every fit has (the estimator's Attributes):

    ``step_size_`` : ndarray of shape (n_chains,)
        The largest step ``epsilon`` after warm-up (at the start of each
        cycle with ``"cyclical"``), in the preconditioned coordinates.
    ``inverse_mass_`` : ndarray of shape (n_params,)
        The diagonal preconditioner ``m`` estimated from the batch
        gradients during warm-up.
    ``curvature_`` : ndarray of shape (n_chains,)
        ``lambda_max``, the largest eigenvalue of the preconditioned batch
        Hessian at the end of warm-up, which bounds the step.
    ``batch_size_`` : int
        Rows per step (``batch_size`` resolved).
    ``epochs_`` : ndarray of shape (n_chains,)
        Passes over the data of each chain, warm-up included: its batch
        gradients times ``batch_size_ / n``.
    ``n_refused_`` : ndarray of shape (n_chains,)
        Steps refused after warm-up (a non-finite update, one outside
        ``weight_bound``, or a momentum blowing up). Any raises a
        :class:`~skgibbs.SamplerWarning`.
    ``configurational_temperature_`` : ndarray of shape (n_chains,)
        ``E[(theta_j - mean theta_j) d_j U]`` over the sampling steps and
        the coordinates, per chain: 1 for exact draws, above 1 for
        over-dispersed ones (a :class:`~skgibbs.SamplerWarning` above
        1.1).

    There is no ``acceptance_rate_`` (no Metropolis-Hastings step).
    ``sample_stats_`` holds, per draw, ``step_size``, ``refused`` (steps
    refused since the last draw) and ``batch_loss`` (their mean batch
    loss).

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

    _parameter_constraints = {
        "batch_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "step_size": [Interval(Real, 0, None, closed="neither")],
        "friction": [Interval(Real, 0, 1, closed="neither")],
        "schedule": [StrOptions(set(SCHEDULES))],
        "burn_in_epochs": [Interval(Real, 0, None, closed="neither")],
        "epochs_per_draw": [Interval(Real, 0, None, closed="neither")],
    }

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

    _full_data_reads = (
        "reads minibatches of sampler=SGHMC(batch_size=...) rows drawn with replacement, not Bernoulli(rho) "
        "batches"
    )

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
        self.sampler, self.target, self.run, self.gens = sampler, target, run, generators
        self.K, self.dtype, self.device = K, theta0.dtype, theta0.device
        self.b = sampler.rows(getattr(target, "n_rows", target.n_data))
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
        self.eps = torch.full_like(self.eps, min(limit, float(self.sampler.step_size)))
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
        if self.sampler.schedule == "constant":
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
        n = getattr(self.target, "n_rows", self.target.n_data)
        return {
            "step_size": self.eps.cpu().numpy(),
            "curvature": self.curvature.cpu().numpy(),
            "batch_size": int(self.b),
            "inverse_mass": self.m.cpu().numpy(),
            "epochs": self.n_grad * min(self.b, n) / n,
            "n_refused": self.refused.copy(),
            "configurational_temperature": self.configurational_temperature(),
        }
