"""Rows in chunks: the memory bound of the summaries and predictions over ``S`` draws.

The fitted summaries and the predictions read the outputs of every retained
draw at every row, ``S`` values per row. Held for all ``n`` rows at once they
take ``8 S n`` bytes per array (S = 700 draws, four chains' default: 5.6 GB at n = 10^6), so the
estimators read the rows in chunks, each chunk's ``(S, rows)`` arrays within
:data:`CHUNK_BYTES`, and keep only per-row (size ``n``) and per-draw (size
``S``) results across chunks.

The network is evaluated on fixed blocks of :data:`ROW_BLOCK` rows and
:data:`FORWARD_ELEMENTS` activations: torch's float32 matrix products give a
row slightly different bits in batches of different shapes, so fixed blocks
(and chunks made of whole blocks) make every output, hence every summary,
the same however the rows are chunked.
"""

__all__ = ["CHUNK_BYTES", "ROW_BLOCK", "FORWARD_ELEMENTS", "row_chunks", "draws_per_call"]

#: bytes that the float64 ``(S, rows)`` arrays of one chunk of rows may take together
CHUNK_BYTES = 128 * 2**20
#: rows of one evaluation of the network; a chunk holds whole blocks (at least one)
ROW_BLOCK = 512
#: activations (draws x rows x widest layer) of one evaluation of the network
FORWARD_ELEMENTS = 2**22


def row_chunks(n_rows, n_draws, width):
    """Consecutive slices of whole :data:`ROW_BLOCK` blocks of rows covering ``range(n_rows)``.

    Parameters
    ----------
    n_rows : int
    n_draws : int
        ``S``, the draws evaluated at every row.
    width : float
        How many float64 arrays of shape ``(S, rows)`` the caller holds at
        once (its largest intermediate results), so that a chunk takes at
        most :data:`CHUNK_BYTES` (one block of rows is the smallest chunk).

    Returns
    -------
    list of slice

    Examples
    --------
    >>> row_chunks(1200, n_draws=400, width=4096)
    [slice(0, 512, None), slice(512, 1024, None), slice(1024, 1200, None)]
    >>> row_chunks(1200, n_draws=400, width=4)
    [slice(0, 1200, None)]
    """
    per_row = 8.0 * max(1, n_draws) * max(width, 1e-300)
    rows = max(1, int(CHUNK_BYTES // per_row) // ROW_BLOCK) * ROW_BLOCK
    return [slice(start, min(start + rows, n_rows)) for start in range(0, n_rows, rows)]


def draws_per_call(widest_layer):
    """Draws evaluated in one call of the network on a block of :data:`ROW_BLOCK` rows."""
    return max(1, FORWARD_ELEMENTS // (ROW_BLOCK * max(1, widest_layer)))
