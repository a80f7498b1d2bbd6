"""The C allocator keeps the freed temporaries of a sweep (`kernels._heap`).

Each check runs in a fresh interpreter: the allocator's thresholds are
process-wide and only ever rise, so this process (which has long since freed
large arrays) would show nothing.
"""

import platform
import subprocess
import sys
import textwrap

import pytest

GLIBC = platform.libc_ver()[0] == "glibc"

# Three 800 KB temporaries made and freed per "sweep", as a fit's sweep
# makes its ratio and topic statistics: with glibc's starting thresholds the
# freed top of the heap goes back to the system every time, and the next
# sweep faults its pages in again.
SWEEPS = """
import resource, sys
import numpy as np
from sklearn_topicfac.kernels import keep_freed_memory

if sys.argv[1] == "kept":
    assert keep_freed_memory() is True
    assert keep_freed_memory() is False  # once per process


def sweep():
    a = np.ones(100_000)
    b = np.ones(100_000)
    c = np.ones(100_000)
    del c, b, a


sweep()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(50):
    sweep()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""

# Every entry that runs sweeps raises the thresholds first.
ENTRIES = """
import numpy as np
from sklearn_topicfac import LDAVI, KLNMF
from sklearn_topicfac.kernels import _heap

X = np.random.default_rng(0).poisson(1.0, (30, 12)).astype(float)
X[:, 0] += 1
for name, call in [
    ("fit", lambda: KLNMF(n_components=2, max_iter=5, random_state=0).fit(X)),
    ("partial_fit", lambda: LDAVI(n_components=2, random_state=0).partial_fit(X)),
]:
    _heap._DONE.clear()
    call()
    assert _heap._DONE, name
model = KLNMF(n_components=2, max_iter=5, random_state=0).fit(X)
_heap._DONE.clear()
model.transform(X)
assert _heap._DONE, "transform"
print("ok")
"""


def _run(script, *args):
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.skipif(not GLIBC, reason="the thresholds are glibc's")
def test_kept_memory_stops_the_page_faults_of_repeated_temporaries():
    default = int(_run(SWEEPS, "default"))
    kept = int(_run(SWEEPS, "kept"))
    # 50 sweeps of 2.4 MB: about 600 pages each when the heap is trimmed.
    assert default > 50 * 100, (
        f"only {default} page faults with glibc's starting thresholds: this "
        "glibc no longer trims the heap between sweeps, so the test shows "
        "nothing"
    )
    assert kept * 20 < default, (kept, default)


def test_every_entry_that_sweeps_keeps_freed_memory():
    assert _run(ENTRIES) == "ok"
