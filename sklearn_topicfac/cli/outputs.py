"""The outputs: checked before any work, each written atomically.

An output is never a symbolic link, an input, another output or anything
but a regular file (a device, a FIFO); its folder is proven writable; it is
written to a temporary file in its folder and renamed, so an interrupted run
leaves the old file intact.  The document-topic CSV protects its text cells
from being read as spreadsheet formulas.
"""

import csv
import os
import stat
import sys
import tempfile
from pathlib import Path

from ..inspection import document_topics
from .inputs import _corpus_input, _CorpusError, _within
from .options import _printable

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
    folder) or another output; its name must be one the file system can
    store; its folder must exist and be writable; what exists under its
    name must be a regular file (never a folder, device, FIFO or socket,
    even with ``--force``), and is replaced only with ``--force``.
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
        shown = _printable(str(path))
        _check_encodable(flag, path)
        if path.is_symlink():
            raise _CorpusError(
                f"{flag} {shown} is a symbolic link; outputs are never written "
                "through a link (give the path of the file itself)"
            )
        if not path.parent.is_dir():
            raise _CorpusError(
                f"{flag} {shown}: no such folder {_printable(str(path.parent))} "
                "(create it first)"
            )
        _check_replaceable(flag, path)
        for name, source in inputs:
            if _same_file(path, source):
                raise _CorpusError(
                    f"{flag} {shown} is the {name} file; an output never replaces "
                    "an input (give another file name)"
                )
            if source.is_dir() and _within(
                os.path.realpath(path), os.path.realpath(source)
            ):
                raise _CorpusError(
                    f"{flag} {shown} lies in the corpus folder "
                    f"{_printable(str(source))}; write outputs outside it"
                )
        for other_flag, other in outputs[:i]:
            if _same_file(path, other):
                raise _CorpusError(
                    f"{other_flag} and {flag} are the same file {shown}; give each "
                    "output its own file"
                )
        if path.exists() and not args.force:
            raise _CorpusError(f"{flag} {shown} exists; pass --force to overwrite it")
        _check_writable(flag, path)


def _check_encodable(flag, path):
    """A name the file system cannot store (a lone surrogate under UTF-8):
    refused here, where every later test of the path would quietly say it
    does not exist and the write after the fit would fail."""
    try:
        os.fsencode(path)
    except UnicodeEncodeError as exc:
        raise _CorpusError(
            f"{flag} {_printable(str(path))}: the file system cannot store this "
            f"name (character {_printable(exc.object[exc.start])} at position "
            f"{exc.start} is not valid {sys.getfilesystemencoding()}); give a "
            "name without it"
        ) from None


# What stands under an output's name that an output never replaces (the
# rename would put a regular file in place of a device node, say /dev/null).
_NOT_FILES = (
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
    (stat.S_ISFIFO, "FIFO (named pipe)"),
    (stat.S_ISSOCK, "socket"),
)


def _not_a_file(path):
    """What ``path`` is when it exists and is no regular file, else None."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISDIR(mode):
        return "folder"
    for test, kind in _NOT_FILES:
        if test(mode):
            return kind
    return None if stat.S_ISREG(mode) else "special file"


def _check_replaceable(flag, path):
    kind = _not_a_file(path)
    if kind == "folder":
        raise _CorpusError(
            f"{flag} {_printable(str(path))} is a folder; give a file name"
        )
    if kind is not None:
        raise _CorpusError(
            f"{flag} {_printable(str(path))} is a {kind}, not a regular file; an "
            "output replaces only a regular file, even with --force (give the "
            f"name of a file, or leave out {flag} to write nothing)"
        )


def _check_writable(flag, path):
    """The output's folder proven writable by making a file in it.

    ``os.access`` alone is not the proof: it says yes to root whatever the
    folder's permissions, and a folder can refuse new files for reasons it
    does not see (``/proc``, a network file system's server, a full quota).
    """
    folder = path.parent
    reason = None
    if not os.access(folder, os.W_OK):
        reason = "permission denied"
    else:
        try:
            with tempfile.NamedTemporaryFile(prefix=".topicfac.", dir=folder):
                pass
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
    if reason is not None:
        raise _CorpusError(
            f"{flag} {_printable(str(path))}: cannot write to the folder "
            f"{_printable(str(folder))} ({reason}); choose a folder you can "
            "write to, or make this one writable"
        )


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
    if (
        path.is_symlink()
        or (path.exists() and not force)
        or _not_a_file(path) is not None
    ):
        raise _CorpusError(
            f"{_printable(str(path))} appeared while fitting (or is a symbolic "
            "link, or no regular file); not replaced"
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
