"""The Langevin samplers (MALA, sMALA, csMALA, SGLD): settings, warm-up and sampling.

Warm-up of ``burn_in`` steps, everything frozen afterwards:

1. step-size dual averaging toward ``target_accept`` when the proposal
   standard deviation is tied to the step size (``proposal_std="auto"``),
   started by doubling/halving until the acceptance crosses 1/2. With
   ``rho < 1`` the acceptance is capped by batch-to-batch noise whatever
   ``h`` is, so ``h`` follows the acceptance of the parameter move alone
   (:attr:`~skgibbs.samplers.MALAInfo.move_acceptance`), measured on every
   ``move_every``-th step (2);
2. for csMALA with ``correction="auto"``, the centring of the per-example
   term (paper 000 §5), recomputed from the full-data risk every
   ``correction_every`` steps, each chain its own during warm-up and pooled
   over all chains (:meth:`CSMALA.pool`) before sampling, so that every
   chain samples the same target.

With ``rho < 1``, after ``restart_after`` rejections in a row the batch of
the current point is redrawn (paper 000 §5; counted in ``n_restarts``).
"""

from numbers import Integral, Real

import numpy as np
import torch

from ..._compat import Interval, StrOptions
from ..._progress import progress
from ..adaptation import DualAveraging, search_step_size
from ..base import BatchSurrogate, low_acceptance, register
from ..runner import ChainSampler
from . import mala
from . import sgld as langevin

__all__ = ["MALA", "SMALA", "CSMALA", "SGLD"]

#: the settings of MALA's family: the step, the proposal's standard deviation and the acceptance aimed at
_MALA_CONSTRAINTS = {
    "step_size": [Interval(Real, 0, None, closed="neither")],
    "proposal_std": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
    "target_accept": [Interval(Real, 0, 1, closed="neither")],
}
#: ... and of the samplers on Bernoulli batches, the rejections in a row before a batch is redrawn
_BATCH_CONSTRAINTS = {
    **_MALA_CONSTRAINTS,
    "restart_after": [Interval(Integral, 1, None, closed="left"), None],
}


class _MALAFamily(BatchSurrogate, ChainSampler):
    """What MALA, sMALA and csMALA share: one proposal, one acceptance rule (:mod:`.mala`)."""

    default_burn_in, default_thin = 1000, 10
    #: with rho < 1, warm-up steps between two measurements of the move acceptance
    #: (each costs a forward pass of the current point on the new batch)
    move_every = 2
    shared_info = ("correction", "lambda_prime")
    record_reductions = {"batch_size": None}

    #: the centring ``zeta`` of the per-example term is adapted and reported (csMALA)
    corrected = False

    def constants(self, lam, n, rho, zeta=1.0, compensate=True):
        """``(c, d, lambda_eff)`` of the batch potential: the full data's (MALA)."""
        return mala.full_data_constants(lam, n)

    def initial_correction(self):
        return 1.0

    def chains(self, target, theta0, generators, run, vectorize=True):
        return LangevinChains(self, target, theta0, generators, run)

    def summarize_records(self, logs, rho):
        """``accepted_batch_sizes``: ``|B|`` of every accepted sampling step (empty for ``rho = 1``)."""
        if rho < 1.0:
            sizes = logs["batch_size"].T[logs["accepted"].T].numpy()
        else:
            sizes = np.zeros(0, dtype=np.int64)
        return {"accepted_batch_sizes": sizes}

    def batch_terms(self, lam, n, rho, info):
        c, d, _ = self.constants(lam, n, rho, info.get("correction", 1.0))
        return c, d

    def diagnose(self, fit):
        if isinstance(self.proposal_std, str):  # tied to the step size, which adapts during burn-in
            remedy = "raise burn_in (the step size adapts during it) or target_accept"
        else:
            remedy = "lower step_size or proposal_std (with a fixed proposal_std neither adapts)"
        if fit["rho_"] < 1:
            remedy += ", or raise rho or temperature"
        return low_acceptance(fit, remedy) + _surrogate_messages(self, fit)

    def mixing_remedies(self, rho, failure="within"):
        remedies = super().mixing_remedies(rho, failure)
        if rho >= 1:
            remedies.append("use sampler='hmc'")
        return remedies



# The surrogates approach pi_lambda only while lambda' l_i / n << 1 (Lemmas 1, 3).
SURROGATE_WARN = 0.1
# Beyond this spread of the log MH ratio between two independent batches,
# proposals pass only when the batch happens to favour them: chains stick.
BATCH_NOISE_WARN = 2.0


def _surrogate_messages(sampler, fit):
    rho, out = fit["rho_"], []
    if rho >= 1:
        return out
    if fit["surrogate_scale_"] > SURROGATE_WARN:
        out.append(
            f"lambda' l_i / n averages {fit['surrogate_scale_']:.3g} (> {SURROGATE_WARN}): the "
            f"{sampler.name} surrogate is far from the Gibbs posterior at rho={rho:.3g} and temperature "
            f"{fit['temperature_']:.3g}. Set rho=1 (exact MALA on the full data), or raise temperature (a "
            "tempered posterior; the term falls with it only until the posterior's own spread dominates the "
            "losses)."
        )
    if fit["batch_noise_"] > BATCH_NOISE_WARN:
        out.append(
            f"The log Metropolis-Hastings ratio fluctuates by about {fit['batch_noise_']:.3g} between "
            "two Bernoulli batches, so proposals pass only when the batch favours them and the "
            f"chains stick (acceptance {float(fit['acceptance_rate_'].mean()):.1%}). Set rho=1 (exact MALA), "
            "or raise temperature."
        )
    return out


@register
class MALA(_MALAFamily):
    """Metropolis-adjusted Langevin on the full data: exact for ``pi_lambda``.

    ``theta' ~ N(theta - h grad U(theta), s^2 I)``, accepted with the
    Metropolis-Hastings ratio of :func:`~skgibbs.samplers.langevin.mala.log_acceptance`;
    ``rho`` does not apply.

    Parameters
    ----------
    step_size : float > 0, default=1e-4
        Initial step ``h`` (rescaled by doubling/halving, then adapted
        toward ``target_accept`` during burn-in when ``proposal_std="auto"``).
    proposal_std : float > 0 or "auto", default="auto"
        ``s``; ``"auto"`` is ``sqrt(2 h)``, a float gives the decoupled
        proposal of paper 000 §5 with ``h`` and ``s`` both fixed.
    target_accept : float in (0, 1), default=0.574
        Acceptance aimed at (Roberts & Rosenthal, 1998).

    Notes
    -----
    A fit by this sampler sets these attributes on the estimator, besides
    those every fit has (the estimator's Attributes):

    ``step_size_`` : ndarray of shape (n_chains,)
        The frozen step ``h`` of each chain.
    ``proposal_std_`` : ndarray of shape (n_chains,)
        The frozen proposal standard deviation ``s`` of each chain
        (``sqrt(2 h)`` with ``proposal_std="auto"``).
    ``correction_``, ``lambda_prime_`` : float
        The constants of the family's batch terms on the full data: ``zeta
        = 0`` and ``lambda`` (:class:`CSMALA` has others).
    ``accepted_batch_sizes_`` : ndarray of shape (0,)
        Empty: MALA reads the full data (:class:`SMALA` and :class:`CSMALA`
        record their batches' sizes).

    ``acceptance_rate_`` is the fraction of accepted proposals after
    burn-in, and ``sample_stats_`` holds, per draw, ``acceptance_rate`` and
    ``step_size``.

    Examples
    --------
    >>> from skgibbs.samplers import MALA
    >>> MALA(target_accept=0.6)
    MALA(target_accept=0.6)
    """

    name = "mala"
    _parameter_constraints = _MALA_CONSTRAINTS

    def __init__(self, step_size=1e-4, proposal_std="auto", target_accept=0.574):
        self.step_size = step_size
        self.proposal_std = proposal_std
        self.target_accept = target_accept


@register
class SMALA(_MALAFamily):
    """Stochastic MALA (paper 000 §2.2): the MH ratio on Bernoulli(``rho``) batches, risk over ``n rho``.

    Samples the surrogate (2.10),
    ``prod_i (rho exp(-lambda l_i / (n rho)) + 1 - rho) Pi``, which loses
    information as ``rho`` falls: the baseline that shows why csMALA's
    correction matters.

    Parameters
    ----------
    step_size, proposal_std, target_accept
        As for :class:`MALA`.
    restart_after : int or None, default=100
        Redraw the current point's batch after this many rejections in a
        row (paper 000 §5; perturbs the target slightly; None disables it).

    Notes
    -----
    A fit by this sampler sets these attributes on the estimator, besides
    those every fit has (the estimator's Attributes):

    ``step_size_``, ``proposal_std_`` : ndarray of shape (n_chains,)
        The frozen step ``h`` and proposal standard deviation ``s`` of each
        chain, as for :class:`MALA`.
    ``correction_`` : float
        ``zeta``: 0, sMALA's batch terms have no correction.
    ``lambda_prime_`` : float
        The inverse temperature of the batch terms: ``lambda``, over ``n rho``
        examples in a batch.
    ``n_restarts_`` : ndarray of shape (n_chains,)
        Batch redraws of each chain after ``restart_after`` rejections in a
        row (0 for ``rho = 1``).
    ``accepted_batch_sizes_`` : ndarray of shape (n_accepted,)
        ``|Z|_1`` of every accepted step after burn-in (paper 000 Fig. 4),
        chain after chain; empty for ``rho = 1``.

    ``surrogate_scale_`` is the mean of ``lambda l_i / (n rho)`` over the
    draws and the training examples, and ``batch_noise_`` the noise two
    Bernoulli batches put in a log Metropolis-Hastings ratio: above about 2
    the chains stick to favourable batches and a
    :class:`~skgibbs.SamplerWarning` is raised. ``sample_stats_`` holds, per draw, ``acceptance_rate`` and
    ``step_size``.
    """

    name = "smala"
    uses_batches = True
    _parameter_constraints = _BATCH_CONSTRAINTS

    def constants(self, lam, n, rho, zeta=1.0, compensate=True):
        """``lambda / (n rho) sum_B l_i``: the surrogate (2.10)."""
        return mala.unbiased_constants(lam, n, rho)

    def __init__(self, step_size=1e-4, proposal_std="auto", target_accept=0.574, restart_after=100):
        self.step_size = step_size
        self.proposal_std = proposal_std
        self.target_accept = target_accept
        self.restart_after = restart_after


@register
class CSMALA(_MALAFamily):
    """Corrected stochastic MALA (Alg. 1 of paper 000) on Bernoulli(``rho``) batches.

    Per-example term ``lambda' l_i / n + zeta log rho``; its surrogate is
    ``prod_i (a exp(-lambda' l_i / n) + 1 - rho) Pi`` with
    ``a = rho^(1 - zeta)`` ((2.12) at ``zeta = 1``), and the compensated
    ``lambda' = lambda (a + 1 - rho) / a`` makes it agree with
    ``pi_lambda`` to first order (Lemma 3).

    Parameters
    ----------
    step_size, proposal_std, target_accept, restart_after
        As for :class:`SMALA`.
    correction : float >= 0 or "auto", default="auto"
        ``zeta``. ``"auto"`` (paper 000 §5) centres the per-example term
        during burn-in, ``zeta log rho = -lambda' Rbar_n / n``, ``Rbar_n``
        the full-data risk averaged over the chains, recomputed every
        ``correction_every`` steps, then frozen.
    correction_every : int, default=100
        Steps between two updates of the automatic correction.
    compensate : bool, default=True
        Use ``lambda'`` in the batch terms (True) or ``lambda`` as is (as
        paper 000's tables state ``lambda`` per method).

    Notes
    -----
    A fit by this sampler sets these attributes on the estimator, besides
    those every fit has (the estimator's Attributes):

    ``step_size_``, ``proposal_std_`` : ndarray of shape (n_chains,)
        The frozen step ``h`` and proposal standard deviation ``s`` of each
        chain, as for :class:`MALA`.
    ``correction_`` : float
        The frozen ``zeta`` (0 for ``rho = 1``): the adapted centring with
        ``correction="auto"``, pooled over the chains.
    ``lambda_prime_`` : float
        ``lambda'``, the compensated inverse temperature of the batch terms
        (``lambda`` for ``rho = 1`` or ``compensate=False``).
    ``n_restarts_`` : ndarray of shape (n_chains,)
        Batch redraws of each chain after ``restart_after`` rejections in a
        row (0 for ``rho = 1``).
    ``accepted_batch_sizes_`` : ndarray of shape (n_accepted,)
        ``|Z|_1`` of every accepted step after burn-in (paper 000 Fig. 4),
        chain after chain; empty for ``rho = 1``.

    ``surrogate_scale_`` is the mean of ``lambda' l_i / n`` over the draws
    and the training examples, and ``batch_noise_`` the noise two Bernoulli
    batches put in a log Metropolis-Hastings ratio: above about 2 the chains
    stick to favourable batches and a :class:`~skgibbs.SamplerWarning` is
    raised. ``sample_stats_`` holds, per draw, ``acceptance_rate`` and
    ``step_size``.
    """

    name = "csmala"
    uses_batches = True
    corrected = True
    _parameter_constraints = {
        **_BATCH_CONSTRAINTS,
        "correction": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "correction_every": [Interval(Integral, 1, None, closed="left")],
        "compensate": ["boolean"],
    }

    def constants(self, lam, n, rho, zeta=1.0, compensate=None):
        """``lambda' l_i / n + zeta log rho``: the surrogate (2.12), compensated (Lemma 3)."""
        compensate = self.compensate if compensate is None else compensate
        return mala.corrected_constants(lam, n, rho, zeta, compensate)

    def __init__(
        self,
        step_size=1e-4,
        proposal_std="auto",
        target_accept=0.574,
        restart_after=100,
        correction="auto",
        correction_every=100,
        compensate=True,
    ):
        self.step_size = step_size
        self.proposal_std = proposal_std
        self.target_accept = target_accept
        self.restart_after = restart_after
        self.correction = correction
        self.correction_every = correction_every
        self.compensate = compensate

    def initial_correction(self):
        return 1.0 if self.correction == "auto" else float(self.correction)

    def pool(self, drivers):
        """The full-data risk averaged over every chain of every group (automatic correction)."""
        risks = [d.mean_risk for d in drivers if d.mean_risk is not None]
        return float(np.mean(np.concatenate(risks))) if risks else None

    def share(self, driver, pooled):
        if pooled is not None:
            driver.set_correction(pooled)


class LangevinChains:
    """K chains of MALA, sMALA or csMALA advanced together in one process."""

    def __init__(self, sampler, target, theta0, generators, run):
        self.sampler, self.target, self.run, self.gens = sampler, target, run, generators
        K = theta0.shape[0]
        self.K, self.dtype, self.device = K, theta0.dtype, theta0.device
        self.rho = float(run.rho) if sampler.uses_batches else 1.0
        self.h = torch.full((K,), float(sampler.step_size), dtype=self.dtype, device=self.device)
        self.tied = isinstance(sampler.proposal_std, str)
        self.s_fixed = None if self.tied else float(sampler.proposal_std)
        self.auto_correction = getattr(sampler, "correction", None) == "auto" and self.rho < 1.0
        self.set_zeta(sampler.initial_correction())
        self.restart_after = getattr(sampler, "restart_after", None)
        self.restarts = np.zeros(K, dtype=np.int64)
        self.stuck = torch.zeros(K, dtype=torch.long, device=self.device)
        self.state = mala.init(generators, target, theta0, self.params())
        self.mean_risk = None
        self.n_grad = np.zeros(K, dtype=np.int64)

    # -- the kernel, with the constants of the current phase ---------------
    def constants(self, zeta):
        return self.sampler.constants(self.target.lambda_, self.target.n_data, self.rho, zeta)

    def set_zeta(self, zeta):
        """Set the correction and cache the batch-term constants (c, d) it implies."""
        self.zeta = zeta
        if np.ndim(zeta):  # burn-in: each chain its own correction
            cd = [self.constants(z)[:2] for z in zeta]
            self.cd = tuple(torch.tensor(v, dtype=self.dtype, device=self.device) for v in zip(*cd))
        else:
            self.cd = self.constants(zeta)[:2]

    def params(self, h=None, move_scale=None):
        h = self.h if h is None else h
        s = torch.sqrt(2 * h) if self.tied else torch.full_like(h, self.s_fixed)
        return mala.MALAParams(*self.cd, self.rho, h, s, move_scale)

    def move_scale(self):
        """lambda / (n rho): the batch estimate of lambda R_n used to adapt h when rho < 1."""
        return self.target.lambda_ / (self.target.n_data * self.rho) if self.rho < 1.0 else None

    def advance(self, adapting=False, params=None):
        """One step; returns (adaptation signal, accepted, batch sizes)."""
        self.n_grad += 1
        if params is None:
            params = self.params(move_scale=self.move_scale() if adapting else None)
        self.state, info = mala.step(self.gens, self.state, self.target, params)
        self._restart(info.is_accepted, params)
        signal = info.acceptance_prob if info.move_acceptance is None else info.move_acceptance
        return signal, info.is_accepted, info.batch_size

    def frozen_params(self):
        return self.params()

    def sample_step(self, params):
        """One sampling transition; its per-chain records."""
        _, accepted, batch_size = self.advance(params=params)
        return {"accepted": accepted, "batch_size": batch_size}

    def warmup(self):
        """Burn-in: step-size dual averaging and, for csMALA, the automatic correction."""
        run = self.run
        self.update_correction()
        if self.tied:  # double or halve h until the acceptance probability crosses 1/2
            self.h = search_step_size(self._trial, self.h, self.gens)
        averager = DualAveraging(self.h, float(self.sampler.target_accept)) if self.tied else None
        every = int(getattr(self.sampler, "correction_every", 100))
        for i in range(run.burn_in):
            # with rho < 1 the signal (the move's acceptance) costs a forward pass of the
            # current point on the new batch: measure it on every move_every-th step only
            measure = self.tied and (self.rho >= 1.0 or i % self.sampler.move_every == 0)
            acc, _, _ = self.advance(adapting=measure)
            if measure:
                self.h = averager.update(acc)
            if (i + 1) % every == 0:
                self.update_correction()
            progress(run, "burn-in", i, run.burn_in)
        if self.tied and run.burn_in > 0:
            self.h = averager.final()
        self.update_correction()

    def summary(self):
        """The frozen constants of the group."""
        _, _, lam_eff = self.constants(self.zeta)
        csmala = self.sampler.corrected and self.rho < 1.0
        out = {
            "step_size": self.h.cpu().numpy(),
            "proposal_std": self.params().proposal_std.cpu().numpy(),
            "correction": float(self.zeta) if csmala else 0.0,
            "lambda_prime": lam_eff,
        }
        if self.restart_after is not None or self.sampler.uses_batches:
            out["n_restarts"] = self.restarts
        return out

    def _restart(self, accepted, params):
        # paper 000 §5: after `restart_after` rejections in a row, redraw the
        # batch of the current point (the restart perturbs the target).
        if self.restart_after is None or self.rho >= 1.0:
            return
        self.stuck = torch.where(accepted, torch.zeros_like(self.stuck), self.stuck + 1)
        which = self.stuck >= int(self.restart_after)
        if bool(which.any()):
            self.state = mala.refresh(self.gens, self.state, self.target, params, which)
            self.restarts += which.cpu().numpy()
            self.stuck = torch.where(which, torch.zeros_like(self.stuck), self.stuck)

    def update_correction(self):
        if not self.auto_correction:
            return
        self.mean_risk = self.target.mean_loss(self.state.theta).cpu().numpy()
        self.set_correction(self.mean_risk)

    def set_correction(self, mean_risk):
        """zeta per chain for an array of risks (burn-in), pooled for a float (sampling)."""
        lam, n = self.target.lambda_, self.target.n_data
        compensate = getattr(self.sampler, "compensate", True)
        solve = [mala.solve_correction(r, lam, n, self.rho, compensate=compensate) for r in np.atleast_1d(mean_risk)]
        self.set_zeta(np.array(solve) if np.ndim(mean_risk) else solve[0])

    def _trial(self, h):
        """Adaptation signal of one proposal at step ``h``; the state is left as it was."""
        self.n_grad += 1
        _, info = mala.step(self.gens, self.state, self.target, self.params(h, self.move_scale()))
        acc = info.acceptance_prob if info.move_acceptance is None else info.move_acceptance
        return torch.where(info.is_finite, acc, torch.zeros_like(acc))


@register
class SGLD(BatchSurrogate, ChainSampler):
    """Unadjusted Langevin on Bernoulli(``rho``) batches (SGLD; ULA at ``rho = 1``).

    ``theta' = theta - h grad U_B(theta) + sqrt(2 h) xi`` with the unbiased
    batch potential ``U_B = lambda / (n rho) sum_B l_i - log Pi``; no
    Metropolis-Hastings step, so the chain targets ``pi_lambda`` only as
    ``h -> 0``: the common baseline.

    Parameters
    ----------
    step_size : float > 0, default=1e-4
        The fixed step ``h``.

    Notes
    -----
    A fit by this sampler sets this attribute on the estimator, besides
    those every fit has (the estimator's Attributes):

    ``step_size_`` : ndarray of shape (n_chains,)
        The step ``h`` of each chain (fixed: nothing adapts).

    There is no ``acceptance_rate_`` (no Metropolis-Hastings step), and
    ``batch_noise_`` is 0, there being no ratio to disturb;
    ``surrogate_scale_`` is the mean of ``lambda l_i / (n rho)`` over the
    draws and the training examples. ``sample_stats_`` holds, per draw,
    ``step_size``.
    """

    name = "sgld"
    uses_batches = True
    default_burn_in, default_thin = 1000, 10
    record_reductions = {"batch_size": None}
    _parameter_constraints = {"step_size": [Interval(Real, 0, None, closed="neither")]}

    def __init__(self, step_size=1e-4):
        self.step_size = step_size

    def chains(self, target, theta0, generators, run, vectorize=True):
        return SGLDChains(self, target, theta0, generators, run)

    def constants(self, lam, n, rho, zeta=1.0, compensate=True):
        """``lambda / (n rho) sum_B l_i``, the unbiased batch estimate of ``lambda R_n``."""
        return mala.unbiased_constants(lam, n, rho)

    def batch_terms(self, lam, n, rho, info):
        return self.constants(lam, n, rho)[:2]

    def batch_noise(self, term_squares, rho):
        return np.zeros(np.shape(term_squares)[0])  # no Metropolis-Hastings ratio to disturb


class SGLDChains:
    """K SGLD chains with a fixed step; nothing adapts."""

    def __init__(self, sampler, target, theta0, generators, run):
        self.target, self.run, self.gens = target, run, generators
        self.K = theta0.shape[0]
        self.h = torch.full((self.K,), float(sampler.step_size), dtype=theta0.dtype, device=theta0.device)
        self.params = langevin.SGLDParams(float(run.rho), self.h)
        self.state = langevin.init(generators, target, theta0)
        self.n_grad = np.zeros(self.K, dtype=np.int64)

    def warmup(self):
        for i in range(self.run.burn_in):
            self.sample_step(self.params)
            progress(self.run, "burn-in", i, self.run.burn_in)

    def frozen_params(self):
        return self.params

    def sample_step(self, params):
        self.n_grad += 1
        self.state, info = langevin.step(self.gens, self.state, self.target, params)
        return {"batch_size": info.batch_size}

    def summary(self):
        return {"step_size": self.h.cpu().numpy()}
