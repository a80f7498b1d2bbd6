"""Where the documents come from: one matrix in memory, or row blocks.

A fit runs on *prepared blocks*: validated CSR row blocks whose rows are
sorted by length (which batches the sampled products), each knowing where
its rows lie in the corpus.  `InMemory` is a whole matrix as one block;
`Blocks` reads a corpus that does not fit in memory block by block, once per
pass; the Dask runner (`engine.dask`) keeps the blocks on the workers.

Block-wise, the prepared blocks are the corpus's *canonical chunks*
(`chunk_sizes`): row ranges fixed by the number of documents alone, cut
from whatever blocks the source gives (`canonical_chunks`).  Every sum over
documents is added chunk by chunk in one fixed order (`runners.TreeSum`),
so a block-wise fit gives the same bits whatever the partition of the rows
into blocks, in one process or on a cluster.
"""

import inspect
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array

from .._validation import check_data_values, length_order, to_csr, unsort_rows


@dataclass(slots=True)
class PreparedBlock:
    """One validated row block: CSR, rows sorted by length, and where it lies.

    ``order`` maps the sorted rows back (``None`` when already sorted); the
    document factor of a block is kept in the sorted order.
    """

    X: sp.csr_matrix
    order: np.ndarray | None
    start: int
    stop: int

    @property
    def total(self):
        """The sum of the block's entries (in float64)."""
        return float(np.sum(self.X.data, dtype=np.float64))

    def unsort(self, A):
        """Rows of ``A`` (in the block's sorted order) back in input order."""
        return unsort_rows(A, self.order)

    def sort(self, A):
        """Rows of ``A`` (in input order) in the block's sorted order."""
        return A if self.order is None else A[self.order]


# Canonical chunks: at least `MIN_CHUNK_ROWS` documents each, and at most
# `MAX_CHUNKS` of them (larger chunks for larger corpora).  A chunk is the
# unit of work of a block-wise fit (one task on a cluster) and what one
# process holds of the corpus at a time out of core.  Ten thousand rows, as
# `Blocks`' default blocks: chunks of 2,048 rows made a default out-of-core
# fit of 20 Newsgroups 2.3 to 2.5 times slower (each chunk's kernel calls
# too small for the compiled backend and for threads to pay).
MIN_CHUNK_ROWS = 10_000
MAX_CHUNKS = 256


def chunk_sizes(n_samples):
    """Rows of each canonical chunk of a corpus of ``n_samples`` documents.

    A function of ``n_samples`` alone: any partition of the same rows into
    blocks is cut into the same chunks.
    """
    rows = max(MIN_CHUNK_ROWS, -(-n_samples // MAX_CHUNKS))
    return [min(rows, n_samples - start) for start in range(0, n_samples, rows)]


def prepared(X, start):
    """A validated CSR block of the rows from ``start`` as a `PreparedBlock`."""
    order = length_order(X)
    if order is not None:
        X = X[order]
    return PreparedBlock(X, order, start, start + X.shape[0])


def canonical_chunks(blocks, sizes):
    """The rows of validated CSR ``blocks`` (in order) cut into chunks of
    ``sizes`` rows: `PreparedBlock` after `PreparedBlock`.

    Holds at most one chunk and one block at a time.  A block that is a
    chunk already is used as it is.
    """
    sizes = iter(sizes)
    target = next(sizes, 0)
    pieces, held, start = [], 0, 0
    for X in blocks:
        while X.shape[0]:
            take = min(target - held, X.shape[0])
            if take == X.shape[0]:
                pieces.append(X)
                X = X[:0]
            else:
                pieces.append(X[:take])
                X = X[take:]
            held += take
            if held == target:
                yield _joined(pieces, start)
                pieces, held = [], 0
                start += target
                target = next(sizes, 0)


def assemble_chunk(start, stop, starts, *blocks):
    """The canonical chunk of rows ``start`` to ``stop`` (a `PreparedBlock`)
    from the validated CSR ``blocks`` that overlap it, whose first rows are
    ``starts`` (the Dask runner builds each chunk on a worker this way)."""
    pieces = [
        X[max(start - a, 0) : min(stop - a, X.shape[0])]
        for a, X in zip(starts, blocks, strict=True)
    ]
    return _joined(pieces, start)


def _joined(pieces, start):
    """Consecutive CSR row ranges, the first at row ``start``, as one
    `PreparedBlock` (a single piece used as it is)."""
    return prepared(pieces[0] if len(pieces) == 1 else sp.vstack(pieces, "csr"), start)


def overlapping(start, stop, bounds):
    """Indices of the blocks (first rows ``bounds[:-1]``, ends ``bounds[1:]``)
    that hold rows between ``start`` and ``stop``."""
    return [
        i
        for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:], strict=True))
        if a < stop and b > start and b > a
    ]


def validate_block(X, dtype, n_features, start, stop, index):
    """A raw block validated and converted to CSR (rows in input order).

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
    check_data_values(X.data if hasattr(X, "tocsr") else X, where)
    return to_csr(X)


def unreadable_block(index, start, source, exc):
    """The ``ValueError`` for a block whose reading raised ``exc``.

    It names the block (its index and first row) and its source, and says
    what the reader raised; raise it ``from exc``.
    """
    return ValueError(
        f"Block {index} (from row {start}) of {source} could not be read: "
        f"{type(exc).__name__}: {exc}"
    )


def _source_name(source):
    """What a `Blocks` source is, for an error message."""
    if hasattr(source, "shape") and not callable(source):
        return f"the {type(source).__name__} of shape {tuple(source.shape)}"
    if inspect.isfunction(source) or inspect.ismethod(source):
        return f"the reader {source.__qualname__}()"
    if callable(source):
        return repr(source)
    return f"the {type(source).__name__} of blocks"


class InMemory:
    """A validated CSR matrix as one prepared block, kept for every pass.

    ``X`` (in input order) is kept too: the SVD and K-means starts are
    computed on it exactly as scikit-learn computes them.
    """

    def __init__(self, X):
        self.X = X
        self.shape = X.shape
        self.dtype = X.dtype
        self.sizes = [X.shape[0]]
        order = length_order(X)
        self.block = PreparedBlock(
            X if order is None else X[order], order, 0, X.shape[0]
        )

    def prepared_blocks(self):
        return [self.block]


class Blocks:
    """A corpus read in row blocks, for a block-wise (out-of-core) ``fit``.

    Parameters
    ----------
    source : array-like, sparse matrix, memory map, sequence or callable
        Where the rows come from:

        - anything with ``shape`` and row slicing (a NumPy memory map, a
          SciPy sparse matrix whose arrays are memory-mapped, an HDF5
          dataset...): read ``block_size`` rows at a time;
        - a sequence of blocks (arrays or sparse matrices), read in order;
        - a callable returning an iterable of blocks, called once per pass
          over the data (e.g. a function reading files one by one); it must
          give the same blocks every time.
    block_size : int, default=10_000
        Rows per block when ``source`` is sliced.  How the rows are split
        into blocks changes nothing in a fit: the blocks are cut into the
        corpus's canonical chunks (10,000 rows each, larger
        beyond 2,560,000 rows so that there are at most 256; fixed by the
        number of rows alone), so two partitions of the
        same rows give the same fit, bit for bit.
    dtype : {np.float64, np.float32}, default=None
        Dtype of the fit.  By default float32 when the (first) block is
        float32, else float64 -- as for an in-memory ``fit``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac import PLSI
    >>> from sklearn_topicfac.out_of_core import Blocks
    >>> rng = np.random.default_rng(0)
    >>> X = rng.poisson(1.0, size=(60, 8))
    >>> def read():                      # e.g. one file per block
    ...     for start in range(0, 60, 20):
    ...         yield X[start : start + 20]
    >>> model = PLSI(n_components=2, init="random", max_iter=20, tol=0,
    ...              random_state=0).fit(Blocks(read))
    >>> model.components_.shape
    (2, 8)
    """

    def __init__(self, source, *, block_size=10_000, dtype=None):
        if not (isinstance(block_size, int | np.integer) and block_size >= 1):
            raise ValueError(
                f"block_size must be a positive integer, got {block_size}."
            )
        self.source = source
        self.block_size = int(block_size)
        sizes, n_features, first_dtype = self._survey()
        if not sizes:
            raise ValueError("The source gave no blocks: there is nothing to fit.")
        # The source's blocks as read, and the canonical chunks a fit runs on.
        self.block_sizes = sizes
        self.shape = (int(sum(sizes)), n_features)
        self.sizes = chunk_sizes(self.shape[0])
        if dtype is None:
            dtype = np.float32 if first_dtype == np.float32 else np.float64
        if np.dtype(dtype) not in (np.float32, np.float64):
            raise ValueError(f"dtype must be float32 or float64, got {dtype}.")
        self.dtype = np.dtype(dtype)

    def _sliced(self):
        return hasattr(self.source, "shape") and not callable(self.source)

    def raw_blocks(self):
        """The blocks as the source gives them, in order."""
        if self._sliced():
            n = self.source.shape[0]
            for start in range(0, n, self.block_size):
                yield self.source[start : start + self.block_size]
        elif callable(self.source):
            yield from self.source()
        else:
            yield from self.source

    def _read_blocks(self):
        """``(index, first row, raw block)`` for each block, in order.

        An error raised while reading a block (a corrupt or truncated file,
        ...) becomes a ``ValueError`` naming the block and the source,
        chained to the reader's own error.
        """
        blocks = iter(self.raw_blocks())
        index = start = 0
        while True:
            try:
                block = next(blocks)
            except StopIteration:
                return
            except MemoryError:
                raise
            except Exception as exc:
                source = _source_name(self.source)
                raise unreadable_block(index, start, source, exc) from exc
            yield index, start, block
            shape = getattr(block, "shape", None) or np.shape(block)
            start += shape[0] if len(shape) else 0
            index += 1

    def _survey(self):
        sizes, n_features, dtype = [], None, None
        if self._sliced():
            if len(self.source.shape) != 2:
                raise ValueError(
                    f"The source must be 2-D (documents x terms), got shape "
                    f"{self.source.shape}."
                )
            n, n_features = self.source.shape
            sizes = [min(self.block_size, n - a) for a in range(0, n, self.block_size)]
            return sizes, n_features, getattr(self.source, "dtype", None)
        for i, _, block in self._read_blocks():
            shape = getattr(block, "shape", None) or np.shape(block)
            if len(shape) != 2:
                raise ValueError(f"Block {i} is not 2-D: shape {shape}.")
            if n_features is None:
                n_features = shape[1]
                dtype = getattr(block, "dtype", None)
            elif shape[1] != n_features:
                raise ValueError(
                    f"Block {i} has {shape[1]} columns, block 0 has {n_features}: "
                    "every block must hold all the columns."
                )
            sizes.append(shape[0])
        return sizes, n_features, dtype

    def prepared_blocks(self):
        """The canonical chunks (`PreparedBlock`), rows sorted by length."""
        return canonical_chunks(self._validated_blocks(), self.sizes)

    def _validated_blocks(self):
        """The source's blocks, validated, as CSR (rows in input order)."""
        start = 0
        count = 0
        for i, _, raw in self._read_blocks():
            if i >= len(self.block_sizes):
                raise ValueError(
                    "The source gave more blocks than on its first pass; it must "
                    "give the same blocks on every pass."
                )
            stop = start + self.block_sizes[i]
            if not sp.issparse(raw):
                raw = np.asarray(raw)
            yield validate_block(raw, self.dtype, self.shape[1], start, stop, i)
            start = stop
            count += 1
        if count != len(self.block_sizes):
            raise ValueError(
                f"The source gave {count} blocks, {len(self.block_sizes)} on its "
                "first pass; it must give the same blocks on every pass."
            )

    def __repr__(self):
        return (
            f"Blocks(shape={self.shape}, n_blocks={len(self.block_sizes)}, "
            f"dtype={self.dtype.name})"
        )
