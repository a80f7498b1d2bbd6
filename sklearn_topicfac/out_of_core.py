"""Fitting a corpus that does not fit in memory, one row block at a time.

Wrap the corpus in :class:`Blocks` and pass it to ``fit``::

    model = PLSI(n_components=50).fit(Blocks(X_on_disk, block_size=20_000))

Each iteration reads the blocks in order, once (twice for diagonal Newton, the
default solver of KLNMF, NormalizedNMF and PLSI); only the document factor
(``n_samples x n_components``), the topics, and one block of the source with
the chunk being cut from it (the rows are worked on in canonical chunks of
10,000 rows, larger beyond 2,560,000 rows) and its temporaries are in memory
at a time.  The iterations are those of the in-memory fit (a map-reduce of
per-document statistics), so from the same start the result is the in-memory
one up to rounding.  For online learning from a stream that can be read only
once, call ``partial_fit`` on each block instead.
"""

from .engine.sources import Blocks

__all__ = ["Blocks"]
