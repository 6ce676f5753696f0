"""Renders the stored results of the ``mixing`` benchmark (:mod:`benchmarks.perf.bench_mixing`) into its
tables and notes: the summary tables (ESS per second, pooled and within chain), one table per target, the
goal lines and the notes (protocol, the NUTS and BlackJAX MCLMC checks, how the chains were batched, the
load), from the JSON that ``python -m benchmarks run mixing`` stores; :func:`report` is the benchmark's
``report``, which ``bench_mixing`` calls.
"""

import numpy as np

from ..common.environment import loads
from ..common.writer import Page
from .bench_mixing import BLACKJAX_MCLMC, LABELS, MICROCANONICAL, NAME, SAMPLERS, TARGETS


def _f(x, digits=1):
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.{digits}f}"


def _g(x):
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.3g}"


def sampler_row(name, r):
    if "skipped" in r:
        return [LABELS[name], r["skipped"].split(":")[0], *["–"] * 14]
    T = r.get("trajectory_length")
    if r.get("L") is not None:  # MCLMC: its L in place of T
        T = r["L"]
    traj = f"{_g(T)} ({r['steps_per_transition']:.0f})" if T is not None else "–"
    return [
        LABELS[name] + (" *" if r.get("reduced") else ""),
        r["draws"],
        _f(r["ess_min"]),
        _f(r["ess_median"]),
        _f(r["rhat_max"], 3),
        _f(r.get("ess_within_min")),
        _f(r.get("rhat_within_max"), 3),
        _f(r["warmup_s"]),
        _f(r["sampling_s"]),
        _g(r["ess_per_s"]),
        _g(r.get("ess_within_per_s")),
        f"{r['n_grad_per_chain']:.0f}",
        _f(r["acceptance"], 2),
        str(r["n_divergent"]),
        _g(r["step_size"]),
        traj,
    ]


def target_table(name, entry):
    info = entry["info"]
    title = (
        f"{name}: n = {info['n']}, d = {info['d']}, network {tuple(info['hidden'])} ({info['n_params']} "
        f"parameters), temperature {info['temperature']:.4g} ({info['temperature_rule']}), "
        f"f evaluated at {info['n_eval']} training inputs"
    )
    header = [
        "sampler",
        "warm-up + draws",
        "ESS min",
        "ESS median",
        "R-hat max",
        "ESS min within chain",
        "within R-hat max",
        "warm-up s",
        "sampling s",
        "ESS_min/s",
        "within-ESS/s",
        "grads/chain",
        "accept",
        "div.",
        "step",
        "T or L (steps/transition)",
    ]
    order = [s for s in SAMPLERS if s in entry["samplers"]]
    return title, header, [sampler_row(s, entry["samplers"][s]) for s in order]


def hmc_over_nuts(entry, key="ess_per_s"):
    hmc, nuts = _rate(entry["samplers"].get("hmc"), key), _rate(entry["samplers"].get("nuts"), key)
    if hmc is None or not nuts:
        return None
    return hmc / nuts


def _rate(r, key):
    """``r[key]`` when ``r`` is a run record that has it and it is finite, else None."""
    x = (r or {}).get(key)
    return x if x is not None and np.isfinite(x) else None


def microcanonical_ratios(entry, key="ess_per_s"):
    """``(best skgibbs microcanonical / HMC, adjusted MCLMC / BlackJAX adjusted MCLMC)`` of ``key``."""
    runs = entry["samplers"]
    hmc = _rate(runs.get("hmc"), key)
    best = [x for x in (_rate(runs.get(s), key) for s in MICROCANONICAL) if x is not None]
    adj, bj = _rate(runs.get("adjusted-mclmc"), key), _rate(runs.get("bj-adjusted-mclmc"), key)
    over_hmc = max(best) / hmc if best and hmc else None
    over_bj = adj / bj if adj is not None and bj else None
    return over_hmc, over_bj


def _ratio(x):
    return "n/a" if x is None else f"{x:.2f}×"


def _cell(r, key="ess_per_s"):
    if r is None:
        return "not run"
    return r["skipped"].split(":")[0] if "skipped" in r else _g(r.get(key))


def summary_table(result, key="ess_per_s"):
    present = [s for s in SAMPLERS if any(s in e["samplers"] for e in result["targets"].values())]
    header = [
        "target",
        *present,
        "HMC / NUTS",
        "best skgibbs MCLMC / HMC",
        "adjusted MCLMC / BlackJAX adjusted MCLMC",
    ]
    rows = []
    for name in [t for t in TARGETS if t in result["targets"]]:
        entry = result["targets"][name]
        cells = [_cell(entry["samplers"].get(s), key) for s in present]
        ratio = hmc_over_nuts(entry, key)
        rows.append([name, *cells, _ratio(ratio), *map(_ratio, microcanonical_ratios(entry, key))])
    if key == "ess_per_s":
        return "Minimum bulk ESS of f(x_i) per second of warm-up + sampling", header, rows
    return "Minimum within-chain bulk ESS of f(x_i) per second of warm-up + sampling", header, rows


def goal_line(result):
    goal = "ESS per second ≥ 1.0× BlackJAX NUTS on every target (skgibbs' default HMC, smallest bulk ESS)"
    ratios = {t: hmc_over_nuts(result["targets"][t]) for t in TARGETS if t in result["targets"]}
    done = {t: r for t, r in ratios.items() if r is not None}
    if not done:
        return f"Goal: {goal}: not evaluated (HMC and NUTS not both run on any target)."
    parts = ", ".join(f"{t} {r:.2f}×" for t, r in done.items())
    missing = [t for t in TARGETS if t not in done]
    if any(r < 1.0 for r in done.values()):
        verdict = "not met"
    else:
        verdict = "met" if not missing else f"met so far; not evaluated on {', '.join(missing)}"
    return f"Goal: {goal}. HMC / NUTS: {parts}: {verdict}."


#: the targets of the microcanonical samplers' issue, and its ratios
MCLMC_GOAL_TARGETS, MCLMC_OVER_HMC, MCLMC_OVER_BJ = ("diabetes", "gap", "concrete"), 3.0, 1.0


def mclmc_goal_line(result):
    goal = (
        "minimum within-chain bulk ESS of f per second of skgibbs' best microcanonical sampler ≥ 3× "
        "today's HMC (the hmc row) on diabetes, gap and concrete, and skgibbs' adjusted MCLMC ≥ "
        "BlackJAX's adjusted MCLMC"
    )
    parts, verdicts, missing = [], [], []
    for t in MCLMC_GOAL_TARGETS:
        entry = result["targets"].get(t)
        over_hmc, over_bj = microcanonical_ratios(entry, "ess_within_per_s") if entry else (None, None)
        if over_hmc is None and over_bj is None:
            missing.append(t)
            continue
        parts.append(
            f"{t}: best MCLMC / HMC {_ratio(over_hmc)}, adjusted / BlackJAX adjusted {_ratio(over_bj)}"
        )
        pairs = ((over_hmc, MCLMC_OVER_HMC), (over_bj, MCLMC_OVER_BJ))
        verdicts += [r >= need for r, need in pairs if r is not None]
        if over_hmc is None or over_bj is None:
            missing.append(t)
    if not parts:
        return f"Goal (microcanonical samplers): {goal}: not evaluated."
    if not all(verdicts):
        verdict = "not met"
    else:
        verdict = "met" if not missing else f"met so far; not fully evaluated on {', '.join(missing)}"
    return f"Goal (microcanonical samplers): {goal}. {'; '.join(parts)}: {verdict}."


PROTOCOL = (
    "Protocol: every sampler starts its 4 chains from the same 4 networks, those of "
    "GibbsMLPRegressor(random_state=0) (Glorot starts, 1000 Adam steps of pre-training), and samples the "
    "same Gibbs posterior (same lambda, fan-in Gaussian prior, standardized float32 data). ESS is the "
    "rank-normalised split bulk ESS over the 4 chains of f_theta(x_i) at the training inputs (an evenly "
    "spaced subset at n = 10000), R-hat the rank-normalised split R-hat; ESS_min/s divides the smallest ESS "
    "by the wall time of warm-up + sampling of all 4 chains. grads/chain counts gradient evaluations per "
    "chain, warm-up included (csMALA: gradients on its Bernoulli batches of about rho n examples). step is "
    "the median adapted step size, in each sampler's own coordinates (MALA's h; HMC's leapfrog step in the "
    "metric's coordinates; NUTS's with its adapted mass matrix; MCLMC's in its preconditioned coordinates): "
    "not comparable across samplers. T is HMC's "
    "frozen trajectory length (NUTS: median step × mean leapfrog steps per draw), in brackets the mean "
    "leapfrog steps per sampling transition."
)
PROTOCOL_WITHIN = (
    "Within chain: each chain judged alone (skgibbs._mixing.pointwise_chain_mixing), its own "
    "rank-normalised split bulk ESS and split R-hat of f_theta(x_i) at every input; ESS min within chain is "
    "the smallest over the 4 chains and the inputs, within R-hat max the largest, within-ESS/s the smallest "
    "within-chain ESS divided by the wall time of warm-up + sampling of all 4 chains (chains that sit in "
    "different modes can each mix well while the pooled R-hat is large)."
)
PROTOCOL_MCLMC = (
    "Microcanonical rows: the T or L column gives the median over chains of the tuned L (unadjusted MCLMC: "
    "the momentum decoherence length; adjusted: the mean trajectory length, about L / step integration "
    "steps a transition), in brackets the mean integration steps per sampling transition (BlackJAX "
    "unadjusted MCLMC: per kept draw, thin transitions of one step each); MCLMC and BlackJAX integrate with "
    "McLachlan's two-stage scheme, 2 gradients a step. Unadjusted MCLMC has no accept/reject step (accept "
    "n/a). BlackJAX's budgets match skgibbs': unadjusted, the same integration steps (warm-up = burn_in × "
    "16 one-step transitions as the tuner's schedule allows, 175 draws × 16); adjusted, 250 warm-up "
    "transitions (as many as its tuner's schedule allows up to 250) and 175 draws."
)


def nuts_notes(result):
    out = []
    for name, entry in result["targets"].items():
        r = entry["samplers"].get("nuts")
        if r is None or "check" not in r:
            if r is not None:
                out.append(f"{name}: NUTS {r['skipped']}.")
            continue
        text = (
            f"{name}: JAX log density vs skgibbs (torch float64) max relative error "
            f"{r['check']['rel_err_max']:.1e}, gradient {r['check']['grad_rel_err_max']:.1e}; "
            f"compilation {r['compile_s']:.1f} s (not counted); {r['n_divergent_warmup']} divergences in "
            "warm-up"
        )
        plan = r.get("plan")
        if plan:
            text += (
                f"; pilot chain ({plan['pilot_s']:.0f} s): {plan['seconds_per_grad'] * 1e3:.2f} ms per "
                f"gradient, {plan['grads_per_draw']:.0f} gradients per draw, full run estimated "
                f"{plan['estimate_s']:.0f} s (budget {plan['budget_s']:.0f} s)"
            )
        if r.get("reduced"):
            text += f"; * run with {r['reduced']} to stay within the budget"
        out.append(text + ".")
    return out


def bj_mclmc_notes(result):
    out = []
    for name, entry in result["targets"].items():
        for sampler in BLACKJAX_MCLMC:
            r = entry["samplers"].get(sampler)
            if r is None:
                continue
            if "check" not in r:
                out.append(f"{name}: {LABELS[sampler]} {r['skipped']}.")
                continue
            div_w = r.get("n_divergent_warmup")
            text = (
                f"{name}: {LABELS[sampler]}: JAX log density vs skgibbs max relative error "
                f"{r['check']['rel_err_max']:.1e}, gradient {r['check']['grad_rel_err_max']:.1e}; "
                f"compilation {r['compile_s']:.1f} s (not counted); "
                f"{r['n_warmup_transitions']} tuning transitions; "
            )
            if div_w is None:
                text += "divergences in warm-up not reported by the BlackJAX tuner"
            else:
                text += f"{div_w} divergences in warm-up"
            if r.get("energy_var") is not None:
                text += f"; energy-error variance per dimension while sampling {r['energy_var']:.2g}"
            out.append(text + ".")
    return out


def batching_note(result):
    parts = []
    for name, entry in result["targets"].items():
        how = {
            s: ("batched" if r["vectorize"] else "one at a time")
            for s, r in entry["samplers"].items()
            if "vectorize" in r
        }
        if how:
            parts.append(f"{name}: " + ", ".join(f"{s} {v}" for s, v in how.items()))
    return (
        "Chains: BlackJAX runs its 4 chains one after the other (one compiled executable; BlackJAX's "
        "compilation is reported apart and not counted in its time); skgibbs advances them together, batched "
        "in one computation when the estimator would batch them (n × parameters ≤ 5e6, or rho n for "
        "csMALA) and one at a time otherwise: " + "; ".join(parts) + "."
    )


def load_note(result):
    # the load before and after each sampler, where older runs stored it with the sampler's record, and the
    # load before and after the run that wrote the file, as the harness recorded it
    measured = [
        r["load_average"]
        for e in result["targets"].values()
        for r in e["samplers"].values()
        if "load_average" in r
    ]
    measured += [loads(result)] if loads(result) is not None else []
    span = f"{min(min(x) for x in measured):.1f} to {max(max(x) for x in measured):.1f}" if measured else "n/a"
    machine = result.get("machine", {})
    ver = ", ".join(f"{k} {v}" for k, v in result.get("versions", {}).items() if v)
    return (
        f"Timing: one thread (torch and XLA), on a shared machine with {machine.get('cpu_count', '?')} cores "
        f"whose 1-minute load average ranged {span} during the runs: wall times, and so ESS per second, are "
        f"noisy (tens of percent); grads/chain is the machine-independent cost. Versions: {ver}."
    )


def notes(result):
    out = [goal_line(result), mclmc_goal_line(result), PROTOCOL, PROTOCOL_WITHIN, PROTOCOL_MCLMC]
    out.append(batching_note(result))
    scales = {t: e["info"]["surrogate_scale"] for t, e in result["targets"].items()}
    out.append(
        "csMALA samples a surrogate that is close to the Gibbs posterior only while lambda' l_i / n << 1; "
        "at the starts this is "
        + ", ".join(f"{t} {s:.3f}" for t, s in scales.items())
        + ": it is run on paper000 (temperature 5) only and marked not valid at the Bayesian temperature."
    )
    return out + nuts_notes(result) + bj_mclmc_notes(result) + [load_note(result)]


def tables(result):
    out = [target_table(t, result["targets"][t]) for t in TARGETS if t in result["targets"]]
    return [summary_table(result), summary_table(result, "ess_within_per_s"), *out], notes(result)


def report(results):
    """The summary table, one table per target and the notes."""
    tabs, text = tables(results[NAME])
    return [Page(NAME, "Mixing per second: skgibbs samplers, BlackJAX NUTS and BlackJAX MCLMC", tabs, text)]
