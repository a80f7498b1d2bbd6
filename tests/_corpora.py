"""Small generated corpora shared by the estimator tests (no files needed)."""

import importlib.util
from pathlib import Path

import numpy as np
import scipy.sparse as sp

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def planted_counts(n=80, m=60, k=4, seed=0, dtype=np.float64, sparse=True, length=40):
    """Poisson counts from a planted topic model: sparse topics, mixed
    documents of ``length`` words on average."""
    rng = np.random.default_rng(seed)
    theta = rng.dirichlet(np.full(k, 0.3), size=n)
    phi = rng.dirichlet(np.full(m, 0.1), size=k)
    X = rng.poisson(length * theta @ phi).astype(dtype)
    return sp.csr_matrix(X) if sparse else X


def lda_counts(n=150, m=60, k=4, seed=0, dtype=np.float64, max_length=300):
    """Counts from the LDA generative model, documents of 10 to ``max_length``
    words (CSR)."""
    rng = np.random.default_rng(seed)
    theta = rng.dirichlet(np.full(k, 0.3), size=n)
    beta = rng.dirichlet(np.full(m, 0.1), size=k)
    lengths = rng.integers(10, max_length, size=n)
    X = rng.poisson(lengths[:, None] * (theta @ beta)).astype(dtype)
    return sp.csr_matrix(X)


def collapsed_state(X, k, seed=0):
    """Random collapsed counts for ``X``: ``N_dk`` (rows summing to the
    documents' lengths) and ``N_kw``."""
    rng = np.random.default_rng(seed)
    n_d = np.asarray(X.sum(axis=1)).ravel()
    D = rng.gamma(1.0, 1.0, (X.shape[0], k))
    D = D / D.sum(axis=1, keepdims=True) * n_d[:, None]
    T = rng.gamma(1.0, 1.0, (k, X.shape[1])) * 3
    return D, T


def low_rank_counts(n_samples=40, n_features=25, rank=3, mean_count=2.0, seed=0):
    """Dense Poisson counts from a planted non-negative rank-``rank`` model."""
    rng = np.random.default_rng(seed)
    W = rng.gamma(0.5, 1.0, size=(n_samples, rank))
    H = rng.gamma(0.5, 1.0, size=(rank, n_features))
    rate = W @ H
    rate *= mean_count * n_samples * n_features / rate.sum()
    return rng.poisson(rate).astype(np.float64)


def random_start(X, k, seed=1):
    """A positive (W, H) start, the same for every estimator under test."""
    rng = np.random.default_rng(seed)
    return rng.random((X.shape[0], k)) + 0.1, rng.random((k, X.shape[1])) + 0.1


def load_file(path):
    """The module of the Python file ``path`` (a script of the repository
    outside the package: an example, a docs helper, a benchmark helper)."""
    path = Path(path)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_example(name):
    """The module ``examples/<name>.py``, imported from its file."""
    return load_file(EXAMPLES / f"{name}.py")


def planted_local_optimum():
    """EM's typical local optimum, planted: ``(corpus, phi, H0)``.

    An LDA corpus of 5 topics and count-scale topics ``H0`` where true topics
    0 and 1 share slot 0 and true topic 2 is split over slots 1 and 2;
    iterations alone stay there, one split-merge move (merge slots 1 and 2,
    split slot 0) leaves it.
    """
    corpus, _, phi = load_example("choosing_k").make_lda_corpus(
        5, tokens_per_topic=20_000, doc_length=100, n_features=300, random_state=0
    )
    c = corpus.sum() / 5
    rng = np.random.default_rng(0)
    half = [phi[2] * c / 2 * rng.uniform(0.5, 1.5, phi.shape[1]) for _ in range(2)]
    H0 = np.vstack([(phi[0] + phi[1]) * c, *half, phi[3] * c, phi[4] * c]) + 0.2
    return corpus, phi, H0


# Block files for the block-error tests: each kind with its reader.
BLOCK_READERS = {"npz": sp.load_npz, "npy": np.load}


def block_files(folder, kind, damage, n_blocks=3, rows=10, m=6, bad=1):
    """``n_blocks`` block files of ``rows`` x ``m`` counts, block ``bad`` damaged.

    ``kind`` is ``"npz"`` (``scipy.sparse.save_npz``) or ``"npy"``
    (``numpy.save``); ``damage`` is ``"truncated"`` (the first half of the
    file) or ``"corrupt"`` (the same length, a run of bytes inside
    overwritten).  Returns the paths, in order.
    """
    X = planted_counts(n=n_blocks * rows, m=m, k=2, seed=0, sparse=False)
    paths = []
    for i in range(n_blocks):
        path = Path(folder) / f"block{i}.{kind}"
        part = X[i * rows : (i + 1) * rows]
        if kind == "npz":
            sp.save_npz(path, sp.csr_matrix(part))
        else:
            np.save(path, part)
        paths.append(path)
    data = paths[bad].read_bytes()
    if damage == "truncated":
        data = data[: len(data) // 2]
    else:
        data = data[:10] + bytes(40) + data[50:]
    paths[bad].write_bytes(data)
    return paths
