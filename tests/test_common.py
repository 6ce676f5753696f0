"""scikit-learn's estimator checks over every skgibbs estimator (cheap settings).

Each Gibbs estimator is checked with a sampler name and with a sampler
object, so that clone, get_params and set_params with a nested object (and
the rule that fit leaves its parameters unchanged) go through scikit-learn's
own checks.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from skgibbs import (
    GibbsMLPClassifier,
    GibbsMLPRegressor,
    NeuralControlVariate,
    PolynomialControlVariate,
    SparseGibbsMLPRegressor,
)
from skgibbs.samplers import CSMALA, HMC, MCLMC, RJMCMC, SGLD, AdjustedMCLMC, MeanFieldVI


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
            sampler=MeanFieldVI(max_iter=100),
            n_samples=5,
            pretrain_iter=50,
            random_state=0,
        ),
        GibbsMLPClassifier(
            hidden_layer_sizes=(8,),
            sampler=MeanFieldVI(max_iter=100),
            n_samples=5,
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
        # kernel settings on a sampler object (nested parameters sampler__*)
        GibbsMLPRegressor(
            hidden_layer_sizes=(8,),
            sampler=HMC(target_accept=0.9, metric="adaptive", max_leapfrog=16),
            n_samples=5,
            burn_in=30,
            thin=1,
            pretrain_iter=50,
            random_state=0,
        ),
        # the microcanonical kernels, one of them under a hierarchical prior with the noise learned
        GibbsMLPRegressor(
            hidden_layer_sizes=(8,),
            sampler=MCLMC(steps_per_transition=4),
            prior="ard",
            temperature="learn",
            n_samples=5,
            burn_in=10,
            thin=1,
            pretrain_iter=50,
            random_state=0,
        ),
        GibbsMLPClassifier(
            hidden_layer_sizes=(8,),
            sampler=AdjustedMCLMC(max_steps=8),
            n_samples=5,
            burn_in=10,
            thin=1,
            pretrain_iter=50,
            random_state=0,
        ),
        GibbsMLPRegressor(
            hidden_layer_sizes=(8,),
            sampler=CSMALA(correction=0.5),
            rho=0.5,
            n_samples=5,
            burn_in=10,
            thin=1,
            pretrain_iter=400,  # batches of half the data move little in 10 steps: start near a fit
            random_state=0,
        ),
        GibbsMLPClassifier(
            hidden_layer_sizes=(8,),
            sampler=SGLD(step_size=1e-3),
            rho=0.5,
            n_samples=5,
            burn_in=10,
            thin=1,
            pretrain_iter=50,
            random_state=0,
        ),
        SparseGibbsMLPRegressor(
            hidden_layer_sizes=(8,),
            sampler=RJMCMC(target_accept=0.6),
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
