"""Zero-order collapsed variational updates of LDA (CVB0), in NMF form.

CVB0 (Asuncion, Welling, Smyth & Teh, 2009) keeps, for every token of term
``w`` in document ``d``, a distribution ``g_dw`` over the topics, and the
expected counts it implies,

.. math::

    N_{dk} = \\sum_w X_{dw} g_{dwk}, \\qquad
    N_{kw} = \\sum_d X_{dw} g_{dwk}, \\qquad
    N_k = \\sum_w N_{kw}.

One token's update reads the counts without the token itself:

.. math::

    g_{dwk} \\propto (N_{dk} - g_{dwk} + \\alpha_k)
    \\frac{N_{kw} - g_{dwk} + \\eta}{N_k - g_{dwk} + V \\eta}.

The tokens of one term in one document share their ``g`` (they see the same
counts), so a stored entry ``X_dw`` is one vector ``g_dw`` whose counts are
``X_dw g_dw``, and a token's exclusion subtracts ``min(X_dw, 1) g_dw``.
Without the exclusion the update is EM in NMF form with ``Theta = N_dk +
alpha`` and ``B = (N_kw + eta) / (N_k + V eta)``: ``g_dw = Theta_d * B_w /
(Theta B)_dw``.

Batch CVB0 stores ``g`` for every stored entry -- an ``(nnz, k)`` array --
because the exclusion needs the entry's last ``g``.  These kernels store no
``g``: a sweep reads the counts of the last sweep and solves, per entry, the
entry's own fixed point ``g = f(N - min(X_dw, 1) g)`` by a few substitutions
from the EM responsibility (``n_inner``).  When the sweeps have converged,
the counts are those of the ``g``, so the fixed points of these sweeps are
those of batch CVB0; between them the entry's ``g`` is what the counts say
it is, not what it was.  Memory O(chunk * k + (n_samples + n_features) *
k).
"""

import numpy as np

from ._backend import twins
from .divergence import ratio_log_sums
from .products import transposed_product
from .updates import em_doc_pass

# Stored entries per chunk of a sweep (times k values per temporary).
_CHUNK_ENTRIES = 1 << 14

# A fit calls the sweep hundreds of times per start (3 starts of up to
# max_iter sweeps, the kept one run on to 3 max_iter): the numba twin's
# one-time compile (then cached) pays back at this fraction of the work from
# which other kernels take it (`_backend.AUTO_MIN_WORK`): CSTR (16,157
# entries, k = 4) runs on numba.
_TWIN_WORK_FACTOR = 256


def _entry_shares(D, T, totals, own, alpha, eta, v_eta, exclude_words, n_inner):
    """The entries' ``g`` (entries, k) from their counts, without their own."""
    word = (T + eta) / (totals + v_eta)
    g = (D + alpha) * word
    y = g.sum(axis=1)
    g /= y[:, None]
    for _ in range(n_inner):
        e = own * g
        doc = np.maximum(D - e, 0.0) + alpha
        if exclude_words:
            word = (np.maximum(T - e, 0.0) + eta) / (
                np.maximum(totals - e, 0.0) + v_eta
            )
        new = doc * word
        new /= new.sum(axis=1)[:, None]
        # Averaged with the last: the plain substitution can cycle with
        # period two where an entry's own token is most of its counts.
        g = 0.5 * (g + new)
    return g, y


def cvb0_sweep(
    X, doc_counts, topic_counts, alpha, eta, *, exclude_words=True, n_inner=2
):
    """One batch CVB0 sweep over the stored entries of ``X``.

    For each stored entry ``(d, w)`` the topic shares ``g_dw`` are computed
    from the incoming counts without the entry's own token (see the module
    docstring), and the new counts are summed from them:

    .. math::

        N'_{dk} = \\sum_w X_{dw} g_{dwk}, \\qquad
        N'_{kw} = \\sum_d X_{dw} g_{dwk}.

    Also returns the log-likelihood of ``X`` under the incoming state's
    point estimates :math:`\\theta_d = (N_d + \\alpha) / (|N_d| + \\sum\\alpha)`
    and :math:`\\beta_k = (N_k + \\eta) / (N_k\\mathbf{1} + V\\eta)`, a
    by-product of the sweep.

    Parameters
    ----------
    X : scipy.sparse CSR matrix of shape (n_samples, n_features)
        Counts.
    doc_counts : ndarray of shape (n_samples, k)
        The documents' expected topic counts :math:`N_{dk}` (each row sums
        to the document's length).  Not modified.
    topic_counts : ndarray of shape (k, n_features)
        The topics' expected term counts :math:`N_{kw}` over the whole
        corpus (these documents included when ``exclude_words``).
    alpha : float or ndarray of shape (k,)
        Dirichlet prior of the topic proportions.
    eta : float > 0
        Dirichlet prior of the topics.
    exclude_words : bool, default=True
        Whether the topics' counts include the documents' own (training: the
        token is removed from them too) or not (fold-in of new documents
        with the topics fixed).
    n_inner : int >= 0, default=2
        Substitutions of each entry's fixed point from the EM
        responsibility (0: no exclusion at all, EM with the priors as
        pseudo-counts).

    Returns
    -------
    doc_counts : ndarray of shape (n_samples, k)
    topic_counts : ndarray of shape (k, n_features)
        The documents' contribution :math:`\\sum_d X_{dw} g_{dwk}`.
    log_likelihood : float
        :math:`\\sum_{dw} X_{dw} \\log \\sum_k \\theta_{dk} \\beta_{kw}` of the
        incoming state.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> X = sp.csr_matrix(np.array([[3.0, 0.0, 1.0], [0.0, 2.0, 2.0]]))
    >>> D = np.array([[3.0, 1.0], [1.0, 3.0]])       # N_dk: rows sum to lengths
    >>> T = np.array([[3.0, 1.0, 0.0], [0.0, 1.0, 3.0]])  # N_kw: the same tokens
    >>> D, T, log_lik = cvb0_sweep(X, D, T, alpha=0.5, eta=0.1)
    >>> D.sum(axis=1), T.sum()                       # every token is shared out
    (array([4., 4.]), np.float64(8.0))
    """
    if (fast := twins(X, doc_counts.shape[1] * _TWIN_WORK_FACTOR)) is not None:
        return fast.cvb0_sweep(
            X,
            doc_counts,
            topic_counts,
            alpha,
            eta,
            exclude_words=exclude_words,
            n_inner=n_inner,
        )
    n, m = X.shape
    k = doc_counts.shape[1]
    dtype = doc_counts.dtype
    alpha = np.broadcast_to(np.asarray(alpha, dtype=dtype), (k,))
    eta = dtype.type(eta)
    v_eta = dtype.type(m * eta)
    totals = topic_counts.sum(axis=1, dtype=np.float64).astype(dtype)
    Tt = np.ascontiguousarray(topic_counts.T, dtype=dtype)
    new_doc = np.zeros((n, k), dtype=dtype)
    new_topic = np.zeros((m, k), dtype=dtype)
    rows = np.repeat(np.arange(n), np.diff(X.indptr))
    lengths = doc_counts.sum(axis=1, dtype=np.float64) + alpha.sum(dtype=np.float64)
    log_likelihood = 0.0
    for a in range(0, X.nnz, _CHUNK_ENTRIES):
        b = min(a + _CHUNK_ENTRIES, X.nnz)
        r, c = rows[a:b], X.indices[a:b]
        x = X.data[a:b].astype(dtype, copy=False)
        own = np.minimum(x, 1)[:, None]
        g, y = _entry_shares(
            np.take(doc_counts, r, axis=0, mode="clip"),
            np.take(Tt, c, axis=0, mode="clip"),
            totals, own, alpha, eta, v_eta, exclude_words,
            n_inner,
        )  # fmt: skip
        log_likelihood += float(
            x.astype(np.float64)
            @ np.log(np.maximum(y / lengths[r], np.finfo(dtype).tiny))
        )
        g *= x[:, None]
        # Entries are sorted by row: each row's entries are one segment.
        starts = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
        new_doc[r[starts]] += np.add.reduceat(g, starts, axis=0)
        for z in range(k):
            new_topic[:, z] += np.bincount(c, weights=g[:, z], minlength=m).astype(
                dtype, copy=False
            )
    return new_doc, np.ascontiguousarray(new_topic.T), log_likelihood


def map_sweep(X, doc_counts, topic_counts, alpha, eta, *, x_log_x=None):
    """One EM sweep of LDA's MAP estimate: CVB0's update without the exclusion.

    Every stored entry's topic shares are those of the incoming counts, the
    token's own included,

    .. math::

        g_{dwk} \\propto (N_{dk} + \\alpha_k)
        \\frac{N_{kw} + \\eta}{N_k + V \\eta},

    which is EM for the maximum a posteriori :math:`\\theta, \\beta` under
    Dirichlet priors :math:`\\alpha + 1` and :math:`\\eta + 1` (Asuncion et
    al., 2009, call it MAP and find it close to CVB0 once the priors are
    matched).  In NMF form, with :math:`\\Theta = N_{dk} + \\alpha` and
    :math:`B = (N_{kw} + \\eta) / (N_k + V\\eta)`, the sweep is two sparse
    products, as PLSI's EM step:

    .. math::

        R = X / (\\Theta B), \\qquad
        N'_{dk} = \\Theta \\odot (R B^T), \\qquad
        N'_{kw} = B \\odot (\\Theta^T R),

    with no ``(entries, k)`` temporary: O(nnz k) work in the sampled and
    sparse products (`em_doc_pass`, `transposed_product`), where
    `cvb0_sweep` makes several passes of ``(entries, k)`` temporaries.
    ``cvb0_sweep(..., n_inner=0)`` is the same update.

    Parameters
    ----------
    X : scipy.sparse CSR matrix of shape (n_samples, n_features)
        Counts.
    doc_counts : ndarray of shape (n_samples, k)
        :math:`N_{dk}`.  Not modified.
    topic_counts : ndarray of shape (k, n_features)
        :math:`N_{kw}`.  Not modified.
    alpha : float or ndarray of shape (k,)
    eta : float > 0
    x_log_x : float or None, default=None
        :math:`\\sum X_{dw} \\log X_{dw}` over the stored entries, if known
        (it does not change from sweep to sweep); computed when None.

    Returns
    -------
    doc_counts : ndarray of shape (n_samples, k)
    topic_counts : ndarray of shape (k, n_features)
        The documents' contribution :math:`\\sum_d X_{dw} g_{dwk}`.
    log_likelihood : float
        :math:`\\sum_{dw} X_{dw} \\log \\sum_k \\theta_{dk} \\beta_{kw}` of
        the incoming state's point estimates (as `cvb0_sweep`'s).

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> X = sp.csr_matrix(np.array([[3.0, 0.0, 1.0], [0.0, 2.0, 2.0]]))
    >>> D = np.array([[3.0, 1.0], [1.0, 3.0]])
    >>> T = np.array([[3.0, 1.0, 0.0], [0.0, 1.0, 3.0]])
    >>> D, T, log_lik = map_sweep(X, D, T, alpha=0.5, eta=0.1)
    >>> D.sum(axis=1), T.sum()                       # every token is shared out
    (array([4., 4.]), np.float64(8.0))
    """
    n, m = X.shape
    k = doc_counts.shape[1]
    dtype = doc_counts.dtype
    alpha = np.broadcast_to(np.asarray(alpha, dtype=dtype), (k,))
    theta = doc_counts + alpha
    totals = topic_counts.sum(axis=1, dtype=np.float64) + m * float(eta)
    B = np.add(topic_counts, dtype.type(eta), dtype=dtype)
    B /= totals.astype(dtype)[:, None]
    new_doc, R, (x_log_r, _) = em_doc_pass(X, theta, B)
    new_topic = B * transposed_product(theta, R)
    # sum x log(theta B / length) = sum x log x - sum x log r - sum_d n_d log length
    if x_log_x is None:
        x_log_x = ratio_log_sums(X, X)[0]
    n_d = np.asarray(X.sum(axis=1, dtype=np.float64)).ravel()
    lengths = doc_counts.sum(axis=1, dtype=np.float64) + float(alpha.sum())
    log_likelihood = x_log_x - float(x_log_r) - float(n_d @ np.log(lengths))
    return (
        new_doc.astype(dtype, copy=False),
        new_topic.astype(dtype, copy=False),
        (log_likelihood),
    )
