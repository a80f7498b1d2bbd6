"""Which backend runs a kernel call: the dispatch to the compiled twins."""

import logging
import sys
import threading

import scipy.sparse as sp

from .. import _config
from . import _compiled_cache

# Work (stored entries times k) from which backend="auto" runs a call on the
# numba backend, once the twins are compiled (`_compiled_cache.ready`).
# Below it a NumPy kernel call takes a few milliseconds and numba's import
# and the loading of the twins from its cache (0.2 to 0.4 s in a fresh
# process) would not pay: the README's demo (Classic3, k = 3: 0.5 M) stays
# on NumPy and never imports numba.
AUTO_MIN_WORK = 1 << 22

_LOG = logging.getLogger("sklearn_topicfac")
_SAID = set()


def runs_compiled(work=None):
    """Whether a kernel call of ``work`` (stored entries of a CSR ``X`` times
    k; ``None``: not known) runs on the numba backend: ``backend="numba"``,
    or ``"auto"`` with numba installed, every twin compiled into numba's
    cache (`sklearn_topicfac.compile_kernels`) and ``work`` unknown or at
    least `AUTO_MIN_WORK`.  ``"auto"`` never compiles."""
    backend = _config.get_config()["backend"]
    if backend == "numpy" or not _config.numba_available():
        return False
    if backend == "numba":
        return True
    return (work is None or work >= AUTO_MIN_WORK) and _compiled_cache.ready()


def compiling_on_purpose():
    """Do not say that ``backend="numba"`` compiles (`compile_kernels` says
    it itself)."""
    _SAID.add("compiles")


def _say_once_that_it_compiles():
    if "compiles" in _SAID or _compiled_cache.ready():
        return
    _SAID.add("compiles")
    _LOG.warning(
        "sklearn_topicfac: backend='numba' compiles each numba kernel on its "
        "first use on this machine (about 20 s for all of them, once: numba's "
        "cache keeps them). sklearn_topicfac.compile_kernels() or "
        "'topicfac compile' compiles them all ahead of time, after which "
        "backend='auto' uses them too."
    )


def twins(X, k=1):
    """The compiled twins (the package `kernels.compiled`) for a call on
    ``X`` with ``k`` topics, or None for the NumPy kernels.

    The twins run when ``X`` is CSR, ``k >= 1`` and the backend is
    ``"numba"``, or ``"auto"`` with numba installed, the twins compiled
    (`_compiled_cache.ready`) and ``X.nnz * k`` of at least `AUTO_MIN_WORK`.
    The package (all its family modules), hence numba, is imported on the
    first such call, and each twin loads from numba's cache or, under
    ``"numba"`` only, compiles on its own first call (said once per process,
    on the ``sklearn_topicfac`` logger).
    """
    if k < 1 or not (sp.issparse(X) and X.format == "csr"):
        return None
    if not runs_compiled(X.nnz * k):
        return None
    if _config.get_config()["backend"] == "numba":
        _say_once_that_it_compiles()
    return compiled_package()


# The module name of the compiled package, which `preload` looks for.
_COMPILED = __name__.rpartition(".")[0] + ".compiled"


def preload(work):
    """Start importing the compiled twins (`compiled_package`) on a
    background thread when kernel calls of ``work`` will run them
    (`runs_compiled`) and they are not imported yet; returns the thread,
    or None.

    A fit calls this as it starts: numba's import and the set-up of its
    code generation (0.2 to 0.3 s in a fresh process) then run while the
    fit computes its start, instead of before its first iteration.  A
    fit's first kernel call that needs the twins waits for the import to
    finish (Python's import lock).  Under ``"auto"``
    nothing is ever compiled here either: it runs the twins only once they
    are all in numba's cache (`_compiled_cache.ready`).
    """
    if not runs_compiled(work) or _COMPILED in sys.modules:
        return None
    thread = threading.Thread(
        target=_import_quietly, name="sklearn_topicfac-preload", daemon=True
    )
    thread.start()
    return thread


def _import_quietly():
    # An import that fails here fails again, and is raised, in the fit's
    # first call of a twin (`twins`): a background thread has no one to
    # tell.
    try:
        compiled_package()
    except Exception:
        pass


def compiled_package():
    """The package `kernels.compiled`, imported (with numba) on the first
    call: the one place the package imports it, so that ``import
    sklearn_topicfac`` never imports numba (an optional dependency whose
    import costs 0.1-0.3 s).  The import runs down the package, not back
    up: `compiled` imports only the leaf modules `_parallel` and `_scale`."""
    from . import compiled

    return compiled
