"""The compiled twins of the kernels: the numba engine.

Each public function here has the signature, the result (to rounding) and
the contract of the NumPy kernel of the same name: same dtype out as in,
memory O(nnz + (n_samples + n_features) * k) at most, arguments never
modified.  The NumPy kernels dispatch to these when the numba engine is
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
in about half the time of numba's ``parallel=True`` loops, which matters on
a first call.

Rounding: sums over the k topics may be reassociated by the compiler
(``fastmath`` reassociation and contraction only: infinities and NaN keep
their IEEE meaning), and the sums over a row's entries that the updates
need are accumulated in float64 whatever the dtype, which is what the NumPy
kernels redo when a float32 sum overflows (`finite_or_float64`).

No twin for the sparse-dense products (``R @ B``, ``W.T @ R``): SciPy's are
compiled loops already, and a numba scatter-add measured no faster (twice
slower in float32, one thread).
Functions compile on first use for each combination of dtypes
(``cache=True``: once per machine).
"""

import numba as nb
import numpy as np
import scipy.sparse as sp

from . import _parallel

_JIT = {"cache": True, "nogil": True, "fastmath": {"reassoc", "contract"}}

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


# ------------------------------------------------------------ sampled ratio
@nb.njit(**_JIT)
def _sampled(indptr, indices, data, W, Ht, out, divide, tiny, big, r0, r1):
    k = W.shape[1]
    for i in range(r0, r1):
        for j in range(indptr[i], indptr[i + 1]):
            c = indices[j]
            s = W[i, 0] * Ht[c, 0]
            for t in range(1, k):
                s += W[i, t] * Ht[c, t]
            if divide:
                s = min(data[j] / max(s, tiny), big)
            out[j] = s


def _sampled_call(X, W, H, divide):
    dtype = np.result_type(W.dtype, H.dtype)
    out = np.empty(X.nnz, dtype=dtype)
    if X.nnz == 0:
        return out
    W = np.ascontiguousarray(W, dtype=dtype)
    Ht = np.ascontiguousarray(H.T, dtype=dtype)
    tiny, big = _limits(dtype)
    _on_parts(
        _sampled, _bounds(X.indptr), X.nnz * W.shape[1],
        X.indptr, X.indices, X.data, W, Ht, out, divide, tiny, big,
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


# --------------------------------------------------- fused document MU step
@nb.njit(**_JIT)
def _mu_doc(indptr, indices, data, W, Ht, h_sum, r, W_new, r_new, tiny, big, r0, r1):
    k = W.shape[1]
    acc = np.empty(k, dtype=np.float64)
    for i in range(r0, r1):
        acc[:] = 0.0
        for j in range(indptr[i], indptr[i + 1]):
            c = indices[j]
            s = W[i, 0] * Ht[c, 0]
            for t in range(1, k):
                s += W[i, t] * Ht[c, t]
            q = min(data[j] / max(s, tiny), big)
            r[j] = q
            for t in range(k):
                acc[t] += np.float64(q) * Ht[c, t]
        for t in range(k):
            # A zero of W stays zero (multiplicative updates never revive it).
            if W[i, t] == 0:
                W_new[i, t] = 0
            else:
                W_new[i, t] = W[i, t] * acc[t] / h_sum[t]
        for j in range(indptr[i], indptr[i + 1]):
            c = indices[j]
            s = W_new[i, 0] * Ht[c, 0]
            for t in range(1, k):
                s += W_new[i, t] * Ht[c, t]
            r_new[j] = min(data[j] / max(s, tiny), big)


def mu_doc_step(X, W, H):
    """``(R, W_new, R_new)`` of one KL-NMF document half-step, fused in one
    pass: the twin of `sklearn_topicfac.kernels.mu_doc_step`."""
    dtype = np.result_type(W.dtype, H.dtype)
    W = np.ascontiguousarray(W, dtype=dtype)
    Ht = np.ascontiguousarray(H.T, dtype=dtype)
    h = H.sum(axis=1, dtype=np.float64)
    h_sum = np.where(h > 0, h, 1.0)
    r = np.empty(X.nnz, dtype=dtype)
    r_new = np.empty(X.nnz, dtype=dtype)
    W_new = np.zeros(W.shape, dtype=dtype)
    if X.nnz:
        tiny, big = _limits(dtype)
        _on_parts(
            _mu_doc, _bounds(X.indptr), X.nnz * W.shape[1],
            X.indptr, X.indices, X.data, W, Ht, h_sum, r, W_new, r_new, tiny, big,
        )  # fmt: skip
    return _csr(r, X), W_new, _csr(r_new, X)


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
