"""Posterior draws as ArviZ data, for ArviZ 0.x (``InferenceData``) and 1.x (``DataTree``).

ArviZ stays optional: it is imported only when a user asks for the
conversion.
"""

__all__ = ["from_groups"]


def _arviz():
    try:
        import arviz
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("to_arviz() needs ArviZ: pip install arviz") from exc
    return arviz


def from_groups(groups, dims=None, coords=None):
    """Build ArviZ data from ``{group: {variable: array}}``.

    Every array of the ``posterior``, ``sample_stats`` and ``log_likelihood``
    groups starts with the dimensions ``(chain, draw)``.

    Parameters
    ----------
    groups : dict of str to dict of str to ndarray
    dims : dict of str to list of str, default=None
        Names of the trailing dimensions of each variable.
    coords : dict of str to array-like, default=None

    Returns
    -------
    arviz.InferenceData (ArviZ 0.x) or xarray.DataTree (ArviZ 1.x)
    """
    az = _arviz()
    groups = {name: vars_ for name, vars_ in groups.items() if vars_}
    major = int(str(az.__version__).split(".")[0])
    if major >= 1:  # 1.x: one mapping of groups, positional
        return az.from_dict(groups, dims=dims, coords=coords)
    return az.from_dict(**groups, dims=dims, coords=coords)
