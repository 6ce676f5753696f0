"""GibbsMLPClassifier: a multilayer perceptron classifier sampled from its Gibbs posterior."""

import warnings
from numbers import Real

import numpy as np
from scipy.special import logsumexp
from sklearn.base import ClassifierMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, column_or_1d

from ._base import BaseGibbsMLP, draws_mean, draws_quantiles, is_fitted_name
from ._chain_weights import chain_loo
from .._compat import Interval, StrOptions
from ._dense import DENSE_CONSTRAINTS, fill_doc
from .._levels import check_levels
from .._mixing import chunk_mixing, mixing_state
from ..diagnostics import loo_underconfidence, psis
from ..exceptions import SamplerWarning
from ..plan import AUTO_TEMPERATURES, CLASSIFIER_SMALL_DATA_ROWS, EstimatorTraits, check_settings
from .._response import log_proba
from ..criteria import waic
from ..criteria._waic import waic_from_pointwise

__all__ = ["GibbsMLPClassifier"]


@fill_doc
class GibbsMLPClassifier(ClassifierMixin, BaseGibbsMLP):
    r"""Multilayer perceptron classifier sampled from its Gibbs posterior.

    The weights ``theta`` are drawn by Markov chains from

    .. math::

        \pi_\lambda(\theta) \propto \Pi(\theta) \exp(-\lambda R_n(\theta)),
        \quad R_n(\theta) = -\frac1n \sum_{i=1}^n \log p_\theta(y_i \mid x_i),
        \quad \lambda = n / \mathrm{temperature},

    the mean cross-entropy of the network's class probabilities
    ``p_theta(. | x)``: the softmax of its ``n_classes`` outputs, or for two
    classes the sigmoid of one output (the logit of ``classes_[1]``). Since
    ``exp(-lambda R_n) = prod_i p_theta(y_i | x_i)^(1 / temperature)``,
    ``temperature=1`` is the Bayesian posterior with the categorical
    likelihood, below 1 a "cold" and above 1 a tempered posterior (papers
    001 and 002 state their Gibbs posteriors for this loss). The columns of
    ``X`` are standardized inside ``fit``. The kernels and their surrogate
    densities for ``rho < 1`` are those of
    :class:`~skgibbs.GibbsMLPRegressor` with ``ell_i`` the cross-entropy of
    example ``i``.

    Predictions average over the retained draws: :meth:`predict_proba` is the
    posterior predictive ``E_theta p_theta(c | x)``, :meth:`predict` its
    argmax, and :meth:`predict_interval` gives equal-tailed credible bands of
    every class probability (where they are wide, the draws disagree about
    ``x``: epistemic uncertainty, as opposed to a confident probability near
    1/2).

    Parameters
    ----------
    hidden_layer_sizes : int, tuple of int or "auto", default="auto"
        Widths of the hidden layers (an int: one hidden layer of that
        width, as in scikit-learn's ``MLPRegressor``); ``()`` is (multinomial) logistic
        regression.
        ``"auto"``: two hidden layers of 16 for at most
        :data:`~skgibbs.plan.CLASSIFIER_SMALL_DATA_ROWS` (2000) training
        rows, of 100 beyond. 16-16 did as well as 100-100 on every set of
        the ``classification`` benchmark (up to 1,785 training rows) at a
        fraction of the cost; larger data were not measured.
    activation : {"relu", "tanh", "logistic", "identity"}, default="relu"
        Hidden-layer activation.

    temperature : float > 0 or "auto", default="auto"
        ``n / lambda``; 1 is the Bayesian posterior, below 1 a cold one.
        ``"auto"``: the classifier is fitted at 1 and, when that fit's
        leave-one-out predictions are underconfident
        (:func:`~skgibbs.diagnostics.loo_underconfidence` above 0: their
        log score on the training labels is above what they expect of
        themselves), at 0.5
        (:data:`~skgibbs.plan.AUTO_TEMPERATURES`), with the same seed; it
        keeps the Bayesian fit unless the colder one's chains passed the
        mixing checks (no :class:`~skgibbs.SamplerWarning`) and its
        leave-one-out log predictive density on the training data (PSIS
        with the tempered likelihood's ratios) is larger by more than one
        standard error of the paired difference; ``temperature_`` and
        ``temperature_selection_`` say which and why. Where the labels are
        nearly deterministic (digits, breast cancer) the Bayesian
        predictions are underconfident and the cold posterior has the
        lower held-out log loss; where they are noisy (Pima, HMDA) they are
        not, and the cold fit is not made (the ``classification``
        benchmark).
    rho : float in (0, 1] or "auto", default="auto"
        Bernoulli batch probability; ``"auto"`` is 1 (the full data). The
        batch surrogates approach :math:`\pi_\lambda` only while
        ``lambda' l_i / n`` (``surrogate_scale_``) is small, i.e. for
        temperatures well above the mean cross-entropy.

    {shared_parameters}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels, in the order of the columns of :meth:`predict_proba`.
    samples_ : ndarray of shape (n_chains, n_samples, n_params)
        Posterior draws of the flat parameters (per layer ``coefs_[l]``
        row-major, then ``intercepts_[l]``; the output layer has one unit
        for two classes, ``n_classes`` otherwise), for standardized ``X``.
    n_features_in_ : int
        Columns of ``X`` (their names in ``feature_names_in_`` when ``X``
        has string column names, as in scikit-learn).
    n_train_ : int
        Rows of the training data.
    x_mean_, x_scale_ : ndarray of shape (n_features,)
        The (weighted) mean and standard deviation of every column of ``X``,
        which standardize it (scale 1 for a constant column).
    sample_weight_sum_ : float
        ``n_w``, the sum of ``sample_weight`` (``n_train_`` without weights):
        the number of examples the risk counts, ``lambda_ * temperature_``.
    temperature_ : float
        Temperature used.
    temperature_source_ : str
        ``"given"``: the temperature given; ``"selected"``: chosen by
        ``temperature="auto"``.
    temperature_selection_ : dict
        Under ``temperature="auto"`` only, one entry per candidate:
        ``"temperatures"`` (the candidates), ``"fitted"`` (whether it was
        fitted: a colder one is only while the last converged fit was
        underconfident), ``"elpd_loo"`` (each fit's leave-one-out log
        predictive density, summed over the training examples, weighted by
        ``sample_weight``), ``"se_difference"`` (the standard error of each
        one's paired difference from the reference, the warmest converged
        candidate), ``"converged"`` (whether its fit raised no
        :class:`~skgibbs.SamplerWarning`), ``"underconfidence"``
        (:func:`~skgibbs.diagnostics.loo_underconfidence` of a converged
        fit's leave-one-out predictions, nats) and ``"khat_above_07"`` (the share of examples
        whose Pareto shape is above 0.7, where PSIS is unreliable), NaN
        where not fitted or not computed; and ``"temperature"`` (the one
        kept).
    {shared_attributes}
    rhat_ : float
        Largest rank-normalised split R-hat (Vehtari et al., 2021) over the
        chains of the predicted probabilities at the training inputs (of
        ``classes_[1]`` for two classes, of every class otherwise). Above
        1.05 a :class:`~skgibbs.SamplerWarning` says that the chains have not
        mixed, or, when every chain has converged on its own, a
        :class:`~skgibbs.MultimodalWarning` that they sit in different
        modes. NaN with fewer than 8 draws per chain, and for the samplers
        whose draws are independent (VI, SMC), as are ``ess_`` and the
        within- and between-chain diagnostics.
    ess_ : float
        Smallest bulk effective sample size of those probabilities; below 100
        a :class:`~skgibbs.SamplerWarning` is raised.
    {chain_attributes}
    generalization_loss_ : float
        **The criterion to rank models by** (lower is better): Watanabe's
        WAIC per example for the tempered posterior,
        ``-(1/n) [sum_i log mean_theta p_theta(y_i | x_i) - beta sum_i
        Var_theta log p_theta(y_i | x_i)]`` with ``beta = 1 / temperature_``
        (the power of the likelihood in :math:`\pi_\lambda`): an estimate of
        the held-out log loss (nats). What
        :class:`~skgibbs.model_selection.CriterionGridSearch` ranks with
        ``criterion="waic"``.
    waic_tempering_, lfv_, train_loss_ : float
        The ``beta`` of ``generalization_loss_``; the functional variance
        ``sum_i Var_theta[log p_theta(y_i | x_i)]`` over the draws (paper
        004 (13)), the penalty of ``generalization_loss_`` before the factor
        ``beta / n``; and ``-(1/n) sum_i log pbar(y_i | x_i)``, the
        cross-entropy of :meth:`predict_proba` on the training data.

    See Also
    --------
    GibbsMLPRegressor : the regressor on the same engine.
    sklearn.neural_network.MLPClassifier : the same network, trained.
    skgibbs.metrics.expected_calibration_error : how calibrated the probabilities are.

    Notes
    -----
    The default prior (``prior="auto"``, the fixed prior, with
    ``prior_std="auto"``) is ``N(0, (2 / sqrt(n_in))^2)``
    on every weight and bias of a layer with ``n_in`` inputs, twice the
    regressor's scale. For a (d, 100, 100, K) ReLU network on standardized
    inputs the prior logits then have a standard deviation of about 4, so
    that probabilities between 0.02 and 0.98 are ordinary a priori; with the
    regressor's ``1 / sqrt(n_in)`` the prior logit has a standard deviation
    of about 0.5 and the posterior predictive at ``temperature=1`` is
    underconfident (measurements on the classification page of the user
    guide).

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from skgibbs import GibbsMLPClassifier
    >>> X, y = make_moons(80, noise=0.2, random_state=0)
    >>> clf = GibbsMLPClassifier(hidden_layer_sizes=(16,), n_samples=20, burn_in=50,
    ...                          pretrain_iter=200, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 2)
    >>> proba, bands = clf.predict_interval(X[:2], confidence_level=[0.5, 0.9])
    >>> bands.shape                          # (n, lower/upper, n_classes, n_levels)
    (2, 2, 2, 2)
    """

    _parameter_constraints = {
        **DENSE_CONSTRAINTS,
        "temperature": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
    }

    def __init__(
        self,
        hidden_layer_sizes="auto",
        activation="relu",
        *,
        embedding=None,
        sampler="auto",
        temperature="auto",
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

    # prior_std="auto": 2 / sqrt(fan_in), see the class docstring; its response is labels; "auto" runs MCLMC
    # on the full data under the fixed prior, 16-16 up to CLASSIFIER_SMALL_DATA_ROWS rows
    _traits = EstimatorTraits(
        prior_gain=2.0,
        response="classes",
        full_batch_sampler="mclmc",
        auto_prior="fixed",
        small_data_rows=CLASSIFIER_SMALL_DATA_ROWS,
        selects_temperature=True,
    )

    #: a colder candidate replaces the warmer one when its leave-one-out elpd is larger by this many standard
    #: errors of the paired difference: one, the margin of the regressor's ``noise="auto"``. The cold candidate
    #: is fitted only where the screen found the Bayesian fit's leave-one-out predictions underconfident, so
    #: the margin no longer has to tell noisy labels from nearly deterministic ones on its own. With two,
    #: Ripley's synth kept the Bayesian fit on four of the five splits of ``classification_defaults``, where
    #: the cold fit was ahead by 1.3 to 1.8 standard errors and scored better on the test points of all four
    #: (log loss 0.2246 against 0.2285).
    _TEMPERATURE_MARGIN = 1.0

    def _fit(self, X, y, sample_weight=None):
        if not (isinstance(self.temperature, str) and self.temperature == "auto"):
            return super()._fit(X, y, sample_weight)  # which validates the settings before any work
        check_settings(type(self), self.get_params(deep=False))  # before the first candidate's fit
        return self._fit_selected_temperature(X, y, sample_weight)

    def _fit_selected_temperature(self, X, y, sample_weight):
        """``temperature="auto"``: fits at :data:`~skgibbs.plan.AUTO_TEMPERATURES`, warmest first, the best kept.

        Each candidate is fitted as with that float (same seed, same
        settings). A candidate whose fit raised a
        :class:`~skgibbs.SamplerWarning` has not converged and is not kept
        while another has. The next, colder, candidate is fitted only while
        the last converged one's leave-one-out predictions are
        underconfident (:func:`~skgibbs.diagnostics.loo_underconfidence`
        above 0): a colder posterior sharpens the predictions, which cannot help predictions
        already as sharp as the data support. Starting from the warmest
        converged candidate (1, the Bayesian posterior), a colder one
        replaces it when its leave-one-out log predictive density
        (:meth:`_tempered_loo`) is larger by more than
        ``_TEMPERATURE_MARGIN`` standard errors of the paired difference (of
        those that are, the largest). The kept fit's warnings are raised
        again; its fitted state becomes this estimator's.
        """
        n_candidates = len(AUTO_TEMPERATURES)
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        fits, loo, Xv = [], [], None
        underconfidence = np.full(n_candidates, np.nan)
        for j, temperature in enumerate(AUTO_TEMPERATURES):
            est = clone(self).set_params(temperature=temperature)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                super(GibbsMLPClassifier, est)._fit(X, y, sample_weight)
            converged = not any(issubclass(c.category, SamplerWarning) for c in caught)
            fits.append((est, caught, converged))
            if Xv is None:  # the data as fitted (validated and encoded as the fit did)
                Xv, codes = est._validated(X), est._check_response(y)
            pointwise, khat, log_proba_loo = est._tempered_loo(Xv, codes, predictive=True)
            loo.append((pointwise, khat))
            if converged:
                underconfidence[j] = loo_underconfidence(log_proba_loo, codes, w)
                if not underconfidence[j] > 0:
                    break
        fitted = np.arange(n_candidates) < len(fits)
        weighted = [p if w is None else w * p for p, _ in loo]  # each example's share of the elpd
        elpd = np.full(n_candidates, np.nan)
        elpd[fitted] = [c.sum() for c in weighted]
        converged = np.zeros(n_candidates, dtype=bool)
        converged[fitted] = [c for _, _, c in fits]
        kept = reference = int(np.argmax(converged)) if converged.any() else 0
        # the standard error of each candidate's paired difference from the reference
        se_difference = np.full(n_candidates, np.nan)
        se_difference[fitted] = [np.sqrt(len(c)) * (c - weighted[reference]).std() for c in weighted]
        better = [j for j in range(reference + 1, len(fits))
                  if converged[j] and elpd[j] - elpd[reference] > self._TEMPERATURE_MARGIN * se_difference[j]]
        if better:
            kept = max(better, key=lambda j: elpd[j])
        est, caught, _ = fits[kept]
        khat_above = np.full(n_candidates, np.nan)
        khat_above[fitted] = [float(np.mean(k > 0.7)) for _, k in loo]
        state = {name: value for name, value in vars(est).items() if is_fitted_name(name)}
        self._set_fitted(state, replace=True)
        self._set_fitted(
            {
                "temperature_source_": "selected",
                "temperature_selection_": {
                    "temperatures": np.asarray(AUTO_TEMPERATURES, dtype=float),
                    "fitted": fitted,
                    "elpd_loo": elpd,
                    "se_difference": se_difference,
                    "converged": converged,
                    "underconfidence": underconfidence,
                    "khat_above_07": khat_above,
                    "temperature": float(AUTO_TEMPERATURES[kept]),
                },
            }
        )
        for w_ in caught:
            warnings.warn_explicit(w_.message, w_.category, w_.filename, w_.lineno)
        return self

    def _tempered_loo(self, X, codes, predictive=False):
        """Leave-one-out log predictive densities of the training examples under the tempered posterior.

        The posterior holds ``p_theta(y_i | x_i)^beta``, ``beta = 1 /
        temperature_``; PSIS with that ``beta`` (ratios ``p_theta(y_i |
        x_i)^(-beta)``, as :func:`~skgibbs.diagnostics.psis_loo`). Returns
        the densities' logs and the Pareto shapes, each of shape ``(n,)``;
        with ``predictive``, also the log of each example's leave-one-out
        predictive distribution over the classes, ``(n, n_classes)`` (the
        same weights on every class's probability).
        """
        n, beta = X.shape[0], 1.0 / self.temperature_
        out, khat = np.empty(n), np.empty(n)
        classes = np.empty((n, len(self.classes_))) if predictive else None
        for rows, log_p in self._log_proba_chunks(X, self._summary_width * len(self.classes_)):
            log_p = np.asarray(log_p, dtype=float)
            log_lik = log_p[:, np.arange(rows.stop - rows.start), codes[rows]]
            weights = psis(-beta * log_lik)
            out[rows] = logsumexp(weights.log_weights + log_lik, axis=0)
            khat[rows] = weights.khat
            if predictive:
                classes[rows] = logsumexp(weights.log_weights[..., None] + log_p, axis=0)
        return (out, khat, classes) if predictive else (out, khat)

    def _check_response(self, y):
        y = column_or_1d(np.asarray(y))
        known = np.isin(y, self.classes_)
        if not known.all():
            raise ValueError(
                f"y holds labels the classifier was not fitted on: {np.unique(y[~known])[:5].tolist()}; "
                f"classes_ are {self.classes_.tolist()}."
            )
        return np.searchsorted(self.classes_, y)

    def score(self, X, y, sample_weight=None):
        """Accuracy of :meth:`predict` on ``(X, y)``, refusing labels the fit never saw.

        scikit-learn's :meth:`~sklearn.base.ClassifierMixin.score` counts a
        label outside ``classes_`` as one more error, so a test set coded
        differently from the training set (``"yes"`` against ``1``) scores
        0 without a word; here it is refused.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            True labels, each one of ``classes_``.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        float

        Raises
        ------
        ValueError
            If ``y`` holds a label not in ``classes_`` (the message names up
            to five of them and the classes).
        """
        check_is_fitted(self)
        self._check_response(y)
        return super().score(X, y, sample_weight=sample_weight)

    def _posterior_predictive(self, X, random_state):
        """``proba`` ``(S, n, n_classes)`` of every draw at ``X``, and ``y`` ``(S, n)``, a class index drawn from it."""
        P = np.empty((self._n_draws(), X.shape[0], len(self.classes_)))
        for rows, p in self._proba_chunks(X, 2 * len(self.classes_)):
            P[:, rows] = p
        u = check_random_state(random_state).uniform(size=P.shape[:2])
        Y = np.minimum((np.cumsum(P, axis=-1) < u[..., None]).sum(-1), len(self.classes_) - 1)
        return {"proba": P, "y": Y}, {"proba": ["obs", "class"]}

    def _log_likelihood(self, X, y):
        out = np.empty((self._n_draws(), X.shape[0]))
        for rows, log_p in self._log_proba_chunks(X, 8 * len(self.classes_)):
            out[:, rows] = log_p[:, np.arange(rows.stop - rows.start), y[rows]]
        return out

    #: float64 ``(S, rows)`` arrays per class a chunk of the summaries holds at once (R-hat and ESS the most)
    _summary_width = 16

    def _summarise(self, X, y, sample_weight=None):
        """The summaries of the draws on the training data, in one pass over chunks of rows.

        Every summary is a sum over rows of per-row terms, a per-row result
        (R-hat, ESS, the posterior predictive probability, the chains'
        leave-one-out densities) or a per-draw sum (:mod:`skgibbs._chunks`).
        With ``sample_weight`` the sums over rows are weighted and ``n`` is
        the weights' sum.
        """
        w, n = sample_weight, self.sample_weight_sum_
        S, K = self._n_draws(), self.samples_.shape[0]
        codes = np.searchsorted(self.classes_, y)
        # p_theta(y_i | x_i)^(1 / temperature) enters pi_lambda: Watanabe's penalty scales by beta
        beta = 1.0 / self.temperature_
        loss_sum, loss_square = np.zeros(S), np.zeros(S)
        rows_n = X.shape[0]
        elpd, penalty, pbar, mixing = np.empty(rows_n), np.empty(rows_n), np.empty(rows_n), []
        stacking = self.chain_weights == "stacking"
        loo, khat = (np.empty((K, rows_n)), np.empty((K, rows_n))) if stacking else (None, None)
        for rows, log_p in self._log_proba_chunks(X, self._summary_width * len(self.classes_)):
            c = codes[rows]
            log_lik = log_p[:, np.arange(len(c)), c]  # (S, rows)
            losses = -log_lik
            if w is not None:
                losses *= w[rows]
            loss_sum += losses.sum(1)
            loss_square += (losses * losses).sum(1)
            del losses
            P = np.exp(log_p)
            judged = P[..., 1] if P.shape[-1] == 2 else P.reshape(P.shape[0], -1)
            mixing.append(chunk_mixing(judged, K, self.sampler_.mixing_diagnostics))
            chunk = waic(log_lik, beta=beta)
            elpd[rows], penalty[rows] = chunk.elpd_pointwise, chunk.p_pointwise
            pbar[rows] = P.mean(0)[np.arange(len(c)), c]
            if stacking:
                loo[:, rows], khat[:, rows] = chain_loo(log_lik, K)
        self._record_losses(loss_sum, loss_square, n)
        self._set_fitted(mixing_state(mixing))
        self._weigh_chains(loo, khat, sample_weight=w)
        tempered = waic_from_pointwise(elpd, penalty, w)
        log_pbar = np.log(pbar)
        self._set_fitted(
            {
                "waic_tempering_": beta,
                "generalization_loss_": -tempered.elpd_waic / n,  # the criterion to rank by
                # paper 004 §4.3 with the log loss of the posterior predictive as the training loss
                "train_loss_": float(-(np.mean(log_pbar) if w is None else w @ log_pbar / n)),
                "lfv_": float(tempered.p_waic),
            }
        )

    # -------------------------------------------------------------- predict
    def _log_proba_draws(self, X):
        """``log p_theta(c | x)`` of every retained draw on validated ``X``, shape ``(S, n, n_classes)``."""
        return log_proba(self._network_outputs(X))

    def _log_proba_chunks(self, X, width):
        """``(rows, log_p)`` chunk after chunk of rows: :meth:`_log_proba_draws` of ``X[rows]``.

        ``width``: float64 ``(S, rows)`` arrays held at once (:meth:`_output_chunks`).
        """
        for rows, out in self._output_chunks(X, width):
            yield rows, log_proba(out)

    def _proba_chunks(self, X, width):
        """``(rows, P)``: the class probabilities of every draw, ``(S, rows, n_classes)``, chunk by chunk."""
        for rows, log_p in self._log_proba_chunks(X, width):
            yield rows, np.exp(log_p)

    def predict_proba(self, X):
        """Posterior predictive class probabilities, the mean over the draws of ``p_theta(c | x)``.

        With ``chain_weights="stacking"`` the draws of chain ``k`` weigh
        ``chain_weights_[k]`` together.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        X = self._validated(X)
        proba, weights = np.empty((X.shape[0], len(self.classes_))), self._draw_weights()
        for rows, P in self._proba_chunks(X, 8 * len(self.classes_)):  # log-softmax's temporaries
            proba[rows] = draws_mean(P, weights)
        return proba

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        """The class of largest posterior predictive probability.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        proba = self.predict_proba(X)  # checks that the classifier is fitted
        return self.classes_[np.argmax(proba, axis=1)]

    def predict_samples(self, X):
        """Class probabilities of every retained draw, chain by chain.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_chains * n_draws, n_classes)
            The draws as sampled; with ``chain_weights="stacking"`` draw
            ``j`` of chain ``k`` weighs ``chain_weights_[k] / n_draws``.
        """
        X = self._validated(X)
        out = np.empty((X.shape[0], self._n_draws(), len(self.classes_)))
        for rows, P in self._proba_chunks(X, 8 * len(self.classes_)):
            out[rows] = P.transpose(1, 0, 2)
        return out

    def predict_interval(self, X, confidence_level=None):
        """Equal-tailed credible bands of the class probabilities.

        For each input and class, the ``(1 - level) / 2`` and ``(1 + level) /
        2`` quantiles over the draws of ``p_theta(c | x)``: the posterior
        uncertainty about the probability itself (a band around 0.5 that is
        narrow means "a coin flip, surely"; a wide band means the draws
        disagree). With ``chain_weights="stacking"`` the quantiles invert the
        distribution function of the draws weighted by their chains'
        ``chain_weights_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        confidence_level : float or array-like of floats in (0, 1), default=None
            ``self.confidence_level`` when None.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            :meth:`predict_proba`.
        bands : ndarray of shape (n_samples, 2, n_classes, n_levels)
            Lower bounds in ``[:, 0]``, upper bounds in ``[:, 1]``.
        """
        levels = check_levels(self.confidence_level if confidence_level is None else confidence_level)
        X = self._validated(X)
        probs = np.concatenate([(1 - levels) / 2, (1 + levels) / 2])
        C = len(self.classes_)
        proba, q = np.empty((X.shape[0], C)), np.empty((len(probs), X.shape[0], C))
        weights = self._draw_weights()
        for rows, P in self._proba_chunks(X, (len(probs) + 8) * C):
            proba[rows] = draws_mean(P, weights)
            q[:, rows] = draws_quantiles(P, probs, weights)  # (2 L, rows, C)
        k = len(levels)
        bands = np.stack([q[:k], q[k:]], axis=0).transpose(2, 0, 3, 1)  # (n, 2, C, L)
        return proba, bands

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        return tags
