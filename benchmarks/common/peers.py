"""torch reference points for the speed benchmarks, ``run(n_steps)`` closures for
:func:`~benchmarks.common.timing.measure`: :func:`autograd_floor`, the least work any MALA step on a batch
has to do, and :func:`naive_module_mala`, the MALA / csMALA loop a user writes with a ``torch.nn.Sequential``.
"""

import itertools
import math

import torch
from torch.nn.utils import parameters_to_vector, vector_to_parameters

__all__ = ["autograd_floor", "naive_module_mala"]


def _plain_weights(sizes, generator):
    params = []
    for n_in, n_out in itertools.pairwise(sizes):
        bound = math.sqrt(6.0 / (n_in + n_out))
        params.append(((2 * torch.rand(n_in, n_out, generator=generator) - 1) * bound).requires_grad_(True))
        params.append(torch.zeros(n_out).requires_grad_(True))
    return params


def _forward(params, X):
    h = X
    n_layers = len(params) // 2
    for layer in range(n_layers):
        h = torch.addmm(params[2 * layer + 1], h, params[2 * layer])
        if layer < n_layers - 1:
            h = torch.relu(h)
    return h[:, 0]


def autograd_floor(X, y, sizes, rho, seed, gather):
    """One forward and backward pass of ``sum_{i in B} (y_i - f(x_i))^2`` per step, with plain 2-D weight
    tensors and autograd, on layers of widths ``sizes`` (input and output included).

    ``B`` is a Bernoulli(``rho``) batch (``rho = 1``: the full data), drawn and gathered afresh every step
    as a minibatch sampler must when ``gather``, else gathered once and reused (pure compute).
    """
    gen = torch.Generator().manual_seed(seed)
    params = _plain_weights(sizes, gen)
    n = X.shape[0]

    def draw():
        if rho >= 1.0:
            return X, y
        idx = (torch.rand(n, generator=gen) < rho).nonzero()[:, 0]
        return X[idx], y[idx]

    fixed = draw()

    def run(n_steps):
        for _ in range(n_steps):
            Xb, yb = draw() if gather else fixed
            resid = yb - _forward(params, Xb)
            torch.autograd.grad((resid * resid).sum(), params)

    return run


def naive_module_mala(X, y, sizes, rho, loss_scale, batch_offset, step_size, seed):
    """A straightforward ``nn.Sequential`` MALA (rho = 1) or csMALA (rho < 1) loop: the weights moved in and
    out of the module with ``parameters_to_vector`` / ``vector_to_parameters``, the current point's potential
    and gradient recomputed every step.

    The potential is ``c * sum_i z_i l_i + d * sum_i z_i - log Pi`` with a Bernoulli(rho) mask ``z`` over all
    ``n`` examples (all ones at rho = 1) on the full-data loss and the prior ``N(0, 1/fan_in)``: the target
    of the skgibbs kernel with ``loss_scale = c`` and ``batch_offset = d``.
    """
    gen = torch.Generator().manual_seed(seed)
    layers = []
    for n_in, n_out in itertools.pairwise(sizes):
        layers += [torch.nn.Linear(n_in, n_out), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1])
    with torch.no_grad():  # start from the benchmark's generator, not nn.Linear's global one
        for m in model[::2]:
            for p in m.parameters():
                p.copy_((2 * torch.rand(p.shape, generator=gen) - 1) * m.in_features**-0.5)
    fan_in = [m.in_features for m in model if isinstance(m, torch.nn.Linear) for _ in range(2)]
    n = X.shape[0]
    h, s = step_size, math.sqrt(2 * step_size)

    def potential_and_grad(theta, mask):
        vector_to_parameters(theta, model.parameters())
        model.zero_grad()
        sq = (y - model(X)[:, 0]) ** 2
        u = loss_scale * (sq.sum() if mask is None else (mask * sq).sum())
        if mask is not None:
            u = u + batch_offset * mask.sum()
        u = u + sum(0.5 * f * (p * p).sum() for f, p in zip(fan_in, model.parameters()))
        u.backward()
        return u.detach(), parameters_to_vector(p.grad for p in model.parameters())

    def draw_mask():
        return None if rho >= 1.0 else (torch.rand(n, generator=gen) < rho).float()

    state = {"theta": parameters_to_vector(model.parameters()).detach(), "mask": draw_mask()}

    def run(n_steps):
        theta, mask = state["theta"], state["mask"]
        for _ in range(n_steps):
            u_cur, g_cur = potential_and_grad(theta, mask)
            mask_prop = draw_mask()
            prop = theta - h * g_cur + s * torch.randn(theta.shape, generator=gen)
            u_prop, g_prop = potential_and_grad(prop, mask_prop)
            fwd = prop - theta + h * g_cur
            bwd = theta - prop + h * g_prop
            log_alpha = u_cur - u_prop + ((fwd * fwd).sum() - (bwd * bwd).sum()) / (2 * s * s)
            if torch.log(torch.rand((), generator=gen)) < log_alpha:
                theta, mask = prop, mask_prop
        state["theta"], state["mask"] = theta, mask

    return run
