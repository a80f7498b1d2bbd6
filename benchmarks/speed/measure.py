"""Timing and peak-memory measurement of one call."""

import ctypes
import gc
import re
import time
import tracemalloc
import warnings
from dataclasses import dataclass, field

import numpy as np

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def _mallopt(mmap_threshold, trim_threshold):
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    return bool(libc.mallopt(_M_MMAP_THRESHOLD, mmap_threshold)) and bool(
        libc.mallopt(_M_TRIM_THRESHOLD, trim_threshold)
    )


def release_freed_memory():
    """Make glibc return freed blocks of 64 KiB or more to the system at once.

    By default glibc raises its mmap threshold after large frees and then
    keeps such blocks in the heap, so a later call reuses them without
    raising the resident set, and its peak cannot be seen.  A fixed low
    threshold turns that off: the setting for *measuring peak memory*.  It
    makes every temporary of 64 KiB or more a fresh mapping, zeroed by the
    kernel and page-faulted in, so it is not the setting to time code in
    (measured: our sampled product 2-50x slower, a KLNMF iteration 1.4-2.4x).
    Also hands back to the system what the heap holds free now (after timed
    runs in `keep_freed_memory` mode it holds their temporaries), so that
    the next call's peak starts from a trimmed heap.  No-op where mallopt is
    unavailable.
    """
    done = _mallopt(1 << 16, 1 << 16)
    if done:
        gc.collect()
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    return done


def keep_freed_memory():
    """glibc's steady state: blocks under 32 MiB come from the heap and are reused.

    The maximum that glibc's dynamic mmap threshold reaches in a long-running
    process (and twice it for trimming): the setting for *timing*.
    """
    return _mallopt(32 << 20, 64 << 20)


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
    instead of penalizing whichever ran then.  The timed runs use the
    allocator's steady state (`keep_freed_memory`); then each callable runs
    once more with freed memory released (`release_freed_memory`) for its
    peak resident memory, which is what every run's ``peak_rss`` reports.
    Returns {name: [Run, ...]}.
    """
    runs = {name: [] for name in calls}
    keep_freed_memory()
    try:
        for _ in range(repeats):
            for name, fn in calls.items():
                runs[name].append(run_once(fn))
    finally:
        release_freed_memory()
    for name, fn in calls.items():
        peak = run_once(fn).peak_rss
        for run in runs[name]:
            run.peak_rss = peak
    return runs
