"""Bad input to every estimator: a ValueError that names the problem, never NaN.

Regression tests for what fuzzing found (issue "No silent NaN"): data too
large to fit without overflow, all-zero or converted custom starts, and
``inverse_transform`` on input that is not a document representation.  The
caller's arrays are never changed by a refusal.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _estimators import ALL_ESTIMATORS, REGISTRY
from sklearn.exceptions import DataConversionWarning

ALL = ALL_ESTIMATORS
# The KL factorizations of non-negative data: all but SimplexPLSA.
KL = [spec.cls for spec in REGISTRY if spec.counts_only]
# Estimators whose custom start is a pair (W, H) of non-negative factors.
CUSTOM_WH = [spec.cls for spec in REGISTRY if spec.custom_start == "WH"]
# The variational estimators, whose custom start is the topics' lambda only.
CUSTOM_TOPICS = [spec.cls for spec in REGISTRY if spec.custom_start == "H"]

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _counts(n=12, m=9, seed=0, dtype=np.float64):
    return np.random.RandomState(seed).poisson(1.0, (n, m)).astype(dtype)


def _name(cls):
    return cls.__name__


# --------------------------------------------------- too large to fit (defect 2)
@pytest.mark.parametrize("Estimator", KL, ids=_name)
@pytest.mark.parametrize(
    "dtype, scale", [(np.float64, 1e306), (np.float64, 1e303), (np.float32, 1e37)]
)
@pytest.mark.parametrize("container", [np.asarray, sp.csr_matrix])
def test_data_too_large_to_fit_is_refused_by_name(Estimator, dtype, scale, container):
    # These magnitudes made NaN models (every KL estimator at 1e306, the
    # variational ones already at 1e303): the objective's sums overflow.
    X = container((_counts() * scale).astype(dtype))
    before = X.copy()
    with pytest.raises(ValueError, match="add up to .* the largest total .* Divide X"):
        Estimator(3, random_state=0, max_iter=5).fit(X)
    assert (abs(X - before)).sum() == 0


@pytest.mark.parametrize("Estimator", KL, ids=_name)
def test_data_just_below_the_limit_fits_finite(Estimator):
    X = _counts() * 1e300  # sums to ~1e302, below the float64 limit
    est = Estimator(3, random_state=0, max_iter=5).fit(X)
    assert np.isfinite(est.components_).all()
    assert np.isfinite(est.loss_history_).all()
    assert np.isfinite(est.transform(X)).all()


# ----------------------------------------------------- custom starts (defect 6)
@pytest.mark.parametrize("Estimator", CUSTOM_WH, ids=_name)
@pytest.mark.parametrize("zero", ["W", "H"])
def test_all_zero_custom_start_is_refused(Estimator, zero):
    X = _counts()
    start = {"W": np.ones((12, 3)), "H": np.ones((3, 9))}
    start[zero] = np.zeros_like(start[zero])
    with pytest.raises(ValueError, match=f"custom start {zero} is all zeros"):
        Estimator(3, init="custom", max_iter=5).fit(X, **start)


@pytest.mark.parametrize("Estimator", CUSTOM_WH, ids=_name)
def test_custom_start_of_another_dtype_is_converted_with_a_warning(Estimator):
    X = _counts(dtype=np.float32)
    W, H = np.ones((12, 3)), np.ones((3, 9))  # float64
    with pytest.warns(DataConversionWarning, match="custom start W has dtype float64"):
        est = Estimator(3, init="custom", max_iter=5).fit(X, W=W, H=H)
    assert est.components_.dtype == np.float32
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataConversionWarning)
        Estimator(3, init="custom", max_iter=5).fit(
            X, W=W.astype(np.float32), H=H.astype(np.float32)
        )


@pytest.mark.parametrize("Estimator", CUSTOM_TOPICS, ids=_name)
def test_variational_custom_start_must_be_positive(Estimator):
    with pytest.raises(ValueError, match="all zeros"):
        Estimator(3, init="custom").fit(_counts(), H=np.zeros((3, 9)))
    H = np.ones((3, 9))
    H[0, 0] = 0.0
    with pytest.raises(ValueError, match="strictly positive"):
        Estimator(3, init="custom").fit(_counts(), H=H)


# ------------------------------------------------- inverse_transform (defect 7)
BAD_REPRESENTATIONS = {
    "nan": (np.array([[np.nan, 1.0, 0.0]]), "NaN"),
    "inf": (np.array([[np.inf, 1.0, 0.0]]), "infinity"),
    "strings": (np.array([["a", "b", "c"]]), "could not convert"),
    "object-nan": (np.array([[None, 1.0, 0.0]], dtype=object), "NaN|float"),
    "wrong-width": (np.ones((2, 4)), r"shape \(n_samples, 3\), got \(2, 4\)"),
    "one-dimensional": (np.ones(3), "2D array"),
}


@pytest.mark.parametrize("Estimator", ALL, ids=_name)
@pytest.mark.parametrize("case", BAD_REPRESENTATIONS)
def test_inverse_transform_validates(Estimator, case):
    est = Estimator(3, random_state=0, max_iter=5).fit(_counts())
    X, message = BAD_REPRESENTATIONS[case]
    with pytest.raises(ValueError, match=message):
        est.inverse_transform(X)


@pytest.mark.parametrize("Estimator", ALL, ids=_name)
def test_inverse_transform_takes_sparse_and_numeric_objects(Estimator):
    X = _counts()
    est = Estimator(3, random_state=0, max_iter=5).fit(X)
    T = est.transform(X)
    expected = est.inverse_transform(T)
    np.testing.assert_allclose(est.inverse_transform(sp.csr_matrix(T)), expected)
    np.testing.assert_allclose(est.inverse_transform(T.astype(object)), expected)
