"""Split-merge moves: leave the local optimum of merged and split topics.

Batch variational EM (and EM in general) has a typical local optimum: two
true topics merged into one, another split in two, which no number of
iterations leaves.  A move merges the two topics that cost least to merge
and splits in two the topic whose share of the data is furthest from one
topic, runs the iterations again from there, and is kept if the objective
ends lower by more than the fit resolves; the first move undone ends the
moves.  A model that offers moves (``model.moves``) provides the
mathematics: ``merge_pair``, ``responsibilities``, ``topic_entries`` and
``moved_topics``.

The moves run on any runner: each candidate topic's counts are gathered
from the blocks one topic at a time (about ``1/k`` of X each; the
responsibilities they come from are computed once per move where the
blocks stay in memory, in memory or on the workers), and the
states of the runner are kept to undo a move.
"""

from dataclasses import replace

import numpy as np
from sklearn.utils import check_random_state

from ..kernels import one_blas_thread
from ..models._moves import cheapest_merge, compact_counts, split_gain
from ..models.klnmf import KLNMFModel
from .iterations import run, run_on, start
from .loop import silent
from .plan import Settings, Start
from .runners import InMemoryRunner
from .starts import resolve_init


def resolution(history, tol):
    """The smallest decrease of the objective a move must make to be kept.

    The fit stops once an iteration changes the objective by less than
    ``tol`` times its size, so where it ends is only known to about that
    much: float32 and float64 fits of the same data, or the same fit with a
    few more iterations, end that far apart.  A move that gains less is kept
    or undone by that noise -- and the same data in two dtypes ended with
    permuted topics.  So the gain must exceed ``tol`` times the objective
    before the move (``history[-1]``); with ``tol=0``, ``1e-6`` times it
    (the float32 resolution of the bound).
    """
    return max(tol, 1e-6) * abs(history[-1])


# A move's trial gets as many iterations as the run it may replace took, and
# at least this many, to end lower than that run; one that does is then run
# on to convergence (or ``max_iter``).
_MIN_TRIAL = 20


def split_merge(model, runner, result, settings, rng):
    """Up to ``settings.moves`` moves from the fit ``result`` (a `fit.Run`).

    A move's trial that has not ended lower than ``result`` within as many
    iterations as ``result`` took (at least ``_MIN_TRIAL``) is undone: a
    good move pays off quickly, and a poor one would otherwise crawl for
    ``max_iter`` iterations in its worse basin.

    Returns the run kept, the number of topic steps the kept moves added,
    and the list of moves tried (dicts: ``"merged"``, ``"split"``,
    ``"objective_before"``, ``"objective_after"``, ``"accepted"`` and
    ``"history"``, the objective at the moved topics and after every
    iteration of the trial).
    """
    moves = []
    n_steps = 0
    for index in range(settings.moves):
        # The proposal's linear algebra is many small LAPACK calls (the
        # randomized SVDs of each candidate topic, the rank-2 split): on one
        # BLAS thread.  With BLAS's own threads on a busy machine, the QR of
        # a 4659 x 12 block took 340 ms instead of 0.5 ms, and the proposals
        # 6x as long (threadpoolctl comes with scikit-learn).
        with one_blas_thread():
            proposal = propose(model, runner, result.H, rng)
        if proposal is None:
            break
        H0, (kept, merged, split) = proposal
        before = runner.snapshot()
        label = f"move {index + 1}"
        budget = min(settings.max_iter, max(_MIN_TRIAL, result.n_iter))
        trial = run(
            model,
            runner,
            H0,
            replace(settings, max_iter=budget),
            warm=True,
            label=label,
        )
        accepted = bool(
            np.isfinite(trial.loss)
            and result.loss - trial.loss > resolution(result.history, settings.tol)
        )
        if accepted and not trial.converged and budget < settings.max_iter:
            trial = run_on(model, runner, trial, settings, label)
        moves.append(
            {
                "merged": (kept, merged),
                "split": split,
                "objective_before": float(result.loss),
                "objective_after": float(trial.loss),
                "accepted": bool(accepted),
                "history": np.asarray(trial.history, dtype=np.float64),
            }
        )
        if settings.verbose:
            print(
                f"[{settings.name}] split-merge: merge topics {kept} and "
                f"{merged}, split topic {split} into {split} and {merged}: "
                f"objective {result.loss:.6e} -> {trial.loss:.6e} "
                f"({'kept' if accepted else 'undone'})"
            )
        if not accepted:
            runner.restore(before)
            break
        result = trial
        n_steps += trial.n_steps
    return result, n_steps, moves


def propose(model, runner, H, rng):
    """The topics of one split-merge move from the topics ``H``.

    The runner's states are the documents' last E-step (for the topics
    before the last M-step: close enough to tell the topics' counts apart,
    and free).  **Merge** the pair ``model.merge_pair(H)`` (or, for a model
    whose topics do not hold their counts, `cheapest_merge` of the topics'
    term counts gathered from the documents): the lighter topic's counts go
    to the heavier one, freeing its slot.  **Split** the other topic whose
    own counts are furthest from one topic (`split_gain`) in two by a
    rank-2 KL-NMF (`split_in_two`): one half replaces it, the other takes
    the freed slot.  Returns ``(H0, (kept, merged, split))``, or ``None``
    with fewer than three topics.
    """
    k, m = H.shape
    if k < 3 or runner.total() == 0:
        return None
    pair = model.merge_pair(H)
    seed = rng.randint(np.iinfo(np.int32).max)
    candidates = range(k) if pair is None else [t for t in range(k) if t not in pair]
    # Per topic: its term counts, its split gain; the parts of the three
    # best candidates are kept (the merge may exclude two of them).
    term_counts = np.zeros((k, m))
    gains, parts = {}, {}
    for t, pieces in runner.topic_entries(model, H, candidates):
        rows, columns, counts = (
            np.concatenate(of_blocks) for of_blocks in zip(*pieces, strict=True)
        )
        term_counts[t] = np.bincount(columns, counts, minlength=m)
        topic_counts, used_columns = compact_counts(rows, columns, counts)
        gains[t] = split_gain(topic_counts, seed)
        parts[t] = (topic_counts, used_columns)
        for dropped in sorted(parts, key=gains.get)[:-3]:
            del parts[dropped]
    kept, merged = cheapest_merge(term_counts) if pair is None else pair
    split = max(
        (t for t in parts if t not in (kept, merged) and gains[t] > 0),
        key=gains.get,
        default=None,
    )
    if split is None:
        return None
    halves = split_in_two(parts[split][0], seed)
    H0 = model.moved_topics(
        H, kept, merged, split, halves, parts[split][1], term_counts
    )
    return H0, (kept, merged, split)


# The rank-2 KL-NMF that splits a topic: few iterations suffice to separate
# two groups of documents.
_SPLIT_ITERATIONS = 20
_SPLIT_TOL = 1e-4


def split_in_two(counts, random_state):
    """Two topics' expected counts that add up to (about) ``counts``.

    A rank-2 KL-NMF of the counts from its NNDSVDa start: the halves are
    :math:`(\\sum_d W_{da}) H_a` for the two factors ``a``.
    """
    model = KLNMFModel()
    runner = InMemoryRunner(counts)
    init = resolve_init(None, "nndsvda", *counts.shape, 2)
    rng = check_random_state(random_state)
    H = start(model, runner, Start(init, 2, random_state, rng))
    settings = Settings(max_iter=_SPLIT_ITERATIONS, tol=_SPLIT_TOL)
    with silent():
        result = run(model, runner, H, settings, warm=False)
    return runner.rows().sum(axis=0)[:, None] * result.H
