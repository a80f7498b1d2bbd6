"""What the benchmark runs on, and the memory-bandwidth floor of this machine."""

import os
import platform
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def describe():
    """One-line descriptions of the machine and the library versions."""
    import scipy
    import sklearn

    import sklearn_topicfac

    lines = [
        f"CPU: {cpu_model()}, {os.cpu_count()} logical cores",
        f"memory: {_total_memory_gib():.0f} GiB; Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}",
        f"numpy {np.__version__}, scipy {scipy.__version__}, "
        f"scikit-learn {sklearn.__version__}, "
        f"sklearn-topicfac {sklearn_topicfac.__version__}",
    ]
    try:
        from threadpoolctl import threadpool_info

        blas = [
            f"{i['internal_api']} {i.get('version', '')} "
            f"({i.get('architecture', '?')}, {i['num_threads']} threads)"
            for i in threadpool_info()
        ]
        lines.append("BLAS/threads: " + "; ".join(blas))
    except ImportError:
        pass
    return lines


def _total_memory_gib():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError):
        return float("nan")


def load_average():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def wait_for_quiet(max_load, timeout=600, poll=10):
    """Wait until the 1-minute load average is below ``max_load`` (or timeout).

    On a shared machine other processes' load slows the cache-resident
    kernels far more than the bandwidth-bound ones, so timings taken under
    load understate the speed-ups.  Returns the load average reached.
    """
    deadline = time.monotonic() + timeout
    load = load_average()
    while load >= max_load and time.monotonic() < deadline:
        time.sleep(poll)
        load = load_average()
    return load


def _best_seconds(fn, repeats):
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def memory_bandwidth(n_bytes=1 << 30, repeats=5, n_threads=None):
    """Streaming bandwidth in GB/s (1e9 bytes/s) over arrays much larger than L3.

    ``read``: a sum; ``write``: a fill; ``copy``: read + write of a copy,
    counted as both bytes moved.  Each on one thread and on ``n_threads``
    threads working on disjoint halves (NumPy releases the GIL).  The best of
    ``repeats`` runs: the floor a kernel can at best reach.
    """
    n_threads = n_threads or os.cpu_count() or 1
    n = n_bytes // 4
    a = np.ones(n, dtype=np.float32)
    b = np.ones(n, dtype=np.float32)
    parts = np.linspace(0, n, n_threads + 1).astype(int)
    slices = [slice(s, e) for s, e in zip(parts[:-1], parts[1:], strict=True)]

    def parallel(fn):
        with ThreadPoolExecutor(n_threads) as pool:
            list(pool.map(fn, slices))

    kernels = {
        "read": (lambda s: np.add.reduce(a[s]), 1),
        "write": (lambda s: b[s].fill(2.0), 1),
        "copy": (lambda s: np.copyto(b[s], a[s]), 2),
    }
    result = {}
    for name, (fn, passes) in kernels.items():
        one = _best_seconds(lambda fn=fn: fn(slice(None)), repeats)
        many = _best_seconds(lambda fn=fn: parallel(fn), repeats)
        result[name] = (passes * n * 4 / one / 1e9, passes * n * 4 / many / 1e9)
    result["threads"] = n_threads
    result["l2_copy"] = cache_copy_bandwidth()
    return result


def cache_copy_bandwidth(n_bytes=1 << 18, repeats=2000):
    """Copy rate (GB/s, read + write) of a 256 KiB array: data in L2 cache.

    The floor for the gathers of the sampled product, whose bytes move
    between caches rather than to and from memory.
    """
    a = np.ones(n_bytes // 4, dtype=np.float32)
    b = np.empty_like(a)

    def copies():
        for _ in range(100):
            np.copyto(b, a)

    return 2 * 100 * n_bytes / _best_seconds(copies, repeats // 100) / 1e9
