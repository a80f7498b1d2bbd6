"""Cyclic coordinate descent for KL-NMF with scalar Newton steps.

The KL objective restricted to one entry of ``W`` (all else fixed) is the
convex function of one variable

.. math::

    f(w) = c\\,w - \\sum_{t} x_t \\log\\bigl(y_t + (w - w_0) h_t\\bigr)
    + \\text{const}, \\qquad c = \\textstyle\\sum_w H_{jw},

over the stored entries ``t`` of the row, with ``y = W H`` there and
``h_t`` the entries of ``H``'s row ``j`` at them (Hsieh & Dhillon, KDD
2011).  Its Newton step is ``w - f'(w) / f''(w)`` with

.. math::

    f'(w) = c - \\sum_t \\frac{x_t h_t}{y_t}, \\qquad
    f''(w) = \\sum_t \\frac{x_t h_t^2}{y_t^2},

projected on ``w >= 0``.  For a fixed component ``j`` the entries
``W[:, j]`` are independent problems (one per row), so a whole column is
updated at once from per-entry arrays and per-row sums; the same holds for
a row of ``H`` with per-column sums.  A sweep updates the ``k`` columns of
``W`` in turn, then the ``k`` rows of ``H``, keeping ``y`` current at the
stored entries: O(nnz k) work, no dense ``W H``.

Since ``f''`` decreases in ``w``, a Newton step that raises ``w`` lands at or
short of the minimizer and lowers ``f``; a step that lowers ``w`` may
overshoot.  Such a step is accepted where the trapezoid bound shows that it
lowers ``f`` (``f'`` is concave, so ``f(w) - f(new) >= (w - new) (f'(w) +
f'(new)) / 2``, and ``f'(w) + f'(new) >= 0`` suffices), else checked on the
exact change of ``f`` (one logarithm per entry) and, where ``f`` would rise,
replaced by the multiplicative (majorization-minimization) step ``w
\\sum_t x_t h_t / y_t / c``, which never raises it.  The objective therefore
never rises.  A coordinate takes up to `NEWTON_STEPS` such steps per sweep,
another one only while the last Newton proposal moved it by more than
`AGAIN` times its value.
"""

import numpy as np

from ._backend import twins
from ._scale import _SMALLEST, _VANISHING_REST, AGAIN, CD_WORK, NEWTON_STEPS, rescaled
from .divergence import model_and_ratio_log_sums
from .products import product_at_nonzeros


def _sums(index, values, size):
    """Sums of ``values`` per segment (row or column) ``index``."""
    return np.bincount(index, weights=values, minlength=size)


def _newton_pass(x, y, index, factor, values, linear, active):
    """Newton steps on ``values`` (one per segment) for one component.

    ``x`` and ``y`` are the data and the model at the stored entries (in
    float64), ``index`` each entry's segment, ``factor`` the other factor's
    entries of this component at the stored entries, ``linear`` the scalar
    ``c``; only the segments where ``active`` is true move.  Returns the new
    values, the new ``y`` (both new arrays) and where the Newton proposal
    moved an active value by more than `AGAIN` times it.
    """
    size = values.shape[0]
    # Where the model is tiny (down to float64's smallest normal) these
    # overflow to inf: the proposal is then not finite, or no move, and the
    # value is kept (below).
    with np.errstate(over="ignore", invalid="ignore"):
        u = factor / y
        a = x * u
        gain = _sums(index, a, size)
        a *= u
        curvature = _sums(index, a, size)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        newton = values - (linear - gain) / curvature
    # A segment without stored entries (or where the factor is zero at all of
    # them) only costs c * w: its minimizer is 0.
    new = np.where(curvature > 0, np.maximum(newton, 0), 0)
    new = np.where(np.isfinite(new) & active, new, values)
    again = np.abs(new - values) > AGAIN * values
    # The model moves by d f at each entry (d the segment's change).
    y_new = y + (new - values)[index] * factor
    down = new < values
    if down.any():
        # Where the step lowers w it may overshoot.  f' is concave, so
        # f(w) - f(new) is at least the trapezoid (w - new) (f'(w) +
        # f'(new)) / 2: the step lowers f where f'(w) + f'(new) >= 0, and only
        # elsewhere is the exact change of f (a logarithm per entry) needed.
        # A model that would vanish (a relative change within rounding of
        # -1, or below) counts as a rise.
        fails = np.bincount(index[y_new < _VANISHING_REST * y], minlength=size) > 0
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            slope = linear - _sums(index, x * (factor / y_new), size)
            lowers = ~fails & ((linear - gain) + slope >= 0)
        check = down & ~lowers & ~fails
        if check.any():
            at = check[index]
            with np.errstate(divide="ignore", invalid="ignore"):
                t = (new - values)[index[at]] * u[at]
                change = linear * (new - values) - _sums(
                    index[at], x[at] * np.log1p(t), size
                )
            lowers |= check & (change <= 0)
        rises = down & ~lowers
        if rises.any():
            # Majorization-minimization instead: never raises f.  (A gain
            # below zero only comes from a model rounded below zero.)
            with np.errstate(over="ignore", invalid="ignore"):
                safe = values * (np.maximum(gain, 0) / linear)
            keep = np.where(rises, values, new)
            new = np.where(rises & np.isfinite(safe), safe, keep)
            y_new = y + (new - values)[index] * factor
    # The model W H is non-negative; a value that cancellation rounded to
    # zero or below is kept at the smallest normal number, so that the
    # derivatives stay finite and of the right sign.
    return new, np.maximum(y_new, _SMALLEST), again


def _newton_steps(x, y, index, factor, values, linear):
    """`NEWTON_STEPS` passes of `_newton_pass` on one component, each after
    the first on the segments still moving, over their entries only."""
    values, y, active = _newton_pass(
        x, y, index, factor, values, linear, np.ones(values.shape[0], dtype=bool)
    )
    for _ in range(NEWTON_STEPS - 1):
        if not active.any():
            break
        at = active[index]
        values, y_at, active = _newton_pass(
            x[at], y[at], index[at], factor[at], values, linear, active
        )
        y[at] = y_at
    return values, y


def cd_sweep(X, W, H, y=None):
    """One sweep of cyclic coordinate descent: the columns of ``W``, then the
    rows of ``H``.

    Parameters
    ----------
    X : scipy.sparse CSR matrix of shape (n_samples, n_features)
    W : ndarray of shape (n_samples, k)
    H : ndarray of shape (k, n_features)
    y : ndarray of shape (X.nnz,), default=None
        ``W @ H`` at the stored entries of ``X`` (computed if not given).

    Returns
    -------
    W_new, H_new : the factors after the sweep (new arrays, dtype kept).
    y_new : ndarray of shape (X.nnz,), ``W_new @ H_new`` at the stored entries.
    """
    if (fast := twins(X, W.shape[1] * CD_WORK)) is not None:
        return fast.cd_sweep(X, W, H, y)
    dtype = np.result_type(W.dtype, H.dtype)
    n, m = X.shape
    k = W.shape[1]
    if y is None:
        y = product_at_nonzeros(X, W, H)
    # Per-entry work in float64 whatever the dtype: the curvature's
    # x h^2 / y^2 would overflow float32 where the model is small.
    y = np.maximum(y.astype(np.float64), np.finfo(np.float64).tiny)
    x = X.data.astype(np.float64)
    rows = np.repeat(np.arange(n, dtype=np.intp), np.diff(X.indptr))
    cols = X.indices
    Wt = np.array(W.T, dtype=np.float64, order="C")
    H_new = np.array(H, dtype=np.float64, order="C")
    h_sum = H_new.sum(axis=1)
    for j in range(k):
        if h_sum[j] > 0:
            Wt[j], y = _newton_steps(x, y, rows, H_new[j][cols], Wt[j], h_sum[j])
    w_sum = Wt.sum(axis=1)
    for j in range(k):
        if w_sum[j] > 0:
            H_new[j], y = _newton_steps(x, y, cols, Wt[j][rows], H_new[j], w_sum[j])
    return rescaled(x, y, Wt, H_new, dtype)


def cd_pass(X, W, H, y=None):
    """`cd_sweep` as the fit loop uses it: ``(W_new, H_new, sums, y_new)``.

    ``sums = (sum x log r, sum x)`` of the ratio ``r = X / (W H)`` of the
    incoming state (`ratio_log_sums`), from which its objective follows
    (`kl_divergence_from_sums`).  ``y``, if known, is the model of the
    incoming state at the stored entries (the previous pass's ``y_new``).
    ``y_new`` is always None: the sweep updates its model entry by entry,
    floored and within rounding of the factors', not as the next pass's
    objective must be computed (as `dn_pass` returns it).
    """
    if (fast := twins(X, W.shape[1] * CD_WORK)) is not None:
        return fast.cd_pass(X, W, H, y)
    y, sums = model_and_ratio_log_sums(X, W, H, y)
    W_new, H_new, _ = cd_sweep(X, W, H, y)
    return W_new, H_new, sums, None
