"""Which engine runs a kernel call: the dispatch to the compiled twins."""

import scipy.sparse as sp

from .. import _config


def twins(X, k=1):
    """The compiled twins (`kernels.compiled`) for a call on ``X`` with ``k``
    topics, or None for the NumPy kernels.

    The twins are used when the numba engine is selected
    (`sklearn_topicfac.config_context`), ``X`` is CSR and ``k >= 1``; the
    module, hence numba, is imported on the first such call, and each
    twin compiles (or loads from numba's cache) on its own first call.
    """
    if k < 1 or not (sp.issparse(X) and X.format == "csr"):
        return None
    if _config.resolved_engine() != "numba":
        return None
    from . import compiled

    return compiled
