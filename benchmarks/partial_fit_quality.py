"""Online learning against the batch fit, per corpus (issue 31).

For each estimator with ``partial_fit`` measured here (PLSI, KLNMF, LDAVI, at
their defaults, ``random_state=0``, k = the number of classes) and each
corpus (the bundled Classic3; WebKB4's training pages and the 10 largest
single-label classes of Reuters-21578 from ../shared/data, counted by the
README's vectorizer), fits the batch model, then five epochs of
``partial_fit`` over the documents shuffled anew each epoch (seed 0), in
mini-batches of 256.  Prints the clustering accuracy of the dominant topic
(``topic_proportions(X).argmax(axis=1)``) after each epoch and of the batch
fit, and the seconds of each (the table of docs/guide/scaling.md).

    python benchmarks/partial_fit_quality.py /work/shared/data
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from _raw_text import KeepDocuments
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import CountVectorizer

from sklearn_topicfac import KLNMF, LDAVI, PLSI
from sklearn_topicfac.datasets import load_classic3, load_reuters21578
from sklearn_topicfac.metrics import clustering_accuracy

EPOCHS, BATCH = 5, 256


def _counts(docs):
    vectorizer = CountVectorizer(stop_words="english", min_df=2, max_df=0.5)
    X = vectorizer.fit_transform(docs).astype(np.float64).tocsr()
    keep = np.asarray(X.sum(axis=1)).ravel() > 0
    return X[keep], keep


def _corpora(root):
    classic3 = load_classic3()
    yield "Classic3", classic3.data.tocsr(), classic3.target
    lines = (root / "webkb4" / "webkb-train-stemmed.txt").read_text().splitlines()
    pairs = [line.partition("\t")[::2] for line in lines if line.strip()]
    X, keep = _counts([text for _, text in pairs])
    y = np.unique([label for label, _ in pairs], return_inverse=True)[1][keep]
    yield "WebKB4", X, y
    keep_docs = KeepDocuments()
    _, y, _, _ = load_reuters21578(root / "reuters21578", vectorizer=keep_docs)
    X, keep = _counts(keep_docs.docs)
    yield "Reuters-21578", X, np.asarray(y)[keep]


def _accuracy(model, X, y):
    return clustering_accuracy(y, model.topic_proportions(X).argmax(axis=1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="the folder of the shared corpora")
    root = parser.parse_args().data
    header = " | ".join(f"epoch {e}" for e in range(1, EPOCHS + 1))
    print(f"| corpus | estimator | batch fit | {header} | batch s | online s |")
    print("|---|---|---|" + "---|" * EPOCHS + "---|---|")
    for corpus, X, y in _corpora(root):
        k = len(np.unique(y))
        for Estimator in (PLSI, KLNMF, LDAVI):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                start = time.perf_counter()
                batch = Estimator(n_components=k, random_state=0).fit(X)
                batch_s = time.perf_counter() - start
                online = Estimator(n_components=k, random_state=0)
                rng = np.random.default_rng(0)
                accuracies, start = [], time.perf_counter()
                for _ in range(EPOCHS):
                    order = rng.permutation(X.shape[0])
                    for i in range(0, len(order), BATCH):
                        online.partial_fit(X[order[i : i + BATCH]])
                    accuracies.append(_accuracy(online, X, y))
                online_s = time.perf_counter() - start
            cells = " | ".join(f"{a:.3f}" for a in accuracies)
            print(
                f"| {corpus} ({X.shape[0]} x {X.shape[1]}, k={k}) | "
                f"{Estimator.__name__} | {_accuracy(batch, X, y):.3f} | {cells} | "
                f"{batch_s:.0f} | {online_s:.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
