"""The README's example vectorizer: do its printed topics carry corpus-wide words?

The README's choosing-k example counts words with ``CountVectorizer``; a
newcomer found "said" in every topic of the news corpus with
``stop_words="english", min_df=2``.  This script fits PLSI at its defaults
(``random_state=0``) with k = 10 (the classes) and k = 5 on the 10 largest
single-label classes of Reuters-21578, from the raw text counted by each
candidate vectorizer, and prints, per vectorizer and k: the number of terms,
the clustering accuracy, the topics whose top 10 terms hold a corpus-wide
word (a term in more than half of the documents), the terms in the top 10
of at least half of the topics, and the top terms (the table of
docs/guide/examples.md).

    python benchmarks/readme_vectorizer.py /work/shared/data
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from _raw_text import KeepDocuments
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import CountVectorizer

from sklearn_topicfac import PLSI
from sklearn_topicfac.datasets import load_reuters21578
from sklearn_topicfac.inspection import document_topics, top_terms
from sklearn_topicfac.metrics import clustering_accuracy

VECTORIZERS = (
    ('stop_words="english", min_df=2 (before)', dict(min_df=2)),
    ('stop_words="english", min_df=2, max_df=0.5 (README)', dict(min_df=2, max_df=0.5)),
)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="the folder of the shared corpora")
    root = parser.parse_args().data
    keep = KeepDocuments()
    _, y, _, _ = load_reuters21578(root / "reuters21578", vectorizer=keep)
    docs = keep.docs
    # Corpus-wide: in more than half of the documents, whatever the filters.
    reference = CountVectorizer(stop_words="english", min_df=2)
    counts = reference.fit_transform(docs)
    df = np.asarray((counts > 0).sum(axis=0)).ravel() / counts.shape[0]
    wide = set(reference.get_feature_names_out()[df > 0.5])
    print(f"Reuters-21578, 10 classes: {len(docs)} documents")
    print(f"terms in more than half of the documents: {', '.join(sorted(wide))}")
    print()
    print(
        "| vectorizer | k | terms | accuracy | topics with a corpus-wide word "
        "| terms in >= half the topics' top 10 | fit s |"
    )
    print("|---|---|---|---|---|---|---|")
    listings = []
    for name, params in VECTORIZERS:
        vectorizer = CountVectorizer(stop_words="english", **params)
        X = vectorizer.fit_transform(docs)
        for k in (10, 5):
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                model = PLSI(n_components=k, random_state=0).fit(X)
            seconds = time.perf_counter() - start
            table = top_terms(model, vectorizer, n_top=10)
            lists = [set(row) for row in table.terms]
            with_wide = sum(bool(words & wide) for words in lists)
            terms, times = np.unique(np.concatenate(table.terms), return_counts=True)
            shared = sorted(terms[times >= k / 2])
            accuracy = clustering_accuracy(y, document_topics(model, X).argmax(axis=1))
            print(
                f"| {name} | {k} | {X.shape[1]} | {accuracy:.3f} | {with_wide}/{k} "
                f"| {', '.join(shared) or '-'} | {seconds:.0f} |"
            )
            listings.append((name, k, table))
    for name, k, table in listings:
        print(f"\n{name}, k={k}:\n{table}")


if __name__ == "__main__":
    main()
