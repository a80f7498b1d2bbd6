"""The mathematics of each family of topic factorizations, one plain class each.

Every model follows the protocol documented in `models._base` (start
preparation, a per-document step returning additive statistics, a topic
step, the objective, fold-in, outputs).  A model knows nothing of
scikit-learn, Dask or files: the engine runs it, an estimator builds it from
its parameters.

- `klnmf`: KL-NMF by multiplicative updates, plain and L1-normalized;
- `plsi`: PLSI by (tempered) EM;
- `joint`: NMF under normalization constraints with joint updates;
- `lda`: LDA (mean-field and collapsed variational) and Gamma-Poisson
  factorization;
- `simplex`: the simplex map of real-valued data (SimplexPLSA);
- `solvers`: the declared solvers, and what each needs from the data.
"""

from ._base import Check, TopicModel
from .joint import JointNMFModel
from .klnmf import KLNMFModel, NormalizedNMFModel
from .lda import CVB0Model, GammaPoissonModel, LDAModel, MAPModel
from .plsi import PLSIModel
from .simplex import SimplexMap

__all__ = [
    "Check",
    "CVB0Model",
    "MAPModel",
    "GammaPoissonModel",
    "JointNMFModel",
    "KLNMFModel",
    "LDAModel",
    "NormalizedNMFModel",
    "PLSIModel",
    "SimplexMap",
    "TopicModel",
]
