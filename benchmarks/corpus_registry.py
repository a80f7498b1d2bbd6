"""The benchmarks' one corpus registry: the nine shared labeled corpora and the
generated LDA corpus.

The shared corpora live in ``../shared/data`` next to the repository
(``$SHARED_DATA`` overrides the folder); each name loads a CSR float64 count
matrix and its labels, and k is the number of classes.  Defaults are chosen
on the TUNING corpora and confirmed on the VALIDATION ones (issue 26).

    >>> from corpus_registry import load
    >>> X, y, k = load("cstr")           # doctest: +SKIP
"""

import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from sklearn_topicfac.datasets import (
    load_labeled_text,
    load_mat_corpus,
    load_reuters21578,
)

DATA = Path(
    os.environ.get(
        "SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"
    )
)


def _cluto(name):
    """A CLUTO matrix of ``../shared/data/cluto`` (see its README): counts, labels."""
    z = np.load(DATA / "cluto" / f"{name}.npz")
    shape = tuple(int(s) for s in z["shape"])
    X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=shape)
    return X, z["y"]


SHARED = {
    "classic3": lambda: load_mat_corpus(DATA / "classic3" / "classic3.mat")[:2],
    "cstr": lambda: load_mat_corpus(DATA / "cstr" / "cstr.mat")[:2],
    "webace": lambda: load_mat_corpus(DATA / "webace" / "WebACE.mat")[:2],
    "webkb4": lambda: load_labeled_text(
        [DATA / "webkb4" / f"webkb-{part}-stemmed.txt" for part in ("train", "test")],
        drop_empty=True,
    )[:2],
    "reuters10": lambda: load_reuters21578(DATA / "reuters21578")[:2],
    "20news": lambda: load_mat_corpus(DATA / "20newsgroups" / "20Newsgroups.mat")[:2],
    "re0": lambda: _cluto("re0"),
    "tr11": lambda: _cluto("tr11"),
    "tr41": lambda: _cluto("tr41"),
}
TUNING = ("classic3", "cstr", "webkb4", "reuters10", "re0")
VALIDATION = ("webace", "20news", "tr11", "tr41")
NINE = TUNING + VALIDATION


def lda_corpus(n_docs, n_terms, n_topics=20, doc_length=150, seed=0):
    """Counts drawn from the LDA generative model, as a float64 CSR matrix.

    ``theta_d ~ Dir(0.1)``, ``beta_k ~ Dir(0.05)``, document lengths
    ``~ Poisson(doc_length)``; every word draws a topic from ``theta_d`` and a
    term from that topic.  Deterministic for a given seed.
    """
    rng = np.random.default_rng(seed)
    theta = rng.dirichlet(np.full(n_topics, 0.1), size=n_docs)
    beta = rng.dirichlet(np.full(n_terms, 0.05), size=n_topics)
    docs = np.repeat(np.arange(n_docs), rng.poisson(doc_length, size=n_docs))
    cum_theta = np.cumsum(theta, axis=1)
    cum_theta[:, -1] = 1.0
    topics = np.empty(docs.size, dtype=np.int64)
    step = 1 << 20
    for a in range(0, docs.size, step):
        d = docs[a : a + step]
        topics[a : a + step] = (rng.random(d.size)[:, None] > cum_theta[d]).sum(1)
    words = np.empty(docs.size, dtype=np.int64)
    cum_beta = np.cumsum(beta, axis=1)
    cum_beta[:, -1] = 1.0
    for t in range(n_topics):
        where = np.flatnonzero(topics == t)
        draws = np.searchsorted(cum_beta[t], rng.random(where.size), side="right")
        words[where] = np.minimum(draws, n_terms - 1)
    X = sp.csr_matrix(
        (np.ones(docs.size), (docs, words)), shape=(n_docs, n_terms), dtype=np.float64
    )
    X.sum_duplicates()
    return X, theta.argmax(axis=1)


# The generated corpus of the speed tables: 10,000 documents, 5,000 terms,
# 20 topics, ~150 words each; its "labels" are each document's largest topic.
GENERATED = {"generated": lambda: lda_corpus(10_000, 5_000)}


def names():
    """Every corpus the registry knows, shared first."""
    return (*NINE, *GENERATED)


def load(name):
    """``(X, y, k)``: CSR float64 counts without empty documents, labels, and
    k = the number of classes (20 for the generated corpus)."""
    if name in SHARED:
        X, y = SHARED[name]()
    elif name in GENERATED:
        X, y = GENERATED[name]()
    else:
        raise ValueError(f"unknown corpus {name!r}; known: {', '.join(names())}")
    X = sp.csr_matrix(X, dtype=np.float64)
    y = np.asarray(y)
    keep = np.diff(X.indptr) > 0
    if not keep.all():
        X, y = X[keep], y[keep]
    k = 20 if name in GENERATED else len(np.unique(y))
    return X, y, k


def available():
    """The shared corpora whose files are here (the generated one always is)."""
    return [n for n in NINE if DATA.exists()] + list(GENERATED)
