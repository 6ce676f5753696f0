"""GibbsMLPRegressor: a multilayer perceptron sampled from its Gibbs posterior.

A regressor whose network has two outputs (``noise="heteroscedastic"``)
reads them as the mean ``f`` and the log-variance ``s`` of ``y`` (standardized
scale, the ``"gaussian"`` loss of :data:`skgibbs.model.LOSSES`): every draw
then has its own noise variance at every input, which the predictive
distribution, the log-likelihood and the criteria use in place of
``noise_variance_``. With the ``"student"`` loss (``noise="student"``) the
outputs are the location and the log squared scale of a Student-t noise of
:data:`~skgibbs.model.STUDENT_DF` degrees of freedom; the variances the
regressor reports and passes around are the t's (``nu / (nu - 2)`` times
its squared scale), and the likelihood, the intervals and the predictive
draws are the t's. What differs between the three noise models is in
:class:`~skgibbs._noise_model.NoiseModel` (``_noise()``).

:class:`~skgibbs.SparseGibbsMLPRegressor` is this regressor under the
mixing prior: it shares the predictions, the intervals and the criteria.
"""

from numbers import Real

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array, column_or_1d

from .. import _chunks
from ._base import BaseGibbsMLP, draws_mean, draws_quantiles
from ._chain_weights import chain_loo
from .._compat import Interval, StrOptions
from ._dense import DENSE_CONSTRAINTS, fill_doc
from .._levels import check_level, check_levels, mixture_quantiles
from .._mixing import chunk_mixing, mixing_state
from .._noise_choice import HETEROSCEDASTIC_ROWS
from .._noise_model import NoiseModel
from ..credible import credible_sets_of, parameter_radius, posterior_quantile
from ..criteria import langevin_waic, waic
from ..criteria._waic import waic_from_pointwise
from ..model import LOG_VARIANCE_BOUND
from ..plan import REGRESSOR_CAP_FACTOR, REGRESSOR_MEDIUM_DATA_ROWS, EstimatorTraits

__all__ = ["GibbsMLPRegressor", "HETEROSCEDASTIC_ROWS"]


@fill_doc
class GibbsMLPRegressor(RegressorMixin, BaseGibbsMLP):
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
        against 100-100 on the ``uq`` benchmark's six tables), of 50 up to
        5000 (:data:`~skgibbs.plan.REGRESSOR_MEDIUM_DATA_ROWS`), of 100
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
        :data:`~skgibbs.estimators.HETEROSCEDASTIC_ROWS` (10,000) rows on,
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

    _traits = EstimatorTraits(
        hierarchical_sampler=True,
        noise_model=True,
        cap_factor=REGRESSOR_CAP_FACTOR,
        medium_data_rows=REGRESSOR_MEDIUM_DATA_ROWS,
    )

    def _check_response(self, y):
        return column_or_1d(check_array(y, ensure_2d=False, dtype=np.float64, input_name="y"))

    def _store(self, result, spec):
        super()._store(result, spec)
        path = result.info.get("temperature_path", {})
        if "generalization_loss" in path:
            # the sampler's stage criteria are on the standardized scale of the potential
            path = {**path, "generalization_loss": path["generalization_loss"] + np.log(self.y_scale_)}
            if "noise_variance" in path:  # one noise variance (the squared loss), not one per input
                path["noise_variance"] = path["noise_variance"] * self.y_scale_**2
            self._set_fitted({"temperature_path_": path})

    def _noise_draws(self):
        """Each draw's noise variance ``(S,)`` (scale of ``y``) when the noise is learned, else None."""
        draws = getattr(self, "sample_stats_", {}).get("noise_variance")
        return None if draws is None else draws.reshape(-1)

    def _noise_of_draws(self):
        """The noise variance of each draw as a column ``(S, 1)``, or the fitted ``noise_variance_``."""
        draws = self._noise_draws()
        return self.noise_variance_ if draws is None else draws[:, None]

    def _noise(self):
        """The fitted :class:`~skgibbs._noise_model.NoiseModel`: one variance for a network of one output, else
        the one whose loss the potential took."""
        return NoiseModel(self.noise_) if self.spec_.n_outputs == 2 else NoiseModel()

    def _output_chunks(self, X, width, kept=None):
        # a mean and log-variance network's outputs are two (S, rows) arrays, its noise variances a third
        return super()._output_chunks(X, width + (3 if self._noise().varies else 0), kept)

    def _mean_and_noise(self, G):
        """``(F, V)`` of network outputs ``G`` (standardized): ``f`` on the scale of ``y`` and the noise variances.

        ``V`` is ``(S, rows)`` with a varying noise, else the noise of the
        draws (:meth:`_noise_of_draws`).
        """
        model = self._noise()
        if not model.varies:
            return G * self.y_scale_ + self.y_mean_, self._noise_of_draws()
        s = np.clip(G[..., 1], -LOG_VARIANCE_BOUND, LOG_VARIANCE_BOUND)
        variance = self.y_scale_**2 * model.variance_per_squared_scale  # of a standardized scale of 1
        return G[..., 0] * self.y_scale_ + self.y_mean_, np.exp(s) * variance

    def _predictive_chunks(self, X, width):
        """``(rows, F, V)`` chunk after chunk: :meth:`_mean_and_noise` of the outputs at ``X[rows]``."""
        for rows, G in self._output_chunks(X, width):
            yield (rows, *self._mean_and_noise(G))

    def _posterior_predictive(self, X, random_state):
        """``f`` (function values) and ``y`` (``f`` plus each draw's noise) of every draw at ``X``, ``(S, n)``."""
        rng, model = check_random_state(random_state), self._noise()
        F, V = np.empty((self._n_draws(), X.shape[0])), None
        for rows, G, noise in self._predictive_chunks(X, 2):
            F[:, rows] = G
            if model.varies:
                V = np.empty_like(F) if V is None else V
                V[:, rows] = noise
        scale = model.scale(self._noise_of_draws() if V is None else V)
        Y = F + scale * model.standard(rng, F.shape)
        return {"f": F, "y": Y}, {"f": ["obs"]}

    def _log_likelihood(self, X, y):
        out, model = np.empty((self._n_draws(), X.shape[0])), self._noise()
        for rows, F, noise in self._predictive_chunks(X, 4):
            out[:, rows] = model.log_likelihood(y[rows], F, noise)
        return out

    #: float64 ``(S, rows)`` arrays a chunk of the summaries holds at once (R-hat and ESS the most)
    _summary_width = 16

    def _summarise(self, X, y, sample_weight=None):
        """The summaries of the draws on the training data, in chunks of rows (:mod:`skgibbs._chunks`).

        The first pass over the rows gives the per-draw sums (losses,
        residuals, spread about the posterior mean) and the per-row results
        (posterior mean, R-hat, ESS). The pointwise WAIC terms (and with
        ``chain_weights="stacking"`` the chains' leave-one-out densities)
        come from the same pass where the likelihood of a draw is known
        from its outputs alone: a learned noise (each draw's variance) or
        one per input. With one plug-in variance they need
        ``noise_variance_``, a mean over every row, and take a second pass,
        for which the first keeps the network outputs of its first chunks,
        up to half of :data:`~skgibbs._chunks.CHUNK_BYTES` (in float32,
        which holds them exactly), so that the second evaluates the network
        only on the other rows. Stacked chains take one more pass, for the
        radius about their weighted posterior mean.

        With ``sample_weight`` every sum over the rows is weighted and ``n``
        is the weights' sum, as for the rows repeated by integer weights.
        """
        w, n = sample_weight, self.sample_weight_sum_
        one_pass = self._noise_draws() is not None or self._noise().varies
        kept, sums, fbar, pointwise = self._first_pass(X, y, criteria=one_pass, sample_weight=w)
        self._record_losses(sums["loss"], sums["loss_square"], n)
        # the posterior mean of the training risk, or of the learned noise variance (over the inputs too)
        noise = self._noise_draws()
        if noise is None:
            noise = (sums["noise"] if self._noise().varies else sums["residual"]) / n
        self._set_fitted({"noise_variance_": float(noise.mean())})
        if pointwise is None:
            pointwise = self._criteria_pass(X, y, kept)
        loo = self._record_criteria(y, fbar, pointwise, w)
        self._weigh_chains(*loo, sample_weight=w)
        weights = self._draw_weights()
        spread = sums["spread"]
        if weights is not None:
            # the same mean, and the radius about the posterior mean, of the weighted draws
            self._set_fitted({"noise_variance_": float(weights @ noise)})
            spread = self._spread(X, w)[0]
        self._set_fitted(
            {
                "credible_radius_": _radius(spread, n, self.confidence_level, weights),
                "credible_radius_params_": parameter_radius(
                    self.samples_.reshape(-1, self.samples_.shape[-1]), self.confidence_level, weights=weights
                ),
            }
        )

    def _waic_beta(self):
        """The power ``beta`` of the likelihood in ``pi_lambda`` (scales Watanabe's WAIC penalty)."""
        if self._noise().varies:
            return 2.0 / self.temperature_  # the loss is twice the negative log-density (less log 2 pi)
        if self._noise_draws() is not None:
            return 1.0  # the noise learned: the Bayesian posterior, each draw with its own variance
        # N(y; f, sigma^2) enters pi_lambda with the power beta = 2 sigma^2 / temperature
        # (standardized scale): Watanabe's equation of state scales the penalty by beta
        return 2.0 * self.noise_variance_ / self.y_scale_**2 / self.temperature_

    def _pointwise_arrays(self, n):
        """Empty per-row arrays of the criteria: WAIC's ``elpd``/``penalty``, the chains' LOO when stacking.

        Stacking needs at least two chains of two draws each; with fewer the
        chains weigh equally (one chain: weight 1).
        """
        out = {"elpd": np.empty(n), "penalty": np.empty(n)}
        K, S = self.samples_.shape[:2]
        if self.chain_weights == "stacking" and K > 1 and S > 1:  # chains to weigh, each a sample to leave rows out of
            out["loo"], out["khat"] = np.empty((K, n)), np.empty((K, n))
        return out

    def _pointwise_chunk(self, out, rows, y_rows, F, noise, beta):
        """Fill ``out`` (:meth:`_pointwise_arrays`) at ``rows`` from the chunk's ``F`` and noise variances."""
        log_lik = self._noise().log_likelihood(y_rows, F, noise)
        chunk = waic(log_lik, beta=beta)
        out["elpd"][rows], out["penalty"][rows] = chunk.elpd_pointwise, chunk.p_pointwise
        if "loo" in out:
            out["loo"][:, rows], out["khat"][:, rows] = chain_loo(log_lik, self.samples_.shape[0])

    def _criteria_pass(self, X, y, kept):
        """The second pass of :meth:`_summarise`: the pointwise criteria (:meth:`_pointwise_arrays`)."""
        out, beta = self._pointwise_arrays(X.shape[0]), self._waic_beta()
        for rows, G in self._output_chunks(X, self._summary_width, kept):
            self._pointwise_chunk(out, rows, _rows(y, rows), *self._mean_and_noise(G), beta)
        return out

    def _record_criteria(self, y, fbar, pointwise, sample_weight=None):
        """WAIC and LFV (equal weights) from the pointwise terms; the chains' PSIS-LOO ``(elpd, khat)`` when stacking, else ``()``.

        The rows weighted by ``sample_weight``.
        """
        n = self.sample_weight_sum_
        tempered = waic_from_pointwise(pointwise["elpd"], pointwise["penalty"], sample_weight)
        # paper 004's Table 7 form: no normalising constant, divided by this fit's own sigma^2
        crit = langevin_waic(y, fbar, tempered.p_pointwise, self.noise_variance_, sample_weight)
        self._set_fitted(
            {
                "waic_tempering_": float(self._waic_beta()),
                "generalization_loss_": -tempered.elpd_waic / n,  # the criterion to rank by
                "lfv_": crit.functional_variance,
                "train_loss_": crit.train_loss,
                "langevin_waic_": crit.waic,
            }
        )
        return (pointwise["loo"], pointwise["khat"]) if "loo" in pointwise else ()

    #: float64 ``(S, rows)`` arrays the criteria of a chunk add to the first pass's when it computes them
    _criteria_width = 6

    def _first_pass(self, X, y, criteria=False, sample_weight=None):
        """Per-draw sums, posterior mean and mixing of the rows; the outputs kept for the second pass.

        With ``criteria`` the pointwise criteria too (:meth:`_pointwise_arrays`;
        the likelihood must not need ``noise_variance_``), and nothing is
        kept; else they are None. With ``sample_weight`` the per-draw sums
        are weighted (the squared losses by the squared weights: the terms
        of a batch's variance).
        """
        S, n, K = self._n_draws(), X.shape[0], self.samples_.shape[0]
        sums = {name: np.zeros(S) for name in ("loss", "loss_square", "residual", "spread", "noise")}
        fbar, mixing, kept, room = np.empty(n), [], {}, _chunks.CHUNK_BYTES // 2
        pointwise, beta = (self._pointwise_arrays(n), self._waic_beta()) if criteria else (None, None)
        width = self._summary_width + (self._criteria_width if criteria else 0)
        model = self._noise()
        for rows, G in self._output_chunks(X, width):
            yc = _rows(y, rows)
            wc = 1.0 if sample_weight is None else sample_weight[rows]
            mean = G[..., 0] if model.varies else G
            # the losses l_i of the draws, on the standardized scale of the potential
            losses = ((yc - self.y_mean_) / self.y_scale_ - mean) ** 2
            noise = None
            if model.varies:  # (y - f)^2 e^{-s} + s, or the t's (nu + 1) log(1 + (y - f)^2 e^{-s} / nu) + s
                noise = self._mean_and_noise(G)[1]
                df = model.df
                # e^s: the variance, or the t's squared scale, on the standardized scale
                relative = noise / (self.y_scale_**2 * model.variance_per_squared_scale)
                losses = losses / relative if df is None else (df + 1.0) * np.log1p(losses / (relative * df))
                losses += np.log(relative)
                sums["noise"] += _weighted_sum(noise, wc)
            sums["loss"] += _weighted_sum(losses, wc)
            losses *= wc
            sums["loss_square"] += (losses * losses).sum(1)
            del losses
            F = mean * self.y_scale_ + self.y_mean_  # on the scale of y
            sums["residual"] += _weighted_sum((yc - F) ** 2, wc)
            fbar[rows], spread = _spread(F, row_weight=wc)
            sums["spread"] += spread
            mixing.append(chunk_mixing(F, K, self.sampler_.mixing_diagnostics))
            if criteria:  # each draw's variance: at each input, or its learned one (a column)
                self._pointwise_chunk(
                    pointwise, rows, yc, F, self._noise_of_draws() if noise is None else noise, beta
                )
                continue
            # the outputs are the network's float32 (the dtype of its draws): kept exactly
            size = G.size * self.samples_.dtype.itemsize
            if size <= room:
                kept[rows.start], room = G.astype(self.samples_.dtype), room - size
        self._set_fitted(mixing_state(mixing))
        return kept, sums, fbar, pointwise

    # -------------------------------------------------------------- predict
    def _draw_chunks(self, X, width):
        """``(rows, F)`` chunk after chunk of rows: every retained draw's ``f`` at ``X[rows]``, ``(S, rows)``, scale of y.

        ``width``: as for :meth:`_output_chunks`.
        """
        varies = self._noise().varies
        for rows, G in self._output_chunks(X, width):
            if varies:
                G = G[..., 0]
            G *= self.y_scale_
            G += self.y_mean_
            yield rows, G

    def _spread(self, X, sample_weight=None):
        """Per-draw ``sum_i (f_k(x_i) - fbar(x_i))^2`` ``(S,)`` and the posterior mean ``fbar`` ``(n,)``.

        ``fbar`` is the mean of the draws weighted by :meth:`_draw_weights`;
        the sum's rows are weighted by ``sample_weight``.
        """
        sums, fbar, weights = np.zeros(self._n_draws()), np.empty(X.shape[0]), self._draw_weights()
        for rows, F in self._draw_chunks(X, 4):
            fbar[rows], spread = _spread(F, weights, 1.0 if sample_weight is None else sample_weight[rows])
            sums += spread
        return sums, fbar

    def predict(self, X, return_std=False):
        """Posterior mean of ``f(x)``, and optionally the predictive standard deviation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        return_std : bool, default=False
            Also return ``sqrt(Var_theta f_theta(x) + noise_variance_)``, the
            standard deviation of the posterior predictive distribution of a
            new observation, as ``BayesianRidge`` does (with
            ``noise="heteroscedastic"``, the posterior mean of the noise
            variance at ``x`` in place of ``noise_variance_``).

        Returns
        -------
        y_mean : ndarray of shape (n_samples,)
        y_std : ndarray of shape (n_samples,), only if ``return_std``
        """
        X = self._validated(X)
        mean, var, weights = np.empty(X.shape[0]), np.empty(X.shape[0]), self._draw_weights()
        noise, varies = np.full(X.shape[0], self.noise_variance_), self._noise().varies
        for rows, F, V in self._predictive_chunks(X, 4):
            mean[rows] = draws_mean(F, weights)
            if return_std:
                var[rows] = F.var(0) if weights is None else draws_mean((F - mean[rows]) ** 2, weights)
                if varies:
                    noise[rows] = draws_mean(V, weights)
        if not return_std:
            return mean
        return mean, np.sqrt(var + noise)

    def predict_samples(self, X):
        """Function values of every retained draw, chain by chain.

        The draws as sampled: with ``chain_weights="stacking"`` draw ``j``
        of chain ``k`` (column ``k * n_draws + j``) weighs
        ``chain_weights_[k] / n_draws`` in every summary of them.

        Returns
        -------
        ndarray of shape (n_samples, n_chains * n_draws)
        """
        X = self._validated(X)
        out = np.empty((X.shape[0], self._n_draws()))
        for rows, F in self._draw_chunks(X, 2):
            out[rows] = F.T
        return out

    def predict_noise_samples(self, X):
        """Noise variance of every retained draw at ``X``, in the layout of :meth:`predict_samples`.

        With ``noise="heteroscedastic"`` each draw's variance at each input
        (the exponential of its second output, on the scale of ``y``);
        otherwise the draw's learned variance, or ``noise_variance_``, the
        same at every input.

        Returns
        -------
        ndarray of shape (n_samples, n_chains * n_draws)
        """
        X = self._validated(X)
        out = np.empty((X.shape[0], self._n_draws()))
        for rows, _, V in self._predictive_chunks(X, 2):
            out[rows] = np.broadcast_to(V, (self._n_draws(), rows.stop - rows.start)).T
        return out

    def predict_interval(self, X, confidence_level=None, kind="predictive"):
        """Equal-tailed posterior intervals, in MAPIE's shapes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        confidence_level : float or array-like of floats in (0, 1), default=None
            ``self.confidence_level`` when None.
        kind : {"predictive", "credible"}, default="predictive"
            ``"predictive"``: quantiles of the posterior predictive of a new
            observation (the mixture over draws of ``N(f_theta(x),
            noise_variance_)``, each draw's own variance at ``x`` with
            ``noise="heteroscedastic"``); ``"credible"``: quantiles of
            ``f_theta(x)``.
            With ``chain_weights="stacking"`` both weigh the draws of chain
            ``k`` by ``chain_weights_[k]`` (the credible quantiles then
            invert the weighted distribution function, without
            interpolation).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        y_pis : ndarray of shape (n_samples, 2, n_levels)
        """
        if kind not in ("predictive", "credible"):
            raise ValueError(f"kind must be 'predictive' or 'credible', got {kind!r}.")
        levels = check_levels(self.confidence_level if confidence_level is None else confidence_level)
        X = self._validated(X)
        probs = np.concatenate([(1 - levels) / 2, (1 + levels) / 2])
        y_pred, q = np.empty(X.shape[0]), np.empty((len(probs), X.shape[0]))
        weights, model = self._draw_weights(), self._noise()
        # the bisection of mixture_quantiles holds three (n_probs, S, rows) arrays
        for rows, F, V in self._predictive_chunks(X, 3 * len(probs) + 3):
            y_pred[rows] = draws_mean(F, weights)
            if kind == "credible":
                q[:, rows] = draws_quantiles(F, probs, weights)
            else:
                q[:, rows] = mixture_quantiles(F, model.scale(V), probs, weights=weights, df=model.df)
        k = len(levels)
        y_pis = np.stack([q[:k].T, q[k:].T], axis=1)
        return y_pred, y_pis

    def sample_y(self, X, n_samples=1, random_state=None):
        """Draw from the posterior predictive at ``X``.

        Each draw picks a retained parameter draw at random (draw ``j`` of
        chain ``k`` with probability ``chain_weights_[k] / n_draws``) and
        adds ``N(0, noise_variance_)`` noise (the draw's own noise variance
        with ``temperature="learn"``, and at each input with
        ``noise="heteroscedastic"``). As in
        :meth:`sklearn.gaussian_process.GaussianProcessRegressor.sample_y`,
        ``n_samples`` here is the number of draws to return; the
        constructor's ``n_samples`` is the number of parameter draws kept
        per chain during ``fit``, from which these are picked.

        Parameters
        ----------
        X : array-like of shape (n_samples_X, n_features)
        n_samples : int, default=1
            Predictive draws per input (any number: draws are picked with
            replacement among the ``n_chains * self.n_samples`` retained
            ones).
        random_state : int, RandomState instance or None, default=None

        Returns
        -------
        ndarray of shape (n_samples_X, n_samples)
        """
        X = self._validated(X)
        S, weights = self._n_draws(), self._draw_weights()
        rng = check_random_state(random_state)
        pick = rng.randint(S, size=n_samples) if weights is None else rng.choice(S, size=n_samples, p=weights)
        noise, model = self._noise_draws(), self._noise()
        out = model.standard(rng, (X.shape[0], n_samples))
        if not model.varies:
            out *= model.scale(self.noise_variance_ if noise is None else noise[pick])
        for rows, F, V in self._predictive_chunks(X, 2 + 2 * n_samples / S):
            if model.varies:  # the standard draws scaled by each picked draw's scale at each input
                out[rows] *= model.scale(V[pick]).T
            out[rows] += F[pick].T
        return out

    def credible_radius(self, X, confidence_level=None):
        """Radius of the empirical-L2 credible ball (paper 000 (3.4)) on the inputs ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        confidence_level : float, default=None
            ``self.confidence_level`` when None.

        Returns
        -------
        float
        """
        X = self._validated(X)
        level = _level(confidence_level, self.confidence_level)
        return _radius(self._spread(X)[0], X.shape[0], level, self._draw_weights())

    def credible_sets(self, X, f_true=None, confidence_level=None, inflation="log_n"):
        """The credible balls of paper 001 §3.2 on the inputs ``X``, and whether they hold ``f_true``.

        With ``X`` a large sample of the input distribution (paper 001 §4:
        ``M = 10000`` uniform points), the empirical L2 norm on ``X`` stands
        for the ``L2(P^X)`` norm. The balls are centred at the posterior mean
        ``fbar``: ``tau_alpha`` is the ``confidence_level`` quantile of
        ``||f_theta - fbar||`` over the draws, ``tau_alpha^I`` that of the
        sup-norm ``|theta - theta_bar|_inf`` of the parameter draws (of this
        fit's prior: the full prior ``I = {1..Q}`` for
        :class:`~skgibbs.GibbsMLPRegressor`), and the inflated radius is
        ``inflation * tau_alpha^I``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        f_true : array-like of shape (n_samples,), default=None
            Values of a known regression function at ``X`` (simulation
            studies); the coverage fields are NaN when None.
        confidence_level : float, default=None
            ``1 - alpha``; ``self.confidence_level`` when None.
        inflation : float or "log_n", default="log_n"
            Factor of the parameter-level radius: ``"log_n"`` is
            ``log(n_train)``, the inflation of paper 001 Theorem 5.

        Returns
        -------
        CredibleSets
        """
        level = _level(confidence_level, self.confidence_level)
        X = self._validated(X)
        if inflation == "log_n":
            inflation = float(np.log(getattr(self, "sample_weight_sum_", self.n_train_)))
        elif not (isinstance(inflation, (int, float)) and inflation > 0):
            raise ValueError(f"inflation must be a positive float or 'log_n', got {inflation!r}.")
        if f_true is not None:
            f_true = column_or_1d(check_array(f_true, ensure_2d=False, dtype=np.float64, input_name="f_true"))
            if len(f_true) != X.shape[0]:
                raise ValueError(f"f_true has {len(f_true)} values but X has {X.shape[0]} rows.")
        theta, weights = self.samples_.reshape(-1, self.samples_.shape[-1]), self._draw_weights()
        spread, fbar = self._spread(X)
        tau = _radius(spread, X.shape[0], level, weights)
        return credible_sets_of(tau, fbar, theta, f_true, level, float(inflation), weights)

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


def _level(confidence_level, default):
    """One level in (0, 1): ``confidence_level``, or the estimator's ``default`` where it is None."""
    return check_level(default if confidence_level is None else confidence_level)


def _rows(y, rows):
    return np.asarray(y[rows], dtype=np.float64)


def _weighted_sum(values, row_weight):
    """``sum_i w_i values[:, i]`` per draw of ``values`` ``(S, rows)``; ``row_weight`` 1.0 for no weights."""
    return values.sum(1) if np.isscalar(row_weight) else values @ row_weight


def _spread(F, weights=None, row_weight=1.0):
    """Posterior mean ``(rows,)`` of draws ``F`` ``(S, rows)`` and each draw's ``sum_i w_i (F_ki - fbar_i)^2``."""
    fbar = draws_mean(F, weights)
    return fbar, _weighted_sum((F - fbar) ** 2, row_weight)


def _radius(spread, n, confidence_level, weights=None):
    """``tau_alpha`` of (3.4): quantile of the empirical L2 distances ``(spread_k / n)^(1/2)`` to ``fbar``."""
    return posterior_quantile(np.sqrt(spread / n), confidence_level, weights)
