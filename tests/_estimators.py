"""The eight estimators of the package, for tests that run on every one."""

from sklearn_topicfac import (
    KLNMF,
    LDAVI,
    PLSI,
    GammaPoissonVI,
    HybridNMFPLSI,
    JointNMF,
    NormalizedNMF,
    SimplexPLSA,
)

ALL_ESTIMATORS = [
    KLNMF,
    NormalizedNMF,
    PLSI,
    JointNMF,
    LDAVI,
    GammaPoissonVI,
    HybridNMFPLSI,
    SimplexPLSA,
]
