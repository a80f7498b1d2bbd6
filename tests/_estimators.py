"""The eight estimators of the package, for tests that run on every one."""

import sklearn_topicfac as tf

ALL_ESTIMATORS = [
    tf.KLNMF,
    tf.NormalizedNMF,
    tf.PLSI,
    tf.JointNMF,
    tf.LDAVI,
    tf.GammaPoissonVI,
    tf.HybridNMFPLSI,
    tf.SimplexPLSA,
]
