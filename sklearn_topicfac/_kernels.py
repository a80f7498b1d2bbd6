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

import numpy as np
import scipy.sparse as sp
from scipy.special import xlogy

# Elements of the (nnz, k) gather temporaries built per chunk of the sampled
# product.  Bounds the extra memory of `product_at_nonzeros` to a few MiB
# whatever the size of X, while keeping chunks large enough that the Python
# loop overhead is negligible.
_CHUNK_ELEMENTS = 1 << 19


def _row_blocks(indptr, k):
    """Row boundaries splitting a CSR matrix into blocks of ~equal nnz * k."""
    n_rows = indptr.shape[0] - 1
    nnz = int(indptr[-1])
    per_block = max(1, _CHUNK_ELEMENTS // max(k, 1))
    if nnz <= per_block:
        return np.array([0, n_rows])
    targets = np.arange(per_block, nnz, per_block)
    cuts = np.searchsorted(indptr, targets, side="right") - 1
    return np.unique(np.concatenate(([0], cuts, [n_rows])))


def product_at_nonzeros(X, W, H):
    """Evaluate ``(W @ H)`` at the stored entries of a CSR matrix ``X``.

    A sampled dense-dense product (SDDMM): the result is aligned with
    ``X.data``, so ``Y[i] = W[r_i] @ H[:, c_i]`` for the ``i``-th stored entry
    at row ``r_i`` and column ``c_i``.  Work is done in row blocks so that the
    extra memory is O(nnz) however large ``n_samples * n_features`` is.

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
    bounds = _row_blocks(indptr, k)
    for r0, r1 in zip(bounds[:-1], bounds[1:], strict=True):
        a, b = indptr[r0], indptr[r1]
        if a == b:
            continue
        rows = np.repeat(np.arange(r0, r1), np.diff(indptr[r0 : r1 + 1]))
        np.einsum("ij,ij->i", W[rows], Ht[indices[a:b]], out=out[a:b])
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
    np.maximum(Y, np.finfo(Y.dtype).tiny, out=Y)
    np.divide(X.data, Y, out=Y, casting="unsafe")
    return sp.csr_matrix((Y, X.indices, X.indptr), shape=X.shape, copy=False)


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
    tiny = np.finfo(R.dtype).tiny
    log_term = np.sum(xlogy(X.data, np.maximum(R.data, tiny)), dtype=np.float64)
    sum_x = np.sum(X.data, dtype=np.float64)
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


def transposed_product(W, R):
    """``W.T @ R`` for dense ``W`` and sparse ``R``: shape (k, n_features).

    This is the per-document part of every topic update: summed over row
    blocks of ``R`` it gives the topic statistics.
    """
    return np.asarray((R.T @ W).T)


def _multiply_keeping_zeros(A, B):
    """``A * B`` in which a zero of ``A`` stays zero.

    Multiplicative updates never revive a zero entry.  In floating point the
    other factor can overflow to ``inf`` exactly there (a ratio taken at a
    model value that underflowed), and ``0 * inf`` would be NaN.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        P = A * B
    P[A == 0] = 0
    return P


def _nonzero(d):
    # A zero denominator only occurs where the numerator is zero too (a dead
    # topic or document), so dividing by 1 there keeps 0 without NaN.
    return np.where(d > 0, d, np.ones_like(d))


def mu_update_w(R, W, H):
    """Lee-Seung KL multiplicative update of ``W`` (``H`` fixed).

    ``W_new = W * (R @ H.T) / H.sum(1)``.  After it, the row sums of
    ``W_new @ H`` equal the row sums of ``X`` (paper 001, Prop. 3).
    """
    RHt = np.asarray(R @ H.T)
    return _multiply_keeping_zeros(W, RHt) / _nonzero(H.sum(axis=1))[None, :]


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
    return _multiply_keeping_zeros(W, np.asarray(R @ H.T))


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
