"""Whether numba's cache on this machine holds every compiled twin: what lets
``backend="auto"`` run the twins without ever compiling them.

A first call of a twin compiles it (seconds per family; about 20 s for all
of them) unless numba's cache (``cache=True``) holds it.  ``backend="auto"``
must never make a fit slower than the NumPy kernels would have been, so it
runs the twins only once `sklearn_topicfac.compile_kernels` has compiled
them all into that cache and recorded it here: a small JSON file per
installed package (under ``$XDG_CACHE_HOME/sklearn-topicfac``, by default
``~/.cache/sklearn-topicfac``) that lists each twin's cache index and the
size and modification time of its source file.  `ready` trusts the record
only while every index is still there, no source file has changed (numba
would then recompile) and the Python and numba versions are the ones that
compiled; otherwise ``"auto"`` runs NumPy.  The record decides a backend
and nothing else: no kernel reads it, and a file that cannot be read or
does not have the expected form counts as no record.

This module does not import numba: `ready` costs a few ``stat`` calls, once
per process.
"""

import functools
import hashlib
import importlib.metadata
import json
import os
import sys
from pathlib import Path

_FORMAT = 1


def _cache_home():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache")
    return Path(base).expanduser() / "sklearn-topicfac"


def record_path():
    """The record's file for this installed package: one per package folder
    and numba cache folder (``NUMBA_CACHE_DIR``), which decide where numba
    keeps the twins."""
    package = Path(__file__).resolve().parent.parent
    key = f"{package}\0{os.environ.get('NUMBA_CACHE_DIR', '')}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return _cache_home() / f"compiled-twins-{digest}.json"


def _versions():
    try:
        numba = importlib.metadata.version("numba")
    except importlib.metadata.PackageNotFoundError:
        numba = None
    return {"python": sys.version.split()[0], "numba": numba}


def _source_stamp(path):
    st = os.stat(path)
    return [st.st_mtime, st.st_size]


def write_record(twin_files):
    """Record that numba's cache holds the twins: ``twin_files`` is a list of
    ``(index_file, source_file)`` pairs, one per twin, each index written
    by numba.  Returns the record's path."""
    record = {
        "format": _FORMAT,
        **_versions(),
        "twins": [
            {"index": str(index), "source": str(source), "stamp": _source_stamp(source)}
            for index, source in twin_files
        ],
    }
    path = record_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.partial")
    partial.write_text(json.dumps(record, indent=1))
    os.replace(partial, path)
    forget()
    return path


def _valid(record):
    if not isinstance(record, dict) or record.get("format") != _FORMAT:
        return False
    if any(record.get(name) != value for name, value in _versions().items()):
        return False
    twins = record.get("twins")
    if not isinstance(twins, list) or not twins:
        return False
    for twin in twins:
        if not (isinstance(twin, dict) and set(twin) == {"index", "source", "stamp"}):
            return False
        index, source, stamp = twin["index"], twin["source"], twin["stamp"]
        if not (isinstance(index, str) and isinstance(source, str)):
            return False
        try:
            if not os.path.isfile(index) or _source_stamp(source) != stamp:
                return False
        except (OSError, ValueError):
            return False
    return True


@functools.cache
def ready():
    """Whether the record says numba's cache holds every twin, as compiled
    from today's sources by today's Python and numba (read once per process;
    `write_record` and `forget` read it again)."""
    try:
        record = json.loads(record_path().read_text())
    except (OSError, ValueError):
        return False
    return _valid(record)


def forget():
    """Read the record again on the next `ready` (after a change on disk)."""
    ready.cache_clear()
