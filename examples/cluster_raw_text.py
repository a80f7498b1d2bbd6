"""Cluster raw text: CountVectorizer -> topic model -> one cluster per topic.

The recipe to copy for your own documents.  It reads WebKB4 (4,199
university web pages: student, faculty, course, project) from
``../shared/data/webkb4`` next to the repository when it is there, and
otherwise the corpus bundled with the package (Classic3, shipped as counts:
its documents are written back out as text, so the same code runs).

    python examples/cluster_raw_text.py                   # WebKB4 or Classic3
    python examples/cluster_raw_text.py --estimator LDAVI
    python examples/cluster_raw_text.py --quick           # 600 documents
"""

import argparse
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline

import sklearn_topicfac
from sklearn_topicfac.datasets import load_classic3
from sklearn_topicfac.inspection import top_terms
from sklearn_topicfac.metrics import clustering_scores, npmi_coherence

DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "data"


def read_labeled_lines(paths):
    """Documents and labels from ``label<TAB>text`` lines (WebKB4's format)."""
    docs, labels = [], []
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            label, _, text = line.partition("\t")
            if text.strip():  # WebKB4 has 31 empty pages
                docs.append(text)
                labels.append(label)
    return docs, np.asarray(labels)


def bundled_corpus_as_text():
    """Classic3's documents as strings of their terms (it ships as counts)."""
    corpus = load_classic3()
    X, vocab = corpus.data.tocsr(), corpus.feature_names
    docs = [
        " ".join(
            " ".join([vocab[j]] * int(c))
            for j, c in zip(X.indices[a:b], X.data[a:b], strict=True)
        )
        for a, b in zip(X.indptr[:-1], X.indptr[1:], strict=True)
    ]
    return docs, corpus.target_names[corpus.target]


def load_corpus(data_dir):
    webkb = Path(data_dir) / "webkb4"
    files = sorted(webkb.glob("webkb-*-stemmed.txt"))
    if files:
        docs, labels = read_labeled_lines(files)
        return "WebKB4", docs, labels
    docs, labels = bundled_corpus_as_text()
    return "Classic3 (bundled)", docs, labels


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=DATA_DIR, help="where webkb4/ is")
    parser.add_argument("--estimator", default="PLSI", help="PLSI, KLNMF, LDAVI, ...")
    parser.add_argument("--quick", action="store_true", help="600 documents")
    args = parser.parse_args(argv)

    name, docs, labels = load_corpus(args.data_dir)
    if args.quick:
        keep = np.random.default_rng(0).choice(len(docs), 600, replace=False)
        docs, labels = [docs[i] for i in keep], labels[keep]
    n_topics = np.unique(labels).size
    print(f"{name}: {len(docs)} documents, {n_topics} classes")

    # The whole model: count words (dropping English stop words, terms in
    # fewer than 2 documents and in more than half of them), then fit one
    # topic per class.  fit_transform returns each document's topic weights.
    Estimator = getattr(sklearn_topicfac, args.estimator)
    pipe = make_pipeline(
        CountVectorizer(stop_words="english", min_df=2, max_df=0.5),
        Estimator(n_components=n_topics, random_state=0),
    )
    doc_topic = pipe.fit_transform(docs)
    clusters = doc_topic.argmax(axis=1)  # each document's dominant topic

    print(f"{len(pipe[0].vocabulary_)} terms; topics of {args.estimator}:")
    print(top_terms(pipe, n_top=8))
    counts = pipe[0].transform(docs)
    print("NPMI coherence per topic:", np.round(npmi_coherence(pipe[-1], counts), 3))
    print(f"held-out score: {pipe.score(docs):.3f} nats per word")
    scores = clustering_scores(labels, clusters)
    print("clustering vs the classes:")
    for metric, value in scores.items():
        print(f"  {metric:9s} {value:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
