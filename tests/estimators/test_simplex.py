"""SimplexPLSA (paper 004): the transformation T, enclosing simplexes, weights."""

import pickle
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _worked_examples import CORNERS, X_TRIANGLE
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV

from sklearn_topicfac import LDAVI, PLSI, SimplexPLSA
from sklearn_topicfac.models import simplex as _simplex
from sklearn_topicfac.models.simplex import (
    _simplex_basis,
    affine_coordinates,
    centered_svd,
    simplex_rotation,
)


def _inside(X, vertices, tol=1e-9):
    return float(np.mean(np.all(affine_coordinates(X, vertices) >= -tol, axis=1)))


# ------------------------------------------------------------------- T
@pytest.mark.parametrize("m", range(2, 51))
def test_T_is_orthonormal_with_the_ones_direction_last(m):
    T = simplex_rotation(m)
    assert T.shape == (m, m)
    assert_allclose(T.T @ T, np.eye(m), atol=1e-12)
    assert_allclose(T[:, -1], np.full(m, 1 / np.sqrt(m)), rtol=1e-12)
    # The other columns are parallel to the simplex: they sum to zero.
    assert_allclose(T[:, :-1].sum(axis=0), 0, atol=1e-12)


def test_appendix_recursion_small_cases():
    assert _simplex_basis(1).shape == (1, 0)
    assert_array_equal(_simplex_basis(2), [[1], [-1]])
    # M = 2 is even: [[R_2, 1_2], [0, -2]].
    assert_array_equal(_simplex_basis(3), [[1, 1], [-1, 1], [0, -2]])
    # M = 3 is odd: two copies of R_2 on disjoint coordinates, plus (1_2, -1_2).
    assert_array_equal(
        _simplex_basis(4), [[1, 0, 1], [-1, 0, 1], [0, 1, -1], [0, -1, -1]]
    )


# ----------------------------------------------- paper 004's experiment
def test_encloses_the_data_where_plain_plsa_does_not():
    simplex = SimplexPLSA(n_components=3, random_state=0).fit(X_TRIANGLE)
    # Plain PLSA: Hofmann's EM, the paper's algorithm.
    plsa = PLSI(
        n_components=3, solver="em", max_iter=1000, tol=1e-6, random_state=0
    ).fit(X_TRIANGLE)
    assert _inside(X_TRIANGLE, simplex.components_) >= 0.9
    assert _inside(X_TRIANGLE, plsa.components_) <= 0.1

    # Plain PLSA's simplex is nearly a line (paper 004, Fig. 3): the spread of
    # its vertices across their main direction is a small fraction of the
    # spread along it; SimplexPLSA's triangle is not degenerate.
    def thinness(V):
        s = np.linalg.svd(V - V.mean(axis=0), compute_uv=False)
        return s[1] / s[0]

    assert thinness(plsa.components_) < 0.2
    assert thinness(simplex.components_) > 0.5
    # The learned corners are near the true ones (in some order), within a
    # fifth of the triangle's side: the noise off the plane and EM's slow
    # final approach leave them short of the exact corners.
    distances = np.linalg.norm(
        simplex.components_[:, None, :] - CORNERS[None, :, :], axis=2
    )
    side = np.linalg.norm(CORNERS[0] - CORNERS[1])
    assert np.all(distances.min(axis=1) < 0.2 * side)


def test_weights_on_the_simplex_and_reconstruction():
    est = SimplexPLSA(n_components=3, random_state=0).fit(X_TRIANGLE)
    weights = est.transform(X_TRIANGLE)
    assert np.all(weights >= 0)
    assert_allclose(weights.sum(axis=1), 1, rtol=1e-12)
    assert_allclose(est.embedding_.sum(axis=1), 1, rtol=1e-12)
    X_hat = est.inverse_transform(weights)
    assert_allclose(X_hat, weights @ est.components_)
    spread = np.linalg.norm(X_TRIANGLE - X_TRIANGLE.mean(axis=0))
    assert np.linalg.norm(X_hat - X_TRIANGLE) < 0.1 * spread
    # New points, also far outside the training data, get simplex weights.
    rng = np.random.default_rng(1)
    new = np.vstack([X_TRIANGLE[:5] + 0.01, 100 * rng.standard_normal((5, 3))])
    w_new = est.transform(new)
    assert np.all(w_new >= 0) and np.all(np.isfinite(w_new))
    assert_allclose(w_new.sum(axis=1), 1, rtol=1e-12)


def test_affine_map_round_trip():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 5)) @ rng.standard_normal((5, 5))
    # Keeping every principal axis, the map onto the simplex is invertible.
    est = SimplexPLSA(n_components=6, svd_components=5, max_iter=5).fit(X)
    P = est.simplex_map_.to_simplex(X)
    assert P.shape == (30, 6)
    assert_allclose(P.sum(axis=1), 1, rtol=1e-12)
    assert P.min() >= -1e-12 and abs(P.min()) < 1e-12
    assert_allclose(est.simplex_map_.from_simplex(P), X, atol=1e-10)
    # The paper's choice keeps n_features - 1 axes: the round trip is the
    # projection onto them.
    est = SimplexPLSA(n_components=5, max_iter=5).fit(X)
    assert est.transformation_.shape == (5, 5)
    V = est.principal_axes_
    mean = X.mean(axis=0)
    assert_allclose(
        est.simplex_map_.from_simplex(est.simplex_map_.to_simplex(X)),
        (X - mean) @ V.T @ V + mean,
    )


def test_truncated_svd_for_high_dimensional_input():
    rng = np.random.default_rng(0)
    weights = rng.dirichlet(np.ones(3), size=300)
    corners = rng.standard_normal((3, 200)) * 5
    X = weights @ corners + 0.01 * rng.standard_normal((300, 200))
    est = SimplexPLSA(n_components=3, svd_components=2, random_state=0).fit(X)
    assert est.transformation_.shape == (3, 3)
    assert est.principal_axes_.shape == (2, 200)
    assert est.components_.shape == (3, 200)
    W = est.transform(X)
    error = np.linalg.norm(est.inverse_transform(W) - X)
    assert error < 0.1 * np.linalg.norm(X - X.mean(axis=0))
    with pytest.raises(ValueError, match="svd_components=201 exceeds n_features=200"):
        SimplexPLSA(svd_components=201).fit(X)


def test_sparse_input_centred_implicitly():
    X = sp.random(120, 40, density=0.2, random_state=0, format="csr")
    X.data = X.data - 0.3  # real-valued, some negative
    # A random PLSA start: the "nndsvda" start of the PLSA step is itself an
    # SVD, whose rotation within near-equal singular values is arbitrary.
    params = dict(n_components=4, svd_components=3, init="random", random_state=0)
    dense = SimplexPLSA(**params).fit(X.toarray())
    for Xs in (X, sp.csc_matrix(X)):
        est = SimplexPLSA(**params).fit(Xs)
        # One computation for every container: the same axes and signs.
        assert_allclose(est.singular_values_, dense.singular_values_, rtol=1e-8)
        assert_allclose(est.principal_axes_, dense.principal_axes_, atol=1e-8)
        assert_allclose(est.components_, dense.components_, rtol=1e-5, atol=1e-6)
        assert_allclose(est.transform(Xs), dense.transform(X.toarray()), atol=1e-6)


def test_float32_preserved():
    X = X_TRIANGLE.astype(np.float32)
    params = dict(n_components=3, init="random", random_state=0)
    est = SimplexPLSA(**params).fit(X)
    for value in (est.components_, est.embedding_, est.transform(X), est.mean_):
        assert value.dtype == np.float32
    assert est.inverse_transform(est.transform(X)).dtype == np.float32
    ref = SimplexPLSA(**params).fit(X_TRIANGLE)
    assert_allclose(est.components_, ref.components_, rtol=1e-2, atol=1e-2)


def test_degenerate_data():
    # Every point the same: every weight vector reconstructs it.
    X = np.tile([1.0, -2.0, 3.0], (10, 1))
    est = SimplexPLSA(n_components=2, random_state=0).fit(X)
    assert_allclose(est.components_, X[:2])
    assert_allclose(est.inverse_transform(est.transform(X)), X)


def test_score_grid_search_and_pickle():
    est = SimplexPLSA(n_components=3, random_state=0, max_iter=100).fit(X_TRIANGLE)
    assert np.isfinite(est.score(X_TRIANGLE)) and est.score(X_TRIANGLE) <= 0
    restored = pickle.loads(pickle.dumps(est))
    assert_array_equal(restored.transform(X_TRIANGLE), est.transform(X_TRIANGLE))
    search = GridSearchCV(
        SimplexPLSA(random_state=0, max_iter=100), {"n_components": [1, 3]}, cv=3
    ).fit(X_TRIANGLE)
    # One vertex cannot hold a triangle; three can.
    assert search.best_params_["n_components"] == 3
    assert list(est.get_feature_names_out()) == [
        "simplexplsa0",
        "simplexplsa1",
        "simplexplsa2",
    ]


def test_convergence_warning_names_this_estimator():
    with pytest.warns(ConvergenceWarning, match="SimplexPLSA, PLSA step: .*max_iter=2"):
        SimplexPLSA(n_components=3, max_iter=2).fit(X_TRIANGLE)


# ------------------------------------- containers, magnitudes, degenerate data
def _poisson(shape, seed=0):
    return np.random.RandomState(seed).poisson(1, shape).astype(float)


@pytest.mark.parametrize(
    "X, svd_components",
    [
        (_poisson((60, 30)), None),  # more axes than ARPACK could give
        (_poisson((60, 30)), 3),  # fewer axes than the smaller side
        (_poisson((20, 50)), 4),  # wide: fewer samples than features
        # Five equal singular values: any basis of their subspace is exact,
        # only a shared computation picks the same one.
        (np.tile(np.eye(6), (5, 1)), 4),
    ],
    ids=["tall-default", "tall-truncated", "wide-truncated", "degenerate"],
)
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_same_model_whatever_the_container(X, svd_components):
    # Dense input went through LAPACK's SVD, sparse through ARPACK on an
    # implicitly centred operator: different axes, different models.
    params = dict(
        n_components=3, svd_components=svd_components, random_state=0, max_iter=300
    )
    ref = SimplexPLSA(**params).fit(X)
    W = ref.transform(X)
    for container in (sp.csr_matrix, sp.csc_matrix):
        est = SimplexPLSA(**params).fit(container(X))
        assert_allclose(est.principal_axes_, ref.principal_axes_, rtol=0, atol=1e-12)
        assert_allclose(est.components_, ref.components_, rtol=0, atol=1e-10)
        assert_allclose(est.transform(container(X)), W, rtol=0, atol=1e-10)
        assert_allclose(est.embedding_, ref.embedding_, rtol=0, atol=1e-10)
    # float32 stays float32, and is also the same model in every container.
    X32 = X.astype(np.float32)
    ref32 = SimplexPLSA(**params).fit(X32)
    W32 = ref32.transform(X32)
    assert ref32.components_.dtype == W32.dtype == np.float32
    for container in (sp.csr_matrix, sp.csc_matrix):
        est = SimplexPLSA(**params).fit(container(X32))
        assert est.components_.dtype == np.float32
        assert_allclose(est.components_, ref32.components_, rtol=0, atol=1e-5)
        assert_allclose(est.transform(container(X32)), W32, rtol=0, atol=1e-5)


@pytest.mark.parametrize(
    "X",
    [
        sp.csr_matrix((2, 2)),
        np.zeros((3, 4)),
        sp.csr_matrix(np.tile([0.0, 2.5, 0.0, -1.0], (5, 1))),
        np.full((10, 3), 0.1),  # its computed mean is not exactly 0.1
        np.array([[3.0, -1.0, 2.0]]),  # one sample
    ],
    ids=["zero-csr-2x2", "zero-dense", "constant-csr", "constant-0.1", "one-row"],
)
def test_data_without_variance_give_the_centroid_model(X):
    est = SimplexPLSA(n_components=2, random_state=0).fit(X)
    dense = X.toarray() if sp.issparse(X) else X
    # Every point is the centroid: every vertex is the mean, the map onto
    # the simplex sends every point to the simplex's centroid.
    assert_array_equal(est.singular_values_, 0)
    assert_array_equal(est.principal_axes_, 0)
    assert_allclose(est.components_, np.tile(dense.mean(axis=0), (2, 1)), rtol=1e-15)
    assert_allclose(est.simplex_map_.to_simplex(X), 1 / est.transformation_.shape[0])
    weights = est.transform(X)
    assert np.all(np.isfinite(weights)) and np.all(weights >= 0)
    assert_allclose(weights.sum(axis=1), 1, rtol=1e-12)
    assert_allclose(est.inverse_transform(weights), dense, rtol=1e-15)
    assert np.all(np.isfinite(est.loss_history_))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("exponent", [1020, 1000, -1000, 120, -120])
def test_magnitude_is_handled_exactly(exponent, sparse):
    # The decomposition is scale-equivariant, and scaling by a power of two
    # is exact in floating point: the model of X * 2**k is the model of X
    # with components_ times 2**k, whatever k (within the float range).
    X = np.random.RandomState(0).uniform(-1, 1, (8, 3))
    c = 2.0**exponent
    wrap = sp.csr_matrix if sparse else np.asarray
    params = dict(n_components=3, random_state=0, max_iter=200)
    ref = SimplexPLSA(**params).fit(wrap(X))
    est = SimplexPLSA(**params).fit(wrap(X * c))
    assert_array_equal(est.transform(wrap(X * c)), ref.transform(wrap(X)))
    assert_array_equal(est.embedding_, ref.embedding_)
    assert_array_equal(est.components_, ref.components_ * c)
    assert_array_equal(est.mean_, ref.mean_ * c)
    assert_array_equal(est.principal_axes_, ref.principal_axes_)
    assert_array_equal(
        est.inverse_transform(est.transform(wrap(X * c))),
        ref.inverse_transform(ref.transform(wrap(X))) * c,
    )


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_entries_near_the_float_maximum(sparse):
    # Centering these overflowed (1.5e308 - (-1.2e308)): the SVD failed to
    # converge, ARPACK could not start.  Not a power of two: the model
    # matches the unscaled one up to rounding (and the order of the vertices,
    # which rounding can swap).
    X = np.random.RandomState(0).uniform(-1, 1, (8, 3))
    wrap = sp.csr_matrix if sparse else np.asarray
    params = dict(n_components=3, random_state=0, max_iter=200)
    ref = SimplexPLSA(**params).fit(wrap(X))
    for c in (1e307, 1.5e308):
        est = SimplexPLSA(**params).fit(wrap(X * c))
        assert np.all(np.isfinite(est.components_))
        distances = np.linalg.norm(
            est.components_[:, None] / c - ref.components_[None], axis=2
        )
        order = distances.argmin(axis=1)
        assert sorted(order) == [0, 1, 2]
        assert_allclose(est.components_ / c, ref.components_[order], atol=1e-6)
        assert_allclose(
            est.transform(wrap(X * c)), ref.transform(wrap(X))[:, order], atol=1e-6
        )


def test_vertices_beyond_the_float_range_are_refused_by_name():
    # Points on a circle of radius 1.5e308: any triangle enclosing them has
    # vertices 3e308 from the center, beyond the largest float.
    angles = np.linspace(0, 2 * np.pi, 60, endpoint=False)
    X = np.c_[np.cos(angles), np.sin(angles)] * 1.5e308
    with pytest.raises(ValueError, match=r"largest float.*[Ss]cale X down"):
        SimplexPLSA(n_components=3, svd_components=2, random_state=0).fit(X)


def _edge_cases():
    """Inputs that broke the SVD or produced non-finite models."""
    rng = np.random.RandomState(0)
    X = rng.standard_normal((12, 7))
    X[3] = 0  # an empty row
    X[:, 2] = 0  # an empty column
    cases = [
        (np.zeros((1, 1)), 1, None),
        (np.zeros((2, 2)), 2, None),
        (np.zeros((40, 40)), 3, 5),
        (rng.standard_normal((1, 9)), 2, None),
        (rng.standard_normal((9, 1)), 2, None),
        (rng.standard_normal((30, 1)) * 1e-30, 4, None),
        (X, 3, None),
        (X, 3, 2),
        (X * 1e300, 4, 7),
        (X * 1e-300, 2, 1),
        (rng.poisson(0.3, (40, 5)) * 1e30, 3, 2),
        (rng.standard_normal((5, 40)) * 1e307, 2, 3),
        (np.eye(4) * 1e-310, 2, None),  # subnormal entries
    ]
    for X, k, q in cases:
        for dtype in (np.float64, np.float32):
            if dtype == np.float32:
                # Into the float32 range, keeping the magnitude's intent.
                big = np.abs(X).max()
                if big > 1e30 or 0 < big < 1e-30:
                    X = X / big * (1e30 if big > 1 else 1e-30)
            Xd = X.astype(dtype)
            yield Xd, k, q
            yield sp.csr_matrix(Xd), k, q


def test_finite_model_for_every_finite_input():
    for X, k, q in _edge_cases():
        before = X.copy()
        est = SimplexPLSA(
            n_components=k, svd_components=q, random_state=0, max_iter=100
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(X)
            W = est.transform(X)
        where = f"{type(X).__name__} {X.shape} {X.dtype} k={k} q={q}"
        for name, value in [
            ("components_", est.components_),
            ("embedding_", est.embedding_),
            ("loss_history_", est.loss_history_),
            ("transform", W),
        ]:
            assert np.all(np.isfinite(value)), f"{name} of {where}"
        assert est.components_.dtype == W.dtype == X.dtype, where
        assert_allclose(W.sum(axis=1), 1, rtol=1e-5, err_msg=where)
        # EM never raises the PLSA objective; rounding may, by a few eps of
        # its terms (the mapped rows, each summing to one).
        h = est.loss_history_
        size = np.maximum(np.abs(h[:-1]), np.abs(h[1:]))
        slack = 50 * np.finfo(X.dtype).eps * (X.shape[0] + size)
        assert np.all(np.diff(h) <= slack), f"loss rises: {where} {h}"
        if sp.issparse(X):
            assert (X != before).nnz == 0, where
        else:
            assert_array_equal(X, before, err_msg=where)


def test_inverse_transform_validates_its_input():
    est = SimplexPLSA(n_components=3, random_state=0, max_iter=20).fit(X_TRIANGLE)
    weights = est.transform(X_TRIANGLE[:4])
    assert_allclose(est.inverse_transform(weights.tolist()), weights @ est.components_)
    bad = weights.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.inverse_transform(bad)
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        est.inverse_transform(bad)
    with pytest.raises(ValueError, match="2D array"):
        est.inverse_transform(weights[0])
    with pytest.raises(ValueError):
        est.inverse_transform([["a", "b", "c"]])


def test_far_new_points():
    X = np.random.RandomState(0).uniform(-1, 1, (30, 3))
    new = np.array([[1e300, 0, 0], [-1e300, 1e300, 0], [0.1, 0.2, 0.3]])
    est = SimplexPLSA(n_components=3, random_state=0, max_iter=100).fit(X)
    weights = est.transform(new)
    assert np.all(np.isfinite(weights)) and np.all(weights >= 0)
    assert_allclose(weights.sum(axis=1), 1, rtol=1e-12)
    # Trained at 1e-300, a point at 1e10 is 1e310 spreads away: its image on
    # the simplex is beyond the float range, refused by name.
    est = SimplexPLSA(n_components=3, random_state=0, max_iter=100).fit(X * 1e-300)
    with pytest.raises(ValueError, match="too far from the training data"):
        est.transform([[1e10, 0, 0]])


@pytest.mark.parametrize("shape", [(200, 30), (30, 200)], ids=["tall", "wide"])
def test_svd_accurate_without_squaring(shape):
    # Singular values from 1 down to 1e-12 on data offset by 5: a Gram matrix
    # X.T @ X would lose those below 1.5e-8 (and its centering X.T @ X - n
    # mean mean.T the offset's digits); the QR of the centred blocks keeps
    # them to rounding of the largest.
    n, m = shape
    k = min(n, m)
    rng = np.random.RandomState(0)
    left = np.linalg.qr(rng.standard_normal((n, k)))[0]
    right = np.linalg.qr(rng.standard_normal((m, k)))[0]
    X = left @ np.diag(np.logspace(0, -12, k)) @ right.T + 5.0
    exponent, mean, S, Vt = centered_svd(X, k - 1, 0)
    _, S_ref, Vt_ref = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)
    S = np.ldexp(S, exponent)
    kept = S > 0
    # Only what rounding of the data can make, eps * max(n, m) * ||X||_F
    # (2e-11 here), is dropped.
    r = int(kept.sum())
    assert np.all(kept[:r]) and r >= k - 4 and np.all(S_ref[r : k - 1] < 1e-10)
    assert_allclose(S[:r], S_ref[:r], rtol=0, atol=1e-14)
    assert_allclose(np.ldexp(mean, exponent), X.mean(axis=0), rtol=4e-15)
    V = Vt[kept]
    assert_allclose(V @ V.T, np.eye(len(V)), atol=1e-13)
    # Well-separated axes are the exact ones (signs aside).
    assert_allclose(np.abs(np.sum(V[:10] * Vt_ref[:10], axis=1)), 1, atol=1e-12)


def test_randomized_svd_for_large_input(monkeypatch):
    # Input too large for the exact SVD (here: every input) gets a
    # randomized one, seeded by random_state, still the same computation for
    # every container.
    monkeypatch.setattr(_simplex, "_EXACT_WORK", 0)
    rng = np.random.RandomState(0)
    X = rng.standard_normal((300, 3)) @ rng.standard_normal((3, 120)) * 10
    X += 0.1 * rng.standard_normal((300, 120))
    X[:, :5] = 0
    params = dict(n_components=4, svd_components=3, random_state=0, max_iter=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref = SimplexPLSA(**params).fit(X)
        W = ref.transform(X)
        for container in (sp.csr_matrix, sp.csc_matrix, np.asfortranarray):
            est = SimplexPLSA(**params).fit(container(X))
            assert_allclose(est.principal_axes_, ref.principal_axes_, atol=1e-13)
            assert_allclose(est.components_, ref.components_, atol=1e-10)
            assert_allclose(est.transform(container(X)), W, atol=1e-10)
        # A clear spectral gap: the axes are the exact ones.
        _, S_ref, Vt_ref = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)
        assert_allclose(ref.singular_values_, S_ref[:3], rtol=1e-12)
        assert_allclose(
            np.abs(np.sum(ref.principal_axes_ * Vt_ref[:3], axis=1)), 1, atol=1e-12
        )
        # All zero: no variance, no error.
        zero = SimplexPLSA(**params).fit(sp.csr_matrix((300, 120)))
        assert_array_equal(zero.components_, 0)


# ------------------------------------- paper 004 §3.4: other inner models
def _corner_distances(vertices):
    """Distance of each vertex to its nearest true corner, in triangle sides."""
    side = np.linalg.norm(CORNERS[0] - CORNERS[1])
    distances = np.linalg.norm(vertices[:, None, :] - CORNERS[None, :, :], axis=2)
    return distances.min(axis=1) / side


def test_plsi_given_as_inner_model_is_the_default():
    default = SimplexPLSA(n_components=3, random_state=0).fit(X_TRIANGLE)
    inner = PLSI(solver="em", max_iter=1000, tol=1e-6, split_merge=0, random_state=0)
    given = SimplexPLSA(n_components=3, random_state=0, inner_model=inner)
    given.fit(X_TRIANGLE)
    assert_allclose(given.components_, default.components_, rtol=1e-12)
    assert given.plsa_ is not inner and not hasattr(inner, "components_")
    assert given.plsa_.n_components == 3


def test_plsa_does_not_depend_on_the_point_mass():
    # EM is invariant to the scale of the data: the same vertices.
    one = SimplexPLSA(n_components=3, random_state=0).fit(X_TRIANGLE)
    heavy = SimplexPLSA(n_components=3, random_state=0, point_mass=1000.0)
    heavy.fit(X_TRIANGLE)
    assert_allclose(heavy.components_, one.components_, rtol=1e-8, atol=1e-8)
    assert_allclose(heavy.transform(X_TRIANGLE), one.transform(X_TRIANGLE), atol=1e-8)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_lda_as_inner_model_encloses_the_data():
    # Paper 004, §3.4: the simplex method with LDA in place of PLSA.  The
    # test of the paper's experiment: the learned simplex encloses the data
    # (where plain PLSA's does not, see above) and its vertices are near the
    # true corners.  The paper's LDA is Blei et al.'s variational Bayes
    # (docs/paper004_simplex.md measures it so).
    lda = LDAVI(inference="vb", max_iter=300, split_merge=0, random_state=0)
    est = SimplexPLSA(n_components=3, inner_model=lda, point_mass=1000.0)
    est.fit(X_TRIANGLE)
    assert isinstance(est.plsa_, LDAVI)
    assert _inside(X_TRIANGLE, est.components_) >= 0.85
    assert np.all(_corner_distances(est.components_) < 0.05)
    weights = est.transform(X_TRIANGLE)
    assert np.all(weights >= 0)
    assert_allclose(weights.sum(axis=1), 1, rtol=1e-6)
    spread = np.linalg.norm(X_TRIANGLE - X_TRIANGLE.mean(axis=0))
    error = np.linalg.norm(est.inverse_transform(weights) - X_TRIANGLE)
    assert error < 0.1 * spread
    assert est.score(X_TRIANGLE) <= 0
    # With points of mass 1 the Dirichlet prior swamps them: the simplex
    # is far too large (vertices about a quarter of a side off the corners).
    light = SimplexPLSA(n_components=3, inner_model=lda).fit(X_TRIANGLE)
    assert np.all(_corner_distances(light.components_) > 0.15)


def test_warns_on_counts_only():
    rng = np.random.default_rng(0)
    counts = rng.poisson(1.0, size=(40, 8)).astype(float)
    with pytest.warns(UserWarning, match="looks like counts"):
        SimplexPLSA(n_components=3, random_state=0, max_iter=50).fit(counts)
    with pytest.warns(UserWarning, match="looks like counts"):
        SimplexPLSA(n_components=3, random_state=0, max_iter=50).fit(
            sp.csr_matrix(counts)
        )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SimplexPLSA(n_components=3, random_state=0).fit(X_TRIANGLE)
        # Integers with negative entries are no counts.
        SimplexPLSA(n_components=3, random_state=0, max_iter=50).fit(counts - 1)
    assert not [w for w in caught if "looks like counts" in str(w.message)]


def _forbid_densifying(monkeypatch):
    """Make every way of densifying a SciPy sparse matrix raise."""

    def refuse(self, *args, **kwargs):
        raise AssertionError(f"a sparse {self.shape} matrix was densified")

    for cls in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix, sp.csr_array):
        for name in ("toarray", "todense", "__array__"):
            monkeypatch.setattr(cls, name, refuse, raising=False)


def test_sparse_text_is_never_densified(monkeypatch):
    # 2,000 x 15,000 sparse data (240 MB dense, 0.04 MB sparse): the
    # randomized SVD works with products of the sparse X, the PLSA step on
    # the 2,000 x 3 points on the simplex.
    rng = np.random.default_rng(0)
    X = sp.random(2000, 15000, density=1e-4, format="csr", random_state=rng)
    X.data = rng.normal(size=X.nnz)  # real-valued: no counts warning
    _forbid_densifying(monkeypatch)
    tracemalloc.start()
    try:
        est = SimplexPLSA(n_components=3, svd_components=2, random_state=0, max_iter=5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(X)
            weights = est.transform(X[:50])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert est.components_.shape == (3, 15000)
    assert_allclose(weights.sum(axis=1), 1)
    # The dense arrays are (n + m) x a few axes: 8 MB allows 60 of them.
    assert peak < 8e6, peak


def test_sparse_input_that_would_densify_is_refused_before_work(monkeypatch):
    # The paper's n_features - 1 axes on text: T alone is n_features^2.
    rng = np.random.default_rng(0)
    X = sp.random(1000, 8000, density=0.005, format="csr", random_state=rng)
    _forbid_densifying(monkeypatch)
    msg = (
        r"svd_components=7999 on a 1000 x 8000 sparse X would hold about "
        r"[\d.]+ GB of dense arrays, more than densifying X would \(64.0 MB\).*"
        r"svd_components=4 \(n_components - 1"
    )
    with pytest.raises(ValueError, match=msg):
        SimplexPLSA(n_components=5).fit(X)


def test_memory_beyond_what_is_available_is_refused(monkeypatch):
    import sklearn_topicfac.estimators.simplex as module

    monkeypatch.setattr(module, "available_memory", lambda: 10**6)
    X = np.random.default_rng(0).normal(size=(300, 40))
    with pytest.raises(ValueError, match=r"more than the 1.0 MB available"):
        SimplexPLSA(n_components=3).fit(X)
    monkeypatch.setattr(module, "available_memory", lambda: 10**8)
    assert SimplexPLSA(n_components=3, max_iter=5).fit(X).n_iter_ == 5


@pytest.mark.parametrize("inference", ["map", "cvb0"])
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_lda_collapsed_inner_models_enclose_the_data(inference):
    # The same experiment with LDAVI's collapsed inferences, the default
    # (MAP) included: the claim holds for them too.
    lda = LDAVI(inference=inference, max_iter=300, split_merge=0, random_state=0)
    est = SimplexPLSA(n_components=3, inner_model=lda, point_mass=1000.0)
    est.fit(X_TRIANGLE)
    assert _inside(X_TRIANGLE, est.components_) >= 0.85
    assert np.all(_corner_distances(est.components_) < 0.05)
