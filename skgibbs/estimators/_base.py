"""The shell every Gibbs-posterior MLP estimator shares (see :doc:`/developers`).

:class:`BaseGibbsMLP` builds the posterior problem
(:func:`skgibbs.problem.build_problem`: validation, standardization,
pre-trained starting points, prior, target), runs its sampler object and
stores the draws and the sampler's own results as NumPy arrays; it evaluates
the stored draws and exports them to ArviZ. A subclass declares what
differs in building the problem as data, its
:class:`~skgibbs.plan.EstimatorTraits` (its response, hence its encoding,
loss and outputs; the prior it samples; the defaults of the settings a
sampler may not honour), and defines what is summarised and predicted from
the draws. Nothing here depends on the kernel: its settings live on the
sampler object.

Fitted state has one writer, :meth:`BaseGibbsMLP._set_fitted`: building the
problem only reads the estimator, and the first write of a fit, once its
draws exist, removes every public fitted attribute of the previous fit, so
that a refit under another sampler or prior carries nothing of the earlier
one (an exception anywhere in ``fit`` restores the earlier fit whole).
"""

import copy
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils.validation import _num_samples

from .. import _chunks
from .._arviz import from_groups
from .._compat import Interval, LayerWidths, StrOptions, check_is_fitted, validate_data
from .._data import check_numeric
from ._chain_weights import chain_weights_state, draw_weights
from .._mixing import warn_if_unreliable
from ..model import ACTIVATIONS
from ..plan import EstimatorTraits
from ..problem import build_problem, estimator_weights, fitted_prior
from ..samplers import available_samplers

__all__ = ["BaseGibbsMLP", "draws_mean", "draws_quantiles", "is_fitted_name"]


def is_fitted_name(name):
    """Whether ``name`` is a public fitted attribute: a trailing underscore and no leading one."""
    return name.endswith("_") and not name.startswith("_")


def draws_mean(F, weights=None):
    """Mean over the draws (axis 0) of ``F`` ``(S, ...)``, weighted by ``weights`` ``(S,)`` (None: equal)."""
    return F.mean(0) if weights is None else np.tensordot(weights, F, axes=1)


def draws_quantiles(F, probs, weights=None):
    """Quantiles over the draws (axis 0) of ``F`` ``(S, ...)``, shape ``(len(probs), ...)``.

    Equal weights (None): :func:`numpy.quantile` (linear interpolation).
    Weighted: the inverse of the weighted empirical distribution function,
    the smallest draw whose cumulative weight reaches ``p`` (``numpy``'s
    ``method="inverted_cdf"``); a draw of weight 0 is never returned.
    """
    if weights is None:
        return np.quantile(F, probs, axis=0)
    flat = F.reshape(F.shape[0], -1)
    order = np.argsort(flat, axis=0, kind="stable")
    cum = np.cumsum(weights[order], axis=0)
    cum /= cum[-1]
    last = flat.shape[0] - 1
    picks = np.stack([np.minimum((cum < p).sum(0), last) for p in np.atleast_1d(probs)])
    out = np.take_along_axis(flat, np.take_along_axis(order, picks, axis=0), axis=0)
    return out.reshape((len(picks),) + F.shape[1:])


def _bins_state(bins):
    """``embedding_bins_``, one array of edges per input (an object array, as ``KBinsDiscretizer``'s)."""
    if bins is None:
        return {}
    edges = np.empty(len(bins), dtype=object)
    for j, e in enumerate(bins):
        edges[j] = e
    return {"embedding_bins_": edges}


class RegisteredSamplerName(StrOptions):
    """The names of the samplers registered for a kind of prior *when a fit validates them*.

    A ``StrOptions`` of the names would fix the list when the estimator
    class is defined, so a sampler registered after ``import skgibbs`` (the
    developer guide's recipe) would be refused by name while accepted as an
    object. This one reads the registry each time it is checked or printed.

    Examples
    --------
    >>> RegisteredSamplerName("sparse").is_satisfied_by("rjhmc")
    True
    >>> RegisteredSamplerName("dense").is_satisfied_by("rjhmc")
    False
    """

    def __init__(self, kind, auto=False):
        self.kind, self.auto = kind, auto
        super().__init__(self.options)

    @property
    def options(self):
        return ({"auto"} if self.auto else set()) | set(available_samplers(self.kind))

    @options.setter
    def options(self, value):  # StrOptions sets the names it was given: the registry's are read instead
        pass


class BaseGibbsMLP(BaseEstimator):
    """Fit, stored draws and ArviZ export of a Gibbs-posterior MLP.

    Not for direct use: subclasses define ``__init__`` (scikit-learn reads
    the parameters from its signature), the target encoding and the outputs.
    """

    # the parameters every Gibbs MLP has; subclasses add their own
    _parameter_constraints = {
        "hidden_layer_sizes": [LayerWidths(), Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "activation": [StrOptions(set(ACTIVATIONS))],
        "temperature": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "n_samples": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "max_grad_evals": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "max_time": [Interval(Real, 0, None, closed="neither"), None],
        "burn_in": [Interval(Integral, 0, None, closed="left"), StrOptions({"auto"})],
        "thin": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "n_chains": [Interval(Integral, 1, None, closed="left")],
        "chain_weights": [StrOptions({"equal", "stacking"})],
        "pretrain_iter": [Interval(Integral, 0, None, closed="left")],
        "weight_bound": [Interval(Real, 0, None, closed="neither"), None],
        "prior_std": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"}), "array-like", None],
        "confidence_level": [Interval(Real, 0, 1, closed="neither")],
        "n_jobs": [Integral, None],
        "device": [str],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None, **fit_params):
        """Sample the posterior of the network weights given ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Weights ``w_i >= 0`` of the examples. The risk becomes their
            weighted mean ``R_n = sum_i w_i l_i / n_w`` and the Gibbs
            posterior ``exp(-lambda R_n) Pi`` with ``lambda = n_w /
            temperature``, ``n_w = sum_i w_i``: a weight counts its example
            that many times, so integer weights give the posterior of the
            data with rows repeated. The standardization, the pre-training,
            the learned noise, the noise choice and the criteria
            (``generalization_loss_``, ``lfv_``, ...) are weighted alike.
            Relative weights (survey or importance weights) that should not
            change how much data there is are rescaled to mean 1 first,
            ``w * len(w) / w.sum()``. None: every weight 1.
        **fit_params : dict
            Refused with a ``TypeError`` naming them.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        if fit_params:
            names = ", ".join(sorted(fit_params))
            raise TypeError(
                f"{type(self).__name__}.fit got {names}, which it does not take; it takes X, y and "
                "sample_weight."
            )
        # bad weights are refused before any work (the data are validated in the fit proper)
        weights = None if sample_weight is None else estimator_weights(self, sample_weight, _num_samples(X))
        saved = copy.copy(self.__dict__)
        try:
            return self._fit(X, y, weights)
        except BaseException:
            # a failed re-fit leaves the earlier fit intact
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    def _fit(self, X, y, sample_weight=None):
        problem = build_problem(self, X, y, sample_weight)  # reads the estimator, sets nothing on it
        result = problem.sample()
        # the earlier fit's state goes only now, replaced by the new fit's, which has its draws
        self._set_fitted(self._problem_state(problem), replace=True)
        self._store(result, problem.spec)
        self._summarise(*problem.arrays, problem.sample_weight)
        warn_if_unreliable(self)
        return self

    def _set_fitted(self, state, replace=False):
        """Set the fitted attributes of ``state`` (name to value): the one writer of fitted state.

        With ``replace`` it begins a fit's state: every public fitted
        attribute (:func:`is_fitted_name`) of the earlier fit is removed
        first, so that none outlives the fit that set it (HMC's
        ``step_size_`` after a refit with ``sampler="vi"``, which has none).
        """
        wrong = [name for name in state if not is_fitted_name(name)]
        if wrong:
            raise ValueError(f"not names of fitted attributes: {wrong}")
        if replace:
            for name in [name for name in vars(self) if is_fitted_name(name)]:
                del self.__dict__[name]
        for name, value in state.items():
            setattr(self, name, value)

    def _problem_state(self, problem):
        """The fitted attributes of what :func:`~skgibbs.problem.build_problem` resolved before sampling."""
        return {
            **problem.inputs,
            "n_train_": problem.arrays[0].shape[0],
            "sample_weight_sum_": (
                problem.arrays[0].shape[0] if problem.sample_weight is None else float(problem.sample_weight.sum())
            ),
            "x_mean_": problem.x_mean,
            "x_scale_": problem.x_scale,
            **problem.encoding,
            "pretrain_n_iter_": int(problem.pretraining.n_iter),
            "pretrain_converged_": bool(problem.pretraining.converged),
            "prior_": problem.prior_kind,
            "temperature_source_": problem.temperature_source,
            "temperature_": problem.temperature,
            "sampler_": problem.sampler,
            "sampler_name_": problem.sampler.name,
            "rho_": problem.run.rho,
            "lambda_": problem.lambda_,
            **_bins_state(problem.embedding_bins),
            # the regressor's noise model, and under noise="auto" the evidence it was chosen by
            **({"noise_": problem.plan.noise, "noise_selection_": problem.noise_selection}
               if self._traits.noise_model else {}),
        }

    def __setstate__(self, state):
        # a fit saved before 0.2 holds the sampler object as kernel_ and its name as sampler_
        if "kernel_" in state:
            state = dict(state)
            state["sampler_name_"] = state.pop("sampler_", None)
            state["sampler_"] = state.pop("kernel_")
        super().__setstate__(state)

    #: what the class declares for its fit's plan (:class:`~skgibbs.plan.EstimatorTraits`): the samplers it
    #: runs, whether it has a noise model to learn, the prior it always samples
    _traits = EstimatorTraits()

    def _store(self, result, spec):
        """The draws, the statistics every kernel has, and the sampler's own results as ``<name>_``."""
        stats = dict(result.draw_stats)
        state = {"spec_": spec, "samples_": result.samples, "n_grad_evals_": result.n_grad}
        if result.acceptance_rate is not None:
            state["acceptance_rate_"] = result.acceptance_rate
        state["sample_stats_"] = stats
        state.update({name + "_": value for name, value in result.info.items()})
        if "step_size" in result.info:
            S = result.samples.shape[1]
            stats["step_size"] = np.repeat(result.info["step_size"][:, None], S, axis=1)
        self._set_fitted(state)
        if "precision" in stats:  # a hierarchical prior's precisions were sampled: its groups, and the noise's
            prior = fitted_prior(self)
            state = {"prior_groups_": np.asarray(prior.names, dtype=object)}
            if "noise_precision" in stats:
                others = {name: value for name, value in stats.items() if name != "noise_precision"}
                state.update(self._noise_state(stats["noise_precision"], others))
            self._set_fitted(state)

    def _noise_state(self, precision, stats):  # pragma: no cover - the regressor's
        """The fitted state of the sampled noise ``precision``; ``stats``: the other ``sample_stats_``."""
        raise NotImplementedError

    def _record_losses(self, loss_sum, loss_square_sum, n):
        """``lp`` and the sampler's loss statistics from the per-draw sums of the per-example losses.

        ``loss_sum`` and ``loss_square_sum`` (shape ``(S,)``) are ``sum_i
        l_i(theta)`` and ``sum_i l_i(theta)^2`` over the ``n`` training
        examples, with ``l_i`` the losses the potential saw (standardized
        scale), summed chunk by chunk; the sampler reports what they say
        about its potential (``surrogate_scale_``, ``batch_noise_``, VI's
        ``expected_log_likelihood_``).
        """
        # log pi_lambda of each draw up to a constant: -lambda R_n(theta) + log Pi(theta)
        lp = self._log_prior_of_draws() + self._data_log_density(loss_sum, n)
        self._set_fitted({"sample_stats_": {**self.sample_stats_, "lp": lp.reshape(self.samples_.shape[:2])}})
        info = {k[:-1]: v for k, v in vars(self).items() if is_fitted_name(k)}
        stats = self.sampler_.loss_statistics(loss_sum, loss_square_sum, n, self.lambda_, self.rho_, info)
        self._set_fitted({name + "_": value for name, value in stats.items()})

    def _data_log_density(self, loss_sum, n):
        """The data term of ``lp`` per draw: ``-lambda R_n(theta)`` from the loss sums ``(S,)``."""
        return -self.lambda_ * (loss_sum / n)

    def _log_prior_of_draws(self):
        """``log Pi`` of every draw (up to a constant), shape ``(n_chains * n_samples,)``.

        Under a hierarchical prior, the joint density of the weights and the
        precisions each draw carries.
        """
        with torch.no_grad():
            theta = torch.as_tensor(self.samples_.reshape(-1, self.spec_.n_params))
            prior = fitted_prior(self)
            if "precision" in self.sample_stats_:
                tau = torch.as_tensor(self.sample_stats_["precision"].reshape(len(theta), -1))
                return prior.log_density(theta.double(), tau).numpy()
            return prior.log_density(theta).double().numpy()

    # ------------------------------------------------------------ the draws
    def _network_outputs(self, X):
        """Network outputs of every retained draw on validated ``X``, float64.

        Shape ``(S, n)``, or ``(S, n, n_outputs)`` with several outputs.
        Evaluated on fixed blocks of rows and draws (:mod:`skgibbs._chunks`),
        so that a row's outputs do not depend on the rows evaluated with it.
        """
        theta = torch.as_tensor(self.samples_.reshape(-1, self.samples_.shape[-1]))
        n_out = self.spec_.n_outputs
        F = np.empty((len(theta), X.shape[0]) + ((n_out,) if n_out > 1 else ()))
        block, draws = _chunks.ROW_BLOCK, _chunks.draws_per_call(max(self.spec_.layer_sizes))
        with torch.no_grad():
            for i in range(0, X.shape[0], block):
                Xs = torch.as_tensor((X[i : i + block] - self.x_mean_) / self.x_scale_, dtype=torch.float32)
                for j in range(0, len(theta), draws):
                    F[j : j + draws, i : i + block] = self.spec_.forward(theta[j : j + draws], Xs).numpy()
        return F

    def _n_draws(self):
        """``S``, the retained draws of all chains."""
        return self.samples_.shape[0] * self.samples_.shape[1]

    # ------------------------------------------------------ chain weights
    def _draw_weights(self):
        """Weight of every retained draw, or None for equal weights (:func:`~skgibbs.estimators._chain_weights.draw_weights`).

        Every reduction over the draws (means, variances, quantiles, the
        draws ``sample_y`` picks) takes its weights from here.
        """
        return draw_weights(getattr(self, "chain_weights_", None), self.samples_.shape[1])

    def _weigh_chains(self, elpd=None, khat=None, sample_weight=None):
        """``chain_weights_`` (:func:`~skgibbs.estimators._chain_weights.chain_weights_state`), then the inputs' relevance.

        ``elpd`` and ``khat`` ``(K, n)`` are the chains' leave-one-out
        densities and Pareto shapes where they are stacked, the rows' log
        scores weighted by ``sample_weight``. With the ARD prior the
        relevance of the inputs follows, the draws weighed as the chains
        now are.
        """
        K = self.samples_.shape[0]
        self._set_fitted(chain_weights_state(self.chain_weights, K, elpd, khat, sample_weight))
        if self.prior_ == "ard" and "precision" in self.sample_stats_:
            self._store_relevance()

    def _store_relevance(self):
        """``input_relevance_`` and its interval from the draws of the input precisions (the ARD prior).

        Stored once the chains' weights are known, with the draws weighed as
        in every prediction (:meth:`_draw_weights`): under
        ``chain_weights="stacking"`` the relevance is the same weighted
        posterior.
        """
        weights = self._draw_weights()
        p = self.spec_.n_features
        tau = self.sample_stats_["precision"][..., :p].reshape(-1, p)
        scale = 1.0 / np.sqrt(tau)  # each input's prior scale sigma_i = tau_i^(-1/2), standardized inputs
        alpha = 1.0 - self.confidence_level
        self._set_fitted(
            {
                "input_relevance_": draws_mean(scale, weights),
                "input_relevance_interval_": draws_quantiles(scale, [alpha / 2, 1 - alpha / 2], weights).T,
            }
        )

    def _output_chunks(self, X, width, kept=None):
        """``(rows, outputs)`` chunk after chunk: :meth:`_network_outputs` of ``X[rows]``.

        ``width`` is the number of float64 ``(S, rows)`` arrays the caller
        holds per chunk (:func:`skgibbs._chunks.row_chunks`). ``X`` is read
        one chunk of rows at a time (a memory map stays on disk). ``kept``
        maps the first row of a chunk to its outputs from an earlier pass
        (in the network's own precision), which are used, and dropped,
        instead of evaluating the network again.
        """
        kept = {} if kept is None else kept
        for rows in _chunks.row_chunks(X.shape[0], self._n_draws(), width):
            outputs = kept.pop(rows.start, None)
            if outputs is None:
                outputs = self._network_outputs(np.asarray(X[rows], dtype=np.float64))
            yield rows, outputs.astype(np.float64, copy=False)

    def _validated(self, X):
        check_is_fitted(self)
        check_numeric(X, "X")
        return validate_data(self, X, reset=False, dtype=np.float64)

    def unpack_samples(self):
        """Every draw as scikit-learn ``coefs_`` / ``intercepts_`` lists (standardized data).

        Returns
        -------
        list of (coefs, intercepts)
        """
        check_is_fitted(self)
        return [self.spec_.unpack(t) for t in self.samples_.reshape(-1, self.samples_.shape[-1])]

    def to_arviz(self, X=None, y=None, random_state=None):
        """The posterior draws as ArviZ data, with ``(chain, draw)`` dimensions.

        Every array of every group starts with the dimensions ``(chain,
        draw)``; ``obs`` indexes the rows of ``X``. The groups and their
        variables:

        ``posterior`` (always)
            ``coefs_<l>`` ``(chain, draw, n_in_<l>, n_out_<l>)`` and
            ``intercepts_<l>`` ``(chain, draw, n_out_<l>)`` of every layer
            ``l``, on the standardized scale of ``samples_``.
            With an ``embedding``, also ``embedding_weights`` ``(chain,
            draw, feature, encoding, embedding)``, ``embedding_biases``
            ``(chain, draw, feature, embedding)`` and, for the periodic
            embedding, ``embedding_frequencies`` ``(chain, draw, feature,
            frequency)``.
        ``sample_stats`` (always)
            Every per-draw record of ``sample_stats_``, which depends on the
            sampler: ``lp`` (``log pi_lambda`` up to a constant) always;
            ``acceptance_rate`` (accepted fraction of the ``thin`` steps
            before each draw) for a sampler with a Metropolis-Hastings step;
            ``energy`` (the Hamiltonian ``U + K`` after the last transition
            before the draw, so that ``az.bfmi`` applies) for HMC;
            ``step_size``, ``diverging``, ``n_steps``, ``energy_error``,
            ``energy_var``, ``precision``, ``noise_variance``, ``log_q`` where
            the sampler or the prior records them (:attr:`sample_stats_`).
        ``posterior_predictive`` (with ``X``)
            The regressor: ``f`` ``(chain, draw, obs)``, every draw's function
            value at ``X`` on the scale of ``y``, and ``y`` ``(chain, draw,
            obs)``, ``f`` plus the draw's Gaussian noise (``random_state``).
            The classifier: ``proba`` ``(chain, draw, obs, class)``, every
            draw's class probabilities, and ``y`` ``(chain, draw, obs)``, a
            class index into ``classes_`` drawn from them. With the training
            inputs as ``X``, ``az.rhat`` and ``az.ess`` (their defaults, the
            rank-normalised split R-hat and the bulk ESS) of ``f`` (of
            ``proba``; with two classes, of the second class's column,
            which the checks judge) give ``rhat_`` as their largest and
            ``ess_`` as their smallest value: the library's diagnostics are
            these.
        ``log_likelihood`` and ``observed_data`` (with ``X`` and ``y``)
            ``y`` ``(chain, draw, obs)``: ``log p(y_i | theta)`` of every
            example under every draw (the untempered likelihood, each draw's
            own noise variance where the noise is learned); ``y`` ``(obs,)``:
            the response (for the classifier its index into ``classes_``).
            ``az.waic`` of the training data gives
            ``-n * generalization_loss_`` when ``waic_tempering_`` is 1 (the
            noise learned, or the classifier at ``temperature=1``); otherwise
            ``generalization_loss_`` scales the penalty ``p_waic`` by
            ``waic_tempering_`` (the power of the likelihood in
            ``pi_lambda``), which ArviZ's untempered WAIC does not, and
            ``-(elpd_waic + (1 - waic_tempering_) p_waic) / n`` is
            ``generalization_loss_``. ``az.loo(idata, reff=1.0)`` fits the
            Pareto tails of :func:`~skgibbs.diagnostics.psis_loo` (the same
            ``pareto_k``); its ``elpd_loo`` differs by the truncation of the
            smoothed weights (ArviZ 0.x at the largest raw weight,
            ``psis_loo`` at ``S^(3/4)`` times their mean), which matters at
            few draws only.

        The draws of a sampler without Markov chains (``mixing_diagnostics``
        False: SMC's particles, VI's draws of ``q``) are independent draws,
        not chains, and are exported as what they are: one chain of all
        ``n_chains * n_samples`` draws (``chain: 1``; SMC's ``samples_`` is
        one group already), so that ArviZ computes no R-hat across made-up
        chains.

        ArviZ is optional and imported here.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            Inputs of the ``posterior_predictive`` group (and of the
            log-likelihood, with ``y``).
        y : array-like of shape (n_samples,), default=None
            Targets of the rows of ``X``: adds ``log_likelihood`` and
            ``observed_data``. Needs ``X``.
        random_state : int, RandomState instance or None, default=None
            Seeds the draws of ``y`` in ``posterior_predictive``; ``f`` and
            ``proba`` do not depend on it.

        Returns
        -------
        arviz.InferenceData (ArviZ 0.x) or xarray.DataTree (ArviZ 1.x)
        """
        check_is_fitted(self)
        K, S, _ = self.samples_.shape
        coefs, intercepts = self.spec_.unpack(self.samples_)
        posterior, dims = {}, {}
        for layer, (W, b) in enumerate(zip(coefs, intercepts)):
            posterior[f"coefs_{layer}"], posterior[f"intercepts_{layer}"] = W, b
            dims[f"coefs_{layer}"] = [f"n_in_{layer}", f"n_out_{layer}"]
            dims[f"intercepts_{layer}"] = [f"n_out_{layer}"]
        if self.spec_.embedding is not None:
            parts = self.spec_.embedding.unpack(self.samples_)
            axes = {"frequencies": ["feature", "frequency"], "weights": ["feature", "encoding", "embedding"]}
            for name, value in parts.items():
                posterior[f"embedding_{name}"] = value
                dims[f"embedding_{name}"] = axes.get(name, ["feature", "embedding"])
        groups = {"posterior": posterior, "sample_stats": dict(self.sample_stats_)}
        if X is None and y is not None:
            raise ValueError(
                "y needs its inputs: pass both X and y (the data of the log-likelihood), or X alone (the "
                "posterior predictive draws)."
            )
        if X is not None:
            X = self._validated(X)
            if y is not None:
                y = self._check_response(y)
                if len(y) != X.shape[0]:
                    raise ValueError(f"X has {X.shape[0]} rows but y has {len(y)} entries.")
            predictive, more_dims = self._posterior_predictive(X, random_state)
            groups["posterior_predictive"] = {k: v.reshape(K, S, *v.shape[1:]) for k, v in predictive.items()}
            dims.update(more_dims)
            dims["y"] = ["obs"]
        if y is not None:
            groups["log_likelihood"] = {"y": self._log_likelihood(X, y).reshape(K, S, -1)}
            groups["observed_data"] = {"y": y}
        if not self.sampler_.mixing_diagnostics and K > 1:  # independent draws: one chain, never K
            for name in ("posterior", "sample_stats", "posterior_predictive", "log_likelihood"):
                if name in groups:
                    groups[name] = {
                        key: np.asarray(value).reshape((1, K * S) + np.shape(value)[2:])
                        for key, value in groups[name].items()
                    }
        return from_groups(groups, dims=dims)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags

    # --------------------------------------------------- subclass interface
    def _summarise(self, X, y, sample_weight=None):  # pragma: no cover - interface
        raise NotImplementedError

    def _check_response(self, y):  # pragma: no cover - interface
        raise NotImplementedError

    def _posterior_predictive(self, X, random_state):  # pragma: no cover - interface
        """``({name: (S, n, ...) array}, {name: trailing dims})`` of :meth:`to_arviz`'s ``posterior_predictive``."""
        raise NotImplementedError

    def _log_likelihood(self, X, y):  # pragma: no cover - interface
        """Per-draw, per-example log-likelihood, shape ``(S, n)``."""
        raise NotImplementedError
