"""Tables and text of the speed benchmark as reStructuredText: title-less ``list-table`` directives and no
section headings, so that the documentation can include it anywhere. A table is ``(caption, header, rows)``.
"""

from .environment import loads, was_quick

__all__ = ["intro", "notes", "tables", "to_rst"]

TARGETS = "Targets: at least 0.9x the floor, 5x the naive loop at rho=0.1, 1x the JAX peers."


def _fmt(x, digits=1):
    return "n/a" if x is None else f"{x:,.{digits}f}"


def _ratio(a, b):
    return f"{a / b:.2f}x" if b else ""


def _rows(res):
    """The timed rows of a section (not its ``_constants``)."""
    return [(k, r) for k, r in res.items() if not k.startswith("_")]


def _table000(results):
    rows = []
    for rho_key, res in results["paper000"].items():
        rho = rho_key.removeprefix("rho=")
        floor = res["floor"]["per_chain"]
        floor_g = res.get("floor_gather", res["floor"])["per_chain"]
        floor_cpu = res["floor"]["per_chain_cpu"]
        for _, r in _rows(res):
            cells = [_fmt(r["median"]), _fmt(r["per_chain"]), _ratio(r["per_chain"], floor)]
            cells += [_ratio(r["per_chain"], floor_g), _ratio(r["per_chain_cpu"], floor_cpu)]
            rows.append([rho, r["label"], str(r["chains"]), *cells])
        if results["jax_status"] != "installed":
            peer = "BlackJAX mala" if rho == "1" else "jitted JAX csMALA step"
            rows.append([rho, peer, "1", results["jax_status"], "", "", "", ""])
    head = ["rho", "implementation", "chains", "chain-steps/s", "steps/s per chain", "vs floor"]
    head += ["vs floor + gather", "vs floor, CPU time"]
    return "Paper 000 network (1-100-100-1 ReLU, Q = 10401, n = 10000)", head, rows


def _table001(results):
    res = results["paper001"]
    pairs = {"kernel_batched": "kernel_sequential", "run_chains_vec": "run_chains_seq"}
    rows = [
        [r["label"], str(r["chains"]), _fmt(r["median"]), _fmt(r["per_chain"]), ""] for _, r in _rows(res)
    ]
    for row, (key, _) in zip(rows, _rows(res)):
        if key in pairs:
            row[-1] = _ratio(res[key]["median"], res[pairs[key]]["median"])
    head = ["implementation", "chains", "chain-steps/s", "steps/s per chain", "batched / sequential"]
    return "Paper 001 network (8-8-8-8-1 ReLU, Q = 225, n = 750, rho = 1), 10 chains", head, rows


def _table_grid(results):
    cells = results["crossover"]["cells"]
    qs = sorted({c["Q"] for c in cells})
    keys = sorted({(c["rho"], c["n_batch"]) for c in cells}, key=lambda t: (-t[0], t[1]))
    ratio = {(c["rho"], c["n_batch"], c["Q"]): c["ratio"] for c in cells}
    rows = [
        [f"{rho:g}", str(nb)] + [_fmt(ratio[rho, nb, q], 2) if (rho, nb, q) in ratio else "" for q in qs]
        for rho, nb in keys
    ]
    caption = "Per-chain throughput of 4 chains batched over 4 sequential (run_chains)"
    return caption, ["rho", "batch points"] + [f"Q = {q}" for q in qs], rows


def _table_parts(parts):
    us, labels = parts["us"], parts["labels"]
    rows = [[labels[key], f"{value:,.0f}", f"{value / us['step']:.0%}"] for key, value in us.items()]
    caption = "Where the time of a csMALA step goes (paper 000 network, rho = 0.1, one chain)"
    return caption, ["part", "us per step", "share of the step"], rows


def tables(results):
    out = [_table000(results), _table001(results), _table_grid(results)]
    if "parts" in results:  # results written before the parts were timed have no such table
        out.append(_table_parts(results["parts"]))
    return out


METHODS = (
    "The floor is one forward and backward pass of the squared loss with torch autograd on plain 2-D weight "
    "tensors; 'floor + gather' also draws a fresh Bernoulli(rho) batch and gathers X[idx].",
    "skgibbs rows use a fixed step size and proposal std; run_chains runs with burn_in=0, restarts off and a "
    "fixed correction, and its rate includes the state initialisation of each call (one gradient per chain, "
    "at least {rc_steps} steps per call).",
    "The naive loop is a torch.nn.Sequential MALA that moves the weights with parameters_to_vector / "
    "vector_to_parameters, recomputes the current point's potential and gradient every step (two "
    "forward-backward passes per step) and enters the minibatch as a Bernoulli mask on the full-data loss.",
    "The jitted JAX csMALA step draws its Bernoulli(rho) batch as the running sum of rho n + 6 sd "
    "Geometric(rho) gaps cut at n (a static shape; the slots beyond n are masked), gathers those rows and "
    "masks the rest of the loss sum; one jitted call per step, as for BlackJAX. XLA computes on one intra-op "
    "thread (XLA_FLAGS).",
)


def _note000(rho_key, r):
    def vs(key):
        wall = r["kernel_1"]["per_chain"] / r[key]["per_chain"]
        return f"{wall:.2f}x ({r['kernel_1']['per_chain_cpu'] / r[key]['per_chain_cpu']:.2f}x in CPU time)"

    line = f"{rho_key}: one skgibbs chain (mala.step) runs at {vs('floor')} the floor"
    if "floor_gather" in r:
        line += f", {vs('floor_gather')} the floor with the batch draw and gather"
    line += f", {vs('naive')} the naive loop"
    if "jax_peer" in r:
        line += f" and {vs('jax_peer')} the JAX peer ({r['jax_peer']['label']})"
    return f"{line}. {TARGETS}"


def _note_grid(rho_key, t, opts, vectorize_work):
    _, b, c = t["fit_log_ratio_on_log_n_log_Q"]
    won, lost = _fmt(t["largest_work_batching_wins"], 0), _fmt(t["smallest_work_batching_loses"], 0)
    return (
        f"Crossover at {rho_key}: batching 4 chains stops paying near batch points x Q = "
        f"{_fmt(t['fitted_crossing'], 0)} (least-squares fit of log ratio on log work over the grid; largest "
        f"work where batching still won: {won}, smallest where it lost: {lost}; fitted separately, the log "
        f"ratio falls by {-b:.2f} per unit log batch points and {-c:.2f} per unit log Q). GibbsMLPRegressor "
        f"batches chains while batch points x Q <= {vectorize_work:,}. Grid cells: median of "
        f"{opts['grid_repeats']} blocks of at least {opts['grid_rc_steps']} steps per run_chains call."
    )


def notes(results):
    out = [_note000(k, r) for k, r in results["paper000"].items()]
    r1 = results["paper001"]
    runner = r1["run_chains_vec"]["median"] / r1["run_chains_seq"]["median"]
    kernel = r1["kernel_batched"]["median"] / r1["kernel_sequential"]["median"]
    out.append(
        f"Paper 001 network, 10 chains: batched run_chains gives {runner:.1f}x the chain-steps/s of "
        f"sequential run_chains (kernel alone: {kernel:.1f}x); target 5x."
    )
    for rho_key, t in results["crossover"]["threshold"].items():
        out.append(_note_grid(rho_key, t, results["options"], results["vectorize_work"]))
    return out + [m.format(rc_steps=results["options"]["rc_steps"]) for m in METHODS]


def intro(results):
    m, opts = results["machine"], results["options"]
    # results stored before the harness recorded the load and the quick flag kept their own
    before, after = loads(results) or (results["load_before"], results["load_after"])
    quick = was_quick(results) or opts.get("quick", False)
    jax_v = results.get("jax")
    jax_txt = f"JAX {jax_v['jax']}, BlackJAX {jax_v['blackjax']}" if jax_v else f"JAX {results['jax_status']}"
    return (
        f"Measured on {results['date']} on a machine with {m['nproc']} CPUs ({m['cpu_model']}), Python "
        f"{m['python']}, torch {m['torch']} with {m['torch_threads']} thread, {jax_txt}, float32. Each rate "
        f"is the median of {opts['repeats']} timed blocks interleaved with the other rows of its table. The "
        f"machine was shared with other processes (load average {before:.1f} before, {after:.1f} after), so "
        "single rates are noisy; ratios within a table are more reliable, and the last column compares steps "
        "per CPU-second of the process, which leaves out the time spent waiting for the CPU (JAX dispatches "
        "asynchronously and can overlap the Python dispatch with the computation on a second thread, so on "
        "this two-core machine its CPU-time ratios are the one-core "
        f"comparison).{' Quick run.' if quick else ''}"
    )


def _rst_table(header, rows):
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *rows]:
        cells = [c.replace("*", r"\*") for c in row]
        lines.append(f"   * - {cells[0]}".rstrip())
        lines += [f"     - {c}".rstrip() for c in cells[1:]]
    return "\n".join(lines)


def to_rst(intro_text, table_list, note_list):
    parts = [intro_text]
    for caption, header, rows in table_list:
        parts += [f"**{caption}**", _rst_table(header, rows)]
    return "\n\n".join([*parts, "\n".join(f"* {n}" for n in note_list)]) + "\n"
