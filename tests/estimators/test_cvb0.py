"""LDA by CVB0 (``LDAVI(inference="cvb0")``): the sweep against the equations,
its fixed points, quality on rare words, float32, sparse = dense."""

import numpy as np
import pytest
import scipy.sparse as sp
from _corpora import collapsed_state, lda_counts
from numpy.testing import assert_allclose

from sklearn_topicfac import LDAVI
from sklearn_topicfac.kernels import cvb0_sweep, normalize_rows


def _dense_shares(X, D, T, alpha, eta, n_inner, exclude_words=True):
    """``g`` of every (d, w, k) from the equations, densely (tests only)."""
    Xd = X.toarray()
    n, m = Xd.shape
    own = np.minimum(Xd, 1)[:, :, None]
    word = (T.T[None, :, :] + eta) / (T.sum(axis=1) + m * eta)
    g = (D[:, None, :] + alpha) * word
    g /= g.sum(axis=2, keepdims=True)
    for _ in range(n_inner):
        e = own * g
        doc = np.maximum(D[:, None, :] - e, 0) + alpha
        if exclude_words:
            word = (np.maximum(T.T[None] - e, 0) + eta) / (
                np.maximum(T.sum(axis=1) - e, 0) + m * eta
            )
        new = doc * word
        g = 0.5 * (g + new / new.sum(axis=2, keepdims=True))
    return g


_state = collapsed_state


@pytest.mark.parametrize("n_inner", [0, 1, 3])
@pytest.mark.parametrize("exclude_words", [True, False])
def test_sweep_matches_the_equations(backend, n_inner, exclude_words, monkeypatch):
    if backend == "numba":
        # The twin sweeps by documents, or by terms when the topics'
        # counts outgrow the cache: both ways.
        from sklearn_topicfac.kernels.compiled import collapsed

        for cached in (1 << 30, 0):
            monkeypatch.setattr(collapsed, "_CVB0_CACHED_VALUES", cached)
            _check_sweep(n_inner, exclude_words)
    else:
        _check_sweep(n_inner, exclude_words)


def _check_sweep(n_inner, exclude_words):
    X = lda_counts(n=12, m=15, k=3, max_length=20)
    D, T = _state(X, 3)
    alpha, eta = np.array([0.2, 0.3, 0.5]), 0.1
    new_doc, new_topic, log_lik = cvb0_sweep(
        X, D, T, alpha, eta, exclude_words=exclude_words, n_inner=n_inner
    )
    g = _dense_shares(X, D, T, alpha, eta, n_inner, exclude_words)
    counts = X.toarray()[:, :, None] * g
    assert_allclose(new_doc, counts.sum(axis=1), rtol=1e-10)
    assert_allclose(new_topic, counts.sum(axis=0).T, rtol=1e-10, atol=1e-12)
    theta = normalize_rows(D + alpha)[0]
    beta = normalize_rows(T + eta)[0]
    Xd = X.toarray()
    expected = np.sum(Xd[Xd > 0] * np.log((theta @ beta)[Xd > 0]))
    assert_allclose(log_lik, expected, rtol=1e-10)


def test_converged_sweeps_are_a_fixed_point_of_batch_cvb0():
    # Batch CVB0 with every entry's g stored: g = f(N - own g), N = sum x g.
    # The sweeps store no g; where they have converged, the g that the
    # counts give must satisfy the stored-g equations exactly.
    X = lda_counts(n=20, m=25, k=3, max_length=30)
    D, T = _state(X, 3)
    alpha, eta = 0.3, 0.2
    for _ in range(600):
        D_new, T_new, _ = cvb0_sweep(X, D, T, alpha, eta, n_inner=30)
        change = np.abs(D_new - D).max()
        D, T = D_new, T_new
        if change < 1e-12:
            break
    g = _dense_shares(X, D, T, alpha, eta, 30)
    Xd = X.toarray()
    counts = Xd[:, :, None] * g
    assert_allclose(counts.sum(axis=1), D, atol=1e-9)
    own = np.minimum(Xd, 1)[:, :, None] * g
    m = X.shape[1]
    rhs = (
        (D[:, None, :] - own + alpha)
        * (T.T[None] - own + eta)
        / (T.sum(axis=1) - own + m * eta)
    )
    rhs /= rhs.sum(axis=2, keepdims=True)
    stored = Xd > 0
    assert_allclose(g[stored], rhs[stored], atol=1e-8)


def test_cvb0_runs_on_the_best_of_three_starts():
    from sklearn_topicfac import fit_callback

    X = lda_counts(k=4)
    runs = {}
    with fit_callback(lambda info: runs.setdefault(info.run, []).append(info)):
        est = LDAVI(4, inference="cvb0", max_iter=8, tol=0, split_merge=1)
        est.set_params(random_state=0).fit(X)
    # components_ = N_kw + eta: the expected counts sum to the tokens.
    eta = est.topic_word_prior_
    assert_allclose(est.components_.sum() - eta * est.components_.size, X.sum())
    # Three starts of max_iter sweeps; the one with the lowest objective
    # after them runs on to 3 * max_iter sweeps; no moves.
    assert sorted(runs) == ["fit", "start 1", "start 2", "start 3"]
    assert [len(runs[f"start {i}"]) for i in (1, 2, 3)] == [8, 8, 8]
    assert len(runs["fit"]) == 16 and est.n_iter_ == 24
    assert est.split_merge_moves_ == []
    starts = [[info.objective for info in runs[f"start {i}"]] for i in (1, 2, 3)]
    kept = [i for i, h in enumerate(starts) if np.allclose(h, est.loss_history_[:8])]
    assert len(kept) == 1
    assert est.loss_history_[8] == pytest.approx(runs["fit"][0].objective)
    theta = est.transform(X)
    assert_allclose(theta.sum(axis=1), 1.0)


def test_cvb0_starts_are_not_judged_before_min_iter_sweeps():
    # A start's first sweeps can sit on a plateau (the whole 20 Newsgroups,
    # docs/lda_defaults.md): the stopping rule is first consulted after
    # CVB0Model.min_iter sweeps, so even a tol that any change meets ends
    # each start there, and not before.
    from sklearn_topicfac import fit_callback
    from sklearn_topicfac.models import CVB0Model

    X = lda_counts(k=4)
    runs = {}
    with fit_callback(lambda info: runs.setdefault(info.run, []).append(info)):
        LDAVI(4, inference="cvb0", tol=10.0, random_state=0).fit(X)
    assert CVB0Model.min_iter == 10
    assert [len(runs[f"start {i}"]) for i in (1, 2, 3)] == [10, 10, 10]


def _same_protocol_perplexity(phi, X_observed, X_held):
    phi = normalize_rows(np.maximum(phi, 1e-12))[0]
    Xo = X_observed.toarray()
    theta = np.full((Xo.shape[0], phi.shape[0]), 1.0 / phi.shape[0])
    for _ in range(100):
        theta = normalize_rows(theta * ((Xo / (theta @ phi)) @ phi.T))[0]
    p = 0.999 * (theta @ phi) + 0.001 / phi.shape[1]
    Xh = X_held.toarray()
    return float(np.exp(-np.sum(Xh * np.log(p)) / Xh.sum()))


@pytest.mark.slow
def test_cvb0_beats_vb_on_held_out_words_with_a_rare_vocabulary():
    # Many terms seen once or twice: VB's exp(psi(n + eta)) shrinks their
    # counts by about half a token and charges them on held-out text.
    rng = np.random.default_rng(0)
    k, m = 4, 2000
    beta = rng.dirichlet(np.full(m, 0.05), size=k)
    theta = rng.dirichlet(np.full(k, 0.2), size=300)
    X = sp.csr_matrix(rng.poisson(40 * theta @ beta).astype(float))
    train, test = X[:240], X[240:]
    held = sp.csr_matrix(rng.binomial(test.toarray().astype(int), 0.5).astype(float))
    observed = sp.csr_matrix(test.toarray() - held.toarray())
    scores = {}
    for inference in ("vb", "cvb0"):
        est = LDAVI(k, inference=inference, split_merge=0, random_state=0)
        est.set_params(max_iter=200).fit(train)
        scores[inference] = _same_protocol_perplexity(
            est.topic_word_distributions(), observed, held
        )
    assert scores["cvb0"] < 0.98 * scores["vb"], scores


@pytest.mark.parametrize("sparse", [True, False])
def test_float32_through_and_sparse_equals_dense(backend, sparse):
    X = lda_counts(n=60, k=3)
    X32 = X.astype(np.float32)
    est = LDAVI(3, inference="cvb0", max_iter=10, tol=0, random_state=0)
    est64 = LDAVI(3, inference="cvb0", max_iter=10, tol=0, random_state=0).fit(X)
    data = X32 if sparse else X32.toarray()
    est.fit(data)
    assert est.components_.dtype == np.float32
    assert est.transform(data).dtype == np.float32
    assert_allclose(est.components_, est64.components_, rtol=2e-3, atol=1e-3)
    dense = LDAVI(3, inference="cvb0", max_iter=10, tol=0, random_state=0)
    dense.fit(X.toarray())
    assert_allclose(dense.components_, est64.components_, rtol=1e-10)


def test_cvb0_bad_combinations_are_clear_errors():
    X = lda_counts(k=3)
    with pytest.raises(ValueError, match="topic_word_prior='auto'"):
        LDAVI(3, inference="cvb0", topic_word_prior=None).fit(X)
    with pytest.raises(ValueError, match="learning_method='batch'"):
        LDAVI(3, inference="cvb0", learning_method="online").fit(X)
    # "auto" runs the mean-field VB where CVB0 does not run.
    for params in ({"learning_method": "online"}, {"topic_word_prior": None}):
        auto = LDAVI(3, inference="auto", max_iter=3, random_state=0, **params)
        auto.fit(X)
        vb = LDAVI(3, max_iter=3, random_state=0, inference="vb", **params).fit(X)
        assert_allclose(auto.components_, vb.components_)


def test_blocks_fit_equals_in_memory_fit():
    from sklearn_topicfac.out_of_core import Blocks

    X = lda_counts(n=120, m=40, k=3)
    kw = dict(inference="cvb0", max_iter=10, tol=0, split_merge=1, random_state=0)
    memory = LDAVI(3, **kw).fit(X)
    blocks = LDAVI(3, **kw).fit(Blocks(X, block_size=50))
    assert_allclose(blocks.components_, memory.components_, rtol=1e-8)
    assert_allclose(blocks.embedding_, memory.embedding_, rtol=1e-8, atol=1e-12)


def test_default_first_start_is_nndsvda_then_random_draws():
    from sklearn_topicfac import fit_callback

    # init=None: the first of the three starts is the NNDSVDa one (as VB's),
    # the other two random draws; init="random": all three are draws (the
    # SVD's own draws advance the generator, so the later draws differ).
    X = lda_counts(k=4)

    def starts(**params):
        runs = {}
        with fit_callback(lambda i: runs.setdefault(i.run, []).append(i.objective)):
            LDAVI(4, max_iter=5, tol=0, random_state=0, **params).fit(X)
        return [runs[f"start {i}"] for i in (1, 2, 3)]

    default, nndsvda, random = starts(), starts(init="nndsvda"), starts(init="random")
    assert_allclose(default, nndsvda)
    assert not np.allclose(default[0], random[0], rtol=1e-3)
