"""One algorithm wherever the data live: default fits in memory, on `Blocks`
and on a dask array (without a client, and on a 2-worker local cluster).

For every estimator of the package at its defaults (``random_state=0``, k =
the number of classes) on shared corpora (the first ``--max-docs``
documents of a fixed shuffle, the terms they use), prints ``solver_`` (or
``inference_``), ``n_iter_`` and the largest relative difference of
``loss_`` between the four fits.  The hybrid and SimplexPLSA fit in memory
only (they say so).

    python benchmarks/same_everywhere.py                       # cstr, classic3
    python benchmarks/same_everywhere.py --corpora re0 tr41 --max-docs 1500
"""

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sklearn_topicfac as tf  # noqa: E402
from sklearn_topicfac.out_of_core import Blocks  # noqa: E402


def _resolved(model):
    names = [n for n in vars(model) if n.endswith("solver_") or n == "inference_"]
    return ",".join(f"{getattr(model, n)}" for n in sorted(names)) or "-"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", nargs="+", default=["cstr", "classic3"])
    parser.add_argument("--max-docs", type=int, default=1500)
    args = parser.parse_args(argv)
    import dask.array as da
    from dask.distributed import Client, LocalCluster
    from real_text import CORPORA

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True)
    print(
        f"{'corpus':10s} {'estimator':15s} {'solver':10s} iters  "
        "max |loss - loss_memory| / loss_memory  (Blocks, dask, dask+client)"
    )
    worst = 0.0
    try:
        for corpus in args.corpora:
            X, y = CORPORA[corpus]()
            rng = np.random.default_rng(0)
            keep = np.sort(rng.permutation(X.shape[0])[: args.max_docs])
            X = X[keep].tocsr().astype(np.float64)
            X = X[:, np.flatnonzero(np.asarray(X.sum(axis=0)).ravel())]
            k = len(np.unique(np.asarray(y)[keep]))
            chunks = (max(X.shape[0] // 4, 1), X.shape[1])
            for name in tf.estimators.__all__:
                Estimator = getattr(tf, name)
                if not getattr(Estimator, "_blockwise", False):
                    continue  # in memory only (it says so when given blocks)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    memory = Estimator(n_components=k, random_state=0).fit(X)
                    fits = [
                        Estimator(n_components=k, random_state=0).fit(
                            Blocks(X, block_size=chunks[0])
                        ),
                        Estimator(n_components=k, random_state=0).fit(
                            da.from_array(X, chunks=chunks, asarray=False)
                        ),
                    ]
                    with Client(cluster):
                        fits.append(
                            Estimator(n_components=k, random_state=0).fit(
                                da.from_array(X, chunks=chunks, asarray=False)
                            )
                        )
                same = all(_resolved(f) == _resolved(memory) for f in fits)
                iters = {f.n_iter_ for f in fits} | {memory.n_iter_}
                gaps = [abs(f.loss_ - memory.loss_) / abs(memory.loss_) for f in fits]
                worst = max(worst, *gaps)
                print(
                    f"{corpus:10s} {name:15s} {_resolved(memory):10s} "
                    f"{'/'.join(map(str, sorted(iters))):5s}  "
                    + "  ".join(f"{g:.1e}" for g in gaps)
                    + ("" if same else "  SOLVERS DIFFER"),
                    flush=True,
                )
    finally:
        cluster.close()
    print(f"worst relative difference of loss_: {worst:.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
