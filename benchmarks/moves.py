"""What the split-merge moves cost and what they earn, per estimator and corpus.

For every count estimator at its defaults (``random_state`` and ``k`` = the
number of classes only) and the nine labeled corpora of ``../shared/data``,
two fits side by side in one process: with ``split_merge=3`` (the moves)
and with ``split_merge=0`` (none).  Per fit pair:

- the moves tried and accepted (``split_merge_moves_``);
- the final objective of both fits and the relative gain of the moves,
  ``(D_0 - D_3) / |D_0|`` (positive: the moves ended lower);
- the clustering accuracy of both against the labels (each document's
  cluster is the argmax of its topic proportions);
- the wall time of both fits and the share of the ``split_merge=3`` fit's
  wall time spent in the moves (proposals and trials; timed around
  ``engine.moves.split_merge``).

The corpora are split in a tuning set (the decision is made on it) and a
validation set (it confirms); the last lines give, per estimator, the worst
case over each set.  ``--max-docs`` subsamples large corpora (documents
drawn at random, fixed seed).  Absolute times are noisy on a shared
machine: read the shares and ratios.

    python benchmarks/moves.py                      # all nine corpora
    python benchmarks/moves.py --only classic3 cstr --estimators KLNMF PLSI
"""

import argparse
import importlib
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import sklearn_topicfac as tf
from sklearn_topicfac.datasets import (
    load_labeled_text,
    load_mat_corpus,
    load_reuters21578,
)
from sklearn_topicfac.metrics import clustering_accuracy

# The module that makes the moves of a fit.
engine_fit = importlib.import_module("sklearn_topicfac.engine.fitting")

# The shared corpora: ``--data-dir``, by default ../shared/data beside the repository.
DATA_DIR = [Path(__file__).resolve().parents[2] / "shared" / "data"]


def _path(*parts):
    return str(DATA_DIR[0].joinpath(*parts))


def _cluto(name):
    z = np.load(_path("cluto", f"{name}.npz"))
    X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
    return X, z["y"]


CORPORA = {
    "classic3": lambda: load_mat_corpus(_path("classic3", "classic3.mat"))[:2],
    "cstr": lambda: load_mat_corpus(_path("cstr", "cstr.mat"))[:2],
    "webkb4": lambda: load_labeled_text(
        [_path("webkb4", f"webkb-{part}-stemmed.txt") for part in ("train", "test")],
        drop_empty=True,
    )[:2],
    "reuters10": lambda: load_reuters21578(_path("reuters21578"))[:2],
    "re0": lambda: _cluto("re0"),
    "webace": lambda: load_mat_corpus(_path("webace", "WebACE.mat"))[:2],
    "20news": lambda: load_mat_corpus(_path("20newsgroups", "20Newsgroups.mat"))[:2],
    "tr11": lambda: _cluto("tr11"),
    "tr41": lambda: _cluto("tr41"),
}
TUNING = ("classic3", "cstr", "webkb4", "reuters10", "re0")
VALIDATION = ("webace", "20news", "tr11", "tr41")

ESTIMATORS = (
    "KLNMF",
    "NormalizedNMF",
    "PLSI",
    "JointNMF",
    "LDAVI",
    "GammaPoissonVI",
    "HybridNMFPLSI",
)


def load(name, max_docs, seed=0):
    """``(X, y)`` as float64 CSR without empty documents, at most ``max_docs``."""
    X, y = CORPORA[name]()
    X = sp.csr_matrix(X, dtype=np.float64)
    y = np.asarray(y)
    keep = np.diff(X.indptr) > 0
    X, y = X[keep], y[keep]
    if max_docs and X.shape[0] > max_docs:
        rows = np.sort(np.random.default_rng(seed).permutation(X.shape[0])[:max_docs])
        X, y = X[rows], y[rows]
    X = X[:, np.flatnonzero(np.asarray(X.sum(axis=0)).ravel() > 0)].tocsr()
    return X, y


class MoveClock:
    """Wall time spent in ``engine.fitting.split_merge`` while installed."""

    def __init__(self):
        self.seconds = 0.0
        self._original = engine_fit.split_merge

    def __enter__(self):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return self._original(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        engine_fit.split_merge = timed
        return self

    def __exit__(self, *exc):
        engine_fit.split_merge = self._original


def one_fit(name, X, y, k, split_merge, seed):
    # LDAVI's moves are the mean-field VB's: CVB0, its default since issue
    # 26, makes none.
    extra = {"inference": "vb"} if name == "LDAVI" else {}
    est = getattr(tf, name)(
        n_components=k, random_state=seed, split_merge=split_merge, **extra
    )
    with MoveClock() as clock, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        est.fit(X)
        wall = time.perf_counter() - start
    labels = np.argmax(est.topic_proportions(X), axis=1)
    moves = getattr(est, "split_merge_moves_", [])
    return {
        "wall": wall,
        "moves_s": clock.seconds,
        "objective": float(est.loss_history_[-1]),
        "n_iter": int(est.n_iter_),
        "accuracy": float(clustering_accuracy(y, labels)),
        "tried": len(moves),
        "accepted": sum(bool(m["accepted"]) for m in moves),
    }


def measure(corpora, estimators, seed, max_docs, out):
    rows = []
    for corpus in corpora:
        X, y = load(corpus, max_docs)
        k = int(np.unique(y).size)
        print(
            f"# {corpus}: {X.shape[0]} x {X.shape[1]}, nnz {X.nnz}, k = {k}, "
            f"load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        for name in estimators:
            # Interleaved: the fit with moves, then the one without.
            with_moves = one_fit(name, X, y, k, 3, seed)
            without = one_fit(name, X, y, k, 0, seed)
            row = {
                "corpus": corpus,
                "estimator": name,
                "shape": list(X.shape),
                "k": k,
                "moves": with_moves,
                "none": without,
            }
            rows.append(row)
            print(format_row(row), flush=True)
            if out:
                with open(out, "a") as fh:
                    fh.write(json.dumps(row) + "\n")
    return rows


def gain(row):
    d0, d3 = row["none"]["objective"], row["moves"]["objective"]
    return (d0 - d3) / abs(d0)


def share(row):
    return row["moves"]["moves_s"] / row["moves"]["wall"]


HEADER = (
    "| corpus | estimator | moves accepted / tried | objective gain of the moves "
    "| accuracy, moves | accuracy, none | wall s, moves | wall s, none "
    "| moves' share of the fit |\n|---|---|---|---|---|---|---|---|---|"
)


def format_row(row):
    m, n = row["moves"], row["none"]
    return (
        f"| {row['corpus']} | {row['estimator']} | {m['accepted']} / {m['tried']} "
        f"| {100 * gain(row):+.3f} % | {m['accuracy']:.3f} | {n['accuracy']:.3f} "
        f"| {m['wall']:.2f} | {n['wall']:.2f} | {100 * share(row):.0f} % |"
    )


def summary(rows):
    """Per estimator and set: accepted moves, the best and worst gain in
    objective and accuracy, and the largest share of the fit in moves."""
    lines = [
        "| estimator | set | corpora | moves accepted / tried "
        "| objective gain, min .. max | accuracy gain, min .. max "
        "| moves' share of the fit, worst |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in ESTIMATORS:
        for label, names in (("tuning", TUNING), ("validation", VALIDATION)):
            sel = [r for r in rows if r["estimator"] == name and r["corpus"] in names]
            if not sel:
                continue
            acc = [r["moves"]["accuracy"] - r["none"]["accuracy"] for r in sel]
            gains = [100 * gain(r) for r in sel]
            lines.append(
                f"| {name} | {label} | {len(sel)} "
                f"| {sum(r['moves']['accepted'] for r in sel)} / "
                f"{sum(r['moves']['tried'] for r in sel)} "
                f"| {min(gains):+.3f} .. {max(gains):+.3f} % "
                f"| {min(acc):+.3f} .. {max(acc):+.3f} "
                f"| {100 * max(share(r) for r in sel):.0f} % |"
            )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=list(TUNING + VALIDATION))
    parser.add_argument("--estimators", nargs="*", default=list(ESTIMATORS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-docs", type=int, default=0)
    parser.add_argument(
        "--data-dir",
        default=str(DATA_DIR[0]),
        help="the shared corpora (default: %(default)s)",
    )
    parser.add_argument("--out", help="append each row as JSON to this file")
    parser.add_argument("--table", help="only print the tables of a JSON file")
    parser.add_argument(
        "--write-doc",
        metavar="NAME",
        help="also write the tables as the generated block NAME (docs/_data)",
    )
    args = parser.parse_args(argv)
    DATA_DIR[0] = Path(args.data_dir)
    if args.table:
        with open(args.table) as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
    else:
        print(f"load average at start: {os.getloadavg()[0]:.1f}")
        rows = measure(args.only, args.estimators, args.seed, args.max_docs, args.out)
    print()
    print(HEADER)
    for row in rows:
        print(format_row(row))
    print()
    print(summary(rows))
    if args.write_doc:
        from _docblocks import write_doc

        table = "\n".join([HEADER, *map(format_row, rows)])
        write_doc(args.write_doc, table, "docs/performance.md")
        write_doc(f"{args.write_doc}_summary", summary(rows), "docs/performance.md")


if __name__ == "__main__":
    main()
