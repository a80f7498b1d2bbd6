"""KL-NMF by diagonal Newton steps with a multiplicative fall-back.

Given ``H``, the objective splits into one convex problem per row of ``W``;
given ``W``, into one per column of ``H``.  A half-step updates every row of
``W`` at once by the Newton step of the row's problem with its Hessian
replaced by its diagonal (Van hamme, "The Diagonalized Newton Algorithm for
Nonnegative Matrix Factorization", ICLR 2013):

.. math::

    W_{ia} \\leftarrow \\max\\Bigl(0,\\; W_{ia} -
    \\frac{c_a - \\sum_t x_t h_{at} / y_t}{\\sum_t x_t h_{at}^2 / y_t^2}\\Bigr),
    \\qquad c_a = \\textstyle\\sum_w H_{aw},

over the stored entries ``t`` of row ``i`` (``y = W H`` there).  The
diagonal ignores how the components of a row interact, so the step can
overshoot: a row keeps it only where it lowers that row's objective (the
change is ``(W'_i - W_i) c - \\sum_t x_t \\log(y'_t / y_t)``, one logarithm
per entry), and takes the multiplicative (majorization-minimization) step,
which never raises it, elsewhere.  The objective therefore never rises.
The same for the columns of ``H`` given the new ``W``; a pass costs about
two multiplicative updates (two sparse-dense products per half, the model
at the stored entries, a logarithm per entry) and is made only of the
kernels that have compiled twins, so it runs on either backend.

Unlike coordinate descent (`coordinate`), whose sweep goes through the
components one at a time, every product here is a whole-matrix one: on
the NumPy kernels alone it reaches a converged objective in a fraction of
the time of either the multiplicative updates or coordinate descent
(``docs/real_text.md``).
"""

import numpy as np
import scipy.sparse as sp

from ._scale import _SMALLEST, rescaled
from .divergence import model_and_ratio_log_sums
from .products import product_at_nonzeros


def _half_step(X, rows, W, H, y, r, largest):
    """One half-step: the rows of ``W`` given ``H``.

    ``X`` is CSR with float64 data, ``rows`` each stored entry's row, ``y``
    the model and ``r = x / y`` at the stored entries (float64); no new
    value exceeds ``largest`` (the factors' dtype's largest finite number:
    an entry whose step would, or is not finite, keeps its value).  Returns
    the new ``W`` and the new model at the stored entries (new arrays).
    """
    n = X.shape[0]
    x = X.data
    c = H.sum(axis=1)
    R = sp.csr_matrix((r, X.indices, X.indptr), shape=X.shape)
    # Where the model is tiny these overflow to inf: the Newton proposal is
    # then not finite and the row falls back (below).
    with np.errstate(over="ignore", invalid="ignore"):
        gain = R @ H.T
        R.data = r / y
        curvature = R @ np.square(H.T)
    moving = c > 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        newton = np.maximum(W - (c - gain) / curvature, 0)
        # No curvature: no stored entry where the component is non-zero,
        # and the row's problem is c w, minimized at zero.
        newton = np.where(curvature > 0, newton, 0)
        newton = np.where((newton <= largest) & moving, newton, W)
    y_new = np.maximum(product_at_nonzeros(X, newton, H), _SMALLEST)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        change = (newton - W) @ c - np.bincount(
            rows, weights=x * np.log(y_new / y), minlength=n
        )
    falls_back = ~(change <= 0)
    if falls_back.any():
        # The multiplicative step on those rows: never raises their part.
        back = np.flatnonzero(falls_back)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = W[back] * (gain[back] / c)
        newton[back] = np.where(moving & (step <= largest), step, W[back])
        part = X[back]
        at = falls_back[rows]
        y_new[at] = np.maximum(product_at_nonzeros(part, newton[back], H), _SMALLEST)
    return newton, y_new


def _ratio(x, y):
    """``x / y``, capped at float64's largest finite number."""
    with np.errstate(over="ignore"):
        return np.minimum(x / y, np.finfo(np.float64).max)


def _transposed(X):
    """``X.T`` as CSR and the position in ``X.data`` of each of its entries."""
    n, m = X.shape
    order = sp.csr_matrix(
        (np.arange(X.nnz, dtype=np.float64), X.indices, X.indptr), shape=(n, m)
    ).T.tocsr()
    order.sort_indices()
    at = order.data.astype(np.intp)
    Xt = sp.csr_matrix((X.data[at], order.indices, order.indptr), shape=(m, n))
    return Xt, at


def dn_sweep(X, W, H, y=None):
    """One iteration of diagonal Newton: the rows of ``W``, then the columns
    of ``H``.

    The parameters and the result are those of `cd_sweep`: ``(W_new,
    H_new, y_new)``, new arrays in the factors' dtype, ``y_new`` the model
    at the stored entries.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sklearn_topicfac.kernels import dn_sweep, kl_divergence
    >>> rng = np.random.default_rng(0)
    >>> X = sp.csr_matrix(rng.poisson(2.0, (6, 5)).astype(float))
    >>> W, H = rng.random((6, 2)) + 0.1, rng.random((2, 5)) + 0.1
    >>> W_new, H_new, _ = dn_sweep(X, W, H)
    >>> bool(kl_divergence(X, W_new, H_new) <= kl_divergence(X, W, H))
    True
    """
    dtype = np.result_type(W.dtype, H.dtype)
    n, m = X.shape
    # Per-entry work in float64 whatever the dtype (as coordinate descent):
    # the curvature's x h^2 / y^2 would overflow float32 where y is small.
    X = sp.csr_matrix((X.data.astype(np.float64), X.indices, X.indptr), shape=(n, m))
    W64 = np.asarray(W, dtype=np.float64)
    H64 = np.asarray(H, dtype=np.float64)
    if y is None:
        y = product_at_nonzeros(X, W64, H64)
    y = np.maximum(np.asarray(y, dtype=np.float64), _SMALLEST)
    rows = np.repeat(np.arange(n, dtype=np.intp), np.diff(X.indptr))
    largest = float(np.finfo(dtype).max)
    W_new, y = _half_step(X, rows, W64, H64, y, _ratio(X.data, y), largest)
    Xt, at = _transposed(X)
    y_t = y[at]
    cols = np.repeat(np.arange(m, dtype=np.intp), np.diff(Xt.indptr))
    Ht_new, y_t = _half_step(
        Xt, cols, H64.T, W_new.T, y_t, _ratio(Xt.data, y_t), largest
    )
    y = np.empty_like(y_t)
    y[at] = y_t
    return rescaled(X.data, y, W_new.T.copy(), np.ascontiguousarray(Ht_new.T), dtype)


def dn_pass(X, W, H):
    """`dn_sweep` as the fit loop uses it: ``(W_new, H_new, sums)``, with
    ``sums = (sum x log r, sum x)`` of the incoming state (as `cd_pass`)."""
    y, sums = model_and_ratio_log_sums(X, W, H)
    W_new, H_new, _ = dn_sweep(X, W, H, y)
    return W_new, H_new, sums
