"""Saving fitted models to files that cannot run code, and loading them back.

A model file is a `skops <https://skops.readthedocs.io>`_ file: a zip
archive of the estimator's state as JSON and NumPy arrays.  Loading it
rebuilds only types on a trusted list -- the package's estimators (and the
small objects they hold), the scikit-learn steps ``topicfac --save-model``
puts in front of a model (``Pipeline``, ``CountVectorizer``, a column
selection) and NumPy's types -- and refuses a file that names any other
type, such as another scikit-learn estimator, before building anything.
A pickle (what ``joblib.dump`` writes, and what ``topicfac --save-model``
wrote before) can run any code while it is read, so it loads only when the
caller says it trusts the file (``trust_pickle=True``); pickles of models
saved before the package's modules were reorganized load too.
"""

import bz2
import gzip
import importlib.metadata
import inspect
import io
import json
import lzma
import os
import platform
import re
import stat
import warnings
import zipfile
import zlib
from numbers import Integral
from pathlib import Path

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from . import _config, estimators
from ._validation import printable
from ._version import __version__
from .estimators.simplex import SimplexPLSA
from .models.simplex import SimplexMap

__all__ = ["load", "read_stamp", "save", "stamp"]

# The package version that wrote a model file, stored beside skops' own
# entries (skops ignores it).
_VERSION_ENTRY = "sklearn_topicfac.json"

# The modules of the estimators before the package was reorganized into
# kernels/models/engine/estimators: pickles made then name these.
_MOVED_MODULES = {
    f"sklearn_topicfac._{name}": f"sklearn_topicfac.estimators.{name}"
    for name in ("hybrid", "joint", "klnmf", "lda", "plsi", "simplex")
}
# What the parameters added since then were, in effect, for those models:
# one start and no split-merge moves; SimplexPLSA's PLSA step on points of
# mass one; LDAVI's mean-field VB.
_LEGACY_PARAMETERS = {"n_init": 1, "split_merge": 0, "inner_model": None}
_LEGACY_PARAMETERS["inference"] = "vb"
_LEGACY_PARAMETERS["point_mass"] = 1.0
# A parameter whose value, for the files that predate it, was another
# parameter's: before transform_tol, the fold-in of new documents stopped by
# the fit's tol.
_LEGACY_COPIES = {"transform_tol": "tol"}
# The solver of the files that predate the parameter, per class: the updates
# those versions ran (a refit of a loaded model runs them again).
_LEGACY_SOLVERS = {
    "KLNMF": {"solver": "mu"},
    "NormalizedNMF": {"solver": "mu"},
    "PLSI": {"solver": "em"},
    "HybridNMFPLSI": {"nmf_solver": "mu", "plsi_solver": "em"},
}


def _legacy_inference(cls, state):
    """The inference a fitted LDAVI file without ``inference_`` ran, when
    its ``inference="auto"`` meant something else then: the files written
    before ``inference_`` existed (commits f8a9f33 to 4fe966e) ran CVB0 in
    batch learning with a topic-word prior, where ``"auto"`` is now MAP;
    a model learned by ``partial_fit``, which wrote no ``inference_`` until
    it recorded ``"vb"``, ran online VB.  ``None`` for every other file
    (its parameter says what it ran)."""
    if not issubclass(cls, estimators.LDAVI) or "inference_" in state:
        return None
    if "components_" not in state or state.get("inference") != "auto":
        return None
    batch = state.get("learning_method", "batch") == "batch"
    prior = state.get("topic_word_prior", "auto") is not None
    # partial_fit (which leaves n_iter_ at 0) ran online VB.
    online = state.get("n_iter_") == 0
    return "cvb0" if batch and prior and not online else "vb"


# SimplexPLSA then kept its map onto the simplex in private attributes.
_LEGACY_SIMPLEX_MAP = {
    "_exponent": "exponent",
    "_mean": "mean",
    "_singular_values": "singular_values",
    "_axes": "axes",
    "_rotation": "rotation",
    "_b_mean": "b_mean",
    "_low": "low",
    "_scale": "scale",
}

_ZIP_MAGIC = b"PK\x03\x04"
# First bytes of a pickle (protocol 2 and later) and of the compressed
# files joblib writes, with how to open each.
_PICKLE_OPENERS = (
    (b"\x80", lambda data: data),
    (b"\x1f\x8b", gzip.decompress),
    (b"BZh", bz2.decompress),
    (b"\xfd7zXZ", lzma.decompress),
    (b"]\x00\x00", lzma.decompress),
    *((b"x" + level, zlib.decompress) for level in (b"\x01", b"^", b"\x9c", b"\xda")),
)


_PACKAGE = "sklearn_topicfac."
# Every type a model file of the package holds, and nothing else: the
# package's estimators, what topicfac --save-model puts in front of them
# (checked setting by setting in `_check_loaded`), NumPy's arrays and the
# scalar types of their dtypes, Python's containers.
_TRUSTED = frozenset(
    [
        *(
            f"{cls.__module__}.{cls.__qualname__}"
            for cls in (*map(estimators.__dict__.get, estimators.__all__), SimplexMap)
        ),
        "sklearn.pipeline.Pipeline",
        "sklearn.feature_extraction.text.CountVectorizer",
        "sklearn.compose._column_transformer.ColumnTransformer",
        "sklearn.preprocessing._function_transformer.FunctionTransformer",
        "numpy.ndarray",
        "numpy.random.mtrand.RandomState",
        *(
            f"numpy.{name}"
            for name in (
                "int8 int16 int32 int64 uint8 uint16 uint32 uint64 "
                "float16 float32 float64 bool_ bool"
            ).split()
        ),
        *(
            f"builtins.{name}"
            for name in "dict list tuple str int float bool NoneType slice".split()
        ),
    ]
)
# The kinds of skops node those types are written as; a function, method or
# operator node is never in a model file.
_LOADERS = frozenset(
    "ObjectNode DictNode ListNode TupleNode JsonNode TypeNode NdArrayNode "
    "RandomStateNode SliceNode".split()
)
# A model file nests about 20 levels; skops rebuilds objects recursively.
_MAX_DEPTH = 64
# load(max_size="auto"): what the members may inflate to.
_MIN_SIZE_CAP = 64 * 2**20
_SIZE_RATIO = 20
# Parameters that set how long a fit or a fold-in runs: a file may set them
# up to this, beyond which apply would run for hours.
_ITERATION_PARAMETERS = (
    "max_iter",
    "max_doc_update_iter",
    "n_init",
    "n_rounds",
    "split_merge",
)
_MAX_ITERATIONS = 100_000


def save(estimator, path):
    """Write a fitted estimator (or a pipeline ending in one) to a model file.

    The file is a skops file, which :func:`load` reads back without running
    code from the file.  :func:`load` builds only the package's estimators
    and the steps ``topicfac --save-model`` puts in front of them (a
    ``Pipeline``, a ``CountVectorizer``, a column selection): a pipeline
    with other steps (a ``TfidfTransformer``, say) is written but refused
    when loaded.  It also records the version of sklearn-topicfac
    that wrote it and the model's :func:`stamp` (:func:`read_stamp` reads
    it back).

    Parameters
    ----------
    estimator : estimator or Pipeline
        What to save, typically fitted.
    path : str or path-like
        The file to write (overwritten if it exists).

    Returns
    -------
    path : pathlib.Path
        The file written.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import numpy as np
    >>> from sklearn_topicfac import PLSI, load, save
    >>> X = np.random.default_rng(0).poisson(1.0, size=(20, 6))
    >>> model = PLSI(n_components=2, random_state=0).fit(X)
    >>> path = save(model, pathlib.Path(tempfile.mkdtemp()) / "plsi.skops")
    >>> np.array_equal(load(path).transform(X), model.transform(X))
    True
    """
    import skops.io

    buffer = io.BytesIO()
    skops.io.dump(estimator, buffer)
    entry = {"version": __version__, "stamp": stamp(estimator)}
    with zipfile.ZipFile(buffer, "a") as archive:
        archive.writestr(_VERSION_ENTRY, json.dumps(entry))
    path = Path(path)
    path.write_bytes(buffer.getvalue())
    return path


def stamp(model):
    """What produced a fitted model: enough to tell two results apart.

    Parameters
    ----------
    model : fitted estimator, or Pipeline ending in one

    Returns
    -------
    stamp : dict
        ``estimator`` (its class), ``parameters`` (``get_params()``, each
        value's ``repr``), ``data_fingerprint`` (a SHA-256 prefix of the
        matrix it was fitted on, in memory; None block by block), the
        versions of the package, Python and its numerical dependencies, and
        the backend setting.  JSON-serializable.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac import PLSI
    >>> from sklearn_topicfac.persistence import stamp
    >>> X = np.random.default_rng(0).poisson(1.0, size=(20, 6))
    >>> s = stamp(PLSI(n_components=2, random_state=0).fit(X))
    >>> s["estimator"], len(s["data_fingerprint"]), "numpy" in s["versions"]
    ('PLSI', 16, True)
    """
    last = model[-1] if isinstance(model, Pipeline) else model
    return {
        "estimator": type(last).__name__,
        "parameters": {k: repr(v) for k, v in sorted(last.get_params().items())},
        "data_fingerprint": getattr(last, "data_fingerprint_", None),
        **_environment(),
    }


def _environment():
    """The versions and settings a result depends on: the package, Python,
    its numerical dependencies (numba when installed) and the backend."""
    versions = {"sklearn-topicfac": __version__, "python": platform.python_version()}
    for name in ("numpy", "scipy", "scikit-learn", "joblib", "skops", "numba"):
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return {
        "versions": versions,
        "backend": _config.get_config()["backend"],
        "machine": platform.machine(),
    }


def read_stamp(path):
    """The :func:`stamp` a model file records, without loading the model.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save`.

    Returns
    -------
    stamp : dict or None
        None for a file that records none (written before stamps were).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import numpy as np
    >>> from sklearn_topicfac import KLNMF, save
    >>> from sklearn_topicfac.persistence import read_stamp
    >>> X = np.random.default_rng(0).poisson(1.0, size=(20, 6))
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> path = save(KLNMF(2, random_state=0).fit(X), folder / "m.skops")
    >>> read_stamp(path)["estimator"]
    'KLNMF'
    """
    path = Path(path)
    data = _read_regular_file(path, printable(path))
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            info = archive.getinfo(_VERSION_ENTRY)
            if info.file_size > 2**20:
                raise ValueError(f"{printable(path)}: its stamp is too large.")
            entry = json.loads(archive.read(info))
    except KeyError:
        return None
    except (zipfile.BadZipFile, ValueError, RecursionError) as exc:
        raise ValueError(f"{printable(path)} is not a model file ({exc}).") from exc
    found = entry.get("stamp") if isinstance(entry, dict) else None
    return found if isinstance(found, dict) else None


def load(path, *, trust_pickle=False, max_size="auto"):
    """Read a model written by :func:`save` or ``topicfac --save-model``.

    A model file may come from anyone, so nothing in it is trusted until it
    has been checked, in this order:

    1. **The file.**  It must be a regular file (a FIFO, device or folder is
       refused before it is opened for reading), a skops file, and its
       members may not inflate beyond ``max_size`` bytes nor nest deeper
       than 64 levels.
    2. **Its types.**  Every object it names must be one a model file of the
       package holds: the package's estimators, a scikit-learn ``Pipeline``,
       ``CountVectorizer``, ``ColumnTransformer`` or ``FunctionTransformer``
       (what ``topicfac --save-model`` puts in front of the model), NumPy
       arrays and scalar types, and Python's containers.  Otherwise
       nothing is built and a ``ValueError`` names the types.
    3. **Their settings.**  A pipeline caches nothing (``memory=None``); a
       vectorizer reads the documents it is given, not files they name
       (``input="content"``), with no callables and a vocabulary whose
       columns are ``0 .. V-1``; a column selector only passes columns
       through; each step's input width is the previous step's output.
    4. **The model.**  Its parameters pass the checks ``fit`` makes (an
       iteration count above 100,000 is refused too: set it after loading
       if you mean it), and every fitted attribute has the shape, dtype and
       values a fit gives it (finite, non-negative where it must be, one
       prior per topic, ``components_`` of ``n_features_in_`` columns).

    Parameters a file saved by an older version lacks get a value under
    which the model transforms, scores and refits as it did (one start, no
    split-merge moves, LDAVI's mean-field VB, and a ``solver`` the file
    lacks is the multiplicative (KLNMF, NormalizedNMF) or EM (PLSI) updates
    that version ran, the hybrid's phases likewise).  A file saved by a
    newer version loads with a warning naming both versions; a class that
    has moved since (module renamed) is found under its new name.  A pickle
    (``joblib.dump``, or ``topicfac --save-model`` before it wrote skops
    files) is refused unless ``trust_pickle=True``: reading a pickle can run
    any code it contains.

    Parameters
    ----------
    path : str or path-like
        The model file.
    trust_pickle : bool, default=False
        Also load a pickle (or joblib) file.  Only for files from a source
        you trust.  Pickles of models saved before the package's modules
        were reorganized (e.g. naming ``sklearn_topicfac._klnmf``) load too.
    max_size : int or "auto", default="auto"
        The most bytes the file's members may inflate to: ``"auto"`` is 64
        MiB plus 20 times the file's size (:func:`save` writes its arrays
        uncompressed, about the file's size).

    Returns
    -------
    model : estimator or Pipeline
        The saved object.

    Raises
    ------
    ValueError
        The file is not a regular file, holds untrusted types or settings,
        inconsistent fitted state, inflates beyond ``max_size``, nests too
        deeply, is a pickle and ``trust_pickle`` is False, is neither a
        skops file nor a pickle, or names classes this version of
        sklearn-topicfac does not have (the message gives the version that
        saved it, when recorded, and the installed one).  Control
        characters from the file are escaped in the message.
    FileNotFoundError
        There is no such file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import numpy as np
    >>> from sklearn_topicfac import KLNMF, load, save
    >>> X = np.random.default_rng(0).poisson(1.0, size=(20, 6))
    >>> model = KLNMF(n_components=2, random_state=0).fit(X)
    >>> path = save(model, pathlib.Path(tempfile.mkdtemp()) / "klnmf.skops")
    >>> load(path).components_.shape
    (2, 6)
    """
    path = Path(path)
    shown = printable(path)
    data = _read_regular_file(path, shown)
    if data.startswith(_ZIP_MAGIC):
        return _load_skops(data, shown, max_size)
    opener = next((op for magic, op in _PICKLE_OPENERS if data.startswith(magic)), None)
    if opener is None:
        raise ValueError(
            f"{shown} is not a model file: neither a skops file (what "
            "sklearn_topicfac.save and topicfac --save-model write) nor a pickle."
        )
    if not trust_pickle:
        raise ValueError(
            f"{shown} is a pickle (joblib) file, not a skops file: loading a pickle "
            "can run any code it contains, so it is loaded only when you trust "
            "where it came from (load(..., trust_pickle=True), or topicfac apply "
            "--trust-pickle)."
        )
    return _load_pickle(path, opener)


def _read_regular_file(path, shown):
    """The bytes of ``path``, refused unless it is a regular file.

    Opened without blocking (a FIFO would otherwise wait for a writer
    forever) and checked on the open descriptor, so that what is read is
    what was checked.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except IsADirectoryError as exc:
        raise ValueError(f"{shown} is a folder, not a model file.") from exc
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = (
                "a folder"
                if stat.S_ISDIR(mode)
                else "a FIFO (named pipe)"
                if stat.S_ISFIFO(mode)
                else "a device"
                if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "a socket"
                if stat.S_ISSOCK(mode)
                else "not a regular file"
            )
            raise ValueError(f"{shown} is {kind}, not a model file.")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as fh:
            fd = None
            return fh.read()
    finally:
        if fd is not None:
            os.close(fd)


def _saved_by(archive):
    try:
        version = json.loads(archive.read(_VERSION_ENTRY))["version"]
    except (KeyError, ValueError, TypeError, RecursionError, zipfile.BadZipFile):
        return None
    return version if isinstance(version, str) else None


def _load_skops(data, shown, max_size):
    import skops.io

    archive, schema, saved_by = _open_archive(data, shown, max_size)
    _check_newer(shown, saved_by)
    moved = _map_moved_modules(schema)
    names = _schema_types(schema, shown)
    foreign = sorted(n for n in names - _TRUSTED if not n.startswith(_PACKAGE))
    if foreign:
        raise ValueError(
            f"{shown} holds types a model file of sklearn-topicfac never holds, so "
            f"it was not loaded: {printable(', '.join(foreign))}."
        )
    missing = sorted(names - _TRUSTED)
    if missing:
        # Classes of the package this version does not have (under that name).
        raise ValueError(
            _version_message(shown, saved_by, f"no class {', '.join(missing)}")
        )
    if moved:
        data = _with_schema(archive, schema)
    try:
        untrusted = set(skops.io.get_untrusted_types(data=data))
        if untrusted - _TRUSTED:
            raise ValueError(
                f"{shown} holds types a model file of sklearn-topicfac never "
                f"holds: {printable(', '.join(sorted(untrusted - _TRUSTED)))}."
            )
        obj = skops.io.load(io.BytesIO(data), trusted=sorted(names))
    except ValueError:
        raise
    except (ImportError, AttributeError) as exc:
        raise ValueError(_version_message(shown, saved_by, exc)) from exc
    except (Exception, RecursionError) as exc:
        raise ValueError(
            f"{shown} is not a readable skops file "
            f"({type(exc).__name__}: {printable(exc)})."
        ) from exc
    _upgrade_parameters(obj)
    _check_loaded(obj, shown)
    return obj


def _open_archive(data, shown, max_size):
    """The archive, its schema (checked for size and depth) and its version."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise ValueError(f"{shown} is not a readable skops file ({exc}).") from exc
    limit = _MIN_SIZE_CAP + _SIZE_RATIO * len(data) if max_size == "auto" else max_size
    if not isinstance(limit, Integral) or limit < 0:
        raise ValueError(
            f"max_size must be a non-negative integer or 'auto', not {max_size!r}"
        )
    inflated = sum(member.file_size for member in members)
    if inflated > limit:
        raise ValueError(
            f"{shown} would inflate to {inflated:,} bytes, more than the {limit:,} "
            f"allowed for a file of {len(data):,} bytes; if you trust it, pass "
            "load(..., max_size=N) with a larger N."
        )
    names = [member.filename for member in members]
    if len(set(names)) != len(names):
        raise ValueError(f"{shown} holds two members of the same name; not loaded.")
    try:
        # zipfile reads no more than a member's declared size.
        schema = json.loads(archive.read("schema.json"))
    except KeyError as exc:
        raise ValueError(f"{shown} is not a skops file: it has no schema.") from exc
    except RecursionError as exc:
        raise ValueError(f"{shown} nests deeper than a model file does.") from exc
    except (ValueError, zipfile.BadZipFile, OSError, EOFError) as exc:
        raise ValueError(
            f"{shown} is not a readable skops file ({printable(exc)})."
        ) from exc
    if _depth(schema) > _MAX_DEPTH:
        raise ValueError(
            f"{shown} nests deeper than {_MAX_DEPTH} levels; a model file of "
            "sklearn-topicfac nests about 20. Not loaded."
        )
    return archive, schema, _saved_by(archive)


def _depth(node):
    """How deeply ``node`` nests (without recursion: the file sets it)."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > _MAX_DEPTH:
            break
        children = node.values() if isinstance(node, dict) else node
        if isinstance(node, dict | list):
            stack.extend((child, depth + 1) for child in children)
    return deepest


def _nodes(schema):
    """Every node (a dict with ``__class__``) of a depth-checked schema."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "__class__" in node:
                yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _schema_types(schema, shown):
    """The ``module.class`` names of a schema; its node kinds checked."""
    names = set()
    for node in _nodes(schema):
        loader = node.get("__loader__")
        if loader not in _LOADERS:
            raise ValueError(
                f"{shown} holds a {printable(loader)!s} node, which a model file of "
                "sklearn-topicfac never holds; not loaded."
            )
        module, cls = node.get("__module__"), node.get("__class__")
        if not (isinstance(module, str) and isinstance(cls, str)):
            raise ValueError(f"{shown} names a type without a module; not loaded.")
        names.add(f"{module}.{cls}")
    return names


def _map_moved_modules(schema):
    """Rename, in place, the modules of classes that have moved since the
    file was written (`_MOVED_MODULES`); whether any was renamed."""
    moved = False
    for node in _nodes(schema):
        module = node.get("__module__")
        if module in _MOVED_MODULES:
            node["__module__"] = _MOVED_MODULES[module]
            moved = True
    return moved


def _with_schema(archive, schema):
    """The archive's bytes with ``schema.json`` replaced."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        for member in archive.infolist():
            content = (
                json.dumps(schema).encode()
                if member.filename == "schema.json"
                else archive.read(member)
            )
            out.writestr(member.filename, content)
    return buffer.getvalue()


# A version as this package writes them (PEP 440's release, pre-release,
# post- and development parts; no epoch or local part).
_VERSION = re.compile(
    r"(?P<release>\d+(?:\.\d+)*)"
    r"(?:(?P<pre>a|b|rc)(?P<pre_n>\d+))?"
    r"(?:\.post(?P<post>\d+))?"
    r"(?:\.dev(?P<dev>\d+))?"
)


def _version_key(version):
    """A sort key of a version string, ``None`` for one not understood.

    Orders as PEP 440 does for the versions this package writes: a
    development release before its pre-releases, these before the final
    release, and that before its post-releases.

    >>> _version_key("0.1.0.dev0") < _version_key("0.1.0rc1") < _version_key("0.1")
    True
    >>> _version_key("0.1.0") < _version_key("0.1.0.post1") < _version_key("0.10")
    True
    >>> _version_key("not a version") is None
    True
    """
    match = _VERSION.fullmatch(str(version).strip().lower().lstrip("v"))
    if match is None:
        return None
    release = [int(part) for part in match["release"].split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    stages = {"a": 0, "b": 1, "rc": 2}
    if match["pre"]:
        pre = (stages[match["pre"]], int(match["pre_n"]))
    elif match["dev"] and not match["post"]:
        pre = (-1, 0)  # a development release precedes the pre-releases
    else:
        pre = (3, 0)
    post = int(match["post"]) if match["post"] else -1
    dev = int(match["dev"]) if match["dev"] else float("inf")
    return (tuple(release), pre, post, dev)


def _check_newer(shown, saved_by):
    if saved_by is None:
        return
    saved, installed = _version_key(saved_by), _version_key(__version__)
    newer = saved is not None and installed is not None and saved > installed
    if newer:
        warnings.warn(
            f"{shown} was saved by sklearn-topicfac {printable(saved_by)}, newer "
            f"than the installed {__version__}: it loaded, but may hold settings "
            "this version reads differently; upgrade sklearn-topicfac to be sure.",
            UserWarning,
            stacklevel=3,
        )


def _version_message(shown, saved_by, exc):
    saved = (
        f"sklearn-topicfac {printable(saved_by)}"
        if saved_by
        else "a sklearn-topicfac whose version it does not record"
    )
    return (
        f"{shown} was saved by {saved}, and names a class the installed "
        f"sklearn-topicfac {__version__} does not have ({printable(exc)}); load it "
        "with the version that saved it, or fit the model again."
    )


def _estimators_in(obj):
    """The package's estimators ``obj`` is or holds (pipeline steps, inner
    models), outermost first."""
    found, stack = [], [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, Pipeline):
            steps = item.__dict__.get("steps")
            if isinstance(steps, list):
                stack.extend(
                    step[1] for step in reversed(steps) if isinstance(step, tuple)
                )
        elif isinstance(item, estimators.TopicEstimator):
            found.append(item)
            stack.extend(
                value
                for name in ("inner_model", "plsa_")
                if isinstance(
                    value := item.__dict__.get(name), estimators.TopicEstimator
                )
            )
    return found


def _upgrade_parameters(obj):
    """Give each estimator the parameters added since its file was written:
    the value that keeps the old behaviour (`_upgraded_state`)."""
    for estimator in _estimators_in(obj):
        vars(estimator).update(_upgraded_state(type(estimator), dict(vars(estimator))))


def _refuse(shown, what, problem, fix):
    raise ValueError(f"{shown}: {what} {problem}; {fix}. Not loaded.")


def _check_loaded(obj, shown):
    """Check what a skops file built, before anything uses it (see `load`)."""
    if isinstance(obj, Pipeline):
        _check_pipeline(obj, shown)
    elif isinstance(obj, estimators.TopicEstimator):
        _check_estimator(obj, shown)
    else:
        _refuse(
            shown,
            f"the file holds a {type(obj).__name__}",
            "not a model",
            "a model file holds an estimator of the package or a Pipeline ending "
            "in one",
        )


def _check_pipeline(pipeline, shown):
    settings = vars(pipeline)
    if settings.get("memory") is not None:
        _refuse(
            shown,
            "the pipeline's memory",
            "names a cache folder, whose files a refit would read as pickles",
            "a saved pipeline has memory=None",
        )
    if settings.get("transform_input") is not None:
        _refuse(shown, "the pipeline's transform_input", "is set", "it must be None")
    steps = settings.get("steps")
    if not (
        isinstance(steps, list)
        and steps
        and all(
            isinstance(step, tuple) and len(step) == 2 and isinstance(step[0], str)
            for step in steps
        )
    ):
        _refuse(shown, "the pipeline's steps", "are malformed", "refit and save it")
    *heads, (_, last) = steps
    if not isinstance(last, estimators.TopicEstimator):
        _refuse(
            shown,
            "the pipeline",
            f"ends in a {type(last).__name__}",
            "a model file's pipeline ends in an estimator of the package",
        )
    width = None
    for name, step in heads:
        what = f"step {printable(name)!r} ({type(step).__name__})"
        if isinstance(step, CountVectorizer):
            width = _check_vectorizer(step, shown, what)
        elif isinstance(step, ColumnTransformer):
            width = _check_column_selector(step, shown, what, width)
        else:
            _refuse(
                shown,
                what,
                "is not a step topicfac --save-model writes",
                "a model file's pipeline is a CountVectorizer or a column "
                "selector followed by the model",
            )
    _check_estimator(last, shown)
    if width is not None and hasattr(last, "n_features_in_"):
        if width != last.n_features_in_:
            _refuse(
                shown,
                "the pipeline",
                f"gives the model {width} columns where it was fitted on "
                f"{last.n_features_in_}",
                "refit and save it",
            )


def _check_vectorizer(vectorizer, shown, what):
    """A vectorizer that reads its documents, runs no code, and whose
    vocabulary numbers the columns 0 .. V-1; its width."""
    settings = vars(vectorizer)
    if settings.get("input") != "content":
        _refuse(
            shown,
            f"{what} input={printable(settings.get('input'))!r}",
            "would open the files or URLs the documents name",
            "a saved vectorizer has input='content'",
        )
    for name in ("preprocessor", "tokenizer"):
        if settings.get(name) is not None:
            _refuse(shown, f"{what} {name}", "is set", "a saved vectorizer has None")
    if settings.get("analyzer") not in ("word", "char", "char_wb"):
        _refuse(
            shown,
            f"{what} analyzer",
            "is not 'word', 'char' or 'char_wb'",
            "a saved vectorizer uses one of those",
        )
    pattern = settings.get("token_pattern")
    if pattern is not None and not (
        isinstance(pattern, str) and _safe_pattern(pattern)
    ):
        _refuse(
            shown,
            f"{what} token_pattern {printable(pattern)!r}",
            "repeats a repeated group (it could take hours on one document)",
            "use a pattern without nested repetition",
        )
    try:
        vectorizer._validate_params()
    except ValueError as exc:
        _refuse(shown, what, f"has an invalid setting ({printable(exc)})", "refit it")
    vocabulary = settings.get("vocabulary_")
    if vocabulary is None:
        return None
    columns = list(vocabulary.values()) if isinstance(vocabulary, dict) else None
    if (
        columns is None
        or not all(isinstance(term, str) for term in vocabulary)
        or not all(isinstance(j, Integral) for j in columns)
        or sorted(int(j) for j in columns) != list(range(len(columns)))
    ):
        _refuse(
            shown,
            f"{what} vocabulary_",
            "does not number its terms 0 .. V-1",
            "refit and save the pipeline",
        )
    return len(columns)


def _safe_pattern(pattern):
    """Whether a regular expression has no repeated group holding a repeat:
    the shape ((a+)+, (a|a)*...) whose backtracking grows exponentially."""
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    # Repeats inside a group that is itself repeated.
    return re.search(r"\((?:[^()\\]|\\.)*[*+}](?:[^()\\]|\\.)*\)[*+{]", pattern) is None


def _check_column_selector(selector, shown, what, width):
    """A ColumnTransformer that only passes columns through (what the CLI
    saves in front of a count matrix's model); its width."""
    settings = vars(selector)
    fitted = settings.get("transformers_", settings.get("transformers"))
    n_in = settings.get("n_features_in_", width)
    ok = isinstance(fitted, list) and settings.get("remainder") in ("drop", None)
    kept = 0
    for entry in fitted if ok else ():
        if not (isinstance(entry, tuple) and len(entry) == 3):
            ok = False
            break
        _, transformer, columns = entry
        if isinstance(transformer, FunctionTransformer):
            identity = all(
                vars(transformer).get(name) is None
                for name in ("func", "inverse_func", "kw_args", "inv_kw_args")
            )
            ok = ok and identity
        elif transformer not in ("passthrough", "drop"):
            ok = False
        columns = np.asarray(columns)
        if transformer == "drop":
            continue
        if columns.dtype.kind not in "iu" or (
            columns.size
            and not (
                isinstance(n_in, Integral)
                and columns.min() >= 0
                and columns.max() < n_in
            )
        ):
            ok = False
        kept += columns.size
    if not ok:
        _refuse(
            shown,
            what,
            "does more than pass columns through",
            "a model file's column selector only keeps columns",
        )
    return kept


def _check_estimator(estimator, shown):
    """The parameters ``fit`` accepts, the iteration caps, the fitted state."""
    name = type(estimator).__name__
    try:
        estimator._validate_params()
        for parameter in _ITERATION_PARAMETERS:
            value = vars(estimator).get(parameter)
            if isinstance(value, Integral) and value > _MAX_ITERATIONS:
                raise ValueError(
                    f"{parameter}={value} is above the {_MAX_ITERATIONS:,} a model "
                    "file may set (set it with set_params after loading if you mean "
                    "it)"
                )
        estimators.check_fitted_state(estimator)
    except ValueError as exc:
        raise ValueError(
            f"{shown}: the {name} it holds is refused: {printable(exc)}"
        ) from exc


def _load_pickle(path, opener):
    from joblib.numpy_pickle import NumpyUnpickler

    try:
        data = opener(path.read_bytes())
    except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError) as exc:
        raise ValueError(f"{path} is not a readable pickle ({exc}).") from exc
    # NumpyUnpickler reads both plain pickles and joblib's (arrays inline).
    extra = {}
    if "ensure_native_byte_order" in inspect.signature(NumpyUnpickler).parameters:
        extra["ensure_native_byte_order"] = True

    class Unpickler(NumpyUnpickler):
        def find_class(self, module, name):
            if module in _MOVED_MODULES:
                return _legacy_class(super().find_class(_MOVED_MODULES[module], name))
            return super().find_class(module, name)

    try:
        return Unpickler(str(path), io.BytesIO(data), **extra).load()
    except (ImportError, AttributeError) as exc:
        raise ValueError(_version_message(printable(path), None, exc)) from exc
    except Exception as exc:
        raise ValueError(f"{path} is not a readable pickle ({exc}).") from exc


_LEGACY_CLASSES = {}


def _legacy_class(cls):
    """``cls``, rebuilt from the state a model saved before the reorganization had.

    The unpickler creates the object as this subclass, whose
    ``__setstate__`` brings the old state up to date and makes the object
    a plain ``cls``.
    """
    if cls not in _LEGACY_CLASSES:

        def __setstate__(self, state):
            self.__class__ = cls
            cls.__setstate__(self, _upgraded_state(cls, dict(state)))

        _LEGACY_CLASSES[cls] = type(
            cls.__name__, (cls,), {"__setstate__": __setstate__}
        )
    return _LEGACY_CLASSES[cls]


def _upgraded_state(cls, state):
    # A parameter added since: its value for those models where the default
    # changed behaviour (_LEGACY_PARAMETERS, and per class the solver of the
    # files that predate it: multiplicative or EM updates; _LEGACY_COPIES,
    # another parameter's value), else its default.
    legacy = {**_LEGACY_PARAMETERS}
    for klass in reversed(cls.__mro__):
        legacy.update(_LEGACY_SOLVERS.get(klass.__name__, {}))
    for name, parameter in inspect.signature(cls.__init__).parameters.items():
        if name != "self" and name not in state:
            source = _LEGACY_COPIES.get(name)
            if source in state:
                state[name] = state[source]
            else:
                state[name] = legacy.get(name, parameter.default)
    if inference := _legacy_inference(cls, state):
        state["inference_"] = inference
    if issubclass(cls, SimplexPLSA) and "simplex_map_" not in state:
        if all(old in state for old in _LEGACY_SIMPLEX_MAP):
            simplex_map = SimplexMap()
            for old, new in _LEGACY_SIMPLEX_MAP.items():
                setattr(simplex_map, new, state.pop(old))
            state["simplex_map_"] = simplex_map
    return state
