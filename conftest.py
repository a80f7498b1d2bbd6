"""Collection of the package's doctests: the numba backend's package needs numba."""

import importlib.util

# Without numba (the "fast" extra) its compiled twins cannot be imported:
# the whole package of them (kernels/compiled/, one module per family) is
# left out; everything else runs on the NumPy backend, and the numba tests
# skip.
collect_ignore = (
    []
    if importlib.util.find_spec("numba") is not None
    else ["sklearn_topicfac/kernels/compiled"]
)
