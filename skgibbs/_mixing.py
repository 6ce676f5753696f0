"""Whether a fit can be trusted: mixing diagnostics and the warnings that say what to change.

Function-space diagnostics (Vehtari, Gelman, Simpson, Carpenter & Bürkner,
2021): the weights of a network are not identifiable (permuted hidden units
give the same function), so R-hat and ESS are computed on the function
values at the training inputs. The thresholds are the issue-level ones of
the library: R-hat above 1.05 or a bulk ESS below 100 means that the draws
do not yet represent the posterior (Vehtari et al. recommend 1.01 and 400
for final results).

Two failures are told apart, because their remedies differ:

* a chain that has not converged on its own (its split R-hat, the chain cut
  in halves, above 1.05, or its bulk ESS below ``100 / n_chains``): longer
  chains help, a :class:`~skgibbs.SamplerWarning`;
* chains that each converged but disagree (the between-chain R-hat above
  1.05 while every chain passes its own checks): the posterior has several
  modes and each chain samples its own; longer chains do not help, a
  :class:`~skgibbs.MultimodalWarning`.

The between-chain R-hat is the nested R-hat of Margossian et al. (2024)
with every chain its own superchain (:func:`~skgibbs.diagnostics.nested_rhat`):
the estimators start each chain from its own pre-trained network, so no two
chains share a start and superchains of one chain are all the data
support; nested R-hat then is the R-hat of the unsplit chains, which sees
the disagreement of chain means and not the drift within a chain (that is
the within-chain check's). It is computed on rank-normalised values, as
``rhat_``, so that heavy tails (probabilities near 0 or 1) do not inflate it.
"""

import os
import re
import sys

import numpy as np

from ._warnings import warn
from ._response import WATCHED
from .diagnostics import nested_rhat, rank_rhat_and_ess
from .exceptions import MultimodalWarning, SamplerWarning

__all__ = [
    "function_space_mixing",
    "pointwise_mixing",
    "worst_mixing",
    "pointwise_chain_mixing",
    "worst_chain_mixing",
    "chunk_mixing",
    "mixing_state",
    "mixing_failure",
    "warn_if_unreliable",
    "RHAT_WARN",
    "ESS_WARN",
]

RHAT_WARN, ESS_WARN = 1.05, 100.0
_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def function_space_mixing(F, n_chains):
    """Largest rank-normalised split R-hat and smallest bulk ESS of ``F`` (shape ``(K S, n)``).

    NaN for both with fewer than 8 draws per chain (split halves of 4).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> r, e = function_space_mixing(rng.normal(size=(4 * 100, 3)), n_chains=4)
    >>> r < 1.05, e > 300
    (True, True)
    """
    return worst_mixing(*pointwise_mixing(F, n_chains))


def pointwise_mixing(F, n_chains):
    """Rank-normalised split R-hat and bulk ESS of every column of ``F`` (shape ``(K S, m)``).

    Each column is judged on its own, so that the columns of a large ``F``
    can be judged chunk by chunk and the results concatenated.

    Returns
    -------
    rhat, ess : ndarray of shape (m,)
        NaN with fewer than 8 draws per chain.
    """
    S = F.shape[0] // n_chains
    if S < 8:
        nan = np.full(int(np.prod(F.shape[1:], dtype=np.int64)), np.nan)
        return nan, nan.copy()
    chains = F.reshape(n_chains, S, -1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r, e, _ = rank_rhat_and_ess(chains, scores=False)
    return np.atleast_1d(r), np.atleast_1d(e)


def worst_mixing(r, e):
    """The largest finite R-hat and the smallest finite ESS of :func:`pointwise_mixing` (NaN: none)."""
    r_max = float(np.nanmax(r)) if np.isfinite(r).any() else np.nan
    e_min = float(np.nanmin(e)) if np.isfinite(e).any() else np.nan
    return r_max, e_min


def pointwise_chain_mixing(F, n_chains):
    """Each chain judged alone, and the chains against each other, for every column of ``F`` (``(K S, m)``).

    Returns
    -------
    within_rhat : ndarray of shape (m,)
        The largest over the chains of each chain's own rank-normalised
        split R-hat (the chain cut in halves).
    within_ess : ndarray of shape (m,)
        The smallest over the chains of each chain's own bulk ESS.
    between_rhat : ndarray of shape (m,)
        Nested R-hat of the rank-normalised values with every chain its own
        superchain (:func:`~skgibbs.diagnostics.nested_rhat`); NaN with one
        chain.

    All NaN with fewer than 8 draws per chain.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> F = rng.normal(size=(4 * 200, 2)) + np.repeat([0.0, 0.0, 0.0, 3.0], 200)[:, None]
    >>> within_r, within_e, between_r = pointwise_chain_mixing(F, n_chains=4)
    >>> bool(within_r.max() < 1.05), bool(within_e.min() > 100), bool(between_r.min() > 1.5)
    (True, True, True)
    """
    return chunk_mixing(F, n_chains)[2:]


def worst_chain_mixing(within_rhat, within_ess, between_rhat):
    """The largest finite within-chain and between-chain R-hat and the smallest finite within-chain ESS."""
    within_r, within_e = worst_mixing(within_rhat, within_ess)
    between = float(np.nanmax(between_rhat)) if np.isfinite(between_rhat).any() else np.nan
    return within_r, within_e, between


def chunk_mixing(F, n_chains, judged=True):
    """Per-row mixing diagnostics of a chunk ``F`` (``(K S, m)``), the parts :func:`mixing_state` joins.

    The R-hat and ESS of :func:`pointwise_mixing` followed by those of
    :func:`pointwise_chain_mixing`, the same numbers, with the rank
    transforms shared: the pooled normal scores serve the pooled R-hat, the
    bulk ESS and the nested R-hat, the chains' own scores their R-hat and
    ESS (four transforms where the separate calls make seven: on a
    classifier's class probabilities at its training inputs they were most
    of a run-length check). All NaN where the draws are not judged
    (``judged`` False: a sampler whose draws are independent, VI's draws
    of ``q`` or SMC's particles, where they judge nothing and their rank
    normalisation was a third of a large fit's summaries).
    """
    S = F.shape[0] // n_chains
    m = int(np.prod(F.shape[1:], dtype=np.int64))
    if not judged or S < 8:  # NaN with fewer than 8 draws per chain (split halves of 4)
        return tuple(np.full(m, np.nan) for _ in range(5))
    chains = F.reshape(n_chains, S, m)
    # every (chain, column) pair a series of one chain: R-hat splits it in halves
    alone = chains.transpose(1, 0, 2).reshape(1, S, n_chains * m)
    with np.errstate(invalid="ignore", divide="ignore"):
        r, e, scores = rank_rhat_and_ess(chains)
        within_r, within_e, _ = rank_rhat_and_ess(alone, scores=False)
        within_r = np.atleast_1d(within_r).reshape(n_chains, m)
        within_e = np.atleast_1d(within_e).reshape(n_chains, m)
        if n_chains > 1:
            between = np.atleast_1d(nested_rhat(scores, rank_normalize=False))
        else:
            between = np.full(m, np.nan)
    # fmax / fmin skip a chain's NaN (a constant series) unless every chain has one
    return (np.atleast_1d(r), np.atleast_1d(e), np.fmax.reduce(within_r, axis=0),
            np.fmin.reduce(within_e, axis=0), between)


def mixing_state(parts):
    """``rhat_``, ``ess_`` and the within- and between-chain diagnostics of a fit from its chunks' parts.

    ``parts`` holds, per chunk of rows, the per-row arrays of
    :func:`chunk_mixing`.
    """
    r, e, within_r, within_e, between = (np.concatenate(values) for values in zip(*parts))
    rhat, ess = worst_mixing(r, e)
    within_rhat, within_ess, between_rhat = worst_chain_mixing(within_r, within_e, between)
    return {
        "rhat_": rhat,
        "ess_": ess,
        "within_chain_rhat_": within_rhat,
        "within_chain_ess_": within_ess,
        "between_chain_rhat_": between_rhat,
    }


def _warn(message, category=SamplerWarning, **details):
    """Warn at the first frame outside skgibbs (the user's ``fit`` call); ``details`` become attributes."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warn(category(message, **details), stacklevel=level)


# a number in the first sentence of a sampler's message, not a setting's value (``max_iter=300``)
_MEASURED = re.compile(r"(?<![=\w.])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?%?")


def _measured(text):
    """The numbers of the first sentence of a sampler's check (what it measured), in order.

    Examples
    --------
    >>> _measured("3 divergent transitions after warm-up: raise target_accept (e.g. 0.9).")
    [3.0]
    """
    end = re.search(r"[.:](\s|$)", text)
    head = text if end is None else text[: end.start()]
    return [float(v.rstrip("%")) / (100.0 if v.endswith("%") else 1.0) for v in _MEASURED.findall(head)]


def warn_if_unreliable(est):
    """Raise a :class:`~skgibbs.SamplerWarning` for each way the fitted ``est`` falls short.

    The sampler object (``est.sampler_``) says what falls short for its kernel
    (:meth:`~skgibbs.samplers.Sampler.diagnose`) and whether R-hat and ESS
    can judge its draws (``mixing_diagnostics``).
    """
    fit = {k: v for k, v in vars(est).items() if k.endswith("_") and not k.startswith("_")}
    fit.setdefault("acceptance_rate_", None)
    for message in est.sampler_.diagnose(fit):
        _warn(message, estimator=type(est).__name__, values=_measured(message), text=message)
    if est.sampler_.mixing_diagnostics:
        _warn_if_not_mixed(est)


def _watched(est):
    """What R-hat and ESS are computed on, in words: the class's declared response says (without a
    declaration, a stand-in for a fit, the function values)."""
    traits = getattr(type(est), "_traits", None)
    return WATCHED["continuous" if traits is None else traits.response]


def mixing_failure(rhat, ess, within_rhat, within_ess, between_rhat, n_chains):
    """How draws with these worst diagnostics fall short: None, ``"within"``, ``"between"`` or ``"draws"``.

    ``"within"``: a chain has not converged on its own (its split R-hat
    above :data:`RHAT_WARN` or its bulk ESS below ``ESS_WARN / n_chains``);
    it comes first, since until every chain has converged their
    disagreement says nothing about modes. ``"between"``: every chain
    passes alone, but the chains disagree (between-chain or pooled R-hat
    above :data:`RHAT_WARN`). ``"draws"``: the chains agree but hold fewer
    than :data:`ESS_WARN` effective draws together. NaN (too few draws)
    passes every check, but within-chain values that are NaN while the
    pooled ones fall short mean chains that do not move: ``"within"``.

    Examples
    --------
    >>> mixing_failure(1.3, 40.0, 1.01, 150.0, 1.4, n_chains=4)
    'between'
    >>> mixing_failure(1.3, 40.0, 1.2, 150.0, 1.4, n_chains=4)
    'within'
    """
    if not (rhat > RHAT_WARN or ess < ESS_WARN):
        return None
    # NaN here, with finite pooled values: every chain is constant on its own, i.e. stuck
    if not (within_rhat <= RHAT_WARN and within_ess >= ESS_WARN / n_chains):
        return "within"
    if between_rhat > RHAT_WARN or rhat > RHAT_WARN:
        return "between"
    return "draws"


def _warn_if_not_mixed(est):
    """At most one warning: a chain that has not converged, chains that disagree, or too few draws.

    The first line of the text names the failure and is the same for every
    fit that falls short the same way; the lines after it give the fit's
    numbers and the remedies for this fit (with a run length that adapted,
    the length it would have needed).
    """
    r, e = est.rhat_, est.ess_
    within_r, within_e, between = est.within_chain_rhat_, est.within_chain_ess_, est.between_chain_rhat_
    n_chains = est.samples_.shape[0]
    failure = mixing_failure(r, e, within_r, within_e, between, n_chains)
    if failure is None:
        return
    details = {
        "estimator": type(est).__name__,
        "rhat": r,
        "ess": e,
        "within_chain_rhat": within_r,
        "within_chain_ess": within_e,
        "between_chain_rhat": between,
        "n_chains": n_chains,
    }
    numbers = _numbers_line(est, details)
    if failure == "between":
        # chains weighted by stacking are the remedy this warning names: the user has chosen how to weigh
        # the modes (chain_weights_ holds the weights, between_chain_rhat_ still says the chains disagree)
        if getattr(est, "chain_weights", "equal") != "stacking":
            _warn(_multimodal_message(est, numbers), MultimodalWarning, **details)
        return
    record = getattr(est, "run_length_", None)
    length, remedies = _run_length_remedies(record) if record else ("", [])
    if not remedies:
        remedies = est.sampler_.mixing_remedies(est.rho_, failure)
        if getattr(est, "n_samples", None) != "auto":
            remedies = ['n_samples="auto" (the chains extended until these checks pass)', *remedies]
    if failure == "within" and not np.isfinite(within_r):
        head = "The chains have not mixed: no chain moves on its own."
        alone = " Alone, no chain moves: each one's values are constant at every training input."
    elif failure == "within":
        head = "The chains have not mixed: a chain has not converged on its own."
        alone = (
            f" The chains have not converged on their own: a chain alone should have a split R-hat of at most "
            f"{RHAT_WARN} and a bulk effective sample size of at least {ESS_WARN / n_chains:g} ({ESS_WARN:g} over "
            f"the {n_chains} chains)."
        )
    else:
        head = "The chains have not mixed: together they hold too few effective draws."
        alone = (
            f" Each chain passes alone, and the chains agree, but together they hold fewer than {ESS_WARN:g} "
            "effective draws."
        )
    _warn(
        f"{head}\n{numbers} Intervals, radii and criteria rest on fewer effective draws than they show.{alone}"
        f"{length} To improve: {', '.join(remedies)}.",
        **details,
    )


def _numbers_line(est, d):
    """The fit's mixing diagnostics in words, with the thresholds they are held to."""
    return (
        f"At the training inputs the {_watched(est)} have an R-hat of {d['rhat']:.3g} (at most {RHAT_WARN} "
        f"wanted) and a bulk effective sample size of {d['ess']:.3g} (at least {ESS_WARN:g}) over the "
        f"{d['n_chains']} chains; alone, the worst chain has a split R-hat of {d['within_chain_rhat']:.3g} and a "
        f"bulk effective sample size of {d['within_chain_ess']:.3g}; the chains against each other, a nested "
        f"R-hat of {d['between_chain_rhat']:.3g} (the fit's rhat_, ess_, within_chain_rhat_, within_chain_ess_ "
        "and between_chain_rhat_)."
    )


def _run_length_remedies(record):
    """``(sentence, remedies)`` of a run whose length adapted: what it did and the cap it would have needed.

    Empty remedies where the run did not stop at a cap (the sampler's own
    remedies apply).
    """
    which = record.get("stopped_by")
    if which not in ("max_grad_evals", "max_time"):
        return "", []
    checks = record["checks"]
    sentence = (
        f" The run length adapted (n_samples=\"auto\") and stopped at its cap ({which}) after "
        f"{record['n_draws']} draws a chain, {record['n_retained']} kept, {record['grads_per_draw']:.3g} gradient "
        f"evaluations a draw; by the growth of the effective sample size with the length of a run, these checks "
        f"need about {record['needed_draws']} draws a chain, {record['needed_grad_evals']} gradient evaluations."
    )
    first, last = checks[0], checks[-1]
    grew = last["within_chain_ess"] / max(first["within_chain_ess"], 1e-12)
    longer = retained(last) / retained(first)
    if longer >= 4 and grew < 0.5 * longer ** 0.5:
        sentence += (
            f" But the worst chain's effective sample size went from {first['within_chain_ess']:.3g} to "
            f"{last['within_chain_ess']:.3g} while its kept draws grew {longer:g}-fold: it does not grow with the "
            "length, so the chains barely move on this posterior and a longer run is unlikely to be enough."
        )
    elif not record.get("ess_growth_measured", True):
        sentence += (
            f" That is a first estimate, at the growth of chains that mix: a worst chain of "
            f"{last['within_chain_ess']:.3g} effective draws cannot show whether its chain moves more slowly "
            "still, and if it does, the warning of the longer run will say so."
        )
    if which == "max_time":
        seconds = record["seconds"] * record["needed_draws"] / max(record["n_draws"], 1)
        return sentence, [f"max_time={seconds:.0f} (seconds)", f"or max_grad_evals={record['needed_grad_evals']}"]
    return sentence, [f"max_grad_evals={record['needed_grad_evals']}"]


def retained(check):
    """Draws a chain a check judged: all of a first block, else the second half of the run."""
    return check["n_retained"] if "n_retained" in check else check["n_draws"]


def _multimodal_message(est, numbers):
    """The warning for chains that each converged but disagree (chains weighted equally)."""
    return (
        "The chains converged each on its own but disagree: the posterior has several modes.\n"
        f"{numbers} Every chain alone passes its split R-hat and bulk effective sample size checks while the "
        f"chains disagree, so each chain samples its own mode. The draws weight each mode "
        f"1/{est.samples_.shape[0]} (one per chain) whatever its posterior mass, so intervals and predictions "
        "mix the modes with the wrong weights. Longer or more chains of this sampler do not change this. To weigh "
        "the modes: sampler='smc' (tempered SMC, which moves between modes and weighs them by their mass) or "
        "chain_weights='stacking' (each chain weighted by how well it predicts left-out examples: predictive "
        "weights, not posterior mass; the fit then does not warn, and between_chain_rhat_ still records the "
        "disagreement)."
    )
