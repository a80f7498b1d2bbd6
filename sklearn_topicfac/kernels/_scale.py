"""What both backends' coordinate-descent sweeps share: their constants and
their last step."""

import numpy as np

# Checked Newton steps per coordinate and sweep: a coordinate takes another
# step from where the last landed while the last one's Newton proposal moved
# it by more than `AGAIN` times its value.  The second step costs one more
# pass over the segment's entries where it runs, and makes the sweeps far
# fewer on real corpora; the coordinates that moved less would gain little
# from it (``docs/real_text.md``).
NEWTON_STEPS = 2
AGAIN = 0.01

# A relative change of the model within rounding of -1 (the model vanishes).
_VANISHING_REST = 8 * np.finfo(np.float64).eps
# The floor of the model at the stored entries (float64's smallest normal).
_SMALLEST = np.finfo(np.float64).tiny

# The work of a sweep relative to a multiplicative update's (stored entries
# times k), for the choice of backend (`twins`) and of threads: one sweep
# runs several passes over the entries per component, each half of it
# (``W``, then ``H``) half of them.
CD_WORK = 8


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
