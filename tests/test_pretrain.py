"""Pre-training: it stops once the held-out loss levels off, and says when it did not."""

import warnings

import numpy as np
import pytest
import torch
from sklearn.exceptions import ConvergenceWarning

from skgibbs import GibbsMLPRegressor
from skgibbs._pretrain import PATIENCE, SCHEDULES, TOLERANCE, pretrain
from skgibbs.model import MLPSpec


def _linear(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = X @ np.array([1.0, -0.5, 0.25]) + 0.3 * rng.normal(size=n)
    return torch.tensor(X, dtype=torch.float32), torch.tensor(y, dtype=torch.float32)


def test_the_stopping_rule_stops_near_the_optimum_of_a_linear_model():
    X, y = _linear()
    spec = MLPSpec(3, (), "identity")
    theta = torch.zeros(2, spec.n_params)
    best, held_out, info = pretrain(spec, theta, X, y, 20_000, seed=0, lr=1e-2)
    assert info.converged and info.n_iter < 20_000
    # the held-out loss of the least-squares fit on the same 80% of rows: the optimum Adam is after
    perm = torch.randperm(len(X), generator=torch.Generator().manual_seed(0))
    val, train = perm[: len(X) // 5], perm[len(X) // 5 :]
    A = torch.cat([X, torch.ones(len(X), 1)], 1).double()
    coef = torch.linalg.lstsq(A[train], y[train].double()[:, None]).solution[:, 0]
    optimum = float(((y[val].double() - A[val] @ coef) ** 2).mean())
    # it stops once the best held-out loss falls by less than TOLERANCE over PATIENCE steps: within a few
    # tolerances of the optimum (and not below what early stopping on the same rows can reach)
    assert held_out == pytest.approx(optimum, rel=3 * TOLERANCE)
    assert info.recent_fall < TOLERANCE


def test_a_cap_reached_first_is_reported():
    X, y = _linear()
    spec = MLPSpec(3, (), "identity")
    _, _, info = pretrain(spec, torch.zeros(2, spec.n_params), X, y, 50, seed=0)
    assert not info.converged and info.n_iter == 50 and info.recent_fall > TOLERANCE
    assert PATIENCE > 50


def test_the_plug_in_temperature_of_an_unconverged_pretraining_warns_with_its_remedy():
    X, y = _linear(n=120)
    # MALA cannot sample the noise: temperature="auto" is the plug-in there
    est = GibbsMLPRegressor(hidden_layer_sizes=(4,), n_samples=10, burn_in=10, pretrain_iter=20, sampler="mala",
                            random_state=0)
    with pytest.warns(ConvergenceWarning, match=r"pretrain_iter=20.*raise pretrain_iter.*sampler='mclmc' or 'hmc'"):
        est.fit(X.numpy(), y.numpy())
    assert est.pretrain_n_iter_ == 20 and est.pretrain_converged_ is False
    assert est.temperature_source_ == "plug-in"
    # a learned noise (the default sampler's, under the same temperature="auto") does not rest on the
    # plug-in: no warning
    learned = GibbsMLPRegressor(hidden_layer_sizes=(4,), n_samples=10, burn_in=10, pretrain_iter=20,
                                random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        learned.fit(X.numpy(), y.numpy())
    assert learned.temperature_source_ == "learned"
    # nor does a pre-training that levelled off
    long = GibbsMLPRegressor(hidden_layer_sizes=(4,), n_samples=10, burn_in=10, pretrain_iter=20_000,
                             sampler="mala", random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        long.fit(X.numpy(), y.numpy())
    assert long.pretrain_converged_ and PATIENCE <= long.pretrain_n_iter_ < 20_000


def test_each_chain_keeps_the_better_of_the_schedules_run_side_by_side():
    X, y = _linear()
    spec = MLPSpec(3, (), "identity")
    theta = torch.zeros(3, spec.n_params)
    alone = [pretrain(spec, theta, X, y, 20_000, seed=0, lr=schedule)[2] for schedule in SCHEDULES]
    _, held_out, both = pretrain(spec, theta, X, y, 20_000, seed=0)
    assert both.converged and len(both.held_out) == 3
    # the schedules share nothing but their starts: side by side, each chain's loss is the smaller of the two
    # runs alone
    expected = np.minimum(*[np.asarray(info.held_out) for info in alone])
    assert np.allclose(both.held_out, expected, rtol=1e-5)
    assert held_out == pytest.approx(expected.mean(), rel=1e-5)


@pytest.mark.parametrize("n, loss, ran", [(400, "squared", "both"), (600, "squared", "fast"), (600, "gaussian", "both")])
def test_the_default_runs_the_fast_schedule_alone_on_large_data(n, loss, ran, monkeypatch):
    import skgibbs._pretrain

    monkeypatch.setattr(skgibbs._pretrain, "ONE_SCHEDULE_ROWS", 500)  # the rule, on data small enough to test
    X, y = _linear(n=n)
    spec = MLPSpec(3, (), "identity", n_outputs=2 if loss == "gaussian" else 1)
    theta = torch.zeros(2, spec.n_params)
    default = pretrain(spec, theta, X, y, 5000, seed=0, loss=loss)
    lr = SCHEDULES if ran == "both" else SCHEDULES[1:]
    given = pretrain(spec, theta, X, y, 5000, seed=0, loss=loss, lr=lr)
    assert torch.equal(default[0], given[0]) and default[1:] == given[1:]


class _TorchAdam:
    """``torch.optim.Adam`` behind the interface of the pre-training's own Adam (the reference)."""

    def __init__(self, leaves, lrs):
        self.leaves = leaves
        self.opt = torch.optim.Adam([{"params": [w], "lr": lr} for w, lr in zip(leaves, lrs)])
        self.lrs = self

    def __setitem__(self, group, lr):
        self.opt.param_groups[group]["lr"] = lr

    def reset(self, group):
        self.opt.state.pop(self.leaves[group], None)

    def step(self):
        self.opt.step()


@pytest.mark.parametrize("case", ["batches", "gaussian", "mask", "scale"])
def test_its_adam_is_torchs_to_the_bit(case, monkeypatch):
    # the same iterates, steps and held-out losses as torch.optim.Adam, through both schedules' changes of
    # rate, fresh moments and rests
    import skgibbs._pretrain

    gen = torch.Generator().manual_seed(3)
    n = 1500 if case == "batches" else 200  # more rows than a batch: minibatches
    X = torch.randn(n, 3, generator=gen)
    y = torch.sin(2 * X[:, 0]) + 0.3 * torch.randn(n, generator=gen)
    spec = MLPSpec(3, (8,), "tanh", n_outputs=2 if case == "gaussian" else 1)
    theta = spec.init_params(gen, n_chains=2).float()
    kw = {"loss": "gaussian" if case == "gaussian" else "squared"}
    if case == "mask":
        kw["mask"] = (torch.rand(theta.shape, generator=gen) < 0.7).float()
        theta = theta * kw["mask"]
    if case == "scale":
        kw["scale"] = torch.rand(theta.shape[1], generator=gen) + 0.5
    ours = pretrain(spec, theta.clone(), X, y, 8000, 5, **kw)
    monkeypatch.setattr(skgibbs._pretrain, "_Adam", _TorchAdam)
    reference = pretrain(spec, theta.clone(), X, y, 8000, 5, **kw)
    if case != "mask":  # (the masked network is still falling at the cap)
        assert ours[2].converged and ours[2].n_iter > 2 * PATIENCE  # it went through the changes of rate
    assert torch.equal(ours[0], reference[0])
    assert ours[1] == reference[1] and ours[2] == reference[2]
