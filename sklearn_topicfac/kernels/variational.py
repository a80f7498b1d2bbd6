"""Mean-field variational updates of LDA (and Gamma-Poisson) in NMF form."""

import numpy as np
from scipy.special import gammaln, psi

from ._backend import twins
from .products import compressed_view, divide_into_ratio, transposed_product

# ------------------------------------------------------------------------
# Latent Dirichlet allocation by mean-field variational inference, in the
# NMF form of paper 002, Alg. 5.  With Theta = exp(E[log theta]) (n, k) and
# B = exp(E[log beta]) (k, m), the optimal word-topic responsibilities are
# phi_dwk = Theta_dk B_kw / (Theta B)_dw, so every sum over phi is a product
# with R = X / (Theta B) at the non-zeros: no (nnz, k) responsibility array
# is ever stored.

# The E-step works on chunks of documents of similar length, each padded to
# its longest document: a chunk holds the gathered topic columns of its
# documents as a dense (documents, k, width) array of at most this many
# elements (1 MiB in float64), small enough to stay in a core's L2 cache
# during the chunk's sweeps, large enough that the per-sweep Python overhead
# is spread over tens of documents.  Lengths in a chunk differ by at most
# _PAD_FACTOR (plus _PAD_SLACK entries), which bounds the padding.
_E_STEP_CHUNK_ELEMENTS = 1 << 17
_PAD_FACTOR = 1.25
_PAD_SLACK = 8
# A chunk is swept until this fraction of its documents is left active.
_REPOOL_FRACTION = 0.5


def dirichlet_expectation(A):
    """``E[log theta]`` for ``theta`` row-wise Dirichlet with parameters ``A``.

    .. math::

        \\mathbb{E}[\\log \\theta_{dk}]
        = \\psi(A_{dk}) - \\psi\\big(\\sum_j A_{dj}\\big)

    ``A`` must be positive; the dtype is kept (``scipy.special.psi`` keeps
    float32).
    """
    return psi(A) - psi(A.sum(axis=1))[:, None]


def exp_dirichlet_expectation(A):
    """``exp(E[log theta])`` row-wise: the NMF-form factor of paper 002, Alg. 5.

    Its rows sum to less than one (Jensen); it is what multiplies the topics
    in the variational responsibilities.
    """
    return np.exp(dirichlet_expectation(A))


def dirichlet_kl(A, prior):
    """Sum over rows of ``KL(Dir(A[d]) || Dir(prior))``, as a Python float.

    The sum of `dirichlet_kl_rows`.  Minus this is the prior-and-entropy
    part of the LDA evidence lower bound, for the documents (``A = gamma``,
    ``prior = alpha``) and for the topics (``A = lambda``, ``prior = eta``).
    """
    return float(dirichlet_kl_rows(A, prior).sum())


def dirichlet_kl_rows(A, prior):
    """``KL(Dir(A[d]) || Dir(prior))`` for every row ``d``, in float64.

    .. math::

        \\log\\Gamma(\\textstyle\\sum_j A_{dj})
        - \\sum_j \\log\\Gamma(A_{dj})
        - \\log\\Gamma(\\textstyle\\sum_j a_j) + \\sum_j \\log\\Gamma(a_j)
        + \\sum_j (A_{dj} - a_j)\\, \\mathbb{E}[\\log \\theta_{dj}]

    ``prior`` is a scalar (symmetric Dirichlet) or a vector of length
    ``A.shape[1]``.  Evaluated in float64 whatever the dtype of ``A``: its
    terms are of the size of the counts and cancel to a much smaller total.
    """
    A = np.asarray(A, dtype=np.float64)
    prior = np.broadcast_to(np.asarray(prior, dtype=np.float64), (A.shape[1],))
    a_sum = A.sum(axis=1)
    e_log = psi(A) - psi(a_sum)[:, None]
    per_row_prior = gammaln(prior).sum() - gammaln(prior.sum())
    return (
        gammaln(a_sum)
        - gammaln(A).sum(axis=1)
        + per_row_prior
        + np.sum((A - prior) * e_log, axis=1)
    )


def _length_chunks(lengths, rows, k):
    """Split ``rows`` into chunks ``(rows, width)`` of similar document length."""
    order = rows[np.argsort(lengths[rows], kind="stable")]
    sorted_len = lengths[order]
    chunks = []
    i = 0
    while i < order.size:
        cap = int(sorted_len[i] * _PAD_FACTOR) + _PAD_SLACK
        j = int(np.searchsorted(sorted_len, cap, side="right"))
        width = max(int(sorted_len[j - 1]), 1)
        j = min(j, i + max(1, _E_STEP_CHUNK_ELEMENTS // (width * k)))
        chunks.append((order[i:j], max(int(sorted_len[j - 1]), 1)))
        i = j
    return chunks


def _chunk_arrays(X, rows, width, Bt_pad):
    """Dense, padded views of documents ``rows`` of CSR ``X``.

    Returns ``G`` of shape (rows, k, width) with ``G[d, :, j]`` the column
    of ``B`` of the ``j``-th stored term of document ``d``, the counts ``x``
    (rows, width), the mask of real entries and their positions in ``X.data``.
    Padding points at the zero row appended to ``Bt_pad = B.T`` and has
    count 0.
    """
    starts = X.indptr[rows]
    lengths = X.indptr[rows + 1] - starts
    valid = np.arange(width) < lengths[:, None]
    pos = starts[:, None] + np.arange(width)
    cols = np.full((rows.size, width), Bt_pad.shape[0] - 1, dtype=np.intp)
    cols[valid] = X.indices[pos[valid]]
    x = np.zeros((rows.size, width), dtype=Bt_pad.dtype)
    x[valid] = X.data[pos[valid]]
    # mode="clip" skips take's bounds-checking copy (4x faster here); the
    # indices are valid by construction.
    G = np.take(Bt_pad, cols, axis=0, mode="clip").transpose(0, 2, 1)
    return np.ascontiguousarray(G), x, valid, pos


def _store_products(y_out, pos, valid, gamma, y):
    """Write ``Theta B`` of finished documents into ``y_out`` at ``pos``.

    ``y`` (documents, 1, width) was computed with ``exp(psi(gamma))``; the
    factor ``exp(-psi(sum(gamma_d)))`` normalizes it to ``Theta B``.
    """
    y = y[:, 0, :] * np.exp(-psi(gamma.sum(axis=1)))[:, None]
    y_out[pos[valid]] = np.maximum(y[valid], np.finfo(y.dtype).tiny)


def _redo_sweep_in_float64(new, t, G, x3, tiny):
    """Recompute, in float64, the rows of one sweep whose result overflowed.

    ``new[d, k] = sum_w x_dw t_dk G_dkw / max(y_dw, tiny)`` with ``y_d = t_d
    G_d``.  Each share ``t_dk G_dkw / max(y_dw, tiny)`` is at most 1
    (``t_dk G_dkw <= y_dw``, and below the floor the share only shrinks),
    so each term is at most ``x_dw`` and the row is bounded by the
    document's length.  The fast sweep forms the ratio ``x / y`` first, and
    that overflows where the model of a word underflowed: in float32 a
    count above 4 at a word every topic gives probability below the
    smallest normal float32; in float64 a count above 4 at a word every
    topic gives probability exactly 0 (point-estimate topics, such as
    GammaPoissonVI's, at a term absent from the training data).  ``inf * 0``
    then turns gamma into NaN.  Here the shares are formed first, in
    float64, so every intermediate stays finite and a word no topic can
    produce contributes nothing; the bounded result is written back in the
    working dtype.
    """
    bad = np.flatnonzero(~np.isfinite(new).all(axis=1))
    t64 = t[bad].astype(np.float64)
    G64 = G[bad].astype(np.float64)
    y64 = np.maximum(np.matmul(t64[:, None, :], G64), tiny)
    shares = t64[:, :, None] * G64 / y64
    new[bad] = np.matmul(shares, x3[bad].transpose(0, 2, 1))[:, :, 0]


def _e_step_chunks(X, chunks, Bt_pad, alpha, max_iter, tol, gamma, sweeps, y_out):
    """Sweeps of `lda_e_step` over some chunks; returns the rows left active.

    Writes ``gamma``, ``sweeps`` and, for the finished documents, ``y_out``
    in place.  A chunk is swept until half of its documents have finished
    (the finished ones ride along: recomputing them is cheaper than
    compacting the chunk every sweep, and their results were saved when they
    finished); the others go back to the pool, to be chunked again with the
    other chunks' stragglers.
    """
    k = Bt_pad.shape[1]
    tiny = np.finfo(gamma.dtype).tiny
    # The per-document test "mean absolute change < tol", on the sum.
    threshold = tol * k
    pending = []
    for rows, width in chunks:
        G, x, valid, pos = _chunk_arrays(X, rows, width, Bt_pad)
        n = rows.size
        g = gamma[rows]
        # Within the sweeps exp(psi(gamma)) stands for Theta: the missing
        # factor exp(-psi(sum(gamma_d))) is one number per document, and
        # Theta * ((X / (Theta B)) B^T) does not change when a row of Theta
        # is scaled (the identity behind paper 002's Lemma E.3).
        t = np.exp(psi(g))
        # Sweeps made before this chunk, per document; `sweep` counts here,
        # and from `first_cap` on some document may reach max_iter.
        before = sweeps[rows]
        first_cap = max_iter - int(before.max())
        sweep = 0
        live = np.ones(n, dtype=bool)
        y = np.empty((n, 1, width), dtype=g.dtype)
        grad = np.empty((n, k, 1), dtype=g.dtype)
        x3 = x[:, None, :]
        just_finished = None
        while True:
            np.matmul(t[:, None, :], G, out=y)
            if just_finished is not None:
                # Their gamma did not change since: this is their final product.
                f = just_finished
                _store_products(y_out, pos[f], valid[f], g[f], y[f])
                just_finished = None
            np.maximum(y, tiny, out=y)
            with np.errstate(over="ignore", invalid="ignore"):
                np.divide(x3, y, out=y)
                np.matmul(G, y.reshape(n, width, 1), out=grad)
                new = grad[:, :, 0] * t
            if not np.isfinite(new).all():
                _redo_sweep_in_float64(new, t, G, x3, tiny)
            new += alpha
            change = np.add.reduce(np.abs(new - g), axis=1, dtype=np.float64)
            g = new
            t = np.exp(psi(g))
            sweep += 1
            finished = change < threshold
            if sweep >= first_cap:
                finished |= before + sweep >= max_iter
            finished &= live
            if not np.count_nonzero(finished):
                continue
            f = np.flatnonzero(finished)
            gamma[rows[f]] = g[f]
            live[f] = False
            n_live = int(np.count_nonzero(live))
            if n_live > _REPOOL_FRACTION * n:
                just_finished = f
                continue
            y_f = np.matmul(t[f][:, None, :], G[f])
            _store_products(y_out, pos[f], valid[f], g[f], y_f)
            if n_live:
                still = np.flatnonzero(live)
                gamma[rows[still]] = g[still]
                sweeps[rows[still]] = before[still] + sweep
                pending.append(rows[still])
            break
    return pending


def lda_e_step(X, gamma, B, alpha, max_iter, tol):
    """Mean-field E-step of LDA for all documents at once (paper 002, Alg. 5).

    Starting from the variational Dirichlet parameters ``gamma``, each sweep
    updates every still-active document:

    .. math::

        \\Theta = \\exp(\\mathbb{E}[\\log\\theta]) = \\exp\\big(\\psi(\\gamma)
        - \\psi(\\gamma \\mathbf{1})\\big), \\qquad
        \\gamma \\leftarrow \\alpha + \\Theta \\odot
        \\Big(\\frac{X}{\\Theta B}\\Big) B^T,

    one sampled product (``Theta B`` at the non-zeros of ``X``) and one
    sparse-dense product per sweep.  A document leaves the active set once
    the mean absolute change of its ``gamma`` falls below ``tol`` (or after
    ``max_iter`` sweeps): scikit-learn's per-document rule, so a document's
    result never depends on the other documents of ``X``.  Every sweep is a
    coordinate-ascent step on the document's evidence lower bound.

    The documents are sorted by length and cut into chunks of similar
    length (``_E_STEP_CHUNK_ELEMENTS``); in a chunk the columns of ``B`` at
    the documents' terms are gathered once into a dense, padded
    (documents, k, width) array, and both products of a sweep are batched
    matrix-vector products on it, in cache.  A chunk is swept until half of
    its documents have finished; the rest are pooled with the other chunks'
    and chunked again, so a few slow documents never hold a whole chunk.
    Memory: O(chunk + (n_samples + n_features) * k) -- no (nnz, k) array
    over the corpus, no dense ``n_samples x n_features`` array.  (The
    sweeps run on one thread: their many short NumPy calls hold the GIL for
    most of the time, and two threads measured no faster.)

    Parameters
    ----------
    X : scipy.sparse CSR matrix of shape (n_samples, n_features)
        Counts.
    gamma : ndarray of shape (n_samples, k)
        Positive start.  Not modified.
    B : ndarray of shape (k, n_features)
        ``exp(E[log beta])`` of the topics (or the topics themselves for
        point estimates).
    alpha : float or ndarray of shape (k,)
        Dirichlet prior of the topic proportions.
    max_iter : int >= 1
        Maximum number of sweeps per document.
    tol : float
        Per-document stopping threshold on the mean absolute change of
        ``gamma``.

    Returns
    -------
    gamma : ndarray of shape (n_samples, k)
        The updated variational parameters, dtype of the input.
    y : ndarray of shape (X.nnz,)
        ``Theta B`` at the stored entries of ``X`` (aligned with ``X.data``)
        for the returned ``gamma``, floored at the smallest normal number:
        what the bound and the sufficient statistics need.
    """
    if (fast := twins(X, B.shape[0])) is not None:
        return fast.lda_e_step(X, gamma, B, alpha, max_iter, tol)
    k, m = B.shape
    Bt_pad = np.zeros((m + 1, k), dtype=B.dtype)
    Bt_pad[:m] = B.T
    gamma = np.array(gamma, copy=True)
    alpha = np.asarray(alpha, dtype=gamma.dtype)
    y = np.empty(X.nnz, dtype=np.result_type(gamma.dtype, B.dtype))
    lengths = np.diff(X.indptr)
    sweeps = np.zeros(X.shape[0], dtype=np.intp)
    active = np.arange(X.shape[0])
    while active.size:
        chunks = _length_chunks(lengths, active, k)
        pending = _e_step_chunks(
            X, chunks, Bt_pad, alpha, max_iter, tol, gamma, sweeps, y
        )
        active = np.concatenate(pending) if pending else active[:0]
    return gamma, y


# Entries per piece of `lda_log_likelihood_rows` (512 KiB of float64).
_LOG_PIECE = 1 << 16


def lda_log_likelihood_rows(X, y):
    """Data term of the LDA evidence lower bound per row of CSR ``X``, in float64.

    .. math::

        \\sum_{w} X_{dw} \\log \\sum_k
        \\exp\\big(\\mathbb{E}[\\log\\theta_{dk}] + \\mathbb{E}[\\log\\beta_{kw}]\\big)
        = \\sum_{X_{dw} > 0} X_{dw} \\log y_{dw}

    (the word-topic responsibilities at their optimum given ``gamma`` and
    the topics), with ``y`` of `lda_e_step`, aligned with ``X.data``.
    Computed in pieces of whole rows of about ``_LOG_PIECE`` entries: no
    (nnz,) float64 temporary.
    """
    n = X.shape[0]
    indptr = X.indptr
    out = np.zeros(n)
    r0 = 0
    while r0 < n:
        r1 = int(np.searchsorted(indptr, indptr[r0] + _LOG_PIECE, side="right")) - 1
        r1 = min(max(r1, r0 + 1), n)
        a, b = indptr[r0], indptr[r1]
        piece = np.log(y[a:b], dtype=np.float64)
        piece *= X.data[a:b]
        rows = np.repeat(np.arange(r1 - r0), np.diff(indptr[r0 : r1 + 1]))
        out[r0:r1] = np.bincount(rows, weights=piece, minlength=r1 - r0)
        r0 = r1
    return out


def lda_expected_counts(X, gamma, B, y, overwrite_y=False):
    """Expected topic-word counts: the sufficient statistics of the M-step.

    .. math::

        n_{kw} = \\sum_d X_{dw} \\phi_{dwk}
              = B_{kw} \\sum_d \\Theta_{dk} \\frac{X_{dw}}{(\\Theta B)_{dw}}

    with ``y = Theta B`` at the stored entries as returned by `lda_e_step`.
    A sum over documents, so the statistics of row blocks add up.  Shape
    (k, n_features), dtype of ``gamma``.  ``overwrite_y=True`` computes the
    ratio ``X / y`` in ``y``'s memory instead of a new (nnz,) array.
    """
    ratio = y if overwrite_y else y.copy()
    # Capped, not inf, where the model underflowed: the products below are
    # then finite or redone in float64 (`transposed_product`).
    divide_into_ratio(X.data, ratio)
    R = compressed_view(ratio, X.indices, X.indptr, X.shape)
    counts = B * transposed_product(exp_dirichlet_expectation(gamma), R)
    return counts.astype(gamma.dtype, copy=False)


def gamma_kl_rows(A, rate, prior_shape, prior_rate):
    """``sum_k KL(Gamma(A_dk, rate) || Gamma(a_k, prior_rate))`` per row, float64.

    .. math::

        \\sum_{k} (A_{dk} - a_k) \\psi(A_{dk}) - \\log\\Gamma(A_{dk})
        + \\log\\Gamma(a_k) + a_k \\log\\frac{c}{b} + A_{dk} \\frac{b - c}{c}

    with ``c = rate``, ``a = prior_shape`` (scalar or one per column) and
    ``b = prior_rate``: minus the prior-and-entropy part of the
    Gamma-Poisson evidence lower bound (paper 002, Appendix E).
    """
    A = np.asarray(A, dtype=np.float64)
    a = np.broadcast_to(np.asarray(prior_shape, dtype=np.float64), (A.shape[1],))
    return (
        np.sum((A - a) * psi(A) - gammaln(A), axis=1)
        + np.sum(gammaln(a) + a * np.log(rate / prior_rate))
        + A.sum(axis=1) * (prior_rate - rate) / rate
    )
