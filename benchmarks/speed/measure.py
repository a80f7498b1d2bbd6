"""Timing and peak-memory measurement of one call."""

import ctypes
import gc
import re
import time
import tracemalloc
import warnings
from dataclasses import dataclass, field

import numpy as np


def release_freed_memory():
    """Make glibc return freed blocks of 64 KiB or more to the system at once.

    By default glibc raises its mmap threshold after large frees and then
    keeps such blocks in the heap, so a later call reuses them without
    raising the resident set, and its peak cannot be seen.  A fixed
    threshold turns that off.  No-op where mallopt is unavailable.
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    m_mmap_threshold, m_trim_threshold = -3, -1
    return bool(libc.mallopt(m_mmap_threshold, 1 << 16)) and bool(
        libc.mallopt(m_trim_threshold, 1 << 16)
    )


def _status_kib(key):
    with open("/proc/self/status") as f:
        match = re.search(rf"^{key}:\s+(\d+) kB", f.read(), re.MULTILINE)
    return int(match.group(1)) if match else None


def _reset_peak_rss():
    """Reset the kernel's resident-set high-water mark (Linux); False if not."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


@dataclass
class Run:
    wall: float  # seconds
    cpu: float  # process CPU seconds (all threads)
    peak_rss: float | None  # bytes above the resident set at the start
    result: object = field(default=None, repr=False)


def run_once(fn):
    """Call ``fn()`` once: wall and CPU time, and its peak extra resident memory.

    The peak is the kernel's high-water mark of the resident set during the
    call minus the resident set before it, so it counts every allocation
    (NumPy, SciPy, and the C/C++ of the peers), not only Python's.
    """
    gc.collect()
    tracked = _reset_peak_rss()
    rss0 = _status_kib("VmRSS") if tracked else None
    cpu = time.process_time()
    wall = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = fn()
    wall = time.perf_counter() - wall
    cpu = time.process_time() - cpu
    peak = None
    if tracked:
        peak = max(0, _status_kib("VmHWM") - rss0) * 1024
    return Run(wall, cpu, peak, result)


def traced_peak(fn):
    """Peak bytes allocated through Python's allocators (NumPy included) by ``fn()``."""
    gc.collect()
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def median(values):
    values = [v for v in values if v is not None]
    return float(np.median(values)) if values else None


def interleaved(calls, repeats):
    """Run every callable of ``calls`` (a dict) ``repeats`` times, round-robin.

    Interleaving spreads slow phases of a shared machine over all contenders
    instead of penalizing whichever ran then.  Returns {name: [Run, ...]}.
    """
    runs = {name: [] for name in calls}
    for _ in range(repeats):
        for name, fn in calls.items():
            runs[name].append(run_once(fn))
    return runs
