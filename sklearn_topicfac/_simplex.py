"""Simplex decompositions of real-valued data by SVD and PLSA (Shashanka & Giering)."""

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import _reconstruct
from ._completion import completion_log_likelihood
from ._plsi import PLSI


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
    >>> from sklearn_topicfac._simplex import simplex_rotation
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


class _Centred:
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


def _centered_svd(X, n_axes, random_state):
    """Leading ``n_axes`` singular values and right vectors of the centred ``X``.

    Works on ``X * 2**-e`` (:func:`_scale_exponent`): returns ``(e, mean, S,
    Vt)`` with ``mean`` and ``S`` in those units and the ``n_axes`` rows of
    ``Vt`` of unit norm, signs fixed (the largest entry of each positive).
    Directions whose singular value is within rounding of zero, and missing
    trailing ones (rank below ``n_axes``), are zero.

    One computation for every container (see :class:`_Centred`).  When the
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
    C = _Centred(X, _scale_exponent(X))
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


def _affine_coordinates(X, vertices):
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


class SimplexPLSA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Simplex decomposition of real-valued data by SVD and PLSA.

    PLSA (Hofmann) writes every data vector, normalized to sum to one, as a
    convex combination of basis distributions on the standard simplex, so its
    simplex encloses the *normalized* data.  Shashanka & Giering (2010) find
    bases that need not lie on the standard simplex and enclose the data
    themselves,

    .. math::

        X \\approx \\Theta B, \\qquad \\Theta \\ge 0, \\quad
        \\Theta \\mathbf{1} = \\mathbf{1},

    with ``Theta`` (``transform``'s output) on the simplex and ``B``
    (``components_``) anywhere in the data space, even for data with
    negative entries.  The data are moved onto the standard simplex by an
    invertible affine map, decomposed by PLSA there, and the PLSA bases are
    mapped back:

    1. center ``X`` on its mean;
    2. SVD ``X - mean = U S V^T`` (``U`` the whitened coordinates on the
       principal axes);
    3. build the orthonormal ``T = [R, 1 / \\sqrt{d}]`` of the paper's
       appendix (:func:`simplex_rotation`);
    4. rotate, ``B = U R^T``: the principal axes now lie parallel to the
       standard simplex;
    5. shift the mean to the simplex centroid ``c = 1 / d``;
    6. subtract the smallest entry, so that everything is non-negative;
    7. divide by ``b = 1 - d min`` so that the rows sum to one: the data now
       lie on the standard simplex of dimension ``d - 1``;
    8. fit :class:`PLSI` (``plsa_``) to these rows;
    9. map the PLSA bases back through steps 7..4;
    10. and through the SVD and the centering: ``components_``.

    Since the map is affine and the weights sum to one, ``Theta`` are also
    the weights of the original data on ``components_``.

    Parameters
    ----------
    n_components : int, default=10
        Number of bases (vertices of the simplex).  Enclosing data that vary
        along ``q`` axes takes at least ``q + 1`` of them.
    svd_components : int or None, default=None
        Number of principal axes laid parallel to the simplex, between 1 and
        ``n_features``; ``None`` means ``n_features - 1`` (the paper).
    init : {"nndsvda", "random", "kmeans"} or None, default=None
        Start of the PLSA step (see :class:`PLSI`).
    max_iter : int, default=1000
        Maximum number of EM steps of the PLSA step, and of fold-in sweeps.
    tol : float, default=1e-6
        Relative objective decrease below which the PLSA step stops (see
        :class:`PLSI`).  Smaller than :class:`PLSI`'s default: mapped onto
        the simplex, the data can usually be enclosed exactly, the objective
        heads for zero, and EM's last, slow steps are what move the vertices
        out to the data's corners.
    random_state : int, RandomState instance or None, default=None
        Seed of the PLSA start (and of the randomized SVD used for large
        input, see Notes).
    verbose : int, default=0
        Progress output of the PLSA step.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The bases, in data space: the vertices of the learned simplex.
    embedding_ : ndarray of shape (n_samples, n_components)
        Weights of the training data reached by the PLSA fit; rows sum to
        one.
    plsa_ : PLSI
        The PLSA model fitted on the data moved onto the standard simplex.
    mean_ : ndarray of shape (n_features,)
        Mean of the training data.
    principal_axes_ : ndarray of shape (svd_components, n_features)
        The principal axes kept (right singular vectors), as rows; a row of
        zeros for an axis without variance.
    singular_values_ : ndarray of shape (svd_components,)
        Their singular values (0 for an axis without variance).  For data
        whose centered norm exceeds the largest float they overflow to
        ``inf``: the model itself works on ``X`` scaled by a power of two and
        is unaffected.
    transformation_ : ndarray of shape (svd_components + 1, svd_components + 1)
        ``T``; its last column is the normal of the simplex.
    loss_ : float
        Final objective of the PLSA step.
    loss_history_ : ndarray of shape (n_iter_ + 1,)
        Objective of the PLSA step at the start and after every EM step.
    n_iter_ : int
        Number of EM steps run.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when available.

    See Also
    --------
    PLSI : PLSA itself, for non-negative data, bases on the standard simplex.

    Notes
    -----
    Where this differs from the paper's ten steps:

    * **Dimension.** The paper keeps ``M - 1`` principal axes of
      ``M``-dimensional data and rotates the last one orthogonal to the
      simplex, which PLSA's normalization then divides out (and the
      reconstruction drops).  Here ``svd_components = q`` axes are kept and
      laid parallel to a simplex of dimension ``d = q + 1``; the remaining
      axes are dropped *before* PLSA, so every row sums to exactly one.  The
      default ``q = n_features - 1`` is the paper's choice; ``q =
      n_features`` keeps all the variance; a small ``q`` is a truncated SVD
      for high-dimensional input (``T`` is ``d x d`` and PLSA works in
      ``d`` dimensions, so the paper's full-dimensional ``T`` would be
      unworkable for, e.g., text).  With ``q < n_features - 1`` the simplex
      is sought in the ``q``-dimensional principal subspace: the
      decomposition is a PCA approximation first, and points are enclosed
      in projection only.
    * **Step 7.** The extracted text reads ``b = 1 - min(B̂)``, which is 1
      since ``min(B̂) = 0`` after step 6.  What the step asks for, "the
      entries of the center of the dataset sum to 1", is
      ``b = 1 - d min(B̄)``: after step 6 the centroid ``c - min(B̄)`` sums
      to that.
    * **New data.** ``transform`` applies the stored map to new rows and
      folds them in with the PLSA bases fixed.  A point far outside the
      training data can map to negative entries; those are clipped to zero
      before the fold-in (its weights stay on the simplex).  Its row is
      divided by a power of two when its entries exceed one (exact, and the
      fold-in does not depend on a row's scale), so that it fits the dtype;
      a point whose image exceeds even the float64 range (e.g. ``1e10``
      against training data at ``1e-300``) is refused by name.

    Numerical behaviour:

    * **One computation for every container.**  Dense, CSR and CSC input
      (and C- or Fortran-ordered arrays) go through the same arithmetic on
      the same numbers, so they give the same model and the same
      ``transform`` (to the last bit), in float64 and in float32 (whose map
      onto the simplex is computed in float64, the PLSA step in float32).
      Sparse input is never densified: products with ``X`` use its canonical
      CSR rows or CSC columns (a dense ``X`` is converted one block at a
      time) and the exact SVD works on dense blocks of rows or columns.
    * **SVD.**  When affordable (``n_samples * n_features * min(n_samples,
      n_features)`` up to ``2**33``, or ``svd_components + 10`` at least half
      of ``min(n_samples, n_features)``) the SVD is exact: the ``R`` factor
      of a blockwise Householder QR of the centered data (of its transpose
      when ``n_samples < n_features``), then the SVD of ``R`` (plus one
      Rayleigh-Ritz step for the right vectors of wide data).  No Gram
      matrix ``X.T @ X`` is formed, so no accuracy is lost to squaring: the
      singular values are accurate to rounding of the largest one, where a
      Gram matrix would lose those below ``sqrt(eps)`` times it (1.5e-8 in
      float64).  Otherwise (both sides large and few axes, e.g. text) it is
      a randomized range finder with power iterations, seeded by
      ``random_state``, and a Rayleigh-Ritz step: accurate where the
      spectrum has gaps, approximate within near-equal singular values.
    * **Axes without variance.**  Directions whose singular value is below
      ``eps * max(n_samples, n_features)`` times the Frobenius norm of ``X``
      (``eps`` that of ``X``'s dtype) are rounding noise of the data: they
      get a zero row in ``principal_axes_``, a zero singular value, and no
      coordinate on the simplex.  Data without any variance (all zero,
      constant, one sample) therefore give a valid model in which every
      point is the centroid: every vertex is ``mean_``, every point maps to
      the simplex's centroid and ``inverse_transform`` returns ``mean_``.
    * **Magnitude.**  The decomposition is scale-equivariant: ``X * c`` has
      ``components_ * c`` and the same weights.  It is computed on ``X``
      divided by the power of two nearest its largest entry (exact in
      floating point), so that data from subnormal magnitudes up to the
      largest float work without overflow or underflow; ``X * 2**k`` gives
      the model of ``X`` exactly, with ``components_ * 2**k``.  Only
      vertices that cannot be represented are refused: data so close to the
      end of the float range that the simplex enclosing them reaches beyond
      it raise a ``ValueError`` asking to scale ``X`` down.

    References
    ----------
    M. Shashanka and M. Giering, "Simplex decompositions using SVD and PLSA",
    ICPRAM 2010.

    Examples
    --------
    Points inside a triangle standing perpendicular to the standard simplex,
    with negative coordinates:

    >>> import numpy as np
    >>> from sklearn_topicfac import SimplexPLSA
    >>> rng = np.random.default_rng(0)
    >>> corners = np.array([[-2.0, -2.0, -2.0], [2.0, 2.0, 2.0], [1.0, -1.0, 0.0]])
    >>> X = rng.dirichlet(np.ones(3), size=200) @ corners
    >>> model = SimplexPLSA(n_components=3, random_state=0).fit(X)
    >>> weights = model.transform(X)
    >>> bool(np.allclose(weights.sum(axis=1), 1) and (weights >= 0).all())
    True
    >>> error = np.linalg.norm(model.inverse_transform(weights) - X)
    >>> bool(error < 0.05 * np.linalg.norm(X - X.mean(axis=0)))
    True
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "svd_components": [Interval(Integral, 1, None, closed="left"), None],
        "init": [StrOptions({"random", "nndsvda", "kmeans"}), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_components=10,
        *,
        svd_components=None,
        init=None,
        max_iter=1000,
        tol=1e-6,
        random_state=None,
        verbose=0,
    ):
        self.n_components = n_components
        self.svd_components = svd_components
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose

    def _validate_X(self, X, reset):
        # Real-valued input is the point of this estimator: no sign check.
        return validate_data(
            self,
            X,
            accept_sparse=("csr", "csc"),
            dtype=[np.float64, np.float32],
            reset=reset,
        )

    def _axis_coordinates(self, X):
        """Whitened coordinates ``U`` of ``X`` on the principal axes (float64)."""
        projections = _Centred(X, self._exponent, self._mean).matmul(self._axes.T)
        S = self._singular_values
        return np.divide(projections, S, out=np.zeros_like(projections), where=S > 0)

    def _to_simplex(self, X):
        """Steps 1, 2 and 4-7 with the fitted map: rows on the standard simplex.

        In float64, whatever the dtype of ``X``.
        """
        B = self._axis_coordinates(X) @ self._rotation[:, :-1].T
        return (B - self._b_mean + 1 / B.shape[1] - self._low) / self._scale

    def _from_simplex(self, P):
        """Steps 9 and 10: map points of the standard simplex back to data space.

        In float64; may overflow to infinity for data near the float range.
        """
        B = P * self._scale + self._low - 1 / P.shape[1] + self._b_mean
        U = B @ self._rotation[:, :-1]
        Xc = (U * self._singular_values) @ self._axes
        with np.errstate(over="ignore"):
            return np.ldexp(Xc + self._mean, self._exponent)

    def _simplex_points(self, X, rescale_rows):
        """``_to_simplex(X)`` clipped at zero, in the dtype of the PLSA model.

        ``rescale_rows``: a point far outside the training data maps to
        large entries; its row is then divided by a power of two (exact, and
        ignored by the fold-in) so that it fits the dtype.
        """
        P = np.maximum(self._to_simplex(X), 0)
        if rescale_rows:
            big = P.max(axis=1, initial=0)
            exponent = np.where(big > 1, np.frexp(big)[1], 0)
            P = np.ldexp(P, -exponent[:, None])
        with np.errstate(over="ignore"):
            P = P.astype(self.plsa_.components_.dtype)
        if not np.all(np.isfinite(P)):
            raise ValueError(
                "Some rows of X lie too far from the training data (their "
                "distance, in units of its spread, exceeds the float range): "
                "they cannot be mapped onto the simplex. Check them for gross "
                "errors, or refit on data that includes them."
            )
        return P

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit the simplex decomposition to real-valued data ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Real-valued data (negative entries allowed), finite.  Sparse
            input is never densified (see Notes).
        y : Ignored
            Not used, present for API consistency.

        Returns
        -------
        self : object
            The fitted estimator.

        Raises
        ------
        ValueError
            If ``X`` contains NaN or infinity, if ``svd_components`` exceeds
            ``n_features``, or if the simplex enclosing ``X`` has vertices
            beyond the largest float (``X`` within a few times of it): the
            message asks to scale ``X`` down.
        """
        X = self._validate_X(X, reset=True)
        n, m = X.shape
        q = max(m - 1, 1) if self.svd_components is None else self.svd_components
        if q > m:
            raise ValueError(
                f"svd_components={q} exceeds n_features={m}: at most every "
                "principal axis can be kept."
            )
        d = q + 1
        dtype = X.dtype
        # Internally float64, on X * 2**-exponent (exact): no overflow or
        # underflow whatever the magnitude of X.
        exponent, mean, S, Vt = _centered_svd(X, q, self.random_state)
        self._exponent, self._mean = exponent, mean
        self._singular_values, self._axes = S, Vt
        self._rotation = simplex_rotation(d)
        B = self._axis_coordinates(X) @ self._rotation[:, :-1].T
        self._b_mean = B.mean(axis=0)
        shifted = B - self._b_mean + 1 / d
        low = shifted.min()
        scale = 1 - d * low
        if not (S > 0).any() or not scale > np.finfo(np.float64).eps:
            # No variance along the kept axes: every point is the centroid.
            low, scale = 0.0, 1.0
        self._low, self._scale = float(low), float(scale)
        P = np.maximum((shifted - low) / scale, 0).astype(dtype)
        plsa = PLSI(
            n_components=self.n_components,
            init=self.init,
            max_iter=self.max_iter,
            tol=self.tol,
            random_state=self.random_state,
            verbose=self.verbose,
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            plsa.fit(P)
        for w in caught:
            # Said in this estimator's name: its max_iter and tol are the ones.
            warnings.warn(
                f"{type(self).__name__}, PLSA step: {w.message}", w.category, 3
            )
        with np.errstate(over="ignore"):
            components = self._from_simplex(plsa.components_).astype(dtype)
        if not np.all(np.isfinite(components)):
            hint = " or pass float64 data" if dtype == np.float32 else ""
            raise ValueError(
                f"The simplex enclosing X has vertices beyond the largest "
                f"{dtype} ({np.finfo(dtype).max:.4g}): X lies too close to the "
                "end of the float range for them to be represented. Scale X "
                "down, e.g. by a power of two (exact; the model of X / 2**k is "
                f"that of X with components_ / 2**k){hint}."
            )
        # The public attributes only once the model is known to be valid.
        with np.errstate(over="ignore"):
            self.mean_ = np.ldexp(mean, exponent).astype(dtype)
            self.singular_values_ = np.ldexp(S, exponent).astype(dtype)
        self.principal_axes_ = Vt.astype(dtype)
        self.transformation_ = self._rotation.astype(dtype)
        self.plsa_ = plsa
        self.components_ = components
        self.embedding_ = plsa.embedding_
        self.loss_ = plsa.loss_
        self.loss_history_ = plsa.loss_history_
        self.n_iter_ = plsa.n_iter_
        return self

    def transform(self, X):
        """Weights of ``X`` on the learned simplex (rows on the standard simplex).

        Each row is mapped onto the standard simplex with the fitted affine
        map and folded in by EM with the PLSA bases fixed.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Real-valued data with the features seen in ``fit``.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            Non-negative weights; each row sums to one.

        Raises
        ------
        ValueError
            If ``X`` contains NaN or infinity, or rows so far from the
            training data (relative to its spread) that their image on the
            simplex exceeds the float range.
        """
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        return self.plsa_.transform(self._simplex_points(X, rescale_rows=True))

    def inverse_transform(self, X):
        """Map simplex weights back to data space: ``X @ components_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_components)
            Weights, e.g. the output of ``transform`` (any real weights are
            accepted: those summing to one give points of the affine hull
            of ``components_``).

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)

        Raises
        ------
        ValueError
            If ``X`` is not a finite numeric 2-D array with ``n_components``
            columns.
        """
        check_is_fitted(self)
        return _reconstruct(X, self.components_)

    def score(self, X, y=None):
        """How well the learned simplex explains the points ``X`` (higher is better).

        Each row of ``X`` is mapped onto the standard simplex, where it is a
        distribution :math:`p_d` over the ``d = svd_components + 1``
        coordinates; its weights :math:`\\hat\\theta_d` are folded in as by
        :meth:`transform` and the point is scored by its cross-entropy with
        its reconstruction :math:`q_d = \\hat\\theta_d C` on the PLSA bases
        :math:`C`:

        .. math::

            \\mathrm{score}(X) = \\frac{1}{n} \\sum_d \\sum_j p_{dj} \\log q_{dj}
            = -\\frac{1}{n} \\sum_d \\big(H(p_d) + \\mathrm{KL}(p_d \\| q_d)\\big).

        This is not the document-completion score of the other estimators:
        real-valued data has no tokens to split, and the mapped points are
        compositions of a few coordinates, too few to hold some out.  The
        unit held out is the point: on points not used in ``fit`` (as in
        ``GridSearchCV``) the score measures how well the simplex encloses
        new data.  More vertices never enclose less, so the score does not
        decrease with ``n_components``: choose the smallest ``n_components``
        after which it levels off.  Scores compare models with the same
        ``svd_components`` (the map onto the simplex depends on it).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Real-valued data.
        y : Ignored
            Not used, present for API consistency.

        Returns
        -------
        score : float
            At most 0; the maximum, :math:`-\\frac{1}{n} \\sum_d H(p_d)`, is
            reached when every point lies inside the learned simplex.
        """
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        P = sp.csr_matrix(self._simplex_points(X, rescale_rows=False))
        P.eliminate_zeros()
        theta, phi = self.plsa_._topic_mixture(P)
        log_likelihood, _ = completion_log_likelihood(P, theta, phi)
        return log_likelihood / X.shape[0]

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
