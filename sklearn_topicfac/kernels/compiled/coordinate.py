"""The twins of `kernels/coordinate.py`: cyclic coordinate descent for
KL-NMF with scalar Newton steps (`cd_sweep`, `cd_pass`).

Why a twin: the NumPy sweep updates a whole column of ``W`` (row of ``H``)
at once from per-entry arrays, so each coordinate's steps and checks cost
several passes over all the stored entries; here each row of ``W`` (column
of ``H``) is its own problem, solved coordinate after coordinate in one
compiled loop over its entries, with the same steps and checks entry by
entry, and the rows (columns) shared by the kernel threads.

Both sweeps read their step settings (``NEWTON_STEPS``, ``AGAIN``) from
``kernels._scale``, as their other shared constants.
"""

import weakref

import numba as nb
import numpy as np

from .._scale import _SMALLEST, _VANISHING_REST, AGAIN, CD_WORK, NEWTON_STEPS, rescaled
from ._common import _JIT, _bounds, _limits, _on_parts, _sum_bounds, _sums
from .divergence import _model_sums
from .products import product_at_nonzeros

# The vanishing test's and the model floor's constants are the NumPy
# sweep's (`_scale`, which both import).
# No contraction: the model's move ``y + d f`` rounds as in NumPy, which
# matters where it cancels (a coordinate projected on zero).
_JIT_CD = dict(_JIT, fastmath={"reassoc"})


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _newton_value(w, c, gain, curvature):
    """The projected Newton step of one coordinate (see `_newton_pass`)."""
    if not curvature > 0:
        return 0.0
    new = w - (c - gain) / curvature
    if not np.isfinite(new):
        return w
    return max(new, 0.0)


@nb.njit(**_JIT_CD)
def _derivatives(x, y, fj, a, size):
    """``(gain, curvature)``: the sums of ``f'`` and ``f''`` of a coordinate
    at the model ``y`` (see `_newton_pass`)."""
    gain = 0.0
    curvature = 0.0
    for i in range(size):
        u = fj[i] / y[a + i]
        xu = x[a + i] * u
        gain += xu
        curvature += xu * u
    return gain, curvature


@nb.njit(**_JIT_CD)
def _moved(x, y, fj, fn, a, size, d, z, own, following):
    """The model ``z`` at the segment's entries after the coordinate moves
    by ``d``; the sums of the derivatives there of this coordinate (when
    ``own``) and of the next one (factor ``fn``, when ``following``); and
    whether the model vanishes (a relative change within rounding of -1,
    or below) somewhere."""
    gain = 0.0
    curvature = 0.0
    gain_n = 0.0
    curvature_n = 0.0
    vanishing = False
    for i in range(size):
        ya = y[a + i]
        za = ya + d * fj[i]
        vanishing |= za < _VANISHING_REST * ya
        # W H is non-negative: cancellation below zero is rounding.
        za = max(za, _SMALLEST)
        z[i] = za
        xa = x[a + i]
        if own:
            u = fj[i] / za
            xu = xa * u
            gain += xu
            curvature += xu * u
        if following:
            u = fn[i] / za
            xu = xa * u
            gain_n += xu
            curvature_n += xu * u
    return gain, curvature, gain_n, curvature_n, vanishing


@nb.njit(**_JIT_CD)
def _cd_segments(ptr, other, x, y, F, V, c, steps, again, s0, s1):
    """The coordinates of segments (rows of ``W`` or columns of ``H``)
    ``s0:s1``: ``V[s, j]`` for every ``j`` in turn, with ``F[other[e], j]``
    the other factor at entry ``e`` of segment ``s`` (entries
    ``ptr[s]:ptr[s + 1]``, contiguous in ``x`` and ``y``) and ``c[j]`` the
    linear coefficient (a component with ``c[j] = 0`` is left alone).  The
    segments are independent problems: their entries, hence their parts of
    ``y``, are disjoint.  Each coordinate takes up to ``steps`` Newton
    steps, each checked where it lowers the value and replaced by the
    multiplicative step where the check fails, and no step after one whose
    Newton proposal moved it by at most ``again`` times its value (see
    `_newton_pass`); ``y`` is kept current.  The pass that moves the model
    also sums the derivatives at the new value that come next: the
    coordinate's own for its check and its next step, or the next
    coordinate's."""
    k = V.shape[1]
    longest = 0
    for s in range(s0, s1):
        longest = max(longest, ptr[s + 1] - ptr[s])
    # The next component that moves after each one (-1: none).
    following = np.full(k, -1)
    nxt = -1
    for j in range(k - 1, -1, -1):
        following[j] = nxt
        if c[j] > 0:
            nxt = j
    # The segment's entries of the other factor, one contiguous row per
    # component, and the model after a trial step.
    f = np.empty((k, longest))
    z = np.empty(longest)
    for s in range(s0, s1):
        a = ptr[s]
        size = ptr[s + 1] - a
        for i in range(size):
            o = other[a + i]
            for j in range(k):
                f[j, i] = F[o, j]
        ready = False
        for j in range(k):
            if not c[j] > 0:
                continue
            fj = f[j]
            n = following[j]
            fn = f[max(n, 0)]
            if not ready:
                gain, curvature = _derivatives(x, y, fj, a, size)
            ready = False
            w = V[s, j]
            for step in range(steps):
                new = _newton_value(w, c[j], gain, curvature)
                d = new - w
                if d == 0:
                    break
                more = step + 1 < steps and abs(d) > again * w
                last = not more and n >= 0
                g, h, g_n, h_n, vanishing = _moved(
                    x, y, fj, fn, a, size, d, z, more or d < 0, last
                )
                if d < 0:
                    # The step may overshoot.  f' is concave, so f(w) -
                    # f(new) is at least the trapezoid (w - new) (f'(w) +
                    # f'(new)) / 2: the step lowers f where f'(w) + f'(new)
                    # >= 0; only elsewhere is the exact change (a logarithm
                    # per entry) needed.  A vanishing model counts as a rise.
                    lowers = not vanishing and (c[j] - gain) + (c[j] - g) >= 0
                    if not lowers and not vanishing:
                        change = c[j] * d
                        for i in range(size):
                            change -= x[a + i] * np.log1p(d * (fj[i] / y[a + i]))
                        lowers = change <= 0
                    if not lowers:
                        # The multiplicative step instead: never raises f.
                        safe = w * (max(gain, 0.0) / c[j])
                        new = safe if np.isfinite(safe) else w
                        d = new - w
                        if d == 0:
                            break
                        g, h, g_n, h_n, _ = _moved(
                            x, y, fj, fn, a, size, d, z, more, last
                        )
                for i in range(size):
                    y[a + i] = z[i]
                w = new
                if not more:
                    if last:
                        gain, curvature, ready = g_n, h_n, True
                    break
                gain, curvature = g, h
            V[s, j] = w


@nb.njit(cache=True, nogil=True)
def _column_order(indptr, indices, m):
    """The entries of a CSR matrix in column order: ``(col_ptr, order,
    rows)``, ``order[e]`` the CSR position of column-ordered entry ``e``
    and ``rows[e]`` its row (a counting sort, stable within columns)."""
    nnz = indices.shape[0]
    col_ptr = np.zeros(m + 1, dtype=np.int64)
    for e in range(nnz):
        col_ptr[indices[e] + 1] += 1
    for col in range(m):
        col_ptr[col + 1] += col_ptr[col]
    fill = col_ptr[:-1].copy()
    order = np.empty(nnz, dtype=np.int64)
    rows = np.empty(nnz, dtype=np.int64)
    for r in range(indptr.shape[0] - 1):
        for e in range(indptr[r], indptr[r + 1]):
            p = fill[indices[e]]
            order[p] = e
            rows[p] = r
            fill[indices[e]] = p + 1
    return col_ptr, order, rows


@nb.njit(cache=True, nogil=True)
def _gather(values, order):
    out = np.empty(order.shape[0])
    for e in range(order.shape[0]):
        out[e] = values[order[e]]
    return out


@nb.njit(cache=True, nogil=True)
def _scatter(values, order, out):
    for e in range(order.shape[0]):
        out[order[e]] = values[e]


# Parts per thread of a coordinate-descent half-sweep: how much a row's
# (column's) coordinates move, hence its work, varies, and a half split
# into one part per thread by entries left one thread idle for much of
# some calls (CPU time 1.44-1.8 times the wall time on two threads,
# Reuters); the threads take smaller parts from a queue.  (The segments
# are independent: the split changes no result.)
_CD_PARTS = 4

# The column order of the last matrix swept (a fit sweeps the same one
# every iteration), kept while its index arrays live: ``(indptr, indices,
# shape, column order)``, the arrays by weak reference.
_last_columns = [None]


def _columns(X, indptr, indices):
    """`_column_order` of ``X``, computed once for the index arrays that
    the fit loop passes again at every sweep."""
    last = _last_columns[0]
    if (
        last is not None
        and last[0]() is X.indptr
        and last[1]() is X.indices
        and last[2] == X.shape
    ):
        return last[3]
    columns = _column_order(indptr, indices, X.shape[1])
    _last_columns[0] = (
        weakref.ref(X.indptr), weakref.ref(X.indices), X.shape, columns
    )  # fmt: skip
    return columns


def cd_sweep(X, W, H, y=None):
    """One sweep of cyclic coordinate descent: the twin of
    `sklearn_topicfac.kernels.cd_sweep` (the same steps and checks, entry
    by entry, with the settings both read from ``kernels._scale``)."""
    return _sweep(X, W, H, y, NEWTON_STEPS, AGAIN, model=True)


def _sweep(X, W, H, y, steps, again, model):
    """`cd_sweep`.  The rows of ``W`` are independent given ``H`` and the
    columns of ``H`` given ``W``, so each half of the sweep runs over parts
    of rows (of columns) on the kernel threads, with each segment's
    entries contiguous (the columns' in a column-ordered copy, whose order
    is computed once per matrix).  ``model=False`` returns the new model
    at the stored entries in that column order, which saves putting it
    back in row order (`cd_pass` only sums it)."""
    dtype = np.result_type(W.dtype, H.dtype)
    n, m = X.shape
    k = W.shape[1]
    if y is None:
        y = product_at_nonzeros(X, W, H)
    y = np.maximum(y.astype(np.float64), np.finfo(np.float64).tiny)
    x = X.data.astype(np.float64)
    indptr, indices = X.indptr, X.indices
    W_new = np.array(W, dtype=np.float64, order="C")
    Ht = np.array(H.T, dtype=np.float64, order="C")
    # A half-sweep's work (`CD_WORK`): counting one pass over the entries
    # kept the half-sweeps of corpora such as re0, tr11 and tr41 on one thread.
    work = X.nnz * k * CD_WORK // 2
    c = Ht.sum(axis=0)
    parts = _CD_PARTS
    _on_parts(
        _cd_segments, _bounds(indptr, parts), work, indptr, indices, x, y, Ht,
        W_new, c, steps, again,
    )  # fmt: skip
    col_ptr, order, rows = _columns(X, indptr, indices)
    x_col = _gather(x, order)
    y_col = _gather(y, order)
    c = W_new.sum(axis=0)
    _on_parts(
        _cd_segments, _bounds(col_ptr, parts), work, col_ptr, rows, x_col, y_col,
        W_new, Ht, c, steps, again,
    )  # fmt: skip
    if model:
        _scatter(y_col, order, y)
    else:
        # (rescaled only sums x and scales the model: any order will do.)
        x, y = x_col, y_col
    return rescaled(x, y, W_new.T, np.ascontiguousarray(Ht.T), dtype)


def cd_pass(X, W, H, y=None):
    """`sklearn_topicfac.kernels.cd_pass` on this backend: ``(W_new, H_new,
    sums, None)``, the sums of the incoming state from its model at the
    stored entries (``y`` if given, else computed), which the sweep starts
    from; ``y_new`` is None, as the NumPy `cd_pass` returns it.
    """
    dtype = np.result_type(W.dtype, H.dtype)
    if y is None:
        y = product_at_nonzeros(X, W, H)
    bounds = _sum_bounds(X.indptr)
    sums = np.zeros((bounds.shape[0] - 1, 2))
    if X.nnz:
        tiny, big = _limits(dtype)
        _on_parts(
            _model_sums, bounds, X.nnz, X.indptr, X.data, y, sums, tiny, big,
            indexed=True,
        )  # fmt: skip
    W_new, H_new, _ = _sweep(X, W, H, y, NEWTON_STEPS, AGAIN, model=False)
    return W_new, H_new, _sums(sums), None
