"""The twin of `kernels/divergence.py`'s `ratio_log_sums_at_nonzeros`: the
sums ``(sum x log r, sum x)`` of the divergence at the stored entries, the
ratio ``r = X / (W H)`` never stored.

Why a twin: the NumPy kernel stores the ratio (`ratio_at_nonzeros`), then
takes its logarithm in another pass; here, per row, the model, the ratio
and both sums are computed in one compiled loop while the row's columns of
``H`` are in cache, with a vectorizable logarithm within 2 ulp of NumPy's
(`_common._row_sums`).  The sums are float64 whatever the dtype, as the
NumPy kernel's.

`_model_sums` takes the same sums from a model already at the stored
entries: the coordinate-descent twin's objective (`coordinate.cd_pass`),
as `model_and_ratio_log_sums` is the NumPy sweep's.
"""

import numba as nb
import numpy as np

from ._common import (
    _JIT,
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
    bounds = _sum_bounds(X.indptr)
    sums = np.zeros((bounds.shape[0] - 1, 2))
    if X.nnz:
        tiny, big = _limits(dtype)
        _on_parts(
            _kl_sums, bounds, X.nnz * W.shape[1],
            X.indptr, X.indices, X.data, W.astype(dtype, copy=False),
            _padded(H, dtype), sums, tiny, big, indexed=True,
        )  # fmt: skip
    return _sums(sums)


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
