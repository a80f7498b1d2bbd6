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
  threads, and the loops over one row's entries that several families use.

Why they are faster: a NumPy kernel works on gathered ``(entries, k)``
blocks, so every stored entry costs several passes over a k-vector through
memory; a twin's compiled loop per row reads each column of ``H`` once per
entry, keeps the row of ``W`` and the k accumulators in registers, and
writes one number per entry.  Rounding: sums over the k topics may be
reassociated by the compiler (``fastmath`` reassociation and contraction
only), and the sums over a row's entries that the updates need are
accumulated in float64 whatever the dtype.  Functions compile on first use
for each combination of dtypes (``cache=True``: once per machine).
"""

from .collapsed import cvb0_sweep
from .coordinate import cd_pass, cd_sweep
from .divergence import ratio_log_sums_at_nonzeros
from .fold_in import mu_fold_in
from .products import product_at_nonzeros, ratio_at_nonzeros
from .updates import em_doc_pass, mu_doc_pass, mu_doc_step
from .variational import lda_e_step

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
