"""scikit-learn's estimator checks over every skgibbs estimator (cheap settings).

Each Gibbs estimator is checked with a sampler name and with a sampler
object, so that clone, get_params and set_params with a nested object (and
the rule that fit leaves its parameters unchanged) go through scikit-learn's
own checks.

The budgets are small: two draws after two warm-up transitions, and as
little pre-training as keeps the fits well past the scores that
check_regressors_train (R^2 > 0.5, here about 0.77 to 0.84) and
check_classifiers_train (accuracy > 0.83, here above 0.92) require; the
checks test the API, not the quality of the posterior.
"""

import inspect

from sklearn.utils.estimator_checks import parametrize_with_checks

from skgibbs import (
    GibbsMLPClassifier,
    GibbsMLPRegressor,
    NeuralControlVariate,
    PolynomialControlVariate,
    SparseGibbsMLPRegressor,
)
from skgibbs.embeddings import PiecewiseLinearEmbedding
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
            n_samples=2,
            burn_in=2,
            thin=1,
            pretrain_iter=50,
            random_state=0,
        ),
        GibbsMLPClassifier(
            hidden_layer_sizes=(8,),
            n_samples=2,
            burn_in=2,
            pretrain_iter=50,
            random_state=0,
        ),
        GibbsMLPRegressor(
            hidden_layer_sizes=(8,),
            sampler=MeanFieldVI(max_iter=20),
            n_samples=2,
            pretrain_iter=50,
            random_state=0,
        ),
        GibbsMLPClassifier(
            hidden_layer_sizes=(8,),
            sampler=MeanFieldVI(max_iter=20),
            n_samples=2,
            pretrain_iter=50,
            random_state=0,
        ),
        SparseGibbsMLPRegressor(
            hidden_layer_sizes=(8,),
            n_samples=2,
            burn_in=2,
            thin=1,
            pretrain_iter=100,
            random_state=0,
        ),
        # numeric embeddings, by name and as an object (nested parameters embedding__*)
        GibbsMLPRegressor(
            hidden_layer_sizes=(8,),
            embedding=PiecewiseLinearEmbedding(n_bins=4, d_embedding=4),
            n_samples=2,
            burn_in=2,
            thin=1,
            pretrain_iter=50,
            random_state=0,
        ),
        GibbsMLPClassifier(
            hidden_layer_sizes=(8,),
            embedding="periodic",
            n_samples=2,
            burn_in=2,
            pretrain_iter=50,
            random_state=0,
        ),
        # a noise variance per input: the network's second output
        GibbsMLPRegressor(
            hidden_layer_sizes=(8,),
            noise="heteroscedastic",
            n_samples=2,
            burn_in=2,
            thin=1,
            pretrain_iter=50,
            random_state=0,
        ),
        # a Student-t noise whose scale varies with the inputs
        GibbsMLPRegressor(
            hidden_layer_sizes=(8,),
            noise="student",
            n_samples=2,
            burn_in=2,
            thin=1,
            pretrain_iter=50,
            random_state=0,
        ),
        # kernel settings on a sampler object (nested parameters sampler__*)
        GibbsMLPRegressor(
            hidden_layer_sizes=(8,),
            sampler=HMC(target_accept=0.9, metric="adaptive", max_leapfrog=16),
            n_samples=2,
            burn_in=2,
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
            n_samples=2,
            burn_in=2,
            thin=1,
            pretrain_iter=50,
            random_state=0,
        ),
        GibbsMLPClassifier(
            hidden_layer_sizes=(8,),
            sampler=AdjustedMCLMC(max_steps=8),
            n_samples=2,
            burn_in=2,
            thin=1,
            pretrain_iter=50,
            random_state=0,
        ),
        GibbsMLPRegressor(
            hidden_layer_sizes=(8,),
            sampler=CSMALA(correction=0.5),
            rho=0.5,
            n_samples=2,
            burn_in=2,
            thin=1,
            pretrain_iter=100,  # batches of half the data move little: start near a fit
            random_state=0,
        ),
        GibbsMLPClassifier(
            hidden_layer_sizes=(8,),
            sampler=SGLD(step_size=1e-3),
            rho=0.5,
            n_samples=2,
            burn_in=2,
            thin=1,
            pretrain_iter=50,
            random_state=0,
        ),
        SparseGibbsMLPRegressor(
            hidden_layer_sizes=(8,),
            sampler=RJMCMC(target_accept=0.6),
            n_samples=2,
            burn_in=2,
            thin=1,
            pretrain_iter=100,
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


#: scikit-learn's check that integer weights give the predictions of repeated rows compares two fits
#: bit for bit; a fit's randomness runs over its rows (the pre-training's held-out split and batches,
#: the chains' batches), so two fits of the same posterior differ by Monte Carlo error. What the check
#: asks holds where it can: the target density of weights equals that of repeated rows to rounding, and
#: a weighted conjugate posterior matches its closed form (tests/test_sample_weight.py).
SAMPLE_WEIGHT_EQUIVALENCE = (
    "the same posterior, not the same draws: a fit's randomness runs over its rows, so repeated rows give "
    "other draws (the target densities agree to rounding: tests/test_sample_weight.py)"
)


def _expected_failures(estimator):
    if "sample_weight" in inspect.signature(estimator.fit).parameters:
        return {"check_sample_weight_equivalence_on_dense_data": SAMPLE_WEIGHT_EQUIVALENCE}
    return {}


@parametrize_with_checks(_cheap(), expected_failed_checks=_expected_failures)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
