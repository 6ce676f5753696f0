"""laplace-torch as a peer of the uncertainty and classification benchmarks.

The recipe of Laplace Redux (Daxberger et al., NeurIPS 2021) and of laplace-torch's regression example: a
network with one hidden layer of :data:`HIDDEN` tanh units (float32, torch's default initialisation after
``torch.manual_seed(seed)``) trained to its MAP by full-batch Adam (learning rate :data:`MAP_LR`) on the
mean negative log-likelihood with weight decay ``1 / n``, i.e. under the prior ``N(0, 1)`` on every weight
(with unit noise variance on the standardised ``y`` for regression); then ``Laplace(model, likelihood,
subset_of_weights="all", hessian_structure="full")`` on the whole training part and the GLM predictive.

* Regression: the MAP early-stopped on a held-out :data:`HOLDOUT` of the training part (at most
  :data:`MAP_STEPS` steps, stopped :data:`PATIENCE` steps after the best held-out loss, whose weights are
  kept: trained for the example's fixed 1000 steps the network overfits); the prior precision and
  ``sigma_noise`` by :data:`HYPER_STEPS` Adam steps on ``-la.log_marginal_likelihood`` (the loop of
  laplace-torch's README); the Gaussian predictive with variance ``f_var + sigma_noise**2``, on ``y``'s
  scale.
* Classification: a fixed :data:`CLASSIFIER_STEPS` MAP steps (the loss has converged by then; the held-out
  cross-entropy is no guide, it rises while the held-out accuracy still climbs);
  ``la.optimize_prior_precision(method="marglik", pred_type="glm", link_approx="probit")`` and the probit
  predictive.

laplace-torch requires torchvision, which pins a torch of its own: install it as :data:`INSTALL` says.
Importing this module does not import laplace-torch.
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
    """Fit on standardised inputs ``X``: ``predict(Xt)`` (the mean and sd on ``y``'s scale) and the extras
    to record; ``map_steps`` caps the early-stopped MAP, ``hyper_steps`` steps on the marginal likelihood."""
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
    """Full Laplace around a MAP network (laplace-torch), GLM predictive with the probit link; ``map_steps``
    Adam steps to the MAP, ``hyper_steps`` those of ``optimize_prior_precision``."""

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
