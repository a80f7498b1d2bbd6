"""What each text default of the ``topicfac`` command changes (issue 15).

KLNMF at its defaults (``random_state=0``) with k = the number of classes, on
the training file of WebKB4 and the 10 largest single-label classes of
Reuters-21578, from the raw text counted by ``CountVectorizer`` with English
stop words (the command's old vocabulary), then with its new defaults added
one at a time: the token pattern that drops numbers-only tokens, then a
document-frequency ceiling (0.7, 0.5 -- the default -- and 0.3).  Prints the
number of terms, the clustering accuracy, the mean NPMI of the top-10 terms
and the top terms of each topic (the table and lists of docs/guide/cli.md).

    python benchmarks/cli_text_defaults.py /work/shared/data
"""

import argparse
import warnings
from pathlib import Path

import numpy as np
from _raw_text import KeepDocuments
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import CountVectorizer

from sklearn_topicfac import KLNMF
from sklearn_topicfac.datasets import load_reuters21578
from sklearn_topicfac.inspection import document_topics, top_terms
from sklearn_topicfac.metrics import clustering_accuracy, npmi_coherence

SKLEARN_PATTERN = r"(?u)\b\w\w+\b"
NO_NUMBERS = r"(?u)\b(?=\w*[^\W\d])\w\w+\b"  # the command's --token-pattern
VARIANTS = (
    ("stop words only (before)", 1.0, SKLEARN_PATTERN),
    ("+ no numbers-only tokens", 1.0, NO_NUMBERS),
    ("+ max_df=0.7", 0.7, NO_NUMBERS),
    ("+ max_df=0.5 (default)", 0.5, NO_NUMBERS),
    ("+ max_df=0.3", 0.3, NO_NUMBERS),
)


def _webkb(root):
    lines = (root / "webkb4" / "webkb-train-stemmed.txt").read_text().splitlines()
    pairs = [line.partition("\t")[::2] for line in lines if line.strip()]
    return [text for _, text in pairs], np.unique(
        [label for label, _ in pairs], return_inverse=True
    )[1]


def _reuters(root):
    keep = KeepDocuments()
    _, y, _, _ = load_reuters21578(root / "reuters21578", vectorizer=keep)
    return keep.docs, y


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="the shared data folder")
    root = parser.parse_args().data
    for name, (docs, y) in (("WebKB4", _webkb(root)), ("Reuters", _reuters(root))):
        k = int(y.max()) + 1
        for label, max_df, pattern in VARIANTS:
            vectorizer = CountVectorizer(
                stop_words="english", max_df=max_df, token_pattern=pattern
            )
            X = vectorizer.fit_transform(docs).astype(np.float64)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                model = KLNMF(n_components=k, random_state=0).fit(X)
            accuracy = clustering_accuracy(y, document_topics(model, X).argmax(1))
            print(
                f"== {name}, k={k}, {label}: {X.shape[1]} terms, accuracy "
                f"{accuracy:.3f}, mean NPMI {npmi_coherence(model, X).mean():.3f}"
            )
            print(top_terms(model, vectorizer), flush=True)


if __name__ == "__main__":
    main()
