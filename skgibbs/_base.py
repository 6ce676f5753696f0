"""The shell every Gibbs-posterior MLP estimator shares (DESIGN §2).

:class:`BaseGibbsMLP` validates the data, standardizes the inputs,
pre-trains the chains' starting points, calls the chain runner and stores
the draws as NumPy arrays; it evaluates the stored draws and exports them to
ArviZ. A subclass says what differs: how the targets are encoded and which
loss they enter (``_encode_targets``, ``_loss``, ``_n_outputs``), the prior, the kernel
and its settings (``_prior``, ``_resolve_sampler``, ``_chain_config``), the
starting points, and what is summarised and predicted from the draws.
"""

import copy
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from ._arviz import from_groups
from ._compat import Interval, StrOptions, check_is_fitted, validate_data
from ._data import check_numeric, safe_scale
from ._pretrain import pretrain
from ._threads import torch_threads
from .model import ACTIVATIONS, MLPSpec
from .potential import MLPPotential, Prior
from .samplers import ChainConfig, run_chains, surrogate_constants

__all__ = ["BaseGibbsMLP"]

# Chains are advanced together in one process while a step is this cheap
# (examples in the batch times parameters); see benchmarks/bench_speed.py.
_VECTORIZE_WORK = 5_000_000


class BaseGibbsMLP(BaseEstimator):
    """Fit, stored draws and ArviZ export of a Gibbs-posterior MLP.

    Not for direct use: subclasses define ``__init__`` (scikit-learn reads
    the parameters from its signature), the target encoding and the outputs.
    """

    # the parameters every Gibbs MLP has; subclasses add their own
    _parameter_constraints = {
        "hidden_layer_sizes": ["array-like"],
        "activation": [StrOptions(set(ACTIVATIONS))],
        "temperature": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "step_size": [Interval(Real, 0, None, closed="neither")],
        "proposal_std": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "burn_in": [Interval(Integral, 0, None, closed="left"), StrOptions({"auto"})],
        "thin": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "n_chains": [Interval(Integral, 1, None, closed="left")],
        "target_accept": [Interval(Real, 0, 1, closed="neither"), StrOptions({"auto"})],
        "pretrain_iter": [Interval(Integral, 0, None, closed="left")],
        "weight_bound": [Interval(Real, 0, None, closed="neither"), None],
        "prior_std": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"}), None],
        "confidence_level": [Interval(Real, 0, 1, closed="neither")],
        "n_jobs": [Integral, None],
        "device": [str],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, **fit_params):
        """Sample the posterior of the network weights given ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        **fit_params : dict
            Refused with a ``TypeError``: the Gibbs posterior weighs every
            example equally (no ``sample_weight``).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        if fit_params:
            names = ", ".join(sorted(fit_params))
            raise TypeError(
                f"{type(self).__name__}.fit got {names}, which it does not take: the risk R_n weighs every "
                "example equally. To weight examples, repeat or resample rows of X and y."
            )
        saved = copy.copy(self.__dict__)
        try:
            return self._fit(X, y)
        except BaseException:
            # a failed re-fit leaves the earlier fit intact
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    def _fit(self, X, y):
        self._validate_params()
        self._check_extra_params()
        layers = self._check_layers()
        device = self._check_device()
        check_numeric(X, "X")
        X, y = self._validate_fit_data(X, y)
        n = X.shape[0]
        if n < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 samples to fit, got n_samples={n}.")
        self.n_train_ = n
        self.x_mean_, self.x_scale_ = X.mean(0), safe_scale(X.std(0))
        targets = self._encode_targets(y)
        spec = MLPSpec(X.shape[1], layers, self.activation, self._n_outputs())
        Xt = torch.as_tensor((X - self.x_mean_) / self.x_scale_, dtype=torch.float32, device=device)
        yt = torch.as_tensor(targets, dtype=torch.float32, device=device)
        seeds = np.random.SeedSequence(check_random_state(self.random_state).randint(2**31)).generate_state(
            self.n_chains + 1
        )
        with torch_threads(device):
            theta0, heldout_loss = self._initial_points(spec, Xt, yt, seeds)
            self.temperature_ = self._auto_temperature(heldout_loss)
            self.sampler_, self.rho_ = self._resolve_sampler()
            self.lambda_ = n / self.temperature_
            prior = self._prior(spec, device)
            result = self._sample(spec, Xt, yt, theta0, [int(s) for s in seeds[1:]], prior)
        self._store(result, spec)
        self._summarise(X, y)
        return self

    def _sample(self, spec, Xt, yt, theta0, seeds, prior):
        """Run the kernel from the starting points ``theta0``; a :class:`ChainResult`."""
        return run_chains(
            self._potential(spec, Xt, yt),
            theta0,
            seeds,
            self._chain_config(),
            prior=prior,
            vectorize=self._vectorize(Xt.shape[0], spec.n_params, Xt.device),
            # one GPU batches all chains; worker processes would each need a device of their own
            n_jobs=None if Xt.device.type == "cuda" else self.n_jobs,
        )

    def _n_starts(self):
        """How many starting points to pre-train (one per chain)."""
        return self.n_chains

    def _validate_fit_data(self, X, y):
        check_numeric(y, "y")
        return validate_data(self, X, y, y_numeric=True, dtype=np.float64)

    def _check_extra_params(self):
        """Checks of a subclass's own parameters beyond their constraints."""

    def _auto_temperature(self, heldout_loss):
        return 2.0 * heldout_loss if self.temperature == "auto" else float(self.temperature)

    #: ``prior_std="auto"`` is this factor times ``1 / sqrt(fan_in)`` of each parameter's layer
    _prior_gain = 1.0

    def _prior(self, spec, device):
        std = self.prior_std
        if std == "auto":
            std = (self._prior_gain * spec.fan_in_std(torch.float32)).to(device)
        return Prior(std, self.weight_bound)

    def _check_layers(self):
        layers = self.hidden_layer_sizes
        layers = (layers,) if isinstance(layers, Integral) else tuple(layers)
        if any(not isinstance(w, Integral) or isinstance(w, bool) or w < 1 for w in layers):
            raise ValueError(
                f"hidden_layer_sizes must hold positive integers (use () for a linear model), got {layers!r}."
            )
        return tuple(int(w) for w in layers)

    def _check_device(self):
        try:
            device = torch.device(self.device)
        except RuntimeError as exc:
            raise ValueError(f"device={self.device!r} is not a torch device; use 'cpu' or 'cuda'.") from exc
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError("device='cuda' was requested but torch sees no GPU; use device='cpu'.")
        return device

    def _vectorize(self, n, n_params, device):
        if self.n_chains == 1 or device.type == "cuda":
            return True
        batch = n * (self.rho_ if self.rho_ < 1 else 1.0)
        return batch * n_params <= _VECTORIZE_WORK

    def _config(self, sampler, burn_in, thin, **extra):
        """A :class:`ChainConfig` with the settings every Gibbs MLP shares, and the kernel's own."""
        return ChainConfig(
            sampler=sampler,
            lam=self.lambda_,
            step_size=float(self.step_size),
            proposal_std=self.proposal_std,
            n_samples=self.n_samples,
            burn_in=burn_in if self.burn_in == "auto" else self.burn_in,
            thin=thin if self.thin == "auto" else self.thin,
            target_accept=None if self.target_accept == "auto" else float(self.target_accept),
            verbose=self.verbose,
            **extra,
        )

    def _initial_draws(self, spec, seeds, device):
        """Glorot initialisation, one generator per chain."""
        gens = [torch.Generator(device="cpu").manual_seed(int(s)) for s in seeds[1:]]
        return torch.cat([spec.init_params(g, 1, torch.float32) for g in gens]).to(device)

    def _initial_mask(self, theta, seeds):
        """0/1 mask of the starting active sets, or None (every parameter active)."""
        return None

    def _initial_points(self, spec, Xt, yt, seeds):
        """Glorot initialisation per chain, then Adam with early stopping (paper 000 §5)."""
        theta = self._initial_draws(spec, seeds, Xt.device)[: self._n_starts()]
        mask = self._initial_mask(theta, seeds)
        if mask is not None:
            theta = theta * mask
        scale = self._pretrain_scale(spec)
        if scale is not None:
            # Glorot draws of the coordinates w = theta / scale have the size of Glorot's theta
            # times 1 / sqrt(scale): shrink theta by sqrt(scale) to keep w of the prior's order
            scale = scale.to(theta.device, theta.dtype)
            theta = theta * scale.sqrt()
        if self.pretrain_iter == 0:
            return theta, 1.0
        return pretrain(
            spec,
            theta,
            Xt,
            yt,
            self.pretrain_iter,
            int(seeds[0]),
            mask=mask,
            loss=self._loss,
            scale=scale,
            owner=self,
        )

    def _pretrain_scale(self, spec):
        """``theta = scale * w`` for the pre-training's Adam, or None (``w = theta``)."""
        return None

    def _store(self, result, spec):
        self.spec_ = spec
        self.samples_ = result.samples.astype(np.float32)
        self.acceptance_rate_ = result.acceptance_rate
        self.n_restarts_ = result.n_restarts
        self.step_size_ = result.step_size
        self.proposal_std_ = result.proposal_std
        self.correction_ = float(result.correction)
        self.lambda_prime_ = float(result.lambda_prime)
        self.accepted_batch_sizes_ = result.accepted_batch_sizes
        self.n_divergent_ = result.n_divergent
        self.trajectory_length_ = result.trajectory_length
        self.n_grad_evals_ = result.n_grad
        S = self.samples_.shape[1]
        self.sample_stats_ = dict(result.draw_stats)
        self.sample_stats_["step_size"] = np.repeat(result.step_size[:, None], S, axis=1)

    def _record_losses(self, losses):
        """``lp``, ``surrogate_scale_`` and ``batch_noise_`` from the per-example losses ``(S, n)``.

        ``losses`` are the ``l_i(theta)`` the potential saw (standardized scale).
        """
        # log pi_lambda of each draw up to a constant: -lambda R_n(theta) + log Pi(theta)
        lp = self._log_prior_of_draws() - self.lambda_ * losses.mean(1)
        self.sample_stats_["lp"] = lp.reshape(self.samples_.shape[:2])
        # the per-example term of the batch potential is c * l_i: lambda' l_i / n
        # for csMALA, lambda l_i / (n rho) for sMALA (Lemmas 1 and 3)
        n = losses.shape[1]
        c, d, _ = surrogate_constants(self.sampler_, self.lambda_, n, self.rho_, self.correction_)
        self.surrogate_scale_ = float(c * losses.mean())
        # Var(sum_i Z_i t_i) = rho (1 - rho) sum_i t_i^2 for Z_i ~ Ber(rho), t_i = c l_i + d;
        # the MH ratio holds the difference of two independent batches
        terms = c * losses + d
        noise = np.sqrt(2 * self.rho_ * (1 - self.rho_) * (terms**2).sum(1))
        self.batch_noise_ = float(noise.mean()) if self.sampler_ != "sgld" else 0.0

    def _log_prior_of_draws(self):
        """``log Pi`` of every draw (up to a constant), shape ``(n_chains * n_samples,)``."""
        with torch.no_grad():
            theta = torch.as_tensor(self.samples_.reshape(-1, self.spec_.n_params))
            return self._prior(self.spec_, torch.device("cpu")).log_density(theta).double().numpy()

    # ------------------------------------------------------------ the draws
    def _network_outputs(self, X):
        """Network outputs of every retained draw on validated ``X``, float64.

        Shape ``(S, n)``, or ``(S, n, n_outputs)`` with several outputs.
        """
        Xs = torch.as_tensor((X - self.x_mean_) / self.x_scale_, dtype=torch.float32)
        theta = torch.as_tensor(self.samples_.reshape(-1, self.samples_.shape[-1]))
        width = max(self.spec_.layer_sizes)
        chunk = max(1, int(2e7 // max(1, X.shape[0] * width)))
        with torch.no_grad():
            F = torch.cat([self.spec_.forward(theta[i : i + chunk], Xs) for i in range(0, len(theta), chunk)])
        return F.double().numpy()

    def _validated(self, X):
        check_is_fitted(self)
        return validate_data(self, X, reset=False, dtype=np.float64)

    def unpack_samples(self):
        """Every draw as scikit-learn ``coefs_`` / ``intercepts_`` lists (standardized data).

        Returns
        -------
        list of (coefs, intercepts)
        """
        check_is_fitted(self)
        return [self.spec_.unpack(t) for t in self.samples_.reshape(-1, self.samples_.shape[-1])]

    def to_arviz(self, X=None, y=None):
        """The posterior draws as ArviZ data, with ``(chain, draw)`` dimensions.

        Groups: ``posterior`` holds every layer's ``coefs_<l>`` (shape
        ``(chain, draw, n_in, n_out)``) and ``intercepts_<l>`` (``(chain, draw,
        n_out)``) on the standardized scale of ``samples_``; ``sample_stats``
        holds ``acceptance_rate`` (fraction of accepted proposals over the
        ``thin`` steps before each draw) and ``lp`` (``log pi_lambda`` up to a
        constant). With ``X`` and ``y`` (e.g. the training data) it adds
        ``log_likelihood`` (``y``: the log-likelihood of every example under
        every draw, shape ``(chain, draw, n)``) and ``observed_data``, so that
        ``az.waic`` / ``az.loo`` apply. ArviZ is optional and imported here.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
        y : array-like of shape (n_samples,), default=None

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
        groups = {"posterior": posterior, "sample_stats": dict(self.sample_stats_)}
        if (X is None) != (y is None):
            raise ValueError("Pass both X and y (the data of the log-likelihood), or neither.")
        if X is not None:
            X = self._validated(X)
            y = self._check_targets(y)
            if len(y) != X.shape[0]:
                raise ValueError(f"X has {X.shape[0]} rows but y has {len(y)} entries.")
            groups["log_likelihood"] = {"y": self._log_likelihood(X, y).reshape(K, S, -1)}
            groups["observed_data"] = {"y": y}
            dims["y"] = ["obs"]
        return from_groups(groups, dims=dims)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags

    def _potential(self, spec, Xt, yt):
        return MLPPotential(spec, Xt, yt, loss=self._loss)

    # --------------------------------------------------- subclass interface
    #: the per-example loss (:data:`skgibbs.model.LOSSES`) of ``R_n``
    _loss = "squared"

    def _n_outputs(self):
        """Width of the output layer (after ``_encode_targets``)."""
        return 1

    def _encode_targets(self, y):  # pragma: no cover - interface
        """Set the target encoding attributes; return the targets the loss sees (NumPy)."""
        raise NotImplementedError

    def _resolve_sampler(self):  # pragma: no cover - interface
        """``(sampler_, rho_)``."""
        raise NotImplementedError

    def _chain_config(self):  # pragma: no cover - interface
        raise NotImplementedError

    def _summarise(self, X, y):  # pragma: no cover - interface
        raise NotImplementedError

    def _check_targets(self, y):  # pragma: no cover - interface
        raise NotImplementedError

    def _log_likelihood(self, X, y):  # pragma: no cover - interface
        """Per-draw, per-example log-likelihood, shape ``(S, n)``."""
        raise NotImplementedError
