"""The backend switch and the two backends of the kernels: NumPy and numba.

The NumPy kernels are the reference; their compiled twins
(`sklearn_topicfac.kernels.compiled`) must give the same fits to rounding:
rtol 1e-10 in float64 and 1e-4 in float32 after 50 iterations.  The
contract tests of the kernels and the equivalence tests of the estimators
run on both backends through the ``backend`` fixture (``tests/conftest.py``).
"""

import contextvars
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _corpora import lda_counts, planted_counts, random_start
from _estimators import classes_with, estimator_variants
from joblib import Parallel, delayed
from numpy.testing import assert_allclose

from sklearn_topicfac import (
    KLNMF,
    LDAVI,
    PLSI,
    JointNMF,
    _config,
    config_context,
    get_config,
    set_config,
)
from sklearn_topicfac import kernels as K

needs_numba = pytest.mark.skipif(
    not _config.numba_available(),
    reason='the numba backend needs numba: pip install ".[fast]"',
)

# ------------------------------------------------------------ the switch


def test_config_context_overrides_and_restores():
    assert get_config()["backend"] == "numpy"  # the suite's default (conftest)
    with config_context(backend="auto"):
        assert get_config() == {"backend": "auto"}
        with config_context():
            assert get_config()["backend"] == "auto"
    assert get_config()["backend"] == "numpy"


def test_set_config_is_the_default_outside_contexts():
    before = _config.get_config()
    try:
        set_config(backend="numpy")
        set_config()  # None leaves it unchanged
        with config_context(backend="auto"):
            pass
        # The suite's context pins numpy; the default shows in a fresh context.
        assert contextvars.Context().run(get_config) == {"backend": "numpy"}
    finally:
        set_config(**before)


@pytest.mark.parametrize("backend", ["fast", "NUMPY", 1])
def test_an_unknown_backend_is_a_clear_error(backend):
    with pytest.raises(ValueError, match="is not a backend; use one of"):
        set_config(backend=backend)
    with pytest.raises(ValueError, match="is not a backend"):
        with config_context(backend=backend):
            pass


def test_engine_is_a_deprecated_alias_of_backend():
    # The old name still works, with scikit-learn's warning for a renamed
    # parameter; both names at once is an error.
    before = _config.get_config()
    try:
        with pytest.warns(FutureWarning, match=r"set_config\(engine=...\).*backend"):
            set_config(engine="numpy")
        assert contextvars.Context().run(get_config) == {"backend": "numpy"}
    finally:
        set_config(**before)
    with pytest.warns(FutureWarning, match=r"config_context\(engine=...\)"):
        with config_context(engine="auto"):
            assert get_config() == {"backend": "auto"}
    assert get_config() == {"backend": "numpy"}
    with pytest.raises(ValueError, match="both backend='numpy' and engine='auto'"):
        with config_context(backend="numpy", engine="auto"):
            pass
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with config_context(backend="numpy"):
            set_config()


def test_numba_without_numba_says_how_to_install_it(monkeypatch):
    from sklearn_topicfac.kernels import _backend

    monkeypatch.setattr(_config, "numba_available", lambda: False)
    with pytest.raises(ValueError, match=r"pip install .*\[fast\]"):
        with config_context(backend="numba"):
            pass
    with config_context(backend="auto"):
        assert not _backend.runs_compiled()


@pytest.mark.parametrize("compiled", [False, True])
def test_auto_runs_large_calls_on_numba_only_once_compiled(monkeypatch, compiled):
    """``"auto"`` never compiles: large calls run on numba only when the
    twins are recorded as compiled (`compile_kernels`), small ones never."""
    from sklearn_topicfac.kernels import _backend, _compiled_cache

    monkeypatch.setattr(_config, "numba_available", lambda: True)
    monkeypatch.setattr(_compiled_cache, "ready", lambda: compiled)
    with config_context(backend="auto"):
        assert _backend.runs_compiled() is compiled
        assert _backend.runs_compiled(_backend.AUTO_MIN_WORK) is compiled
        assert not _backend.runs_compiled(_backend.AUTO_MIN_WORK - 1)
    with config_context(backend="numba"):
        assert _backend.runs_compiled(1)
    with config_context(backend="numpy"):
        assert not _backend.runs_compiled(_backend.AUTO_MIN_WORK)


@needs_numba
def test_auto_runs_large_calls_on_numba_and_small_ones_on_numpy(monkeypatch):
    from sklearn_topicfac.kernels import _backend, _compiled_cache, compiled

    monkeypatch.setattr(_compiled_cache, "ready", lambda: True)
    X = sp.random(100, 100, density=0.5, format="csr", random_state=0)
    large_k = _backend.AUTO_MIN_WORK // X.nnz + 1
    with config_context(backend="auto"):
        assert _backend.twins(X, large_k) is compiled
        assert _backend.twins(X, 3) is None
        assert _backend.twins(X.toarray(), large_k) is None  # dense: NumPy
    with config_context(backend="numba"):
        assert _backend.twins(X, 3) is compiled
    with config_context(backend="numpy"):
        assert _backend.twins(X, large_k) is None
    monkeypatch.setattr(_compiled_cache, "ready", lambda: False)
    with config_context(backend="auto"):
        assert _backend.twins(X, large_k) is None  # never compiles


@needs_numba
def test_numba_says_once_that_it_compiles(monkeypatch, caplog):
    from sklearn_topicfac.kernels import _backend, _compiled_cache

    monkeypatch.setattr(_backend, "_SAID", set())
    monkeypatch.setattr(_compiled_cache, "ready", lambda: False)
    X = sp.random(20, 20, density=0.5, format="csr", random_state=0)
    with caplog.at_level("WARNING", logger="sklearn_topicfac"):
        with config_context(backend="numba"):
            _backend.twins(X, 3)
            _backend.twins(X, 3)
    said = [r for r in caplog.records if "compile_kernels()" in r.getMessage()]
    assert len(said) == 1
    caplog.clear()
    monkeypatch.setattr(_backend, "_SAID", set())
    monkeypatch.setattr(_compiled_cache, "ready", lambda: True)
    with caplog.at_level("WARNING", logger="sklearn_topicfac"):
        with config_context(backend="numba"):
            _backend.twins(X, 3)
    assert not caplog.records  # compiled: nothing to say


def _engine_in_worker():
    return get_config()["backend"]


def test_the_setting_reaches_joblib_worker_processes():
    with config_context(backend="numpy"):
        task = _config.with_config(_engine_in_worker)
    with config_context(backend="auto"):
        seen = Parallel(n_jobs=2, backend="loky")(delayed(task)() for _ in range(2))
    assert seen == ["numpy", "numpy"]


@needs_numba
def test_the_engine_is_read_when_fit_runs(monkeypatch):
    from sklearn_topicfac.kernels import compiled

    calls = []
    original = compiled.mu_doc_pass

    def counting(*args):
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(compiled, "mu_doc_pass", counting)
    X = planted_counts()
    est = KLNMF(3, solver="mu", random_state=0, max_iter=5, split_merge=0)
    with config_context(backend="numpy"):
        est.fit(X)
    assert calls == []
    with config_context(backend="numba"):
        est.fit(X)
    assert len(calls) == 5


# --------------------------------------------------- the two backends agree

FITS = estimator_variants(custom_start="WH")
# The estimators with an E-step per document, whose sweeps a tolerance stops
# (the registry's fixed_iteration_params: mean_change_tol=0).
VARIATIONAL = classes_with("fixed_iteration_params")
# The accelerated solvers (coordinate descent's projections on zero,
# SQUAREM's long extrapolations) amplify float32 rounding, which differs
# between the engines: their iterates are compared in float64 only.
ACCELERATED = ("cd", "dn", "squarem")


def _resolved_solvers(Estimator, params):
    """The solvers the parameters resolve to (the same on both engines)."""
    est = Estimator(**params)
    return set(est._solvers().values()) if hasattr(est, "_solvers") else set()


def _fit_on(backend, Estimator, params, X, W0, H0):
    est = Estimator(
        3, init="custom", max_iter=50, tol=0, split_merge=0, random_state=0, **params
    )
    if Estimator is JointNMF and params.get("normalize") == "both":
        W0 = W0 / W0.sum(axis=1, keepdims=True)
    with config_context(backend=backend):
        est.fit(X, W=W0, H=H0)
        return est, est.transform(X)


@needs_numba
@pytest.mark.parametrize(("Estimator", "params"), FITS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_engines_agree_after_50_iterations(Estimator, params, dtype):
    solvers = _resolved_solvers(Estimator, params)
    if dtype == np.float32 and solvers & set(ACCELERATED):
        pytest.skip("accelerated solvers: engines compared in float64")
    X = planted_counts(dtype=dtype)
    W0, H0 = (A.astype(dtype) for A in random_start(X, 3))
    ref, ref_doc = _fit_on("numpy", Estimator, params, X, W0, H0)
    fast, fast_doc = _fit_on("numba", Estimator, params, X, W0, H0)
    rtol = 1e-4 if dtype == np.float32 else 1e-10
    assert fast.components_.dtype == ref.components_.dtype == dtype
    assert fast_doc.dtype == dtype
    assert_allclose(fast.components_, ref.components_, rtol=rtol, atol=1e-12)
    assert_allclose(fast.loss_history_, ref.loss_history_, rtol=rtol)
    assert_allclose(fast.embedding_, ref.embedding_, rtol=rtol, atol=1e-12)
    assert_allclose(fast_doc, ref_doc, rtol=rtol, atol=1e-12)


def _fits_on_both_engines(Estimator, X, **params):
    """``((est, est.transform(X)) on NumPy, the same on numba)``, by the
    mean-field E-step (LDAVI's default, MAP by EM, and CVB0:
    tests/estimators/test_map_lda.py, test_cvb0.py)."""
    if Estimator is LDAVI:
        params.setdefault("inference", "vb")
    fits = []
    for backend in ("numpy", "numba"):
        with config_context(backend=backend):
            est = Estimator(4, random_state=0, split_merge=0, **params).fit(X)
            fits.append((est, est.transform(X)))
    return fits


@needs_numba
@pytest.mark.parametrize("Estimator", VARIATIONAL)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_variational_engines_agree_after_50_iterations(Estimator, dtype):
    # Every document gets the same number of E-step sweeps on both backends
    # (mean_change_tol=0), and the fit runs its 50 epochs (tol=0).
    X = lda_counts(dtype=dtype)
    (ref, ref_doc), (fast, fast_doc) = _fits_on_both_engines(
        Estimator, X, max_iter=50, tol=0.0, mean_change_tol=0.0,
        max_doc_update_iter=100,
    )  # fmt: skip
    rtol = 1e-4 if dtype == np.float32 else 1e-10
    assert ref.n_iter_ == fast.n_iter_ == 50
    assert fast.components_.dtype == dtype and fast_doc.dtype == dtype
    assert_allclose(fast.components_, ref.components_, rtol=rtol, atol=1e-12)
    assert_allclose(fast_doc, ref_doc, rtol=rtol, atol=1e-12)


@needs_numba
@pytest.mark.parametrize("Estimator", VARIATIONAL)
def test_variational_engines_agree_at_the_default_e_step_tolerance(Estimator):
    # At the default mean_change_tol a document stops sweeping when its mean
    # change falls below 1e-3.  In float64 both backends make the same
    # decisions; in float32 rounding can move a document's last sweep by
    # one, so float32 fits at the default tolerance differ by up to that
    # tolerance (8e-3 measured), not by the engines' arithmetic (the test
    # above).
    X = lda_counts(dtype=np.float64)
    (ref, ref_doc), (fast, fast_doc) = _fits_on_both_engines(Estimator, X, max_iter=20)
    assert_allclose(fast.components_, ref.components_, rtol=1e-10, atol=1e-14)
    assert_allclose(fast_doc, ref_doc, rtol=1e-10, atol=1e-14)


def _kernel_inputs(dtype, seed=0):
    X = lda_counts(n=60, m=40, k=3, seed=seed, dtype=dtype)
    X.data[::7] = 0.0  # stored zeros
    rng = np.random.default_rng(seed)
    W = (rng.random((X.shape[0], 3)) + 0.1).astype(dtype)
    H = (rng.random((3, X.shape[1])) + 0.1).astype(dtype)
    return X, W, H


def _calls(X, W, H):
    B = H / H.sum(axis=1, keepdims=True)
    return {
        "mu_doc_step": lambda: K.mu_doc_step(X, W, H),
        "mu_doc_pass": lambda: K.mu_doc_pass(X, W, H),
        "em_doc_pass": lambda: K.em_doc_pass(X, W, H),
        "ratio_log_sums_at_nonzeros": lambda: (
            np.array(K.ratio_log_sums_at_nonzeros(X, W, H)),
        ),
        "ratio_at_nonzeros": lambda: K.ratio_at_nonzeros(X, W, H),
        "product_at_nonzeros": lambda: K.product_at_nonzeros(X, W, H),
        "mu_fold_in": lambda: K.mu_fold_in(X, H, W, 100, 1e-6),
        "lda_e_step": lambda: K.lda_e_step(X, W + 1, B, 0.1, 100, 1e-6),
        "cd_sweep": lambda: K.cd_sweep(X, W, H),
        "dn_sweep": lambda: K.dn_sweep(X, W, H),
    }


def _arrays(result):
    if not isinstance(result, tuple):
        result = (result,)
    return [r.toarray() if sp.issparse(r) else np.asarray(r) for r in result]


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "name",
    [
        "mu_doc_step",
        "mu_doc_pass",
        "em_doc_pass",
        "ratio_log_sums_at_nonzeros",
        "ratio_at_nonzeros",
        "product_at_nonzeros",
        "mu_fold_in",
        "lda_e_step",
        "cd_sweep",
        "dn_sweep",
    ],
)
def test_twins_match_keep_dtype_and_leave_inputs_alone(name, dtype):
    X, W, H = _kernel_inputs(dtype)
    before = [A.copy() for A in (X.data, X.indices, X.indptr, W, H)]
    with config_context(backend="numpy"):
        ref = _arrays(_calls(X, W, H)[name]())
    with config_context(backend="numba"):
        fast = _arrays(_calls(X, W, H)[name]())
    rtol = 1e-4 if dtype == np.float32 else 1e-10
    for a, b in zip(fast, ref, strict=True):
        # The sums of the divergence are float64 whatever the dtype.
        expected = np.float64 if a.shape == (2,) else dtype
        assert a.dtype == b.dtype == expected
        assert_allclose(a, b, rtol=rtol, atol=1e-30)
    for a, b in zip(before, (X.data, X.indices, X.indptr, W, H), strict=True):
        assert np.array_equal(a, b)


@needs_numba
def test_cd_twin_keeps_each_matrix_column_order_apart():
    # The twin keeps the column order of the last matrix it swept: another
    # matrix (of another shape, or the same shape with other indices) must
    # not reuse it.
    # (No stored zeros: where x = 0 a sweep may drive the model to zero, and
    # whether rounding leaves it just above or below zero decides the branch
    # the next step takes, on either engine.)
    X1, W1, H1 = _kernel_inputs(np.float64, seed=1)
    X2, W2, H2 = _kernel_inputs(np.float64, seed=2)
    X1.eliminate_zeros()
    X2.eliminate_zeros()
    X3 = sp.csr_matrix(X2[:, ::-1])
    for X, W, H in [(X1, W1, H1), (X2, W2, H2), (X3, W2, H2[:, ::-1]), (X1, W1, H1)]:
        with config_context(backend="numpy"):
            ref = K.cd_sweep(X, W, H)
        with config_context(backend="numba"):
            fast = K.cd_sweep(X, W, H)
        for a, b in zip(fast, ref, strict=True):
            assert_allclose(a, b, rtol=1e-10, atol=1e-30)


@needs_numba
@pytest.mark.parametrize("Estimator", [KLNMF, PLSI, JointNMF, LDAVI])
def test_numba_float32_extreme_magnitudes_stay_finite(Estimator):
    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, size=(30, 20)).astype(np.float32)
    X[0, :3] = [1e30, 1e-30, 3e32]
    X[1, 5] = 1e-38
    with config_context(backend="numba"):
        est = Estimator(3, random_state=0, max_iter=30).fit(sp.csr_matrix(X))
        doc = est.transform(sp.csr_matrix(X))
    assert est.components_.dtype == np.float32
    assert np.isfinite(est.components_).all() and np.isfinite(doc).all()


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_e_step_twin_at_a_word_no_topic_produces(dtype):
    # Point-estimate topics (GammaPoissonVI's) give a term absent from the
    # training data probability exactly 0: the ratio there overflows, and
    # the word must contribute nothing instead of turning gamma into NaN.
    X = sp.csr_matrix(np.array([[10.0, 3.0, 0.0], [1e6, 0.0, 2.0]], dtype=dtype))
    B = np.array([[0.0, 0.7, 0.3], [0.0, 0.2, 0.8]], dtype=dtype)
    with config_context(backend="numba"):
        g, y = K.lda_e_step(X, np.ones((2, 2), dtype=dtype), B, 0.5, 50, 0.0)
    assert g.dtype == dtype and np.isfinite(g).all() and np.isfinite(y).all()
    # The word contributes nothing: gamma is that of the other words alone.
    with config_context(backend="numba"):
        g_without, _ = K.lda_e_step(
            sp.csr_matrix(X.toarray()[:, 1:]),
            np.ones((2, 2), dtype=dtype),
            B[:, 1:],
            0.5,
            50,
            0.0,
        )
    assert_allclose(g, g_without, rtol=1e-6)


@needs_numba
def test_the_compiled_logarithm_is_numpys_to_two_ulp():
    # The divergence's sums take the logarithm from their own vectorizable
    # series (`compiled._common._row_sums`); check it value by value, over
    # float64's normal range, near 1 (where log is small), and at powers of two.
    from sklearn_topicfac.kernels.compiled import _common

    rng = np.random.default_rng(0)
    values = np.concatenate(
        [
            10.0 ** rng.uniform(-307, 308, size=3000),
            (1.0 + np.array([[-1.0], [1.0]]) * 10.0 ** -np.arange(1, 16.0)).ravel(),
            np.ldexp(1.0, np.arange(-1020, 1020, 7)),
            [np.sqrt(0.5), np.sqrt(2.0), np.nextafter(np.sqrt(2.0), 3.0)],
        ]
    )
    tiny = np.finfo(np.float64).tiny
    one, scratch = np.ones(1), np.empty(1)
    ours = np.array(
        [_common._row_sums(one, 0, 1, np.array([v]), tiny, scratch)[0] for v in values]
    )
    exact = np.log(values)
    ulps = np.abs(ours - exact) / np.spacing(np.abs(exact))
    assert ulps.max() <= 2, values[np.argmax(ulps)]


@needs_numba
@pytest.mark.slow
@pytest.mark.parametrize("Estimator", [KLNMF, PLSI, LDAVI], ids=repr)
def test_engines_agree_on_a_fit_with_split_merge_moves(Estimator):
    # The moves' calls (the proposal's responsibilities, the rank-2 split,
    # the trials and the run on) on both backends: the same moves, decided
    # the same way, and the same fit.  From batch EM's typical local
    # optimum (true topics 0 and 1 share slot 0, topic 2 is split over
    # slots 1 and 2), where the first move is kept.
    from _corpora import planted_local_optimum

    X, _, H0 = planted_local_optimum()
    start = {"H": H0}
    if Estimator is not LDAVI:  # an even W, normalized topics
        n_d = np.asarray(X.sum(axis=1)).ravel()
        start = {
            "W": np.repeat(n_d[:, None] / 5, 5, axis=1),
            "H": H0 / H0.sum(axis=1, keepdims=True),
        }
    # LDAVI's moves are the mean-field VB's (its default, MAP by EM, and CVB0
    # make none); KLNMF's and PLSI's coordinate descent leaves this optimum
    # without moves (tests/engine/test_restarts_and_moves.py): the moves are
    # tested on the multiplicative and EM updates.
    params = {
        LDAVI: {"inference": "vb"},
        KLNMF: {"solver": "mu"},
        PLSI: {"solver": "em"},
    }[Estimator]
    fits = []
    for backend in ("numpy", "numba"):
        with config_context(backend=backend):
            est = Estimator(5, init="custom", split_merge=3, random_state=0, **params)
            fits.append(est.fit(X, **start))
    ref, fast = fits

    def decisions(est):
        moves = est.split_merge_moves_
        return [(m["merged"], m["split"], m["accepted"]) for m in moves]

    assert ref.split_merge_moves_[0]["accepted"]
    assert decisions(fast) == decisions(ref)
    assert fast.n_iter_ == ref.n_iter_
    assert_allclose(fast.loss_history_, ref.loss_history_, rtol=1e-10)
    assert_allclose(fast.components_, ref.components_, rtol=1e-8, atol=1e-12)


def test_flush_subnormal_zeroes_only_subnormal_entries():
    for dtype in (np.float32, np.float64):
        tiny = np.finfo(dtype).tiny
        A = np.array([[0.0, tiny, tiny / 4], [1.0, -tiny / 2, 3e-3]], dtype=dtype)
        before = A.copy()
        out = K.flush_subnormal(A)
        assert out.dtype == dtype
        expected = np.array([[0.0, tiny, 0.0], [1.0, 0.0, 3e-3]], dtype=dtype)
        assert_allclose(out, expected, rtol=0, atol=0)
        assert_allclose(A, before, rtol=0, atol=0)  # the input is left alone
        normal = np.ones((2, 3), dtype=dtype)
        assert K.flush_subnormal(normal) is normal  # nothing to flush: no copy
