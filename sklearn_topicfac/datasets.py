"""Document-term corpora: the bundled demo and readers for standard files.

:func:`load_classic3` loads the Classic3 corpus bundled inside the package
(no path, no network access, no download cache) as a
:class:`sklearn.utils.Bunch` in the style of :mod:`sklearn.datasets`.

The other loaders read corpora from a path the user gives, in the formats the
document-clustering literature circulates them in, and all return the tuple
``(X, y, vocabulary, class_names)``: ``X`` a CSR matrix of float64 term
counts (documents x terms), ``y`` int64 class codes ``0 .. n_classes - 1``,
``vocabulary`` an object array of terms (or ``None`` when the file has none)
and ``class_names`` an array of class names (or ``None``).

- :func:`load_mat_corpus`: MATLAB ``.mat`` doc-term matrices (Classic3, CSTR,
  WebACE, 20 Newsgroups, Reuters-21578 in Deng Cai's version); tf-idf
  weighted files are converted back to counts.
- :func:`load_labeled_text`: one document per line, ``label<TAB>tokens``
  (Cardoso-Cachopo's WebKB, Reuters and 20 Newsgroups files).
- :func:`load_reuters21578`: the original Reuters-21578 SGML distribution,
  reduced to the single-label documents of its largest topics.
"""

import html
import re
from importlib import resources
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.utils import Bunch

__all__ = [
    "load_classic3",
    "load_labeled_text",
    "load_mat_corpus",
    "load_reuters21578",
]

_DATA_PACKAGE = "sklearn_topicfac"
_DATA_DIR = "data"

_CLASSIC3_TARGET_NAMES = ("MED", "CISI", "CRAN")


def _data_file(name):
    """Return a traversable for a bundled data file.

    Going through :mod:`importlib.resources` rather than ``__file__`` keeps the
    loaders working when the package is imported from a zip archive.
    """
    return resources.files(_DATA_PACKAGE) / _DATA_DIR / name


def _load_arrays(name):
    """Read every array of a bundled ``.npz`` file into memory."""
    with _data_file(name).open("rb") as fh, np.load(fh, allow_pickle=False) as npz:
        return {key: npz[key] for key in npz.files}


def load_classic3(*, return_X_y=False):
    """Load the Classic3 document-term count matrix (3 classes).

    Classic3 holds 3,891 abstracts from three information-retrieval test
    collections: MEDLINE (medicine), CISI (information science) and CRANFIELD
    (aeronautics). Each document is a row of term counts over a 4,303-term
    vocabulary. It is a standard benchmark for document clustering and topic
    models.

    =================   ==============
    Classes                          3
    Samples per class   1033/1460/1398
    Samples total                 3891
    Features                      4303
    Nonzero entries             176347
    Total tokens                256348
    Features type        integer count
    =================   ==============

    The data are bundled with the package; see ``DESCR`` for their origin and
    license.

    Parameters
    ----------
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch object.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object, with the following attributes.

        data : scipy.sparse.csr_matrix of shape (3891, 4303), dtype float64
            Term counts; rows are documents, columns are terms.
        target : ndarray of shape (3891,), dtype int64
            Class of each document: 0 = MED, 1 = CISI, 2 = CRAN. Documents
            come in contiguous blocks by class.
        feature_names : ndarray of shape (4303,), dtype object
            The vocabulary as Python strings; ``feature_names[j]`` is the term
            counted in column ``j``. Like the output of
            ``CountVectorizer.get_feature_names_out``.
        target_names : ndarray of shape (3,), dtype str
            ``["MED", "CISI", "CRAN"]``.
        DESCR : str
            Description of the corpus, its origin and license.

    (data, target) : tuple if ``return_X_y`` is True
        The sparse count matrix and the class array described above.

    Notes
    -----
    The class names are not stored in the original file; they are inferred
    from the standard sizes of the three collections.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac.datasets import load_classic3
    >>> corpus = load_classic3()
    >>> corpus.data.shape
    (3891, 4303)
    >>> corpus.target_names.tolist()
    ['MED', 'CISI', 'CRAN']
    >>> X, y = load_classic3(return_X_y=True)
    >>> np.bincount(y).tolist()
    [1033, 1460, 1398]
    """
    arrays = _load_arrays("classic3.npz")
    shape = tuple(int(n) for n in arrays["shape"])
    # The file stores narrow integer types to stay small; estimators expect
    # float counts and scipy's native index type.
    X = sp.csr_matrix(
        (
            arrays["data"].astype(np.float64),
            arrays["indices"].astype(np.int32),
            arrays["indptr"].astype(np.int32),
        ),
        shape=shape,
    )
    y = arrays["labels"].astype(np.int64)

    if return_X_y:
        return X, y

    descr = _data_file("README.md").read_text(encoding="utf-8")
    return Bunch(
        data=X,
        target=y,
        feature_names=np.asarray(arrays["vocabulary"].tolist(), dtype=object),
        target_names=np.asarray(_CLASSIC3_TARGET_NAMES),
        DESCR=descr,
    )


# --------------------------------------------------------- corpora from a path
# Variable names of the doc-term matrix, the labels and the vocabulary in the
# .mat files in circulation (Deng Cai's "fea"/"gnd", CoClust's "A"/"labels"/"ms").
_MAT_MATRIX_KEYS = ("fea", "A", "X")
_MAT_LABEL_KEYS = ("gnd", "labels", "y")
_MAT_VOCABULARY_KEYS = ("ms", "vocabulary", "terms")

# Relative deviation from an integer tolerated when undoing tf-idf weights:
# the files store count * log(n / df) in float64, so an exact inverse is
# integral to about 1e-12; anything far above that is not such a weighting.
_INTEGRALITY_TOL = 1e-6


def _encode_labels(labels):
    """Class codes 0..n_classes-1 (in sorted label order) and the sorted labels."""
    classes, y = np.unique(np.asarray(labels).ravel(), return_inverse=True)
    return y.astype(np.int64), classes


def _first_key(mat, keys, what, path):
    for key in keys:
        if key in mat:
            return mat[key]
    if what is None:
        return None
    found = sorted(k for k in mat if not k.startswith("__"))
    raise ValueError(
        f"{path} has no {what}: expected one of the variables {list(keys)}, "
        f"found {found}."
    )


def _tfidf_to_counts(X, n_documents, path):
    """Undo ``X_ij = count_ij * log(n_documents / df_j)`` on a CSR matrix.

    ``df_j`` is the number of stored non-zeros of column ``j``.  A term that
    occurred in every one of the ``n_documents`` documents has weight zero
    everywhere and cannot be recovered; it is simply absent.
    """
    df = np.bincount(X.indices, minlength=X.shape[1])
    if n_documents == "auto":
        # A term's smallest weight is log(n / df) * (its smallest count), and
        # most terms occur once in some document: the median over terms of
        # df * exp(smallest weight) is n.
        present = np.flatnonzero(df)
        smallest = np.full(X.shape[1], np.inf)
        np.minimum.at(smallest, X.indices, X.data)
        n_documents = int(np.round(np.median(df[present] * np.exp(smallest[present]))))
    if n_documents < X.shape[0]:
        raise ValueError(
            f"idf_n_documents={n_documents} is smaller than the {X.shape[0]} "
            f"documents of {path}."
        )
    idf = np.log(n_documents / np.maximum(df, 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        counts = X.data / idf[X.indices]
    rounded = np.round(counts)
    if not (
        np.all(np.isfinite(counts))
        and np.all(rounded >= 1)
        and np.all(np.abs(counts - rounded) <= _INTEGRALITY_TOL * rounded)
    ):
        raise ValueError(
            f"The weights of {path} are not count * log({n_documents} / df): "
            "dividing by that factor does not give positive integers. Pass "
            "idf_n_documents=None to keep the weights as stored, or the number "
            "of documents the weights were computed with."
        )
    return sp.csr_matrix((rounded, X.indices, X.indptr), shape=X.shape)


# What a .mat variable holds when it holds no numbers, by NumPy dtype kind.
_MAT_NOT_NUMBERS = {"U": "text", "S": "text", "O": "a cell array", "V": "a struct"}


def _position(X, index):
    """Document and term (from 1) of the ``index``-th stored value of CSR ``X``."""
    row = np.searchsorted(X.indptr, index, side="right") - 1
    return f"document {row + 1}, term {X.indices[index] + 1}"


def _real_matrix(X, name, path):
    """The stored matrix as float64 CSR, refusing what no real matrix is.

    A complex matrix with a non-zero imaginary part is refused: converting it
    would keep its real parts and drop the rest without a word.
    """
    if not (isinstance(X, np.ndarray) or sp.issparse(X)) or (
        X.dtype.kind not in "biufc"
    ):
        dtype = getattr(X, "dtype", None)
        kind = _MAT_NOT_NUMBERS.get(getattr(dtype, "kind", None), f"{dtype}")
        raise ValueError(
            f"{path} holds {kind} in its variable {name!r}, not numbers; "
            "expected a document-term matrix of counts or tf-idf weights."
        )
    if X.ndim != 2:
        raise ValueError(
            f"{path} holds an array of {X.ndim} dimensions in its variable "
            f"{name!r}; expected a document-term matrix (2 dimensions)."
        )
    X = sp.csr_matrix(X)
    if X.dtype.kind == "c":
        imaginary = np.flatnonzero(X.data.imag)
        if imaginary.size:
            first = imaginary[0]
            raise ValueError(
                f"{path} holds {imaginary.size} complex value(s) in its matrix "
                f"{name!r} (the first, {X.data[first]}, at {_position(X, first)}); "
                "expected real counts or tf-idf weights: save the real part "
                f"(real({name}) in MATLAB) if the imaginary parts mean nothing."
            )
        X = X.real
    return sp.csr_matrix(X, dtype=np.float64)


def _check_finite(X, name, path):
    """Refuse infinite and NaN values, which no count or weight is (and on
    which undoing tf-idf weights would fail with an OverflowError)."""
    bad = np.flatnonzero(~np.isfinite(X.data))
    if bad.size:
        first = bad[0]
        raise ValueError(
            f"{path} holds {bad.size} infinite or NaN value(s) in its matrix "
            f"{name!r} (the first, {X.data[first]}, at {_position(X, first)}); "
            "expected finite counts or tf-idf weights: replace them in the file "
            "(by the counts, or by 0)."
        )


def load_mat_corpus(path, *, idf_n_documents="auto"):
    """Load a document-term matrix and its labels from a MATLAB ``.mat`` file.

    Reads the files in circulation for the document-clustering benchmarks
    (with :func:`scipy.io.loadmat`): the matrix from the variable ``fea``
    (Deng Cai's files: 20 Newsgroups, Reuters-21578, CSTR, WebACE) or ``A``
    (CoClust's Classic3), the labels from ``gnd`` or ``labels``, and the
    vocabulary from the cell array ``ms`` when there is one.

    Some files (CSTR, WebACE) store tf-idf weights instead of counts,

    .. math::

        F_{dw} = c_{dw} \\log \\frac{n}{\\mathrm{df}_w},

    with :math:`\\mathrm{df}_w` the number of documents containing ``w``.  With
    ``idf_n_documents="auto"`` a matrix that is not integral is converted back
    to the counts :math:`c_{dw}`: ``n`` is read off the data (each term's
    smallest weight is :math:`\\log(n / \\mathrm{df}_w)` when it occurs once in
    some document) and the result is checked to be integral.  ``n`` is not
    always the number of rows: the CSTR file's weights use ``n = 476``
    although it holds 475 documents.

    Parameters
    ----------
    path : str or path-like
        The ``.mat`` file.
    idf_n_documents : "auto", int or None, default="auto"
        How to read a non-integral matrix: ``"auto"`` infers the ``n`` of the
        tf-idf weighting, an int gives it, and ``None`` returns the stored
        values unchanged.  An integral matrix is always returned as is.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_documents, n_terms), dtype float64
        Term counts (or the stored weights with ``idf_n_documents=None``).
    y : ndarray of shape (n_documents,), dtype int64
        Class codes ``0 .. n_classes - 1``, in the order of the stored labels
        (so stored labels ``1 .. K`` become ``0 .. K - 1``).
    vocabulary : ndarray of shape (n_terms,), dtype object, or None
        The terms, when the file has a vocabulary.
    class_names : None
        The ``.mat`` files hold no class names.

    Raises
    ------
    ValueError
        If the file lacks a matrix or labels, their sizes disagree, the
        matrix holds anything but finite non-negative real numbers (an
        infinity, a NaN, a complex value with a non-zero imaginary part),
        or the weights cannot be converted back to integer counts.

    Examples
    --------
    A file in Deng Cai's layout, with tf-idf weights over 5 documents:

    >>> import os, tempfile
    >>> import numpy as np
    >>> import scipy.io
    >>> from sklearn_topicfac.datasets import load_mat_corpus
    >>> counts = np.array([[2, 0, 1], [1, 1, 0], [0, 3, 1], [0, 1, 0], [0, 0, 0]])
    >>> df = (counts > 0).sum(axis=0)
    >>> path = os.path.join(tempfile.mkdtemp(), "corpus.mat")
    >>> scipy.io.savemat(path, {"fea": counts * np.log(5 / df),
    ...                         "gnd": np.array([[1], [1], [2], [2], [2]])})
    >>> X, y, vocabulary, class_names = load_mat_corpus(path)
    >>> X.toarray().astype(int).tolist() == counts.tolist()
    True
    >>> y.tolist(), vocabulary, class_names
    ([0, 0, 1, 1, 1], None, None)
    """
    mat = scipy.io.loadmat(path)
    X = _first_key(mat, _MAT_MATRIX_KEYS, "document-term matrix", path)
    labels = _first_key(mat, _MAT_LABEL_KEYS, "labels", path)
    cell = _first_key(mat, _MAT_VOCABULARY_KEYS, None, path)
    name = next(key for key in _MAT_MATRIX_KEYS if key in mat)
    X = _real_matrix(X, name, path)
    X.sum_duplicates()
    X.eliminate_zeros()
    _check_finite(X, name, path)
    y, _ = _encode_labels(labels)
    if y.shape[0] != X.shape[0]:
        raise ValueError(
            f"{path} holds {X.shape[0]} documents but {y.shape[0]} labels."
        )
    if X.nnz and np.any(X.data < 0):
        raise ValueError(f"{path} holds negative values; expected counts or tf-idf.")
    if idf_n_documents is not None and not np.array_equal(X.data, np.round(X.data)):
        X = _tfidf_to_counts(X, idf_n_documents, path)
    vocabulary = None
    if cell is not None:
        vocabulary = np.asarray(
            [str(item[0]) if item.size else "" for item in cell.ravel()],
            dtype=object,
        )
        if vocabulary.shape[0] != X.shape[1]:
            raise ValueError(
                f"{path} holds {X.shape[1]} terms but a vocabulary of "
                f"{vocabulary.shape[0]}."
            )
    return X, y, vocabulary, None


def _vectorize(docs, vectorizer, default):
    vectorizer = default if vectorizer is None else vectorizer
    X = sp.csr_matrix(vectorizer.fit_transform(docs), dtype=np.float64)
    vocabulary = np.asarray(vectorizer.get_feature_names_out(), dtype=object)
    return X, vocabulary


def _labeled_lines(text, path):
    """The labels and texts of the ``label<TAB>text`` lines of ``text``.

    Blank lines are skipped; labels are stripped of surrounding spaces.
    ``path`` names the file in the error of a line without a tab.
    """
    labels, docs = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        label, tab, tokens = line.partition("\t")
        if not tab:
            raise ValueError(
                f"{path}, line {number}: expected 'label<TAB>text', found no tab."
            )
        labels.append(label.strip())
        docs.append(tokens)
    return labels, docs


def load_labeled_text(paths, *, drop_empty=False, vectorizer=None):
    """Load a corpus stored as one ``label<TAB>text`` line per document.

    The format of Ana Cardoso-Cachopo's single-label text-categorization
    files (WebKB4, Reuters R8/R52, 20 Newsgroups), whose text is already
    lower-cased, stop-worded and stemmed.  Several files (e.g. the train and
    test splits) are concatenated in the order given.

    Parameters
    ----------
    paths : str, path-like, or sequence of them
        The file(s), read as UTF-8.
    drop_empty : bool, default=False
        Drop documents without any token (WebKB4 has 31; keeping them gives
        the usual 4,199 documents, with empty rows in ``X``).
    vectorizer : CountVectorizer or None, default=None
        How to count tokens.  The default,
        ``CountVectorizer(token_pattern=r"\\S+", lowercase=False)``, counts
        every whitespace-separated token as it stands, since the files are
        preprocessed already.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_documents, n_terms), dtype float64
        Term counts.
    y : ndarray of shape (n_documents,), dtype int64
        Class codes, indexing ``class_names``.
    vocabulary : ndarray of shape (n_terms,), dtype object
        The terms, in column order.
    class_names : ndarray of shape (n_classes,), dtype object
        The labels, sorted.

    Raises
    ------
    ValueError
        If a non-empty line has no tab, or the files hold no document.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_topicfac.datasets import load_labeled_text
    >>> path = os.path.join(tempfile.mkdtemp(), "train.txt")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write("course\\tlectur homework homework\\n"
    ...                  "student\\tthesi advisor\\n"
    ...                  "course\\t")
    >>> X, y, vocabulary, class_names = load_labeled_text(path)
    >>> X.toarray().tolist()
    [[0.0, 2.0, 1.0, 0.0], [1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0]]
    >>> vocabulary.tolist(), y.tolist(), class_names.tolist()
    (['advisor', 'homework', 'lectur', 'thesi'], [0, 1, 0], ['course', 'student'])
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    labels, docs = [], []
    for path in paths:
        text = Path(path).read_text(encoding="utf-8")
        for label, tokens in zip(*_labeled_lines(text, path), strict=True):
            if drop_empty and not tokens.strip():
                continue
            labels.append(label)
            docs.append(tokens)
    if not docs:
        raise ValueError(f"No documents found in {list(map(str, paths))}.")
    X, vocabulary = _vectorize(
        docs, vectorizer, CountVectorizer(token_pattern=r"\S+", lowercase=False)
    )
    y, class_names = _encode_labels(np.asarray(labels, dtype=object))
    return X, y, vocabulary, class_names


_REUTERS_RECORD = re.compile(r"<REUTERS\b[^>]*>(.*?)</REUTERS>", re.S)
_REUTERS_TOPIC = re.compile(r"<D>(.*?)</D>", re.S)


def _sgml_field(record, tag):
    match = re.search(rf"<{tag}\b[^>]*>(.*?)</{tag}>", record, re.S)
    return match.group(1) if match else ""


def load_reuters21578(path, *, n_classes=10, vectorizer=None):
    """Load the single-label documents of the largest Reuters-21578 topics.

    Reads the original SGML distribution (``reut2-000.sgm`` ..
    ``reut2-021.sgm``, as latin-1: one file holds a non-ASCII byte) with
    regular expressions.  A document is kept when its ``<TOPICS>`` holds
    exactly one topic, that topic is one of the ``n_classes`` most frequent
    among such single-topic documents, and its ``<TITLE>`` plus ``<BODY>``
    is not empty.  With the defaults this gives 8,202 documents (earn 3,922,
    acq 2,359, crude 404, trade 359, money-fx 305, interest 284, ship 157,
    money-supply 153, sugar 143, coffee 116).  SGML character references
    (``&lt;``, ``&#3;`` ...) are decoded before counting.

    Parameters
    ----------
    path : str or path-like
        Directory holding the ``reut2-*.sgm`` files.
    n_classes : int, default=10
        Number of largest topics to keep.
    vectorizer : CountVectorizer or None, default=None
        How to count the words of title and body.  The default is
        ``CountVectorizer(lowercase=True, stop_words="english",
        token_pattern=r"(?u)\\b[^\\W\\d_]{3,}\\b")``: lower-cased words of at
        least three letters (no digits, which abound in the earnings
        reports), scikit-learn's English stop list removed, no stemming.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_documents, n_terms), dtype float64
        Term counts, documents in file order.
    y : ndarray of shape (n_documents,), dtype int64
        Class codes, indexing ``class_names``.
    vocabulary : ndarray of shape (n_terms,), dtype object
        The terms, in column order.
    class_names : ndarray of shape (n_classes,), dtype object
        The topics, from the most to the least frequent.

    Raises
    ------
    ValueError
        If the directory holds no ``reut2-*.sgm`` file or no record.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_topicfac.datasets import load_reuters21578
    >>> record = ('<REUTERS NEWID="{0}"><TOPICS>{1}</TOPICS><TEXT>'
    ...           '<TITLE>{2}</TITLE><BODY>{3} &#3;</BODY></TEXT></REUTERS>')
    >>> sgml = "".join([
    ...     record.format(1, "<D>earn</D>", "Profit up", "Quarterly profit rose"),
    ...     record.format(2, "<D>acq</D>", "Merger", "Company agreed merger"),
    ...     record.format(3, "<D>earn</D><D>acq</D>", "Both", "two topics"),
    ...     record.format(4, "<D>earn</D>", "Loss", "Quarterly loss"),
    ... ])
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "reut2-000.sgm"), "w") as fh:
    ...     _ = fh.write(sgml)
    >>> X, y, vocabulary, class_names = load_reuters21578(folder, n_classes=2)
    >>> y.tolist(), class_names.tolist()
    ([0, 1, 0], ['earn', 'acq'])
    >>> vocabulary.tolist()   # "up" is too short, "two topics" has two topics
    ['agreed', 'company', 'loss', 'merger', 'profit', 'quarterly', 'rose']
    """
    docs, y, class_names = _reuters_documents(path, n_classes)
    X, vocabulary = _vectorize(
        docs,
        vectorizer,
        CountVectorizer(stop_words="english", token_pattern=r"(?u)\b[^\W\d_]{3,}\b"),
    )
    return X, y, vocabulary, class_names


def _reuters_documents(path, n_classes):
    """The texts, class codes and class names `load_reuters21578` counts."""
    files = sorted(Path(path).glob("reut2-*.sgm"))
    if not files:
        raise ValueError(f"No reut2-*.sgm file in {path}.")
    topics, docs = [], []
    for file in files:
        for record in _REUTERS_RECORD.findall(file.read_text(encoding="latin-1")):
            labels = _REUTERS_TOPIC.findall(_sgml_field(record, "TOPICS"))
            text = html.unescape(
                _sgml_field(record, "TITLE") + "\n" + _sgml_field(record, "BODY")
            ).strip()
            if len(labels) == 1 and text:
                topics.append(labels[0])
                docs.append(text)
    if not docs:
        raise ValueError(f"No single-topic Reuters record with text in {path}.")
    names, sizes = np.unique(np.asarray(topics, dtype=object), return_counts=True)
    # Most frequent first; ties broken by name so the choice is reproducible.
    order = sorted(range(len(names)), key=lambda i: (-sizes[i], names[i]))
    class_names = np.asarray([names[i] for i in order[:n_classes]], dtype=object)
    code = {name: i for i, name in enumerate(class_names)}
    keep = [i for i, topic in enumerate(topics) if topic in code]
    y = np.asarray([code[topics[i]] for i in keep], dtype=np.int64)
    return [docs[i] for i in keep], y, class_names
