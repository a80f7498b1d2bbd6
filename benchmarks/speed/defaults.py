"""Whole fits at the defaults a user runs, against scikit-learn's defaults.

Every estimator of the package fitted with ``n_components=20`` and
``random_state=0`` only (its default start, ``tol``, ``max_iter`` and
``split_merge``), on both engines, beside scikit-learn's
``NMF(beta_loss="kullback-leibler", solver="mu")`` (the peer of the NMF
family: KLNMF, NormalizedNMF, PLSI, JointNMF, HybridNMFPLSI) and
``LatentDirichletAllocation`` (the peer of LDAVI and GammaPoissonVI) at
theirs.  Wall time of the whole ``fit`` (start, iterations to ``tol``,
moves), median over interleaved repeats in one process, the iterations run,
the moves tried and accepted, and the speed-up over the peer.

Table 2 (``--only 2``): the split-merge moves on both engines, KLNMF from
one custom start, 30 iterations, ``tol=0``, with ``split_merge=3`` and
``0`` (the same fits as in issue 29's measurement).

    python benchmarks/speed/defaults.py                  # both tables
    python benchmarks/speed/defaults.py --only 1 --corpora generated
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
import numpy as np  # noqa: E402
from sklearn.decomposition import NMF, LatentDirichletAllocation  # noqa: E402

import sklearn_topicfac as tf  # noqa: E402
from sklearn_topicfac._config import numba_available  # noqa: E402

K = 20
NMF_FAMILY = ("KLNMF", "NormalizedNMF", "PLSI", "JointNMF", "HybridNMFPLSI")
LDA_FAMILY = ("LDAVI", "GammaPoissonVI")


# The parameters table 1's runs set; everything else is each one's default.
VARIED = {"scikit-learn NMF (KL, mu)": ["beta_loss", "solver"]}


def made(runner):
    """The estimator a runner of table 1 fits (recorded with the block)."""
    if runner == "scikit-learn NMF (KL, mu)":
        return NMF(K, beta_loss="kullback-leibler", solver="mu", random_state=0)
    if runner == "scikit-learn LDA":
        return LatentDirichletAllocation(K, random_state=0)
    return getattr(tf, runner.split()[0])(K, random_state=0)


def _sklearn_nmf(X):
    est = made("scikit-learn NMF (KL, mu)")
    est.fit(X)
    return est.n_iter_, None


def _sklearn_lda(X):
    est = made("scikit-learn LDA")
    est.fit(X)
    return est.n_iter_, None


def _ours(name, engine):
    def fit(X):
        with tf.config_context(backend=engine):
            est = made(name).fit(X)
        moves = getattr(est, "split_merge_moves_", [])
        accepted = sum(bool(m["accepted"]) for m in moves)
        start = est.init or est._default_init
        return est.n_iter_, (accepted, len(moves), est.split_merge, start)

    return fit


def runners(engines):
    out = {"scikit-learn NMF (KL, mu)": _sklearn_nmf}
    out["scikit-learn LDA"] = _sklearn_lda
    for name in NMF_FAMILY + LDA_FAMILY:
        for engine in engines:
            out[f"{name} {engine}"] = _ours(name, engine)
    return out


def default_rows(label, X, repeats, engines, only=None):
    """Median wall time of each runner's whole fit, interleaved repeats
    (``only``: the runners whose names start with one of these)."""
    fits = runners(engines)
    if only:
        fits = {n: f for n, f in fits.items() if n.startswith(tuple(only))}
    times = {name: [] for name in fits}
    cpu = {name: [] for name in fits}
    info = {}
    for _ in range(repeats):
        for name, fit in fits.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                start, start_cpu = time.perf_counter(), time.process_time()
                info[name] = fit(X)
                times[name].append(time.perf_counter() - start)
                cpu[name].append(time.process_time() - start_cpu)
            print(
                f"  {label} {name}: {times[name][-1]:.2f} s, "
                f"CPU {cpu[name][-1]:.2f} s, {info[name][0]} iterations",
                flush=True,
            )
    rows = []
    for name in fits:
        peer = "scikit-learn LDA" if name.split()[0] in LDA_FAMILY else None
        if name.split()[0] in NMF_FAMILY:
            peer = "scikit-learn NMF (KL, mu)"
        n_iter, moves = info[name]
        rows.append(
            {
                "corpus": label,
                "runner": name,
                "seconds": float(np.median(times[name])),
                "cpu": float(np.median(cpu[name])),
                "all": times[name],
                "n_iter": int(n_iter),
                "moves": moves,
                "peer": peer,
            }
        )
    by_name = {r["runner"]: r for r in rows}
    for r in rows:
        peer = by_name.get(r["peer"])
        r["speedup"] = peer["seconds"] / r["seconds"] if peer else float("nan")
        r["cpu_speedup"] = peer["cpu"] / r["cpu"] if peer else float("nan")
    return rows


def print_defaults(rows):
    print(
        "| corpus | runner | start | split_merge | wall s (median) | iterations "
        "| moves accepted / tried | speed-up vs scikit-learn | CPU s (median) "
        "| speed-up in CPU time | numba / NumPy |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        m = r["moves"]
        start = m[3] if m else "default"
        sm = m[2] if m else "-"
        moves = f"{m[0]} / {m[1]}" if m else "-"
        numba = numba_ratio(r, rows)
        speedup, cpu_speedup = (
            ("(peer)", "(peer)")
            if r["peer"] is None
            else (f"{r['speedup']:.2f}x", f"{r['cpu_speedup']:.2f}x")
        )
        print(
            f"| {r['corpus']} | {r['runner']} | {start} | {sm} | {r['seconds']:.2f} "
            f"| {r['n_iter']} | {moves} | {speedup} | {r['cpu']:.2f} "
            f"| {cpu_speedup} | {numba} |"
        )


def numba_ratio(row, rows):
    """NumPy's time over numba's for a numba row (above 1: numba faster)."""
    if not row["runner"].endswith(" numba"):
        return ""
    twin = row["runner"].replace(" numba", " numpy")
    for r in rows:
        if r["runner"] == twin and r["corpus"] == row["corpus"]:
            return f"{r['seconds'] / row['seconds']:.2f}x"
    return ""


def move_rows(n_docs, n_terms, repeats):
    """KLNMF, 30 iterations from one custom start, tol=0, with and without
    moves, on both engines (float32)."""
    X = corpora.lda_corpus(n_docs, n_terms).astype(np.float32)
    rng = np.random.default_rng(0)
    W0 = rng.random((n_docs, K)).astype(np.float32) + 0.1
    H0 = rng.random((K, n_terms)).astype(np.float32) + 0.1
    cases = [(e, sm) for sm in (3, 0) for e in ("numpy", "numba")]
    times = {c: [] for c in cases}
    cpu = {c: [] for c in cases}
    info = {}
    for engine in ("numpy", "numba"):  # warm: compile or load the twins
        with tf.config_context(backend=engine):
            tf.KLNMF(K, init="custom", max_iter=2, tol=0, split_merge=0).fit(
                X, W=W0, H=H0
            )
    for _ in range(repeats):
        for engine, sm in cases:
            with tf.config_context(backend=engine):
                est = tf.KLNMF(
                    K, init="custom", max_iter=30, tol=0, split_merge=sm, random_state=0
                )
                start, start_cpu = time.perf_counter(), time.process_time()
                est.fit(X, W=W0, H=H0)
                times[(engine, sm)].append(time.perf_counter() - start)
                cpu[(engine, sm)].append(time.process_time() - start_cpu)
            moves = est.split_merge_moves_
            info[(engine, sm)] = (
                sum(bool(m["accepted"]) for m in moves),
                len(moves),
                float(est.loss_history_[-1]),
            )
            print(f"  moves {engine} {sm}: {times[(engine, sm)][-1]:.2f} s", flush=True)
    print(
        f"\nKLNMF on the generated {n_docs:,} x {n_terms:,} corpus (float32, "
        f"nnz {X.nnz:,}), k = {K}, 30 iterations from one custom start, tol=0; "
        f"median of {repeats}:\n"
    )
    print(
        "| split_merge | engine | wall s (median) | CPU s (median) "
        "| moves accepted / tried | final objective | numba / NumPy (wall, CPU) |"
    )
    print("|---|---|---|---|---|---|---|")
    for engine, sm in cases:
        a, t, loss = info[(engine, sm)]
        median = float(np.median(times[(engine, sm)]))
        median_cpu = float(np.median(cpu[(engine, sm)]))
        ratio = ""
        if engine == "numba":
            ratio = (
                f"{np.median(times[('numpy', sm)]) / median:.2f}x, "
                f"{np.median(cpu[('numpy', sm)]) / median_cpu:.2f}x"
            )
        print(
            f"| {sm} | {engine} | {median:.2f} | {median_cpu:.2f} | {a} / {t} "
            f"| {loss:.6e} | {ratio} |"
        )


def _docblocks():
    """benchmarks/_docblocks.py (writes a generated block of a page)."""
    sys.path.insert(0, os.path.join(REPO, "benchmarks"))
    import _docblocks

    return _docblocks


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="12", help="which tables: 1, 2 or 12")
    parser.add_argument(
        "--corpora", nargs="*", default=["generated", "20news"], help="table 1"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--runners", nargs="*", help="table 1: only runners starting with these"
    )
    parser.add_argument(
        "--move-docs", type=int, default=8000, help="table 2: documents (terms: half)"
    )
    parser.add_argument(
        "--data-dir", default=os.path.join(os.path.dirname(REPO), "shared", "data")
    )
    parser.add_argument(
        "--write-doc",
        metavar="NAME",
        help="also write the tables as the generated block NAME (docs/_data)",
    )
    args = parser.parse_args(argv)
    printed = _docblocks().capture_stdout() if args.write_doc else None
    engines = ["numpy", "numba"] if numba_available() else ["numpy"]
    print(f"load average at start: {os.getloadavg()[0]:.1f}", flush=True)
    if "2" in args.only:
        move_rows(args.move_docs, args.move_docs // 2, args.repeats)
    ran = {}
    if "1" in args.only:
        rows = []
        for label in args.corpora:
            if label == "generated":
                X = corpora.generated("small")
                label = "generated 10k x 5k"
            else:
                X = corpora.newsgroups(args.data_dir)
                if X is None:
                    continue
                label = "20 Newsgroups"
            print(f"# {label}: {X.shape}, nnz {X.nnz:,}", flush=True)
            rows += default_rows(label, X, args.repeats, engines, args.runners)
        print()
        print_defaults(rows)
        ran = {r["runner"]: made(r["runner"]) for r in rows}
    print(f"\nload average at end: {os.getloadavg()[0]:.1f}")
    if args.write_doc:
        text = printed.copy.getvalue()
        _docblocks().write_doc(
            args.write_doc,
            _docblocks().printed_tables(text),
            "docs/performance.md",
            estimators=ran,
            at_defaults={
                r: ["n_components", "random_state", *VARIED.get(r, [])] for r in ran
            },
        )


if __name__ == "__main__":
    main()
