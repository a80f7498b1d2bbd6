"""Saving fitted models to files that cannot run code, and loading them back.

A model file is a `skops <https://skops.readthedocs.io>`_ file: a zip
archive of the estimator's state as JSON and NumPy arrays.  Loading it
rebuilds only types on a trusted list -- the package's estimators (and the
small objects they hold), scikit-learn's estimators (a ``CountVectorizer``
or ``Pipeline`` in front of the model, as ``topicfac --save-model``
writes) and NumPy's types -- and refuses a file that names any other type,
before building anything.  A pickle (what ``joblib.dump`` writes, and what
``topicfac --save-model`` wrote before) can run any code while it is read,
so it loads only when the caller says it trusts the file
(``trust_pickle=True``); pickles of models saved before the package's
modules were reorganized load too.
"""

import bz2
import gzip
import inspect
import io
import json
import lzma
import zipfile
import zlib
from pathlib import Path

from . import estimators
from ._version import __version__
from .estimators.simplex import SimplexPLSA
from .models.simplex import SimplexMap

__all__ = ["load", "save"]

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


def _trusted_types():
    """The package's types a model file may hold (beyond skops' defaults).

    skops trusts scikit-learn's estimators, NumPy's types and Python's
    built-in containers by default.
    """
    classes = [getattr(estimators, name) for name in estimators.__all__]
    return [f"{c.__module__}.{c.__qualname__}" for c in (*classes, SimplexMap)]


def save(estimator, path):
    """Write a fitted estimator (or a pipeline ending in one) to a model file.

    The file is a skops file, which :func:`load` reads back without running
    code from the file.  It also records the version of sklearn-topicfac
    that wrote it.

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
    with zipfile.ZipFile(buffer, "a") as archive:
        archive.writestr(_VERSION_ENTRY, json.dumps({"version": __version__}))
    path = Path(path)
    path.write_bytes(buffer.getvalue())
    return path


def load(path, *, trust_pickle=False):
    """Read a model written by :func:`save` or ``topicfac --save-model``.

    A skops file is checked before anything is built from it: every type
    it names must be one of the package's estimators (or the small objects
    they hold), a scikit-learn estimator, a NumPy type or a built-in
    container; otherwise nothing is loaded and a ``ValueError`` names the
    untrusted types.  A pickle (``joblib.dump``, or ``topicfac
    --save-model`` before it wrote skops files) is refused unless
    ``trust_pickle=True``: reading a pickle can run any code it contains.

    Parameters
    ----------
    path : str or path-like
        The model file.
    trust_pickle : bool, default=False
        Also load a pickle (or joblib) file.  Only for files from a source
        you trust.  Pickles of models saved before the package's modules
        were reorganized (e.g. naming ``sklearn_topicfac._klnmf``) load too.

    Returns
    -------
    model : estimator or Pipeline
        The saved object.

    Raises
    ------
    ValueError
        The file holds untrusted types, is a pickle and ``trust_pickle`` is
        False, is neither a skops file nor a pickle, or names classes this
        version of sklearn-topicfac does not have (the message gives the
        version that saved it, when recorded, and the installed one).
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
    with open(path, "rb") as fh:
        head = fh.read(6)
    if head.startswith(_ZIP_MAGIC):
        return _load_skops(path)
    opener = next((op for magic, op in _PICKLE_OPENERS if head.startswith(magic)), None)
    if opener is None:
        raise ValueError(
            f"{path} is not a model file: neither a skops file (what "
            "sklearn_topicfac.save and topicfac --save-model write) nor a pickle."
        )
    if not trust_pickle:
        raise ValueError(
            f"{path} is a pickle (joblib) file, not a skops file: loading a pickle "
            "can run any code it contains, so it is loaded only when you trust "
            "where it came from (load(..., trust_pickle=True), or topicfac apply "
            "--trust-pickle)."
        )
    return _load_pickle(path, opener)


def _saved_by(archive):
    try:
        return json.loads(archive.read(_VERSION_ENTRY))["version"]
    except (KeyError, ValueError, TypeError):
        return None


def _load_skops(path):
    import skops.io
    from skops.io.exceptions import UntrustedTypesFoundException

    try:
        with zipfile.ZipFile(path) as archive:
            saved_by = _saved_by(archive)
    except zipfile.BadZipFile as exc:
        raise ValueError(f"{path} is not a readable skops file ({exc}).") from exc
    trusted = _trusted_types()
    try:
        untrusted = skops.io.get_untrusted_types(file=path)
    except Exception as exc:
        raise ValueError(f"{path} is not a readable skops file ({exc}).") from exc
    refused = sorted(set(untrusted) - set(trusted))
    foreign = [name for name in refused if not name.startswith("sklearn_topicfac.")]
    if foreign:
        raise ValueError(
            f"{path} holds types a model file of sklearn-topicfac never holds, so "
            f"it was not loaded: {', '.join(foreign)}."
        )
    if refused:
        # Classes of the package this version does not have (under that name).
        missing = f"no class {', '.join(refused)}"
        raise ValueError(_version_message(path, saved_by, missing))
    try:
        return skops.io.load(path, trusted=trusted)
    except UntrustedTypesFoundException as exc:
        raise ValueError(
            f"{path} holds types a model file of sklearn-topicfac never holds, so "
            f"it was not loaded: {exc}."
        ) from exc
    except (ImportError, AttributeError) as exc:
        raise ValueError(_version_message(path, saved_by, exc)) from exc


def _version_message(path, saved_by, exc):
    saved = (
        f"sklearn-topicfac {saved_by}"
        if saved_by
        else "a sklearn-topicfac whose version it does not record"
    )
    return (
        f"{path} was saved by {saved}, and names a class the installed "
        f"sklearn-topicfac {__version__} does not have ({exc}); load it with the "
        "version that saved it, or fit the model again."
    )


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
        raise ValueError(_version_message(path, None, exc)) from exc
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
    # changed behaviour (_LEGACY_PARAMETERS), else its default, which keeps
    # the old behaviour (solver="mu"/"em", ...).
    for name, parameter in inspect.signature(cls.__init__).parameters.items():
        if name != "self" and name not in state:
            state[name] = _LEGACY_PARAMETERS.get(name, parameter.default)
    if issubclass(cls, SimplexPLSA) and "simplex_map_" not in state:
        if all(old in state for old in _LEGACY_SIMPLEX_MAP):
            simplex_map = SimplexMap()
            for old, new in _LEGACY_SIMPLEX_MAP.items():
                setattr(simplex_map, new, state.pop(old))
            state["simplex_map_"] = simplex_map
    return state
