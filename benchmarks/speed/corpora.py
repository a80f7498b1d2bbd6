"""The benchmark corpora: generated LDA corpora and 20 Newsgroups counts."""

import os
import sys

import numpy as np
import scipy.sparse as sp

from sklearn_topicfac.datasets import load_mat_corpus

# The benchmarks' corpus registry lives one folder up.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from corpus_registry import lda_corpus as _lda_corpus  # noqa: E402

# (n_docs, n_terms) of the generated corpora; 20 topics, ~150 words/document.
SIZES = {"small": (10_000, 5_000), "large": (50_000, 20_000)}


def lda_corpus(n_docs, n_terms, n_topics=20, doc_length=150, seed=0):
    """Counts drawn from the LDA generative model (the one generator of the
    benchmarks, `corpus_registry.lda_corpus`), without their labels."""
    return _lda_corpus(n_docs, n_terms, n_topics, doc_length, seed)[0]


def generated(name):
    n_docs, n_terms = SIZES[name]
    return lda_corpus(n_docs, n_terms)


def newsgroups(data_dir):
    """20 Newsgroups document-term counts (18,846 x 26,214), or None if absent.

    Read with the package's loader; empty documents are dropped.
    """
    path = os.path.join(data_dir, "20newsgroups", "20Newsgroups.mat")
    if not os.path.exists(path):
        return None
    X = sp.csr_matrix(load_mat_corpus(path)[0], dtype=np.float64)
    X.sum_duplicates()
    X.eliminate_zeros()
    return X[np.diff(X.indptr) > 0]


def held_out_split(X, fraction=0.1, seed=0):
    """Random document split into (train, test); test keeps training terms only.

    Terms that never occur in the training documents are dropped from both
    parts: no model can give them probability.
    """
    rng = np.random.default_rng(seed)
    order = rng.permutation(X.shape[0])
    n_test = int(round(fraction * X.shape[0]))
    train, test = X[np.sort(order[n_test:])], X[np.sort(order[:n_test])]
    seen = np.flatnonzero(np.asarray(train.sum(axis=0)).ravel() > 0)
    train, test = train[:, seen].tocsr(), test[:, seen].tocsr()
    test = test[np.diff(test.indptr) >= 2]
    return train, test


def completion_split(X, seed=0):
    """Split every document's words in two halves (document completion).

    Each word occurrence goes to the observed or the held-out half with
    probability 1/2; a model folds a document in on its observed half and is
    scored on the other.  Returns (observed, held_out), both CSR with the
    rows that keep words on both sides.
    """
    rng = np.random.default_rng(seed)
    observed = X.copy()
    observed.data = rng.binomial(X.data.astype(np.int64), 0.5).astype(X.dtype)
    held = X.copy()
    held.data = X.data - observed.data
    observed.eliminate_zeros()
    held.eliminate_zeros()
    both = (np.diff(observed.indptr) > 0) & (np.diff(held.indptr) > 0)
    return observed[both], held[both]
