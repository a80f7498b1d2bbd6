"""SimplexPLSA (paper 004): the transformation T, enclosing simplexes, weights."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_topicfac import PLSI, SimplexPLSA
from sklearn_topicfac._simplex import (
    _affine_coordinates,
    _simplex_basis,
    simplex_rotation,
)


def _perpendicular_triangle(n=1000, noise=0.1, seed=0):
    """Paper 004's setting: data whose plane of largest variance stands
    perpendicular to the standard simplex.

    Points fill a triangle spanned by the simplex normal (1, 1, 1) and the
    in-simplex direction (1, -1, 0), centred at (4, 4, 4), plus a little
    noise along the remaining direction (1, 1, -2).  Projected onto the
    simplex they collapse onto a thin segment.
    """
    rng = np.random.default_rng(seed)
    normal = np.ones(3) / np.sqrt(3)
    along = np.array([1.0, -1.0, 0.0]) / np.sqrt(2)
    across = np.array([1.0, 1.0, -2.0]) / np.sqrt(6)
    angles = np.deg2rad([90, 210, 330])
    corners = 4 + 3 * (
        np.outer(np.cos(angles), normal) + np.outer(np.sin(angles), along)
    )
    X = rng.dirichlet(np.ones(3), size=n) @ corners
    return X + noise * rng.standard_normal((n, 1)) * across, corners


def _inside(X, vertices, tol=1e-9):
    return float(np.mean(np.all(_affine_coordinates(X, vertices) >= -tol, axis=1)))


X_TRIANGLE, CORNERS = _perpendicular_triangle()


# ------------------------------------------------------ scikit-learn checks
@parametrize_with_checks([SimplexPLSA()])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_negative_input_allowed_and_tagged():
    assert SimplexPLSA().__sklearn_tags__().input_tags.positive_only is False
    X = X_TRIANGLE - 10
    assert X.max() < 0
    weights = SimplexPLSA(n_components=3, random_state=0).fit_transform(X)
    assert np.all(np.isfinite(weights))


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
    plsa = PLSI(n_components=3, max_iter=1000, tol=1e-6, random_state=0).fit(X_TRIANGLE)
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
    P = est._to_simplex(X)
    assert P.shape == (30, 6)
    assert_allclose(P.sum(axis=1), 1, rtol=1e-12)
    assert P.min() >= -1e-12 and abs(P.min()) < 1e-12
    assert_allclose(est._from_simplex(P), X, atol=1e-10)
    # The paper's choice keeps n_features - 1 axes: the round trip is the
    # projection onto them.
    est = SimplexPLSA(n_components=5, max_iter=5).fit(X)
    assert est.transformation_.shape == (5, 5)
    V = est.principal_axes_
    mean = X.mean(axis=0)
    assert_allclose(est._from_simplex(est._to_simplex(X)), (X - mean) @ V.T @ V + mean)


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
        # ARPACK and LAPACK agree to rounding; signs are fixed by svd_flip.
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


def test_input_never_modified():
    X = X_TRIANGLE[:200].copy()
    X0 = X.copy()
    est = SimplexPLSA(n_components=3, random_state=0, max_iter=50)
    est.fit_transform(X)
    est.score(X)
    assert_array_equal(X, X0)
    Xs = sp.csr_matrix(X)
    snapshot = Xs.data.copy()
    est.fit(Xs)
    assert_array_equal(Xs.data, snapshot)


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


def test_bad_parameters_raise():
    with pytest.raises(ValueError, match="svd_components"):
        SimplexPLSA(svd_components=0).fit(X_TRIANGLE)
    with pytest.raises(ValueError, match="n_components"):
        SimplexPLSA(n_components=0).fit(X_TRIANGLE)
    est = SimplexPLSA(n_components=3, max_iter=5).fit(X_TRIANGLE)
    with pytest.raises(ValueError, match="3 features"):
        est.transform(X_TRIANGLE[:, :2])
    with pytest.raises(ValueError, match="inverse_transform expects shape"):
        est.inverse_transform(np.ones((2, 4)))
    X = X_TRIANGLE.copy()
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SimplexPLSA().fit(X)


def test_convergence_warning_names_this_estimator():
    with pytest.warns(ConvergenceWarning, match="SimplexPLSA, PLSA step: .*max_iter=2"):
        SimplexPLSA(n_components=3, max_iter=2).fit(X_TRIANGLE)
