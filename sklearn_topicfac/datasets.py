"""Small text corpora bundled with :mod:`sklearn_topicfac`.

The data ship inside the package, so the loaders need neither network access
nor a download cache. Each loader returns a :class:`sklearn.utils.Bunch` in the
style of :mod:`sklearn.datasets`.
"""

from importlib import resources

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch

__all__ = ["load_classic3"]

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
