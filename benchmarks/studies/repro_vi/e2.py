"""Paper 002 App. E.2 (Figs. 5-6): the two terms of the ELBO as the width grows (part ``e2``).

No training: the ratio ``|E_q sum_i log L_i| / (eta KL(q || P0))`` of the two ELBO terms of an untrained
``q`` (means drawn from ``N(0, 0.01^2)``, ``sigma = 1e-3``) as the width ``N`` of one hidden ReLU layer
(output scaled by ``1/N``, paper (3)) grows, for ``eta = 1`` and ``eta = tau p / N`` with ``tau`` in
{0.1, 1, 10}, on diabetes (for Boston) and digits (for MNIST). The data term is estimated from weight draws
of ``q`` (``vi.expected_loss_sample``), the KL term is exact. The notes of the page state every setting.
"""

import itertools
import time

import numpy as np
import torch

from skgibbs.model import MLPSpec
from skgibbs.samplers import vi

from ... import pick_sizes
from ...common.environment import recorded
from ...common.stats import fmt_values
from .shared import figure, load, n_seeds, slope

STEM = "vi_e2"
HEADING = "Paper 002 App. E.2: the two terms of the ELBO as the width grows"
DOC_FIGURE = None

E2_TAUS = (0.1, 1.0, 10.0)
E2_PRIOR_VAR, E2_MU_SD, E2_SIGMA = 0.2, 1e-2, 1e-3
#: the widths, the seeds of q's means per width (``--seeds`` overrides) and the draws of q per data term
SIZES = {
    "full": {"widths": [10, 30, 100, 300, 1000, 3000, 10000], "seeds": 3, "mc": 4},
    "quick": {"widths": [10, 100], "seeds": 1, "mc": 2},
}
ETAS = ["eta=1"] + [f"tau={tau:g}" for tau in E2_TAUS]


def e2_data():
    """``{name: (X, y, loss, outputs)}``: standardized diabetes and digits, as torch tensors (float64)."""
    X, y = load("diabetes")
    X, y = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
    out = {"diabetes": (torch.as_tensor(X), torch.as_tensor(y), "squared", 1)}
    X, y = load("digits")
    scale = X.std(0)
    X = (X - X.mean(0)) / np.where(scale > 0, scale, 1.0)
    out["digits"] = (torch.as_tensor(X), torch.as_tensor(y), "cross_entropy", 10)
    return out


def e2_terms(X, y, loss, n_outputs, N, seed, n_mc):
    """``(|E_q sum_i log L_i|, KL(q || P0), Q)`` of the untrained ``q`` at width ``N``."""
    spec = MLPSpec(X.shape[1], (N,), "relu", n_outputs)
    Q = spec.n_params
    scale = torch.ones(Q, dtype=torch.float64)
    _, _, w, _ = spec.output_layer()
    scale[w] = 1.0 / N  # theta_out = a / N, paper (3)
    gen = torch.Generator().manual_seed(seed)
    mu = E2_MU_SD * torch.randn(Q, generator=gen, dtype=torch.float64)
    sigma = torch.full((Q,), E2_SIGMA, dtype=torch.float64)
    kl = float(vi.kl_divergence(mu, sigma, E2_PRIOR_VAR**0.5).sum())
    with torch.no_grad():
        draws = [
            float(vi.expected_loss_sample(spec, loss, scale * mu, scale * sigma, X, y, gen, 1, local=False))
            for _ in range(n_mc)
        ]
    return np.mean(draws), kl, Q  # temperature 1: |E_q sum log L_i| = E_q sum l_i


def run(args):
    size = pick_sizes(SIZES, args.quick)
    widths, seeds, n_mc = size.widths, range(args.seeds or size.seeds), size.mc
    data = e2_data()
    runs, start = [], time.perf_counter()
    for name, (X, y, loss, n_outputs) in data.items():
        p = X.shape[0]
        for N, seed in itertools.product(widths, seeds):
            term, kl, Q = e2_terms(X, y, loss, n_outputs, N, seed, n_mc)
            etas = {"eta=1": 1.0, **{f"tau={tau:g}": tau * p / N for tau in E2_TAUS}}
            ratios = {e: term / (eta * kl) for e, eta in etas.items()}
            runs.append(dict(dataset=name, N=N, seed=seed, p=p, Q=Q, data_term=term, kl=kl, ratios=ratios))
            print(f"e2 {name} N={N} seed {seed}: data {term:.4g}, KL {kl:.4g}", flush=True)
    return {STEM: {"widths": widths, "runs": runs, "runtime_s": time.perf_counter() - start}}


def render(result):
    """``(tables, notes)`` of the page, from the stored runs."""
    widths, runs = result["widths"], result["runs"]
    data = list(dict.fromkeys(r["dataset"] for r in runs))
    n_mc = pick_sizes(SIZES, recorded(result, "quick", False)).mc
    seeds, runtime = range(n_seeds(runs)), result["runtime_s"]

    header = ["data set", "N", "Q", "abs(E_q sum log L_i)", "KL(q||P0)", "ratio, eta = 1"]
    header += [f"ratio, eta = {tau:g} p/N" for tau in E2_TAUS]
    rows, slopes = [], {}
    for name in data:
        means = []
        for N in widths:
            group = [r for r in runs if r["dataset"] == name and r["N"] == N]
            means.append({e: np.mean([r["ratios"][e] for r in group]) for e in ETAS})
            values = [fmt_values([r[field] for r in group], ".4g") for field in ("data_term", "kl")]
            ratios = [f"{m:.3g}" for m in means[-1].values()]
            rows.append([name, str(N), str(group[0]["Q"]), *values, *ratios])
        slopes[name] = {e: slope(widths, [m[e] for m in means]) for e in ETAS}
    cmp_header = [
        "data set",
        "paper (Figs. 5-6)",
        "slope of log ratio on log N: eta = 1",
        "eta = tau p/N (tau = 0.1 / 1 / 10)",
    ]
    cmp_rows = [
        [
            name,
            "eta = 1: one term dominates as N grows; eta = tau p/N: the ratio stays balanced",
            f"{slopes[name]['eta=1']:+.2f}",
            " / ".join(f"{slopes[name][e]:+.2f}" for e in ETAS[1:]),
        ]
        for name in data
    ]
    notes = [
        "No training. One hidden ReLU layer of N neurons, output (1/N) sum_j a_j relu(<b_j, x> + c_j) + "
        f"bias; every unscaled weight and bias has the prior N(0, {E2_PRIOR_VAR:g}); q has means drawn from "
        f"N(0, {E2_MU_SD:g}^2) and sigma = {E2_SIGMA:g} everywhere. Diabetes (p = 442, standardized X and "
        "y, log L_i = -(y_i - f(x_i))^2, temperature 1) stands in for Boston; digits (p = 1797, "
        "standardized X, softmax cross-entropy) for MNIST. abs(E_q sum log L_i) from "
        f"{n_mc} weight draws of q, KL(q || P0) exact; ratio = abs(E_q sum log L_i) / (eta KL). Mean over "
        f"{len(seeds)} seed(s) of q's means. Runtime {runtime:.0f} s.",
        "Why: with sigma this small every coordinate of q pays about log(prior sd / sigma) - 1/2 = 5.6 "
        "nats, so KL(q || P0) grows like the number of parameters Q, about (d + 2 + C) N, while f is "
        "near 0 and the data term stays near its value there (p for diabetes, p log 10 for digits). "
        "With eta = 1 the ratio therefore falls like 1/N; eta = tau p / N makes eta KL about "
        "5.6 tau (d + 2 + C) p whatever N, so the ratio levels off at a value set by tau.",
    ]
    tables = [
        ("Ratio of the ELBO terms (untrained q)", header, rows),
        ("Against the paper", cmp_header, cmp_rows),
    ]
    return tables, notes


def plot(result, path):
    widths, runs = result["widths"], result["runs"]
    datasets = sorted({r["dataset"] for r in runs})
    with figure(path, 1, len(datasets), figsize=(5.5 * len(datasets), 4.2)) as (fig, axes):
        for ax, name in zip(np.atleast_1d(axes), datasets):
            for k, e in enumerate(ETAS):
                m = [
                    np.mean([r["ratios"][e] for r in runs if r["dataset"] == name and r["N"] == N])
                    for N in widths
                ]
                label = "eta = 1" if e == "eta=1" else f"eta = {e.split('=')[1]} p / N"
                ax.plot(widths, m, marker="o", color="C3" if e == "eta=1" else f"C{k - 1}", label=label)
            ax.axhline(1.0, color="gray", ls=":", lw=1)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("neurons N")
            ax.set_ylabel("|E_q sum log L_i| / (eta KL(q || P0))")
            ax.set_title(f"{name} (untrained q)")
        np.atleast_1d(axes)[0].legend(fontsize=8)
