"""The tables and notes of the ``mixing`` benchmark (:mod:`benchmarks.perf.bench_mixing`) from its JSON.

:func:`report` is the benchmark's ``report``: the summary tables (ESS per second, pooled and within chain),
one table per target, the goal lines and the notes.
"""

import numpy as np

from ..common.environment import loads
from ..common.writer import Page
from .bench_mixing import BLACKJAX_MCLMC, LABELS, MICROCANONICAL, NAME, SAMPLERS, TARGETS


def _f(x, spec=".1f"):
    return "n/a" if x is None or not np.isfinite(x) else format(x, spec)


def _trajectory(r):
    T = r["L"] if r.get("L") is not None else r.get("trajectory_length")  # MCLMC: its L in place of T
    return "–" if T is None else f"{_f(T, '.3g')} ({r['steps_per_transition']:.0f})"


#: the columns of a target's table after the sampler's name: header and cell of a run record
COLUMNS = {
    "warm-up + draws": lambda r: r["draws"],
    "ESS min": lambda r: _f(r["ess_min"]),
    "ESS median": lambda r: _f(r["ess_median"]),
    "R-hat max": lambda r: _f(r["rhat_max"], ".3f"),
    "ESS min within chain": lambda r: _f(r.get("ess_within_min")),
    "within R-hat max": lambda r: _f(r.get("rhat_within_max"), ".3f"),
    "warm-up s": lambda r: _f(r["warmup_s"]),
    "sampling s": lambda r: _f(r["sampling_s"]),
    "ESS_min/s": lambda r: _f(r["ess_per_s"], ".3g"),
    "within-ESS/s": lambda r: _f(r.get("ess_within_per_s"), ".3g"),
    "grads/chain": lambda r: f"{r['n_grad_per_chain']:.0f}",
    "accept": lambda r: _f(r["acceptance"], ".2f"),
    "div.": lambda r: str(r["n_divergent"]),
    "step": lambda r: _f(r["step_size"], ".3g"),
    "T or L (steps/transition)": _trajectory,
}


def sampler_row(name, r):
    if "skipped" in r:
        return [LABELS[name], r["skipped"].split(":")[0], *["–"] * (len(COLUMNS) - 1)]
    return [LABELS[name] + (" *" if r.get("reduced") else ""), *(cell(r) for cell in COLUMNS.values())]


def target_table(name, entry):
    info = entry["info"]
    title = (
        f"{name}: n = {info['n']}, d = {info['d']}, network {tuple(info['hidden'])} ({info['n_params']} "
        f"parameters), temperature {info['temperature']:.4g} ({info['temperature_rule']}), f evaluated at "
        f"{info['n_eval']} training inputs"
    )
    rows = [sampler_row(s, entry["samplers"][s]) for s in SAMPLERS if s in entry["samplers"]]
    return title, ["sampler", *COLUMNS], rows


def _rate(r, key):
    """``r[key]`` when ``r`` is a run record that has it and it is finite, else None."""
    x = (r or {}).get(key)
    return x if x is not None and np.isfinite(x) else None


def hmc_over_nuts(entry, key="ess_per_s"):
    hmc, nuts = _rate(entry["samplers"].get("hmc"), key), _rate(entry["samplers"].get("nuts"), key)
    return hmc / nuts if hmc is not None and nuts else None


def microcanonical_ratios(entry, key="ess_per_s"):
    """``(best skgibbs microcanonical / HMC, adjusted MCLMC / BlackJAX adjusted MCLMC)`` of ``key``."""
    runs = entry["samplers"]
    hmc = _rate(runs.get("hmc"), key)
    best = [x for x in (_rate(runs.get(s), key) for s in MICROCANONICAL) if x is not None]
    adj, bj = _rate(runs.get("adjusted-mclmc"), key), _rate(runs.get("bj-adjusted-mclmc"), key)
    return (max(best) / hmc if best and hmc else None), (adj / bj if adj is not None and bj else None)


def _ratio(x):
    return "n/a" if x is None else f"{x:.2f}×"


def _cell(r, key):
    if r is None:
        return "not run"
    return r["skipped"].split(":")[0] if "skipped" in r else _f(r.get(key), ".3g")


def summary_table(result, key="ess_per_s"):
    present = [s for s in SAMPLERS if any(s in e["samplers"] for e in result["targets"].values())]
    ratios = ["HMC / NUTS", "best skgibbs MCLMC / HMC", "adjusted MCLMC / BlackJAX adjusted MCLMC"]
    rows = []
    for name in [t for t in TARGETS if t in result["targets"]]:
        entry = result["targets"][name]
        cells = [_cell(entry["samplers"].get(s), key) for s in present]
        ratio = hmc_over_nuts(entry, key), *microcanonical_ratios(entry, key)
        rows.append([name, *cells, *map(_ratio, ratio)])
    within = "" if key == "ess_per_s" else " within-chain"
    title = f"Minimum{within} bulk ESS of f(x_i) per second of warm-up + sampling"
    return title, ["target", *present, *ratios], rows


def _verdict(done, missing, fully=""):
    if not all(done):
        return "not met"
    return "met" if not missing else f"met so far; not{fully} evaluated on {', '.join(missing)}"


def goal_line(result):
    goal = "ESS per second ≥ 1.0× BlackJAX NUTS on every target (skgibbs' default HMC, smallest bulk ESS)"
    ratios = {t: hmc_over_nuts(result["targets"][t]) for t in TARGETS if t in result["targets"]}
    done = {t: r for t, r in ratios.items() if r is not None}
    if not done:
        return f"Goal: {goal}: not evaluated (HMC and NUTS not both run on any target)."
    parts = ", ".join(f"{t} {r:.2f}×" for t, r in done.items())
    verdict = _verdict([r >= 1.0 for r in done.values()], [t for t in TARGETS if t not in done])
    return f"Goal: {goal}. HMC / NUTS: {parts}: {verdict}."


#: the targets of the microcanonical samplers' issue, and its ratios
MCLMC_GOAL_TARGETS, MCLMC_OVER_HMC, MCLMC_OVER_BJ = ("diabetes", "gap", "concrete"), 3.0, 1.0


def mclmc_goal_line(result):
    goal = (
        "minimum within-chain bulk ESS of f per second of skgibbs' best microcanonical sampler ≥ 3× today's "
        "HMC (the hmc row) on diabetes, gap and concrete, and skgibbs' adjusted MCLMC ≥ BlackJAX's adjusted "
        "MCLMC"
    )
    parts, verdicts, missing = [], [], []
    for t in MCLMC_GOAL_TARGETS:
        entry = result["targets"].get(t)
        over_hmc, over_bj = microcanonical_ratios(entry, "ess_within_per_s") if entry else (None, None)
        if over_hmc is None or over_bj is None:
            missing.append(t)
        if over_hmc is None and over_bj is None:
            continue
        parts.append(
            f"{t}: best MCLMC / HMC {_ratio(over_hmc)}, adjusted / BlackJAX adjusted {_ratio(over_bj)}"
        )
        pairs = ((over_hmc, MCLMC_OVER_HMC), (over_bj, MCLMC_OVER_BJ))
        verdicts += [r >= need for r, need in pairs if r is not None]
    if not parts:
        return f"Goal (microcanonical samplers): {goal}: not evaluated."
    verdict = _verdict(verdicts, missing, " fully")
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
    "not comparable across samplers. T is HMC's frozen trajectory length (NUTS: median step × mean leapfrog "
    "steps per draw), in brackets the mean leapfrog steps per sampling transition."
)
PROTOCOL_WITHIN = (
    "Within chain: each chain judged alone (skgibbs._mixing.pointwise_chain_mixing), its own rank-normalised "
    "split bulk ESS and split R-hat of f_theta(x_i) at every input; ESS min within chain is the smallest "
    "over the 4 chains and the inputs, within R-hat max the largest, within-ESS/s the smallest within-chain "
    "ESS divided by the wall time of warm-up + sampling of all 4 chains (chains that sit in different modes "
    "can each mix well while the pooled R-hat is large)."
)
PROTOCOL_MCLMC = (
    "Microcanonical rows: the T or L column gives the median over chains of the tuned L (unadjusted MCLMC: "
    "the momentum decoherence length; adjusted: the mean trajectory length, about L / step integration steps "
    "a transition), in brackets the mean integration steps per sampling transition (BlackJAX unadjusted "
    "MCLMC: per kept draw, thin transitions of one step each); MCLMC and BlackJAX integrate with McLachlan's "
    "two-stage scheme, 2 gradients a step. Unadjusted MCLMC has no accept/reject step (accept n/a). "
    "BlackJAX's budgets match skgibbs': unadjusted, the same integration steps (warm-up = burn_in × 16 "
    "one-step transitions as the tuner's schedule allows, 175 draws × 16); adjusted, 250 warm-up transitions "
    "(as many as its tuner's schedule allows up to 250) and 175 draws."
)


def _check(r):
    return (
        f"max relative error {r['check']['rel_err_max']:.1e}, gradient {r['check']['grad_rel_err_max']:.1e}; "
        f"compilation {r['compile_s']:.1f} s (not counted); "
    )


def blackjax_notes(result):
    """The check, compilation and warm-up of every BlackJAX row, NUTS's first, or why it was skipped."""
    out = []
    for name, entry in result["targets"].items():
        r = entry["samplers"].get("nuts")
        if r is not None and "check" not in r:
            out.append(f"{name}: NUTS {r['skipped']}.")
        elif r is not None:
            text = f"{name}: JAX log density vs skgibbs (torch float64) {_check(r)}"
            text += f"{r['n_divergent_warmup']} divergences in warm-up"
            if r.get("plan"):
                p = r["plan"]
                text += (
                    f"; pilot chain ({p['pilot_s']:.0f} s): {p['seconds_per_grad'] * 1e3:.2f} ms per "
                    f"gradient, {p['grads_per_draw']:.0f} gradients per draw, full run estimated "
                    f"{p['estimate_s']:.0f} s (budget {p['budget_s']:.0f} s)"
                )
            if r.get("reduced"):
                text += f"; * run with {r['reduced']} to stay within the budget"
            out.append(text + ".")
    for name, entry in result["targets"].items():
        for r, label in ((entry["samplers"].get(s), LABELS[s]) for s in BLACKJAX_MCLMC):
            if r is not None and "check" not in r:
                out.append(f"{name}: {label} {r['skipped']}.")
            elif r is not None:
                div_w = r.get("n_divergent_warmup")
                text = f"{name}: {label}: JAX log density vs skgibbs {_check(r)}"
                text += f"{r['n_warmup_transitions']} tuning transitions; "
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
        runs = [(s, r) for s, r in entry["samplers"].items() if "vectorize" in r]
        how = [f"{s} {'batched' if r['vectorize'] else 'one at a time'}" for s, r in runs]
        if how:
            parts.append(f"{name}: " + ", ".join(how))
    return (
        "Chains: BlackJAX runs its 4 chains one after the other (one compiled executable; BlackJAX's "
        "compilation is reported apart and not counted in its time); skgibbs advances them together, batched "
        "in one computation when the estimator would batch them (n × parameters ≤ 5e6, or rho n for "
        "csMALA) and one at a time otherwise: " + "; ".join(parts) + "."
    )


def load_note(result):
    # the load around each sampler, where older runs stored it with its record, and around the whole run
    runs = [r for e in result["targets"].values() for r in e["samplers"].values()]
    measured = [r["load_average"] for r in runs if "load_average" in r]
    measured += [loads(result)] if loads(result) is not None else []
    span = (
        f"{min(min(x) for x in measured):.1f} to {max(max(x) for x in measured):.1f}" if measured else "n/a"
    )
    ver = ", ".join(f"{k} {v}" for k, v in result.get("versions", {}).items() if v)
    cores = result.get("machine", {}).get("cpu_count", "?")
    return (
        f"Timing: one thread (torch and XLA), on a shared machine with {cores} cores whose 1-minute load "
        f"average ranged {span} during the runs: wall times, and so ESS per second, are noisy (tens of "
        f"percent); grads/chain is the machine-independent cost. Versions: {ver}."
    )


def notes(result):
    scales = ", ".join(f"{t} {e['info']['surrogate_scale']:.3f}" for t, e in result["targets"].items())
    csmala = (
        "csMALA samples a surrogate that is close to the Gibbs posterior only while lambda' l_i / n << 1; "
        f"at the starts this is {scales}: it is run on paper000 (temperature 5) only and marked not valid at "
        "the Bayesian temperature."
    )
    out = [goal_line(result), mclmc_goal_line(result), PROTOCOL, PROTOCOL_WITHIN, PROTOCOL_MCLMC]
    return [*out, batching_note(result), csmala, *blackjax_notes(result), load_note(result)]


def report(results):
    """The summary tables, one table per target and the notes."""
    result = results[NAME]
    tabs = [summary_table(result), summary_table(result, "ess_within_per_s")]
    tabs += [target_table(t, result["targets"][t]) for t in TARGETS if t in result["targets"]]
    title = "Mixing per second: skgibbs samplers, BlackJAX NUTS and BlackJAX MCLMC"
    return [Page(NAME, title, tabs, notes(result))]
