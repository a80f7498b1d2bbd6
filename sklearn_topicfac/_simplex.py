"""Simplex decompositions of real-valued data by SVD and PLSA (Shashanka & Giering)."""

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, svds
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.extmath import svd_flip
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import _reconstruct
from ._completion import completion_log_likelihood
from ._plsi import PLSI


def _simplex_basis(m):
    """``R_m``: ``m - 1`` mutually orthogonal ``m``-vectors orthogonal to ones.

    Shashanka (2009), as given in the appendix of Shashanka & Giering, builds
    ``R_{M+1}`` (shape ``(M + 1, M)``) from smaller blocks, starting from the
    empty ``R_1``:

    * ``M`` even: ``[[R_M, 1_M], [0_{M-1}^T, -M]]``: the new column
      ``(1, ..., 1, -M)`` sums to zero and is orthogonal to the columns of
      ``R_M`` (they sum to zero);
    * ``M`` odd: ``[[R_h, 0, 1_h], [0, R_h, -1_h]]`` with ``h = (M + 1) / 2``
      and zero blocks of shape ``(h, h - 1)``: two copies of ``R_h`` on
      disjoint coordinates, plus the column ``(1_h, -1_h)``.

    Both rules keep every column orthogonal to the others and to the ones
    vector.  The columns are not normalized here.
    """
    if m == 1:
        return np.zeros((1, 0))
    M = m - 1
    if M % 2 == 0:
        R = _simplex_basis(M)
        top = np.hstack([R, np.ones((M, 1))])
        bottom = np.hstack([np.zeros((1, M - 1)), [[-M]]])
        return np.vstack([top, bottom])
    h = m // 2
    R = _simplex_basis(h)
    zero = np.zeros((h, h - 1))
    top = np.hstack([R, zero, np.ones((h, 1))])
    bottom = np.hstack([zero, R, -np.ones((h, 1))])
    return np.vstack([top, bottom])


def simplex_rotation(m):
    """The orthonormal ``T = [R_m, 1_m / sqrt(m)]`` of Shashanka & Giering's appendix.

    Its first ``m - 1`` columns span the directions parallel to the standard
    simplex :math:`\\{x \\in \\mathbb{R}^m : x \\ge 0, \\sum_i x_i = 1\\}`, its
    last column is the unit normal of that simplex.  ``B = U @ T.T`` maps the
    coordinates ``U`` on the principal axes so that the first ``m - 1`` of
    them lie parallel to the simplex and the last one orthogonal to it.

    Parameters
    ----------
    m : int
        Dimension, at least 1.

    Returns
    -------
    T : ndarray of shape (m, m)
        Orthonormal: ``T.T @ T`` is the identity.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac._simplex import simplex_rotation
    >>> T = simplex_rotation(3)
    >>> np.round(T * np.sqrt(6), 4)
    array([[ 1.7321,  1.    ,  1.4142],
           [-1.7321,  1.    ,  1.4142],
           [ 0.    , -2.    ,  1.4142]])
    >>> np.allclose(T.T @ T, np.eye(3))
    True
    """
    R = _simplex_basis(m)
    R = R / np.linalg.norm(R, axis=0)
    return np.hstack([R, np.full((m, 1), 1 / np.sqrt(m))])


def _centered_svd(X, mean, n_axes, random_state):
    """Leading ``n_axes`` singular triplets of ``X - mean`` (signs fixed).

    Dense input: exact LAPACK SVD.  Sparse input: ARPACK on an implicitly
    centered operator, so ``X`` is never densified; when ``n_axes`` is not
    below ``min(X.shape)`` (ARPACK's limit) the matrix is small in one
    dimension and is densified.  Missing trailing triplets (rank below
    ``n_axes``) are zero.
    """
    n, m = X.shape
    r = min(n, m, n_axes)
    dtype = X.dtype
    if sp.issparse(X) and n_axes < min(n, m):
        ones = np.ones(n, dtype=dtype)
        op = LinearOperator(
            (n, m),
            matvec=lambda v: X @ v - (mean @ v) * ones,
            rmatvec=lambda v: X.T @ v - mean * v.sum(),
            matmat=lambda V: X @ V - np.outer(ones, mean @ V),
            rmatmat=lambda V: X.T @ V - np.outer(mean, V.sum(axis=0)),
            dtype=dtype,
        )
        v0 = check_random_state(random_state).uniform(-1, 1, min(n, m))
        U, S, Vt = svds(op, k=r, v0=v0.astype(dtype))
        order = np.argsort(S)[::-1]
        U, S, Vt = U[:, order], S[order], Vt[order]
    else:
        Xc = (X.toarray() if sp.issparse(X) else X) - mean
        U, S, Vt = np.linalg.svd(Xc, full_matrices=False)
        U, S, Vt = U[:, :r], S[:r], Vt[:r]
    U, Vt = svd_flip(U, Vt, u_based_decision=False)
    # Directions without variance carry no coordinate: zero them, so that
    # they neither reach the simplex nor amplify rounding noise.
    keep = S > S[:1].max(initial=0) * max(n, m) * np.finfo(dtype).eps
    S = np.where(keep, S, 0)
    pad = n_axes - r
    U = np.hstack([U * keep, np.zeros((n, pad), dtype=dtype)])
    S = np.concatenate([S, np.zeros(pad, dtype=dtype)])
    Vt = np.vstack([Vt * keep[:, None], np.zeros((pad, m), dtype=dtype)])
    return U.astype(dtype, copy=False), S.astype(dtype), Vt.astype(dtype, copy=False)


def _affine_coordinates(X, vertices):
    """Barycentric coordinates of the points' projections on the vertices' hull.

    For each row ``x`` of ``X``, the weights ``lam`` (summing to one) that
    minimize ``||x - lam @ vertices||``: the coordinates, in the affine hull
    of the vertices, of the orthogonal projection of ``x`` onto that hull.
    The projection lies inside the simplex exactly when every weight is
    non-negative.
    """
    X = np.asarray(X, dtype=np.float64)
    V = np.asarray(vertices, dtype=np.float64)
    base = V[-1]
    edges = (V[:-1] - base).T
    lam, *_ = np.linalg.lstsq(edges, (X - base).T, rcond=None)
    return np.vstack([lam, 1 - lam.sum(axis=0)]).T


class SimplexPLSA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Simplex decomposition of real-valued data by SVD and PLSA.

    PLSA (Hofmann) writes every data vector, normalized to sum to one, as a
    convex combination of basis distributions on the standard simplex, so its
    simplex encloses the *normalized* data.  Shashanka & Giering (2010) find
    bases that need not lie on the standard simplex and enclose the data
    themselves,

    .. math::

        X \\approx \\Theta B, \\qquad \\Theta \\ge 0, \\quad
        \\Theta \\mathbf{1} = \\mathbf{1},

    with ``Theta`` (``transform``'s output) on the simplex and ``B``
    (``components_``) anywhere in the data space, even for data with
    negative entries.  The data are moved onto the standard simplex by an
    invertible affine map, decomposed by PLSA there, and the PLSA bases are
    mapped back:

    1. center ``X`` on its mean;
    2. SVD ``X - mean = U S V^T`` (``U`` the whitened coordinates on the
       principal axes);
    3. build the orthonormal ``T = [R, 1 / \\sqrt{d}]`` of the paper's
       appendix (:func:`simplex_rotation`);
    4. rotate, ``B = U R^T``: the principal axes now lie parallel to the
       standard simplex;
    5. shift the mean to the simplex centroid ``c = 1 / d``;
    6. subtract the smallest entry, so that everything is non-negative;
    7. divide by ``b = 1 - d min`` so that the rows sum to one: the data now
       lie on the standard simplex of dimension ``d - 1``;
    8. fit :class:`PLSI` (``plsa_``) to these rows;
    9. map the PLSA bases back through steps 7..4;
    10. and through the SVD and the centering: ``components_``.

    Since the map is affine and the weights sum to one, ``Theta`` are also
    the weights of the original data on ``components_``.

    Parameters
    ----------
    n_components : int, default=10
        Number of bases (vertices of the simplex).  Enclosing data that vary
        along ``q`` axes takes at least ``q + 1`` of them.
    svd_components : int or None, default=None
        Number of principal axes laid parallel to the simplex, between 1 and
        ``n_features``; ``None`` means ``n_features - 1`` (the paper).
    init : {"nndsvda", "random", "kmeans"} or None, default=None
        Start of the PLSA step (see :class:`PLSI`).
    max_iter : int, default=1000
        Maximum number of EM steps of the PLSA step, and of fold-in sweeps.
    tol : float, default=1e-6
        Relative objective decrease below which the PLSA step stops (see
        :class:`PLSI`).  Smaller than :class:`PLSI`'s default: mapped onto
        the simplex, the data can usually be enclosed exactly, the objective
        heads for zero, and EM's last, slow steps are what move the vertices
        out to the data's corners.
    random_state : int, RandomState instance or None, default=None
        Seed of the PLSA start (and of ARPACK's start for sparse input).
    verbose : int, default=0
        Progress output of the PLSA step.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The bases, in data space: the vertices of the learned simplex.
    embedding_ : ndarray of shape (n_samples, n_components)
        Weights of the training data reached by the PLSA fit; rows sum to
        one.
    plsa_ : PLSI
        The PLSA model fitted on the data moved onto the standard simplex.
    mean_ : ndarray of shape (n_features,)
        Mean of the training data.
    principal_axes_ : ndarray of shape (svd_components, n_features)
        The principal axes kept (right singular vectors), as rows.
    singular_values_ : ndarray of shape (svd_components,)
        Their singular values.
    transformation_ : ndarray of shape (svd_components + 1, svd_components + 1)
        ``T``; its last column is the normal of the simplex.
    loss_ : float
        Final objective of the PLSA step.
    loss_history_ : ndarray of shape (n_iter_ + 1,)
        Objective of the PLSA step at the start and after every EM step.
    n_iter_ : int
        Number of EM steps run.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when available.

    See Also
    --------
    PLSI : PLSA itself, for non-negative data, bases on the standard simplex.

    Notes
    -----
    Where this differs from the paper's ten steps:

    * **Dimension.** The paper keeps ``M - 1`` principal axes of
      ``M``-dimensional data and rotates the last one orthogonal to the
      simplex, which PLSA's normalization then divides out (and the
      reconstruction drops).  Here ``svd_components = q`` axes are kept and
      laid parallel to a simplex of dimension ``d = q + 1``; the remaining
      axes are dropped *before* PLSA, so every row sums to exactly one.  The
      default ``q = n_features - 1`` is the paper's choice; ``q =
      n_features`` keeps all the variance; a small ``q`` is a truncated SVD
      for high-dimensional input (``T`` is ``d x d`` and PLSA works in
      ``d`` dimensions, so the paper's full-dimensional ``T`` would be
      unworkable for, e.g., text).  With ``q < n_features - 1`` the simplex
      is sought in the ``q``-dimensional principal subspace: the
      decomposition is a PCA approximation first, and points are enclosed
      in projection only.
    * **Step 7.** The extracted text reads ``b = 1 - min(B̂)``, which is 1
      since ``min(B̂) = 0`` after step 6.  What the step asks for, "the
      entries of the center of the dataset sum to 1", is
      ``b = 1 - d min(B̄)``: after step 6 the centroid ``c - min(B̄)`` sums
      to that.
    * **New data.** ``transform`` applies the stored map to new rows and
      folds them in with the PLSA bases fixed.  A point far outside the
      training data can map to negative entries; those are clipped to zero
      before the fold-in (its weights stay on the simplex).

    References
    ----------
    M. Shashanka and M. Giering, "Simplex decompositions using SVD and PLSA",
    ICPRAM 2010.

    Examples
    --------
    Points inside a triangle standing perpendicular to the standard simplex,
    with negative coordinates:

    >>> import numpy as np
    >>> from sklearn_topicfac import SimplexPLSA
    >>> rng = np.random.default_rng(0)
    >>> corners = np.array([[-2.0, -2.0, -2.0], [2.0, 2.0, 2.0], [1.0, -1.0, 0.0]])
    >>> X = rng.dirichlet(np.ones(3), size=200) @ corners
    >>> model = SimplexPLSA(n_components=3, random_state=0).fit(X)
    >>> weights = model.transform(X)
    >>> bool(np.allclose(weights.sum(axis=1), 1) and (weights >= 0).all())
    True
    >>> error = np.linalg.norm(model.inverse_transform(weights) - X)
    >>> bool(error < 0.05 * np.linalg.norm(X - X.mean(axis=0)))
    True
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "svd_components": [Interval(Integral, 1, None, closed="left"), None],
        "init": [StrOptions({"random", "nndsvda", "kmeans"}), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_components=10,
        *,
        svd_components=None,
        init=None,
        max_iter=1000,
        tol=1e-6,
        random_state=None,
        verbose=0,
    ):
        self.n_components = n_components
        self.svd_components = svd_components
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose

    def _validate_X(self, X, reset):
        # Real-valued input is the point of this estimator: no sign check.
        return validate_data(
            self,
            X,
            accept_sparse=("csr", "csc"),
            dtype=[np.float64, np.float32],
            reset=reset,
        )

    def _to_simplex(self, X):
        """Steps 1, 2 and 4-7 with the fitted map: rows on the standard simplex."""
        Xc_axes = X @ self.principal_axes_.T - self.mean_ @ self.principal_axes_.T
        S = self.singular_values_
        U = np.divide(Xc_axes, S, out=np.zeros_like(Xc_axes), where=S > 0)
        B = U @ self.transformation_[:, :-1].T
        return (B - self._b_mean + 1 / B.shape[1] - self._low) / self._scale

    def _from_simplex(self, P):
        """Steps 9 and 10: map points of the standard simplex back to data space."""
        B = P * self._scale + self._low - 1 / P.shape[1] + self._b_mean
        U = B @ self.transformation_[:, :-1]
        return (U * self.singular_values_) @ self.principal_axes_ + self.mean_

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit the simplex decomposition to real-valued data ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Real-valued data (negative entries allowed).  Sparse input is
            centered implicitly, never densified (unless ``svd_components``
            reaches ``min(n_samples, n_features)``).
        y : Ignored
            Not used, present for API consistency.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        X = self._validate_X(X, reset=True)
        n, m = X.shape
        q = max(m - 1, 1) if self.svd_components is None else self.svd_components
        if q > m:
            raise ValueError(
                f"svd_components={q} exceeds n_features={m}: at most every "
                "principal axis can be kept."
            )
        d = q + 1
        self.mean_ = np.asarray(X.mean(axis=0), dtype=X.dtype).ravel()
        U, S, Vt = _centered_svd(X, self.mean_, q, self.random_state)
        self.principal_axes_ = Vt
        self.singular_values_ = S
        self.transformation_ = simplex_rotation(d).astype(X.dtype)
        B = U @ self.transformation_[:, :-1].T
        self._b_mean = B.mean(axis=0)
        shifted = B - self._b_mean + 1 / d
        low = shifted.min()
        scale = 1 - d * low
        if not scale > np.finfo(X.dtype).eps:
            # No variance along the kept axes: every point is the centroid.
            low, scale = 0.0, 1.0
        self._low = X.dtype.type(low)
        self._scale = X.dtype.type(scale)
        P = np.maximum((shifted - low) / scale, 0)
        self.plsa_ = PLSI(
            n_components=self.n_components,
            init=self.init,
            max_iter=self.max_iter,
            tol=self.tol,
            random_state=self.random_state,
            verbose=self.verbose,
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            self.plsa_.fit(P)
        for w in caught:
            # Said in this estimator's name: its max_iter and tol are the ones.
            warnings.warn(
                f"{type(self).__name__}, PLSA step: {w.message}", w.category, 3
            )
        self.components_ = self._from_simplex(self.plsa_.components_)
        self.embedding_ = self.plsa_.embedding_
        self.loss_ = self.plsa_.loss_
        self.loss_history_ = self.plsa_.loss_history_
        self.n_iter_ = self.plsa_.n_iter_
        return self

    def transform(self, X):
        """Weights of ``X`` on the learned simplex (rows on the standard simplex).

        Each row is mapped onto the standard simplex with the fitted affine
        map and folded in by EM with the PLSA bases fixed.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Real-valued data with the features seen in ``fit``.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            Non-negative weights; each row sums to one.
        """
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        return self.plsa_.transform(np.maximum(self._to_simplex(X), 0))

    def inverse_transform(self, X):
        """Map simplex weights back to data space: ``X @ components_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            Weights, e.g. the output of ``transform``.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        return _reconstruct(X, self.components_)

    def score(self, X, y=None):
        """How well the learned simplex explains the points ``X`` (higher is better).

        Each row of ``X`` is mapped onto the standard simplex, where it is a
        distribution :math:`p_d` over the ``d = svd_components + 1``
        coordinates; its weights :math:`\\hat\\theta_d` are folded in as by
        :meth:`transform` and the point is scored by its cross-entropy with
        its reconstruction :math:`q_d = \\hat\\theta_d C` on the PLSA bases
        :math:`C`:

        .. math::

            \\mathrm{score}(X) = \\frac{1}{n} \\sum_d \\sum_j p_{dj} \\log q_{dj}
            = -\\frac{1}{n} \\sum_d \\big(H(p_d) + \\mathrm{KL}(p_d \\| q_d)\\big).

        This is not the document-completion score of the other estimators:
        real-valued data has no tokens to split, and the mapped points are
        compositions of a few coordinates, too few to hold some out.  The
        unit held out is the point: on points not used in ``fit`` (as in
        ``GridSearchCV``) the score measures how well the simplex encloses
        new data.  More vertices never enclose less, so the score does not
        decrease with ``n_components``: choose the smallest ``n_components``
        after which it levels off.  Scores compare models with the same
        ``svd_components`` (the map onto the simplex depends on it).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Real-valued data.
        y : Ignored
            Not used, present for API consistency.

        Returns
        -------
        score : float
            At most 0; the maximum, :math:`-\\frac{1}{n} \\sum_d H(p_d)`, is
            reached when every point lies inside the learned simplex.
        """
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        P = sp.csr_matrix(np.maximum(self._to_simplex(X), 0))
        P.eliminate_zeros()
        theta, phi = self.plsa_._topic_mixture(P)
        log_likelihood, _ = completion_log_likelihood(P, theta, phi)
        return log_likelihood / X.shape[0]

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
