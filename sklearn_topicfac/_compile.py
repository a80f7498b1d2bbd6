"""`compile_kernels`: compile the numba backend's kernels ahead of time, once
per machine, so that ``backend="auto"`` (the default) uses them."""

import itertools
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import StrOptions

from . import _config, estimators
from ._config import config_context
from .kernels import _backend, _compiled_cache, cd_sweep

# The settings that choose which kernels a fit calls: every value of each is
# fitted once, so that every compiled function runs (and is cached).
_VARIED = (
    "solver",
    "nmf_solver",
    "plsi_solver",
    "inference",
    "learning_method",
    "normalize",
)


def _corpora(dtype):
    """A small corpus, and a wide one (more terms than documents, with
    enough terms that the collapsed sweep runs by terms)."""
    rng = np.random.default_rng(0)
    for n, m, density in ((40, 30, 0.3), (12, 50_000, 0.002)):
        X = sp.random(n, m, density=density, format="csr", random_state=rng)
        X.data = np.ceil(X.data * 5)
        yield X.astype(dtype)


def _variants(klass):
    constraints = getattr(klass, "_parameter_constraints", {})
    grid = {
        name: sorted(
            option
            for rule in constraints[name]
            if isinstance(rule, StrOptions)
            for option in rule.options
        )
        for name in _VARIED
        if name in constraints
    }
    for values in itertools.product(*grid.values()):
        yield dict(zip(grid, values, strict=True))


def _exercise(klass, params, X):
    """Fit, transform, score and (where offered) update a small model."""
    try:
        model = klass(n_components=3, random_state=0, max_iter=3, **params).fit(X)
    except ValueError:  # a combination the estimator refuses
        return
    model.transform(X)
    if hasattr(model, "score"):
        model.score(X)
    if hasattr(klass, "partial_fit"):
        try:
            klass(n_components=3, random_state=0, **params).partial_fit(X)
        except ValueError:  # partial_fit runs one inference only
            pass


def compile_kernels(verbose=True):
    """Compile the numba backend's kernels now, once for this machine.

    With numba installed (``pip install "sklearn-topicfac[fast]"``), each
    compiled kernel otherwise compiles on its first use (seconds each).  The
    default ``backend="auto"`` never compiles: it runs the NumPy kernels
    until this function has compiled every kernel into numba's cache and
    recorded that, and from then on runs large kernel calls (stored entries
    times topics of at least 4 M) on numba, in every process of this
    installation.  ``topicfac compile`` does the same from the shell.  Run
    it again after upgrading Python or numba (``"auto"`` sees that the
    record no longer holds and runs NumPy).

    It fits small generated corpora with every estimator and every solver,
    in float32 and float64, on the numba backend.

    Parameters
    ----------
    verbose : bool, default=True
        Print what is being compiled and how long it took.

    Returns
    -------
    summary : dict
        ``"seconds"`` (wall time), ``"kernels"`` (compiled functions
        cached) and ``"record"`` (the file recording it, a str).

    Raises
    ------
    ImportError
        If numba is not installed.
    RuntimeError
        If a compiled function did not reach numba's cache (a folder numba
        cannot write, or a numba whose cache this function cannot read):
        ``backend="auto"`` then keeps running NumPy.

    Examples
    --------
    >>> import sklearn_topicfac as tf
    >>> tf.compile_kernels()  # doctest: +SKIP
    compiling the numba kernels (about 20 s, once for this machine)...
    compiled 23 kernels in 19.7 s; backend='auto' uses them from now on
    """
    if not _config.numba_available():
        raise ImportError(
            "compile_kernels needs numba, which is not installed: pip install "
            '"sklearn-topicfac[fast]". Without it the NumPy kernels run.'
        )
    _backend.compiling_on_purpose()
    start = time.perf_counter()
    if verbose:
        print("compiling the numba kernels (about 20 s, once for this machine)...")
    with config_context(backend="numba"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dtype in (np.float32, np.float64):
            for X in _corpora(dtype):
                for name in estimators.__all__:
                    klass = getattr(estimators, name)
                    for params in _variants(klass):
                        _exercise(klass, params, X)
                rng = np.random.default_rng(0)
                W = rng.random((X.shape[0], 3)).astype(dtype)
                H = rng.random((3, X.shape[1])).astype(dtype)
                cd_sweep(X, W, H)
    cached, missing = _backend.compiled_package()._cache_files()
    if missing:
        raise RuntimeError(
            f"{len(missing)} compiled kernels did not reach numba's cache "
            f"({', '.join(missing[:5])}): backend='auto' keeps running NumPy. "
            "Check that numba can write its cache (NUMBA_CACHE_DIR)."
        )
    path = _compiled_cache.write_record(cached)
    seconds = time.perf_counter() - start
    if verbose:
        print(
            f"compiled {len(cached)} kernels in {seconds:.1f} s; "
            "backend='auto' uses them from now on"
        )
    return {"seconds": seconds, "kernels": len(cached), "record": str(path)}
