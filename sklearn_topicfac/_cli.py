"""Command-line demo: fit a topic model to the bundled Classic3 corpus.

Run as ``topicfac`` (the installed console script) or ``python -m
sklearn_topicfac``.
"""

import argparse
import time

import numpy as np

ESTIMATORS = ("KLNMF", "NormalizedNMF", "PLSI")

_DESCRIPTION = """\
Fit a topic factorization to the bundled Classic3 corpus (3891 abstracts from
the MEDLINE, CISI and CRANFIELD collections) and print the top terms of each
topic, the majority class of the documents assigned to each topic, and the
clustering accuracy against the true collections. Each document is assigned
to its dominant topic (argmax of its row of fit_transform(X)).
"""

_EPILOG = """\
examples:
  topicfac
  topicfac --estimator PLSI -k 5 --top-terms 8
  python -m sklearn_topicfac --max-iter 50 --random-state 1 --verbose
"""


def _positive_int(text):
    """Argparse type for integers >= 1, so bad values get a one-line error."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _build_parser():
    parser = argparse.ArgumentParser(
        prog="topicfac",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--estimator",
        choices=ESTIMATORS,
        default="KLNMF",
        help="topic model to fit (default: %(default)s)",
    )
    parser.add_argument(
        "-k",
        "--n-components",
        type=_positive_int,
        default=3,
        metavar="K",
        help="number of topics (default: %(default)s)",
    )
    parser.add_argument(
        "--max-iter",
        type=_positive_int,
        default=200,
        metavar="N",
        help="maximum number of iterations (default: %(default)s)",
    )
    parser.add_argument(
        "--random-state",
        type=int,
        default=0,
        metavar="SEED",
        help="seed of the random initialization (default: %(default)s)",
    )
    parser.add_argument(
        "--top-terms",
        type=_positive_int,
        default=10,
        metavar="N",
        help="number of terms printed per topic (default: %(default)s)",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="let the estimator report its progress while fitting",
    )
    return parser


def main(argv=None):
    """Run the Classic3 demo.

    Parameters
    ----------
    argv : list of str, default=None
        Command-line arguments without the program name; ``None`` means
        ``sys.argv[1:]``.

    Returns
    -------
    status : int
        Exit status, 0 on success. Invalid arguments make argparse print a
        usage error and raise :class:`SystemExit` with status 2.
    """
    args = _build_parser().parse_args(argv)

    # Deferred so that ``--help`` and argument errors stay fast and do not
    # depend on the estimator modules importing cleanly.
    import sklearn_topicfac
    from sklearn_topicfac.datasets import load_classic3
    from sklearn_topicfac.metrics import clustering_accuracy

    corpus = load_classic3()
    X, y = corpus.data, corpus.target
    n_docs, n_terms = X.shape
    print(
        f"Classic3: {n_docs} documents x {n_terms} terms, "
        f"{int(X.sum())} tokens, classes {', '.join(corpus.target_names)}"
    )

    estimator = getattr(sklearn_topicfac, args.estimator)(
        n_components=args.n_components,
        max_iter=args.max_iter,
        random_state=args.random_state,
        verbose=int(args.verbose),
    )
    start = time.perf_counter()
    doc_topic = np.asarray(estimator.fit_transform(X))
    elapsed = time.perf_counter() - start
    print(
        f"{args.estimator} with {args.n_components} topics, "
        f"max_iter={args.max_iter}, random_state={args.random_state}: "
        f"fitted in {elapsed:.2f} s"
    )

    topic_term = np.asarray(estimator.components_)
    n_top = min(args.top_terms, n_terms)
    for topic, weights in enumerate(topic_term):
        # Stable sort on the negated weights: ties keep vocabulary order, so
        # the printed terms are reproducible.
        top = np.argsort(-weights, kind="stable")[:n_top]
        print(f"topic {topic}: {' '.join(corpus.feature_names[top])}")

    clusters = doc_topic.argmax(axis=1)
    for topic in range(args.n_components):
        members = y[clusters == topic]
        if members.size == 0:
            print(f"cluster {topic}: 0 documents")
            continue
        counts = np.bincount(members, minlength=len(corpus.target_names))
        majority = counts.argmax()
        print(
            f"cluster {topic}: {members.size} documents, majority class "
            f"{corpus.target_names[majority]} "
            f"({counts[majority] / members.size:.1%})"
        )

    accuracy = clustering_accuracy(y, clusters)
    print(f"clustering accuracy vs labels: {accuracy:.3f}")
    return 0
