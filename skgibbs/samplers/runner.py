"""Burn-in with adaptation, thinning, restarts and chain scheduling.

:func:`run_chains` drives K chains of one kernel in two phases:

1. *burn-in*: step-size dual averaging toward ``target_accept`` (when the
   proposal standard deviation is tied to the step size), and for csMALA with
   ``correction="auto"`` the centring of the per-example term, recomputed from
   the full-data risk every ``correction_every`` steps (paper 000 §5);
2. *sampling*: everything frozen, every ``thin``-th state kept.

Between the phases the correction is pooled over all chains so that every
chain samples the same target. Chains run batched in one process
(``vectorize=True``) or one by one, in this process or through joblib
(``n_jobs``); a chain's draws depend only on its own seed.
"""

import math
import sys
import warnings
from typing import NamedTuple

import numpy as np
import torch
from joblib import Parallel, delayed

from ..exceptions import SamplerWarning
from ..potential import Prior
from . import langevin, mala

__all__ = ["ChainConfig", "ChainResult", "run_chains"]


class ChainConfig(NamedTuple):
    """Settings of a run of :func:`run_chains`.

    Attributes
    ----------
    sampler : {"csmala", "mala", "smala", "sgld"}
    lam : float
        Inverse temperature ``lambda`` of the target ``exp(-lambda R_n)``.
    rho : float
        Bernoulli batch probability (ignored by ``"mala"``).
    correction : float or "auto"
        csMALA's ``zeta``; ``"auto"`` centres the per-example term during
        burn-in (paper 000 §5).
    step_size : float
        Langevin step ``h``; the initial value when adapted.
    proposal_std : float or "auto"
        ``s``; ``"auto"`` is ``sqrt(2 h)`` with ``h`` adapted during burn-in,
        a float fixes both ``h`` and ``s``.
    n_samples, burn_in, thin : int
        Draws kept per chain, steps discarded first, keep every ``thin``-th.
    restart_after : int or None
        Redraw the batch of a chain after this many rejections in a row.
    target_accept : float
        Acceptance aimed at by the step-size adaptation.
    correction_every : int
        Steps between updates of the automatic correction.
    compensate : bool
        Use ``lambda'`` in csMALA's batch terms (True) or ``lam`` as is.
    verbose : int
        Print progress to stderr.
    """

    sampler: str = "csmala"
    lam: float = 1.0
    rho: float = 1.0
    correction: object = "auto"
    step_size: float = 1e-4
    proposal_std: object = "auto"
    n_samples: int = 100
    burn_in: int = 1000
    thin: int = 1
    restart_after: object = 100
    target_accept: float = 0.574
    correction_every: int = 100
    compensate: bool = True
    verbose: int = 0


class ChainResult(NamedTuple):
    """Output of :func:`run_chains`; all arrays are NumPy."""

    samples: np.ndarray  # (K, n_kept, Q)
    acceptance_rate: np.ndarray  # (K,)
    n_restarts: np.ndarray  # (K,)
    step_size: np.ndarray  # (K,)
    proposal_std: np.ndarray  # (K,)
    correction: float  # zeta (csMALA), else 0
    lambda_prime: float  # lambda' of the batch terms
    accepted_batch_sizes: np.ndarray  # (n_accepted,) batch sizes |B| of accepted sampling steps
    interrupted: bool
    draw_acceptance: np.ndarray = None  # (K, n_kept) fraction accepted over the thin steps before each draw


def _generators(seeds, device):
    gens = []
    for s in seeds:
        g = torch.Generator(device=device)
        g.manual_seed(int(s))
        gens.append(g)
    return gens


class _Chains:
    """K chains advanced together in one process."""

    def __init__(self, potential, prior, theta0, seeds, cfg):
        self.pot, self.prior, self.cfg = potential, prior, cfg
        self.gens = _generators(seeds, theta0.device)
        K = theta0.shape[0]
        self.K, self.dtype, self.device = K, theta0.dtype, theta0.device
        self.rho = 1.0 if cfg.sampler == "mala" else float(cfg.rho)
        self.h = torch.full((K,), float(cfg.step_size), dtype=self.dtype, device=self.device)
        self.tied = isinstance(cfg.proposal_std, str)
        self.s_fixed = None if self.tied else float(cfg.proposal_std)
        self.set_zeta(1.0 if cfg.correction == "auto" else float(cfg.correction))
        self.restarts = np.zeros(K, dtype=np.int64)
        self.stuck = torch.zeros(K, dtype=torch.long, device=self.device)
        if cfg.sampler == "sgld":
            self.state = langevin.init(theta0)
        else:
            self.state = mala.init(theta0, potential, self.gens, self.rho, prior)
        self.mean_risk = None

    # -- the kernel, with the constants of the current phase ---------------
    def constants(self, zeta):
        return mala.surrogate_constants(
            self.cfg.sampler, self.cfg.lam, self.pot.n_data, self.rho, zeta, self.cfg.compensate
        )

    def set_zeta(self, zeta):
        """Set the correction and cache the batch-term constants (c, d) it implies."""
        self.zeta = zeta
        if np.ndim(zeta):  # burn-in: each chain its own correction
            cd = [self.constants(z)[:2] for z in zeta]
            self.cd = tuple(torch.tensor(v, dtype=self.dtype, device=self.device) for v in zip(*cd))
        else:
            self.cd = self.constants(zeta)[:2]

    def params(self, h=None):
        h = self.h if h is None else h
        s = torch.sqrt(2 * h) if self.tied else torch.full_like(h, self.s_fixed)
        return mala.MALAParams(*self.cd, self.rho, h, s)

    def move_scale(self):
        """lambda / (n rho): the batch estimate of lambda R_n used to adapt h when rho < 1."""
        return self.cfg.lam / (self.pot.n_data * self.rho) if self.rho < 1.0 else None

    def advance(self, adapting=False, params=None):
        """One step; returns (adaptation signal, accepted, batch sizes).

        The adaptation signal is the acceptance probability at rho = 1. With
        rho < 1 the acceptance is capped by batch-to-batch noise whatever h
        is, so during burn-in h follows the acceptance of the parameter move
        alone (``MALAInfo.move_acceptance``). ``params`` are the frozen
        kernel constants of the sampling phase (built from the current state
        of adaptation when None).
        """
        if self.cfg.sampler == "sgld":
            self.state, info = langevin.step(
                self.gens, self.state, self.pot, self.cfg.lam, self.rho, self.h, self.prior
            )
            ones = torch.ones(self.K, dtype=self.dtype, device=self.device)
            return ones, torch.ones(self.K, dtype=torch.bool), info.batch_size
        scale = self.move_scale() if adapting else None
        params = self.params() if params is None else params
        self.state, info = mala.step(self.gens, self.state, self.pot, params, self.prior, scale)
        self._restart(info.is_accepted, params)
        signal = info.acceptance_prob if info.move_acceptance is None else info.move_acceptance
        return signal, info.is_accepted, info.batch_size

    def _restart(self, accepted, params):
        # paper 000 §5: after `restart_after` rejections in a row, redraw the
        # batch of the current point (the restart perturbs the target).
        if self.cfg.restart_after is None or self.rho >= 1.0:
            return
        self.stuck = torch.where(accepted, torch.zeros_like(self.stuck), self.stuck + 1)
        which = self.stuck >= int(self.cfg.restart_after)
        if bool(which.any()):
            self.state = mala.refresh(self.gens, self.state, self.pot, params, self.prior, which)
            self.restarts += which.cpu().numpy()
            self.stuck = torch.where(which, torch.zeros_like(self.stuck), self.stuck)

    def update_correction(self):
        if self.cfg.sampler != "csmala" or self.cfg.correction != "auto" or self.rho >= 1.0:
            return
        self.mean_risk = self.pot.mean_loss(self.state.theta).cpu().numpy()
        self.set_correction(self.mean_risk)

    def set_correction(self, mean_risk):
        """zeta per chain for an array of risks (burn-in), pooled for a float (sampling)."""
        solve = [
            mala.solve_correction(r, self.cfg.lam, self.pot.n_data, self.rho, compensate=self.cfg.compensate)
            for r in np.atleast_1d(mean_risk)
        ]
        self.set_zeta(np.array(solve) if np.ndim(mean_risk) else solve[0])

    def initial_step_size(self, max_iter=40):
        """Double or halve h until the acceptance probability crosses 1/2."""
        if self.cfg.sampler == "sgld" or not self.tied:
            return
        h = self.h.clone()
        acc = self._trial(h)
        direction = torch.where(acc > 0.5, 2.0, 0.5).to(self.dtype)
        done = torch.zeros(self.K, dtype=torch.bool, device=self.device)
        for _ in range(max_iter):
            new_h = torch.where(done, h, h * direction)
            # chains already done must not consume random numbers, so that a
            # chain's path does not depend on the chains batched beside it
            frozen = [(g, g.get_state()) for g, d in zip(self.gens, done.tolist()) if d]
            acc = self._trial(new_h)
            for g, st in frozen:
                g.set_state(st)
            crossed = torch.where(direction > 1, acc <= 0.5, acc > 0.5)
            h = torch.where(done, h, new_h)
            done = done | crossed
            if bool(done.all()):
                break
        self.h = h

    def _trial(self, h):
        """Adaptation signal of one proposal at step ``h``; the state is left as it was."""
        _, info = mala.step(self.gens, self.state, self.pot, self.params(h), self.prior, self.move_scale())
        acc = info.acceptance_prob if info.move_acceptance is None else info.move_acceptance
        return torch.where(info.is_finite, acc, torch.zeros_like(acc))


class _DualAveraging:
    """Nesterov dual averaging of log h per chain (Hoffman & Gelman, 2014)."""

    def __init__(self, h0, target, gamma=0.05, t0=10.0, kappa=0.75, span=1e3):
        # log h stays within `span` of the searched start: where batch noise,
        # not h, limits acceptance, the average would otherwise drift to 0.
        self.lo, self.hi = torch.log(h0 / span), torch.log(h0 * span)
        self.mu = torch.log(10 * h0)
        self.target, self.gamma, self.t0, self.kappa = target, gamma, t0, kappa
        self.hbar = torch.zeros_like(h0)
        self.log_h_avg = torch.log(h0)
        self.t = 0

    def update(self, acc):
        self.t += 1
        eta = 1.0 / (self.t + self.t0)
        self.hbar = (1 - eta) * self.hbar + eta * (self.target - acc)
        log_h = self.mu - math.sqrt(self.t) / self.gamma * self.hbar
        log_h = torch.minimum(torch.maximum(log_h, self.lo), self.hi)
        w = self.t ** (-self.kappa)
        self.log_h_avg = w * log_h + (1 - w) * self.log_h_avg
        return torch.exp(log_h)

    def final(self):
        return torch.exp(self.log_h_avg)


def _progress(cfg, phase, i, total):
    if cfg.verbose and total and (i + 1) % max(1, total // 10) == 0:
        print(f"[skgibbs] {phase}: {i + 1}/{total}", file=sys.stderr, flush=True)


def _warmup(chains):
    cfg = chains.cfg
    chains.update_correction()
    chains.initial_step_size()
    adapt = chains.tied and cfg.sampler != "sgld"
    averager = _DualAveraging(chains.h, cfg.target_accept) if adapt else None
    for i in range(cfg.burn_in):
        acc, _, _ = chains.advance(adapting=adapt)
        if adapt:
            chains.h = averager.update(acc)
        if (i + 1) % cfg.correction_every == 0:
            chains.update_correction()
        _progress(cfg, "burn-in", i, cfg.burn_in)
    if adapt and cfg.burn_in > 0:
        chains.h = averager.final()
    chains.update_correction()
    return chains


def _sample(chains):
    cfg = chains.cfg
    K, Q = chains.state.theta.shape
    total = cfg.n_samples * cfg.thin
    draws = torch.empty(K, cfg.n_samples, Q, dtype=chains.dtype, device=chains.device)
    # per-step records stay on the device in preallocated buffers; nothing is
    # masked or copied to the host inside the loop
    acc_log = torch.zeros(total, K, dtype=torch.bool, device=chains.device)
    size_log = torch.zeros(total, K, dtype=torch.long, device=chains.device)
    kept, steps, interrupted = 0, 0, False
    frozen = chains.params()  # nothing adapts from here on
    try:
        for i in range(total):
            _, is_acc, bsize = chains.advance(params=frozen)
            acc_log[i], size_log[i] = is_acc, bsize
            steps += 1
            if (i + 1) % cfg.thin == 0:
                draws[:, kept] = chains.state.theta
                kept += 1
            _progress(cfg, "sampling", i, total)
    except KeyboardInterrupt:
        interrupted = True
    acc_log, size_log = acc_log[:steps].cpu(), size_log[:steps].cpu()
    rate = (acc_log.double().sum(0) / max(steps, 1)).numpy()
    batch_sizes = size_log.T[acc_log.T].numpy() if chains.rho < 1.0 else np.zeros(0, dtype=np.int64)
    per_draw = acc_log[: kept * cfg.thin].double().view(kept, cfg.thin, K).mean(1).T.numpy()
    return draws[:, :kept].cpu().numpy(), rate, batch_sizes, interrupted, per_draw


def _warmup_job(potential, prior, theta0, seeds, cfg):
    torch.set_num_threads(1)
    chains = _warmup(_Chains(potential, prior, theta0, seeds, cfg))
    gen_states = [g.get_state() for g in chains.gens]
    return chains, gen_states


def _sample_job(chains, gen_states, mean_risk):
    torch.set_num_threads(1)
    for g, st in zip(chains.gens, gen_states):
        g.set_state(st)
    if mean_risk is not None:
        chains.set_correction(mean_risk)
    return chains, _sample(chains)


def run_chains(potential, theta0, seeds, config, *, prior=None, vectorize=True, n_jobs=None):
    """Run K chains of one kernel and return their thinned draws.

    Parameters
    ----------
    potential : MLPPotential or FunctionPotential
        Per-example losses of the model on the data.
    theta0 : torch.Tensor of shape (K, Q)
        Starting points.
    seeds : sequence of int of length K
        One seed per chain; chain ``k`` draws only from a generator seeded
        with ``seeds[k]``.
    config : ChainConfig
    prior : Prior, default=None
        Flat prior when None.
    vectorize : bool, default=True
        Advance all chains together (pays for small networks); otherwise one
        chain at a time, or in parallel with ``n_jobs``.
    n_jobs : int, default=None
        joblib workers for the non-vectorized path.

    Returns
    -------
    ChainResult
    """
    prior = Prior() if prior is None else prior
    K = theta0.shape[0]
    groups = [list(range(K))] if vectorize else [[k] for k in range(K)]
    jobs = n_jobs if (n_jobs not in (None, 1) and len(groups) > 1) else None
    parallel = Parallel(n_jobs=jobs) if jobs else None

    def launch(fn, args_list):
        if parallel is None:
            return [fn(*a) for a in args_list]
        return parallel(delayed(fn)(*a) for a in args_list)

    threads = torch.get_num_threads()
    try:
        warm = launch(
            _warmup_job, [(potential, prior, theta0[g], [seeds[k] for k in g], config) for g in groups]
        )
        risks = [c.mean_risk for c, _ in warm if c.mean_risk is not None]
        pooled = float(np.mean(np.concatenate(risks))) if risks else None
        out = launch(_sample_job, [(c, st, pooled) for c, st in warm])
    finally:
        torch.set_num_threads(threads)
    return _collect([c for c, _ in out], [r for _, r in out], config)


def _collect(chains, results, cfg):
    n_kept = min(r[0].shape[1] for r in results)
    interrupted = any(r[3] for r in results)
    if interrupted and n_kept == 0:
        raise KeyboardInterrupt
    if interrupted:
        warnings.warn(
            f"Sampling was interrupted; keeping the {n_kept} draws per chain collected so far.",
            SamplerWarning,
            stacklevel=3,
        )
    first = chains[0]
    s = [c.params().proposal_std.cpu().numpy() for c in chains]
    _, _, lam_eff = mala.surrogate_constants(
        cfg.sampler, cfg.lam, first.pot.n_data, first.rho, first.zeta, cfg.compensate
    )
    zeta = first.zeta if (cfg.sampler == "csmala" and first.rho < 1.0) else 0.0
    return ChainResult(
        samples=np.concatenate([r[0][:, :n_kept] for r in results]),
        acceptance_rate=np.concatenate([r[1] for r in results]),
        n_restarts=np.concatenate([c.restarts for c in chains]),
        step_size=np.concatenate([c.h.cpu().numpy() for c in chains]),
        proposal_std=np.concatenate(s),
        correction=zeta,
        lambda_prime=lam_eff,
        accepted_batch_sizes=np.concatenate([r[2] for r in results]),
        interrupted=interrupted,
        draw_acceptance=np.concatenate([r[4][:, :n_kept] for r in results]),
    )
