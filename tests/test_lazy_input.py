"""``fit`` on data that stays where it is: a NumPy memmap or a dask array, read by block and by batch.

Within one block (the tests' data are far smaller than a block) the lazy
fit does the in-memory fit's arithmetic operation for operation: the column
statistics are the same float64 reductions and the standardized rows the
same float64 expression rounded to float32, so the draws are identical.
Across blocks the statistics are combined by Chan's update, whose float64
rounding can move a standardized input by one float32 ulp: those tests
check the inputs to that precision rather than the draws.
"""

import warnings

import numpy as np
import pytest
import torch
from sklearn.base import clone

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor, SamplerWarning
from skgibbs import _out_of_core, _pretrain
from skgibbs.potential import Batch, MLPPotential
from skgibbs.problem import build_problem

CHEAP = {"hidden_layer_sizes": (8,), "n_samples": 8, "burn_in": 15, "pretrain_iter": 30, "n_chains": 2}


def _data(n=90, seed=0):
    rng = np.random.default_rng(seed)
    # columns of different location and scale, so that the standardization matters
    X = rng.normal(size=(n, 3)) * [1.0, 10.0, 0.1] + [0.0, 5.0, -1.0]
    y = X @ [1.0, -0.2, 3.0] + rng.normal(size=n)
    return X, y


def _memmap(tmp_path, a, name="X.npy"):
    np.save(tmp_path / name, a)
    return np.load(tmp_path / name, mmap_mode="r")


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        return clone(est).fit(X, y)


def _small_blocks(monkeypatch, rows, d=3):
    """Scan memmaps in blocks of ``rows`` rows of ``d`` float64 columns."""
    monkeypatch.setattr(_out_of_core, "BLOCK_BYTES", rows * 8 * d)


SETTINGS = {"full": {"sampler": "hmc"}, "batch": {"sampler": "sgld", "rho": 0.5}}


@pytest.mark.parametrize("settings", SETTINGS.values(), ids=SETTINGS.keys())
def test_memmap_fit_is_the_in_memory_fit(tmp_path, settings):
    X, y = _data()
    est = GibbsMLPRegressor(**CHEAP, **settings, random_state=0)
    ref, lazy = _fit(est, X, y), _fit(est, _memmap(tmp_path, X), y)
    np.testing.assert_array_equal(lazy.x_mean_, ref.x_mean_)
    np.testing.assert_array_equal(lazy.x_scale_, ref.x_scale_)
    np.testing.assert_array_equal(lazy.samples_, ref.samples_)
    assert lazy.noise_variance_ == ref.noise_variance_ and lazy.lfv_ == ref.lfv_
    assert lazy.n_features_in_ == 3 and not hasattr(lazy, "feature_names_in_")
    assert lazy.n_train_ == len(y)


def test_memmap_of_float32_and_y_on_disk(tmp_path):
    X, y = _data()
    X32 = X.astype(np.float32)
    est = GibbsMLPRegressor(**CHEAP, random_state=1)
    ref = _fit(est, X32, y)
    lazy = _fit(est, _memmap(tmp_path, X32), _memmap(tmp_path, y, "y.npy"))
    np.testing.assert_array_equal(lazy.samples_, ref.samples_)


def test_dask_fit_is_the_in_memory_fit():
    da = pytest.importorskip("dask.array")
    X, y = _data()
    est = GibbsMLPRegressor(**CHEAP, sampler="sgld", rho=0.5, random_state=2)
    ref = _fit(est, X, y)
    # one block of rows, split in columns: the rows are read whole
    lazy = _fit(est, da.from_array(X, chunks=(len(X), 2)), da.from_array(y, chunks=30))
    np.testing.assert_array_equal(lazy.samples_, ref.samples_)
    np.testing.assert_array_equal(lazy.predict(X), ref.predict(X))


def test_classifier_on_memmap(tmp_path):
    X, y = _data()
    labels = np.where(y > np.median(y), "high", "low")
    est = GibbsMLPClassifier(**CHEAP, sampler="mala", random_state=3)
    ref, lazy = _fit(est, X, labels), _fit(est, _memmap(tmp_path, X), labels)
    np.testing.assert_array_equal(lazy.samples_, ref.samples_)
    assert list(lazy.classes_) == ["high", "low"]
    np.testing.assert_array_equal(lazy.predict_proba(X), ref.predict_proba(X))


def test_blocks_agree_to_float32_rounding(tmp_path, monkeypatch):
    X, y = _data(n=97)
    est = GibbsMLPRegressor(**CHEAP, random_state=0)
    ref = build_problem(clone(est), X, y)
    _small_blocks(monkeypatch, 20)  # five blocks, the last of 17 rows
    lazy = [build_problem(clone(est), _memmap(tmp_path, X), y)]
    da = pytest.importorskip("dask.array")
    lazy.append(build_problem(clone(est), da.from_array(X, chunks=(13, 3)), y))
    for problem in lazy:
        # Chan's update of the block moments: float64 rounding only
        np.testing.assert_allclose(problem.arrays[0].mean(0), X.mean(0), rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(problem.arrays[0].std(0), X.std(0), rtol=1e-13)
        rows = problem.X[torch.arange(len(X))].numpy()
        exact = ref.X.numpy()
        # each standardized input is the in-memory one or its float32 neighbour
        assert np.all(np.abs(rows - exact) <= np.spacing(np.abs(exact)))
        assert isinstance(problem.X, _out_of_core.ScaledRows)


def test_rows_index_like_the_tensor(tmp_path):
    X, y = _data()
    ref = build_problem(GibbsMLPRegressor(**CHEAP, random_state=0), X, y).X
    rows = build_problem(GibbsMLPRegressor(**CHEAP, random_state=0), _memmap(tmp_path, X), y).X
    idx = torch.tensor([[5, 3, 5, 89], [0, 1, 2, 3]])  # repeats, unsorted, and a run of rows
    assert rows.take(idx).shape == (2, 4, 3)
    torch.testing.assert_close(rows.take(idx), ref[idx], rtol=0, atol=0)
    torch.testing.assert_close(rows[idx[0]], ref[idx[0]], rtol=0, atol=0)
    torch.testing.assert_close(rows[10:20], ref[10:20], rtol=0, atol=0)
    torch.testing.assert_close(rows[10:20:3], ref[10:20:3], rtol=0, atol=0)


def test_full_data_in_chunks(tmp_path, monkeypatch):
    X, y = _data()
    problem = build_problem(GibbsMLPRegressor(**CHEAP, random_state=0), X, y)
    rows = build_problem(GibbsMLPRegressor(**CHEAP, random_state=0), _memmap(tmp_path, X), y).X
    spec, Xt, yt = problem.spec, problem.X, problem.y
    monkeypatch.setattr(MLPPotential, "chunk_rows", 32)
    lazy = MLPPotential(spec, rows, yt)
    ref = MLPPotential(spec, Xt, yt)
    theta = problem.theta0
    for K in (1, 2):
        value, grad = lazy.loss_sum_and_grad(theta[:K], Batch())
        # the sum of the chunks' gradients, in their order
        parts = [spec.loss_and_grad(theta[:K], Xt[a : a + 32], yt[a : a + 32]) for a in range(0, len(X), 32)]
        torch.testing.assert_close(value, sum(p[0] for p in parts), rtol=0, atol=0)
        torch.testing.assert_close(grad, sum(p[1] for p in parts), rtol=0, atol=0)
        # against one pass: float32 sums of n positive terms in another order, error < n 2^-24 of the sum
        full, _ = ref.loss_sum_and_grad(theta[:K], Batch())
        torch.testing.assert_close(value, full, rtol=len(X) * 2.0**-24, atol=0)
        torch.testing.assert_close(lazy.mean_loss(theta[:K]), ref.mean_loss(theta[:K]), rtol=0, atol=0)
        losses = lazy.per_example_loss(theta[:K], Batch())
        assert losses.shape == (K, len(X))
        torch.testing.assert_close(losses, ref.per_example_loss(theta[:K], Batch()), rtol=1e-6, atol=1e-7)


def test_a_nan_names_its_block_and_keeps_the_fit(tmp_path, monkeypatch):
    X, y = _data()
    fitted = _fit(GibbsMLPRegressor(**CHEAP, random_state=0), _memmap(tmp_path, X), y)
    samples, mean = fitted.samples_.copy(), fitted.x_mean_.copy()
    bad = X.copy()
    bad[57, 1] = np.nan
    _small_blocks(monkeypatch, 20)
    with pytest.raises(ValueError, match=r"X has a NaN or inf in rows 40-59 \(block 2\).*row 57, column 1"):
        fitted.fit(_memmap(tmp_path, bad, "bad.npy"), y)
    y_bad = y.copy()
    y_bad[3] = np.inf
    with pytest.raises(ValueError, match=r"y has a NaN or inf in rows 0-\d+ \(block 0\).*row 3"):
        fitted.fit(_memmap(tmp_path, X), _memmap(tmp_path, y_bad, "y.npy"))
    np.testing.assert_array_equal(fitted.samples_, samples)
    np.testing.assert_array_equal(fitted.x_mean_, mean)
    da = pytest.importorskip("dask.array")
    with pytest.raises(ValueError, match=r"rows 50-74 \(block 2\)"):
        fitted.fit(da.from_array(bad, chunks=(25, 2)), y)
    np.testing.assert_array_equal(fitted.samples_, samples)


def test_predict_on_memmap_and_feature_count(tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = _data()
    est = _fit(GibbsMLPRegressor(**CHEAP, random_state=0), pd.DataFrame(X, columns=list("abc")), y)
    assert list(est.feature_names_in_) == ["a", "b", "c"]
    est = _fit(est, _memmap(tmp_path, X), y)
    assert not hasattr(est, "feature_names_in_")
    Xm = _memmap(tmp_path, X[:40], "X_new.npy")
    np.testing.assert_array_equal(est.predict(Xm), est.predict(X[:40]))
    wide = _memmap(tmp_path, np.hstack([X, X[:, :1]]), "wide.npy")
    with pytest.raises(ValueError, match="4 features.*expecting 3 features"):
        est.predict(wide)


def test_bad_lazy_input_is_refused(tmp_path):
    X, y = _data()
    est = GibbsMLPRegressor(**CHEAP, random_state=0)
    with pytest.raises(ValueError, match="2D"):
        est.fit(_memmap(tmp_path, X[:, 0]), y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        est.fit(_memmap(tmp_path, X), y[:-1])
    with pytest.raises(ValueError, match="0 sample"):
        est.fit(_memmap(tmp_path, X[:0]), y[:0])
    assert not hasattr(est, "n_features_in_")


def test_pretraining_judges_on_a_bounded_held_out_sample(tmp_path, monkeypatch):
    X, y = _data()
    est = GibbsMLPRegressor(**{**CHEAP, "pretrain_iter": 0}, random_state=0)
    problem = build_problem(est, _memmap(tmp_path, X), y)
    spec, rows, yt, theta = problem.spec, problem.X, problem.y, problem.theta0
    monkeypatch.setattr(_pretrain, "MAX_HELD_OUT", 7)  # of the 18 held-out rows
    best, held_out, _ = _pretrain.pretrain(spec, theta, rows, yt, 40, seed=5)
    val = torch.randperm(len(X), generator=torch.Generator().manual_seed(5))[:7]
    with torch.no_grad():
        err = ((yt[val] - spec.forward(best, rows[val])) ** 2).mean(1)
    assert held_out == pytest.approx(float(err.mean()), rel=1e-6)
