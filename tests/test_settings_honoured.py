"""Every estimator setting is honoured by the sampler, or refused with the reason and the fix.

The table below says, for every registered sampler, which of the estimator
settings of a run it honours; a setting it cannot honour, set to a value
other than the estimator's default, is a ``ValueError`` before any work (a
``UserWarning`` for ``n_jobs``, a resource hint), and the earlier fit
survives. Also here: SMC's particles as one group of draws (and their ArviZ
export), ``hidden_layer_sizes`` as an int, and progress on a non-terminal.
"""

import io
import re
import warnings

import numpy as np
import pytest
import torch
from sklearn.exceptions import ConvergenceWarning

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor, SamplerWarning, SparseGibbsMLPRegressor, _progress
from skgibbs import problem as problem_module
from skgibbs.potential import FunctionPotential
from skgibbs.samplers import SMC, MeanFieldVI, Target, available_samplers, get_sampler, run_chains

SETTINGS = ("n_samples", "burn_in", "thin", "n_chains", "rho", "chain_weights", "n_jobs")
#: a value of each setting other than the estimators' default
VALUES = {"n_samples": 6, "burn_in": 12, "thin": 2, "n_chains": 3, "rho": 0.5, "chain_weights": "stacking",
          "n_jobs": 2}

FULL_DATA = {"rho": "error"}
#: sampler -> setting -> "error" or "warn"; a setting not named is honoured
TABLE = {
    "adjusted_mclmc": FULL_DATA,
    "csmala": {},
    "hmc": FULL_DATA,
    "mala": FULL_DATA,
    "mclmc": FULL_DATA,
    "rjhmc": FULL_DATA,  # the sparse estimator has no rho
    "rjmcmc": FULL_DATA,
    "sghmc": FULL_DATA,
    "sgld": {},
    "smala": {},
    "smc": {"n_samples": "error", "burn_in": "error", "thin": "error", "n_chains": "error", "rho": "error",
            "chain_weights": "error", "n_jobs": "warn"},
    "vi": {"burn_in": "error", "thin": "error", "rho": "error", "chain_weights": "error", "n_jobs": "warn"},
}

SMALL = {"hidden_layer_sizes": (3,), "n_samples": 5, "burn_in": 10, "n_chains": 2, "pretrain_iter": 50}
CHEAP_SAMPLERS = {"smc": SMC(n_particles=8, n_mcmc_steps=1, n_leapfrog=3), "vi": MeanFieldVI(max_iter=50)}


def _data(n=40):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2))
    return X, np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)


def _estimator(name, **params):
    """A tiny estimator under sampler ``name``, with the settings of ``SMALL`` the sampler honours."""
    sampler = CHEAP_SAMPLERS.get(name, name)
    cls = SparseGibbsMLPRegressor if get_sampler(name).prior_kind == "sparse" else GibbsMLPRegressor
    small = {k: v for k, v in SMALL.items() if k not in TABLE[name]}
    return cls(**{**small, **params}, sampler=sampler, random_state=0)


def _fit(est, X, y):
    with warnings.catch_warnings():
        # short runs: mixing and convergence warnings are beside the point
        warnings.simplefilter("ignore", SamplerWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


def test_the_table_covers_every_registered_sampler_and_matches_its_hook():
    assert sorted(TABLE) == available_samplers()
    for name, refused in TABLE.items():
        ignored = get_sampler(name).ignored_settings()
        assert sorted(ignored) == sorted(refused), name
        assert all(entry.warn == (refused[s] == "warn") for s, entry in ignored.items()), name


@pytest.mark.parametrize("cls", [GibbsMLPRegressor, GibbsMLPClassifier, SparseGibbsMLPRegressor])
def test_the_declared_defaults_are_the_constructors(cls):
    # _check_honoured reads the defaults as declared data, not from the signature: they must agree
    params = cls().get_params(deep=False)
    assert set(SETTINGS) <= set(cls._traits.sampler_setting_defaults)
    for name, value in cls._traits.sampler_setting_defaults.items():
        if name in params:
            assert type(params[name]) is type(value) and params[name] == value, name


@pytest.fixture(scope="module")
def earlier_fits():
    """One fit per sampler with the settings it honours: the defaults keep working (SMC, VI included)."""
    X, y = _data()
    return {name: _fit(_estimator(name), X, y) for name in available_samplers()}


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("name", available_samplers())
def test_every_setting_is_honoured_or_refused(name, setting, earlier_fits, monkeypatch):
    X, y = _data()
    earlier = earlier_fits[name]
    if setting not in earlier.get_params():
        pytest.skip(f"{type(earlier).__name__} has no {setting}")
    value = VALUES[setting]
    kind = TABLE[name].get(setting)
    if kind == "error":
        est = _fit(_estimator(name), X, y)
        before = {k: v for k, v in vars(est).items() if k.endswith("_")}
        # refused before any work: the pre-training is never reached
        monkeypatch.setattr(problem_module, "pretrain", lambda *a, **k: pytest.fail("refit did work"))
        with pytest.raises(ValueError, match=rf"{setting}={re.escape(repr(value))} is not honoured by "
                                             rf"sampler='{name}', which .*\. .*{setting}"):
            est.set_params(**{setting: value}).fit(X, y)
        after = {k: v for k, v in vars(est).items() if k.endswith("_")}
        assert sorted(after) == sorted(before)
        np.testing.assert_array_equal(est.samples_, earlier.samples_)
        assert est.sampler_name_ == name
        return
    if kind == "warn":  # a resource hint: a warning, and the draws of the default
        with pytest.warns(UserWarning, match=rf"{setting}={value!r} is not honoured by sampler='{name}'"):
            est = _fit(_estimator(name, **{setting: value}), X, y)
        np.testing.assert_array_equal(est.samples_, earlier.samples_)
        return
    if setting in ("chain_weights", "n_jobs"):  # honoured (see test_fitted_state, test_distributed)
        assert setting not in get_sampler(name).ignored_settings()
        return
    est = _fit(_estimator(name, **{setting: value}), X, y)
    if setting == "n_samples":
        assert est.samples_.shape[1] == value
    elif setting == "n_chains":
        assert est.samples_.shape[0] == value
    elif setting == "rho":
        assert est.rho_ == value
    elif setting == "burn_in":  # other warm-up transitions: another cost
        assert np.any(est.n_grad_evals_ != earlier.n_grad_evals_)
    else:  # thin: three times the sampling transitions of thin=1 under the same warm-up
        once = _fit(_estimator(name, thin=1), X, y)
        assert np.all(est.n_grad_evals_ > once.n_grad_evals_)


def test_rho_one_and_the_neutral_values_are_accepted(earlier_fits):
    X, y = _data()
    est = _fit(_estimator("smc", rho=1.0, burn_in=0, thin=1, chain_weights="equal", n_jobs=1), X, y)
    np.testing.assert_array_equal(est.samples_, earlier_fits["smc"].samples_)
    assert _fit(_estimator("hmc", rho=1), X, y).rho_ == 1.0


def test_auto_names_its_choice_when_it_refuses():
    X, y = _data()
    est = GibbsMLPRegressor(**SMALL, random_state=0)
    # a tiny FULL_BATCH_WORK makes "auto" choose VI, which has no burn-in
    with pytest.MonkeyPatch.context() as mp:
        from skgibbs.samplers import base

        mp.setattr(base, "FULL_BATCH_WORK", 1)
        # the user did not pick VI: the setting is ignored with a warning that says why, and the fit goes on
        with pytest.warns(UserWarning, match=r"burn_in=10 is not honoured by sampler='vi' \(chosen by sampler='auto'"):
            est.fit(X, y)
    assert est.sampler_name_ == "vi" and est.samples_.shape[0] == est.n_chains


def test_a_full_data_sampler_refuses_batches_at_the_low_level_too():
    y = torch.zeros(10, dtype=torch.float64)
    target = Target(FunctionPotential(lambda th, idx: (y[idx] - th[:, :1]) ** 2, n_data=10), lambda_=10.0)
    for name in ("hmc", "mala", "mclmc", "sghmc"):
        with pytest.raises(ValueError, match=f"rho=0.5 is not honoured by sampler='{name}'"):
            run_chains(target, torch.zeros(1, 1, dtype=torch.float64), [0], get_sampler(name), rho=0.5,
                       n_samples=2, burn_in=2)


def test_smc_particles_are_one_group_of_draws(earlier_fits):
    est = earlier_fits["smc"]
    P = est.n_particles_
    assert est.samples_.shape == (1, P, est.spec_.n_params)
    assert est.acceptance_rate_.shape == (1,) and est.sample_stats_["acceptance_rate"].shape == (1, P)
    assert est.chain_weights_.tolist() == [1.0] and np.isnan(est.rhat_)


@pytest.mark.parametrize("name", ["smc", "vi"])
def test_to_arviz_exports_independent_draws_as_one_chain(name, earlier_fits):
    pytest.importorskip("arviz")
    X, y = _data()
    est = earlier_fits[name]
    K, S, _ = est.samples_.shape
    data = est.to_arviz(X, y)
    assert data.posterior.sizes["chain"] == 1 and data.posterior.sizes["draw"] == K * S
    assert data.sample_stats.sizes["chain"] == 1 and data.log_likelihood["y"].shape == (1, K * S, len(y))
    np.testing.assert_array_equal(
        data.posterior["intercepts_1"].values.reshape(-1), est.spec_.unpack(est.samples_)[1][1].reshape(-1)
    )
    # Markov chains stay chains
    hmc = earlier_fits["hmc"]
    assert hmc.to_arviz().posterior.sizes["chain"] == hmc.samples_.shape[0]


def test_hidden_layer_sizes_takes_an_int():
    X, y = _data()
    one = _fit(GibbsMLPRegressor(**{**SMALL, "hidden_layer_sizes": 4}, sampler="hmc", random_state=0), X, y)
    same = _fit(GibbsMLPRegressor(**{**SMALL, "hidden_layer_sizes": (4,)}, sampler="hmc", random_state=0), X, y)
    np.testing.assert_array_equal(one.samples_, same.samples_)
    assert one.spec_.layer_sizes == same.spec_.layer_sizes


@pytest.mark.parametrize("bad", ["4", 0, (4, 0), (2.5,)])
def test_bad_hidden_layer_sizes_name_the_valid_forms(bad):
    X, y = _data()
    with pytest.raises(ValueError, match=r"hidden_layer_sizes.*sequence of positive ints .*, an int .* or .*'auto'"):
        GibbsMLPRegressor(hidden_layer_sizes=bad).fit(X, y)


def _target():
    y = torch.linspace(-1.0, 1.0, 20, dtype=torch.float64)
    return Target(FunctionPotential(lambda th, idx: (y[idx] - th[:, :1]) ** 2, n_data=20), lambda_=20.0)


@pytest.mark.parametrize("with_tqdm", [True, False])
def test_progress_on_a_non_terminal_prints_whole_lines(capsys, monkeypatch, with_tqdm):
    if with_tqdm:
        pytest.importorskip("tqdm")
    else:
        monkeypatch.setattr(_progress, "_tqdm", None)
    run_chains(_target(), torch.zeros(2, 1, dtype=torch.float64), [0, 1], get_sampler("mala"), n_samples=5,
               burn_in=4, verbose=1)
    err = capsys.readouterr().err
    assert "\r" not in err and err.endswith("\n")
    lines = err.splitlines()
    assert any(line.startswith("[skgibbs] burn-in: 4/4") for line in lines)
    assert any(line.startswith("[skgibbs] sampling: 5/5") for line in lines)
    # the first report of a phase has no rate: the first step's one-off costs are not measured
    assert lines[0].startswith("[skgibbs] burn-in: 1/4 [n/a steps/s")
    assert not _progress._BARS


def test_progress_rate_is_measured_after_the_first_step(monkeypatch):
    clock = iter([100.0, 101.0, 102.0])  # the first step ended at 100 s (a slow start), then 1 s per step
    monkeypatch.setattr(_progress.time, "perf_counter", lambda: next(clock))
    stream = io.StringIO()
    monkeypatch.setattr(_progress.sys, "stderr", stream)
    monkeypatch.setattr(_progress, "_LOG_INTERVAL", 0.0)
    line = _progress._Line("[skgibbs] x", 3, in_place=False)
    for n in (1, 2, 3):
        line.update(n, {})
    line.close()
    out = stream.getvalue().splitlines()
    assert out == [
        "[skgibbs] x: 1/3 [n/a steps/s, ETA n/a]",
        "[skgibbs] x: 2/3 [1.0 steps/s, ETA 1 s]",
        "[skgibbs] x: 3/3 [1.0 steps/s, ETA 0 s]",
    ]


def test_progress_on_a_terminal_rewrites_one_line(monkeypatch):
    stream = io.StringIO()
    monkeypatch.setattr(_progress.sys, "stderr", stream)
    monkeypatch.setattr(_progress, "_tqdm", None)
    monkeypatch.setattr(_progress, "_terminal", lambda s: True)
    run_chains(_target(), torch.zeros(1, 1, dtype=torch.float64), [0], get_sampler("mala"), n_samples=3,
               burn_in=2, verbose=1)
    err = stream.getvalue()
    assert "\r[skgibbs] burn-in: 2/2" in err and err.count("\n") == 2
