"""The twins of `kernels/updates.py`'s document passes: KL-NMF's
multiplicative half-step (`mu_doc_step`, `mu_doc_pass`) and PLSI's EM one
(`em_doc_pass`).

Why a twin: the NumPy kernels make separate passes over the stored entries
for the ratio, its sums and ``R @ H.T``; here one compiled loop per row
computes the row's ratio, the divergence's sums (``x log r`` and ``x``) and
the row of ``R @ H.T`` while the row's columns of ``H`` are in cache, and
a ratio that only feeds the objective (`mu_doc_pass`) is never stored.
The sums over a row's entries that the update needs are accumulated in
float64 whatever the dtype, which is what the NumPy kernels redo when a
float32 sum overflows (`finite_or_float64`).

No twin for ``W.T @ R`` (the topic half-step): SciPy's is a compiled loop
already, and a numba scatter-add measured no faster, alone or inside these
passes (``docs/performance.md``).
"""

import numba as nb
import numpy as np

from ._common import (
    _JIT,
    _csr,
    _limits,
    _longest,
    _on_parts,
    _padded,
    _row_model,
    _row_ratio,
    _row_sums,
    _sum_bounds,
    _sums,
)


@nb.njit(**_JIT)
def _row_gather(indices, a, n, r, Ht, acc):
    """``acc = sum_j r[j] Ht[c_j]`` (float64 ``acc``): the row of ``R @ H.T``."""
    acc[:] = 0.0
    _row_gather_add(indices, a, n, r, Ht, acc)


@nb.njit(**_JIT)
def _row_gather_add(indices, a, n, r, Ht, acc):
    """``acc += sum_j r[j] Ht[c_j]``: `_row_gather` without zeroing ``acc``.

    Four entries per update of ``acc``: each update waits on the previous
    one (a store, then a load of the same k-vector), and that wait bounded
    the loop (one entry per update measured slower)."""
    kp = Ht.shape[1]
    j = 0
    while j + 4 <= n:
        c0, c1 = indices[a + j], indices[a + j + 1]
        c2, c3 = indices[a + j + 2], indices[a + j + 3]
        q0, q1 = np.float64(r[j]), np.float64(r[j + 1])
        q2, q3 = np.float64(r[j + 2]), np.float64(r[j + 3])
        for t in range(kp):
            acc[t] += (q0 * Ht[c0, t] + q1 * Ht[c1, t]) + (
                q2 * Ht[c2, t] + q3 * Ht[c3, t]
            )
        j += 4
    while j < n:
        c = indices[a + j]
        q = np.float64(r[j])
        for t in range(kp):
            acc[t] += q * Ht[c, t]
        j += 1


# --------------------------------------------------- fused document MU step
@nb.njit(**_JIT)
def _row_pass(indices, data, a, n, w, Ht, y, tiny, big, v, acc, with_sums):
    """One row's document pass: ``y`` gets the ratio at the row's entries
    (from the row of W ``w``), ``acc`` the row of ``R @ H.T``; returns the
    row's ``(sum x log r, sum x)`` if ``with_sums``, else zeros."""
    _row_model(indices, a, n, w, Ht, y)
    _row_ratio(data, a, n, y, tiny, big)
    x_log_r, x_sum = 0.0, 0.0
    if with_sums:
        x_log_r, x_sum = _row_sums(data, a, n, y, tiny, v)
    _row_gather(indices, a, n, y, Ht, acc)
    return x_log_r, x_sum


@nb.njit(**_JIT)
def _doc_pass(
    indptr, indices, data, W, Ht, h_sum, r, W_new, r_new, sums, tiny, big, part, r0, r1
):
    """The document half-step on rows ``r0:r1``: ``W_new = W * (R @ H.T) /
    h_sum`` from the incoming ratio ``R``, whose sums go to ``sums[part]``.

    KL-MU: ``h_sum`` the row sums of H, and ``r_new`` gets the ratio of the
    updated W.  EM: ``h_sum`` ones and ``r_new`` empty.  ``r`` (the incoming
    ratio) may have no entries: it is then kept in scratch only.
    """
    k = W.shape[1]
    kp = Ht.shape[1]
    longest = _longest(indptr, r0, r1)
    keep = r.shape[0] > 0
    second = r_new.shape[0] > 0
    with_sums = not (keep and second)
    scratch = np.empty(0 if keep else longest, dtype=Ht.dtype)
    v = np.empty(longest if with_sums else 0, dtype=np.float64)
    w = np.zeros(kp, dtype=Ht.dtype)
    acc = np.zeros(kp, dtype=np.float64)
    x_log_r, x_sum = 0.0, 0.0
    for i in range(r0, r1):
        a, n = indptr[i], indptr[i + 1] - indptr[i]
        if n == 0:
            continue
        w[:k] = W[i]
        y = r[a : a + n] if keep else scratch[:n]
        s = _row_pass(indices, data, a, n, w, Ht, y, tiny, big, v, acc, with_sums)
        x_log_r += s[0]
        x_sum += s[1]
        for t in range(k):
            # A zero of W stays zero (multiplicative updates never revive it).
            w[t] = 0 if w[t] == 0 else w[t] * acc[t] / h_sum[t]
            W_new[i, t] = w[t]
        if second:
            y = r_new[a : a + n]
            _row_model(indices, a, n, w, Ht, y)
            _row_ratio(data, a, n, y, tiny, big)
    sums[part, 0] = x_log_r
    sums[part, 1] = x_sum


def _doc_call(X, W, H, keep_ratio, multiplicative):
    """``(R, W_new, R_new, sums)`` of `_doc_pass` over all of ``X``; ``R``
    is empty unless ``keep_ratio``, ``R_new`` unless ``multiplicative``."""
    dtype = np.result_type(W.dtype, H.dtype)
    if multiplicative:
        h = H.sum(axis=1, dtype=np.float64)
        h_sum = np.where(h > 0, h, 1.0)
    else:
        h_sum = np.ones(H.shape[0])
    r = np.empty(X.nnz if keep_ratio else 0, dtype=dtype)
    r_new = np.empty(X.nnz if multiplicative else 0, dtype=dtype)
    # Rows without entries: R H^T is 0 there, and so is W_new.
    W_new = np.zeros(W.shape, dtype=dtype)
    bounds = _sum_bounds(X.indptr)
    sums = np.zeros((bounds.shape[0] - 1, 2))
    if X.nnz:
        tiny, big = _limits(dtype)
        _on_parts(
            _doc_pass, bounds, (1 + multiplicative) * X.nnz * W.shape[1],
            X.indptr, X.indices, X.data, W.astype(dtype, copy=False),
            _padded(H, dtype), h_sum, r, W_new, r_new, sums, tiny, big, indexed=True,
        )  # fmt: skip
    return r, W_new, r_new, _sums(sums)


def mu_doc_step(X, W, H):
    """``(R, W_new, R_new)`` of one KL-NMF document half-step, fused in one
    pass: the twin of `sklearn_topicfac.kernels.mu_doc_step`."""
    r, W_new, r_new, _ = _doc_call(X, W, H, keep_ratio=True, multiplicative=True)
    return _csr(r, X), W_new, _csr(r_new, X)


def mu_doc_pass(X, W, H):
    """``(W_new, R_new, sums)`` of one KL-NMF document half-step, the
    incoming ratio never stored: the twin of
    `sklearn_topicfac.kernels.mu_doc_pass`."""
    _, W_new, r_new, sums = _doc_call(X, W, H, keep_ratio=False, multiplicative=True)
    return W_new, _csr(r_new, X), sums


# -------------------------------------------------- fused document EM step
def em_doc_pass(X, W, H):
    """``(W * (R @ H.T), R, sums)`` in one pass over ``X``: the twin of
    `sklearn_topicfac.kernels.em_doc_pass` (`_doc_pass` with unit divisors
    and no second ratio)."""
    r, W_new, _, sums = _doc_call(X, W, H, keep_ratio=True, multiplicative=False)
    return W_new, _csr(r, X), sums
