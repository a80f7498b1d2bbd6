"""The scikit-learn faces of the models: parameters, constraints, attributes.

Each estimator builds its model (`sklearn_topicfac.models`) from its
parameters and fits it with the engine (`sklearn_topicfac.engine`); the
shared plumbing is `estimators._base`.
"""

from .hybrid import HybridNMFPLSI
from .joint import JointNMF
from .klnmf import KLNMF, NormalizedNMF
from .lda import LDAVI, GammaPoissonVI
from .plsi import PLSI
from .simplex import SimplexPLSA

__all__ = [
    "GammaPoissonVI",
    "HybridNMFPLSI",
    "JointNMF",
    "KLNMF",
    "LDAVI",
    "NormalizedNMF",
    "PLSI",
    "SimplexPLSA",
]
