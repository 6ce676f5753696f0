"""skgibbs.persistence: fitted estimators through skops.io, beside pickle."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor, SamplerWarning, SparseGibbsMLPRegressor
from skgibbs.persistence import TRUSTED_TYPES, dump, load
from skgibbs.pipeline import make_pipeline
from skgibbs.samplers import CSMALA, HMC, RJMCMC, MeanFieldVI, available_samplers, get_sampler

sio = pytest.importorskip("skops.io", reason="skops is optional: pip install 'skgibbs[persist]'")

CHEAP = dict(hidden_layer_sizes=(8,), n_samples=10, burn_in=10, pretrain_iter=50, random_state=0)


def _data(classify):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = X[:, 0] + 0.1 * rng.normal(size=60)
    return X, ((y > 0).astype(int) if classify else y)


def _final(est):
    """The Gibbs estimator itself, or the last step of a pipeline."""
    return est[-1] if hasattr(est, "steps") else est


@pytest.mark.parametrize(
    "est",
    [
        GibbsMLPRegressor(**CHEAP),
        GibbsMLPRegressor(**{**CHEAP, "burn_in": "auto"}, sampler=MeanFieldVI(max_iter=50)),  # VI: no burn-in
        GibbsMLPRegressor(**CHEAP, sampler=CSMALA(correction=0.5), rho=0.5),
        SparseGibbsMLPRegressor(**CHEAP),
        SparseGibbsMLPRegressor(**CHEAP, sampler=RJMCMC(target_accept=0.6)),
        GibbsMLPClassifier(**CHEAP),
        GibbsMLPClassifier(**CHEAP, sampler=HMC(target_accept=0.9)),
        make_pipeline(StandardScaler(), GibbsMLPRegressor(**CHEAP)),
    ],
    ids=[
        "regressor", "regressor-vi", "regressor-csmala", "sparse", "sparse-rjmcmc", "classifier",
        "classifier-hmc", "pipeline",
    ],
)
def test_round_trip_predicts_identically(est, tmp_path):
    X, y = _data(isinstance(est, GibbsMLPClassifier))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        est.fit(X, y)
    path = tmp_path / "model.skops"
    dump(est, path)
    # every type the file needs is one of ours or one skops trusts by default
    assert set(sio.get_untrusted_types(file=path)) <= set(TRUSTED_TYPES)
    restored = load(path)
    via_pickle = pickle.loads(pickle.dumps(est))
    for other in (restored, via_pickle):
        assert type(other) is type(est)
        assert np.array_equal(other.predict(X), est.predict(X))
        if hasattr(est, "predict_interval"):
            assert np.array_equal(other.predict_interval(X)[1], est.predict_interval(X)[1])
        # the sampler parameter and the fitted sampler object come back with their settings
        fitted, back = _final(est), _final(other)
        assert type(back.sampler_) is type(fitted.sampler_)
        assert back.sampler_.get_params() == fitted.sampler_.get_params()
        assert back.get_params().keys() == fitted.get_params().keys()


def test_every_sampler_class_is_trusted():
    # a fitted estimator holds its sampler object (sampler_): each registered class must load without
    # asking the user to trust it
    assert {"hmc", "mala", "smala", "csmala", "sgld", "rjmcmc", "vi"} <= set(available_samplers())
    for name in available_samplers():
        cls = type(get_sampler(name))
        assert f"{cls.__module__}.{cls.__qualname__}" in TRUSTED_TYPES, name


def test_untrusted_types_are_refused(tmp_path):
    path = tmp_path / "model.skops"
    sio.dump({"f": np.polynomial.Polynomial([1.0, 2.0])}, path)
    with pytest.raises(Exception, match="Untrusted|untrusted"):
        load(path)


@pytest.mark.parametrize("cls", [GibbsMLPRegressor, SparseGibbsMLPRegressor, GibbsMLPClassifier])
def test_a_fit_saved_before_the_estimators_package_loads(cls, tmp_path):
    """Pickles and skops files of earlier releases name ``skgibbs.regressor`` (and its siblings): they load.

    The files are written now and their class's module replaced by its
    former path, which is what a file of an earlier release holds.
    """
    import io
    import zipfile

    from skgibbs.estimators import FORMER_MODULES

    est = cls(**CHEAP)
    X, y = _data(cls is GibbsMLPClassifier)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplerWarning)
        est.fit(X, y)
    new = cls.__module__
    (old,) = [o for o, n in FORMER_MODULES.items() if n == new]
    # protocol 0 writes the class's module as text
    data = pickle.dumps(est, protocol=0).replace(f"{new}\n".encode(), f"{old}\n".encode())
    assert f"{old}\n".encode() in data and f"{new}\n".encode() not in data
    # an skops file is a zip whose schema names each object's module
    path = tmp_path / "model.skops"
    dump(est, path)
    renamed = io.BytesIO()
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(renamed, "w") as dst:
        for item in src.infolist():
            content = src.read(item.filename)
            if item.filename == "schema.json":
                assert f'"{new}"'.encode() in content
                content = content.replace(f'"{new}"'.encode(), f'"{old}"'.encode())
            dst.writestr(item, content)
    (tmp_path / "old.skops").write_bytes(renamed.getvalue())
    assert f"{old}.{cls.__qualname__}" in sio.get_untrusted_types(file=tmp_path / "old.skops")
    for other in (pickle.loads(data), load(tmp_path / "old.skops")):
        assert type(other) is cls
        assert np.array_equal(other.predict(X), est.predict(X))
