"""Time per ESVM step of a neural Stein control variate: exact batched Laplacian vs per-point Hessians.

One step is what ``NeuralControlVariate.fit`` does per Adam iteration: the Stein operator (3.3) of
paper 003 at every point of a training chain of n = 10^4 points, the spectral variance objective (3.2)
of the residual, the backward pass and the Adam update. Three ways of getting the Laplacian of ``phi``
are timed interleaved (:func:`benchmarks.common.timing.measure`) on one CPU thread, in float64, with the
same network and data, after a check that they give the same weight gradients: ``exact batched``, the
forward propagation of value, Jacobian and Laplacian of :func:`skgibbs.control_variates.mlp_derivatives`;
``vmap(hessian)``, the trace of ``torch.func.hessian(phi)`` at each point (``jacrev`` for the gradient);
and a ``per-point loop`` of ``torch.autograd.grad(create_graph=True)`` calls, timed on ``--loop-points``
points and scaled linearly to n (its cost is linear in the points; the FFT objective is negligible beside it).

Run ``python -m benchmarks run control_variates_speed``; it writes
``benchmarks/results/control_variates_speed.{json,rst}``.
"""

import datetime
import sys

import numpy as np
import torch

from skgibbs.control_variates import STEIN_ACTIVATIONS, mlp_derivatives, spectral_variance_torch

from .. import Benchmark, Output
from ..common.environment import loads, machine_info
from ..common.tables import rst_table
from ..common.timing import Variant, measure
from ..common.writer import Page

NAME = "control_variates_speed"

ACTIVATION = "recu"
TRUNCATION = 100  # floor(sqrt(10^4))


class Setting:
    """Chain, score, f and one network (with its Adam) per implementation, all from one seed."""

    def __init__(self, n, d, hidden, seed=0):
        gen = torch.Generator().manual_seed(seed)
        self.X = torch.randn(n, d, generator=gen, dtype=torch.float64)
        self.S = -self.X  # pi = N(0, I)
        self.y = self.X[:, 0] ** 2
        self.sizes = (d, *hidden, 1)
        self.init = []
        for n_in, n_out in zip(self.sizes[:-1], self.sizes[1:]):
            bound = 1.0 / np.sqrt(n_in)
            self.init += [
                (torch.rand(n_in, n_out, generator=gen, dtype=torch.float64) * 2 - 1) * bound,
                (torch.rand(n_out, generator=gen, dtype=torch.float64) * 2 - 1) * bound,
            ]

    def params(self):
        params = [p.clone().requires_grad_(True) for p in self.init]
        return params, torch.optim.Adam(params, lr=1e-3)


def _point_phi(coefs, intercepts):
    act = STEIN_ACTIVATIONS[ACTIVATION]

    def phi(x):  # one point, plain forward pass
        a = x
        for W, b in zip(coefs[:-1], intercepts[:-1]):
            a = act(a @ W + b)[0]
        return (a @ coefs[-1] + intercepts[-1])[0]

    return phi


def _exact(params, X, S):
    _, grad, lap = mlp_derivatives(X, params[0::2], params[1::2], ACTIVATION, value=False)
    return lap + (S * grad).sum(1)


def _vmap_hessian(params, X, S):
    phi = _point_phi(params[0::2], params[1::2])
    grad = torch.func.vmap(torch.func.jacrev(phi))(X)
    lap = torch.func.vmap(torch.func.hessian(phi))(X).diagonal(dim1=1, dim2=2).sum(1)
    return lap + (S * grad).sum(1)


def _loop(params, X, S):
    phi = _point_phi(params[0::2], params[1::2])
    out = []
    for x, s in zip(X, S):
        x = x.detach().requires_grad_(True)
        (grad,) = torch.autograd.grad(phi(x), x, create_graph=True)
        lap = sum(torch.autograd.grad(grad[k], x, create_graph=True)[0][k] for k in range(len(x)))
        out.append(lap + (s * grad).sum())
    return torch.stack(out)


def _runner(setting, stein, points):
    """``run(n_steps)``: that many ESVM steps of one network on the first ``points`` of the chain."""
    params, opt = setting.params()
    X, S, y = setting.X[:points], setting.S[:points], setting.y[:points]

    def run(n_steps):
        for _ in range(n_steps):
            opt.zero_grad()
            loss = spectral_variance_torch(y - stein(params, X, S), "triangular", TRUNCATION)
            loss.backward()
            opt.step()

    return run


def _check_agreement(setting, points=64):
    """The three implementations give the same objective and weight gradients."""
    X, S, y = setting.X[:points], setting.S[:points], setting.y[:points]
    grads = []
    for stein in (_exact, _vmap_hessian, _loop):
        params, _ = setting.params()
        spectral_variance_torch(y - stein(params, X, S), "triangular", 8).backward()
        # the output bias drops out of g_phi: no gradient
        flat = [(torch.zeros_like(p) if p.grad is None else p.grad).ravel() for p in params]
        grads.append(torch.cat(flat))
    for g in grads[1:]:
        torch.testing.assert_close(g, grads[0], rtol=1e-9, atol=1e-12)


def bench(n, d, hidden, loop_points, repeats, block_s, check_points=64):
    setting = Setting(n, d, hidden)
    _check_agreement(setting, check_points)
    loop = _runner(setting, _loop, loop_points)
    variants = [
        Variant("exact", "exact batched (skgibbs)", _runner(setting, _exact, n)),
        Variant("vmap", "torch.func vmap(hessian)", _runner(setting, _vmap_hessian, n)),
        Variant("loop", f"per-point loop ({loop_points} points, scaled to n)", loop),
    ]
    res = measure(variants, repeats=repeats, block_s=block_s, warmup_steps=1)
    out = {}
    for key, r in res.items():
        scale = n / loop_points if key == "loop" else 1.0
        out[key] = dict(label=r["label"], seconds_per_step=scale / r["median"], rates=r["rates"], scale=scale)
    return out


def _rows(results):
    rows = []
    for res in results:
        base = res["variants"]["exact"]["seconds_per_step"]
        for key in ("exact", "vmap", "loop"):
            v = res["variants"][key]
            ms = 1e3 * v["seconds_per_step"]
            ratio = "1.0x" if key == "exact" else f"{v['seconds_per_step'] / base:,.1f}x slower"
            rows.append((res["d"], res["phi"], v["label"], f"{ms:,.1f}", ratio))
    return rows


#: chain points and points of the timed loop (``--n`` and ``--loop-points`` override), timed blocks, the
#: points of the agreement check, and the input dimensions and hidden layers of the networks timed
SIZES = {
    "full": {"n": 10_000, "loop_points": 100, "repeats": 5, "block_s": 1.0, "check_points": 64,
             "dims": (2, 6), "hidden": ((32,), (32, 32))},
    "quick": {"n": 200, "loop_points": 4, "repeats": 1, "block_s": 0.01, "check_points": 8,
              "dims": (2,), "hidden": ((8,), (8, 8))},
}  # fmt: skip


def add_arguments(parser):
    add = parser.add_argument
    add("--n", type=int, default=None, help="chain points (default 10000; quick 200)")
    add("--loop-points", type=int, default=None, help="points of the timed loop (default 100)")


def run(args):
    """Time the three Laplacians on two input dimensions and two network depths."""
    n = args.n or args.size.n
    loop_points = args.loop_points or args.size.loop_points
    repeats, block_s = args.size.repeats, args.size.block_s
    results = []
    for d in args.size.dims:
        for hidden in args.size.hidden:
            phi = "->".join(map(str, (d, *hidden, 1))) + f" {ACTIVATION}"
            print(f"timing d={d}, phi {phi} ...", file=sys.stderr)
            variants = bench(n, d, hidden, loop_points, repeats, block_s, args.size.check_points)
            results.append({"d": d, "phi": phi, "hidden": list(hidden), "variants": variants})
    payload = {"machine": machine_info(), "n": n, "truncation": TRUNCATION, "results": results}
    payload.update(date=datetime.date.today().isoformat(), repeats=repeats, loop_points=loop_points)
    return {NAME: payload}


def report(results):
    """The time-per-step table with the paragraph on how it was measured."""
    payload = results[NAME]
    info, (load_before, load_after) = payload["machine"], loads(payload) or payload["load_average"]
    # the repeats and loop size were not stored before; these are the defaults those runs used
    repeats, loop_points = payload.get("repeats", 5), payload.get("loop_points", 100)
    date = f" on {payload['date']}" if "date" in payload else ""
    intro = (
        f"Measured{date} on {info['nproc']} CPUs ({info['cpu_model']}), Python {info['python']}, torch "
        f"{info['torch']} with 1 thread, float64. One step = Stein operator (3.3) on n = {payload['n']} "
        f"chain points + spectral variance (3.2) with b_n = {TRUNCATION} + backward + Adam. Median of "
        f"{repeats} interleaved timed blocks; the per-point loop ran on {loop_points} points and is scaled "
        "linearly to n. All three give the same weight gradients (checked to 1e-9 before timing). Load "
        f"average {load_before:.1f} before and {load_after:.1f} after the run"
    )
    if max(load_before, load_after) > 1.5:
        intro += (
            ": the machine was shared, so absolute times are inflated and noisy; the ratios, from "
            "interleaved blocks, are more reliable."
        )
    else:
        intro += "."
    header = ["d", "phi", "implementation", "ms per step", "vs exact batched"]
    table = rst_table(header, _rows(payload["results"]))
    return [
        Page(NAME, rst=["Neural control variate: time per ESVM step", "=" * 43, "", intro, "", table, ""])
    ]


TITLE = "Neural control variates: exact batched Laplacian vs per-point Hessians"
BENCHMARK = Benchmark(
    NAME, "performance", TITLE, (Output(NAME, TITLE),), run, report, add_arguments, sizes=SIZES
)
