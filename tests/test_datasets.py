"""Tests for the bundled Classic3 corpus loader."""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_topicfac.datasets import load_classic3

N_DOCS, N_TERMS = 3891, 4303


@pytest.fixture(scope="module")
def corpus():
    return load_classic3()


def test_data_is_float_csr_of_expected_shape(corpus):
    X = corpus.data
    assert sp.issparse(X)
    assert X.format == "csr"
    assert X.shape == (N_DOCS, N_TERMS)
    assert X.dtype == np.float64


def test_counts_match_documented_totals(corpus):
    X = corpus.data
    # Figures stated in the README of the shared copy of classic3.mat.
    assert X.nnz == 176347
    assert X.sum() == 256348
    assert np.array_equal(X.data, np.round(X.data))
    assert X.data.min() >= 1
    assert X.data.max() == 25
    assert X.has_canonical_format


def test_no_empty_documents_or_terms(corpus):
    X = corpus.data
    assert np.all(np.diff(X.indptr) > 0)
    assert np.all(np.bincount(X.indices, minlength=N_TERMS) > 0)


def test_target(corpus):
    y = corpus.target
    assert y.shape == (N_DOCS,)
    assert y.dtype == np.int64
    assert np.bincount(y).tolist() == [1033, 1460, 1398]
    # Classes come in contiguous blocks MED, CISI, CRAN.
    assert np.all(np.diff(y) >= 0)


def test_target_names(corpus):
    assert corpus.target_names.tolist() == ["MED", "CISI", "CRAN"]


def test_feature_names(corpus):
    names = corpus.feature_names
    assert isinstance(names, np.ndarray)
    assert names.shape == (N_TERMS,)
    assert all(isinstance(name, str) for name in names)
    assert len(set(names)) == N_TERMS
    assert all(name and name == name.strip() for name in names)


def test_vocabulary_matches_class_content(corpus):
    # A mis-ordered vocabulary would still pass the structural checks above;
    # domain terms must be most frequent in their own collection.
    X, y, names = corpus.data, corpus.target, list(corpus.feature_names)
    class_counts = np.vstack(
        [np.asarray(X[y == c].sum(axis=0)).ravel() for c in range(3)]
    )
    for term, expected in [("patients", 0), ("library", 1), ("mach", 2)]:
        assert class_counts[:, names.index(term)].argmax() == expected


def test_descr_mentions_origin(corpus):
    assert isinstance(corpus.DESCR, str)
    assert "Classic3" in corpus.DESCR
    assert "franrole/cclust_package" in corpus.DESCR
    assert "BSD-3-Clause" in corpus.DESCR


def test_return_X_y(corpus):
    result = load_classic3(return_X_y=True)
    assert isinstance(result, tuple)
    X, y = result
    assert (X != corpus.data).nnz == 0
    assert np.array_equal(y, corpus.target)


def test_calls_return_independent_copies():
    first = load_classic3()
    first.data.data[:] = 0
    first.target[:] = 0
    second = load_classic3()
    assert second.data.sum() == 256348
    assert np.bincount(second.target).tolist() == [1033, 1460, 1398]


def test_keyword_only():
    with pytest.raises(TypeError):
        load_classic3(True)
