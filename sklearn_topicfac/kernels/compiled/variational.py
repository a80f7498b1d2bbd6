"""The twin of `kernels/variational.py`'s `lda_e_step`: LDA's mean-field
E-step (and Gamma-Poisson's), in NMF form.

Why a twin: the NumPy kernel batches documents of similar length into
padded chunks so that its many short NumPy calls pay off, on one thread
(they hold the GIL); here each document runs all of its sweeps in one
compiled loop, the documents shared by the kernel threads, with the same
per-document stopping rule and the sums of a sweep in float64.  The
digamma function is computed here (`_digamma`): numba cannot call SciPy's.
"""

import numba as nb
import numpy as np

from ._common import _E_STEP_PARTS_PER_THREAD, _JIT, _bounds, _on_parts


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
    bounds = _bounds(X.indptr, _E_STEP_PARTS_PER_THREAD)
    _on_parts(
        _e_step, bounds, X.nnz * k * max_iter,
        X.indptr, X.indices, X.data, Bt, alpha, gamma, y, max_iter, tol * k,
        np.finfo(dtype).tiny,
    )  # fmt: skip
    return gamma, y
