"""Sparse products: the model at the stored entries of X, the ratio
``R = X / (W H)`` there, and the sparse-dense products of the updates."""

import threading
import weakref
from functools import partial

import numpy as np
import scipy.sparse as sp

from . import _parallel
from ._backend import runs_compiled, twins
from ._parallel import WorkQueue, map_parts, n_threads, run_parallel, split_rows

# Elements of the (nnz, k) gather temporaries built per unit of work of the
# sampled product, for 4-byte floats (half as many for 8-byte floats).
# Bounds the extra memory of `product_at_nonzeros` to about 2 MiB per thread
# (a core's L2 cache here) whatever the size of X.  Units of 2^17 elements
# left the NumPy KL-MU iteration 15-25 % slower (generated 10k x 5k, k = 20:
# 37-38 ms against 32-33 ms in float32, 58-59 against 37-47 in float64): the
# Python work between a unit's NumPy calls holds the GIL, and fewer, larger
# units pay it less often (benchmarks/speed/engines.py, table 1).
_CHUNK_ELEMENTS = 1 << 19

# Entries of a run of consecutive rows of equal length from which the run is
# computed as one batched matrix-vector product (below it, a plain gather).
_MIN_SLAB = 1 << 9

# The units of a fit's sampled ratio (`batched_ratio_at_nonzeros`): runs of
# equal-length rows with at least this many rows are slabs; other rows go
# into padded blocks of about ``_PADDED_ELEMENTS`` elements (entries times
# k, padding included, halved for 8-byte floats), each padded to its
# longest row when that adds at most ``_MAX_PADDING`` times its entries.
# Long documents of distinct lengths otherwise make slabs of two to four
# rows: on tr41 (878 documents of 195 entries on average, k = 10, float64)
# 198 units and a sampled product of 2.8 ms, against ~1.4 ms in padded
# blocks.  Blocks of 2^16 elements stay in a core's cache (2^17 and more
# were slower there).
_MIN_SLAB_ROWS = 8
_PADDED_ELEMENTS = 1 << 16
_MAX_PADDING = 1.25
# ... and only below this much work (entries times k), where the kernels
# run on one thread.  With two threads, padded blocks gained nothing: the
# default install's LDAVI fit on 20 Newsgroups took 24.3-25.0 s with them
# against 22.8-23.1 s without (fresh processes; in-process 16.0 against
# 16.1 s).  A constant, like the units themselves: the choice depends on
# the data alone, never on the machine.
_PADDED_MAX_WORK = 1 << 21


def compressed_view(data, indices, indptr, shape, fmt="csr"):
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


def row_range(R, r0, r1, transposed=False):
    """Rows ``r0:r1`` of a CSR matrix, sharing its data: as CSR, or their
    transpose as CSC (the same arrays read the other way)."""
    a, b = R.indptr[r0], R.indptr[r1]
    shape = (r1 - r0, R.shape[1])
    return compressed_view(
        R.data[a:b],
        R.indices[a:b],
        R.indptr[r0 : r1 + 1] - a,
        shape[::-1] if transposed else shape,
        fmt="csc" if transposed else "csr",
    )


def _mixed_blocks(indptr, r0, r1, per_unit):
    """Units ``(r0', r1', 0)`` covering rows ``r0:r1`` with ~per_unit entries each."""
    if indptr[r0] == indptr[r1]:
        return []
    bounds = _row_blocks(indptr, r0, r1, per_unit)
    return [
        (s, e, 0)
        for s, e in zip(bounds[:-1], bounds[1:], strict=True)
        if indptr[e] > indptr[s]
    ]


def _row_blocks(indptr, r0, r1, per_unit):
    """Row boundaries cutting rows ``r0:r1`` into blocks of ~per_unit entries."""
    a, b = int(indptr[r0]), int(indptr[r1])
    targets = np.arange(a + per_unit, b, per_unit)
    cuts = r0 + np.searchsorted(indptr[r0 : r1 + 1], targets, side="right") - 1
    return np.unique(np.concatenate(([r0], cuts, [r1]))).tolist()


# The units of the last few row layouts: a fit asks for those of the same
# rows at every iteration, and finding the slabs costs a Python loop over
# them (half a millisecond on a corpus of 1,500 documents sorted by length,
# a sixth of a sampled product).  An entry is used only for the very array
# it was made from (a weak reference) holding the same row offsets (a
# digest of its bytes): an array changed in place, or a new array at the
# address of a freed one, is split anew.  Only speed depends on it.
_UNITS = {}
_UNITS_KEPT = 8
_UNITS_LOCK = threading.Lock()


def work_units(indptr, k, itemsize=4, batched=False):
    """`_work_units`, remembered for the last few row layouts."""
    key = (id(indptr), int(k), int(itemsize), bool(batched))
    digest = hash(indptr.tobytes())
    with _UNITS_LOCK:
        known = _UNITS.get(key)
    if known is not None and known[0]() is indptr and known[1] == digest:
        return known[2]
    units = _work_units(indptr, k, itemsize, batched)
    try:
        ref = weakref.ref(indptr)
    except TypeError:  # pragma: no cover - every ndarray takes weak references
        return units
    with _UNITS_LOCK:
        while len(_UNITS) >= _UNITS_KEPT:
            _UNITS.pop(next(iter(_UNITS)))
        _UNITS[key] = (ref, digest, units)
    return units


def _work_units(indptr, k, itemsize=4, batched=False):
    """Split the rows of a CSR matrix into the units of work of the sampled product.

    Returns a list of ``(r0, r1, length)``.  ``length > 0`` marks a *slab*:
    rows ``r0:r1`` all store ``length`` entries, so their entries form a dense
    ``(r1 - r0, length)`` block of ``X.data`` and the product there is one
    batched matrix-vector product.  ``length == 0`` marks rows of mixed
    lengths.  A unit holds about ``_CHUNK_ELEMENTS / k`` entries, half as
    many for 8-byte floats (a single longer row is a unit of its own).  Rows
    sorted by length, as the fit loop orders them, are almost all in slabs.

    ``batched=True`` gives the units of `batched_ratio_at_nonzeros`: a slab
    also needs ``_MIN_SLAB_ROWS`` rows, and the rows between slabs go into
    padded blocks (`_padded_blocks`, units ``(r0, r1, length, (take,
    valid))``) where their lengths allow, entry by entry elsewhere.
    """
    n_rows = indptr.shape[0] - 1
    size = max(k, 1) * max(itemsize, 4)
    per_unit = max(1, _CHUNK_ELEMENTS * 4 // size)
    counts = np.diff(indptr)
    change = np.flatnonzero(counts[1:] != counts[:-1]) + 1
    starts = np.concatenate(([0], change))
    ends = np.concatenate((change, [n_rows]))
    lengths = counts[starts]
    is_slab = (ends - starts) * lengths >= _MIN_SLAB
    if batched:
        is_slab &= ends - starts >= _MIN_SLAB_ROWS
        per_padded = max(1, _PADDED_ELEMENTS * 4 // size)

        def between(r0, r1):
            return _padded_blocks(indptr, r0, r1, per_padded, per_unit)

    else:

        def between(r0, r1):
            return _mixed_blocks(indptr, r0, r1, per_unit)

    units = []
    row = 0
    for s, e, length in zip(
        starts[is_slab].tolist(),
        ends[is_slab].tolist(),
        lengths[is_slab].tolist(),
        strict=True,
    ):
        units += between(row, s)
        step = max(1, per_unit // length)
        units += [(r, min(r + step, e), length) for r in range(s, e, step)]
        row = e
    units += between(row, n_rows)
    return units


def _padded_unit(indptr, r0, r1, length):
    """Rows ``r0:r1`` padded to ``length`` entries each: ``(r0, r1, length,
    (take, valid))``.

    ``take`` maps the flattened ``(rows, length)`` block to the unit's
    stored entries (a pad repeats its row's last entry, or the unit's first
    for an empty row); ``valid`` lists where the stored entries sit in it.
    """
    lengths = np.diff(indptr[r0 : r1 + 1])
    local = (indptr[r0:r1] - indptr[r0])[:, None]
    column = np.arange(length)[None, :]
    take = np.where(
        lengths[:, None] > 0, local + np.minimum(column, lengths[:, None] - 1), 0
    )
    valid = np.flatnonzero(column < lengths[:, None])
    return (r0, r1, length, (take.ravel(), valid))


def _padded_blocks(indptr, r0, r1, per_padded, per_unit):
    """Units of rows ``r0:r1``: blocks of ~per_padded entries, padded where
    their rows' lengths differ little, else computed entry by entry
    (`_mixed_blocks` of ~per_unit entries)."""
    units = []
    mixed_from = None  # first row of the pending rows computed entry by entry
    if indptr[r1] == indptr[r0]:
        return units
    bounds = _row_blocks(indptr, r0, r1, per_padded)
    for s, e in zip(bounds[:-1], bounds[1:], strict=True):
        lengths = np.diff(indptr[s : e + 1])
        entries = int(lengths.sum())
        length = int(lengths.max()) if entries else 0
        if entries and length * (e - s) <= _MAX_PADDING * entries:
            if mixed_from is not None:
                units += _mixed_blocks(indptr, mixed_from, s, per_unit)
                mixed_from = None
            units.append(_padded_unit(indptr, s, e, length))
        elif mixed_from is None:
            mixed_from = s
    if mixed_from is not None:
        units += _mixed_blocks(indptr, mixed_from, r1, per_unit)
    return units


def unit_product(G, W, length, local_indptr, out):
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

    ``units`` is any iterable of work units (`_work_units`), possibly shared
    with other threads (a `WorkQueue`).  A padded unit (``batched=True``)
    is one batched matrix-vector product over its padded block.
    """
    for unit in units:
        r0, r1, length = unit[:3]
        a, b = indptr[r0], indptr[r1]
        if len(unit) == 3:
            # One contiguous k-vector per stored entry: H's columns, gathered.
            G = np.take(Ht, indices[a:b], axis=0)
            unit_product(G, W[r0:r1], length, indptr[r0 : r1 + 1], out[a:b])
            continue
        take, valid = unit[3]
        G = np.take(Ht, np.take(indices[a:b], take), axis=0)
        n, k = r1 - r0, W.shape[1]
        y = np.matmul(G.reshape(n, length, k), W[r0:r1, :, None])
        np.take(y.reshape(-1), valid, out=out[a:b])


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
    up to ``N_THREADS`` threads (``take`` and ``matmul`` release the GIL).

    Parameters
    ----------
    X : scipy.sparse CSR matrix or array of shape (n_samples, n_features)
    W : ndarray of shape (n_samples, k)
    H : ndarray of shape (k, n_features)

    Returns
    -------
    Y : ndarray of shape (X.nnz,), dtype of ``W @ H``.
    """
    if (fast := twins(X, W.shape[1])) is not None:
        return fast.product_at_nonzeros(X, W, H)
    dtype = np.result_type(W.dtype, H.dtype)
    # A contiguous (n_features, k) copy makes each column gather one
    # contiguous read; it costs O(n_features * k), small next to O(nnz * k).
    return SampledProduct(X, W.shape[1], dtype).product(W, np.ascontiguousarray(H.T))


class SampledProduct:
    """`product_at_nonzeros` and `ratio_at_nonzeros` of one CSR matrix,
    planned once for factors of ``k`` columns in ``dtype``: for loops that
    evaluate them at many factors (the fold-ins' sweeps).

    The plan (the units of work and the number of threads) is the one
    `product_at_nonzeros` makes, so every entry is computed as there, to
    the bit.  `ratio` writes into one buffer, shared by the sparse matrix
    it returns: each call overwrites the last call's ratio.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> X = sp.csr_matrix(np.array([[2.0, 0.0, 1.0], [0.0, 3.0, 0.0]]))
    >>> W, H = np.ones((2, 1)), np.array([[1.0, 2.0, 4.0]])
    >>> product = SampledProduct(X, 1, np.float64)
    >>> product.product(W, np.ascontiguousarray(H.T))
    array([1., 4., 2.])
    >>> product.ratio(W, np.ascontiguousarray(H.T)).toarray()
    array([[2.  , 0.  , 0.25],
           [0.  , 1.5 , 0.  ]])
    """

    def __init__(self, X, k, dtype):
        self.X = X
        self.dtype = np.dtype(dtype)
        self.units = work_units(X.indptr, k, self.dtype.itemsize) if X.nnz else []
        self.count = min(n_threads(X.nnz * k), max(len(self.units), 1))
        self._ratio = None  # the buffer of `ratio`, made on its first call

    def product(self, W, Ht, out=None):
        """``W @ Ht.T`` at the stored entries of ``X`` (``Ht`` C-contiguous,
        ``n_features x k``), into ``out`` if given."""
        X = self.X
        if out is None:
            out = np.empty(X.nnz, dtype=self.dtype)
        if X.nnz == 0:
            return out
        indptr, indices = X.indptr, X.indices
        if self.count <= 1:
            _product_on_units(self.units, indptr, indices, W, Ht, out)
            return out
        # The threads take the next unit from a shared queue: a thread that
        # the system pauses delays no one.  Each entry is computed the same
        # way whichever thread takes its unit.
        queue = WorkQueue(self.units)
        work = partial(_product_on_units, queue, indptr, indices, W, Ht, out)
        run_parallel([work] * self.count)
        return out

    def ratio(self, W, Ht):
        """``X / (W @ Ht.T)`` at the stored entries, as `ratio_at_nonzeros`
        computes it: a CSR matrix on this object's buffer."""
        X = self.X
        if self._ratio is None:
            buffer = np.empty(X.nnz, dtype=self.dtype)
            self._ratio = compressed_view(buffer, X.indices, X.indptr, X.shape)
        R = self._ratio
        divide_into_ratio(X.data, self.product(W, Ht, out=R.data))
        return R


def ratio_at_nonzeros(X, W, H):
    """Return ``R = X / (W @ H)`` evaluated only at the stored entries of ``X``.

    The model is floored at the smallest positive normal number of its dtype
    so that a stored entry whose model value underflowed gives a large, finite
    ratio instead of ``inf``; stored zeros of ``X`` give ratio 0.

    Parameters
    ----------
    X, W, H
        As for `product_at_nonzeros`.

    Returns
    -------
    R : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        Same sparsity pattern as ``X`` (its index arrays are shared, not copied).
    """
    if (fast := twins(X, W.shape[1])) is not None:
        return fast.ratio_at_nonzeros(X, W, H)
    Y = product_at_nonzeros(X, W, H)
    divide_into_ratio(X.data, Y)
    return sp.csr_matrix((Y, X.indices, X.indptr), shape=X.shape, copy=False)


def batched_product_at_nonzeros(X, W, H):
    """`product_at_nonzeros` as a fit's sweep computes it.

    Below ``_PADDED_MAX_WORK`` (one thread), rows that the fit loop's
    sorting leaves in short runs of equal length (long documents of
    distinct lengths) are padded into blocks, each one batched
    matrix-vector product (`_work_units` with ``batched=True``): up to
    twice as fast as `product_at_nonzeros` on such corpora, the same
    elsewhere.  Above it, and on the numba backend, this is
    `product_at_nonzeros`.  The rounding of an entry in a padded block
    depends on the block's padded length, so a document's value can differ
    in its last bits with the other rows of the call more often than in
    `product_at_nonzeros` (where only whether a row's run of equal-length
    rows makes a slab does): ``transform`` and every other fold-in use
    that.  The units depend on the data alone: the same bits whatever the
    number of threads.
    """
    k = W.shape[1]
    if X.nnz * k >= _PADDED_MAX_WORK or runs_compiled(X.nnz * k):
        return product_at_nonzeros(X, W, H)
    out = np.empty(X.nnz, dtype=np.result_type(W.dtype, H.dtype))
    if X.nnz:
        units = work_units(X.indptr, k, out.itemsize, batched=True)
        Ht = np.ascontiguousarray(H.T)
        _product_on_units(units, X.indptr, X.indices, W, Ht, out)
    return out


def batched_ratio_at_nonzeros(X, W, H):
    """`ratio_at_nonzeros` from `batched_product_at_nonzeros`: as a fit's
    sweep computes it (`em_doc_pass`; on the numba backend `em_doc_pass`
    runs its own twin)."""
    out = batched_product_at_nonzeros(X, W, H)
    divide_into_ratio(X.data, out)
    return sp.csr_matrix((out, X.indices, X.indptr), shape=X.shape, copy=False)


def divide_into_ratio(x, y):
    """``y <- min(x / max(y, tiny), max)`` in place: the ratio at stored entries.

    The model is floored at the smallest normal number, and the ratio capped
    at the largest finite one of its dtype.  The cap only acts in float32 on
    data spanning most of its range (an entry near 1e30 where the model is
    below 1e-8): there it reads the model as ``x / max`` instead of letting
    the ratio overflow to ``inf``, which would turn the next update into
    NaN.  Every product of a capped ratio with a factor entry is then finite
    or recomputed in float64 (see `finite_or_float64`).
    """
    info = np.finfo(y.dtype)
    np.maximum(y, info.tiny, out=y)
    with np.errstate(over="ignore"):
        np.divide(x, y, out=y, casting="unsafe")
    np.minimum(y, info.max, out=y)


def is_csr(R):
    return sp.issparse(R) and R.format == "csr"


def finite_or_float64(product, compute):
    """``product`` if finite, else ``compute`` redone in float64.

    In float32 a ratio taken where the model underflowed, times a large
    factor entry, can overflow an intermediate ``R @ B`` although the
    multiplicative update it feeds (``A * (R @ B)``, bounded by the data's
    row or column sums) is finite.  That only happens on data spanning most
    of float32's range; there the product is recomputed in float64 and the
    caller's ``multiply_keeping_zeros`` casts the bounded update back.
    """
    if product.dtype == np.float64 or np.isfinite(product).all():
        return product
    return compute(np.float64)


def sparse_dense_product(R, B):
    """``R @ B`` for sparse ``R`` and dense ``B``; CSR row ranges over threads."""
    with np.errstate(over="ignore"):
        product = _sparse_dense_product_raw(R, B)
    return finite_or_float64(
        product, lambda dt: np.asarray(R.astype(dt) @ B.astype(dt))
    )


def _sparse_dense_product_raw(R, B):
    work = R.nnz * B.shape[1]
    if not is_csr(R) or n_threads(work) == 1:
        return np.asarray(R @ B)
    B = np.ascontiguousarray(B)
    bounds = split_rows(R.indptr, _parallel.N_THREADS).tolist()
    out = np.empty((R.shape[0], B.shape[1]), dtype=np.result_type(R.dtype, B.dtype))

    def rows(r):
        out[r[0] : r[1]] = row_range(R, *r) @ B

    map_parts(rows, list(zip(bounds[:-1], bounds[1:], strict=True)), work)
    return out


def transposed_product(W, R):
    """``W.T @ R`` for dense ``W`` and sparse ``R``: shape (k, n_features).

    This is the per-document part of every topic update: summed over row
    blocks of ``R`` it gives the topic statistics (which is also how it runs
    on several threads: one row range of ``R`` each, then the sum).
    """
    with np.errstate(over="ignore"):
        product = _transposed_product_raw(W, R)
    return finite_or_float64(
        product, lambda dt: np.asarray((R.T.astype(dt) @ W.astype(dt)).T)
    )


def _transposed_product_raw(W, R):
    work = R.nnz * W.shape[1]
    if not is_csr(R) or work < _parallel.MIN_PARALLEL_WORK:
        return np.asarray((R.T @ W).T)
    # The fixed split (`sum_parts`), however many threads run, even one: the
    # grouping of the sum, hence its rounding, depends on ``R`` alone.
    bounds = _parallel.sum_parts(R.indptr).tolist()

    def rows(r):
        return np.asarray(row_range(R, *r, transposed=True) @ W[r[0] : r[1]])

    parts = map_parts(rows, list(zip(bounds[:-1], bounds[1:], strict=True)), work)
    total = parts[0]
    for part in parts[1:]:
        total += part
    return total.T


def multiply_keeping_zeros(A, B, out=None):
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


def into_temporary(A, T):
    """``T`` if the product ``A * T`` can be written into it, else None."""
    return T if T.dtype == np.result_type(A, T) else None


def positive_or_one(d):
    # A zero denominator only occurs where the numerator is zero too (a dead
    # topic or document), so dividing by 1 there keeps 0 without NaN.
    return np.where(d > 0, d, np.ones_like(d))
