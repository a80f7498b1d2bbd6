"""The update kernels every model shares: pure NumPy/SciPy functions.

One notation everywhere::

    X  (n_samples, n_features)   non-negative data, CSR (dense accepted where noted)
    W  (n_samples, k)            document factor
    H  (k, n_features)           topic factor
    Y = W @ H                    the model, only ever evaluated at X's stored entries
    R = X / Y                    at X's stored entries: a CSR matrix with X's pattern

Every kernel keeps the floating dtype of its inputs (float32 stays float32),
allocates at most O(nnz + (n_samples + n_features) * k) memory, never
modifies its arguments and holds no state.  Validation lives above, in the
estimators.

- `products`: the sampled product and ratio at the non-zeros, sparse-dense
  products;
- `divergence`: the generalized KL divergence;
- `updates`: multiplicative (KL-NMF) and EM (PLSI) updates, normalization,
  the SQUAREM extrapolation of EM;
- `coordinate`: KL-NMF by cyclic coordinate descent with Newton steps;
- `newton`: KL-NMF by diagonal Newton steps with a multiplicative fall-back;
- `variational`: LDA's variational E-step, bounds and Dirichlet/Gamma terms;
- `collapsed`: LDA's zero-order collapsed variational (CVB0) sweep and its
  MAP (EM) sweep without the exclusion;
- `completion`: the document-completion split of the held-out score;
- `fold_in`: new documents' factor with the topics fixed;
- `_heap`: `keep_freed_memory`, which the engine calls before a fit and
  ``transform`` before a fold-in: the C allocator then keeps a sweep's freed
  temporaries instead of handing them back (speed only);
- `compiled`: the compiled twins of the kernels (the optional numba
  backend), to which the kernels above dispatch when it is selected
  (`sklearn_topicfac.config_context`); the one import from the rest of the
  package is that setting (`sklearn_topicfac._config`); `preload`, which
  the engine calls as a fit starts, imports it on a background thread when
  the fit's kernel calls will run it.
"""

from ._backend import preload
from ._heap import keep_freed_memory
from ._parallel import one_blas_thread, thread_budget
from .collapsed import cvb0_sweep, map_sweep
from .completion import (
    HELD_OUT_SMOOTHING,
    completion_log_likelihood,
    completion_split,
)
from .coordinate import cd_pass, cd_sweep
from .divergence import (
    kl_divergence,
    kl_divergence_from_ratio,
    kl_divergence_from_sums,
    ratio_log_sums,
    ratio_log_sums_at_nonzeros,
)
from .fold_in import em_fold_in, mu_fold_in
from .newton import (
    dn_doc_half,
    dn_pass,
    dn_sweep,
    dn_topic_check,
    dn_topic_proposal,
    dn_topic_settle,
)
from .products import (
    multiply_keeping_zeros,
    positive_or_one,
    product_at_nonzeros,
    ratio_at_nonzeros,
    transposed_product,
)
from .updates import (
    em_doc_pass,
    em_step,
    em_topic_update,
    em_update_w,
    flush_subnormal,
    mu_doc_pass,
    mu_doc_step,
    mu_topic_update,
    mu_update_h,
    mu_update_w,
    normalize_columns,
    normalize_rows,
    squarem_point,
)
from .variational import (
    dirichlet_expectation,
    dirichlet_kl,
    dirichlet_kl_rows,
    exp_dirichlet_expectation,
    gamma_kl_rows,
    lda_e_step,
    lda_expected_counts,
    lda_log_likelihood_rows,
)

__all__ = [
    "cvb0_sweep",
    "map_sweep",
    "HELD_OUT_SMOOTHING",
    "cd_pass",
    "cd_sweep",
    "dn_doc_half",
    "dn_pass",
    "dn_sweep",
    "dn_topic_check",
    "dn_topic_proposal",
    "dn_topic_settle",
    "completion_log_likelihood",
    "completion_split",
    "dirichlet_expectation",
    "dirichlet_kl",
    "dirichlet_kl_rows",
    "em_doc_pass",
    "em_step",
    "em_topic_update",
    "em_fold_in",
    "em_update_w",
    "flush_subnormal",
    "exp_dirichlet_expectation",
    "gamma_kl_rows",
    "keep_freed_memory",
    "kl_divergence",
    "kl_divergence_from_ratio",
    "kl_divergence_from_sums",
    "lda_e_step",
    "lda_expected_counts",
    "lda_log_likelihood_rows",
    "multiply_keeping_zeros",
    "mu_doc_pass",
    "mu_doc_step",
    "mu_fold_in",
    "mu_topic_update",
    "mu_update_h",
    "mu_update_w",
    "normalize_columns",
    "one_blas_thread",
    "normalize_rows",
    "positive_or_one",
    "preload",
    "product_at_nonzeros",
    "ratio_at_nonzeros",
    "ratio_log_sums",
    "ratio_log_sums_at_nonzeros",
    "squarem_point",
    "thread_budget",
    "transposed_product",
]
