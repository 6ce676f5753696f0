"""sampler="smc" on a network posterior with two function-space modes, against quadrature.

The network ``f(x) = a tanh(w (x - c))`` has three parameters, so its Gibbs
posterior ``pi ∝ N(0, S^2 I) exp(-lambda/n sum_i (y_i - f(x_i))^2)`` can be
integrated on a grid. The targets rise at ``x = -1`` (height 1) and fall at
``x = +1`` (height 0.97): one tanh fits either step, not both, so the
posterior has two modes in function space, the increasing networks
(``a w > 0``, the major mode) and the decreasing ones (``a w < 0``, the
minor mode). The sign symmetry ``(a, w, c) -> (-a, -w, c)`` maps each mode
onto itself, so "increasing" is a property of the function, not of the
parameters. The quadrature gives the mode masses and the posterior
predictive mean and standard deviation of ``f`` at a few probe points;
SMC's particles must reproduce them within their Monte Carlo error, which
HMC chains started in the major mode do not.
"""

import math

import numpy as np
import pytest
import torch

from skgibbs.potential import FunctionPotential
from skgibbs.priors import Prior
from skgibbs.samplers import HMC, SMC, RunSettings, Target, run_chains

N, TEMPERATURE, PRIOR_STD = 30, 1.0, 2.0
PROBES = torch.tensor([-2.0, 0.0, 1.0, 2.0], dtype=torch.float64)
N_RUNS, N_PARTICLES = 10, 512
K_SD = 5.0  # standard errors of a mean of ten runs (t with 9 degrees of freedom: two-sided p = 0.0007)


def network(theta, x):
    """``a tanh(w (x - c))`` for each row ``(a, w, c)`` of ``theta`` (K, 3) at ``x`` (m,) or (K, m)."""
    a, w, c = theta[:, 0:1], theta[:, 1:2], theta[:, 2:3]
    return a * torch.tanh(w * (x - c))


def minor(theta):
    """The decreasing networks (``a w < 0``): the minor mode, invariant under ``(a, w) -> (-a, -w)``."""
    return theta[:, 0] * theta[:, 1] < 0


@pytest.fixture(scope="module")
def problem():
    """30 points on ``[-3, 3]``: a rise of 1 at ``x = -1``, a fall of 0.97 at ``x = 1``, noise sd 0.1."""
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(-3.0, 3.0, N))
    y = np.tanh(4 * (x + 1)) - 0.97 * np.tanh(4 * (x - 1)) + 0.1 * rng.standard_normal(N)
    X, y = torch.as_tensor(x), torch.as_tensor(y)
    pot = FunctionPotential(lambda th, idx: (y[idx] - network(th, X[idx])) ** 2, n_data=N)
    return Target(pot, Prior(std=PRIOR_STD), lambda_=N / TEMPERATURE), X, y


def quadrature(X, y, m, widen=1.0):
    """Minor-mode mass, predictive mean and sd at ``PROBES``, and the highest point of the major mode.

    Tensor grid (equal weights) of ``m`` points per axis: ``a`` in ``[-3, 3]`` (the data hold ``|a|``
    near 1), ``w`` and ``c`` in ``[-4 S, 4 S]`` (the likelihood is flat in ``w`` once the step is
    sharper than the data's spacing, and in ``c`` as ``w -> 0``, so the prior's tails matter
    there); ``widen`` stretches every range. One ``c`` slice of ``m^2`` networks at a time on the
    data; what is kept (parameters, log density, ``f`` at the probes) is 64 MB at ``m = 100``.
    """
    s = 4 * PRIOR_STD * widen
    ga = torch.linspace(-3.0 * widen, 3.0 * widen, m, dtype=torch.float64)
    gw = torch.linspace(-s, s, m, dtype=torch.float64)
    A, W = (t.reshape(-1, 1) for t in torch.meshgrid(ga, gw, indexing="ij"))
    log_p, f, thetas = [], [], []
    for c in torch.linspace(-s, s, m, dtype=torch.float64):
        theta = torch.cat([A, W, c.expand_as(A)], 1)
        loss = ((y - network(theta, X)) ** 2).sum(1)
        log_p.append(-loss / TEMPERATURE - 0.5 * (theta**2).sum(1) / PRIOR_STD**2)
        f.append(network(theta, PROBES))
        thetas.append(theta)
    log_p, f, theta = torch.cat(log_p), torch.cat(f), torch.cat(thetas)
    p = torch.softmax(log_p, 0)
    mean = p @ f
    sd = (p @ (f - mean) ** 2).sqrt()
    best = theta[torch.argmax(torch.where(minor(theta), -torch.inf, log_p))]
    return float(p[minor(theta)].sum()), mean.numpy(), sd.numpy(), best


@pytest.mark.slow
def test_smc_matches_quadrature_on_two_modes_that_hmc_chains_miss(problem):
    """Minor-mode mass and predictive mean and sd at ``PROBES``: SMC against the grid, and HMC's miss.

    Grid: 100 points per axis. Halving the resolution, or widening every range by a quarter
    (coarser spacing, more of the tails), moves the mass, the means and the sds by less than
    0.002 (measured: at most 6e-4, and 2e-4 when doubling it), about a tenth of the smallest
    SMC tolerance below (that of the predictive sds, about 0.0075), so the grid is the ground
    truth. The minor mode holds about a third of the mass (0.354 on this grid).

    SMC: ``N_RUNS`` independent runs of ``N_PARTICLES`` particles; each run's minor-mode
    fraction, predictive means and sds are compared through their mean over the runs, within
    ``K_SD`` standard errors. The standard error is the spread between runs over
    ``sqrt(N_RUNS)``, floored at that of independent draws (``sqrt(p (1 - p) / P)`` for the
    mass, ``sd / sqrt(P)`` for a mean, ``sd / sqrt(2 P)`` for an sd): resampled particles are
    correlated, so a run is not expected to be more precise than ``P`` independent draws, and
    the floor keeps a by-chance small spread of ten runs from making the test fail spuriously.
    (Measured over four sets of ten runs: the spread of the mass between runs is 1.1 to 2.3
    times the binomial one.)

    HMC: four chains started at the grid's highest point of the major mode stay in it; their
    minor-mode fraction is less than half the true mass and outside SMC's tolerance.
    """
    target, X, y = problem
    mass, mean, sd, best = quadrature(X, y, 100)
    for m, widen in ((50, 1.0), (100, 1.25)):
        other = quadrature(X, y, m, widen)
        assert abs(other[0] - mass) < 0.002
        assert np.abs(other[1] - mean).max() < 0.002 and np.abs(other[2] - sd).max() < 0.002
    assert 0.15 < mass < 0.45 and not minor(best[None])[0]

    runs = []
    for run in range(N_RUNS):
        res = SMC(n_particles=N_PARTICLES).sample(
            target, torch.zeros(1, 3, dtype=torch.float64), [run], RunSettings()
        )
        theta = torch.as_tensor(res.samples.reshape(-1, 3))
        f = network(theta, PROBES)
        runs.append(np.r_[float(minor(theta).double().mean()), f.mean(0).numpy(), f.std(0).numpy()])
    runs, truth = np.array(runs), np.r_[mass, mean, sd]
    P = N_PARTICLES
    floor = np.r_[math.sqrt(mass * (1 - mass) / P), sd / math.sqrt(P), sd / math.sqrt(2 * P)]
    tol = K_SD * np.maximum(runs.std(0, ddof=1), floor) / math.sqrt(N_RUNS)
    assert np.all(np.abs(runs.mean(0) - truth) < tol), (runs.mean(0), truth, tol)
    assert tol[0] < mass / 3  # the test can tell the modes' masses apart

    start = best.expand(4, 3).clone()
    chains = run_chains(target, start, [0, 1, 2, 3], HMC(), n_samples=300, burn_in=150)
    hmc_mass = float(minor(torch.as_tensor(chains.samples.reshape(-1, 3))).double().mean())
    assert hmc_mass < mass / 2 and mass - hmc_mass > tol[0]
