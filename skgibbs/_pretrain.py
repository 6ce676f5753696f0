"""Pre-training of the chains' starting points (paper 000 §5): Adam with early stopping.

Adam runs on 80% of the data until the loss on the other 20% has levelled
off: it stops once no chain's best held-out loss has fallen by a fraction
:data:`TOLERANCE` over the last :data:`PATIENCE` steps, or at the cap
``n_iter`` (the estimators' ``pretrain_iter``), and keeps each chain's best
iterate. Measured on the quick start (300 points of the data gap, a 1-16-1
network), diabetes, Boston, concrete and Auto ((100, 100) networks) at
learning rates 1e-3 to 1e-2: the rule stopped within 2% of the held-out
loss of a run to 5,000 steps (10,000 on the quick start), after 230
(diabetes) to 2,150 (concrete) steps at 1e-3, while the quick start was
still falling at 10,000. A learning rate of 1e-2 reached lower held-out
losses on the quick start, Boston and concrete (0.0099 against 0.022,
12% and 14% lower) and higher ones on diabetes and Auto (7% and 2%);
:data:`LEARNING_RATE` stays 1e-3, the rate every benchmark was measured at.
"""

from typing import NamedTuple

import torch

from .model import per_example_loss
from .samplers._progress import progress

__all__ = ["pretrain", "PretrainInfo", "MAX_HELD_OUT", "PATIENCE", "TOLERANCE", "LEARNING_RATE"]

#: steps without a relative fall of the best held-out loss by ``TOLERANCE`` after which pre-training stops
PATIENCE = 500
#: the relative fall of the best held-out loss over ``PATIENCE`` steps that counts as progress
TOLERANCE = 0.01
#: Adam's learning rate
LEARNING_RATE = 1e-3


class PretrainInfo(NamedTuple):
    """How a pre-training ended.

    Attributes
    ----------
    n_iter : int
        Adam steps taken.
    converged : bool
        Whether the held-out loss levelled off before the cap.
    recent_fall : float
        The relative fall of the best held-out loss (mean over the chains)
        over the last ``PATIENCE`` steps (or all steps, if fewer).
    """

    n_iter: int
    converged: bool
    recent_fall: float

#: rows of the held-out part on which the iterates are compared; a larger held-out part (n > 5 of
#: these) is subsampled once, so that a check costs the same at any n
MAX_HELD_OUT = 10_000


def pretrain(
    spec,
    theta,
    Xt,
    yt,
    n_iter,
    seed,
    lr=LEARNING_RATE,
    batch=1024,
    every=10,
    mask=None,
    loss="squared",
    scale=None,
    owner=None,
):
    """Adam on 80% of the data; keep each chain's best iterate on the other 20%.

    ``Xt`` is a tensor or rows read on demand (:class:`~skgibbs._rows.ScaledRows`):
    each step reads its batch of ``batch`` rows, and the held-out rows are
    read once. At most :data:`MAX_HELD_OUT` of the held-out rows, drawn at
    random once, judge the iterates, so that a check costs the same at any
    ``n`` (no row of the 20% is trained on either way).

    ``loss`` names the per-example loss (:data:`skgibbs.model.LOSSES`); the
    returned held-out loss is its mean over the held-out rows. With ``scale`` (shape
    ``(Q,)``) Adam moves ``w = theta / scale`` instead of ``theta`` (the
    mean-field parametrization of the variational fit).

    With ``mask`` (shape of ``theta``, 0/1), the coordinates outside it are
    held at zero (projected Adam): a sparse network keeps its active set.

    ``owner`` (an object with ``verbose``, e.g. the estimator) gets a
    progress bar with the best held-out loss so far.

    Returns the best iterates, their mean held-out loss and a
    :class:`PretrainInfo`: the steps taken, and whether the held-out loss
    levelled off (no chain's best fell by ``TOLERANCE`` of itself over the
    last ``PATIENCE`` steps) before the cap ``n_iter``.
    """
    n = Xt.shape[0]
    gen = torch.Generator(device="cpu").manual_seed(seed)
    perm = torch.randperm(n, generator=gen).to(Xt.device)
    n_val = max(1, n // 5) if n >= 5 else 0
    val, train = perm[: min(n_val, MAX_HELD_OUT)], perm[n_val:]
    if n_val == 0:
        val = train
    held_out = Xt[val], yt[val]
    whole = (Xt[train], yt[train]) if len(train) <= batch else None
    scale = torch.ones(theta.shape[1], dtype=theta.dtype, device=theta.device) if scale is None else scale
    scale = scale.to(theta.device, theta.dtype)
    w = (theta / scale).requires_grad_(True)
    opt = torch.optim.Adam([w], lr=lr)
    best = theta.detach().clone()
    best_err = torch.full((theta.shape[0],), torch.inf, device=Xt.device)

    def mean_loss(X, y):
        out = spec.forward(w * scale, X)
        return per_example_loss(loss, out, y.expand(out.shape[:2])).mean(1)

    # the best held-out loss every check, to judge the fall over the last PATIENCE steps
    history = []

    def check():
        with torch.no_grad():
            err = mean_loss(*held_out)
            better = err < best_err
            best.copy_(torch.where(better[:, None], w * scale, best))
            best_err.copy_(torch.where(better, err, best_err))
            history.append(best_err.clone())

    def recent_fall():
        """The relative fall of each chain's best held-out loss over the last ``PATIENCE`` steps."""
        back = min(len(history) - 1, PATIENCE // every)
        before, now = history[-1 - back], history[-1]
        fall = (before - now) / before.abs().clamp(min=1e-12)
        return torch.where(torch.isfinite(fall), fall, torch.ones_like(fall))

    converged, taken = False, n_iter
    for it in range(n_iter):
        if it % every == 0:
            check()
            if it >= PATIENCE and bool((recent_fall() < TOLERANCE).all()):
                converged, taken = True, it
                break
        if whole is None:
            idx = train[torch.randint(len(train), (batch,), generator=gen)]
        opt.zero_grad()
        mean_loss(*(whole or (Xt[idx], yt[idx]))).sum().backward()
        opt.step()
        if mask is not None:
            with torch.no_grad():
                w.mul_(mask)
        if owner is not None and owner.verbose:
            progress(owner, "pre-training", it, n_iter, held_out_loss=lambda: f"{float(best_err.min()):.4g}")
    if owner is not None and owner.verbose and converged:
        progress(owner, "pre-training", n_iter - 1, n_iter,
                 held_out_loss=lambda: f"{float(best_err.min()):.4g} (levelled off at step {taken})")
    check()
    finite = torch.isfinite(best_err)
    if not bool(finite.all()):
        raise FloatingPointError("Pre-training diverged; lower the scale of X or set pretrain_iter=0.")
    info = PretrainInfo(taken, converged, float(recent_fall().mean()))
    return best.detach(), float(best_err.mean()), info
