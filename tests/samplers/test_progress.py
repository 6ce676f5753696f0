"""Progress output: one live bar per phase with verbose, nothing without."""

import re
import warnings

import numpy as np
import pytest
import torch

from skgibbs import GibbsMLPRegressor, SamplerWarning
from skgibbs.potential import FunctionPotential
from skgibbs import _progress
from skgibbs.samplers import MALA, SGLD, MeanFieldVI, Target, run_chains

CHEAP = dict(hidden_layer_sizes=(4,), n_samples=15, burn_in=12, pretrain_iter=20, n_chains=2, random_state=0)


def _fit(verbose, **kw):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        GibbsMLPRegressor(**{**CHEAP, **kw}, verbose=verbose).fit(X, X[:, 0])


@pytest.mark.parametrize("with_tqdm", [True, False])
@pytest.mark.parametrize("sampler", ["hmc", "mala"])
def test_one_bar_per_phase_with_rate_and_eta(capsys, monkeypatch, with_tqdm, sampler):
    if with_tqdm:
        pytest.importorskip("tqdm")
    else:
        monkeypatch.setattr(_progress, "_tqdm", None)
    monkeypatch.setattr(_progress, "_terminal", lambda stream: True)  # a live bar, as on a terminal
    _fit(1, sampler=sampler, thin=1)
    err = capsys.readouterr().err
    assert "[skgibbs] pre-training" in err and "20/20" in err and "held_out_loss" in err
    assert "[skgibbs] burn-in" in err and "12/12" in err
    assert "[skgibbs] sampling" in err and "15/15" in err
    assert "acceptance" in err
    if not with_tqdm:
        assert "steps/s" in err and "ETA" in err and "\r" in err
        # each phase ends its line
        assert err.count("\n") == 3
    assert not _progress._BARS  # every bar closed


@pytest.mark.parametrize(
    "sampler, shown",
    [(MALA(step_size=1e-3), r"acceptance \d\.\d\d"), (SGLD(step_size=1e-3), "acceptance n/a")],
    ids=["mala", "sgld"],
)
def test_sampling_bar_shows_the_acceptance_a_kernel_has(capsys, monkeypatch, sampler, shown):
    # the runner reads the acceptance from the kernel's "accepted" record; SGLD keeps none
    monkeypatch.setattr(_progress, "_tqdm", None)
    y = torch.linspace(-1.0, 1.0, 20, dtype=torch.float64)
    target = Target(FunctionPotential(lambda th, idx: (y[idx] - th[:, :1]) ** 2, n_data=20), lambda_=20.0)
    theta0 = torch.zeros(2, 1, dtype=torch.float64)
    run_chains(target, theta0, [0, 1], sampler, n_samples=5, burn_in=4, verbose=1)
    err = capsys.readouterr().err
    assert "[skgibbs] burn-in" in err and "4/4" in err and "[skgibbs] sampling" in err and "5/5" in err
    sampling = err[err.index("[skgibbs] sampling") :]
    assert re.search(shown, sampling), sampling
    assert not _progress._BARS


def test_nothing_on_stderr_at_verbose_0(capsys):
    _fit(0)
    assert capsys.readouterr().err == ""


def test_an_optimiser_stopping_early_closes_its_bar(capsys, monkeypatch):
    monkeypatch.setattr(_progress, "_tqdm", None)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        reg = GibbsMLPRegressor(
            hidden_layer_sizes=(4,),
            sampler=MeanFieldVI(max_iter=20000),
            pretrain_iter=20,
            verbose=1,
            random_state=0,
        ).fit(X, X[:, 0])
    assert reg.vi_stopped_early_
    err = capsys.readouterr().err
    assert "[skgibbs] vi" in err and err.endswith("\n") and not _progress._BARS
