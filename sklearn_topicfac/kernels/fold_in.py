"""The fold-in of KL-NMF: new documents' factor with the topics fixed."""

import numpy as np

from ._backend import twins
from .products import ratio_at_nonzeros
from .updates import mu_update_w, normalize_rows


def mu_fold_in(X, H, W, max_iter, tol):
    """Multiplicative KL updates of ``W`` alone, each document until it settles.

    With ``h = H.sum(1)``, a sweep is ``W <- W * (R H^T) / h`` with ``R =
    X / (W H)`` (a convex subproblem); document ``d`` stops after the sweep
    where the mean absolute change of its topic proportions ``normalize(W_d
    * h)`` falls below ``tol``, or after ``max_iter`` sweeps.  A document
    without stored entries keeps its start.  So a document's result does not
    depend on the other documents of ``X``.

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
    active = np.flatnonzero(np.diff(X.indptr) > 0)
    for _ in range(max_iter):
        if active.size == 0:
            break
        Xa = X if active.size == X.shape[0] else X[active]
        Wa = W[active]
        Wn = mu_update_w(ratio_at_nonzeros(Xa, Wa, H), Wa, H)
        change = np.abs(normalize_rows(Wn * h)[0] - normalize_rows(Wa * h)[0]).mean(
            axis=1
        )
        W[active] = Wn
        active = active[change >= tol]
    return W
