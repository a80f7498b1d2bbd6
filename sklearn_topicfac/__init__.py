"""sklearn-topicfac: KL-divergence topic factorizations as scikit-learn estimators.

Every estimator minimizes the generalized Kullback-Leibler divergence between
non-negative data ``X`` (documents x terms) and a low-rank model, and shares
one set of update kernels (``sklearn_topicfac._kernels``) and one base class
(``sklearn_topicfac._base``).
"""

from ._joint import JointNMF
from ._klnmf import KLNMF, NormalizedNMF
from ._plsi import PLSI

__version__ = "0.1.0.dev0"

__all__ = ["JointNMF", "KLNMF", "NormalizedNMF", "PLSI", "__version__"]
