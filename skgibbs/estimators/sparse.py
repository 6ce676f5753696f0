"""SparseGibbsMLPRegressor: sparse networks sampled by reversible jump (paper 001)."""

from numbers import Real
from types import MappingProxyType

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.utils import check_random_state

from ._base import BaseGibbsMLP, RegisteredSamplerName, draws_mean
from .._compat import Interval, check_is_fitted
from .regressor import GibbsMLPRegressor
from ..plan import SAMPLER_SETTING_DEFAULTS, EstimatorTraits
from ..samplers import Sampler

__all__ = ["SparseGibbsMLPRegressor", "evidence_weights", "independent_fits", "input_relevance", "monte_carlo_error"]

def input_relevance(spec, samples):
    """Fraction of each input's first-layer weights that are active and lead to the output, per draw.

    A first-layer weight from input ``j`` counts when it is non-zero and its
    unit reaches the output through a chain of non-zero weights (biases do
    not carry an input's signal). The value is 0 for an input that cannot
    change the prediction and 1 for an input wired to every live unit; at
    the densities of paper 001 (about 45% of the weights active) nearly
    every input keeps some path, so the fraction, not the existence of a
    path, tells inputs apart.

    Parameters
    ----------
    spec : MLPSpec
    samples : ndarray of shape (N, Q)

    Returns
    -------
    ndarray of shape (N, n_features)

    Examples
    --------
    >>> import numpy as np
    >>> from skgibbs.model import MLPSpec
    >>> spec = MLPSpec(2, (2,), "relu")
    >>> coefs = [np.array([[1.0, 1.0], [0.0, 3.0]]), np.array([[2.0], [0.0]])]
    >>> theta = spec.pack(coefs, [np.zeros(2), np.zeros(1)])
    >>> input_relevance(spec, theta[None]).tolist()  # the second unit is dead
    [[0.5, 0.0]]
    """
    coefs, _ = spec.unpack(np.asarray(samples))
    reach = np.ones(coefs[-1].shape[:-2] + (coefs[-1].shape[-1],))  # (N, 1): the output
    for W in reversed(coefs[1:]):  # W: (N, n_in, n_out); units that reach the output
        reach = (np.einsum("nio,no->ni", (W != 0).astype(np.float64), reach) > 0).astype(np.float64)
    live = np.einsum("nio,no->ni", (coefs[0] != 0).astype(np.float64), reach)
    return live / coefs[0].shape[-1]


def independent_fits(estimator, X, y, n_runs=4, random_state=None, n_jobs=None):
    """``n_runs`` clones of ``estimator`` fitted on ``(X, y)``, each from its own seed.

    The runs share nothing but the data, so the spread of any fitted value
    over them is its Monte Carlo error (:func:`monte_carlo_error`): with
    ``sampler="smc"`` each run carries its own population of particles from
    the prior to the posterior.

    Parameters
    ----------
    estimator : estimator
        Unfitted or fitted; it is cloned, never changed.
    X, y : array-like
    n_runs : int, default=4
    random_state : int, RandomState instance or None, default=None
        Draws the runs' seeds.
    n_jobs : int, default=None
        joblib jobs over the runs.

    Returns
    -------
    list of estimator
    """
    seeds = check_random_state(random_state).randint(2**31, size=int(n_runs))
    return Parallel(n_jobs=n_jobs)(
        delayed(clone(estimator).set_params(random_state=int(seed)).fit)(X, y) for seed in seeds
    )


def monte_carlo_error(fits, attribute="feature_inclusion_", weights=None):
    """Mean and Monte Carlo standard error of a fitted value over independent fits.

    ``sd / sqrt(R)`` over the ``R`` fits (``ddof=1``), entry by entry: the
    error of the mean of the runs. A single run's own error is ``sd``: the
    spread between runs says how far one run's ``feature_inclusion_`` or
    ``log_evidence_`` may be from what an infinite population would give.
    Within one SMC run the particles are not independent (they descend from
    common ancestors after resampling), so the spread between runs, not
    a binomial error of the particles, is the error to report.

    With ``weights="evidence"`` the runs of a tempered SMC are pooled by
    their evidence: run ``r`` weighs ``w_r = Z_r / sum_s Z_s`` with
    ``Z_r = exp(log_evidence_)``. A run's particles approximate the
    posterior and its ``Z_r`` is an unbiased estimate of the normalising
    constant, so the weighted mean is the estimate of the runs taken
    together as one population (and stays consistent when runs fall into
    different modes: a run whose population went into a mode of small mass
    reports a small evidence and weighs little). Its standard error is the
    ratio estimator's, ``sqrt(R / (R - 1) * sum_r w_r^2 (m_r - m)^2)``; it
    rests on the few runs that carry the weight, ``1 / sum_r w_r^2`` of
    them (the ``effective_runs`` of :func:`evidence_weights`), is itself
    rough when that number is small, and is NaN below two effective runs
    (one run carries the estimate: its error cannot be told from the
    others).

    Parameters
    ----------
    fits : sequence of fitted estimators
        Fitted on the same data from different seeds (:func:`independent_fits`).
    attribute : str, default="feature_inclusion_"
        A fitted attribute: ``feature_inclusion_``, ``inclusion_probability_``,
        ``log_evidence_``, ...
    weights : None or "evidence", default=None
        None: the runs count equally. ``"evidence"``: pooled by
        ``log_evidence_`` (fits of ``sampler="smc"``).

    Returns
    -------
    mean, standard_error : ndarray or float
        Of the attribute's shape.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> fits = [SimpleNamespace(log_evidence_=v) for v in (-10.0, -10.2, -9.8, -10.0)]
    >>> mean, se = monte_carlo_error(fits, "log_evidence_")
    >>> round(float(mean), 3), round(float(se), 3)
    (-10.0, 0.082)

    Two runs in a mode of 20 times the evidence outweigh a third in another:

    >>> fits = [SimpleNamespace(log_evidence_=z, feature_inclusion_=np.array([m]))
    ...         for z, m in ((-10.0, 0.3), (-10.0, 0.3), (-10.0 - np.log(20), 0.4))]
    >>> mean, se = monte_carlo_error(fits, weights="evidence")
    >>> round(float(mean[0]), 4)
    0.3024
    """
    values = np.stack([np.asarray(getattr(fit, attribute), dtype=np.float64) for fit in fits])
    if len(values) < 2:
        raise ValueError(f"monte_carlo_error needs at least two independent fits, got {len(values)}.")
    if weights is None:
        return values.mean(0), values.std(0, ddof=1) / np.sqrt(len(values))
    if weights != "evidence":
        raise ValueError(f"weights must be None or 'evidence', got {weights!r}.")
    w, effective_runs = evidence_weights(fits)
    w = w.reshape((-1,) + (1,) * (values.ndim - 1))
    mean = (w * values).sum(0)
    R = len(values)
    se = np.sqrt(R / (R - 1) * (w**2 * (values - mean) ** 2).sum(0))
    return mean, se if effective_runs >= 2 else np.full_like(se, np.nan)


def evidence_weights(fits):
    """The weights of independent SMC runs pooled by their evidence, and how many runs carry them.

    ``w_r = exp(log_evidence_r) / sum_s exp(log_evidence_s)`` (computed on
    the log scale) and ``effective_runs = 1 / sum_r w_r^2``: ``R`` when the
    runs agree on the evidence, near 1 when one run's evidence is far above
    the others' (independent runs that found modes of different mass).

    Parameters
    ----------
    fits : sequence of fitted estimators
        With ``log_evidence_`` (``sampler="smc"``).

    Returns
    -------
    weights : ndarray of shape (n_runs,)
    effective_runs : float

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> w, runs = evidence_weights([SimpleNamespace(log_evidence_=v) for v in (-270.0, -269.0, -286.0)])
    >>> w.round(3).tolist(), round(runs, 2)
    ([0.269, 0.731, 0.0], 1.65)
    """
    log_z = np.array([float(getattr(fit, "log_evidence_", np.nan)) for fit in fits])
    if not np.all(np.isfinite(log_z)):
        raise ValueError(
            "weights='evidence' needs a finite log_evidence_ of every fit: fit them with sampler='smc'."
        )
    w = np.exp(log_z - log_z.max())
    w /= w.sum()
    return w, float(1.0 / np.sum(w**2))


class SparseGibbsMLPRegressor(GibbsMLPRegressor):
    r"""Sparse multilayer perceptron regressor: reversible-jump MCMC under the mixing prior.

    Samples the Gibbs posterior of paper 001 (2.5) with the mixing prior
    (2.4) over the active set ``I = {i : theta_i != 0}`` of the flat
    parameters (``Q`` of them), with respect to the sum over ``I`` of
    Lebesgue measure on ``R^I``:

    .. math::

        \pi_\lambda(\theta) \propto \exp(-\lambda R_n(\theta))
        \frac{s^{-|I|}}{\binom{Q}{|I|}} \prod_{i \in I} p_i(\theta_i),
        \quad |I| \ge 1,

    where ``R_n`` is the mean squared error on the standardized data (as
    :class:`GibbsMLPRegressor`: every column of ``X`` and ``y`` is centred
    and scaled inside ``fit``), ``lambda = n / temperature``, ``s`` is
    ``sparsity`` and ``p_i`` is the density of one active parameter: the
    Gaussian ``N(0, prior_std_i^2)`` (default, ``prior_std="auto"`` is
    ``1 / sqrt(fan_in)`` of its layer), the uniform ``1 / (2B)`` on ``[-B,
    B]`` of the paper (``prior_std=None``, ``weight_bound=B``), or the
    Gaussian truncated to ``[-B, B]`` (both given). Inactive parameters are
    exact zeros in ``samples_``.

    Every transition of the default kernel (:mod:`skgibbs.samplers.rj.rjhmc`)
    runs one HMC trajectory on the active parameters, the inactive ones
    held at zero, then ``n_jumps`` (8) proposals to remove one active
    parameter (chosen with weight ``exp(-|theta_i| / sigma_i)``, ``sigma_i``
    its prior standard deviation) or add one (chosen
    with weight the squared rank of its ``|d R_n / d theta_i|`` among the
    inactive ones, its value drawn from a Gaussian fitted to its conditional
    given the others), the other parameters unchanged; the
    Metropolis-Hastings ratio accounts for the change of dimension. The HMC
    step size is adapted during burn-in as for :class:`GibbsMLPRegressor`,
    then frozen. The kernel of paper 001 §6 (``sampler="rjmcmc"``) moves
    every active coordinate by one Langevin proposal with each jump: one
    gradient per step, but its chains barely move (the ``sparse``
    benchmark).

    ``sampler="smc"`` replaces the chains by one population of particles
    carried by tempered SMC (:mod:`skgibbs.samplers.smc.sparse`) along the
    bridge ``pi_beta ∝ Pi_0^(1 - beta) (Pi exp(-lambda R_n))^beta``, ``beta``
    from 0 to 1, where ``Pi_0`` makes every parameter active with
    probability ``init_density`` (the particles start as its exact draws):
    every stage reweights the particles, resamples them and moves them by
    the transitions above (HMC on the active parameters, births and deaths)
    until the copies of each resampled particle have come apart. The run
    estimates the log evidence ``log int Pi exp(-lambda R_n)`` of the
    normalised mixing prior (``log_evidence_``), so that ``sparsity``
    settings can be compared by evidence, and the particles' inclusion
    frequencies are the posterior's in proportion to its modes' masses,
    which chains started in one mode are not.

    Parameters
    ----------
    hidden_layer_sizes : int, tuple of int or "auto", default="auto"
        Widths of the hidden layers (an int: one hidden layer of that
        width, as in scikit-learn's ``MLPRegressor``); ``()`` is the linear model (variable
        selection).
        ``"auto"``: two hidden layers of 16 for at most 1000 training rows, of
        100 beyond (:class:`GibbsMLPRegressor`'s rule without its band of 50-50
        up to 5000 rows, which no sparse fit measured). On small designs
        the 16-16 network finds the relevant inputs by the median
        probability reading of ``input_relevance_`` where ``(100, 100)``,
        the default before, keeps every input (the ``sparse_small``
        benchmark).
    activation : {"relu", "tanh", "logistic", "identity"}, default="relu"
    sparsity : float >= 2, default=2.0
        ``s`` of the mixing prior: the prior odds of one more active
        parameter are ``1 / s`` times the ratio of the numbers of active sets.
    init_density : float in (0, 1], default=0.5
        Fraction of the parameters active at the start of each chain (paper
        001 §4 starts with about half); the others are zero through the
        pre-training too. With ``sampler="smc"``, the probability that a
        parameter is active in the reference ``Pi_0`` from which the
        particles start.
    sampler : {"rjhmc", "rjmcmc", "smc"}, RJHMC, RJMCMC or SMC, default="rjhmc"
        The samplers that move between active sets. ``"rjhmc"``
        (:class:`~skgibbs.samplers.RJHMC`): HMC moves
        inside each model and birth/death jumps; an object carries its
        settings (``RJHMC(n_jumps=..., target_accept=..., max_leapfrog=...)``).
        ``"rjmcmc"`` (:class:`~skgibbs.samplers.RJMCMC`): paper 001 §6's
        kernel, a jump and a Langevin move of every active coordinate per
        step (``RJMCMC(step_size=..., proposal_std=..., target_accept=...)``:
        the Langevin step ``h``, adapted during burn-in toward
        ``target_accept``, 0.574, when ``proposal_std="auto"``; a float
        ``proposal_std`` fixes ``h`` and ``s``, the paper's ``sigma =
        gamma``). ``"smc"`` (:class:`~skgibbs.samplers.SMC`): tempered
        SMC whose mutations are RJHMC transitions, ``SMC(n_particles=...,
        n_jumps=..., max_mcmc_steps=..., decorrelation=...)``; it returns
        ``n_particles`` draws as one population (``samples_`` of shape
        ``(1, n_particles, n_params)``) and refuses ``n_samples``,
        ``burn_in``, ``thin`` and ``n_chains`` other than their defaults
        (:meth:`~skgibbs.samplers.SMC.ignored_settings`); either
        ``chain_weights`` gives its one population weight 1.
        The dense kernels are refused: a mean-field Gaussian ``q``
        (``"vi"``) cannot put mass on the exact zeros of the mixing prior
        (use ``GibbsMLPRegressor(sampler="vi")`` for a dense network).
    temperature : float > 0 or "auto", default="auto"
        ``n / lambda`` on the standardized scale; ``"auto"`` is ``2 sigma^2``
        with ``sigma^2`` the held-out error of the (sparse) pre-trained
        networks, as for :class:`GibbsMLPRegressor`.

    n_samples : int or "auto", default="auto"
        Draws kept per chain (not the rows of ``X``, nor the ``n_samples``
        of :meth:`sample_y`; see :class:`GibbsMLPRegressor`); ``"auto"``:
        a run length that adapts, from 175 draws a chain until the mixing
        checks pass or ``max_grad_evals`` (or ``max_time``) is reached, as
        for :class:`GibbsMLPRegressor` (SMC returns its particles and
        refuses any other value).
    max_grad_evals : int >= 1 or "auto", default="auto"
    max_time : float > 0 or None, default=None
        The caps of a run length that adapts, as for
        :class:`GibbsMLPRegressor`.
    burn_in : int or "auto", default="auto"
        Transitions discarded per chain; ``"auto"`` is 250 for ``"rjhmc"``
        (as for HMC) and 2000 for ``"rjmcmc"`` (its active set changes by at
        most one parameter a step).
    thin : int or "auto", default="auto"
        Keep every ``thin``-th state; ``"auto"`` is 1 for ``"rjhmc"`` and 10
        for ``"rjmcmc"``.
    n_chains : int, default=4

    chain_weights : {"equal", "stacking"}, default="stacking"
        How much each chain's draws weigh in the predictions and in the
        inclusion probabilities, as for :class:`GibbsMLPRegressor`: the
        stacking weights of the chains' leave-one-out log scores (Yao,
        Vehtari and Gelman, 2022; the default, since the chains of the
        mixing posterior settle in different active sets and weighing them
        by how well each predicts held-out rows lowered the held-out error
        on the ``sparse`` benchmark's designs), or equal.
    pretrain_iter : int, default=3000
        Adam steps on the masked network before sampling (see
        :class:`GibbsMLPRegressor`).
    weight_bound : float or None, default=None
        ``B``: active parameters are uniform on (or truncated to) ``[-B, B]``.
    prior_std : float, "auto", array-like of shape (n_params,) or None, default="auto"
        Standard deviation of the Gaussian density of an active parameter
        (an array: one per parameter, in the order of ``samples_``); None with ``weight_bound`` is the paper's uniform density. One of the
        two must be given: the mixing prior must be proper.
    confidence_level : float in (0, 1), default=0.95
    n_jobs : int, default=None
        joblib jobs over groups of chains, as for
        :class:`~skgibbs.GibbsMLPRegressor`.
    device : str, default="cpu"
    random_state : int, RandomState instance or None, default=None
    verbose : int, default=0

    Attributes
    ----------
    samples_ : ndarray of shape (n_chains, n_samples, n_params)
        Draws of the flat parameters (``MLPRegressor`` order), zeros off the
        active set.
    spec_ : MLPSpec
        The network sampled, as for :class:`GibbsMLPRegressor`.
    n_features_in_, n_train_ : int
        Columns and rows of the training data.
    sample_weight_sum_ : float
        ``n_w``, the sum of ``sample_weight`` (the rows without weights):
        the number of examples the risk counts.
    x_mean_, x_scale_ : ndarray of shape (n_features,)
        The mean and standard deviation of every column of ``X``, which
        standardize it.
    y_mean_, y_scale_ : float
        The same for ``y``; predictions are returned on its scale.
    pretrain_n_iter_, pretrain_converged_ : int, bool
        Adam steps the pre-training took, and whether its held-out loss
        levelled off before ``pretrain_iter`` steps.
    prior_ : str
        ``"mixing"``: the mixing prior, the only one the estimator samples.
    temperature_, lambda_ : float
        The temperature used (standardized scale) and ``n / temperature_``.
    temperature_source_ : {"plug-in", "given"}
        ``"plug-in"`` for ``temperature="auto"``, ``"given"`` for a float.
    active_fraction_ : ndarray of shape (n_chains, n_samples)
        ``|I| / Q`` of every draw.
    inclusion_probability_ : ndarray of shape (n_params,)
        Posterior probability that each parameter is active (the fraction
        of the draws where it is non-zero, each chain's draws weighed by
        ``chain_weights_``), in the flat order; see
        :meth:`unpack_inclusion` for ``coefs_`` / ``intercepts_`` shapes.
        With ``sampler="smc"``, the fraction of the final particles, one
        equally weighted population (every stage resamples). Its Monte
        Carlo error comes from independent fits (:func:`independent_fits`,
        :func:`monte_carlo_error`).
    feature_inclusion_ : ndarray of shape (n_features,)
        Posterior mean of the fraction of each input's first-layer weights
        that are active and lead to the output (:func:`input_relevance`):
        the relevance of the input columns, 0 for an input the network
        ignores.
    input_relevance_ : ndarray of shape (n_features,)
        Posterior probability that each input is in the model: the fraction
        of the draws in which some active first-layer weight out of it
        leads to the output (:func:`input_relevance` positive). The inputs
        with ``input_relevance_ >= 0.5`` are those of the median probability
        model [4]_, the posterior's selection of inputs. Where every input
        scores near 1 (a wide network at a high density keeps a path from
        each), the posterior has selected none, and ``feature_inclusion_``
        ranks them. The dense estimators' ``input_relevance_`` is an ARD
        scale, not a probability.
    sampler_ : RJHMC, RJMCMC or SMC
        The sampler object used. A fit also sets the attributes its
        sampler reports (the HMC moves' ``step_size_``, the acceptance of
        births and deaths ``move_acceptance_``, SMC's ``log_evidence_``
        and ``temperature_path_``, ...), which exist only after a fit by
        that sampler: each sampler's class lists those it sets, under
        Notes: :class:`~skgibbs.samplers.RJHMC`,
        :class:`~skgibbs.samplers.RJMCMC`, :class:`~skgibbs.samplers.SMC`.

        .. versionchanged:: 0.2
           ``sampler_`` was the sampler's name, now ``sampler_name_``.
    sampler_name_ : str
        The sampler's registered name.
    rho_ : float
        1: every sampler reads the full data.
    n_grad_evals_, acceptance_rate_ : ndarray of shape (n_chains,)
        Gradient evaluations per chain, burn-in included, and the fraction
        of accepted proposals after burn-in (what it counts is the
        sampler's), as for :class:`GibbsMLPRegressor`.
    sample_stats_ : dict of ndarray of shape (n_chains, n_samples)
        Per draw: ``lp`` and what the sampler records (``n_active``, the
        size of the active set, for reversible jump).
    surrogate_scale_, batch_noise_ : float
        As for :class:`GibbsMLPRegressor` (``batch_noise_`` is 0: the
        samplers read the full data).
    generalization_loss_ : float
        The criterion to rank models by: Watanabe's WAIC per example, as
        for :class:`GibbsMLPRegressor`.
    waic_tempering_, lfv_, train_loss_, langevin_waic_ : float
        Its tempering, its functional variance, the training loss and the
        Langevin WAIC, as for :class:`GibbsMLPRegressor` (``langevin_waic_``
        is not a criterion to rank by).
    noise_variance_, credible_radius_, credible_radius_params_ : float
        As for :class:`GibbsMLPRegressor`.
    rhat_, ess_ : float
        Largest R-hat and smallest bulk ESS of the function values at the
        training inputs, as for :class:`GibbsMLPRegressor` (NaN with
        ``sampler="smc"``, whose particles are independent).
    within_chain_rhat_, within_chain_ess_, between_chain_rhat_ : float
        Each chain judged alone and the chains against each other, as for
        :class:`GibbsMLPRegressor`.
    run_length_ : dict
        Under ``n_samples="auto"`` with reversible jump, how the run length
        adapted, as for :class:`GibbsMLPRegressor`.
    chain_weights_ : ndarray of shape (n_chains,)
        Weight of each chain's draws in the predictions and in
        ``inclusion_probability_``, ``feature_inclusion_`` and
        ``input_relevance_`` (``1 / n_chains`` each with
        ``chain_weights="equal"``).
    pareto_khat_ : ndarray of shape (n_chains,)
        With ``chain_weights="stacking"`` (the default) and at least two
        chains of two draws each: the largest Pareto shape of each chain's
        PSIS leave-one-out weights, as for :class:`GibbsMLPRegressor`.

    See Also
    --------
    GibbsMLPRegressor : the same network under a prior without sparsity; this class is its
        subclass, with its predictions, intervals and criteria.

    References
    ----------
    .. [1] Steffen, Trabs. PAC-Bayes training for neural networks: sparsity
       and uncertainty quantification (mixing prior (2.4), §6).
    .. [2] Green. Reversible jump Markov chain Monte Carlo computation and
       Bayesian model determination. Biometrika 82, 1995.
    .. [3] Del Moral, Doucet, Jasra. Sequential Monte Carlo samplers. JRSS B, 2006.
    .. [4] Barbieri, Berger. Optimal predictive model selection. Annals of
       Statistics 32, 2004.

    Examples
    --------
    >>> import numpy as np
    >>> from skgibbs import SparseGibbsMLPRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (60, 3))
    >>> y = np.sin(3 * X[:, 0]) + 0.1 * rng.normal(size=60)
    >>> reg = SparseGibbsMLPRegressor(hidden_layer_sizes=(8,), n_samples=20, burn_in=200,
    ...                               pretrain_iter=200, random_state=0).fit(X, y)
    >>> reg.samples_.shape, reg.feature_inclusion_.shape
    ((4, 20, 41), (3,))
    >>> bool(np.all(reg.active_fraction_ > 0))
    True
    >>> reg.input_relevance_.shape, bool(np.all((0 <= reg.input_relevance_) & (reg.input_relevance_ <= 1)))
    ((3,), True)
    """

    _parameter_constraints = {
        **BaseGibbsMLP._parameter_constraints,
        "sparsity": [Interval(Real, 2, None, closed="left")],
        "init_density": [Interval(Real, 0, 1, closed="right")],
        "sampler": [RegisteredSamplerName("sparse"), Sampler],
    }
    # its chains stacked by default; the other settings a sampler may not honour at the dense estimators' defaults
    _traits = EstimatorTraits(
        prior_kind="sparse", prior="mixing",
        sampler_setting_defaults=MappingProxyType({**SAMPLER_SETTING_DEFAULTS, "chain_weights": "stacking"}),
    )  # fmt: skip

    def __init__(
        self,
        hidden_layer_sizes="auto",
        activation="relu",
        *,
        sparsity=2.0,
        init_density=0.5,
        sampler="rjhmc",
        temperature="auto",
        n_samples="auto",
        max_grad_evals="auto",
        max_time=None,
        burn_in="auto",
        thin="auto",
        n_chains=4,
        chain_weights="stacking",
        pretrain_iter=3000,
        weight_bound=None,
        prior_std="auto",
        confidence_level=0.95,
        n_jobs=None,
        device="cpu",
        random_state=None,
        verbose=0,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.sparsity = sparsity
        self.init_density = init_density
        self.sampler = sampler
        self.temperature = temperature
        self.n_samples = n_samples
        self.max_grad_evals = max_grad_evals
        self.max_time = max_time
        self.burn_in = burn_in
        self.thin = thin
        self.n_chains = n_chains
        self.chain_weights = chain_weights
        self.pretrain_iter = pretrain_iter
        self.weight_bound = weight_bound
        self.prior_std = prior_std
        self.confidence_level = confidence_level
        self.n_jobs = n_jobs
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    def _weigh_chains(self, elpd=None, khat=None, sample_weight=None):
        """``chain_weights_``, then the inclusion probabilities of the draws weighed as the chains now are.

        Under ``chain_weights="stacking"`` the inclusion probabilities and
        the inputs' relevance are means over the same weighted posterior as
        the predictions (a chain of weight 0 counts in none of them).
        """
        super()._weigh_chains(elpd, khat, sample_weight)
        spec, weights = self.spec_, self._draw_weights()
        active = self.samples_ != 0
        fraction = input_relevance(spec, self.samples_.reshape(-1, spec.n_params))

        def share(values):  # a weighted mean of values in [0, 1]: the weights' rounding can carry it an ulp past 1
            return np.clip(draws_mean(values, weights), 0.0, 1.0)

        self._set_fitted(
            {
                "active_fraction_": active.mean(-1),
                "inclusion_probability_": share(active.reshape(-1, spec.n_params)),
                "feature_inclusion_": share(fraction),
                # the posterior probability that the input is in the model: a live path to the output
                "input_relevance_": share(fraction > 0),
            }
        )

    def unpack_inclusion(self):
        """``inclusion_probability_`` in scikit-learn's ``coefs_`` / ``intercepts_`` layout.

        Returns
        -------
        coefs : list of ndarray of shape (n_in, n_out)
        intercepts : list of ndarray of shape (n_out,)
        """
        check_is_fitted(self)
        return self.spec_.unpack(self.inclusion_probability_)
