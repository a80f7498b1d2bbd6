"""KL-NMF family: our estimators against scikit-learn's KL-MU NMF and plain NumPy."""

import numpy as np
import scipy.sparse as sp
from measure import interleaved, median, traced_peak
from sklearn.decomposition import NMF

from sklearn_topicfac import KLNMF, PLSI, JointNMF, NormalizedNMF
from sklearn_topicfac import kernels as K
from sklearn_topicfac.kernels import (
    _parallel,
    kl_divergence,
    kl_divergence_from_ratio,
    products,
)

OURS = {
    "KLNMF": KLNMF,
    "NormalizedNMF": NormalizedNMF,
    "JointNMF": JointNMF,
    "PLSI": PLSI,
}


def start(X, k, seed=0):
    """Random count-scale start (scikit-learn's scaling), shared by every run."""
    rng = np.random.default_rng(seed)
    n, m = X.shape
    avg = np.sqrt(X.sum() / (n * m * k))
    W = avg * np.abs(rng.standard_normal((n, k)))
    H = avg * np.abs(rng.standard_normal((k, m)))
    return W.astype(X.dtype), H.astype(X.dtype)


# -------------------------------------------------- plain NumPy/SciPy peers
def plain_sampled_product(rows, cols, W, H):
    """``W @ H`` at the entries ``(rows, cols)`` the way scikit-learn does it.

    Gather a row of ``W`` and a column of ``H`` per entry, multiply and sum,
    in batches of ``nnz / k`` entries (``sklearn.decomposition._nmf.
    _special_sparse_dot``).
    """
    k = W.shape[1]
    out = np.empty(rows.shape[0], dtype=W.dtype)
    batch = max(k, rows.shape[0] // k)
    Ht = H.T
    for a in range(0, rows.shape[0], batch):
        b = slice(a, a + batch)
        out[b] = np.multiply(W[rows[b]], Ht[cols[b]]).sum(axis=1)
    return out


def _plain_ratio(X, rows, cols, W, H):
    y = plain_sampled_product(rows, cols, W, H)
    return sp.csr_matrix((X.data / y, X.indices, X.indptr), shape=X.shape)


def _plain_doc_step(X, rows, cols, W, H):
    R = _plain_ratio(X, rows, cols, W, H)
    W_new = W * (R @ H.T) / H.sum(axis=1)[None, :]
    return R, W_new, _plain_ratio(X, rows, cols, W_new, H)


def plain_mu(X, W, H, n_iter):
    """Lee-Seung KL updates in plain NumPy/SciPy (W, then H; two ratios)."""
    rows, cols = X.nonzero()
    W, H = W.copy(), H.copy()
    for _ in range(n_iter):
        R = _plain_ratio(X, rows, cols, W, H)
        W = W * (R @ H.T) / H.sum(axis=1)[None, :]
        R = _plain_ratio(X, rows, cols, W, H)
        H = H * (R.T @ W).T / W.sum(axis=0)[:, None]
    return W, H


def plain_em(X, W, H, n_iter):
    """Hofmann's EM for PLSI in plain NumPy/SciPy (one ratio per iteration).

    Count scale: ``W = N P(z) P(d|z)``, ``H = P(w|z)``.
    """
    rows, cols = X.nonzero()
    h = H.sum(axis=1)
    W, H = W * h[None, :], H / h[:, None]
    for _ in range(n_iter):
        R = _plain_ratio(X, rows, cols, W, H)
        W, H = W * (R @ H.T), H * (R.T @ W).T
        H /= H.sum(axis=1)[:, None]
    return W, H


def sklearn_nmf(X, W, H, n_iter):
    model = NMF(
        W.shape[1],
        init="custom",
        solver="mu",
        beta_loss="kullback-leibler",
        max_iter=n_iter,
        tol=0,
    )
    W = model.fit_transform(X, W=W.copy(), H=H.copy())
    return W, model.components_


def ours(cls, X, W, H, n_iter):
    model = cls(W.shape[1], init="custom", max_iter=n_iter, tol=0).fit(X, W=W, H=H)
    return model


# ----------------------------------------------------------------- tables
def estimator_rows(X, k, n_iter, repeats, n_threads, single_thread=True):
    """Per-iteration time, objective and peak memory of every KL-NMF runner.

    Every runner starts from the same ``(W0, H0)`` and runs ``n_iter``
    iterations.  Our estimators run with ``n_threads`` kernel threads and,
    if ``single_thread``, again with one.
    """
    W0, H0 = start(X, k)
    calls = {
        "scikit-learn NMF (KL, mu)": lambda: sklearn_nmf(X, W0, H0, n_iter),
        "plain NumPy MU (reference)": lambda: plain_mu(X, W0, H0, n_iter),
        "plain NumPy EM (reference)": lambda: plain_em(X, W0, H0, n_iter),
    }
    for name, cls in OURS.items():
        calls[name] = _with_threads(n_threads, ours, cls, X, W0, H0, n_iter)
        if single_thread and n_threads > 1:
            calls[f"{name} (1 thread)"] = _with_threads(1, ours, cls, X, W0, H0, n_iter)
    runs = interleaved(calls, repeats)
    traced = {name: traced_peak(fn) for name, fn in calls.items()}
    rows = []
    reference = median([r.wall for r in runs["scikit-learn NMF (KL, mu)"]])
    reference_cpu = median([r.cpu for r in runs["scikit-learn NMF (KL, mu)"]])
    for name, rs in runs.items():
        result = rs[-1].result
        if isinstance(result, tuple):
            objective = kl_divergence(X, *result)
        else:
            objective = result.loss_
        wall = median([r.wall for r in rs])
        rows.append(
            {
                "runner": name,
                "ms_per_iter": 1e3 * wall / n_iter,
                "best_ms_per_iter": 1e3 * min(r.wall for r in rs) / n_iter,
                "cpu_ms_per_iter": 1e3 * median([r.cpu for r in rs]) / n_iter,
                "speedup": reference / wall,
                "cpu_speedup": reference_cpu / median([r.cpu for r in rs]),
                "objective": objective,
                "peak_rss_mib": _mib(median([r.peak_rss for r in rs])),
                "traced_mib": _mib(traced[name]),
            }
        )
    return rows


def _mib(n_bytes):
    return None if n_bytes is None else n_bytes / 2**20


def _with_threads(n_threads, fn, *args):
    def call():
        saved = _parallel.N_THREADS
        _parallel.N_THREADS = n_threads
        try:
            return fn(*args)
        finally:
            _parallel.N_THREADS = saved

    return call


def trajectory(X, k, checkpoints):
    """Objective of KLNMF and scikit-learn's KL-MU NMF after each checkpoint.

    From the same start; ours in one fit (``loss_history_``), scikit-learn in
    one fit per checkpoint (``reconstruction_err_ ** 2 / 2``).
    """
    W0, H0 = start(X, k)
    model = KLNMF(k, init="custom", max_iter=max(checkpoints), tol=0)
    history = model.fit(X, W=W0, H=H0).loss_history_
    rows = []
    for c in checkpoints:
        ref = NMF(
            k,
            init="custom",
            solver="mu",
            beta_loss="kullback-leibler",
            max_iter=c,
            tol=0,
        )
        ref.fit(X, W=W0.copy(), H=H0.copy())
        theirs = ref.reconstruction_err_**2 / 2
        rows.append(
            {
                "iteration": c,
                "scikit-learn": theirs,
                "KLNMF": history[c],
                "rel_diff": abs(history[c] - theirs) / abs(theirs),
            }
        )
    return rows


# ------------------------------------------------------------ kernel table
def kernel_rows(X, k, repeats, n_threads, bandwidth_gbs, cache_gbs):
    """Time of each kernel against the plain version and the bandwidth floor.

    ``X`` is sorted by document length first, as the fit loop does.  The
    floor is the time to stream the bytes a kernel must read and write once
    (indices, values, the factors, the output) at this machine's measured
    bandwidth; ``floor %`` is that floor over the measured time.  The gather
    kernels also move a k-vector per stored entry between caches: their
    ``cache floor %`` is that traffic (written once, read once) at the
    measured in-L2 copy rate over the measured time.
    """
    order = np.argsort(np.diff(X.indptr), kind="stable")
    X = X[order]
    W, H = start(X, k)
    n, m = X.shape
    nnz, s = X.nnz, X.dtype.itemsize
    rows_, cols = X.nonzero()
    R = K.ratio_at_nonzeros(X, W, H)
    Ht = np.ascontiguousarray(H.T)
    factor_bytes = (n + m) * k * s
    sparse_bytes = nnz * 4 + (n + 1) * 4  # indices + indptr
    gathered = 2 * nnz * k * s  # one k-vector per entry, written and read
    kernels = {
        "W H at nnz (SDDMM)": (
            lambda: K.product_at_nonzeros(X, W, H),
            lambda: plain_sampled_product(rows_, cols, W, H),
            sparse_bytes + factor_bytes + nnz * s,
            gathered,
        ),
        "R = X / (W H) at nnz": (
            lambda: K.ratio_at_nonzeros(X, W, H),
            lambda: _plain_ratio(X, rows_, cols, W, H),
            sparse_bytes + factor_bytes + 2 * nnz * s,
            gathered,
        ),
        "KL-MU W half-step, fused (R, W', R')": (
            lambda: K.mu_doc_step(X, W, H),
            lambda: _plain_doc_step(X, rows_, cols, W, H),
            sparse_bytes + factor_bytes + n * k * s + 3 * nnz * s,
            2 * gathered,
        ),
        "R @ H.T (SpMM)": (
            lambda: products.sparse_dense_product(R, H.T),
            lambda: np.asarray(R @ Ht),
            sparse_bytes + nnz * s + factor_bytes,
            None,
        ),
        "W.T @ R (SpMM)": (
            lambda: K.transposed_product(W, R),
            lambda: np.asarray((R.T @ W).T),
            sparse_bytes + nnz * s + factor_bytes,
            None,
        ),
        "objective from R": (
            lambda: kl_divergence_from_ratio(X, R, W, H),
            None,
            2 * nnz * s + factor_bytes,
            None,
        ),
    }
    calls = {}
    for name, (fn, plain, _, _) in kernels.items():
        calls[(name, "ours")] = _with_threads(n_threads, fn)
        calls[(name, "ours 1T")] = _with_threads(1, fn)
        if plain is not None:
            calls[(name, "plain")] = plain
    runs = interleaved(calls, repeats)
    out = []
    for name, (_, plain, n_bytes, cache_bytes) in kernels.items():
        floor = n_bytes / (bandwidth_gbs * 1e9)
        cache_floor = None if cache_bytes is None else cache_bytes / (cache_gbs * 1e9)
        t = median([r.wall for r in runs[(name, "ours")]])
        t1 = median([r.wall for r in runs[(name, "ours 1T")]])
        tp = median([r.wall for r in runs[(name, "plain")]]) if plain else None
        out.append(
            {
                "kernel": name,
                "plain_ms": None if tp is None else 1e3 * tp,
                "ours_1t_ms": 1e3 * t1,
                "ours_ms": 1e3 * t,
                "speedup": None if tp is None else tp / t,
                "mib": n_bytes / 2**20,
                "floor_ms": 1e3 * floor,
                "floor_pct": 100 * floor / t,
                "cache_floor_pct": None
                if cache_floor is None
                else 100 * cache_floor / t,
            }
        )
    return out
