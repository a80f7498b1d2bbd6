"""JointNMF: paper 002's lemmas, the PLSI equivalence, one ratio per iteration."""

import numpy as np
import pytest
from _corpora import planted_counts as _planted
from _references import joint_nmf, plsa_em
from numpy.testing import assert_allclose

from sklearn_topicfac import PLSI, JointNMF
from sklearn_topicfac import kernels as K
from sklearn_topicfac.kernels import products, updates


def _normalized_start(X, k, seed=1):
    """H rows sum to one, W rows sum to the document lengths."""
    rng = np.random.default_rng(seed)
    H = K.normalize_rows(rng.random((k, X.shape[1])) + 0.1)[0]
    theta = K.normalize_rows(rng.random((X.shape[0], k)) + 0.1)[0]
    return theta * np.asarray(X.sum(axis=1)), H


SOLVERS = ["joint", "squarem", "cd", "dn"]


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize(
    "params", [{"normalize": "components"}, {"normalize": "both"}, {"alpha": 0.5}]
)
@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_objective_never_increases(params, sparse, dtype, solver):
    X = _planted(sparse=sparse, dtype=dtype)
    model = JointNMF(
        5,
        solver=solver,
        init="random",
        random_state=0,
        max_iter=80,
        tol=0,
        **params,
        split_merge=0,
    )
    model.fit(X)
    history = model.loss_history_
    # Rounding of a float64 sum of terms of total size ~ sum(X).
    slack = 20 * np.finfo(dtype).eps * float(X.sum())
    assert np.all(np.diff(history) <= slack)
    assert history[-1] < 0.5 * history[0]


@pytest.mark.parametrize("solver", SOLVERS)
def test_reported_objective_is_the_model_divergence(solver):
    # The passes of "cd" and "dn" run on the count-scale factors and
    # convert their sums: the objective reported must be the model's.
    X = _planted()
    comp = JointNMF(
        4, alpha=0.3, solver=solver, random_state=0, max_iter=20, tol=0, split_merge=0
    ).fit(X)
    W = comp.embedding_
    expected = K.kl_divergence(X, W, comp.components_) + 0.3 * W.sum()
    assert_allclose(comp.loss_, expected, rtol=1e-10)
    both = JointNMF(
        4,
        normalize="both",
        solver=solver,
        random_state=0,
        max_iter=20,
        tol=0,
        split_merge=0,
    ).fit(X)
    assert_allclose(both.embedding_.sum(axis=1), 1.0)
    n_d = np.asarray(X.sum(axis=1))
    expected = K.kl_divergence(X, n_d * both.embedding_, both.components_)
    assert_allclose(both.loss_, expected, rtol=1e-10)


@pytest.mark.parametrize("alpha", [0.1, 1.0, 5.0])
def test_lemma_6_1_l1_penalty_only_rescales_the_document_factor(alpha):
    # Paper 002, Lemma 6.1: with normalized topics, the L1 penalty scales W
    # by 1 / (1 + alpha) at every iteration and induces no sparsity.
    X = _planted()
    W0, H0 = _normalized_start(X, 4)
    for n_iter in (1, 2, 5, 30):
        plain = JointNMF(4, init="custom", max_iter=n_iter, tol=0, split_merge=0).fit(
            X, W=W0, H=H0
        )
        pen = JointNMF(
            4, alpha=alpha, init="custom", max_iter=n_iter, tol=0, split_merge=0
        )
        pen.fit(X, W=W0, H=H0)
        assert_allclose(pen.components_, plain.components_, rtol=1e-10)
        assert_allclose(pen.embedding_ * (1 + alpha), plain.embedding_, rtol=1e-10)
        small = plain.embedding_ < 1e-3 * plain.embedding_.max()
        assert np.array_equal(pen.embedding_ < 1e-3 * pen.embedding_.max(), small)


def test_lemma_b_1_both_normalizations_give_the_same_iterates(backend):
    # Paper 002, Lemma B.1: from normalized starts, Alg. 4 and Alg. 6 give
    # the same topics at every iteration; W differs by the document lengths.
    X = _planted()
    W0, H0 = _normalized_start(X, 4)
    n_d = np.asarray(X.sum(axis=1))
    for n_iter in (1, 3, 10, 40):
        comp = JointNMF(4, init="custom", max_iter=n_iter, tol=0, split_merge=0).fit(
            X, W=W0, H=H0
        )
        both = JointNMF(
            4, normalize="both", init="custom", max_iter=n_iter, tol=0, split_merge=0
        )
        both.fit(X, W=W0 / n_d, H=H0)
        assert_allclose(both.components_, comp.components_, rtol=1e-10)
        assert_allclose(both.embedding_ * n_d, comp.embedding_, rtol=1e-10)
        assert_allclose(both.loss_history_, comp.loss_history_, rtol=1e-10)


@pytest.mark.parametrize(
    "params", [{"normalize": "components"}, {"alpha": 0.5}, {"normalize": "both"}]
)
def test_iterates_equal_algorithm_4_written_from_the_paper(backend, params):
    # Paper 002, Alg. 4 and Alg. 6 against tests/_references.joint_nmf, a
    # dense implementation from the posterior of the incoming state (eq. (27)-
    # (29)) that shares no kernel with the package: topics, document factor and
    # objective after every number of iterations.
    X = _planted(n=12, m=9, k=3, seed=3)
    W0, H0 = _normalized_start(X, 3)
    if params.get("normalize") == "both":
        W0 = W0 / np.asarray(X.sum(axis=1))
    for n_iter in (1, 2, 6):
        model = JointNMF(3, init="custom", max_iter=n_iter, tol=0, split_merge=0)
        model.set_params(**params).fit(X, W=W0, H=H0)
        W, H, losses = joint_nmf(X.toarray(), W0, H0, n_iter, **params)
        assert_allclose(model.components_, H, rtol=1e-10)
        assert_allclose(model.embedding_, W, rtol=1e-10)
        assert_allclose(model.loss_history_, losses, rtol=1e-10)


def test_joint_updates_with_normalized_topics_are_plsa_written_from_hofmann(backend):
    # Paper 002: NMF with normalized topics and joint updates is PLSA.  Both
    # JointNMF's modes against Hofmann's EM as written (dense, with the
    # n x m x k posterior; tests/_references.plsa_em): P(w|z) equal, and the
    # document factor is N P(z) P(d|z) ("components") or P(z|d) ("both").
    X = _planted(n=12, m=9, k=3, seed=4)
    W0, H0 = _normalized_start(X, 3)
    N, n_d = X.sum(), np.asarray(X.sum(axis=1))
    p_z = W0.sum(axis=0) / N
    for n_iter in (1, 4, 12):
        p_z_t, p_d_z, p_w_z = plsa_em(
            X.toarray(), p_z, W0 / (N * p_z), H0, n_steps=n_iter
        )
        comp = JointNMF(3, init="custom", max_iter=n_iter, tol=0, split_merge=0)
        comp.fit(X, W=W0, H=H0)
        both = JointNMF(
            3, normalize="both", init="custom", max_iter=n_iter, tol=0, split_merge=0
        ).fit(X, W=W0 / n_d, H=H0)
        for model in (comp, both):
            assert_allclose(model.components_, p_w_z, rtol=1e-10)
        assert_allclose(comp.embedding_, N * p_z_t * p_d_z, rtol=1e-10)
        # P(z|d) = N P(z) P(d|z) / N_d: EM keeps P(d) at the lengths' shares.
        assert_allclose(both.embedding_, N * p_z_t * p_d_z / n_d, rtol=1e-10)


def test_joint_updates_with_normalized_topics_are_plsi(backend):
    # Paper 002: NMF with normalized topics and joint updates is PLSA.
    X = _planted()
    W0, H0 = _normalized_start(X, 4)
    for n_iter in (1, 7, 25):
        joint = JointNMF(4, init="custom", max_iter=n_iter, tol=0, split_merge=0).fit(
            X, W=W0, H=H0
        )
        plsi = PLSI(
            4, solver="em", init="custom", max_iter=n_iter, tol=0, split_merge=0
        ).fit(X, W=W0, H=H0)
        assert_allclose(joint.components_, plsi.components_, rtol=1e-12)
        assert_allclose(joint.loss_history_, plsi.loss_history_, rtol=1e-12)
        assert_allclose(K.normalize_rows(joint.embedding_)[0], plsi.embedding_)


@pytest.mark.parametrize("normalize", ["components", "both"])
def test_one_evaluation_of_wh_per_iteration(monkeypatch, normalize):
    X = _planted()
    calls = []
    original = products.product_at_nonzeros

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(products, "product_at_nonzeros", counting)
    # The EM document pass evaluates W H by the fit's batched ratio.
    original_ratio = updates.batched_ratio_at_nonzeros

    def counting_ratio(*args, **kwargs):
        calls.append(1)
        return original_ratio(*args, **kwargs)

    monkeypatch.setattr(updates, "batched_ratio_at_nonzeros", counting_ratio)
    counts = []
    for n_iter in (5, 6, 10):
        calls.clear()
        JointNMF(
            3,
            normalize=normalize,
            random_state=0,
            max_iter=n_iter,
            tol=0,
            split_merge=0,
        ).fit(X)
        counts.append(len(calls))
    # The fit costs one evaluation per iteration plus one for the final
    # objective (the ratio of each iteration also gives the objective of
    # the state it starts from).
    assert counts[1] - counts[0] == 1
    assert counts[2] - counts[0] == 5
    assert counts[0] == 5 + 1


def test_alpha_with_both_normalizations_is_rejected():
    with pytest.raises(ValueError, match="alpha > 0 has no effect"):
        JointNMF(2, normalize="both", alpha=0.1).fit(_planted())


def test_transform_scales_match_the_training_factor():
    X = _planted(n=50, m=40, k=3, seed=5)
    for params in ({"alpha": 0.5}, {"normalize": "both"}):
        model = JointNMF(
            3, random_state=0, max_iter=3000, tol=1e-12, transform_tol=1e-12, **params
        ).fit(X)
        assert_allclose(model.transform(X), model.embedding_, rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("solver", ["cd", "dn"])
def test_passes_with_normalized_topics_are_plsis(solver):
    # With normalize="components" and alpha=0 the count-scale factors are
    # the model's own: the passes are PLSI's with the same solver.
    X = _planted()
    W0, H0 = _normalized_start(X, 4)
    params = dict(init="custom", max_iter=15, tol=0, split_merge=0, solver=solver)
    joint = JointNMF(4, **params).fit(X, W=W0, H=H0)
    plsi = PLSI(4, **params).fit(X, W=W0, H=H0)
    assert_allclose(joint.loss_history_, plsi.loss_history_, rtol=1e-12)
    assert_allclose(joint.components_, plsi.components_, rtol=1e-10, atol=1e-14)
    assert joint.solver_ == solver


@pytest.mark.parametrize("normalize", ["components", "both"])
def test_squarem_goes_further_than_as_many_joint_updates(normalize):
    # A SQUAREM cycle costs at most three joint updates; 20 cycles end
    # below 60 plain updates from the same start (measured: the planted
    # corpus, both modes).
    X = _planted()
    params = dict(
        normalize=normalize, init="random", random_state=0, tol=0, split_merge=0
    )
    squarem = JointNMF(4, solver="squarem", max_iter=20, **params).fit(X)
    joint = JointNMF(4, solver="joint", max_iter=60, **params).fit(X)
    assert squarem.loss_ < joint.loss_


@pytest.mark.parametrize(
    ("solver", "cap"), [("joint", 200), ("squarem", 200), ("cd", 1000), ("dn", 1000)]
)
def test_auto_max_iter_follows_the_solver(solver, cap):
    model = JointNMF(2, solver=solver, random_state=0).fit(_planted())
    assert model._iteration_cap() == cap
    assert model.solver_ == solver
    # transform's fold-in runs the joint update's sweeps.
    assert model._fold_in_iter() == 200
