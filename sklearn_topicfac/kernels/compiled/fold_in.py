"""The twin of `kernels/fold_in.py`: KL-NMF's fold-in of new documents with
the topics fixed (`mu_fold_in`).

Why a twin: the NumPy kernel sweeps the still-active documents together,
gathering their rows of ``X`` again at each sweep; here each document runs
all of its sweeps in one compiled loop, with the same per-document
stopping rule, so its result still does not depend on the other
documents.  Documents take different numbers of sweeps, so the threads
take small parts from a queue (`_E_STEP_PARTS_PER_THREAD`).
"""

import numba as nb
import numpy as np

from ._common import _E_STEP_PARTS_PER_THREAD, _JIT, _bounds, _limits, _on_parts


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
    bounds = _bounds(X.indptr, _E_STEP_PARTS_PER_THREAD)
    _on_parts(
        _fold_in, bounds, X.nnz * W.shape[1] * max_iter,
        X.indptr, X.indices, X.data, Ht, h, h_sum, W, max_iter, tol, tiny, big,
    )  # fmt: skip
    return W
