"""Burn-in with adaptation, thinning, restarts and chain scheduling.

:func:`run_chains` drives K chains of one kernel in two phases:

1. *burn-in* (warm-up): for the Langevin kernels, step-size dual averaging
   toward ``target_accept`` (when the proposal standard deviation is tied to
   the step size), and for csMALA with ``correction="auto"`` the centring of
   the per-example term, recomputed from the full-data risk every
   ``correction_every`` steps (paper 000 §5); for HMC, the step size, the
   diagonal metric and the trajectory length (:mod:`._hmc_chains`);
2. *sampling*: everything frozen, every ``thin``-th state kept.

Between the phases the correction is pooled over all chains so that every
chain samples the same target. Chains run in groups (:func:`chain_groups`):
all K batched in one group (``vectorize=True``), split into ``n_jobs``
batched groups, or one chain per group. Groups are joblib jobs, so they run
in this process, in worker processes, or on a cluster under
``joblib.parallel_backend``; a chain's draws depend on its own seed and its
group, not on where the group runs. HMC adapts its trajectory length and
metric across the chains, so its warm-up keeps all chains in this process
and only its sampling phase is split.
"""

import warnings
from numbers import Integral
from typing import NamedTuple

import numpy as np
import torch
from joblib import Parallel, delayed

from ..exceptions import SamplerWarning
from ..potential import MixingPrior, Prior
from . import langevin, mala
from ._hmc_chains import HMCChains
from ._progress import progress, progress_close
from ._rj_chains import RJChains
from .adaptation import DualAveraging, search_step_size

__all__ = ["ChainConfig", "ChainResult", "chain_groups", "run_chains"]

SAMPLERS = ("csmala", "mala", "smala", "sgld", "hmc", "rjmcmc")
# Burn-in steps between two measurements of the move acceptance (rho < 1).
_MOVE_EVERY = 2
METRICS = ("prior", "adaptive", "identity")


class ChainConfig(NamedTuple):
    """Settings of a run of :func:`run_chains`.

    Attributes
    ----------
    sampler : {"csmala", "mala", "smala", "sgld", "hmc", "rjmcmc"}
        ``"rjmcmc"``: reversible-jump Langevin moves over sparse active sets
        (:mod:`.rjmcmc`; full data, needs a :class:`~skgibbs.potential.MixingPrior`).
    lam : float
        Inverse temperature ``lambda`` of the target ``exp(-lambda R_n)``.
    rho : float
        Bernoulli batch probability (ignored by ``"mala"`` and ``"hmc"``).
    correction : float or "auto"
        csMALA's ``zeta``; ``"auto"`` centres the per-example term during
        burn-in (paper 000 §5).
    step_size : float
        Langevin step ``h`` (leapfrog step for HMC); the initial value when
        adapted.
    proposal_std : float or "auto"
        ``s``; ``"auto"`` is ``sqrt(2 h)`` with ``h`` adapted during burn-in,
        a float fixes both ``h`` and ``s``. Not used by HMC.
    n_samples, burn_in, thin : int
        Draws kept per chain, steps (HMC: transitions) discarded first, keep
        every ``thin``-th.
    restart_after : int or None
        Redraw the batch of a chain after this many rejections in a row.
    target_accept : float or None
        Acceptance aimed at by the step-size adaptation; None is 0.574 for
        the Langevin kernels (Roberts & Rosenthal, 1998) and 0.8 for HMC
        (Stan's default).
    correction_every : int
        Steps between updates of the automatic correction.
    compensate : bool
        Use ``lambda'`` in csMALA's batch terms (True) or ``lam`` as is.
    verbose : int
        Print progress to stderr.
    metric : {"prior", "adaptive", "identity"}
        HMC's diagonal inverse mass: the prior variances (the identity for a
        flat prior), Stan's windowed variance estimate started from those,
        or the identity.
    trajectory_length : float or "auto"
        HMC's trajectory length ``T`` (jittered: each transition runs
        ``ceil(u T / h)`` leapfrog steps with ``u`` in (0, 1)); ``"auto"``
        adapts it by the ChEES criterion during burn-in.
    max_leapfrog : int
        Cap on the leapfrog steps of one HMC transition.
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
    target_accept: object = None
    correction_every: int = 100
    compensate: bool = True
    verbose: int = 0
    metric: str = "prior"
    trajectory_length: object = "auto"
    max_leapfrog: int = 64


class ChainResult(NamedTuple):
    """Output of :func:`run_chains`; all arrays are NumPy.

    ``draw_stats`` holds per-draw records of shape ``(K, n_kept)`` over the
    ``thin`` transitions before each draw: ``acceptance_rate`` (fraction
    accepted), and for HMC ``diverging`` (any divergence), ``n_steps``
    (leapfrog steps) and ``energy_error``.
    """

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
    n_divergent: np.ndarray = None  # (K,) divergent transitions after burn-in (HMC)
    trajectory_length: float = None  # frozen T (HMC)
    inverse_mass: np.ndarray = None  # (Q,) frozen diagonal inverse metric (HMC)
    n_grad: np.ndarray = None  # (K,) gradient evaluations, burn-in and sampling
    draw_stats: dict = None
    move_acceptance: np.ndarray = None  # (K, 3) acceptance of death, within, birth moves (rjmcmc)


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
        self.n_grad = np.zeros(K, dtype=np.int64)

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
        self.n_grad += 1
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

    def frozen_params(self):
        return self.params()

    def sample_step(self, params):
        """One sampling transition; its per-chain records."""
        _, accepted, batch_size = self.advance(params=params)
        return {"accepted": accepted, "batch_size": batch_size}

    def warmup(self):
        """Burn-in: step-size dual averaging and, for csMALA, the automatic correction."""
        cfg = self.cfg
        self.update_correction()
        self.initial_step_size()
        adapt = self.tied and cfg.sampler != "sgld"
        target = 0.574 if cfg.target_accept is None else cfg.target_accept
        averager = DualAveraging(self.h, target) if adapt else None
        for i in range(cfg.burn_in):
            # with rho < 1 the signal (the move's acceptance) costs a forward pass of the
            # current point on the new batch: measure it on every _MOVE_EVERY-th step only
            measure = adapt and (self.rho >= 1.0 or i % _MOVE_EVERY == 0)
            acc, _, _ = self.advance(adapting=measure)
            if measure:
                self.h = averager.update(acc)
            if (i + 1) % cfg.correction_every == 0:
                self.update_correction()
            progress(cfg, "burn-in", i, cfg.burn_in)
        if adapt and cfg.burn_in > 0:
            self.h = averager.final()
        self.update_correction()

    def summary(self):
        """Frozen constants of the run, for :class:`ChainResult`."""
        _, _, lam_eff = self.constants(self.zeta)
        csmala = self.cfg.sampler == "csmala" and self.rho < 1.0
        return {
            "n_restarts": self.restarts,
            "step_size": self.h.cpu().numpy(),
            "proposal_std": self.params().proposal_std.cpu().numpy(),
            "correction": self.zeta if csmala else 0.0,
            "lambda_prime": lam_eff,
            "n_grad": self.n_grad,
        }

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

    def initial_step_size(self):
        """Double or halve h until the acceptance probability crosses 1/2."""
        if self.cfg.sampler == "sgld" or not self.tied:
            return
        self.h = search_step_size(self._trial, self.h, self.gens)

    def _trial(self, h):
        """Adaptation signal of one proposal at step ``h``; the state is left as it was."""
        self.n_grad += 1
        _, info = mala.step(self.gens, self.state, self.pot, self.params(h), self.prior, self.move_scale())
        acc = info.acceptance_prob if info.move_acceptance is None else info.move_acceptance
        return torch.where(info.is_finite, acc, torch.zeros_like(acc))


def _acceptance_so_far(logs, steps):
    """The fraction of proposals accepted over the first ``steps`` sampling steps, for the progress bar."""
    accepted = (logs or {}).get("accepted")
    return "n/a" if accepted is None else f"{float(accepted[:steps].float().mean()):.2f}"


def _sample(chains):
    """The sampling phase of any chains object: frozen constants, per-transition records."""
    cfg = chains.cfg
    K, Q = chains.state.theta.shape
    total = cfg.n_samples * cfg.thin
    draws = torch.empty(K, cfg.n_samples, Q, dtype=chains.dtype, device=chains.device)
    # per-step records stay on the device in preallocated buffers; nothing is
    # masked or copied to the host inside the loop
    logs, kept, steps, interrupted = None, 0, 0, False
    frozen = chains.frozen_params()  # nothing adapts from here on
    try:
        for i in range(total):
            record = chains.sample_step(frozen)
            if logs is None:
                logs = {k: torch.zeros((total, K), dtype=v.dtype, device=v.device) for k, v in record.items()}
            for key, value in record.items():
                logs[key][i] = value
            steps += 1
            if (i + 1) % cfg.thin == 0:
                draws[:, kept] = chains.state.theta
                kept += 1
            if cfg.verbose:  # no closure per step otherwise
                progress(cfg, "sampling", i, total, acceptance=lambda: _acceptance_so_far(logs, steps))
    except KeyboardInterrupt:
        interrupted = True
    progress_close(cfg, "sampling")
    logs = {k: v[:steps].cpu() for k, v in (logs or {}).items()}
    return draws[:, :kept].cpu().numpy(), logs, kept, interrupted


def _draw_stats(logs, kept, thin):
    """Per-draw summaries ``(K, kept)`` of the per-transition records ``(steps, K)``."""
    out = {}
    for key, log in logs.items():
        if key == "batch_size":
            continue
        per = log[: kept * thin].view(kept, thin, -1)
        if key == "accepted":
            out["acceptance_rate"] = per.double().mean(1).T.numpy()
        elif key == "diverging":
            out[key] = per.any(1).T.numpy()
        elif key == "n_steps":
            out[key] = per.sum(1).T.numpy()
        else:
            out[key] = per[:, -1].T.numpy()  # the last transition before the draw
    return out


def _make_chains(potential, prior, theta0, seeds, cfg, vectorize):
    if cfg.sampler == "hmc":
        return HMCChains(potential, prior, theta0, _generators(seeds, theta0.device), cfg, vectorize)
    if cfg.sampler == "rjmcmc":
        return RJChains(potential, prior, theta0, _generators(seeds, theta0.device), cfg)
    return _Chains(potential, prior, theta0, seeds, cfg)


def _own_arrays(chains):
    """Writable copies of the chains' read-only NumPy arrays, in place.

    A job may receive its arguments read-only: Ray's object store hands
    arrays over without a copy, and joblib memory-maps large ones. The
    chains update their counters in place.
    """
    for name, value in vars(chains).items():
        if isinstance(value, np.ndarray) and not value.flags.writeable:
            setattr(chains, name, value.copy())


def _warmup_job(potential, prior, theta0, seeds, cfg, vectorize):
    torch.set_num_threads(1)
    chains = _make_chains(potential, prior, theta0, seeds, cfg, vectorize)
    chains.warmup()
    gen_states = [g.get_state() for g in chains.gens]
    return chains, gen_states


def _sample_job(chains, gen_states, mean_risk):
    torch.set_num_threads(1)
    _own_arrays(chains)
    for g, st in zip(chains.gens, gen_states):
        g.set_state(st)
    if mean_risk is not None:
        chains.set_correction(mean_risk)
    return chains, _sample(chains)


def run_chains(potential, theta0, seeds, config, *, prior=None, vectorize=True, n_jobs=None):
    """Run K chains of one kernel and return their thinned draws.

    Parameters
    ----------
    potential : MLPPotential, FunctionPotential or LogDensityPotential
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
        Advance the chains of a group together (pays for small networks);
        otherwise every chain is a group of its own.
    n_jobs : int, default=None
        With ``vectorize``, a positive ``n_jobs`` splits the chains into
        ``min(n_jobs, K)`` groups of consecutive chains. The groups run as
        joblib jobs, under the active backend
        (``joblib.parallel_backend("dask")`` sends them to Dask workers);
        ``n_jobs`` is passed to :class:`joblib.Parallel` as is.

    Returns
    -------
    ChainResult

    Notes
    -----
    A chain's draws are a function of its seed and of the chains it is
    grouped with (batched arithmetic pads and sums over the group), never
    of the backend or of the worker a group runs on. The groups depend
    only on ``K``, ``vectorize`` and a positive ``n_jobs``, so a run on a
    cluster repeats a local run with the same arguments bit for bit. HMC
    adapts its trajectory length and metric across all chains, so its
    warm-up runs in this process; its sampling phase, where nothing is
    shared, is split into the groups.
    """
    _check_config(config)
    prior = Prior() if prior is None else prior
    if (config.sampler == "rjmcmc") != isinstance(prior, MixingPrior):
        raise ValueError(
            "sampler='rjmcmc' samples the mixing prior of sparse networks and needs prior=MixingPrior(...); "
            f"the other samplers take a Prior (got sampler={config.sampler!r}, prior {type(prior).__name__})."
        )
    K = theta0.shape[0]
    groups = chain_groups(K, vectorize, n_jobs)
    joint = config.sampler == "hmc"  # cross-chain warm-up: one group until sampling
    warm_groups = [list(range(K))] if joint else groups

    def launch(fn, args_list):
        if len(args_list) == 1:
            return [fn(*args_list[0])]
        return Parallel(n_jobs=n_jobs)(delayed(fn)(*a) for a in args_list)

    threads = torch.get_num_threads()
    try:
        warm = launch(
            _warmup_job,
            [(potential, prior, theta0[g], [seeds[k] for k in g], config, vectorize) for g in warm_groups],
        )
        risks = [c.mean_risk for c, _ in warm if c.mean_risk is not None]
        pooled = float(np.mean(np.concatenate(risks))) if risks else None
        if joint and len(groups) > 1:
            chains, states = warm[0]
            warm = [(chains.take(g), [states[k] for k in g]) for g in groups]
        out = launch(_sample_job, [(c, st, pooled) for c, st in warm])
    finally:
        torch.set_num_threads(threads)
    return _collect([c for c, _ in out], [r for _, r in out], config)


def chain_groups(K, vectorize, n_jobs):
    """The groups of chains :func:`run_chains` advances together: lists of chain indices.

    One group of all ``K`` chains when ``vectorize``, split into
    ``min(n_jobs, K)`` groups of consecutive chains for a positive
    ``n_jobs``; one group per chain otherwise. Nothing else enters, so the
    grouping (and with it every draw) is the same on any backend.

    Examples
    --------
    >>> from skgibbs.samplers import chain_groups
    >>> chain_groups(4, vectorize=True, n_jobs=None)
    [[0, 1, 2, 3]]
    >>> chain_groups(4, vectorize=True, n_jobs=2)
    [[0, 1], [2, 3]]
    >>> chain_groups(3, vectorize=False, n_jobs=None)
    [[0], [1], [2]]
    """
    if not vectorize:
        return [[k] for k in range(K)]
    n = int(n_jobs) if isinstance(n_jobs, Integral) and n_jobs > 1 else 1
    return [g.tolist() for g in np.array_split(np.arange(K), min(n, K))]


def _check_config(cfg):
    if cfg.sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {cfg.sampler!r}.")
    if cfg.target_accept is not None and not 0 < cfg.target_accept < 1:
        raise ValueError(f"target_accept must lie in (0, 1), got {cfg.target_accept!r}.")
    if cfg.sampler != "hmc":
        return
    if cfg.metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {cfg.metric!r}.")
    length = cfg.trajectory_length
    if not (length in ("auto", "chees") or (isinstance(length, (int, float)) and length > 0)):
        raise ValueError(f"trajectory_length must be 'auto', 'chees' or a positive float, got {length!r}.")
    if int(cfg.max_leapfrog) < 1:
        raise ValueError(f"max_leapfrog must be a positive integer, got {cfg.max_leapfrog!r}.")


def _collect(chains, results, cfg):
    n_kept = min(r[2] for r in results)
    interrupted = any(r[3] for r in results)
    if interrupted and n_kept == 0:
        raise KeyboardInterrupt
    if interrupted:
        warnings.warn(
            f"Sampling was interrupted; keeping the {n_kept} draws per chain collected so far.",
            SamplerWarning,
            stacklevel=3,
        )
    steps = min(len(r[1]["accepted"]) for r in results)  # interrupted groups may differ
    logs = {k: torch.cat([r[1][k][:steps] for r in results], 1) for k in results[0][1]}
    accepted = logs["accepted"]
    rate = (accepted.double().sum(0) / max(steps, 1)).numpy()
    first = chains[0]
    if "batch_size" in logs and first.rho < 1.0:
        batch_sizes = logs["batch_size"].T[accepted.T].numpy()
    else:
        batch_sizes = np.zeros(0, dtype=np.int64)
    stats = _draw_stats(logs, n_kept, cfg.thin)
    summary = [c.summary() for c in chains]
    return ChainResult(
        samples=np.concatenate([r[0][:, :n_kept] for r in results]),
        acceptance_rate=rate,
        n_restarts=np.concatenate([s["n_restarts"] for s in summary]),
        step_size=np.concatenate([s["step_size"] for s in summary]),
        proposal_std=np.concatenate([s["proposal_std"] for s in summary]),
        correction=summary[0]["correction"],
        lambda_prime=summary[0]["lambda_prime"],
        accepted_batch_sizes=batch_sizes,
        interrupted=interrupted,
        draw_acceptance=stats["acceptance_rate"],
        n_divergent=logs["diverging"].sum(0).numpy() if "diverging" in logs else np.zeros(len(rate), int),
        trajectory_length=summary[0].get("trajectory_length"),
        inverse_mass=summary[0].get("inverse_mass"),
        n_grad=np.concatenate([s["n_grad"] for s in summary]),
        draw_stats=stats,
        move_acceptance=(
            np.concatenate([s["move_acceptance"] for s in summary])
            if "move_acceptance" in summary[0]
            else None
        ),
    )
