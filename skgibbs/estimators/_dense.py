"""What the dense Gibbs MLPs (regressor and classifier) share: the settings ``sampler``, ``rho``, ``prior``, ..., and their docs."""

import textwrap
from numbers import Real

from ._base import BaseGibbsMLP, RegisteredSamplerName
from .._compat import Interval, StrOptions
from .._response import WATCHED
from ..embeddings import EMBEDDINGS, PeriodicEmbedding, PiecewiseLinearEmbedding
from ..priors import PRIOR_KINDS
from ..samplers import Sampler, available_samplers, get_sampler

__all__ = ["DENSE_CONSTRAINTS", "fill_doc", "sampler_classes"]


#: the settings every dense estimator (regressor and classifier) adds to :class:`BaseGibbsMLP`'s: the
#: ``sampler`` (an object or a name of the dense registry) and ``rho``, the fraction of the data a step
#: reads, which every minibatch kernel shares (the kernel's own settings live on the sampler object), the
#: hierarchical priors and the embedding
DENSE_CONSTRAINTS = {
    **BaseGibbsMLP._parameter_constraints,
    "sampler": [RegisteredSamplerName("dense", auto=True), Sampler],
    "rho": [Interval(Real, 0, 1, closed="right"), StrOptions({"auto"})],
    "prior": [StrOptions({"auto", *PRIOR_KINDS})],
    "prior_shape": [Interval(Real, 0, None, closed="neither")],
    "embedding": [None, StrOptions(set(EMBEDDINGS)), PiecewiseLinearEmbedding, PeriodicEmbedding],
}


# Docstring parts every dense estimator shares, inserted by ``fill_doc`` (indented for a class docstring).
_SHARED_PARAMETERS = """\
    embedding : {"piecewise", "periodic"}, PiecewiseLinearEmbedding, PeriodicEmbedding or None, default=None
        An embedding of each numeric input ahead of the first dense layer
        (Gorishniy, Rubachev and Babenko, 2022; :mod:`skgibbs.embeddings`):
        ``"piecewise"``, a piecewise-linear encoding on quantile bins of the
        training inputs (``embedding_bins_``), or ``"periodic"``, sines and
        cosines of learned frequencies, each followed by a per-input linear
        layer and a ReLU; an object sets the sizes (``GridSearchCV`` reaches
        them as ``embedding__n_bins``). The embedding's weights (and
        frequencies) are parameters of the network like the others: in
        ``samples_`` (first, before the dense layers), under the prior
        (``prior="layer"`` and ``"ard"`` give them groups of their own) and
        sampled by every sampler. None: the standardized inputs enter the
        first dense layer directly.
    sampler : Sampler or str, default="auto"
        The kernel, as an object with its settings
        (``HMC(target_accept=0.9)``, ``CSMALA(correction=0.5)``,
        ``MeanFieldVI(tau=0.1)``; see :mod:`skgibbs.samplers`) or a name
        standing for the object with its defaults, one of
{dense_samplers}.
        ``"auto"`` decides by the problem's size and the prior
        (:func:`~skgibbs.samplers.choose_sampler`): on the full data while
        rows times weights is at most ``5e7``, minibatch VI beyond, and
        csMALA on Bernoulli batches (``rho < 1``). On the full data the
        regressor's defaults (a hierarchical prior and a learned noise) run
        MCLMC on their non-centred target and its fixed priors HMC; the
        classifier runs MCLMC (its chains converged on the
        ``classification`` benchmark, where HMC's did not). ``verbose=1``
        prints why. With an object, ``GridSearchCV`` reaches its settings as
        ``sampler__target_accept``.
    n_samples : int or "auto", default="auto"
        Draws kept per chain, so ``samples_`` holds ``n_chains *
        n_samples`` draws. ``"auto"``: for the Markov chain samplers a run
        length that adapts (:ref:`diagnostics`, *A run length that
        adapts*): a first block of 175 draws a chain, then the run
        extended by ``sqrt 2``, its second half kept, until the chains
        pass the mixing check of ``rhat_`` and ``ess_`` (R-hat at most
        1.05, bulk ESS at least 100: the fit would end without a mixing
        warning) on two successive checks, or a cap is
        reached (``max_grad_evals``, ``max_time``);
        ``run_length_`` records the checks. For VI, 50 draws per group
        (independent draws of the fitted approximation), and SMC's
        particles for SMC, whose draws are independent: they keep their own
        stopping rules. An integer is a fixed length. Not the number of rows
        of ``X`` (which scikit-learn's docstrings also call
        ``n_samples``), and not the regressor's ``sample_y(X, n_samples)``,
        where it is how many predictive draws to return, as in
        scikit-learn's ``GaussianProcessRegressor.sample_y``.
    max_grad_evals : int >= 1 or "auto", default="auto"
        Under ``n_samples="auto"``, the most gradient evaluations a chain
        may spend in the sampling phase (warm-up not counted); ``"auto"``
        is four times those of the first block for the regressor, eight
        for the classifier (:attr:`~skgibbs.plan.EstimatorTraits.cap_factor`).
        A run that stops at the
        cap records in ``run_length_`` the evaluations its checks would
        have needed, and its warning names them. A kernel that evaluates
        no gradient (a random walk) counts one per draw. Ignored with an
        integer ``n_samples`` and by SMC and VI.
    max_time : float > 0 or None, default=None
        Under ``n_samples="auto"``, the most seconds of sampling; None: no
        limit but ``max_grad_evals``. With it, the length of a run, and so
        its draws, depend on the machine's speed.
    burn_in : int or "auto", default="auto"
        Transitions discarded (and used for adaptation) per chain; ``"auto"``
        is the sampler's default: 250 for HMC, 1000 for the Langevin
        kernels, 20 passes over the data (at least 1000 steps) for SGHMC
        (none for VI and SMC, which refuse any other value). The cost of an HMC transition grows
        with ``n`` times the number of weights, and its leapfrog steps (at
        most 64) with the concentration of the posterior: see the
        ``large_n`` benchmark.
    thin : int or "auto", default="auto"
        Keep every ``thin``-th state after burn-in; ``"auto"`` is the
        sampler's default: 1 for HMC (whose draws are nearly independent),
        10 for the Langevin kernels and one pass over the data (at least 50
        steps) for SGHMC.
    n_chains : int, default=4
        Independent chains, each started from its own pre-trained network.
        HMC adapts its trajectory length across them.
    chain_weights : {"equal", "stacking"}, default="equal"
        How much each chain's draws weigh in the predictions. ``"equal"``:
        ``1 / n_chains`` each, the pooled draws as sampled. ``"stacking"``:
        after sampling, the weights that maximise the leave-one-out log
        score of the weighted mixture of the chains (Yao, Vehtari and
        Gelman, 2022), from each chain's Pareto smoothed importance sampling
        leave-one-out densities of the training examples
        (:func:`~skgibbs.diagnostics.psis_loo`,
        :func:`~skgibbs.diagnostics.stacking_weights` with one
        pseudo-observation per chain, so that chains that predict alike
        share the weight evenly instead of at random). For chains that sit
        in different modes (a :class:`~skgibbs.MultimodalWarning`): a chain
        whose mode predicts left-out examples poorly gets little weight.
        The weights are predictive, not the modes' posterior masses, and
        the training data say nothing about a mode's behaviour where there
        are no data. They apply to ``predict`` (and its ``return_std``),
        ``predict_interval``, ``predict_proba``, ``sample_y``,
        ``credible_radius``, ``credible_sets``, the regressors' fitted
        ``noise_variance_``, ``credible_radius_`` and
        ``credible_radius_params_``, and
        :func:`~skgibbs.metrics.log_predictive_density_scorer`. Equal
        weights stay in the criteria (``generalization_loss_``, ``lfv_``,
        ``train_loss_``, ``langevin_waic_``: WAIC's penalty is a variance
        over draws from one posterior, which weighted draws from several
        modes are not), in the mixing diagnostics, and in what returns the
        draws as sampled (``samples_``, ``predict_samples``, ``to_arviz``,
        the Langevin criteria of :mod:`skgibbs.criteria`). Costs one PSIS
        fit per chain and training example, and for the regressors one
        more evaluation of the draws on the training data.
    pretrain_iter : int, default=3000
        Most Adam steps on 80% of the data before sampling, keeping the
        iterate with the lowest loss on the other 20%. Two learning-rate
        schedules run side by side from each chain's initialisation (1e-3;
        and 1e-2, then 1e-3 from its best iterate), each until that loss
        has levelled off (no chain's best fell by 1% over the last 500
        steps), and each chain keeps the schedule that reached the lower
        held-out loss; it stops earlier than the cap once both have
        levelled off. Under a plug-in temperature (``temperature_source_ ==
        "plug-in"``), reaching the cap first is a ``ConvergenceWarning``. 0
        starts the chains at the random initialisation.
    weight_bound : float or None, default=None
        ``B`` of the uniform prior box ``[-B, B]^Q`` (proposals outside are
        rejected); None is no box.
    prior_std : float, "auto", array-like of shape (n_params,) or None, default="auto"
        Standard deviation of a Gaussian prior on the flat parameters (on
        the standardized scale). ``"auto"`` gives each weight and bias
        ``g / sqrt(n_in)`` of its layer, so that every unit's pre-activation
        has prior variance of order one: ``g = 1`` for the regressors, ``g =
        2`` for the classifier, whose logits must reach a few units (see
        :class:`~skgibbs.GibbsMLPClassifier`). A float is the same for all;
        an array gives each parameter its own, in the order of ``samples_``
        (e.g. another gain: ``g * MLPSpec(n_features, hidden_layer_sizes,
        activation, n_outputs).fan_in_std().numpy()``); None is the flat
        prior (with ``weight_bound``, the uniform box of paper 000).
    prior : {"auto", "fixed", "layer", "ard"}, default="auto"
        ``"auto"``: for the regressor ``"ard"`` where the sampler samples
        hierarchical priors (MCLMC, adjusted MCLMC, HMC, VI), else
        ``"fixed"``, and ``"fixed"`` whenever ``weight_bound`` or
        ``prior_std=None`` asks for a box or a flat prior; for the
        classifier ``"fixed"`` (under ARD its chains did not converge on the
        ``classification`` benchmark); ``prior_`` says which (measured against the alternatives
        in :doc:`/user_guide/estimator`). ``"fixed"``: the Gaussian of
        ``prior_std``. ``"layer"``: Neal's
        hierarchical prior, in which each layer's weights share one
        precision (inverse variance) and its biases another, each with a
        Gamma prior whose mean is the precision ``prior_std`` gives (so
        ``1 / sqrt(n_in)`` scales with the fan-in by default) and whose
        shape is ``prior_shape``; the precisions are sampled with the
        weights, by exact Gibbs draws between HMC transitions
        (:mod:`skgibbs.samplers.hmc.gibbs`), so the data set the scale of
        each layer. ``"ard"``: as ``"layer"``, with one precision per input
        for the weights out of that input (automatic relevance
        determination): an input the data do not need gets a large
        precision, its weights shrink to zero, and ``input_relevance_``
        reports each input's learned scale. ``sampler="hmc"`` draws the
        precisions exactly between transitions; ``"mclmc"`` and
        ``"adjusted_mclmc"`` sample the log-precisions with the weights on
        a non-centred target (:mod:`skgibbs.samplers.noncentered`);
        ``sampler="vi"`` gives ``q`` a mean-field Gamma factor per group
        (:func:`skgibbs.samplers.vi.precision_factors`); the other samplers
        refuse the hierarchical priors.
    prior_shape : float > 0, default=0.5
        Shape ``a`` of the Gamma priors of the precisions of ``prior="layer"``
        and ``"ard"`` (and of the noise precision of the regressor's
        ``temperature="learn"``); the rate is ``a`` times the centring
        variance. Smaller is vaguer; Neal's shape parameter ``alpha`` is
        ``2 a``, so the default is his ``alpha = 1``.
    confidence_level : float in (0, 1), default=0.95
        Default level of :meth:`predict_interval` (and of the regressors'
        ``credible_radius_``).
    n_jobs : int, default=None
        joblib jobs over groups of chains. Chains of a network too large to
        batch run one per job; batched chains are split into ``n_jobs``
        groups when it is a positive integer (HMC's warm-up stays joint,
        its sampling is split). Jobs run under the active joblib backend,
        e.g. on Dask workers inside ``joblib.parallel_backend("dask")``
        (see :doc:`/user_guide/distributed`). Draws depend on
        ``random_state`` and on the groups, never on the backend or the
        worker: a run on a cluster repeats a local one bit for bit. With
        ``device="cuda"`` all chains are batched on the device and
        ``n_jobs`` is not used.
    device : str, default="cpu"
        torch device for sampling (``"cuda"`` where available). Fitted
        state is NumPy either way.
    random_state : int, RandomState instance or None, default=None
        Seeds one ``torch.Generator`` per chain. The global torch RNG is
        never used.
    verbose : int, default=0
        With 1, one live progress bar per phase on stderr (warm-up,
        sampling, or the VI optimisation): steps per second, ETA and, while
        sampling, the acceptance rate so far; a ``tqdm`` bar when tqdm is
        installed (the ``progress`` extra), else one line rewritten in
        place; where stderr is not a terminal (a log file), whole lines
        every few seconds. Nothing at 0.
"""

_SHARED_ATTRIBUTES = """\
    spec_ : MLPSpec
        The network sampled (:class:`~skgibbs.model.MLPSpec`): its widths
        (``"auto"`` resolved), activation, outputs and the order of the
        flat parameters of ``samples_`` (``spec_.unpack``).
    pretrain_n_iter_, pretrain_converged_ : int, bool
        Adam steps the pre-training took (0 with ``pretrain_iter=0``), and
        whether its held-out loss levelled off under every schedule before
        ``pretrain_iter`` steps (no chain's best fell by 1% over the last
        500 steps).
    prior_ : {"fixed", "layer", "ard"}
        The prior sampled: ``prior`` with ``"auto"`` resolved.
    sampler_ : Sampler
        The sampler object used, with its settings (a copy of ``sampler``,
        or the defaults of the named one; ``"auto"`` resolved), as
        scikit-learn's meta-estimators keep a fitted ``estimator_``. A fit
        also sets the attributes its sampler reports (HMC's
        ``step_size_`` and ``n_divergent_``, VI's ``elbo_``, ...), which
        exist only after a fit by that sampler: each sampler's class lists
        those it sets, under Notes:
{sampler_classes}.

        .. versionchanged:: 0.2
           ``sampler_`` was the sampler's name, now ``sampler_name_``.
    sampler_name_ : str
        The registered name of the sampler used, e.g. ``"hmc"``.
    rho_ : float
        Batch probability used (1 for the kernels that read the full data).
    lambda_ : float
        ``n / temperature_``.
    n_grad_evals_ : ndarray of shape (n_chains,)
        Gradient evaluations of the full (or batch) potential per chain,
        burn-in included: the cost of the fit. For VI, the Adam steps of its
        one optimisation (on batches), in every entry.
    acceptance_rate_ : ndarray of shape (n_chains,)
        Fraction of accepted proposals after burn-in; only for the samplers
        with a Metropolis-Hastings step (their classes say what it counts).
    sample_stats_ : dict of ndarray of shape (n_chains, n_samples)
        Per draw: ``lp`` (``log pi_lambda`` up to a constant) and what the
        sampler records over the ``thin`` transitions before it (its class
        lists them); what :meth:`to_arviz` puts in ``sample_stats``.
        With ``prior="layer"`` or ``"ard"``, ``precision`` (shape
        ``(n_chains, n_samples, n_groups)``): each draw's group precisions,
        in the order of ``prior_groups_`` (``lp`` then includes their
        Gamma priors); with the regressor's ``temperature="learn"``,
        ``noise_variance`` (on the scale of ``y``): each draw's noise
        variance.
    chain_weights_ : ndarray of shape (n_chains,)
        Weight of each chain's draws in the predictions, summing to 1:
        ``1 / n_chains`` each with ``chain_weights="equal"``, the stacking
        weights with ``"stacking"``.
    pareto_khat_ : ndarray of shape (n_chains,)
        Only with ``chain_weights="stacking"`` (and at least two chains of
        two draws each, else the chains weigh equally): the largest Pareto shape
        ``khat`` over the training examples of each chain's PSIS
        leave-one-out weights (:func:`~skgibbs.diagnostics.psis`). Above
        0.7 some of that chain's leave-one-out densities, which the weights
        rest on, are unreliable (influential examples, or too few draws per
        chain).
    prior_groups_ : ndarray of str of shape (n_groups,)
        Only with ``prior_`` ``"layer"`` or ``"ard"``: the groups of parameters
        that share a precision (``"weights 1"``, ``"biases 1"``, ...,
        ``"output weights"``, ``"output biases"``; with ``"ard"`` the first
        layer's weights as ``"input <name>"``, one per column of ``X``).
    input_relevance_ : ndarray of shape (n_features,)
        Only with ``prior_ == "ard"``: the posterior mean of each input's prior
        scale ``tau_i^(-1/2)`` (the standard deviation of the weights out of
        input ``i``, on standardized inputs), in the order of the columns
        (``feature_names_in_``). Relevant inputs have scales of order
        ``prior_std``; an input the data do not need shrinks toward 0.
        With an ``embedding`` the group of input ``i`` is the first dense
        layer's weights out of its ``d_embedding`` embedded values (its
        embedding's own weights sit in shared groups): the input is
        irrelevant when what its embedding passes on is switched off.
        With ``chain_weights="stacking"`` the draws weigh as in every
        prediction (``chain_weights_``). Drawn by
        :class:`~skgibbs.display.InputRelevanceDisplay`.
    input_relevance_interval_ : ndarray of shape (n_features, 2)
        Only with ``prior_ == "ard"``: the equal-tailed ``confidence_level``
        posterior interval of each input's scale (weighted quantiles under
        ``chain_weights="stacking"``).
    embedding_bins_ : ndarray of shape (n_features,), dtype=object
        Only with the piecewise-linear ``embedding``: the increasing bin
        edges of each input on the scale of ``X`` (quantiles of the training
        inputs; fewer for an input with few distinct values), as
        ``KBinsDiscretizer.bin_edges_``.
    surrogate_scale_, batch_noise_ : float
        Mean over draws and examples of the per-example term ``c l_i(theta)``
        of the sampler's potential (``lambda l_i / n`` on the full data), and
        the standard deviation of the log Metropolis-Hastings ratio that
        two independent Bernoulli(``rho``) batches of those terms cause,
        averaged over the draws (0 for ``rho = 1``). They matter for the
        samplers on Bernoulli batches, whose classes give their terms; with
        ``rho < 1`` sMALA and csMALA raise a
        :class:`~skgibbs.SamplerWarning` when the first exceeds 0.1 or the
        second 2.
"""


_CHAIN_ATTRIBUTES = """\
    run_length_ : dict
        Under ``n_samples="auto"`` with a Markov chain sampler, how the run
        length adapted: ``converged``, ``stopped_by`` (``"checks"``,
        ``"max_grad_evals"`` or ``"max_time"``), ``n_draws`` (the run a
        chain) and ``n_retained`` (kept: ``samples_.shape[1]``),
        ``grads_per_draw``, ``seconds``, ``max_grad_evals``, every check's
        diagnostics (``checks``) and, at a cap, ``needed_draws``,
        ``needed_grad_evals``, ``ess_growth`` and ``ess_growth_measured``
        (False where the worst chain held too few effective draws to
        measure the growth, and the estimate assumed that of chains that
        mix). Absent otherwise.
    within_chain_rhat_ : float
        Largest over the chains and the training inputs of each chain's own
        rank-normalised split R-hat (the chain cut in halves) of the {watched}:
        whether every chain has converged on its own. Above 1.05 the
        :class:`~skgibbs.SamplerWarning` that the chains have not mixed
        names it. NaN with fewer than 8 draws per chain.
    within_chain_ess_ : float
        Smallest over the chains and the training inputs of each chain's
        own bulk effective sample size; below ``100 / n_chains`` the same
        warning names it.
    between_chain_rhat_ : float
        Largest over the training inputs of the nested R-hat (Margossian et
        al., 2024; :func:`~skgibbs.diagnostics.nested_rhat`) of the
        rank-normalised {watched}, every chain its own superchain (each chain
        starts from its own pre-trained network, so no two share a start
        and superchains of one chain are what the fit supports; nested
        R-hat is then the R-hat of the unsplit chains): whether the chains
        agree with each other. Above 1.05 while every chain passes its own
        checks, a :class:`~skgibbs.MultimodalWarning` says that the chains
        sit in different modes. NaN with one chain.
"""


def _sampler_names(kind):
    """The registered samplers of ``kind`` as a docstring's list (so that no docstring lists them by hand)."""
    names = ", ".join(f'``"{name}"``' for name in available_samplers(kind))
    return textwrap.fill(names, width=78, initial_indent=" " * 8, subsequent_indent=" " * 8)


def sampler_classes(kind):
    """The classes of the registered samplers of ``kind``, a docstring's list of roles (from the registry)."""
    roles = ", ".join(
        f":class:`~skgibbs.samplers.{type(get_sampler(name)).__name__}`" for name in available_samplers(kind)
    )
    return textwrap.fill(roles, width=78, initial_indent=" " * 8, subsequent_indent=" " * 8)


def fill_doc(cls):
    """Insert the shared parameter and attribute entries into ``cls.__doc__``.

    The chains' diagnostics name what they watch, from the class's declared
    response (:data:`~skgibbs._response.WATCHED`: the function values of a
    regressor, the classifier's probabilities).
    """
    chain = _CHAIN_ATTRIBUTES.format(watched=WATCHED[cls._traits.response])
    shared = _SHARED_ATTRIBUTES.replace("{sampler_classes}", sampler_classes("dense"))
    cls.__doc__ = (
        cls.__doc__.replace("    {shared_parameters}\n", _SHARED_PARAMETERS.replace("{dense_samplers}", _sampler_names("dense")))
        .replace("    {shared_attributes}\n", shared)
        .replace("    {chain_attributes}\n", chain)
    )
    return cls
