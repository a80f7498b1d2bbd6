"""The twin of `kernels/collapsed.py`: one sweep of LDA's zero-order
collapsed variational updates (CVB0, `cvb0_sweep`).

Why a twin: the NumPy kernel works on chunks of ``(entries, k)`` arrays and
adds the topics' counts up with one ``bincount`` per topic; here one
compiled loop per range of documents (or of terms, `_CVB0_CACHED_VALUES`)
solves each entry's fixed point and adds its counts as it goes, the sums
in float64.
"""

import numba as nb
import numpy as np

from ._common import _JIT, _on_parts, _sum_bounds


@nb.njit(inline="always", **_JIT)
def _cvb0_substitute(
    g, new, doc, term, word, totals, alpha, eta, v_eta, own, exclude_words,
    n_inner,
):  # fmt: skip
    # The ``n_inner`` damped substitutions of one entry's own fixed point,
    # shared by `_cvb0_rows` and `_cvb0_columns`: ``g`` (the entry's topic
    # shares) is updated in place; ``doc`` and ``term`` are the counts of
    # the entry's document and term, ``own`` its own tokens (at most one).
    k = g.shape[0]
    for _ in range(n_inner):
        if exclude_words:
            for z in range(k):
                e = own * g[z]
                new[z] = (
                    (max(doc[z] - e, 0.0) + alpha[z])
                    * (max(term[z] - e, 0.0) + eta)
                    / (max(totals[z] - e, 0.0) + v_eta)
                )
        else:
            for z in range(k):
                new[z] = (max(doc[z] - own * g[z], 0.0) + alpha[z]) * word[z]
        s = 0.0
        for z in range(k):
            s += new[z]
        r = 0.5 / s
        for z in range(k):
            g[z] = 0.5 * g[z] + new[z] * r


@nb.njit(**_JIT)
def _cvb0_rows(
    indptr, indices, data, D, Tt, totals, alpha, eta, v_eta, exclude_words,
    n_inner, lengths, new_doc, new_topic, log_lik, part, r0, r1,
):  # fmt: skip
    # Each loop over the topics is a plain loop of one expression (no branch
    # inside), so that LLVM vectorizes it, divisions included; the shares'
    # normalization multiplies by the reciprocal of their sum.
    k = D.shape[1]
    tiny = np.finfo(np.float64).tiny
    inv_totals = np.empty(k, dtype=np.float64)
    for z in range(k):
        inv_totals[z] = 1.0 / (totals[z] + v_eta)
    g = np.empty(k, dtype=np.float64)
    word = np.empty(k, dtype=np.float64)
    doc = np.empty(k, dtype=np.float64)
    new = np.empty(k, dtype=np.float64)
    acc = np.empty(k, dtype=np.float64)
    ll = 0.0
    for i in range(r0, r1):
        acc[:] = 0.0
        for z in range(k):
            doc[z] = D[i, z] + alpha[z]
        for j in range(indptr[i], indptr[i + 1]):
            c = indices[j]
            x = np.float64(data[j])
            own = min(x, 1.0)
            s = 0.0
            for z in range(k):
                word[z] = (Tt[c, z] + eta) * inv_totals[z]
                g[z] = doc[z] * word[z]
                s += g[z]
            ll += x * np.log(max(s / lengths[i], tiny))
            r = 1.0 / s
            for z in range(k):
                g[z] *= r
            _cvb0_substitute(
                g, new, D[i], Tt[c], word, totals, alpha, eta, v_eta, own,
                exclude_words, n_inner,
            )  # fmt: skip
            for z in range(k):
                acc[z] += x * g[z]
                new_topic[part, c, z] += x * g[z]
        for z in range(k):
            new_doc[i, z] = acc[z]
    log_lik[part] = ll


# Counts (float64 values) that a core's cache holds: above this many topic
# counts, a sweep by documents waits on memory at every entry.
_CVB0_CACHED_VALUES = 1 << 17


@nb.njit(**_JIT)
def _cvb0_columns(
    indptr, indices, data, D, T, totals, alpha, eta, v_eta, exclude_words,
    n_inner, lengths, new_doc, new_topic, log_lik, part, c0, c1,
):  # fmt: skip
    # `_cvb0_rows` by columns (CSC): a term's counts are read and written
    # once, in term order (``T`` and ``new_topic`` are (k, n_features): k
    # streams), the documents' counts at random (see `cvb0_sweep`).
    k = D.shape[1]
    tiny = np.finfo(np.float64).tiny
    inv_totals = np.empty(k, dtype=np.float64)
    for z in range(k):
        inv_totals[z] = 1.0 / (totals[z] + v_eta)
    g = np.empty(k, dtype=np.float64)
    term = np.empty(k, dtype=np.float64)
    word = np.empty(k, dtype=np.float64)
    new = np.empty(k, dtype=np.float64)
    acc = np.empty(k, dtype=np.float64)
    ll = 0.0
    for c in range(c0, c1):
        for z in range(k):
            term[z] = T[z, c]
            word[z] = (term[z] + eta) * inv_totals[z]
            acc[z] = 0.0
        for j in range(indptr[c], indptr[c + 1]):
            i = indices[j]
            x = np.float64(data[j])
            own = min(x, 1.0)
            s = 0.0
            for z in range(k):
                g[z] = (D[i, z] + alpha[z]) * word[z]
                s += g[z]
            ll += x * np.log(max(s / lengths[i], tiny))
            r = 1.0 / s
            for z in range(k):
                g[z] *= r
            _cvb0_substitute(
                g, new, D[i], term, word, totals, alpha, eta, v_eta, own,
                exclude_words, n_inner,
            )  # fmt: skip
            for z in range(k):
                acc[z] += x * g[z]
                new_doc[part, i, z] += x * g[z]
        for z in range(k):
            new_topic[z, c] = acc[z]
    log_lik[part] = ll


def cvb0_sweep(
    X, doc_counts, topic_counts, alpha, eta, *, exclude_words=True, n_inner=2
):
    """One batch CVB0 sweep, one compiled loop per range of documents or of
    terms: the twin of `sklearn_topicfac.kernels.cvb0_sweep` (its sums in
    float64).

    One side is walked in order and the other one's counts are read and
    summed at random, into one array per range of the fixed sum split
    (`_sum_bounds`): by documents (CSR), unless
    the topics' counts outgrow `_CVB0_CACHED_VALUES` and there are more terms
    than documents; then by terms (CSC), so that the random accesses stay
    in the smaller ``(n_samples, k)`` arrays (a vocabulary of tens of
    thousands of terms: half the time per sweep on Reuters-10)."""
    n, m = X.shape
    k = doc_counts.shape[1]
    dtype = doc_counts.dtype
    alpha = np.broadcast_to(np.asarray(alpha, dtype=np.float64), (k,)).copy()
    D = np.ascontiguousarray(doc_counts)
    totals = topic_counts.sum(axis=1, dtype=np.float64)
    lengths = D.sum(axis=1, dtype=np.float64) + alpha.sum()
    if m > n and m * k > _CVB0_CACHED_VALUES:
        Xc = X.tocsc()
        T = np.ascontiguousarray(topic_counts, dtype=np.float64)
        bounds = _sum_bounds(Xc.indptr)
        parts = max(bounds.shape[0] - 1, 1)
        new_doc = np.zeros((parts, n, k), dtype=np.float64)
        topics = np.zeros((k, m), dtype=np.float64)
        log_lik = np.zeros(parts)
        if X.nnz:
            _on_parts(
                _cvb0_columns, bounds, X.nnz * k * (1 + n_inner),
                Xc.indptr, Xc.indices, Xc.data, D, T, totals, alpha, float(eta),
                float(m * eta), bool(exclude_words), int(n_inner), lengths,
                new_doc, topics, log_lik, indexed=True,
            )  # fmt: skip
        docs = new_doc.sum(axis=0).astype(dtype)
        return docs, topics.astype(dtype, copy=False), float(log_lik.sum())
    Tt = np.ascontiguousarray(topic_counts.T, dtype=np.float64)
    args = (D, Tt, totals, alpha, float(eta), float(m * eta), bool(exclude_words))
    bounds = _sum_bounds(X.indptr)
    parts = bounds.shape[0] - 1
    new_doc = np.zeros((n, k), dtype=dtype)
    new_topic = np.zeros((max(parts, 1), m, k), dtype=np.float64)
    log_lik = np.zeros(max(parts, 1))
    if n:
        _on_parts(
            _cvb0_rows, bounds, X.nnz * k * (1 + n_inner),
            X.indptr, X.indices, X.data, *args, int(n_inner), lengths, new_doc,
            new_topic, log_lik, indexed=True,
        )  # fmt: skip
    topics = new_topic.sum(axis=0).T.astype(dtype)
    return new_doc, np.ascontiguousarray(topics), float(log_lik.sum())
