"""Starts: the one place that decides where a fit starts.

A start is the topics ``H`` (count scale, or the model's own for a custom
or drawn start) and one *spec* per row block of the documents' start:
``("custom", W_rows)`` or ``("draw", kind, generator state, scale)``.  The
same plan serves a fit in memory (one block), out-of-core and on Dask, so a
fit starts from the same point wherever its data lives:

- ``"random"``: the model's draws (`TopicModel.draw_topics`,
  `TopicModel.draw_documents`, in the model's order), the documents' block
  by block from the generator state at the block's first row;
- ``"nndsvda"``: the non-negative double SVD of X, whose randomized SVD
  needs only products of X with thin dense matrices: passes over the
  blocks (`randomized_svd`), scikit-learn's algorithm and draws;
- ``"kmeans"``: the smoothed K-means start, on the whole matrix (in memory);
- ``"custom"``: the user's factors, validated.
"""

import numpy as np
import scipy.sparse as sp
from scipy import linalg
from sklearn.cluster import KMeans
from sklearn.preprocessing import normalize
from sklearn.utils import check_random_state
from sklearn.utils.extmath import svd_flip

from .._validation import check_factor, check_start_arguments
from ..kernels import normalize_rows, one_blas_thread

# Smoothing added to the K-means assignment indicator (Ding, Li & Peng, 2006):
# a 0/1 start would pin most entries at zero under multiplicative updates.
KMEANS_SMOOTHING = 0.2


_NO_DOCUMENT_START = (
    "This model takes no start for the documents: their start is drawn "
    "(LDAVI and GammaPoissonVI: see the E-step's start in their docstrings). "
    "Pass only H, the topics' start, with init='custom'."
)


def resolve_init(init, default, n, m, k):
    """``init``, with ``None`` read as ``default`` where feasible, else "random"."""
    if init is None:
        init = default
        if k > (n if init == "kmeans" else min(n, m)):
            init = "random"
    if init == "nndsvda" and k > min(n, m):
        raise ValueError(
            f"init='nndsvda' needs n_components <= min(n_samples, "
            f"n_features) = {min(n, m)}, got {k}; use init='random'."
        )
    if init == "kmeans" and k > n:
        raise ValueError(
            f"init='kmeans' needs n_components <= n_samples = {n} "
            f"(one cluster per topic), got {k}; use init='random'."
        )
    return init


def plan_start(model, runner, init, k, random_state, rng, W=None, H=None):
    """The start of a fit: ``(H_raw, specs)``, one spec per block of ``runner``.

    ``init`` is resolved already (see `resolve_init`).  ``random_state`` is
    the estimator's parameter (seeding the SVD and K-means as scikit-learn
    seeds them); ``rng`` the generator the random draws continue.  ``H_raw``
    is in count scale (``model.prepare_start`` maps it), except for models
    whose documents' start is drawn (``model.custom_documents`` false),
    where it is the model's topics.
    """
    if not model.custom_documents and W is not None:
        raise ValueError(_NO_DOCUMENT_START)
    check_start_arguments(init, W, H)
    if init == "custom":
        return _custom_start(model, runner, k, rng, W, H)
    if init == "random":
        return random_start(model, runner, k, rng)
    total = runner.total()
    if init == "kmeans":
        W, H = kmeans_start(runner.matrix(), k, random_state)
    else:
        W, H = nndsvda_start(runner, k, random_state, total)
    W, H = model.start_from_factors(W, H, total)
    if W is None:
        return H, _draw_specs(model, runner.sizes, k, rng, None)
    return H, _split_rows(W, runner.sizes)


def random_start(model, runner, k, rng, documents=True):
    """The model's random start, drawn block by block (see the module).

    With ``documents=False``, a model that draws its topics first draws
    only them (``specs`` is then ``None``).
    """
    n, m = runner.shape
    scale = model.random_scale(n, m, k, runner.total)
    if model.draws_topics_first:
        H = model.draw_topics(rng, k, m, scale, runner.dtype)
        if not documents:
            return H, None
        return H, _draw_specs(model, runner.sizes, k, rng, scale)
    specs = _draw_specs(model, runner.sizes, k, rng, scale)
    return model.draw_topics(rng, k, m, scale, runner.dtype), specs


def _draw_specs(model, sizes, k, rng, scale):
    """One ``("draw", ...)`` spec per block, advancing ``rng`` past its rows."""
    specs = []
    for size in sizes:
        specs.append(("draw", rng.get_state(), scale))
        model.draw_documents(rng, size, k, scale)
    return specs


def _split_rows(W, sizes):
    bounds = np.cumsum([0, *sizes])
    return [("custom", W[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _custom_start(model, runner, k, rng, W, H):
    n, m = runner.shape
    dtype = runner.dtype
    if model.custom_documents:
        W = check_factor(W, (n, k), "W", dtype)
        H = check_factor(H, (k, m), "H", dtype)
        return H, _split_rows(W, runner.sizes)
    # The documents' start is drawn; the model checks the topics.
    if H is not None:
        H = check_factor(H, (k, m), "H", dtype)
    H = model.custom_topics(H)
    return H, _draw_specs(model, runner.sizes, k, rng, None)


# ---------------------------------------------------------------- NNDSVDa
def randomized_svd(runner, k, random_state, n_oversamples=10):
    """scikit-learn's ``randomized_svd(X, k)`` from products of X with thin matrices.

    The same algorithm and draws: a Gaussian test matrix, ``n_iter``
    (7 or 4, as ``"auto"``) LU-normalized power iterations, a QR basis, the
    SVD of the projected matrix and the same sign convention; X is worked
    on transposed when it has fewer rows than columns.  X only enters
    through ``runner.row_product(Q) = X @ Q`` and ``runner.col_product(Y) =
    X.T @ Y`` (a pass over the blocks each, the second a sum over blocks),
    so the SVD of a corpus on Dask or on disk is that of the corpus in
    memory up to the rounding of those sums.  The thin matrices (``n x
    (k + 10)``) are held here, like the document factor.

    Its dense LU, QR and SVD run on one BLAS thread: LAPACK's blocked
    factorizations round differently on different numbers of threads, and
    a start is where such a difference would grow into another fit.  (They
    are of ``n x (k + 10)`` matrices: one thread costs little.)
    """
    with one_blas_thread():
        return _randomized_svd(runner, k, random_state, n_oversamples)


def _randomized_svd(runner, k, random_state, n_oversamples):
    n, m = runner.shape
    rng = check_random_state(random_state)
    size = k + n_oversamples
    n_iter = 7 if k < 0.1 * min(n, m) else 4
    transpose = n < m
    # M is X or X.T: its products with a thin matrix, and with its transpose.
    if transpose:
        M_times, Mt_times = runner.col_product, runner.row_product
    else:
        M_times, Mt_times = runner.row_product, runner.col_product
    Q = rng.normal(size=(n if transpose else m, size))
    if runner.dtype == np.float32:
        Q = Q.astype(np.float32, copy=False)
    qr = _qr_basis
    lu = _lu_basis if n_iter > 2 else (lambda A: A)
    for _ in range(n_iter):
        Q = lu(M_times(Q))
        Q = lu(Mt_times(Q))
    Q = qr(M_times(Q))
    B = Mt_times(Q).T
    Uhat, s, Vt = linalg.svd(B, full_matrices=False, lapack_driver="gesdd")
    U = Q @ Uhat
    if transpose:
        U, Vt = svd_flip(U, Vt, u_based_decision=False)
        return Vt[:k].T, s[:k], U[:, :k].T
    U, Vt = svd_flip(U, Vt)
    return U[:, :k], s[:k], Vt[:k]


def _qr_basis(A):
    return linalg.qr(A, mode="economic", check_finite=False)[0]


def _lu_basis(A):
    return linalg.lu(A, permute_l=True, check_finite=False)[0]


def nndsvda_start(runner, k, random_state, total=None):
    """Non-negative double SVD start (Boutsidis & Gallopoulos, 2008).

    Each singular pair is split into its positive and negative parts and
    the dominant part is kept; zeros are then filled with a small positive
    value so that multiplicative updates can move them (the "a" variant).
    The fill is ``sqrt(mean(X) / k)``, the scale of one factor entry when
    ``W @ H`` has the mean of X -- filling both factors with ``mean(X)``
    itself, as scikit-learn does, puts ``W @ H`` at ``mean(X) ** 2`` and
    overflows float32 on large values.  ``total``, the sum of X, saves a
    pass when the caller has it.
    """
    n, m = runner.shape
    dtype = runner.dtype
    U, S, Vt = randomized_svd(runner, k, random_state)
    # A document or term without counts has no part in X's singular vectors;
    # the SVD leaves rounding noise of either sign there (1e-17, depending on
    # how the products were summed), whose positive part would be kept and
    # stay near zero, where an exact zero is filled: zero it, so that the
    # start does not depend on where the data lives.
    U[runner.row_product(np.ones((m, 1), dtype=dtype)).ravel() == 0] = 0
    Vt[:, runner.col_product(np.ones((n, 1), dtype=dtype)).ravel() == 0] = 0
    W = np.zeros((n, k), dtype=dtype)
    H = np.zeros((k, m), dtype=dtype)
    for j in range(k):
        u, v = U[:, j], Vt[j]
        up, un = np.maximum(u, 0), np.maximum(-u, 0)
        vp, vn = np.maximum(v, 0), np.maximum(-v, 0)
        pos = np.linalg.norm(up) * np.linalg.norm(vp)
        neg = np.linalg.norm(un) * np.linalg.norm(vn)
        u, v, sigma = (up, vp, pos) if pos >= neg else (un, vn, neg)
        nu, nv = np.linalg.norm(u), np.linalg.norm(v)
        if nu > 0 and nv > 0:
            scale = np.sqrt(S[j] * sigma)
            W[:, j] = scale * u / nu
            H[j] = scale * v / nv
    mean = (runner.total() if total is None else total) / (n * m)
    fill = dtype.type(np.sqrt(mean / k) if mean > 0 else 1.0)
    W[W == 0] = fill
    H[H == 0] = fill
    return W, H


# ---------------------------------------------------------------- K-means
def kmeans_labels(X, n_clusters, random_state):
    """K-means clustering of the documents by their term profiles.

    The rows are scaled to unit Euclidean norm first, so documents are
    compared by the cosine of their count vectors, not by their lengths.
    One k-means++ run (``n_init=1``): the seed is the only source of variation.
    This is the clustering ``init="kmeans"`` starts from.
    """
    model = KMeans(n_clusters=n_clusters, n_init=1, random_state=random_state)
    return model.fit_predict(normalize(X))


def kmeans_start(X, k, random_state):
    """Smoothed K-means start (Ding, Li & Peng, 2006).

    K-means clusters the documents (see `kmeans_labels`).  The assignment
    indicator plus 0.2 smoothing, normalized per document, gives the topic
    proportions, and each cluster's summed counts (its centroid up to
    scale), normalized per topic, give the topics:

    .. math::

        P(z \\mid d) \\propto [d \\in z] + 0.2, \\qquad
        P(w \\mid z) \\propto \\sum_{d \\in z} X_{dw} + \\epsilon_w .

    In count scale ``W = N_d P(z|d)`` and ``H = P(w|z)``, so ``W @ H`` has
    the row sums of ``X`` and the start means the same for every model
    (``prepare_start`` maps it to the model's parametrization).
    ``epsilon_w`` is ``1e-3`` times the corpus frequency of ``w`` spread
    over the clusters: a term absent from a cluster would otherwise stay at
    exactly zero in that topic forever under multiplicative updates.
    """
    n = X.shape[0]
    labels = kmeans_labels(X, k, random_state)
    A = np.full((n, k), KMEANS_SMOOTHING, dtype=X.dtype)
    A[np.arange(n), labels] += 1
    n_d = np.asarray(X.sum(axis=1), dtype=X.dtype).ravel()
    W = normalize_rows(A)[0] * n_d[:, None]
    indicator = sp.csr_matrix(
        (np.ones(n, dtype=X.dtype), (np.arange(n), labels)), shape=(n, k)
    )
    cluster_counts = np.asarray((indicator.T @ X).todense())
    floor = 1e-3 / k * cluster_counts.sum(axis=0)
    H = normalize_rows(cluster_counts + floor[None, :])[0]
    return W, H.astype(X.dtype, copy=False)
