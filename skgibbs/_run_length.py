"""A run length that adapts: chains extended until they pass the mixing checks, or a cap.

Under ``n_samples="auto"`` a Markov chain fit does not stop after a fixed
number of draws. The chain runner (:func:`~skgibbs.samplers.run_chains`)
samples a first block of ``min_draws`` draws per chain and asks a
:class:`RunLength` what to do next; it answers with the total number of
draws per chain to reach, and the runner extends every chain from where it
stopped (nothing is re-adapted: the warm-up's step size, metric and
trajectory length stay frozen).

The rule, built against the ways stopping on a diagnostic misleads:

* **several chains**: the check is the fit's own warning's
  (:func:`skgibbs._mixing.mixing_failure`), on all chains at once:
  the chains together (R-hat at most 1.05, bulk ESS at least 100) and,
  where they fall short, each chain judged alone (split R-hat at most
  1.05, bulk ESS at least ``100 / n_chains``), so that a run extends
  exactly while its fit would end with a mixing warning that a longer run
  can clear;
* **a minimum length**: never fewer than ``min_draws`` draws per chain
  (the sampler's default count);
* **the retained half**: once a run is extended, its first half is
  discarded as further warm-up and only the second half is checked and
  kept, so a chain that drifted early is not judged by its drift;
* **a pass confirmed on a longer run**: a run stops only when two
  successive checks pass, the second on a run :data:`GROWTH` times as
  long. On Neal's funnel a single check on a short run passed by chance
  in 3 of 10 HMC runs (no chain had yet entered the neck, so every
  chain looked stationary, and the variance of the wide coordinates came
  out at half its value) where the checks need four to six times that
  length; a chance pass is rarely repeated on a longer run that has had
  time to enter the neck (``test_run_length``). The total grows by
  :data:`GROWTH` (``sqrt 2``) at each extension, so the first pass of
  a run that passes from ``N`` draws on comes before ``sqrt 2 N`` and
  its confirmation before ``2 N``: the run stops within a factor 2 of the
  length its checks need, at the price of the confirmation (a run whose
  first block passes stops at ``sqrt 2`` times the first block);
* **a cap**: gradient evaluations per chain in the sampling phase
  (``max_grad_evals``) and, optionally, seconds (``max_time``). A run that
  reaches it stops, records it, and its warning says how many draws (and
  gradients) the checks would have needed, from the growth of the ESS
  with the length of a run.

Chains that each pass alone but disagree (several modes) stop the
extension: longer chains of the same sampler do not bring them together
(the :class:`~skgibbs.MultimodalWarning` case).
"""

import math

import numpy as np

from ._mixing import (
    ESS_WARN,
    chunk_mixing,
    mixing_failure,
    worst_chain_mixing,
    worst_mixing,
)

__all__ = ["RunLength", "DEFAULT_CAP_FACTOR", "GROWTH", "retained_draws"]

#: ``max_grad_evals="auto"``: this many times the gradients of the minimal run's sampling phase (an
#: estimator class may declare its own, :attr:`~skgibbs.plan.EstimatorTraits.cap_factor`)
DEFAULT_CAP_FACTOR = 8
#: the factor by which a run grows at each extension (a failed check, or a pass to confirm)
GROWTH = math.sqrt(2.0)
#: the estimate of the draws a capped run needed is raised by this factor, so that a cap raised to it
#: is reached after the checks pass rather than just before: on AR(1) chains capped before their checks
#: pass the unraised estimate came out at 0.6 to 2.6 times the length the checks needed
#: (``test_run_length``); a cap is a limit, not a length (the run stops once its checks pass), so a
#: generous one costs nothing where the chains mix
NEEDED_MARGIN = 2.0
#: the slowest growth of the ESS with the run's length the estimate of a capped run assumes (``ESS ~ R^g``)
SLOWEST_GROWTH = 0.25
#: the worst chain's bulk ESS from which a check counts in the estimate of that growth (fewer: too noisy)
GROWTH_MIN_ESS = 10.0


def retained_draws(total, min_draws):
    """Draws per chain kept of a run of ``total``: all of a minimal run, else the second half (at least ``min_draws``).

    Examples
    --------
    >>> [retained_draws(t, 100) for t in (100, 200, 400, 800)]
    [100, 100, 200, 400]
    """
    return int(min(total, max(min_draws, total // 2)))


class RunLength:
    """When a run of chains stops (module docstring): the checks, the cap and the record.

    Parameters
    ----------
    watch : callable
        ``watch(theta)`` for draws ``theta`` of shape ``(S, Q)`` (a NumPy
        array) returns the values judged, an array of shape ``(S, m)`` or
        an iterable of such arrays (chunks of columns): the function values
        (or class probabilities) at the training inputs, the values of the
        fit's ``rhat_`` and ``ess_``.
    n_chains : int
    min_draws : int
        Draws per chain of the first block, and the fewest kept.
    max_grad_evals : int or None
        Cap on the gradient evaluations per chain of the sampling phase
        (None: ``cap_factor`` times the first block's). A draw of
        a kernel that evaluates no gradient counts as one.
    max_time : float or None
        Cap on the seconds of the sampling phase (None: none).
    cap_factor : float, default=DEFAULT_CAP_FACTOR
        The multiple of the first block's gradients that ``max_grad_evals=None``
        caps the sampling phase at.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> rule = RunLength(lambda theta: theta, n_chains=4, min_draws=100, max_grad_evals=None)
    >>> draws = rng.normal(size=(4, 142, 3))  # independent draws: they pass at once
    >>> rule.next_total(draws[:, :100], grads_per_draw=10.0, elapsed=0.1)  # a first pass, to confirm
    142
    >>> rule.next_total(draws, grads_per_draw=10.0, elapsed=0.2)  # confirmed: stop
    142
    >>> rule.record["converged"], rule.record["confirmed"], rule.record["stopped_by"]
    (True, True, 'checks')
    """

    def __init__(
        self, watch, n_chains, min_draws, max_grad_evals=None, max_time=None, cap_factor=DEFAULT_CAP_FACTOR
    ):
        self.watch = watch
        self.n_chains = int(n_chains)
        self.min_draws = int(min_draws)
        self.max_grad_evals = max_grad_evals
        self.max_time = max_time
        self.cap_factor = cap_factor
        self.record = {"converged": False, "stopped_by": None, "n_checks": 0, "checks": []}

    def retained(self, total):
        """Draws per chain kept of a run of ``total`` (:func:`retained_draws`)."""
        return retained_draws(total, self.min_draws)

    def _check(self, draws):
        """The worst mixing diagnostics of the retained draws ``(K, R, Q)`` and how they fall short."""
        K, R, Q = draws.shape
        values = self.watch(draws.reshape(K * R, Q))
        parts = [values] if isinstance(values, np.ndarray) else values
        pooled, alone = [], []
        for F in parts:
            r, e, within_r, within_e, between = chunk_mixing(np.asarray(F, dtype=np.float64).reshape(K * R, -1), K)
            pooled.append((r, e))
            alone.append((within_r, within_e, between))
        r, e = worst_mixing(*(np.concatenate(v) for v in zip(*pooled)))
        within_r, within_e, between = worst_chain_mixing(*(np.concatenate(v) for v in zip(*alone)))
        failure = mixing_failure(r, e, within_r, within_e, between, K)
        return {"rhat": r, "ess": e, "within_chain_rhat": within_r, "within_chain_ess": within_e,
                "between_chain_rhat": between, "failure": failure}

    def _cap(self, total, grads_per_draw, elapsed):
        """The most draws per chain the caps allow, and which cap binds (``"max_grad_evals"`` or ``"max_time"``)."""
        cap_grads = self.max_grad_evals
        if cap_grads is None:
            cap_grads = self.cap_factor * grads_per_draw * self.min_draws
        self.record["max_grad_evals"] = int(cap_grads)
        limits = [(int(cap_grads // max(grads_per_draw, 1e-12)), "max_grad_evals")]
        if self.max_time is not None:
            per_draw = elapsed / max(total, 1)
            limits.append((int(self.max_time // max(per_draw, 1e-12)), "max_time"))
        return min(limits)

    def next_total(self, draws, grads_per_draw, elapsed):
        """The total draws per chain to reach: ``draws.shape[1]`` to stop.

        A passing check stops the run only if the check before it passed
        too (a pass confirmed on a longer run); a first pass extends the
        run by :data:`GROWTH`, as a failed check does. Where the cap leaves
        no room for the confirmation, the run stops on the single pass and
        ``record["confirmed"]`` is False.

        Parameters
        ----------
        draws : ndarray of shape (K, T, Q)
            Every draw of the sampling phase so far.
        grads_per_draw : float
            Gradient evaluations per chain per kept draw, as measured.
        elapsed : float
            Seconds of the sampling phase so far.
        """
        total = draws.shape[1]
        check = self._check(draws[:, total - self.retained(total):])
        passed_before = bool(self.record["checks"]) and self.record["checks"][-1]["failure"] is None
        self.record["n_checks"] += 1
        self.record["checks"].append({"n_draws": int(total), "n_retained": self.retained(total), **check})
        self.record.update(n_draws=int(total), n_retained=self.retained(total),
                           grads_per_draw=float(grads_per_draw), seconds=float(elapsed))
        if check["failure"] == "between":  # modes that a longer run of the same sampler does not join
            self.record.update(converged=False, stopped_by="checks")
            return total
        # a draw of a kernel that evaluates no gradient (random-walk Metropolis) counts as one evaluation,
        # so that the cap binds for it too: with a cost of 0 a draw would be free and the run unbounded
        cost = max(float(grads_per_draw), 1.0)
        limit, which = self._cap(total, cost, elapsed)
        nxt = min(max(math.ceil(GROWTH * total), total + 1), limit)
        if check["failure"] is None:
            if passed_before or nxt <= total:  # confirmed, or no room left to confirm it
                self.record.update(converged=True, stopped_by="checks", confirmed=passed_before)
                return total
            return nxt
        if nxt <= total:
            self.record.update(stopped_by=which, **self._needed(check, total, cost))
            return total
        return nxt

    def _needed(self, check, total, grads_per_draw):
        """What the checks would have needed: draws and gradients per chain, from the ESS's growth with length.

        The bulk ESS of a chain that has converged grows in proportion to
        its length; one that still drifts, more slowly. The growth is
        measured as ``ESS ~ R^g`` over the checks (:meth:`_growth`; ``R``
        the draws a chain kept), so that a retained part of ``R`` draws
        with a within-chain ESS of ``e`` needs about ``R ((100 / K) / e)^(1/g)``
        draws, and the run twice that (its first half discarded). A chain
        whose split R-hat alone falls short is given twice its length. The
        estimate is raised by :data:`NEEDED_MARGIN`.
        """
        K, R = self.n_chains, self.retained(total)
        growth, measured = self._growth()
        factor = 1.0
        for have, want in ((check["within_chain_ess"], ESS_WARN / K), (check["ess"], ESS_WARN)):
            if np.isfinite(have) and have > 0:
                factor = max(factor, (want / have) ** (1.0 / growth))
        if factor <= 1.0 or not np.isfinite(check["within_chain_rhat"]):
            factor = max(factor, 2.0)
        needed = min(NEEDED_MARGIN * 2 * R * factor, 1e12)
        needed = max(int(np.ceil(needed)), 2 * total)
        return {"needed_draws": needed, "needed_grad_evals": int(np.ceil(needed * grads_per_draw)),
                "ess_growth": growth, "ess_growth_measured": measured}

    def _growth(self):
        """``(g, measured)``: the exponent of ``ESS ~ R^g`` from the checks whose worst chain holds :data:`GROWTH_MIN_ESS` effective draws.

        The least-squares slope of the log of the worst chain's bulk ESS on
        the log of the draws kept, over those checks, clipped to
        [:data:`SLOWEST_GROWTH`, 1]; 1 (the growth of a chain that mixes)
        while fewer than two lengths qualify, and then ``measured`` is
        False. A bulk ESS of a few draws varies too much from one check to
        the next for two such readings to say how it grows: on chains of
        known mixing (AR(1) series capped before their checks pass) the
        ratio of the last two checks made the stated length from about half
        to thousands of times the length the checks needed, where growth 1
        kept it within a small factor of it (``test_run_length``).
        """
        checks = [c for c in self.record["checks"] if c["within_chain_ess"] >= GROWTH_MIN_ESS]
        kept = np.log([c["n_retained"] for c in checks])
        if len(np.unique(kept)) < 2:
            return 1.0, False
        g = np.polyfit(kept, np.log([c["within_chain_ess"] for c in checks]), 1)[0]  # finite: two lengths, ESS >= 10
        return float(np.clip(g, SLOWEST_GROWTH, 1.0)), True
