"""Numeric embeddings (skgibbs/embeddings.py, model.NumericEmbedding): the arithmetic, the fitted bins, the samplers."""

import pickle
import warnings

import numpy as np
import pytest
import torch
from sklearn.base import clone

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor
from skgibbs.embeddings import PeriodicEmbedding, PiecewiseLinearEmbedding, quantile_bins
from skgibbs.model import MLPSpec, NumericEmbedding, per_example_loss
from skgibbs.priors import HierarchicalPrior
from skgibbs.samplers import SMC, MeanFieldVI, available_samplers
from skgibbs.samplers.vi.kernel import expected_loss_sample, laplace_std

EMBEDDINGS = ["piecewise", "periodic"]


def _data(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X[:, 2] = rng.integers(0, 3, n)  # a count with three values: fewer bins than asked
    y = np.sin(3 * X[:, 0]) + 0.5 * X[:, 2] + 0.1 * rng.normal(size=n)
    return X, y


def _spec(kind, hidden=(5,), n_outputs=1, activation="tanh"):
    X = torch.as_tensor(_data()[0], dtype=torch.float64)
    edges = tuple(tuple(e) for e in quantile_bins(X.numpy(), 4)) if kind == "piecewise" else ()
    emb = NumericEmbedding(kind, 3, 4, 2, edges=edges, frequency_scale=0.7)
    return MLPSpec(3, hidden, activation, n_outputs, emb), X


# ------------------------------------------------------------------ arithmetic
def test_piecewise_forward_by_hand():
    # one input, bins [0, 1, 3], embedding width 1, linear network on the embedding
    emb = NumericEmbedding("piecewise", 1, 2, 1, edges=((0.0, 1.0, 3.0),))
    spec = MLPSpec(1, (), "relu", 1, emb)
    assert spec.n_params == 2 + 1 + 2  # W (1, 2, 1), b (1, 1), then the dense weight and bias
    theta = torch.tensor([[2.0, -1.0, 0.5, 3.0, 0.25]], dtype=torch.float64)
    x = np.array([-1.0, 0.5, 2.0, 5.0])
    # phi_1 = min((x - 0) / 1, 1) (not clipped below), phi_2 = max((x - 1) / 2, 0) (not clipped above)
    phi = np.column_stack([np.minimum(x, 1.0), np.maximum((x - 1.0) / 2.0, 0.0)])
    z = np.maximum(phi @ np.array([2.0, -1.0]) + 0.5, 0.0)
    expected = 3.0 * z + 0.25
    out = spec.forward(theta, torch.as_tensor(x[:, None]))
    np.testing.assert_allclose(out[0].numpy(), expected)


def test_periodic_forward_by_hand():
    emb = NumericEmbedding("periodic", 2, 1, 1)
    spec = MLPSpec(2, (), "relu", 1, emb)
    # frequencies (2, 1), weights (2, 2, 1), biases (2, 1), dense weights (2, 1), dense bias
    c = np.array([0.3, -1.1])
    W = np.array([[0.5, -0.2], [1.5, 0.7]])
    b = np.array([0.1, -0.3])
    dense_w, dense_b = np.array([1.2, -0.8]), 0.05
    theta = torch.as_tensor(np.r_[c, W.ravel(), b, dense_w, dense_b][None])
    X = np.array([[0.2, -1.0], [1.3, 0.4], [-0.7, 2.0]])
    arg = 2 * np.pi * X * c
    z = np.maximum(np.sin(arg) * W[:, 0] + np.cos(arg) * W[:, 1] + b, 0.0)
    expected = z @ dense_w + dense_b
    np.testing.assert_allclose(spec.forward(theta, torch.as_tensor(X))[0].numpy(), expected)


@pytest.mark.parametrize("kind", EMBEDDINGS)
@pytest.mark.parametrize("hidden,n_outputs", [((5,), 1), ((), 1), ((4, 3), 3)])
def test_loss_and_grad_is_autograd(kind, hidden, n_outputs):
    spec, X = _spec(kind, hidden, n_outputs)
    theta = spec.init_params(torch.Generator().manual_seed(0), 2, torch.float64)
    loss = "squared" if n_outputs == 1 else "cross_entropy"
    y = torch.randn(80, dtype=torch.float64) if n_outputs == 1 else torch.randint(0, 3, (80,))
    for K, inputs in [(1, X), (2, X), (2, torch.stack([X, X.flip(0)]))]:
        t = theta[:K].clone().requires_grad_(True)
        out = spec.forward(t, inputs)
        target = (
            y.expand(out.shape[:2]) if n_outputs > 1 or inputs.dim() == 2 else torch.stack([y, y.flip(0)])
        )
        value = per_example_loss(loss, out, target).sum(-1)
        (expected,) = torch.autograd.grad(value.sum(), t)
        got_value, got = spec.loss_and_grad(theta[:K], inputs, target if inputs.dim() == 3 else y, loss=loss)
        assert torch.isfinite(got).all()
        torch.testing.assert_close(got_value, value.detach())
        torch.testing.assert_close(got, expected)
        assert got[:, : spec.n_embedding_params].abs().sum() > 0  # the embedding is trained


def test_augmented_single_chain_matches():
    spec, X = _spec("periodic")
    theta = spec.init_params(torch.Generator().manual_seed(1), 1, torch.float64)
    y = torch.randn(80, dtype=torch.float64)
    X_aug = torch.cat([X, torch.ones(80, 1, dtype=X.dtype)], 1)
    plain = spec.loss_and_grad(theta, X, y)
    aug = spec.loss_and_grad(theta, X_aug, y, augmented=True)
    torch.testing.assert_close(plain, aug)


@pytest.mark.parametrize("kind", EMBEDDINGS)
def test_pack_unpack_round_trip(kind):
    spec, _ = _spec(kind)
    theta = spec.init_params(torch.Generator().manual_seed(0), 1, torch.float64)[0].numpy()
    coefs, intercepts = spec.unpack(theta)
    parts = spec.embedding.unpack(theta)
    assert parts["weights"].shape == (3, spec.embedding.width, 2)
    np.testing.assert_array_equal(spec.pack(coefs, intercepts, parts), theta)
    with pytest.raises(ValueError, match="embedding"):
        spec.pack(coefs, intercepts)


def test_prior_scale_and_groups():
    spec, _ = _spec("periodic")
    std = spec.fan_in_std()
    sl = spec.embedding.slices()
    assert torch.all(std[sl["frequencies"]] == 0.7)
    assert torch.allclose(std[sl["weights"]], torch.tensor(8.0**-0.5, dtype=torch.float64))
    prior = HierarchicalPrior.for_network(spec, "ard", std, 0.5)
    assert prior.names[:3] == ("input 0", "input 1", "input 2")
    assert prior.names[-3:] == ("embedding frequencies", "embedding weights", "embedding biases")
    assert torch.all(prior.group >= 0)
    # input i's group: the first dense layer's rows from its d_embedding = 2 embedded values
    _, n_out, w, _ = next(spec._slices())
    rows = prior.group[w].view(6, n_out)
    assert rows[:, 0].tolist() == [0, 0, 1, 1, 2, 2]


# ------------------------------------------------------------------ VI paths
@pytest.mark.parametrize("kind", EMBEDDINGS)
def test_vi_local_forward_at_zero_spread_is_the_network(kind):
    spec, X = _spec(kind)
    mean = spec.init_params(torch.Generator().manual_seed(0), 1, torch.float64)[0]
    y = torch.randn(80, dtype=torch.float64)
    gen = torch.Generator().manual_seed(0)
    for local in (True, False):
        got = expected_loss_sample(spec, "squared", mean, torch.zeros_like(mean), X, y, gen, local=local)
        torch.testing.assert_close(got, spec.loss_and_grad(mean[None], X, y)[0][0])


@pytest.mark.parametrize("kind", EMBEDDINGS)
def test_laplace_std_has_the_embedding_gauss_newton_diagonal(kind):
    spec, X = _spec(kind, activation="relu")
    X = X[:12]
    mean = spec.init_params(torch.Generator().manual_seed(2), 1, torch.float64)[0]
    ones = torch.ones(spec.n_params, dtype=torch.float64)
    std = laplace_std(spec, "squared", mean, X, torch.zeros(12, dtype=torch.float64), 1.0, ones, ones * 1e6)
    # squared loss: the Gauss-Newton diagonal is 2 sum_i (d f_i / d theta_j)^2, per example by autograd
    jac = torch.autograd.functional.jacobian(lambda t: spec.forward(t[None], X)[0], mean)
    diagonal = 2 * (jac**2).sum(0)
    E = spec.n_embedding_params
    expected = (diagonal / 12 + 1e-12).rsqrt()
    torch.testing.assert_close(std[:E], expected[:E])
    torch.testing.assert_close(std[E:], expected[E:])


# ------------------------------------------------------------------ estimators
def test_bins_are_quantiles_of_the_training_inputs_only():
    X, y = _data()
    reg = GibbsMLPRegressor(
        hidden_layer_sizes=(4,),
        embedding=PiecewiseLinearEmbedding(n_bins=4),
        sampler="mala",
        n_samples=2,
        burn_in=2,
        pretrain_iter=10,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg.fit(X, y)
    assert reg.embedding_bins_.dtype == object and reg.embedding_bins_.shape == (3,)
    np.testing.assert_allclose(reg.embedding_bins_[0], np.quantile(X[:, 0], [0, 0.25, 0.5, 0.75, 1]))
    np.testing.assert_array_equal(reg.embedding_bins_[2], [0.0, 1.0, 2.0])  # three values: two bins
    before = [e.copy() for e in reg.embedding_bins_]
    reg.predict(X + 10.0)  # inputs beyond the bins use the outer bins' lines; the bins stay
    for a, b in zip(before, reg.embedding_bins_):
        np.testing.assert_array_equal(a, b)
    expected = tuple(tuple((e - m) / s) for e, m, s in zip(before, reg.x_mean_, reg.x_scale_))
    np.testing.assert_allclose(np.concatenate(reg.spec_.embedding.edges), np.concatenate(expected))


def _sampler(name):
    if name == "smc":
        return SMC(n_particles=16, max_mcmc_steps=2)
    if name == "vi":
        return MeanFieldVI(max_iter=50)
    return name


@pytest.mark.parametrize("kind", EMBEDDINGS)
@pytest.mark.parametrize("sampler", available_samplers("dense"))
def test_every_sampler_fits_with_the_embedding(kind, sampler):
    X, y = _data()
    budget = {} if sampler in ("smc", "vi") else {"n_samples": 4, "burn_in": 6}
    reg = GibbsMLPRegressor(
        hidden_layer_sizes=(6,),
        embedding=kind,
        sampler=_sampler(sampler),
        pretrain_iter=20,
        random_state=0,
        **budget,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg.fit(X, y)
    assert reg.samples_.shape[-1] == reg.spec_.n_params
    assert reg.spec_.n_embedding_params > 0
    # the embedding's parameters move with the sampler: draws differ from each other
    emb = reg.samples_.reshape(-1, reg.spec_.n_params)[:, : reg.spec_.n_embedding_params]
    assert np.ptp(emb, axis=0).max() > 0
    mean, std = reg.predict(X[:5], return_std=True)
    assert np.isfinite(mean).all() and np.all(std > 0)
    if reg.prior_ == "ard":
        assert reg.input_relevance_.shape == (3,)


@pytest.mark.parametrize("kind", EMBEDDINGS)
def test_classifier_clone_pickle_refit(kind):
    X, y = _data()
    clf = GibbsMLPClassifier(
        hidden_layer_sizes=(6,),
        embedding=kind,
        sampler="hmc",
        n_samples=4,
        burn_in=6,
        pretrain_iter=20,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y > 0)
        proba = clf.predict_proba(X)
        again = pickle.loads(pickle.dumps(clf))
        np.testing.assert_array_equal(again.predict_proba(X), proba)
        twin = clone(clf).fit(X, y > 0)
        np.testing.assert_array_equal(twin.samples_, clf.samples_)
        clf.set_params(embedding=None).fit(X, y > 0)
    assert clf.spec_.embedding is None and not hasattr(clf, "embedding_bins_")


def test_nested_settings_and_skops(tmp_path):
    pytest.importorskip("skops")
    from skgibbs.persistence import dump, load

    X, y = _data()
    reg = GibbsMLPRegressor(
        hidden_layer_sizes=(4,),
        embedding=PeriodicEmbedding(),
        sampler="mala",
        n_samples=3,
        burn_in=4,
        pretrain_iter=10,
        random_state=0,
    )
    reg.set_params(embedding__n_frequencies=3, embedding__d_embedding=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg.fit(X, y)
    assert reg.spec_.embedding.n_basis == 3 and reg.spec_.embedding.d_embedding == 2
    dump(reg, tmp_path / "reg.skops")
    loaded = load(tmp_path / "reg.skops")
    np.testing.assert_array_equal(loaded.predict(X), reg.predict(X))
    idata = reg.to_arviz()
    assert idata.posterior["embedding_frequencies"].shape[-2:] == (3, 3)


def test_memmap_input_gives_the_in_memory_fit(tmp_path):
    X, y = _data(300)
    mm = np.memmap(tmp_path / "X.dat", dtype=np.float64, mode="w+", shape=X.shape)
    mm[:] = X
    mm.flush()
    mm = np.memmap(tmp_path / "X.dat", dtype=np.float64, mode="r", shape=X.shape)
    settings = dict(
        hidden_layer_sizes=(4,),
        embedding="piecewise",
        sampler="csmala",
        rho=0.2,
        n_samples=3,
        burn_in=4,
        pretrain_iter=10,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lazy = GibbsMLPRegressor(**settings).fit(mm, y)
        eager = GibbsMLPRegressor(**settings).fit(X, y)
    np.testing.assert_array_equal(lazy.samples_, eager.samples_)
    for a, b in zip(lazy.embedding_bins_, eager.embedding_bins_):
        np.testing.assert_array_equal(a, b)


def test_bad_embedding_settings_are_refused():
    X, y = _data()
    with pytest.raises(ValueError, match="embedding"):
        GibbsMLPRegressor(embedding="spline").fit(X, y)
    with pytest.raises(ValueError, match="n_bins"):
        GibbsMLPRegressor(embedding=PiecewiseLinearEmbedding(n_bins=0), pretrain_iter=0).fit(X, y)
