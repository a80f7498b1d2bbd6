"""How much freed memory the C allocator keeps: raised once per process.

A fit's sweep allocates and frees the same temporaries every sweep: the
ratio at the stored entries, ``H``'s transposed copy, the topic statistics,
from a few hundred KiB to a few MiB each.  glibc's ``malloc`` serves a
block above its *mmap threshold* by a fresh mapping and gives the free top
of its heap back to the system once it exceeds its *trim threshold*.  Both
start at 128 KiB, and glibc raises them only when a mapped block larger
than the mmap threshold is freed (to its size, and twice that; mallopt(3),
"M_MMAP_THRESHOLD").  Until a process has freed a block larger than a
sweep's temporaries, every sweep lands on pages the system must hand over
and zero again (minor page faults): LDAVI's default fit on tr11 (414
documents, 116,613 entries, k = 9, NumPy backend) took 159,000 of them,
0.79 s against 0.54 s once the thresholds were raised (fresh processes on a
2-core virtual machine, ``docs/performance.md``).  scikit-learn's LDA,
whose Cython loops allocate little, took 3,000.

`keep_freed_memory` raises the thresholds the way glibc itself does after
any large temporary: it allocates and frees one block of `RESERVE` bytes
that is never written (a mapping never touched costs no page).  Afterwards
glibc serves blocks up to 16 MiB from its heap and keeps up to 32 MiB free
there instead of returning it.  Nothing is computed differently.  Other C
libraries (macOS, Windows, musl) are left alone.
"""

import platform

import numpy as np

# 16 MiB: above the sweep temporaries of the corpora that fault (tr11's are
# about 1 MiB, 20 Newsgroups' ratio about 10 MiB), below glibc's ceiling for
# the dynamic threshold (32 MiB; a block at the ceiling does not raise it).
RESERVE = 16 << 20

_DONE = []


def _is_glibc():
    try:
        return platform.libc_ver()[0] == "glibc"
    except (OSError, ValueError):  # pragma: no cover - unreadable executable
        return False


def keep_freed_memory():
    """Raise glibc's mmap and trim thresholds, once per process (see module).

    Returns whether this call did it: False after the first call, and on a
    C library other than glibc.
    """
    if _DONE:
        return False
    _DONE.append(True)
    if not _is_glibc():
        return False
    block = np.empty(RESERVE, dtype=np.uint8)
    del block
    return True
