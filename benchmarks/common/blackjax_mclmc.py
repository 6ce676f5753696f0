"""BlackJAX's microcanonical samplers (MCLMC) on the skgibbs Gibbs posterior (the ``bench`` extra).

The peer of :mod:`benchmarks.common.blackjax_nuts` on its target, checked by its
:func:`~benchmarks.common.blackjax_nuts.check_against_skgibbs`:

* unadjusted MCLMC (``blackjax.mclmc``): isokinetic Langevin dynamics with partial momentum
  refreshment and no accept/reject step, tuned by ``blackjax.mclmc_find_L_and_step_size`` (step size
  from the energy-error variance, diagonal preconditioner from the warm-up draws, L from their
  autocorrelation); one transition is one integration step;
* adjusted MCLMC (``blackjax.adjusted_mclmc_dynamic``): isokinetic trajectories of random length (mean
  ``L / step_size`` steps) with a Metropolis-Hastings correction, tuned by
  ``blackjax.adjusted_mclmc_find_L_and_step_size`` (dual averaging toward an acceptance rate of 0.9,
  diagonal preconditioner).

Both integrate with ``isokinetic_mclachlan`` (the default of BlackJAX 1.7.1, passed explicitly), whose
first momentum update reuses the gradient cached in the state: two gradient evaluations a step. One
CPU thread, float32 by default, the chains one after the other.
"""

import inspect
import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import jax
import jax.numpy as jnp
import numpy as np

from .blackjax_nuts import (
    _logdensity_fn,
    _precision,
    _run_sequentially,
    _target_arrays,
    check_against_skgibbs,
)

__all__ = [
    "ADJUSTED_TARGET_ACCEPT",
    "GRADS_PER_INTEGRATION_STEP",
    "blackjax_mclmc_sampler",
    "check_against_skgibbs",
]

#: Acceptance rate the adjusted kernel's dual averaging aims at.
ADJUSTED_TARGET_ACCEPT = 0.9

#: Gradient evaluations per step of ``isokinetic_mclachlan`` (two position updates per step).
GRADS_PER_INTEGRATION_STEP = 2


def _fractions(tuner):
    """The default ``frac_tune1``, ``frac_tune2`` and ``frac_tune3`` of a BlackJAX tuner."""
    params = inspect.signature(tuner).parameters
    return [params[f"frac_tune{i}"].default for i in (1, 2, 3)]


def _unadjusted_tuning_steps(num_steps):
    """Kernel steps ``mclmc_find_L_and_step_size`` runs for ``num_steps`` (diagonal preconditioning on).

    ``round(f1 N) + round(f2 N)`` steps for the step size (the last ``round(f2 N)`` also estimating the
    variances), ``round(round(f2 N) / 3)`` re-tuning it under the new preconditioner, then
    ``round(f3 N)`` for L (when at least 2).
    """
    import blackjax

    f1, f2, f3 = _fractions(blackjax.mclmc_find_L_and_step_size)
    n1, n2, n3 = round(num_steps * f1), round(num_steps * f2), round(num_steps * f3)
    return n1 + n2 + (round(n2 / 3) if n2 > 1 else 0) + (n3 if n3 >= 2 else 0)


def _adjusted_tuning_transitions(num_steps):
    """Transitions ``adjusted_mclmc_find_L_and_step_size`` runs for ``num_steps`` (one window, no 3rd phase).

    A dual-averaging pass of ``int(f1 N) + int(f2 N)`` transitions (the last ``int(f2 N)`` estimating
    the variances), then, when ``int(f2 N) > 0``, a second pass of ``int(f1 N)`` under the new
    preconditioner.
    """
    import blackjax

    f1, f2, f3 = _fractions(blackjax.adjusted_mclmc_find_L_and_step_size)
    if f3 != 0:
        raise RuntimeError("this adjusted MCLMC tuner defaults to frac_tune3 != 0; recount its steps.")
    n1, n2 = int(num_steps * f1), int(num_steps * f2)
    return n1 + n2 + (n1 if n2 != 0 else 0)


def _tuner_num_steps(n_warmup, count):
    """The tuner's ``num_steps`` whose schedule runs the most transitions not above ``n_warmup``.

    The BlackJAX tuners take the length of the run that follows and warm up for fixed fractions of it
    (about 30%); this inverts that, so that the warm-up budget is ``n_warmup`` transitions.
    """
    best_n, best = 1, count(1)
    for n in range(2, 20 * n_warmup + 21):
        c = count(n)
        if best < c <= n_warmup:
            best_n, best = n, c
    return best_n, best


def _scan_draws(transition, init, key, n_samples, thin):
    """``n_samples`` draws, each after ``thin`` transitions: the last carry and the draws' positions."""

    def draw(carry, k):
        carry, _ = jax.lax.scan(transition, carry, jax.random.split(k, thin))
        return carry, carry[0].position

    return jax.lax.scan(draw, init, jax.random.split(key, n_samples))


def _unadjusted_parts(shapes, activation, n_warmup, n_samples, thin):
    """Warm-up and sampling functions of unadjusted MCLMC (data enter as arguments)."""
    import blackjax
    from blackjax.mcmc import integrators, mclmc

    num_steps, n_tune = _tuner_num_steps(n_warmup, _unadjusted_tuning_steps)
    kernel = mclmc.build_kernel(integrator=integrators.isokinetic_mclachlan)

    def warmup(key, position, X_, y_, prec_, lam_):
        logdensity = _logdensity_fn(X_, y_, prec_, lam_, shapes, activation)
        init_key, tune_key = jax.random.split(key)
        state = mclmc.init(position, logdensity, init_key)
        state, params, _ = blackjax.mclmc_find_L_and_step_size(
            mclmc_kernel=kernel, num_steps=num_steps, state=state, rng_key=tune_key, logdensity_fn=logdensity
        )
        return state, params.step_size, params.L, params.inverse_mass_matrix

    def sample(key, state, step_size, L, inv_mass, X_, y_, prec_, lam_):
        algo = blackjax.mclmc(
            _logdensity_fn(X_, y_, prec_, lam_, shapes, activation),
            L=L,
            step_size=step_size,
            integrator=integrators.isokinetic_mclachlan,
            inverse_mass_matrix=inv_mass,
        )

        def transition(carry, k):
            s, bad, sq_energy = carry
            s, info = algo.step(k, s)
            return (s, bad + jnp.logical_not(info.nonans), sq_energy + info.energy_change**2), None

        init = (state, jnp.int32(0), jnp.zeros((), dtype=state.logdensity.dtype))
        (_, bad, sq_energy), positions = _scan_draws(transition, init, key, n_samples, thin)
        n_steps = n_samples * thin
        return positions, jnp.int32(n_steps), jnp.nan, bad, sq_energy / n_steps / positions.shape[-1]

    return warmup, sample, n_tune, (lambda _: n_tune)


def _adjusted_parts(shapes, activation, n_warmup, n_samples, thin):
    """Warm-up and sampling functions of adjusted MCLMC with dynamic trajectory length."""
    import blackjax
    from blackjax.mcmc import adjusted_mclmc_dynamic as amd
    from blackjax.mcmc import integrators

    num_steps, n_tune = _tuner_num_steps(n_warmup, _adjusted_tuning_transitions)
    steps_fn = amd.make_random_trajectory_length_fn(True)
    kernel = amd.build_kernel(integration_steps_fn=steps_fn, integrator=integrators.isokinetic_mclachlan)

    def warmup(key, position, X_, y_, prec_, lam_):
        logdensity = _logdensity_fn(X_, y_, prec_, lam_, shapes, activation)
        init_key, tune_key = jax.random.split(key)
        state = amd.init(position, logdensity, random_generator_arg=init_key)
        state, params, n_steps = blackjax.adjusted_mclmc_find_L_and_step_size(
            mclmc_kernel=kernel,
            logdensity_fn=logdensity,
            num_steps=num_steps,
            state=state,
            rng_key=tune_key,
            target=ADJUSTED_TARGET_ACCEPT,
        )
        return state, params.step_size, params.L, params.inverse_mass_matrix, n_steps

    def sample(key, state, step_size, L, inv_mass, X_, y_, prec_, lam_):
        algo = blackjax.adjusted_mclmc_dynamic(
            _logdensity_fn(X_, y_, prec_, lam_, shapes, activation),
            step_size,
            inverse_mass_matrix=inv_mass,
            integrator=integrators.isokinetic_mclachlan,
            integration_steps_fn=steps_fn,
            integration_steps_params=(L / step_size,),
        )

        def transition(carry, k):
            s, steps, accept, divergent = carry
            s, info = algo.step(k, s)
            steps, accept = steps + info.num_integration_steps, accept + info.acceptance_rate
            return (s, steps, accept, divergent + info.is_divergent), None

        init = (state, jnp.int32(0), jnp.zeros((), dtype=state.logdensity.dtype), jnp.int32(0))
        (_, steps, accept, divergent), positions = _scan_draws(transition, init, key, n_samples, thin)
        return positions, steps, accept / (n_samples * thin), divergent, jnp.nan

    return warmup, sample, n_tune, (lambda out: int(out[4]))


def blackjax_mclmc_sampler(
    X, y, hidden_layer_sizes, activation, lam, prior_std, theta0, *, n_warmup, n_samples, adjusted=True,
    seed=0, dtype="float32", thin=1,
):  # fmt: skip
    """BlackJAX MCLMC, adjusted (default) or unadjusted, from each row of ``theta0``.

    Each chain is tuned by its kernel's BlackJAX tuner (defaults but for the adjusted tuner's target
    acceptance 0.9), then runs ``n_samples * thin`` transitions and keeps every ``thin``-th. The
    tuners take the number of transitions that follow and warm up for fixed fractions of it:
    ``num_steps`` is chosen so that the warm-up runs the most transitions not above ``n_warmup``
    (``n_warmup_transitions``: the unadjusted schedule hits ``n_warmup`` exactly for multiples of 10,
    the adjusted one runs a multiple of 3). This BlackJAX's adjusted tuner pins ``L = 2 step_size``.

    Returns ``samples`` ``(K, n_samples, Q)``; ``warmup_seconds``, ``sampling_seconds`` (summed over
    chains) and ``compile_seconds`` (apart); gradient evaluations ``n_grad_evals`` (all, one a chain at
    the start included) and per chain ``n_grad_evals_warmup``, ``n_grad_evals_sampling`` and
    ``n_integration_steps_sampling``; per chain the tuned ``step_size`` and ``L`` (adjusted: the mean
    trajectory length; unadjusted: the momentum decoherence length), the mean ``acceptance_rate`` (NaN
    unadjusted), ``n_divergent`` (adjusted: an energy error above 1000; unadjusted: a non-finite step,
    reverted with a fresh momentum) and ``energy_variance_per_dim`` (unadjusted: the mean squared
    energy change per step and dimension, which the tuner aims at 5e-4; NaN adjusted).
    """
    n_warmup, n_samples, thin = int(n_warmup), int(n_samples), int(thin)
    if n_warmup < 1 or n_samples < 1 or thin < 1:
        raise ValueError(f"n_warmup, n_samples and thin must be positive: {n_warmup}, {n_samples}, {thin}.")
    parts = _adjusted_parts if adjusted else _unadjusted_parts
    with _precision(dtype):
        data, shapes, Q = _target_arrays(X, y, hidden_layer_sizes, prior_std, lam, dtype)
        warmup, sample, n_tune, warmup_steps = parts(shapes, activation, n_warmup, n_samples, thin)
        runs = _run_sequentially(warmup, sample, 4, theta0, Q, data, dtype, seed)
    compile_s, warm, draws, warm_s, samp_s = runs
    steps_w, steps_s = np.array([warmup_steps(w) for w in warm]), np.array([int(d[1]) for d in draws])
    g = GRADS_PER_INTEGRATION_STEP
    return {
        "samples": np.stack([np.asarray(d[0]) for d in draws]),
        "warmup_seconds": float(warm_s.sum()),
        "sampling_seconds": float(samp_s.sum()),
        "compile_seconds": compile_s,
        "n_grad_evals": int(g * (steps_w.sum() + steps_s.sum()) + len(warm)),
        "n_grad_evals_warmup": g * steps_w,
        "n_grad_evals_sampling": g * steps_s,
        "n_integration_steps_sampling": steps_s,
        "n_warmup_transitions": n_tune,
        "step_size": np.array([float(w[1]) for w in warm]),
        "L": np.array([float(w[2]) for w in warm]),
        "acceptance_rate": np.array([float(d[2]) for d in draws]),
        "n_divergent": np.array([int(d[3]) for d in draws]),
        "energy_variance_per_dim": np.array([float(d[4]) for d in draws]),
        "algorithm": "adjusted_mclmc" if adjusted else "mclmc",
        "integrator": "isokinetic_mclachlan",
    }
