"""scikit-learn's documented contracts, ported to the package's estimators.

Each test here is the idea of one of scikit-learn's own tests of ``NMF`` and
``LatentDirichletAllocation``, written for these estimators:

- ``transform(X, normalize=...)``, the signature of scikit-learn's
  ``LatentDirichletAllocation.transform`` (and ``fit_transform``);
- ``n_components="auto"``, scikit-learn's ``NMF``: the number of topics
  read off a custom start, else the number of features;
- data of the smallest magnitudes (subnormal floats) gives the topics of
  the same data rescaled.

That ``loss_history_[0]`` is the objective at the start also with split-merge
moves is tested where the moves are (``test_restarts_and_moves.py``,
``test_lda.py``); that a refit on data of another width fails cleanly is
``test_fit_state.py``'s.
"""

import warnings

import numpy as np
import pytest
from _corpora import low_rank_counts, random_start
from _estimators import BY_NAME, estimators_with
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import psi
from sklearn.decomposition import LatentDirichletAllocation
from sklearn.utils._param_validation import InvalidParameterError, StrOptions

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

ALL = estimators_with()
X = low_rank_counts(n_samples=15, n_features=9, seed=3)
X[4] = 0  # a document without words


def _fitted(spec, **params):
    est = spec.make(n_components=3, max_iter=10, random_state=0, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X)


# ------------------------------------------------ transform(normalize=...)
@pytest.mark.parametrize("spec", ALL)
def test_transform_normalize_true_is_the_default(spec):
    est = _fitted(spec)
    assert_array_equal(est.transform(X, normalize=True), est.transform(X))
    raw = est.transform(X, normalize=False)
    assert raw.shape == (X.shape[0], 3) and raw.dtype == X.dtype
    assert np.all(np.isfinite(raw)) and np.all(raw >= 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        refit = spec.make(n_components=3, max_iter=10, random_state=0)
        assert_array_equal(refit.fit_transform(X, normalize=False), raw)


@pytest.mark.parametrize("spec", estimators_with(probabilistic_factors=True))
def test_transform_normalize_false_gives_expected_topic_counts(spec):
    # P(z|d) normalized; unnormalized, each document's words spread over
    # the topics (the count-scale fold-in under topics that sum to one).
    est = _fitted(spec)
    raw = est.transform(X, normalize=False)
    assert_allclose(raw.sum(axis=1), X.sum(axis=1), rtol=1e-6)
    assert_array_equal(raw[4], 0)
    if spec.transform_rows_sum_to_one:
        theta = est.transform(X)
        words = X.sum(axis=1) > 0
        assert_allclose(raw[words] / raw[words].sum(axis=1)[:, None], theta[words])
        assert_allclose(theta[4], est.p_z_)


@pytest.mark.parametrize("name", ["KLNMF", "NormalizedNMF", "JointNMF"])
def test_transform_normalize_false_of_a_document_factor_is_the_same(name):
    est = _fitted(BY_NAME[name])
    assert_array_equal(est.transform(X, normalize=False), est.transform(X))


def test_ldavi_transform_normalize_false_is_scikit_learns_gamma():
    est = _fitted(BY_NAME["LDAVI"], max_doc_update_iter=100, mean_change_tol=1e-3)
    sk = LatentDirichletAllocation(3, max_iter=1, random_state=0).fit(X)
    sk.components_ = est.components_.copy()
    sk.exp_dirichlet_component_ = np.exp(_dirichlet_expectation(est.components_))
    # rtol: scikit-learn's fast digamma series, amplified by the E-step's
    # contraction (see test_lda.py's oracle tests: agreement to ~2e-6).
    unnormalized = sk.transform(X, normalize=False)
    assert_allclose(est.transform(X, normalize=False), unnormalized, rtol=1e-5)
    assert_allclose(est.transform(X), sk.transform(X), rtol=1e-5)
    assert not np.allclose(unnormalized.sum(axis=1), 1.0)


def _dirichlet_expectation(lam):
    return psi(lam) - psi(lam.sum(axis=1))[:, None]


def test_gamma_poisson_transform_normalize_false_gives_the_shapes():
    est = _fitted(BY_NAME["GammaPoissonVI"], doc_topic_rate=3.0)
    shapes = est.transform(X, normalize=False)
    assert_allclose(est.transform(X), shapes / 4.0, rtol=1e-12)
    # The shapes are LDAVI's gamma (Lemma E.3): normalized, its proportions.
    lda = _fitted(BY_NAME["LDAVI"], topic_word_prior=None)
    lda.components_ = est.components_
    assert_allclose(shapes, lda.transform(X, normalize=False), rtol=1e-10)


# ------------------------------------------------------ n_components="auto"
def _takes_auto(spec):
    constraints = spec.cls._parameter_constraints["n_components"]
    return any(isinstance(c, StrOptions) and "auto" in c.options for c in constraints)


AUTO = [param for param in estimators_with() if _takes_auto(param.values[0])]


def test_auto_is_offered_by_the_nmf_family_with_a_custom_start():
    names = {spec.values[0].name for spec in AUTO}
    assert names == {"KLNMF", "NormalizedNMF", "PLSI", "JointNMF", "HybridNMFPLSI"}
    assert names == {spec.values[0].name for spec in estimators_with(custom_start="WH")}


@pytest.mark.parametrize("spec", AUTO)
def test_n_components_auto_is_read_off_the_custom_start(spec):
    W, H = random_start(X, 4)
    est = spec.make(n_components="auto", init="custom", max_iter=5, random_state=0)
    est.fit(X, W=W, H=H)
    assert est.components_.shape == (4, X.shape[1])
    same = spec.make(n_components=4, init="custom", max_iter=5, random_state=0)
    assert_array_equal(est.components_, same.fit(X, W=W, H=H).components_)
    assert est.get_params()["n_components"] == "auto"  # fit changes no parameter


@pytest.mark.parametrize("spec", AUTO)
def test_n_components_auto_without_a_custom_start_is_n_features(spec):
    Y = X[:, :4]
    est = spec.make(n_components="auto", max_iter=5, random_state=0).fit(Y)
    assert est.components_.shape == (4, 4)
    if spec.partial_fit:
        online = spec.make(n_components="auto", random_state=0).partial_fit(Y)
        assert online.components_.shape == (4, 4)


@pytest.mark.parametrize("name", ["LDAVI", "GammaPoissonVI", "SimplexPLSA"])
def test_n_components_auto_is_refused_where_it_has_no_meaning(name):
    with pytest.raises(InvalidParameterError, match="n_components"):
        BY_NAME[name].make(n_components="auto").fit(X)


# ----------------------------------------------------------- subnormal data
# A KL factorization without priors is scale-equivariant: the model of c X
# is that of X with the document factor and the objective times c.  Data so
# small that a fit's products are subnormal lost that (topics up to 0.4 off
# the rescaled data's); such data is fitted at a safe scale.
SCALE_EQUIVARIANT = ["KLNMF", "NormalizedNMF", "PLSI", "JointNMF", "HybridNMFPLSI"]


def test_the_scale_equivariant_estimators_are_those_that_rescale():
    # LDAVI and GammaPoissonVI have priors (their model of c X is not that
    # of X rescaled); SimplexPLSA maps real data onto a simplex itself.
    rescaling = {
        spec.values[0].name
        for spec in ALL
        if getattr(spec.values[0].cls, "_scale_equivariant", False)
    }
    assert rescaling == set(SCALE_EQUIVARIANT)


@pytest.mark.parametrize("dtype, factor", [(np.float64, 1e-310), (np.float32, 1e-41)])
@pytest.mark.parametrize("name", SCALE_EQUIVARIANT)
def test_subnormal_data_gives_the_topics_of_the_data_rescaled(name, dtype, factor):
    tiny = (X * factor).astype(dtype)
    assert tiny.max() < np.finfo(dtype).tiny  # every entry subnormal
    exponent = 1 - np.frexp(tiny.max())[1] + 4  # entries up to 16
    rescaled = np.ldexp(tiny, exponent)  # exact
    assert rescaled.dtype == dtype and np.array_equal(
        np.ldexp(rescaled, -exponent), tiny
    )
    spec = BY_NAME[name]
    a = spec.make(n_components=3, max_iter=30, random_state=0).fit(tiny)
    b = spec.make(n_components=3, max_iter=30, random_state=0).fit(rescaled)
    assert a.components_.dtype == dtype
    tol = dict(rtol=1e-9, atol=1e-12) if dtype == np.float64 else dict(atol=1e-5)
    assert_allclose(a.topic_word_distributions(), b.topic_word_distributions(), **tol)
    assert_allclose(np.ldexp(a.loss_history_, exponent), b.loss_history_, rtol=1e-6)
    if dtype == np.float64:
        # The model W H of the training data and of the fold-in scale with
        # the data (to the precision of subnormal numbers, about 1e-13
        # relative here); how a start splits the scale between W and H
        # depends on the scale, the product does not.
        def model(est, Y):
            W = est.transform(Y, normalize=False)
            return np.ldexp(W @ est.components_, exponent if Y is tiny else 0)

        expected = model(b, rescaled)
        assert_allclose(model(a, tiny), expected, rtol=1e-9, atol=1e-9 * expected.max())
        assert_allclose(
            a.topic_proportions(tiny), b.topic_proportions(rescaled), atol=1e-12
        )
        if spec.transform_rows_sum_to_one:
            theta = a.transform(tiny)
            assert_allclose(theta, b.transform(rescaled), rtol=1e-9, atol=1e-12)


def test_data_of_ordinary_scale_is_fitted_as_it_is():
    # Rescaling is for tiny data only: at the scale of counts (and down to
    # the threshold) the fit is the same computation, bit for bit.
    spec = BY_NAME["KLNMF"]
    a = spec.make(n_components=3, max_iter=10, random_state=0).fit(X * 1e-150)
    b = spec.make(n_components=3, max_iter=10, random_state=0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            "sklearn_topicfac.estimators._base.tiny_data_exponent", lambda X: 0
        )
        b.fit(X * 1e-150)
    assert_array_equal(a.components_, b.components_)
