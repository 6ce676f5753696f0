"""Every registered benchmark runs in its quick mode and its report re-renders from the JSON it wrote.

The quick mode runs the same code as a full run on tiny data and few
iterations, through the harness's entry point, into a temporary directory.
A benchmark whose optional dependency is missing is skipped with the reason.
The harness records the run (environment, load, seed, quick) itself, the
benchmarks compute means and standard errors through one helper, and no
benchmark stores the record by hand or writes a file past the writer.
"""

import importlib
import json
import math
import pkgutil
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # benchmarks/ is a package of the checkout, not of the installed skgibbs
    sys.path.append(str(ROOT))

from benchmarks import PACKAGES, Benchmark, Output, pick_sizes, registry  # noqa: E402
from benchmarks.__main__ import common_parser, main, report_benchmark, run_benchmark  # noqa: E402
from benchmarks.common import environment, stats, writer  # noqa: E402
from benchmarks.common.writer import RESULTS, Page  # noqa: E402

BENCHMARKS = registry()


def _texts(directory, stems):
    return {p.name: p.read_text() for s in stems for p in [directory / f"{s}.rst"] if p.exists()}


def test_list_names_every_benchmark(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name, bench in BENCHMARKS.items():
        assert name in out
        assert all(f"{stem}.{{json,rst}}" in out for stem in bench.stems)


def test_quick_never_writes_the_committed_results():
    with pytest.raises(SystemExit, match="never writes"):
        main(["run", "burn_in", "--quick", "--out", str(RESULTS)])


def test_registry_is_complete():
    kinds = {b.kind for b in BENCHMARKS.values()}
    assert kinds == {"performance", "reproduction"}
    stems = [s for b in BENCHMARKS.values() for s in b.stems]
    assert len(stems) == len(set(stems)), "two benchmarks declare the same result file"
    committed = {p.stem for p in RESULTS.glob("*.rst")}
    assert committed <= set(stems), f"result files no benchmark declares: {sorted(committed - set(stems))}"


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BENCHMARKS))
def test_quick_run_writes_and_reports(name, tmp_path):
    bench = BENCHMARKS[name]
    missing = bench.missing()
    if missing:
        pytest.skip(f"{name} needs the optional module {missing}")
    assert main(["run", name, "--quick", "--out", str(tmp_path)]) == 0
    written = [s for s in bench.stems if (tmp_path / f"{s}.json").is_file()]
    assert written, f"{name} wrote none of {bench.stems}"
    before = _texts(tmp_path, written)
    assert {f"{s}.rst" for s in written} <= set(before)
    assert not list(tmp_path.glob("*.md")), "the writer writes no Markdown"
    for path in before:
        (tmp_path / path).unlink()
    assert main(["report", name, "--out", str(tmp_path)]) == 0
    assert _texts(tmp_path, written) == before


def test_committed_pages_are_what_report_renders_from_the_committed_json(tmp_path):
    """A result page is never edited by hand: ``report`` on the committed JSON gives it back, byte for byte.

    A page that disagrees was edited, or was rendered by report code that has
    changed since (``python -m benchmarks report NAME`` brings it up to date).
    """
    import shutil

    for path in RESULTS.glob("*.json"):
        shutil.copy(path, tmp_path / path.name)
    for name, bench in BENCHMARKS.items():
        if any((RESULTS / f"{s}.json").exists() for s in bench.stems):
            assert main(["report", name, "--out", str(tmp_path)]) == 0
    stems = [p.stem for p in RESULTS.glob("*.json")]
    rendered, committed = _texts(tmp_path, stems), _texts(RESULTS, stems)
    unrenderable = {name.rsplit(".", 1)[0] for name in committed if name not in rendered}
    assert not unrenderable, f"pages that report cannot render from their JSON: {sorted(unrenderable)}"
    stale = sorted(name for name in rendered if rendered[name] != committed.get(name))
    assert not stale, f"pages that the committed JSON does not render to: {stale}"



def test_seeds_agreement_tells_one_posterior_from_runs_in_different_modes():
    """The smc_seeds page's comparison of independent runs, on draws whose answer is known."""
    import numpy as np

    from benchmarks.perf.bench_smc import seeds_agreement

    rng = np.random.default_rng(0)
    n_inputs, P = 30, 400
    truth = np.zeros(n_inputs)
    same = [rng.normal(0.0, 1.0, size=(n_inputs, P)) for _ in range(4)]
    a = seeds_agreement(same, truth)
    # four runs of one posterior: the means differ by their Monte Carlo error, about 1 / sqrt(P)
    assert 0.5 / np.sqrt(P) < a["between_within"] < 2.0 / np.sqrt(P)
    assert 0.9 < a["pooled_coverage"] <= 1.0 and abs(a["pooled_width"] - 2 * 1.96) < 0.2
    # runs in different modes (means 0 and 3, each with sd 1): the spread of the means dominates
    modes = [rng.normal(3.0 * (k % 2), 1.0, size=(n_inputs, P)) for k in range(4)]
    b = seeds_agreement(modes, truth)
    assert b["between_within"] > 1.0 and b["mean_range"] > 2.5
    # a truth far from every draw is far in posterior sd too
    c = seeds_agreement(same, truth + 10.0)
    assert c["truth_sd_median"] > 8 and c["pooled_coverage"] == 0.0


@pytest.mark.slow
def test_quick_smc_seeds_part_writes_and_reports(tmp_path):
    assert main(["run", "smc", "--quick", "--out", str(tmp_path)]) == 0
    assert main(["run", "smc", "--quick", "--part", "seeds", "--seeds", "0", "1", "--out", str(tmp_path)]) == 0
    # a later run of one seed replaces that seed's row and keeps the other's
    assert main(["run", "smc", "--quick", "--part", "seeds", "--seeds", "1", "--out", str(tmp_path)]) == 0
    import json

    rows = json.loads((tmp_path / "smc_seeds.json").read_text())["rows"]
    assert [r["seed"] for r in rows] == [0, 1]
    before = _texts(tmp_path, ["smc_seeds"])
    assert "Do the runs agree in the gap?" in before["smc_seeds.rst"]
    for name in before:
        (tmp_path / name).unlink()
    assert main(["report", "smc", "--out", str(tmp_path)]) == 0
    assert _texts(tmp_path, ["smc_seeds"]) == before


# ---------------------------------------------------------------- what the harness owns
def _benchmark_sources():
    """``{module name: source}`` of every module of the benchmark packages, those inside packages too."""
    out = {}
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}."):
            spec = importlib.util.find_spec(info.name)
            out[info.name] = Path(spec.origin).read_text()
    return out


SOURCES = _benchmark_sources()
#: a result key or keyword that stores the quick flag, e.g. ``"quick": args.quick`` or ``quick=args.quick``
STORES_QUICK = re.compile(
    r"""["']quick["']\s*:\s*(args\.|opts\.)?quick\b|\bquick\s*=\s*(args|opts)\.quick|\[["']quick["']\]\s*="""
)


def test_the_scan_sees_every_registered_benchmark():
    modules = {sys.modules[b.run.__module__].__name__ for b in BENCHMARKS.values()}
    assert modules <= set(SOURCES)
    assert "benchmarks.studies.repro_vi.e1" in SOURCES  # the parts of a benchmark package too


@pytest.mark.parametrize("module", sorted(SOURCES))
def test_no_benchmark_records_the_run_itself(module):
    """The load average and the quick flag of a run are the harness's to record (environment.record)."""
    source = SOURCES[module]
    assert not re.search(r"\bload_average\s*\(", source), f"{module} calls load_average"
    assert not STORES_QUICK.search(source), f"{module} stores the quick flag in its results"


@pytest.mark.parametrize("module", sorted(SOURCES))
def test_no_benchmark_copies_a_file_past_the_writer(module):
    """Figures go through the writer; one that the documentation shows from doc/_static is a doc_figure."""
    assert not re.search(r"\bshutil\.copy|\bcopyfile\(|/ [\"']doc[\"']", SOURCES[module]), (
        f"{module} copies a file itself: name it as the page's doc_figure"
    )


@pytest.mark.parametrize("module", sorted(SOURCES))
def test_no_benchmark_defines_its_own_mean_and_standard_error(module):
    own = re.search(r"def _?(mean_se|timed_fit)\b", SOURCES[module])
    assert not own, f"{module}: use benchmarks.common.stats"


def test_harness_records_the_run_and_writes_json_and_rst_only(tmp_path):
    """The record goes with every result; the page is reStructuredText, rendered again from the JSON alone."""
    seen = {}

    def run(args):
        seen["size"] = args.size
        return {"fake": {"rows": [1, 2, 3]}}

    def report(results):
        r = results["fake"]
        quick, seed = environment.was_quick(r), environment.recorded(r, "seed")
        cells = [[str(quick), str(seed), stats.fmt(stats.mean_se(r["rows"]))]]
        return [Page("fake", "Fake", [("Record", ["quick", "seed", "rows"], cells)], ["A note."])]

    sizes = {"full": {"n": 100}, "quick": {"n": 2}}
    bench = Benchmark("fake", "performance", "Fake", (Output("fake", "Fake"),), run, report, sizes=sizes)
    args = common_parser(bench).parse_args(["--quick", "--seed", "7", "--out", str(tmp_path)])
    written = run_benchmark(bench, args)
    assert seen["size"] == {"n": 2} and seen["size"].n == 2
    assert sorted(p.name for p in written) == ["fake.json", "fake.rst"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fake.json", "fake.rst"]
    env = json.loads((tmp_path / "fake.json").read_text())["environment"]
    assert env["quick"] is True and env["seed"] == 7 and env["threads"] == 1
    assert {"load_before", "load_average", "versions", "cpu_model", "date"} <= set(env)
    assert environment.loads({"environment": env}) == (env["load_before"], env["load_average"])
    rst = (tmp_path / "fake.rst").read_text()
    assert "| True  | 7    | 2.000 ± 0.577 |" in rst
    assert "quick run, seed 7, load average" in rst and "before and" in rst
    (tmp_path / "fake.rst").unlink()
    report_benchmark(bench, common_parser(bench, "report").parse_args(["--out", str(tmp_path)]))
    assert (tmp_path / "fake.rst").read_text() == rst


def test_quick_run_of_a_registered_benchmark_records_the_run(tmp_path):
    """A real benchmark through the command line: JSON and reStructuredText, no Markdown, the run recorded."""
    assert main(["run", "burn_in", "--quick", "--seed", "3", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["burn_in.json", "burn_in.rst"]
    result = json.loads((tmp_path / "burn_in.json").read_text())
    assert "quick" not in result and "load_average" not in result  # the harness's, in the environment
    env = result["environment"]
    assert env["quick"] is True and env["seed"] == 3 and "load_before" in env and "load_average" in env
    page = (tmp_path / "burn_in.rst").read_text()
    assert f"load average {env['load_average']:.1f} (a shared machine" in page


def test_older_results_keep_their_own_record():
    """Results stored before the harness recorded the run are read from their own keys."""
    old = {"quick": True, "seed": 4, "load_average": 2.5, "environment": {"load_average": 1.0}}
    assert environment.was_quick(old) and environment.recorded(old, "seed") == 4
    assert environment.loads(old) is None
    assert environment.load_after(old, lambda r: r["load_average"]) == 2.5
    new = {"environment": {"quick": False, "seed": 0, "load_before": 0.5, "load_average": 1.5}, "quick": True}
    assert not environment.was_quick(new) and environment.load_after(new, lambda r: 99) == 1.5
    assert environment.same_run(new, 0, False) and not environment.same_run(new, 1, False)


def test_merged_results_keep_the_load_of_the_run_that_measured_each_part():
    first = {"sessions": [{"datasets": ["a"]}], "speed": [1], "cost": [2],
             "environment": {"load_before": 1.0, "load_average": 2.0}}  # fmt: skip
    sessions = environment.session_loads(first)
    assert sessions[-1]["load_average"] == [1.0, 2.0] and "load_average" not in first["sessions"][-1]
    second = environment.keep_parts(first, {"cost": [3]}, ["speed"])
    second["environment"] = {"load_before": 5.0, "load_average": 6.0}
    assert environment.part_loads(second, "speed") == (1.0, 2.0)
    assert environment.part_loads(second, "cost") == (5.0, 6.0)
    third = environment.keep_parts(second, {}, ["speed", "cost"])  # kept twice: still the first run's load
    third["environment"] = {"load_before": 8.0, "load_average": 9.0}
    assert environment.part_loads(third, "speed") == (1.0, 2.0)
    assert environment.part_loads(third, "cost") == (5.0, 6.0)


# ---------------------------------------------------------------- the one stats helper
def test_mean_se_of_a_single_value_is_nan_and_printed_as_na():
    assert stats.mean_se([0.25]) == (0.25, pytest.approx(math.nan, nan_ok=True))
    assert math.isnan(stats.mean_se([0.25])[1])
    assert stats.fmt(stats.mean_se([0.25])) == "0.250 ± n/a"
    assert stats.fmt_values([0.25], ".2f", scale=100) == "25.00 ± n/a"
    assert all(math.isnan(x) for x in stats.mean_se([]))


def test_mean_se_and_its_text():
    mean, se = stats.mean_se([1.0, 2.0, 3.0, 4.0])
    assert mean == 2.5 and se == pytest.approx(math.sqrt(5 / 3) / 2)
    assert stats.fmt((mean, se), 2) == "2.50 ± 0.65"
    assert stats.fmt((0.12345, 0.001234), ".4f", se_spec=".2g") == "0.1235 ± 0.0012"
    assert stats.fmt_values([1, 2, 3], ".3g", scale=10) == "20 ± 5.77"


def test_timed_fit_records_every_warning_the_same_way():
    from sklearn.exceptions import ConvergenceWarning

    from skgibbs import SamplerWarning

    class Noisy:
        def fit(self, X, y=None):
            for _ in range(2):
                warnings.warn("chains did not mix", SamplerWarning, stacklevel=2)
            warnings.warn("stopped early", ConvergenceWarning, stacklevel=2)
            self.fitted_ = True
            return self

    est = Noisy()
    fit = stats.timed_fit(est, [[0.0]], [0.0])
    assert est.fitted_ and fit.seconds >= 0.0
    assert fit.messages(SamplerWarning) == ["chains did not mix"] * 2
    assert fit.count(ConvergenceWarning) == 1 and fit.count() == 3
    assert fit.categories() == {"SamplerWarning": 2, "ConvergenceWarning": 1}


def test_the_mixing_column_reads_the_numbers_of_the_warning_a_fit_raises_today():
    # the tables' "function-space mixing" column parses the warning's text: a rewording must not turn a
    # fit that warned into "mixed"
    from benchmarks.common.fits import mixing_note

    from skgibbs import GibbsMLPRegressor, SamplerWarning

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 1))
    reg = GibbsMLPRegressor(hidden_layer_sizes=(4,), n_samples=20, burn_in=20, pretrain_iter=50, random_state=0)
    fit = stats.timed_fit(reg, X, np.sin(X[:, 0]))
    messages = fit.messages(SamplerWarning)
    assert reg.ess_ < 100 and messages  # 20 draws a chain: too few effective draws, a warning
    assert mixing_note(messages) == f"R-hat {reg.rhat_:.3g}, ESS {reg.ess_:.3g}: not mixed"
    assert mixing_note([]) == "mixed"


# ---------------------------------------------------------------- sizes and figures
def test_sizes_name_the_same_keys_in_a_full_and_a_quick_run():
    assert pick_sizes({"full": {"n": 10}, "quick": {"n": 1}}, quick=True).n == 1
    with pytest.raises(ValueError, match="same keys"):
        pick_sizes({"full": {"n": 10, "m": 2}, "quick": {"n": 1}}, quick=False)
    declared = [b for b in BENCHMARKS.values() if b.sizes is not None]
    assert len(declared) >= 20
    for bench in declared:
        assert set(bench.sizes["full"]) == set(bench.sizes["quick"]), bench.name


def test_paper_002_is_one_benchmark_with_its_four_result_files():
    vi = BENCHMARKS["vi"]
    assert vi.stems == ("vi_e1", "vi_e2", "vi_fig1", "vi_fig3")
    assert [o.flags for o in vi.outputs] == ["--parts e1", "--parts e2", "--parts fig1", "--parts fig3"]


def test_the_writer_copies_a_documentation_figure_only_into_the_committed_results(tmp_path, monkeypatch):
    results, static, other = tmp_path / "results", tmp_path / "static", tmp_path / "other"
    monkeypatch.setattr(writer, "RESULTS", results)
    monkeypatch.setattr(writer, "DOC_STATIC", static)

    def draw(path):
        path.write_bytes(b"png")

    page = Page("fig", "Fig", [], ["text"], figure=draw, doc_figure="fig_doc.png")
    assert [p.name for p in writer.write_page(other, page)] == ["fig.rst", "fig.png"]
    assert not static.exists()
    assert [p.name for p in writer.write_page(results, page)] == ["fig.rst", "fig.png", "fig_doc.png"]
    assert (static / "fig_doc.png").read_bytes() == b"png"


#: stored results that show what a fit at today's defaults prints or costs, and where in them the record of
#: what it ran with sits (``benchmarks.common.provenance.ran_with``); the command that regenerates them
PAGES_OF_DEFAULT_FITS = {
    "first_fit": (lambda r: [page["ran_with"] for page in r["pages"].values()], "python -m benchmarks run first_fit"),
    "demo": (lambda r: [r["ran_with"]], "python -m benchmarks run first_fit"),
}


def _records(value):
    """Every ``ran_with`` record inside a stored result."""
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "ran_with":
                yield inner
            else:
                yield from _records(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _records(inner)


@pytest.mark.parametrize("stem", sorted(PAGES_OF_DEFAULT_FITS))
def test_a_page_of_a_default_fit_records_what_it_ran_with(stem):
    """The pages the README and the quick start include or quote record their fits' defaults and sources."""
    from benchmarks.common.provenance import source_text

    records = PAGES_OF_DEFAULT_FITS[stem][0](json.loads((RESULTS / f"{stem}.json").read_text()))
    assert records
    for record in records:
        assert record["estimators"] and record["samplers"] and record["sources"]
        for name in record["sources"]:
            assert source_text(name)  # a name the check can read back


def test_no_stored_page_rests_on_defaults_that_have_changed():
    """Every stored record of what a page's fits ran with still holds: the defaults and the sources are today's.

    A page whose fit ran under other defaults (of the estimator class or of the sampler the fit resolved)
    or from another version of the block or script it runs shows another model's numbers; regenerate it.
    """
    from benchmarks.common.provenance import stale

    found = {}
    for path in sorted(RESULTS.glob("*.json")):
        for record in _records(json.loads(path.read_text())):
            if differences := stale(record):
                found.setdefault(path.stem, set()).update(differences)
    commands = {stem: PAGES_OF_DEFAULT_FITS.get(stem, (None, "its benchmark"))[1] for stem in found}
    assert not found, "\n".join(
        f"{stem} is stale ({'; '.join(sorted(lines))}): regenerate it with {commands[stem]}"
        for stem, lines in found.items()
    )


def test_the_stale_page_check_names_a_changed_default_and_an_edited_source():
    """A record made under other defaults, or from another block, is found stale, with what changed."""
    import copy

    from benchmarks.common.provenance import stale

    record = json.loads((RESULTS / "demo.json").read_text())["ran_with"]
    assert stale(record) == []
    estimator = next(iter(record["estimators"]))
    entry = record["estimators"][estimator]
    param = next(p for p in entry["defaults"] if p not in entry["given"])
    sampler = next(iter(record["samplers"]))
    setting = next(iter(record["samplers"][sampler]))
    changed = copy.deepcopy(record)
    changed["estimators"][estimator]["defaults"][param] = "'another default'"
    changed["samplers"][sampler][setting] = "'another setting'"
    changed["sources"] = {name: "0" * 64 for name in record["sources"]}
    lines = stale(changed)
    assert any(f"{estimator}'s default {param} was 'another default'" in line for line in lines)
    assert any(f"{sampler}'s default {setting} was 'another setting'" in line for line in lines)
    assert sum("was edited" in line for line in lines) == len(record["sources"])
    # what the class declares for its plans counts as a default: the cap of the run length, say
    trait = copy.deepcopy(record)
    trait["estimators"][estimator]["defaults"]["traits.cap_factor"] = "8"
    assert any(f"{estimator}'s default traits.cap_factor was 8" in line for line in stale(trait))
    # a record made before the traits were recorded is judged on the parameters alone
    untraited = copy.deepcopy(record)
    defaults = untraited["estimators"][estimator]["defaults"]
    untraited["estimators"][estimator]["defaults"] = {k: v for k, v in defaults.items() if "traits." not in k}
    assert stale(untraited) == []
    # a parameter the page set itself does not make it stale when its default changes
    given = copy.deepcopy(record)
    given["estimators"][estimator]["given"][param] = "'set by the page'"
    given["estimators"][estimator]["defaults"][param] = "'another default'"
    assert stale(given) == []


def test_pooled_reliability_is_the_curve_of_every_split_s_test_points_together():
    """Curves stored per split, pooled bin by bin, give the curve of the union of the splits' points."""
    from benchmarks.common.fits import N_BINS, pooled_reliability, score_classifier
    from skgibbs.metrics import reliability_curve

    rng = np.random.default_rng(0)

    class Fixed:  # a "fitted classifier" whose probabilities are given
        classes_ = np.arange(3)

        def __init__(self, P):
            self.P = P

        def predict_proba(self, X):
            return self.P

        def predict(self, X):
            return self.P.argmax(1)

    splits = []
    for n in (40, 70, 55):
        P = rng.dirichlet(np.ones(3) * 0.7, size=n)
        y = np.array([rng.choice(3, p=p) for p in P])
        splits.append((P, y))
    curves = [score_classifier(Fixed(P), None, y)["reliability"] for P, y in splits]
    pooled = pooled_reliability(curves)
    whole = reliability_curve(np.concatenate([y for _, y in splits]), np.vstack([P for P, _ in splits]),
                              n_bins=N_BINS)  # fmt: skip
    np.testing.assert_array_equal(pooled.count, whole.count)
    np.testing.assert_allclose(pooled.confidence, whole.confidence, rtol=1e-12)
    np.testing.assert_allclose(pooled.accuracy, whole.accuracy, rtol=1e-12)
    np.testing.assert_allclose(pooled.edges, whole.edges, rtol=1e-12)
    assert pooled.ece == pytest.approx(whole.ece, rel=1e-12)
