"""sklearn-topicfac: KL-divergence topic factorizations as scikit-learn estimators.

Every estimator minimizes the generalized Kullback-Leibler divergence between
non-negative data ``X`` (documents x terms) and a low-rank model, and shares
one set of update kernels (``sklearn_topicfac._kernels``) and one base class
(``sklearn_topicfac._base``).
"""

from ._hybrid import HybridNMFPLSI
from ._joint import JointNMF
from ._klnmf import KLNMF, NormalizedNMF
from ._lda import LDAVI, GammaPoissonVI
from ._plsi import PLSI
from ._simplex import SimplexPLSA

__version__ = "0.1.0.dev0"

__all__ = [
    "GammaPoissonVI",
    "HybridNMFPLSI",
    "JointNMF",
    "KLNMF",
    "LDAVI",
    "NormalizedNMF",
    "PLSI",
    "SimplexPLSA",
    "__version__",
]
