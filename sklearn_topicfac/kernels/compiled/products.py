"""The twins of `kernels/products.py`: the model ``W @ H`` and the ratio
``X / (W @ H)`` at the stored entries of ``X`` (`product_at_nonzeros`,
`ratio_at_nonzeros`).

Why a twin: the NumPy kernels gather ``(entries, k)`` blocks of ``H``'s
columns through memory, so every stored entry costs several passes over a
k-vector; here one compiled loop per row keeps the row of ``W`` in
registers, reads each entry's column of ``H`` once and writes one number
per entry, the ratio (floored and capped as `divide_into_ratio` does)
computed in the same loop.
"""

import numba as nb
import numpy as np

from ._common import (
    _JIT,
    _bounds,
    _csr,
    _limits,
    _on_parts,
    _padded,
    _row_model,
    _row_ratio,
)


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
