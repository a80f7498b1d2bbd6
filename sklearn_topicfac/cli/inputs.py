"""Reading INPUT: the corpus formats the command takes, each as a `_Corpus`.

The formats of `sklearn_topicfac.datasets` (MATLAB files, labeled lines,
Reuters-21578, the bundled Classic3) are read by its loaders; the formats
only a command line takes (a folder of files, CSV/TSV tables, one document
per line) are read here.  Every problem with the input is a `_CorpusError`:
one line on stderr, before any fit.
"""

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
from .options import FORMATS


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
