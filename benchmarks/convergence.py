"""Does a default fit end converged?  KLNMF, PLSI and HybridNMFPLSI per solver.

For every corpus and solver: a default fit (``random_state=0``,
``split_merge=0``) gives ``n_iter_``, whether it warned
(``ConvergenceWarning``), its wall time and objective; a reference fit from
the same start with ``tol=0`` and ten times as many iterations (``10 *
n_iter_``; for the hybrid, its own rounds of ten times longer phases) gives
the objective "10 times more iterations reach", the gap to it, and from its
per-iteration objectives (`fit_callback`) the time each solver needs to come
within 0.1 % of its own long-run objective.  Times are CPU seconds of the
process (all threads), which a machine shared with other jobs inflates
less than wall time.

    python benchmarks/convergence.py --corpora classic3 cstr --out /tmp/conv.md
"""

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

import sklearn_topicfac as tf
from sklearn_topicfac.datasets import (
    load_labeled_text,
    load_mat_corpus,
    load_reuters21578,
)

# The shared corpora (``--data`` to point elsewhere).
DATA = Path("/work/shared/data")


def _cluto(name):
    z = np.load(DATA / "cluto" / f"{name}.npz")
    X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
    return X, z["y"]


CORPORA = {
    "classic3": lambda: load_mat_corpus(DATA / "classic3" / "classic3.mat")[:2],
    "cstr": lambda: load_mat_corpus(DATA / "cstr" / "cstr.mat")[:2],
    "webkb4": lambda: load_labeled_text(
        [DATA / "webkb4" / f"webkb-{part}-stemmed.txt" for part in ("train", "test")],
        drop_empty=True,
    )[:2],
    "reuters": lambda: load_reuters21578(DATA / "reuters21578")[:2],
    "re0": lambda: _cluto("re0"),
    "webace": lambda: load_mat_corpus(DATA / "webace" / "WebACE.mat")[:2],
    "20news": lambda: load_mat_corpus(DATA / "20newsgroups" / "20Newsgroups.mat")[:2],
    "tr11": lambda: _cluto("tr11"),
    "tr41": lambda: _cluto("tr41"),
}
TUNING = ["classic3", "cstr", "webkb4", "reuters", "re0"]
VALIDATION = ["webace", "20news", "tr11", "tr41"]

# (estimator, solver parameter, solvers; the first is today's algorithm)
METHODS = [
    (tf.KLNMF, "solver", ["mu", "cd"]),
    (tf.PLSI, "solver", ["em", "squarem"]),
    (tf.HybridNMFPLSI, None, [("mu", "em"), ("cd", "squarem")]),
]


def _params(Estimator, key, solver):
    if Estimator is tf.HybridNMFPLSI:
        return {"nmf_solver": solver[0], "plsi_solver": solver[1]}
    return {key: solver}


def _fit(Estimator, X, k, params, trace=None):
    est = Estimator(n_components=k, random_state=0, split_merge=0, **params)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        start = time.process_time()
        if trace is None:
            est.fit(X)
        else:
            with tf.fit_callback(lambda info: trace(info, time.process_time() - start)):
                est.fit(X)
        seconds = time.process_time() - start
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return est, seconds, warned


def measure(name, X, k, Estimator, key, solver, max_iter=None):
    params = _params(Estimator, key, solver)
    if max_iter is not None:
        params["max_iter"] = max_iter
    est, seconds, warned = _fit(Estimator, X, k, params)
    row = {
        "corpus": name,
        "estimator": Estimator.__name__,
        "solver": "/".join(solver) if isinstance(solver, tuple) else solver,
        "max_iter": est.max_iter,
        "n_iter": int(est.n_iter_),
        "warned": warned,
        "seconds": seconds,
        "loss": est.loss_,
    }
    # The reference: the same start, tol=0, ten times as many iterations
    # (the hybrid: its rounds with ten times longer phases).
    long = dict(params, tol=0)
    if Estimator is tf.HybridNMFPLSI:
        long["max_iter"] = 10 * int(max(est.phase_n_iter_))
        long["n_rounds"] = est.n_rounds_
    else:
        long["max_iter"] = 10 * est.n_iter_
    trace = []
    ref, ref_seconds, _ = _fit(
        Estimator, X, k, long, trace=lambda i, s: trace.append((i.objective, s))
    )
    row["ref_loss"] = ref.loss_
    row["ref_seconds"] = ref_seconds
    row["gap"] = (est.loss_ - ref.loss_) / ref.loss_
    # Time to within 0.1 % of the long run's objective (single runs only:
    # the hybrid's callback seconds restart with each phase).
    if Estimator is not tf.HybridNMFPLSI:
        target = ref.loss_ * (1 + 1e-3)
        hit = [s for loss, s in trace if loss <= target]
        row["time_to_0.1%"] = hit[0] if hit else None
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpora", nargs="*", default=TUNING + VALIDATION)
    parser.add_argument("--out", default="/tmp/kl-solver/convergence.jsonl")
    parser.add_argument("--data", default=str(DATA))
    args = parser.parse_args()
    globals()["DATA"] = Path(args.data)
    for name in args.corpora:
        X, y = CORPORA[name]()
        X = sp.csr_matrix(X, dtype=np.float64)
        k = len(np.unique(y))
        for Estimator, key, solvers in METHODS:
            for solver in solvers:
                row = measure(name, X, k, Estimator, key, solver)
                print(json.dumps(row), flush=True)
                with open(args.out, "a") as f:
                    f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
