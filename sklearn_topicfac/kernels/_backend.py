"""Which backend runs a kernel call: the dispatch to the compiled twins."""

import scipy.sparse as sp

from .. import _config

# Work (stored entries times k) from which backend="auto" runs a call on the
# numba backend.  Below it a NumPy kernel call takes a few milliseconds, and
# a fit of a few hundred iterations would not win back the one-time compile
# of its twins (1 to 3 s each on a first use; numba's cache then keeps them):
# the README's demo (Classic3, k = 3: 0.5 M) stays on NumPy and never
# imports numba.
AUTO_MIN_WORK = 1 << 22


def runs_compiled(work=None):
    """Whether a kernel call of ``work`` (stored entries of a CSR ``X`` times
    k; ``None``: not known) runs on the numba backend: ``backend="numba"``,
    or ``"auto"`` with numba installed and ``work`` unknown or at least
    `AUTO_MIN_WORK`."""
    backend = _config.get_config()["backend"]
    if backend == "numpy" or not _config.numba_available():
        return False
    return backend == "numba" or work is None or work >= AUTO_MIN_WORK


def twins(X, k=1):
    """The compiled twins (the package `kernels.compiled`) for a call on
    ``X`` with ``k`` topics, or None for the NumPy kernels.

    The twins run when ``X`` is CSR, ``k >= 1`` and the backend is
    ``"numba"``, or ``"auto"`` with numba installed and ``X.nnz * k`` of at
    least `AUTO_MIN_WORK`.  The package (all its family modules), hence
    numba, is imported on the first such call, and each twin compiles (or
    loads from numba's cache) on its own first call.
    """
    if k < 1 or not (sp.issparse(X) and X.format == "csr"):
        return None
    if not runs_compiled(X.nnz * k):
        return None
    from . import compiled

    return compiled
