"""Defaults of the sparse regressor that find the inputs on small problems.

``SparseGibbsMLPRegressor`` (sampler ``"rjhmc"``, everything at its defaults but the network) on small
designs with two relevant inputs among ``p``: X ~ U([-1, 1]^p), y = sin(2 x_0) + x_1^2 + N(0, 0.1^2),
``n`` training rows and 1000 held-out rows (one draw per seed; ``make_sparse_sine`` is not used: its random
``A`` makes up to four inputs relevant, not a chosen two). The networks (:data:`CONFIGS`): ``(100, 100)``
(set explicitly, so that a change of the default leaves this row as it is), ``"auto"`` and ``(8,)``; the
dense ``GibbsMLPRegressor()`` at its defaults is the reference of the held-out RMSE. Each fit records its
process time, ``input_relevance_`` and ``feature_inclusion_``, the median probability model (the inputs
with ``input_relevance_ >= 0.5``) and whether it is exactly ``{0, 1}``, the held-out RMSE against the noisy
targets (the noise sd, 0.1, is its floor), ``rhat_`` and the ``SamplerWarning`` raised. The ``(100, 100)``
network and the dense reference take minutes a fit, so a full run fits them on the first seed of each
design only (``default_seeds``, ``dense_seeds``).

    python -m benchmarks run sparse_small      # about 30 minutes on one core; --quick: one tiny design
"""

import time

import numpy as np
import torch

from skgibbs import GibbsMLPRegressor, SamplerWarning, SparseGibbsMLPRegressor

from .. import Benchmark, Output
from ..common import stats
from ..common.provenance import ran_with
from ..common.writer import Page

NAME = "sparse_small"
RELEVANT = (0, 1)
NOISE = 0.1
#: configuration name -> the parameters of SparseGibbsMLPRegressor it sets (``random_state`` aside)
CONFIGS = {
    "default": {"hidden_layer_sizes": (100, 100)},
    "auto": {"hidden_layer_sizes": "auto"},
    "(8,)": {"hidden_layer_sizes": (8,)},
}
LABELS = {
    "default": "hidden_layer_sizes=(100, 100) (the default before 0.2)",
    "auto": 'hidden_layer_sizes="auto"',
    "(8,)": "hidden_layer_sizes=(8,)",
}
SIZES = {
    "full": {"designs": [[200, 5], [500, 20]], "seeds": 3, "default_seeds": 1, "dense_seeds": 1,
             "n_test": 1000, "run": {}},
    "quick": {"designs": [[60, 3]], "seeds": 1, "default_seeds": 1, "dense_seeds": 1,
              "n_test": 200, "run": {"n_samples": 20, "burn_in": 20, "pretrain_iter": 50, "n_chains": 2}},
}  # fmt: skip


def make_design(n, p, n_test, seed):
    """``(X, y, X_test, y_test)``: two relevant inputs (0 and 1) among ``p`` uniform ones."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n + n_test, p))
    y = np.sin(2.0 * X[:, 0]) + X[:, 1] ** 2 + NOISE * rng.normal(size=n + n_test)
    return X[:n], y[:n], X[n:], y[n:]


def _fit(est, X, y, X_test, y_test):
    start = time.process_time()
    fit = stats.timed_fit(est, X, y)
    out = {"seconds": time.process_time() - start, "wall_seconds": fit.seconds}
    out["rmse"] = float(np.sqrt(np.mean((est.predict(X_test) - y_test) ** 2)))
    return {**out, "rhat": float(est.rhat_), "sampler_warnings": fit.messages(SamplerWarning)}


def _selection(est, p):
    relevance = np.asarray(est.input_relevance_, dtype=float)
    selected = [int(j) for j in np.flatnonzero(relevance >= 0.5)]
    return {
        "input_relevance": relevance.tolist(),
        "feature_inclusion": np.asarray(est.feature_inclusion_, dtype=float).tolist(),
        "median_model": selected,
        "exact": selected == list(RELEVANT),
        "relevant_found": len(set(selected) & set(RELEVANT)),
        "irrelevant_kept": len(set(selected) - set(RELEVANT)),
        "hidden_layer_sizes": [int(h) for h in est.spec_.hidden_layer_sizes],
        "active_fraction": float(np.mean(est.active_fraction_)),
    }


def run(args):
    """Every configuration and the dense reference on every design and seed."""
    torch.set_num_threads(1)
    size = args.size
    rows, records = [], {}
    for n, p in size.designs:
        for k in range(size.seeds):
            seed = args.seed + k
            X, y, X_test, y_test = make_design(n, p, size.n_test, seed)
            fits = [("dense", GibbsMLPRegressor, {})] if k < size.dense_seeds else []
            fits += [(name, SparseGibbsMLPRegressor, params) for name, params in CONFIGS.items()]
            for name, cls, params in fits:
                if name == "default" and k >= size.default_seeds:
                    continue
                est = cls(random_state=seed, **params, **size.run)
                row = {"config": name, "n": n, "p": p, "seed": seed, **_fit(est, X, y, X_test, y_test)}
                found = ""
                if cls is SparseGibbsMLPRegressor:
                    row.update(_selection(est, p))
                    found = f"relevance {np.round(row['input_relevance'], 2)}, "
                rows.append(row)
                if name not in records:
                    records[name] = ran_with({"est": est})
                    # what the study sets is given, also where it equals today's default
                    given = records[name]["estimators"][cls.__name__]["given"]
                    given.update({key: repr(value) for key, value in params.items()})
                print(f"{n:4d} {p:3d} seed {seed} {name}: {found}RMSE {row['rmse']:.3f}, "
                      f"{row['seconds']:.0f} s", flush=True)  # fmt: skip
    result = {"rows": rows, "configs": {k: repr(v) for k, v in CONFIGS.items()}, "relevant": list(RELEVANT),
              "noise": NOISE, "n_test": size.n_test, "run": size.run, "ran_with": records}  # fmt: skip
    return {NAME: result}


def _designs(rows):
    return sorted({(r["n"], r["p"]) for r in rows}, key=lambda d: (d[1], d[0]))


def _dense(rows, n, p, seed):
    """The dense reference's row of a design and seed, or None."""
    found = [r for r in rows if r["config"] == "dense" and (r["n"], r["p"], r["seed"]) == (n, p, seed)]
    return found[0] if found else None


def _ratio(rows, r):
    """The RMSE of a sparse fit over the dense reference's on the same data, NaN without one."""
    dense = _dense(rows, r["n"], r["p"], r["seed"])
    return r["rmse"] / dense["rmse"] if dense else np.nan


def _summary(rows):
    """``{(config, n, p): dict}``: the values of each fit of a configuration on a design (seeds pooled)."""
    out = {}
    for name in ("dense", *CONFIGS):
        for n, p in _designs(rows):
            fits = [r for r in rows if r["config"] == name and (r["n"], r["p"]) == (n, p)]
            if not fits:
                continue
            s = {
                "fits": len(fits),
                "rmse": [r["rmse"] for r in fits],
                "rhat": [r["rhat"] for r in fits],
                "warned": sum(bool(r["sampler_warnings"]) for r in fits),
                "seconds": [r["seconds"] for r in fits],
            }
            if name != "dense":
                relevance = np.array([r["input_relevance"] for r in fits])
                irrelevant = [j for j in range(p) if j not in RELEVANT]
                s.update({
                    "exact": sum(r["exact"] for r in fits),
                    "found": [r["relevant_found"] for r in fits],
                    "kept": [r["irrelevant_kept"] for r in fits],
                    "relevance_relevant": relevance[:, list(RELEVANT)].min(1),
                    "relevance_irrelevant": relevance[:, irrelevant].max(1),
                    "ratio": [x for x in (_ratio(rows, r) for r in fits) if np.isfinite(x)],
                    "hidden": sorted({tuple(r["hidden_layer_sizes"]) for r in fits}),
                })  # fmt: skip
            out[name, n, p] = s
    return out


def _recommendation(summary):
    """Each configuration's recoveries, RMSE against the dense reference and cost, all designs pooled."""
    totals = {}
    for (name, _, _), s in summary.items():
        if name == "dense":
            continue
        empty = {"exact": 0, "fits": 0, "ratio": [], "seconds": [], "kept": [], "rhat": [], "warned": 0}
        t = totals.setdefault(name, empty)
        for key in empty:
            t[key] += s[key]
    if not totals:
        return "No sparse fits were stored."

    def rank(name):
        t = totals[name]
        return (t["exact"] / t["fits"], -np.mean(t["ratio"]) if t["ratio"] else -np.inf)

    best = max(totals, key=rank)
    parts = []
    for name, t in totals.items():
        ratio = f"{np.mean(t['ratio']):.2f}" if t["ratio"] else "n/a"
        parts.append(
            f"{LABELS[name]} selected exactly {{x0, x1}} in {t['exact']} of {t['fits']} fits "
            f"(irrelevant inputs kept: {np.mean(t['kept']):.1f} a fit), at {ratio} times the dense "
            f"reference's RMSE on the seeds that have one, in {np.mean(t['seconds']):.0f} CPU s a fit"
        )
    dense_s = [s for (name, _, _), v in summary.items() if name == "dense" for s in v["seconds"]]
    dense_text = f" (the dense reference: {np.mean(dense_s):.0f} CPU s a fit)" if dense_s else ""
    return (
        "Pooled over the designs: " + "; ".join(parts) + dense_text + ". The configuration that recovers the "
        f"relevant inputs most often, and among equals predicts best, is {LABELS[best]}; its R-hat of the "
        f"function values averaged {np.mean(totals[best]['rhat']):.2f} ({totals[best]['warned']} of "
        f"{totals[best]['fits']} fits raised a SamplerWarning), so that its chains agree on the selected "
        "inputs more than on the fitted function."
    )


def _label(name, s):
    return f"{name}: {', '.join(map(str, s['hidden']))}" if name == "auto" else name


def _chain_weights(result):
    """The sparse regressor's default ``chain_weights`` the run recorded (``'equal'`` before 0.2 changed it)."""
    for record in result.get("ran_with", {}).values():
        sparse = record.get("estimators", {}).get("SparseGibbsMLPRegressor")
        if sparse:
            return sparse["defaults"]["chain_weights"]
    return "'equal'"


def report(results):
    """One row per configuration and design (means ± standard errors over seeds), one row per fit."""
    result = results[NAME]
    rows = result["rows"]
    summary = _summary(rows)
    header = ["configuration", "n, p", "fits (seeds)", "exact recoveries", "relevant found (of 2)",
              "irrelevant kept", "min relevance of x0, x1", "max relevance of the others", "held-out RMSE",
              "RMSE / dense (same seed)", "R-hat", "fits warned", "CPU s"]  # fmt: skip
    table = []
    for (name, n, p), s in summary.items():
        cells = [
            "dense GibbsMLPRegressor()" if name == "dense" else _label(name, s), f"{n}, {p}", str(s["fits"]),
        ]  # fmt: skip
        if name == "dense":
            cells += ["", "", "", "", ""]
        else:
            cells += [
                f"{s['exact']} of {s['fits']}", stats.fmt_values(s["found"], 2),
                f"{stats.fmt_values(s['kept'], 2)} (of {p - 2})",
                stats.fmt_values(s["relevance_relevant"], 2), stats.fmt_values(s["relevance_irrelevant"], 2),
            ]  # fmt: skip
        ratio = "" if name == "dense" else stats.fmt_values(s["ratio"], 2) if s["ratio"] else "n/a"
        cells += [stats.fmt_values(s["rmse"], 3), ratio, stats.fmt_values(s["rhat"], 2),
                  f"{s['warned']} of {s['fits']}", stats.fmt_values(s["seconds"], 0)]  # fmt: skip
        table.append(cells)
    per_fit = []
    for r in rows:
        if r["config"] == "dense":
            continue
        ratio = _ratio(rows, r)
        per_fit.append([
            r["config"], f"{r['n']}, {r['p']}", str(r["seed"]),
            " ".join(f"{v:.2f}" for v in r["input_relevance"]),
            " ".join(f"{v:.2f}" for v in r["feature_inclusion"]), str(r["median_model"]),
            f"{r['active_fraction']:.2f}", f"{r['rmse']:.3f}", f"{ratio:.2f}" if np.isfinite(ratio) else "",
            f"{r['rhat']:.2f}", f"{r['seconds']:.0f}",
        ])  # fmt: skip
    per_fit_header = ["configuration", "n, p", "seed", "input_relevance_", "feature_inclusion_",
                      "median model", "active fraction", "RMSE", "RMSE / dense", "R-hat",
                      "CPU s"]  # fmt: skip
    run_settings = ", ".join(f"{k}={v!r}" for k, v in result["run"].items())
    notes = [
        "Data: X ~ U([-1, 1]^p), y = sin(2 x0) + x1^2 + N(0, 0.1^2): two relevant inputs (x0, x1) among p; "
        f"n training rows and {result['n_test']} held-out rows of the same design, one draw per seed (the "
        "estimator's random_state is the data's seed). SparseGibbsMLPRegressor(random_state=seed, "
        "hidden_layer_sizes=...) with every other parameter at its default (sampler 'rjhmc', sparsity 2, "
        f"temperature 'auto', n_samples 'auto', chain_weights {_chain_weights(result)})"
        + (f" and {run_settings}" if run_settings else "")
        + "; "
        "GibbsMLPRegressor(random_state=seed) at its defaults is the dense reference. The (100, 100) network "
        "and the dense reference are fitted on the first seed of each design only (minutes a fit). The "
        "median probability model keeps the inputs with input_relevance_ >= 0.5; an exact recovery is the "
        "set {x0, x1}. The RMSE is against the noisy held-out targets (its floor is the noise sd, 0.1). "
        "Means ± standard errors over seeds (n/a for one seed); 'fits warned' counts the fits that raised a "
        "SamplerWarning (the chains not mixed). CPU s is the process time of the fit, one thread.",
        _recommendation(summary),
        f"Command: ``python -m benchmarks run {NAME}``.",
    ]
    tables = [("Means over seeds", header, table), ("Each fit", per_fit_header, per_fit)]
    return [Page(NAME, "Defaults of the sparse regressor on small designs", tables, notes)]


BENCHMARK = Benchmark(
    name=NAME,
    kind="reproduction",
    title="The sparse regressor's network on small designs: inputs found and held-out RMSE",
    outputs=(Output(NAME, "Defaults of the sparse regressor on small designs"),),
    run=run,
    report=report,
    sizes=SIZES,
)
