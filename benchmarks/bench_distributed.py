"""PLSI fitted out-of-core on one machine, and on a 2-worker Dask LocalCluster.

The corpus is generated from the LDA model (20 topics, Dirichlet priors 0.1
on the documents' topics and 0.05 on the topics' words, Poisson(100)
document lengths, fixed seed) one row block at a time, so that the whole
matrix never exists: each block is a float32 CSR matrix written to a
temporary directory with ``scipy.sparse.save_npz`` (uncompressed).  A block
is a function of ``(seed, block index)`` alone, so it can be regenerated
anywhere.  Generation is timed separately.

Both fits run ``PLSI(n_components=k, init="random", max_iter=n_iter, tol=0,
random_state=0, split_merge=0)``, each in a fresh Python process so that its
peak RSS (``ru_maxrss``) is its own.  The split-merge moves (off by
default; ``split_merge=3`` makes up to 3) stay off: this measures
iterations, and a move's proposal costs passes of its own (on one
50,000-row block, 28 s for three proposals against 0.4 s an iteration,
measured).  The kernels run on the backend of
the configuration: numba when it is installed (``backend="auto"``; each
block is far above its threshold), else NumPy.

* **out-of-core**: ``fit(Blocks(lambda: (load_npz(p) for p in paths)))``.
  The estimator exposes no per-iteration clock, so the model is fitted twice,
  with ``max_iter=1`` and ``max_iter=n_iter``; seconds per iteration are
  ``(t_n - t_1) / (n_iter - 1)``, which cancels the passes every fit makes
  besides its iterations (the total, the start, the final objective and the
  document attributes); an untimed fit on one block warms up first.  The
  kernels use the package's default threads.
* **2-worker LocalCluster** (``threads_per_worker=1``, processes; the
  kernels of each worker are set to one thread, so that the two workers
  share the cores one each): ``fit_dask`` on a dask array made of one
  ``from_delayed(load_npz(path))`` chunk per block.  Its ``callback``
  timestamps every iteration; seconds per iteration are the median of the
  intervals between consecutive iterations (the first iteration, which
  also loads the blocks onto the workers, is left out).  Communication per
  iteration is the median of the fitted model's ``n_bytes_per_iteration_``.
  The client process also runs the scheduler.  Dask starts its workers with
  ``MALLOC_TRIM_THRESHOLD_=65536``, which also fixes glibc's mmap threshold,
  so that the kernels' large temporaries are mapped afresh on every call
  (about 2x slower kernels, measured); ``--no-malloc-trim`` unsets it.

The package is imported from this checkout (its root is put first on the
path), not from an installed copy.

Usage (from the repository root)::

    python benchmarks/bench_distributed.py --quick      # < 2 minutes, 2 cores
    python benchmarks/bench_distributed.py              # 1M x 50k, ~5 min, ~1 GB disk
    python benchmarks/bench_distributed.py --output results.md
"""

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

N_TOPICS = 20
DOC_TOPIC_PRIOR = 0.1
TOPIC_WORD_PRIOR = 0.05
MEAN_LENGTH = 100
N_WORKERS = 2
# Network bandwidth assumed by the scaling projection, bytes per second.
BANDWIDTH = 1e9
PROJECTED_WORKERS = (2, 4, 8, 16, 32)
MANIFEST = "manifest.json"
# Benchmark the checkout this script is in, not an installed copy; the fresh
# processes (and the Dask workers they spawn) get it through PYTHONPATH.
REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

FULL = {"n_docs": 1_000_000, "n_features": 50_000, "block_size": 50_000, "n_iter": 3}
QUICK = {"n_docs": 50_000, "n_features": 5_000, "block_size": 10_000, "n_iter": 3}


# ------------------------------------------------------------------ corpus
def topic_word_cdf(seed, n_features):
    """Cumulative topic-word distributions, offset by topic: shape (K*V,).

    Row ``t`` holds ``t + cumsum(phi_t)``, its last entry exactly ``t + 1``,
    so one ``searchsorted`` of ``t + u`` (``u`` uniform in [0, 1)) draws a
    word of topic ``t`` for every token at once.
    """
    rng = np.random.default_rng([seed, 0])
    phi = rng.dirichlet(np.full(n_features, TOPIC_WORD_PRIOR), size=N_TOPICS)
    cdf = np.cumsum(phi, axis=1)
    cdf[:, -1] = 1.0
    return (cdf + np.arange(N_TOPICS)[:, None]).ravel()


def generate_block(seed, index, n_rows, n_features, word_cdf=None):
    """Block ``index`` of the corpus: a float32 CSR matrix of word counts.

    A function of ``(seed, index)`` (and the sizes) only: the topics come
    from the seed, the documents from the seed and the block index.
    """
    if word_cdf is None:
        word_cdf = topic_word_cdf(seed, n_features)
    rng = np.random.default_rng([seed, 1, index])
    lengths = rng.poisson(MEAN_LENGTH, size=n_rows)
    theta = rng.dirichlet(np.full(N_TOPICS, DOC_TOPIC_PRIOR), size=n_rows)
    doc = np.repeat(np.arange(n_rows), lengths)
    # The topic of every token: the same offset-CDF trick over documents.
    topic_cdf = np.cumsum(theta, axis=1)
    topic_cdf[:, -1] = 1.0
    topic_cdf = (topic_cdf + np.arange(n_rows)[:, None]).ravel()
    pos = np.searchsorted(topic_cdf, doc + rng.random(doc.size), side="right")
    topic = np.clip(pos - doc * N_TOPICS, 0, N_TOPICS - 1)
    del pos
    pos = np.searchsorted(word_cdf, topic + rng.random(doc.size), side="right")
    word = np.clip(pos - topic * n_features, 0, n_features - 1)
    del pos, topic
    counts = np.ones(doc.size, dtype=np.float32)
    X = sp.coo_matrix((counts, (doc, word)), shape=(n_rows, n_features)).tocsr()
    X.sum_duplicates()
    return X


def generate_corpus(directory, n_docs, n_features, block_size, seed):
    """Write the blocks to ``directory``; return the manifest (also written)."""
    word_cdf = topic_word_cdf(seed, n_features)
    blocks = []
    start = time.perf_counter()
    for index, first in enumerate(range(0, n_docs, block_size)):
        n_rows = min(block_size, n_docs - first)
        X = generate_block(seed, index, n_rows, n_features, word_cdf)
        path = Path(directory) / f"block_{index:05d}.npz"
        sp.save_npz(path, X, compressed=False)
        blocks.append({"path": str(path), "rows": n_rows, "nnz": int(X.nnz)})
    manifest = {
        "n_docs": n_docs,
        "n_features": n_features,
        "seed": seed,
        "blocks": blocks,
        "nnz": sum(b["nnz"] for b in blocks),
        "disk_bytes": sum(os.path.getsize(b["path"]) for b in blocks),
        "generation_seconds": time.perf_counter() - start,
    }
    (Path(directory) / MANIFEST).write_text(json.dumps(manifest, indent=1))
    return manifest


# ---------------------------------------------------------------- the fits
def peak_rss_kb():
    """This process's peak resident set size, in KiB."""
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform == "darwin" else peak  # macOS: bytes


def make_estimator(k, n_iter):
    from sklearn_topicfac import PLSI

    return PLSI(
        n_components=k,
        init="random",
        max_iter=n_iter,
        tol=0,
        random_state=0,
        split_merge=0,
    )


def run_out_of_core(manifest, k, n_iter):
    from scipy.sparse import load_npz

    from sklearn_topicfac.kernels import _parallel
    from sklearn_topicfac.out_of_core import Blocks

    paths = [b["path"] for b in manifest["blocks"]]
    # Warm-up (imports, first calls, thread start): one iteration on one block.
    make_estimator(k, 1).fit(Blocks(lambda: iter([load_npz(paths[0])])))
    # Reads every block once (the survey): the files are in the page cache
    # before either timed fit.
    blocks = Blocks(lambda: (load_npz(path) for path in paths))
    load = os.getloadavg()[0]
    times = {}
    losses = {}
    for iterations in (1, n_iter):
        start = time.perf_counter()
        model = make_estimator(k, iterations).fit(blocks)
        times[iterations] = time.perf_counter() - start
        losses[iterations] = float(model.loss_)
    return {
        "fit_seconds": times,
        "seconds_per_iteration": (times[n_iter] - times[1]) / (n_iter - 1),
        "loss": losses[n_iter],
        "peak_rss_kb": peak_rss_kb(),
        "threads": _parallel.N_THREADS,
        "load_average": load,
    }


def _set_kernel_threads(n):
    from sklearn_topicfac.kernels import _parallel

    _parallel.N_THREADS = n
    return n


def run_dask(manifest, k, n_iter, memory_limit, malloc_trim):
    import dask
    import dask.array as da
    from dask.distributed import Client, LocalCluster
    from scipy.sparse import load_npz

    from sklearn_topicfac.distributed import fit_dask

    if not malloc_trim:
        # Dask's nannies start workers with MALLOC_TRIM_THRESHOLD_=65536, which
        # also fixes glibc's mmap threshold: every large temporary is then
        # mapped and unmapped afresh (page faults on every call).
        dask.config.set(
            {"distributed.nanny.pre-spawn-environ": {"MALLOC_TRIM_THRESHOLD_": None}}
        )
    # The scheduler's HTTP routes start even without a dashboard and warn when
    # the default port is taken (e.g. by another cluster on this machine).
    warnings.filterwarnings("ignore", message="Port .* is already in use")

    m = manifest["n_features"]
    meta = sp.csr_matrix((0, 0), dtype=np.float32)
    X = da.concatenate(
        [
            da.from_delayed(
                dask.delayed(load_npz)(b["path"]),
                shape=(b["rows"], m),
                dtype=np.float32,
                meta=meta,
            )
            for b in manifest["blocks"]
        ],
        axis=0,
    )
    cluster = LocalCluster(
        n_workers=N_WORKERS,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        memory_limit=memory_limit,
    )
    with cluster, Client(cluster) as client:
        client.wait_for_workers(N_WORKERS)
        client.run(_set_kernel_threads, 1)
        stamps = []

        def callback(iteration, objective):
            stamps.append(time.perf_counter())

        load = os.getloadavg()[0]
        start = time.perf_counter()
        model = fit_dask(make_estimator(k, n_iter), X, client=client, callback=callback)
        fit_seconds = time.perf_counter() - start
        intervals = np.diff(stamps).tolist()
        workers = client.run(peak_rss_kb)
    return {
        "fit_seconds": fit_seconds,
        "first_iteration_seconds": stamps[0] - start,
        "iteration_seconds": intervals,
        "seconds_per_iteration": statistics.median(intervals),
        "bytes_per_iteration": statistics.median(model.n_bytes_per_iteration_.tolist()),
        "loss": float(model.loss_),
        "peak_rss_kb": peak_rss_kb(),
        "worker_peak_rss_kb": [workers[w] for w in sorted(workers)],
        "load_average": load,
        "malloc_trim": malloc_trim,
    }


def child(args):
    """The body of a fresh process: one fit, its results written as JSON."""
    manifest = json.loads((Path(args.data_dir) / MANIFEST).read_text())
    if args.child == "ooc":
        result = run_out_of_core(manifest, args.k, args.n_iter)
    else:
        result = run_dask(
            manifest, args.k, args.n_iter, args.memory_limit, not args.no_malloc_trim
        )
    Path(args.result).write_text(json.dumps(result))


def in_fresh_process(kind, args, data_dir):
    """Run ``kind`` ("ooc" or "dask") in a new Python process; its results."""
    result = Path(data_dir) / f"result_{kind}.json"
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        kind,
        "--data-dir",
        str(data_dir),
        "--result",
        str(result),
        "--k",
        str(args.k),
        "--n-iter",
        str(args.n_iter),
        "--memory-limit",
        args.memory_limit,
    ]
    if args.no_malloc_trim:
        command.append("--no-malloc-trim")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    subprocess.run(command, check=True, env=env)
    return json.loads(result.read_text())


# ----------------------------------------------------------------- report
def mb(n_bytes):
    return n_bytes / 1e6


def report(args, manifest, ooc, dsk):
    n, m, nnz, k = manifest["n_docs"], manifest["n_features"], manifest["nnz"], args.k
    workers_mb = " / ".join(
        f"{kb * 1024 / 1e6:.0f}" for kb in dsk["worker_peak_rss_kb"]
    )
    comm = dsk["bytes_per_iteration"]
    trim = "" if dsk["malloc_trim"] else ", no MALLOC_TRIM_THRESHOLD_"
    header = (
        "| setting | docs | terms | nnz | k | s/iteration | peak RSS client (MB) "
        "| peak RSS per worker (MB) | communication per iteration (MB) |"
    )
    rows = [
        header,
        "|" + "---|" * 9,
        f"| out-of-core (1 process, {ooc['threads']} kernel threads) | {n:,} | "
        f"{m:,} | {nnz:,} | {k} | {ooc['seconds_per_iteration']:.2f} | "
        f"{ooc['peak_rss_kb'] * 1024 / 1e6:.0f} | -- | -- |",
        f"| {N_WORKERS}-worker LocalCluster (1 thread each{trim}) | {n:,} | {m:,} | "
        f"{nnz:,} | {k} | {dsk['seconds_per_iteration']:.2f} | "
        f"{dsk['peak_rss_kb'] * 1024 / 1e6:.0f} | {workers_mb} | {mb(comm):.2f} |",
    ]
    lines = [
        f"## PLSI, out-of-core vs {N_WORKERS}-worker Dask LocalCluster",
        "",
        *rows,
        "",
        f"Data: {len(manifest['blocks'])} blocks of up to {args.block_size:,} rows; "
        f"{mb(manifest['disk_bytes']):.0f} MB on disk (uncompressed .npz), "
        f"{mb(nnz * 8):.0f} MB in memory as float32 CSR (nnz x 8 bytes); "
        f"generated in {manifest['generation_seconds']:.1f} s (not in the fits).",
        f'{args.n_iter} iterations (`tol=0`), `init="random"`, '
        f"`random_state=0`; final objective out-of-core {ooc['loss']:.6e}, "
        f"on the cluster {dsk['loss']:.6e} (relative difference "
        f"{abs(ooc['loss'] - dsk['loss']) / abs(ooc['loss']):.1e}).",
        f"Out-of-core s/iteration = (t_{args.n_iter} - t_1) / {args.n_iter - 1} "
        f"from two fits after a warm-up fit on one block "
        f"(t_1 = {ooc['fit_seconds']['1']:.2f} s, "
        f"t_{args.n_iter} = {ooc['fit_seconds'][str(args.n_iter)]:.2f} s). "
        f"Cluster s/iteration = median of the intervals between the callbacks "
        f"of consecutive iterations "
        f"({', '.join(f'{t:.2f}' for t in dsk['iteration_seconds'])} s); "
        f"the first iteration, which also loads the blocks onto the workers, "
        f"took {dsk['first_iteration_seconds']:.2f} s; the whole fit "
        f"{dsk['fit_seconds']:.2f} s.  The client process also runs the "
        f"scheduler; peak RSS is `ru_maxrss` of each process.",
        f"Machine: {os.cpu_count()} logical cores; 1-minute load average "
        f"{ooc['load_average']:.2f} before the out-of-core fits, "
        f"{dsk['load_average']:.2f} before the cluster fit.  The workers run "
        + (
            "with Dask's default `MALLOC_TRIM_THRESHOLD_=65536`, which disables "
            "glibc's dynamic mmap threshold: large temporaries are mapped afresh "
            "on every call (`--no-malloc-trim` starts them without it)."
            if dsk["malloc_trim"]
            else "without Dask's default `MALLOC_TRIM_THRESHOLD_=65536` "
            "(`--no-malloc-trim`)."
        ),
        "",
        *projection(dsk),
    ]
    return "\n".join(lines) + "\n"


def projection(dsk):
    """The scaling-projection paragraph and table, from the cluster's numbers."""
    compute = N_WORKERS * dsk["seconds_per_iteration"]
    per_worker = dsk["bytes_per_iteration"] / N_WORKERS
    comm_1 = per_worker / BANDWIDTH

    def t(p):
        return compute / p + comm_1 * p

    best = max(1, round(math.sqrt(compute / comm_1))) if comm_1 > 0 else math.inf
    lines = [
        "### Scaling projection",
        "",
        f"Assuming a network bandwidth of {BANDWIDTH / 1e9:g} GB/s into the "
        f"client and perfect division of the work, the time per iteration with "
        f"P workers is about compute/P + (bytes per worker x P) / bandwidth, "
        f"where compute = {N_WORKERS} x the measured {N_WORKERS}-worker "
        f"s/iteration = {compute:.2f} s (the work of one iteration on one core, "
        f"including the measured scheduling overhead) and bytes per worker = "
        f"{mb(per_worker):.2f} MB (topics out, statistics back: "
        f"O(k x terms), independent of the documents).  The communication term "
        f"grows with P because the client sends the topics to, and receives "
        f"the statistics from, every worker over its one link; the total is "
        f"smallest near P = sqrt(compute x bandwidth / bytes per worker) "
        f"= {best}.  The projection ignores the per-task scheduling overhead "
        f"growing with the number of blocks and workers, and the checkpoints "
        f"of the document factors (every 10 iterations by default).",
        "",
        "| workers P | compute/P (s) | communication (s) | s/iteration |",
        "|---|---|---|---|",
    ]
    for p in PROJECTED_WORKERS:
        lines.append(f"| {p} | {compute / p:.3f} | {comm_1 * p:.3f} | {t(p):.3f} |")
    return lines


# -------------------------------------------------------------------- main
def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, < 2 min")
    for name in FULL:
        parser.add_argument(
            f"--{name.replace('_', '-')}",
            type=int,
            default=None,
            help=f"default {FULL[name]:_} ({QUICK[name]:_} with --quick)",
        )
    parser.add_argument(
        "--k", type=int, default=N_TOPICS, help=f"n_components (default {N_TOPICS})"
    )
    parser.add_argument("--seed", type=int, default=0, help="corpus seed (default 0)")
    parser.add_argument(
        "--memory-limit", default="4GiB", help="per worker (default 4GiB)"
    )
    parser.add_argument(
        "--no-malloc-trim",
        action="store_true",
        help="start the workers without Dask's MALLOC_TRIM_THRESHOLD_=65536",
    )
    parser.add_argument(
        "--tmp-dir", default=None, help="where the blocks are written (temporary)"
    )
    parser.add_argument("--keep-data", action="store_true", help="keep the blocks")
    parser.add_argument(
        "--output", default=None, help="also write the Markdown report to this file"
    )
    parser.add_argument(
        "--write-doc",
        metavar="NAME",
        help="also write the report as the generated block NAME (docs/_data)",
    )
    # Hidden: the body of a fresh process.
    parser.add_argument("--child", choices=("ooc", "dask"), help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    for name, default in sizes.items():
        if getattr(args, name) is None:
            setattr(args, name, default)
    if args.n_iter < 2:
        parser.error("--n-iter must be at least 2 (time per iteration is a difference)")
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.child:
        child(args)
        return
    data_dir = tempfile.mkdtemp(prefix="bench_distributed_", dir=args.tmp_dir)
    try:
        print(
            f"Generating {args.n_docs:,} docs x {args.n_features:,} terms in blocks "
            f"of {args.block_size:,} rows into {data_dir} ...",
            flush=True,
        )
        manifest = generate_corpus(
            data_dir, args.n_docs, args.n_features, args.block_size, args.seed
        )
        print(
            f"  {manifest['nnz']:,} stored entries, "
            f"{manifest['generation_seconds']:.1f} s",
            flush=True,
        )
        print("Out-of-core fit (fresh process) ...", flush=True)
        ooc = in_fresh_process("ooc", args, data_dir)
        print(f"  {ooc['seconds_per_iteration']:.2f} s/iteration", flush=True)
        print(f"{N_WORKERS}-worker LocalCluster fit (fresh process) ...", flush=True)
        dsk = in_fresh_process("dask", args, data_dir)
        print(f"  {dsk['seconds_per_iteration']:.2f} s/iteration", flush=True)
    finally:
        if args.keep_data:
            print(f"Blocks kept in {data_dir}")
        else:
            shutil.rmtree(data_dir, ignore_errors=True)
    text = report(args, manifest, ooc, dsk)
    print()
    print(text)
    if args.output:
        Path(args.output).write_text(text)
        print(f"Written to {args.output}")
    if args.write_doc:
        from _docblocks import write_doc

        write_doc(args.write_doc, text, "docs/performance.md")


if __name__ == "__main__":
    main()
