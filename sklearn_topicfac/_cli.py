"""The ``topicfac`` command: fit a topic model to a corpus from the shell.

Run as ``topicfac`` (the installed console script) or ``python -m
sklearn_topicfac``.  With no input it fits the bundled Classic3 corpus.
"""

import argparse
import csv
import sys
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import joblib
import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score
from sklearn.pipeline import make_pipeline

import sklearn_topicfac

from . import __version__, estimators, fit_callback
from .datasets import load_classic3, load_mat_corpus, load_reuters21578
from .inspection import top_terms
from .kernels import normalize_rows
from .metrics import clustering_accuracy


def _estimator_names():
    """The package's estimators by their public names (``__all__`` order)."""
    return tuple(estimators.__all__)


FORMATS = ("auto", "folder", "csv", "tsv", "lines", "labeled-lines", "mat", "reuters")

_DESCRIPTION = """\
Fit a topic model to a corpus and print the top terms of each topic.

INPUT is one of (--format auto picks by what INPUT is):
  folder          a directory of .txt files, one document per file, searched
                  recursively; when every file sits in a subdirectory, the
                  subdirectory under INPUT is the document's label
  csv, tsv        a table with a header row: the text column is --text-column
                  (default: "text", or the only column), the optional label
                  column --label-column (default: "label" when there is one)
  labeled-lines   a .txt file of "label<TAB>text" lines (auto: every line has
                  a tab), e.g. Cardoso-Cachopo's WebKB / Reuters / 20NG files
  lines           a .txt file, one document per line
  mat             a MATLAB .mat document-term matrix with labels (CSTR, WebACE,
                  Classic3, Deng Cai's 20NG and Reuters files)
  reuters         the Reuters-21578 SGML directory (reut2-*.sgm); its 10
                  largest single-label topics
Without INPUT, the bundled Classic3 corpus (3891 abstracts from the MEDLINE,
CISI and CRANFIELD collections, with their collection as label) is used.

Raw text is counted with scikit-learn's CountVectorizer (--stop-words,
--min-df, --max-df, --max-features); on a count matrix (mat, and the bundled
corpus) the same options drop columns.  Each document is assigned to its
dominant topic (the argmax of P(z|d)); when the corpus has labels, the
clustering accuracy (best one-to-one matching of topics to labels), NMI and
ARI against them are printed, with the majority label of each topic.
"""

_EPILOG = """\
examples:
  topicfac                                   # the bundled Classic3 corpus
  topicfac --estimator PLSI -k 5 --top-terms 8
  topicfac my_texts/ -k 20 --estimator LDAVI --doc-topics topics.csv
  topicfac reviews.csv --text-column body --label-column stars -k 5
  topicfac webkb-train-stemmed.txt -k 4 --save-model webkb.joblib
  python -m sklearn_topicfac --max-iter 50 --random-state 1 --verbose

exit status: 0 on success, 1 on a bad input (unreadable path, empty corpus,
invalid data), 2 on a bad command line.  Errors are one line on stderr.
"""


class _Parser(argparse.ArgumentParser):
    """Argument errors as a single line (no usage block), exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _CorpusError(ValueError):
    """A problem with the user's input, reported as one line."""


def _positive_int(text):
    """Argparse type for integers >= 1, so bad values get a one-line error."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _document_frequency(text):
    """``--min-df``/``--max-df``: a count (integer) or a proportion (float)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number: {text!r}") from None
    if value < 0 or (value != int(value) and value > 1):
        raise argparse.ArgumentTypeError(
            f"must be a document count (integer) or a proportion in [0, 1], got {text}"
        )
    return int(value) if ("." not in text and "e" not in text.lower()) else value


def _estimator_name(text):
    names = _estimator_names()
    for name in names:
        if name.lower() == text.lower():
            return name
    raise argparse.ArgumentTypeError(
        f"unknown estimator {text!r} (choose from {', '.join(names)})"
    )


def _build_parser():
    parser = _Parser(
        prog="topicfac",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "input",
        nargs="?",
        metavar="INPUT",
        help="corpus to read (see above); default: the bundled Classic3 corpus",
    )
    data = parser.add_argument_group("input")
    data.add_argument(
        "--format",
        choices=FORMATS,
        default="auto",
        help="how to read INPUT (default: %(default)s, from the path)",
    )
    data.add_argument(
        "--text-column", metavar="NAME", help="text column of a CSV/TSV file"
    )
    data.add_argument(
        "--label-column", metavar="NAME", help="label column of a CSV/TSV file"
    )
    vec = parser.add_argument_group("vocabulary")
    vec.add_argument(
        "--stop-words",
        choices=("auto", "english", "none"),
        default="auto",
        help="stop words to drop: scikit-learn's English list, or none; 'auto' "
        "(default) means english for raw text, none for count matrices",
    )
    vec.add_argument(
        "--min-df",
        type=_document_frequency,
        default=1,
        metavar="X",
        help="drop terms in fewer documents than this (an integer count, or a "
        "proportion in [0, 1]; default: %(default)s)",
    )
    vec.add_argument(
        "--max-df",
        type=_document_frequency,
        default=1.0,
        metavar="X",
        help="drop terms in more documents than this (count or proportion; "
        "default: %(default)s)",
    )
    vec.add_argument(
        "--max-features",
        type=_positive_int,
        metavar="N",
        help="keep only the N most frequent terms",
    )
    model = parser.add_argument_group("model")
    model.add_argument(
        "--estimator",
        type=_estimator_name,
        default="KLNMF",
        metavar="NAME",
        help=f"topic model to fit, one of {', '.join(_estimator_names())} "
        "(case-insensitive; default: %(default)s); SimplexPLSA is fitted on "
        "the K - 1 leading principal axes of the counts",
    )
    model.add_argument(
        "-k",
        "--n-components",
        type=_positive_int,
        default=3,
        metavar="K",
        help="number of topics (default: %(default)s)",
    )
    model.add_argument(
        "--max-iter",
        type=_positive_int,
        metavar="N",
        help="maximum number of iterations (default: the estimator's own)",
    )
    model.add_argument(
        "--random-state",
        type=int,
        default=0,
        metavar="SEED",
        help="seed of the initialization (default: %(default)s)",
    )
    out = parser.add_argument_group("output")
    out.add_argument(
        "--top-terms",
        type=_positive_int,
        default=10,
        metavar="N",
        help="number of terms printed per topic (default: %(default)s)",
    )
    out.add_argument(
        "--doc-topics",
        metavar="FILE",
        help="write the document-topic matrix P(z|d) as CSV (one row per "
        "document, its name or number first)",
    )
    out.add_argument(
        "--save-model",
        metavar="FILE",
        help="write the fitted pipeline (vectorizer and estimator; the "
        "estimator alone for count-matrix input) with joblib",
    )
    progress = out.add_mutually_exclusive_group()
    progress.add_argument(
        "--progress",
        dest="progress",
        action="store_true",
        default=None,
        help="show a progress bar on stderr while fitting (default: when "
        "stderr is a terminal)",
    )
    progress.add_argument(
        "--no-progress", dest="progress", action="store_false", help="never show it"
    )
    out.add_argument(
        "--verbose",
        action="store_true",
        help="let the estimator report its objective while fitting",
    )
    out.add_argument(
        "--debug",
        action="store_true",
        help="show the full traceback of an error instead of one line",
    )
    out.add_argument("--version", action="version", version=_version())
    return parser


def _version():
    return f"%(prog)s {__version__}"


# ------------------------------------------------------------------ corpora
@dataclass
class _Corpus:
    """What a reader returns: raw documents or a count matrix, and labels."""

    name: str
    docs: list | None = None
    X: object = None
    vocabulary: object = None
    labels: object = None
    label_names: object = None
    doc_ids: list | None = None


def _numbered_corpus(path, docs, labels=None):
    """Documents read from one file, numbered from 1, with their labels encoded."""
    codes = names = None
    if labels is not None:
        codes, names = _encode(labels)
    ids = [str(i) for i in range(1, len(docs) + 1)]
    return _Corpus(f"{path}", docs=docs, labels=codes, label_names=names, doc_ids=ids)


def _detect_format(path):
    if path.is_dir():
        return "reuters" if any(path.glob("reut2-*.sgm")) else "folder"
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv", ".mat"):
        return suffix[1:]
    if suffix == ".txt":
        lines = [
            line
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
            if line.strip()
        ]
        return "labeled-lines" if lines and all("\t" in x for x in lines) else "lines"
    raise _CorpusError(
        f"cannot tell the format of {path} from its name; pass --format "
        f"({', '.join(FORMATS[1:])})"
    )


def _encode(labels):
    names, codes = np.unique(np.asarray(labels, dtype=object), return_inverse=True)
    return codes.astype(np.int64), names


def _read_folder(path):
    files = sorted(p for p in path.rglob("*.txt") if p.is_file())
    if not files:
        raise _CorpusError(f"no .txt files in the folder {path}")
    relative = [p.relative_to(path) for p in files]
    docs = [p.read_text(encoding="utf-8", errors="replace") for p in files]
    labels = label_names = None
    if all(len(r.parts) > 1 for r in relative):
        labels, label_names = _encode([r.parts[0] for r in relative])
    return _Corpus(
        f"{path}",
        docs=docs,
        labels=labels,
        label_names=label_names,
        doc_ids=[r.as_posix() for r in relative],
    )


def _read_table(path, delimiter, text_column, label_column):
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    with open(path, newline="", encoding="utf-8", errors="replace") as fh:
        reader = csv.DictReader(fh, delimiter=delimiter)
        columns = reader.fieldnames or []
        if not columns:
            raise _CorpusError(f"{path} is empty: expected a header row")
        if text_column is None:
            if "text" in columns:
                text_column = "text"
            elif len(columns) == 1:
                text_column = columns[0]
            else:
                raise _CorpusError(
                    f"{path}: which column holds the text? pass --text-column "
                    f"(columns: {', '.join(columns)})"
                )
        if label_column is None and "label" in columns and text_column != "label":
            label_column = "label"
        for role, column in (("text", text_column), ("label", label_column)):
            if column is not None and column not in columns:
                raise _CorpusError(
                    f"{path} has no {role} column {column!r} "
                    f"(columns: {', '.join(columns)})"
                )
        rows = list(reader)
    if not rows:
        raise _CorpusError(f"{path} holds no documents (only a header row)")
    docs = [row[text_column] or "" for row in rows]
    labels = None
    if label_column is not None:
        labels = [row[label_column] or "" for row in rows]
    return _numbered_corpus(path, docs, labels)


def _read_lines(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    docs = [line for line in text.splitlines() if line.strip()]
    if not docs:
        raise _CorpusError(f"{path} holds no documents (no non-empty line)")
    return _numbered_corpus(path, docs)


def _read_labeled_lines(path):
    labels, docs = [], []
    text = path.read_text(encoding="utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        label, tab, tokens = line.partition("\t")
        if not tab:
            raise _CorpusError(f"{path}, line {number}: expected 'label<TAB>text'")
        labels.append(label.strip())
        docs.append(tokens)
    if not docs:
        raise _CorpusError(f"{path} holds no documents")
    return _numbered_corpus(path, docs, labels)


def _read_mat(path):
    X, y, vocabulary, _ = load_mat_corpus(path)
    if X.shape[0] == 0:
        raise _CorpusError(f"{path} holds no documents")
    return _Corpus(
        f"{path}",
        X=X,
        vocabulary=vocabulary,
        labels=y,
        label_names=np.asarray([str(c) for c in np.unique(y)], dtype=object),
    )


def _read_reuters(path):
    # The loader's own reading of the SGML records, with our vectorizer
    # options applied afterwards like for any raw text.
    identity = _Passthrough()
    _, y, _, class_names = load_reuters21578(path, vectorizer=identity)
    return _Corpus(f"{path}", docs=identity.docs, labels=y, label_names=class_names)


class _Passthrough:
    """A stand-in vectorizer that keeps the documents a loader hands it."""

    def fit_transform(self, docs):
        self.docs = list(docs)
        return sp.csr_matrix((len(self.docs), 0))

    def get_feature_names_out(self):
        return np.asarray([], dtype=object)


def _bundled_corpus():
    corpus = load_classic3()
    return _Corpus(
        "Classic3",
        X=corpus.data,
        vocabulary=corpus.feature_names,
        labels=corpus.target,
        label_names=corpus.target_names,
    )


def _read_corpus(args):
    if args.input is None:
        return _bundled_corpus()
    path = Path(args.input)
    if not path.exists():
        raise _CorpusError(f"no such file or folder: {path}")
    fmt = _detect_format(path) if args.format == "auto" else args.format
    if fmt in ("folder", "reuters") and not path.is_dir():
        raise _CorpusError(f"--format {fmt} needs a folder, but {path} is a file")
    if fmt not in ("folder", "reuters") and path.is_dir():
        raise _CorpusError(f"--format {fmt} needs a file, but {path} is a folder")
    if fmt == "folder":
        return _read_folder(path)
    if fmt in ("csv", "tsv"):
        delimiter = "," if fmt == "csv" else "\t"
        return _read_table(path, delimiter, args.text_column, args.label_column)
    if fmt == "lines":
        return _read_lines(path)
    if fmt == "labeled-lines":
        return _read_labeled_lines(path)
    if fmt == "mat":
        return _read_mat(path)
    return _read_reuters(path)


# ---------------------------------------------------------------- vocabulary
def _stop_words(args, raw_text):
    if args.stop_words == "auto":
        return "english" if raw_text else None
    return None if args.stop_words == "none" else args.stop_words


def _vectorize(corpus, args):
    """Counts of the corpus; the fitted vectorizer (None for count input)."""
    if corpus.docs is not None:
        vectorizer = CountVectorizer(
            stop_words=_stop_words(args, raw_text=True),
            min_df=args.min_df,
            max_df=args.max_df,
            max_features=args.max_features,
        )
        try:
            X = vectorizer.fit_transform(corpus.docs)
        except ValueError as exc:
            raise _CorpusError(
                f"{corpus.name}: no term left to count ({exc}); check the input, "
                "or relax --stop-words / --min-df / --max-df"
            ) from None
        vocabulary = np.asarray(vectorizer.get_feature_names_out(), dtype=object)
        return X.astype(np.float64).tocsr(), vocabulary, vectorizer
    X, vocabulary = corpus.X, corpus.vocabulary
    if vocabulary is None:
        vocabulary = np.asarray([f"term{j}" for j in range(X.shape[1])], dtype=object)
    keep = _column_filter(X, vocabulary, args)
    if keep is not None:
        X, vocabulary = X[:, keep], vocabulary[keep]
        if X.shape[1] == 0:
            raise _CorpusError(
                f"{corpus.name}: no term left after --stop-words / --min-df / "
                "--max-df / --max-features"
            )
    return X, vocabulary, None


def _column_filter(X, vocabulary, args):
    """Columns of a count matrix kept by the vocabulary options, or None (all)."""
    n = X.shape[0]
    df = np.bincount(X.nonzero()[1], minlength=X.shape[1])
    keep = np.ones(X.shape[1], dtype=bool)
    low = args.min_df if isinstance(args.min_df, int) else args.min_df * n
    high = args.max_df if isinstance(args.max_df, int) else args.max_df * n
    keep &= (df >= low) & (df <= high)
    stop = _stop_words(args, raw_text=False)
    if stop == "english":
        keep &= ~np.isin(vocabulary.astype(str), list(ENGLISH_STOP_WORDS))
    if args.max_features is not None and keep.sum() > args.max_features:
        totals = np.asarray(X.sum(axis=0)).ravel()
        ranked = np.flatnonzero(keep)[np.argsort(-totals[keep], kind="stable")]
        keep = np.zeros_like(keep)
        keep[ranked[: args.max_features]] = True
    return None if keep.all() else keep


# ------------------------------------------------------------------ progress
class _ProgressBar:
    """A one-line progress bar on a stream, redrawn at most ten times a second."""

    def __init__(self, label, total, stream, width=30):
        self.label, self.total, self.stream, self.width = label, total, stream, width
        self.count = 0
        self.start = time.perf_counter()
        self._drawn = -1.0

    def update(self, step=1):
        self.count += step
        now = time.perf_counter()
        if now - self._drawn >= 0.1:
            self._draw(now)

    def _draw(self, now):
        self._drawn = now
        done = min(self.count / self.total, 1.0) if self.total else 0.0
        filled = int(round(self.width * done))
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(
            f"\r{self.label} [{bar}] {self.count}/{self.total} iterations "
            f"{now - self.start:6.1f} s"
        )
        self.stream.flush()

    def close(self):
        self._draw(time.perf_counter())
        self.stream.write("\n")
        self.stream.flush()


@contextmanager
def _progress(estimator, enabled, stream):
    """Show a progress bar while ``estimator`` fits, fed by the fit callback.

    Every iteration of every run of the fit loop advances the bar (an epoch
    for LDAVI).  HybridNMFPLSI runs the loop once per phase, so its bar
    counts up to ``2 * n_rounds * max_iter`` and usually stops short of it;
    LDAVI runs it once per start (``n_init``) and once per split-merge move,
    so its bar counts up to ``(n_init + split_merge) * max_iter`` and also
    usually stops short; SimplexPLSA's bar counts its PLSA step.
    """
    if not enabled:
        yield
        return
    max_iter = getattr(estimator, "max_iter", 0)
    runs = getattr(estimator, "n_init", 1) + getattr(estimator, "split_merge", 0)
    n_rounds = getattr(estimator, "n_rounds", None)
    total = 2 * n_rounds * max_iter if n_rounds else runs * max_iter
    bar = _ProgressBar(f"[{type(estimator).__name__}]", total, stream)
    try:
        with fit_callback(lambda info: bar.update()):
            yield
    finally:
        bar.close()


# ---------------------------------------------------------------------- run
def _make_estimator(name, args, n_features):
    Estimator = getattr(sklearn_topicfac, name)
    params = dict(
        n_components=args.n_components,
        random_state=args.random_state,
        verbose=int(args.verbose),
    )
    if args.max_iter is not None:
        params["max_iter"] = args.max_iter
    if name == "SimplexPLSA":
        # k vertices enclose data on k - 1 principal axes; the paper's
        # n_features - 1 axes would make a T of n_features^2 for text.
        params["svd_components"] = max(1, min(args.n_components - 1, n_features))
    return Estimator(**params)


def _document_topics(estimator, X):
    """``P(z|d)`` for the training documents, rows summing to one."""
    if hasattr(estimator, "topic_proportions"):
        return np.asarray(estimator.topic_proportions(X), dtype=np.float64)
    return normalize_rows(np.asarray(estimator.transform(X), dtype=np.float64))[0]


def _print_topics(estimator, vocabulary, n_top):
    print(top_terms(estimator, vocabulary, n_top=n_top))


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


def _write_doc_topics(path, corpus, theta):
    ids = corpus.doc_ids or [str(i) for i in range(1, theta.shape[0] + 1)]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["document", *[f"topic{z}" for z in range(theta.shape[1])]])
        for doc_id, row in zip(ids, theta, strict=True):
            writer.writerow([doc_id, *[f"{v:.6g}" for v in row]])


def _run(args):
    corpus = _read_corpus(args)
    X, vocabulary, vectorizer = _vectorize(corpus, args)
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

    estimator = _make_estimator(args.estimator, args, n_terms)
    show = sys.stderr.isatty() if args.progress is None else args.progress
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with _progress(estimator, show and not args.verbose, sys.stderr):
            estimator.fit(X)
    for message in dict.fromkeys(str(w.message) for w in caught):
        print(f"topicfac: warning: {' '.join(message.split())}", file=sys.stderr)
    elapsed = time.perf_counter() - start
    print(
        f"{args.estimator} with {args.n_components} topics, "
        f"max_iter={getattr(estimator, 'max_iter', args.max_iter)}, "
        f"random_state={args.random_state}: fitted in {elapsed:.2f} s"
    )
    _print_topics(estimator, vocabulary, min(args.top_terms, n_terms))

    theta = _document_topics(estimator, X)
    if corpus.labels is not None:
        _print_clustering(corpus, theta.argmax(axis=1), args.n_components)
    if args.doc_topics:
        _write_doc_topics(args.doc_topics, corpus, theta)
        print(f"document-topic matrix written to {args.doc_topics}")
    if args.save_model:
        model = (
            estimator if vectorizer is None else make_pipeline(vectorizer, estimator)
        )
        joblib.dump(model, args.save_model)
        print(f"model written to {args.save_model}")
    return 0


def main(argv=None):
    """Run the ``topicfac`` command.

    Parameters
    ----------
    argv : list of str, default=None
        Command-line arguments without the program name; ``None`` means
        ``sys.argv[1:]``.

    Returns
    -------
    status : int
        0 on success, 1 when the input cannot be used (the reason is printed
        as one line on stderr).  Invalid arguments print a one-line error and
        raise :class:`SystemExit` with status 2.
    """
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except KeyboardInterrupt:
        print(f"\n{parser.prog}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # one line, not a traceback (unless --debug)
        if args.debug:
            raise
        kind = (
            "" if isinstance(exc, (ValueError, OSError)) else f"{type(exc).__name__}: "
        )
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"{parser.prog}: error: {kind}{message}", file=sys.stderr)
        return 1
