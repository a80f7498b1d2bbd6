"""The ``topicfac`` command: fit a topic model to a corpus from the shell.

Run as ``topicfac`` (the installed console script) or ``python -m
sklearn_topicfac``.  With no input it fits the bundled Classic3 corpus.
"""

import argparse
import csv
import io
import os
import sys
import tempfile
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp
from sklearn.compose import ColumnTransformer
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score
from sklearn.pipeline import make_pipeline

import sklearn_topicfac

from . import __version__, estimators, fit_callback
from ._validation import available_memory, format_bytes
from .datasets import load_classic3, load_mat_corpus, load_reuters21578
from .inspection import document_topics, top_terms, write_report
from .metrics import clustering_accuracy, npmi_coherence, topic_diversity
from .model_selection import select_n_components
from .persistence import load, save


def _estimator_names():
    """The package's estimators by their public names (``__all__`` order)."""
    return tuple(estimators.__all__)


def _text_estimator_names():
    """The estimators offered for raw text: the topic models of counts."""
    return tuple(name for name in _estimator_names() if name != "SimplexPLSA")


# Text defaults, measured on WebKB4 and Reuters-21578 (docs/guide/cli.md):
# terms in more than half of the documents are corpus-wide ("said",
# "reuter"), and numbers alone ("000", "1986") are not topics.
DEFAULT_MAX_DF = 0.5
TOKEN_PATTERN = r"(?u)\b(?=\w*[^\W\d])\w\w+\b"
# -k auto without labels: the held-out likelihood over these k (a small grid),
# on AUTO_FOLDS shuffled folds.
AUTO_CANDIDATES = (2, 3, 4, 5, 6, 8, 10)
AUTO_FOLDS = 3

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
--min-df, --max-df, --max-features, --token-pattern); by default English stop
words, terms in more than half of the documents and numbers are dropped.  On a
count matrix (mat, and the bundled corpus) the same options drop columns.
The number of topics is by default the number of classes when the corpus has
labels, else by held-out likelihood.  The NPMI coherence of each topic and
the topic diversity are printed with the topics.  Each document is assigned to
its dominant topic (the argmax of P(z|d)); when the corpus has labels, the
clustering accuracy (best one-to-one matching of topics to labels), NMI and
ARI against them are printed, with the majority label of each topic.

To apply a saved model to new documents: topicfac apply MODEL INPUT
--doc-topics FILE (see topicfac apply --help).
"""

_APPLY_DESCRIPTION = """\
Apply a model saved by 'topicfac --save-model' to documents and write their
topic proportions P(z|d) as CSV, the same file 'topicfac --doc-topics' writes
for the same documents.  INPUT is read as by 'topicfac' (see topicfac --help).
"""

_APPLY_EPILOG = """\
MODEL is a skops file: loading it builds only the package's estimators,
scikit-learn's and NumPy's types, and refuses a file naming anything else, so
a model file from someone else cannot run code.  A pickle (joblib) file, as
--save-model wrote before, loads only with --trust-pickle.

examples:
  topicfac news/ --save-model news.skops
  topicfac apply news.skops more_news/ --doc-topics more_news.csv
  topicfac apply old_model.joblib more_news/ --doc-topics more.csv --trust-pickle
"""

_EPILOG = """\
examples:
  topicfac                                   # the bundled Classic3 corpus
  topicfac --estimator PLSI -k 5 --top-terms 8
  topicfac my_texts/ -k 20 --estimator LDAVI --doc-topics topics.csv
  topicfac reviews.csv --text-column body --label-column stars -k 5
  topicfac webkb-train-stemmed.txt --save-model webkb.skops --report webkb.html
  topicfac apply webkb.skops webkb-test-stemmed.txt --doc-topics test.csv
  topicfac latin1_texts/ --encoding latin-1 --stop-words none --max-df 1.0
  python -m sklearn_topicfac --max-iter 50 --random-state 1 --verbose

Outputs never replace an input or each other: an output that exists is
refused unless --force, a symbolic link is refused, every output folder is
checked before fitting, and each file is written to a temporary file in its
folder and then renamed, so an interrupted run leaves the old file intact.

exit status: 0 on success (also when the reader of the output stops early,
as in 'topicfac | head -2'), 1 on a bad input (unreadable path, empty corpus,
a delimiter that does not match --format, -k above the number of documents
or terms, a fit larger than the available memory), 2 on a bad command line.
Errors are one line on stderr, and input mistakes are caught before any fit.
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


def _n_components(text):
    """``-k``: a positive integer or ``auto``."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return _positive_int(text)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{exc} ({_INTEGER_OR_AUTO})") from None


def _stop_word_file(path):
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise argparse.ArgumentTypeError(
            f"cannot read the stop-word file {path!r} ({exc})"
        ) from None
    lines = (line.partition("#")[0] for line in text.splitlines())
    return {word.lower() for line in lines for word in line.split()}


def _stop_words_option(text):
    """``--stop-words``: ``None`` (none) or a frozenset of lower-case words.

    Comma-separated items: ``english``, ``none``, a file of words, ``+WORD``.
    The words of every item are joined; ``+WORD`` items alone extend the
    English list.
    """
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise argparse.ArgumentTypeError("empty list (use 'none' for no stop words)")
    words, base = set(), False
    for item in items:
        if item.startswith("+"):
            if not item[1:]:
                raise argparse.ArgumentTypeError(f"'+' without a word in {text!r}")
            words.add(item[1:].lower())
        elif item.lower() in ("english", "none"):
            base = True
            if item.lower() == "english":
                words |= ENGLISH_STOP_WORDS
        elif Path(item).is_file():
            base = True
            words |= _stop_word_file(item)
        else:
            raise argparse.ArgumentTypeError(
                f"{item!r} is neither 'english', 'none', +WORD nor a file of words"
            )
    if not base:
        words |= ENGLISH_STOP_WORDS
    return frozenset(words) or None


def _estimator_name(text):
    names = _estimator_names()
    for name in names:
        if name.lower() == text.lower():
            return name
    raise argparse.ArgumentTypeError(
        f"unknown estimator {text!r} (choose from {', '.join(names)})"
    )


# The options, declared once as (group, flags, argparse keywords): the parser
# is built from this table, so adding an option is adding a row.
_INTEGER_OR_AUTO = "an integer, or 'auto'"
_OPTIONS = (
    (
        "input",
        ("--format",),
        dict(
            choices=FORMATS,
            default="auto",
            help="how to read INPUT (default: %(default)s, from the path)",
        ),
    ),
    (
        "input",
        ("--text-column",),
        dict(metavar="NAME", help="text column of a CSV/TSV file"),
    ),
    (
        "input",
        ("--label-column",),
        dict(metavar="NAME", help="label column of a CSV/TSV file"),
    ),
    (
        "input",
        ("--encoding",),
        dict(
            default="utf-8",
            metavar="CODEC",
            help="text encoding of the input files (default: %(default)s; e.g. "
            "latin-1); undecodable bytes are an error, never dropped",
        ),
    ),
    (
        "vocabulary",
        ("--stop-words",),
        dict(
            type=_stop_words_option,
            default="english",
            metavar="LIST",
            help="stop words to drop (raw text and the terms of a count matrix): "
            "'english' (scikit-learn's list, default), 'none', a file of words "
            "(one or more a line; # starts a comment), or several of these "
            "joined by commas, with +WORD adding a word: e.g. english,+mr,+said "
            "(+WORD alone extends the English list)",
        ),
    ),
    (
        "vocabulary",
        ("--min-df",),
        dict(
            type=_document_frequency,
            default=1,
            metavar="X",
            help="drop terms in fewer documents than this (an integer count, or a "
            "proportion in [0, 1]; default: %(default)s)",
        ),
    ),
    (
        "vocabulary",
        ("--max-df",),
        dict(
            type=_document_frequency,
            default=None,
            metavar="X",
            help="drop terms in more documents than this (count or proportion; "
            f"default: {DEFAULT_MAX_DF} for raw text, which removes corpus-wide "
            "words, 1.0 for count matrices)",
        ),
    ),
    (
        "vocabulary",
        ("--max-features",),
        dict(
            type=_positive_int, metavar="N", help="keep only the N most frequent terms"
        ),
    ),
    (
        "vocabulary",
        ("--token-pattern",),
        dict(
            default=TOKEN_PATTERN,
            metavar="REGEX",
            help="what a term is in raw text (default: words of two or more "
            "characters with at least one letter, so numbers alone are dropped; "
            "scikit-learn's own is '(?u)\\b\\w\\w+\\b')",
        ),
    ),
    (
        "model",
        ("--estimator",),
        dict(
            type=_estimator_name,
            default="KLNMF",
            metavar="NAME",
            help=f"topic model to fit, one of {', '.join(_text_estimator_names())} "
            "(case-insensitive; default: %(default)s); on a count matrix (mat, "
            "the bundled corpus) also SimplexPLSA, for real-valued data, fitted "
            "on the K - 1 leading principal axes of the counts",
        ),
    ),
    (
        "model",
        ("-k", "--n-components"),
        dict(
            type=_n_components,
            default="auto",
            metavar="K",
            help="number of topics, or 'auto' (default): the number of classes "
            "when the corpus has labels, else the k of the best held-out "
            f"likelihood among {', '.join(map(str, AUTO_CANDIDATES))} "
            f"({AUTO_FOLDS}-fold; the curve is printed)",
        ),
    ),
    (
        "model",
        ("--max-iter",),
        dict(
            type=_positive_int,
            metavar="N",
            help="maximum number of iterations (default: the estimator's own)",
        ),
    ),
    (
        "model",
        ("--random-state",),
        dict(
            type=int,
            default=0,
            metavar="SEED",
            help="seed of the initialization (default: %(default)s)",
        ),
    ),
    (
        "output",
        ("--top-terms",),
        dict(
            type=_positive_int,
            default=10,
            metavar="N",
            help="number of terms printed per topic (default: %(default)s)",
        ),
    ),
    (
        "output",
        ("--doc-topics",),
        dict(
            metavar="FILE",
            help="write the document-topic matrix P(z|d) as CSV (one row per "
            "document, its name or number first)",
        ),
    ),
    (
        "output",
        ("--save-model",),
        dict(
            metavar="FILE",
            help="write the fitted model as a skops file, which cannot run code "
            "when loaded (a pipeline from the input's counts to the topics; "
            "'topicfac apply' applies it to new documents, "
            "sklearn_topicfac.load(FILE) loads it in Python)",
        ),
    ),
    (
        "output",
        ("--report",),
        dict(
            metavar="FILE.html",
            help="write a self-contained HTML report: top terms, coherence, "
            "inter-topic distance map, document map, k-selection curve, scores",
        ),
    ),
    (
        "output",
        ("--verbose",),
        dict(
            action="store_true",
            help="let the estimator report its objective while fitting",
        ),
    ),
)
_PROGRESS = (
    (
        ("--progress",),
        dict(
            dest="progress",
            action="store_true",
            default=None,
            help="show a progress bar on stderr while fitting (default: when "
            "stderr is a terminal)",
        ),
    ),
    (
        ("--no-progress",),
        dict(dest="progress", action="store_false", help="never show it"),
    ),
)
_APPLY_OPTIONS = ("--format", "--text-column", "--label-column", "--encoding")


def _new_parser(prog, description, epilog):
    return _Parser(
        prog=prog,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _add_options(parser, rows):
    groups = {}
    for group, flags, keywords in rows:
        if group not in groups:
            groups[group] = parser.add_argument_group(group)
        groups[group].add_argument(*flags, **keywords)
    return groups


def _add_common_tail(parser, group):
    group.add_argument(
        "--force",
        action="store_true",
        help="overwrite output files that exist (never an input file)",
    )
    group.add_argument(
        "--debug",
        action="store_true",
        help="show the full traceback of an error instead of one line",
    )
    group.add_argument("--version", action="version", version=_version())


def _build_parser():
    parser = _new_parser("topicfac", _DESCRIPTION, _EPILOG)
    parser.add_argument(
        "input",
        nargs="?",
        metavar="INPUT",
        help="corpus to read (see above); default: the bundled Classic3 corpus",
    )
    groups = _add_options(parser, _OPTIONS)
    progress = groups["output"].add_mutually_exclusive_group()
    for flags, keywords in _PROGRESS:
        progress.add_argument(*flags, **keywords)
    _add_common_tail(parser, groups["output"])
    return parser


def _build_apply_parser():
    parser = _new_parser("topicfac apply", _APPLY_DESCRIPTION, _APPLY_EPILOG)
    parser.add_argument("model", metavar="MODEL", help="a file of --save-model")
    parser.add_argument(
        "--trust-pickle",
        action="store_true",
        help="also load MODEL if it is a pickle (joblib) file, as --save-model "
        "wrote before it wrote skops files; reading a pickle can run any code "
        "it holds, so only for a file from a source you trust",
    )
    parser.add_argument(
        "input",
        nargs="?",
        metavar="INPUT",
        help="documents, in any form 'topicfac' reads; default: the bundled "
        "Classic3 corpus",
    )
    rows = [row for row in _OPTIONS if row[1][0] in _APPLY_OPTIONS]
    rows.append(
        (
            "output",
            ("--doc-topics",),
            dict(
                metavar="FILE",
                required=True,
                help="where to write the document-topic matrix P(z|d) (CSV)",
            ),
        )
    )
    groups = _add_options(parser, rows)
    _add_common_tail(parser, groups["output"])
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


def _read_text(path, encoding):
    """The text of a file; undecodable bytes are a one-line error, never lost."""
    try:
        return path.read_bytes().decode(encoding)
    except LookupError:
        raise _CorpusError(f"unknown --encoding {encoding!r}") from None
    except UnicodeDecodeError as exc:
        raise _CorpusError(
            f"{path}: byte {exc.object[exc.start]:#04x} at offset {exc.start} is "
            f"not valid {encoding}; pass the file's encoding with --encoding "
            "(e.g. --encoding latin-1)"
        ) from None


def _detect_format(path, encoding):
    if path.is_dir():
        return "reuters" if any(path.glob("reut2-*.sgm")) else "folder"
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv", ".mat"):
        return suffix[1:]
    if suffix == ".txt":
        lines = [x for x in _read_text(path, encoding).splitlines() if x.strip()]
        return "labeled-lines" if lines and all("\t" in x for x in lines) else "lines"
    raise _CorpusError(
        f"cannot tell the format of {path} from its name; pass --format "
        f"({', '.join(FORMATS[1:])})"
    )


def _encode(labels):
    names, codes = np.unique(np.asarray(labels, dtype=object), return_inverse=True)
    return codes.astype(np.int64), names


def _within(path, folder):
    """Whether the real ``path`` lies inside the real ``folder``."""
    return os.path.commonpath([path, folder]) == folder


def _folder_files(path):
    """The .txt files under ``path`` and the symbolic links leading out of it.

    A link (to a file or a folder) whose target lies outside ``path`` is
    skipped and counted, so a corpus folder reads nothing from elsewhere;
    linked folders are never descended into.
    """
    root = os.path.realpath(path)
    files, outside = [], 0
    for folder, subfolders, names in os.walk(path):
        for name in subfolders:
            link = os.path.join(folder, name)
            if os.path.islink(link) and not _within(os.path.realpath(link), root):
                outside += 1
        for name in names:
            file = Path(folder, name)
            if not name.endswith(".txt"):
                continue
            if file.is_symlink() and not _within(os.path.realpath(file), root):
                outside += 1
            elif file.is_file():
                files.append(file)
    return sorted(files), outside


def _read_folder(path, encoding):
    files, outside = _folder_files(path)
    if outside:
        print(
            f"topicfac: warning: skipped {outside} symbolic link(s) in {path} "
            "pointing out of the folder (a corpus folder reads only its own files)",
            file=sys.stderr,
        )
    if not files:
        raise _CorpusError(f"no .txt files in the folder {path}")
    relative = [p.relative_to(path) for p in files]
    docs = [_read_text(p, encoding) for p in files]
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


def _read_table(path, delimiter, text_column, label_column, encoding):
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    text = _read_text(path, encoding)
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
    columns = reader.fieldnames or []
    if not columns:
        raise _CorpusError(f"{path} is empty: expected a header row")
    _check_delimiter(path, text, delimiter, columns)
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


def _check_delimiter(path, text, delimiter, columns):
    """A header of one column that the other delimiter splits in several: the
    file is a TSV read as CSV (or the reverse), whose rows would be split at
    the wrong places."""
    if len(columns) != 1:
        return
    other, other_format = ("\t", "tsv") if delimiter == "," else (",", "csv")
    header = next(csv.reader(io.StringIO(text, newline=""), delimiter=other), [])
    if len(header) > 1:
        given = "csv" if delimiter == "," else "tsv"
        kind = "tab" if other == "\t" else "comma"
        raise _CorpusError(
            f"{path}: its header has one column with --format {given} but "
            f"{len(header)} {kind}-separated ones ({', '.join(header[:5])}); "
            f"pass --format {other_format}"
        )


def _read_lines(path, encoding):
    text = _read_text(path, encoding)
    docs = [line for line in text.splitlines() if line.strip()]
    if not docs:
        raise _CorpusError(f"{path} holds no documents (no non-empty line)")
    return _numbered_corpus(path, docs)


def _read_labeled_lines(path, encoding):
    labels, docs = [], []
    text = _read_text(path, encoding)
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


def _check_mat_file(path):
    """Our own one-line error for a file that is no MATLAB file SciPy reads."""
    try:
        with open(path, "rb") as fh:
            major, _ = scipy.io.matlab.matfile_version(fh)
    except Exception:
        raise _CorpusError(
            f"{path} is not a MATLAB .mat file (--format mat reads a matrix "
            "saved by MATLAB or scipy.io.savemat); check the path, or pass the "
            f"file's format with --format ({', '.join(FORMATS[1:])})"
        ) from None
    if major == 2:
        raise _CorpusError(
            f"{path} is a MATLAB v7.3 (HDF5) file, which SciPy cannot read; "
            "save it from MATLAB with save(..., '-v7')"
        )


def _read_mat(path):
    _check_mat_file(path)
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
    fmt = _detect_format(path, args.encoding) if args.format == "auto" else args.format
    if fmt in ("folder", "reuters") and not path.is_dir():
        raise _CorpusError(f"--format {fmt} needs a folder, but {path} is a file")
    if fmt not in ("folder", "reuters") and path.is_dir():
        raise _CorpusError(f"--format {fmt} needs a file, but {path} is a folder")
    if fmt == "folder":
        return _read_folder(path, args.encoding)
    if fmt in ("csv", "tsv"):
        delimiter = "," if fmt == "csv" else "\t"
        return _read_table(
            path, delimiter, args.text_column, args.label_column, args.encoding
        )
    if fmt == "lines":
        return _read_lines(path, args.encoding)
    if fmt == "labeled-lines":
        return _read_labeled_lines(path, args.encoding)
    if fmt == "mat":
        return _read_mat(path)
    return _read_reuters(path)


# ---------------------------------------------------------------- vocabulary
def _stop_words(args):
    """The stop words as a sorted list, or None."""
    words = args.stop_words
    if isinstance(words, str):  # the default, not parsed by argparse's type
        words = _stop_words_option(words)
    return None if words is None else sorted(words)


def _max_df(args, raw_text):
    if args.max_df is None:
        return DEFAULT_MAX_DF if raw_text else 1.0
    return args.max_df


def _vectorize(corpus, args):
    """Counts of the corpus, their terms, and what makes them from the input.

    The last is the fitted vectorizer for raw text; for a count matrix, a
    fitted column selection when the options drop columns, else None.
    """
    if corpus.docs is not None:
        vectorizer = CountVectorizer(
            stop_words=_stop_words(args),
            min_df=args.min_df,
            max_df=_max_df(args, raw_text=True),
            max_features=args.max_features,
            token_pattern=args.token_pattern,
        )
        try:
            X = vectorizer.fit_transform(corpus.docs)
        except ValueError as exc:
            raise _CorpusError(
                f"{corpus.name}: no term left to count ({exc}); check the input, "
                "or relax --stop-words / --min-df / --max-df / --token-pattern"
            ) from None
        vocabulary = np.asarray(vectorizer.get_feature_names_out(), dtype=object)
        return X.astype(np.float64).tocsr(), vocabulary, vectorizer
    X, vocabulary = corpus.X, corpus.vocabulary
    if vocabulary is None:
        vocabulary = np.asarray([f"term{j}" for j in range(X.shape[1])], dtype=object)
    keep = _column_filter(X, vocabulary, args)
    if keep is None:
        return X, vocabulary, None
    if not keep.any():
        raise _CorpusError(
            f"{corpus.name}: no term left after --stop-words / --min-df / "
            "--max-df / --max-features"
        )
    columns = ColumnTransformer(
        [("terms", "passthrough", np.flatnonzero(keep))], sparse_threshold=1.0
    ).fit(X)
    return sp.csr_matrix(columns.transform(X)), vocabulary[keep], columns


def _column_filter(X, vocabulary, args):
    """Columns of a count matrix kept by the vocabulary options, or None (all)."""
    n = X.shape[0]
    df = np.bincount(X.nonzero()[1], minlength=X.shape[1])
    keep = np.ones(X.shape[1], dtype=bool)
    low = args.min_df if isinstance(args.min_df, int) else args.min_df * n
    max_df = _max_df(args, raw_text=False)
    high = max_df if isinstance(max_df, int) else max_df * n
    keep &= (df >= low) & (df <= high)
    stop = _stop_words(args)
    if stop is not None:
        keep &= ~np.isin(vocabulary.astype(str), stop)
    if args.max_features is not None and keep.sum() > args.max_features:
        totals = np.asarray(X.sum(axis=0)).ravel()
        ranked = np.flatnonzero(keep)[np.argsort(-totals[keep], kind="stable")]
        keep = np.zeros_like(keep)
        keep[ranked[: args.max_features]] = True
    return None if keep.all() else keep


# ------------------------------------------------------------------ progress
class _ProgressBar:
    """A one-line progress bar on a stream, redrawn at most ten times a second.

    While the fit runs it shows the iterations counted out of their bound;
    ``close`` draws the final line: the same count and runs as the summary
    line after the fit, the bar full.
    """

    def __init__(self, label, total, stream, width=30):
        self.label, self.total, self.stream, self.width = label, total, stream, width
        self.count = 0
        self.start = time.perf_counter()
        self._drawn = -1.0

    def update(self, count):
        self.count = count
        now = time.perf_counter()
        if now - self._drawn >= 0.1:
            self._draw(now, f"{self.count}/{self.total} iterations")

    def _draw(self, now, text, done=None):
        self._drawn = now
        if done is None:
            done = min(self.count / self.total, 1.0) if self.total else 0.0
        filled = int(round(self.width * done))
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {text} {now - self.start:6.1f} s")
        self.stream.flush()

    def close(self, text):
        self._draw(time.perf_counter(), text, done=1.0)
        self.stream.write("\n")
        self.stream.flush()


def _runs(estimator):
    """The bound on the runs of the fit loop, each up to ``max_iter``.

    HybridNMFPLSI runs the loop once per phase (``2 * n_rounds``); the
    others once per start (``n_init``) and once per split-merge move (the
    fit kept then continues within its own ``max_iter``).
    """
    n_rounds = getattr(estimator, "n_rounds", None)
    if n_rounds:
        return 2 * n_rounds
    collapsed = getattr(estimator, "_collapsed", None)
    if collapsed is not None and collapsed():
        # LDAVI's CVB0: its starts of max_iter sweeps, then the kept start
        # runs on, to CVB0_SWEEPS * max_iter sweeps in all.
        from .estimators.lda import CVB0_STARTS, CVB0_SWEEPS

        return CVB0_STARTS * estimator.n_init + CVB0_SWEEPS - 1
    return getattr(estimator, "n_init", 1) + getattr(estimator, "split_merge", 0)


class _IterationCount:
    """The iterations and runs of the fit loop, counted by the fit callback.

    A run is counted when its first iteration is: a start, a split-merge
    trial, the kept fit's continuation, a phase of the hybrid.
    """

    def __init__(self, bar=None):
        self.count, self.runs, self.bar = 0, 0, None
        self.bar = bar

    def __call__(self, info):
        self.count += 1
        self.runs += info.iteration == 1
        if self.bar is not None:
            self.bar.update(self.count)

    def describe(self):
        runs = "run" if self.runs == 1 else "runs"
        return f"{self.count} iterations in {self.runs} {runs}"


@contextmanager
def _progress(estimator, enabled, stream):
    """Count the iterations while ``estimator`` fits; show a bar if ``enabled``.

    Every iteration of every run of the fit loop advances the count (an
    epoch for LDAVI); while fitting, the bar counts up to its bound, ``runs
    * max_iter`` (see :func:`_runs`); its last line gives the iterations and
    runs counted, the numbers of the summary line after the fit.
    SimplexPLSA's bar counts its PLSA step.
    """
    total = _runs(estimator) * (getattr(estimator, "max_iter", 0) or 0)
    bar = _ProgressBar(f"[{type(estimator).__name__}]", total, stream)
    counter = _IterationCount(bar if enabled else None)
    try:
        with fit_callback(counter):
            yield counter
    finally:
        if enabled:
            bar.close(counter.describe())


# ---------------------------------------------------------------------- run
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
    candidates = [k for k in AUTO_CANDIDATES if k < X.shape[0]] or [1]
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


def _corpus_input(corpus):
    """What the saved model takes: the raw documents, or the count matrix."""
    return corpus.docs if corpus.docs is not None else corpus.X


# ------------------------------------------------------------------ outputs
_OUTPUTS = (
    ("--doc-topics", "doc_topics"),
    ("--save-model", "save_model"),
    ("--report", "report"),
)
# What a spreadsheet takes for the start of a formula (OWASP's CSV injection
# list): a text cell starting so gets a leading single quote.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _csv_text(cell):
    """A text cell that a spreadsheet shows as text, never runs as a formula."""
    return "'" + cell if cell.startswith(_FORMULA_START) else cell


def _same_file(a, b):
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)  # hard links
    except OSError:
        return False


def _check_outputs(args):
    """Refuse, before any work, an output that would destroy data or fail late.

    An output must not be a symbolic link (existing or dangling), an input
    (the model of ``apply``, the corpus file or a file in the corpus
    folder) or another output; its folder must exist; it must not exist
    unless ``--force``.
    """
    outputs = [
        (flag, Path(getattr(args, dest)))
        for flag, dest in _OUTPUTS
        if getattr(args, dest, None)
    ]
    inputs = [
        (name, Path(value))
        for name, value in (
            ("MODEL", getattr(args, "model", None)),
            ("INPUT", args.input),
        )
        if value is not None
    ]
    for i, (flag, path) in enumerate(outputs):
        if path.is_symlink():
            raise _CorpusError(
                f"{flag} {path} is a symbolic link; outputs are never written "
                "through a link (give the path of the file itself)"
            )
        if not path.parent.is_dir():
            raise _CorpusError(
                f"{flag} {path}: no such folder {path.parent} (create it first)"
            )
        if path.is_dir():
            raise _CorpusError(f"{flag} {path} is a folder; give a file name")
        for name, source in inputs:
            if _same_file(path, source):
                raise _CorpusError(
                    f"{flag} {path} is the {name} file; an output never replaces "
                    "an input (give another file name)"
                )
            if source.is_dir() and _within(
                os.path.realpath(path), os.path.realpath(source)
            ):
                raise _CorpusError(
                    f"{flag} {path} lies in the corpus folder {source}; write "
                    "outputs outside it"
                )
        for other_flag, other in outputs[:i]:
            if _same_file(path, other):
                raise _CorpusError(
                    f"{other_flag} and {flag} are the same file {path}; give each "
                    "output its own file"
                )
        if path.exists() and not args.force:
            raise _CorpusError(f"{flag} {path} exists; pass --force to overwrite it")


def _new_file_mode():
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _write_atomically(path, write, force):
    """Make ``path`` by ``write(temporary)``, then rename it over ``path``.

    The temporary file is in the same folder (so the rename is atomic): an
    interrupted or failed write leaves ``path`` as it was and removes the
    temporary file.  A symbolic link at ``path`` is refused, never followed.
    """
    path = Path(path)
    if path.is_symlink() or (path.exists() and not force):
        raise _CorpusError(
            f"{path} appeared while fitting (or is a symbolic link); not replaced"
        )
    mode = path.stat().st_mode & 0o777 if path.exists() else _new_file_mode()
    fd, temporary = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".tmp", dir=path.parent
    )
    os.close(fd)
    try:
        write(temporary)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _write_csv(path, header, rows):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)


def _write_doc_topics(path, corpus, model, force):
    """The documents' ``P(z|d)`` from the model's public API, as CSV."""
    theta = document_topics(model, _corpus_input(corpus))
    ids = corpus.doc_ids or [str(i) for i in range(1, theta.shape[0] + 1)]
    header = ["document", *[f"topic{z}" for z in range(theta.shape[1])]]
    rows = (
        [_csv_text(doc_id), *[f"{v:.6g}" for v in row]]
        for doc_id, row in zip(ids, theta, strict=True)
    )
    _write_atomically(path, lambda file: _write_csv(file, header, rows), force)
    print(f"document-topic matrix written to {path}")
    return theta


def _fit(estimator, X, args):
    show = sys.stderr.isatty() if args.progress is None else args.progress
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with _progress(estimator, show and not args.verbose, sys.stderr) as counter:
            estimator.fit(X)
    for message in dict.fromkeys(str(w.message) for w in caught):
        print(f"topicfac: warning: {' '.join(message.split())}", file=sys.stderr)
    elapsed = time.perf_counter() - start
    max_iter = getattr(estimator, "max_iter", args.max_iter)
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


def _n_rows(data):
    return data.shape[0] if hasattr(data, "shape") else len(data)


def _quiet_closed_stdout():
    """Point stdout at the null device once its reader has gone (``| head``):
    Python's own flush at exit would otherwise fail again (see the Python
    docs' note on SIGPIPE)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _main(parser, command, argv):
    args = parser.parse_args(argv)
    try:
        status = command(args)
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        # The reader of our output closed it (e.g. `topicfac | head -2`): it
        # has what it wanted, so this is no error.
        _quiet_closed_stdout()
        return 0
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
        as one line on stderr).  ``["apply", MODEL, INPUT, ...]`` runs
        ``topicfac apply``.  Invalid arguments print a one-line error and
        raise :class:`SystemExit` with status 2.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["apply"]:
        return _main(_build_apply_parser(), _apply, argv[1:])
    return _main(_build_parser(), _run, argv)
