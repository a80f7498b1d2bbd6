"""Fold-ins: new documents' factor with the topics fixed (KL-NMF's
multiplicative updates; LDA's MAP by EM, accelerated)."""

import numpy as np

from ._backend import twins
from .products import SampledProduct, positive_or_one
from .updates import normalize_rows, times_ratio_product

# The extrapolation of `em_fold_in` goes at most this many steps ahead.
_MAX_STEP = 64.0

# The fold-ins sweep over the rows of X still held (a CSR slice of them) and
# slice again only once fewer than this share of those rows is still moving:
# a row that has stopped is computed on, its results never written.  Each
# row's arithmetic is its own (to the rounding of the product's runs of
# equal-length rows); slicing at every sweep (and planning the slice's
# product anew) cost more than the sweep's arithmetic on small batches
# (KLNMF on CSTR's 95 held-out documents: 8.3 ms a transform before, 5.4 ms
# with this).
_RESLICE = 0.5


class _Held:
    """The rows a fold-in still sweeps: ``rows`` (indices into ``X``), their
    slice ``X`` of the input, which of them still move (``live``), and the
    sampled product of the slice (a `SampledProduct`, planned once per
    slice: a sweep of a small batch otherwise spends more time planning
    its products and building their sparse matrices than computing them).
    At the start, the rows with stored entries, all moving.
    """

    def __init__(self, X, k, dtype):
        self._k, self._dtype = k, dtype
        self.rows = np.flatnonzero(np.diff(X.indptr) > 0)
        X_held = X if self.rows.size == X.shape[0] else X[self.rows]
        self._slice(X_held, np.ones(self.rows.size, dtype=bool))

    def _slice(self, X, live):
        self.X, self.live = X, live
        self.product = SampledProduct(X, self._k, self._dtype)

    def sweep(self):
        """Before a sweep: slice again once fewer than `_RESLICE` of the
        held rows still move.  Returns whether any row still moves."""
        moving = np.count_nonzero(self.live)
        if moving and moving < _RESLICE * self.rows.size:
            live = self.live
            self.rows = self.rows[live]
            self._slice(self.X[live], live[live])
        return moving > 0


def mu_fold_in(X, H, W, max_iter, tol):
    """Multiplicative KL updates of ``W`` alone, each document until it settles.

    With ``h = H.sum(1)``, a sweep is ``W <- W * (R H^T) / h`` with ``R =
    X / (W H)`` (a convex subproblem); document ``d`` stops after the sweep
    where the mean absolute change of its topic proportions ``normalize(W_d
    * h)`` falls below ``tol``, or after ``max_iter`` sweeps.  A document
    without stored entries keeps its start.  So a document's result does not
    depend on the other documents of ``X``, but for rounding: the sampled
    product computes runs of equal-length rows as one batched product, whose
    rounding of an entry can differ in the last bit from the same row's
    alone (`product_at_nonzeros`), and which rows form a run depends on
    those the sweep holds (`_RESLICE`).

    Parameters
    ----------
    X : scipy.sparse CSR matrix of shape (n_samples, n_features)
        Sorted by length, it batches best (the finished documents drop out
        and the others stay sorted).
    H : ndarray of shape (k, n_features)
    W : ndarray of shape (n_samples, k)
        The start.  Not modified.
    max_iter : int
    tol : float

    Returns
    -------
    W : ndarray of shape (n_samples, k), dtype of ``W``.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> X = sp.csr_matrix(np.array([[3.0, 0.0, 1.0], [0.0, 2.0, 2.0]]))
    >>> H = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.5]])
    >>> W = mu_fold_in(X, H, np.ones((2, 2)), max_iter=500, tol=1e-10)
    >>> np.round((W @ H).sum(axis=1), 6)  # each document's length, kept
    array([4., 4.])
    >>> np.round(W / W.sum(axis=1, keepdims=True), 3)  # topic proportions
    array([[1., 0.],
           [0., 1.]])
    """
    if (fast := twins(X, W.shape[1])) is not None:
        return fast.mu_fold_in(X, H, W, max_iter, tol)
    W = np.array(W, copy=True)
    h = H.sum(axis=1)
    # What every sweep's `mu_update_w` would compute again: H's columns as
    # contiguous rows and the divisor.
    Ht = np.ascontiguousarray(H.T)
    divisor = positive_or_one(h)[None, :]
    held = _Held(X, W.shape[1], np.result_type(W.dtype, H.dtype))
    for _ in range(max_iter):
        if not held.sweep():
            break
        rows, live = held.rows, held.live
        Wh = W[rows]
        Wn = times_ratio_product(held.product.ratio(Wh, Ht), Wh, Ht)
        Wn /= divisor
        change = np.abs(normalize_rows(Wn * h)[0] - normalize_rows(Wh * h)[0]).mean(
            axis=1
        )
        W[rows[live]] = Wn[live]
        live &= change >= tol
    return W


def em_fold_in(X, B, D, alpha, max_iter, tol):
    """EM for new documents' topic counts with the topics fixed, accelerated
    by SQUAREM per document.

    The EM step of LDA's MAP fold-in is :math:`N_d \\leftarrow \\Theta_d
    \\odot (R_d B^T)`, :math:`\\Theta_d = N_d + \\alpha`, :math:`R = X /
    (\\Theta B)` at the stored entries; a concave problem per document, whose
    fixed point is the posterior's mode.  EM crawls to it (tens of sweeps,
    a hundred for some documents), so every cycle makes two EM steps,
    extrapolates along them (SQUAREM, Varadhan & Roland 2008, scheme S3,
    with each document's own step length, at most `_MAX_STEP`; a document
    whose extrapolated counts would turn negative takes the second step's
    instead, as one whose extrapolation is not finite) and makes a third,
    stabilizing EM step from there.  A document
    stops when one EM step changes its counts by less than ``tol`` (mean
    absolute change), after the first step of a cycle or the stabilizing
    one, or when ``max_iter`` EM steps are spent.  Every operation is per
    document, so a document's result does not depend on the others, but for
    the rounding of the sampled product (as in `mu_fold_in`).

    Parameters
    ----------
    X : scipy.sparse CSR matrix of shape (n_samples, n_features)
    B : ndarray of shape (k, n_features)
        The topics, rows summing to one.
    D : ndarray of shape (n_samples, k)
        The start: each row sums to its document's length.  Not modified.
    alpha : ndarray of shape (k,)
        The documents' pseudo-counts (positive).
    max_iter : int
        EM steps per document at most.
    tol : float

    Returns
    -------
    D : ndarray of shape (n_samples, k)

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> X = sp.csr_matrix(np.array([[3.0, 0.0, 1.0], [0.0, 2.0, 2.0]]))
    >>> B = np.array([[0.7, 0.0, 0.3], [0.0, 0.6, 0.4]])
    >>> D = em_fold_in(X, B, np.full((2, 2), 2.0), np.full(2, 0.01), 500, 1e-10)
    >>> np.round(D, 3)                  # each document's 4 words, shared out
    array([[3.995, 0.005],
           [0.006, 3.994]])
    """
    D = np.array(D, copy=True)
    alpha = np.asarray(alpha, dtype=D.dtype)
    Bt = np.ascontiguousarray(B.T)
    held = _Held(X, D.shape[1], np.result_type(D.dtype, B.dtype))

    def step(Da):
        theta = Da + alpha
        return times_ratio_product(held.product.ratio(theta, Bt), theta, Bt)

    def change(new, old):
        return np.abs(new - old).mean(axis=1)

    spent = 0
    while spent < max_iter and held.sweep():
        rows, live = held.rows, held.live
        D0 = D[rows]
        D1 = step(D0)
        spent += 1
        going = live & (change(D1, D0) >= tol)
        D[rows[live]] = D1[live]
        if spent + 2 > max_iter or not going.any():
            held.live = going
            continue
        D2 = step(D1)
        r = D1 - D0
        v = D2 - 2 * D1 + D0
        # Norms in float64: squares of float32 counts near 1e30 overflow.
        r_norm = np.sqrt(np.einsum("ij,ij->i", r, r, dtype=np.float64))
        v_norm = np.sqrt(np.einsum("ij,ij->i", v, v, dtype=np.float64))
        ahead = np.ones_like(r_norm)
        moved = v_norm > 0
        ahead[moved] = np.clip(r_norm[moved] / v_norm[moved], 1.0, _MAX_STEP)
        ahead = ahead.astype(D.dtype)
        with np.errstate(over="ignore", invalid="ignore"):
            Dx = D0 + (2 * ahead)[:, None] * r + (ahead**2)[:, None] * v
        unusable = ~np.isfinite(Dx).all(axis=1) | (Dx < 0).any(axis=1)
        Dx[unusable] = D2[unusable]
        D3 = step(Dx)
        spent += 2
        D[rows[going]] = D3[going]
        held.live = going & (change(D3, Dx) >= tol)
    return D
