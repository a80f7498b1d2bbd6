"""The raw documents behind a loader of ``sklearn_topicfac.datasets``.

The text loaders (``load_reuters21578``, ...) take a vectorizer and return
counts; the benchmarks that compare vectorizers need the documents
themselves.  `KeepDocuments` stands in for the vectorizer and keeps them.
"""

import numpy as np
import scipy.sparse as sp


class KeepDocuments:
    """A vectorizer stand-in that keeps the documents the loader reads
    (``.docs``) and returns an empty one-column count matrix."""

    def fit_transform(self, docs):
        self.docs = list(docs)
        return sp.csr_matrix((len(self.docs), 1))

    def get_feature_names_out(self):
        return np.asarray(["-"], dtype=object)
