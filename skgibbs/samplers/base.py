"""The kernel protocol: sampler objects, their registry, and what a run returns.

A *sampler* is an object that owns a kernel's settings (``HMC(target_accept=0.9)``),
its warm-up, its per-transition records and its summary, in the spirit of
NumPyro's ``MCMC(NUTS(...))`` and BlackJAX's ``SamplingAlgorithm``. The chain
runner (:func:`~skgibbs.samplers.run_chains`) knows none of them: it asks the
sampler for a *driver* per group of chains and schedules the groups, the
thinning, the threads, the progress and interruption. A sampler is a
scikit-learn estimator-like object (``get_params`` / ``set_params``), so that
``GibbsMLPRegressor(sampler=HMC())`` is cloned by :func:`sklearn.base.clone`
and ``GridSearchCV`` reaches ``sampler__target_accept``, as it reaches
``kernel__length_scale`` of a Gaussian process.

Two layers (NumPyro's ``MCMC(kernel)`` asks about six members of a kernel):

- :class:`Sampler`: what every sampler has -- its settings and class flags,
  :meth:`Sampler.check`, one entry point :meth:`Sampler.sample` (a
  :class:`ChainResult`), and the hooks the estimators ask (schedule,
  starts, prior, pre-training, loss statistics, diagnosis). Tempered SMC
  and mean-field VI are plain samplers: they draw without chains.
- :class:`~skgibbs.samplers.runner.ChainSampler`: a Markov kernel that runs
  as chains under :func:`~skgibbs.samplers.run_chains`, which asks it for a
  *driver* per group of chains (:mod:`skgibbs.samplers.runner` says what a
  driver has) and pools, shares and merges what the groups learn.

Kernels whose potential reads Bernoulli batches add :class:`BatchSurrogate`
(the per-example terms of their surrogate and the noise two batches put in
a Metropolis-Hastings ratio).

A new kernel in the package is a folder (its kernel module of pure ``init`` /
``step`` functions, and its sampler module with the driver and the sampler
class, which may import this module and the runner as the kernel module may
not) and one registration (:func:`register`); :doc:`/developers` has the recipe.
"""

from typing import NamedTuple

import numpy as np
import torch
from sklearn.base import BaseEstimator, clone

from .._compat import validate_parameter_constraints
from ..priors import HierarchicalPrior, MixingPrior

__all__ = [
    "Sampler",
    "BatchSurrogate",
    "bernoulli_noise",
    "RunSettings",
    "ChainResult",
    "register",
    "get_sampler",
    "choose_sampler",
    "available_samplers",
    "sampler_table",
    "low_acceptance",
    "raise_target_accept",
    "Unhonoured",
    "unhonoured_message",
]

_REGISTRY = {}


class RunSettings(NamedTuple):
    """The budget of a run, the same for every kernel.

    Attributes
    ----------
    n_samples : int
        Draws kept per chain.
    burn_in : int
        Transitions discarded (and used for adaptation) first.
    thin : int
        Keep every ``thin``-th state.
    rho : float
        Bernoulli batch probability of the kernels that read batches.
    verbose : int
        Progress bars on stderr.
    """

    n_samples: int = 100
    burn_in: int = 1000
    thin: int = 1
    rho: float = 1.0
    verbose: int = 0


class Unhonoured(NamedTuple):
    """An estimator setting a sampler cannot honour (:meth:`Sampler.ignored_settings`).

    Attributes
    ----------
    instead : str
        What the sampler does instead, a clause that follows the sampler's
        name ("has no burn-in: ...").
    fix : str
        How to get a fit: the setting to leave alone, or the sampler that
        honours it.
    accepts : tuple
        Values of the setting that ask for what the sampler does anyway
        (``rho=1`` of a sampler on the full data, ``burn_in=0`` of one
        without burn-in): accepted like the estimator's default.
    warn : bool
        A ``UserWarning`` instead of a ``ValueError``, for a setting that
        only says how to spend resources (``n_jobs``), as scikit-learn's
        ``LogisticRegression`` warns of an ``n_jobs`` its solver does not use.
    """

    instead: str
    fix: str
    accepts: tuple = ()
    warn: bool = False


def unhonoured_message(sampler, name, value, entry, chosen=None):
    """The message of ``name=value``, which ``sampler`` does not honour (``entry``, an :class:`Unhonoured`).

    ``chosen`` says why ``sampler="auto"`` picked the sampler, if it did.

    Examples
    --------
    >>> from skgibbs.samplers import HMC
    >>> print(unhonoured_message(HMC(), "rho", 0.5, HMC().ignored_settings()["rho"]))
    ... # doctest: +NORMALIZE_WHITESPACE
    rho=0.5 is not honoured by sampler='hmc', which reads the full data at every step (rho=1). Leave
    rho='auto' (or 1), or choose a sampler that reads Bernoulli(rho) batches: sampler='csmala', 'sgld' or
    'smala'.
    """
    who = f"sampler={sampler.name!r}" + (f" (chosen by sampler='auto': {chosen})" if chosen else "")
    return f"{name}={value!r} is not honoured by {who}, which {entry.instead}. {entry.fix}."


class ChainResult(NamedTuple):
    """What a run returns: the draws, the statistics every kernel has, and the kernel's own.

    Attributes
    ----------
    samples : ndarray of shape (K, n_kept, Q)
    acceptance_rate : ndarray of shape (K,) or None
        Fraction of accepted proposals after burn-in; None for a kernel
        without a Metropolis-Hastings step (SGLD, VI).
    n_grad : ndarray of shape (K,)
        Gradient evaluations per chain, burn-in included.
    draw_stats : dict of ndarray of shape (K, n_kept)
        Per-draw records over the ``thin`` transitions before each draw
        (``acceptance_rate``, and the kernel's own, e.g. HMC's
        ``diverging``, ``n_steps``, ``energy_error``).
    interrupted : bool
        Sampling stopped by ``KeyboardInterrupt`` (the draws so far kept).
    info : dict
        The kernel's own summary (its drivers' ``summary()``), e.g. step sizes,
        HMC's ``n_divergent`` and ``trajectory_length``, csMALA's
        ``correction``. Its entries are also read as attributes
        (``result.n_divergent``).
    """

    samples: np.ndarray
    acceptance_rate: object
    n_grad: np.ndarray
    draw_stats: dict
    interrupted: bool
    info: dict

    def __getattr__(self, name):
        info = self[5]
        if name in info:
            return info[name]
        raise AttributeError(f"{type(self).__name__} of this kernel has no {name!r} (its info has {sorted(info)}).")


def register(cls):
    """Class decorator: make ``cls`` reachable by its ``name`` (``sampler="name"``)."""
    if not cls.name or cls.name in _REGISTRY:
        raise ValueError(f"a sampler needs a new, non-empty name; got {cls.name!r}.")
    _REGISTRY[cls.name] = cls
    return cls


def available_samplers(kind=None):
    """Names of the registered samplers, optionally those for one kind of prior (``"dense"``, ``"sparse"``).

    A sampler serves the kinds of its ``prior_kinds`` (``(prior_kind,)``
    when it does not set them): tempered SMC serves both.
    """
    return sorted(name for name, cls in _REGISTRY.items() if kind is None or kind in _kinds(cls))


def _kinds(cls):
    """The kinds of prior a sampler class serves."""
    return cls.prior_kinds or (cls.prior_kind,)


_KIND_NAMES = {"dense": "Gaussian", "sparse": "mixing (sparse)"}


def sampler_table(kind=None):
    """A reStructuredText table of the registered samplers (of one ``kind``), read from their classes.

    The documentation includes it wherever the samplers are listed, so that
    no page lists them by hand: a new registration appears in every list.

    Examples
    --------
    >>> print(sampler_table("sparse").splitlines()[0])
    .. list-table::
    """
    rows = [("name", "class", "prior", "draws", "Bernoulli batches", "hierarchical prior", "learns the noise",
             "burn_in=\"auto\"", "n_samples=\"auto\"", "settings it does not honour")]
    for name in available_samplers(kind):
        cls = _REGISTRY[name]
        ignored = cls().ignored_settings()
        rows.append((
            f"``\"{name}\"``",
            f":class:`~skgibbs.samplers.{cls.__name__}`",
            " or ".join(_KIND_NAMES[k] for k in _kinds(cls)),
            "Markov chains" if callable(getattr(cls, "chains", None)) else "independent",
            "yes" if cls.uses_batches else "no",
            "yes" if cls.hierarchical else "no",
            "yes" if cls.learns_noise else "no",
            "by the data's size" if cls.default_schedule is not Sampler.default_schedule else str(cls.default_burn_in),
            "its particles" if "n_samples" in ignored else str(cls.default_n_samples),
            _ignored_cell(ignored),
        ))
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in rows:
        lines.append(f"   * - {row[0]}")
        lines.extend(f"     - {cell}" for cell in row[1:])
    return "\n".join(lines) + "\n"


def _ignored_cell(ignored):
    """The table's cell of the estimator settings a sampler refuses (its :meth:`Sampler.ignored_settings`)."""
    cells = [f"``{name}``" + (" (a warning)" if entry.warn else "") for name, entry in ignored.items()]
    return ", ".join(cells) if cells else "none: every setting applies"


#: ``sampler="auto"`` samples on the full data while rows times parameters stay at most this
#: (on a CPU), where a default full-batch fit takes minutes on one core (the ``large_n``
#: benchmark's page has the times); beyond it, minibatch VI.
FULL_BATCH_WORK = 50_000_000
#: on a GPU a full-data gradient is this many times cheaper relative to its batch overhead
GPU_WORK_FACTOR = 20


def choose_sampler(rho=1.0, n_rows=None, n_params=None, device="cpu", learned_noise=False, hierarchical=False,
                   full_batch="hmc"):
    """The sampler ``"auto"`` stands for, and why: ``(name, reason)``.

    A deterministic rule on the problem's size, the same on every machine:

    - ``rho < 1`` (batches asked for): csMALA, exact on its surrogate;
    - otherwise full-batch HMC, exact for ``pi_lambda``, while
      ``n_rows * n_params <= FULL_BATCH_WORK`` (``GPU_WORK_FACTOR`` times
      more on a CUDA device): the cost of a default HMC fit grows with
      that product;
    - beyond it, :class:`~skgibbs.samplers.MeanFieldVI` on minibatches,
      whose cost does not grow with ``n_rows``. On the ``large_n`` and
      ``tabular`` benchmarks it matched or beat minibatch
      :class:`~skgibbs.samplers.SGHMC` in less time (their pages have the
      numbers), so SGHMC is there to be chosen, not the default.

    Without sizes (a bare :func:`~skgibbs.samplers.run_chains` call) it is
    HMC. A hierarchical prior or a learned noise asked for
    (``hierarchical=True``: the regressor's defaults ``prior="auto"``,
    ``temperature="auto"``, or ``prior="layer"``/``"ard"``) runs
    :class:`~skgibbs.samplers.MCLMC` on the non-centred target
    (:mod:`~skgibbs.samplers.noncentered`) where full-batch sampling is
    affordable: on the ``uq`` benchmark its chains converged on their own in
    more fits than HMC within Gibbs at a similar test log-likelihood. A learned noise variance that the settings require
    (``learned_noise=True``, the regressor's ``temperature="learn"``) is
    sampled on the full data whatever the size, by the same kernel.
    ``full_batch`` names the full-batch kernel of an estimator that declares
    another one (the classifier's ``"mclmc"``: its chains converged where
    HMC's did not, on the ``classification`` benchmark).

    Examples
    --------
    >>> from skgibbs.samplers.base import choose_sampler
    >>> choose_sampler(1.0, n_rows=442, n_params=11_301)[0]
    'hmc'
    >>> choose_sampler(1.0, n_rows=100_000, n_params=12_301)[0]
    'vi'
    >>> choose_sampler(1.0, n_rows=442, n_params=11_301, hierarchical=True)[0]
    'mclmc'
    >>> choose_sampler(1.0, n_rows=426, n_params=785, full_batch="mclmc")[0]
    'mclmc'
    """
    if rho < 1.0:
        return "csmala", f"rho={rho:.3g} < 1 asks for Bernoulli batches: csMALA"
    hier = ("mclmc", "MCLMC on the non-centred hierarchical target") if hierarchical or learned_noise else None
    if learned_noise:
        return hier[0], f"temperature='learn' samples the noise on the full data: {hier[1]}"
    full = hier or (full_batch, full_batch.upper())
    if n_rows is None or n_params is None:
        return full[0], f"full-batch {full[1]} (sizes not given)"
    work = int(n_rows) * int(n_params)
    limit = FULL_BATCH_WORK * (GPU_WORK_FACTOR if torch.device(device).type == "cuda" else 1)
    if work <= limit:
        return full[0], (f"rows x parameters = {n_rows:,} x {n_params:,} = {work:.3g} <= {limit:.3g}: "
                         f"full-batch {full[1]}")
    return "vi", f"rows x parameters = {n_rows:,} x {n_params:,} = {work:.3g} > {limit:.3g}: minibatch VI"


def get_sampler(sampler, rho=1.0, *, n_rows=None, n_params=None, device="cpu", learned_noise=False,
                hierarchical=False, full_batch="hmc"):
    """A new sampler object for a name, an object, or ``"auto"``.

    ``"auto"`` is :func:`choose_sampler`'s choice for the problem's size:
    :class:`~skgibbs.samplers.HMC` on the full data while it is affordable,
    :class:`~skgibbs.samplers.MeanFieldVI` beyond, and
    :class:`~skgibbs.samplers.CSMALA` on Bernoulli batches (``rho < 1``).
    An object is cloned, so the caller's is never changed.

    Examples
    --------
    >>> from skgibbs.samplers import get_sampler
    >>> get_sampler("auto", rho=0.5)
    CSMALA()
    >>> get_sampler("hmc").target_accept
    0.8
    """
    if isinstance(sampler, Sampler):
        return clone(sampler)
    if sampler == "auto":
        return _REGISTRY[choose_sampler(rho, n_rows, n_params, device, learned_noise, hierarchical, full_batch)[0]]()
    if sampler not in _REGISTRY:
        raise ValueError(f"sampler must be 'auto', one of {available_samplers()} or a Sampler object, got {sampler!r}.")
    return _REGISTRY[sampler]()


class Sampler(BaseEstimator):
    """Base class of the sampler objects (see the module docstring).

    Class attributes say what the estimators need to know: ``name`` (the
    registry key), ``prior_kind`` (``"dense"``: a
    :class:`~skgibbs.priors.Prior`, ``"sparse"``: a
    :class:`~skgibbs.priors.MixingPrior`) and ``prior_kinds`` (every kind
    it serves, a tuple, when more than ``prior_kind``: the estimator of
    each kind then offers it), ``uses_batches`` (reads a
    Bernoulli(``rho``) batch per step), ``default_burn_in``,
    ``default_thin`` and ``default_n_samples`` (what ``burn_in="auto"``,
    ``thin="auto"`` and ``n_samples="auto"`` mean),
    ``hierarchical`` (samples a
    :class:`~skgibbs.priors.HierarchicalPrior`: ``prior="auto"`` is then
    ``"ard"``), ``learns_noise`` (samples its noise precision too: the
    regressor's ``temperature="auto"`` then learns the noise) and
    ``mixing_diagnostics`` (the draws form Markov chains that R-hat and
    ESS can judge).

    ``_parameter_constraints`` declares what each constructor parameter may
    be, with scikit-learn's constraints (``Interval``, ``StrOptions``,
    ``None``, ``"boolean"``, ...) as on the estimators; :meth:`check`
    validates the settings against it with scikit-learn's
    ``validate_parameter_constraints``, so that a bad value is an
    ``InvalidParameterError`` (a ``ValueError``) naming the parameter, the
    sampler and what the value must be.
    """

    #: parameter name -> list of scikit-learn constraints (a parameter not named is not validated)
    _parameter_constraints: dict = {}

    name = None
    prior_kind = "dense"
    prior_kinds = None
    uses_batches = False
    default_burn_in = 1000
    default_thin = 10
    #: draws kept per chain (or group of independent draws) under ``n_samples="auto"``
    default_n_samples = 175
    mixing_diagnostics = True
    hierarchical = False
    learns_noise = False

    # -- the run ------------------------------------------------------------------
    def check(self, prior, rho):
        """Raise a ``ValueError`` for settings the kernel cannot run under ``prior``; the ``rho`` it uses.

        The settings are first validated against ``_parameter_constraints``
        (an ``InvalidParameterError``, a ``ValueError``, naming the parameter
        and what it must be); then ``prior`` and ``rho`` are checked. A
        subclass adds the rules that depend on ``prior`` or ``rho`` and calls
        this method.

        Examples
        --------
        >>> from skgibbs.priors import Prior
        >>> from skgibbs.samplers import HMC
        >>> HMC().check(Prior(std=1.0), 1.0)
        1.0
        >>> try:
        ...     HMC(target_accept="x").check(Prior(std=1.0), 1.0)
        ... except ValueError as error:
        ...     print(error)
        The 'target_accept' parameter of HMC must be a float in the range (0.0, 1.0). Got 'x' instead.
        """
        validate_parameter_constraints(
            self._parameter_constraints, self.get_params(deep=False), caller_name=type(self).__name__
        )
        if "sparse" not in _kinds(type(self)) and isinstance(prior, MixingPrior):
            raise ValueError(
                f"sampler={self.name!r} samples a dense network and takes a Prior; the MixingPrior of "
                f"sparse networks needs sampler={_or_list(available_samplers('sparse'))}."
            )
        if isinstance(prior, HierarchicalPrior) and not self.hierarchical:
            supported = sorted(name for name, cls in _REGISTRY.items() if cls.hierarchical)
            raise ValueError(
                f"sampler={self.name!r} cannot sample a hierarchical prior (prior='layer' or 'ard', or "
                f"temperature='learn'), whose precisions are drawn by Gibbs steps between transitions: use "
                f"sampler={' or '.join(map(repr, supported))}, or prior='fixed' with a fixed temperature."
            )
        if isinstance(prior, HierarchicalPrior) and prior.learns_noise and not self.learns_noise:
            supported = sorted(name for name, cls in _REGISTRY.items() if cls.learns_noise)
            raise ValueError(
                f"sampler={self.name!r} keeps the temperature fixed and cannot learn the noise "
                f"(temperature='learn'): use sampler={' or '.join(map(repr, supported))}, or give a temperature "
                "or 'auto' (which learns the noise where the sampler can, else plugs it in)."
            )
        if not self.uses_batches and float(rho) < 1.0:
            raise ValueError(unhonoured_message(self, "rho", rho, self.ignored_settings()["rho"]))
        return float(rho) if self.uses_batches else 1.0

    def ignored_settings(self):
        """The estimator settings this sampler cannot honour: a dict of name to :class:`Unhonoured`.

        The estimators refuse, before any work, a value of one of these
        settings that differs from the estimator's default (and from the
        entry's ``accepts``): a ``ValueError`` naming the setting, what the
        sampler does instead and the fix (a ``UserWarning`` for an entry
        with ``warn``). A sampler on the full data does not honour ``rho``
        (it reads every row at every step); the samplers without chains
        (SMC, VI) add the settings of a chain's budget.
        """
        if self.uses_batches:
            return {}
        batches = sorted(name for name, cls in _REGISTRY.items() if cls.uses_batches)
        return {"rho": Unhonoured(
            self._full_data_reads,
            "Leave rho='auto' (or 1), or choose a sampler that reads Bernoulli(rho) batches: sampler="
            + _or_list(batches),
            accepts=(1, 1.0),
        )}

    #: what a sampler without Bernoulli batches reads instead (:meth:`ignored_settings`' ``rho``)
    _full_data_reads = "reads the full data at every step (rho=1)"

    def sample(self, target, theta0, seeds, run, *, vectorize=True, n_jobs=None):  # pragma: no cover
        """Run the sampler from ``theta0`` ``(K, Q)`` under ``run`` (a :class:`RunSettings`); a :class:`ChainResult`.

        ``seeds`` holds one seed per chain (or per group of draws);
        ``vectorize`` and ``n_jobs`` say how the work may be batched and
        split. :class:`~skgibbs.samplers.runner.ChainSampler` implements it
        with :func:`~skgibbs.samplers.run_chains`.
        """
        raise NotImplementedError

    # -- what the estimators ask ----------------------------------------------------
    def default_schedule(self, n):
        """``(burn_in, thin)`` that ``"auto"`` means on ``n`` rows (default: the class attributes)."""
        return self.default_burn_in, self.default_thin

    def rows_per_step(self, n, rho):
        """Rows one gradient reads on average (``n rho``; the full data without batches)."""
        return n * (rho if self.uses_batches else 1.0)

    def n_starts(self, n_chains):
        """How many pre-trained starting points the kernel needs."""
        return n_chains

    def adjust_prior(self, prior, spec, prior_std, device):
        """The prior the kernel samples under, from the estimator's (default: as is)."""
        return prior

    def pretrain_scale(self, spec):
        """``theta = scale * w`` for the pre-training's Adam, or None (``w = theta``)."""
        return None

    def loss_statistics(self, loss_sum, loss_square_sum, n, lam, rho, info):
        """Statistics of the per-example losses of the draws that the kernel reports.

        The losses enter through their sums over the ``n`` examples, per
        draw, so that the estimators can accumulate them over chunks of rows.

        Parameters
        ----------
        loss_sum : ndarray of shape (S,)
            ``sum_i l_i(theta_k)`` of every draw.
        loss_square_sum : ndarray of shape (S,)
            ``sum_i l_i(theta_k)^2`` of every draw.
        n : int
            The number of examples summed over.
        lam : float
        rho : float
        info : dict
            The fitted attributes so far, without their trailing underscore.

        Returns
        -------
        dict
            ``surrogate_scale``: the mean per-example term ``c l_i`` of the
            kernel's potential (``c = lambda / n`` on the full data);
            ``batch_noise``: the mean over the draws of the standard
            deviation of a log Metropolis-Hastings ratio that two
            Bernoulli(``rho``) batches of those terms would cause
            (:func:`bernoulli_noise`; zero at ``rho = 1``).
        """
        return _loss_statistics(loss_sum, loss_square_sum, n, rho, (lam / n, 0.0), bernoulli_noise)

    def diagnose(self, fit):
        """Messages for what falls short in a fit, from its fitted attributes ``fit`` (a dict).

        The messages say what to change; the estimator raises each as a
        :class:`~skgibbs.SamplerWarning`.
        """
        return []

    def mixing_remedies(self, rho, failure="within"):
        """What to change when the chains have not mixed.

        ``failure`` is ``"within"`` (a chain has not converged on its own:
        a longer run helps, more chains do not) or ``"draws"`` (the chains
        agree but hold too few effective draws together: more draws or more
        chains help); see :func:`skgibbs._mixing.mixing_failure`.
        """
        if failure == "draws":
            return ["raise n_samples", "run more chains (n_chains)"]
        return ["raise burn_in and n_samples"]




def _or_list(names):
    """``'a', 'b' or 'c'`` of ``names``."""
    quoted = [repr(name) for name in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def bernoulli_noise(term_squares, rho):
    """Standard deviation of the log MH ratio caused by two independent batches, per draw.

    ``term_squares`` ``(S,)`` holds ``sum_i t_i^2`` of every draw, with
    ``t_i = c l_i + d`` the per-example terms: for ``Z_i ~ Ber(rho)``,
    ``Var(sum_i Z_i t_i) = rho (1 - rho) sum_i t_i^2`` and the ratio
    holds the difference of two batches. Zero on the full data.
    """
    return np.sqrt(2 * rho * (1 - rho) * np.asarray(term_squares, dtype=np.float64))


def _loss_statistics(loss_sum, loss_square_sum, n, rho, terms, noise_of, rows=None):
    """``surrogate_scale`` and ``batch_noise`` from the per-draw loss sums and the terms ``(c, d)``.

    With example weights ``w_i`` the sums are ``sum_i w_i l_i`` and ``sum_i
    (w_i l_i)^2``, ``n`` is ``sum_i w_i`` and ``rows`` the number of rows
    (each row is one Bernoulli term ``c w_i l_i + d``); ``rows`` is ``n``
    when None.
    """
    loss_sum = np.asarray(loss_sum, dtype=np.float64)
    loss_square_sum = np.asarray(loss_square_sum, dtype=np.float64)
    c, d = terms
    # sum_i (c w_i l_i + d)^2, expanded
    term_squares = c * c * loss_square_sum + 2.0 * c * d * loss_sum + (n if rows is None else rows) * d * d
    noise = noise_of(term_squares, rho)
    mean_loss = loss_sum.sum() / (loss_sum.size * n)
    return {"surrogate_scale": float(c * mean_loss), "batch_noise": float(noise.mean())}


class BatchSurrogate:
    """Mixin of the samplers whose potential is a surrogate on Bernoulli batches (MALA's family, SGLD).

    Their per-example term is ``c l_i + d`` (:meth:`batch_terms`), and
    their :meth:`loss_statistics` reports it with the noise it puts in a
    Metropolis-Hastings ratio (:meth:`batch_noise`).
    """

    def batch_terms(self, lam, n, rho, info):
        """``(c, d)`` of the per-example term ``c l_i + d`` the kernel's potential uses."""
        return lam / n, 0.0

    def batch_noise(self, term_squares, rho):
        """Standard deviation of the log MH ratio caused by two independent batches (:func:`bernoulli_noise`)."""
        return bernoulli_noise(term_squares, rho)

    def loss_statistics(self, loss_sum, loss_square_sum, n, lam, rho, info):
        """:meth:`Sampler.loss_statistics` with this kernel's batch terms and noise."""
        return _loss_statistics(
            loss_sum, loss_square_sum, n, rho, self.batch_terms(lam, n, rho, info), self.batch_noise,
            rows=info.get("n_train"),
        )


def raise_target_accept(current):
    """The remedy of a step size too large for parts of the posterior: a ``target_accept`` above ``current``.

    At least 0.95 (Stan's advice for divergences is to raise ``adapt_delta``
    toward 0.95 to 0.99), and half-way from ``current`` to 1 above that, so
    that the value named is a raise whatever the kernel ran with.

    Examples
    --------
    >>> raise_target_accept(0.8)
    'raise target_accept (e.g. 0.95) or burn_in'
    >>> raise_target_accept(0.98)
    'raise target_accept (e.g. 0.99) or burn_in'
    """
    value = max(0.95, 1.0 - (1.0 - float(current)) / 2.0)
    return f"raise target_accept (e.g. {value:.3g}) or burn_in"


def low_acceptance(fit, remedy="raise burn_in (the step size adapts during it) or target_accept"):
    """The message for chains that accepted almost nothing after burn-in (a list of 0 or 1).

    ``remedy`` is what clears it for the kernel that asks: the step sizes of
    the kernels here adapt during burn-in toward ``target_accept``, so
    ``step_size`` (only a starting value) is no remedy.

    Examples
    --------
    >>> low_acceptance({"acceptance_rate_": np.array([0.004, 0.6]), "rho_": 1.0}, "raise target_accept")
    ['A chain accepted only 0.4% of its proposals after burn-in, so its draws barely move. Raise target_accept.']
    """
    rate = fit["acceptance_rate_"]
    if rate is not None and np.any(rate < 0.01):
        return [
            f"A chain accepted only {float(rate.min()):.1%} of its proposals after burn-in, so its draws "
            f"barely move. {remedy[0].upper() + remedy[1:]}."
        ]
    return []
