"""The posterior problem a fit samples, built once and shared by the estimators, benchmarks and users.

:func:`build_problem` does what ``fit`` does before it samples: it validates
and standardizes the data, encodes the response, pre-trains the starting
points, resolves ``temperature``, ``sampler`` and ``rho``, and builds the
prior and the :class:`~skgibbs.samplers.Target`. It reads the estimator and
returns a :class:`PosteriorProblem`; it sets nothing on the estimator, whose
``fit`` then samples the problem and stores the fitted state in one place.
Running another sampler on the same problem (a benchmark comparing kernels
from the same starting points) needs no private method::

    problem = build_problem(GibbsMLPRegressor(random_state=0), X, y)
    result = run_chains(problem.target, problem.theta0, problem.seeds, MALA(),
                        n_samples=200, burn_in=500)
"""

import sys
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
import torch
from sklearn.utils import check_random_state

from . import _chunks
from ._data import check_numeric, column_moments, fit_weights, standardize
from ._noise_choice import resolve_noise
from ._pretrain import PATIENCE, TOLERANCE, PretrainInfo, glorot_draws, pretrain
from ._run_length import RunLength
from ._response import encode_response, n_outputs, response_loss, validate_response, watched_values
from ._threads import gradient_work, torch_threads
from .embeddings import resolve_embedding
from .model import MLPSpec
from .plan import check_honoured, check_settings, model_choices, plan_fit, torch_device
from .potential import MLPPotential
from .priors import HierarchicalPrior, MixingPrior, Prior
from .samplers import ChainSampler, RunSettings, Target

__all__ = [
    "PosteriorProblem",
    "FitData",
    "build_problem",
    "prepare_data",
    "initial_points",
    "build_prior",
    "fitted_prior",
    "vectorize_chains",
    "VECTORIZE_WORK",
]

#: Chains are advanced together in one process while a step is this cheap
#: (examples in the batch times parameters); measured by the ``speed`` benchmark.
VECTORIZE_WORK = 5_000_000


class PosteriorProblem(NamedTuple):
    """Everything a fit samples from, on the standardized scale.

    Attributes
    ----------
    spec : MLPSpec
        The network (flat parameters in scikit-learn's order).
    X, y : torch.Tensor
        Standardized inputs ``(n, d)`` and the encoded response. For ``X`` a
        NumPy memmap or a dask array, ``X`` here is a
        :class:`~skgibbs._out_of_core.ScaledRows`, which indexes like the tensor
        but reads only the rows asked for.
    potential : MLPPotential
        Per-example losses of the network on ``(X, y)``.
    prior : Prior or MixingPrior
    target : Target
        ``pi_lambda ∝ exp(-lambda R_n) Pi``, what every kernel samples.
    temperature : float
        Resolved ``temperature`` (``n / lambda``).
    heldout_loss : float
        The pre-training's held-out mean loss (1 without pre-training):
        ``temperature="auto"`` is twice it for the regressors.
    sampler : Sampler
        The resolved sampler object (``"auto"`` and names turned into objects).
    theta0 : torch.Tensor of shape (n_starts, Q)
        Pre-trained starting points.
    seeds : list of int
        One seed per chain.
    run : RunSettings
        Draws, warm-up (``"auto"`` resolved by the sampler), thinning, ``rho``, verbosity.
    vectorize : bool
        Whether the chains of a group are advanced in one batch.
    n_jobs : int or None
        joblib jobs over groups of chains.
    arrays : tuple of ndarray
        The validated ``(X, y)`` as given (NumPy, unscaled): what the
        estimator summarises the draws on. A memmap or dask ``X`` is a
        :class:`~skgibbs._out_of_core.RowSource` here (``X[a:b]`` gives NumPy rows).
    lambda_ : float
        ``lambda = n / temperature``, the scale of the target's risk.
    prior_kind : str
        The prior sampled, ``prior`` with ``"auto"`` resolved (``"fixed"``,
        ``"layer"``, ``"ard"``; ``"mixing"`` for the sparse estimator).
    temperature_source : {"learned", "plug-in", "given"}
        Where ``temperature`` came from; ``"learned"``: the sampler draws
        the noise, and ``temperature`` is the plug-in it starts from.
    pretraining : PretrainInfo
        The pre-training's steps, whether it converged and its last fall of
        the held-out loss.
    x_mean, x_scale : ndarray of shape (n_features,)
        The standardization of ``X``.
    inputs : dict
        What scikit-learn's validation of ``X`` records: ``n_features_in_``,
        and ``feature_names_in_`` for ``X`` with string column names.
    encoding : dict
        The estimator's encoding of the response by attribute name (the regressors'
        ``y_mean_`` and ``y_scale_``, the classifier's ``classes_``).
    embedding_bins : list of ndarray or None
        The piecewise-linear embedding's bin edges of every input, on the
        scale of ``X`` (None without that embedding).
    run_length : RunLength or None
        The stopping rule of ``n_samples="auto"`` (None for a fixed run).
    sample_weight : ndarray of shape (n_samples,) or None
        The examples' weights as the fit uses them; None without weights or
        with weights all 1.
    plan : FitPlan
        Every ``"auto"`` setting resolved, with the reason for each choice
        (:func:`~skgibbs.plan.plan_fit`): what the rest of the problem was
        built from.
    noise_selection : dict or None
        The regressor's evidence for its noise model under ``noise="auto"``
        (its ``noise_selection_``); None where the noise was given, and for
        the other estimators.
    """

    spec: MLPSpec
    X: torch.Tensor
    y: torch.Tensor
    potential: MLPPotential
    prior: object
    target: Target
    temperature: float
    heldout_loss: float
    sampler: object
    theta0: torch.Tensor
    seeds: list
    run: RunSettings
    vectorize: bool
    n_jobs: object
    arrays: tuple
    lambda_: float
    prior_kind: str
    temperature_source: str
    pretraining: object
    x_mean: np.ndarray
    x_scale: np.ndarray
    inputs: dict
    encoding: dict
    embedding_bins: list = None
    run_length: RunLength = None
    sample_weight: np.ndarray = None
    plan: object = None
    noise_selection: dict = None

    def sample(self):
        """Run the problem's sampler; a :class:`~skgibbs.samplers.ChainResult`.

        A chain sampler keeps the thread budget when its largest gradient
        (the expected batch x weights x chains batched) reaches
        ``skgibbs._threads.THREAD_WORK``, and the runner shares it out among
        its jobs; otherwise, and for samplers without chains, one thread.
        """
        batched = len(self.seeds) if self.vectorize else 1
        rows = self.sampler.rows_per_step(self.potential.n_data, self.run.rho)
        work = gradient_work(rows, self.spec.n_params, batched)
        chains = isinstance(self.sampler, ChainSampler)
        extra = {"stop": self.run_length} if chains and self.run_length is not None else {}
        with torch_threads(self.X.device, work=work if chains else None):
            return self.sampler.sample(
                self.target, self.theta0, self.seeds, self.run, vectorize=self.vectorize, n_jobs=self.n_jobs,
                **extra,
            )


def build_problem(estimator, X, y, sample_weight=None):
    """The posterior problem ``estimator.fit(X, y)`` samples, without sampling it.

    Validates the parameters and the data, standardizes them, encodes the
    response (:func:`prepare_data`), chooses the regressor's noise model
    (``noise="auto"``), resolves ``sampler``, ``rho``, ``prior`` and
    ``temperature`` (:func:`~skgibbs.plan.plan_fit`) and pre-trains the
    starting points, as ``fit`` does before it samples. The estimator is
    only read (its settings and its class's declared
    :class:`~skgibbs.plan.EstimatorTraits`; none of its methods):
    everything resolved is in the returned problem (``fit`` stores it as
    ``temperature_``, ``lambda_``, ``sampler_``, ``sampler_name_``,
    ``rho_``, ``prior_``, ... once the draws exist). With the noise learned, ``temperature`` and ``lambda_`` are
    the plug-in's here, the values the sampler starts from; ``fit``
    replaces them by the posterior mean of the sampled noise.

    Parameters
    ----------
    estimator : GibbsMLPRegressor, SparseGibbsMLPRegressor or GibbsMLPClassifier
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    sample_weight : array-like of shape (n_samples,), default=None
        The examples' weights (see the estimators' ``fit``).

    Returns
    -------
    PosteriorProblem

    Examples
    --------
    >>> import numpy as np
    >>> from skgibbs import GibbsMLPRegressor
    >>> from skgibbs.problem import build_problem
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(50, 2)), rng.normal(size=50)
    >>> est = GibbsMLPRegressor(hidden_layer_sizes=(4,), pretrain_iter=10, random_state=0)
    >>> problem = build_problem(est, X, y)
    >>> problem.theta0.shape, problem.sampler, problem.run.burn_in
    (torch.Size([4, 17]), MCLMC(), 200)
    >>> problem.prior_kind, problem.temperature_source
    ('ard', 'learned')
    >>> hasattr(est, "temperature_")  # the estimator is not fitted by building its problem
    False
    """
    est = estimator
    params = est.get_params(deep=False)
    traits = type(est)._traits
    data = prepare_data(est, X, y, sample_weight)
    n, weights, Xt, yt, seeds = data.X.shape[0], data.sample_weight, data.Xt, data.yt, data.seeds
    layers = traits.layers(params["hidden_layer_sizes"], n)
    # the noise model is chosen on networks of the fit's own widths
    noise, noise_selection = (
        resolve_noise({**params, "hidden_layer_sizes": layers}, data) if traits.noise_model else (None, None)
    )
    width = n_outputs(traits.response, data.encoding, noise)
    spec = MLPSpec(data.X.shape[1], layers, params["activation"], width, data.embedding)
    # every "auto" resolved once, from the settings and the data's shape; what follows reads the plan
    plan = plan_fit(params, traits, n_rows=n, n_params=spec.n_params, noise=noise, device=data.device)
    sampler = plan.sampler
    if plan.sampler_chosen is not None and params["verbose"]:
        print(f"[skgibbs] sampler='auto': {plan.sampler_chosen}.", file=sys.stderr)
    if plan.sampler_chosen is not None and plan.rho < 1.0:
        _warn_if_rho_changes_the_model(params, traits, plan, n, spec.n_params)
    names = data.inputs.get("feature_names_in_")
    # the prior is known before any work, built once: a kernel that cannot run under it fails now
    prior = build_prior(params, traits, spec, sampler, plan.prior, plan.learns_noise, data.device, names)
    rho = sampler.check(prior, plan.rho)
    # a setting the sampler would ignore (SMC's burn_in, HMC's rho) fails now too, before any work
    check_honoured(params, traits.sampler_setting_defaults, sampler, chosen=plan.sampler_chosen)
    loss = response_loss(traits.response, noise)
    with torch_threads(data.device):
        wt = None if weights is None else torch.as_tensor(weights, dtype=torch.float32, device=data.device)
        theta0, heldout_loss, pretrained = initial_points(params, plan, spec, Xt, yt, seeds, loss, wt, owner=est)
    source = plan.temperature_source
    temperature = plan.temperature(heldout_loss)
    _warn_unconverged_pretraining(params["pretrain_iter"], pretrained, temperature, source)
    # lambda = n_w / temperature: a weight counts its example that many times
    lam = (n if weights is None else float(weights.sum())) / temperature
    potential = MLPPotential(spec, Xt, yt, loss=loss, sample_weight=weights)
    run = RunSettings(n_samples=plan.n_samples, burn_in=plan.burn_in, thin=plan.thin, rho=rho,
                      verbose=params["verbose"])  # fmt: skip
    n_chains = params["n_chains"]
    return PosteriorProblem(
        spec=spec,
        X=Xt,
        y=yt,
        potential=potential,
        prior=prior,
        target=Target(potential, prior, lam),
        temperature=temperature,
        heldout_loss=float(heldout_loss),
        sampler=sampler,
        theta0=theta0,
        seeds=[int(s) for s in seeds[1:]],
        run=run,
        vectorize=vectorize_chains(n_chains, sampler.rows_per_step(n, rho), spec.n_params, data.device),
        # one GPU batches all chains; worker processes would each need a device of their own
        n_jobs=None if data.device.type == "cuda" else params["n_jobs"],
        arrays=(data.X, data.y),
        lambda_=lam,
        prior_kind=plan.prior,
        temperature_source=source,
        pretraining=pretrained,
        x_mean=data.x_mean,
        x_scale=data.x_scale,
        inputs=data.inputs,
        encoding=data.encoding,
        embedding_bins=data.embedding_bins,
        run_length=_run_length(plan, spec, Xt, watched_values(traits.response), n_chains),
        sample_weight=weights,
        plan=plan,
        noise_selection=noise_selection,
    )


class FitData(NamedTuple):
    """The data of a fit, validated, standardized and encoded (:func:`prepare_data`).

    Attributes
    ----------
    X, y : ndarray
        The validated data, unscaled (a memmap or dask ``X`` as a
        :class:`~skgibbs._out_of_core.RowSource`).
    inputs : dict
        ``n_features_in_`` and, for ``X`` with string column names, ``feature_names_in_``.
    sample_weight : ndarray of shape (n_samples,) or None
    x_mean, x_scale : ndarray of shape (n_features,)
    encoding : dict
        The response encoding's fitted attributes (``y_mean_`` and ``y_scale_``, or ``classes_``).
    embedding : InputEmbedding or None
    embedding_bins : list of ndarray or None
    Xt, yt : torch.Tensor
        The standardized inputs and the encoded response, on ``device``.
    device : torch.device
    seeds : ndarray of shape (n_chains + 1,)
        The pre-training's seed, then one per chain, drawn once from ``random_state``.
    """

    X: object
    y: np.ndarray
    inputs: dict
    sample_weight: np.ndarray
    x_mean: np.ndarray
    x_scale: np.ndarray
    encoding: dict
    embedding: object
    embedding_bins: list
    Xt: torch.Tensor
    yt: torch.Tensor
    device: torch.device
    seeds: np.ndarray


def prepare_data(estimator, X, y, sample_weight=None):
    """The settings checked and ``(X, y)`` validated, standardized and encoded, as ``estimator.fit`` uses them.

    The first part of :func:`build_problem`, which the regressor's noise
    choice shares: the settings are refused where they break the class's
    constraints (:func:`~skgibbs.plan.check_settings`), then the data are
    validated and standardized and the response encoded as the class's
    :attr:`~skgibbs.plan.EstimatorTraits.response` says, and the fit's
    seeds drawn from ``random_state``.

    Parameters
    ----------
    estimator : GibbsMLPRegressor, SparseGibbsMLPRegressor or GibbsMLPClassifier
        Only read: its settings and its class's declarations.
    X : array-like, NumPy memmap or dask array of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    sample_weight : array-like of shape (n_samples,), default=None

    Returns
    -------
    FitData

    Examples
    --------
    >>> import numpy as np
    >>> from skgibbs import GibbsMLPClassifier
    >>> from skgibbs.problem import prepare_data
    >>> X = np.arange(12.0).reshape(6, 2)
    >>> data = prepare_data(GibbsMLPClassifier(random_state=0), X, ["a", "b", "a", "b", "b", "a"])
    >>> data.Xt.shape, data.yt.tolist(), data.encoding["classes_"].tolist(), len(data.seeds)
    (torch.Size([6, 2]), [0.0, 1.0, 0.0, 1.0, 1.0, 0.0], ['a', 'b'], 5)
    >>> prepare_data(GibbsMLPClassifier(n_chains=0), X, [0, 1] * 3)
    Traceback (most recent call last):
    ...
    sklearn.utils._param_validation.InvalidParameterError: The 'n_chains' parameter of GibbsMLPClassifier must be ...
    """
    est = estimator
    cls, params = type(est), est.get_params(deep=False)
    check_settings(cls, params)
    response = cls._traits.response
    device = torch_device(params["device"])
    check_numeric(X, "X")
    X, y, inputs = validate_response(est, X, y, response)
    n = X.shape[0]
    if n < 2:
        raise ValueError(f"{cls.__name__} needs at least 2 samples to fit, got n_samples={n}.")
    weights = estimator_weights(est, sample_weight, n)
    x_mean, x_scale = column_moments(X, weights)
    y_encoded, encoding = encode_response(response, y, weights, owner=cls.__name__)
    # an embedding's bins are quantiles of the training inputs, fixed before any fitting
    setting = resolve_embedding(params.get("embedding"))
    embedding, bins = (None, None) if setting is None else setting.build(X, x_mean, x_scale)
    # a memmap or dask X stays where it is: Xt then reads its rows when a batch needs them
    Xt = standardize(X, x_mean, x_scale, device)
    yt = torch.as_tensor(y_encoded, dtype=torch.float32, device=device)
    seeds = np.random.SeedSequence(check_random_state(params["random_state"]).randint(2**31)).generate_state(
        params["n_chains"] + 1
    )
    return FitData(X, y, inputs, weights, x_mean, x_scale, encoding, embedding, bins, Xt, yt, device, seeds)


def start_masks(seeds, n_starts, n_params, density, device="cpu", dtype=torch.float32):
    """0/1 masks ``(n_starts, n_params)`` of the sparse fit's starting active sets: ``density`` of each (at least one).

    Start ``k`` draws its mask from a generator seeded ``[seeds[k + 1], 1]``.
    """
    masks = []
    for s in seeds[1 : n_starts + 1]:
        rng = np.random.default_rng([int(s), 1])
        m = rng.random(n_params) < density
        if not m.any():
            m[rng.integers(n_params)] = True
        masks.append(m)
    return torch.as_tensor(np.array(masks), dtype=dtype, device=device)


def initial_points(params, plan, spec, Xt, yt, seeds, loss, weight=None, owner=None):
    """``(theta0, held-out loss, PretrainInfo)``: Glorot starts, then Adam with early stopping (paper 000 §5).

    Under the mixing prior each start keeps ``init_density`` of its
    weights (:func:`start_masks`). A sampler that samples in scaled
    coordinates (:meth:`~skgibbs.samplers.Sampler.pretrain_scale`) gets
    starts of the prior's order in them. ``pretrain_iter=0``: the Glorot
    starts, and a held-out loss of 1.

    Parameters
    ----------
    params : dict
        The estimator's settings (``n_chains``, ``pretrain_iter``, and
        ``init_density`` under the mixing prior).
    plan : FitPlan
        The fit's plan: its sampler and prior.
    spec : MLPSpec
    Xt, yt : torch.Tensor
        The standardized inputs and the encoded response (:class:`FitData`).
    seeds : ndarray
        The fit's seeds: the pre-training's, then one per chain.
    loss : str
        The per-example loss (:func:`~skgibbs._response.response_loss`).
    weight : torch.Tensor of shape (n_samples,), optional
        The examples' weights.
    owner : object, optional
        What the progress bars are keyed by and whose ``verbose`` they read
        (the estimator).
    """
    sampler = plan.sampler
    theta = glorot_draws(spec, seeds, Xt.device)[: sampler.n_starts(params["n_chains"])]
    mask = None
    if plan.prior == "mixing":
        mask = start_masks(seeds, theta.shape[0], theta.shape[1], params["init_density"], theta.device, theta.dtype)
        theta = theta * mask
    scale = sampler.pretrain_scale(spec)
    if scale is not None:
        # Glorot draws of the coordinates w = theta / scale have the size of Glorot's theta
        # times 1 / sqrt(scale): shrink theta by sqrt(scale) to keep w of the prior's order
        scale = scale.to(theta.device, theta.dtype)
        theta = theta * scale.sqrt()
    if params["pretrain_iter"] == 0:
        return theta, 1.0, PretrainInfo(0, False, float("nan"))
    return pretrain(
        spec, theta, Xt, yt, params["pretrain_iter"], int(seeds[0]), mask=mask, loss=loss, scale=scale,
        owner=owner, weight=weight,
    )


def _warn_unconverged_pretraining(pretrain_iter, info, temperature, source):
    """A plug-in temperature from a pre-training stopped at its cap: a ``ConvergenceWarning`` and its remedy.

    ``info`` is the pre-training's :class:`~skgibbs._pretrain.PretrainInfo`; ``temperature`` and ``source``
    are the fit's ``temperature_`` and ``temperature_source_``.
    """
    from sklearn.exceptions import ConvergenceWarning

    from ._mixing import _warn

    # "still falling" only where it is: a cap reached after the chosen iterates levelled off is no harm
    if pretrain_iter == 0 or info.converged or info.recent_fall < TOLERANCE or source != "plug-in":
        return
    _warn(
        f"Pre-training stopped at pretrain_iter={pretrain_iter} while its held-out loss was still "
        f"falling ({100 * info.recent_fall:.1f}% over the last {min(PATIENCE, info.n_iter)} steps), so the "
        f"plug-in temperature (twice that loss, temperature_ = {temperature:.4g}) is too hot and the "
        "posterior too wide. To improve: raise pretrain_iter (it stops by itself once the held-out loss "
        "levels off), or sample the noise variance with a sampler that can (sampler='mclmc' or 'hmc', "
        "under which temperature='auto' learns it).",
        ConvergenceWarning,
    )


def estimator_weights(est, sample_weight, n_samples):
    """The weights ``est.fit`` uses (:func:`~skgibbs._data.fit_weights`), refused with fewer than 2 non-zero."""
    weights = fit_weights(sample_weight, n_samples)
    if weights is not None and np.count_nonzero(weights) < 2:
        raise ValueError(
            f"{type(est).__name__} needs at least 2 samples of non-zero sample_weight to fit, got "
            f"{np.count_nonzero(weights)}."
        )
    return weights


def _run_length(plan, spec, Xt, watched, n_chains):
    """The :class:`~skgibbs._run_length.RunLength` of ``n_samples="auto"`` for chains that R-hat can judge, else None.

    ``watched`` maps the network's outputs to what the checks judge
    (:func:`~skgibbs._response.watched_values`). Samplers whose draws are
    independent (VI's, SMC's particles) keep their own stopping rules.
    """
    sampler = plan.sampler
    if not plan.adaptive or not (isinstance(sampler, ChainSampler) and sampler.mixing_diagnostics):
        return None
    return RunLength(
        WatchedValues(spec, Xt, watched),
        n_chains,
        plan.n_samples,
        max_grad_evals=plan.max_grad_evals,
        max_time=plan.max_time,
        cap_factor=plan.cap_factor,
    )


def build_prior(params, traits, spec, sampler, kind, learns_noise, device="cpu", feature_names=None):
    """The prior of kind ``kind`` an estimator of settings ``params`` samples under ``sampler``.

    :func:`build_problem` builds it once, from the plan (``kind`` and
    ``learns_noise`` are :attr:`~skgibbs.plan.FitPlan.prior` and
    :attr:`~skgibbs.plan.FitPlan.learns_noise`); :func:`fitted_prior`
    builds it again from a fitted estimator. The sampler may change its
    coordinates (:meth:`~skgibbs.samplers.Sampler.adjust_prior`).

    Parameters
    ----------
    params : dict
        The estimator's settings (``prior_std``, ``weight_bound``,
        ``prior_shape``; the sparse regressor's ``sparsity`` and
        ``init_density``; ``temperature`` for the messages).
    traits : EstimatorTraits
    spec : MLPSpec
    sampler : Sampler
    kind : {"fixed", "layer", "ard", "mixing"}
    learns_noise : bool
    device : str or torch.device, default="cpu"
    feature_names : array-like of str, optional
        Names of the inputs of a hierarchical prior's groups (None:
        ``"input <i>"``).

    Returns
    -------
    Prior, HierarchicalPrior or MixingPrior
    """
    device = torch.device(device)
    if kind == "mixing":
        jumps = _given_jumps(sampler)
        if jumps is not None and jumps > spec.n_params:
            # refused with the prior, before any work: a transition's jumps beyond the parameters repeat moves
            # (a sampler's own default is left to it: RJHMC's 8 on a network of fewer weights is its choice)
            raise ValueError(
                f"n_jumps={jumps} of sampler={sampler.name!r} exceeds the {spec.n_params} parameters of the "
                f"network (hidden_layer_sizes={tuple(spec.hidden_layer_sizes)}): a transition then proposes "
                "more births and deaths than there are weights to add or remove. Set n_jumps to at most "
                f"{spec.n_params}, or 'auto' where the sampler takes it."
            )
    setting, bound = params.get("prior_std"), params.get("weight_bound")
    std = setting
    if isinstance(std, str):  # "auto"
        std = traits.prior_gain * spec.fan_in_std(torch.float32)
        if spec.embedding is not None and spec.embedding.kind == "periodic":
            # the frequencies keep their own scale, whatever the gain of the weights
            freq = spec.embedding.slices()["frequencies"]
            std[freq] = spec.embedding.frequency_scale
        std = std.to(device)
    elif std is not None and not isinstance(std, Real):
        std = _prior_std_array(std, spec, device)
    base = sampler.adjust_prior(Prior(std, bound), spec, setting, device)
    if kind == "mixing":
        # init_density, as a probability below 1, is also the reference from which tempered SMC's bridge starts
        reference = min(float(params["init_density"]), 1.0 - 1e-6)
        return MixingPrior(base, float(params["sparsity"]), reference=reference)
    if kind == "fixed" and not learns_noise:
        return base
    what = f"prior={kind!r}" if kind != "fixed" else f"temperature={params.get('temperature')!r}"
    if bound is not None:
        raise ValueError(
            f"{what} draws Gaussian precisions by Gibbs steps and has no box: set weight_bound=None "
            "(or prior='fixed' to keep the box)."
        )
    if base.std is None:
        raise ValueError(
            f"{what} centres each group's precision on prior_std: give prior_std ('auto' or a scale), "
            "not None."
        )
    std = base.std.cpu() if torch.is_tensor(base.std) else base.std
    prior = HierarchicalPrior.for_network(
        spec, kind, std, params["prior_shape"], noise=learns_noise, input_names=feature_names
    )
    return prior._replace(
        group=prior.group.to(device), shape=prior.shape.to(device), rate=prior.rate.to(device),
        std=prior.std.to(device),
    )


def _prior_std_array(std, spec, device):
    """``prior_std`` given as an array: one positive standard deviation per parameter, checked."""
    std = np.asarray(std, dtype=np.float64)
    if std.shape != (spec.n_params,) or not np.all(np.isfinite(std) & (std > 0)):
        raise ValueError(
            f"prior_std as an array gives one positive standard deviation per parameter: shape "
            f"({spec.n_params},) for this network (MLPSpec(...).n_params, in the order of samples_), "
            f"got shape {std.shape}. Use a float for one value, or 'auto'."
        )
    return torch.as_tensor(std, dtype=torch.float32, device=device)


def _given_jumps(sampler):
    """The sampler's ``n_jumps`` where it is an int other than the sampler's own default, else None.

    The sampler declares the default it uses as ``default_n_jumps`` (:class:`~skgibbs.samplers.RJHMC`'s
    8); a sampler that declares none (SMC, whose default is ``"auto"``) has every int counted as given.
    """
    jumps = getattr(sampler, "n_jumps", None)
    if not isinstance(jumps, Integral) or isinstance(jumps, bool):
        return None
    default = getattr(sampler, "default_n_jumps", None)
    return None if isinstance(default, Integral) and jumps == default else int(jumps)


def fitted_prior(estimator):
    """The prior a fitted estimator sampled, rebuilt from its fitted state, on the CPU.

    What :attr:`PosteriorProblem.prior` was during the fit: the same
    :class:`~skgibbs.priors.Prior`, :class:`~skgibbs.priors.HierarchicalPrior`
    or :class:`~skgibbs.priors.MixingPrior`, in the coordinates of
    ``samples_``. The fitted state holds NumPy arrays and names only, so the
    prior object is built again from them (``spec_``, ``sampler_`` and the
    estimator's prior settings); the displays and the criteria read it here.

    Parameters
    ----------
    estimator : fitted GibbsMLPRegressor, GibbsMLPClassifier or SparseGibbsMLPRegressor

    Returns
    -------
    prior : Prior, HierarchicalPrior or MixingPrior

    Examples
    --------
    >>> import numpy as np
    >>> from skgibbs import GibbsMLPRegressor
    >>> from skgibbs.problem import fitted_prior
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(40, 3)), rng.normal(size=40)
    >>> est = GibbsMLPRegressor(hidden_layer_sizes=(4,), n_samples=5, burn_in=5, pretrain_iter=10,
    ...                         random_state=0).fit(X, y)
    >>> type(fitted_prior(est)).__name__, est.prior_
    ('HierarchicalPrior', 'ard')
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator, "spec_")
    est = estimator
    params = est.get_params(deep=False)
    kind, learns_noise, _, _ = model_choices(params, est._traits, est.sampler_, getattr(est, "noise_", None))
    return build_prior(
        params, est._traits, est.spec_, est.sampler_, kind, learns_noise,
        feature_names=getattr(est, "feature_names_in_", None),
    )


class WatchedValues:
    """``watch(theta)``: the values the mixing checks judge at the training inputs, chunk by chunk of rows.

    Calls ``watched(outputs)`` (the estimator's map from the network's
    outputs ``(S, rows[, n_outputs])`` to what ``rhat_`` and ``ess_``
    judge) on blocks of rows and draws, and yields one ``(S, m)`` array per
    chunk of rows, so that the checks of a long run on many rows hold one
    chunk at a time.
    """

    def __init__(self, spec, X, watched):
        self.spec, self.X, self.watched = spec, X, watched

    def __call__(self, theta):
        theta = torch.as_tensor(theta)
        n = self.X.shape[0]
        draws = _chunks.draws_per_call(max(self.spec.layer_sizes))
        with torch.no_grad():
            for rows in _chunks.row_chunks(n, len(theta), 8 * self.spec.n_outputs):
                Xs = self.X[rows]
                yield np.concatenate(
                    [self.watched(self.spec.forward(theta[j : j + draws], Xs).double().cpu().numpy())
                     for j in range(0, len(theta), draws)]
                )


def vectorize_chains(n_chains, batch, n_params, device="cpu"):
    """Whether the estimators advance their chains in one batch.

    Batching pays while a step is overhead-bound: one chain, a GPU, or a
    step of at most :data:`VECTORIZE_WORK` examples-times-parameters
    (``batch`` is the expected batch size ``n rho``); beyond it, chains run
    one per job.

    Examples
    --------
    >>> vectorize_chains(4, batch=442, n_params=11_301)
    True
    >>> vectorize_chains(4, batch=10_000, n_params=10_401)
    False
    """
    if n_chains == 1 or torch.device(device).type == "cuda":
        return True
    return batch * n_params <= VECTORIZE_WORK


#: how a temperature source reads in a sentence
_SOURCE = {"learned": "the noise learned", "plug-in": "the plug-in temperature", "given": "the given temperature"}


def _warn_if_rho_changes_the_model(params, traits, plan, n, n_params):
    """Under ``sampler="auto"``, warn where ``rho < 1`` samples another model than ``rho = 1`` would.

    ``"auto"`` at ``rho < 1`` runs a kernel on Bernoulli batches (csMALA),
    which samples neither the hierarchical priors nor the noise, while at
    ``rho = 1`` it may run one that samples both: a grid over ``rho`` then
    ranks two models. The warning names the model of each and the settings
    that make them one; its first line is the same for every fit, so a
    search shows it once.
    """
    from ._mixing import _warn

    full = plan_fit({**params, "rho": 1.0}, traits, n_rows=n, n_params=n_params, noise=plan.noise, device=plan.device)
    sampler = plan.sampler
    here = (plan.prior, plan.temperature_source)
    there = (full.prior, full.temperature_source)
    if here == there:
        return
    fix = {}
    if here[0] != there[0]:
        fix["prior"] = here[0]
    if here[1] != there[1] and here[1] == "plug-in":
        fix["temperature"] = "plug-in"
    settings = ", ".join(f"{k}={v!r}" for k, v in fix.items())
    rho = plan.rho
    _warn(
        "sampler='auto' samples another model at rho < 1 than at rho = 1, so a grid over rho compares models, "
        "not batch fractions of one.\n"
        f"At rho={rho:g} this fit runs {sampler.name} on the {here[0]} prior with {_SOURCE[here[1]]}; at rho=1 "
        f"it would run {full.sampler.name} on the {there[0]} prior with {_SOURCE[there[1]]}. "
        f"To compare batch fractions of one model, set that model for every rho: {settings} (then rho=1 runs "
        f"it on the full data and rho < 1 on batches); or leave rho at 1 and compare the models by their "
        "generalization_loss_.",
        UserWarning,
    )
