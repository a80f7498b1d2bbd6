"""Update kernels shared by every estimator: pure NumPy/SciPy functions.

One notation everywhere::

    X  (n_samples, n_features)   non-negative data, CSR (dense accepted where noted)
    W  (n_samples, k)            document factor
    H  (k, n_features)           topic factor
    Y = W @ H                    the model, only ever evaluated at X's stored entries
    R = X / Y                    at X's stored entries: a CSR matrix with X's pattern

Every kernel keeps the floating dtype of its inputs (float32 stays float32),
allocates at most O(nnz + (n_samples + n_features) * k) memory, and never
modifies its arguments.  Validation lives in the estimators, not here.
"""

import contextvars
import threading
import time
from functools import partial

import joblib
import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln, psi, xlogy

# Elements of the (nnz, k) gather temporaries built per unit of work of the
# sampled product, for 4-byte floats (half as many for 8-byte floats).
# Bounds the extra memory of `product_at_nonzeros` to about 1 MiB per thread
# whatever the size of X: small enough that a unit's temporaries stay in a
# core's L2 cache, large enough that the Python loop overhead is negligible.
_CHUNK_ELEMENTS = 1 << 17

# Entries of a run of consecutive rows of equal length from which the run is
# computed as one batched matrix-vector product (below it, a plain gather).
_MIN_SLAB = 1 << 9

# Work (stored entries times k) below which a kernel stays on one thread:
# starting a thread costs ~50 us, a few hundred thousand multiply-adds.
_MIN_PARALLEL_WORK = 1 << 21


def _default_n_threads():
    return max(1, min(joblib.cpu_count(), 8))


# Threads the kernels may use.  Work is split into row ranges or units that
# the threads share; NumPy's take/matmul/ufuncs and SciPy's sparse products
# release the GIL, so they run in parallel.  Results never depend on how many
# threads actually run: every entry and row is computed by the same code
# whatever the split, and sums over row ranges use a split fixed by this
# setting alone (see `transposed_product`).
_N_THREADS = _default_n_threads()

# Python threads only pay when each gets a core.  On a machine busy with
# other processes, a thread holding the GIL is preempted and the others wait
# on it, so a parallel call can be slower than a serial one.  When a parallel
# call got less than half of its extra threads' worth of CPU time, the next
# `_BACKOFF_CALLS` calls run on one thread, after which threads are tried
# again.  This only ever changes speed, never a result.
_BACKOFF_CALLS = 32
_backoff = 0


def _n_threads(work):
    """Threads for a kernel call doing ``work`` (entries times k) of work."""
    global _backoff
    if work < _MIN_PARALLEL_WORK or _N_THREADS <= 1:
        return 1
    if _backoff > 0:
        _backoff -= 1
        return 1
    return _N_THREADS


def _run_parallel(tasks):
    """Run the zero-argument callables ``tasks``, one thread each; return results.

    The first task runs on the calling thread.  Each other thread runs in a
    copy of the caller's context, so NumPy's ``errstate`` carries over; an
    exception in any task is re-raised here.  A call that did not get the
    CPU time of its threads switches the next calls to one thread (see
    `_BACKOFF_CALLS`).
    """
    global _backoff
    if len(tasks) == 1:
        return [tasks[0]()]
    wall, cpu = time.perf_counter(), time.process_time()
    results = [None] * len(tasks)
    errors = []

    def run(i):
        try:
            results[i] = tasks[i]()
        except BaseException as exc:  # re-raised on the calling thread
            errors.append(exc)

    threads = [
        threading.Thread(target=contextvars.copy_context().run, args=(run, i))
        for i in range(1, len(tasks))
    ]
    for thread in threads:
        thread.start()
    run(0)
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if cpu < (1 + 0.5 * (len(tasks) - 1)) * wall:
        _backoff = _BACKOFF_CALLS
    return results


def _map_parts(fn, parts, work):
    """``[fn(part) for part in parts]``, the parts shared by up to `_n_threads`."""
    n_threads = min(_n_threads(work), len(parts))
    if n_threads <= 1:
        return [fn(part) for part in parts]
    results = [None] * len(parts)
    queue = _WorkQueue(range(len(parts)))

    def work_off():
        for i in queue:
            results[i] = fn(parts[i])

    _run_parallel([work_off] * n_threads)
    return results


class _WorkQueue:
    """Iterator over ``items`` that several threads can share."""

    def __init__(self, items):
        self._items = iter(items)
        self._lock = threading.Lock()

    def __iter__(self):
        return self

    def __next__(self):
        with self._lock:
            return next(self._items)


def _split_rows(indptr, n_parts):
    """Row boundaries splitting a CSR matrix into ``n_parts`` ranges of ~equal nnz."""
    n_rows = indptr.shape[0] - 1
    targets = np.linspace(0, indptr[-1], n_parts + 1)[1:-1]
    cuts = np.searchsorted(indptr, targets, side="left")
    return np.concatenate(([0], np.minimum(cuts, n_rows), [n_rows]))


def _compressed_view(data, indices, indptr, shape, fmt="csr"):
    """A CSR (or CSC) matrix on exactly these arrays: no copy, no check.

    SciPy's constructor, even with ``copy=False``, copies ``data`` and
    ``indices`` when they are views of less than half of a larger array
    (``prune``), which is what a row range or a unit of work always is: an
    O(nnz) copy per call.  The arrays are set on an empty matrix instead;
    callers pass consistent CSR arrays (``indptr[0] == 0``, equal index
    dtypes), and only SciPy's products read them.
    """
    cls = sp.csr_matrix if fmt == "csr" else sp.csc_matrix
    M = cls(shape, dtype=data.dtype)
    M.data, M.indices = data, indices
    M.indptr = indptr.astype(indices.dtype, copy=False)
    return M


def _row_range(R, r0, r1, transposed=False):
    """Rows ``r0:r1`` of a CSR matrix, sharing its data: as CSR, or their
    transpose as CSC (the same arrays read the other way)."""
    a, b = R.indptr[r0], R.indptr[r1]
    shape = (r1 - r0, R.shape[1])
    return _compressed_view(
        R.data[a:b],
        R.indices[a:b],
        R.indptr[r0 : r1 + 1] - a,
        shape[::-1] if transposed else shape,
        fmt="csc" if transposed else "csr",
    )


def _mixed_blocks(indptr, r0, r1, per_unit):
    """Units ``(r0', r1', 0)`` covering rows ``r0:r1`` with ~per_unit entries each."""
    a, b = int(indptr[r0]), int(indptr[r1])
    if a == b:
        return []
    targets = np.arange(a + per_unit, b, per_unit)
    cuts = r0 + np.searchsorted(indptr[r0 : r1 + 1], targets, side="right") - 1
    bounds = np.unique(np.concatenate(([r0], cuts, [r1]))).tolist()
    return [
        (s, e, 0)
        for s, e in zip(bounds[:-1], bounds[1:], strict=True)
        if indptr[e] > indptr[s]
    ]


def _work_units(indptr, k, itemsize=4):
    """Split the rows of a CSR matrix into the units of work of the sampled product.

    Returns a list of ``(r0, r1, length)``.  ``length > 0`` marks a *slab*:
    rows ``r0:r1`` all store ``length`` entries, so their entries form a dense
    ``(r1 - r0, length)`` block of ``X.data`` and the product there is one
    batched matrix-vector product.  ``length == 0`` marks rows of mixed
    lengths.  A unit holds about ``_CHUNK_ELEMENTS / k`` entries, half as
    many for 8-byte floats (a single longer row is a unit of its own).  Rows
    sorted by length, as the fit loop orders them, are almost all in slabs.
    """
    n_rows = indptr.shape[0] - 1
    per_unit = max(1, _CHUNK_ELEMENTS * 4 // (max(k, 1) * max(itemsize, 4)))
    counts = np.diff(indptr)
    change = np.flatnonzero(counts[1:] != counts[:-1]) + 1
    starts = np.concatenate(([0], change))
    ends = np.concatenate((change, [n_rows]))
    lengths = counts[starts]
    is_slab = (ends - starts) * lengths >= _MIN_SLAB
    units = []
    row = 0
    for s, e, length in zip(
        starts[is_slab].tolist(),
        ends[is_slab].tolist(),
        lengths[is_slab].tolist(),
        strict=True,
    ):
        units += _mixed_blocks(indptr, row, s, per_unit)
        step = max(1, per_unit // length)
        units += [(r, min(r + step, e), length) for r in range(s, e, step)]
        row = e
    units += _mixed_blocks(indptr, row, n_rows, per_unit)
    return units


def _unit_product(G, W, length, local_indptr, out):
    """``W @ G.T`` at one unit's entries, into ``out``.

    ``G`` holds the gathered columns of ``H``, one row per entry; ``W`` the
    unit's rows.  A slab (``length > 0``) is one batched matrix-vector
    product; rows of mixed lengths repeat their row of ``W`` per entry.
    """
    if length:
        n, k = W.shape
        np.matmul(G.reshape(n, length, k), W[:, :, None], out=out.reshape(n, length, 1))
    else:
        Wr = np.repeat(W, np.diff(local_indptr), axis=0)
        np.einsum("ij,ij->i", Wr, G, out=out)


def _product_on_units(units, indptr, indices, W, Ht, out):
    """Fill ``out`` with ``W @ Ht.T`` sampled at the entries of ``units``.

    ``units`` is any iterable of work units, possibly shared with other
    threads (a `_WorkQueue`).
    """
    for r0, r1, length in units:
        a, b = indptr[r0], indptr[r1]
        # One contiguous k-vector per stored entry: H's columns, gathered.
        G = np.take(Ht, indices[a:b], axis=0)
        _unit_product(G, W[r0:r1], length, indptr[r0 : r1 + 1], out[a:b])


def product_at_nonzeros(X, W, H):
    """Evaluate ``(W @ H)`` at the stored entries of a CSR matrix ``X``.

    A sampled dense-dense product (SDDMM): the result is aligned with
    ``X.data``, so ``Y[i] = W[r_i] @ H[:, c_i]`` for the ``i``-th stored entry
    at row ``r_i`` and column ``c_i``.  Work is done in units of about
    ``_CHUNK_ELEMENTS / k`` entries, so the extra memory is O(nnz) however
    large ``n_samples * n_features`` is.

    In each unit the columns of ``H`` at the stored entries are gathered into
    one contiguous ``(entries, k)`` block.  Consecutive rows with the same
    number of entries (the fit loop sorts the documents by length, so nearly
    all of them) then form a ``(rows, length, k)`` array, and the unit is one
    batched matrix-vector product with their rows of ``W``; other rows repeat
    their row of ``W`` per entry and take row-wise dot products.  Units run on
    up to ``_N_THREADS`` threads (``take`` and ``matmul`` release the GIL).

    Parameters
    ----------
    X : scipy.sparse CSR matrix or array of shape (n_samples, n_features)
    W : ndarray of shape (n_samples, k)
    H : ndarray of shape (k, n_features)

    Returns
    -------
    Y : ndarray of shape (X.nnz,), dtype of ``W @ H``.
    """
    k = W.shape[1]
    out = np.empty(X.nnz, dtype=np.result_type(W.dtype, H.dtype))
    if X.nnz == 0:
        return out
    # A contiguous (n_features, k) copy makes each column gather one
    # contiguous read; it costs O(n_features * k), small next to O(nnz * k).
    Ht = np.ascontiguousarray(H.T)
    indptr, indices = X.indptr, X.indices
    units = _work_units(indptr, k, out.itemsize)
    n_threads = min(_n_threads(X.nnz * k), len(units))
    if n_threads <= 1:
        _product_on_units(units, indptr, indices, W, Ht, out)
        return out
    # The threads take the next unit from a shared queue: a thread that the
    # system pauses delays no one.  Each entry is computed the same way
    # whichever thread takes its unit.
    queue = _WorkQueue(units)
    work = partial(_product_on_units, queue, indptr, indices, W, Ht, out)
    _run_parallel([work] * n_threads)
    return out


def ratio_at_nonzeros(X, W, H):
    """Return ``R = X / (W @ H)`` evaluated only at the stored entries of ``X``.

    The model is floored at the smallest positive normal number of its dtype
    so that a stored entry whose model value underflowed gives a large, finite
    ratio instead of ``inf``; stored zeros of ``X`` give ratio 0.

    Parameters
    ----------
    X : scipy.sparse CSR matrix or array of shape (n_samples, n_features)
    W : ndarray of shape (n_samples, k)
    H : ndarray of shape (k, n_features)

    Returns
    -------
    R : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        Same sparsity pattern as ``X`` (its index arrays are shared, not copied).
    """
    Y = product_at_nonzeros(X, W, H)
    _divide_into_ratio(X.data, Y)
    return sp.csr_matrix((Y, X.indices, X.indptr), shape=X.shape, copy=False)


def _divide_into_ratio(x, y):
    """``y <- min(x / max(y, tiny), max)`` in place: the ratio at stored entries.

    The model is floored at the smallest normal number, and the ratio capped
    at the largest finite one of its dtype.  The cap only acts in float32 on
    data spanning most of its range (an entry near 1e30 where the model is
    below 1e-8): there it reads the model as ``x / max`` instead of letting
    the ratio overflow to ``inf``, which would turn the next update into
    NaN.  Every product of a capped ratio with a factor entry is then finite
    or recomputed in float64 (see `_finite_or_float64`).
    """
    info = np.finfo(y.dtype)
    np.maximum(y, info.tiny, out=y)
    with np.errstate(over="ignore"):
        np.divide(x, y, out=y, casting="unsafe")
    np.minimum(y, info.max, out=y)


# Entries per chunk of the objective's sums: a chunk's temporaries stay in
# L2, and the chunks (not the threads) fix the order of summation.
_SUM_CHUNK = 1 << 15


def _x_log_r_and_x(x, r):
    """``(sum x log max(r, tiny), sum x)`` over one chunk, in float64.

    With the ratio floored, ``log r`` is finite, so ``x log r`` is 0 where
    ``x`` is a stored zero: the values of ``xlogy``, at the cost of a plain
    log.  Products and sums are taken in float64 (no overflow in float32).
    """
    log_r = np.maximum(r, np.finfo(r.dtype).tiny)
    np.log(log_r, out=log_r)
    return (
        float(np.einsum("i,i->", x, log_r, dtype=np.float64)),
        float(np.einsum("i->", x, dtype=np.float64)),
    )


def kl_divergence_from_ratio(X, R, W, H):
    """Generalized KL divergence ``D(X || W H)`` from a ratio already computed.

    .. math::

        D(X \\| WH) = \\sum_{X_{ij} > 0} X_{ij} \\log R_{ij}
                     - \\sum_{ij} X_{ij} + \\sum_{ij} (WH)_{ij},

    where ``sum(W H) = W.sum(0) @ H.sum(1)`` costs O((n + m) k).  Returned as a
    Python float accumulated in float64 (a scalar, not a float64 copy of data).

    A ratio that underflowed to zero at a positive entry is read as the
    smallest normal number: the true term ``X log(X / Y)`` is then between
    ``-X log(1 / tiny)`` and 0 with ``X < tiny * Y``, so the error is below
    ``tiny * sum(Y) / e`` instead of an infinite objective.
    """
    x, r = X.data, R.data
    starts = range(0, x.shape[0], _SUM_CHUNK)
    parts = _map_parts(
        lambda a: _x_log_r_and_x(x[a : a + _SUM_CHUNK], r[a : a + _SUM_CHUNK]),
        starts,
        x.shape[0] * 8,
    )
    log_term = sum(p[0] for p in parts)
    sum_x = sum(p[1] for p in parts)
    sum_y = float(
        np.dot(W.sum(axis=0, dtype=np.float64), H.sum(axis=1, dtype=np.float64))
    )
    return float(log_term - sum_x + sum_y)


def kl_divergence(X, W, H):
    """Generalized Kullback-Leibler divergence ``D(X || W H)``.

    Works for sparse ``X`` (never forming ``W @ H`` densely) and for dense
    ``X`` (where the dense model is no larger than ``X`` itself).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
    W : ndarray of shape (n_samples, k)
    H : ndarray of shape (k, n_features)

    Returns
    -------
    divergence : float

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac._kernels import kl_divergence
    >>> X = np.array([[1.0, 2.0], [3.0, 0.0]])
    >>> W, H = np.ones((2, 1)), np.array([[1.0, 1.0]])
    >>> round(kl_divergence(X, W, H), 6)
    2.682131
    """
    if sp.issparse(X):
        X = X.tocsr()
        return kl_divergence_from_ratio(X, ratio_at_nonzeros(X, W, H), W, H)
    Y = W @ H
    ratio = np.divide(X, np.maximum(Y, np.finfo(Y.dtype).tiny))
    return float(
        np.sum(xlogy(X, ratio), dtype=np.float64)
        - np.sum(X, dtype=np.float64)
        + np.sum(Y, dtype=np.float64)
    )


def _is_csr(R):
    return sp.issparse(R) and R.format == "csr"


def _finite_or_float64(product, compute):
    """``product`` if finite, else ``compute`` redone in float64.

    In float32 a ratio taken where the model underflowed, times a large
    factor entry, can overflow an intermediate ``R @ B`` although the
    multiplicative update it feeds (``A * (R @ B)``, bounded by the data's
    row or column sums) is finite.  That only happens on data spanning most
    of float32's range; there the product is recomputed in float64 and the
    caller's ``_multiply_keeping_zeros`` casts the bounded update back.
    """
    if product.dtype == np.float64 or np.isfinite(product).all():
        return product
    return compute(np.float64)


def _sparse_dense_product(R, B):
    """``R @ B`` for sparse ``R`` and dense ``B``; CSR row ranges over threads."""
    with np.errstate(over="ignore"):
        product = _sparse_dense_product_raw(R, B)
    return _finite_or_float64(
        product, lambda dt: np.asarray(R.astype(dt) @ B.astype(dt))
    )


def _sparse_dense_product_raw(R, B):
    work = R.nnz * B.shape[1]
    if not _is_csr(R) or _n_threads(work) == 1:
        return np.asarray(R @ B)
    B = np.ascontiguousarray(B)
    bounds = _split_rows(R.indptr, _N_THREADS).tolist()
    out = np.empty((R.shape[0], B.shape[1]), dtype=np.result_type(R.dtype, B.dtype))

    def rows(r):
        out[r[0] : r[1]] = _row_range(R, *r) @ B

    _map_parts(rows, list(zip(bounds[:-1], bounds[1:], strict=True)), work)
    return out


def transposed_product(W, R):
    """``W.T @ R`` for dense ``W`` and sparse ``R``: shape (k, n_features).

    This is the per-document part of every topic update: summed over row
    blocks of ``R`` it gives the topic statistics (which is also how it runs
    on several threads: one row range of ``R`` each, then the sum).
    """
    with np.errstate(over="ignore"):
        product = _transposed_product_raw(W, R)
    return _finite_or_float64(
        product, lambda dt: np.asarray((R.T.astype(dt) @ W.astype(dt)).T)
    )


def _transposed_product_raw(W, R):
    work = R.nnz * W.shape[1]
    if not _is_csr(R) or work < _MIN_PARALLEL_WORK or _N_THREADS <= 1:
        return np.asarray((R.T @ W).T)
    # One part per configured thread, however many threads run now: the
    # grouping of the sum, hence its rounding, is fixed by `_N_THREADS`.
    bounds = _split_rows(R.indptr, _N_THREADS).tolist()

    def rows(r):
        return np.asarray(_row_range(R, *r, transposed=True) @ W[r[0] : r[1]])

    parts = _map_parts(rows, list(zip(bounds[:-1], bounds[1:], strict=True)), work)
    total = parts[0]
    for part in parts[1:]:
        total += part
    return total.T


def _multiply_keeping_zeros(A, B, out=None):
    """``A * B`` in which a zero of ``A`` stays zero.

    Multiplicative updates never revive a zero entry.  In floating point the
    other factor can overflow to ``inf`` exactly there (a ratio taken at a
    model value that underflowed), and ``0 * inf`` would be NaN.  ``out``
    may be ``B`` when it is a temporary of the caller's.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        P = np.multiply(A, B, out=out)
    P[A == 0] = 0
    return P.astype(A.dtype, copy=False)


def _into_temporary(A, T):
    """``T`` if the product ``A * T`` can be written into it, else None."""
    return T if T.dtype == np.result_type(A, T) else None


def _nonzero(d):
    # A zero denominator only occurs where the numerator is zero too (a dead
    # topic or document), so dividing by 1 there keeps 0 without NaN.
    return np.where(d > 0, d, np.ones_like(d))


def mu_update_w(R, W, H):
    """Lee-Seung KL multiplicative update of ``W`` (``H`` fixed).

    ``W_new = W * (R @ H.T) / H.sum(1)``.  After it, the row sums of
    ``W_new @ H`` equal the row sums of ``X`` (paper 001, Prop. 3).
    """
    RHt = _sparse_dense_product(R, H.T)
    W_new = _multiply_keeping_zeros(W, RHt, out=_into_temporary(W, RHt))
    W_new /= _nonzero(H.sum(axis=1))[None, :]
    return W_new


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
    k = W.shape[1]
    dtype = np.result_type(W.dtype, H.dtype)
    r = np.empty(X.nnz, dtype=dtype)
    r_new = np.empty(X.nnz, dtype=dtype)
    # Rows without entries belong to no unit: R H^T is 0 there, and so is W_new.
    W_new = np.zeros(W.shape, dtype=dtype)
    Ht = np.ascontiguousarray(H.T)
    h_sum = _nonzero(H.sum(axis=1))
    units = _work_units(X.indptr, k, r.itemsize)
    step = partial(_mu_doc_on_units, X, W, Ht, h_sum, r, W_new, r_new)
    n_threads = min(_n_threads(X.nnz * k), len(units))
    if n_threads <= 1:
        step(units)
    else:
        queue = _WorkQueue(units)
        _run_parallel([partial(step, queue)] * n_threads)
    shape = X.shape
    return (
        sp.csr_matrix((r, X.indices, X.indptr), shape=shape, copy=False),
        W_new,
        sp.csr_matrix((r_new, X.indices, X.indptr), shape=shape, copy=False),
    )


def _sampled_ratio_on_unit(G, W, x, length, local_indptr, out):
    """The ratio ``x / (W @ G.T)`` at one unit's entries, into ``out``."""
    _unit_product(G, W, length, local_indptr, out)
    _divide_into_ratio(x, out)


def _unit_rht(r, G, length, local_indptr):
    """``R @ H.T`` on one unit's rows, from its ratios and gathered columns."""
    n = local_indptr.shape[0] - 1
    k = G.shape[1]
    if length:
        return np.matmul(r.reshape(n, 1, length), G.reshape(n, length, k)).reshape(n, k)
    columns = np.arange(r.shape[0], dtype=local_indptr.dtype)
    rows = _compressed_view(r, columns, local_indptr, (n, r.shape[0]))
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
            w = _multiply_keeping_zeros(W[r0:r1], RHt, out=W_new[r0:r1])
            w /= h_sum[None, :]
        else:
            # The float64 redo is divided before the cast back.
            W_new[r0:r1] = (
                _multiply_keeping_zeros(W[r0:r1].astype(RHt.dtype), RHt)
                / (h_sum[None, :])
            )
        _sampled_ratio_on_unit(G, W_new[r0:r1], x, length, local_indptr, r_new[a:b])


def mu_topic_update(H, WtR, w_sum):
    """Topic half-step from summed statistics: ``H * WtR / w_sum[:, None]``.

    ``WtR = W.T @ R`` and ``w_sum = W.sum(0)``, both sums over documents, so
    this is the reduce step of a map-reduce over document blocks.
    """
    return _multiply_keeping_zeros(H, WtR) / _nonzero(w_sum)[:, None]


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
    RHt = _sparse_dense_product(R, H.T)
    return _multiply_keeping_zeros(W, RHt, out=_into_temporary(W, RHt))


def em_topic_update(H, WtR):
    """PLSI M-step for ``P(w|z)`` from summed statistics: rows of ``H * WtR``
    normalized to sum to one."""
    return normalize_rows(_multiply_keeping_zeros(H, WtR))[0]


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
    return A / _nonzero(s)[:, None], s


def normalize_columns(A):
    """L1-normalize the columns of a non-negative array.

    Returns ``(A / s[None, :], s)`` with ``s = A.sum(0)``; columns summing to
    zero are left at zero.
    """
    s = A.sum(axis=0)
    return A / _nonzero(s)[None, :], s


# ------------------------------------------------------------------------
# Latent Dirichlet allocation by mean-field variational inference, in the
# NMF form of paper 002, Alg. 5.  With Theta = exp(E[log theta]) (n, k) and
# B = exp(E[log beta]) (k, m), the optimal word-topic responsibilities are
# phi_dwk = Theta_dk B_kw / (Theta B)_dw, so every sum over phi is a product
# with R = X / (Theta B) at the non-zeros: no (nnz, k) responsibility array
# is ever stored.

# The E-step works on chunks of documents of similar length, each padded to
# its longest document: a chunk holds the gathered topic columns of its
# documents as a dense (documents, k, width) array of at most this many
# elements (1 MiB in float64), small enough to stay in a core's L2 cache
# during the chunk's sweeps, large enough that the per-sweep Python overhead
# is spread over tens of documents.  Lengths in a chunk differ by at most
# _PAD_FACTOR (plus _PAD_SLACK entries), which bounds the padding.
_E_STEP_CHUNK_ELEMENTS = 1 << 17
_PAD_FACTOR = 1.25
_PAD_SLACK = 8
# A chunk is swept until this fraction of its documents is left active.
_REPOOL_FRACTION = 0.5


def dirichlet_expectation(A):
    """``E[log theta]`` for ``theta`` row-wise Dirichlet with parameters ``A``.

    .. math::

        \\mathbb{E}[\\log \\theta_{dk}]
        = \\psi(A_{dk}) - \\psi\\big(\\sum_j A_{dj}\\big)

    ``A`` must be positive; the dtype is kept (``scipy.special.psi`` keeps
    float32).
    """
    return psi(A) - psi(A.sum(axis=1))[:, None]


def exp_dirichlet_expectation(A):
    """``exp(E[log theta])`` row-wise: the NMF-form factor of paper 002, Alg. 5.

    Its rows sum to less than one (Jensen); it is what multiplies the topics
    in the variational responsibilities.
    """
    return np.exp(dirichlet_expectation(A))


def dirichlet_kl(A, prior):
    """Sum over rows of ``KL(Dir(A[d]) || Dir(prior))``, as a Python float.

    The sum of `dirichlet_kl_rows`.  Minus this is the prior-and-entropy
    part of the LDA evidence lower bound, for the documents (``A = gamma``,
    ``prior = alpha``) and for the topics (``A = lambda``, ``prior = eta``).
    """
    return float(dirichlet_kl_rows(A, prior).sum())


def dirichlet_kl_rows(A, prior):
    """``KL(Dir(A[d]) || Dir(prior))`` for every row ``d``, in float64.

    .. math::

        \\log\\Gamma(\\textstyle\\sum_j A_{dj})
        - \\sum_j \\log\\Gamma(A_{dj})
        - \\log\\Gamma(\\textstyle\\sum_j a_j) + \\sum_j \\log\\Gamma(a_j)
        + \\sum_j (A_{dj} - a_j)\\, \\mathbb{E}[\\log \\theta_{dj}]

    ``prior`` is a scalar (symmetric Dirichlet) or a vector of length
    ``A.shape[1]``.  Evaluated in float64 whatever the dtype of ``A``: its
    terms are of the size of the counts and cancel to a much smaller total.
    """
    A = np.asarray(A, dtype=np.float64)
    prior = np.broadcast_to(np.asarray(prior, dtype=np.float64), (A.shape[1],))
    a_sum = A.sum(axis=1)
    e_log = psi(A) - psi(a_sum)[:, None]
    per_row_prior = gammaln(prior).sum() - gammaln(prior.sum())
    return (
        gammaln(a_sum)
        - gammaln(A).sum(axis=1)
        + per_row_prior
        + np.sum((A - prior) * e_log, axis=1)
    )


def _length_chunks(lengths, rows, k):
    """Split ``rows`` into chunks ``(rows, width)`` of similar document length."""
    order = rows[np.argsort(lengths[rows], kind="stable")]
    sorted_len = lengths[order]
    chunks = []
    i = 0
    while i < order.size:
        cap = int(sorted_len[i] * _PAD_FACTOR) + _PAD_SLACK
        j = int(np.searchsorted(sorted_len, cap, side="right"))
        width = max(int(sorted_len[j - 1]), 1)
        j = min(j, i + max(1, _E_STEP_CHUNK_ELEMENTS // (width * k)))
        chunks.append((order[i:j], max(int(sorted_len[j - 1]), 1)))
        i = j
    return chunks


def _chunk_arrays(X, rows, width, Bt_pad):
    """Dense, padded views of documents ``rows`` of CSR ``X``.

    Returns ``G`` of shape (rows, k, width) with ``G[d, :, j]`` the column
    of ``B`` of the ``j``-th stored term of document ``d``, the counts ``x``
    (rows, width), the mask of real entries and their positions in ``X.data``.
    Padding points at the zero row appended to ``Bt_pad = B.T`` and has
    count 0.
    """
    starts = X.indptr[rows]
    lengths = X.indptr[rows + 1] - starts
    valid = np.arange(width) < lengths[:, None]
    pos = starts[:, None] + np.arange(width)
    cols = np.full((rows.size, width), Bt_pad.shape[0] - 1, dtype=np.intp)
    cols[valid] = X.indices[pos[valid]]
    x = np.zeros((rows.size, width), dtype=Bt_pad.dtype)
    x[valid] = X.data[pos[valid]]
    # mode="clip" skips take's bounds-checking copy (4x faster here); the
    # indices are valid by construction.
    G = np.take(Bt_pad, cols, axis=0, mode="clip").transpose(0, 2, 1)
    return np.ascontiguousarray(G), x, valid, pos


def _store_products(y_out, pos, valid, gamma, y):
    """Write ``Theta B`` of finished documents into ``y_out`` at ``pos``.

    ``y`` (documents, 1, width) was computed with ``exp(psi(gamma))``; the
    factor ``exp(-psi(sum(gamma_d)))`` normalizes it to ``Theta B``.
    """
    y = y[:, 0, :] * np.exp(-psi(gamma.sum(axis=1)))[:, None]
    y_out[pos[valid]] = np.maximum(y[valid], np.finfo(y.dtype).tiny)


def _redo_sweep_in_float64(new, t, G, x3, tiny):
    """Recompute, in float64, the rows of one sweep whose result overflowed.

    ``new[d, k] = t_dk sum_w G_dkw x_dw / max(y_dw, tiny)`` with ``y_d = t_d
    G_d``: each term is at most ``x_dw`` (``t_dk G_dkw <= y_dw``, and below
    the floor the term only shrinks), so the row is bounded by the
    document's length.  But in float32 the intermediate ratio ``x / y``
    overflows where the model of a word underflowed (a count above 4 at a
    word every topic gives probability below the smallest normal float32
    overflows it), and ``inf * 0`` then turns gamma into NaN.  The same
    floor in float64 keeps every intermediate finite; the bounded result is
    written back in the working dtype.
    """
    bad = np.flatnonzero(~np.isfinite(new).all(axis=1))
    t64 = t[bad].astype(np.float64)
    G64 = G[bad].astype(np.float64)
    y64 = np.maximum(np.matmul(t64[:, None, :], G64), tiny)
    ratio = x3[bad] / y64
    new[bad] = np.matmul(G64, ratio.transpose(0, 2, 1))[:, :, 0] * t64


def _e_step_chunks(X, chunks, Bt_pad, alpha, max_iter, tol, gamma, sweeps, y_out):
    """Sweeps of `lda_e_step` over some chunks; returns the rows left active.

    Writes ``gamma``, ``sweeps`` and, for the finished documents, ``y_out``
    in place.  A chunk is swept until half of its documents have finished
    (the finished ones ride along: recomputing them is cheaper than
    compacting the chunk every sweep, and their results were saved when they
    finished); the others go back to the pool, to be chunked again with the
    other chunks' stragglers.
    """
    k = Bt_pad.shape[1]
    tiny = np.finfo(gamma.dtype).tiny
    # The per-document test "mean absolute change < tol", on the sum.
    threshold = tol * k
    pending = []
    for rows, width in chunks:
        G, x, valid, pos = _chunk_arrays(X, rows, width, Bt_pad)
        n = rows.size
        g = gamma[rows]
        # Within the sweeps exp(psi(gamma)) stands for Theta: the missing
        # factor exp(-psi(sum(gamma_d))) is one number per document, and
        # Theta * ((X / (Theta B)) B^T) does not change when a row of Theta
        # is scaled (the identity behind paper 002's Lemma E.3).
        t = np.exp(psi(g))
        # Sweeps made before this chunk, per document; `sweep` counts here,
        # and from `first_cap` on some document may reach max_iter.
        before = sweeps[rows]
        first_cap = max_iter - int(before.max())
        sweep = 0
        live = np.ones(n, dtype=bool)
        y = np.empty((n, 1, width), dtype=g.dtype)
        grad = np.empty((n, k, 1), dtype=g.dtype)
        x3 = x[:, None, :]
        just_finished = None
        while True:
            np.matmul(t[:, None, :], G, out=y)
            if just_finished is not None:
                # Their gamma did not change since: this is their final product.
                f = just_finished
                _store_products(y_out, pos[f], valid[f], g[f], y[f])
                just_finished = None
            np.maximum(y, tiny, out=y)
            with np.errstate(over="ignore", invalid="ignore"):
                np.divide(x3, y, out=y)
                np.matmul(G, y.reshape(n, width, 1), out=grad)
                new = grad[:, :, 0] * t
            if not np.isfinite(new).all():
                _redo_sweep_in_float64(new, t, G, x3, tiny)
            new += alpha
            change = np.add.reduce(np.abs(new - g), axis=1, dtype=np.float64)
            g = new
            t = np.exp(psi(g))
            sweep += 1
            finished = change < threshold
            if sweep >= first_cap:
                finished |= before + sweep >= max_iter
            finished &= live
            if not np.count_nonzero(finished):
                continue
            f = np.flatnonzero(finished)
            gamma[rows[f]] = g[f]
            live[f] = False
            n_live = int(np.count_nonzero(live))
            if n_live > _REPOOL_FRACTION * n:
                just_finished = f
                continue
            y_f = np.matmul(t[f][:, None, :], G[f])
            _store_products(y_out, pos[f], valid[f], g[f], y_f)
            if n_live:
                still = np.flatnonzero(live)
                gamma[rows[still]] = g[still]
                sweeps[rows[still]] = before[still] + sweep
                pending.append(rows[still])
            break
    return pending


def lda_e_step(X, gamma, B, alpha, max_iter, tol):
    """Mean-field E-step of LDA for all documents at once (paper 002, Alg. 5).

    Starting from the variational Dirichlet parameters ``gamma``, each sweep
    updates every still-active document:

    .. math::

        \\Theta = \\exp(\\mathbb{E}[\\log\\theta]) = \\exp\\big(\\psi(\\gamma)
        - \\psi(\\gamma \\mathbf{1})\\big), \\qquad
        \\gamma \\leftarrow \\alpha + \\Theta \\odot
        \\Big(\\frac{X}{\\Theta B}\\Big) B^T,

    one sampled product (``Theta B`` at the non-zeros of ``X``) and one
    sparse-dense product per sweep.  A document leaves the active set once
    the mean absolute change of its ``gamma`` falls below ``tol`` (or after
    ``max_iter`` sweeps): scikit-learn's per-document rule, so a document's
    result never depends on the other documents of ``X``.  Every sweep is a
    coordinate-ascent step on the document's evidence lower bound.

    The documents are sorted by length and cut into chunks of similar
    length (``_E_STEP_CHUNK_ELEMENTS``); in a chunk the columns of ``B`` at
    the documents' terms are gathered once into a dense, padded
    (documents, k, width) array, and both products of a sweep are batched
    matrix-vector products on it, in cache.  A chunk is swept until half of
    its documents have finished; the rest are pooled with the other chunks'
    and chunked again, so a few slow documents never hold a whole chunk.
    Memory: O(chunk + (n_samples + n_features) * k) -- no (nnz, k) array
    over the corpus, no dense ``n_samples x n_features`` array.  (The
    sweeps run on one thread: their many short NumPy calls hold the GIL for
    most of the time, and two threads measured no faster.)

    Parameters
    ----------
    X : scipy.sparse CSR matrix of shape (n_samples, n_features)
        Counts.
    gamma : ndarray of shape (n_samples, k)
        Positive start.  Not modified.
    B : ndarray of shape (k, n_features)
        ``exp(E[log beta])`` of the topics (or the topics themselves for
        point estimates).
    alpha : float or ndarray of shape (k,)
        Dirichlet prior of the topic proportions.
    max_iter : int >= 1
        Maximum number of sweeps per document.
    tol : float
        Per-document stopping threshold on the mean absolute change of
        ``gamma``.

    Returns
    -------
    gamma : ndarray of shape (n_samples, k)
        The updated variational parameters, dtype of the input.
    y : ndarray of shape (X.nnz,)
        ``Theta B`` at the stored entries of ``X`` (aligned with ``X.data``)
        for the returned ``gamma``, floored at the smallest normal number:
        what the bound and the sufficient statistics need.
    """
    k, m = B.shape
    Bt_pad = np.zeros((m + 1, k), dtype=B.dtype)
    Bt_pad[:m] = B.T
    gamma = np.array(gamma, copy=True)
    alpha = np.asarray(alpha, dtype=gamma.dtype)
    y = np.empty(X.nnz, dtype=np.result_type(gamma.dtype, B.dtype))
    lengths = np.diff(X.indptr)
    sweeps = np.zeros(X.shape[0], dtype=np.intp)
    active = np.arange(X.shape[0])
    while active.size:
        chunks = _length_chunks(lengths, active, k)
        pending = _e_step_chunks(
            X, chunks, Bt_pad, alpha, max_iter, tol, gamma, sweeps, y
        )
        active = np.concatenate(pending) if pending else active[:0]
    return gamma, y


# Entries per piece of `lda_log_likelihood_rows` (512 KiB of float64).
_LOG_PIECE = 1 << 16


def lda_log_likelihood(X, y):
    """Data term of the LDA evidence lower bound, from ``y`` of `lda_e_step`.

    .. math::

        \\sum_{d,w} X_{dw} \\log \\sum_k
        \\exp\\big(\\mathbb{E}[\\log\\theta_{dk}] + \\mathbb{E}[\\log\\beta_{kw}]\\big)
        = \\sum_{X_{dw} > 0} X_{dw} \\log (\\Theta B)_{dw}

    (the word-topic responsibilities at their optimum given ``gamma`` and
    the topics): the sum of `lda_log_likelihood_rows`, as a Python float.
    """
    return float(lda_log_likelihood_rows(X, y).sum())


def lda_log_likelihood_rows(X, y):
    """``sum_w X_dw log y_dw`` for every row ``d`` of CSR ``X``, in float64.

    ``y`` is aligned with ``X.data``.  Computed in pieces of whole rows of
    about ``_LOG_PIECE`` entries: no (nnz,) float64 temporary.
    """
    n = X.shape[0]
    indptr = X.indptr
    out = np.zeros(n)
    r0 = 0
    while r0 < n:
        r1 = int(np.searchsorted(indptr, indptr[r0] + _LOG_PIECE, side="right")) - 1
        r1 = min(max(r1, r0 + 1), n)
        a, b = indptr[r0], indptr[r1]
        piece = np.log(y[a:b], dtype=np.float64)
        piece *= X.data[a:b]
        rows = np.repeat(np.arange(r1 - r0), np.diff(indptr[r0 : r1 + 1]))
        out[r0:r1] = np.bincount(rows, weights=piece, minlength=r1 - r0)
        r0 = r1
    return out


def lda_expected_counts(X, gamma, B, y, overwrite_y=False):
    """Expected topic-word counts: the sufficient statistics of the M-step.

    .. math::

        n_{kw} = \\sum_d X_{dw} \\phi_{dwk}
              = B_{kw} \\sum_d \\Theta_{dk} \\frac{X_{dw}}{(\\Theta B)_{dw}}

    with ``y = Theta B`` at the stored entries as returned by `lda_e_step`.
    A sum over documents, so the statistics of row blocks add up.  Shape
    (k, n_features), dtype of ``gamma``.  ``overwrite_y=True`` computes the
    ratio ``X / y`` in ``y``'s memory instead of a new (nnz,) array.
    """
    ratio = y if overwrite_y else y.copy()
    # Capped, not inf, where the model underflowed: the products below are
    # then finite or redone in float64 (`transposed_product`).
    _divide_into_ratio(X.data, ratio)
    R = _compressed_view(ratio, X.indices, X.indptr, X.shape)
    counts = B * transposed_product(exp_dirichlet_expectation(gamma), R)
    return counts.astype(gamma.dtype, copy=False)


def gamma_kl(A, rate, prior_shape, prior_rate):
    """Sum of ``KL(Gamma(A, rate) || Gamma(prior_shape, prior_rate))`` (shape, rate).

    The sum of `gamma_kl_rows`, as a Python float: minus the
    prior-and-entropy part of the Gamma-Poisson evidence lower bound (paper
    002, Appendix E).
    """
    return float(gamma_kl_rows(A, rate, prior_shape, prior_rate).sum())


def gamma_kl_rows(A, rate, prior_shape, prior_rate):
    """``sum_k KL(Gamma(A_dk, rate) || Gamma(a_k, prior_rate))`` per row, float64.

    .. math::

        \\sum_{k} (A_{dk} - a_k) \\psi(A_{dk}) - \\log\\Gamma(A_{dk})
        + \\log\\Gamma(a_k) + a_k \\log\\frac{c}{b} + A_{dk} \\frac{b - c}{c}

    with ``c = rate``, ``a = prior_shape`` (scalar or one per column) and
    ``b = prior_rate``.
    """
    A = np.asarray(A, dtype=np.float64)
    a = np.broadcast_to(np.asarray(prior_shape, dtype=np.float64), (A.shape[1],))
    return (
        np.sum((A - a) * psi(A) - gammaln(A), axis=1)
        + np.sum(gammaln(a) + a * np.log(rate / prior_rate))
        + A.sum(axis=1) * (prior_rate - rate) / rate
    )
