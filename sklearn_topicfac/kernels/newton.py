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
The same for the columns of ``H`` given the new ``W``, from the stored
entries in X's own order (no transposed copy).  A pass is two
sparse-dense products per half, the model at the stored entries and a
logarithm per entry: in a fit, which hands each pass the model the pass
before formed (`dn_pass`), about 1.6 multiplicative iterations on
Reuters-21578 (``docs/real_text.md``).  It is made only of kernels that
dispatch to a backend (or SciPy's products), so it runs on either backend.

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
from .products import (
    batched_product_at_nonzeros,
    product_at_nonzeros,
    sparse_dense_product,
    transposed_product,
)


def _newton_step(F, c, gain, curvature, largest):
    """The diagonal Newton proposal for the rows of ``F`` (one row per
    problem, ``c`` the other factor's sums per component)."""
    moving = c > 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        newton = np.maximum(F - (c - gain) / curvature, 0)
        # No curvature: no stored entry where the component is non-zero,
        # and the row's problem is c w, minimized at zero.
        newton = np.where(curvature > 0, newton, 0)
        return np.where((newton <= largest) & moving, newton, F)


def _keep_or_fall_back(x, groups, F, c, gain, newton, y, y_new, largest):
    """Keep each row of ``newton`` where it lowers its problem's objective,
    and put the multiplicative step there elsewhere.

    ``groups`` is the row of ``F`` each stored entry belongs to, ``y`` and
    ``y_new`` the model at the stored entries before and after the Newton
    step.  Returns the rows that fell back (a boolean mask); the caller
    recomputes the model at their entries.
    """
    return _settle(
        F, c, gain, newton, _log_change(x, groups, y, y_new, F.shape[0]), largest
    )


def _log_change(x, groups, y, y_new, n_groups):
    """Per row of the problem: ``sum x log(y_new / y)`` over its entries."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.bincount(groups, weights=x * np.log(y_new / y), minlength=n_groups)


def _settle(F, c, gain, newton, log_change, largest):
    """`_keep_or_fall_back` from the rows' summed ``log_change``."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        change = (newton - F) @ c - log_change
    falls_back = ~(change <= 0)
    if falls_back.any():
        # The multiplicative step on those rows: never raises their part.
        back = np.flatnonzero(falls_back)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = F[back] * (gain[back] / c)
        newton[back] = np.where((c > 0) & (step <= largest), step, F[back])
    return falls_back


# From this share of the stored entries on, `_model_at` recomputes the model
# by one sampled product over all of them (`batched_product_at_nonzeros`)
# rather than by gathering the rows of W and H^T entry by
# entry.  On the generated corpus (1.34 M entries, k = 20) the gathers took
# 59 ms for every entry and 7.6 ms for 5 % of them, the whole product
# 2.3 ms; on tr41 (k = 10) 6.7 ms, 0.7 ms and 1.7 ms.  The share depends on
# the data alone, so the bits never depend on the machine.
_FULL_PRODUCT_SHARE = 1 / 16


def _model_at(y, at, X, rows, W, Ht):
    """Recompute the model at the stored entries ``at`` (a boolean mask)."""
    n_at = np.count_nonzero(at)
    if not n_at:
        return
    if n_at >= _FULL_PRODUCT_SHARE * at.size:
        y[at] = batched_product_at_nonzeros(X, W, Ht.T)[at]
    else:
        y[at] = np.einsum("ij,ij->i", W[rows[at]], Ht[X.indices[at]])


def _ratio(x, y):
    """``x / y``, capped at float64's largest finite number."""
    with np.errstate(over="ignore"):
        return np.minimum(x / y, np.finfo(np.float64).max)


def _gain_and_curvature(X, y, other, transposed):
    """``(R B, (R / Y) B^2)`` with ``R = X / Y`` at the stored entries and
    ``B = other``; with ``transposed``, ``(R^T B, (R / Y)^T B^2)``."""
    r = _ratio(X.data, y)
    R = sp.csr_matrix((r, X.indices, X.indptr), shape=X.shape)
    # Where the model is tiny these overflow to inf: the Newton proposal is
    # then not finite and the row falls back.
    with np.errstate(over="ignore", invalid="ignore"):
        if transposed:
            gain = transposed_product(other, R).T
            R.data = r / y
            curvature = transposed_product(np.square(other), R).T
        else:
            gain = sparse_dense_product(R, other)
            R.data = r / y
            curvature = sparse_dense_product(R, np.square(other))
    return gain, curvature


def _half_step(X, y, F, other, rows, largest, transposed=False):
    """The rows of ``F`` given ``other``: of ``W`` given ``H^T``, or with
    ``transposed`` of ``H^T`` given ``W``.

    ``y`` is the model at X's stored entries (floored), ``rows`` each
    stored entry's row.  Returns the new ``F`` and the new model there.
    The model is floored where it is compared (logarithms, ratios) but
    returned as computed: it is the new factors' model.
    """
    x, cols = X.data, X.indices
    groups = cols if transposed else rows
    c = other.sum(axis=0)
    gain, curvature = _gain_and_curvature(X, y, other, transposed)
    F_new = _newton_step(F, c, gain, curvature, largest)
    W, Ht = (other, F_new) if transposed else (F_new, other)
    model = batched_product_at_nonzeros(X, W, Ht.T)
    y_new = np.maximum(model, _SMALLEST)
    back = _keep_or_fall_back(x, groups, F, c, gain, F_new, y, y_new, largest)
    # (F_new, hence W or Ht, now holds the fall-back rows' steps.)
    _model_at(model, back[groups], X, rows, W, Ht)
    return F_new, model


def _in_float64(X, W, H):
    """``(X, W, H^T, rows, largest)`` for the per-entry work, in float64
    whatever the dtype (as coordinate descent): the curvature's x h^2 / y^2
    would overflow float32 where y is small.  ``rows`` is each stored
    entry's row; ``largest`` the factors' dtype's largest number."""
    n, m = X.shape
    X = sp.csr_matrix(
        (X.data.astype(np.float64, copy=False), X.indices, X.indptr), shape=(n, m)
    )
    rows = np.repeat(np.arange(n, dtype=np.intp), np.diff(X.indptr))
    largest = float(np.finfo(np.result_type(W.dtype, H.dtype)).max)
    W64 = np.asarray(W, dtype=np.float64)
    return X, W64, np.ascontiguousarray(H.T, dtype=np.float64), rows, largest


def dn_sweep(X, W, H, y=None):
    """One iteration of diagonal Newton: the rows of ``W``, then the columns
    of ``H``.

    The parameters and the result are those of `cd_sweep`: ``(W_new,
    H_new, y_new)``, new arrays in the factors' dtype, ``y_new`` the model
    at the stored entries.

    Both half-steps work on the stored entries of ``X`` in its own order
    (the columns of ``H`` through transposed products): no transposed copy
    of ``X`` is made.

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
    X, W64, Ht, rows, largest = _in_float64(X, W, H)
    if y is None:
        y = batched_product_at_nonzeros(X, W64, Ht.T)
    y = np.maximum(np.asarray(y, dtype=np.float64), _SMALLEST)

    W_new, model = _half_step(X, y, W64, Ht, rows, largest)
    Ht_new, model = _half_step(
        X, np.maximum(model, _SMALLEST), Ht, W_new, rows, largest, transposed=True
    )
    Wt_new, H_new = W_new.T.copy(), np.ascontiguousarray(Ht_new.T)
    return rescaled(X.data, model, Wt_new, H_new, dtype)


def dn_pass(X, W, H, y=None):
    """`dn_sweep` as the fit loop uses it: ``(W_new, H_new, sums, y_new)``,
    with ``sums = (sum x log r, sum x)`` of the incoming state and ``y`` the
    incoming model if known (as `cd_pass`).  ``y_new`` is the new factors'
    model at the stored entries as computed (not floored), which the next
    pass may take as its ``y``."""
    y, sums = model_and_ratio_log_sums(X, W, H, y)
    W_new, H_new, y_new = dn_sweep(X, W, H, y)
    return W_new, H_new, sums, y_new


# ----------------------------------------------------- as a map-reduce
# The same iteration over row blocks (`Blocks`, a dask array): the rows of
# ``W`` are each block's own, and the columns of ``H`` need only sums over
# the documents -- their gain and curvature (`dn_doc_half`), then, for the
# proposal made from those sums, each column's change of objective
# (`dn_topic_check`) -- so one iteration is two passes over the blocks.  In
# exact arithmetic it is `dn_sweep`; in floating point the sums over blocks
# are added in another order.


def dn_doc_half(X, W, H):
    """One block's part of a diagonal Newton iteration.

    Returns ``(W_new, sums, stats)``: the block's new rows of ``W``
    (float64), `ratio_log_sums` of the incoming state on the block (its
    objective), and the block's contribution to the topic half, sums over
    its documents: ``dn_gain`` and ``dn_curvature`` (``m x k``), ``dn_c``
    (``W_new``'s column sums) and ``x_sum``.
    """
    y, sums = model_and_ratio_log_sums(X, W, H)
    X, W64, Ht, rows, largest = _in_float64(X, W, H)
    y = np.maximum(np.asarray(y, dtype=np.float64), _SMALLEST)
    W_new, model = _half_step(X, y, W64, Ht, rows, largest)
    gain, curvature = _gain_and_curvature(
        X, np.maximum(model, _SMALLEST), W_new, transposed=True
    )
    stats = {
        "dn_gain": gain,
        "dn_curvature": curvature,
        "dn_c": W_new.sum(axis=0),
        "x_sum": float(X.data.sum()),
    }
    return W_new, sums, stats


def dn_topic_proposal(H, stats):
    """The Newton proposal for the columns of ``H`` from the summed stats
    of `dn_doc_half`: ``H^T``'s new rows, float64."""
    largest = float(np.finfo(H.dtype).max)
    Ht = np.ascontiguousarray(H.T, dtype=np.float64)
    return _newton_step(
        Ht, stats["dn_c"], stats["dn_gain"], stats["dn_curvature"], largest
    )


def dn_topic_check(X, W, H, Ht_proposal):
    """One block's ``sum x log(y_new / y)`` per column of ``H``: ``y`` the
    model of ``(W, H)`` at its stored entries, ``y_new`` that of the proposal."""
    X, W64, Ht, _, _ = _in_float64(X, W, H)
    y = np.maximum(product_at_nonzeros(X, W64, Ht.T), _SMALLEST)
    y_new = np.maximum(product_at_nonzeros(X, W64, Ht_proposal.T), _SMALLEST)
    return _log_change(X.data, X.indices, y, y_new, X.shape[1])


def dn_topic_settle(H, stats, Ht_proposal, log_change):
    """The new topics and the common scale of ``W``: ``(H_new, alpha)``.

    A column keeps the proposal where it lowers its objective and takes the
    multiplicative step elsewhere, as in `dn_sweep`; ``alpha`` is the
    scale `dn_sweep` gives both factors' product (``sum(alpha W H) =
    sum(X)``), applied to ``W``.
    """
    largest = float(np.finfo(H.dtype).max)
    Ht = np.ascontiguousarray(H.T, dtype=np.float64)
    c, gain = stats["dn_c"], stats["dn_gain"]
    Ht_new = Ht_proposal.copy()
    _settle(Ht, c, gain, Ht_new, log_change, largest)
    H_new = np.ascontiguousarray(Ht_new.T)
    total = float(c @ H_new.sum(axis=1))
    alpha = stats["x_sum"] / total if total > 0 else 1.0
    return H_new.astype(H.dtype, copy=False), alpha
