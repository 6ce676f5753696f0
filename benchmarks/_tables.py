"""Tables and result files shared by the benchmark scripts."""

import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def rst_table(header, rows):
    """A reStructuredText grid table."""
    cols = list(zip(header, *rows))
    widths = [max(len(str(c)) for c in col) for col in cols]
    line = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    head = "+" + "+".join("=" * (w + 2) for w in widths) + "+"

    def fmt(row):
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths)) + " |"

    out = [line, fmt(header), head]
    for row in rows:
        out += [fmt(row), line]
    return "\n".join(out)


def md_table(header, rows):
    """A GitHub-flavoured Markdown table."""
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def write_results(name, result, md_lines, rst_lines, directory=RESULTS):
    """Write ``name.json`` (raw), ``name.md`` and ``name.rst`` (included by the docs)."""
    directory = Path(directory)
    directory.mkdir(exist_ok=True)
    stem = directory / name
    stem.with_suffix(".json").write_text(json.dumps(result, indent=2, default=float))
    stem.with_suffix(".md").write_text("\n".join(md_lines))
    stem.with_suffix(".rst").write_text("\n".join(rst_lines))


def publish(name, result, heading, tables, notes, unwritten=None):
    """Print ``tables`` (``(title, header, rows)`` triples) and ``notes``; unless quick, write them.

    The Markdown file gets ``heading`` as its title; both files end with the
    notes (paragraphs, in order). With ``unwritten`` (a message saying why)
    nothing is written either.
    """
    md, rst = [f"# {heading}", ""], []
    for title, header, rows in tables:
        md += [f"## {title}", "", md_table(header, rows), ""]
        rst += [f"**{title}**", "", rst_table(header, rows), ""]
        print(f"\n{title}\n{rst_table(header, rows)}")
    for note in notes:
        md += [note, ""]
        rst += [note, ""]
        print(f"\n{note}")
    if result["quick"] or unwritten:
        print("\n" + (unwritten or "Quick run: nothing written to benchmarks/results."))
        return
    write_results(name, result, md, rst)


def names(values, choices, what, in_choice_order=True):
    """Comma-separated command-line names, checked against ``choices``.

    Returns them in the order of ``choices`` (default) or as given; an
    unknown name ends the script with a message listing the choices.
    """
    out = [v for value in values for v in value.split(",") if v]
    bad = sorted(set(out) - set(choices))
    if bad:
        raise SystemExit(f"unknown {what}: {', '.join(bad)} (choose from {', '.join(choices)})")
    return [c for c in choices if c in out] if in_choice_order else out


def load_available(datasets, load):
    """``(data, skipped)``: ``load(name)`` of each data set, or the reason (a string) it is not available."""
    data, skipped = {}, {}
    for name in datasets:
        loaded = load(name)
        if isinstance(loaded, str):
            print(f"skipping data set {name}: {loaded}")
            skipped[name] = loaded
        else:
            data[name] = loaded
    return data, skipped


# The goal of the VI rows of bench_classification.py and bench_uq.py (the VI issue's calibration table)
VI_NLL_RATIO, VI_TIME_RATIO = 1.05, 1 / 5
VI_GOAL = "VI's test NLL within 5% of the best MCMC sampler's at <= 1/5 of its fit time"


def vi_diagnostics(summaries, title):
    """The optimisation of the ``sampler='vi'`` row: ``summaries`` maps data sets to that row's summary."""
    rows = []
    for name, s in summaries.items():
        lo, hi = s["n_iter_range"]
        warned = f"{s['n_warnings']} in {s['fits_warned']} of {s['n']} fits"
        steps, stopped = f"{s['n_iter_median']:.0f} ({lo} to {hi})", f"{s['stopped_early']} of {s['n']}"
        rows.append([name, steps, stopped, f"{s['kl_weight']:.4g}", warned])
    header = [
        "data set",
        "Adam steps (n\\_iter\\_) median (range)",
        "stopped early",
        "KL weight (kl\\_weight\\_)",
        "SamplerWarnings",
    ]
    return title, header, rows
