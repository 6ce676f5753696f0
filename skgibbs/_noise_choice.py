"""``noise="auto"``: the regressor's noise model chosen by the held-out log-likelihood of short pre-trainings.

Every noise model the settings allow (:data:`CANDIDATES`, in order of
richness) is pre-trained from the chains' Glorot starts by
:func:`~skgibbs._pretrain.pretrain` under its own loss, with Adam at
:data:`SCHEDULE` alone (the slow half of the fit's pre-training, which
levels off in about 550 steps where the pair takes twice that), on the
same training rows and stopped early on the same held-out rows
(:func:`~skgibbs._pretrain.held_out_split`). Each is scored by the
log-density, at every held-out row, of the equal mixture of its
pre-trained networks' predictive distributions:

- ``"homoscedastic"``: each network's normal of one variance;
- ``"heteroscedastic"``, ``"student"``: each network's normal, or t of
  :data:`~skgibbs.model.STUDENT_DF` degrees of freedom, with its second
  output as log variance, or log squared scale.

Each network's noise level is then fitted on the held-out rows: the
factor of its variances (squared scales for the t) that maximises their
log-likelihood, which for one variance is the held-out mean squared error,
the variance the fit itself plugs in (``temperature="plug-in"`` is twice
the held-out loss) or starts a learned noise from. Fitting one number per
network flatters every candidate alike, by about ``1/m`` nats per row on
``m`` held-out rows, and cancels in their differences; without it the
comparison would be between levels, not shapes: the varying models learn
their variance from the training rows, whose residuals the network has
partly fitted, and come out too narrow for new rows.

The rule (:func:`choose`) prefers the simpler model: it starts from the
first candidate and moves to each richer one in turn only when the mean
of the per-row differences of held-out log-densities, richer less
current, exceeds :data:`MARGIN_SE` of its standard errors (the sd of the
differences over ``sqrt(m)``, paired, as both are scored on the same
rows); between the normal and the t, the t must beat the normal, its
limit. One standard error, not two or three: the evidence is biased
towards the simpler model, as a network with a second output overfits
its variance on a few hundred rows before early stopping catches it. On
simulated data at ``n = 500`` (``tests/test_noise_auto.py``) the varying
models scored below one variance on all ten seeds of a constant noise,
and a margin of two standard errors missed a Student-t noise on seven of
ten seeds (one, on one).
"""

import sys

import numpy as np
import torch
from scipy.optimize import minimize_scalar
from scipy.special import logsumexp

from ._pretrain import glorot_draws, held_out_split, pretrain
from ._threads import torch_threads
from .criteria import gaussian_log_likelihood, student_log_likelihood
from ._noise_model import NoiseModel
from .model import LOG_VARIANCE_BOUND, MLPSpec
from .plan import hidden_layers

__all__ = [
    "CANDIDATES",
    "HETEROSCEDASTIC_ROWS",
    "MARGIN_SE",
    "MIN_HELD_OUT",
    "SCHEDULE",
    "allowed_noise",
    "choose",
    "resolve_noise",
    "select_noise",
]

#: training rows from which ``noise="auto"`` is ``"student"`` (a noise scale per input) when it has no
#: held-out evidence to choose by (``pretrain_iter=0``): the ``tabular`` benchmark's large tables all
#: scored better with the noise varying, while on the small data sets of ``uq`` its chains mixed worse
#: (the estimator guide has the numbers)
HETEROSCEDASTIC_ROWS = 10_000

#: the noise models ``noise="auto"`` chooses among, simplest first
CANDIDATES = ("homoscedastic", "heteroscedastic", "student")
#: standard errors of the paired per-row difference by which a richer noise model must beat the current choice
MARGIN_SE = 1.0
#: held-out rows below which the held-out evidence is too thin to choose by (the fit then keeps the row rule)
MIN_HELD_OUT = 50
#: Adam's learning-rate schedule of the choice's pre-trainings (the slow one of the fit's pair)
SCHEDULE = ((1e-3,),)
#: networks pre-trained per candidate (the first chains' starts)
MAX_STARTS = 4

RULE = (
    "candidates in order homoscedastic < heteroscedastic < student; starting from the first, a richer one "
    "replaces the current choice when its held-out log-likelihood per row exceeds the current choice's by "
    "more than {margin:g} standard errors of the paired per-row difference"
)


def held_out_log_density(noise, out, y, sample_weight=None):
    """Per-row log-density ``(m,)`` of the equal mixture of ``K`` pre-trained networks at held-out rows.

    ``out`` holds the networks' outputs ``(K, m)`` (one output) or ``(K,
    m, 2)`` (location and log variance or log squared scale), ``y`` the
    standardized targets ``(m,)``; the scale is the standardized one.
    Each network's noise level is fitted to the rows weighted by
    ``sample_weight`` ``(m,)`` (all 1 when None).
    """
    out, y = np.asarray(out, dtype=np.float64), np.asarray(y, dtype=np.float64)
    model = NoiseModel(noise)
    if not model.varies:
        mean, variance = out, np.ones_like(out)
    else:
        mean, variance = out[..., 0], np.exp(np.clip(out[..., 1], -LOG_VARIANCE_BOUND, LOG_VARIANCE_BOUND))
    df = model.df
    log_p = np.stack([_calibrated(y, f, v, df, sample_weight) for f, v in zip(mean, variance)])
    return logsumexp(log_p, axis=0) - np.log(out.shape[0])


def _log_density(y, f, v, df):
    if df is None:
        return gaussian_log_likelihood(y, f[None], v[None])[0]
    return student_log_likelihood(y, f[None], v[None] * df / (df - 2.0), df)[0]


def _calibrated(y, f, v, df, w=None):
    """Per-row log-density of one network's noise of shape ``v`` (variances or squared scales), its level fitted.

    The factor ``c`` of ``c v`` that maximises the rows' log-likelihood:
    ``mean((y - f)^2 / v)`` for the normal, a one-dimensional search for
    the t; the rows weighted by ``w`` when given.
    """
    z = (y - f) ** 2 / v
    if df is None:
        return _log_density(y, f, v * max(z.mean() if w is None else w @ z / w.sum(), 1e-12), df)
    w = np.ones_like(y) if w is None else w
    fit = minimize_scalar(lambda a: -(w @ _log_density(y, f, v * np.exp(a), df)), bounds=(-30.0, 30.0),
                          method="bounded", options={"xatol": 1e-6})  # fmt: skip
    return _log_density(y, f, v * np.exp(fit.x), df)


def _paired(richer, simpler, w=None):
    """Mean and standard error of the per-row differences ``richer - simpler`` (rows weighted by ``w``).

    With weights, the mean and the standard error of the rows repeated by
    integer weights: ``m = sum w`` rows, ``ddof=1``.
    """
    d = richer - simpler
    if w is not None:  # rows of weight 0 count for nothing, a non-finite one among them too
        d, richer = d[w > 0], richer[w > 0]
        w = w[w > 0]
    if not np.all(np.isfinite(d)):
        return (-np.inf if not np.all(np.isfinite(richer)) else np.inf), np.nan
    if w is None:
        se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else np.nan
        return float(d.mean()), float(se)
    m = float(w.sum())
    mean = float(w @ d / m)
    se = np.sqrt(w @ (d - mean) ** 2 / (m - 1) / m) if m > 1 else np.nan
    return mean, float(se)


def choose(log_density, margin=MARGIN_SE, sample_weight=None):
    """The noise model the held-out evidence picks, and the evidence.

    Parameters
    ----------
    log_density : dict
        Candidate name to its per-row held-out log-densities ``(m,)``, on
        the same rows, simplest candidate first.
    margin : float, default=MARGIN_SE
        Standard errors of the paired difference a richer candidate must
        win by.
    sample_weight : array-like of shape (m,), default=None
        Weights of the rows: the means and standard errors of the rows
        repeated by integer weights (all 1 when None).

    Returns
    -------
    winner : str
    evidence : dict
        ``held_out_log_likelihood`` (name to its mean per row),
        ``differences`` and ``standard_errors`` (``"richer - simpler"`` to
        the mean and standard error of the paired per-row differences, for
        every pair), ``n_held_out``, ``margin_se``, ``rule``, ``winner``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> base = rng.normal(size=200)
    >>> better = base + 0.3 + 0.1 * rng.normal(size=200)
    >>> winner, evidence = choose({"homoscedastic": base, "heteroscedastic": better})
    >>> winner, evidence["n_held_out"]
    ('heteroscedastic', 200)
    >>> choose({"homoscedastic": base, "heteroscedastic": base + 0.001 * rng.normal(size=200)})[0]
    'homoscedastic'
    """
    names = list(log_density)
    arrays = {name: np.asarray(log_density[name], dtype=np.float64) for name in names}
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    differences, errors = {}, {}
    for i, simpler in enumerate(names):
        for richer in names[i + 1 :]:
            key = f"{richer} - {simpler}"
            differences[key], errors[key] = _paired(arrays[richer], arrays[simpler], w)
    winner = names[0]
    for name in names[1:]:
        mean, se = _paired(arrays[name], arrays[winner], w)
        # inf: the current choice's density is not finite; a zero spread is no evidence
        if mean == np.inf or (se > 0 and mean > margin * se):
            winner = name
    evidence = {
        "held_out_log_likelihood": {
            name: float(np.mean(arrays[name]) if w is None else w @ arrays[name] / w.sum()) for name in names
        },
        "differences": differences,
        "standard_errors": errors,
        "n_held_out": int(len(arrays[names[0]])),
        "margin_se": float(margin),
        "rule": RULE.format(margin=margin),
        "winner": winner,
    }
    return winner, evidence


def resolve_noise(params, data):
    """``(noise_, noise_selection_)``: the regressor's noise model for settings ``params`` on ``data``, and why.

    A given ``noise`` is kept (no evidence). Under ``"auto"`` the
    candidates the temperature allows are compared (:func:`select_noise`);
    without held-out evidence the choice is ``"student"`` from
    :data:`HETEROSCEDASTIC_ROWS` training rows on, else one noise variance.
    ``data`` is :func:`~skgibbs.problem.prepare_data`'s; the candidates are
    pre-trained on networks of ``params["hidden_layer_sizes"]``, which
    :func:`~skgibbs.problem.build_problem` passes as the widths the fit
    resolved (``"auto"`` is resolved here without an estimator's bands).
    """
    if params["noise"] != "auto":
        return params["noise"], None
    allowed, why = allowed_noise(params["temperature"])
    rows = "student" if data.X.shape[0] >= HETEROSCEDASTIC_ROWS else "homoscedastic"
    noise, evidence = select_noise(params, data, allowed, fallback=rows if rows in allowed else allowed[0])
    return noise, evidence if why is None else {**evidence, "reason": why}


def allowed_noise(temperature):
    """The noise models ``noise="auto"`` may choose under ``temperature``, and why not the others (None: all)."""
    if temperature == "plug-in":  # a plug-in temperature has one variance to plug in
        return ("homoscedastic",), "temperature='plug-in' plugs in one noise variance"
    if not isinstance(temperature, str):  # the tempered squared loss: 2 sigma^2 of one variance
        return ("homoscedastic",), "a given temperature is twice one noise variance (the squared loss)"
    return CANDIDATES, None


def select_noise(params, data, allowed=CANDIDATES, fallback="homoscedastic"):
    """The noise model of a fit of settings ``params`` on ``data`` under ``noise="auto"``, and the evidence.

    ``data`` is the fit's :class:`~skgibbs.problem.FitData`
    (:func:`~skgibbs.problem.prepare_data`). ``allowed`` are the
    candidates the settings permit; ``fallback`` is the choice without
    held-out evidence (``pretrain_iter=0``, or fewer than
    :data:`MIN_HELD_OUT` held-out rows), which the evidence's ``reason``
    then gives. The pre-trainings run on the fit's device, with its seeds
    (the fit's own pre-training holds out the same rows), and are not kept.
    With weights (``data.sample_weight``) the pre-trainings, the noise
    levels and the held-out evidence are weighted as the fit is.
    """
    allowed = tuple(name for name in CANDIDATES if name in allowed)
    base = {"candidates": allowed, "margin_se": float(MARGIN_SE), "rule": RULE.format(margin=MARGIN_SE)}
    if len(allowed) == 1:
        return allowed[0], {**base, "winner": allowed[0], "reason": "the only noise model the settings allow"}
    if params["pretrain_iter"] == 0:
        reason = "pretrain_iter=0: no held-out rows to choose by"
        return fallback, {**base, "winner": fallback, "reason": reason}
    Xt, yt, embedding, device, weights = data.Xt, data.yt, data.embedding, data.device, data.sample_weight
    y_scale = data.encoding["y_scale_"]
    wt = None if weights is None else torch.as_tensor(weights, dtype=torch.float32, device=device)
    seeds = data.seeds
    _, val, _ = held_out_split(Xt.shape[0], int(seeds[0]), device)
    if len(val) < MIN_HELD_OUT:
        reason = f"{len(val)} held-out rows, fewer than the {MIN_HELD_OUT} the choice needs"
        return fallback, {**base, "winner": fallback, "reason": reason}
    layers = hidden_layers(params["hidden_layer_sizes"], Xt.shape[0])
    X_val, y_val = Xt[val], yt[val].cpu().numpy()
    w_val = None if weights is None else weights[val.cpu().numpy()]
    if w_val is not None and not w_val.any():
        w_val = None  # held-out rows all of weight 0: judged unweighted, as the pre-training judges them
    log_density = {}
    with torch_threads(device):
        for name in allowed:
            model = NoiseModel(name)
            spec = MLPSpec(Xt.shape[1], layers, params["activation"], model.n_outputs, embedding)
            theta = glorot_draws(spec, seeds, device)[:MAX_STARTS]
            theta, _, _ = pretrain(spec, theta, Xt, yt, params["pretrain_iter"], int(seeds[0]), lr=SCHEDULE,
                                   loss=model.loss, weight=wt)  # fmt: skip
            with torch.no_grad():
                out = spec.forward(theta, X_val).cpu().numpy()
            # on the scale of y: the density of y is that of the standardized target over y_scale
            log_density[name] = held_out_log_density(name, out, y_val, w_val) - np.log(y_scale)
    winner, evidence = choose(log_density, sample_weight=w_val)
    if params["verbose"]:
        scores = ", ".join(f"{k} {v:.4f}" for k, v in evidence["held_out_log_likelihood"].items())
        print(f"[skgibbs] noise='auto': {winner} (held-out log-likelihood per row: {scores}).",
              file=sys.stderr)  # fmt: skip
    return winner, {**base, **evidence, "reason": "held-out log-likelihood of the pre-trained networks"}
