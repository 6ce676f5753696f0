"""BlackJAX microcanonical samplers (MCLMC) on the skgibbs Gibbs posterior (the ``bench`` extra).

A peer of :mod:`benchmarks.common.blackjax_nuts` on the same target (its
:func:`~benchmarks.common.blackjax_nuts.make_logdensity`, checked against
skgibbs by :func:`~benchmarks.common.blackjax_nuts.check_against_skgibbs`):

* unadjusted MCLMC (``blackjax.mclmc``): isokinetic Langevin dynamics with
  partial momentum refreshment and no accept/reject step, tuned by
  ``blackjax.mclmc_find_L_and_step_size`` (step size from the energy-error
  variance, diagonal preconditioner from the warm-up draws, L from their
  autocorrelation);
* adjusted MCLMC (``blackjax.adjusted_mclmc_dynamic``): isokinetic
  trajectories of random length (mean ``L / step_size`` steps) with a
  Metropolis-Hastings correction, tuned by
  ``blackjax.adjusted_mclmc_find_L_and_step_size`` (dual averaging towards
  an acceptance rate of 0.9, diagonal preconditioner).

Both integrate with ``isokinetic_mclachlan``, the default of the BlackJAX
version this was written against (1.7.1), passed explicitly here: the
two-stage palindromic scheme (momentum, position, momentum, position,
momentum) whose first momentum update reuses the gradient cached in the
state, so each integration step costs two gradient evaluations.

As in ``blackjax_nuts``, everything runs on one CPU thread (``XLA_FLAGS`` is
set before JAX is imported unless the caller set it), in float32 by default,
and the chains run one after the other. Import this module only when JAX and
BlackJAX are installed.
"""

import inspect
import os
import time

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import jax
import jax.numpy as jnp
import numpy as np

from .blackjax_nuts import _jnp_dtype, _logdensity_fn, _precision, _target_arrays, check_against_skgibbs
from .jax_peers import versions

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


def _defaults(fn, *names):
    params = inspect.signature(fn).parameters
    return [params[name].default for name in names]


def _unadjusted_tuning_steps(num_steps):
    """Kernel steps ``mclmc_find_L_and_step_size`` runs for ``num_steps`` (diagonal preconditioning on).

    The installed tuner runs ``round(f1 N) + round(f2 N)`` steps for the step
    size (the last ``round(f2 N)`` also estimating the variances), then
    ``round(round(f2 N) / 3)`` steps re-tuning the step size under the new
    preconditioner, then ``round(f3 N)`` steps for L (when at least 2).
    """
    import blackjax

    fracs = ("frac_tune1", "frac_tune2", "frac_tune3")
    f1, f2, f3 = _defaults(blackjax.mclmc_find_L_and_step_size, *fracs)
    n1, n2, n3 = round(num_steps * f1), round(num_steps * f2), round(num_steps * f3)
    total = n1 + n2
    if n2 > 1:
        total += round(n2 / 3)
    if n3 >= 2:
        total += n3
    return total


def _adjusted_tuning_transitions(num_steps):
    """Transitions ``adjusted_mclmc_find_L_and_step_size`` runs for ``num_steps`` (one window, no 3rd phase).

    A first dual-averaging pass of ``int(f1 N) + int(f2 N)`` transitions (the
    last ``int(f2 N)`` estimating the variances), then, when ``int(f2 N) > 0``,
    a second pass of ``int(f1 N)`` under the new preconditioner.
    """
    import blackjax

    fracs = ("frac_tune1", "frac_tune2", "frac_tune3")
    f1, f2, f3 = _defaults(blackjax.adjusted_mclmc_find_L_and_step_size, *fracs)
    if f3 != 0:
        raise RuntimeError("this adjusted MCLMC tuner defaults to frac_tune3 != 0; recount its steps.")
    n1, n2 = int(num_steps * f1), int(num_steps * f2)
    return n1 + n2 + (n1 if n2 != 0 else 0)


def _tuner_num_steps(n_warmup, count):
    """The tuner's ``num_steps`` whose schedule runs the most transitions not above ``n_warmup``.

    The BlackJAX tuners take the length of the run that follows and spend
    fixed fractions of it on warm-up (about 30% for either kernel); this
    inverts that so the warm-up budget is ``n_warmup`` transitions.
    """
    best_n, best = 1, count(1)
    for n in range(2, 20 * n_warmup + 21):
        c = count(n)
        if best < c <= n_warmup:
            best_n, best = n, c
    return best_n, best


def blackjax_mclmc_sampler(
    X,
    y,
    hidden_layer_sizes,
    activation,
    lam,
    prior_std,
    theta0,
    *,
    n_warmup,
    n_samples,
    adjusted=True,
    seed=0,
    dtype="float32",
    thin=1,
):
    """BlackJAX MCLMC, adjusted (default) or unadjusted, on the skgibbs Gibbs posterior.

    Each chain starts at its row of ``theta0``, is tuned by the BlackJAX tuner
    of its kernel with a budget of about ``n_warmup`` transitions, then runs
    ``n_samples * thin`` transitions and keeps every ``thin``-th. The chains
    run one after the other, each in one call of executables compiled once.

    * ``adjusted=False``: ``blackjax.mclmc`` tuned by
      ``blackjax.mclmc_find_L_and_step_size`` with its defaults (diagonal
      preconditioning, energy-error variance 5e-4 per dimension). One
      transition is one integration step: 2 gradient evaluations.
    * ``adjusted=True``: ``blackjax.adjusted_mclmc_dynamic`` (trajectory
      length drawn uniformly each transition with mean ``L / step_size``
      integration steps, momentum refreshed once per transition, MH
      correction) tuned by ``blackjax.adjusted_mclmc_find_L_and_step_size``
      with target acceptance 0.9 and its defaults otherwise (diagonal
      preconditioning; this BlackJAX's tuner pins ``L = 2 step_size``, i.e.
      2 integration steps per transition on average). A transition costs
      2 gradient evaluations per integration step.

    The tuners take the number of transitions that will follow and warm up
    for fixed fractions of it; ``num_steps`` is chosen here so that the warm-up
    runs the largest number of transitions not above ``n_warmup``
    (``n_warmup_transitions`` in the result: the unadjusted schedule hits
    ``n_warmup`` exactly for multiples of 10, the adjusted one runs a multiple
    of 3, so up to 2 fewer).

    Parameters
    ----------
    X : array-like of shape (n, d)
    y : array-like of shape (n,)
        Standardized data.
    hidden_layer_sizes : tuple of int
    activation : {"relu", "tanh", "logistic", "identity"}
    lam : float
        Inverse temperature of the empirical risk ``R_n`` (mean squared error).
    prior_std : float or array-like of shape (Q,)
        Standard deviations of the Gaussian prior, e.g. ``MLPSpec.fan_in_std()``.
    theta0 : array-like of shape (K, Q)
        One start per chain, skgibbs flat order.
    n_warmup : int
        Tuning budget per chain, in transitions.
    n_samples : int
        Draws kept per chain.
    adjusted : bool, default=True
    seed : int, default=0
    dtype : {"float32", "float64"}, default="float32"
    thin : int, default=1
        Transitions per kept draw.

    Returns
    -------
    dict with
        ``samples`` : ndarray of shape (K, n_samples, Q), skgibbs flat order;
        ``warmup_seconds``, ``sampling_seconds`` : float, summed over chains,
        compilation excluded;
        ``compile_seconds`` : float, tracing and compiling the warm-up and the
        sampling executables (once, reused by every chain);
        ``n_grad_evals`` : int, all gradient evaluations, warm-up and
        sampling, plus one per chain at the start;
        ``n_grad_evals_warmup``, ``n_grad_evals_sampling`` : ndarray (K,),
        gradient evaluations (2 per integration step; without the start);
        ``n_integration_steps_warmup``, ``n_integration_steps_sampling`` :
        ndarray (K,);
        ``n_warmup_transitions`` : int, transitions the tuner ran per chain;
        ``step_size``, ``L`` : ndarray (K,), tuned values (adjusted: mean
        trajectory length ``L``, ``L / step_size`` integration steps on
        average; unadjusted: momentum decoherence length);
        ``inverse_mass_matrix`` : ndarray (K, Q), tuned diagonals;
        ``acceptance_rate`` : ndarray (K,), mean acceptance probability over
        the sampling transitions (NaN for unadjusted MCLMC);
        ``n_divergent`` : ndarray (K,), sampling transitions flagged divergent
        (adjusted: energy error above 1000; unadjusted: a non-finite step,
        reverted with a fresh momentum);
        ``n_divergent_warmup`` : None (the BlackJAX tuners do not return it);
        ``energy_variance_per_dim`` : ndarray (K,), unadjusted only (NaN
        otherwise): mean squared energy change per step over the dimension,
        the quantity the tuner aims at 5e-4;
        ``warmup_seconds_per_chain``, ``sampling_seconds_per_chain`` : ndarray (K,);
        ``algorithm`` : ``"adjusted_mclmc"`` or ``"mclmc"``;
        ``integrator``, ``grads_per_integration_step``, ``thin``;
        ``versions`` : dict.
    """
    if int(n_warmup) < 1 or int(n_samples) < 1 or int(thin) < 1:
        raise ValueError(f"n_warmup, n_samples and thin must be positive: {n_warmup}, {n_samples}, {thin}.")
    options = {
        "n_warmup": int(n_warmup),
        "n_samples": int(n_samples),
        "adjusted": bool(adjusted),
        "seed": seed,
        "dtype": dtype,
        "thin": int(thin),
    }
    with _precision(dtype):
        return _run_chains(X, y, hidden_layer_sizes, activation, lam, prior_std, theta0, **options)


def _unadjusted_parts(shapes, activation, n_warmup, n_samples, thin):
    """Warm-up and sampling functions of unadjusted MCLMC; data enter as arguments."""
    import blackjax
    from blackjax.mcmc import integrators, mclmc

    num_steps, n_tune = _tuner_num_steps(n_warmup, _unadjusted_tuning_steps)
    kernel = mclmc.build_kernel(integrator=integrators.isokinetic_mclachlan)

    def warmup(key, position, X_, y_, prec_, lam_):
        logdensity = _logdensity_fn(X_, y_, prec_, lam_, shapes, activation)
        init_key, tune_key = jax.random.split(key)
        state = mclmc.init(position, logdensity, init_key)
        state, params, _ = blackjax.mclmc_find_L_and_step_size(
            mclmc_kernel=kernel,
            num_steps=num_steps,
            state=state,
            rng_key=tune_key,
            logdensity_fn=logdensity,
        )
        return state, params.step_size, params.L, params.inverse_mass_matrix

    def sample(key, state, step_size, L, inv_mass, X_, y_, prec_, lam_):
        logdensity = _logdensity_fn(X_, y_, prec_, lam_, shapes, activation)
        algo = blackjax.mclmc(
            logdensity,
            L=L,
            step_size=step_size,
            integrator=integrators.isokinetic_mclachlan,
            inverse_mass_matrix=inv_mass,
        )

        def transition(carry, k):
            s, bad, sq_energy = carry
            s, info = algo.step(k, s)
            return (s, bad + jnp.logical_not(info.nonans), sq_energy + info.energy_change**2), None

        def draw(carry, k):
            carry, _ = jax.lax.scan(transition, carry, jax.random.split(k, thin))
            return carry, carry[0].position

        zero = jnp.zeros((), dtype=state.logdensity.dtype)
        keys = jax.random.split(key, n_samples)
        (_, bad, sq_energy), positions = jax.lax.scan(draw, (state, jnp.int32(0), zero), keys)
        n_steps = n_samples * thin
        dim = positions.shape[-1]
        return positions, jnp.int32(n_steps), jnp.nan, bad, sq_energy / n_steps / dim

    return warmup, sample, n_tune, (lambda _: n_tune)


def _adjusted_parts(shapes, activation, n_warmup, n_samples, thin):
    """Warm-up and sampling functions of adjusted MCLMC (dynamic trajectory length)."""
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
        logdensity = _logdensity_fn(X_, y_, prec_, lam_, shapes, activation)
        algo = blackjax.adjusted_mclmc_dynamic(
            logdensity,
            step_size,
            inverse_mass_matrix=inv_mass,
            integrator=integrators.isokinetic_mclachlan,
            integration_steps_fn=steps_fn,
            integration_steps_params=(L / step_size,),
        )

        def transition(carry, k):
            s, steps, accept, divergent = carry
            s, info = algo.step(k, s)
            carry = (
                s,
                steps + info.num_integration_steps,
                accept + info.acceptance_rate,
                divergent + info.is_divergent,
            )
            return carry, None

        def draw(carry, k):
            carry, _ = jax.lax.scan(transition, carry, jax.random.split(k, thin))
            return carry, carry[0].position

        zero = jnp.zeros((), dtype=state.logdensity.dtype)
        keys = jax.random.split(key, n_samples)
        init = (state, jnp.int32(0), zero, jnp.int32(0))
        (_, steps, accept, divergent), positions = jax.lax.scan(draw, init, keys)
        return positions, steps, accept / (n_samples * thin), divergent, jnp.nan

    return warmup, sample, n_tune, (lambda out: int(out[4]))


def _run_chains(
    X,
    y,
    hidden_layer_sizes,
    activation,
    lam,
    prior_std,
    theta0,
    *,
    n_warmup,
    n_samples,
    adjusted,
    seed,
    dtype,
    thin,
):
    dt = _jnp_dtype(dtype)
    Xj, yj, shapes, Q, prec, lam_j = _target_arrays(X, y, hidden_layer_sizes, prior_std, lam, dtype)
    theta0 = np.atleast_2d(np.asarray(theta0, dtype=np.float64))
    if theta0.shape[1] != Q:
        raise ValueError(f"theta0 must have {Q} columns for this network, got shape {theta0.shape}.")
    K = theta0.shape[0]

    parts = _adjusted_parts if adjusted else _unadjusted_parts
    warmup, sample, n_tune, warmup_steps = parts(shapes, activation, n_warmup, n_samples, thin)

    data = (Xj, yj, prec, lam_j)
    keys = jax.random.split(jax.random.PRNGKey(seed), 2 * K).reshape(K, 2, -1)
    start = jnp.asarray(theta0[0], dtype=dt)

    t0 = time.perf_counter()
    lowered = jax.jit(warmup).lower(keys[0, 0], start, *data)
    warmup_exe = lowered.compile()
    sample_exe = jax.jit(sample).lower(keys[0, 1], *lowered.out_info[:4], *data).compile()
    compile_seconds = time.perf_counter() - t0

    samples = np.empty((K, n_samples, Q), dtype=np.dtype(dtype))
    warm_s, samp_s = np.zeros(K), np.zeros(K)
    step_size, L, accept, energy_var = np.zeros(K), np.zeros(K), np.zeros(K), np.zeros(K)
    steps_w, steps_s = np.zeros(K, dtype=np.int64), np.zeros(K, dtype=np.int64)
    div_s = np.zeros(K, dtype=np.int64)
    inv_mass = np.zeros((K, Q))
    for k in range(K):
        position = jnp.asarray(theta0[k], dtype=dt)
        t0 = time.perf_counter()
        out = jax.block_until_ready(warmup_exe(keys[k, 0], position, *data))
        warm_s[k] = time.perf_counter() - t0
        state, eps, ell, imm = out[:4]
        t0 = time.perf_counter()
        res = jax.block_until_ready(sample_exe(keys[k, 1], state, eps, ell, imm, *data))
        samp_s[k] = time.perf_counter() - t0
        samples[k] = np.asarray(res[0])
        steps_w[k], steps_s[k] = warmup_steps(out), int(res[1])
        accept[k], div_s[k], energy_var[k] = float(res[2]), int(res[3]), float(res[4])
        step_size[k], L[k], inv_mass[k] = float(eps), float(ell), np.asarray(imm)

    g = GRADS_PER_INTEGRATION_STEP
    return {
        "samples": samples,
        "warmup_seconds": float(warm_s.sum()),
        "sampling_seconds": float(samp_s.sum()),
        "compile_seconds": compile_seconds,
        "n_grad_evals": int(g * (steps_w.sum() + steps_s.sum()) + K),
        "n_grad_evals_warmup": g * steps_w,
        "n_grad_evals_sampling": g * steps_s,
        "n_integration_steps_warmup": steps_w,
        "n_integration_steps_sampling": steps_s,
        "n_warmup_transitions": n_tune,
        "step_size": step_size,
        "L": L,
        "inverse_mass_matrix": inv_mass,
        "acceptance_rate": accept,
        "n_divergent": div_s,
        "n_divergent_warmup": None,
        "energy_variance_per_dim": energy_var,
        "warmup_seconds_per_chain": warm_s,
        "sampling_seconds_per_chain": samp_s,
        "algorithm": "adjusted_mclmc" if adjusted else "mclmc",
        "integrator": "isokinetic_mclachlan",
        "grads_per_integration_step": g,
        "thin": thin,
        "versions": versions(),
    }
