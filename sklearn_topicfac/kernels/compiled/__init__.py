"""The compiled twins of the kernels: the numba backend.

Each public function here has the result (to rounding) and the contract of
the NumPy kernel of the same name: same dtype out as in, memory O(nnz +
(n_samples + n_features) * k) at most, arguments never modified; and its
signature, but for the two coordinate-descent twins, which take the NumPy
module's step settings as arguments (`coordinate`;
``tests/kernels/test_compiled_twins.py`` checks the signatures and states
that difference).  The NumPy kernels dispatch to these when the numba
backend is selected (`sklearn_topicfac.config_context`): `_backend.twins`
imports this package, hence numba, on the first call that needs a twin,
so callers never import it themselves.

Each twin lives in the module named like its NumPy kernel's, whose module
docstring says why the twin exists:

- `products`: ``product_at_nonzeros``, ``ratio_at_nonzeros``;
- `divergence`: ``ratio_log_sums_at_nonzeros``;
- `updates`: ``mu_doc_step``, ``mu_doc_pass``, ``em_doc_pass``;
- `fold_in`: ``mu_fold_in``;
- `variational`: ``lda_e_step``;
- `collapsed`: ``cvb0_sweep``;
- `coordinate`: ``cd_sweep``, ``cd_pass``;
- `_common`: numba's options, the split of rows into parts on the kernel
  threads, the loops over one row's entries that several families use,
  and ``warm_up``, loaded as the package is imported (it sets up numba's
  code generation: `_backend.preload`).

Why they are faster: a NumPy kernel works on gathered ``(entries, k)``
blocks, so every stored entry costs several passes over a k-vector through
memory; a twin's compiled loop per row reads each column of ``H`` once per
entry, keeps the row of ``W`` and the k accumulators in registers, and
writes one number per entry.  Rounding: sums over the k topics may be
reassociated by the compiler (``fastmath`` reassociation and contraction
only), and the sums over a row's entries that the updates need are
accumulated in float64 whatever the dtype.  Functions compile on first use
for each combination of dtypes (``cache=True``: once per machine);
`_cache_files` names numba's cache files, which
`sklearn_topicfac.compile_kernels` records so that ``backend="auto"`` uses
the twins only once they are all compiled.
"""

import importlib
import os
import pkgutil

from numba.core.dispatcher import Dispatcher

from .collapsed import cvb0_sweep
from .coordinate import cd_pass, cd_sweep
from .divergence import ratio_log_sums_at_nonzeros
from .fold_in import mu_fold_in
from .products import product_at_nonzeros, ratio_at_nonzeros
from .updates import em_doc_pass, mu_doc_pass, mu_doc_step
from .variational import lda_e_step


def _dispatchers():
    """Every compiled function of the package that numba caches on its own
    (the twins and their row helpers; not those inlined into their callers),
    by ``module.name``."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for name, value in vars(module).items():
            if (
                isinstance(value, Dispatcher)
                and value.py_func.__module__ == module.__name__
                and value.targetoptions.get("inline") != "always"
            ):
                found[f"{info.name}.{name}"] = value
    return found


def _cache_files():
    """``(compiled, missing)``: ``compiled`` the ``(index_file, source_file)``
    of every compiled function whose index is in numba's cache, ``missing``
    the names of those whose index is not.  Everything is missing if this
    numba does not say where its cache is (``FunctionCache`` internals)."""
    compiled, missing = [], []
    for name, dispatcher in sorted(_dispatchers().items()):
        try:
            index = dispatcher._cache._cache_file._index_path
        except AttributeError:
            index = None
        if index is not None and os.path.isfile(index):
            compiled.append((index, dispatcher.py_func.__code__.co_filename))
        else:
            missing.append(name)
    return compiled, missing


__all__ = [
    "cd_pass",
    "cd_sweep",
    "cvb0_sweep",
    "em_doc_pass",
    "lda_e_step",
    "mu_doc_pass",
    "mu_doc_step",
    "mu_fold_in",
    "product_at_nonzeros",
    "ratio_at_nonzeros",
    "ratio_log_sums_at_nonzeros",
]
