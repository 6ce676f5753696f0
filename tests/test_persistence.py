"""skgibbs.persistence: fitted estimators through skops.io, beside pickle."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler

from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor, SamplerWarning, SparseGibbsMLPRegressor
from skgibbs.persistence import TRUSTED_TYPES, dump, load
from skgibbs.pipeline import make_pipeline

sio = pytest.importorskip("skops.io", reason="skops is optional: pip install 'skgibbs[persist]'")

CHEAP = dict(hidden_layer_sizes=(8,), n_samples=10, burn_in=10, pretrain_iter=50, random_state=0)


def _data(classify):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = X[:, 0] + 0.1 * rng.normal(size=60)
    return X, ((y > 0).astype(int) if classify else y)


@pytest.mark.parametrize(
    "est",
    [
        GibbsMLPRegressor(**CHEAP),
        GibbsMLPRegressor(**CHEAP, sampler="vi", vi_max_iter=50),
        SparseGibbsMLPRegressor(**CHEAP),
        GibbsMLPClassifier(**CHEAP),
        make_pipeline(StandardScaler(), GibbsMLPRegressor(**CHEAP)),
    ],
    ids=["regressor", "regressor-vi", "sparse", "classifier", "pipeline"],
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


def test_untrusted_types_are_refused(tmp_path):
    path = tmp_path / "model.skops"
    sio.dump({"f": np.polynomial.Polynomial([1.0, 2.0])}, path)
    with pytest.raises(Exception, match="Untrusted|untrusted"):
        load(path)
