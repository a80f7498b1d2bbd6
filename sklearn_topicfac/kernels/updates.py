"""Multiplicative (KL-NMF) and EM (PLSI) updates, and row/column normalization."""

from functools import partial

import numpy as np
import scipy.sparse as sp

from ._backend import twins
from ._parallel import WorkQueue, n_threads, run_parallel
from .divergence import ratio_log_sums
from .products import (
    batched_ratio_at_nonzeros,
    compressed_view,
    divide_into_ratio,
    into_temporary,
    multiply_keeping_zeros,
    positive_or_one,
    sparse_dense_product,
    transposed_product,
    unit_product,
    work_units,
)


def mu_update_w(R, W, H):
    """Lee-Seung KL multiplicative update of ``W`` (``H`` fixed).

    ``W_new = W * (R @ H.T) / H.sum(1)``.  After it, the row sums of
    ``W_new @ H`` equal the row sums of ``X`` (paper 001, Prop. 3).
    """
    W_new = times_ratio_product(R, W, H.T)
    W_new /= positive_or_one(H.sum(axis=1))[None, :]
    return W_new


def times_ratio_product(R, W, Ht):
    """``W * (R @ Ht)``, the shared core of `mu_update_w` and `em_update_w`
    (``Ht`` is ``H.T``, in any memory layout: the same bits), a zero of
    ``W`` kept zero."""
    RHt = sparse_dense_product(R, Ht)
    return multiply_keeping_zeros(W, RHt, out=into_temporary(W, RHt))


def mu_doc_step(X, W, H):
    """The document half of a KL-NMF iteration, in one pass over ``X``.

    Returns ``(R, W_new, R_new)``, at the stored entries of CSR ``X``:

    .. math::

        R = \\frac{X}{W H}, \\qquad
        W_{new} = W \\odot \\frac{R H^T}{\\mathbf{1} H^T}, \\qquad
        R_{new} = \\frac{X}{W_{new} H},

    that is ``ratio_at_nonzeros(X, W, H)`` (the ratio of the incoming state,
    which gives its objective), ``mu_update_w`` of it, and the ratio of the
    updated ``W`` that the topic half-step needs.  A row of ``W_new``
    depends only on the same row of ``W``, so each unit of rows gathers the
    columns of ``H`` once and uses them for all three: one gather where the
    separate kernels need two, and ``R H^T`` as a batched product on data
    already in cache instead of another pass over ``R``.  Same values as the
    separate kernels up to rounding; same units and threads as
    `product_at_nonzeros`.
    """
    if (fast := twins(X, W.shape[1])) is not None:
        return fast.mu_doc_step(X, W, H)
    k = W.shape[1]
    dtype = np.result_type(W.dtype, H.dtype)
    r = np.empty(X.nnz, dtype=dtype)
    r_new = np.empty(X.nnz, dtype=dtype)
    # Rows without entries belong to no unit: R H^T is 0 there, and so is W_new.
    W_new = np.zeros(W.shape, dtype=dtype)
    Ht = np.ascontiguousarray(H.T)
    h_sum = positive_or_one(H.sum(axis=1))
    units = work_units(X.indptr, k, r.itemsize)
    step = partial(_mu_doc_on_units, X, W, Ht, h_sum, r, W_new, r_new)
    count = min(n_threads(X.nnz * k), len(units))
    if count <= 1:
        step(units)
    else:
        queue = WorkQueue(units)
        run_parallel([partial(step, queue)] * count)
    shape = X.shape
    return (
        sp.csr_matrix((r, X.indices, X.indptr), shape=shape, copy=False),
        W_new,
        sp.csr_matrix((r_new, X.indices, X.indptr), shape=shape, copy=False),
    )


def mu_doc_pass(X, W, H):
    """`mu_doc_step` as the fit loop uses it: ``(W_new, R_new, sums)``.

    ``sums = (sum x log r, sum x)`` of the incoming ratio ``R``
    (`ratio_log_sums`), from which the objective of the incoming state
    follows (`kl_divergence_from_sums`); ``R`` itself is not returned, and
    the numba backend never stores it.
    """
    if (fast := twins(X, W.shape[1])) is not None:
        return fast.mu_doc_pass(X, W, H)
    R, W_new, R_new = mu_doc_step(X, W, H)
    return W_new, R_new, ratio_log_sums(X, R)


def em_doc_pass(X, W, H):
    """The document half of a PLSI EM step: ``(em_update_w(R, W, H), R, sums)``.

    ``R = X / (W H)`` at the stored entries of CSR ``X`` and ``sums = (sum x
    log r, sum x)`` (`ratio_log_sums`), from which the objective of the
    incoming state follows (`kl_divergence_from_sums`).  On the numba
    backend the ratio, its sums and ``W * (R @ H.T)`` come from one pass.
    """
    if (fast := twins(X, W.shape[1])) is not None:
        return fast.em_doc_pass(X, W, H)
    # A fit's pass: the ratio in padded blocks where they pay.
    R = batched_ratio_at_nonzeros(X, W, H)
    return em_update_w(R, W, H), R, ratio_log_sums(X, R)


def _sampled_ratio_on_unit(G, W, x, length, local_indptr, out):
    """The ratio ``x / (W @ G.T)`` at one unit's entries, into ``out``."""
    unit_product(G, W, length, local_indptr, out)
    divide_into_ratio(x, out)


def _unit_rht(r, G, length, local_indptr):
    """``R @ H.T`` on one unit's rows, from its ratios and gathered columns."""
    n = local_indptr.shape[0] - 1
    k = G.shape[1]
    if length:
        return np.matmul(r.reshape(n, 1, length), G.reshape(n, length, k)).reshape(n, k)
    columns = np.arange(r.shape[0], dtype=local_indptr.dtype)
    rows = compressed_view(r, columns, local_indptr, (n, r.shape[0]))
    return np.asarray(rows @ G)


def _mu_doc_on_units(X, W, Ht, h_sum, r, W_new, r_new, units):
    """`mu_doc_step` on the rows of ``units``: fills ``r``, ``W_new``, ``r_new``."""
    indptr, indices, data = X.indptr, X.indices, X.data
    for r0, r1, length in units:
        a, b = indptr[r0], indptr[r1]
        local_indptr = indptr[r0 : r1 + 1] - a
        G = np.take(Ht, indices[a:b], axis=0)
        x = data[a:b]
        _sampled_ratio_on_unit(G, W[r0:r1], x, length, local_indptr, r[a:b])
        with np.errstate(over="ignore"):
            RHt = _unit_rht(r[a:b], G, length, local_indptr)
        if RHt.dtype != np.float64 and not np.isfinite(RHt).all():
            # A capped float32 ratio times a large H entry overflowed; the
            # update W * RHt / h_sum itself is bounded: redo it in float64.
            RHt = _unit_rht(
                r[a:b].astype(np.float64), G.astype(np.float64), length, local_indptr
            )
        if RHt.dtype == W_new.dtype:
            w = multiply_keeping_zeros(W[r0:r1], RHt, out=W_new[r0:r1])
            w /= h_sum[None, :]
        else:
            # The float64 redo is divided before the cast back.
            W_new[r0:r1] = (
                multiply_keeping_zeros(W[r0:r1].astype(RHt.dtype), RHt)
                / (h_sum[None, :])
            )
        _sampled_ratio_on_unit(G, W_new[r0:r1], x, length, local_indptr, r_new[a:b])


def flush_subnormal(A):
    """``A`` with its subnormal entries set to zero (``A`` itself if none).

    A subnormal entry is below the smallest normal number of its dtype
    (``np.finfo(dtype).tiny``: 1.2e-38 in float32, 2.2e-308 in float64):
    it adds less than ``tiny`` times the other factor to a value of the
    model, which the ratio floors at ``tiny`` anyway.  But every operation
    that reads a subnormal number costs a microcode assist on x86, many
    times a normal one.  Multiplicative and EM updates shrink the
    entries of a fading topic geometrically (the topic that a split-merge
    move emptied, within a few dozen iterations), and a pass over the data
    with many subnormal entries in ``H`` takes several times as long
    (measured in ``docs/performance.md``).  A zero stays zero under these updates, so
    flushing ends the fade where it stops mattering.
    """
    tiny = np.finfo(A.dtype).tiny
    magnitude = np.abs(A)
    subnormal = (magnitude < tiny) & (magnitude > 0)
    if not subnormal.any():
        return A
    return np.where(subnormal, A.dtype.type(0), A)


def mu_topic_update(H, WtR, w_sum):
    """Topic half-step from summed statistics: ``H * WtR / w_sum[:, None]``.

    ``WtR = W.T @ R`` and ``w_sum = W.sum(0)``, both sums over documents, so
    this is the reduce step of a map-reduce over document blocks.
    """
    return multiply_keeping_zeros(H, WtR) / positive_or_one(w_sum)[:, None]


def mu_update_h(R, W, H):
    """Lee-Seung KL multiplicative update of ``H`` (``W`` fixed).

    ``H_new = H * (W.T @ R) / W.sum(0)[:, None]``.  After it, the column sums
    of ``W @ H_new`` equal the column sums of ``X`` (paper 001, Prop. 3).
    """
    return mu_topic_update(H, transposed_product(W, R), W.sum(axis=0))


def em_update_w(R, W, H):
    """PLSI E+M step for the document side: ``W * (R @ H.T)``.

    With ``W`` in count scale (``W[d, z] = N * P(z) * P(d|z)``) and
    row-stochastic ``H = P(w|z)``, this is Hofmann's update of
    ``P(z) P(d|z)`` times ``N``: the column sums of the result are the
    expected topic counts ``T_z = sum_{d,w} X_dw P(z|d,w)``.
    """
    return times_ratio_product(R, W, H.T)


def em_topic_update(H, WtR):
    """PLSI M-step for ``P(w|z)`` from summed statistics: rows of ``H * WtR``
    normalized to sum to one."""
    return normalize_rows(multiply_keeping_zeros(H, WtR))[0]


def em_step(R, W, H):
    """One joint PLSI EM step from a single ratio ``R = X / (W H)``.

    Both factors are updated from the same posterior (the one of the incoming
    ``W, H``), as in Hofmann's EM: ``W_new = W * (R @ H.T)`` and
    ``H_new = normalize_rows(H * (W.T @ R))``.

    Returns
    -------
    W_new : ndarray of shape (n_samples, k)
    H_new : ndarray of shape (k, n_features), rows sum to one.
    """
    return em_update_w(R, W, H), em_topic_update(H, transposed_product(W, R))


def normalize_rows(A):
    """L1-normalize the rows of a non-negative array.

    Returns ``(A / s[:, None], s)`` with ``s = A.sum(1)``; rows summing to zero
    are left at zero.
    """
    s = A.sum(axis=1)
    return A / positive_or_one(s)[:, None], s


def normalize_columns(A):
    """L1-normalize the columns of a non-negative array.

    Returns ``(A / s[None, :], s)`` with ``s = A.sum(0)``; columns summing to
    zero are left at zero.
    """
    s = A.sum(axis=0)
    return A / positive_or_one(s)[None, :], s


def _squared_norm(A):
    return float(np.einsum("ij,ij->", A, A, dtype=np.float64))


def squarem_point(start, once, twice):
    """The squared extrapolation of a fixed-point map (SQUAREM, scheme S3).

    From a state ``start`` and its images ``once = F(start)`` and ``twice =
    F(once)`` under the EM map (each a tuple of arrays, taken together as one
    parameter vector), with ``r = once - start`` and ``v = twice - 2 once +
    start``, the step length is :math:`\\alpha = -\\|r\\| / \\|v\\|`
    (Varadhan & Roland, 2008), bounded by ``-1``, and the point

    .. math::

        \\theta' = \\theta_0 - 2 \\alpha r + \\alpha^2 v

    is projected back on the non-negative orthant: an entry the
    extrapolation would make negative is set to a thousandth of its value
    in ``twice`` instead of zero, which EM updates could never leave.  With
    ``alpha = -1`` the point is ``twice``.  Returns ``(point, alpha)``; the
    caller renormalizes what must sum to one and checks the objective.
    """
    r = [b - a for a, b in zip(start, once, strict=True)]
    v = [c - 2 * b + a for a, b, c in zip(start, once, twice, strict=True)]
    r_norm = np.sqrt(sum(_squared_norm(p) for p in r))
    v_norm = np.sqrt(sum(_squared_norm(p) for p in v))
    if not v_norm > 0 or not np.isfinite(r_norm / v_norm):
        return twice, -1.0
    alpha = min(-r_norm / v_norm, -1.0)
    point = []
    for a, p, q, c in zip(start, r, v, twice, strict=True):
        t = a - (2 * alpha) * p + (alpha * alpha) * q
        point.append(np.where(t > 0, t, c * 1e-3).astype(a.dtype, copy=False))
    return tuple(point), alpha
