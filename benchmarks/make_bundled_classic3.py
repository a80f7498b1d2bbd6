"""Rebuild ``sklearn_topicfac/data/classic3.npz`` from the CoClust ``classic3.mat``.

The bundled file is a lossless, compact re-encoding of the MATLAB file shipped
with the CoClust repository (``franrole/cclust_package``, ``datasets/classic3.mat``).
Running this script again on the same ``.mat`` file yields arrays identical to
the bundled ones (the zip container itself embeds timestamps, so the bytes of
the ``.npz`` differ between runs; the printed content digest does not).

Usage::

    python benchmarks/make_bundled_classic3.py [path/to/classic3.mat] [-o OUT]
"""

import argparse
import hashlib
import sys
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MAT = REPO_ROOT.parent / "shared" / "data" / "classic3" / "classic3.mat"
DEFAULT_OUT = REPO_ROOT / "sklearn_topicfac" / "data" / "classic3.npz"

EXPECTED_SHAPE = (3891, 4303)
N_CLASSES = 3


def _cell_to_strings(cell):
    """Convert a MATLAB (n, 1) cell array of char arrays to a list of str."""
    # scipy represents an empty MATLAB string as a zero-size array, which has
    # no element 0, so handle it explicitly instead of crashing on it.
    return [str(item[0]) if item.size else "" for item in cell.ravel()]


def convert(mat_path):
    """Read ``classic3.mat`` and return the arrays to store, after validation.

    Parameters
    ----------
    mat_path : path-like
        Location of the CoClust ``classic3.mat`` file.

    Returns
    -------
    arrays : dict of str to ndarray
        ``data``, ``indices``, ``indptr``, ``shape`` (the CSR matrix),
        ``labels`` and ``vocabulary``.
    """
    mat = scipy.io.loadmat(mat_path)
    counts = scipy.sparse.csr_matrix(mat["A"])
    counts.sum_duplicates()
    counts.eliminate_zeros()
    counts.sort_indices()

    if counts.shape != EXPECTED_SHAPE:
        raise ValueError(f"unexpected matrix shape {counts.shape}")
    # The narrow dtypes below are only lossless if the values fit; check rather
    # than silently wrap around.
    if not np.array_equal(counts.data, np.round(counts.data)):
        raise ValueError("term counts are not integers")
    if counts.data.min() < 1 or counts.data.max() > np.iinfo(np.uint8).max:
        raise ValueError("term counts do not fit in uint8")
    if counts.shape[1] > np.iinfo(np.uint16).max + 1:
        raise ValueError("column indices do not fit in uint16")

    labels = np.asarray(mat["labels"]).ravel()
    if labels.shape[0] != counts.shape[0]:
        raise ValueError("labels and documents differ in number")
    if not np.isin(labels, np.arange(N_CLASSES)).all():
        raise ValueError(f"labels outside 0..{N_CLASSES - 1}")

    vocabulary = [term.strip() for term in _cell_to_strings(mat["ms"])]
    if len(vocabulary) != counts.shape[1]:
        raise ValueError("vocabulary and matrix columns differ in number")
    if len(set(vocabulary)) != len(vocabulary):
        raise ValueError("vocabulary terms are not unique after stripping")
    if not all(vocabulary):
        raise ValueError("vocabulary contains an empty term")

    return {
        "data": counts.data.astype(np.uint8),
        "indices": counts.indices.astype(np.uint16),
        "indptr": counts.indptr.astype(np.int32),
        "shape": np.asarray(counts.shape, dtype=np.int32),
        "labels": labels.astype(np.uint8),
        "vocabulary": np.asarray(vocabulary, dtype=np.str_),
    }


def content_digest(arrays):
    """SHA-256 over array names, dtypes, shapes and bytes (stable across runs)."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}:{array.dtype.str}:{array.shape};".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "mat_path",
        nargs="?",
        type=Path,
        default=DEFAULT_MAT,
        help="CoClust classic3.mat (default: ../shared/data/classic3/classic3.mat "
        "relative to the repository root)",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=DEFAULT_OUT,
        help="where to write the .npz (default: the bundled package data file)",
    )
    args = parser.parse_args(argv)

    arrays = convert(args.mat_path)
    np.savez_compressed(args.output, **arrays)

    # Reload what was written so a broken write is caught here, not by users.
    with np.load(args.output, allow_pickle=False) as stored:
        if content_digest(dict(stored)) != content_digest(arrays):
            raise RuntimeError("round trip through the .npz changed the arrays")

    print(f"wrote {args.output} ({args.output.stat().st_size:,} bytes)")
    print(
        f"shape={tuple(arrays['shape'].tolist())} nnz={arrays['data'].size:,} "
        f"tokens={int(arrays['data'].sum(dtype=np.int64)):,} "
        f"class sizes={np.bincount(arrays['labels']).tolist()}"
    )
    print(f"content sha256={content_digest(arrays)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
