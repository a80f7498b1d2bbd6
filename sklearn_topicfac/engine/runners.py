"""Runners: where the per-block work of an iteration is done.

An iteration of every model is a map-reduce over row blocks: each block's
``doc_step`` (new document factor, statistics summed over its documents),
then one ``topic_step`` from the statistics summed over all blocks.  A runner
holds the blocks' document factors (their *states*) and runs the map and
the reduce; the fit loop (`engine.fit`) is the same for all of them:

- `LocalRunner`: the blocks are read one at a time from a re-readable
  source (`InMemory`, one block kept; `Blocks`, read once per pass); only
  the document factor (``n_samples x k``) stays in memory;
- `engine.dask.DaskRunner`: the blocks and their document factors stay on
  the workers of a ``dask.distributed`` cluster.

The functions below (``*_task``) are what runs per block, wherever the
block is.  A runner also offers the passes a start needs (the sum of X, the
products of X with dense matrices of a randomized SVD) and the gathering of
per-block results that split-merge moves need.
"""

import operator

import numpy as np

from ..kernels import flush_subnormal
from .online import online_task
from .sources import InMemory


# ------------------------------------------------------ tasks run per block
def start_task(model, block, H_raw, spec):
    """The start of one block's document factor, in the block's sorted order.

    ``spec`` is ``("custom", W_rows)`` or ``("draw", rng_state, scale)``:
    the generator state at the block's first row, so that a start drawn
    block by block (`TopicModel.draw_documents`) equals the in-memory start
    drawn at once (and a lost block's start can be drawn again).
    """
    if spec[0] == "custom":
        W = spec[1]
    else:
        _, rng_state, scale = spec
        rng = np.random.RandomState()
        rng.set_state(rng_state)
        W = model.draw_documents(rng, block.X.shape[0], H_raw.shape[0], scale)
        W = W.astype(block.X.dtype, copy=False)
    W = block.sort(W)
    return model.prepare_start(W, H_raw)[0]


def doc_task(model, block, W, H, scale, warm):
    """One block's document step: ``(new W, statistics)``."""
    if scale is not None:
        W = W * scale[None, :].astype(W.dtype, copy=False)
    W_new, stats = model.doc_step(block.X, W, H, warm)
    # As the topics (`iterations.run`): subnormal entries slow every pass.
    return flush_subnormal(W_new), stats


def check_task(model, block, W, H, check):
    """One block's sums for a `models.Check` (its ``W`` left as it is)."""
    return model.check_step(block.X, W, H, check)


def finish_task(model, block, W, H, scale):
    """The last pass over a block: its objective and its final W (sorted order)."""
    if scale is not None:
        W = W * scale[None, :].astype(W.dtype, copy=False)
    return {"loss": model.doc_loss(block.X, W, H)}, W


def map_task(model, block, W, H_raw):
    """A block's document factor mapped by ``model.prepare_start`` (phase switch)."""
    return model.prepare_start(W, H_raw)[0]


def responsibilities_task(model, block, W, H):
    """A block's `LDAModel.responsibilities`, for the split-merge moves."""
    return model.responsibilities(block.X, W, H)


def entries_task(model, block, responsibilities, t):
    """Topic ``t``'s entries in a block, with the rows numbered in the corpus."""
    rows, columns, counts = model.topic_entries(block.X, responsibilities, t)
    if block.order is not None:
        rows = block.order[rows]
    return rows + block.start, columns, counts


def sum_stats(*parts):
    """Add up statistics dicts (arrays and floats, key by key)."""
    total = dict(parts[0])
    # A sum past the float range is inf, as the whole-data sum would be (a
    # diagonal Newton curvature where the model is tiny: its proposal then
    # falls back); no warning for it.
    with np.errstate(over="ignore"):
        for part in parts[1:]:
            for key, value in part.items():
                total[key] = total[key] + value
    return total


class TreeSum:
    """Parts added up in one fixed tree over their index, fed one at a time.

    Part ``i`` of ``n`` always meets the same partners in the same order:
    pairs ``(0, 1), (2, 3), ...``, then pairs of those pairs, and so on, the
    parts left over added from the right at the end.  Floating-point
    addition is not associative, so this is what makes a sum over row
    blocks the same bits in one process and on a cluster, where ``add``
    submits the pair's sum as a task (any worker may run it, the tree stays
    the same).  Holds at most ``log2(n)`` partial sums.
    """

    def __init__(self, add):
        self.add = add
        self.stack = []

    def push(self, part):
        level = 0
        while self.stack and self.stack[-1][0] == level:
            part = self.add(self.stack.pop()[1], part)
            level += 1
        self.stack.append((level, part))

    def result(self):
        if not self.stack:
            raise ValueError("TreeSum of no parts")
        total = self.stack.pop()[1]
        while self.stack:
            total = self.add(self.stack.pop()[1], total)
        return total


def tree_sum(parts, add=operator.add):
    """The sum of ``parts`` in `TreeSum`'s fixed tree."""
    tree = TreeSum(add)
    for part in parts:
        tree.push(part)
    return tree.result()


def stats_nbytes(stats):
    return sum(getattr(v, "nbytes", 8) for v in stats.values())


# ------------------------------------------------------------------ runners
class LocalRunner:
    """Blocks read one at a time in this process; ``W`` per block in memory.

    ``source`` is `InMemory` or `Blocks`: read once per iteration (plus
    once for the start and once at the end), never held whole unless it is
    in memory already.
    """

    def __init__(self, source):
        self.source = source
        self.shape = source.shape
        self.dtype = source.dtype
        self.sizes = source.sizes
        self.states = None

    def describe(self):
        return f"{len(self.sizes)} blocks, out-of-core"

    def _blocks(self):
        return self.source.prepared_blocks()

    # ----------------------------------------------------------- starts
    def total(self):
        """The sum of X."""
        return tree_sum(block.total for block in self._blocks())

    def row_product(self, Q):
        """``X @ Q`` (rows in input order)."""
        return np.concatenate([block.unsort(block.X @ Q) for block in self._blocks()])

    def col_product(self, Y):
        """``X.T @ Y``, summed over the blocks."""
        return tree_sum(
            block.X.T @ block.sort(Y[block.start : block.stop])
            for block in self._blocks()
        )

    def matrix(self):
        """The whole of X, for starts that need it at once (K-means)."""
        raise ValueError(
            "init='kmeans' needs the whole matrix at once; a block-wise fit "
            "(out-of-core or on Dask) supports init='random', 'nndsvda' or "
            "'custom'."
        )

    def start(self, model, specs, H_raw):
        self.states = [
            start_task(model, block, H_raw, spec)
            for block, spec in zip(self._blocks(), specs, strict=True)
        ]

    # ------------------------------------------------------- iterations
    def step(self, model, H, scale, warm):
        """Every block's document step; the statistics summed over blocks."""
        total = TreeSum(sum_stats)
        for i, block in enumerate(self._blocks()):
            W = self.states[i]
            self.states[i], stats = doc_task(model, block, W, H, scale, warm)
            total.push(stats)
        return total.result()

    def check(self, model, H, check):
        """Every block's `check_task`, summed over blocks."""
        return tree_sum(
            (
                check_task(model, block, W, H, check)
                for block, W in zip(self._blocks(), self.states, strict=True)
            ),
            sum_stats,
        )

    def online_epoch(self, model, carry, schedule, n_total):
        """One online epoch, block after block (`online.online_task`).

        ``carry`` is ``(H, state, t, loss, fresh)``; returns it after the
        last block.
        """
        for i, block in enumerate(self._blocks()):
            self.states[i], carry = online_task(
                model, block, self.states[i], carry, schedule, n_total
            )
        return carry

    def finish(self, model, H, scale):
        """The last pass: the objective of the state (the states scaled)."""
        parts, self.states = zip(
            *(
                finish_task(model, block, W, H, scale)
                for block, W in zip(self._blocks(), self.states, strict=True)
            ),
            strict=True,
        )
        self.states = list(self.states)
        return tree_sum(parts, sum_stats)

    def map_states(self, model, H_raw):
        """Map every block's ``W`` by ``model.prepare_start(W, H_raw)``."""
        self.states = [
            map_task(model, block, W, H_raw)
            for block, W in zip(self._blocks(), self.states, strict=True)
        ]

    def snapshot(self):
        """The blocks' document factors (never modified in place: a list copy)."""
        return list(self.states)

    def restore(self, snapshot):
        self.states = list(snapshot)

    # Whether the blocks' responsibilities are kept across the topics of a
    # move (in memory: nnz numbers, as X) or computed again per topic (one
    # block in memory at a time, out-of-core).
    keeps_responsibilities = False

    def topic_entries(self, model, H, topics):
        """Per topic of ``topics``: ``(t, its entries in every block)``.

        See `LDAModel.topic_entries`; the rows are numbered in the corpus.
        """
        kept = None
        if self.keeps_responsibilities:
            kept = [
                responsibilities_task(model, block, W, H)
                for block, W in zip(self._blocks(), self.states, strict=True)
            ]
        for t in topics:
            pieces = []
            for i, (block, W) in enumerate(
                zip(self._blocks(), self.states, strict=True)
            ):
                r = kept[i] if kept else responsibilities_task(model, block, W, H)
                pieces.append(entries_task(model, block, r, t))
            yield t, pieces

    def rows(self):
        """The final document factor, in input order."""
        blocks = self._blocks()
        return np.concatenate(
            [block.unsort(W) for block, W in zip(blocks, self.states, strict=True)]
        )

    def close(self):
        self.states = None


class InMemoryRunner(LocalRunner):
    """One validated in-memory matrix: the products of a start on X itself.

    The products are those scikit-learn's ``randomized_svd`` makes on the
    whole matrix, so the SVD start is scikit-learn's to the last bit.
    """

    def __init__(self, X):
        super().__init__(InMemory(X))
        self.X = X

    # The progress lines of an in-memory fit say nothing about where it runs.
    describe = None
    keeps_responsibilities = True

    def row_product(self, Q):
        return self.X @ Q

    def col_product(self, Y):
        return self.X.T @ Y

    def matrix(self):
        return self.X
