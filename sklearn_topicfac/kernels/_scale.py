"""The last step of a coordinate-descent sweep, shared by both backends."""

import numpy as np


def rescaled(x, y, Wt, H, dtype):
    """``(W, H, y)`` of a sweep, in ``dtype``, after the best common scale.

    The scale ``alpha`` with ``sum(alpha W H) = sum(X)`` is the exact
    minimizer of the objective along ``alpha W H``, so it never raises it.
    """
    total = float(Wt.sum(axis=1) @ H.sum(axis=1))
    if total > 0:
        alpha = float(x.sum()) / total
        Wt *= alpha
        y *= alpha
    return (
        np.ascontiguousarray(Wt.T, dtype=dtype),
        H.astype(dtype, copy=False),
        y.astype(dtype, copy=False),
    )
