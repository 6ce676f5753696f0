"""The chain runner: groups, phases, thinning, threads, progress and interruption.

:func:`run_chains` drives K chains of one sampler object
(:class:`~skgibbs.samplers.Sampler`) in two phases:

1. *warm-up*: the sampler's driver adapts what it adapts (step sizes,
   metric, trajectory length, csMALA's correction), then freezes it;
2. *sampling*: every ``thin``-th state kept, with the per-transition records
   the driver returns.

Between the phases the sampler may pool what its groups learnt
(:meth:`ChainSampler.pool`, e.g. csMALA's correction) so that
every chain samples the same target. Chains run in groups
(:func:`chain_groups`): all K batched in one group (``vectorize=True``),
split into ``n_jobs`` batched groups, or one chain per group. Groups are
joblib jobs, so they run in this process, in worker processes, or on a
cluster under ``joblib.parallel_backend``; a chain's draws depend on its own
seed and its group, not on where the group runs. A sampler whose warm-up
adapts across chains (``joint_warmup``, HMC) warms up as one group in this
process, and only its sampling phase is split.

The runner knows no kernel: a new sampler is a module and a registration
(:func:`~skgibbs.samplers.register`), with no edit here. The samplers it
runs derive from :class:`ChainSampler`.

A driver (one group of ``K`` chains in one process) has

- ``warmup()``: burn-in and adaptation; afterwards nothing adapts;
- ``frozen_params()``: the constants of the sampling phase;
- ``sample_step(params) -> dict``: one transition; per-chain records of shape
  ``(K,)`` (``"accepted"`` for a kernel with a Metropolis-Hastings step, and
  any other record the kernel keeps, e.g. ``"diverging"``) or ``(K, ...)``
  (a vector per chain, e.g. the precisions of a hierarchical prior);
- ``summary() -> dict``: the kernel's own results of the group (per-chain
  arrays of shape ``(K,)`` are concatenated over the groups);
- ``state.theta`` (``(K, Q)``), ``gens`` (the chains' generators) and
  ``n_grad`` (``(K,)`` gradient evaluations);
- with ``joint_warmup``, ``take(rows) -> driver``: the chains ``rows`` of a
  warmed-up group, so that the sampling phase can be split into groups;
- optionally ``position() -> (K, Q)``: the weights a draw records, for a
  driver whose state is in other coordinates (``state.theta`` otherwise).
"""

import time
from numbers import Integral

import numpy as np
import torch
from joblib import Parallel, delayed, effective_n_jobs

from .._progress import progress, progress_close
from .._threads import gradient_work, thread_count
from .._warnings import warn
from ..exceptions import SamplerWarning
from .base import ChainResult, RunSettings, Sampler, get_sampler

__all__ = ["ChainSampler", "chain_groups", "run_chains"]


class ChainSampler(Sampler):
    """A sampler whose kernel runs as Markov chains under :func:`run_chains` (module docstring).

    Beside :class:`~skgibbs.samplers.Sampler`'s members it has
    :meth:`chains` (the driver of a group of chains) and what the runner
    asks between and after the groups: ``joint_warmup`` (warm-up adapts
    across all chains, so it runs as one group), ``record_reductions``
    (how each per-transition record becomes a per-draw statistic:
    ``"mean"``, ``"any"``, ``"sum"``, ``"last"``, or None to drop it),
    ``shared_info`` (the driver's summary entries all groups share, such as
    HMC's trajectory length, kept once rather than concatenated),
    :meth:`pool` and :meth:`share` (what the groups learnt in warm-up, e.g.
    csMALA's correction, handed to every group) and
    :meth:`summarize_records`.
    """

    joint_warmup = False
    record_reductions = {}
    #: info entries the groups share (kept once, not concatenated over the groups)
    shared_info = ()

    def chains(self, target, theta0, generators, run, vectorize=True):  # pragma: no cover - interface
        """The driver of one group of chains started at ``theta0`` ``(K, Q)``."""
        raise NotImplementedError

    def pool(self, drivers):
        """What the groups share between warm-up and sampling (None: nothing)."""
        return None

    def share(self, driver, pooled):
        """Hand ``pooled`` (from :meth:`pool`) to a group before it samples."""

    def summarize_records(self, logs, rho):
        """The kernel's info computed from the sampling phase's records ``(steps, K)`` (default: none)."""
        return {}

    def sample(self, target, theta0, seeds, run, *, vectorize=True, n_jobs=None, stop=None):
        """Run the chains from ``theta0`` ``(K, Q)`` through :func:`run_chains`; a :class:`ChainResult`.

        ``stop``: a run length that adapts (:func:`run_chains`).
        """
        return run_chains(target, theta0, seeds, self, **run._asdict(), vectorize=vectorize, n_jobs=n_jobs,
                          stop=stop)

    def merge(self, summaries):
        """The kernel's info from the groups' :meth:`summary` dicts (per-chain arrays concatenated)."""
        out = {}
        for key, value in summaries[0].items():
            if isinstance(value, np.ndarray) and value.ndim >= 1 and key not in self.shared_info:
                out[key] = np.concatenate([s[key] for s in summaries])
            else:
                out[key] = value
        return out


def _generators(seeds, device):
    gens = []
    for s in seeds:
        g = torch.Generator(device=device)
        g.manual_seed(int(s))
        gens.append(g)
    return gens


def _acceptance_so_far(logs, steps):
    """The fraction of proposals accepted over the first ``steps`` sampling steps, for the progress bar."""
    accepted = (logs or {}).get("accepted")
    return "n/a" if accepted is None else f"{float(accepted[:steps].float().mean()):.2f}"


def _sample(chains, cfg):
    """The sampling phase of any driver: frozen constants, per-transition records."""
    theta = _position(chains)
    K, Q = theta.shape
    total = cfg.n_samples * cfg.thin
    draws = torch.empty(K, cfg.n_samples, Q, dtype=theta.dtype, device=theta.device)
    # per-step records stay on the device in preallocated buffers; nothing is
    # masked or copied to the host inside the loop
    logs, kept, steps, interrupted = None, 0, 0, False
    frozen = chains.frozen_params()  # nothing adapts from here on
    try:
        for i in range(total):
            record = chains.sample_step(frozen)
            if logs is None:
                logs = {
                    k: torch.zeros((total, *v.shape), dtype=v.dtype, device=v.device) for k, v in record.items()
                }
            for key, value in record.items():
                logs[key][i] = value
            steps += 1
            if (i + 1) % cfg.thin == 0:
                draws[:, kept] = _position(chains)
                kept += 1
            if cfg.verbose:  # no closure per step otherwise
                progress(cfg, "sampling", i, total, acceptance=lambda: _acceptance_so_far(logs, steps))
    except KeyboardInterrupt:
        interrupted = True
    progress_close(cfg, "sampling")
    logs = {k: v[:steps].cpu() for k, v in (logs or {}).items()}
    return draws[:, :kept].cpu().numpy(), logs, kept, interrupted, steps


def _position(chains):
    """The weights a draw records: the driver's ``position()``, or ``state.theta`` without one."""
    position = getattr(chains, "position", None)
    return chains.state.theta if position is None else position()


def _draw_stats(logs, kept, thin, reductions):
    """Per-draw summaries ``(K, kept, ...)`` of the per-transition records ``(steps, K, ...)``.

    ``accepted`` becomes the fraction accepted over the ``thin`` transitions
    before each draw (``acceptance_rate``); a kernel's own records are reduced
    as its ``record_reductions`` say (``"mean"``, ``"any"``, ``"sum"``,
    ``"last"``, None to drop); ``"last"`` (the last transition before the
    draw) by default.
    """
    out = {}
    for key, log in logs.items():
        how = "mean" if key == "accepted" else reductions.get(key, "last")
        if how is None:
            continue
        if how not in _REDUCTIONS:
            raise ValueError(f"record_reductions[{key!r}] must be one of {sorted(_REDUCTIONS)} or None, got {how!r}.")
        per = log[: kept * thin].view(kept, thin, *log.shape[1:])
        out["acceptance_rate" if key == "accepted" else key] = _REDUCTIONS[how](per).movedim(0, 1).numpy()
    return out


# How a kernel's per-transition records (kept, thin, K, ...) become one value per draw.
_REDUCTIONS = {
    "mean": lambda per: per.double().mean(1),
    "any": lambda per: per.any(1),
    "sum": lambda per: per.sum(1),
    "last": lambda per: per[:, -1],  # the last transition before the draw
}


def _own_arrays(chains):
    """Writable copies of the driver's read-only NumPy arrays, in place.

    A job may receive its arguments read-only: Ray's object store hands
    arrays over without a copy, and joblib memory-maps large ones. The
    drivers update their counters in place.
    """
    for name, value in vars(chains).items():
        if isinstance(value, np.ndarray) and not value.flags.writeable:
            setattr(chains, name, value.copy())


def _warmup_job(sampler, target, theta0, seeds, run, vectorize, threads=1):
    torch.set_num_threads(threads)
    chains = sampler.chains(target, theta0, _generators(seeds, theta0.device), run, vectorize)
    chains.warmup()
    gen_states = [g.get_state() for g in chains.gens]
    return chains, gen_states


def _sample_job(sampler, chains, gen_states, pooled, run, threads=1):
    torch.set_num_threads(threads)
    _own_arrays(chains)
    for g, st in zip(chains.gens, gen_states):
        g.set_state(st)
    sampler.share(chains, pooled)
    result = _sample(chains, run)
    return chains, result, [g.get_state() for g in chains.gens]


def run_chains(
    target,
    theta0,
    seeds,
    sampler="auto",
    *,
    n_samples=100,
    burn_in=1000,
    thin=1,
    rho=1.0,
    verbose=0,
    vectorize=True,
    n_jobs=None,
    stop=None,
):
    """Run K chains of one sampler and return their thinned draws.

    Parameters
    ----------
    target : Target
        The posterior: per-example losses, prior and ``lambda``.
    theta0 : torch.Tensor of shape (K, Q)
        Starting points.
    seeds : sequence of int of length K
        One seed per chain; chain ``k`` draws only from a generator seeded
        with ``seeds[k]``.
    sampler : Sampler or str, default="auto"
        A sampler object (``HMC(target_accept=0.9)``) or a registered name
        (``"auto"``: HMC for ``rho = 1``, csMALA for ``rho < 1``).
    n_samples, burn_in, thin : int
        Draws kept per chain, transitions discarded first, keep every
        ``thin``-th.
    rho : float in (0, 1], default=1.0
        Bernoulli batch probability of the samplers that read batches.
    verbose : int, default=0
        Progress bars on stderr.
    vectorize : bool, default=True
        Advance the chains of a group together (pays for small networks);
        otherwise every chain is a group of its own.
    n_jobs : int, default=None
        With ``vectorize``, a positive ``n_jobs`` splits the chains into
        ``min(n_jobs, K)`` groups of consecutive chains. The groups run as
        joblib jobs, under the active backend
        (``joblib.parallel_backend("dask")`` sends them to Dask workers);
        ``n_jobs`` is passed to :class:`joblib.Parallel` as is.
    stop : object, default=None
        A run length that adapts (the estimators' ``n_samples="auto"``,
        :class:`skgibbs._run_length.RunLength`): after the first
        ``n_samples`` draws per chain, ``stop.next_total(draws, grads_per_draw,
        elapsed)`` is asked, with every draw so far ``(K, T, Q)``, for the
        total to reach, and the chains are extended from where they stopped
        (nothing re-adapted) until it answers ``T``; the last
        ``stop.retained(T)`` draws are kept, and ``stop.record`` becomes the
        result's ``info["run_length"]``. None: ``n_samples`` draws.

    Returns
    -------
    ChainResult

    Notes
    -----
    A chain's draws are a function of its seed and of the chains it is
    grouped with (batched arithmetic pads and sums over the group), never
    of the backend or of the worker a group runs on. The groups depend
    only on ``K``, ``vectorize`` and a positive ``n_jobs``, so a run on a
    cluster repeats a local run with the same arguments bit for bit.

    Every job sets torch's thread count: one thread while a gradient is
    small (the expected batch ``n rho`` x weights x chains batched, below
    ``skgibbs._threads.THREAD_WORK``), else the caller's
    ``torch.get_num_threads()`` shared out among the jobs that run at once
    (at least one each), so that ``n_jobs`` workers never oversubscribe it.
    Draws of large gradients are therefore reproducible for the same thread
    count (the rounding of a parallel reduction depends on it).

    Examples
    --------
    >>> import torch
    >>> from skgibbs.potential import FunctionPotential
    >>> from skgibbs.samplers import CSMALA, Target, run_chains
    >>> y = torch.randn(200, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    >>> pot = FunctionPotential(lambda th, idx: (y[idx] - th[:, :1]) ** 2, n_data=200)
    >>> res = run_chains(Target(pot, lambda_=200.0), torch.zeros(2, 1, dtype=torch.float64), [0, 1],
    ...                  CSMALA(), rho=0.5, n_samples=50, burn_in=100)
    >>> res.samples.shape
    (2, 50, 1)
    """
    sampler = get_sampler(sampler, rho)
    rho = sampler.check(target.prior, rho)
    run = RunSettings(int(n_samples), int(burn_in), int(thin), rho, verbose)
    if not isinstance(sampler, ChainSampler):  # e.g. VI: draws of a fitted q stand in for the chains
        return sampler.sample(target, theta0, seeds, run, vectorize=vectorize, n_jobs=n_jobs)
    K = theta0.shape[0]
    groups = chain_groups(K, vectorize, n_jobs)
    joint = sampler.joint_warmup  # cross-chain warm-up: one group until sampling
    warm_groups = [list(range(K))] if joint else groups

    def launch(fn, args_list):
        if len(args_list) == 1:
            return [fn(*args_list[0])]
        return Parallel(n_jobs=n_jobs)(delayed(fn)(*a) for a in args_list)

    threads = torch.get_num_threads()
    warm_threads = _job_threads(target, theta0, rho, warm_groups, vectorize, n_jobs)
    sample_threads = _job_threads(target, theta0, rho, groups, vectorize, n_jobs)
    try:
        warm = launch(
            _warmup_job,
            [(sampler, target, theta0[g], [seeds[k] for k in g], run, vectorize, warm_threads)
             for g in warm_groups],
        )
        pooled = sampler.pool([c for c, _ in warm])
        if joint and len(groups) > 1:
            chains, states = warm[0]
            warm = [(chains.take(g), [states[k] for k in g]) for g in groups]
        started, before = time.perf_counter(), [c.n_grad.copy() for c, _ in warm]
        out = launch(_sample_job, [(sampler, c, st, pooled, run, sample_threads) for c, st in warm])
        if stop is not None:
            out = _extend(stop, out, before, started, lambda block, groups: launch(
                _sample_job, [(sampler, c, st, pooled, block, sample_threads) for c, _, st in groups]), run)
    finally:
        torch.set_num_threads(threads)
    result = _collect(sampler, [c for c, _, _ in out], [r for _, r, _ in out], run)
    if stop is not None:
        result.info["run_length"] = stop.record
    return result


def _extend(stop, out, before, started, sample_more, run):
    """Extend every group's chains until ``stop`` answers the total so far; keep its retained draws.

    ``out`` holds ``(driver, result, generator states)`` per group after the
    first block; ``before`` the drivers' gradient counts at the end of
    warm-up. A block's records are appended to the earlier blocks'; an
    interrupted block ends the run.
    """
    results = [r for _, r, _ in out]
    while not any(r[3] for r in results):
        total = min(r[2] for r in results)
        draws = np.concatenate([r[0][:, :total] for r in results])
        grads = np.concatenate([c.n_grad - b for (c, _, _), b in zip(out, before)])
        nxt = stop.next_total(draws, float(grads.mean()) / max(total, 1), time.perf_counter() - started)
        if nxt <= total:
            break
        out = sample_more(run._replace(n_samples=nxt - total), out)
        results = [_join(a, b) for a, (_, b, _) in zip(results, out)]
    keep = stop.retained(min(r[2] for r in results))
    results = [_last(r, keep, run.thin) for r in results]
    return [(c, r, st) for (c, _, st), r in zip(out, results)]


def _join(first, second):
    """One group's sampling results of two blocks, one after the other (``_sample``'s tuple)."""
    draws = np.concatenate([first[0][:, : first[2]], second[0]], axis=1)
    logs = {k: torch.cat([first[1][k][: first[4]], second[1][k]]) for k in first[1]}
    return draws, logs, first[2] + second[2], second[3], first[4] + second[4]


def _last(result, keep, thin):
    """The last ``keep`` draws of a group's result, with the records of their transitions."""
    draws, logs, kept, interrupted, steps = result
    keep = min(keep, kept)
    logs = {k: v[(kept - keep) * thin : kept * thin] for k, v in logs.items()}
    return draws[:, kept - keep : kept], logs, keep, interrupted, keep * thin


def _job_threads(target, theta0, rho, groups, vectorize, n_jobs):
    """torch threads of every job that runs ``groups``: the caller's count shared by the jobs at once.

    :func:`skgibbs._threads.thread_count` on the work of one gradient (the
    expected batch ``n rho`` x weights x the chains batched in a group) and
    the jobs that run at the same time: one thread for small gradients,
    else ``torch.get_num_threads() // jobs`` each, so that worker processes
    never oversubscribe the caller's threads.
    """
    n_workers = 1 if len(groups) == 1 else min(len(groups), effective_n_jobs(n_jobs))
    chains = max(len(g) for g in groups) if vectorize else 1
    work = gradient_work(getattr(target, "n_rows", target.n_data) * rho, theta0.shape[1], chains)
    return thread_count(work, n_workers, budget=torch.get_num_threads())


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


def _collect(sampler, chains, results, run):
    n_kept = min(r[2] for r in results)
    interrupted = any(r[3] for r in results)
    if interrupted and n_kept == 0:
        raise KeyboardInterrupt
    if interrupted:
        warn(
            SamplerWarning(
                "Sampling was interrupted; the draws collected so far are kept (their number per chain is "
                "the warning's .n_kept).",
                n_kept=int(n_kept),
            ),
            stacklevel=3,
        )
    steps = min(r[4] for r in results)  # interrupted groups may differ
    logs = {k: torch.cat([r[1][k][:steps] for r in results], 1) for k in results[0][1]}
    rate = None
    if "accepted" in logs:
        rate = (logs["accepted"].double().sum(0) / max(steps, 1)).numpy()
    info = sampler.merge([c.summary() for c in chains])
    info.update(sampler.summarize_records(logs, run.rho))
    return ChainResult(
        samples=np.concatenate([r[0][:, :n_kept] for r in results]),
        acceptance_rate=rate,
        n_grad=np.concatenate([c.n_grad for c in chains]),
        draw_stats=_draw_stats(logs, n_kept, run.thin, sampler.record_reductions),
        interrupted=interrupted,
        info=info,
    )
