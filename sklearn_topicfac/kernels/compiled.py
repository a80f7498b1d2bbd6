"""The compiled twins of the kernels: the numba backend.

Each public function here has the signature, the result (to rounding) and
the contract of the NumPy kernel of the same name: same dtype out as in,
memory O(nnz + (n_samples + n_features) * k) at most, arguments never
modified.  The NumPy kernels dispatch to these when the numba backend is
selected (`sklearn_topicfac.config_context`), so callers never import this
module; importing it imports numba.

Why they are faster: a NumPy kernel works on gathered ``(entries, k)``
blocks, so every stored entry costs several passes over a k-vector through
memory; here one compiled loop per row reads each column of ``H`` once per
entry, keeps the row of ``W`` and the k accumulators in registers, and
writes one number per entry.  Each compiled loop runs over a range of
rows and releases the GIL (``nogil``); the rows are split into parts of
about equal numbers of entries, which the package's kernel threads share
(`_parallel`: the same thread count and the same backing off on a busy
machine as the NumPy kernels).  The split is fixed by `N_THREADS`, so
results do not depend on how many threads run.  Plain serial loops compile
faster than numba's ``parallel=True`` loops, which matters on a first
call.

The document passes of the fit loop (`mu_doc_pass`, `em_doc_pass`) and
the objective (`ratio_log_sums_at_nonzeros`) go further than their NumPy
references: per row, the ratio, the sums of the divergence (``x log r``,
with a vectorizable logarithm, and ``x``) and the row of ``R @ H.T`` are
computed while the row's columns of ``H`` are in cache, and a ratio that
only feeds the objective is never stored.

Rounding: sums over the k topics may be reassociated by the compiler
(``fastmath`` reassociation and contraction only: infinities and NaN keep
their IEEE meaning), and the sums over a row's entries that the updates
need are accumulated in float64 whatever the dtype, which is what the NumPy
kernels redo when a float32 sum overflows (`finite_or_float64`).  The
divergence's sums are float64 too; their logarithm is within 2 ulp of
NumPy's float64 one (`_row_sums`).

No twin for ``W.T @ R``: SciPy's is a compiled loop already, and a numba
scatter-add measured no faster, alone or inside the fused passes
(``docs/performance.md``).
Functions compile on first use for each combination of dtypes
(``cache=True``: once per machine).
"""

import weakref

import numba as nb
import numpy as np
import scipy.sparse as sp

from . import _parallel
from ._scale import _SMALLEST, _VANISHING_REST, CD_WORK, rescaled

_JIT = {
    "cache": True,
    "nogil": True,
    "fastmath": {"reassoc", "contract"},
    # A division by zero gives inf or NaN, as in NumPy, instead of a check
    # per division that keeps the loops from vectorizing (no kernel divides
    # by a value that can be zero).
    "error_model": "numpy",
}

# Parts per thread of the fold-in and the LDA E-step: their documents take
# different numbers of sweeps, so the threads take small parts from a queue.
_E_STEP_PARTS_PER_THREAD = 16


def _bounds(indptr, parts=None):
    """Row boundaries of ``parts`` ranges of about equal numbers of entries."""
    return _parallel.split_rows(indptr, parts or _parallel.N_THREADS).astype(np.int64)


def _on_parts(kernel, bounds, work, *args, indexed=False):
    """``kernel(*args, r0, r1)`` over the parts of rows ``bounds``, on up to
    `N_THREADS` threads sharing a queue; ``indexed`` also passes the part's
    index first (for per-part outputs).  ``work`` (entries times k) decides
    whether threads pay (`_parallel.n_threads`)."""
    parts = range(bounds.shape[0] - 1)

    def run(queue):
        for p in queue:
            extra = (p,) if indexed else ()
            kernel(*args, *extra, bounds[p], bounds[p + 1])

    count = min(_parallel.n_threads(work), len(parts))
    if count <= 1:
        run(parts)
        return
    queue = _parallel.WorkQueue(parts)
    _parallel.run_parallel([lambda: run(queue)] * count)


def _limits(dtype):
    info = np.finfo(dtype)
    return dtype.type(info.tiny), dtype.type(info.max)


def _csr(values, X):
    return sp.csr_matrix((values, X.indices, X.indptr), shape=X.shape, copy=False)


# ------------------------------------------------------------- row helpers
# The loops over one row's entries that the kernels below are made of.  The
# topics' columns are read from ``Ht``, H transposed and zero-padded to
# `_padded` columns: every entry's k-vector then starts on the same
# alignment and its loop has no scalar remainder (LLVM vectorizes a
# reduction over k in blocks of 8 and leaves the rest scalar: k = 20 with no
# padding ran 1.2-1.5x slower).  The ratio and the logarithm run over the
# row's entries stored in a scratch vector, so that they vectorize too.

_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_SQRT2 = 1.4142135623730951


def _padded(H, dtype):
    """``H.T`` as a contiguous ``(n_features, kp)`` array of ``dtype``, kp the
    next multiple of 8 from k, the extra columns zero."""
    k, m = H.shape
    Ht = np.zeros((m, -(-k // 8) * 8), dtype=dtype)
    Ht[:, :k] = H.T
    return Ht


@nb.njit(**_JIT)
def _row_model(indices, a, n, w, Ht, y):
    """``y[j] = w . Ht[c_j]`` for the row's ``n`` entries from ``a``."""
    kp = Ht.shape[1]
    for j in range(n):
        c = indices[a + j]
        s = y.dtype.type(0)
        for t in range(kp):
            s += w[t] * Ht[c, t]
        y[j] = s


@nb.njit(**_JIT)
def _row_ratio(data, a, n, y, tiny, big):
    """``y <- min(x / max(y, tiny), big)`` in place (`divide_into_ratio`)."""
    for j in range(n):
        s = y[j]
        s = s if s > tiny else tiny
        q = data[a + j] / s
        y[j] = q if q < big else big


@nb.njit(**_JIT)
def _row_sums(data, a, n, r, tiny, v):
    """``(sum x log max(r, tiny), sum x)`` over the row's entries, in float64.

    The logarithm is computed here so that the loop vectorizes (numba calls
    libm's scalar ``log`` otherwise): the float64 exponent
    and mantissa ``m`` in [sqrt(1/2), sqrt(2)), then ``log m = 2 atanh(z)``,
    ``z = (m - 1) / (m + 1)``, by its series to ``z**23`` (``|z| < 0.172``:
    the first term left out is below 1e-18 of the sum).  Within 2 ulp of
    NumPy's float64 ``log`` (measured on 4e5 values over float64's range).
    Every value is a positive normal float64 here: the ratio is floored at
    ``tiny`` and capped at ``big`` of its dtype.  ``v`` is float64 scratch.
    """
    bits = v.view(np.int64)
    x_sum = 0.0
    for j in range(n):
        s = r[j]
        v[j] = np.float64(s if s > tiny else tiny)
        x_sum += np.float64(data[a + j])
    total = 0.0
    for j in range(n):
        b = bits[j]
        e = (b >> 52) - 1023
        bits[j] = (b & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000
        m = v[j]
        up = m > _SQRT2
        m = m * 0.5 if up else m
        ef = np.float64(e + 1 if up else e)
        z = (m - 1.0) / (m + 1.0)
        z2 = z * z
        p = 1.0 / 23
        p = p * z2 + 1.0 / 21
        p = p * z2 + 1.0 / 19
        p = p * z2 + 1.0 / 17
        p = p * z2 + 1.0 / 15
        p = p * z2 + 1.0 / 13
        p = p * z2 + 1.0 / 11
        p = p * z2 + 1.0 / 9
        p = p * z2 + 1.0 / 7
        p = p * z2 + 1.0 / 5
        p = p * z2 + 1.0 / 3
        log_m = 2.0 * z + 2.0 * z * (p * z2)
        total += np.float64(data[a + j]) * (ef * _LN2_HI + (ef * _LN2_LO + log_m))
    return total, x_sum


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


@nb.njit(**_JIT)
def _longest(indptr, r0, r1):
    longest = 0
    for i in range(r0, r1):
        longest = max(longest, indptr[i + 1] - indptr[i])
    return longest


def _sums(parts):
    """The per-part ``(sum x log r, sum x)`` added up in part order."""
    x_log_r, x_sum = 0.0, 0.0
    for p in range(parts.shape[0]):
        x_log_r += float(parts[p, 0])
        x_sum += float(parts[p, 1])
    return x_log_r, x_sum


# ------------------------------------------------------------ sampled ratio
@nb.njit(**_JIT)
def _sampled(indptr, indices, data, W, Ht, out, divide, tiny, big, r0, r1):
    k = W.shape[1]
    w = np.zeros(Ht.shape[1], dtype=Ht.dtype)
    for i in range(r0, r1):
        a, n = indptr[i], indptr[i + 1] - indptr[i]
        w[:k] = W[i]
        y = out[a : a + n]
        _row_model(indices, a, n, w, Ht, y)
        if divide:
            _row_ratio(data, a, n, y, tiny, big)


def _sampled_call(X, W, H, divide):
    dtype = np.result_type(W.dtype, H.dtype)
    out = np.empty(X.nnz, dtype=dtype)
    if X.nnz == 0:
        return out
    tiny, big = _limits(dtype)
    _on_parts(
        _sampled, _bounds(X.indptr), X.nnz * W.shape[1],
        X.indptr, X.indices, X.data, W.astype(dtype, copy=False), _padded(H, dtype),
        out, divide, tiny, big,
    )  # fmt: skip
    return out


def product_at_nonzeros(X, W, H):
    """``(W @ H)`` at the stored entries of CSR ``X``: the twin of
    `sklearn_topicfac.kernels.product_at_nonzeros`."""
    return _sampled_call(X, W, H, divide=False)


def ratio_at_nonzeros(X, W, H):
    """``X / (W @ H)`` at the stored entries of CSR ``X``, as CSR: the twin
    of `sklearn_topicfac.kernels.ratio_at_nonzeros`."""
    return _csr(_sampled_call(X, W, H, divide=True), X)


# ------------------------------------------------------ divergence sums
@nb.njit(**_JIT)
def _kl_sums(indptr, indices, data, W, Ht, sums, tiny, big, part, r0, r1):
    k = W.shape[1]
    longest = _longest(indptr, r0, r1)
    y = np.empty(longest, dtype=Ht.dtype)
    v = np.empty(longest, dtype=np.float64)
    w = np.zeros(Ht.shape[1], dtype=Ht.dtype)
    x_log_r, x_sum = 0.0, 0.0
    for i in range(r0, r1):
        a, n = indptr[i], indptr[i + 1] - indptr[i]
        w[:k] = W[i]
        _row_model(indices, a, n, w, Ht, y)
        _row_ratio(data, a, n, y, tiny, big)
        s = _row_sums(data, a, n, y, tiny, v)
        x_log_r += s[0]
        x_sum += s[1]
    sums[part, 0] = x_log_r
    sums[part, 1] = x_sum


def ratio_log_sums_at_nonzeros(X, W, H):
    """``(sum x log r, sum x)`` over the stored entries of CSR ``X``, ``r``
    the ratio, never stored: the twin of
    `sklearn_topicfac.kernels.ratio_log_sums_at_nonzeros`."""
    dtype = np.result_type(W.dtype, H.dtype)
    bounds = _bounds(X.indptr)
    sums = np.zeros((bounds.shape[0] - 1, 2))
    if X.nnz:
        tiny, big = _limits(dtype)
        _on_parts(
            _kl_sums, bounds, X.nnz * W.shape[1],
            X.indptr, X.indices, X.data, W.astype(dtype, copy=False),
            _padded(H, dtype), sums, tiny, big, indexed=True,
        )  # fmt: skip
    return _sums(sums)


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
    bounds = _bounds(X.indptr)
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


# --------------------------------------------------------------- fold-in
@nb.njit(**_JIT)
def _fold_in(indptr, indices, data, Ht, h, h_sum, W, max_iter, tol, tiny, big, r0, r1):
    k = W.shape[1]
    acc = np.empty(k, dtype=np.float64)
    old = np.empty(k, dtype=np.float64)
    new = np.empty(k, dtype=np.float64)
    for i in range(r0, r1):
        if indptr[i] == indptr[i + 1]:
            continue
        for _ in range(max_iter):
            acc[:] = 0.0
            for j in range(indptr[i], indptr[i + 1]):
                c = indices[j]
                s = W[i, 0] * Ht[c, 0]
                for t in range(1, k):
                    s += W[i, t] * Ht[c, t]
                q = np.float64(min(data[j] / max(s, tiny), big))
                for t in range(k):
                    acc[t] += q * Ht[c, t]
            s_old = 0.0
            s_new = 0.0
            for t in range(k):
                old[t] = W[i, t] * h[t]
                W[i, t] = W[i, t] * acc[t] / h_sum[t] if W[i, t] != 0 else 0.0
                new[t] = W[i, t] * h[t]
                s_old += old[t]
                s_new += new[t]
            s_old = s_old if s_old > 0 else 1.0
            s_new = s_new if s_new > 0 else 1.0
            change = 0.0
            for t in range(k):
                change += abs(new[t] / s_new - old[t] / s_old)
            if change / k < tol:
                break


def mu_fold_in(X, H, W, max_iter, tol):
    """Multiplicative fold-in of the documents ``X`` with ``H`` fixed: the
    twin of `sklearn_topicfac.kernels.mu_fold_in` (one compiled loop of
    sweeps per document)."""
    dtype = np.result_type(W.dtype, H.dtype)
    W = np.array(W, dtype=dtype, order="C", copy=True)
    if X.nnz == 0:
        return W
    Ht = np.ascontiguousarray(H.T, dtype=dtype)
    h = H.sum(axis=1).astype(dtype)
    h_sum = np.where(h > 0, h, 1).astype(dtype)
    tiny, big = _limits(dtype)
    bounds = _bounds(X.indptr, _parallel.N_THREADS * _E_STEP_PARTS_PER_THREAD)
    _on_parts(
        _fold_in, bounds, X.nnz * W.shape[1] * max_iter,
        X.indptr, X.indices, X.data, Ht, h, h_sum, W, max_iter, tol, tiny, big,
    )  # fmt: skip
    return W


# ---------------------------------------------------------- LDA E-step
@nb.njit(**_JIT)
def _digamma(x):
    """``psi(x)`` for ``x > 0``: recurrence up to 8, then the asymptotic series
    (absolute error below 1e-13 on (1e-3, 1e3), measured against SciPy)."""
    result = 0.0
    while x < 8.0:
        result -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (
        -1.0 / 12
        + f
        * (
            1.0 / 120
            + f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132 + f * 691.0 / 32760)))
        )
    )
    return result + np.log(x) - 0.5 / x + series


@nb.njit(**_JIT)
def _e_step(
    indptr, indices, data, Bt, alpha, gamma, y, max_iter, threshold, tiny, r0, r1
):
    k = Bt.shape[1]
    big = np.finfo(np.float64).max
    t = np.empty(k, dtype=np.float64)
    grad = np.empty(k, dtype=np.float64)
    direct = np.empty(k, dtype=np.float64)
    longest = 0
    for i in range(r0, r1):
        longest = max(longest, indptr[i + 1] - indptr[i])
    ratio = np.empty(longest, dtype=np.float64)
    for i in range(r0, r1):
        a, b = indptr[i], indptr[i + 1]
        for z in range(k):
            t[z] = np.exp(_digamma(np.float64(gamma[i, z])))
        for _ in range(max_iter):
            direct[:] = 0.0
            for j in range(a, b):
                c = indices[j]
                s = 0.0
                for z in range(k):
                    s += t[z] * Bt[c, z]
                q = data[j] / max(s, tiny)
                if q > big:
                    # The ratio overflows where the model of the word
                    # underflowed (or is 0: a word no topic gives mass):
                    # add the word's shares, each at most 1, instead
                    # (as the NumPy kernel's float64 redo).
                    q = 0.0
                    for z in range(k):
                        direct[z] += data[j] * (t[z] * Bt[c, z] / max(s, tiny))
                ratio[j - a] = q
            grad[:] = 0.0
            for j in range(a, b):
                c = indices[j]
                q = ratio[j - a]
                for z in range(k):
                    grad[z] += q * Bt[c, z]
            change = 0.0
            for z in range(k):
                old = np.float64(gamma[i, z])
                # Stored in gamma's dtype, then read back: the sweeps run on
                # gamma as rounded in its dtype, as in the NumPy kernel.
                gamma[i, z] = grad[z] * t[z] + direct[z] + alpha[z]
                new = np.float64(gamma[i, z])
                change += abs(new - old)
                t[z] = np.exp(_digamma(new))
            if change < threshold:
                break
        total = 0.0
        for z in range(k):
            total += gamma[i, z]
        norm = np.exp(-_digamma(total))
        for j in range(a, b):
            c = indices[j]
            s = 0.0
            for z in range(k):
                s += t[z] * Bt[c, z]
            y[j] = max(s * norm, tiny)


def lda_e_step(X, gamma, B, alpha, max_iter, tol):
    """LDA's mean-field E-step, one compiled loop of sweeps per document, the
    documents shared by the threads: the twin of
    `sklearn_topicfac.kernels.lda_e_step` (the same per-document stopping
    rule; the sums of a sweep in float64)."""
    dtype = np.result_type(gamma.dtype, B.dtype)
    gamma = np.array(gamma, dtype=dtype, order="C", copy=True)
    k = B.shape[0]
    alpha = np.broadcast_to(np.asarray(alpha, dtype=np.float64), (k,)).copy()
    Bt = np.ascontiguousarray(B.T, dtype=dtype)
    y = np.empty(X.nnz, dtype=dtype)
    if X.shape[0] == 0:
        return gamma, y
    bounds = _bounds(X.indptr, _parallel.N_THREADS * _E_STEP_PARTS_PER_THREAD)
    _on_parts(
        _e_step, bounds, X.nnz * k * max_iter,
        X.indptr, X.indices, X.data, Bt, alpha, gamma, y, max_iter, tol * k,
        np.finfo(dtype).tiny,
    )  # fmt: skip
    return gamma, y


@nb.njit(inline="always", **_JIT)
def _cvb0_substitute(
    g, new, doc, term, word, totals, alpha, eta, v_eta, own, exclude_words,
    n_inner,
):  # fmt: skip
    # The ``n_inner`` damped substitutions of one entry's own fixed point,
    # shared by `_cvb0_rows` and `_cvb0_columns`: ``g`` (the entry's topic
    # shares) is updated in place; ``doc`` and ``term`` are the counts of
    # the entry's document and term, ``own`` its own tokens (at most one).
    k = g.shape[0]
    for _ in range(n_inner):
        if exclude_words:
            for z in range(k):
                e = own * g[z]
                new[z] = (
                    (max(doc[z] - e, 0.0) + alpha[z])
                    * (max(term[z] - e, 0.0) + eta)
                    / (max(totals[z] - e, 0.0) + v_eta)
                )
        else:
            for z in range(k):
                new[z] = (max(doc[z] - own * g[z], 0.0) + alpha[z]) * word[z]
        s = 0.0
        for z in range(k):
            s += new[z]
        r = 0.5 / s
        for z in range(k):
            g[z] = 0.5 * g[z] + new[z] * r


@nb.njit(**_JIT)
def _cvb0_rows(
    indptr, indices, data, D, Tt, totals, alpha, eta, v_eta, exclude_words,
    n_inner, lengths, new_doc, new_topic, log_lik, part, r0, r1,
):  # fmt: skip
    # Each loop over the topics is a plain loop of one expression (no branch
    # inside), so that LLVM vectorizes it, divisions included; the shares'
    # normalization multiplies by the reciprocal of their sum.
    k = D.shape[1]
    tiny = np.finfo(np.float64).tiny
    inv_totals = np.empty(k, dtype=np.float64)
    for z in range(k):
        inv_totals[z] = 1.0 / (totals[z] + v_eta)
    g = np.empty(k, dtype=np.float64)
    word = np.empty(k, dtype=np.float64)
    doc = np.empty(k, dtype=np.float64)
    new = np.empty(k, dtype=np.float64)
    acc = np.empty(k, dtype=np.float64)
    ll = 0.0
    for i in range(r0, r1):
        acc[:] = 0.0
        for z in range(k):
            doc[z] = D[i, z] + alpha[z]
        for j in range(indptr[i], indptr[i + 1]):
            c = indices[j]
            x = np.float64(data[j])
            own = min(x, 1.0)
            s = 0.0
            for z in range(k):
                word[z] = (Tt[c, z] + eta) * inv_totals[z]
                g[z] = doc[z] * word[z]
                s += g[z]
            ll += x * np.log(max(s / lengths[i], tiny))
            r = 1.0 / s
            for z in range(k):
                g[z] *= r
            _cvb0_substitute(
                g, new, D[i], Tt[c], word, totals, alpha, eta, v_eta, own,
                exclude_words, n_inner,
            )  # fmt: skip
            for z in range(k):
                acc[z] += x * g[z]
                new_topic[part, c, z] += x * g[z]
        for z in range(k):
            new_doc[i, z] = acc[z]
    log_lik[part] = ll


# Counts (float64 values) that a core's cache holds: above this many topic
# counts, a sweep by documents waits on memory at every entry.
_CVB0_CACHED_VALUES = 1 << 17


@nb.njit(**_JIT)
def _cvb0_columns(
    indptr, indices, data, D, T, totals, alpha, eta, v_eta, exclude_words,
    n_inner, lengths, new_doc, new_topic, log_lik, part, c0, c1,
):  # fmt: skip
    # `_cvb0_rows` by columns (CSC): a term's counts are read and written
    # once, in term order (``T`` and ``new_topic`` are (k, n_features): k
    # streams), the documents' counts at random (see `cvb0_sweep`).
    k = D.shape[1]
    tiny = np.finfo(np.float64).tiny
    inv_totals = np.empty(k, dtype=np.float64)
    for z in range(k):
        inv_totals[z] = 1.0 / (totals[z] + v_eta)
    g = np.empty(k, dtype=np.float64)
    term = np.empty(k, dtype=np.float64)
    word = np.empty(k, dtype=np.float64)
    new = np.empty(k, dtype=np.float64)
    acc = np.empty(k, dtype=np.float64)
    ll = 0.0
    for c in range(c0, c1):
        for z in range(k):
            term[z] = T[z, c]
            word[z] = (term[z] + eta) * inv_totals[z]
            acc[z] = 0.0
        for j in range(indptr[c], indptr[c + 1]):
            i = indices[j]
            x = np.float64(data[j])
            own = min(x, 1.0)
            s = 0.0
            for z in range(k):
                g[z] = (D[i, z] + alpha[z]) * word[z]
                s += g[z]
            ll += x * np.log(max(s / lengths[i], tiny))
            r = 1.0 / s
            for z in range(k):
                g[z] *= r
            _cvb0_substitute(
                g, new, D[i], term, word, totals, alpha, eta, v_eta, own,
                exclude_words, n_inner,
            )  # fmt: skip
            for z in range(k):
                acc[z] += x * g[z]
                new_doc[part, i, z] += x * g[z]
        for z in range(k):
            new_topic[z, c] = acc[z]
    log_lik[part] = ll


def cvb0_sweep(
    X, doc_counts, topic_counts, alpha, eta, *, exclude_words=True, n_inner=2
):
    """One batch CVB0 sweep, one compiled loop per range of documents or of
    terms: the twin of `sklearn_topicfac.kernels.cvb0_sweep` (its sums in
    float64).

    One side is walked in order and the other one's counts are read and
    summed at random, into one array per thread: by documents (CSR), unless
    the topics' counts outgrow `_CVB0_CACHED_VALUES` and there are more terms
    than documents; then by terms (CSC), so that the random accesses stay
    in the smaller ``(n_samples, k)`` arrays (a vocabulary of tens of
    thousands of terms: half the time per sweep on Reuters-10)."""
    n, m = X.shape
    k = doc_counts.shape[1]
    dtype = doc_counts.dtype
    alpha = np.broadcast_to(np.asarray(alpha, dtype=np.float64), (k,)).copy()
    D = np.ascontiguousarray(doc_counts)
    totals = topic_counts.sum(axis=1, dtype=np.float64)
    lengths = D.sum(axis=1, dtype=np.float64) + alpha.sum()
    if m > n and m * k > _CVB0_CACHED_VALUES:
        Xc = X.tocsc()
        T = np.ascontiguousarray(topic_counts, dtype=np.float64)
        bounds = _bounds(Xc.indptr)
        parts = max(bounds.shape[0] - 1, 1)
        new_doc = np.zeros((parts, n, k), dtype=np.float64)
        topics = np.zeros((k, m), dtype=np.float64)
        log_lik = np.zeros(parts)
        if X.nnz:
            _on_parts(
                _cvb0_columns, bounds, X.nnz * k * (1 + n_inner),
                Xc.indptr, Xc.indices, Xc.data, D, T, totals, alpha, float(eta),
                float(m * eta), bool(exclude_words), int(n_inner), lengths,
                new_doc, topics, log_lik, indexed=True,
            )  # fmt: skip
        docs = new_doc.sum(axis=0).astype(dtype)
        return docs, topics.astype(dtype, copy=False), float(log_lik.sum())
    Tt = np.ascontiguousarray(topic_counts.T, dtype=np.float64)
    args = (D, Tt, totals, alpha, float(eta), float(m * eta), bool(exclude_words))
    bounds = _bounds(X.indptr)
    parts = bounds.shape[0] - 1
    new_doc = np.zeros((n, k), dtype=dtype)
    new_topic = np.zeros((max(parts, 1), m, k), dtype=np.float64)
    log_lik = np.zeros(max(parts, 1))
    if n:
        _on_parts(
            _cvb0_rows, bounds, X.nnz * k * (1 + n_inner),
            X.indptr, X.indices, X.data, *args, int(n_inner), lengths, new_doc,
            new_topic, log_lik, indexed=True,
        )  # fmt: skip
    topics = new_topic.sum(axis=0).T.astype(dtype)
    return new_doc, np.ascontiguousarray(topics), float(log_lik.sum())


# ------------------------------------------- coordinate descent (KL-NMF)
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


def cd_sweep(X, W, H, y=None, steps=1, again=0.0, model=True):
    """One sweep of cyclic coordinate descent: the twin of
    `sklearn_topicfac.kernels.cd_sweep` (the same steps and checks, entry
    by entry).  The rows of ``W`` are independent given ``H`` and the
    columns of ``H`` given ``W``, so each half of the sweep runs over parts
    of rows (of columns) on the kernel threads, with each segment's
    entries contiguous (the columns' in a column-ordered copy, whose order
    is computed once per matrix).  ``model=False`` returns the new model
    at the stored entries in that column order, which saves putting it
    back in row order."""
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
    parts = _parallel.N_THREADS * _CD_PARTS
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


@nb.njit(**_JIT)
def _model_sums(indptr, data, y, sums, tiny, big, part, r0, r1):
    """`_kl_sums` from the model ``y`` at the stored entries."""
    longest = _longest(indptr, r0, r1)
    r = np.empty(longest, dtype=y.dtype)
    v = np.empty(longest, dtype=np.float64)
    x_log_r, x_sum = 0.0, 0.0
    for i in range(r0, r1):
        a, n = indptr[i], indptr[i + 1] - indptr[i]
        r[:n] = y[a : a + n]
        _row_ratio(data, a, n, r, tiny, big)
        s = _row_sums(data, a, n, r, tiny, v)
        x_log_r += s[0]
        x_sum += s[1]
    sums[part, 0] = x_log_r
    sums[part, 1] = x_sum


def cd_pass(X, W, H, steps=1, again=0.0):
    """`sklearn_topicfac.kernels.cd_pass` on this backend: the sums of the
    incoming state from its model at the stored entries, which the sweep
    starts from."""
    dtype = np.result_type(W.dtype, H.dtype)
    y = product_at_nonzeros(X, W, H)
    bounds = _bounds(X.indptr)
    sums = np.zeros((bounds.shape[0] - 1, 2))
    if X.nnz:
        tiny, big = _limits(dtype)
        _on_parts(
            _model_sums, bounds, X.nnz, X.indptr, X.data, y, sums, tiny, big,
            indexed=True,
        )  # fmt: skip
    W_new, H_new, _ = cd_sweep(X, W, H, y, steps, again, model=False)
    return W_new, H_new, _sums(sums)
