"""The criteria of equally weighted posterior draws at a temperature, from the model's outputs.

Tempered SMC reports them at every stage (:class:`~skgibbs.samplers.SMC`),
so that one run compares temperatures by WAIC and functional variance.
They read the model's outputs on the data (a potential with
``has_outputs``); other potentials have none.
"""

import math

import numpy as np
import torch

from ..model import SCALE_LOSSES, log_density_constant, per_example_loss
from ._waic import waic

__all__ = ["stage_criteria"]


#: elements of the widest ``(P, rows, width)`` array a block of the stage criteria holds at once
CRITERIA_BLOCK = 1 << 22


def _blocks(potential, theta):
    """Blocks ``(P, rows)`` of what the stage criteria read, float64, and their kind.

    ``"gaussian"``: the residuals ``y_i - f_theta(x_i)`` of the squared loss;
    ``"log_loss"``: ``log p_theta(y_i | x_i)`` of another loss (the
    cross-entropy; ``-(l_i + log 2 pi) / 2`` of the mean and log-variance
    loss ``"gaussian"``, and its Student-t counterpart ``"student"``). None for a potential without model outputs.
    """
    if not getattr(potential, "has_outputs", False):
        return None, None
    P, squared = theta.shape[0], potential.loss == "squared"

    def outputs():
        with torch.no_grad():
            for rows, X, y in potential.row_blocks(P, CRITERIA_BLOCK):
                out = potential.outputs(theta, X)
                if squared:
                    yield rows, (y - out.reshape(P, -1)).double()
                else:
                    y_rows = y.expand(out.shape[:2]) if y.dim() == 1 else y
                    losses = per_example_loss(potential.loss, out, y_rows).double()
                    if potential.loss in SCALE_LOSSES:  # twice the negative log-density, less a constant
                        losses = 0.5 * losses + log_density_constant(potential.loss)
                    yield rows, -losses

    return ("gaussian" if squared else "log_loss"), outputs


def stage_criteria(potential, theta, temperature):
    """WAIC, functional variance and training losses of equally weighted particles at ``temperature``.

    The particles ``theta`` (``(P, Q)``) are draws of the Gibbs posterior at
    ``temperature`` (the estimators' scale: ``lambda = n / temperature``).
    The values are those a fitted estimator computes from its draws
    (:mod:`skgibbs.criteria`), with the likelihood its loss implies:

    - squared loss (``"gaussian"``): ``N(y_i; f_theta(x_i), sigma^2)`` with
      ``sigma^2`` the posterior mean of the mean squared residual
      (``noise_variance``, on the scale of the potential's ``y``); it enters
      the Gibbs posterior with the power ``2 sigma^2 / temperature``;
    - cross-entropy (``"log_loss"``): ``p_theta(y_i | x_i)``, with the power
      ``1 / temperature``;
    - mean and log-variance (``"gaussian"`` loss, ``"log_loss"`` too):
      ``N(y_i; m_theta(x_i), exp(s_theta(x_i)))``, with the power
      ``2 / temperature``; likewise the Student-t of the ``"student"`` loss.

    Returns a dict of floats: ``generalization_loss`` (minus Watanabe's
    WAIC per example, its penalty scaled by the power: the estimators'
    ``generalization_loss_``), ``functional_variance`` (``sum_i Var
    log p(y_i | theta)``, their ``lfv_``), ``train_loss`` (of the posterior
    mean prediction, per example: their ``train_loss_``) and
    ``langevin_waic`` (``train_loss + functional_variance / n``), with
    ``noise_variance`` for the squared loss; an empty dict for a potential
    with another loss. With the potential's example weights ``w_i`` every
    sum over the examples is weighted and ``n`` is ``sum_i w_i``. Squared
    residuals enter in float64; one pass over
    the rows for the cross-entropy, two for the squared loss (the power
    needs ``sigma^2`` first).
    """
    kind, blocks = _blocks(potential, theta)
    if kind is None:
        return {}
    P, n = theta.shape[0], potential.total_weight
    weights = None if potential.weight is None else potential.weight.double().cpu()

    def weighted(values, rows):
        """``values`` ``(..., rows)`` (a tensor or an array) times the rows' weights (as they are without weights)."""
        if weights is None:
            return values
        return values * (weights[rows].numpy() if isinstance(values, np.ndarray) else weights[rows].to(values))

    out = {}
    if kind == "gaussian":
        sq = fbar_sq = 0.0
        for rows, R in blocks():
            sq += float(weighted(R * R, rows).sum())
            fbar_sq += float(weighted(R.mean(0) ** 2, rows).sum())
        sigma2 = max(sq / (P * n), 1e-300)
        power, out["noise_variance"] = 2.0 * sigma2 / temperature, sigma2
        out["train_loss"] = fbar_sq / (2.0 * sigma2 * n)

        def log_lik():
            for rows, R in blocks():
                yield rows, -0.5 * R * R / sigma2 - 0.5 * math.log(2.0 * math.pi * sigma2)

    else:
        power, log_lik = (2.0 if potential.loss in SCALE_LOSSES else 1.0) / temperature, blocks
    elpd = penalty = 0.0
    for rows, L in log_lik():
        block = waic(L.cpu().numpy(), beta=power)  # WAIC is a sum over rows: blocks add up
        elpd += float(weighted(block.elpd_pointwise, rows).sum())
        penalty += float(weighted(block.p_pointwise, rows).sum())
    log_pbar = elpd + power * penalty  # sum_i log mean_k p(y_i | theta_k)
    if kind == "log_loss":
        out["train_loss"] = -log_pbar / n  # the log loss of the posterior predictive
    out["generalization_loss"] = -elpd / n
    out["functional_variance"] = penalty
    out["langevin_waic"] = out["train_loss"] + penalty / n
    return out
