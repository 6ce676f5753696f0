"""scikit-learn's estimator checks over every skgibbs estimator (cheap settings)."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from skgibbs import (
    GibbsMLPClassifier,
    GibbsMLPRegressor,
    NeuralControlVariate,
    PolynomialControlVariate,
    SparseGibbsMLPRegressor,
)


class StandardGaussianScore:
    """``grad log pi`` of N(0, I): the control variates need a target, any will do for the API checks.

    A class with a fixed ``repr``: a function's ``repr`` holds its address,
    which differs between the pytest-xdist workers that collect the test ids.
    """

    def __call__(self, X):
        return -X

    def __repr__(self):
        return "standard_gaussian_score"


standard_gaussian_score = StandardGaussianScore()


def _cheap():
    return [
        GibbsMLPRegressor(
            hidden_layer_sizes=(8,),
            n_samples=5,
            burn_in=10,
            thin=1,
            pretrain_iter=50,
            random_state=0,
        ),
        GibbsMLPClassifier(
            hidden_layer_sizes=(8,),
            n_samples=5,
            burn_in=10,
            pretrain_iter=50,
            random_state=0,
        ),
        GibbsMLPRegressor(
            hidden_layer_sizes=(8,),
            sampler="vi",
            n_samples=5,
            vi_max_iter=100,
            pretrain_iter=50,
            random_state=0,
        ),
        GibbsMLPClassifier(
            hidden_layer_sizes=(8,),
            sampler="vi",
            n_samples=5,
            vi_max_iter=100,
            pretrain_iter=50,
            random_state=0,
        ),
        SparseGibbsMLPRegressor(
            hidden_layer_sizes=(8,),
            n_samples=5,
            burn_in=10,
            thin=1,
            pretrain_iter=200,
            random_state=0,
        ),
        NeuralControlVariate(
            grad_log_prob=standard_gaussian_score,
            hidden_layer_sizes=(4,),
            max_iter=5,
            random_state=0,
        ),
        PolynomialControlVariate(grad_log_prob=standard_gaussian_score, degree=2),
    ]


@parametrize_with_checks(_cheap())
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
