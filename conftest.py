"""Collection of the package's doctests: the numba backend's module needs numba."""

import importlib.util

# Without numba (the "fast" extra) its compiled twins cannot be imported;
# everything else runs on the NumPy backend, and the numba tests skip.
collect_ignore = (
    []
    if importlib.util.find_spec("numba") is not None
    else ["sklearn_topicfac/kernels/compiled.py"]
)
