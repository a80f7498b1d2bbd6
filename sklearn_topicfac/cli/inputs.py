"""Reading INPUT: the corpus formats the command takes, each as a `_Corpus`.

The formats of `sklearn_topicfac.datasets` (MATLAB files, labeled lines,
Reuters-21578, the bundled Classic3) are read by its loaders; the formats
only a command line takes (a folder of files, CSV/TSV tables, one document
per line) are read here.  Every problem with the input is a `_CorpusError`:
one line on stderr, before any fit.
"""

import codecs
import csv
import io
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.io

from ..datasets import (
    _encode_labels,
    _labeled_lines,
    _reuters_documents,
    load_classic3,
    load_mat_corpus,
)
from .options import FORMATS, _printable


class _CorpusError(ValueError):
    """A problem with the user's input, reported as one line."""


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
        codes, names = _encode_labels(np.asarray(labels, dtype=object))
    ids = [str(i) for i in range(1, len(docs) + 1)]
    return _Corpus(f"{path}", docs=docs, labels=codes, label_names=names, doc_ids=ids)


# The byte-order mark, as decoded by any Unicode codec that does not drop it.
_BOM = "\ufeff"


def _read_text(path, encoding):
    """The text of a file; undecodable bytes are a one-line error, never lost.

    A leading byte-order mark is dropped: it marks the encoding (Excel and
    Notepad write one in front of UTF-8), it is not text, and left in it
    would be part of the first column's name of a table.
    """
    data = path.read_bytes()
    try:
        return data.decode(encoding).removeprefix(_BOM)
    except LookupError:
        raise _CorpusError(f"unknown --encoding {encoding!r}") from None
    except UnicodeDecodeError as exc:
        hint = "(e.g. --encoding latin-1)"
        if data.startswith(codecs.BOM_UTF8):
            hint = "(it starts with a UTF-8 byte-order mark: --encoding utf-8)"
        raise _CorpusError(
            f"{path}: byte {exc.object[exc.start]:#04x} at offset {exc.start} is "
            f"not valid {encoding}; pass the file's encoding with --encoding "
            f"{hint}"
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
            f"topicfac: warning: skipped {outside} symbolic link(s) in "
            f"{_printable(str(path))} "
            "pointing out of the folder (a corpus folder reads only its own files)",
            file=sys.stderr,
        )
    if not files:
        raise _CorpusError(f"no .txt files in the folder {path}")
    relative = [p.relative_to(path) for p in files]
    docs = [_read_text(p, encoding) for p in files]
    labels = label_names = None
    if all(len(r.parts) > 1 for r in relative):
        labels, label_names = _encode_labels(
            np.asarray([r.parts[0] for r in relative], dtype=object)
        )
    return _Corpus(
        f"{path}",
        docs=docs,
        labels=labels,
        label_names=label_names,
        doc_ids=[r.as_posix() for r in relative],
    )


def _column_list(columns):
    return ", ".join(_printable(c) for c in columns)


def _read_table(path, delimiter, text_column, label_column, encoding):
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    text = _read_text(path, encoding)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    columns = next(reader, [])
    if not columns:
        raise _CorpusError(f"{path} is empty: expected a header row")
    _check_utf8_bom(path, encoding, columns[0])
    _check_delimiter(path, text, delimiter, columns)
    _check_header(path, columns)
    if text_column is None:
        if "text" in columns:
            text_column = "text"
        elif len(columns) == 1:
            text_column = columns[0]
        else:
            raise _CorpusError(
                f"{path}: which column holds the text? pass --text-column "
                f"(columns: {_column_list(columns)})"
            )
    if label_column is None and "label" in columns and text_column != "label":
        label_column = "label"
    for role, column in (("text", text_column), ("label", label_column)):
        if column is not None and column not in columns:
            raise _CorpusError(
                f"{path} has no {role} column {column!r} "
                f"(columns: {_column_list(columns)})"
            )
    rows = _table_rows(path, reader, delimiter, columns)
    if not rows:
        raise _CorpusError(f"{path} holds no documents (only a header row)")
    text_index = columns.index(text_column)
    docs = [row[text_index] for row in rows]
    labels = None
    if label_column is not None:
        label_index = columns.index(label_column)
        labels = [row[label_index] for row in rows]
    return _numbered_corpus(path, docs, labels)


def _check_utf8_bom(path, encoding, first_column):
    """A UTF-8 byte-order mark read in another encoding (``ï»¿`` in latin-1)
    glues itself to the first column's name, which no --text-column or
    --label-column can then name."""
    try:
        misread = codecs.BOM_UTF8.decode(encoding, errors="replace")
    except LookupError:
        return
    if misread not in ("", _BOM) and first_column.startswith(misread):
        raise _CorpusError(
            f"{path} starts with a UTF-8 byte-order mark, so it is UTF-8, but "
            f"--encoding {encoding} reads the mark as part of the first column's "
            f"name {_printable(repr(first_column))}; pass --encoding utf-8"
        )


def _check_header(path, columns):
    """Two columns of one name: a row could only keep one of their cells."""
    seen = set()
    for column in columns:
        if column in seen:
            raise _CorpusError(
                f"{path}: the header names the column {_printable(repr(column))} "
                f"{columns.count(column)} times (columns: {_column_list(columns)}); "
                "give each column its own name"
            )
        seen.add(column)


def _table_rows(path, reader, delimiter, columns):
    """The rows after the header, each with one field per column.

    A row with more or fewer fields is refused, not padded or cut: its
    text would be another column's cell or lose the part after an
    unquoted delimiter.  Blank lines (and, in a table of several columns,
    lines of spaces) are skipped.
    """
    rows = []
    start = reader.line_num + 1  # the line the next record starts on
    try:
        for row in reader:
            if len(row) == 1 and not row[0].strip() and len(columns) > 1:
                row = []  # a line of spaces, blank to the eye
            if row and len(row) != len(columns):
                raise _CorpusError(
                    f"{path}: line {start} has {_count(len(row), 'field')} but "
                    f"the header has {_count(len(columns), 'column')} "
                    f"({_column_list(columns)}); give every row one field per "
                    f"column, {_ragged_hint(len(row) > len(columns), delimiter)}"
                )
            if row:
                rows.append(row)
            start = reader.line_num + 1
    except csv.Error as exc:
        raise _CorpusError(
            f"{path}: line {start} is not valid CSV ({exc}); check its quotes"
        ) from None
    return rows


def _count(n, noun):
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _ragged_hint(too_many, delimiter):
    """How a row gets more fields than columns (a delimiter in an unquoted
    cell), or fewer (an empty cell left out)."""
    kind = "comma" if delimiter == "," else "tab"
    if too_many:
        example = ' ("a, b")' if delimiter == "," else ""
        return f"and put a cell that holds a {kind} in double quotes{example}"
    return f"an empty cell as nothing between two {kind}s"


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
            f"{len(header)} {kind}-separated ones ({_column_list(header[:5])}); "
            f"pass --format {other_format}"
        )


def _read_lines(path, encoding):
    text = _read_text(path, encoding)
    docs = [line for line in text.splitlines() if line.strip()]
    if not docs:
        raise _CorpusError(f"{path} holds no documents (no non-empty line)")
    return _numbered_corpus(path, docs)


def _read_labeled_lines(path, encoding):
    labels, docs = _labeled_lines(_read_text(path, encoding), path)
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
    try:
        X, y, vocabulary, _ = load_mat_corpus(path)
    except ValueError as exc:  # the loader's message names the problem
        raise _CorpusError(str(exc)) from None
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
    docs, y, class_names = _reuters_documents(path, n_classes=10)
    return _Corpus(f"{path}", docs=docs, labels=y, label_names=class_names)


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


def _corpus_input(corpus):
    """What the saved model takes: the raw documents, or the count matrix."""
    return corpus.docs if corpus.docs is not None else corpus.X
