"""GibbsMLPRegressor: a multilayer perceptron sampled from its Gibbs posterior."""

from numbers import Real

import numpy as np

from ._compat import Interval, StrOptions
from ._dense import DENSE_CONSTRAINTS, fill_doc
from ._noise_choice import HETEROSCEDASTIC_ROWS
from ._base_regressor import BaseGibbsRegressor
from .plan import EstimatorTraits

__all__ = ["GibbsMLPRegressor", "HETEROSCEDASTIC_ROWS"]

@fill_doc
class GibbsMLPRegressor(BaseGibbsRegressor):
    r"""Multilayer perceptron regressor sampled from its Gibbs posterior.

    The weights ``theta`` are drawn by Markov chains (Hamiltonian Monte
    Carlo by default, or a Langevin kernel; ``sampler="vi"`` fits a
    variational approximation instead) from the Gibbs posterior

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
    - ``"vi"`` (paper 002): no chain. A mean-field Gaussian
      :math:`q = \prod_j N(\mu_j, \sigma_j^2)` maximises the tempered ELBO
      :math:`-\lambda E_q R_n - \eta\,\mathrm{KL}(q \| \Pi)`, whose
      maximiser over all distributions is :math:`\pi_{\lambda/\eta}`
      (``kl_weight`` sets :math:`\eta`); ``n_chains`` groups of
      ``n_samples`` independent draws of ``q`` then stand in for the chains.
      An approximation, documented as one: ``q`` ignores every correlation
      between weights, and R-hat and ESS of independent draws say nothing
      about how far ``q`` is from :math:`\pi_\lambda`.

    At ``rho = 1`` ``"smala"`` and ``"csmala"`` are ``"mala"``. For
    ``rho < 1`` the surrogates are close to :math:`\pi_\lambda` only while
    :math:`\lambda'\ell_i/n \ll 1`; the fitted ``surrogate_scale_`` reports
    this quantity and a :class:`~skgibbs.SamplerWarning` asks to raise
    ``rho`` or ``temperature`` when it exceeds 0.1. At the Bayesian
    temperature :math:`2\sigma^2` it is about 1/2, so stochastic batches are
    for tempered (larger) temperatures.

    Parameters
    ----------
    hidden_layer_sizes : int, tuple of int or "auto", default="auto"
        Widths of the hidden layers (an int: one hidden layer of that
        width, as in scikit-learn's ``MLPRegressor``); ``()`` is the linear model.
        ``"auto"``: two hidden layers of 16 for at most 1000 training rows
        (the network of the Microcanonical Langevin Ensembles, measured
        against 100-100 on the ``uq`` benchmark's six tables), of 100
        beyond; the fitted ``spec_.hidden_layer_sizes`` says which.
    activation : {"relu", "tanh", "logistic", "identity"}, default="relu"
        Hidden-layer activation.

    temperature : float > 0, "auto", "learn" or "plug-in", default="auto"
        ``n / lambda`` on the standardized scale. ``"learn"``: the
        Bayesian posterior with the noise learned, the noise precision
        ``1 / sigma^2`` (standardized scale) a parameter with the Gamma prior
        of shape ``prior_shape`` and mean 1, sampled with the weights (an
        exact Gibbs step between HMC transitions; integrated out of MCLMC's
        non-centred target and drawn given each draw's weights), so that
        each draw has its own noise variance
        (``sample_stats_["noise_variance"]``), which the predictive
        intervals, :meth:`sample_y` and the criteria use; needs a sampler
        that samples it (``"mclmc"``, ``"adjusted_mclmc"``, ``"hmc"``).
        ``"auto"``: ``"learn"`` where the sampler samples the noise (and no
        ``weight_bound`` box or flat ``prior_std=None`` is set), else the
        plug-in ``2 sigma^2`` with ``sigma^2`` the held-out mean squared
        error of the pre-trained networks (2 when ``pretrain_iter=0``);
        ``temperature_source_`` says which. ``"plug-in"``: that plug-in
        under every sampler (the default before the noise was learned). A
        float is the tempered posterior at that temperature.
    noise : {"auto", "homoscedastic", "heteroscedastic", "student"}, default="auto"
        The noise model. ``"auto"``: chosen from the data, at any size.
        Each noise model the settings allow is pre-trained briefly (Adam
        at 1e-3 until the held-out loss levels off, capped at
        ``pretrain_iter``) on the pre-training's 80% of the rows, and
        scored by the log-likelihood per held-out row of its networks'
        predictive mixture on the other 20%, each network's noise level
        fitted on those rows (for one variance, its held-out mean squared
        error). The rule prefers the simpler model: starting from
        ``"homoscedastic"``, ``"heteroscedastic"`` and then ``"student"``
        replace the choice only if their held-out log-likelihood per row
        is higher by more than one standard error of the paired per-row
        differences (:data:`skgibbs._noise_choice.MARGIN_SE`; the
        estimator guide says why one). ``noise_`` says which was chosen
        and ``noise_selection_`` holds the evidence.
        ``temperature="plug-in"``, or a float (twice one noise variance),
        allows only ``"homoscedastic"``; with
        ``pretrain_iter=0``, or under 50 held-out rows (about 250 training
        rows), there is no evidence and ``"auto"`` is ``"student"`` from
        :data:`~skgibbs.regressor.HETEROSCEDASTIC_ROWS` (10,000) rows on,
        ``"homoscedastic"`` below, as measured on the ``tabular`` and
        ``uq`` benchmarks. The choice costs three short pre-trainings,
        which the fit does not reuse (its own pre-training pairs two
        learning rates).
        ``"homoscedastic"``: one noise variance for every
        input (learned or plug-in, as ``temperature`` says).
        ``"heteroscedastic"``: a noise variance that varies with the inputs,
        the network's second output ``s_theta(x)`` its logarithm
        (standardized scale), so that the loss is twice the negative
        Gaussian log-density less ``log 2 pi``,
        ``ell_i = (y_i - f_theta(x_i))^2 exp(-s_theta(x_i)) + s_theta(x_i)``
        (Nix and Weigend, 1994), sampled with the rest of the network under
        every sampler. ``temperature="auto"`` (or ``"learn"``) is then 2, the
        Bayesian posterior of this likelihood; a float tempers it (``2 /
        temperature`` is the power of the likelihood); ``"plug-in"`` has
        nothing to plug in and is refused. Predictions, intervals,
        :meth:`sample_y`, the log-likelihood and the criteria use each
        draw's variance at each input. For data whose noise grows or shrinks
        with the inputs (skewed amounts, counts, wages).
        ``"student"``: the same two outputs read as the location and the log
        squared scale of a Student-t noise with
        :data:`~skgibbs.model.STUDENT_DF` (5) degrees of freedom, the loss
        twice its negative log-density, ``ell_i = (nu + 1) log(1 + (y_i -
        f_theta(x_i))^2 exp(-s_theta(x_i)) / nu) + s_theta(x_i)``: a noise
        whose scale varies with the inputs and whose tails are heavier than
        the normal's (residuals with outliers, log prices). Everything said
        of ``"heteroscedastic"`` holds, with the t in place of the normal;
        the variances reported (``return_std``, :meth:`predict_noise_samples`,
        ``noise_variance_``) are the t's, ``nu / (nu - 2)`` times its
        squared scale.
    rho : float in (0, 1] or "auto", default="auto"
        Bernoulli batch probability. ``"auto"`` is 1 (the full data, exact
        HMC or MALA) whatever ``n``: at the Bayesian temperature the batch
        surrogates are far from the posterior (``surrogate_scale_`` about
        1/2 whatever ``n``), so batches are left to an explicit ``rho < 1``
        with a tempered ``temperature``.

    {shared_parameters}

    Attributes
    ----------
    samples_ : ndarray of shape (n_chains, n_samples, n_params)
        Posterior draws of the flat parameters (scikit-learn's
        ``MLPRegressor`` order: per layer ``coefs_[l]`` row-major, then
        ``intercepts_[l]``), for the standardized data.
    n_features_in_ : int
        Columns of ``X`` (their names in ``feature_names_in_`` when ``X``
        has string column names, as in scikit-learn).
    n_train_ : int
        Rows of the training data.
    x_mean_, x_scale_ : ndarray of shape (n_features,)
        The (weighted) mean and standard deviation of every column of ``X``,
        which standardize it (scale 1 for a constant column).
    y_mean_, y_scale_ : float
        The same for ``y``; predictions are returned on its scale.
    sample_weight_sum_ : float
        ``n_w``, the sum of ``sample_weight`` (``n_train_`` without weights):
        the number of examples the risk counts, ``lambda_ * temperature_``
        (the ``log(n)`` of :meth:`credible_sets`).
    temperature_ : float
        Temperature used (standardized scale); with a learned noise,
        ``2 sigma^2`` at the posterior mean of the noise variance.
    temperature_source_ : {"learned", "plug-in", "given"}
        Where ``temperature_`` came from: the noise variance sampled with
        the weights (``temperature="learn"``, or ``"auto"`` under a sampler
        that samples it, or ``noise="heteroscedastic"`` or ``"student"``, whose variances
        are the network's), the plug-in twice the pre-training's held-out
        loss (``"auto"`` elsewhere), or the float given.
    noise_ : {"homoscedastic", "heteroscedastic", "student"}
        The noise model of the fit: ``noise``, or what ``noise="auto"``
        chose on the training rows.
    noise_selection_ : dict or None
        Why ``noise="auto"`` chose ``noise_`` (None when ``noise`` is
        given): ``candidates`` (those the settings allow), ``winner``,
        ``rule``, ``margin_se``, ``reason`` (held-out evidence, or why
        there was none) and, with evidence, ``held_out_log_likelihood``
        (per candidate, per held-out row, nats on the scale of ``y``),
        ``differences`` and ``standard_errors`` (per pair ``"richer -
        simpler"``, the mean and standard error of the paired per-row
        differences) and ``n_held_out``.
    {shared_attributes}
    noise_variance_ : float
        ``sigma^2``: the posterior mean of the training risk,
        ``E_theta[R_n(theta)]``, on the scale of ``y``. In the Gaussian linear
        model at temperature ``2 sigma^2`` with flat prior it is unbiased for
        the noise variance (the residual sum of squares plus the posterior
        spread, i.e. equipartition). Used by ``return_std``, predictive
        intervals, :meth:`sample_y` and the log-likelihood. With a learned
        noise, the posterior mean of the noise variance,
        whose draws (``sample_stats_["noise_variance"]``) are used instead;
        with ``noise="heteroscedastic"`` or ``"student"``, the posterior mean
        of the noise variance over the training inputs, each draw's
        variance at each input being used instead
        (:meth:`predict_noise_samples`).
    rhat_ : float
        Largest rank-normalised split R-hat (Vehtari et al., 2021) of the
        function values ``f_theta(x_i)`` at the training inputs, over the
        chains (:func:`skgibbs.diagnostics.rhat`). Above 1.05 a
        :class:`~skgibbs.SamplerWarning` says that the chains have not mixed,
        or, when every chain has converged on its own, a
        :class:`~skgibbs.MultimodalWarning` that they sit in different modes
        (Vehtari et al. recommend 1.01 for final results). NaN with fewer
        than 8 draws per chain, and for the samplers whose draws are
        independent (VI, SMC), as are ``ess_`` and the within- and
        between-chain diagnostics.
    ess_ : float
        Smallest bulk effective sample size of those function values
        (:func:`skgibbs.diagnostics.effective_sample_size`); below 100 a
        :class:`~skgibbs.SamplerWarning` is raised.
    {chain_attributes}
    credible_radius_ : float
        ``tau_alpha`` of paper 000 (3.4) at ``confidence_level`` on the
        training inputs (scale of ``y``).
    credible_radius_params_ : float
        Quantile of ``|theta - theta_bar|_2`` over the draws (parameter level).
    generalization_loss_ : float
        **The criterion to rank models by** (lower is better): Watanabe's
        WAIC per example for the tempered posterior, an estimate of the
        generalization loss, the negative log predictive density of a new
        example (nats, on the scale of ``y``):
        ``-(1/n) [sum_i log mean_theta p(y_i | theta) - beta sum_i
        Var_theta log p(y_i | theta)]`` with ``p = N(f_theta(x_i),
        noise_variance_)`` (the draw's variance at ``x_i`` with
        ``noise="heteroscedastic"``, its t with ``"student"``, where ``beta = 2 / temperature_``) and
        ``beta = 2 sigma^2 / temperature_`` (the
        power of this likelihood in the Gibbs posterior, ``sigma^2`` on the
        standardized scale; 1 at the Bayesian temperature, where ``n``
        times it is ArviZ's ``-elpd_waic``). What
        :class:`~skgibbs.model_selection.CriterionGridSearch` ranks with
        ``criterion="waic"`` and :func:`~skgibbs.metrics.waic_scorer`
        negates.
    waic_tempering_, lfv_, train_loss_ : float
        The ``beta`` of ``generalization_loss_``; the functional variance
        ``sum_i Var_theta[log N(y_i; f_theta(x_i), sigma^2)]`` over the
        draws (paper 004 (13)), the penalty of ``generalization_loss_``
        before the factor ``beta / n``; and ``(1/n) sum_i (y_i -
        fbar(x_i))^2 / (2 sigma^2)`` with ``fbar`` the posterior mean.
    langevin_waic_ : float
        ``train_loss_ + lfv_ / n``: the Langevin WAIC of paper 004 §4.3 per
        example, on the scale of its Table 7 (no Gaussian normalising
        constant, divided by this fit's own ``sigma^2``), for comparison
        with that paper. Its first term is at most 1/2 whatever the fit,
        so it tells fits apart mostly through ``lfv_`` and favours the most
        regularised one: not a criterion to rank by.

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

    _parameter_constraints = {
        **DENSE_CONSTRAINTS,
        "temperature": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto", "learn", "plug-in"})],
        "noise": [StrOptions({"auto", "homoscedastic", "heteroscedastic", "student"})],
    }

    def __init__(
        self,
        hidden_layer_sizes="auto",
        activation="relu",
        *,
        embedding=None,
        sampler="auto",
        temperature="auto",
        noise="auto",
        rho="auto",
        n_samples="auto",
        max_grad_evals="auto",
        max_time=None,
        burn_in="auto",
        thin="auto",
        n_chains=4,
        chain_weights="equal",
        pretrain_iter=3000,
        weight_bound=None,
        prior_std="auto",
        prior="auto",
        prior_shape=0.5,
        confidence_level=0.95,
        n_jobs=None,
        device="cpu",
        random_state=None,
        verbose=0,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.embedding = embedding
        self.sampler = sampler
        self.temperature = temperature
        self.noise = noise
        self.rho = rho
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
        self.prior = prior
        self.prior_shape = prior_shape
        self.confidence_level = confidence_level
        self.n_jobs = n_jobs
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    _traits = EstimatorTraits(hierarchical_sampler=True, noise_model=True)

    def _noise_state(self, precision, stats):
        """Each draw's noise variance on the scale of ``y`` in ``sample_stats_``; ``temperature_`` and ``lambda_`` at their mean."""
        variance = 1.0 / precision  # standardized scale
        temperature = float(2.0 * variance.mean())
        return {
            "sample_stats_": {**stats, "noise_variance": variance * self.y_scale_**2},
            "temperature_": temperature,
            "lambda_": self.sample_weight_sum_ / temperature,
        }

    def _data_log_density(self, loss_sum, n):
        if "noise_variance" not in self.sample_stats_:
            return super()._data_log_density(loss_sum, n)
        # the Gaussian likelihood of the standardized targets at each draw's precision s, and s's Gamma prior
        s = (self.y_scale_**2 / self.sample_stats_["noise_variance"]).reshape(-1)
        a = float(self.prior_shape)
        return -0.5 * s * loss_sum + 0.5 * n * np.log(s) + (a - 1.0) * np.log(s) - a * s
