"""The mathematics of split-merge moves that every model shares.

A move (`sklearn_topicfac.engine.moves`) merges the two topics that cost
least to merge and splits in two the topic furthest from one topic.  Both
choices are read off the topics' expected counts: `cheapest_merge` from the
topics' term counts, `split_gain` from one topic's document-term counts
(`compact_counts` of its entries).
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import randomized_svd

# A word's share of a topic below this is left out of the topic's own counts
# when looking for a split (noise there, and most entries).
SHARE_FLOOR = 1e-2


def cheapest_merge(counts):
    """The two topics that cost least to merge: ``(kept, merged)``.

    ``counts`` holds the topics' expected term counts (``k x m``).  The cost
    is :math:`\\min(n_i, n_j) (1 - \\mathrm{BC}(p_i, p_j))` with :math:`n`
    the topics' total counts and BC the Bhattacharyya coefficient of their
    normalized rows: near-duplicate topics, or an empty topic with any
    other.  The heavier topic is kept.
    """
    counts = np.asarray(counts, dtype=np.float64)
    mass = counts.sum(axis=1)
    root = np.sqrt(counts / np.where(mass > 0, mass, 1)[:, None])
    cost = np.minimum.outer(mass, mass) * np.maximum(1.0 - root @ root.T, 0.0)
    np.fill_diagonal(cost, np.inf)
    kept, merged = np.unravel_index(np.argmin(cost), cost.shape)
    if mass[kept] < mass[merged]:
        kept, merged = merged, kept
    return int(kept), int(merged)


def compact_counts(rows, columns, counts):
    """The entries as a CSR matrix without empty rows and columns.

    Returns the matrix and the columns of the original its columns are.
    """
    used_rows, r = _renumbered(rows)
    used_cols, c = _renumbered(columns)
    matrix = sp.csr_matrix((counts, (r, c)), shape=(used_rows.size, used_cols.size))
    return matrix, used_cols


def _renumbered(labels):
    """``np.unique(labels, return_inverse=True)`` for non-negative integers,
    by counting instead of sorting: O(entries + largest label) where
    sorting a topic's entries of a large corpus took most of a move."""
    labels = np.asarray(labels)
    if labels.size == 0:
        return labels[:0].astype(np.intp), np.zeros(0, dtype=np.intp)
    present = np.bincount(labels) > 0
    used = np.flatnonzero(present)
    position = np.cumsum(present) - 1
    return used, position[labels]


def split_gain(counts, random_state):
    """How far a topic's counts are from one topic: ``N s_2^2``.

    ``s_2`` is the second singular value of
    :math:`D_r^{-1/2} C D_c^{-1/2}` (the first is 1), with :math:`D_r, D_c`
    the row and column sums of the counts :math:`C`: ``N s_2^2`` is the part
    of the chi-square statistic of :math:`C` against independent documents
    and terms (one topic) along the first axis of correspondence analysis.
    A topic that merges two topics used by different documents has a large
    one; a topic that is one topic has only its noise.
    """
    if min(counts.shape) < 3:
        return 0.0
    r = np.asarray(counts.sum(axis=1)).ravel()
    c = np.asarray(counts.sum(axis=0)).ravel()
    scaled = sp.diags(1 / np.sqrt(r)) @ counts @ sp.diags(1 / np.sqrt(c))
    s = randomized_svd(scaled, 2, n_iter=4, random_state=random_state)[1]
    return float(r.sum() * s[1] ** 2)
