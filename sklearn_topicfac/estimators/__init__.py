"""The scikit-learn faces of the models: parameters, constraints, attributes.

Each estimator builds its model (`sklearn_topicfac.models`) from its
parameters and fits it with the engine (`sklearn_topicfac.engine`); the
shared plumbing is `estimators._base`.  A new estimator derives from
`TopicFactorization` (and `StepwiseEM` for ``partial_fit``), whose hooks
its docstring lists (``docs/guide/adding_an_estimator.md``).
"""

from ._base import StepwiseEM as StepwiseEM
from ._base import TopicEstimator as TopicEstimator
from ._base import TopicFactorization as TopicFactorization
from .hybrid import HybridNMFPLSI
from .joint import JointNMF
from .klnmf import KLNMF, NormalizedNMF
from .lda import LDAVI, GammaPoissonVI
from .plsi import PLSI
from .simplex import SimplexPLSA


def check_fitted_state(estimator):
    """Check every fitted attribute of ``estimator`` against what its fit
    produces (shapes, dtypes, values; `estimators._state`).

    What `sklearn_topicfac.load` runs on each model it reads; a ``ValueError``
    names the first attribute that is not as a fit leaves it.
    """
    estimator._check_fitted_state()


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
