"""laplace-torch as a peer of the uncertainty and classification benchmarks.

The recipe of Laplace Redux (Daxberger et al., NeurIPS 2021) and of
laplace-torch's regression example: a network trained to its maximum a
posteriori (MAP) weights, then a post-hoc Laplace approximation around them
with the hyperparameters set by the Laplace approximation of the marginal
likelihood, and the linearised (GLM) predictive.

* Network: one hidden layer of :data:`HIDDEN` tanh units (the network of
  laplace-torch's regression example), ``torch.nn.Linear(d, 50), Tanh(),
  Linear(50, k)`` in float32, initialised by torch's default after
  ``torch.manual_seed(seed)``.
* MAP: full-batch Adam (learning rate :data:`MAP_LR`, the example's) on the
  mean negative log-likelihood with weight decay ``1 / n`` (``weight_decay``
  in Adam adds the gradient of ``||w||^2 / (2 n)``): the MAP under the
  Gaussian prior ``N(0, 1)`` on every weight and bias, with the unit noise
  variance on the standardised ``y`` for regression (loss ``0.5 * MSE``) and
  the cross-entropy for classification.

  - regression: early stopping on a held-out :data:`HOLDOUT` of the
    training part, at most :data:`MAP_STEPS` steps, stopped
    :data:`PATIENCE` steps after the best held-out loss, whose weights are
    kept. Trained for a fixed 1000 steps (the example's) the network
    overfits: on diabetes (splits 0 and 1) the marginal likelihood then puts
    the noise variance near 1700 against a test mean squared error near
    5000.
  - classification: a fixed :data:`CLASSIFIER_STEPS` steps, by which the
    loss has converged (breast cancer: the training cross-entropy is flat
    from about 400 steps): the MAP whose overconfidence the Laplace
    approximation is there to correct. The held-out cross-entropy is no
    guide here: it rises after a few steps while the held-out accuracy
    still climbs.

* Laplace: ``Laplace(model, likelihood, subset_of_weights="all",
  hessian_structure="full")`` (the generalised Gauss-Newton of
  laplace-torch's default backend, curvlinops) fitted on the whole training
  part (for regression the held-out part included), then

  - regression: the prior precision (one scalar) and the noise standard
    deviation ``sigma_noise`` by :data:`HYPER_STEPS` Adam steps (learning
    rate :data:`HYPER_LR`) on ``-la.log_marginal_likelihood(prior_precision,
    sigma_noise)`` in their logarithms, started at the MAP's values (1, 1):
    the loop of laplace-torch's README and regression example (its steps
    have converged long before: on Boston the two logarithms move by less
    than 1e-4 after 300);
  - classification: ``la.optimize_prior_precision(method="marglik",
    pred_type="glm", link_approx="probit")`` (laplace-torch's defaults: a
    scalar prior precision, 100 Adam steps of learning rate 0.1).

* Predictive: ``la(X, pred_type="glm")``; for regression the Gaussian with
  the mean ``f_mu`` and the variance ``f_var + sigma_noise**2`` (on the
  standardised scale, rescaled to ``y``'s), for classification the probit
  approximation of the softmax (``link_approx="probit"``).

laplace-torch requires torchvision (which it does not import), and
torchvision a torch of its own version: a plain ``pip install
laplace-torch`` replaces a CPU torch with PyPI's CUDA build. Install it and
its torch-dependent requirements with ``--no-deps`` and the others by hand
(:data:`INSTALL`). Importing this module does not import laplace-torch.
"""

import copy
import warnings

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin

__all__ = ["HIDDEN", "INSTALL", "QUICK", "LaplaceMLPClassifier", "fit_laplace_regressor", "missing"]

HIDDEN, MAP_LR, HYPER_STEPS, HYPER_LR = 50, 1e-2, 300, 1e-1
MAP_STEPS, PATIENCE, HOLDOUT = 5000, 500, 0.1  # regression: early stopping
CLASSIFIER_STEPS, PRIOR_STEPS = 1000, 100  # classification: MAP steps, optimize_prior_precision's n_steps
#: the quick runs of the benchmarks: fewer steps everywhere (keyword arguments of both fits)
QUICK = {"map_steps": 100, "hyper_steps": 20}
#: the commands that install laplace-torch beside a CPU torch: the torch-dependent packages without their
#: requirements, then the others
INSTALL = (
    "pip install --no-deps laplace-torch asdfghjkl==0.1a4 backpack-for-pytorch curvlinops-for-pytorch "
    "torchmetrics einconv linear_operator unfoldNd && pip install einops opt_einsum tqdm lightning-utilities"
)


def missing():
    """A message when laplace-torch does not import, else None."""
    try:
        import laplace  # noqa: F401
    except ImportError as exc:
        return f"laplace-torch does not import ({exc}): {INSTALL}"
    return None


def _network(d, k, seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(d, HIDDEN), torch.nn.Tanh(), torch.nn.Linear(HIDDEN, k))


def _adam(model, n):
    """Adam with weight decay ``1 / n``: with the mean loss over ``n`` points, the MAP under N(0, 1)."""
    return torch.optim.Adam(model.parameters(), lr=MAP_LR, weight_decay=1.0 / n)


def _train_early_stopped(model, X, y, loss, seed, max_steps):
    """Full-batch Adam to the best loss on a held-out part of ``(X, y)``; the number of steps to it."""
    from sklearn.model_selection import train_test_split

    fit, held = train_test_split(np.arange(len(X)), test_size=HOLDOUT, random_state=seed)
    optimizer = _adam(model, len(fit))
    best, best_step, state = np.inf, 0, None
    for step in range(1, max_steps + 1):
        optimizer.zero_grad()
        loss(model(X[fit]), y[fit]).backward()
        optimizer.step()
        with torch.no_grad():
            held_loss = float(loss(model(X[held]), y[held]))
        if held_loss < best:
            best, best_step, state = held_loss, step, copy.deepcopy(model.state_dict())
        elif step - best_step >= PATIENCE:
            break
    model.load_state_dict(state)
    model.eval()
    return best_step


def _train_fixed(model, X, y, loss, steps):
    """Full-batch Adam for ``steps`` steps on all of ``(X, y)``."""
    optimizer = _adam(model, len(X))
    for _ in range(steps):
        optimizer.zero_grad()
        loss(model(X), y).backward()
        optimizer.step()
    model.eval()
    return model


def _loader(X, y):
    from torch.utils.data import DataLoader, TensorDataset

    return DataLoader(TensorDataset(X, y), batch_size=len(X))


def fit_laplace_regressor(X, y, seed, map_steps=MAP_STEPS, hyper_steps=HYPER_STEPS):
    """Fit on standardised inputs ``X``: ``(predict, extras)``, ``predict(Xt)`` the mean and sd on ``y``'s scale.

    ``map_steps``: the most Adam steps of the early-stopped MAP; ``hyper_steps``: the steps on the
    marginal likelihood.
    """
    from laplace import Laplace

    loc, scale = float(np.mean(y)), float(np.std(y))
    Xt = torch.as_tensor(X, dtype=torch.float32)
    yt = torch.as_tensor((y - loc) / scale, dtype=torch.float32)[:, None]
    model = _network(X.shape[1], 1, seed)
    steps = _train_early_stopped(model, Xt, yt, lambda f, t: 0.5 * torch.mean((f - t) ** 2), seed, map_steps)
    la = Laplace(model, "regression", subset_of_weights="all", hessian_structure="full")
    la.fit(_loader(Xt, yt))
    log_prior, log_sigma = torch.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)
    optimizer = torch.optim.Adam([log_prior, log_sigma], lr=HYPER_LR)
    for _ in range(hyper_steps):
        optimizer.zero_grad()
        (-la.log_marginal_likelihood(log_prior.exp(), log_sigma.exp())).backward()
        optimizer.step()
    la.prior_precision, la.sigma_noise = log_prior.detach().exp(), log_sigma.detach().exp()
    noise = float(la.sigma_noise) ** 2

    def predict(Xt):
        f_mu, f_var = la(torch.as_tensor(Xt, dtype=torch.float32), pred_type="glm")
        mean, var = f_mu.reshape(-1).double().numpy(), f_var.reshape(-1).double().numpy() + noise
        return loc + scale * mean, scale * np.sqrt(var)

    extras = {
        "prior_precision": float(la.prior_precision),
        "noise_variance": noise * scale**2,
        "log_marglik": float(la.log_marginal_likelihood()),
        "map_steps": steps,
    }
    return predict, extras


class LaplaceMLPClassifier(ClassifierMixin, BaseEstimator):
    """Full Laplace around a MAP network (laplace-torch), GLM predictive with the probit link.

    A scikit-learn classifier for the benchmarks: ``fit``, ``predict_proba``,
    ``predict``, ``classes_``. ``map_steps``: the Adam steps to the MAP;
    ``hyper_steps``: the steps of ``optimize_prior_precision`` (``n_steps``).
    """

    def __init__(self, random_state=0, map_steps=CLASSIFIER_STEPS, hyper_steps=PRIOR_STEPS):
        self.random_state = random_state
        self.map_steps = map_steps
        self.hyper_steps = hyper_steps

    def fit(self, X, y):
        from laplace import Laplace

        self.classes_, codes = np.unique(y, return_inverse=True)
        Xt = torch.as_tensor(np.asarray(X), dtype=torch.float32)
        yt = torch.as_tensor(codes, dtype=torch.long)
        model = _network(Xt.shape[1], len(self.classes_), self.random_state)
        _train_fixed(model, Xt, yt, torch.nn.functional.cross_entropy, self.map_steps)
        self.laplace_ = Laplace(model, "classification", subset_of_weights="all", hessian_structure="full")
        self.laplace_.fit(_loader(Xt, yt))
        with warnings.catch_warnings():  # "make sure link_approx is the one of the predictive": it is
            warnings.filterwarnings("ignore", message="By default `link_approx` is `probit`")
            self.laplace_.optimize_prior_precision(
                method="marglik", pred_type="glm", link_approx="probit", n_steps=self.hyper_steps
            )
        self.prior_precision_ = float(self.laplace_.prior_precision)
        return self

    def predict_proba(self, X):
        X = torch.as_tensor(np.asarray(X), dtype=torch.float32)
        P = self.laplace_(X, pred_type="glm", link_approx="probit").detach().double().numpy()
        return P / P.sum(axis=1, keepdims=True)  # float32 rounding

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
