"""Simplex decompositions of real-valued data by SVD and PLSA (Shashanka & Giering)."""

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import _fit_context, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import validate_data

from .._docstrings import fill_doc
from .._validation import (
    available_memory,
    format_bytes,
    is_dask_array,
    reconstruct,
    warn,
)
from ..engine import Blocks
from ..kernels import completion_log_likelihood, one_blas_thread
from ..models import SimplexMap
from ..models.simplex import simplex_rotation
from . import _state
from ._base import TopicEstimator, all_or_nothing
from .plsi import PLSI

# Below this, the dense arrays of a fit are never worth refusing (a small
# sparse X may be densified as cheaply as it is read).
_SMALL_BYTES = 2**27


def _warn_if_counts(X):
    """Warn when every entry of ``X`` is a non-negative integer (and some
    are positive): count data, for which this estimator is not made."""
    values = X.data if sp.issparse(X) else X
    if values.size == 0 or values.min() < 0 or not values.max() > 0:
        return
    if np.array_equal(values, np.round(values)):
        warn(
            "SimplexPLSA: X looks like counts (every entry a non-negative "
            "integer). SimplexPLSA encloses real-valued data in a simplex "
            "through its principal axes; on word counts its weights barely "
            "follow the topics. For topics of counts use PLSI or LDAVI; "
            "convert X to non-integer values (e.g. standardize it) to "
            "silence this warning if the simplex is what you want.",
            UserWarning,
        )


@fill_doc
class SimplexPLSA(TopicEstimator):
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
    8. fit :class:`PLSI` (``plsa_``) to these rows -- or another topic
       model, ``inner_model`` (paper 004, §3.4: "applicable to any topic
       modeling technique such as Latent Dirichlet Allocation");
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
        Stopping threshold of the PLSA step (the fit loop's rule, as
        :class:`PLSI`'s ``tol``).  Smaller than :class:`PLSI`'s default: mapped onto
        the simplex, the data can usually be enclosed exactly, the objective
        heads for zero, and EM's last, slow steps are what move the vertices
        out to the data's corners.
    random_state : int, RandomState instance or None, default=None
        Seed of the PLSA start (and of the randomized SVD used for large
        input, see Notes).
    verbose : int, default=0
        Progress output of the PLSA step.
    inner_model : estimator or None, default=None
        The topic model of step 8.  ``None`` is :class:`PLSI` by EM
        (``solver="em"``, not PLSI's default) with this estimator's
        ``init``, ``max_iter``, ``tol`` (its ``transform_tol`` too),
        ``random_state`` and ``verbose`` (the paper).  Otherwise an unfitted
        topic model of this package, e.g. :class:`LDAVI`: it is cloned, its
        ``n_components`` set to this estimator's, and fitted with its own
        other parameters (the ones above are then unused, except
        ``random_state`` for the SVD).
    point_mass : float, default=1.0
        The number of words each point on the simplex counts as for the
        inner model: it is fitted to the points times ``point_mass``.  PLSA
        does not depend on it (EM is invariant to the scale of the data);
        for LDA it weighs the data against the Dirichlet priors, and points
        of mass 1 are swamped by them: use about 1000 (see
        ``docs/paper004_simplex.md``).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The bases, in data space: the vertices of the learned simplex.
    embedding_ : ndarray of shape (n_samples, n_components)
        Weights of the training data reached by the PLSA fit; rows sum to
        one.
    simplex_map_ : SimplexMap
        The fitted map onto the standard simplex and back
        (`sklearn_topicfac.models.SimplexMap`), in float64.
    plsa_ : estimator
        The topic model of step 8 (:class:`PLSI`, or a clone of
        ``inner_model``) fitted on the data moved onto the standard simplex
        (times ``point_mass``).
    mean_ : ndarray of shape (n_features,)
        Mean of the training data.
    principal_axes_ : ndarray of shape (svd_components, n_features)
        The principal axes kept (right singular vectors), as rows; a row of
        zeros for an axis without variance.
    singular_values_ : ndarray of shape (svd_components,)
        Their singular values (0 for an axis without variance).  For data
        whose centered norm exceeds the largest float they overflow to
        ``inf``: the model itself works on ``X`` scaled by a power of two and
        is unaffected.
    transformation_ : ndarray of shape (svd_components + 1, svd_components + 1)
        ``T``; its last column is the normal of the simplex.
    loss_ : float
        Final objective of the PLSA step (of the inner model).
    loss_history_ : ndarray of shape (n_iter_ + 1,)
        Objective of the PLSA step at the start and after every EM step.
    n_iter_ : int
        Number of EM steps (iterations of the inner model) run.
    {{features_seen}}

    See Also
    --------
    PLSI : PLSA itself, for non-negative data, bases on the standard simplex.

    Notes
    -----
    **What it is for.**  Real-valued data (negative entries allowed) that
    are mixtures of a few extreme points: the vertices of the simplex that
    encloses them, and each point's convex weights on those vertices.  It is
    not a topic model of text: the affine map works on principal axes of the
    centred counts, which on sparse word counts carry document length and
    frequent words, and the weights then barely follow the classes
    (measured against :class:`PLSI` on two labeled corpora in
    ``docs/paper004_simplex.md``).  Fitting data that look like counts (all
    entries non-negative integers) therefore warns; use :class:`PLSI` or
    :class:`LDAVI` for them.

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
      before the fold-in (its weights stay on the simplex).  Its row is
      divided by a power of two when its entries exceed one (exact, and the
      fold-in does not depend on a row's scale), so that it fits the dtype;
      a point whose image exceeds even the float64 range (e.g. ``1e10``
      against training data at ``1e-300``) is refused by name.

    Numerical behaviour:

    * **One computation for every container.**  Dense, CSR and CSC input
      (and C- or Fortran-ordered arrays) go through the same arithmetic on
      the same numbers, so they give the same model and the same
      ``transform`` (to the last bit), in float64 and in float32 (whose map
      onto the simplex is computed in float64, the PLSA step in float32).
      Sparse input is never densified (a ``svd_components`` that would
      make the fit's dense arrays as large as ``X`` densified is refused
      before any work): products with ``X`` use its canonical
      CSR rows or CSC columns (a dense ``X`` is converted one block at a
      time) and the exact SVD works on dense blocks of rows or columns.
    * **SVD.**  When affordable (``n_samples * n_features * min(n_samples,
      n_features)`` up to ``2**33``, or ``svd_components + 10`` at least half
      of ``min(n_samples, n_features)``) the SVD is exact: the ``R`` factor
      of a blockwise Householder QR of the centered data (of its transpose
      when ``n_samples < n_features``), then the SVD of ``R`` (plus one
      Rayleigh-Ritz step for the right vectors of wide data).  No Gram
      matrix ``X.T @ X`` is formed, so no accuracy is lost to squaring: the
      singular values are accurate to rounding of the largest one, where a
      Gram matrix would lose those below ``sqrt(eps)`` times it (1.5e-8 in
      float64).  Otherwise (both sides large and few axes, e.g. text) it is
      a randomized range finder with power iterations, seeded by
      ``random_state``, and a Rayleigh-Ritz step: accurate where the
      spectrum has gaps, approximate within near-equal singular values.
    * **Axes without variance.**  Directions whose singular value is below
      ``eps * max(n_samples, n_features)`` times the Frobenius norm of ``X``
      (``eps`` that of ``X``'s dtype) are rounding noise of the data: they
      get a zero row in ``principal_axes_``, a zero singular value, and no
      coordinate on the simplex.  Data without any variance (all zero,
      constant, one sample) therefore give a valid model in which every
      point is the centroid: every vertex is ``mean_``, every point maps to
      the simplex's centroid and ``inverse_transform`` returns ``mean_``.
    * **Magnitude.**  The decomposition is scale-equivariant: ``X * c`` has
      ``components_ * c`` and the same weights.  It is computed on ``X``
      divided by the power of two nearest its largest entry (exact in
      floating point), so that data from subnormal magnitudes up to the
      largest float work without overflow or underflow; ``X * 2**k`` gives
      the model of ``X`` exactly, with ``components_ * 2**k``.  Only
      vertices that cannot be represented are refused: data so close to the
      end of the float range that the simplex enclosing them reaches beyond
      it raise a ``ValueError`` asking to scale ``X`` down.

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
        "inner_model": [HasMethods(["fit", "transform"]), None],
        "point_mass": [Interval(Real, 0, None, closed="neither")],
    }

    # "a": the principal axes kept, "d" = a + 1: the simplex's coordinates.
    _fitted_state = {
        "components_": _state.Array(("k", "m"), values="finite", kernel=True),
        "embedding_": _state.Array(("n", "k")),
        "mean_": _state.Array(("m",), values="any"),
        "singular_values_": _state.Array(("a",), values="any"),
        "principal_axes_": _state.Array(("a", "m"), values="finite"),
        "transformation_": _state.Array(("d", "d"), values="finite"),
        "loss_": _state.Scalar(),
        "loss_history_": _state.Array((None,), values="finite"),
        "n_iter_": _state.Scalar(integral=True, low=0),
    }
    # The fitted map onto the simplex, which transform and score apply.
    _map_state = {
        # Within float64's exponents (the data were scaled by 2**-exponent).
        "exponent": _state.Scalar(integral=True, low=-1100, high=1100),
        "mean": _state.Array(("m",), values="finite", kernel=True),
        "singular_values": _state.Array(("a",), kernel=True),
        "axes": _state.Array(("a", "m"), values="finite", kernel=True),
        "rotation": _state.Array(("d", "d"), values="finite", kernel=True),
        "b_mean": _state.Array(("d",), values="finite", kernel=True),
        "low": _state.Scalar(kernel=True),
        "scale": _state.Scalar(low=0, low_open=True, kernel=True),
    }

    def _check_fitted(self):
        sizes = _state.check_shapes(self, self._fitted_state)
        self._check_map_and_plsa(sizes, values=False)

    def _check_fitted_state(self):
        sizes = _state.check_state(self, self._fitted_state)
        if sizes is not None:
            self._check_map_and_plsa(sizes, values=True)

    def _check_map_matches_attributes(self, simplex_map):
        """The public attributes are the map's, in the data's dtype; the
        rotation is the one of its dimension."""
        with np.errstate(over="ignore"):
            derived = {
                "mean_": simplex_map.data_mean(),
                "singular_values_": simplex_map.data_singular_values(),
                "principal_axes_": simplex_map.axes,
                "transformation_": simplex_map.rotation,
            }
        for name, value in derived.items():
            fitted = getattr(self, name)
            if not np.array_equal(value.astype(fitted.dtype), fitted, equal_nan=True):
                _state.fail(self, "simplex_map_", f"does not give {name}")
        d = simplex_map.rotation.shape[0]
        if not np.array_equal(simplex_map.rotation, simplex_rotation(d)):
            _state.fail(self, "simplex_map_", "has a rotation no fit makes")
        # The mean of coordinates of centred data: 0 but for rounding (about
        # 1e-16 whatever the data, the coordinates being whitened).
        if np.any(np.abs(simplex_map.b_mean) > 1e-9):
            _state.fail(self, "simplex_map_", "has coordinates that are not centred")
        # The shift and scale that put the training points on the simplex.
        low, scale = simplex_map.low, simplex_map.scale
        if not (scale == 1 - d * low or (low, scale) == (0.0, 1.0)):
            _state.fail(self, "simplex_map_", "has a scale unlike its shift")

    def _check_map_and_plsa(self, sizes, values):
        """The simplex map (``a`` axes, ``d = a + 1`` coordinates) and the
        PLSA step fitted on its ``d`` coordinates with the same topics."""
        simplex_map = getattr(self, "simplex_map_", None)
        if not isinstance(simplex_map, SimplexMap):
            _state.fail(self, "simplex_map_", "is not a fitted SimplexMap")
        _state.check_members(
            self, "simplex_map_", simplex_map, self._map_state, sizes, values
        )
        if values:
            self._check_map_matches_attributes(simplex_map)
        if sizes.setdefault("d", sizes["a"] + 1) != sizes["a"] + 1:
            _state.fail(
                self, "simplex_map_", "has a rotation that does not fit its axes"
            )
        plsa = getattr(self, "plsa_", None)
        if not isinstance(plsa, TopicEstimator) or isinstance(plsa, SimplexPLSA):
            _state.fail(self, "plsa_", "is not a topic model of the package")
        if values:
            plsa._check_fitted_state()
        plsa._check_fitted()
        if plsa.n_features_in_ != sizes["d"]:
            d = sizes["d"]
            _state.fail(
                self, "plsa_", f"is not fitted on the simplex's {d} coordinates"
            )
        if plsa.components_.shape[0] != sizes["k"]:
            _state.fail(self, "plsa_", f"does not have the {sizes['k']} topics")

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
        inner_model=None,
        point_mass=1.0,
    ):
        self.n_components = n_components
        self.svd_components = svd_components
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose
        self.inner_model = inner_model
        self.point_mass = point_mass

    def _validate_X(self, X, reset):
        if isinstance(X, Blocks) or is_dask_array(X):
            raise ValueError(
                "SimplexPLSA cannot be fitted block by block: its SVD step and "
                "simplex map need the whole matrix. Fit it on an in-memory matrix."
            )
        # Real-valued input is the point of this estimator: no sign check.
        return validate_data(
            self,
            X,
            accept_sparse=("csr", "csc"),
            dtype=[np.float64, np.float32],
            reset=reset,
        )

    def _simplex_points(self, X, rescale_rows):
        """The points of ``X`` on the standard simplex, clipped at zero, in
        the dtype of the PLSA model.

        ``rescale_rows``: a point far outside the training data maps to
        large entries; its row is then divided by a power of two (exact, and
        ignored by the fold-in) so that it fits the dtype
        (`SimplexMap.points`).
        """
        P = self.simplex_map_.points(X, rescale_rows=rescale_rows)
        with np.errstate(over="ignore"):
            P = P.astype(self.plsa_.components_.dtype)
        if not np.all(np.isfinite(P)):
            raise ValueError(
                "Some rows of X lie too far from the training data (their "
                "distance, in units of its spread, exceeds the float range): "
                "they cannot be mapped onto the simplex. Check them for gross "
                "errors, or refit on data that includes them."
            )
        return P

    def _check_memory(self, X, q):
        """Refuse, before any work, a fit whose dense arrays would be as large
        as ``X`` densified (for sparse ``X``) or exceed the available memory.
        """
        n, m = X.shape
        need = 8 * SimplexMap.working_entries(n, m, q)
        dense = 8 * n * m
        available = available_memory()
        densifies = sp.issparse(X) and need >= dense and need > _SMALL_BYTES
        too_big = available is not None and need > available
        if not (densifies or too_big):
            return
        where = (
            f"more than densifying X would ({format_bytes(dense)})"
            if densifies
            else f"more than the {format_bytes(available)} available"
        )
        raise ValueError(
            f"SimplexPLSA with svd_components={q} on a {n} x {m} "
            f"{'sparse ' if sp.issparse(X) else ''}X would hold about "
            f"{format_bytes(need)} of dense arrays, {where}: its T is "
            "(svd_components + 1)^2 and its points on the simplex n_samples x "
            "(svd_components + 1). Pass a small svd_components, e.g. "
            f"svd_components={max(1, min(self.n_components - 1, m))} "
            "(n_components - 1: the axes n_components vertices span)."
        )

    @fill_doc
    @_fit_context(prefer_skip_nested_validation=True)
    @all_or_nothing(fresh=True)
    def fit(self, X, y=None):
        """Fit the simplex decomposition to real-valued data ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Real-valued data (negative entries allowed), finite.  Sparse
            input is never densified (see Notes).
        {{ignored_y}}

        Returns
        -------
        self : object
            The fitted estimator.

        Raises
        ------
        ValueError
            If ``X`` contains NaN or infinity, if ``svd_components`` exceeds
            ``n_features``, or if the simplex enclosing ``X`` has vertices
            beyond the largest float (``X`` within a few times of it): the
            message asks to scale ``X`` down.  Also, before any work, if the
            dense arrays of the fit (the ``(q + 1) x (q + 1)`` rotation, the
            ``q x n_features`` axes, the ``n_samples x (q + 1)`` points on
            the simplex and the SVD's, for ``q = svd_components``) would
            exceed the available memory, or, for sparse ``X``, be as large as
            ``X`` densified (the default ``q = n_features - 1`` on text): the
            message gives their size and a ``svd_components`` that fits.
        """
        X = self._validate_X(X, reset=True)
        n, m = X.shape
        q = max(m - 1, 1) if self.svd_components is None else self.svd_components
        if q > m:
            raise ValueError(
                f"svd_components={q} exceeds n_features={m}: at most every "
                "principal axis can be kept."
            )
        self._check_memory(X, q)
        _warn_if_counts(X)
        dtype = X.dtype
        # The SVD and the rotation on one BLAS thread: LAPACK's blocked
        # factorizations round differently on different numbers of threads,
        # and the enclosing simplex amplifies it; on one thread the same
        # random_state gives the same bits on every machine.
        with one_blas_thread():
            simplex_map = SimplexMap().fit(X, q, self.random_state)
            P = simplex_map.points(X).astype(dtype)
        if self.inner_model is None:
            plsa = PLSI(
                n_components=self.n_components,
                init=self.init,
                max_iter=self.max_iter,
                tol=self.tol,
                # transform maps points with the fold-in: to this tol too.
                transform_tol=self.tol,
                # Paper 004's PLSA step, as published: plain EM, and the
                # points of a simplex are no counts of topics' words to split
                # or merge.
                solver="em",
                split_merge=0,
                random_state=self.random_state,
                verbose=self.verbose,
            )
        else:
            plsa = clone(self.inner_model).set_params(n_components=self.n_components)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            plsa.fit(P * self.point_mass)
        for w in caught:
            # Said in this estimator's name: its max_iter and tol are the ones.
            warn(f"{type(self).__name__}, PLSA step: {w.message}", w.category)
        with np.errstate(over="ignore"), one_blas_thread():
            vertices = plsa.topic_word_distributions()
            components = simplex_map.from_simplex(vertices).astype(dtype)
        if not np.all(np.isfinite(components)):
            hint = " or pass float64 data" if dtype == np.float32 else ""
            raise ValueError(
                f"The simplex enclosing X has vertices beyond the largest "
                f"{dtype} ({np.finfo(dtype).max:.4g}): X lies too close to the "
                "end of the float range for them to be represented. Scale X "
                "down, e.g. by a power of two (exact; the model of X / 2**k is "
                f"that of X with components_ / 2**k){hint}."
            )
        # The public attributes only once the model is known to be valid.
        with np.errstate(over="ignore"):
            self.mean_ = simplex_map.data_mean().astype(dtype)
            self.singular_values_ = simplex_map.data_singular_values().astype(dtype)
        self.principal_axes_ = simplex_map.axes.astype(dtype)
        self.transformation_ = simplex_map.rotation.astype(dtype)
        self.simplex_map_ = simplex_map
        self.plsa_ = plsa
        self.components_ = components
        self.embedding_ = plsa.embedding_
        self.loss_ = plsa.loss_
        self.loss_history_ = plsa.loss_history_
        self.n_iter_ = plsa.n_iter_
        return self

    def transform(self, X, *, normalize=True):
        """Weights of ``X`` on the learned simplex (rows on the standard simplex).

        Each row is mapped onto the standard simplex with the fitted affine
        map and folded in by EM with the PLSA bases fixed.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Real-valued data with the features seen in ``fit``.
        normalize : bool, default=True
            ``False`` gives the PLSA step's fold-in before it is normalized
            (``plsa_.transform(..., normalize=False)``): the weights times
            the mass of each mapped point (times ``point_mass``); ``True``
            the weights, summing to one.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            Non-negative weights; each row sums to one.

        Raises
        ------
        ValueError
            If ``X`` contains NaN or infinity, or rows so far from the
            training data (relative to its spread) that their image on the
            simplex exceeds the float range.
        """
        self._check_fitted()
        X = self._validate_X(X, reset=False)
        P = self._simplex_points(X, rescale_rows=True)
        return self.plsa_.transform(P * self.point_mass, normalize=normalize)

    def fit_transform(self, X, y=None, *, normalize=True):
        """Fit, then return ``transform(X, normalize=normalize)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Real-valued data.
        y : None
            Ignored.
        normalize : bool, default=True
            As for ``transform``.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
        """
        return self.fit(X).transform(X, normalize=normalize)

    def inverse_transform(self, X):
        """Map simplex weights back to data space: ``X @ components_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_components)
            Weights, e.g. the output of ``transform`` (any real weights are
            accepted: those summing to one give points of the affine hull
            of ``components_``).

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)

        Raises
        ------
        ValueError
            If ``X`` is not a finite numeric 2-D array with ``n_components``
            columns.
        """
        self._check_fitted()
        return reconstruct(X, self.components_)

    @fill_doc
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
        {{ignored_y}}

        Returns
        -------
        score : float
            At most 0; the maximum, :math:`-\\frac{1}{n} \\sum_d H(p_d)`, is
            reached when every point lies inside the learned simplex.
        """
        self._check_fitted()
        X = self._validate_X(X, reset=False)
        P = sp.csr_matrix(self._simplex_points(X, rescale_rows=False))
        P.eliminate_zeros()
        # Every mapped point has a positive coordinate (its coordinates sum
        # to at least one), so transform's P(z|d) is the fold-in's mixture.
        theta = self.plsa_.transform(P * self.point_mass)
        phi = self.plsa_.topic_word_distributions()
        log_likelihood, _ = completion_log_likelihood(P, theta, phi)
        return log_likelihood / X.shape[0]
