"""JAX reference points for the speed benchmark (the ``bench`` extra), each a ``run(n_steps)`` closure.

:func:`jax_floor` is a jitted ``value_and_grad`` of the batch squared loss, :func:`blackjax_mala`
BlackJAX's ``mala`` on the full-data potential, :func:`jax_csmala` a jitted csMALA step written for
this benchmark; one jitted call a step. XLA needs static shapes, so csMALA's Bernoulli(rho) batch is
drawn as the running sum of ``cap = rho n + 6 sd`` Geometric(rho) gaps (the positions of the successes
of a Bernoulli(rho) sequence), cut at ``n``: the exact Bernoulli law unless more than ``cap`` examples
are drawn (probability below 1e-9 a step). One CPU thread (``XLA_FLAGS`` is set before JAX is imported
unless the caller set it), float32, as the torch variants.
"""

import itertools
import math
import os
from functools import partial

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import jax
import jax.numpy as jnp

__all__ = ["blackjax_mala", "jax_csmala", "jax_floor", "versions"]


def versions():
    out = {"jax": jax.__version__}
    try:
        import blackjax

        out["blackjax"] = blackjax.__version__
    except ImportError:
        out["blackjax"] = None
    return out


@partial(jax.jit, static_argnums=0)
def _init(sizes, key):
    params = []
    for n_in, n_out in itertools.pairwise(sizes):
        key, sub = jax.random.split(key)
        bound = math.sqrt(6.0 / (n_in + n_out))
        params.append((jax.random.uniform(sub, (n_in, n_out), minval=-bound, maxval=bound), jnp.zeros(n_out)))
    return params


def _forward(params, X):
    h = X
    for W, b in params[:-1]:
        h = jax.nn.relu(h @ W + b)
    W, b = params[-1]
    return (h @ W + b)[:, 0]


def _loss_sum(params, X, y, mask=None):
    sq = (y - _forward(params, X)) ** 2
    return jnp.sum(sq if mask is None else sq * mask)


def _log_prior(params, sizes):
    # Gaussian N(0, 1/fan_in) on every weight and bias, as skgibbs' default prior
    return -0.5 * sum(n_in * (jnp.sum(W * W) + jnp.sum(b * b)) for (W, b), n_in in zip(params, sizes[:-1]))


def _looped(step, carry):
    """``run(n)``: ``n`` dispatches of the jitted ``step``, blocking at the end."""
    box = [carry]

    def run(n_steps):
        c = box[0]
        for _ in range(n_steps):
            c = step(c)
        jax.block_until_ready(c)
        box[0] = c

    return run


def jax_floor(X, y, sizes, rho, seed):
    """Jitted forward+backward on one pre-gathered Bernoulli(rho) batch."""
    key = jax.random.PRNGKey(seed)
    Xb, yb = jnp.asarray(X), jnp.asarray(y)
    if rho < 1.0:
        z = jax.random.bernoulli(key, rho, (Xb.shape[0],))
        Xb, yb = Xb[z], yb[z]
    vg = jax.jit(jax.value_and_grad(_loss_sum))
    params = _init(sizes, key)

    def step(carry):
        _, g = vg(params, Xb, yb)
        return g

    return _looped(step, vg(params, Xb, yb)[1])


def blackjax_mala(X, y, sizes, loss_scale, step_size, seed):
    """BlackJAX ``mala`` on ``log pi = -c sum_i l_i + log Pi`` (full data)."""
    import blackjax

    Xj, yj = jnp.asarray(X), jnp.asarray(y)

    def logdensity(params):
        return -loss_scale * _loss_sum(params, Xj, yj) + _log_prior(params, sizes)

    algo = blackjax.mala(logdensity, step_size)

    @jax.jit
    def step(carry):
        key, state = carry
        key, sub = jax.random.split(key)
        state, _ = algo.step(sub, state)
        return key, state

    key = jax.random.PRNGKey(seed)
    return _looped(step, (key, algo.init(_init(sizes, key))))


def jax_csmala(X, y, sizes, rho, loss_scale, batch_offset, step_size, seed):
    """Jitted csMALA step (paper 000, Alg. 1 (c)) with an exact Bernoulli batch."""
    Xj, yj = jnp.asarray(X), jnp.asarray(y)
    n = Xj.shape[0]
    cap = min(n, math.ceil(rho * n + 6 * math.sqrt(n * rho * (1 - rho))))
    h, s = step_size, math.sqrt(2 * step_size)
    value_and_grad = jax.value_and_grad(_loss_sum)
    prior_grad = jax.grad(_log_prior)
    tree = jax.tree_util

    def batch_terms(params, key):
        # the gaps between the successes of a Bernoulli(rho) sequence are Geometric(rho): the first
        # `cap` success positions, cut at n, are the batch, in O(rho n) work and with a static shape
        pos = jnp.cumsum(jax.random.geometric(key, rho, (cap,))) - 1
        mask = pos < n
        idx = jnp.where(mask, pos, 0)
        value, grad = value_and_grad(params, Xj[idx], yj[idx], mask.astype(Xj.dtype))
        return value, grad, jnp.sum(mask)

    def potential(value, size, params):
        return loss_scale * value + batch_offset * size - _log_prior(params, sizes)

    def grad_u(lgrad, params):
        return tree.tree_map(lambda g, p: loss_scale * g - p, lgrad, prior_grad(params, sizes))

    @jax.jit
    def step(carry):
        key, (theta, value, lgrad, size) = carry
        key, k_batch, k_noise, k_u = jax.random.split(key, 4)
        g_cur = grad_u(lgrad, theta)
        leaves, treedef = tree.tree_flatten(theta)
        noise = tree.tree_unflatten(
            treedef,
            [jax.random.normal(k, x.shape) for k, x in zip(jax.random.split(k_noise, len(leaves)), leaves)],
        )
        prop = tree.tree_map(lambda t, g, e: t - h * g + s * e, theta, g_cur, noise)  # (c)(ii)
        value_p, lgrad_p, size_p = batch_terms(prop, k_batch)  # (c)(i)
        g_prop = grad_u(lgrad_p, prop)

        def sq(a, b, g):
            return sum(
                jnp.sum((x - y_ + h * z) ** 2) for x, y_, z in zip(*(tree.tree_leaves(t) for t in (a, b, g)))
            )

        log_q = (sq(prop, theta, g_cur) - sq(theta, prop, g_prop)) / (2 * s * s)
        log_alpha = potential(value, size, theta) - potential(value_p, size_p, prop) + log_q  # (c)(iii)
        accept = jnp.log(jax.random.uniform(k_u)) < jnp.where(jnp.isfinite(log_alpha), log_alpha, -jnp.inf)
        new = tree.tree_map(
            lambda a, b: jnp.where(accept, a, b),
            (prop, value_p, lgrad_p, size_p),
            (theta, value, lgrad, size),
        )
        return key, new

    key = jax.random.PRNGKey(seed)
    theta0 = _init(sizes, key)
    value0, lgrad0, size0 = jax.jit(batch_terms)(theta0, key)
    return _looped(step, (key, (theta0, value0, lgrad0, size0)))
