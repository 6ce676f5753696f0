"""One story about chains: the warning texts the docs quote are the texts the code emits.

Every passage of README.rst and the guides that quotes a mixing warning (a
double-quoted sentence, or a literal block, that begins "The chains") must
match one of the messages :func:`skgibbs._mixing._warn_if_not_mixed`
emits for the three failures it tells apart (a chain not converged on its
own, chains that each converged but disagree, too few effective draws in
all), numbers and ``...`` standing for any text.
"""

import re
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from skgibbs import GibbsMLPRegressor, MultimodalWarning, SamplerWarning
from skgibbs._mixing import _warn_if_not_mixed
from skgibbs.samplers import HMC, MALA

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.rst", *sorted((ROOT / "doc").glob("*.rst")), *sorted((ROOT / "doc" / "user_guide").glob("*.rst"))]

# (rhat, ess, within rhat, within ess, between rhat) of each failure
FAILURES = {
    "within": (1.4, 12.0, 1.6, 2.0, 1.3),
    "between": (1.4, 12.0, 1.01, 150.0, 1.4),
    "draws": (1.01, 60.0, 1.01, 40.0, 1.01),
}


def _emitted(kernel, failure):
    r, e, wr, we, b = FAILURES[failure]
    fit = SimpleNamespace(
        rhat_=r, ess_=e, within_chain_rhat_=wr, within_chain_ess_=we, between_chain_rhat_=b,
        samples_=np.zeros((4, 10, 1)), sampler_=kernel, rho_=1.0, chain_weights="equal",
    )
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        _warn_if_not_mixed(fit)
    [w] = record
    return w.category, str(w.message)


def _normal(text):
    """Whitespace collapsed, rst markup dropped, every number and ``...`` one wildcard ``#``."""
    text = re.sub(r"``|\*|:class:`~?[\w.]+`", "", text)
    text = re.sub(r"\.\.\.|\d+(\.\d+)?(e-?\d+)?", "#", " ".join(text.split()))
    return text.strip()


def _quoted(path):
    """``(line, text)`` of every quoted mixing warning in an rst file."""
    lines = path.read_text().splitlines()
    out = []
    for m in re.finditer(r'"(The chains [^"]+)"', path.read_text()):
        out.append((path.read_text()[: m.start()].count("\n") + 1, m.group(1)))
    for i, line in enumerate(lines):
        if line.rstrip().endswith("::") and i + 2 < len(lines) and lines[i + 2].strip().startswith("The chains"):
            block = []
            for body in lines[i + 2:]:
                if body.strip() and not body.startswith("   "):
                    break
                block.append(body)
            out.append((i + 3, " ".join(block)))
    return out


def _matches(quote, message):
    pattern = re.escape(_normal(quote)).replace(re.escape("#"), ".*?").replace("\\#", ".*?")
    return re.search(pattern, _normal(message)) is not None


QUOTES = [(path.name, line, text) for path in DOCS for line, text in _quoted(path)]


def test_the_docs_quote_mixing_warnings():
    assert any(name == "README.rst" for name, _, _ in QUOTES)  # the check is not vacuous


@pytest.mark.parametrize("name, line, quote", QUOTES, ids=[f"{n}:{ln}" for n, ln, _ in QUOTES])
def test_every_quoted_warning_is_a_warning_the_code_emits(name, line, quote):
    messages = [_emitted(kernel, f)[1] for kernel in (HMC(), MALA()) for f in FAILURES]
    assert any(_matches(quote, m) for m in messages), f"{name}:{line} quotes a text the code does not emit: {quote}"


def test_each_failure_names_its_own_remedy():
    category, within = _emitted(HMC(), "within")
    assert category is SamplerWarning and "not converged on their own" in within
    assert "burn_in" in within and "n_chains" not in within  # more chains do not make a chain converge
    category, between = _emitted(HMC(), "between")
    assert category is MultimodalWarning and "sampler='smc'" in between and "stacking" in between
    category, draws = _emitted(HMC(), "draws")
    assert category is SamplerWarning and "n_samples" in draws and "n_chains" in draws and "burn_in" not in draws


@pytest.mark.slow
def test_following_the_within_chain_remedy_makes_the_warning_go():
    """A fit too short for its chains to converge warns so; the run the warning asks for does not warn."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = X @ np.array([1.0, -0.5]) + 0.3 * rng.normal(size=60)
    short = GibbsMLPRegressor((), n_samples=12, burn_in=4, pretrain_iter=0, random_state=0, sampler=MALA())
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        short.fit(X, y)
    messages = [str(w.message) for w in record if issubclass(w.category, SamplerWarning)]
    assert any("not converged on their own" in m and "raise burn_in and n_samples" in m for m in messages), messages
    longer = GibbsMLPRegressor((), n_samples=400, burn_in=400, pretrain_iter=0, random_state=0, sampler=MALA())
    with warnings.catch_warnings():
        warnings.simplefilter("error", SamplerWarning)
        longer.fit(X, y)
    assert longer.within_chain_rhat_ < 1.05 and longer.ess_ >= 100


@pytest.mark.parametrize("failure", list(FAILURES))
def test_a_mixing_warning_states_its_numbers_after_a_first_line_without_them(failure):
    """The first line names the failure (the same for every fit, for a search's one warning per kind); the
    lines after it give the fit's own numbers, as the attributes hold them, and no placeholder."""
    r, e, wr, we, b = FAILURES[failure]
    _, text = _emitted(HMC(), failure)
    first, rest = text.split("\n", 1)
    assert not re.search(r"\d", first) and "#" not in text
    for value in (r, e, wr, we, b):
        assert f"{value:.3g}" in rest


def test_the_langevin_warning_carries_its_numbers_as_attributes():
    from skgibbs.criteria._langevin import _warn_refused

    with pytest.warns(SamplerWarning, match="more than 1% of its steps") as record:
        _warn_refused(np.array([3, 40]), 1000)
    assert (record[0].message.n_refused, record[0].message.n_steps) == (40, 1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _warn_refused(np.array([3, 10]), 1000)  # at most 1%: no warning

