"""Checks and conversions of user data: the bottom floor of the package.

Everything here is a plain function of arrays; it imports nothing from the
rest of the package, so the models, the engine, the estimators and the
helpers can all use it.
"""

import hashlib
import os
import sys
import unicodedata
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.validation import check_array

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def warn(message, category):
    """Warn at the user's line: the first caller outside this package.

    However deep in the package the warning is raised (a start checked by
    the engine, a fit inside a fit), it points at the code that called the
    package, as ``warnings.warn(..., stacklevel=n)`` would with the right
    ``n`` -- skipping scikit-learn's ``fit`` wrapper (``_fit_context``) too.
    """
    level, frame = 2, sys._getframe(1)
    while frame is not None and _internal(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


def _internal(filename):
    filename = os.path.abspath(filename)
    return filename.startswith(_PACKAGE) or filename.endswith(
        os.path.join("sklearn", "base.py")
    )


def to_csr(X):
    """CSR view of validated input, canonical and without stored zeros.

    Dense input becomes CSR (only its non-zeros are stored).  Sparse input is
    copied only when it must be changed (stored zeros or duplicate entries),
    so the caller's arrays are never written to.
    """
    if not sp.issparse(X):
        return sp.csr_matrix(X)
    X = sp.csr_matrix(X)
    if not X.has_canonical_format or (X.data == 0).any():
        X = X.copy()
        X.sum_duplicates()
        X.eliminate_zeros()
    return X


def length_order(X):
    """Permutation sorting the rows of CSR ``X`` by number of entries, or None.

    ``None`` when the rows are sorted already.  The sort is stable, so
    documents of equal length keep their relative order.
    """
    lengths = np.diff(X.indptr)
    if np.all(lengths[1:] >= lengths[:-1]):
        return None
    return np.argsort(lengths, kind="stable")


def unsort_rows(A, order):
    """Rows of ``A``, taken in the order ``order``, put back (``None``: as is)."""
    if order is None:
        return A
    out = np.empty_like(A)
    out[order] = A
    return out


def is_dask_array(X):
    """Whether ``X`` is a dask array (without importing dask)."""
    return type(X).__module__.startswith("dask.array") and hasattr(X, "to_delayed")


# The largest total of X, as a fraction of the dtype's largest number: the
# objective and the bound add up terms of the size of the total times log
# factors (at most ~709 < 2**10 in float64), in sums of a few such parts,
# and the start multiplies entries of that size; a margin of 2**16 keeps
# every one of them finite.
_TOTAL_MARGIN = 2.0**-16


def check_data_values(data, where):
    """Refuse negative values in ``data`` (the stored values of X or a block),
    and data whose total is too large to fit without overflow.

    The KL factorizations are scale-equivariant (``X * c`` is fitted by ``W
    * c``), so data that sums to more than ``finfo(dtype).max * 2**-16``
    (about 2.7e303 in float64, 5.2e33 in float32) can be divided by a
    constant first; fitting it as it is would overflow the objective's sums.
    """
    if data.size and data.min() < 0:
        raise ValueError(
            f"Negative values in {where}: the model is a KL factorization of "
            "non-negative data (e.g. word counts). Shift or clip the data, or "
            "use SimplexPLSA for real-valued input."
        )
    with np.errstate(over="ignore"):
        total = float(np.sum(data, dtype=np.float64))
    limit = float(np.finfo(data.dtype).max) * _TOTAL_MARGIN
    if total > limit:
        hint = " or pass float64 data" if data.dtype == np.float32 else ""
        size = f"{total:.3g}" if np.isfinite(total) else "more than float64 holds"
        raise ValueError(
            f"The values in {where} add up to {size}, above {limit:.3g}, "
            f"the largest total that can be fitted in {data.dtype} without "
            "overflow. Divide X by a constant (the KL factorizations are "
            f"scale-equivariant: X * c is fitted by W * c){hint}."
        )


def check_counts(X, where):
    """``X`` (already through ``validate_data``) checked and made canonical CSR."""
    check_data_values(X.data if sp.issparse(X) else X, where)
    return to_csr(X)


def check_start_arguments(init, W, H):
    """``W`` and ``H`` may only be passed with ``init='custom'``."""
    if init != "custom" and (W is not None or H is not None):
        raise ValueError(
            "W and H were passed to fit, but init is "
            f"{init!r}; set init='custom' to start from them."
        )


def check_factor(A, shape, name, dtype):
    """Validate a user-given start factor; returns a private copy.

    A start of another dtype than ``X`` is converted to it with a
    ``DataConversionWarning`` (never silently); it must have the right shape,
    finite non-negative entries, and not be all zeros (a zero factor stays
    zero under multiplicative updates: the model would be zero).
    """
    if A is None:
        raise ValueError(
            f"init='custom' needs both W and H: pass them as fit(X, W=..., H=...) "
            f"(or choose init='random' or 'nndsvda'); {name} is missing."
        )
    given = np.asarray(A).dtype
    A = np.array(A, dtype=dtype, copy=True)
    if given != dtype:
        warn(
            f"The custom start {name} has dtype {given} and was converted to "
            f"X's dtype {np.dtype(dtype)}; pass {name}.astype(X.dtype) to "
            "silence this.",
            DataConversionWarning,
        )
    if A.shape != shape:
        raise ValueError(
            f"The custom start {name} has shape {A.shape}, but this X and "
            f"n_components need shape {shape}."
        )
    if not np.all(np.isfinite(A)):
        raise ValueError(f"The custom start {name} contains NaN or infinity.")
    if (A < 0).any():
        raise ValueError(
            f"The custom start {name} has negative entries; it must be non-negative."
        )
    if A.size and not A.any():
        raise ValueError(
            f"The custom start {name} is all zeros: the updates are "
            "multiplicative, so the model would stay zero. Pass a start with "
            "positive entries."
        )
    return A


def reconstruct(X, components):
    """``X @ components`` for ``inverse_transform``, with ``X`` validated.

    ``X`` (dense or sparse, shape ``(n_samples, n_components)``) must be
    numeric and finite; anything else is a ``ValueError`` that says so.
    """
    k = components.shape[0]
    try:
        X = check_array(X, accept_sparse=("csr", "csc"), dtype=[np.float64, np.float32])
    except ValueError as exc:
        raise ValueError(
            f"inverse_transform expects a finite numeric array of shape "
            f"(n_samples, {k}), such as the output of transform: {exc}"
        ) from exc
    if X.shape[1] != k:
        raise ValueError(
            f"inverse_transform expects shape (n_samples, {k}), got {X.shape}."
        )
    return np.asarray(X @ components.astype(X.dtype, copy=False))


def available_memory():
    """Bytes of memory available to a new allocation, or None if unknown.

    Linux's ``MemAvailable`` (what can be allocated without swapping), else
    the free physical pages.
    """
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def format_bytes(n_bytes):
    """``n_bytes`` as a short human-readable size, e.g. ``'4.3 GB'``."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n_bytes) < 1000 or unit == "TB":
            return f"{n_bytes:.0f} {unit}" if unit == "B" else f"{n_bytes:.1f} {unit}"
        n_bytes /= 1000
    return f"{n_bytes:.1f} TB"  # pragma: no cover


def printable(text):
    """``text`` with its control and invisible characters as escapes.

    Every character of a Unicode category ``C*`` (controls such as ESC and
    newline, format characters such as the byte-order mark, lone
    surrogates, private-use and unassigned code points) becomes ``\\xNN``,
    ``\\uNNNN`` or ``\\UNNNNNNNN``, as in a Python literal: a file name or
    a file's contents quoted in a message can then neither drive the
    terminal (``\\x1b[31m``) nor hide what it holds.  Other text,
    backslashes included, is unchanged.

    >>> printable("\\ufefftext\\x1b[31m")
    '\\\\ufefftext\\\\x1b[31m'
    """
    return "".join(
        _escape(c) if unicodedata.category(c).startswith("C") else c for c in str(text)
    )


def _escape(char):
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def data_fingerprint(X):
    """A short SHA-256 of a matrix's shape, dtype and values (CSR or dense),
    for the stamp of a fit: the same data give the same fingerprint."""
    digest = hashlib.sha256()
    X = to_csr(X) if not sp.issparse(X) else X.tocsr()
    digest.update(f"{X.shape}{X.dtype}".encode())
    for part in (X.indptr, X.indices, X.data):
        digest.update(np.ascontiguousarray(part).tobytes())
    return digest.hexdigest()[:16]
