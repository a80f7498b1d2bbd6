"""Restarts, split-merge moves and the stopping rule, for every estimator.

- the moves repair EM's typical local optimum (two true topics merged in
  one, another split in two) for the NMF/PLSI family and the hybrid, as
  ``test_lda.py`` shows for LDA;
- ``random_state`` changes the result wherever a start is random;
- the stopping rule stops converged fits only: a default fit ends within
  0.1 % of the objective that 10 times more iterations reach, and a slow
  crawl is not taken for convergence.
"""

import warnings

import numpy as np
import pytest
from _corpora import planted_counts, planted_local_optimum
from numpy.testing import assert_allclose, assert_array_equal
from scipy.optimize import linear_sum_assignment
from scipy.special import xlogy
from sklearn.exceptions import ConvergenceWarning

from sklearn_topicfac import (
    KLNMF,
    PLSI,
    HybridNMFPLSI,
    JointNMF,
    NormalizedNMF,
    fit_callback,
)
from sklearn_topicfac.engine.loop import iteration_loop, stopped

NMF_FAMILY = [KLNMF, NormalizedNMF, PLSI, JointNMF, HybridNMFPLSI]


def _planted_local_optimum():
    """`planted_local_optimum` with normalized topics and an even W start."""
    corpus, phi, H0 = planted_local_optimum()
    H0 = H0 / H0.sum(axis=1, keepdims=True)
    n_d = np.asarray(corpus.sum(axis=1)).ravel()
    W0 = np.repeat(n_d[:, None] / 5, 5, axis=1)
    return corpus, phi, W0, H0


def _distances(est, phi):
    """Total-variation distance of each true topic to its matched fitted one."""
    P = est.topic_word_distributions()
    D = 0.5 * np.abs(P[:, None, :] - phi[None, :, :]).sum(axis=-1)
    rows, cols = linear_sum_assignment(D)
    return D[rows, cols][np.argsort(cols)]


# The multiplicative and EM updates stay in the planted optimum; coordinate
# descent (the default with numba) of KLNMF, NormalizedNMF and PLSI (and
# the hybrid's) leaves it on its own (test below).
ONE_PASS = {
    KLNMF: {"solver": "mu"},
    NormalizedNMF: {"solver": "mu"},
    PLSI: {"solver": "em"},
    HybridNMFPLSI: {"nmf_solver": "mu", "plsi_solver": "em"},
}


@pytest.mark.parametrize("Estimator", NMF_FAMILY, ids=lambda cls: cls.__name__)
def test_split_merge_repairs_a_planted_local_optimum(Estimator):
    corpus, phi, W0, H0 = _planted_local_optimum()
    params = dict(init="custom", random_state=0, **ONE_PASS.get(Estimator, {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        stuck = Estimator(5, split_merge=0, **params)
        stuck.fit(corpus, W=W0, H=H0)
        moved = Estimator(5, split_merge=3, **params)
        moved.fit(corpus, W=W0, H=H0)
    assert stuck.split_merge_moves_ == []
    assert _distances(stuck, phi)[0] > 0.5  # topics 0 and 1 stay merged
    assert (_distances(moved, phi) < 0.05).all()
    first = moved.split_merge_moves_[0]
    assert set(first["merged"]) == {1, 2} and first["split"] == 0
    assert first["accepted"]
    assert first["objective_after"] < first["objective_before"]
    assert moved.loss_ < stuck.loss_
    # One history from the start, never rising: the fit kept ran on after
    # the moves, a kept move is one step of it (to where its trial ended),
    # and the trials' own iterations are the moves' (scikit-learn reads
    # loss_history_[0] as the start's objective; so does the doc).
    assert len(moved.loss_history_) == moved.n_iter_ + 1
    history = moved.loss_history_
    assert np.all(np.diff(history) <= 1e-9 * history[0])
    assert history[0] == stuck.loss_history_[0]
    if Estimator is KLNMF:
        Y = W0 @ H0
        X = corpus.toarray() if hasattr(corpus, "toarray") else corpus
        start = np.sum(xlogy(X, X / Y)) - X.sum() + Y.sum()
        assert_allclose(history[0], start, rtol=1e-12)
    assert history[-1] == moved.loss_
    for move in moved.split_merge_moves_:
        assert move["history"][-1] == move["objective_after"]
    kept = [move for move in moved.split_merge_moves_ if move["accepted"]]
    assert all(move["objective_after"] in history for move in kept[:-1])


@pytest.mark.parametrize("Estimator", list(ONE_PASS), ids=lambda cls: cls.__name__)
def test_coordinate_descent_leaves_the_planted_local_optimum_without_moves(
    Estimator,
):
    # From the start where the multiplicative and EM updates stay with two
    # true topics merged (test above), the default solver's Newton steps
    # separate them: every true topic is recovered, no move made.
    corpus, phi, W0, H0 = _planted_local_optimum()
    cd = {key: "cd" for key in ONE_PASS[Estimator]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = Estimator(5, init="custom", split_merge=0, random_state=0, **cd)
        model.fit(corpus, W=W0, H=H0)
    assert model.split_merge_moves_ == []
    assert (_distances(model, phi) < 0.05).all()


@pytest.mark.parametrize("Estimator", NMF_FAMILY, ids=lambda cls: cls.__name__)
def test_random_state_changes_the_result_where_a_start_is_random(Estimator):
    X = planted_counts(n=80, m=40, k=4, seed=1)
    params = dict(n_components=4, max_iter=30, split_merge=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = Estimator(random_state=0, init="random", **params).fit(X)
        b = Estimator(random_state=1, init="random", **params).fit(X)
        assert not np.allclose(a.components_, b.components_)
        # n_init: the starts after init's are random draws of the seed (the
        # fit kept may still be init's own, when it is the best).
        runs = {}
        for seed in (0, 1):
            seen = runs[seed] = []
            with fit_callback(
                lambda info, seen=seen: (
                    seen.append(info.objective)
                    if info.run.startswith("start 2")
                    else None
                )
            ):
                best = Estimator(random_state=seed, n_init=3, **params).fit(X)
        assert runs[0] and runs[1] and runs[0][0] != runs[1][0]
        one = Estimator(random_state=1, **params).fit(X)
        assert best.loss_ <= one.loss_  # the first start is one's


@pytest.mark.parametrize("Estimator", NMF_FAMILY, ids=lambda cls: cls.__name__)
def test_a_default_fit_ends_within_0_1_percent_of_ten_times_more_iterations(
    Estimator,
):
    X = planted_counts(n=150, m=80, k=5, seed=3)
    est = Estimator(n_components=5, random_state=0, max_iter=2000).fit(X)
    assert est.n_iter_ < 2000  # it converged by the rule
    # The same fit continued for 10 times its iterations, moves off.
    n_d = np.asarray(X.sum(axis=1)).ravel()
    H = est.components_
    W = est.topic_proportions(X) * n_d[:, None] / H.sum(axis=1)[None, :]
    kw = dict(n_rounds=1) if Estimator is HybridNMFPLSI else {}
    longer = Estimator(
        n_components=5,
        init="custom",
        tol=0,
        max_iter=10 * est.n_iter_,
        split_merge=0,
        **kw,
    ).fit(X, W=W, H=H)
    assert est.loss_ - longer.loss_ <= 1e-3 * longer.loss_


def test_the_stopping_rule_extrapolates_over_the_iterations_run():
    # Geometric convergence: stops once the remaining decrease is small.
    geometric = [100 + 10 * 0.5**t for t in range(40)]
    t = next(t for t in range(1, 40) if stopped(geometric[: t + 1], 1e-4))
    assert 10 * 0.5**t <= 1e-4 * 100
    # A slow crawl L_t = 100 + 10 / (t + 1): each step gains ~10 / t^2, so a
    # rule on the last decrease alone (<= 1e-4 of the start's objective)
    # would stop at t ~ 30, 0.3 % above the limit; this one runs on until
    # the gain of as many iterations again is below 1e-4 of the objective.
    crawl = [100 + 10 / (t + 1) for t in range(5000)]
    t = next(t for t in range(1, 5000) if stopped(crawl[: t + 1], 1e-4))
    last_decrease_rule = next(
        t for t in range(1, 5000) if crawl[t - 1] - crawl[t] <= 1e-4 * crawl[0]
    )
    assert last_decrease_rule < 40
    assert (crawl[t] - crawl[min(10 * t, 4999)]) / crawl[t] <= 1e-3
    assert t > 500
    # A rise is never convergence; tol=0 never stops.
    assert not stopped([10.0, 5.0, 5.1], tol=1e-3)
    assert not stopped(geometric, tol=0)


def test_a_continued_run_is_judged_on_the_whole_fit():
    # Continuing a run (as after the moves) passes its history: the rule
    # sees every iteration, not only the new ones.
    crawl = [100 + 10 / (t + 1) for t in range(2000)]
    steps = iter(crawl[300:])
    history, n_iter, converged = iteration_loop(
        lambda: next(steps),
        lambda: 0.0,
        max_iter=1000,
        tol=1e-4,
        history=crawl[:300],
    )
    fresh = iter(crawl[300:])
    alone = iteration_loop(lambda: next(fresh), lambda: 0.0, max_iter=1000, tol=1e-4)
    assert alone[1] < n_iter  # alone, the crawl looks converged at once
    assert len(history) == 300 + n_iter + 1


def test_min_iter_defers_the_stopping_rule_and_nothing_else():
    # A plateau, then the real descent (CVB0 from a random start on a large
    # corpus): the rule alone stops on the plateau; with min_iter it is
    # first consulted at iteration min_iter, after the plateau.
    plateau = [200.0, 100.0, 99.999, 99.998] + [
        99.998 - (1 - 0.8**t) for t in range(1, 200)
    ]
    kwargs = {"max_iter": 150, "tol": 1e-4}
    _, early, converged = iteration_loop(iter(plateau).__next__, lambda: 0.0, **kwargs)
    assert converged and early <= 3
    history, n_iter, converged = iteration_loop(
        iter(plateau).__next__, lambda: 0.0, min_iter=10, **kwargs
    )
    assert converged and n_iter > 10
    assert history[n_iter - 1] < 99.0
    # With a rule that would stop later anyway, min_iter changes nothing.
    for min_iter in (1, 2):
        assert (
            iteration_loop(
                iter(plateau).__next__, lambda: 0.0, min_iter=min_iter, **kwargs
            )[1]
            == early
        )
    # max_iter still bounds the run.
    assert iteration_loop(
        iter(plateau).__next__, lambda: 0.0, min_iter=50, max_iter=20, tol=1e-4
    )[1:] == (20, False)


def test_a_non_finite_objective_ends_the_run_unconverged():
    values = iter([3.0, 2.0, float("nan"), 1.0])
    history, n_iter, converged = iteration_loop(
        lambda: next(values), lambda: float("nan"), max_iter=10, tol=1e-3
    )
    assert n_iter == 3 and not converged
    assert_allclose(history[:2], [3.0, 2.0])


def test_compact_counts_drops_empty_rows_and_columns_in_order():
    # The topic's entries of a move, renumbered by counting (no sort): the
    # same as np.unique's sorted labels and inverse, and the same matrix.
    from sklearn_topicfac.models._moves import compact_counts

    rng = np.random.default_rng(0)
    rows = rng.choice([3, 7, 7, 40, 41, 1000], size=300)
    columns = rng.choice([0, 2, 9, 9, 500], size=300)
    counts = rng.random(300)
    matrix, used_columns = compact_counts(rows, columns, counts)
    used_rows, r = np.unique(rows, return_inverse=True)
    expected_columns, c = np.unique(columns, return_inverse=True)
    expected = np.zeros((used_rows.size, expected_columns.size))
    np.add.at(expected, (r, c), counts)
    assert_array_equal(used_columns, expected_columns)
    assert_allclose(matrix.toarray(), expected, rtol=1e-12)
    empty, none = compact_counts(np.zeros(0, int), np.zeros(0, int), np.zeros(0))
    assert empty.shape == (0, 0) and none.size == 0
