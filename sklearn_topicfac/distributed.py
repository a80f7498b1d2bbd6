"""Fitting on a Dask cluster: a map-reduce of per-document statistics.

Pass a dask array, chunked by rows only (chunks may be NumPy or SciPy
sparse), to ``fit`` while a ``dask.distributed`` client is active::

    from dask.distributed import Client, LocalCluster
    client = Client(LocalCluster(n_workers=4))
    X = dask.array.from_array(X_csr, chunks=(10_000, -1), asarray=False)
    model = PLSI(n_components=50).fit(X)        # runs on the cluster

Each row block is validated and kept on a worker together with its own
document factor.  One iteration sends the topics (``k x n_features``) to
every worker, runs each block's document step where the block lives, sums
the blocks' topic statistics on each worker, and brings one sum per worker
back to the client, which updates the topics.  Communication per iteration
is therefore ``O(k x n_features)`` per worker, independent of the number of
documents.  The iterations are those of the in-memory fit: from the same
start the result is the same up to rounding (tested, rtol 1e-6 in float64).

Surviving the loss of a worker: a block's data is recomputed from the dask
array's graph, and a block's document factor is either replicated (every
``checkpoint_every`` iterations the factors are copied to a second worker)
or recomputed from the last replicated one by replaying the document steps
since then (the topics of those iterations are kept on every worker until
the next checkpoint).  A fit that loses a worker finishes with the result
of an undisturbed one (tested by killing a worker process mid-fit).

Without an active client, a dask array is fitted out-of-core in this
process, one block at a time (see `sklearn_topicfac.out_of_core`).  Dask
is an optional dependency: ``pip install "sklearn-topicfac[distributed]"``.

With ``init=None`` a block-wise fit starts from ``init="random"``: the SVD
start needs the whole matrix.  The random start is drawn as the in-memory
one is, so ``fit(X_dask)`` equals ``fit(X_dask.compute())`` with
``init="random"`` and the same ``random_state``.
"""

import copy
from operator import attrgetter, getitem

import numpy as np

from ._blockwise import (
    _LocalRunner,
    doc_task,
    finish_task,
    fit_blockwise,
    prepare_block,
    start_state,
    stats_nbytes,
    sum_stats,
)
from .out_of_core import Blocks

__all__ = ["fit_dask"]

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


def _active_client():
    try:
        from distributed import get_client
    except ImportError:
        return None
    try:
        return get_client()
    except ValueError:
        return None


def runner_for(X, client=None, checkpoint_every=10, callback=None):
    """The runner for a dask array: on the cluster, or out-of-core here."""
    _check_dask_array(X)
    client = client or _active_client()
    if client is None:
        blocks = X.to_delayed().ravel()
        # No cluster: the blocks are computed one at a time, here.
        return _LocalRunner(Blocks(lambda: (b.compute() for b in blocks)))
    return _DaskRunner(X, client, checkpoint_every, callback)


def fit_dask(
    estimator, X, *, client=None, checkpoint_every=10, W=None, H=None, callback=None
):
    """Fit ``estimator`` on the dask array ``X`` on a ``dask.distributed`` cluster.

    ``estimator.fit(X)`` does the same with the active client and the
    defaults; this function exposes the options.

    Parameters
    ----------
    estimator : KLNMF, NormalizedNMF, PLSI, JointNMF, LDAVI or GammaPoissonVI
        The (unfitted) estimator; it is fitted in place.
    X : dask.array.Array of shape (n_samples, n_features)
        Non-negative counts, chunked by rows only.
    client : distributed.Client, default=None
        The client to run on; by default the active one.
    checkpoint_every : int, default=10
        Iterations between copies of the document factors to a second
        worker.  After losing a worker, the fit replays at most this many
        document steps for the lost blocks.  Each copy moves
        ``n_samples x n_components`` numbers between workers.
    W, H : array-like, default=None
        Custom start (with ``init="custom"``), as for ``fit``.
    callback : callable, default=None
        Called as ``callback(iteration, objective)`` after every iteration.

    Returns
    -------
    estimator : object
        The fitted estimator.  Besides the usual attributes it has
        ``n_bytes_per_iteration_``: the bytes of topics and statistics moved
        between the client and the workers in each iteration (the payloads'
        sizes).
    """
    if not isinstance(checkpoint_every, int) or checkpoint_every < 1:
        raise ValueError(
            f"checkpoint_every must be a positive integer, got {checkpoint_every}."
        )
    estimator._validate_params()
    if client is None:
        client = _active_client()
        if client is None:
            raise ValueError(
                "fit_dask needs a dask.distributed client: create one first, "
                "e.g. Client(LocalCluster()), or pass client=."
            )
    runner = runner_for(X, client, checkpoint_every, callback)
    return fit_blockwise(estimator, runner, W=W, H=H)


def transform_dask_array(estimator, X):
    """``estimator.transform`` block by block: a lazy dask array."""
    _check_dask_array(X)
    k = estimator.components_.shape[0]
    dtype = np.float32 if X.dtype == np.float32 else np.float64
    return X.map_blocks(
        estimator.transform,
        dtype=dtype,
        chunks=(X.chunks[0], (k,)),
        meta=np.empty((0, 0), dtype=dtype),
    )


class _DaskRunner:
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
        bounds = np.concatenate([[0], np.cumsum(self.sizes)]).tolist()
        raw = client.compute(list(X.to_delayed().ravel()))
        m = self.shape[1]
        self.blocks = [
            client.submit(prepare_block, r, self.dtype, m, a, b, i)
            for i, (r, a, b) in enumerate(
                zip(raw, bounds[:-1], bounds[1:], strict=True)
            )
        ]
        # Only the prepared blocks are kept: the raw ones are released (a lost
        # prepared block is recomputed from the dask array's graph).
        del raw

    def describe(self):
        return f"{len(self.sizes)} blocks on {len(self._workers())} workers"

    def _workers(self):
        return list(self.client.nthreads())

    def _by_worker(self, futures):
        """Futures grouped by the worker holding their block."""
        where = self.client.who_has(self.blocks)
        groups = {}
        for block, future in zip(self.blocks, futures, strict=True):
            holders = where.get(block.key) or ("any",)
            groups.setdefault(holders[0], []).append(future)
        return groups

    def _reduce(self, futures):
        """Sum statistics on each worker, then the workers' sums here."""
        partials = []
        for worker, group in self._by_worker(futures).items():
            # Where the blocks are, if that worker is still there.
            kwargs = {}
            if worker != "any":
                kwargs = {"workers": [worker], "allow_other_workers": True}
            partials.append(self.client.submit(sum_stats, *group, pure=False, **kwargs))
        parts = self.client.gather(partials)
        return sum_stats(*parts), parts

    def total(self):
        totals = [self.client.submit(attrgetter("total"), b) for b in self.blocks]
        return float(sum(self.client.gather(totals)))

    def _put(self, A):
        """``A`` on the cluster as the result of a task, not scattered data.

        A task that holds ``A`` as its argument can be rerun, so the topics
        survive the loss of the workers that held them (scattered data
        cannot be recomputed, and a broadcast scatter can wait forever on a
        worker that just died).  The workers fetch it from each other.
        """
        return self.client.submit(_same, A, pure=False)

    def start(self, est, specs, H_raw):
        H_f = self._put(H_raw)
        self.states = [
            self.client.submit(start_state, est, b, H_f, spec, pure=False)
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
        for est, H, scale in self._log:
            results = self._doc_steps(est, H, scale, states)
            states = [client.submit(getitem, r, 0) for r in results]
        self.states = states

    def _doc_steps(self, est, H, scale, states):
        """Submit every block's document step: futures of ``(W, stats)``."""
        H_f = self._put(H)
        return [
            self.client.submit(doc_task, est, b, W, H_f, scale, pure=False)
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

    def step(self, est, H, scale):
        client = self.client

        def run():
            results = self._doc_steps(est, H, scale, self.states)
            stats = [client.submit(getitem, r, 1) for r in results]
            total, parts = self._reduce(stats)
            return total, parts, [client.submit(getitem, r, 0) for r in results]

        total, parts, self.states = self._recovering(run)
        # A copy: the estimator's counters (LDAVI's n_batch_iter_) move on.
        self._log.append((copy.copy(est), H, scale))
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

    def finish(self, est, H, scale):
        """The last pass: the final objective; ``rows`` = final W in input order.

        The final document factors come to the client once, for the fitted
        row-wise attributes (``embedding_``...).
        """
        client = self.client

        def run():
            H_f = self._put(H)
            results = [
                client.submit(finish_task, est, b, W, H_f, scale, pure=False)
                for b, W in zip(self.blocks, self.states, strict=True)
            ]
            total, _ = self._reduce([client.submit(getitem, r, 0) for r in results])
            return total, client.gather([client.submit(getitem, r, 1) for r in results])

        total, self.rows = self._recovering(run)
        return total

    def close(self):
        # Dropping the futures releases their data on the workers (cancelling
        # futures that share keys trips an assertion in the scheduler).
        self.states = self.blocks = self._saved = self._log = None


def _same(A):
    return A
