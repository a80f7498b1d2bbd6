"""The runner on a Dask cluster: blocks and their document factors on the workers.

Each row chunk of the dask array is validated where it is read, and the
rows are cut into the corpus's canonical chunks (`sources.chunk_sizes`, at
most 256), each kept on a worker together with its own document factor.
One iteration sends the topics (``k x n_features``) to every worker, runs
each chunk's document step where the chunk lives, and adds the chunks'
topic statistics up on the workers in the fixed tree of `runners.TreeSum`
(the same additions in the same order as in one process, so the fit is the
same bits whatever the array's chunks or the workers' placement); the sum
comes back to the client, which updates the topics.  Consecutive chunks
live on the same worker, so a sum's tree moves about one partial sum per
worker and level (at most ``log2(256) = 8`` levels): communication per
iteration is ``O(k x n_features)`` per worker and level, independent of the
number of documents beyond 256 chunks.

Surviving the loss of a worker: a block's data is recomputed from the dask
array's graph, and a block's document factor is either replicated (every
``checkpoint_every`` iterations the factors are copied here) or recomputed
from the last copy by replaying the document steps since then (the topics
of those iterations are kept until the next checkpoint).

Dask is an optional dependency, imported only when a dask array is fitted.
"""

import operator
from operator import attrgetter, getitem

import numpy as np

from .._config import with_config
from .online import online_task
from .runners import (
    LocalRunner,
    check_task,
    doc_task,
    entries_task,
    finish_task,
    map_task,
    responsibilities_task,
    start_task,
    stats_nbytes,
    sum_stats,
    tree_sum,
)
from .sources import (
    Blocks,
    assemble_chunk,
    chunk_sizes,
    overlapping,
    unreadable_block,
    validate_block,
)

# A fit retries an iteration this many times after losing workers.
_MAX_RECOVERIES = 3
# Seconds to wait for a worker to be back before retrying.
_WORKER_TIMEOUT = 60


def _lost_worker_errors():
    from concurrent.futures import CancelledError

    from distributed.comm.core import CommClosedError
    from distributed.scheduler import KilledWorker

    return (CancelledError, KilledWorker, CommClosedError)


def _check_dask_array(X):
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (documents x terms), got {X.ndim}-D.")
    if X.numblocks[1] != 1:
        raise ValueError(
            f"X is chunked along the columns ({X.numblocks[1]} column chunks); a "
            "block-wise fit needs whole rows in each block: use "
            "X.rechunk({1: -1})."
        )
    if any(np.isnan(c) for c in X.chunks[0]):
        raise ValueError(
            "X has unknown chunk sizes; call X.compute_chunk_sizes() first."
        )


def active_client():
    try:
        from distributed import get_client
    except ImportError:
        return None
    try:
        return get_client()
    except ValueError:
        return None


class DaskData:
    """A dask array to fit, with the options of a fit on a cluster.

    What `sklearn_topicfac.distributed.fit_dask` passes to ``fit``; a plain
    dask array is fitted with the active client and the defaults.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
        Chunked by rows only.
    client : distributed.Client, default=None
        The client to run on; by default the active one (none: the blocks
        are fitted out-of-core in this process).
    checkpoint_every : int, default=10
        Iterations between copies of the document factors.
    callback : callable, default=None
        Called as ``callback(iteration, objective)`` after every iteration
        (``objective``: the documents' part of the objective).
    """

    def __init__(self, X, client=None, checkpoint_every=10, callback=None):
        self.X = X
        self.client = client
        self.checkpoint_every = checkpoint_every
        self.callback = callback


def runner_for(data):
    """The runner for a dask array (or `DaskData`): on the cluster, or here."""
    if not isinstance(data, DaskData):
        data = DaskData(data)
    X, checkpoint_every, callback = data.X, data.checkpoint_every, data.callback
    _check_dask_array(X)
    client = data.client or active_client()
    if client is None:
        # No cluster: the blocks are computed one at a time, here.
        return LocalRunner(Blocks(_ChunksHere(X)))
    return DaskRunner(X, client, checkpoint_every, callback)


class _ChunksHere:
    """The row blocks of a dask array, computed one at a time in this process."""

    def __init__(self, X):
        self.name = X.name
        self.blocks = X.to_delayed().ravel()

    def __call__(self):
        return (block.compute() for block in self.blocks)

    def __repr__(self):
        return f"the dask array {self.name!r}"


def _check_read(raw, prepared, sizes, name):
    """Raise a ``ValueError`` naming the first block whose reading failed.

    ``raw`` are the futures of the blocks as the dask array computes them
    (read from files, ...), ``prepared`` the futures of the prepared blocks
    made from them; an error in ``raw`` would otherwise reach the caller as
    the reader's own, naming no block.  Each raw block is let go as soon as
    its prepared block is made, as without the check.
    """
    from distributed import as_completed, wait

    starts = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    where = {future.key: index for index, future in enumerate(prepared)}
    for future in as_completed(prepared):
        index = where[future.key]
        if future.status == "error":
            wait(raw[index])
            if raw[index].status == "error":
                exc = raw[index].exception()
                source = f"the dask array {name!r}"
                raise unreadable_block(index, starts[index], source, exc) from exc
        raw[index] = None


def map_row_blocks(function, X, n_columns):
    """``function`` (e.g. a fitted ``transform``) on every row block: lazy."""
    _check_dask_array(X)
    dtype = np.float32 if X.dtype == np.float32 else np.float64
    # The workers run it with the configuration of the caller (the engine).
    return X.map_blocks(
        with_config(function),
        dtype=dtype,
        chunks=(X.chunks[0], (n_columns,)),
        meta=np.empty((0, 0), dtype=dtype),
    )


class DaskRunner:
    """Blocks and their document factors on the workers of a dask cluster."""

    def __init__(self, X, client, checkpoint_every, callback):
        self.client = client
        self.shape = tuple(int(s) for s in X.shape)
        self.sizes = [int(c) for c in X.chunks[0]]
        self.dtype = np.dtype(np.float32 if X.dtype == np.float32 else np.float64)
        self.checkpoint_every = checkpoint_every
        self.callback = callback
        self.iteration = 0
        self.n_recoveries = 0
        self.n_bytes = []
        # The dask array's row chunks are validated where they are read, then
        # cut into the corpus's canonical chunks (`sources.chunk_sizes`): the
        # blocks of the fit, the same whatever the array's chunks.
        read = [int(c) for c in X.chunks[0]]
        bounds = np.concatenate([[0], np.cumsum(read)]).tolist()
        raw = client.compute(list(X.to_delayed().ravel()))
        m = self.shape[1]
        valid = [
            client.submit(validate_block, r, self.dtype, m, a, b, i)
            for i, (r, a, b) in enumerate(
                zip(raw, bounds[:-1], bounds[1:], strict=True)
            )
        ]
        _check_read(raw, valid, read, X.name)
        self.sizes = chunk_sizes(self.shape[0])
        # Consecutive chunks on the same worker: the low levels of the sums'
        # tree (`_tree`) then add chunks held by one worker, and only about
        # one partial sum per worker and level crosses the network.
        workers = self._workers()
        self.homes = [
            workers[i * len(workers) // len(self.sizes)] for i in range(len(self.sizes))
        ]
        self.blocks = []
        for (start, stop), home in zip(_ranges(self.sizes), self.homes, strict=True):
            held = overlapping(start, stop, bounds)
            self.blocks.append(
                client.submit(
                    assemble_chunk,
                    start,
                    stop,
                    [bounds[i] for i in held],
                    *(valid[i] for i in held),
                    workers=[home],
                    allow_other_workers=True,
                )
            )
        # Only the chunks are kept: the raw and validated blocks are released
        # (a lost chunk is recomputed from the dask array's graph).
        del raw, valid

    def describe(self):
        return f"{len(self.sizes)} blocks on {len(self._workers())} workers"

    def _workers(self):
        return list(self.client.nthreads())

    def _tree(self, futures, add):
        """``futures`` (one per chunk) added up on the cluster in `TreeSum`'s
        fixed tree: the same sums in the same order as `LocalRunner`,
        wherever they run.  Each sum runs where its left part is; returns
        the total and how many parts crossed to another worker (or here).
        """
        moved = [1]  # the total, to the client

        def submit(a, b):
            (left, home), (right, other) = a, b
            moved[0] += home != other
            future = self.client.submit(
                add, left, right, pure=False, workers=[home], allow_other_workers=True
            )
            return future, home

        total = tree_sum(zip(futures, self.homes, strict=True), submit)[0]
        return self.client.gather(total), moved[0]

    def _reduce(self, futures):
        """The statistics summed over the chunks (`_tree`), and what the sums
        moved: one copy of the statistics per part that crossed workers."""
        total, moved = self._tree(futures, sum_stats)
        return total, [total] * moved

    def total(self):
        totals = [self.client.submit(attrgetter("total"), b) for b in self.blocks]
        return float(self._tree(totals, operator.add)[0])

    def _put(self, A):
        """``A`` on the cluster as the result of a task, not scattered data.

        A task that holds ``A`` as its argument can be rerun, so the topics
        survive the loss of the workers that held them (scattered data
        cannot be recomputed, and a broadcast scatter can wait forever on a
        worker that just died).  The workers fetch it from each other.
        """
        return self.client.submit(_same, A, pure=False)

    def row_product(self, Q):
        """``X @ Q`` (rows in input order): a product per block, gathered here."""
        Q_f = self._put(Q)
        parts = [
            self.client.submit(_row_product, b, Q_f, pure=False) for b in self.blocks
        ]
        return np.concatenate(self.client.gather(parts))

    def col_product(self, Y):
        """``X.T @ Y``: a product per block with its rows of ``Y``, summed."""
        parts = [
            self.client.submit(_col_product, b, Y[start:stop], pure=False)
            for b, (start, stop) in zip(self.blocks, _ranges(self.sizes), strict=True)
        ]
        return self._tree(parts, operator.add)[0]

    def matrix(self):
        return LocalRunner.matrix(self)

    def start(self, model, specs, H_raw):
        H_f = self._put(H_raw)
        self.states = [
            self.client.submit(with_config(start_task), model, b, H_f, spec, pure=False)
            for b, spec in zip(self.blocks, specs, strict=True)
        ]
        self._checkpoint()

    def _checkpoint(self):
        """Keep a copy of the document factors here; reset the replay log.

        The copy is what a lost block's factor is rebuilt from (then the
        document steps since are replayed with the logged topics).
        """
        self._saved = self._recovering(lambda: self.client.gather(self.states))
        self._log = []

    def _rebuild(self):
        """After losing a worker: factors from the checkpoint, steps replayed."""
        client = self.client
        self.n_recoveries += 1
        states = [self._put(W) for W in self._saved]
        for entry in self._log:
            if entry[0] == "step":
                results = self._doc_steps(*entry[1:], states)
                states = [client.submit(getitem, r, 0) for r in results]
            else:
                states = self._mapped(*entry[1:], states)
        self.states = states

    def _doc_steps(self, model, H, scale, warm, states):
        """Submit every block's document step: futures of ``(W, stats)``."""
        H_f = self._put(H)
        return [
            self.client.submit(
                with_config(doc_task), model, b, W, H_f, scale, warm, pure=False
            )
            for b, W in zip(self.blocks, states, strict=True)
        ]

    def _mapped(self, model, H_raw, states):
        H_f = self._put(H_raw)
        return [
            self.client.submit(with_config(map_task), model, b, W, H_f, pure=False)
            for b, W in zip(self.blocks, states, strict=True)
        ]

    def _recovering(self, run):
        """``run()``, rebuilding the factors and retrying if a worker was lost.

        Errors raised by the tasks themselves (bad data in a block, ...)
        are not retried: they reach the caller as they are.
        """
        for attempt in range(_MAX_RECOVERIES + 1):
            try:
                return run()
            except _lost_worker_errors():
                if attempt == _MAX_RECOVERIES:
                    raise
                self.client.wait_for_workers(1, timeout=_WORKER_TIMEOUT)
                self._rebuild()

    def step(self, model, H, scale, warm):
        client = self.client

        def run():
            results = self._doc_steps(model, H, scale, warm, self.states)
            stats = [client.submit(getitem, r, 1) for r in results]
            total, parts = self._reduce(stats)
            return total, parts, [client.submit(getitem, r, 0) for r in results]

        total, parts, self.states = self._recovering(run)
        self._log.append(("step", model, H, scale, warm))
        self.iteration += 1
        self.n_bytes.append(
            H.nbytes * len(self._workers())
            + (0 if scale is None else scale.nbytes * len(self.blocks))
            + sum(stats_nbytes(p) for p in parts)
        )
        if self.iteration % self.checkpoint_every == 0:
            self._checkpoint()
        if self.callback is not None:
            self.callback(self.iteration, float(total["loss"]))
        return total

    def check(self, model, H, check):
        """Every block's `check_task` where its block is, summed (a
        read-only pass: the factors do not change, so a lost worker only
        means rebuilding them and running the pass again)."""
        client = self.client

        def run():
            H_f, check_f = self._put(H), self._put(check)
            parts = [
                client.submit(
                    with_config(check_task), model, b, W, H_f, check_f, pure=False
                )
                for b, W in zip(self.blocks, self.states, strict=True)
            ]
            return self._reduce(parts)

        total, parts = self._recovering(run)
        # The proposal out to each worker, its sums back.
        self.n_bytes[-1] += stats_nbytes(check.__dict__) * len(self._workers()) + sum(
            stats_nbytes(p) for p in parts
        )
        return total

    def online_epoch(self, model, carry, schedule, n_total):
        """One online epoch: the blocks' tasks chained, each on its worker.

        The topics pass from block to block (a mini-batch's step needs the
        previous one's topics); a lost worker reruns the epoch from its
        start (the factors are checkpointed after every epoch).
        """
        client = self.client

        def run():
            passed = self._put(carry)
            states = []
            for b, W in zip(self.blocks, self.states, strict=True):
                result = client.submit(
                    with_config(online_task),
                    model,
                    b,
                    W,
                    passed,
                    schedule,
                    n_total,
                    pure=False,
                )
                states.append(client.submit(getitem, result, 0))
                passed = client.submit(getitem, result, 1)
            return states, client.gather(passed)

        self.states, carry = self._recovering(run)
        self._checkpoint()
        return carry

    def finish(self, model, H, scale):
        """The last pass: the objective of the state (the states scaled)."""
        client = self.client

        def run():
            H_f = self._put(H)
            results = [
                client.submit(
                    with_config(finish_task), model, b, W, H_f, scale, pure=False
                )
                for b, W in zip(self.blocks, self.states, strict=True)
            ]
            total, _ = self._reduce([client.submit(getitem, r, 0) for r in results])
            return total, [client.submit(getitem, r, 1) for r in results]

        total, self.states = self._recovering(run)
        self._checkpoint()
        return total

    def map_states(self, model, H_raw):
        self.states = self._recovering(lambda: self._mapped(model, H_raw, self.states))
        self._log.append(("map", model, H_raw))

    def snapshot(self):
        return list(self.states), self._saved, list(self._log)

    def restore(self, snapshot):
        states, self._saved, log = snapshot
        self.states, self._log = list(states), list(log)

    def topic_entries(self, model, H, topics):
        """Per topic: ``(t, its entries block by block)``, brought here.

        The blocks' responsibilities are computed once, on the workers.
        """
        H_f = self._put(H)
        kept = [
            self.client.submit(
                with_config(responsibilities_task), model, b, W, H_f, pure=False
            )
            for b, W in zip(self.blocks, self.states, strict=True)
        ]
        for t in topics:
            parts = [
                self.client.submit(
                    with_config(entries_task), model, b, r, t, pure=False
                )
                for b, r in zip(self.blocks, kept, strict=True)
            ]
            yield t, self._recovering(lambda parts=parts: self.client.gather(parts))

    def rows(self):
        """The final document factor, in input order: it comes here once."""
        parts = [
            self.client.submit(_unsorted, b, W, pure=False)
            for b, W in zip(self.blocks, self.states, strict=True)
        ]
        return np.concatenate(self._recovering(lambda: self.client.gather(parts)))

    def close(self):
        # Dropping the futures releases their data on the workers (cancelling
        # futures that share keys trips an assertion in the scheduler).
        self.states = self.blocks = self._saved = self._log = None


def _ranges(sizes):
    """``(first row, end)`` of consecutive blocks of ``sizes`` rows."""
    bounds = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def _row_product(block, Q):
    return block.unsort(block.X @ Q)


def _col_product(block, Y):
    return block.X.T @ block.sort(Y)


def _unsorted(block, W):
    return block.unsort(W)


def _same(A):
    return A
