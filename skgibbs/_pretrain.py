"""Pre-training of the chains' starting points (paper 000 §5): Adam with early stopping.

Adam runs on 80% of the data until the loss on the other 20% has levelled
off: no chain's best held-out loss has fallen by a fraction
:data:`TOLERANCE` over the last :data:`PATIENCE` steps, or the cap
``n_iter`` (the estimators' ``pretrain_iter``) is reached; each chain keeps
its best iterate.

No one learning rate reaches the plateau everywhere (the ``pretrain``
benchmark's page has the held-out losses of each schedule on the quick
start and five regression sets): Adam at 1e-3 alone crawls where the
network must bend (the data gap, Boston, concrete), while 1e-2 until the
loss levels off, then 1e-3 from the best iterate, overfits nearly linear
data (diabetes, house prices) within its first hundred steps. So
:data:`SCHEDULES` runs both side by side in one batch from the same
starts, and each chain keeps the better, in one batch of twice the chains.

From :data:`ONE_SCHEDULE_ROWS` rows on, only the fast schedule runs for
the losses of :data:`ONE_SCHEDULE_LOSSES`: on the tables of the
``tabular`` benchmark it reached the lower held-out loss under the
Student-t loss on every one (the pair ended at its iterate), and within a
fraction of a percent of the pair's under the squared loss, so the slow
schedule's half of the batch bought nothing. The fast rate's overfitting
in its first hundred steps is a small-data effect: at 10,000 rows a
hundred steps of 1,024 rows are ten passes over the data. The normal
noise with a learned variance per input (``"gaussian"``) keeps both: the
slow rate won there on some tables, by a margin that decided the fit that
followed. A likely reason is that loss's gradient in the mean, ``2 (m -
y) e^{-s}``, which has no bound as the variance of a closely fitted row
shrinks (the t's is bounded in the residual and grows only as
``e^{-s/2}``). The classifier's cross-entropy was not measured, and keeps
both.

Each step's gradient is the network's hand-written backward pass
(:meth:`~skgibbs.model.MLPSpec.loss_and_grad`, equal to autograd's to
rounding), not autograd, which it beats most on the small networks and
batches of a pre-training (eight rows of parameters, one thread: a
``(16,)`` network with two outputs on 240 rows, 295 against 531 µs a
step; ``(16, 16)`` on 160 rows, 350 against 508 µs, and on 1,024 rows
1,245 against 1,979 µs; ``(100, 100)`` on 1,024 rows, 16.1 against
18.3 ms).
"""

from typing import NamedTuple

import torch

from .model import per_example_loss
from ._progress import progress

__all__ = [
    "glorot_draws",
    "pretrain",
    "held_out_split",
    "PretrainInfo",
    "MAX_HELD_OUT",
    "PATIENCE",
    "TOLERANCE",
    "SCHEDULES",
    "ONE_SCHEDULE_ROWS",
    "ONE_SCHEDULE_LOSSES",
]

#: steps without a relative fall of the best held-out loss by ``TOLERANCE`` after which pre-training stops
PATIENCE = 500
#: the relative fall of the best held-out loss over ``PATIENCE`` steps that counts as progress
TOLERANCE = 0.01
#: Adam's learning-rate schedules, run side by side from the same starts (each chain keeps the
#: better): each schedule's rates in turn, each until the held-out loss levels off
SCHEDULES = ((1e-3,), (1e-2, 1e-3))
#: rows (held-out part included) from which ``lr="auto"`` runs the fast schedule of :data:`SCHEDULES` alone
# (the six tabular tables, 17,000 to 51,000 training rows; the Student-t loss: the same starting points
# to the bit on all six, the slow schedule 40% of the time, 2.4 of 5.5 s on nlswork and 5.3 of 13.9 s
# on diamonds; the squared loss, four chains: held-out losses within 0.4% of the pair's either way; the
# "gaussian" loss: worse on diamonds (-3.311 against -3.343) and nlswork (0.252 against 0.226), where
# the variational fit from the fast start then stopped at a test log-likelihood of -0.91 against -0.19)
ONE_SCHEDULE_ROWS = 10_000
#: the losses for which ``lr="auto"`` runs one schedule from :data:`ONE_SCHEDULE_ROWS` rows
ONE_SCHEDULE_LOSSES = ("squared", "student")


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
    held_out : tuple of float
        Each chain's held-out loss.
    """

    n_iter: int
    converged: bool
    recent_fall: float
    held_out: tuple = ()

#: rows of the held-out part on which the iterates are compared; a larger held-out part (n > 5 of
#: these) is subsampled once, so that a check costs the same at any n
MAX_HELD_OUT = 10_000


class _Adam:
    """Adam (Kingma and Ba, 2015) on one leaf tensor per parameter group, each with its own rate.

    The arithmetic of ``torch.optim.Adam`` at its defaults on the CPU, op
    for op (the same bits, tested), without ``torch.optim``: its first use
    in a process imports ``torch._dynamo``, about two seconds of the first
    fit. ``lrs[g]`` may be changed between steps; :meth:`reset` starts a
    group's moments afresh.
    """

    def __init__(self, leaves, lrs, betas=(0.9, 0.999), eps=1e-8):
        self.leaves, self.lrs, self.betas, self.eps = list(leaves), list(lrs), betas, eps
        self.state = [None] * len(self.leaves)

    def reset(self, group):
        self.state[group] = None

    @torch.no_grad()
    def step(self):
        beta1, beta2 = self.betas
        for g, (p, lr) in enumerate(zip(self.leaves, self.lrs)):
            if p.grad is None:
                continue
            if self.state[g] is None:
                self.state[g] = [0, torch.zeros_like(p), torch.zeros_like(p)]
            state = self.state[g]
            state[0] += 1
            step, m, v = float(state[0]), state[1], state[2]
            m.lerp_(p.grad, 1 - beta1)
            v.mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
            step_size = lr / (1 - beta1**step)
            denom = (v.sqrt() / (1 - beta2**step) ** 0.5).add_(self.eps)
            p.addcdiv_(m, denom, value=-step_size)


def glorot_draws(spec, seeds, device):
    """Glorot-initialised starting points ``(K, Q)`` in float32, chain ``k`` from a generator seeded ``seeds[k + 1]``.

    ``seeds[0]`` is the pre-training's own seed (:func:`pretrain`); the
    draws are made on the CPU, so that a seed gives the same start on
    every device, and moved to ``device``.
    """
    gens = [torch.Generator(device="cpu").manual_seed(int(s)) for s in seeds[1:]]
    return torch.cat([spec.init_params(g, 1, torch.float32) for g in gens]).to(device)


def held_out_split(n, seed, device="cpu"):
    """``(generator, held_out, train)``: the row indices :func:`pretrain` judges on and trains on.

    A fifth of the ``n`` rows (at most :data:`MAX_HELD_OUT` of them) is
    held out, drawn by a generator seeded with ``seed``, which then draws
    the training batches; under 5 rows every row is both.
    """
    gen = torch.Generator(device="cpu").manual_seed(seed)
    perm = torch.randperm(n, generator=gen).to(device)
    n_val = max(1, n // 5) if n >= 5 else 0
    val, train = perm[: min(n_val, MAX_HELD_OUT)], perm[n_val:]
    return gen, (train if n_val == 0 else val), train


def _schedules(lr, n_rows, loss):
    """``lr`` as a tuple of schedules, each a tuple of rates (``"auto"`` by ``n_rows`` and ``loss``)."""
    if isinstance(lr, str) and lr == "auto":
        one = n_rows >= ONE_SCHEDULE_ROWS and loss in ONE_SCHEDULE_LOSSES
        return SCHEDULES[1:] if one else SCHEDULES
    if isinstance(lr, (int, float)):
        return ((float(lr),),)
    lr = tuple(lr)
    if all(isinstance(r, (int, float)) for r in lr):
        return (tuple(float(r) for r in lr),)
    return tuple(tuple(float(r) for r in schedule) for schedule in lr)


def pretrain(
    spec,
    theta,
    Xt,
    yt,
    n_iter,
    seed,
    lr="auto",
    batch=1024,
    every=10,
    mask=None,
    loss="squared",
    scale=None,
    owner=None,
    weight=None,
):
    """Adam on 80% of the data; keep each chain's best iterate on the other 20%.

    ``Xt`` is a tensor or rows read on demand (:class:`~skgibbs._out_of_core.ScaledRows`):
    each step reads its batch of ``batch`` rows, and the held-out rows are
    read once. At most :data:`MAX_HELD_OUT` of the held-out rows, drawn at
    random once, judge the iterates, so that a check costs the same at any
    ``n`` (no row of the 20% is trained on either way).

    ``lr`` is a learning rate, a schedule (a decreasing sequence of rates)
    or a sequence of schedules. Under a schedule Adam runs at its first rate
    until the held-out loss levels off, then restarts at the next from each
    chain's best iterate (fresh moments), and so on; it has converged once
    the loss levels off at the last rate. Several schedules run side by side
    in one batch from the same starting points, and each chain keeps the
    iterate of whichever schedule reached the lower held-out loss; the
    default, :data:`SCHEDULES`, pairs a slow rate with a fast one that is
    then refined (see the module docstring for what each wins).
    ``"auto"`` is :data:`SCHEDULES`, but its fast schedule alone from
    :data:`ONE_SCHEDULE_ROWS` rows on under the losses of
    :data:`ONE_SCHEDULE_LOSSES`.

    ``loss`` names the per-example loss (:data:`skgibbs.model.LOSSES`); the
    returned held-out loss is its mean over the held-out rows. With ``scale`` (shape
    ``(Q,)``) Adam moves ``w = theta / scale`` instead of ``theta`` (the
    mean-field parametrization of the variational fit).

    With ``mask`` (shape of ``theta``, 0/1), the coordinates outside it are
    held at zero (projected Adam): a sparse network keeps its active set.

    ``owner`` (an object with ``verbose``, e.g. the estimator) gets a
    progress bar with the best held-out loss so far.

    ``weight`` (shape ``(n,)``), the examples' weights (``sample_weight``),
    makes every mean over rows a weighted one: the held-out loss is
    ``sum w_i l_i / sum w_i`` over the held-out rows (their plain mean if
    their weights are all 0) and a batch's loss is ``sum w_i l_i`` over the
    batch divided by the batch size times the training rows' mean weight,
    whose expectation is the training rows' weighted mean loss.

    Returns the best iterates, their mean held-out loss and a
    :class:`PretrainInfo`: the steps taken, and whether the held-out loss
    levelled off (no chain's best fell by ``TOLERANCE`` of itself over the
    last ``PATIENCE`` steps, at the last rate of every schedule) before the
    cap ``n_iter``.
    """
    n = Xt.shape[0]
    schedules = _schedules(lr, n, loss)
    n_groups, n_chains = len(schedules), theta.shape[0]
    gen, val, train = held_out_split(n, seed, Xt.device)
    w_val = w_train = None
    if weight is not None:
        weight = weight.to(Xt.device)
        w_val = weight[val] if bool(weight[val].sum() > 0) else None
        w_train = weight[train]
        train_norm = float(w_train.mean()) if bool(w_train.sum() > 0) else 1.0
    held_out = Xt[val], yt[val], w_val
    whole = (Xt[train], yt[train], w_train) if len(train) <= batch else None
    scale = torch.ones(theta.shape[1], dtype=theta.dtype, device=theta.device) if scale is None else scale
    scale = scale.to(theta.device, theta.dtype)
    # one leaf per schedule, each its own parameter group of Adam; the rows of schedule g are g * C + chain
    ws = [(theta / scale).clone() for _ in schedules]
    opt = _Adam(ws, [sched[0] for sched in schedules])
    best = theta.detach().repeat(n_groups, 1)
    best_err = torch.full((len(best),), torch.inf, device=Xt.device)

    def current():
        return torch.cat(ws) * scale

    def weight_sum(w, norm):
        """What a weighted mean over rows of weights ``w`` divides by: ``norm`` when given, else ``sum w``."""
        return w.sum().clamp_min(1e-30) if norm is None else norm

    def mean_loss(X, y, w=None, norm=None):
        """Each row of ``current()``'s mean loss on ``(X, y)``: weighted by ``w``, over ``norm`` when given."""
        out = spec.forward(current(), X)
        losses = per_example_loss(loss, out, y.expand(out.shape[:2]))
        if w is None:
            return losses.mean(1)
        return (losses * w).sum(1) / weight_sum(w, norm)

    def set_gradients(X, y, w=None, norm=None):
        """Each leaf's ``.grad``: the gradient in ``w = theta / scale`` of its rows' :func:`mean_loss` on ``(X, y)``."""
        _, grad = spec.loss_and_grad(current(), X, y, loss=loss, weight=w)
        denom = X.shape[0] if w is None else weight_sum(w, norm)
        grad = grad * (scale / denom)
        for g, leaf in enumerate(ws):
            leaf.grad = grad[g * n_chains : (g + 1) * n_chains]

    # the best held-out loss every check, to judge the fall over the last PATIENCE steps
    history = []

    def check():
        with torch.no_grad():
            err = mean_loss(*held_out)
            better = err < best_err
            best.copy_(torch.where(better[:, None], current(), best))
            best_err.copy_(torch.where(better, err, best_err))
            history.append(best_err.clone())

    # per schedule: the rate in use, the step it began at, whether done
    stage, begun, done = [0] * n_groups, [0] * n_groups, [False] * n_groups

    def recent_fall():
        """The relative fall of each row's best held-out loss over the last ``PATIENCE`` steps of its schedule's rate."""
        now = history[-1]
        before = now.clone()
        for g, start in enumerate(begun):
            back = min(len(history) - 1 - start // every, PATIENCE // every)
            rows = slice(g * n_chains, (g + 1) * n_chains)
            before[rows] = history[-1 - back][rows]
        fall = (before - now) / before.abs().clamp(min=1e-12)
        return torch.where(torch.isfinite(fall), fall, torch.ones_like(fall))

    converged, taken = False, n_iter
    for it in range(n_iter):
        if it % every == 0:
            check()
            fall = recent_fall()
            for g, sched in enumerate(schedules):
                rows = slice(g * n_chains, (g + 1) * n_chains)
                if done[g] or it - begun[g] < PATIENCE or not bool((fall[rows] < TOLERANCE).all()):
                    continue
                opt.reset(g)  # fresh moments at every new rate
                if stage[g] == len(sched) - 1:
                    done[g], opt.lrs[g] = True, 0.0  # levelled off at its last rate: it rests
                    continue
                # levelled off at this rate: on from each chain's best iterate at the next one
                stage[g], begun[g] = stage[g] + 1, it
                opt.lrs[g] = sched[stage[g]]
                with torch.no_grad():
                    ws[g].copy_(best[rows] / scale)
            if all(done):
                converged, taken = True, it
                break
        if whole is None:
            idx = train[torch.randint(len(train), (batch,), generator=gen)]
            rows = (Xt[idx], yt[idx]) if weight is None else (Xt[idx], yt[idx], weight[idx], batch * train_norm)
        set_gradients(*(whole or rows))
        opt.step()
        if mask is not None:
            with torch.no_grad():
                for w in ws:
                    w.mul_(mask)
        if owner is not None and owner.verbose:
            progress(owner, "pre-training", it, n_iter, held_out_loss=lambda: f"{float(best_err.min()):.4g}")
    if owner is not None and owner.verbose and converged:
        progress(owner, "pre-training", n_iter - 1, n_iter,
                 held_out_loss=lambda: f"{float(best_err.min()):.4g} (levelled off at step {taken})")
    check()
    # each chain keeps the schedule whose best iterate has the lower held-out loss
    errs = best_err.view(n_groups, n_chains)
    pick = errs.argmin(0)
    rows = pick * n_chains + torch.arange(n_chains, device=pick.device)
    chosen, chosen_err = best[rows], best_err[rows]
    if not bool(torch.isfinite(chosen_err).all()):
        raise FloatingPointError("Pre-training diverged; lower the scale of X or set pretrain_iter=0.")
    fall = recent_fall()[rows]
    info = PretrainInfo(taken, converged, float(fall.mean()), tuple(float(e) for e in chosen_err))
    return chosen.detach(), float(chosen_err.mean()), info
