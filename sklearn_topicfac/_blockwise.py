"""Fitting as a map-reduce over row blocks: out-of-core and on Dask.

Every estimator whose iteration is a sum over documents (KLNMF,
NormalizedNMF, PLSI, JointNMF, LDAVI in batch mode) splits an iteration into
``_doc_step`` (per block of rows: new document factor, statistics summed
over the block's documents) and ``_topic_step`` (from the statistics summed
over all blocks).  This module runs that loop with the blocks somewhere else
than in one in-memory matrix:

- `_LocalRunner`: the blocks are read one at a time from a re-readable source
  (`sklearn_topicfac.out_of_core.Blocks`, or the blocks of a dask array
  computed one by one when no distributed client is active); only the
  document factor ``W`` (``n_samples x k``) stays in memory;
- `sklearn_topicfac.distributed._DaskRunner`: the blocks and their document
  factors stay on the workers of a ``dask.distributed`` cluster.

`fit_blockwise` is the loop; a runner only moves blocks and statistics.  The
loop makes the same calls, in the same order, as the in-memory fit, so from
the same start it reaches the same factors up to the rounding of the sums
over blocks (tested, rtol 1e-6 in float64).
"""

import numpy as np
from sklearn.utils import check_array, check_random_state

from ._base import (
    _check_data_values,
    _check_factor,
    _check_start_arguments,
    _length_order,
    _random_scale,
    _to_csr,
    _unsort_rows,
)


class PreparedBlock:
    """One validated row block: CSR, rows sorted by length, and where it lies.

    ``order`` maps the sorted rows back (``None`` when already sorted); the
    document factor of a block is kept in the sorted order.
    """

    __slots__ = ("X", "order", "start", "stop")

    def __init__(self, X, order, start, stop):
        self.X = X
        self.order = order
        self.start = start
        self.stop = stop

    @property
    def total(self):
        """The sum of the block's entries (in float64)."""
        return float(np.sum(self.X.data, dtype=np.float64))

    def unsort(self, A):
        """Rows of ``A`` (in the block's sorted order) back in input order."""
        return _unsort_rows(A, self.order)

    def sort(self, A):
        """Rows of ``A`` (in input order) in the block's sorted order."""
        return A if self.order is None else A[self.order]


def prepare_block(X, dtype, n_features, start, stop, index):
    """Validate a raw block and make it a `PreparedBlock`.

    Raises a ``ValueError`` naming the block (its index and rows) for a
    block of the wrong shape, with negative values, NaN or infinity, or
    values adding up to more than can be fitted without overflow.
    """
    where = f"block {index} (rows {start} to {stop - 1})"
    try:
        X = check_array(X, accept_sparse=("csr", "csc", "coo"), dtype=dtype)
    except ValueError as exc:
        raise ValueError(f"Invalid data in {where}: {exc}") from exc
    if X.shape != (stop - start, n_features):
        raise ValueError(
            f"{where} has shape {X.shape}, expected ({stop - start}, {n_features}): "
            "every block must hold its rows with all the columns."
        )
    _check_data_values(X.data if hasattr(X, "tocsr") else X, where)
    X = _to_csr(X)
    order = _length_order(X)
    if order is not None:
        X = X[order]
    return PreparedBlock(X, order, start, stop)


# ------------------------------------------------------ tasks run per block
def start_state(est, block, H_raw, start):
    """The start of one block's document factor, in the block's sorted order.

    ``start`` is ``("custom", W_rows)`` or ``("draw", kind, rng_state,
    scale)``: the generator state at the block's first row, so that a start
    drawn block by block equals the in-memory start drawn at once (and a
    lost block's start can be drawn again).
    """
    if start[0] == "custom":
        W = start[1]
    else:
        _, kind, rng_state, scale = start
        W = _draw_rows(kind, rng_state, scale, block.X.shape[0], H_raw.shape[0])
        W = W.astype(block.X.dtype, copy=False)
    W = block.sort(W)
    return est._prepare_start(W, H_raw)[0]


def _draw_rows(kind, rng_state, scale, n_rows, k):
    rng = np.random.RandomState()
    rng.set_state(rng_state)
    if kind == "normal":
        return scale * np.abs(rng.standard_normal((n_rows, k)))
    return rng.gamma(scale[0], scale[1], (n_rows, k))


def doc_task(est, block, W, H, scale):
    """One block's document step: ``(new W, statistics)``."""
    if scale is not None:
        W = W * scale[None, :].astype(W.dtype, copy=False)
    return est._doc_step(block.X, W, H)


def finish_task(est, block, W, H, scale):
    """The last pass over a block: its objective, and its final W in input order."""
    if scale is not None:
        W = W * scale[None, :].astype(W.dtype, copy=False)
    stats = {"loss": est._doc_loss(block.X, W, H), "w_sum": W.sum(axis=0)}
    return stats, block.unsort(W)


def sum_stats(*parts):
    """Add up statistics dicts (arrays and floats, key by key)."""
    total = dict(parts[0])
    for part in parts[1:]:
        for key, value in part.items():
            total[key] = total[key] + value
    return total


def stats_nbytes(stats):
    return sum(getattr(v, "nbytes", 8) for v in stats.values())


# ------------------------------------------------------------------- starts
def block_starts(est, sizes, n_features, dtype, total, W, H):
    """The start: raw topics ``H`` and one start spec per block.

    ``total()`` gives the sum of X (a pass over the data, made only for the
    random start of the NMF family, whose scale depends on it).

    Mirrors ``est._initialize`` for ``init`` in ``{None, "random",
    "custom"}``: the generator is advanced exactly as the in-memory start
    draws (documents first, then topics; LDAVI: topics, then documents),
    but only generator states are kept per block.
    """
    k = est.n_components
    init = est.init
    if init in ("nndsvda", "kmeans"):
        raise ValueError(
            f"init={init!r} needs the whole matrix at once; a block-wise fit "
            "(out-of-core or on Dask) supports init='random' (the default "
            "there) or init='custom'."
        )
    _check_start_arguments(init, W, H)
    n = sum(sizes)
    if hasattr(est, "_draw"):  # LDAVI: topics first, then the documents' draws
        est._refuse_document_start(W)
        est._reset_state()
        if init == "custom":
            H = est._check_custom_topics(H, (k, n_features), dtype)
        else:
            H = est._draw((k, n_features), dtype)
        return H, _lda_draws(est, sizes, k)
    if init == "custom":
        H = _check_factor(H, (k, n_features), "H", dtype)
        W = _check_factor(W, (n, k), "W", dtype)
        bounds = np.cumsum([0, *sizes])
        return H, [
            ("custom", W[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)
        ]
    rng = check_random_state(est.random_state)
    avg = _random_scale(total(), n, n_features, k)
    specs = []
    for size in sizes:
        specs.append(("draw", "normal", rng.get_state(), avg))
        rng.standard_normal((size, k))  # advance as the in-memory draw does
    H = (avg * np.abs(rng.standard_normal((k, n_features)))).astype(dtype, copy=False)
    return H, specs


def _lda_draws(est, sizes, k):
    from ._lda import _START_SCALE, _START_SHAPE

    rng = est.random_state_
    specs = []
    for size in sizes:
        specs.append(("draw", "gamma", rng.get_state(), (_START_SHAPE, _START_SCALE)))
        rng.gamma(_START_SHAPE, _START_SCALE, (size, k))
    return specs


# ---------------------------------------------------------------- the loop
def check_blockwise_estimator(est):
    if not hasattr(est, "_doc_step") or getattr(est, "_blockwise", True) is False:
        raise ValueError(
            f"{type(est).__name__} cannot be fitted block by block: its fit is "
            "not a sum over documents. Fit it on an in-memory matrix."
        )
    if getattr(est, "learning_method", "batch") != "batch":
        raise ValueError(
            "A block-wise fit runs batch iterations; set learning_method='batch', "
            "or call partial_fit on the blocks for online learning."
        )


def fit_blockwise(est, runner, W=None, H=None):
    """Fit ``est`` with the iterations run by ``runner``; returns ``est``."""
    check_blockwise_estimator(est)
    try:
        _fit_blockwise(est, runner, W, H)
    finally:
        if hasattr(runner, "close"):
            runner.close()
    if hasattr(runner, "n_bytes"):
        est.n_bytes_per_iteration_ = np.asarray(runner.n_bytes)
    return est


def _fit_blockwise(est, runner, W, H):
    n, m = runner.shape
    dtype = runner.dtype
    est.n_features_in_ = m
    if hasattr(est, "feature_names_in_"):
        del est.feature_names_in_
    H_raw, specs = block_starts(est, runner.sizes, m, dtype, runner.total, W, H)
    H = est._prepare_start(np.zeros((0, est.n_components), dtype=dtype), H_raw)[1]
    runner.start(est, specs, H_raw)
    scale = None
    final = {}

    def iterate():
        # The per-topic rescaling of W, if any, is applied by the next step.
        nonlocal H, scale
        H, scale, loss = est._topic_update(H, runner.step(est, H, scale))
        return loss

    def final_loss():
        final.update(runner.finish(est, H, scale))
        return final["loss"] + est._topic_loss(H)

    history, n_iter, converged = est._iteration_loop(
        iterate, final_loss, describe=runner.describe
    )
    # The warning points at the caller of fit (or of fit_dask's caller).
    est._store_fit_result(history, n_iter, converged, stacklevel=6)
    w_sum = final["w_sum"]
    est._set_topic_attributes(H, w_sum)
    # The row-wise attributes, from the final W that `finish` brought here.
    for attribute, of_rows in est._doc_attributes(w_sum).items():
        setattr(est, attribute, np.concatenate([of_rows(W) for W in runner.rows]))


class _LocalRunner:
    """Blocks read one at a time in this process; ``W`` per block in memory.

    ``source`` is a `sklearn_topicfac.out_of_core.Blocks`: it is read once
    per iteration (plus once for the start and once at the end), never held
    whole.
    """

    def __init__(self, source):
        self.source = source
        self.shape = source.shape
        self.dtype = source.dtype
        self.sizes = source.sizes

    def describe(self):
        return f"{len(self.sizes)} blocks, out-of-core"

    def _blocks(self):
        return self.source.prepared_blocks()

    def total(self):
        return sum(block.total for block in self._blocks())

    def start(self, est, specs, H_raw):
        self.states = [
            start_state(est, block, H_raw, spec)
            for block, spec in zip(self._blocks(), specs, strict=True)
        ]

    def step(self, est, H, scale):
        total = None
        for i, block in enumerate(self._blocks()):
            self.states[i], stats = doc_task(est, block, self.states[i], H, scale)
            total = stats if total is None else sum_stats(total, stats)
        return total

    def finish(self, est, H, scale):
        """The last pass: the final objective; ``rows`` = final W in input order."""
        parts, self.rows = zip(
            *(
                finish_task(est, block, W, H, scale)
                for block, W in zip(self._blocks(), self.states, strict=True)
            ),
            strict=True,
        )
        self.states = None
        return sum_stats(*parts)
