"""The command line's options and parsers: declared once, as a table.

The defaults of the text pipeline (``DEFAULT_MAX_DF``, ``TOKEN_PATTERN``),
the ``-k auto`` grid (``AUTO_CANDIDATES``, ``AUTO_FOLDS``), the input
formats, the argparse types that turn a bad value into a one-line error, and
the parsers of ``topicfac`` and ``topicfac apply``; `_printable`, which every
one-line error goes through.
"""

import argparse
from pathlib import Path

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from .. import __version__, estimators
from .._validation import printable as _printable


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
count matrix (mat, and the bundled corpus) --stop-words, --min-df, --max-df
(default 1.0 there) and --max-features drop columns.
The number of topics is by default the number of classes when the corpus has
labels, else by held-out likelihood.  The NPMI coherence of each topic and
the topic diversity are printed with the topics.  Each document is assigned to
its dominant topic (the argmax of P(z|d)); when the corpus has labels, the
clustering accuracy (best one-to-one matching of topics to labels), NMI and
ARI against them are printed, with the majority label of each topic.

To apply a saved model to new documents: topicfac apply MODEL INPUT
--doc-topics FILE (see topicfac apply --help).  With numba installed,
'topicfac compile' compiles the numba kernels once for this machine (see
topicfac compile --help).
"""

_APPLY_DESCRIPTION = """\
Apply a model saved by 'topicfac --save-model' to documents and write their
topic proportions P(z|d) as CSV, the same file 'topicfac --doc-topics' writes
for the same documents.  INPUT is read as by 'topicfac' (see topicfac --help).
"""

_APPLY_EPILOG = """\
MODEL is a skops file: loading it builds only the package's estimators, the
steps --save-model puts in front of them (a Pipeline, a CountVectorizer, a
column selection) and NumPy's and built-in types, and refuses a file naming
anything else (another scikit-learn estimator included), so a model file from
someone else cannot run code.  A pickle (joblib) file, as
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
refused unless --force, and --force replaces only a regular file (never a
device such as /dev/null, a FIFO or a folder); a symbolic link is refused;
every output's folder is proven writable before INPUT is read; and each file
is written to a temporary file in its folder and then renamed, so an
interrupted run leaves the old file intact.

exit status: 0 on success (also when the reader of the output stops early,
as in 'topicfac | head -2'), 1 on a bad input (unreadable path, empty corpus,
a delimiter that does not match --format, a table row with more or fewer
fields than its header, -k above the number of documents or terms, a fit
larger than the available memory), 2 on a bad command line.  Errors are one
line on stderr, with control characters (of a file name, say) escaped, and
input mistakes are caught before any fit.
"""


class _Parser(argparse.ArgumentParser):
    """Argument errors as a single line (no usage block), exit status 2."""

    def error(self, message):
        message = _printable(" ".join(message.split()))
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


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
        ("--stability",),
        dict(
            type=_positive_int,
            metavar="N",
            default=None,
            help="with --report: refit N times from other seeds and show each "
            "topic's stability, how closely the refits find it again (costs N "
            "more fits)",
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


def _add_common_tail(parser, group, force=True):
    if force:
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


_COMPILE_DESCRIPTION = """\
Compile the numba kernels once for this machine (about 20 s; needs numba:
pip install "sklearn-topicfac[fast]").  Until then the default backend
('auto') runs the NumPy kernels, never compiling on its own; from then on it
runs large fits on numba, in every process of this installation.  Run it
again after upgrading Python or numba.
"""


def _build_compile_parser():
    parser = _new_parser("topicfac compile", _COMPILE_DESCRIPTION, None)
    group = parser.add_argument_group("output")
    group.add_argument(
        "--quiet", action="store_true", help="print nothing unless it fails"
    )
    _add_common_tail(parser, group, force=False)
    return parser


def _version():
    return f"%(prog)s {__version__}"
