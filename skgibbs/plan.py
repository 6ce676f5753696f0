"""What a fit will do, decided once: every ``"auto"`` setting resolved, with the reason for each choice.

An estimator's settings leave several choices to the data: the network's
widths (``hidden_layer_sizes="auto"``), the sampler (``sampler="auto"``),
the prior (``prior="auto"``: ARD where the sampler samples hierarchical
priors), where the temperature comes from (``temperature="auto"``: the
noise learned where the sampler can, else twice the pre-training's
held-out loss) and how long the chains run. :func:`plan_fit` makes these
choices from the settings and the data's shape alone, without touching
the data or the estimator, and returns a :class:`FitPlan`;
:func:`~skgibbs.problem.build_problem` builds it once and everything it
builds reads it. The estimator classes declare only what differs between
them, in :class:`EstimatorTraits` (the samplers they run, whether they have
a noise model, the prior they always sample, their response, the defaults
of the settings a sampler may not honour): data, not methods.

The noise model of the regressor (``noise="auto"``) is the one choice
made from the data themselves (held-out fits of each candidate,
:attr:`~skgibbs.GibbsMLPRegressor.noise_selection_`): it is made first
and given to :func:`plan_fit` as ``noise``.
"""

import warnings
from dataclasses import dataclass, field
from numbers import Integral, Real
from types import MappingProxyType

import numpy as np
import torch

from ._compat import validate_parameter_constraints
from ._run_length import DEFAULT_CAP_FACTOR
from .model import NOISE_LOSSES, SCALE_LOSSES
from .samplers import choose_sampler, get_sampler, unhonoured_message

__all__ = [
    "EstimatorTraits",
    "FitPlan",
    "plan_fit",
    "hidden_layers",
    "torch_device",
    "model_choices",
    "check_honoured",
    "check_settings",
    "SAMPLER_SETTING_DEFAULTS",
    "SMALL_DATA_ROWS",
    "SMALL_DATA_LAYERS",
    "MEDIUM_DATA_LAYERS",
    "REGRESSOR_MEDIUM_DATA_ROWS",
    "LARGE_DATA_LAYERS",
    "REGRESSOR_CAP_FACTOR",
    "CLASSIFIER_SMALL_DATA_ROWS",
    "AUTO_TEMPERATURES",
]

#: ``hidden_layer_sizes="auto"``: at most this many training rows is small data
SMALL_DATA_ROWS = 1000
#: ``hidden_layer_sizes="auto"`` on small data
SMALL_DATA_LAYERS = (16, 16)
#: ``hidden_layer_sizes="auto"`` from :data:`SMALL_DATA_ROWS` rows up to an estimator's medium band
#: (:attr:`EstimatorTraits.medium_data_rows`; the dense regressor's :data:`REGRESSOR_MEDIUM_DATA_ROWS`)
MEDIUM_DATA_LAYERS = (50, 50)
#: the dense regressor's medium band ends here: measured on the ``uq`` benchmark's airfoil table (1,352
#: training rows) only; beyond, the 100-100 network the ``large_n`` and ``tabular`` benchmarks measured
REGRESSOR_MEDIUM_DATA_ROWS = 5000
#: ``hidden_layer_sizes="auto"`` beyond the small data (and the medium band, where an estimator has one)
LARGE_DATA_LAYERS = (100, 100)
#: the temperatures the classifier's ``temperature="auto"`` fits, the Bayesian posterior first
AUTO_TEMPERATURES = (1.0, 0.5)
#: the classifier's small data: 16-16 did at least as well as 100-100 on every set of the ``classification``
#: benchmark, the largest of which (HMDA) has 1,785 training rows
CLASSIFIER_SMALL_DATA_ROWS = 2000
#: the dense regressor's cap of an adaptive run, in multiples of its first block's gradients: where its
#: chains reach the cap, the sampling past this multiple bought little test log-likelihood for the CPU
#: it cost (the ``run_length_cap`` benchmark, and the diagnostics guide)
REGRESSOR_CAP_FACTOR = 2


@dataclass(frozen=True)
class EstimatorTraits:
    """What an estimator class declares for its plan; everything else is read from its settings.

    Attributes
    ----------
    prior_kind : {"dense", "sparse"}
        The samplers it runs (:func:`~skgibbs.samplers.available_samplers`).
    hierarchical_sampler : bool
        Whether ``sampler="auto"`` picks a kernel for hierarchical priors
        (MCLMC on their non-centred target) when the settings ask for a
        hierarchical prior or a learned noise.
    noise_model : bool
        Whether it has a noise model whose variance a sampler may learn
        (the dense regressor).
    prior : str or None
        The one prior it samples whatever the settings (the sparse
        regressor's ``"mixing"``); None: ``prior``, ``"auto"`` resolved.
    prior_gain : float
        ``prior_std="auto"`` is this factor times ``1 / sqrt(fan_in)`` of
        each parameter's layer (the classifier's 2).
    response : {"continuous", "classes"}
        Its response ``y`` (scikit-learn's "targets"; not the
        :class:`~skgibbs.samplers.Target` density a kernel samples):
        numbers (standardized; the noise model's loss and outputs) or
        labels (encoded; the cross-entropy, one output per class beyond
        two), as :mod:`skgibbs._response` treats them.
    full_batch_sampler : str
        The kernel ``sampler="auto"`` runs on the full data where that is
        affordable and no hierarchical prior or learned noise asks for
        MCLMC (:func:`~skgibbs.samplers.choose_sampler`): ``"hmc"``, the
        classifier's ``"mclmc"``.
    auto_prior : {"ard", "fixed"}
        What ``prior="auto"`` gives where the sampler can sample a
        hierarchical prior: ARD (the regressor), or the fixed prior (the
        classifier, whose ARD chains did not converge on the
        ``classification`` benchmark).
    small_data_rows : int
        ``hidden_layer_sizes="auto"`` is :data:`SMALL_DATA_LAYERS` up to
        this many training rows (:func:`hidden_layers`).
    medium_data_rows : int
        ``hidden_layer_sizes="auto"`` is :data:`MEDIUM_DATA_LAYERS` beyond
        ``small_data_rows`` up to this many training rows (0, the default:
        no medium band; the dense regressor's
        :data:`REGRESSOR_MEDIUM_DATA_ROWS`).
    selects_temperature : bool
        Whether ``temperature="auto"`` fits :data:`AUTO_TEMPERATURES` in
        turn and keeps one (the classifier), rather
        than plugging in or learning a noise variance.
    cap_factor : float
        ``max_grad_evals="auto"`` caps an adaptive run's sampling phase at
        this multiple of its first block's gradients
        (:data:`~skgibbs._run_length.DEFAULT_CAP_FACTOR`, 8; the dense
        regressor's :data:`REGRESSOR_CAP_FACTOR`, 2).
    sampler_setting_defaults : mapping of str to object
        The default of each setting a sampler may not honour (the names of
        :meth:`~skgibbs.samplers.Sampler.ignored_settings`): the value that
        leaves the setting to the sampler, read by :func:`check_honoured`
        and when a setting the sampler refuses is reset
        (:func:`~skgibbs.model_selection.compare_temperatures`). Read-only.
    """

    prior_kind: str = "dense"
    hierarchical_sampler: bool = False
    noise_model: bool = False
    prior: str = None
    prior_gain: float = 1.0
    response: str = "continuous"
    full_batch_sampler: str = "hmc"
    auto_prior: str = "ard"
    small_data_rows: int = SMALL_DATA_ROWS
    medium_data_rows: int = 0
    selects_temperature: bool = False
    cap_factor: float = DEFAULT_CAP_FACTOR
    sampler_setting_defaults: MappingProxyType = field(
        default_factory=lambda: MappingProxyType(dict(SAMPLER_SETTING_DEFAULTS))
    )

    def layers(self, setting, n_rows):
        """The widths of ``hidden_layer_sizes=setting`` on ``n_rows`` rows under this class's bands
        (:func:`hidden_layers` with :attr:`small_data_rows` and :attr:`medium_data_rows`)."""
        return hidden_layers(setting, n_rows, self.small_data_rows, self.medium_data_rows)


#: the estimators' defaults of the settings a sampler may not honour (:attr:`EstimatorTraits.sampler_setting_defaults`)
SAMPLER_SETTING_DEFAULTS = MappingProxyType({
    "rho": "auto",
    "n_samples": "auto",
    "burn_in": "auto",
    "thin": "auto",
    "n_chains": 4,
    "chain_weights": "equal",
    "n_jobs": None,
})


def check_settings(cls, params):
    """Refuse settings ``params`` of an estimator of class ``cls`` before any work, naming the fix.

    scikit-learn's validation of each setting against the class's
    ``_parameter_constraints`` first, then the rules that join two
    settings, which the class's :class:`EstimatorTraits` say apply: a
    plug-in temperature has one noise variance to plug in, and a mixing
    prior needs a proper density on the active weights.

    Examples
    --------
    >>> from skgibbs import GibbsMLPRegressor
    >>> check_settings(GibbsMLPRegressor, GibbsMLPRegressor(noise="student", temperature="plug-in").get_params())
    Traceback (most recent call last):
    ...
    ValueError: temperature='plug-in' sets one noise variance from the pre-training, ...
    """
    validate_parameter_constraints(cls._parameter_constraints, params, caller_name=cls.__name__)
    traits = cls._traits
    if traits.noise_model and params["noise"] in ("heteroscedastic", "student") and params["temperature"] == "plug-in":
        raise ValueError(
            "temperature='plug-in' sets one noise variance from the pre-training, while "
            f"noise={params['noise']!r} samples a noise scale for every input with the network. Use "
            "temperature='auto' (the Bayesian posterior of that likelihood) or a float, or "
            "noise='homoscedastic'."
        )
    if traits.prior == "mixing" and params["prior_std"] is None and params["weight_bound"] is None:
        raise ValueError(
            "The mixing prior needs a proper density on the active parameters: set prior_std "
            "(Gaussian, e.g. 'auto') or weight_bound (uniform on [-B, B])."
        )


@dataclass(frozen=True)
class FitPlan:
    """The choices of one fit, made before any work (:func:`plan_fit`).

    Attributes
    ----------
    layers : tuple of int
        The hidden widths.
    device : torch.device
    noise : str or None
        The regressor's noise model (None for the other estimators).
    sampler : Sampler
        The sampler object (a name or ``"auto"`` resolved).
    rho : float
        The fraction of the data a step reads, as asked (1 without batches);
        the sampler may still refuse it.
    prior : str
        The prior sampled: ``"fixed"``, ``"layer"``, ``"ard"`` or ``"mixing"``.
    learns_noise : bool
        Whether the sampler draws the noise precision with the weights.
    temperature_source : {"learned", "plug-in", "given", "selected"}
        Where the temperature comes from: the likelihood with its noise
        learned, twice the pre-training's held-out loss, the setting, or
        (the classifier's ``temperature="auto"``) the best of
        :data:`AUTO_TEMPERATURES` by leave-one-out, a colder one fitted
        while the last fit's leave-one-out predictions are underconfident.
    n_samples, burn_in, thin : int
        The run's draws per chain (the first block under
        ``n_samples="auto"``), warm-up and thinning.
    adaptive : bool
        Whether the run length adapts (``n_samples="auto"``; the chains are
        extended until they pass the mixing checks, or the cap).
    max_grad_evals : int or None
        The adaptive run's cap in gradient evaluations per chain (None:
        ``cap_factor`` times the first block's).
    max_time : float or None
        The adaptive run's cap in seconds.
    temperature_setting : float or str
        ``temperature`` as set, read by :meth:`temperature`.
    reasons : mapping of str to str
        Why each choice was made, by the name of the choice (``"layers"``,
        ``"sampler"``, ``"prior"``, ``"temperature"``, ``"run"``; and
        ``"sampler_auto"``, :func:`~skgibbs.samplers.choose_sampler`'s
        reason, where ``sampler="auto"`` chose). Read-only.
    """

    layers: tuple
    device: torch.device
    noise: str
    sampler: object
    rho: float
    prior: str
    learns_noise: bool
    temperature_source: str
    n_samples: int
    burn_in: int
    thin: int
    adaptive: bool
    max_grad_evals: int = None
    max_time: float = None
    cap_factor: float = DEFAULT_CAP_FACTOR
    temperature_setting: object = "auto"
    reasons: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))

    @property
    def sampler_chosen(self):
        """Why ``sampler="auto"`` chose the sampler, or None where the settings named it."""
        return self.reasons.get("sampler_auto")

    def temperature(self, heldout_loss):
        """The temperature the fit starts from: the given one, else from the held-out loss or the likelihood.

        Twice the pre-training's held-out mean loss (the plug-in, also the
        start of a learned noise variance), or 2 where the noise is in the
        network (the Bayesian temperature of its likelihood), or the given
        float; for a temperature the fit selects, the first candidate's.
        """
        setting = self.temperature_setting
        if not isinstance(setting, str):
            return float(setting)
        if self.temperature_source == "selected":
            return AUTO_TEMPERATURES[0]
        return 2.0 if _in_network(self.noise) else 2.0 * heldout_loss


def hidden_layers(setting, n_rows=None, small_rows=SMALL_DATA_ROWS, medium_rows=0):
    """The hidden widths of ``hidden_layer_sizes=setting`` as a tuple, ``"auto"`` resolved for ``n_rows`` rows.

    ``setting`` is as the estimators' constraints accept it (a positive int,
    a sequence of positive ints, or ``"auto"``).

    ``"auto"`` gives two hidden layers of 16 up to ``small_rows`` rows
    (:data:`SMALL_DATA_ROWS`; the classifier's
    :data:`CLASSIFIER_SMALL_DATA_ROWS`), of 50 beyond up to ``medium_rows``
    rows where an estimator has that band (the dense regressor's
    :data:`REGRESSOR_MEDIUM_DATA_ROWS`; 0: none), and of 100 beyond (and
    without a row count). The 16-16 network of the Microcanonical Langevin
    Ensembles (Sommer et al., ICLR 2025) did at least as well as 100-100 on
    the small tables of the ``uq`` benchmark at a fraction of the cost; on
    its airfoil table (1,352 training rows) 50-50 came within a few hundredths
    of a nat of 100-100's test log-likelihood at a fraction of its time,
    where 16-16 gave up three tenths; 100-100 on larger data, where the
    ``large_n`` and ``tabular`` benchmarks measured it (:ref:`defaults-measured`).

    Examples
    --------
    >>> hidden_layers("auto", 442), hidden_layers("auto", 50_000), hidden_layers(8), hidden_layers([4, 4])
    ((16, 16), (100, 100), (8,), (4, 4))
    >>> hidden_layers("auto", 1352), hidden_layers("auto", 1352, medium_rows=REGRESSOR_MEDIUM_DATA_ROWS)
    ((100, 100), (50, 50))
    """
    if isinstance(setting, str) and setting == "auto":
        if n_rows is not None and int(n_rows) <= small_rows:
            return SMALL_DATA_LAYERS
        if n_rows is not None and int(n_rows) <= medium_rows:
            return MEDIUM_DATA_LAYERS
        return LARGE_DATA_LAYERS
    layers = (setting,) if isinstance(setting, Integral) else tuple(setting)
    return tuple(int(w) for w in layers)


def torch_device(setting):
    """The torch device of ``device=setting``; a ``ValueError`` naming the fix where torch has none such.

    Examples
    --------
    >>> torch_device("cpu")
    device(type='cpu')
    """
    try:
        device = torch.device(setting)
    except RuntimeError as exc:
        raise ValueError(f"device={setting!r} is not a torch device; use 'cpu' or 'cuda'.") from exc
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device='cuda' was requested but torch sees no GPU; use device='cpu'.")
    return device


def _in_network(noise):
    """Whether the noise model ``noise`` has its scale as the network's output, sampled with the weights."""
    return NOISE_LOSSES.get(noise) in SCALE_LOSSES


def _requested_rho(params):
    rho = params.get("rho", "auto")
    return 1.0 if isinstance(rho, str) else float(rho)


def _can_learn(params, supported):
    """Whether an ``"auto"`` setting may learn a scale: the sampler can, and no box or flat prior forbids it."""
    return bool(supported) and params.get("weight_bound") is None and params.get("prior_std") is not None


def _learns_noise(params, traits, noise, sampler):
    """Whether the noise precision is sampled under ``sampler`` (None: whether the settings alone ask for it)."""
    temperature = params.get("temperature")
    if not traits.noise_model or not isinstance(temperature, str) or _in_network(noise):
        return False
    if temperature != "auto":
        return temperature == "learn"
    return _can_learn(params, True if sampler is None else sampler.learns_noise)


def _sampler_asks(params, traits, noise):
    """What the settings ask of ``sampler="auto"`` (keywords of :func:`~skgibbs.samplers.choose_sampler`)."""
    # temperature="learn" asks for the noise learned whatever the sampler
    learn = params.get("temperature") == "learn" and _learns_noise(params, traits, noise, None)
    prior = params.get("prior", "fixed")
    wants_prior = traits.prior is None and (
        prior in ("layer", "ard") or (prior == "auto" and traits.auto_prior != "fixed" and _can_learn(params, True))
    )
    asks_hierarchical = wants_prior or _learns_noise(params, traits, noise, None)
    return {
        "learned_noise": bool(learn),
        "hierarchical": bool(traits.hierarchical_sampler and asks_hierarchical),
        "full_batch": traits.full_batch_sampler,
    }


def model_choices(params, traits, sampler, noise=None):
    """``(prior, learns_noise, temperature_source)`` of settings ``params`` under ``sampler``, with the reasons.

    The part of :func:`plan_fit` that depends on the sampler: a fitted
    estimator's prior is rebuilt from it, and a comparison of two samplers
    (``sampler="auto"`` at two values of ``rho``) asks it of each.

    Returns
    -------
    prior : str
    learns_noise : bool
    temperature_source : {"learned", "plug-in", "given", "selected"}
    reasons : dict
        ``"prior"`` and ``"temperature"``.
    """
    setting = params.get("prior", "fixed")
    if traits.prior is not None:
        prior, prior_why = traits.prior, f"the estimator samples the {traits.prior} prior"
    elif setting != "auto":
        prior, prior_why = setting, f"prior={setting!r}"
    elif traits.auto_prior == "fixed":
        prior, prior_why = "fixed", "prior='auto': the fixed prior, whose chains converge where ARD's did not"
    elif _can_learn(params, sampler.hierarchical):
        prior, prior_why = "ard", f"prior='auto': {sampler.name} samples hierarchical priors"
    else:
        prior = "fixed"
        prior_why = "prior='auto': " + (
            f"{sampler.name} samples no hierarchical prior" if not sampler.hierarchical
            else "weight_bound or prior_std=None asks for a fixed prior"
        )
    learns = _learns_noise(params, traits, noise, sampler)
    temperature = params.get("temperature")
    if traits.noise_model and _in_network(noise):
        source = "learned" if isinstance(temperature, str) else "given"
        why = f"noise={noise!r}: the network outputs the noise scale, sampled with it"
    elif learns:
        source, why = "learned", f"temperature={temperature!r}: {sampler.name} samples the noise variance"
    elif isinstance(temperature, str) and traits.selects_temperature:
        source = "selected"
        why = (
            f"temperature={temperature!r}: {AUTO_TEMPERATURES} fitted in turn while the last fit's leave-one-out "
            "predictions are underconfident, the best by leave-one-out kept"
        )
    elif isinstance(temperature, str):
        source, why = "plug-in", f"temperature={temperature!r}: twice the pre-training's held-out loss"
    else:
        source, why = "given", f"temperature={temperature!r}"
    return prior, learns, source, {"prior": prior_why, "temperature": why}


def plan_fit(params, traits, *, n_rows, n_params, noise=None, device=None):
    """The plan of a fit of settings ``params`` on ``n_rows`` rows of a network of ``n_params`` parameters.

    Pure: it reads the settings (``estimator.get_params(deep=False)``, as
    validated by the estimator), the class's :class:`EstimatorTraits` and
    the data's shape, and touches neither data nor estimator.

    Parameters
    ----------
    params : dict
        The estimator's settings.
    traits : EstimatorTraits
    n_rows : int
        Training rows.
    n_params : int
        Parameters of the network (:attr:`~skgibbs.model.MLPSpec.n_params`),
        whose widths are :func:`hidden_layers` of the settings.
    noise : str, optional
        The regressor's noise model, ``"auto"`` already resolved.
    device : torch.device, optional
        The device, if already resolved (:func:`torch_device` of the setting).

    Returns
    -------
    FitPlan

    Examples
    --------
    >>> from skgibbs import GibbsMLPRegressor
    >>> from skgibbs.plan import plan_fit
    >>> est = GibbsMLPRegressor()
    >>> plan = plan_fit(est.get_params(), est._traits, n_rows=442, n_params=465, noise="homoscedastic")
    >>> plan.sampler, plan.prior, plan.temperature_source, plan.layers, plan.adaptive
    (MCLMC(), 'ard', 'learned', (16, 16), True)
    >>> print(plan.reasons["prior"])
    prior='auto': mclmc samples hierarchical priors
    """
    device = torch_device(params.get("device", "cpu")) if device is None else device
    setting = params.get("hidden_layer_sizes")
    layers = traits.layers(setting, n_rows)
    reasons = {
        "layers": (
            f"hidden_layer_sizes='auto': {layers} for {n_rows:,} rows"
            if isinstance(setting, str) else f"hidden_layer_sizes={setting!r}"
        )
    }
    rho = _requested_rho(params)
    asks = _sampler_asks(params, traits, noise)
    given = params.get("sampler", "auto")
    sampler = get_sampler(given, rho, n_rows=n_rows, n_params=n_params, device=device, **asks)
    if isinstance(given, str) and given == "auto":
        reasons["sampler"] = reasons["sampler_auto"] = choose_sampler(rho, n_rows, n_params, device, **asks)[1]
    else:
        reasons["sampler"] = f"sampler={given!r}"
    prior, learns, source, why = model_choices(params, traits, sampler, noise)
    reasons.update(why)
    n_samples_setting, burn_in, thin = (params.get(k, "auto") for k in ("n_samples", "burn_in", "thin"))
    schedule = sampler.default_schedule(n_rows)
    cap = params.get("max_grad_evals", "auto")
    adaptive = isinstance(n_samples_setting, str)
    reasons["run"] = (
        "n_samples='auto': extended until the mixing checks pass, or the cap" if adaptive
        else f"n_samples={n_samples_setting!r}"
    )
    return FitPlan(
        layers=layers,
        device=device,
        noise=noise,
        sampler=sampler,
        rho=rho,
        prior=prior,
        learns_noise=learns,
        temperature_source=source,
        n_samples=sampler.default_n_samples if adaptive else int(n_samples_setting),
        burn_in=schedule[0] if isinstance(burn_in, str) else int(burn_in),
        thin=schedule[1] if isinstance(thin, str) else int(thin),
        adaptive=adaptive,
        max_grad_evals=None if isinstance(cap, str) else int(cap),
        max_time=params.get("max_time"),
        cap_factor=traits.cap_factor,
        temperature_setting=params.get("temperature", "auto"),
        reasons=MappingProxyType(reasons),
    )


def _same(value, other):
    """Whether a setting's ``value`` is ``other``: equal numbers (``1 == 1.0``), equal strings, or both None."""
    if value is None or other is None:
        return value is other
    if isinstance(value, str) or isinstance(other, str):
        return isinstance(value, str) and isinstance(other, str) and value == other
    if isinstance(value, (bool, np.bool_)) or isinstance(other, (bool, np.bool_)):
        return False
    if isinstance(value, Real) and isinstance(other, Real):
        return float(value) == float(other)
    return False


def check_honoured(params, defaults, sampler, chosen=None):
    """Refuse a setting ``sampler`` cannot honour (:meth:`~skgibbs.samplers.Sampler.ignored_settings`).

    A setting of ``params`` is refused when its value differs from the
    estimator's default (``defaults``, the class's declared
    :attr:`EstimatorTraits.sampler_setting_defaults`) and from the values the sampler accepts:
    a ``ValueError`` naming it, what the sampler does instead and the fix (a
    ``UserWarning`` for a resource hint such as ``n_jobs``). ``chosen`` is
    why ``sampler="auto"`` chose ``sampler``, if it did
    (:attr:`FitPlan.sampler_chosen`): the user did not pick that sampler
    (``"auto"`` turns to VI on large data, where a chain's ``burn_in``
    means nothing), so the setting is then ignored with a ``UserWarning``
    that says why, and the fit goes on.

    Examples
    --------
    >>> from skgibbs.samplers import HMC
    >>> check_honoured({"rho": 0.5}, {"rho": "auto"}, HMC())
    Traceback (most recent call last):
    ...
    ValueError: rho=0.5 is not honoured by sampler='hmc', which reads the full data at every step (rho=1). ...
    """
    for name, entry in sampler.ignored_settings().items():
        if name not in params:
            continue
        value = params[name]
        if any(_same(value, allowed) for allowed in (defaults.get(name), *entry.accepts)):
            continue
        message = unhonoured_message(sampler, name, value, entry, chosen)
        if entry.warn or chosen is not None:
            warnings.warn(message, UserWarning, stacklevel=4)
        else:
            raise ValueError(message)
