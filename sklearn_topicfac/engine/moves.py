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

import numpy as np
from sklearn.utils import check_random_state

from ..models.klnmf import KLNMFModel
from ..models.lda import compact_counts, split_gain
from .iterations import Settings, run, start
from .loop import silent
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


def split_merge(model, runner, result, settings, rng):
    """Up to ``settings.moves`` moves from the fit ``result`` (a `fit.Run`).

    Returns the run kept, the number of topic steps the kept moves added,
    and the list of moves tried (dicts: ``"merged"``, ``"split"``,
    ``"bound_before"``, ``"bound_after"``, ``"accepted"``).
    """
    moves = []
    n_steps = 0
    for index in range(settings.moves):
        proposal = propose(model, runner, result.H, rng)
        if proposal is None:
            break
        H0, (kept, merged, split) = proposal
        before = runner.snapshot()
        trial = run(model, runner, H0, settings, warm=True, label=f"move {index + 1}")
        accepted = result.loss - trial.loss > resolution(result.history, settings.tol)
        moves.append(
            {
                "merged": (kept, merged),
                "split": split,
                "bound_before": -float(result.loss),
                "bound_after": -float(trial.loss),
                "accepted": bool(accepted),
            }
        )
        if settings.verbose:
            print(
                f"[{settings.name}] split-merge: merge topics {kept} and "
                f"{merged}, split topic {split} into {split} and {merged}: "
                f"bound {-result.loss:.6e} -> {-trial.loss:.6e} "
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
    and free).  **Merge** the pair ``model.merge_pair(H)``: the lighter
    topic's counts go to the heavier one, freeing its slot.  **Split** the
    other topic whose own counts are furthest from one topic
    (`split_gain`) in two by a rank-2 KL-NMF (`split_in_two`): one half
    replaces it, the other takes the freed slot.  Returns ``(H0, (kept,
    merged, split))``, or ``None`` with fewer than three topics.
    """
    k = H.shape[0]
    if k < 3 or runner.total() == 0:
        return None
    kept, merged = model.merge_pair(H)
    seed = rng.randint(np.iinfo(np.int32).max)
    best_gain, split, part = 0.0, None, None
    candidates = [t for t in range(k) if t not in (kept, merged)]
    for t, pieces in runner.topic_entries(model, H, candidates):
        rows, columns, counts = (
            np.concatenate(of_blocks) for of_blocks in zip(*pieces, strict=True)
        )
        topic_counts, used_columns = compact_counts(rows, columns, counts)
        gain = split_gain(topic_counts, seed)
        if gain > best_gain:
            best_gain, split, part = gain, t, (topic_counts, used_columns)
    if split is None:
        return None
    halves = split_in_two(part[0], seed)
    H0 = model.moved_topics(H, kept, merged, split, halves, part[1])
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
    H = start(model, runner, init, 2, random_state, rng)
    settings = Settings(max_iter=_SPLIT_ITERATIONS, tol=_SPLIT_TOL)
    with silent():
        result = run(model, runner, H, settings, warm=False)
    return runner.rows().sum(axis=0)[:, None] * result.H
