"""Fingerprints of fits: do two versions of the package fit exactly the same models?

For a refactoring that must not change any result (issue 28), this fits
every estimator at its defaults (``random_state=0``, ``k`` = the number of
classes) on the shared corpora, plus the paths that do not go through the
batch loop (online epochs, ``partial_fit``, a block-wise fit, restarts and
moves), and writes one SHA-256 per fit of its fitted arrays
(``components_``, ``embedding_`` or what ``transform`` gives,
``loss_history_``), bit for bit.  Run it on both versions and compare:

    python benchmarks/fit_fingerprints.py --out before.json   # old checkout
    python benchmarks/fit_fingerprints.py --out after.json    # new checkout
    python benchmarks/fit_fingerprints.py --compare before.json after.json

``--max-docs`` (default 600) subsamples each corpus (the first documents of
a fixed shuffle) to keep the run to minutes.
"""

import argparse
import hashlib
import json
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sklearn_topicfac as tf  # noqa: E402
from sklearn_topicfac.estimators import __all__ as ESTIMATORS  # noqa: E402
from sklearn_topicfac.out_of_core import Blocks  # noqa: E402


def _digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(np.asarray(a))
        h.update(str(a.dtype).encode() + str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]


def _fingerprint(model, X):
    parts = [model.components_, getattr(model, "loss_history_", [])]
    if hasattr(model, "embedding_"):
        parts.append(model.embedding_)
    parts.append(model.transform(X[:50]))
    return _digest(*parts)


def variants(name, k):
    """(label, estimator, how) for every path of ``name`` that is checked."""
    Estimator = getattr(tf, name)
    if name == "SimplexPLSA":
        # Its default keeps every axis, too large for a corpus (it says so).
        yield "defaults", Estimator(k, svd_components=k - 1, random_state=0), "fit"
        return
    yield "defaults", Estimator(n_components=k, random_state=0), "fit"
    yield (
        "random n_init=2",
        Estimator(n_components=k, init="random", n_init=2, max_iter=40, random_state=0),
        "fit",
    )
    yield (
        "moves",
        Estimator(n_components=k, split_merge=2, max_iter=60, random_state=0),
        "fit",
    )
    if name != "HybridNMFPLSI":
        yield (
            "blocks",
            Estimator(n_components=k, init="random", max_iter=30, random_state=0),
            "blocks",
        )
    if name in ("KLNMF", "NormalizedNMF", "PLSI", "LDAVI", "GammaPoissonVI"):
        yield "partial_fit", Estimator(n_components=k, random_state=0), "partial"
    if name == "LDAVI":
        yield (
            "online",
            Estimator(
                n_components=k, learning_method="online", max_iter=5, random_state=0
            ),
            "fit",
        )
        yield (
            "cvb0",
            Estimator(n_components=k, inference="cvb0", max_iter=40, random_state=0),
            "fit",
        )


def fingerprints(corpora, max_docs):
    from real_text import CORPORA

    out = {}
    for corpus in corpora:
        X, y = CORPORA[corpus]()
        rng = np.random.default_rng(0)
        keep = np.sort(rng.permutation(X.shape[0])[:max_docs])
        X = X[keep].tocsr().astype(np.float64)
        X = X[:, np.flatnonzero(np.asarray(X.sum(axis=0)).ravel())]
        k = len(np.unique(np.asarray(y)[keep]))
        for name in ESTIMATORS:
            for label, model, how in variants(name, k):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        if how == "fit":
                            model.fit(X)
                        elif how == "blocks":
                            model.fit(Blocks(X, block_size=max(X.shape[0] // 3, 1)))
                        else:
                            for start in range(0, X.shape[0], 200):
                                model.partial_fit(X[start : start + 200])
                        value = _fingerprint(model, X)
                    except (ValueError, TypeError) as error:
                        value = f"error: {type(error).__name__}: {str(error)[:60]}"
                key = f"{corpus} {name} {label}"
                out[key] = value
                print(f"{key:45s} {value}", flush=True)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out")
    parser.add_argument("--max-docs", type=int, default=600)
    parser.add_argument("--corpora", nargs="+")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args(argv)
    if args.compare:
        before, after = (json.loads(Path(p).read_text()) for p in args.compare)
        differ = sorted(key for key in before if before[key] != after.get(key))
        for key in differ:
            print(f"DIFFERENT  {key}: {before[key]} -> {after.get(key)}")
        print(f"{len(before) - len(differ)} of {len(before)} fits identical")
        return 1 if differ else 0
    from real_text import CORPORA

    result = fingerprints(args.corpora or list(CORPORA), args.max_docs)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
