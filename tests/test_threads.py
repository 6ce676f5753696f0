"""The thread rule: one thread for small gradients, the budget shared out among workers for large ones."""

import numpy as np
import pytest
import torch

from skgibbs._threads import THREAD_WORK, gradient_work, thread_count, torch_threads
from skgibbs.model import MLPSpec
from skgibbs.potential import FunctionPotential
from skgibbs.samplers import MALA, Target, run_chains
from skgibbs.samplers.runner import _job_threads, chain_groups

LARGE, SMALL = THREAD_WORK, THREAD_WORK - 1


@pytest.fixture
def budget():
    """Set torch's thread count for a test, and restore the suite's afterwards."""
    before = torch.get_num_threads()

    def set_budget(n):
        torch.set_num_threads(n)
        return n

    yield set_budget
    torch.set_num_threads(before)


def test_gradient_work_is_rows_times_weights_times_chains():
    assert gradient_work(1000, 10_401) == 10_401_000
    assert gradient_work(1000 * 0.1, 10_401, 4) == 4_160_400


@pytest.mark.parametrize("work", [None, 0, SMALL])
def test_small_or_unknown_work_runs_on_one_thread(work):
    assert thread_count(work, n_workers=1, budget=16) == 1


def test_large_work_uses_the_budget():
    assert thread_count(LARGE, n_workers=1, budget=16) == 16
    assert thread_count(100 * LARGE, budget=3) == 3


@pytest.mark.parametrize(
    "budget_, workers, expected", [(16, 4, 4), (16, 3, 5), (8, 8, 1), (2, 4, 1), (1, 1, 1)]
)
def test_workers_share_the_budget_without_oversubscribing(budget_, workers, expected):
    threads = thread_count(LARGE, n_workers=workers, budget=budget_)
    assert threads == expected
    assert threads >= 1 and (threads * workers <= budget_ or threads == 1)


def test_the_default_budget_is_torchs_thread_count(budget):
    budget(2)
    assert thread_count(LARGE) == 2
    budget(1)  # a user's explicit setting is a ceiling
    assert thread_count(LARGE) == 1


def test_torch_threads_sets_the_rule_inside_and_restores_after(budget):
    budget(2)
    with torch_threads(work=SMALL):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == 2
    with torch_threads(work=LARGE):
        assert torch.get_num_threads() == 2
    with torch_threads(work=LARGE, n_workers=2):
        assert torch.get_num_threads() == 1
    with torch_threads():  # no work given: one thread, as before the rule
        assert torch.get_num_threads() == 1
    with pytest.raises(RuntimeError), torch_threads(work=SMALL):
        raise RuntimeError
    assert torch.get_num_threads() == 2


def test_torch_threads_leaves_a_gpu_run_alone(budget):
    budget(2)
    with torch_threads("cuda", work=SMALL):
        assert torch.get_num_threads() == 2


def _target(n_data, n_params):
    """A cheap target whose gradient work is ``n_data x n_params``; it records the threads it ran on."""
    y = torch.linspace(-1.0, 1.0, n_data, dtype=torch.float64)
    pot = FunctionPotential(lambda th, idx: (y[idx] - th[:, :1]) ** 2, n_data=n_data)
    pot.threads = set()
    inner = pot.loss_sum_and_grad

    def recording(theta, batch):
        pot.threads.add(torch.get_num_threads())
        return inner(theta, batch)

    pot.loss_sum_and_grad = recording
    return Target(pot, lambda_=float(n_data)), torch.zeros(2, n_params, dtype=torch.float64)


@pytest.mark.parametrize("extra, expected", [(0, 2), (-1, 1)])
def test_run_chains_jobs_follow_the_rule(budget, extra, expected):
    # 2 chains batched x Q weights x 1000 rows: THREAD_WORK for extra = 0, just below it for extra = -1
    budget(2)
    n_params = -(-THREAD_WORK // 2000) + extra
    target, theta0 = _target(1000, n_params)
    assert (gradient_work(1000, n_params, 2) >= THREAD_WORK) == (expected == 2)
    run_chains(target, theta0, [0, 1], MALA(), n_samples=2, burn_in=2)
    assert target.potential.threads == {expected}
    assert torch.get_num_threads() == 2  # the caller's setting is restored


def test_runner_shares_the_budget_among_the_jobs_that_run_at_once(budget):
    budget(4)
    target, _ = _target(1000, 1)
    theta0 = torch.zeros(4, -(-THREAD_WORK // 1000))  # one chain's gradient is large already
    one_group = chain_groups(4, vectorize=True, n_jobs=None)
    two_groups = chain_groups(4, vectorize=True, n_jobs=2)
    assert _job_threads(target, theta0, 1.0, one_group, True, None) == 4
    assert _job_threads(target, theta0, 1.0, two_groups, True, 2) == 2
    # more jobs than threads: one each, never more
    assert _job_threads(target, theta0, 1.0, chain_groups(4, True, 4), True, 4) == 1
    # one chain per group run one after the other (n_jobs=None): no sharing
    assert _job_threads(target, theta0, 1.0, chain_groups(4, False, None), False, None) == 4
    # a small batch (rho) makes the gradient small again
    assert _job_threads(target, theta0, 0.1, one_group, True, None) == 1


def _record_threads(potential):
    """Make ``potential`` record the thread count of every gradient it computes."""
    potential.threads = set()
    inner = potential.loss_sum_and_grad

    def recording(theta, batch):
        potential.threads.add(torch.get_num_threads())
        return inner(theta, batch)

    potential.loss_sum_and_grad = recording
    return potential


@pytest.mark.parametrize("large", [False, True])
def test_a_fit_keeps_the_budget_only_for_large_gradients(budget, large):
    from skgibbs import GibbsMLPRegressor
    from skgibbs.problem import build_problem

    budget(2)
    n_params = MLPSpec(1, (100, 100), "relu").n_params
    n = -(-THREAD_WORK // n_params) if large else 50  # one chain: work = n x Q
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 1))
    est = GibbsMLPRegressor(
        hidden_layer_sizes=(100, 100),  # the network whose work sets n (not "auto"'s width at n rows)
        sampler="mala", n_chains=1, n_samples=2, burn_in=2, pretrain_iter=2, random_state=0,
    )  # fmt: skip
    problem = build_problem(est, X, np.sin(X[:, 0]))
    _record_threads(problem.potential)
    problem.sample()
    assert problem.potential.threads == ({2} if large else {1})
    assert torch.get_num_threads() == 2
