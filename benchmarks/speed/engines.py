"""Both engines of the kernels (NumPy, numba) against scikit-learn and the LDA peers.

One process, the same data and the same starting factors for every runner,
medians over interleaved repeats; prints Markdown tables (the ones in
docs/performance.md, section "Engines").  From the repository root:

    python benchmarks/speed/engines.py --quick     # float32, fewer repeats
    python benchmarks/speed/engines.py             # float32 and float64
    python benchmarks/speed/engines.py --only 125  # tables 1, 2, 5 only (no LDA)

On a loaded 2-core machine ``--quick`` took over an hour, most of it the
LDA tables (3 and 4); tables 1, 2 and 5 about 15 minutes.

Four tables:

1. the NMF family per iteration against scikit-learn's KL-MU NMF, on the
   generated 10k x 5k LDA corpus and on real corpora (20 Newsgroups counts,
   Reuters-21578 top-10, WebKB4) read from ``--data-dir``;
2. each kernel's time as a multiple of its floor: the larger of bytes moved
   / measured memory bandwidth and flops / measured peak (a large matmul);
3. LDAVI at its defaults against scikit-learn's LatentDirichletAllocation at
   its defaults, the same ``max_iter``: wall time and held-out perplexity;
4. time to quality against tomotopy (and gensim): the peer trains once,
   then LDAVI fits of increasing ``max_iter`` until one reaches the peer's
   topic recovery (generated corpus) or held-out perplexity (real corpus);
5. the first-call time of each compiled twin, with numba's cache empty and
   filled (printed first).

Peers are the ``bench`` extra, numba the ``fast`` extra.
"""

import argparse
import os
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, REPO)

import corpora  # noqa: E402
import lda  # noqa: E402
import machine  # noqa: E402
import nmf  # noqa: E402
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from measure import interleaved, median  # noqa: E402
from scipy.optimize import linear_sum_assignment  # noqa: E402
from sklearn.decomposition import LatentDirichletAllocation  # noqa: E402

import sklearn_topicfac  # noqa: E402
from sklearn_topicfac import KLNMF, LDAVI, PLSI, JointNMF, config_context  # noqa: E402
from sklearn_topicfac import kernels as K  # noqa: E402
from sklearn_topicfac._config import numba_available  # noqa: E402
from sklearn_topicfac.datasets import (  # noqa: E402
    load_labeled_text,
    load_mat_corpus,
    load_reuters21578,
)
from sklearn_topicfac.kernels import _parallel  # noqa: E402
from sklearn_topicfac.metrics import npmi_coherence  # noqa: E402

K_TOPICS = 20
ENGINES = ["numpy", "numba"] if numba_available() else ["numpy"]


# ---------------------------------------------------------------- corpora
def _counts(X):
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sum_duplicates()
    X.eliminate_zeros()
    X = X[np.diff(X.indptr) > 0]
    return X[:, np.asarray(X.sum(axis=0)).ravel() > 0].tocsr()


def real_corpora(data_dir):
    """The real corpora found under ``data_dir``: name -> CSR counts."""
    loaders = {
        "20 Newsgroups": lambda d: load_mat_corpus(
            os.path.join(d, "20newsgroups", "20Newsgroups.mat")
        )[0],
        "Reuters-21578 (10)": lambda d: load_reuters21578(
            os.path.join(d, "reuters21578")
        )[0],
        "WebKB4": lambda d: load_labeled_text(
            [
                os.path.join(d, "webkb4", f"webkb-{p}-stemmed.txt")
                for p in ("train", "test")
            ],
            drop_empty=True,
        )[0],
    }
    found = {}
    for name, load in loaders.items():
        try:
            found[name] = _counts(load(data_dir))
        except (OSError, ValueError) as exc:
            print(f"skipping {name}: {exc}", file=sys.stderr)
    return found


def planted_topics(n_docs, n_terms, n_topics=20, seed=0):
    """The topics ``beta`` that `corpora.lda_corpus` drew (same generator)."""
    rng = np.random.default_rng(seed)
    rng.dirichlet(np.full(n_topics, 0.1), size=n_docs)
    return rng.dirichlet(np.full(n_terms, 0.05), size=n_topics)


def topic_recovery(topics, truth):
    """Mean Hellinger affinity of the matched topics (1 = the planted topics)."""
    p = np.sqrt(topics / topics.sum(axis=1, keepdims=True))
    q = np.sqrt(truth / truth.sum(axis=1, keepdims=True))
    affinity = q @ p.T
    rows, cols = linear_sum_assignment(-affinity)
    return float(affinity[rows, cols].mean())


# ------------------------------------------------------------- 1. per iteration
def nmf_rows(name, X, dtype, n_iter, repeats):
    X = X.astype(dtype)
    W0, H0 = nmf.start(X, K_TOPICS)
    calls = {"scikit-learn": lambda: nmf.sklearn_nmf(X, W0, H0, n_iter)}
    for engine in ENGINES:
        for cls in (KLNMF, PLSI, JointNMF):

            def fit(cls=cls, engine=engine):
                with config_context(backend=engine):
                    return cls(
                        K_TOPICS, init="custom", max_iter=n_iter, tol=0, split_merge=0
                    ).fit(X, W=W0, H=H0)

            calls[f"{cls.__name__} {engine}"] = fit
    fit = calls[f"KLNMF {ENGINES[-1]}"]
    fit()  # compile (or load from numba's cache) outside the timing
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = interleaved(calls, repeats)
    ms = {key: 1e3 * median([r.wall for r in rs]) / n_iter for key, rs in runs.items()}
    row = {"corpus": name, "shape": f"{X.shape[0]:,} x {X.shape[1]:,}", "nnz": X.nnz}
    row["dtype"] = np.dtype(dtype).name
    row["sklearn"] = ms["scikit-learn"]
    for key, value in ms.items():
        if key != "scikit-learn":
            row[key] = (value, ms["scikit-learn"] / value)
    return row


def print_nmf(rows):
    keys = [k for k in rows[0] if k not in ("corpus", "shape", "nnz", "dtype")][1:]
    print("| corpus | docs x terms | nnz | dtype | scikit-learn ms/iter | ", end="")
    print(" | ".join(keys) + " |")
    print("|---" * (5 + len(keys)) + "|")
    for r in rows:
        cells = [f"{r[k][0]:,.1f} ({r[k][1]:.1f}x)" for k in keys]
        print(
            f"| {r['corpus']} | {r['shape']} | {r['nnz']:,} | {r['dtype']} | "
            f"{r['sklearn']:,.1f} | " + " | ".join(cells) + " |"
        )


# ------------------------------------------------------------------ 2. floors
def peak_gflops(dtype, n=2048, repeats=3):
    """Measured peak: a large matmul on all cores (BLAS), in GFLOP/s."""
    a = np.ones((n, n), dtype=dtype)
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        a @ a
        best = min(best, time.perf_counter() - t)
    return 2 * n**3 / best / 1e9


def _median_ms(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1e3 * float(np.median(times))


def kernel_rows(X, dtype, repeats, bandwidth, gflops):
    """Each kernel on each engine: ms, floor ms, multiple of the floor."""
    X = X.astype(dtype)
    W, H = nmf.start(X, K_TOPICS)
    k, s, nnz = K_TOPICS, np.dtype(dtype).itemsize, X.nnz
    n, m = X.shape
    R = K.ratio_at_nonzeros(X, W, H)
    B = H / H.sum(axis=1, keepdims=True)
    gamma = W + 1.0
    # bytes: the stored entries (value + 4-byte index) read, the results
    # written, the factors read once (the columns of H stay in cache).
    entries = nnz * (s + 4)
    kernels = {
        "ratio_at_nonzeros": (
            lambda: K.ratio_at_nonzeros(X, W, H),
            entries + nnz * s + (n + m) * k * s,
            2 * nnz * k,
        ),
        "mu_doc_step (R, W_new, R_new)": (
            lambda: K.mu_doc_step(X, W, H),
            entries + 2 * nnz * s + 2 * n * k * s + m * k * s,
            6 * nnz * k,
        ),
        "ratio_log_sums_at_nonzeros (objective's sums)": (
            lambda: K.ratio_log_sums_at_nonzeros(X, W, H),
            entries + (n + m) * k * s,
            2 * nnz * k,
        ),
        "mu_doc_pass (W_new, R_new, sums)": (
            lambda: K.mu_doc_pass(X, W, H),
            entries + nnz * s + 2 * n * k * s + m * k * s,
            6 * nnz * k,
        ),
        "em_doc_pass (W * (R @ H.T), R, sums)": (
            lambda: K.em_doc_pass(X, W, H),
            entries + nnz * s + 2 * n * k * s + m * k * s,
            4 * nnz * k,
        ),
        "transposed_product W.T @ R (SciPy on both)": (
            lambda: K.transposed_product(W, R),
            entries + n * k * s + m * k * s,
            2 * nnz * k,
        ),
        "lda_e_step, 1 sweep": (
            lambda: K.lda_e_step(X, gamma, B, 0.05, 1, 0.0),
            entries + nnz * s + (n + m) * k * s,
            6 * nnz * k,
        ),
    }
    # Warm every kernel on both engines first: the first kernel timed ran
    # twice as slow for its first ~10 calls (thread start-up, fresh pages),
    # which a single warm-up call inside `_median_ms` did not absorb.
    for fn, _, _ in kernels.values():
        for engine in ENGINES:
            with config_context(backend=engine):
                for _ in range(repeats):
                    fn()
    rows = []
    for name, (fn, n_bytes, flops) in kernels.items():
        floor = 1e3 * max(n_bytes / (bandwidth * 1e9), flops / (gflops * 1e9))
        row = {"kernel": name, "dtype": np.dtype(dtype).name, "floor": floor}
        for engine in ENGINES:
            with config_context(backend=engine):
                ms = _median_ms(fn, repeats)
            row[engine] = (ms, ms / floor)
        rows.append(row)
    return rows


def print_kernels(rows):
    head = " | ".join(f"{e} ms (x floor)" for e in ENGINES)
    print(f"| kernel | dtype | floor ms | {head} |")
    print("|---" * (3 + len(ENGINES)) + "|")
    for r in rows:
        cells = " | ".join(f"{r[e][0]:.2f} ({r[e][1]:.1f}x)" for e in ENGINES)
        print(f"| {r['kernel']} | {r['dtype']} | {r['floor']:.2f} | {cells} |")


# --------------------------------------------------------------------- 3. LDA
def lda_rows(name, X, max_iter, repeats):
    train, test = corpora.held_out_split(X)
    observed, held = corpora.completion_split(test)
    calls = {
        "scikit-learn LDA": lambda: (
            LatentDirichletAllocation(K_TOPICS, max_iter=max_iter, random_state=0)
            .fit(train)
            .components_
        )
    }
    for engine in ENGINES:

        def fit(engine=engine):
            with config_context(backend=engine):
                return LDAVI(K_TOPICS, max_iter=max_iter, random_state=0).fit(train)

        calls[f"LDAVI {engine}"] = lambda fit=fit: fit().components_
    with config_context(backend=ENGINES[-1]):
        LDAVI(K_TOPICS, max_iter=1, random_state=0).fit(train[:200])  # compile
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = interleaved(calls, repeats)
    ref = median([r.wall for r in runs["scikit-learn LDA"]])
    rows = []
    for key, rs in runs.items():
        wall = median([r.wall for r in rs])
        p = lda.completion_perplexity(rs[-1].result, observed, held)
        rows.append((name, key, wall, ref / wall, p))
    return rows


def print_lda(rows, max_iter):
    print(f"| corpus | runner (max_iter={max_iter}) | wall s | speed-up | perplexity |")
    print("|---|---|---|---|---|")
    for name, key, wall, up, p in rows:
        print(f"| {name} | {key} | {wall:.2f} | {up:.2f}x | {p:,.1f} |")


# --------------------------------------------------------- 4. time to quality
def _ldavi_trace(train, score, target, checkpoints, engine, higher_is_better, npmi):
    trace = []
    for epochs in checkpoints:
        with config_context(backend=engine), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter()
            topics = LDAVI(K_TOPICS, max_iter=epochs, random_state=0).fit(train)
            wall = time.perf_counter() - t
        value = score(topics.components_)
        trace.append((epochs, wall, value, npmi(topics.components_)))
        if (value >= target) if higher_is_better else (value <= target):
            break
    return trace


def quality_rows(name, X, truth, peer_iters, gensim_passes, checkpoints):
    """Time to the peers' quality: recovery (with ``truth``) or perplexity.

    On a real corpus (no ``truth``) the NPMI coherence of each topic's top 10
    terms on the training documents is reported beside the perplexity (the
    time to the target is judged on the perplexity).
    """
    if truth is not None:
        train = X

        def score(topics):
            return topic_recovery(topics, truth)

        def npmi(topics):
            return float("nan")

        higher = True
    else:
        train, test = corpora.held_out_split(X)
        observed, held = corpora.completion_split(test)

        def score(topics):
            return lda.completion_perplexity(topics, observed, held)

        def npmi(topics):
            return float(np.mean(npmi_coherence(topics, train, n_top=10)))

        higher = False
    peers = lda.available_peers()
    threads = _parallel.N_THREADS
    runs = []
    if peers.get("tomotopy"):
        docs = lda.tomotopy_docs(train)
        t = time.perf_counter()
        topics = lda.tomotopy_lda(docs, train.shape[1], K_TOPICS, peer_iters, threads)
        runs.append(
            (f"tomotopy ({peer_iters} sweeps)", time.perf_counter() - t, topics)
        )
    if peers.get("gensim") and gensim_passes:
        corpus = lda.gensim_corpus(train)
        t = time.perf_counter()
        topics = lda.gensim_lda(corpus, train.shape[1], K_TOPICS, gensim_passes)
        runs.append(
            (f"gensim ({gensim_passes} passes)", time.perf_counter() - t, topics)
        )
    rows = []
    for peer, wall, topics in runs:
        target = score(topics)
        # The fastest engine only: the target is set for it.
        engine = ENGINES[-1]
        trace = _ldavi_trace(train, score, target, checkpoints, engine, higher, npmi)
        epochs, ours, value, ours_npmi = trace[-1]
        met = value >= target if higher else value <= target
        rows.append(
            (name, peer, wall, target, npmi(topics), engine, epochs, ours, value,
             ours_npmi, met)
        )  # fmt: skip
    return rows, ("topic recovery" if truth is not None else "perplexity")


def print_quality(rows, what):
    print(
        f"| corpus | peer | peer s | peer {what} | peer NPMI | LDAVI engine | "
        f"max_iter | LDAVI s | LDAVI {what} | LDAVI NPMI | reached |"
    )
    print("|---" * 11 + "|")
    for row in rows:
        name, peer, wall, target, peer_npmi, engine, epochs, ours, value = row[:9]
        ours_npmi, met = row[9:]
        peer_npmi, ours_npmi = (
            "—" if np.isnan(v) else f"{v:+.3f}" for v in (peer_npmi, ours_npmi)
        )
        print(
            f"| {name} | {peer} | {wall:.2f} | {target:.4g} | {peer_npmi} | "
            f"{engine} | {epochs} | {ours:.2f} | {value:.4g} | {ours_npmi} | "
            f"{'yes' if met else 'no'} |"
        )


# ------------------------------------------------------------- 5. compile time
_FIRST_CALLS = """
import time
t = time.perf_counter()
import numpy as np, scipy.sparse as sp
from sklearn_topicfac import config_context, kernels as K
X = sp.random(200, 100, density=0.1, format="csr", random_state=0)
W, H = np.random.rand(200, 5) + 0.1, np.random.rand(5, 100) + 0.1
with config_context(backend="numpy"):
    R = K.ratio_at_nonzeros(X, W, H)
calls = {
    "ratio_at_nonzeros": lambda: K.ratio_at_nonzeros(X, W, H),
    "mu_doc_step": lambda: K.mu_doc_step(X, W, H),
    "mu_doc_pass": lambda: K.mu_doc_pass(X, W, H),
    "em_doc_pass": lambda: K.em_doc_pass(X, W, H),
    "ratio_log_sums_at_nonzeros": lambda: K.ratio_log_sums_at_nonzeros(X, W, H),
    "mu_fold_in": lambda: K.mu_fold_in(X, H, W, 10, 1e-4),
    "lda_e_step": lambda: K.lda_e_step(X, W, H, 0.1, 10, 1e-3),
}
print("import", time.perf_counter() - t)
with config_context(backend="numba"):
    for name, fn in calls.items():
        t = time.perf_counter()
        fn()
        print(name, time.perf_counter() - t)
"""


def compile_rows():
    """First call of each twin (float64) in a fresh process: with numba's
    cache empty (compile) and then filled (load)."""
    import subprocess
    import tempfile

    env = dict(os.environ, PYTHONPATH=REPO)
    rows = {}
    with tempfile.TemporaryDirectory() as cache:
        env["NUMBA_CACHE_DIR"] = cache
        for state in ("empty cache", "cached"):
            out = subprocess.run(
                [sys.executable, "-c", _FIRST_CALLS],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            for line in out.strip().splitlines():
                name, seconds = line.rsplit(" ", 1)
                rows.setdefault(name, {})[state] = float(seconds)
    print("| first call (float64) | empty numba cache s | cached s |")
    print("|---|---|---|")
    for name, times in rows.items():
        print(f"| {name} | {times['empty cache']:.2f} | {times['cached']:.2f} |")
    total = {s: sum(t[s] for n, t in rows.items() if n != "import") for s in times}
    print(f"| all the twins | {total['empty cache']:.2f} | {total['cached']:.2f} |")


# ---------------------------------------------------------------------- main
def _docblocks():
    """benchmarks/_docblocks.py (writes a generated block of a page)."""
    sys.path.insert(0, os.path.join(REPO, "benchmarks"))
    import _docblocks

    return _docblocks


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="float32, fewer runs")
    parser.add_argument(
        "--data-dir",
        default=os.path.join(REPO, "..", "shared", "data"),
        help="where the real corpora are (default ../shared/data)",
    )
    parser.add_argument("--only", default="12345", help="which tables, e.g. 12")
    parser.add_argument(
        "--write-doc",
        metavar="NAME",
        help="also write the tables as the generated block NAME (docs/_data)",
    )
    args = parser.parse_args(argv)
    printed = _docblocks().capture_stdout() if args.write_doc else None
    quick = args.quick
    dtypes = [np.float32] if quick else [np.float32, np.float64]
    print(f"sklearn_topicfac from {os.path.dirname(sklearn_topicfac.__file__)}")
    print(f"machine: {machine.describe()}; load average {machine.load_average()}")
    print(f"engines: {ENGINES}; kernel threads {_parallel.N_THREADS}; k={K_TOPICS}")
    n_docs, n_terms = corpora.SIZES["small"]
    generated = corpora.lda_corpus(n_docs, n_terms)
    real = real_corpora(args.data_dir)
    everything = {"generated 10k x 5k": generated, **real}
    if "5" in args.only and numba_available():
        print("\n### First-call time of the compiled twins\n")
        compile_rows()
    if "1" in args.only:
        print("\n### NMF family per iteration against scikit-learn's KL-MU NMF\n")
        rows = [
            nmf_rows(name, X, dtype, 3 if quick else 5, 2 if quick else 3)
            for name, X in everything.items()
            for dtype in dtypes
        ]
        print_nmf(rows)
    if "2" in args.only:
        bw = machine.memory_bandwidth(1 << 28 if quick else 1 << 30)
        bandwidth = bw["copy"][1]
        print("\n### Kernels as multiples of their floor (generated 10k x 5k)\n")
        rows = []
        for dtype in dtypes:
            gflops = peak_gflops(dtype)
            print(
                f"{np.dtype(dtype).name}: bandwidth {bandwidth:.1f} GB/s (copy, "
                f"all threads), peak {gflops:.1f} GFLOP/s (matmul)"
            )
            rows += kernel_rows(generated, dtype, 3 if quick else 7, bandwidth, gflops)
        print()
        print_kernels(rows)
    if "3" in args.only:
        max_iter = 10  # scikit-learn's default max_iter
        print("\n### LDAVI against scikit-learn's LDA, both at their defaults\n")
        rows = []
        for name in ["generated 10k x 5k", "20 Newsgroups"]:
            if name in everything:
                rows += lda_rows(name, everything[name], max_iter, 1 if quick else 2)
        print_lda(rows, max_iter)
    if "4" in args.only:
        print("\n### Time to the quality of tomotopy and gensim\n")
        checkpoints = [5, 10, 20, 40, 80]
        truth = planted_topics(n_docs, n_terms)
        rows, what = quality_rows(
            "generated 10k x 5k", generated, truth, 200, None if quick else 5,
            checkpoints,
        )  # fmt: skip
        print_quality(rows, what)
        if "20 Newsgroups" in real:
            print()
            rows, what = quality_rows(
                "20 Newsgroups", real["20 Newsgroups"], None, 200,
                None if quick else 5, checkpoints,
            )  # fmt: skip
            print_quality(rows, what)
    if args.write_doc:
        text = printed.copy.getvalue()
        _docblocks().write_doc(
            args.write_doc, _docblocks().printed_tables(text), "docs/performance.md"
        )


if __name__ == "__main__":
    main()
