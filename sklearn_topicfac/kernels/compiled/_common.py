"""What the twins of several families share: numba's options, the split of
a call's rows into parts that the kernel threads run, and the loops over
one row's entries that the products, the divergence's sums and the
document passes are made of.

Each twin's compiled loop runs over a range of rows and releases the GIL
(``nogil``); the rows are split into parts of about equal numbers of
entries, which the package's kernel threads share (`_parallel`: the same
thread count and the same backing off on a busy machine as the NumPy
kernels).  A pass computing each row on its own may split its rows in any
way; a sum over rows (per-part outputs, ``indexed``) uses `_sum_bounds`,
fixed by the matrix alone, so results do not depend on how many threads
run or are configured.  Plain
serial loops compile faster than numba's ``parallel=True`` loops, which
matters on a first call.
"""

import numba as nb
import numpy as np
import scipy.sparse as sp

from .. import _parallel

# ``cache=True``: each twin compiles once per machine and combination of
# dtypes (then numba loads it from ``__pycache__``).  Rounding: sums over the
# k topics may be reassociated by the compiler (``fastmath`` reassociation
# and contraction only: infinities and NaN keep their IEEE meaning).
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


def _bounds(indptr, per_part=1):
    """Row boundaries of `N_THREADS` times ``per_part`` ranges of about equal
    numbers of entries, for passes that compute each row on its own."""
    return _parallel.split_rows(indptr, _parallel.N_THREADS * per_part).astype(np.int64)


def _sum_bounds(indptr):
    """Row boundaries of a sum over rows: the fixed `_parallel.sum_parts`."""
    return _parallel.sum_parts(indptr).astype(np.int64)


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


@nb.njit("float64(float64[::1])", **_JIT)
def warm_up(x):
    """The sum of ``x``: a function compiled (or, from numba's cache,
    loaded) as this package is imported, so that the import sets up numba's
    code generation, which the first twin loaded otherwise pays (about
    0.15 s in a fresh process, against under 10 ms for each twin after it):
    `_backend.preload` imports the package on a background thread while a
    fit's start runs."""
    s = 0.0
    for v in x:
        s += v
    return s


def _limits(dtype):
    info = np.finfo(dtype)
    return dtype.type(info.tiny), dtype.type(info.max)


def _csr(values, X):
    return sp.csr_matrix((values, X.indices, X.indptr), shape=X.shape, copy=False)


# ------------------------------------------------------------- row helpers
# The loops over one row's entries that the products, the divergence's sums
# and the document passes are made of (`_row_gather`, which only the
# document passes use, is in `updates`).  The topics' columns are read from
# ``Ht``, H transposed and zero-padded to `_padded` columns: every entry's
# k-vector then starts on the same alignment and its loop has no scalar
# remainder (LLVM vectorizes a reduction over k in blocks of 8 and leaves
# the rest scalar: k = 20 with no padding ran 1.2-1.5x slower).  The ratio
# and the logarithm run over the row's entries stored in a scratch vector,
# so that they vectorize too.

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
