"""Tests for the corpus loaders: the bundled Classic3 and the readers of files."""

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.feature_extraction.text import CountVectorizer

from sklearn_topicfac.datasets import (
    load_classic3,
    load_labeled_text,
    load_mat_corpus,
    load_reuters21578,
)

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


# ------------------------------------------------ corpora read from a path
# Small fixture files written by the tests, in the formats of the shared data.
COUNTS = np.array(
    [
        [2, 0, 1, 0, 3],
        [1, 1, 0, 0, 1],
        [0, 3, 1, 2, 0],
        [0, 1, 0, 1, 0],
        [4, 0, 0, 0, 1],
        [0, 0, 2, 1, 0],
    ]
)
GND = np.array([[1], [1], [2], [2], [1], [3]], dtype=np.uint8)


def _tfidf(counts, n_documents):
    df = (counts > 0).sum(axis=0)
    return counts * np.log(n_documents / df)


def test_mat_tfidf_converted_back_to_counts(tmp_path):
    # WebACE-style: weights with n = number of rows.
    path = tmp_path / "webace.mat"
    scipy.io.savemat(path, {"fea": _tfidf(COUNTS, 6), "gnd": GND})
    X, y, vocabulary, class_names = load_mat_corpus(path)
    assert sp.isspmatrix_csr(X) and X.dtype == np.float64
    assert_array_equal(X.toarray(), COUNTS)
    assert_array_equal(y, [0, 0, 1, 1, 0, 2])
    assert y.dtype == np.int64
    assert vocabulary is None and class_names is None


def test_mat_tfidf_with_more_documents_than_rows(tmp_path):
    # CSTR-style: the weights used n = 7 but one document was dropped after.
    path = tmp_path / "cstr.mat"
    scipy.io.savemat(path, {"fea": _tfidf(COUNTS, 7), "gnd": GND})
    X, *_ = load_mat_corpus(path)
    assert_array_equal(X.toarray(), COUNTS)
    X, *_ = load_mat_corpus(path, idf_n_documents=7)
    assert_array_equal(X.toarray(), COUNTS)
    # The wrong n does not give integers: refused, not silently rounded.
    with pytest.raises(ValueError, match="not count \\* log\\(6 / df\\)"):
        load_mat_corpus(path, idf_n_documents=6)
    with pytest.raises(ValueError, match="smaller than the 6 documents"):
        load_mat_corpus(path, idf_n_documents=5)
    # None keeps the stored weights.
    W, *_ = load_mat_corpus(path, idf_n_documents=None)
    assert_allclose(W.toarray(), _tfidf(COUNTS, 7))


def test_mat_sparse_counts_with_extra_variables(tmp_path):
    # 20 Newsgroups / Reuters style: CSC counts plus train/test indices.
    path = tmp_path / "news.mat"
    scipy.io.savemat(
        path,
        {
            "fea": sp.csc_matrix(COUNTS.astype(float)),
            "gnd": GND,
            "trainIdx": np.array([[1], [2], [3]], dtype=np.uint16),
        },
    )
    X, y, vocabulary, _ = load_mat_corpus(path)
    assert_array_equal(X.toarray(), COUNTS)
    assert X.has_canonical_format
    assert_array_equal(np.bincount(y), [3, 2, 1])
    assert vocabulary is None


def test_mat_classic3_layout_with_vocabulary(tmp_path):
    path = tmp_path / "classic3.mat"
    terms = np.empty((5, 1), dtype=object)
    for j, term in enumerate(["patient", "library", "wing", "flow", ""]):
        terms[j, 0] = term
    scipy.io.savemat(
        path,
        {"A": sp.csc_matrix(COUNTS.astype(float)), "labels": GND - 1, "ms": terms},
    )
    X, y, vocabulary, class_names = load_mat_corpus(path)
    assert_array_equal(X.toarray(), COUNTS)
    assert_array_equal(y, [0, 0, 1, 1, 0, 2])
    assert vocabulary.tolist() == ["patient", "library", "wing", "flow", ""]
    assert class_names is None


def test_mat_errors(tmp_path):
    path = tmp_path / "bad.mat"
    scipy.io.savemat(path, {"data": COUNTS, "gnd": GND})
    with pytest.raises(ValueError, match="no document-term matrix.*found \\['data'"):
        load_mat_corpus(path)
    scipy.io.savemat(path, {"fea": COUNTS})
    with pytest.raises(ValueError, match="no labels"):
        load_mat_corpus(path)
    scipy.io.savemat(path, {"fea": COUNTS, "gnd": GND[:4]})
    with pytest.raises(ValueError, match="6 documents but 4 labels"):
        load_mat_corpus(path)
    scipy.io.savemat(path, {"fea": COUNTS + 0.3, "gnd": GND})
    with pytest.raises(ValueError, match="not count"):
        load_mat_corpus(path)


@pytest.mark.parametrize("value", [np.inf, -np.inf, np.nan])
@pytest.mark.parametrize("layout", ["dense", "sparse"])
@pytest.mark.parametrize("idf_n_documents", ["auto", None])
def test_mat_infinite_or_nan_values_are_refused(
    tmp_path, value, layout, idf_n_documents
):
    # Before: an OverflowError (inf), "cannot convert float NaN to integer"
    # (NaN) or, with idf_n_documents=None, the values returned as they were.
    fea = _tfidf(COUNTS, 6)
    fea[2, 3] = value
    path = tmp_path / "bad.mat"
    stored = fea if layout == "dense" else sp.csc_matrix(fea)
    scipy.io.savemat(path, {"fea": stored, "gnd": GND})
    with pytest.raises(
        ValueError,
        match=r"holds 1 infinite or NaN value\(s\) in its matrix 'fea' \(the first, "
        r"-?(inf|nan), at document 3, term 4\); expected finite .* replace them",
    ):
        load_mat_corpus(path, idf_n_documents=idf_n_documents)


@pytest.mark.parametrize("layout", ["dense", "sparse"])
def test_mat_complex_values_are_refused_not_cut_to_their_real_part(tmp_path, layout):
    # Before: loaded as COUNTS, the imaginary parts dropped without a word.
    fea = COUNTS.astype(complex)
    fea[1, 4] += 2j
    fea[3, 1] += 1j
    path = tmp_path / "complex.mat"
    stored = fea if layout == "dense" else sp.csc_matrix(fea)
    scipy.io.savemat(path, {"fea": stored, "gnd": GND})
    with pytest.raises(
        ValueError,
        match=r"holds 2 complex value\(s\) in its matrix 'fea' \(the first, "
        r"\(1\+2j\), at document 2, term 5\); expected real .* \(real\(fea\)",
    ):
        load_mat_corpus(path)
    # Complex storage of real numbers loses nothing: read as they are.
    scipy.io.savemat(path, {"fea": COUNTS.astype(complex), "gnd": GND})
    X, *_ = load_mat_corpus(path)
    assert X.dtype == np.float64
    assert_array_equal(X.toarray(), COUNTS)


def test_mat_matrix_that_is_not_numbers_is_refused(tmp_path):
    path = tmp_path / "text.mat"
    scipy.io.savemat(path, {"fea": np.array(["ab", "cd"]), "gnd": GND[:2]})
    with pytest.raises(ValueError, match="holds text in its variable 'fea'"):
        load_mat_corpus(path)
    scipy.io.savemat(path, {"fea": np.ones((6, 2, 2)), "gnd": GND})
    with pytest.raises(ValueError, match="an array of 3 dimensions"):
        load_mat_corpus(path)


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_labeled_text_webkb_format(tmp_path):
    train = _write(
        tmp_path / "train.txt",
        "student\tbrian comput scienc comput\ncourse\tlectur homework\n",
    )
    test = _write(tmp_path / "test.txt", "faculty\tprofessor comput\nstudent\t")
    X, y, vocabulary, class_names = load_labeled_text([train, test])
    assert class_names.tolist() == ["course", "faculty", "student"]
    assert y.tolist() == [2, 0, 1, 2]
    assert vocabulary.tolist() == [
        "brian",
        "comput",
        "homework",
        "lectur",
        "professor",
        "scienc",
    ]
    assert X.shape == (4, 6) and sp.isspmatrix_csr(X)
    assert X[0, 1] == 2 and X[3].nnz == 0
    # Dropping the empty document.
    X, y, _, _ = load_labeled_text([str(train), str(test)], drop_empty=True)
    assert X.shape[0] == 3 and y.tolist() == [2, 0, 1]
    # A single path; a custom vectorizer.
    X, _, vocabulary, _ = load_labeled_text(
        train, vectorizer=CountVectorizer(token_pattern=r"\S+", binary=True)
    )
    assert X.shape == (2, 5)
    assert X[0, vocabulary.tolist().index("comput")] == 1


def test_labeled_text_errors(tmp_path):
    bad = _write(tmp_path / "bad.txt", "student\tok\nno tab on this line\n")
    with pytest.raises(ValueError, match="line 2: expected 'label<TAB>text'"):
        load_labeled_text(bad)
    empty = _write(tmp_path / "empty.txt", "\n\n")
    with pytest.raises(ValueError, match="No documents"):
        load_labeled_text(empty)


_RECORD = (
    '<REUTERS TOPICS="YES" NEWID="{id}">\n<TOPICS>{topics}</TOPICS>\n'
    "<TEXT>&#2;\n<TITLE>{title}</TITLE>\n<BODY>{body}\n&#3;</BODY></TEXT>\n"
    "</REUTERS>\n"
)


def _reuters(tmp_path):
    records = [
        ("<D>earn</D>", "PROFIT UP", "Net profit rose sharply"),
        ("<D>acq</D>", "MERGER", "Company agreed a merger &lt;ABC&gt;"),
        ("<D>earn</D><D>acq</D>", "TWO", "two topics are dropped"),
        ("", "NONE", "no topic is dropped"),
        ("<D>earn</D>", "", ""),  # empty text: dropped
        ("<D>crude</D>", "OIL", "Crude oil prices fell in M\xfcnchen"),
        ("<D>earn</D>", "LOSS", "Net loss widened"),
        ("<D>acq</D>", "STAKE", "Company bought stake"),
    ]
    sgml = [
        "".join(
            _RECORD.format(id=i, topics=t, title=ti, body=b)
            for i, (t, ti, b) in enumerate(records[:4])
        ),
        "".join(
            _RECORD.format(id=i + 4, topics=t, title=ti, body=b)
            for i, (t, ti, b) in enumerate(records[4:])
        ),
    ]
    for i, text in enumerate(sgml):
        (tmp_path / f"reut2-00{i}.sgm").write_bytes(text.encode("latin-1"))
    (tmp_path / "README.txt").write_text("not a record file")
    return tmp_path


def test_reuters_single_label_top_classes(tmp_path):
    folder = _reuters(tmp_path)
    X, y, vocabulary, class_names = load_reuters21578(folder, n_classes=2)
    # earn (2 single-label docs with text) and acq (2); crude (1) is cut.
    assert class_names.tolist() == ["acq", "earn"]  # tie broken by name
    assert y.tolist() == [1, 0, 1, 0]
    assert X.shape[0] == 4
    words = vocabulary.tolist()
    assert "profit" in words and "abc" in words  # entities decoded
    assert "net" in words and "two" not in words and "topic" not in words
    assert "the" not in words and "a" not in words
    X3, y3, _, names3 = load_reuters21578(str(folder), n_classes=3)
    assert names3.tolist() == ["acq", "earn", "crude"]
    assert X3.shape[0] == 5 and y3.tolist() == [1, 0, 2, 1, 0]
    assert any("nchen" in w for w in load_reuters21578(folder, n_classes=3)[2])


def test_reuters_errors(tmp_path):
    with pytest.raises(ValueError, match="No reut2-\\*.sgm file"):
        load_reuters21578(tmp_path)
    (tmp_path / "reut2-000.sgm").write_text("<REUTERS><TOPICS></TOPICS></REUTERS>")
    with pytest.raises(ValueError, match="No single-topic Reuters record"):
        load_reuters21578(tmp_path)
