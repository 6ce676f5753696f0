"""Fitted models as potentials for the Langevin functional variance.

Each adapter returns the per-example squared loss of the model on the data,
the starting parameters (the fitted ones) and the model's point prediction,
all on the scale on which the model's parameters live. Models are recognised
by their fitted attributes, so this layer imports no estimator class.
"""

import copy
from typing import NamedTuple

import numpy as np
import torch
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d

from ..model import ACTIVATIONS, MLPSpec
from ..potential import FunctionPotential, LinearPotential, MLPPotential

__all__ = ["LangevinProblem", "langevin_problem"]

_DTYPE = torch.float64
_UNSUPPORTED = (
    "model must be a fitted linear regressor (coef_), MLPRegressor, skgibbs estimator, torch.nn.Module "
    "or a Pipeline ending in one, got {}."
)


class LangevinProblem(NamedTuple):
    potential: object
    theta0: torch.Tensor  # (K, Q) starting points
    penalty: torch.Tensor  # (Q,) 1 where alpha |theta|^2 applies
    y: np.ndarray  # (n,) responses on the process scale
    y_pred: np.ndarray  # (n,) the model's point prediction on that scale
    var_scale: float  # variances on the scale of the user's y = this * process scale


def langevin_problem(model, X, y):
    """Build the potential of ``model`` on ``(X, y)``; see :func:`langevin_functional_variance`."""
    if isinstance(model, Pipeline):
        check_is_fitted(model)
        X = model[:-1].transform(X)
        model = model[-1]
    X = check_array(X, dtype=np.float64, input_name="X")
    y = column_or_1d(check_array(y, ensure_2d=False, dtype=np.float64, input_name="y"), warn=True)
    if len(y) != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {len(y)} entries.")
    if isinstance(model, torch.nn.Module):
        return _torch_module(model, X, y)
    if not hasattr(model, "fit"):
        raise TypeError(_UNSUPPORTED.format(type(model).__name__))
    check_is_fitted(model)
    n_features = getattr(model, "n_features_in_", X.shape[1])
    if X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, but the model was fitted with {n_features}.")
    if hasattr(model, "samples_") and hasattr(model, "spec_"):
        return _skgibbs(model, X, y)
    if hasattr(model, "coefs_") and hasattr(model, "intercepts_"):
        return _sklearn_mlp(model, X, y)
    if hasattr(model, "coef_"):
        return _linear(model, X, y)
    raise TypeError(_UNSUPPORTED.format(type(model).__name__))


def _mlp_problem(spec, theta0, X, y, var_scale=1.0, y_pred=None):
    Xt, yt = torch.as_tensor(X, dtype=_DTYPE), torch.as_tensor(y, dtype=_DTYPE)
    theta0 = torch.as_tensor(np.atleast_2d(theta0), dtype=_DTYPE)
    if y_pred is None:
        with torch.no_grad():
            y_pred = spec.forward(theta0[:1], Xt)[0].numpy()
    pen = torch.ones(spec.n_params, dtype=_DTYPE)
    return LangevinProblem(MLPPotential(spec, Xt, yt), theta0, pen, y, np.asarray(y_pred, dtype=float), var_scale)


def _sklearn_mlp(model, X, y):
    if getattr(model, "out_activation_", "identity") != "identity" or model.coefs_[-1].shape[1] != 1:
        raise ValueError("model must be a single-output MLPRegressor (identity output); fit it on a 1-D y.")
    if model.activation not in ACTIVATIONS:
        raise ValueError(f"MLPRegressor activation {model.activation!r} is not supported.")
    hidden = tuple(W.shape[1] for W in model.coefs_[:-1])
    spec = MLPSpec(X.shape[1], hidden, model.activation)
    return _mlp_problem(spec, spec.pack(model.coefs_, model.intercepts_), X, y)


def _skgibbs(model, X, y):
    if model.spec_.n_outputs != 1:
        raise ValueError(
            f"model has a noise scale per input (noise={model.noise_!r}), and the Langevin process here "
            "runs on the squared loss of one output; use the fitted generalization_loss_ and lfv_, which "
            "read each draw's variance, or refit with noise='homoscedastic'."
        )
    # the chains live on the estimator's standardised scale: run the process there
    Xs = (X - model.x_mean_) / model.x_scale_
    ys = (y - model.y_mean_) / model.y_scale_
    draws = model.samples_
    with torch.no_grad():
        flat = torch.as_tensor(draws.reshape(-1, draws.shape[-1]), dtype=_DTYPE)
        y_pred = model.spec_.forward(flat, torch.as_tensor(Xs, dtype=_DTYPE)).mean(0).numpy()
    return _mlp_problem(model.spec_, draws[:, -1, :], Xs, ys, float(model.y_scale_) ** 2, y_pred)


def _linear(model, X, y):
    coef = np.asarray(model.coef_, dtype=float)
    if coef.ndim > 1 and coef.shape[0] != 1:
        raise ValueError("model must be a single-output linear regressor; fit it on a 1-D y.")
    coef = coef.ravel()
    fit_intercept = bool(getattr(model, "fit_intercept", True))
    theta0 = np.append(coef, float(np.ravel(model.intercept_)[0])) if fit_intercept else coef
    Xt, yt = torch.as_tensor(X, dtype=_DTYPE), torch.as_tensor(y, dtype=_DTYPE)
    pen = torch.ones(len(theta0), dtype=_DTYPE)
    if fit_intercept:
        pen[-1] = 0.0  # as Ridge, the intercept is not penalised
    y_pred = X @ coef + (theta0[-1] if fit_intercept else 0.0)
    theta0 = torch.as_tensor(theta0[None, :], dtype=_DTYPE)
    return LangevinProblem(LinearPotential(Xt, yt, fit_intercept), theta0, pen, y, y_pred, 1.0)


def _torch_module(module, X, y):
    module = copy.deepcopy(module).eval()
    names, params = zip(*[(k, p.detach()) for k, p in module.named_parameters() if p.requires_grad])
    dtype = params[0].dtype
    shapes = [p.shape for p in params]
    sizes = [p.numel() for p in params]
    Xt, yt = torch.as_tensor(X, dtype=dtype), torch.as_tensor(y, dtype=dtype)

    def predict(theta, Xb):
        chunks = torch.split(theta, sizes)
        values = {k: c.view(s) for k, c, s in zip(names, chunks, shapes)}
        return torch.func.functional_call(module, values, (Xb,)).reshape(-1)

    def loss_fn(theta, idx):
        return torch.stack([(yt[i] - predict(t, Xt[i])) ** 2 for t, i in zip(theta, idx)])

    theta0 = torch.cat([p.reshape(-1) for p in params])[None, :]
    with torch.no_grad():
        y_pred = predict(theta0[0], Xt).double().numpy()
    if y_pred.shape != y.shape:
        raise ValueError(f"The torch module must map X of shape (n, d) to n outputs, got {y_pred.shape[0]} values.")
    pen = torch.ones(theta0.shape[1], dtype=dtype)
    return LangevinProblem(FunctionPotential(loss_fn, len(y)), theta0, pen, y, y_pred, 1.0)
