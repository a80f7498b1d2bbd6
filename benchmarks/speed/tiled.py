"""Column-tiled compiled kernels against the row-order ones: an experiment.

The compiled sampled product (``y_dj = W_d . H_:j`` at X's stored entries)
and the fused KL-MU document pass (`mu_doc_pass`: the ratio, its sums and
the row of ``R @ H.T``, then the ratio at the new W) read one k-vector of
``H`` per stored entry, at random: ``docs/performance.md`` ("What bounds an
iteration") measured them at the speed of that gather.  Here the same
loops walk each thread's rows tile by tile: the columns are cut into tiles
of ``tile`` terms, and for each tile every row of the thread's part
processes its entries in that tile, so the gathered slice of ``H``
(``tile * kp`` values) stays in L1 while the tile is walked.

The layout needs no copy of X: within a CSR row the column indices are
sorted, so a row's entries in one tile are a contiguous run of its entries,
and a per-row cursor (one integer per row of the part) finds the next run.
The document pass keeps a float64 row of ``R @ H.T`` per row of the part
(``rows * kp`` float64 per thread) across the tiles.  A second layout is
the column-blocked copy of X's indices (`column_blocks`: each part's
entries ordered by tile, then row; 16 bytes an entry) walked by one flat
loop.  Two probes bound what any tiling can gain and show what bounds the
loop instead: the row-order kernel on X with its columns folded onto the
first `L1_COLUMNS` (the same rows and entries, the gathered slice of H in
L1: a tiling with no overhead), the same loop with k padded to 32, and
with only 1 or 0 of the k terms of each dot product.

One process, the same data and factors for every variant, medians of
interleaved repeats, wall and CPU time (all threads).  From the repository
root:

    nice -n 10 python benchmarks/speed/tiled.py --data-dir ../shared/data
    nice -n 10 python benchmarks/speed/tiled.py --threads 1 --tiles 256,512,4096

``--write-doc perf_tiled`` writes the table into docs/performance.md.
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, REPO)

import corpora  # noqa: E402
import machine  # noqa: E402
import nmf  # noqa: E402
import numba as nb  # noqa: E402
import numpy as np  # noqa: E402

import sklearn_topicfac  # noqa: E402
from sklearn_topicfac.kernels import _parallel  # noqa: E402
from sklearn_topicfac.kernels import compiled as C  # noqa: E402
from sklearn_topicfac.kernels.compiled import _common, products, updates  # noqa: E402

K_TOPICS = 20
# Terms whose padded columns of H (24 float32) fill about half of L1.
L1_COLUMNS = 256


# ------------------------------------------------------------ tiled kernels
@nb.njit(**_common._JIT)
def _run_end(indices, e, b, limit):
    """The end of the run of entries from ``e`` (row end ``b``) whose column
    is below ``limit``."""
    while e < b and indices[e] < limit:
        e += 1
    return e


@nb.njit(**_common._JIT)
def _tiled_sampled(indptr, indices, data, W, Ht, out, tile, divide, tiny, big, r0, r1):
    k = W.shape[1]
    m = Ht.shape[0]
    w = np.zeros(Ht.shape[1], dtype=Ht.dtype)
    pos = indptr[r0:r1].copy()
    for limit in range(tile, m + tile, tile):
        for i in range(r0, r1):
            a = pos[i - r0]
            e = _run_end(indices, a, indptr[i + 1], limit)
            n = e - a
            if n == 0:
                continue
            pos[i - r0] = e
            w[:k] = W[i]
            y = out[a:e]
            _common._row_model(indices, a, n, w, Ht, y)
            if divide:
                _common._row_ratio(data, a, n, y, tiny, big)


def tiled_sampled(X, W, H, tile, divide=True):
    """`compiled.ratio_at_nonzeros` (values only), walked by column tiles."""
    dtype = np.result_type(W.dtype, H.dtype)
    out = np.empty(X.nnz, dtype=dtype)
    tiny, big = _common._limits(dtype)
    _common._on_parts(
        _tiled_sampled, _common._bounds(X.indptr), X.nnz * W.shape[1],
        X.indptr, X.indices, X.data, W.astype(dtype, copy=False),
        _common._padded(H, dtype), out, tile, divide, tiny, big,
    )  # fmt: skip
    return out


@nb.njit(**_common._JIT)
def _tiled_doc_pass(
    indptr, indices, data, W, Ht, h_sum, W_new, r_new, sums, tile, tiny, big,
    part, r0, r1,
):  # fmt: skip
    """`compiled._doc_pass` for KL-MU with the incoming ratio not kept
    (`mu_doc_pass`), both of its sweeps walked by column tiles."""
    k = W.shape[1]
    kp = Ht.shape[1]
    m = Ht.shape[0]
    rows = r1 - r0
    longest = _common._longest(indptr, r0, r1)
    y = np.empty(longest, dtype=Ht.dtype)
    v = np.empty(longest, dtype=np.float64)
    w = np.zeros(kp, dtype=Ht.dtype)
    acc = np.zeros((rows, kp), dtype=np.float64)
    pos = indptr[r0:r1].copy()
    x_log_r, x_sum = 0.0, 0.0
    for limit in range(tile, m + tile, tile):
        for i in range(r0, r1):
            a = pos[i - r0]
            e = _run_end(indices, a, indptr[i + 1], limit)
            n = e - a
            if n == 0:
                continue
            pos[i - r0] = e
            w[:k] = W[i]
            _common._row_model(indices, a, n, w, Ht, y)
            _common._row_ratio(data, a, n, y, tiny, big)
            s = _common._row_sums(data, a, n, y, tiny, v)
            x_log_r += s[0]
            x_sum += s[1]
            updates._row_gather_add(indices, a, n, y, Ht, acc[i - r0])
    W2 = np.zeros((rows, kp), dtype=Ht.dtype)
    for i in range(r0, r1):
        for t in range(k):
            wt = W[i, t]
            wt = 0 if wt == 0 else wt * acc[i - r0, t] / h_sum[t]
            W_new[i, t] = wt
            W2[i - r0, t] = wt
    pos[:] = indptr[r0:r1]
    for limit in range(tile, m + tile, tile):
        for i in range(r0, r1):
            a = pos[i - r0]
            e = _run_end(indices, a, indptr[i + 1], limit)
            n = e - a
            if n == 0:
                continue
            pos[i - r0] = e
            yy = r_new[a:e]
            _common._row_model(indices, a, n, W2[i - r0], Ht, yy)
            _common._row_ratio(data, a, n, yy, tiny, big)
    sums[part, 0] = x_log_r
    sums[part, 1] = x_sum


def tiled_mu_doc_pass(X, W, H, tile):
    """``(W_new, r_new values, sums)`` of `compiled.mu_doc_pass`, tiled."""
    dtype = np.result_type(W.dtype, H.dtype)
    h = H.sum(axis=1, dtype=np.float64)
    h_sum = np.where(h > 0, h, 1.0)
    r_new = np.empty(X.nnz, dtype=dtype)
    W_new = np.zeros(W.shape, dtype=dtype)
    bounds = _common._bounds(X.indptr)
    sums = np.zeros((bounds.shape[0] - 1, 2))
    tiny, big = _common._limits(dtype)
    _common._on_parts(
        _tiled_doc_pass, bounds, 2 * X.nnz * W.shape[1],
        X.indptr, X.indices, X.data, W.astype(dtype, copy=False),
        _common._padded(H, dtype), h_sum, W_new, r_new, sums, tile, tiny, big,
        indexed=True,
    )  # fmt: skip
    return W_new, r_new, _common._sums(sums)


# ------------------------------------- a column-blocked copy of X's indices
@nb.njit(cache=True)
def _blocks(indptr, indices, bounds, tile, m, rows, cols, where):
    """Within each part of rows ``bounds``, X's entries ordered by (tile,
    row, column): their row, column and position in X (counting sort)."""
    n_tiles = (m + tile - 1) // tile
    for p in range(bounds.shape[0] - 1):
        r0, r1 = bounds[p], bounds[p + 1]
        start = np.zeros(n_tiles + 1, dtype=np.int64)
        for e in range(indptr[r0], indptr[r1]):
            start[indices[e] // tile + 1] += 1
        start[0] = indptr[r0]
        for t in range(n_tiles):
            start[t + 1] += start[t]
        for i in range(r0, r1):
            for e in range(indptr[i], indptr[i + 1]):
                t = indices[e] // tile
                d = start[t]
                start[t] += 1
                rows[d] = i
                cols[d] = indices[e]
                where[d] = e


def column_blocks(X, tile):
    """``(rows, cols, where)``: the column-blocked copy (O(nnz): 16 bytes an
    entry), for the parts of rows the kernels split X into."""
    rows = np.empty(X.nnz, dtype=np.int32)
    cols = np.empty(X.nnz, dtype=np.int32)
    where = np.empty(X.nnz, dtype=np.int64)
    bounds = _common._bounds(X.indptr)
    _blocks(X.indptr, X.indices, bounds, tile, X.shape[1], rows, cols, where)
    return rows, cols, where


@nb.njit(**_common._JIT)
def _blocked_sampled(indptr, rows, cols, where, data, Wp, Ht, out, tiny, big, r0, r1):
    kp = Ht.shape[1]
    for e in range(indptr[r0], indptr[r1]):
        i, c = rows[e], cols[e]
        s = Ht.dtype.type(0)
        for t in range(kp):
            s += Wp[i, t] * Ht[c, t]
        d = where[e]
        s = s if s > tiny else tiny
        q = data[d] / s
        out[d] = q if q < big else big


def blocked_sampled(X, W, H, blocks):
    """The ratio's values from the column-blocked copy: one flat loop over
    each part's entries, tile after tile."""
    dtype = np.result_type(W.dtype, H.dtype)
    out = np.empty(X.nnz, dtype=dtype)
    tiny, big = _common._limits(dtype)
    Ht = _common._padded(H, dtype)
    Wp = _common._padded(W.T, dtype)
    _common._on_parts(
        _blocked_sampled, _common._bounds(X.indptr), X.nnz * W.shape[1],
        X.indptr, *blocks, X.data, Wp, Ht, out, tiny, big,
    )  # fmt: skip
    return out


# ----------------------------------------------------------------- timing
def _time(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def interleaved(calls, repeats):
    """``name -> (median wall s, median cpu s)`` over interleaved repeats."""
    for fn in calls.values():
        for _ in range(3):
            fn()  # compile, warm the pages and the threads
    runs = {name: [] for name in calls}
    for _ in range(repeats):
        for name, fn in calls.items():
            runs[name].append(_time(fn))
    return {
        name: tuple(float(np.median([r[i] for r in rs])) for i in (0, 1))
        for name, rs in runs.items()
    }


def check(X, W, H, tiles):
    """The tiled kernels give the row-order kernels' results."""
    ref = C.ratio_at_nonzeros(X, W, H).data
    W_ref, R_ref, s_ref = C.mu_doc_pass(X, W, H)
    for tile in tiles:
        np.testing.assert_allclose(tiled_sampled(X, W, H, tile), ref, rtol=1e-5)
        blocks = column_blocks(X, tile)
        np.testing.assert_allclose(blocked_sampled(X, W, H, blocks), ref, rtol=1e-5)
        W_new, r_new, sums = tiled_mu_doc_pass(X, W, H, tile)
        np.testing.assert_allclose(W_new, W_ref, rtol=2e-4, atol=1e-12)
        np.testing.assert_allclose(r_new, R_ref.data, rtol=2e-4)
        np.testing.assert_allclose(sums, s_ref, rtol=1e-9)
    H32 = _padded_to(H, 32)
    np.testing.assert_allclose(_ratio_kp(X, W, H32), ref, rtol=1e-5)
    np.testing.assert_allclose(_ratio_terms(X, W, H, 24), ref, rtol=1e-5)


def folded(X, n_columns):
    """X with its columns folded onto the first ``n_columns`` (``j mod
    n_columns``): the same rows and entries, the gathered slice of H small
    enough for L1 -- the row-order kernel at the speed a tiling without
    overhead would give it."""
    Y = X.copy()
    Y.indices = (Y.indices % n_columns).astype(Y.indices.dtype)
    return Y


def _padded_to(H, kp):
    Ht = np.zeros((H.shape[1], kp), dtype=H.dtype)
    Ht[:, : H.shape[0]] = H.T
    return Ht


def _ratio_kp(X, W, Ht):
    """`compiled.ratio_at_nonzeros`'s loop on an ``Ht`` padded to any width."""
    out = np.empty(X.nnz, dtype=Ht.dtype)
    tiny, big = _common._limits(Ht.dtype)
    _common._on_parts(
        products._sampled, _common._bounds(X.indptr), X.nnz * W.shape[1],
        X.indptr, X.indices, X.data, W, Ht, out, True, tiny, big,
    )  # fmt: skip
    return out


@nb.njit(**_common._JIT)
def _sampled_terms(indptr, indices, data, W, Ht, out, terms, tiny, big, r0, r1):
    """`compiled._sampled`'s ratio with only the first ``terms`` of the k
    terms of each dot product: what the rest of the loop costs."""
    k = W.shape[1]
    w = np.zeros(Ht.shape[1], dtype=Ht.dtype)
    for i in range(r0, r1):
        a, n = indptr[i], indptr[i + 1] - indptr[i]
        w[:k] = W[i]
        y = out[a : a + n]
        for j in range(n):
            c = indices[a + j]
            s = y.dtype.type(0)
            for t in range(terms):
                s += w[t] * Ht[c, t]
            y[j] = s
        _common._row_ratio(data, a, n, y, tiny, big)


def _ratio_terms(X, W, H, terms):
    out = np.empty(X.nnz, dtype=np.float32)
    tiny, big = _common._limits(out.dtype)
    _common._on_parts(
        _sampled_terms, _common._bounds(X.indptr), X.nnz * W.shape[1],
        X.indptr, X.indices, X.data, W, _common._padded(H, out.dtype), out, terms,
        tiny, big,
    )  # fmt: skip
    return out


def corpus_rows(name, X, tiles, repeats, bandwidth):
    """Every variant of both kernels on ``X``: a dict of table rows."""
    X = X.astype(np.float32)
    X.sort_indices()
    W, H = nmf.start(X, K_TOPICS)
    n, m = X.shape
    nnz, k, s = X.nnz, K_TOPICS, 4
    check(X, W, H, tiles)
    # The floors of table perf_kernels (benchmarks/speed/engines.py): bytes
    # moved over the copy bandwidth (of the threads the kernels run on).
    entries = nnz * (s + 4)
    floors = {
        "ratio_at_nonzeros": (entries + nnz * s + (n + m) * k * s) / (bandwidth * 1e9),
        "mu_doc_pass": (entries + nnz * s + 2 * n * k * s + m * k * s)
        / (bandwidth * 1e9),
    }
    Y = folded(X, L1_COLUMNS)
    blocks = {tile: column_blocks(X, tile) for tile in tiles}
    calls = {
        ("ratio_at_nonzeros", "row order (the kernel)"): lambda: C.ratio_at_nonzeros(
            X, W, H
        ),
        ("ratio_at_nonzeros", f"row order, H in L1 (columns mod {L1_COLUMNS})"): (
            lambda: C.ratio_at_nonzeros(Y, W, H)
        ),
    }
    # What bounds the row-order loop: H's columns padded to 32 instead of
    # 24, so that LLVM's 8-lane loop body runs instead of its 4-lane
    # remainder (more bytes gathered an entry, fewer instructions).
    H32 = _padded_to(H, 32)
    calls[("ratio_at_nonzeros", "row order, k padded to 32")] = lambda: _ratio_kp(
        X, W, H32
    )
    calls[("ratio_at_nonzeros", "row order, k padded to 32, H in L1")] = lambda: (
        _ratio_kp(Y, W, H32)
    )
    # What the dot product over k costs: the loop with 1 and 0 of its terms
    # (the index, the gather of one line of H or none, the ratio, X's streams).
    for terms in (1, 0):
        calls[("ratio_at_nonzeros", f"row order, {terms} of the k terms")] = (
            lambda t=terms: _ratio_terms(X, W, H, t)
        )
    for tile in tiles:
        calls[("ratio_at_nonzeros", f"tiled, {tile} terms a tile")] = lambda t=tile: (
            tiled_sampled(X, W, H, t)
        )
        calls[("ratio_at_nonzeros", f"column-blocked copy, {tile} terms")] = (
            lambda t=tile: blocked_sampled(X, W, H, blocks[t])
        )
    calls[("mu_doc_pass", "row order (the kernel)")] = lambda: C.mu_doc_pass(X, W, H)
    calls[("mu_doc_pass", f"row order, H in L1 (columns mod {L1_COLUMNS})")] = lambda: (
        C.mu_doc_pass(Y, W, H)
    )
    for tile in tiles:
        calls[("mu_doc_pass", f"tiled, {tile} terms a tile")] = lambda t=tile: (
            tiled_mu_doc_pass(X, W, H, t)
        )
    res = interleaved(calls, repeats)
    rows = []
    for (kernel, variant), (wall, cpu) in res.items():
        base_wall, base_cpu = res[(kernel, "row order (the kernel)")]
        # entries walked: the ratio once, the document pass twice
        walked = nnz * (1 if kernel == "ratio_at_nonzeros" else 2)
        rows.append(
            (name, kernel, variant, 1e3 * floors[kernel], 1e3 * wall, 1e3 * cpu,
             1e9 * cpu / walked, wall / floors[kernel], base_cpu / cpu,
             base_wall / wall)
        )  # fmt: skip
    return rows


def _docblocks():
    """benchmarks/_docblocks.py (writes a generated block of a page)."""
    sys.path.insert(0, os.path.join(REPO, "benchmarks"))
    import _docblocks

    return _docblocks


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--tiles", default="512,4096", help="terms a tile")
    parser.add_argument(
        "--data-dir",
        default=os.path.join(REPO, "..", "shared", "data"),
        help="where 20 Newsgroups is (default ../shared/data); skipped if absent",
    )
    parser.add_argument(
        "--write-doc",
        metavar="NAME",
        help="also write the table as the generated block NAME (docs/_data)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=_parallel.N_THREADS,
        help="kernel threads (default all; 1 gives CPU time = wall time on a "
        "busy machine); the floor uses the copy bandwidth of as many threads",
    )
    args = parser.parse_args(argv)
    _parallel.N_THREADS = args.threads
    printed = _docblocks().capture_stdout() if args.write_doc else None
    tiles = [int(t) for t in args.tiles.split(",")]
    print(f"sklearn_topicfac from {os.path.dirname(sklearn_topicfac.__file__)}")
    print(f"machine: {machine.describe()}; load average {machine.load_average()}")
    copy = machine.memory_bandwidth(1 << 28)["copy"]
    bandwidth = copy[0] if args.threads == 1 else copy[1]
    print(
        f"kernel threads {args.threads}; copy bandwidth {bandwidth:.1f} GB/s "
        f"({args.threads} thread(s)); float32, k = {K_TOPICS} (H's columns "
        f"padded to 24)"
    )
    everything = {"generated 10k x 5k": corpora.lda_corpus(*corpora.SIZES["small"])}
    newsgroups = corpora.newsgroups(args.data_dir)
    if newsgroups is not None:
        everything["20 Newsgroups"] = newsgroups
    rows = []
    for name, X in everything.items():
        rows += corpus_rows(name, X, tiles, args.repeats, bandwidth)
    print(
        f"\n### Column-tiled kernels against the row-order ones (float32, k = "
        f"{K_TOPICS}, {args.threads} kernel thread(s), medians of {args.repeats} "
        "interleaved calls)\n"
    )
    print(
        "| corpus | kernel | variant | floor ms | wall ms | CPU ms | "
        "CPU ns an entry walked | wall x floor | speed-up (CPU) | speed-up (wall) |"
    )
    print("|---" * 10 + "|")
    for r in rows:
        print(
            f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.2f} | {r[4]:.2f} | {r[5]:.2f} | "
            f"{r[6]:.2f} | {r[7]:.1f}x | {r[8]:.2f}x | {r[9]:.2f}x |"
        )
    if args.write_doc:
        text = printed.copy.getvalue()
        _docblocks().write_doc(
            args.write_doc, _docblocks().printed_tables(text), "docs/performance.md"
        )


if __name__ == "__main__":
    main()
