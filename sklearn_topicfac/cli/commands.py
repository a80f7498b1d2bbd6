"""The two commands: ``topicfac`` (read, count, fit, print, write) and
``topicfac apply`` (load a saved model, write the documents' topics)."""

import sys
import time
import warnings

import numpy as np
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score
from sklearn.pipeline import make_pipeline

import sklearn_topicfac

from .. import _compile
from .._validation import available_memory, format_bytes
from ..inspection import (
    document_topics,
    top_terms,
    topic_stability,
    write_report,
)
from ..metrics import clustering_accuracy, npmi_coherence, topic_diversity
from ..model_selection import select_n_components
from ..persistence import load, save
from . import options
from .inputs import _corpus_input, _CorpusError, _read_corpus
from .options import AUTO_FOLDS, _printable, _text_estimator_names
from .outputs import _check_outputs, _write_atomically, _write_doc_topics
from .progress import _progress
from .vocabulary import _vectorize


def _make_estimator(name, args, n_components, n_features):
    Estimator = getattr(sklearn_topicfac, name)
    params = dict(
        n_components=n_components,
        random_state=args.random_state,
        verbose=int(args.verbose),
    )
    if args.max_iter is not None:
        params["max_iter"] = args.max_iter
    if name == "SimplexPLSA":
        # k vertices enclose data on k - 1 principal axes; the paper's
        # n_features - 1 axes would make a T of n_features^2 for text.
        params["svd_components"] = max(1, min(n_components - 1, n_features))
    return Estimator(**params)


def _choose_n_components(corpus, X, args):
    """``-k``: as given, the number of classes, or by held-out likelihood.

    Returns the number of topics and the selection (None unless chosen).
    """
    if args.n_components != "auto":
        return args.n_components, None
    if corpus.labels is not None and len(corpus.label_names) >= 1:
        k = len(corpus.label_names)
        print(f"-k auto: {k} topics, one per class")
        return k, None
    if args.estimator == "SimplexPLSA":
        raise _CorpusError(
            "-k auto on a corpus without labels needs a held-out likelihood, "
            "which SimplexPLSA (real-valued data) has not; pass -k"
        )
    candidates = [k for k in options.AUTO_CANDIDATES if k < X.shape[0]] or [1]
    if len(candidates) == 1:
        return candidates[0], None
    print(
        f"-k auto: choosing among k = {', '.join(map(str, candidates))} by the "
        f"held-out log-likelihood per word ({AUTO_FOLDS} folds; see score)"
    )
    template = _make_estimator(args.estimator, args, candidates[0], X.shape[1])
    template.set_params(verbose=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        selection = select_n_components(
            template,
            X,
            candidates,
            method="held_out",
            cv=AUTO_FOLDS,
            random_state=args.random_state,
        )
    for k, score in zip(selection.candidates, selection.scores, strict=True):
        print(f"  k = {k:2d}: held-out log-likelihood per word {score:.4f}")
    print(f"-k auto: {selection.best_n_components} topics (the best held-out score)")
    if selection.at_edge:
        print(
            f"-k auto: warning: {selection.best_n_components} is the "
            f"{'largest' if selection.edge == 'upper' else 'smallest'} candidate, "
            "so the score may still improve beyond the candidates: it is a "
            "bound, not an answer; try other k with -k"
        )
    return int(selection.best_n_components), selection


def _print_quality(estimator, X, n_top):
    """NPMI coherence of each topic, its mean, and the topic diversity."""
    npmi = npmi_coherence(estimator, X, n_top=n_top)
    cells = " ".join(f"{z}:{v:+.3f}" for z, v in enumerate(npmi))
    print(f"NPMI coherence (top {n_top} terms) per topic: {cells}")
    diversity = topic_diversity(estimator, n_top=n_top)
    print(f"mean NPMI coherence: {npmi.mean():+.3f}; topic diversity: {diversity:.3f}")


def _print_clustering(corpus, clusters, k):
    y, names = corpus.labels, corpus.label_names
    for topic in range(k):
        members = y[clusters == topic]
        if members.size == 0:
            print(f"cluster {topic}: 0 documents")
            continue
        counts = np.bincount(members, minlength=len(names))
        majority = counts.argmax()
        print(
            f"cluster {topic}: {members.size} documents, majority class "
            f"{names[majority]} ({counts[majority] / members.size:.1%})"
        )
    print(f"clustering accuracy vs labels: {clustering_accuracy(y, clusters):.3f}")
    print(f"NMI vs labels: {normalized_mutual_info_score(y, clusters):.3f}")
    print(f"ARI vs labels: {adjusted_rand_score(y, clusters):.3f}")


def _fit(estimator, X, args):
    show = sys.stderr.isatty() if args.progress is None else args.progress
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with _progress(estimator, show and not args.verbose, sys.stderr) as counter:
            estimator.fit(X)
    for message in dict.fromkeys(str(w.message) for w in caught):
        message = _printable(" ".join(message.split()))
        print(f"topicfac: warning: {message}", file=sys.stderr)
    elapsed = time.perf_counter() - start
    max_iter = getattr(estimator, "max_iter", args.max_iter)
    if max_iter == "auto":
        max_iter = f"auto ({estimator._iteration_cap()})"
    n_iter = getattr(estimator, "n_iter_", None)
    print(
        f"{args.estimator} with {estimator.n_components} topics, max_iter="
        f"{max_iter}, random_state={args.random_state}: fitted in {elapsed:.2f} s, "
        f"{counter.describe()} (n_iter_={n_iter}: the fit kept)"
    )


# Dense float64 arrays of a fit, in units of n_components * (n_documents +
# n_terms): W, H, their updates, the best start's copies (tracemalloc peaks of
# the estimators with k=200 on Classic3: 5.9 to 11.5).
_MEMORY_FACTOR = 12


def _check_n_components(k, n_docs, n_terms):
    for what, size in (("documents", n_docs), ("terms", n_terms)):
        if k > size:
            limit = min(n_docs, n_terms)
            raise _CorpusError(
                f"-k {k} exceeds the corpus's {size} {what}: there cannot be "
                f"more topics than documents or terms; pass -k {limit} or less "
                "(or -k auto)"
            )


def _check_memory(k, X):
    """Refuse, before any work, a fit that cannot fit in memory."""
    n_docs, n_terms = X.shape
    need = 8 * _MEMORY_FACTOR * k * (n_docs + n_terms)
    available = available_memory()
    if available is not None and need > available:
        raise _CorpusError(
            f"-k {k} on {n_docs} documents x {n_terms} terms needs about "
            f"{format_bytes(need)} of memory, more than the "
            f"{format_bytes(available)} available; pass a smaller -k, or "
            "fewer terms (--max-features, --min-df)"
        )


def _run(args):
    _check_outputs(args)
    corpus = _read_corpus(args)
    if args.estimator == "SimplexPLSA" and corpus.docs is not None:
        raise _CorpusError(
            "SimplexPLSA encloses real-valued data in a simplex; it is no topic "
            "model of raw text (its weights barely follow the topics): choose "
            f"another --estimator ({', '.join(_text_estimator_names())})"
        )
    X, vocabulary, head = _vectorize(corpus, args)
    n_docs, n_terms = X.shape
    labels = ""
    if corpus.labels is not None:
        labels = f", classes {', '.join(map(str, corpus.label_names))}"
    print(
        f"{corpus.name}: {n_docs} documents x {n_terms} terms, "
        f"{int(X.sum())} tokens{labels}"
    )
    if X.sum() == 0:
        raise _CorpusError(f"{corpus.name}: the documents contain no words")

    if args.stability and not args.report:
        raise _CorpusError("--stability is shown in the report: add --report FILE.html")
    if args.report and args.estimator == "SimplexPLSA":
        raise _CorpusError(
            "--report shows topic models of counts; SimplexPLSA's real-valued "
            "bases have no word distributions to draw (choose another --estimator)"
        )
    if args.n_components != "auto":
        _check_n_components(args.n_components, n_docs, n_terms)
    k, selection = _choose_n_components(corpus, X, args)
    _check_n_components(k, n_docs, n_terms)
    _check_memory(k, X)
    estimator = _make_estimator(args.estimator, args, k, n_terms)
    _fit(estimator, X, args)
    n_top = min(args.top_terms, n_terms)
    print(top_terms(estimator, vocabulary, n_top=n_top))
    if hasattr(estimator, "topic_proportions"):
        _print_quality(estimator, X, n_top)

    model = estimator if head is None else make_pipeline(head, estimator)
    theta = document_topics(estimator, X)
    if corpus.labels is not None:
        _print_clustering(corpus, theta.argmax(axis=1), k)
    if args.doc_topics:
        _write_doc_topics(args.doc_topics, corpus, model, args.force)
    if args.save_model:
        _write_atomically(args.save_model, lambda file: save(model, file), args.force)
        print(f"model written to {args.save_model}")
    if args.report:
        labels = None if corpus.labels is None else corpus.label_names[corpus.labels]
        stability = None
        if args.stability:
            stability = topic_stability(
                estimator, X, n_runs=args.stability, random_state=args.random_state
            )
            print(
                "topic stability over "
                f"{args.stability} refits: "
                + " ".join(f"{i}:{s:.2f}" for i, s in enumerate(stability))
            )
        _write_atomically(
            args.report,
            lambda file: write_report(
                estimator,
                X,
                vocabulary,
                file,
                labels=labels,
                selection=selection,
                title=f"{args.estimator} on {corpus.name}",
                stability=stability,
            ),
            args.force,
        )
        print(f"report written to {args.report}")
    return 0


def _apply(args):
    _check_outputs(args)
    try:
        model = load(args.model, trust_pickle=args.trust_pickle)
    except FileNotFoundError:
        raise _CorpusError(f"no such model file: {args.model}") from None
    except ValueError as exc:
        raise _CorpusError(str(exc)) from None
    corpus = _read_corpus(args)
    data = _corpus_input(corpus)
    print(f"{corpus.name}: {len(corpus.doc_ids or range(_n_rows(data)))} documents")
    _write_doc_topics(args.doc_topics, corpus, model, args.force)
    return 0


def _compile_kernels(args):
    _compile.compile_kernels(verbose=not args.quiet)
    return 0


def _n_rows(data):
    return data.shape[0] if hasattr(data, "shape") else len(data)
