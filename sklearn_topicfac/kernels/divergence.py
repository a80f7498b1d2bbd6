"""The generalized Kullback-Leibler divergence, from the ratio at the stored entries."""

import numpy as np
import scipy.sparse as sp
from scipy.special import xlogy

from ._backend import twins
from ._parallel import map_parts
from .products import divide_into_ratio, product_at_nonzeros, ratio_at_nonzeros

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


def ratio_log_sums(X, R):
    """``(sum x log r, sum x)`` over the stored entries of ``X``, in float64.

    ``R = X / (W H)`` at X's stored entries (`ratio_at_nonzeros`).  These two
    sums are all the generalized KL divergence needs from the stored
    entries (`kl_divergence_from_sums`); a ratio that underflowed to zero
    is read as the smallest normal number (see `kl_divergence_from_ratio`).
    """
    x, r = X.data, R.data
    starts = range(0, x.shape[0], _SUM_CHUNK)
    parts = map_parts(
        lambda a: _x_log_r_and_x(x[a : a + _SUM_CHUNK], r[a : a + _SUM_CHUNK]),
        starts,
        x.shape[0] * 8,
    )
    return sum(p[0] for p in parts), sum(p[1] for p in parts)


def model_and_ratio_log_sums(X, W, H, y=None):
    """``(y, sums)``: the model ``y = W H`` at the stored entries of CSR
    ``X`` and `ratio_log_sums` of its ratio -- what a sweep that needs every
    document at once (`cd_pass`, `dn_pass`) starts from, and the objective
    of the state it starts from.  A known ``y`` (the previous sweep's) is
    used as it is instead of being recomputed."""
    if y is None:
        y = product_at_nonzeros(X, W, H)
    r = y.copy()
    divide_into_ratio(X.data, r)
    sums = ratio_log_sums(X, sp.csr_matrix((r, X.indices, X.indptr), shape=X.shape))
    return y, sums


def ratio_log_sums_at_nonzeros(X, W, H):
    """`ratio_log_sums` of the ratio of ``(W, H)`` at the stored entries of
    CSR ``X``: the divergence's data terms in one call (on the numba backend,
    one pass that never stores the ratio)."""
    if (fast := twins(X, W.shape[1])) is not None:
        return fast.ratio_log_sums_at_nonzeros(X, W, H)
    return ratio_log_sums(X, ratio_at_nonzeros(X, W, H))


def kl_divergence_from_sums(sums, W, H):
    """Generalized KL divergence ``D(X || W H)`` from the sums over X's
    stored entries ``sums = (sum x log r, sum x)`` (`ratio_log_sums`):

    .. math::

        D(X \\| WH) = \\sum_{X_{ij} > 0} X_{ij} \\log R_{ij}
                     - \\sum_{ij} X_{ij} + \\sum_{ij} (WH)_{ij},

    where ``sum(W H) = W.sum(0) @ H.sum(1)`` costs O((n + m) k).  Returned
    as a Python float accumulated in float64.
    """
    x_log_r, sum_x = sums
    sum_y = float(
        np.dot(W.sum(axis=0, dtype=np.float64), H.sum(axis=1, dtype=np.float64))
    )
    return float(x_log_r - sum_x + sum_y)


def kl_divergence_from_ratio(X, R, W, H):
    """Generalized KL divergence ``D(X || W H)`` from a ratio already computed.

    `kl_divergence_from_sums` of `ratio_log_sums`: see there.  Returned as a
    Python float accumulated in float64 (a scalar, not a float64 copy of
    data).

    A ratio that underflowed to zero at a positive entry is read as the
    smallest normal number: the true term ``X log(X / Y)`` is then between
    ``-X log(1 / tiny)`` and 0 with ``X < tiny * Y``, so the error is below
    ``tiny * sum(Y) / e`` instead of an infinite objective.
    """
    return kl_divergence_from_sums(ratio_log_sums(X, R), W, H)


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
    >>> from sklearn_topicfac.kernels import kl_divergence
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
