"""The simplex map of Shashanka & Giering: real-valued data onto the standard
simplex, by a centred SVD and a rotation, and back."""

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state


def _simplex_basis(m):
    """``R_m``: ``m - 1`` mutually orthogonal ``m``-vectors orthogonal to ones.

    Shashanka (2009), as given in the appendix of Shashanka & Giering, builds
    ``R_{M+1}`` (shape ``(M + 1, M)``) from smaller blocks, starting from the
    empty ``R_1``:

    * ``M`` even: ``[[R_M, 1_M], [0_{M-1}^T, -M]]``: the new column
      ``(1, ..., 1, -M)`` sums to zero and is orthogonal to the columns of
      ``R_M`` (they sum to zero);
    * ``M`` odd: ``[[R_h, 0, 1_h], [0, R_h, -1_h]]`` with ``h = (M + 1) / 2``
      and zero blocks of shape ``(h, h - 1)``: two copies of ``R_h`` on
      disjoint coordinates, plus the column ``(1_h, -1_h)``.

    Both rules keep every column orthogonal to the others and to the ones
    vector.  The columns are not normalized here.
    """
    if m == 1:
        return np.zeros((1, 0))
    M = m - 1
    if M % 2 == 0:
        R = _simplex_basis(M)
        top = np.hstack([R, np.ones((M, 1))])
        bottom = np.hstack([np.zeros((1, M - 1)), [[-M]]])
        return np.vstack([top, bottom])
    h = m // 2
    R = _simplex_basis(h)
    zero = np.zeros((h, h - 1))
    top = np.hstack([R, zero, np.ones((h, 1))])
    bottom = np.hstack([zero, R, -np.ones((h, 1))])
    return np.vstack([top, bottom])


def simplex_rotation(m):
    """The orthonormal ``T = [R_m, 1_m / sqrt(m)]`` of Shashanka & Giering's appendix.

    Its first ``m - 1`` columns span the directions parallel to the standard
    simplex :math:`\\{x \\in \\mathbb{R}^m : x \\ge 0, \\sum_i x_i = 1\\}`, its
    last column is the unit normal of that simplex.  ``B = U @ T.T`` maps the
    coordinates ``U`` on the principal axes so that the first ``m - 1`` of
    them lie parallel to the simplex and the last one orthogonal to it.

    Parameters
    ----------
    m : int
        Dimension, at least 1.

    Returns
    -------
    T : ndarray of shape (m, m)
        Orthonormal: ``T.T @ T`` is the identity.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac.models.simplex import simplex_rotation
    >>> T = simplex_rotation(3)
    >>> np.round(T * np.sqrt(6), 4)
    array([[ 1.7321,  1.    ,  1.4142],
           [-1.7321,  1.    ,  1.4142],
           [ 0.    , -2.    ,  1.4142]])
    >>> np.allclose(T.T @ T, np.eye(3))
    True
    """
    R = _simplex_basis(m)
    R = R / np.linalg.norm(R, axis=0)
    return np.hstack([R, np.full((m, 1), 1 / np.sqrt(m))])


# The exact SVD costs about n * m * min(n, m) flops; below this budget (or when
# the axes asked for are a large part of min(n, m)) it is always used.
_EXACT_WORK = 2**33
# Randomized range finder: extra columns of the sketch, power iterations.
_OVERSAMPLES = 10
_POWER_ITERATIONS = 7
# Entries per dense block (2 MiB of float64).
_BLOCK_ENTRIES = 2**18


def _scale_exponent(X):
    """``e`` with ``max|X| * 2**-e`` in ``[0.5, 1)`` (0 for an all-zero ``X``).

    Scaling by a power of two is exact in floating point (short of the
    subnormal range): ``X * 2**-e`` is ``X`` with the decomposition's
    arithmetic kept far from overflow and underflow.
    """
    values = X.data if sp.issparse(X) else X
    if values.size == 0:
        return 0
    big = max(abs(float(values.max())), abs(float(values.min())))
    return int(np.frexp(big)[1]) if big > 0 else 0


def _block_rows(n_other, at_least):
    """Rows of a dense block of ``n_other`` columns."""
    return max(at_least, _BLOCK_ENTRIES // max(n_other, 1), 1)


def _canonical(X, fmt):
    """``X`` in format ``fmt`` with sorted indices and no duplicates (copied if
    it must change: the caller's arrays are never written to)."""
    X = X.tocsr() if fmt == "csr" else X.tocsc()
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def _fix_signs(Vt):
    """Rows of ``Vt`` signed so that each one's largest-magnitude entry is positive."""
    if Vt.size:
        pivots = Vt[np.arange(Vt.shape[0]), np.argmax(np.abs(Vt), axis=1)]
        Vt = Vt * np.where(pivots < 0, -1.0, 1.0)[:, None]
    return Vt


class Centred:
    """``Xc = X * 2**-exponent - mean`` (float64), never formed whole.

    Every computation with ``X`` is arranged so that a dense ``X`` and its
    CSR or CSC form give the same result to the last bit:

    * ``dense_blocks``: dense float64 blocks of rows (or of columns), centred
      explicitly, for the exact SVD.  Their sizes depend on the shape only,
      so both forms give the same arrays.  Memory is one block, never the
      densified ``X``.
    * ``matmul`` and ``rmatmul``: sparse products with the canonical CSR
      rows (``Xc @ M``) or CSC columns (``Xc.T @ N``) of ``X``, centred
      implicitly; a dense ``X`` is converted one block at a time.  Each
      output row is a sum over the non-zeros of one row (column) of ``X`` in
      index order, whatever the blocks: the same in both forms.
    """

    def __init__(self, X, exponent, mean=None):
        self.X = X
        self.shape = X.shape
        self.exponent = exponent
        self.mean = mean

    def _scaled(self, A):
        """The float64 sparse matrix ``A * 2**-exponent``."""
        data = np.ldexp(A.data.astype(np.float64), -self.exponent)
        return type(A)((data, A.indices, A.indptr), shape=A.shape, copy=False)

    def dense_blocks(self, axis=0, at_least=1, centre=True):
        """``(slice, block)``: dense blocks of rows (or of columns)."""
        X = self.X
        if sp.issparse(X):
            X = _canonical(X, "csr" if axis == 0 else "csc")
        length, other = X.shape[axis], X.shape[1 - axis]
        size = _block_rows(other, at_least)
        for start in range(0, length, size):
            part = slice(start, min(start + size, length))
            raw = X[part] if axis == 0 else X[:, part]
            raw = raw.toarray() if sp.issparse(raw) else raw
            block = np.ascontiguousarray(raw, dtype=np.float64)
            block = np.ldexp(block, -self.exponent)
            # -0.0 entries of a dense X are (implicit) +0.0 in its sparse form.
            block += 0.0
            if centre:
                block -= self.mean if axis == 0 else self.mean[part]
            yield part, block

    def sparse_blocks(self, axis=0):
        """``(slice, block)``: canonical CSR rows (or CSC columns) of ``X``."""
        fmt = "csr" if axis == 0 else "csc"
        if sp.issparse(self.X):
            yield slice(None), self._scaled(_canonical(self.X, fmt))
            return
        length, other = self.shape[axis], self.shape[1 - axis]
        size = _block_rows(other, 1)
        for start in range(0, length, size):
            part = slice(start, min(start + size, length))
            if axis == 0:
                block = sp.csr_matrix(self.X[part])
            else:
                block = sp.csc_matrix(self.X[:, part])
            yield part, self._scaled(block)

    def dense_statistics(self):
        """Column means (refined to about one ulp) and the Frobenius norm."""
        m = self.shape[1]
        sums, squares = np.zeros(m), 0.0
        for _, block in self.dense_blocks(centre=False):
            sums += block.sum(axis=0)
            squares += float(np.einsum("ij,ij->", block, block))
        mean = sums / self.shape[0]
        residual = np.zeros(m)
        for _, block in self.dense_blocks(centre=False):
            residual += (block - mean).sum(axis=0)
        return mean + residual / self.shape[0], float(np.sqrt(squares))

    def sparse_statistics(self):
        """Column means and the Frobenius norm, by sparse products."""
        sums, squares = np.empty(self.shape[1]), np.empty(self.shape[1])
        ones = np.ones(self.shape[0])
        for part, block in self.sparse_blocks(axis=1):
            sums[part] = block.T @ ones
            squares[part] = block.multiply(block).T @ ones
        return sums / self.shape[0], float(np.sqrt(squares.sum()))

    def matmul(self, M):
        """``Xc @ M``."""
        out = np.empty((self.shape[0], M.shape[1]))
        shift = self.mean @ M
        for part, block in self.sparse_blocks(axis=0):
            out[part] = block @ M - shift
        return out

    def rmatmul(self, N):
        """``Xc.T @ N``."""
        out = np.empty((self.shape[1], N.shape[1]))
        shift = np.outer(self.mean, N.sum(axis=0))
        for part, block in self.sparse_blocks(axis=1):
            out[part] = block.T @ N - shift[part]
        return out


def _stacked_r(blocks, k):
    """``R`` of the QR decomposition of the blocks stacked (``k`` columns).

    Householder QR of ``[R; block]``, block after block: backward stable like
    the QR of the whole matrix, with one block in memory.
    """
    R = np.zeros((0, k))
    for block in blocks:
        R = np.linalg.qr(np.vstack([R, block]), mode="r")
    return R


def _rayleigh_ritz(C, Q):
    """Singular values and right vectors of ``Xc`` in the span of ``Q``'s columns."""
    _, S, Wt = np.linalg.svd(C.matmul(Q), full_matrices=False)
    return S, Wt @ Q.T


def centered_svd(X, n_axes, random_state):
    """Leading ``n_axes`` singular values and right vectors of the centred ``X``.

    Works on ``X * 2**-e`` (:func:`_scale_exponent`): returns ``(e, mean, S,
    Vt)`` with ``mean`` and ``S`` in those units and the ``n_axes`` rows of
    ``Vt`` of unit norm, signs fixed (the largest entry of each positive).
    Directions whose singular value is within rounding of zero, and missing
    trailing ones (rank below ``n_axes``), are zero.

    One computation for every container (see :class:`Centred`).  When the
    exact SVD is affordable (about ``n m min(n, m)`` flops, like LAPACK's):
    the ``R`` factor of a blockwise QR of the explicitly centred data (of its
    transpose when it is wide) and the SVD of ``R``, accurate to rounding of
    the largest singular value (no Gram matrix: nothing is squared).  A wide
    matrix's right vectors are then refined by one Rayleigh-Ritz step.
    Otherwise (both sides large, few axes): a randomized range finder with
    power iterations seeded by ``random_state``, and a Rayleigh-Ritz step.
    """
    n, m = X.shape
    k = min(n, m)
    eps = np.finfo(X.dtype).eps
    C = Centred(X, _scale_exponent(X))
    sketch = min(k, n_axes + _OVERSAMPLES)
    exact = 2 * sketch >= k or n * m * k <= _EXACT_WORK
    if exact and m <= n:
        C.mean, norm = C.dense_statistics()
        R = _stacked_r((block for _, block in C.dense_blocks(at_least=m)), m)
        _, S, Vt = np.linalg.svd(R)
    elif exact:
        # Wide: the QR of the transpose, one block of columns at a time (each
        # holds whole columns: its means are its own, refined in place).
        C.mean = np.zeros(m)
        squares = 0.0

        def centred_columns():
            nonlocal squares
            for cols, block in C.dense_blocks(axis=1, at_least=n, centre=False):
                squares += float(np.einsum("ij,ij->", block, block))
                mean = block.mean(axis=0)
                mean += (block - mean).mean(axis=0)
                C.mean[cols] = mean
                yield (block - mean).T

        R = _stacked_r(centred_columns(), n)
        norm = float(np.sqrt(squares))
        # Xc.T = Q R, so Xc = R.T Q.T = U diag(S) V.T with U, S those of R.T:
        # V.T = diag(1 / S) U.T Xc for the directions with variance, to a
        # precision that degrades as S falls; one Rayleigh-Ritz step in their
        # span restores it (and orthonormal rows).
        U, S, _ = np.linalg.svd(R.T)
        r = int(np.count_nonzero(S[: min(n_axes, k)] > eps * max(n, m) * norm))
        Vt = np.zeros((r, m))
        for cols, block in C.dense_blocks(axis=1, at_least=n):
            Vt[:, cols] = (U[:, :r].T @ block) / S[:r, None]
        Q = np.linalg.qr(Vt.T)[0]
        XcQ = np.zeros((n, r))
        for cols, block in C.dense_blocks(axis=1, at_least=n):
            XcQ += block @ Q[cols]
        _, S, Wt = np.linalg.svd(XcQ, full_matrices=False)
        Vt = Wt @ Q.T
    else:
        C.mean, norm = C.sparse_statistics()
        Q = check_random_state(random_state).standard_normal((m, sketch))
        for _ in range(_POWER_ITERATIONS):
            Q = np.linalg.qr(C.matmul(Q))[0]
            Q = np.linalg.qr(C.rmatmul(Q))[0]
        S, Vt = _rayleigh_ritz(C, Q)
    r = min(n_axes, S.size)
    S, Vt = S[:r], _fix_signs(Vt[:r])
    # Rounding leaves every direction some variance, up to about eps times
    # the size of the (uncentred) data: below that, none is real.
    keep = S > eps * max(n, m) * norm
    pad = n_axes - r
    S = np.concatenate([np.where(keep, S, 0), np.zeros(pad)])
    Vt = np.vstack([Vt * keep[:, None], np.zeros((pad, m))])
    return C.exponent, C.mean, S, Vt


def affine_coordinates(X, vertices):
    """Barycentric coordinates of the points' projections on the vertices' hull.

    For each row ``x`` of ``X``, the weights ``lam`` (summing to one) that
    minimize ``||x - lam @ vertices||``: the coordinates, in the affine hull
    of the vertices, of the orthogonal projection of ``x`` onto that hull.
    The projection lies inside the simplex exactly when every weight is
    non-negative.
    """
    X = np.asarray(X, dtype=np.float64)
    V = np.asarray(vertices, dtype=np.float64)
    base = V[-1]
    edges = (V[:-1] - base).T
    lam, *_ = np.linalg.lstsq(edges, (X - base).T, rcond=None)
    return np.vstack([lam, 1 - lam.sum(axis=0)]).T


class SimplexMap:
    """The affine map of real-valued data onto the standard simplex (steps 1-7)
    and back (steps 9-10) of Shashanka & Giering.

    ``fit`` takes the centred SVD of ``X`` on ``n_axes`` principal axes,
    whitens the coordinates, rotates them so that ``n_axes`` of
    ``n_axes + 1`` coordinates lie parallel to the standard simplex, and
    shifts and scales them so that every training point lies on it.  All in
    float64, on ``X * 2**-exponent`` (exact), whatever the magnitude of X.
    """

    @staticmethod
    def working_entries(n, m, n_axes):
        """Entries of the dense float64 arrays a :class:`SimplexMap` fit of an
        ``n x m`` matrix on ``n_axes`` axes holds at once, about (``X`` itself
        and its sparse copies aside).

        The SVD (the path :func:`centered_svd` takes), the ``n_axes x m`` axes,
        the ``d x d`` rotation (``d = n_axes + 1``) and a few ``n x d`` arrays of
        coordinates on the simplex.
        """
        k = min(n, m)
        sketch = min(k, n_axes + _OVERSAMPLES)
        rank = min(n_axes, k)
        block = max(_BLOCK_ENTRIES, k * max(n, m) if 2 * sketch >= k else 0)
        if 2 * sketch >= k or n * m * k <= _EXACT_WORK:
            if m <= n:
                svd = 3 * m * m + block
            else:
                svd = 4 * n * n + 2 * rank * m + n * rank + block
        else:
            svd = 3 * (n + m) * sketch
        d = n_axes + 1
        return svd + n_axes * m + d * d + 4 * n * d

    def fit(self, X, n_axes, random_state):
        exponent, mean, S, Vt = centered_svd(X, n_axes, random_state)
        self.exponent, self.mean = exponent, mean
        self.singular_values, self.axes = S, Vt
        d = n_axes + 1
        self.rotation = simplex_rotation(d)
        B = self.axis_coordinates(X) @ self.rotation[:, :-1].T
        self.b_mean = B.mean(axis=0)
        shifted = B - self.b_mean + 1 / d
        low = shifted.min()
        scale = 1 - d * low
        if not (S > 0).any() or not scale > np.finfo(np.float64).eps:
            # No variance along the kept axes: every point is the centroid.
            low, scale = 0.0, 1.0
        self.low, self.scale = float(low), float(scale)
        return self

    def axis_coordinates(self, X):
        """Whitened coordinates ``U`` of ``X`` on the principal axes (float64)."""
        projections = Centred(X, self.exponent, self.mean).matmul(self.axes.T)
        S = self.singular_values
        return np.divide(projections, S, out=np.zeros_like(projections), where=S > 0)

    def to_simplex(self, X):
        """Steps 1, 2 and 4-7 with the fitted map: rows on the standard simplex.

        In float64, whatever the dtype of ``X``.
        """
        B = self.axis_coordinates(X) @ self.rotation[:, :-1].T
        return (B - self.b_mean + 1 / B.shape[1] - self.low) / self.scale

    def points(self, X, rescale_rows=False):
        """The rows of ``X`` on the standard simplex, clipped at zero (float64).

        :meth:`to_simplex` with negative coordinates set to 0: a point outside
        the simplex is replaced by the non-negative part of its image.  With
        ``rescale_rows``, a row whose largest entry ``b`` exceeds one (a point
        far outside the training data) is divided by ``2**e``, ``e`` the
        exponent of ``b`` (``b * 2**-e`` in ``[0.5, 1)``): exact, and
        harmless where only the row's direction matters (a fold-in), so that
        it fits a narrower dtype.
        """
        P = np.maximum(self.to_simplex(X), 0)
        if rescale_rows:
            big = P.max(axis=1, initial=0)
            exponent = np.where(big > 1, np.frexp(big)[1], 0)
            P = np.ldexp(P, -exponent[:, None])
        return P

    def data_mean(self):
        """The column means of ``X``, in the units of ``X`` (float64).

        ``mean * 2**exponent``: may overflow to infinity for data near the
        float range.
        """
        with np.errstate(over="ignore"):
            return np.ldexp(self.mean, self.exponent)

    def data_singular_values(self):
        """The singular values of the centred ``X``, in the units of ``X``.

        ``singular_values * 2**exponent`` (float64): may overflow to
        infinity for data near the float range.
        """
        with np.errstate(over="ignore"):
            return np.ldexp(self.singular_values, self.exponent)

    def from_simplex(self, P):
        """Steps 9 and 10: map points of the standard simplex back to data space.

        In float64; may overflow to infinity for data near the float range.
        """
        B = P * self.scale + self.low - 1 / P.shape[1] + self.b_mean
        U = B @ self.rotation[:, :-1]
        Xc = (U * self.singular_values) @ self.axes
        with np.errstate(over="ignore"):
            return np.ldexp(Xc + self.mean, self.exponent)
