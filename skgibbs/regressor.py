"""GibbsMLPRegressor: a multilayer perceptron sampled from its Gibbs posterior."""

from ._dense import DenseKernelMixin
from ._regression import BaseGibbsRegressor

__all__ = ["GibbsMLPRegressor"]


class GibbsMLPRegressor(DenseKernelMixin, BaseGibbsRegressor):
    r"""Multilayer perceptron regressor sampled from its Gibbs posterior.

    The weights ``theta`` are drawn by Metropolis-adjusted Langevin chains
    from the Gibbs posterior

    .. math::

        \pi_\lambda(\theta) \propto \Pi(\theta) \exp(-\lambda R_n(\theta)),
        \quad R_n(\theta) = \frac1n \sum_{i=1}^n \ell_i(\theta),
        \quad \lambda = n / \mathrm{temperature},

    with ``ell_i(theta) = (y_i - f_theta(x_i))**2`` computed on the
    *standardized* data: every column of ``X`` and ``y`` is centred and
    scaled to unit variance inside ``fit`` (constant columns are only
    centred), so that the defaults work on targets of any scale. All
    predictions are returned on the original scale of ``y``.
    ``temperature = 2 sigma^2`` (sigma^2 on the standardized scale) is the
    Bayesian posterior under Gaussian noise; ``temperature="auto"`` sets it
    from the held-out residuals of the pre-training.

    Each ``sampler`` draws from the following density, exactly:

    - ``"hmc"``: :math:`\pi_\lambda` itself, by Hamiltonian Monte Carlo on
      the full data (:mod:`skgibbs.samplers.hmc`): jittered leapfrog
      trajectories with a diagonal metric, step size adapted per chain during
      burn-in; the default whenever the full data is used.
    - ``"mala"``: :math:`\pi_\lambda` itself (Metropolis-Hastings on the full
      data).
    - ``"smala"`` (paper 000 §2.2, (2.10)), batches
      :math:`Z_i \sim \mathrm{Ber}(\rho)` and risk normalised by
      :math:`n\rho`:
      :math:`\bar\pi(\theta) \propto \Pi(\theta) \prod_i (\rho e^{-\lambda
      \ell_i(\theta)/(n\rho)} + 1 - \rho)`.
    - ``"csmala"`` (Alg. 1 of paper 000, per-example term
      :math:`\lambda'\ell_i/n + \zeta\log\rho`):
      :math:`\tilde\pi(\theta) \propto \Pi(\theta) \prod_i (a e^{-\lambda'
      \ell_i(\theta)/n} + 1 - \rho)` with :math:`a = \rho^{1-\zeta}`
      (:math:`\zeta = 1` is (2.12)) and the compensated
      :math:`\lambda' = \lambda (a + 1 - \rho)/a`, which makes
      :math:`\tilde\pi` agree with :math:`\pi_\lambda` to first order in
      :math:`\lambda'\ell_i/n` (:math:`\zeta = 1`: :math:`\lambda' =
      (2-\rho)\lambda`, Lemma 3). The drift uses the same :math:`\lambda'`.
    - ``"sgld"``: unadjusted Langevin on Bernoulli(rho) batches, which
      targets :math:`\pi_\lambda` only as the step size goes to zero.

    At ``rho = 1`` ``"smala"`` and ``"csmala"`` are ``"mala"``. For
    ``rho < 1`` the surrogates are close to :math:`\pi_\lambda` only while
    :math:`\lambda'\ell_i/n \ll 1`; the fitted ``surrogate_scale_`` reports
    this quantity and a :class:`~skgibbs.SamplerWarning` asks to raise
    ``rho`` or ``temperature`` when it exceeds 0.1. At the Bayesian
    temperature :math:`2\sigma^2` it is about 1/2, so stochastic batches are
    for tempered (larger) temperatures.

    Parameters
    ----------
    hidden_layer_sizes : tuple of int, default=(100, 100)
        Widths of the hidden layers; ``()`` is the linear model.
    activation : {"relu", "tanh", "logistic", "identity"}, default="relu"
        Hidden-layer activation.
    sampler : {"auto", "hmc", "csmala", "mala", "smala", "sgld"}, default="auto"
        Markov kernel (see above). ``"auto"`` is ``"hmc"`` when the full
        data is used (``rho_ == 1``) and ``"csmala"`` when ``rho_ < 1``.
    temperature : float > 0 or "auto", default="auto"
        ``n / lambda`` on the standardized scale; ``"auto"`` is
        ``2 sigma^2`` with ``sigma^2`` the held-out mean squared error of the
        pre-trained networks (2 when ``pretrain_iter=0``).
    rho : float in (0, 1] or "auto", default="auto"
        Bernoulli batch probability. ``"auto"`` is 1 (the full data, exact
        HMC or MALA) whatever ``n``: at the Bayesian temperature the batch
        surrogates are far from the posterior (``surrogate_scale_`` about
        1/2 whatever ``n``), so batches are left to an explicit ``rho < 1``
        with a tempered ``temperature``.
    correction : float >= 0 or "auto", default="auto"
        csMALA's ``zeta``. ``"auto"`` (paper 000 §5) centres the per-example
        term during burn-in, ``zeta log rho = -lambda' Rbar_n / n`` with
        ``Rbar_n`` the full-data risk averaged over chains, recomputed every
        100 steps, then freezes it.
    step_size : float > 0, default=1e-4
        Initial Langevin step ``h`` of the proposal
        ``theta' = theta - h grad U_B(theta) + s xi``, ``U_B`` the batch
        potential. With ``proposal_std="auto"`` it is first rescaled by
        doubling/halving and then adapted during burn-in toward an acceptance
        rate of 0.574 (frozen afterwards).
    proposal_std : float > 0 or "auto", default="auto"
        ``s``. ``"auto"`` is ``sqrt(2 h)`` (standard MALA, step size
        adapted); a float gives the decoupled proposal of paper 000 §5, with
        ``step_size`` and ``proposal_std`` both fixed.
    n_samples : int, default=175
        Draws kept per chain.
    burn_in : int or "auto", default="auto"
        Transitions discarded (and used for adaptation) per chain; ``"auto"``
        is 250 for HMC and 1000 for the Langevin kernels. On the diabetes data
        (442 rows, the default 10-100-100-1 network) a default HMC fit (250
        warm-up transitions, 175 draws per chain) spends about 6500
        gradients per chain (the four chains batched, 3.5 ms a batched
        gradient) after 6 s of pre-training: 27 to 32 s on one core; R-hat
        of the function values 1.03, bulk ESS 150 to 250 (three seeds). The
        cost of a gradient grows with ``n`` times the number of weights, and
        the leapfrog steps per transition (at most 64) with the
        concentration of the posterior: see ``benchmarks/bench_large_n.py``.
    thin : int or "auto", default="auto"
        Keep every ``thin``-th state after burn-in; ``"auto"`` is 1 for HMC
        (whose draws are nearly independent) and 10 for the Langevin
        kernels.
    n_chains : int, default=4
        Independent chains, each started from its own pre-trained network.
        HMC adapts its trajectory length across them.
    target_accept : float in (0, 1) or "auto", default="auto"
        Acceptance rate aimed at by the step-size adaptation: ``"auto"`` is
        0.8 for HMC (Stan's default) and 0.574 for the Langevin kernels.
    metric : {"prior", "adaptive", "identity"}, default="prior"
        HMC's diagonal metric (inverse mass): the prior variances, so that
        the sampler moves in the coordinates the prior makes isotropic;
        ``"adaptive"`` re-estimates it from the warm-up draws in Stan's
        windows; ``"identity"``.
    trajectory_length : float > 0 or "auto", default="auto"
        HMC's integration time ``T``: transition ``t`` runs ``ceil(u_t T /
        h)`` leapfrog steps (at most 64), ``u_t`` a quasi-random jitter in
        (0, 1). ``"auto"`` is ``T = pi / 2`` in the coordinates of the metric,
        a quarter period of a direction the data leave at its prior scale
        (measured against the ChEES criterion of Hoffman, Radul & Sountsov
        (2021) in ``benchmarks/bench_mixing.py``).
    restart_after : int or None, default=100
        After this many rejections in a row the current state's batch is
        redrawn (paper 000 §5). This perturbs the target slightly; restarts
        are counted in ``n_restarts_``. ``None`` disables it. Only active
        for ``rho < 1``.
    pretrain_iter : int, default=1000
        Adam steps (learning rate 1e-3) on 80% of the data before sampling,
        keeping the iterate with the best error on the other 20%. 0 starts
        the chains at the random initialisation.
    weight_bound : float or None, default=None
        ``B`` of the uniform prior box ``[-B, B]^Q`` (proposals outside are
        rejected); None is no box.
    prior_std : float, "auto" or None, default="auto"
        Standard deviation of a Gaussian prior on the flat parameters (on
        the standardized scale). ``"auto"`` gives each weight and bias
        ``1 / sqrt(n_in)`` of its layer, so that every unit's pre-activation
        has prior variance of order one; a float is the same for all; None
        is the flat prior (with ``weight_bound``, the uniform box of paper
        000).
    confidence_level : float in (0, 1), default=0.95
        Level of ``credible_radius_`` and the default of
        :meth:`predict_interval`.
    n_jobs : int, default=None
        joblib workers running chains in parallel when the network is too
        large for chains to be batched in one process.
    device : str, default="cpu"
        torch device for sampling (``"cuda"`` where available). Fitted
        state is NumPy either way.
    random_state : int, RandomState instance or None, default=None
        Seeds one ``torch.Generator`` per chain. The global torch RNG is
        never used.
    verbose : int, default=0
        Print progress to stderr.

    Attributes
    ----------
    samples_ : ndarray of shape (n_chains, n_samples, n_params)
        Posterior draws of the flat parameters (scikit-learn's
        ``MLPRegressor`` order: per layer ``coefs_[l]`` row-major, then
        ``intercepts_[l]``), for the standardized data.
    n_features_in_ : int
    n_train_ : int
        Number of training examples (the ``log(n)`` of :meth:`credible_sets`).
    temperature_ : float
        Temperature used (standardized scale).
    sampler_ : str
        The kernel used (``"auto"`` resolved).
    rho_ : float
        Batch probability used.
    lambda_ : float
        ``n / temperature_``.
    lambda_prime_ : float
        Inverse temperature of the batch terms (``lambda'`` for csMALA).
    correction_ : float
        Frozen ``zeta`` (0 unless csMALA with ``rho < 1``).
    n_divergent_ : ndarray of shape (n_chains,)
        Divergent HMC transitions after burn-in (energy error above 1000 or
        a non-finite trajectory; always 0 for the Langevin kernels). Any
        divergence raises a :class:`~skgibbs.SamplerWarning`.
    trajectory_length_ : float or None
        Frozen HMC integration time ``T`` (None for the Langevin kernels).
    n_grad_evals_ : ndarray of shape (n_chains,)
        Gradient evaluations of the full (or batch) potential per chain,
        burn-in included: the cost of the fit.
    sample_stats_ : dict of ndarray of shape (n_chains, n_samples)
        Per draw, over the ``thin`` transitions before it:
        ``acceptance_rate``, ``step_size``, ``lp`` (``log pi_lambda`` up to
        a constant) and, for HMC, ``diverging``, ``n_steps`` (leapfrog
        steps) and ``energy_error``; what :meth:`to_arviz` puts in
        ``sample_stats``.
    step_size_, proposal_std_ : ndarray of shape (n_chains,)
        Frozen proposal parameters: the Langevin ``h`` and ``s``, or HMC's
        leapfrog step (in the coordinates of its metric; ``proposal_std_`` is
        NaN for HMC).
    acceptance_rate_ : ndarray of shape (n_chains,)
        Fraction of accepted proposals after burn-in.
    n_restarts_ : ndarray of shape (n_chains,)
    accepted_batch_sizes_ : ndarray of shape (n_accepted,)
        ``|Z|_1`` of every accepted step after burn-in (paper 000 Fig. 4);
        empty for ``rho = 1``.
    batch_noise_ : float
        Standard deviation of the log Metropolis-Hastings ratio caused by
        drawing two independent Bernoulli batches,
        ``sqrt(2 rho (1 - rho) sum_i (c l_i + d)^2)`` averaged over the draws
        (0 for ``rho = 1``). Above about 2 the chains stick to favourable
        batches and a :class:`~skgibbs.SamplerWarning` is raised.
    surrogate_scale_ : float
        Mean over draws and examples of the per-example term ``c l_i(theta)``
        of the batch potential: ``lambda' l_i / n`` for csMALA, ``lambda l_i /
        (n rho)`` for sMALA (and ``lambda l_i / n`` otherwise).
    noise_variance_ : float
        ``sigma^2``: the posterior mean of the training risk,
        ``E_theta[R_n(theta)]``, on the scale of ``y``. In the Gaussian linear
        model at temperature ``2 sigma^2`` with flat prior it is unbiased for
        the noise variance (the residual sum of squares plus the posterior
        spread, i.e. equipartition). Used by ``return_std``, predictive
        intervals, :meth:`sample_y` and the log-likelihood.
    rhat_ : float
        Largest rank-normalised split R-hat (Vehtari et al., 2021) of the
        function values ``f_theta(x_i)`` at the training inputs, over the
        chains (:func:`skgibbs.diagnostics.rhat`). Above 1.05 a
        :class:`~skgibbs.SamplerWarning` says that the chains have not mixed
        (Vehtari et al. recommend 1.01 for final results). NaN with fewer
        than 8 draws per chain.
    ess_ : float
        Smallest bulk effective sample size of those function values
        (:func:`skgibbs.diagnostics.effective_sample_size`); below 100 a
        :class:`~skgibbs.SamplerWarning` is raised.
    credible_radius_ : float
        ``tau_alpha`` of paper 000 (3.4) at ``confidence_level`` on the
        training inputs (scale of ``y``).
    credible_radius_params_ : float
        Quantile of ``|theta - theta_bar|_2`` over the draws (parameter level).
    lfv_ : float
        Functional variance ``sum_i Var_theta[log N(y_i; f_theta(x_i),
        sigma^2)]`` over the draws (paper 004 (13)).
    train_loss_ : float
        ``(1/n) sum_i (y_i - fbar(x_i))^2 / (2 sigma^2)`` with ``fbar`` the
        posterior mean.
    waic_ : float
        ``train_loss_ + lfv_ / n``: the Langevin-WAIC of paper 004 §4.3 per
        sample (on the scale of its Table 7). Its training loss divides by
        the model's own ``sigma^2``, so it compares fits on one data set only
        through ``lfv_``: rank models by ``generalization_loss_``.
    generalization_loss_ : float
        Watanabe's WAIC per sample for the tempered posterior,
        ``-(1/n) [sum_i log mean_theta p(y_i | theta) - beta sum_i
        Var_theta log p(y_i | theta)]`` with ``p = N(f_theta(x_i),
        noise_variance_)`` and ``beta = 2 sigma^2 / temperature_`` (the
        power of this likelihood in the Gibbs posterior, ``sigma^2`` on the
        standardized scale; 1 at the Bayesian temperature): an estimate of
        the negative log predictive density of a new example (nats, on the
        scale of ``y``). Lower is better; it is what
        :class:`~skgibbs.model_selection.CriterionGridSearch` ranks with
        ``criterion="waic"``.
    waic_tempering_ : float
        The ``beta`` of ``generalization_loss_``.

    See Also
    --------
    sklearn.neural_network.MLPRegressor : the same network, trained.
    sklearn.linear_model.BayesianRidge : ``return_std`` in the same sense.

    Notes
    -----
    One transition (Alg. 1 (c) of paper 000): draw ``Z' ~ Ber(rho)^n``,
    propose ``theta' ~ N(theta - h grad U_Z(theta), s^2 I)``, accept with
    probability ``min(1, exp(U_Z(theta) - U_Z'(theta') + log q(theta |
    theta') - log q(theta' | theta)))`` where ``U_Z(theta) = c sum_i Z_i
    l_i(theta) + d |Z|_1 - log Pi(theta)`` (``c = lambda'/n``, ``d = zeta log
    rho`` for csMALA). The value and gradient of the current point are cached,
    so a step costs one forward and one backward pass on the batch.

    One HMC transition: draw ``p ~ N(0, M)`` with ``M = diag(1 / m)`` (``m``
    the prior variances by default), run ``L = ceil(u T / h)`` leapfrog steps
    on ``H = U(theta) + p' diag(m) p / 2`` with ``U = lambda R_n - log Pi``
    and accept the end point with probability ``min(1, exp(H_0 - H_L))``;
    ``L`` full-data gradients per transition.

    References
    ----------
    .. [1] Bieringer, Kasieczka, Steffen, Trabs. The surrogate
       Gibbs-posterior of a corrected stochastic MALA.
    .. [2] Okuno, Yano. A generalization gap estimation for
       overparameterized models via the Langevin functional variance.
    .. [3] Neal. MCMC using Hamiltonian dynamics. Handbook of Markov Chain
       Monte Carlo, 2011.
    .. [4] Hoffman, Gelman. The No-U-Turn sampler, JMLR 2014 (dual averaging).
    .. [5] Vehtari, Gelman, Simpson, Carpenter, Bürkner. Rank-normalization,
       folding, and localization: an improved R-hat, Bayesian Analysis 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from skgibbs import GibbsMLPRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (60, 1))
    >>> y = np.sin(3 * X[:, 0]) + 0.1 * rng.normal(size=60)
    >>> reg = GibbsMLPRegressor(hidden_layer_sizes=(16,), n_samples=20, burn_in=100,
    ...                         pretrain_iter=200, random_state=0).fit(X, y)
    >>> reg.samples_.shape
    (4, 20, 49)
    >>> y_pred, y_pis = reg.predict_interval(X[:3], confidence_level=0.9)
    >>> y_pis.shape
    (3, 2, 1)
    """

    def __init__(
        self,
        hidden_layer_sizes=(100, 100),
        activation="relu",
        *,
        sampler="auto",
        temperature="auto",
        rho="auto",
        correction="auto",
        step_size=1e-4,
        proposal_std="auto",
        n_samples=175,
        burn_in="auto",
        thin="auto",
        n_chains=4,
        target_accept="auto",
        metric="prior",
        trajectory_length="auto",
        restart_after=100,
        pretrain_iter=1000,
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
        self.sampler = sampler
        self.temperature = temperature
        self.rho = rho
        self.correction = correction
        self.step_size = step_size
        self.proposal_std = proposal_std
        self.n_samples = n_samples
        self.burn_in = burn_in
        self.thin = thin
        self.n_chains = n_chains
        self.target_accept = target_accept
        self.metric = metric
        self.trajectory_length = trajectory_length
        self.restart_after = restart_after
        self.pretrain_iter = pretrain_iter
        self.weight_bound = weight_bound
        self.prior_std = prior_std
        self.confidence_level = confidence_level
        self.n_jobs = n_jobs
        self.device = device
        self.random_state = random_state
        self.verbose = verbose
