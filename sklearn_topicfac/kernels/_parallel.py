"""Threads for the kernels: work split over row ranges, results independent
of the split.

The kernels hold no mutable state.  A sum over rows large enough for
threads splits its rows into `SUM_PARTS` ranges, a number fixed here and
never taken from the machine, and adds the ranges' sums in that order: the
results are the same bits on one thread or eight.  Passes that compute each
row on its own share their rows among `N_THREADS` threads in any split.
A caller that wants calls to back off on a busy machine (the
fit engine does, for the length of a fit) installs a `ThreadBudget` with
`thread_budget`, a context-local setting like NumPy's ``errstate``.
"""

import contextvars
import functools
import importlib.machinery
import threading
import time
from contextlib import contextmanager

import joblib
import numpy as np

# Work (stored entries times k) below which a kernel stays on one thread:
# starting a thread costs ~50 us, a few hundred thousand multiply-adds.
MIN_PARALLEL_WORK = 1 << 21

# Wall seconds below which a parallel call says nothing about whether its
# threads got their CPU: starting the threads (about half a millisecond on a
# 2-core virtual machine) leaves them idle for a sizeable part of a call of a
# few milliseconds, and such calls (the sampled product of a mid-sized
# corpus) looked starved on an idle machine, sending every kernel of the fit
# back to one thread.
MIN_JUDGED_WALL = 0.01

# Threads the kernels may use.  Work is split into row ranges or units that
# the threads share; NumPy's take/matmul/ufuncs and SciPy's sparse products
# release the GIL, so they run in parallel.  Results never depend on how many
# threads run, nor on this setting: every entry and row is computed by the
# same code whatever the split, and sums over row ranges use the split into
# `SUM_PARTS` ranges (see `transposed_product`).
N_THREADS = max(1, min(joblib.cpu_count(), 8))

# Row ranges of a sum over rows that threads share (a constant, not the
# machine's core count: the sum is grouped by these ranges, so its rounding
# is the same whatever `N_THREADS` is).  Two: each range's sum is a dense
# (k x n_features) array to zero and add, which with eight ranges cost 16 to
# 25 % of a default fit on Reuters (the sums' threads are two at most).
SUM_PARTS = 2


class ThreadBudget:
    """Whether the next kernel calls may use threads: backs off when starved.

    Python threads only pay when each gets a core.  On a machine busy with
    other processes, a thread holding the GIL is preempted and the others
    wait on it, so a parallel call can be slower than a serial one.  When a
    parallel call got less than half of its extra threads' worth of CPU
    time, the next ``BACKOFF_CALLS`` calls run on one thread, after which
    threads are tried again.  This only ever changes speed, never a result.
    """

    BACKOFF_CALLS = 32

    def __init__(self):
        self.remaining = 0

    def threads(self):
        """Threads for the next parallel-sized call."""
        if self.remaining > 0:
            self.remaining -= 1
            return 1
        return N_THREADS

    def starved(self):
        """The last parallel call did not get its CPU: back off."""
        self.remaining = self.BACKOFF_CALLS


_BUDGET = contextvars.ContextVar("sklearn_topicfac_thread_budget", default=None)


# The file-name endings of Python extension modules other than a bare
# ".so" (".cpython-311-x86_64-linux-gnu.so", ".abi3.so"): no BLAS library is
# named so.
_EXTENSION_ENDINGS = tuple(
    suffix for suffix in importlib.machinery.EXTENSION_SUFFIXES if suffix != ".so"
)


def _is_extension_module(path):
    return path.endswith(_EXTENSION_ENDINGS)


@functools.cache
def _blas_controller():
    """threadpoolctl's controller of the process's BLAS libraries, made once.

    On Linux threadpoolctl resolves the real path of every file the process
    has mapped before it looks at the file's name.  With NumPy, SciPy and
    scikit-learn loaded that is about 210 files, 190 of them Python extension
    modules, and the resolving was 5 of the 8 ms a first fit paid for its
    controller.  The controller made here skips the extension modules
    (`_is_extension_module`) by overriding threadpoolctl's private walk of
    the mapped files; `tests/kernels/test_performance_contracts.py` checks
    that it finds the same libraries as threadpoolctl's own.  Where
    threadpoolctl has no such walk (other platforms, other versions), this
    is threadpoolctl's own controller.
    """
    from threadpoolctl import ThreadpoolController

    if not all(
        hasattr(ThreadpoolController, name)
        for name in (
            "_find_libraries_with_linux",
            "_PATH_RE",
            "_make_controller_from_path",
        )
    ):
        return ThreadpoolController()

    class _ExtensionModulesSkipped(ThreadpoolController):
        def _find_libraries_with_linux(self):
            with open("/proc/self/maps", "rb") as maps:
                paths = set(self._PATH_RE.findall(maps.read()))
            for path in paths:
                path = path.decode("utf-8")
                if not _is_extension_module(path):
                    self._make_controller_from_path(path)

    return _ExtensionModulesSkipped()


@contextmanager
def one_blas_thread():
    """Run the block's BLAS and LAPACK calls on one thread (threadpoolctl's
    ``threadpool_limits(1, user_api="blas")``) -- LAPACK's blocked
    factorizations round differently on different numbers of threads.

    threadpoolctl finds the libraries to limit by walking every shared
    library the process has loaded, 3 to 11 ms each time (a fifth of a
    default KLNMF fit of CSTR); the controller is made once per process, on
    the first call, after NumPy's and SciPy's BLAS are loaded (the package
    imports ``scipy.linalg``), and skips Python's extension modules
    (`_blas_controller`).
    """
    with _blas_controller().limit(limits=1, user_api="blas"):
        yield


@contextmanager
def thread_budget(budget=None):
    """Kernel calls in this context share ``budget``.

    By default the budget already active (a fit inside a fit shares it), or
    a new `ThreadBudget`.
    """
    if budget is None:
        budget = _BUDGET.get() or ThreadBudget()
    token = _BUDGET.set(budget)
    try:
        yield
    finally:
        _BUDGET.reset(token)


def n_threads(work):
    """Threads for a kernel call doing ``work`` (entries times k) of work."""
    if work < MIN_PARALLEL_WORK or N_THREADS <= 1:
        return 1
    budget = _BUDGET.get()
    return N_THREADS if budget is None else budget.threads()


def run_parallel(tasks):
    """Run the zero-argument callables ``tasks``, one thread each; return results.

    The first task runs on the calling thread.  Each other thread runs in a
    copy of the caller's context, so NumPy's ``errstate`` carries over; an
    exception in any task is re-raised here.  A call that did not get the
    CPU time of its threads tells the active `ThreadBudget`, if any.
    """
    if len(tasks) == 1:
        return [tasks[0]()]
    wall, cpu = time.perf_counter(), time.process_time()
    results = [None] * len(tasks)
    errors = []

    def run(i):
        try:
            results[i] = tasks[i]()
        except BaseException as exc:  # re-raised on the calling thread
            errors.append(exc)

    threads = [
        threading.Thread(target=contextvars.copy_context().run, args=(run, i))
        for i in range(1, len(tasks))
    ]
    for thread in threads:
        thread.start()
    run(0)
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    budget = _BUDGET.get()
    if (
        budget is not None
        and wall >= MIN_JUDGED_WALL
        and cpu < (1 + 0.5 * (len(tasks) - 1)) * wall
    ):
        budget.starved()
    return results


def map_parts(fn, parts, work):
    """``[fn(part) for part in parts]``, the parts shared by up to `n_threads`."""
    count = min(n_threads(work), len(parts))
    if count <= 1:
        return [fn(part) for part in parts]
    results = [None] * len(parts)
    queue = WorkQueue(range(len(parts)))

    def work_off():
        for i in queue:
            results[i] = fn(parts[i])

    run_parallel([work_off] * count)
    return results


class WorkQueue:
    """Iterator over ``items`` that several threads can share."""

    def __init__(self, items):
        self._items = iter(items)
        self._lock = threading.Lock()

    def __iter__(self):
        return self

    def __next__(self):
        with self._lock:
            return next(self._items)


def sum_parts(indptr):
    """Row boundaries of the fixed split of a sum over rows: `SUM_PARTS`
    ranges of about equal numbers of entries (see `split_rows`).

    The split depends on the matrix alone, never on how many threads run.
    """
    return split_rows(indptr, SUM_PARTS)


def split_rows(indptr, n_parts):
    """Row boundaries splitting a CSR matrix into ``n_parts`` ranges of ~equal nnz."""
    n_rows = indptr.shape[0] - 1
    targets = np.linspace(0, indptr[-1], n_parts + 1)[1:-1]
    cuts = np.searchsorted(indptr, targets, side="left")
    return np.concatenate(([0], np.minimum(cuts, n_rows), [n_rows]))
