"""The sklearn-contrib-bde peer: its mixture arithmetic (no JAX needed) and its rows when bde is missing."""

import ast
import math

import numpy as np
import pytest
from scipy.stats import norm

from benchmarks.common import bde_peer
from benchmarks.common.data import Unavailable
from benchmarks.perf import bench_uq, uq_report


def test_mixture_log_density_by_hand():
    y = np.array([0.3, -1.0])
    mu = np.array([[0.0, -1.0], [1.0, 2.0]])  # two components, two points
    sd = np.array([[1.0, 0.5], [2.0, 1.0]])
    got = bde_peer.mixture_log_density(y, mu, sd)

    def pdf(x, m, s):
        return math.exp(-0.5 * ((x - m) / s) ** 2) / (s * math.sqrt(2 * math.pi))

    want = [math.log((pdf(0.3, 0.0, 1.0) + pdf(0.3, 1.0, 2.0)) / 2),
            math.log((pdf(-1.0, -1.0, 0.5) + pdf(-1.0, 2.0, 1.0)) / 2)]  # fmt: skip
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_floor_removes_the_gain_of_a_collapsed_component():
    # a component of sd 1e-4 sitting exactly on y: the raw mixture gains nats that the floor takes back
    y, mu, sd = np.array([3.0]), np.array([[3.0], [3.5]]), np.array([[1e-4], [1.0]])
    raw = bde_peer.mixture_log_density(y, mu, sd)[0]
    floored = bde_peer.mixture_log_density(y, mu, sd, floor=0.5)[0]
    by_hand = math.log((norm.pdf(3.0, 3.0, 0.5) + norm.pdf(3.0, 3.5, 1.0)) / 2)
    assert raw > math.log(norm.pdf(0.0, 0.0, 1e-4) / 2) - 1e-9  # at least half the spike's density
    assert floored == pytest.approx(by_hand, rel=1e-12)
    # a floor below every sd changes nothing
    assert bde_peer.mixture_log_density(y, mu, sd, floor=1e-5)[0] == pytest.approx(raw, rel=1e-12)


def test_mixture_quantiles_solve_the_cdf():
    mu = np.array([[-1.0, 0.0], [2.0, 0.0]])
    sd = np.array([[0.5, 1.0], [1.0, 1.0]])
    for q in (0.05, 0.5, 0.95):
        x = bde_peer.mixture_quantiles(mu, sd, q)
        cdf = norm.cdf((x[None, :] - mu) / sd).mean(0)
        np.testing.assert_allclose(cdf, q, atol=1e-10)
    # one Gaussian (two equal components): its own quantile
    assert bde_peer.mixture_quantiles(mu[:, 1:], sd[:, 1:], 0.95)[0] == pytest.approx(
        norm.ppf(0.95), abs=1e-10
    )


def test_score_mixture_floors_at_a_fraction_of_the_training_sd():
    rng = np.random.default_rng(0)
    mu, sd, y = rng.normal(size=(50, 7)), rng.uniform(0.01, 1.0, size=(50, 7)), rng.normal(size=7)
    out = bde_peer.score_mixture(mu, sd, y, y_train_sd=4.0)
    floor = bde_peer.SD_FLOOR * 4.0
    assert out["ll_floored"] == pytest.approx(bde_peer.mixture_log_density(y, mu, sd, floor).mean())
    np.testing.assert_allclose(out["loglik"], bde_peer.mixture_log_density(y, mu, sd))
    np.testing.assert_allclose(out["mean"], mu.mean(0))
    assert np.all(out["lo"] < out["hi"])


def test_the_interpreter_comes_from_the_environment_variable(monkeypatch, tmp_path):
    monkeypatch.setenv(bde_peer.ENV_VAR, str(tmp_path / "nowhere" / "python"))
    assert not bde_peer.available()
    monkeypatch.delenv(bde_peer.ENV_VAR)
    assert bde_peer.bde_python() == bde_peer.ROOT / ".venv-bde" / "bin" / "python"


def test_without_bde_its_row_and_airfoil_are_skipped_with_the_install_line(monkeypatch, tmp_path):
    monkeypatch.setenv(bde_peer.ENV_VAR, str(tmp_path / "python"))
    assert "sklearn-contrib-bde" in bench_uq.missing("bde")
    with pytest.raises(Unavailable, match="venv-bde"):
        bench_uq.load_xy("airfoil")


def test_the_worker_imports_neither_skgibbs_nor_torch():
    tree = ast.parse(bde_peer.WORKER.read_text())
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert names <= {"os", "json", "sys", "time", "numpy", "importlib", "bde"}


def fake_runs(ll, ll_floored):
    return [{"dataset": "diabetes", "model": "bde", "split": k, "ll": ll + 0.01 * k, "ll_floored": ll_floored,
             "rmse": 1.0, "coverage": 0.9, "width": 3.0, "fit_s": 30.0, "cpu_s": 29.0, "bde_coverage": 0.9,
             "bde_width": 3.1, "bde_versions": "sklearn-contrib-bde 1.0.2"} for k in range(3)]  # fmt: skip


def test_an_artefact_is_bracketed_and_ranked_by_its_floored_value():
    runs = fake_runs(-1.0, -2.0) + [{**r, "model": "bayesian_ridge", "ll": -1.5} for r in fake_runs(0.0, 0.0)]
    summary = bench_uq.summarise(runs, 3)
    assert summary["diabetes"]["bde"]["artefact"] and summary["diabetes"]["bde"]["ll"][0] == -2.0
    assert uq_report.ll_ranking(summary["diabetes"])[0] == "bayesian_ridge"
    result = {"summary": summary, "shapes": {"diabetes": [442, 10]}, "settings": {"splits": 3}, "runs": runs}
    _, _, rows = uq_report.dataset_table("diabetes", result)
    cell = next(r[1] for r in rows if r[0] == "sklearn-contrib-bde (MILE)")
    assert cell.startswith("[-0.990") and "-2.000" in cell and "floored" in cell
    assert "floored at 0.05" in uq_report.bde_note({**result, "models": ["bde"]})


def test_no_artefact_keeps_the_raw_value():
    summary = bench_uq.summarise(fake_runs(-2.0, -2.05), 3)["diabetes"]["bde"]
    assert not summary["artefact"] and summary["ll"][0] == pytest.approx(-1.99)


def test_the_classifier_fits_once_for_both_predictions(monkeypatch):
    calls = []

    def fake_fit(X, y, X_test, seed, settings):
        calls.append(seed)
        proba = np.tile([0.2, 0.8], (len(X_test), 1))
        assert list(y) == [0, 1, 1, 0]  # the labels travel as their codes
        return proba, np.array([0, 1]), {"cpu_s": 1.0, "wall_s": 1.5}

    monkeypatch.setattr(bde_peer, "fit_classifier", fake_fit)
    X, y = np.zeros((4, 2)), np.array(["No", "Yes", "Yes", "No"], dtype=object)
    est = bde_peer.BdePeerClassifier(random_state=5).fit(X, y)
    assert list(est.predict(X[:2])) == ["Yes", "Yes"] and est.predict_proba(X[:2]).shape == (2, 2)
    assert calls == [5] and est.times_["wall_s"] == 1.5


def test_without_bde_the_classification_row_is_skipped(monkeypatch, tmp_path):
    from benchmarks.perf import bench_classification

    monkeypatch.setenv(bde_peer.ENV_VAR, str(tmp_path / "python"))
    assert "pip install sklearn-contrib-bde" in bench_classification.OPTIONAL["bde"]()
