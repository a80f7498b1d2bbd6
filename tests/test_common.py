"""Contract tests shared by the estimators of the package.

Every test here takes its estimators from the registry in
``tests/_estimators.py``: all eight where the contract applies to every
estimator, the ones with a capability (``partial_fit``, block-wise ``fit``,
a custom start, ``n_init``...) otherwise; where a contract does not hold for
an estimator, the registry says so with a flag and the reason.  Covered:
the registry against the API, scikit-learn's estimator checks, input and
parameter validation, immutability of the caller's data, sparse/dense and
float32/float64 agreement, reproducibility, degenerate documents and terms,
the fold-in contract of ``transform``, online and block-wise fitting,
integration with the scikit-learn ecosystem, and a property-based test on
extreme random inputs.

Every instance is ``spec.make(...)``: the estimator with its registry's fast
settings, on small corpora, so that the whole module runs in seconds per
estimator.
"""

import pickle
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from _corpora import low_rank_counts
from _estimators import (
    ALL_ESTIMATORS,
    REGISTRY,
    accepted_inits,
    estimators_and,
    estimators_with,
    estimators_without,
    fit_takes_a_start,
)
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.utils._param_validation import InvalidParameterError, StrOptions
from sklearn.utils.estimator_checks import parametrize_with_checks

import sklearn_topicfac
from sklearn_topicfac.estimators import TopicEstimator
from sklearn_topicfac.out_of_core import Blocks

# Short fits on purpose: "did not converge" is expected noise here and is
# tested explicitly in test_convergence_warning (pytest.warns and
# warnings.catch_warnings override this module-wide filter).
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

ALL = estimators_with()


# --------------------------------------------------------------------- data
def _custom_start(n_samples, n_features, n_components, seed=1):
    rng = np.random.default_rng(seed)
    W = rng.uniform(0.1, 1.0, size=(n_samples, n_components))
    H = rng.uniform(0.1, 1.0, size=(n_components, n_features))
    return W, H


def _deterministic_start(spec, X, n_components, dtype=np.float64):
    """Parameters and ``fit`` arguments of a start that depends on nothing
    but the data: the custom start ``_custom_start`` where the estimator
    takes one, else the random start of seed 0.

    The seed is given in every case: the variational estimators draw their
    first E-step's start from it even with a custom start for the topics.
    """
    if spec.custom_start is None:
        return dict(n_components=n_components, init="random", random_state=0), {}
    W, H = _custom_start(*X.shape, n_components)
    params = dict(n_components=n_components, init="custom", random_state=0)
    return params, spec.start_kwargs(W.astype(dtype), H.astype(dtype))


def _with_explicit_zeros(X_dense):
    """CSR of ``X_dense`` that also stores a quarter of its zeros explicitly."""
    n, m = X_dense.shape
    coo = sp.coo_matrix(X_dense)
    rng = np.random.default_rng(123)
    zero_pos = np.argwhere(X_dense == 0)
    extra = zero_pos[rng.choice(len(zero_pos), size=len(zero_pos) // 4, replace=False)]
    rows = np.concatenate([coo.row, extra[:, 0]])
    cols = np.concatenate([coo.col, extra[:, 1]])
    data = np.concatenate([coo.data, np.zeros(len(extra))])
    # Build the CSR by hand so that the zeros stay stored.
    order = np.lexsort((cols, rows))
    rows, cols, data = rows[order], cols[order], data[order]
    indptr = np.zeros(n + 1, dtype=np.int32)
    np.add.at(indptr, rows + 1, 1)
    indptr = np.cumsum(indptr).astype(np.int32)
    Xs = sp.csr_matrix((data, cols.astype(np.int32), indptr), shape=(n, m))
    assert Xs.nnz > np.count_nonzero(X_dense)
    assert_array_equal(Xs.toarray(), X_dense)
    return Xs


CONTAINERS = {
    "dense": lambda X: np.array(X),
    "csr": sp.csr_matrix,
    "csc": sp.csc_matrix,
    "csr_array": sp.csr_array,
    "csr_explicit_zeros": _with_explicit_zeros,
}


def _snapshot(A):
    if sp.issparse(A):
        parts = (A.data.copy(), A.indices.copy(), A.indptr.copy())
        return (A.format, A.shape, A.dtype, *parts)
    return ("dense", A.shape, A.dtype, np.array(A, copy=True))


def _assert_unchanged(A, snap):
    if sp.issparse(A):
        fmt, shape, dtype, data, indices, indptr = snap
        assert A.format == fmt
        assert A.shape == shape and A.dtype == dtype
        assert_array_equal(A.data, data, strict=True)
        assert_array_equal(A.indices, indices, strict=True)
        assert_array_equal(A.indptr, indptr, strict=True)
    else:
        _, shape, dtype, values = snap
        assert A.shape == shape and A.dtype == dtype
        assert_array_equal(A, values, strict=True)


def _fitted_arrays(est):
    """Every public fitted attribute (name ending in ``_``) that is numeric."""
    out = {}
    for name, value in vars(est).items():
        if name.endswith("_") and not name.startswith("_"):
            if isinstance(value, (float, int, np.ndarray, np.generic)):
                out[name] = np.asarray(value)
    return out


X_COUNTS = low_rank_counts()


# ----------------------------------------------- 0. the registry is the API
def test_registry_holds_every_estimator_of_the_package():
    exported = {
        obj
        for name in sklearn_topicfac.__all__
        if isinstance(obj := getattr(sklearn_topicfac, name), type)
        and issubclass(obj, BaseEstimator)
    }
    # Every public estimator is in the registry; the registry may hold an
    # estimator not (yet) exported (docs/guide/adding_an_estimator.md).
    assert exported <= set(ALL_ESTIMATORS)
    assert len(set(ALL_ESTIMATORS)) == len(REGISTRY)
    assert all(issubclass(cls, TopicEstimator) for cls in ALL_ESTIMATORS)


@pytest.mark.parametrize("spec", ALL)
def test_registry_matches_the_api(spec):
    Estimator = spec.cls
    params = Estimator().get_params()
    assert spec.partial_fit == hasattr(Estimator, "partial_fit")
    assert spec.n_init == ("n_init" in params)
    assert spec.completion_score == hasattr(Estimator, "perplexity")
    assert spec.counts_only == Estimator().__sklearn_tags__().input_tags.positive_only
    # The allowed init values: the parameter's constraint, None included.
    (options,) = [
        c for c in Estimator._parameter_constraints["init"] if isinstance(c, StrOptions)
    ]
    assert None in Estimator._parameter_constraints["init"]
    assert set(spec.inits) == options.options
    assert spec.default_init in spec.inits
    # A custom start is passed to fit as W and H (the variational
    # estimators refuse W, by name: test_custom_topics_errors).
    assert fit_takes_a_start(Estimator) == (spec.custom_start is not None)
    assert ("custom" in spec.inits) == (spec.custom_start is not None)
    assert spec.custom_start in ("WH", "H", None)
    for name in (*spec.fast_params, *spec.bad_params):
        assert name in params, name
    if spec.rounds_of_two_phases:
        assert "n_rounds" in params
    if not spec.blockwise:
        assert spec.blocks_refusal


# ------------------------------------------------ 1. scikit-learn's checks
@parametrize_with_checks([est for spec in REGISTRY for est in spec.check_instances()])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# ------------------------------------------------------- 2. invalid input
def _neg_dense():
    X = X_COUNTS.copy()
    X[2, 3] = -1.0
    return X


def _neg_sparse():
    X = sp.csr_matrix(X_COUNTS)
    X.data[5] = -0.5
    return X


def _nan():
    X = X_COUNTS.copy()
    X[0, 0] = np.nan
    return X


def _inf():
    X = X_COUNTS.copy()
    X[1, 1] = np.inf
    return X


BAD_X = {
    # {name}: the estimator's name, in the message of a refused negative value.
    "negative-dense": (_neg_dense, "Negative values in data passed to {name}"),
    "negative-sparse": (_neg_sparse, "Negative values in data passed to {name}"),
    "nan": (_nan, "NaN"),
    "inf": (_inf, "[Ii]nfinity"),
    "no-rows": (lambda: np.zeros((0, X_COUNTS.shape[1])), "0 sample"),
    "no-columns": (lambda: np.zeros((X_COUNTS.shape[0], 0)), "0 feature"),
}


def _bad_x_cases(*flags):
    return [
        pytest.param(spec, case, id=f"{case}-{spec.name}")
        for spec in REGISTRY
        if all(getattr(spec, flag) for flag in flags)
        for case in BAD_X
        # Real-valued data is SimplexPLSA's point: negative values are valid.
        if spec.counts_only or not case.startswith("negative")
    ]


@pytest.mark.parametrize("method", ["fit", "fit_transform", "transform", "score"])
@pytest.mark.parametrize("spec, case", _bad_x_cases())
def test_bad_X_raises(spec, case, method):
    make_X, pattern = BAD_X[case]
    est = spec.make(n_components=2, max_iter=5, random_state=0)
    if method in ("transform", "score"):
        est.fit(X_COUNTS)
    with pytest.raises(ValueError, match=pattern.format(name=spec.name)):
        getattr(est, method)(make_X())


@pytest.mark.parametrize("spec, case", _bad_x_cases("partial_fit"))
def test_bad_X_raises_in_partial_fit(spec, case):
    make_X, pattern = BAD_X[case]
    est = spec.make(n_components=2, random_state=0)
    with pytest.raises(ValueError, match=pattern.format(name=spec.name)):
        est.partial_fit(make_X())
    # Nor after a first, valid mini-batch.
    est.partial_fit(X_COUNTS[:20])
    if case != "no-columns":  # a different number of features: tested below
        with pytest.raises(ValueError, match=pattern.format(name=spec.name)):
            est.partial_fit(make_X())


@pytest.mark.parametrize("spec", estimators_without("counts_only"))
def test_real_valued_input_is_accepted(spec):
    X = X_COUNTS - X_COUNTS.max() - 1
    assert X.max() < 0
    weights = spec.make(n_components=3, max_iter=50, random_state=0).fit_transform(X)
    assert weights.shape == (X.shape[0], 3)
    assert np.all(np.isfinite(weights))


@pytest.mark.parametrize("spec", ALL)
@pytest.mark.parametrize("n_components", [0, 2.5, "3", -1])
def test_bad_n_components_raises(spec, n_components):
    est = spec.make(n_components=n_components)
    assert issubclass(InvalidParameterError, ValueError)
    with pytest.raises(ValueError, match="n_components"):
        est.fit(X_COUNTS)


@pytest.mark.parametrize(
    "spec, param, value",
    [
        pytest.param(spec, param, value, id=f"{spec.name}-{param}={value!r}")
        for spec in REGISTRY
        for param, values in spec.bad_params.items()
        for value in values
    ],
)
def test_bad_parameter_raises(spec, param, value):
    # n_components=3: LDAVI's doc_topic_prior [1, 2] has the wrong length.
    with pytest.raises(ValueError, match=param):
        spec.make(n_components=3, **{param: value}).fit(X_COUNTS)


@pytest.mark.parametrize("spec", ALL)
@pytest.mark.parametrize("method", ["transform", "score"])
def test_wrong_number_of_features_raises(spec, method):
    est = spec.make(n_components=2, max_iter=5, random_state=0).fit(X_COUNTS)
    n_features = X_COUNTS.shape[1]
    for X in (X_COUNTS[:, :-1], sp.csr_matrix(np.ones((3, n_features + 2)))):
        with pytest.raises(ValueError, match=f"{X.shape[1]} features.*{n_features}"):
            getattr(est, method)(X)


@pytest.mark.parametrize("spec", estimators_with(custom_start="WH"))
@pytest.mark.parametrize("method", ["fit", "fit_transform"])
def test_custom_init_errors(spec, method):
    n, m = X_COUNTS.shape
    k = 3
    W, H = _custom_start(n, m, k)
    est = spec.make(n_components=k, init="custom", max_iter=5)
    fit = getattr(est, method)
    with pytest.raises(ValueError, match="needs both W and H.*W is missing"):
        fit(X_COUNTS)
    with pytest.raises(ValueError, match="needs both W and H.*H is missing"):
        fit(X_COUNTS, W=W)
    with pytest.raises(ValueError, match="needs both W and H.*W is missing"):
        fit(X_COUNTS, H=H)
    with pytest.raises(ValueError, match=re.escape(f"W has shape {(n, k + 1)}")):
        fit(X_COUNTS, W=np.ones((n, k + 1)), H=H)
    with pytest.raises(ValueError, match=re.escape(f"W has shape {(n - 1, k)}")):
        fit(X_COUNTS, W=np.ones((n - 1, k)), H=H)
    with pytest.raises(ValueError, match=re.escape(f"H has shape {(k, m + 1)}")):
        fit(X_COUNTS, W=W, H=np.ones((k, m + 1)))
    W_neg = W.copy()
    W_neg[0, 0] = -1e-3
    with pytest.raises(ValueError, match="W has negative entries"):
        fit(X_COUNTS, W=W_neg, H=H)
    H_neg = H.copy()
    H_neg[-1, -1] = -1.0
    with pytest.raises(ValueError, match="H has negative entries"):
        fit(X_COUNTS, W=W, H=H_neg)
    W_nan = W.copy()
    W_nan[1, 1] = np.nan
    with pytest.raises(ValueError, match="W contains NaN or infinity"):
        fit(X_COUNTS, W=W_nan, H=H)


@pytest.mark.parametrize("spec", estimators_with(custom_start="H"))
@pytest.mark.parametrize("method", ["fit", "fit_transform"])
def test_custom_topics_errors(spec, method):
    # The variational estimators start the topics only: the documents'
    # start is the first E-step's.
    n, m = X_COUNTS.shape
    k = 3
    W, H = _custom_start(n, m, k)
    est = spec.make(n_components=k, init="custom", max_iter=5)
    fit = getattr(est, method)
    with pytest.raises(ValueError, match="init='custom' needs the topics' start"):
        fit(X_COUNTS)
    with pytest.raises(ValueError, match="no start for the documents"):
        fit(X_COUNTS, W=W, H=H)
    with pytest.raises(ValueError, match="no start for the documents"):
        fit(X_COUNTS, W=W)
    with pytest.raises(ValueError, match=re.escape(f"H has shape {(k, m + 1)}")):
        fit(X_COUNTS, H=np.ones((k, m + 1)))
    with pytest.raises(ValueError, match=re.escape(f"H has shape {(k + 1, m)}")):
        fit(X_COUNTS, H=np.ones((k + 1, m)))
    H_neg = H.copy()
    H_neg[-1, -1] = -1.0
    with pytest.raises(ValueError, match="H has negative entries"):
        fit(X_COUNTS, H=H_neg)
    H_nan = H.copy()
    H_nan[1, 1] = np.nan
    with pytest.raises(ValueError, match="H contains NaN or infinity"):
        fit(X_COUNTS, H=H_nan)
    # Dirichlet parameters: a zero entry is refused too.
    H_zero = H.copy()
    H_zero[0, 2] = 0.0
    with pytest.raises(ValueError, match="H must be strictly positive"):
        fit(X_COUNTS, H=H_zero)


@pytest.mark.parametrize("spec", estimators_without("custom_start"))
def test_custom_init_refused_without_a_custom_start(spec):
    with pytest.raises(ValueError, match="init"):
        spec.make(n_components=2, init="custom").fit(X_COUNTS)


@pytest.mark.parametrize(
    "spec, init",
    estimators_and(
        [None, "random", "nndsvda"], "custom_start", accepted=accepted_inits
    ),
)
def test_start_given_without_custom_init_raises(spec, init):
    n, m = X_COUNTS.shape
    W, H = _custom_start(n, m, 2)
    est = spec.make(n_components=2, init=init, max_iter=5, random_state=0)
    for kwargs in ({"W": W, "H": H}, {"W": W}, {"H": H}):
        with pytest.raises(ValueError, match="init='custom'"):
            est.fit(X_COUNTS, **kwargs)


@pytest.mark.parametrize("spec", ALL)
def test_nndsvda_too_many_components_raises(spec):
    X = X_COUNTS[:4, :6]  # min(n_samples, n_features) = 4
    with pytest.raises(ValueError, match="nndsvda.*n_components <= min"):
        spec.make(n_components=5, init="nndsvda").fit(X)
    # init=None falls back to "random" in that case instead of raising.
    est = spec.make(n_components=5, max_iter=5, random_state=0).fit(X)
    assert est.components_.shape == (5, 6)


@pytest.mark.parametrize("spec", ALL)
def test_default_init(spec):
    # init=None is the registry's default_init when that start is feasible.
    params = dict(n_components=3, max_iter=5, tol=0, random_state=0)
    default = spec.make(**params).fit(X_COUNTS)
    named = spec.make(init=spec.default_init, **params).fit(X_COUNTS)
    assert_array_equal(default.components_, named.components_)
    assert_array_equal(default.loss_history_, named.loss_history_)
    other = next(
        init for init in spec.inits if init not in (spec.default_init, "custom")
    )
    different = spec.make(init=other, **params).fit(X_COUNTS)
    assert default.loss_history_[0] != different.loss_history_[0]


# --------------------------------------- 3. the caller's data is never modified
@pytest.mark.parametrize("spec", ALL)
@pytest.mark.parametrize("container", list(CONTAINERS))
def test_input_not_modified(spec, container):
    X = CONTAINERS[container](X_COUNTS)
    snap = _snapshot(X)
    est = spec.make(n_components=3, max_iter=10, random_state=0)
    est.fit(X)
    _assert_unchanged(X, snap)
    T = est.transform(X)
    _assert_unchanged(X, snap)
    est.fit_transform(X)
    _assert_unchanged(X, snap)
    est.score(X)
    _assert_unchanged(X, snap)
    if spec.completion_score:
        est.perplexity(X)
        _assert_unchanged(X, snap)
    if spec.partial_fit:
        est.partial_fit(X)
        est.partial_fit(X)
        _assert_unchanged(X, snap)
    T_snap = _snapshot(T)
    est.inverse_transform(T)
    _assert_unchanged(T, T_snap)

    if spec.custom_start is None:
        return
    n, m = X_COUNTS.shape
    W, H = _custom_start(n, m, 3)
    W_snap, H_snap = _snapshot(W), _snapshot(H)
    custom = spec.make(n_components=3, init="custom", max_iter=10)
    custom.fit(X, **spec.start_kwargs(W, H))
    custom.fit_transform(X, **spec.start_kwargs(W, H))
    _assert_unchanged(X, snap)
    _assert_unchanged(W, W_snap)
    _assert_unchanged(H, H_snap)
    # The fitted model does not alias the caller's start.
    assert not np.shares_memory(custom.components_, H)


# ------------------------------------------------------ 4. sparse == dense
@pytest.mark.parametrize("spec", ALL)
@pytest.mark.parametrize("container", ["csr", "csc", "csr_array", "csr_explicit_zeros"])
def test_sparse_equals_dense(spec, container):
    params = dict(n_components=3, max_iter=30, tol=0, random_state=0)
    ref = spec.make(**params).fit(X_COUNTS)
    X = CONTAINERS[container](X_COUNTS)
    est = spec.make(**params).fit(X)
    assert_allclose(est.components_, ref.components_, rtol=1e-10)
    assert_allclose(est.embedding_, ref.embedding_, rtol=1e-10)
    assert_allclose(est.loss_history_, ref.loss_history_, rtol=1e-10)
    assert_allclose(est.transform(X), ref.transform(X_COUNTS), rtol=1e-10)
    assert_allclose(est.score(X), ref.score(X_COUNTS), rtol=1e-10)


# --------------------------------------------------------------- 5. float32
@pytest.mark.parametrize("spec", ALL)
@pytest.mark.parametrize("container", ["dense", "csr", "csc"])
def test_float32_preserved(spec, container):
    X = CONTAINERS[container](X_COUNTS.astype(np.float32))
    est = spec.make(n_components=3, max_iter=20, random_state=0)
    T_fit = est.fit_transform(X)
    T = est.transform(X)
    assert est.components_.dtype == np.float32
    assert est.embedding_.dtype == np.float32
    assert T_fit.dtype == np.float32
    assert T.dtype == np.float32
    assert est.inverse_transform(T).dtype == np.float32
    if spec.probabilistic_factors:
        assert est.p_z_.dtype == np.float32
        assert est.p_d_given_z_.dtype == np.float32
    assert np.isfinite(est.loss_) and np.isfinite(est.score(X))


_PLAIN_EM = {"PLSI": {"solver": "em"}, "HybridNMFPLSI": {"plsi_solver": "em"}}


@pytest.mark.parametrize("spec", ALL)
@pytest.mark.parametrize("sparse", [False, True])
def test_float32_close_to_float64(spec, sparse):
    params, start64 = _deterministic_start(spec, X_COUNTS, 3)
    _, start32 = _deterministic_start(spec, X_COUNTS, 3, dtype=np.float32)
    params.update(max_iter=20, tol=0, **spec.fixed_iteration_params)
    # Plain EM: SQUAREM's extrapolations amplify float32 rounding beyond
    # rtol=1e-3 in 20 iterations (coordinate descent stays within it).
    params.update(_PLAIN_EM.get(spec.name, {}))
    X64 = sp.csr_matrix(X_COUNTS) if sparse else X_COUNTS
    X32 = X64.astype(np.float32)
    e64 = spec.make(**params).fit(X64, **start64)
    e32 = spec.make(**params).fit(X32, **start32)
    # float32 rounds every operation with relative error eps ~ 1.2e-7; each of
    # the 20 multiplicative iterations compounds a few such errors per entry
    # (observed: ~2e-5 relative, even on the tiny entries the updates drive
    # towards zero).  rtol=1e-3 leaves a wide margin over that while still
    # catching any genuine divergence between the two precisions.
    if spec.fit_underflows_float32:
        # Entries that decay towards 0 end at float32's floor or 0 in float32,
        # at 1e-300 or below in float64 (registry): 0 in both, to any
        # precision.  More generally an entry below float32's resolution of
        # its row's largest entry (eps32 * max) vanishes from every float32
        # sum over the row, so only its absolute error is meaningful: it is
        # held to that resolution, the others to rtol=1e-3.  (A topic entry
        # of 7.5e-5 in a row reaching 200, 3 ulps of the row, differed by
        # 0.27 % where NumPy ran its generic SIMD loops.)
        assert np.all(e32.components_ >= 0)
        resolution = np.finfo(np.float32).eps * e64.components_.max(axis=1)
        error = np.abs(e32.components_ - e64.components_)
        assert np.all(error <= 1e-3 * e64.components_ + resolution[:, None])
    else:
        assert_allclose(e32.components_, e64.components_, rtol=1e-3)
    if spec.embedding_close_in_float32:
        assert_allclose(e32.embedding_, e64.embedding_, rtol=1e-3)
    assert_allclose(e32.loss_history_, e64.loss_history_, rtol=1e-4)
    assert_allclose(e32.transform(X32), e64.transform(X64), rtol=1e-3, atol=1e-6)
    if spec.probabilistic_factors:
        assert_allclose(e32.p_z_, e64.p_z_, rtol=1e-3)


# -------------------------------------------------------- 6. random_state
@pytest.mark.parametrize(
    "spec, init",
    estimators_and(["random", "nndsvda", "kmeans"], accepted=accepted_inits),
)
def test_random_state_reproducible(spec, init):
    params = dict(n_components=3, init=init, max_iter=15)
    a = spec.make(random_state=42, **params).fit(X_COUNTS)
    b = spec.make(random_state=42, **params).fit(X_COUNTS)
    assert_array_equal(a.components_, b.components_)
    assert_array_equal(a.loss_history_, b.loss_history_)
    assert_array_equal(a.transform(X_COUNTS), b.transform(X_COUNTS))
    # A RandomState instance seeded the same way gives the same fit too.
    c = spec.make(random_state=np.random.RandomState(42), **params).fit(X_COUNTS)
    if init in spec.rng_instance_differs_from_int_seed_with:
        # Not the int's fit (see the registry), but reproducible all the same.
        d = spec.make(random_state=np.random.RandomState(42), **params).fit(X_COUNTS)
        assert_array_equal(c.components_, d.components_)
        assert_array_equal(c.loss_history_, d.loss_history_)
    else:
        assert_array_equal(a.components_, c.components_)


@pytest.mark.parametrize("spec", ALL)
def test_different_seeds_differ(spec):
    params = dict(n_components=3, init="random", max_iter=15)
    a = spec.make(random_state=0, **params).fit(X_COUNTS)
    b = spec.make(random_state=1, **params).fit(X_COUNTS)
    assert not np.allclose(a.components_, b.components_)


# ------------------------------------------------- 7. explicitly stored zeros
@pytest.mark.parametrize("spec", ALL)
@pytest.mark.parametrize("init", [None, "random"])
def test_explicit_zeros_ignored(spec, init):
    X_ez = _with_explicit_zeros(X_COUNTS)
    X_clean = X_ez.copy()
    X_clean.eliminate_zeros()
    assert X_clean.nnz < X_ez.nnz
    params = dict(n_components=3, init=init, max_iter=20, tol=0, random_state=0)
    a = spec.make(**params).fit(X_ez)
    b = spec.make(**params).fit(X_clean)
    assert_allclose(a.components_, b.components_, rtol=1e-12)
    assert_allclose(a.embedding_, b.embedding_, rtol=1e-12)
    assert_allclose(a.loss_history_, b.loss_history_, rtol=1e-12)
    assert_allclose(a.transform(X_ez), b.transform(X_clean), rtol=1e-12)
    assert_allclose(a.score(X_ez), b.score(X_clean), rtol=1e-12)


# ------------------------------------------- 8. empty documents and terms
@pytest.mark.parametrize("spec", ALL)
@pytest.mark.parametrize("init", [None, "random"])
@pytest.mark.parametrize("sparse", [False, True])
def test_empty_row_and_column_finite(spec, init, sparse):
    X = X_COUNTS[:20, :15].copy()
    X[4, :] = 0
    X[:, 7] = 0
    X_in = sp.csr_matrix(X) if sparse else X
    est = spec.make(n_components=3, init=init, max_iter=30, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        T_fit = est.fit_transform(X_in)
        T = est.transform(X_in)
        score = est.score(X_in)
    attrs = _fitted_arrays(est)
    for name in ["components_", "embedding_", "loss_", "loss_history_"]:
        assert name in attrs
    if spec.probabilistic_factors:
        assert "p_z_" in attrs and "p_d_given_z_" in attrs
    for name, value in attrs.items():
        assert np.all(np.isfinite(value)), name
    assert np.all(np.isfinite(T_fit)) and np.all(np.isfinite(T))
    assert np.isfinite(score) and score <= 0
    if spec.empty_term_is_zero:
        # The empty term is never emitted by any topic.
        assert_array_equal(est.components_[:, 7], 0)
    if spec.empty_document_is_p_z:
        # A document without words: P(z|d) is the corpus prior P(z).
        assert_allclose(T[4], est.p_z_, rtol=1e-12)
        assert_allclose(est.embedding_[4], est.p_z_, rtol=1e-12)
        new = est.transform(np.zeros((2, X.shape[1])))
        assert_allclose(new, np.tile(est.p_z_, (2, 1)), rtol=1e-12)


@pytest.mark.parametrize(
    "spec, init",
    estimators_and([None, "random", "custom"], accepted=accepted_inits),
)
def test_all_zero_matrix(spec, init):
    X = np.zeros((5, 4))
    est = spec.make(n_components=2, init=init, max_iter=10, random_state=0)
    kwargs = {}
    if init == "custom":
        kwargs = spec.start_kwargs(*_custom_start(5, 4, 2))
    T = est.fit_transform(X, **kwargs)
    for name, value in _fitted_arrays(est).items():
        assert np.all(np.isfinite(value)), name
    assert np.all(np.isfinite(T))
    if spec.zero_data_loss == "zero":
        assert est.loss_ == 0.0
    elif spec.zero_data_loss == "positive":
        assert est.loss_ > 0
    else:
        assert est.loss_history_[0] > 0 and est.loss_ >= 0
    if spec.completion_score:
        with pytest.raises(ValueError, match="no words"):
            est.score(X)
        with pytest.raises(ValueError, match="no words"):
            est.perplexity(X)
    else:
        score = est.score(X)
        assert np.isfinite(score) and score <= 0


# ------------------------------------------------------ 9. fold-in contract
@pytest.mark.parametrize("spec", ALL)
@pytest.mark.parametrize("init", [None, "random"])
def test_fit_transform_equals_fit_then_transform(spec, init):
    params = dict(n_components=3, init=init, max_iter=25, random_state=0)
    T1 = spec.make(**params).fit_transform(X_COUNTS)
    T2 = spec.make(**params).fit(X_COUNTS).transform(X_COUNTS)
    assert_array_equal(T1, T2)
    if spec.custom_start is None:
        return
    # Also from a custom start, sparse input.
    Xs = sp.csr_matrix(X_COUNTS)
    params, start = _deterministic_start(spec, X_COUNTS, 3)
    params["max_iter"] = 25
    T1 = spec.make(**params).fit_transform(Xs, **start)
    T2 = spec.make(**params).fit(Xs, **start).transform(Xs)
    assert_array_equal(T1, T2)


@pytest.mark.parametrize("spec", ALL)
@pytest.mark.parametrize("sparse", [False, True])
def test_transform_is_per_document(spec, sparse):
    est = spec.make(n_components=3, max_iter=25, random_state=0).fit(X_COUNTS)
    X = sp.csr_matrix(X_COUNTS) if sparse else X_COUNTS
    full = est.transform(X)
    idx = np.array([7, 0, 31, 3, 3, 12])
    if spec.transform_bitwise_per_document:
        assert_array_equal(est.transform(X[idx]), full[idx])
        assert_array_equal(est.transform(X[5:6]), full[5:6])
    else:
        assert_allclose(est.transform(X[idx]), full[idx], rtol=1e-10)
        assert_allclose(est.transform(X[5:6]), full[5:6], rtol=1e-10)
    # Deterministic: same input, same output.
    assert_array_equal(est.transform(X), full)


@pytest.mark.parametrize("spec", ALL)
def test_transform_rows_sum_to_one(spec):
    est = spec.make(n_components=3, max_iter=25, random_state=0).fit(X_COUNTS)
    T = est.transform(X_COUNTS)
    assert np.all(T >= 0)
    if spec.transform_rows_sum_to_one:
        assert_allclose(T.sum(axis=1), 1, rtol=1e-12)
        assert_allclose(est.embedding_.sum(axis=1), 1, rtol=1e-12)
    else:
        # Weights in count scale: rows sum to about the document lengths.
        assert not np.allclose(T.sum(axis=1), 1)


# ------------------------------------------- 10. online and block-wise fits
@pytest.mark.parametrize("spec", estimators_with("partial_fit"))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_partial_fit(spec, dtype):
    X = sp.csr_matrix(X_COUNTS.astype(dtype))
    est = spec.make(n_components=3, random_state=0)
    assert est.partial_fit(X[:20]) is est
    first = est.components_.copy()
    est.partial_fit(X[20:])
    assert est.components_.shape == (3, X.shape[1])
    assert est.components_.dtype == dtype
    assert np.all(np.isfinite(est.components_))
    assert not np.array_equal(est.components_, first)  # the second batch counted
    T = est.transform(X)
    assert T.shape == (X.shape[0], 3) and T.dtype == dtype
    assert np.all(np.isfinite(T))
    with pytest.raises(ValueError, match=f"{X.shape[1] - 1} features"):
        est.partial_fit(X[:, :-1])
    # The same mini-batches, the same model.
    again = spec.make(n_components=3, random_state=0)
    again.partial_fit(X[:20]).partial_fit(X[20:])
    assert_array_equal(again.components_, est.components_)


@pytest.mark.parametrize("spec", estimators_with("blockwise"))
def test_blockwise_fit_equals_in_memory_fit(spec):
    # The default start (NNDSVDa from products with the blocks), restarts and
    # split-merge moves included: tests/engine/test_out_of_core.py and
    # test_distributed.py check the estimators' own defaults.
    params = dict(n_components=3, random_state=2)
    # At the defaults: the same solver wherever the data are.
    ref = spec.make(**params).fit(X_COUNTS)
    est = spec.make(**params).fit(Blocks(X_COUNTS, block_size=15))
    for name in [n for n in vars(ref) if n.endswith("solver_")]:
        assert getattr(est, name) == getattr(ref, name)
    assert est.n_iter_ == ref.n_iter_
    assert_allclose(est.loss_, ref.loss_, rtol=1e-9)
    # The same iterations, summed over blocks: the same fit up to rounding
    # (the tolerance of tests/engine/test_out_of_core.py).
    assert_allclose(est.components_, ref.components_, rtol=1e-6, atol=1e-12)
    assert_allclose(est.loss_history_, ref.loss_history_, rtol=1e-6)
    assert_allclose(est.embedding_, ref.embedding_, rtol=1e-6, atol=1e-10)
    assert_allclose(est.transform(X_COUNTS), ref.transform(X_COUNTS), rtol=1e-6)


@pytest.mark.parametrize("spec", estimators_without("blockwise"))
def test_blocks_refused_without_blockwise_fit(spec):
    with pytest.raises(ValueError, match=spec.blocks_refusal):
        spec.make(n_components=2, random_state=0).fit(Blocks(X_COUNTS, block_size=15))


@pytest.mark.parametrize("spec", estimators_with("n_init"))
def test_n_init_keeps_the_best_start(spec):
    # No split-merge moves: they come after the best start, from its topics.
    params = dict(n_components=3, max_iter=8, tol=0, split_merge=0, random_state=4)
    one = spec.make(**params).fit(X_COUNTS)
    best = spec.make(n_init=3, **params).fit(X_COUNTS)
    # The first start is init's, the others more random starts.
    assert best.loss_ <= one.loss_
    assert len(best.loss_history_) == best.n_iter_ + 1


# ----------------------------------------------- 11. scikit-learn ecosystem
@pytest.mark.parametrize("spec", ALL)
def test_clone_and_pickle(spec):
    est = spec.make(n_components=3, max_iter=20, random_state=0)
    est.fit(X_COUNTS)
    cloned = clone(est)
    assert cloned.get_params() == est.get_params()
    assert not hasattr(cloned, "components_")
    assert_array_equal(cloned.fit(X_COUNTS).components_, est.components_)
    restored = pickle.loads(pickle.dumps(est))
    assert_array_equal(restored.components_, est.components_)
    assert_array_equal(restored.transform(X_COUNTS), est.transform(X_COUNTS))
    assert restored.score(X_COUNTS) == est.score(X_COUNTS)


PETS = [
    "the cat sat on the mat with the kitten",
    "my dog chased the cat around the garden",
    "the puppy and the kitten sleep on the mat",
    "a dog and a cat play with a ball",
    "the kitten purrs while the puppy barks",
]
MARKETS = [
    "stocks fell as bond yields rose sharply",
    "investors sold stocks and bought bonds",
    "the market rallied as bond yields fell",
    "stock prices and bond yields moved the market",
    "investors expect the market to rally as stocks rise",
]


@pytest.mark.parametrize("spec", ALL)
def test_pipeline_feature_names_and_pandas_output(spec):
    docs = PETS + MARKETS
    pipe = Pipeline(
        [
            ("counts", CountVectorizer(stop_words="english")),
            ("topics", spec.make(n_components=2, max_iter=100, random_state=0)),
        ]
    )
    T = pipe.fit_transform(docs)
    assert T.shape == (10, 2)
    prefix = spec.name.lower()
    expected = [f"{prefix}0", f"{prefix}1"]
    assert list(pipe.get_feature_names_out()) == expected
    assert list(pipe[-1].get_feature_names_out()) == expected
    if spec.topics_cluster_documents:
        # The two themes end up in different topics.
        pets_topic = np.bincount(T[:5].argmax(axis=1), minlength=2).argmax()
        market_topic = np.bincount(T[5:].argmax(axis=1), minlength=2).argmax()
        assert pets_topic != market_topic

    pipe[-1].set_output(transform="pandas")
    out = pipe.transform(docs)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == expected
    assert_allclose(out.to_numpy(), T)


@pytest.mark.parametrize("spec", ALL)
def test_set_output_pandas(spec):
    est = spec.make(n_components=3, max_iter=20, random_state=0)
    est.set_output(transform="pandas")
    columns = [f"w{j}" for j in range(X_COUNTS.shape[1])]
    X_df = pd.DataFrame(X_COUNTS, columns=columns)
    out = est.fit_transform(X_df)
    prefix = spec.name.lower()
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == [f"{prefix}{j}" for j in range(3)]
    assert list(est.feature_names_in_) == columns
    out2 = est.transform(X_df)
    assert isinstance(out2, pd.DataFrame)
    assert_array_equal(out.to_numpy(), out2.to_numpy())


@pytest.mark.parametrize("spec", ALL)
def test_grid_search_default_scoring(spec):
    search = GridSearchCV(
        spec.make(max_iter=30, random_state=0), {"n_components": [1, 2, 3]}, cv=3
    )
    search.fit(X_COUNTS)
    assert search.best_params_["n_components"] in (1, 2, 3)
    scores = search.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores)) and np.all(scores <= 0)
    # Default scoring is the estimator's own score (per-word log-likelihood).
    assert_allclose(
        search.best_estimator_.score(X_COUNTS),
        search.score(X_COUNTS),
    )


@pytest.mark.parametrize("spec", estimators_with("completion_score"))
def test_score_and_perplexity(spec):
    est = spec.make(n_components=3, max_iter=10, random_state=0).fit(X_COUNTS)
    score = est.score(X_COUNTS)
    assert np.isfinite(score) and score <= 0
    assert_allclose(est.perplexity(X_COUNTS), np.exp(-score), rtol=1e-12)
    with pytest.raises(ValueError, match="no words"):
        est.perplexity(np.zeros((2, X_COUNTS.shape[1])))
    with pytest.raises(ValueError, match="features"):
        est.perplexity(X_COUNTS[:, :5])


@pytest.mark.parametrize("spec", ALL)
def test_convergence_warning(spec):
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        spec.make(n_components=2, max_iter=1, tol=1e-4, random_state=0).fit(X_COUNTS)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = spec.make(n_components=2, max_iter=3, tol=0, random_state=0)
        est.fit(X_COUNTS)
        est.transform(X_COUNTS)
    # 3 iterations; the hybrid's 3 per phase, in 2 phases per round.
    assert est.n_iter_ == spec.iterations_at_tol_zero(est)
    assert len(est.loss_history_) == est.n_iter_ + 1


@pytest.mark.parametrize("spec", estimators_with("verbose_prefix"))
def test_verbose_output(spec, capsys):
    spec.make(n_components=2, max_iter=4, tol=0, verbose=2, random_state=0).fit(
        X_COUNTS
    )
    lines = capsys.readouterr().out.splitlines()
    pattern = re.compile(r"iteration\s+\d+\s+objective\s+\S+")
    iteration_lines = [ln for ln in lines if pattern.search(ln)]
    assert len(iteration_lines) == 4
    assert "stopped after 4 iterations" in lines[-1]
    assert all(ln.startswith(f"[{spec.verbose_prefix}]") for ln in iteration_lines)


@pytest.mark.parametrize("spec", ALL)
def test_verbose_zero_is_silent(spec, capsys):
    spec.make(n_components=2, max_iter=4, tol=0, verbose=0, random_state=0).fit(
        X_COUNTS
    )
    assert capsys.readouterr().out == ""
    spec.make(n_components=2, max_iter=4, tol=0, verbose=1, random_state=0).fit(
        X_COUNTS
    )
    assert capsys.readouterr().out != ""


# ----------------------------- extra: the objective is monotone on real data
@pytest.mark.parametrize("spec", ALL)
@pytest.mark.parametrize("init", [None, "random"])
def test_loss_history_non_increasing(spec, init):
    est = spec.make(n_components=3, init=init, max_iter=50, tol=0, random_state=0)
    est.fit(X_COUNTS)
    h = est.loss_history_
    assert len(h) == est.n_iter_ + 1 == spec.iterations_at_tol_zero(est) + 1
    assert est.loss_ == h[-1]
    assert np.all(np.diff(h) <= 1e-10 * abs(h[0]))
    assert h[-1] < h[0]


# ------------------------- regression tests for extreme (but valid) inputs
# Minimal inputs distilled from failures of the property-based test below.
# All are finite, non-negative and within float32 range; float64 handles the
# same magnitudes, float32 must not silently return -inf or NaN either.
def _assert_finite_fit(est, X):
    for name in ("components_", "embedding_", "loss_history_"):
        value = getattr(est, name)
        assert np.all(np.isfinite(value)), f"{name} not finite: {value}"
    assert np.all(np.isfinite(est.transform(X)))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("spec", ALL)
@pytest.mark.parametrize(
    "dtype, big, small", [(np.float32, 1e30, 1e-30), (np.float64, 1e200, 1e-200)]
)
def test_objective_finite_when_ratio_underflows(spec, dtype, big, small):
    # X / (W H) at the small entry is ~small / big, which underflows to 0;
    # xlogy(small, 0) = -inf then makes the objective -inf although its true
    # value is finite (about big * log 2).
    X = np.array([[big, small]], dtype=dtype)
    est = spec.make(n_components=1, init="random", max_iter=5, random_state=0)
    est.fit(X)
    _assert_finite_fit(est, X)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("spec", ALL)
def test_nndsvda_start_float32_no_overflow(spec):
    # The SVD part of the start is on the scale sqrt(X) ~ 1e10, but zeros of
    # W and H are filled with mean(X) = 2.5e19, so (W H)[1, 1] = 6e38
    # overflows float32 (max 3.4e38).
    X = np.array([[1e20, 0.0], [0.0, 1.0]], dtype=np.float32)
    est = spec.make(n_components=1, init="nndsvda", max_iter=5, random_state=0)
    est.fit(X)
    _assert_finite_fit(est, X)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("spec", ALL)
def test_float32_topic_update_no_nan(spec):
    # A topic-word entry underflows to 0 while X / (W H) at that word, with the
    # model floored at the smallest normal float32, times a document loading
    # ~1e29 overflows: H * (W.T @ R) then evaluates 0 * inf = NaN.
    a, b = 1e29, 1e-20
    X = np.array([[a, b, b], [b, b, a], [b, a, b]], dtype=np.float32)
    est = spec.make(n_components=2, init="random", max_iter=30, random_state=0)
    est.fit(X)
    for name in ("components_", "embedding_"):
        value = getattr(est, name)
        assert np.all(np.isfinite(value)), f"{name} not finite: {value}"


# ------------------------------------------------- 12. property-based test
@st.composite
def nonnegative_matrices(draw):
    n = draw(st.integers(1, 8))
    m = draw(st.integers(1, 8))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    # Values 10**e with e in [-30, 30]: thirty orders of magnitude either side
    # of 1, all representable (as normal numbers) in float32 too.
    exponents = draw(
        arrays(np.float64, (n, m), elements=st.floats(-30, 30, allow_nan=False))
    )
    mask = draw(arrays(np.bool_, (n, m)))
    # Force some whole documents / terms to be empty.
    empty_rows = draw(st.lists(st.integers(0, n - 1), max_size=n))
    empty_cols = draw(st.lists(st.integers(0, m - 1), max_size=m))
    mask[empty_rows, :] = False
    mask[:, empty_cols] = False
    X = np.where(mask, 10.0**exponents, 0.0).astype(dtype)
    if draw(st.booleans()):
        X = sp.csr_matrix(X)
    return X


# The rounding slack below is that of a KL objective; tests/test_robustness.py
# runs the same property on all eight estimators, each with its objective's
# slack (marked slow).
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("spec", estimators_with("kl_objective"))
@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    # No shrinking: a failure is reported at once (shrinking extreme float
    # matrices takes tens of seconds); the regression tests above pin the
    # minimal failing inputs found so far.
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    X=nonnegative_matrices(),
    n_components=st.integers(1, 3),
    init=st.sampled_from([None, "random", "nndsvda"]),
    random_state=st.integers(0, 2**16),
)
# Pinned inputs: a legitimate all-zero matrix, and minimal float32 inputs that
# random generation found (objective -inf; NaN from the nndsvda start).
@example(X=np.zeros((3, 4)), n_components=2, init=None, random_state=0)
@example(
    X=sp.csr_matrix(np.zeros((2, 5), dtype=np.float32)),
    n_components=3,
    init="random",
    random_state=0,
)
@example(
    X=np.array([[1e30, 1e-30]], dtype=np.float32),
    n_components=1,
    init="random",
    random_state=0,
)
@example(
    X=np.array([[1e20, 0.0], [0.0, 1.0]], dtype=np.float32),
    n_components=1,
    init=None,
    random_state=0,
)
# Entries from 1e-26 to 1e30 in one float32 matrix: at the start, ratios
# x / (W H) above float32's largest value (found by CI's random generation).
@example(
    X=sp.csr_matrix(
        np.array(
            [
                [1.0, 6.4414741e-19, 3.3558320e24],
                [2.8342112e07, 1.0, 5.0436183e16],
                [1e30, 1e30, 1.0],
                [2.5191628e-12, 5.5783630e17, 6.5838331e-26],
            ],
            dtype=np.float32,
        )
    ),
    n_components=1,
    init=None,
    random_state=4,
)
# A model that vanishes at a stored entry after the first pass: the model a
# diagonal Newton pass hands to the next must be the factors' own there, not
# a floored one (found by CI's random generation).
@example(
    X=np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.34435603e05], [0.0, 1.0]]),
    n_components=1,
    init="nndsvda",
    random_state=65536,
)
def test_property_random_nonnegative_input(spec, X, n_components, init, random_state):
    est = spec.make(
        n_components=n_components, init=init, max_iter=30, random_state=random_state
    )
    try:
        est.fit(X)
    except ValueError:
        # Refusing an input is allowed; any other exception is a bug.
        return
    for name in ("components_", "embedding_", "loss_history_"):
        value = getattr(est, name)
        assert np.all(np.isfinite(value)), f"{name} not finite: {value}"
    T = est.transform(X)
    assert T.shape == (X.shape[0], n_components)
    assert np.all(np.isfinite(T)), f"transform not finite: {T}"

    # The updates never increase the objective in exact arithmetic.  Each
    # evaluated objective is a sum of terms X_ij log(X_ij / Y_ij), X_ij and
    # Y_ij whose magnitudes add up to about sum(X) + |loss|; each term carries
    # a relative rounding error of a few eps of the working dtype (the model
    # Y is an n_components-term dot product, then a division and a log), and
    # the iterate itself is only computed to a few eps, which moves the
    # objective by about eps * sum|Y - X| <= eps * 2 sum(X) to first order.
    # 50 eps times that scale bounds these errors with a wide margin, while a
    # real ascent step (relative size >> 1e-5 in float32) still fails.
    h = est.loss_history_
    eps = np.finfo(X.dtype).eps
    x_sum = float(X.sum(dtype=np.float64))
    for before, after in zip(h[:-1], h[1:], strict=True):
        slack = 50 * eps * (x_sum + max(abs(before), abs(after)))
        assert after - before <= slack, (h, slack)


# ------------------------------------------- what transform's rows sum to
def _transform_row_sums_as_documented(spec, est, X, T):
    """The row sums that ``TopicEstimator.transform``'s docstring states."""
    n_words = X.sum(axis=1)
    name = spec.name
    if spec.transform_rows_sum_to_one:
        return np.ones(X.shape[0]), T.sum(axis=1)
    if name == "KLNMF":
        return n_words, T @ est.components_.sum(axis=1)
    if name in ("NormalizedNMF", "JointNMF"):
        return n_words, T.sum(axis=1)
    if name == "GammaPoissonVI":
        alpha = np.sum(np.broadcast_to(est.doc_topic_prior_, (est.n_components,)))
        return (n_words + alpha) / (est.doc_topic_rate + 1), T.sum(axis=1)
    raise AssertionError(f"transform of {name} is not documented")


@pytest.mark.parametrize("spec", estimators_with(), ids=str)
def test_transform_rows_are_what_the_docstring_says(spec):
    X = low_rank_counts(n_samples=30, n_features=20, rank=3, mean_count=3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = spec.make(n_components=3, max_iter=50, random_state=0).fit(X)
        T = est.transform(X)
    expected, actual = _transform_row_sums_as_documented(spec, est, X, T)
    assert_allclose(actual, expected, rtol=1e-9)
    # topic_proportions: P(z|d) for every estimator that has it.
    if hasattr(est, "topic_proportions"):
        assert_allclose(est.topic_proportions(X).sum(axis=1), 1, rtol=1e-12)


@pytest.mark.parametrize("spec", ALL)
def test_the_fitted_solvers_name_what_ran(spec):
    # solver_ (and LDAVI's inference_) is what ran: pinning the parameters
    # to the fitted values gives the very same fit.
    est = spec.make(n_components=3, random_state=0).fit(X_COUNTS)
    pinned = {
        name[:-1]: value
        for name, value in vars(est).items()
        if name.endswith("solver_") or name == "inference_"
    }
    if not pinned:
        pytest.skip(f"{spec.name} has one way of fitting")
    again = spec.make(n_components=3, random_state=0, **pinned).fit(X_COUNTS)
    assert_array_equal(again.components_, est.components_)
    assert again.n_iter_ == est.n_iter_
