"""scikit-learn's estimator checks over every skgibbs estimator (cheap settings)."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from skgibbs import GibbsMLPRegressor


def _cheap():
    return [
        GibbsMLPRegressor(
            hidden_layer_sizes=(8,),
            n_samples=5,
            burn_in=10,
            thin=1,
            pretrain_iter=50,
            random_state=0,
        )
    ]


@parametrize_with_checks(_cheap())
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
