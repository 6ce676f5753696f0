"""Tables and command-line helpers shared by the benchmarks (the files are written by :mod:`.writer`)."""


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


def dict_table(title, rows):
    """A page table ``(title, header, rows)`` from rows given as ``{header: cell}`` dicts, all with the same keys."""
    return title, list(rows[0]), [list(row.values()) for row in rows]


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


# The goal of the VI rows of the classification and uq benchmarks (the calibration goal of sampler='vi')
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
