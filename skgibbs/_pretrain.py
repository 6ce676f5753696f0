"""Pre-training of the chains' starting points (paper 000 §5): Adam with early stopping."""

import torch

from .model import per_example_loss
from .samplers._progress import progress

__all__ = ["pretrain", "MAX_HELD_OUT"]

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
    lr=1e-3,
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

    def check():
        with torch.no_grad():
            err = mean_loss(*held_out)
            better = err < best_err
            best.copy_(torch.where(better[:, None], w * scale, best))
            best_err.copy_(torch.where(better, err, best_err))

    for it in range(n_iter):
        if it % every == 0:
            check()
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
    check()
    finite = torch.isfinite(best_err)
    if not bool(finite.all()):
        raise FloatingPointError("Pre-training diverged; lower the scale of X or set pretrain_iter=0.")
    return best.detach(), float(best_err.mean())
