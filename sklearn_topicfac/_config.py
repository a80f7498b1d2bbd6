"""Global configuration: which backend runs the kernels.

In the style of scikit-learn's ``set_config`` / ``config_context``:
`set_config` changes the process-wide default, `config_context` overrides
it for a block of code (a context variable: it holds in the threads the
kernels start).  A fit reads the configuration when it starts and carries
it to its Dask workers, as `sklearn_topicfac.model_selection` does to its
joblib workers (`with_config`).  ``backend`` is

- ``"numpy"``: the reference kernels (NumPy and SciPy), always available;
- ``"numba"``: their compiled twins (``pip install "sklearn-topicfac[fast]"``);
- ``"auto"`` (default): ``"numba"`` for the kernel calls large enough to
  win back numba's import and the loading of the twins (stored entries
  times topics of at least 4 M, ``kernels._backend.AUTO_MIN_WORK``) once
  the twins are compiled on this machine (`sklearn_topicfac.compile_kernels`
  or ``topicfac compile``, once); ``"numpy"`` otherwise.  ``"auto"`` never
  compiles, so it never makes a fit wait for a compile.

The setting was first called ``engine`` (the name of the fit machinery,
`sklearn_topicfac.engine`): ``engine=`` is accepted by
`set_config` and `config_context` as a deprecated alias of ``backend=``,
with a ``FutureWarning``.

The module imports nothing from the rest of the package (the kernels read it).
"""

import contextvars
import functools
import importlib.util
import warnings
from contextlib import contextmanager

BACKENDS = ("auto", "numpy", "numba")

_GLOBAL = {"backend": "auto"}
_LOCAL = contextvars.ContextVar("sklearn_topicfac_config", default=None)


@functools.cache
def numba_available():
    """Whether numba can be imported (without importing it)."""
    return importlib.util.find_spec("numba") is not None


def _check_backend(backend):
    if backend not in BACKENDS:
        raise ValueError(
            f"backend={backend!r} is not a backend; use one of {list(BACKENDS)}."
        )
    if backend == "numba" and not numba_available():
        raise ValueError(
            "backend='numba' needs numba, which is not installed: pip install "
            '"sklearn-topicfac[fast]" (or use backend="numpy" or "auto").'
        )


def _renamed(backend, engine, where):
    """``backend``, or the value of the deprecated ``engine=`` (with a warning)."""
    if engine == "deprecated":  # not given
        return backend
    if backend is not None:
        raise ValueError(
            f"{where} got both backend={backend!r} and engine={engine!r}; "
            "engine is the old name of backend: pass backend only."
        )
    warnings.warn(
        f"{where}(engine=...) is deprecated and will be removed in 0.3: the "
        "setting is now called backend; pass backend=... instead.",
        FutureWarning,
        stacklevel=3,
    )
    return engine


def get_config():
    """The current configuration, as a new dict.

    Returns
    -------
    config : dict
        ``{"backend": ...}``: the setting of the innermost `config_context`,
        else the one of `set_config`.

    Examples
    --------
    >>> from sklearn_topicfac import config_context, get_config
    >>> with config_context(backend="numpy"):
    ...     get_config()["backend"]
    'numpy'
    """
    local = _LOCAL.get()
    return dict(_GLOBAL if local is None else local)


def set_config(backend=None, *, engine="deprecated"):
    """Set the process-wide default configuration.

    Parameters
    ----------
    backend : {"auto", "numpy", "numba"}, default=None
        Which kernels run the fits: the NumPy reference, their numba twins
        (``pip install "sklearn-topicfac[fast]"``), or numba when it is
        installed and a kernel call is large (see the module docstring).
        ``None`` leaves it unchanged.
    engine : {"auto", "numpy", "numba"}
        Deprecated alias of ``backend`` (emits a ``FutureWarning``).

    Examples
    --------
    >>> from sklearn_topicfac import get_config, set_config
    >>> set_config(backend="numpy")
    >>> get_config()["backend"]
    'numpy'
    >>> set_config(backend="auto")
    """
    backend = _renamed(backend, engine, "set_config")
    if backend is not None:
        _check_backend(backend)
        _GLOBAL["backend"] = backend


@contextmanager
def config_context(*, backend=None, engine="deprecated"):
    """Override the configuration inside a ``with`` block.

    Parameters
    ----------
    backend : {"auto", "numpy", "numba"}, default=None
        As for `set_config`; ``None`` keeps the current setting.
    engine : {"auto", "numpy", "numba"}
        Deprecated alias of ``backend`` (emits a ``FutureWarning``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac import KLNMF, config_context
    >>> X = np.random.default_rng(0).poisson(1.0, size=(20, 12))
    >>> with config_context(backend="numpy"):
    ...     W = KLNMF(n_components=2, random_state=0, max_iter=20).fit_transform(X)
    >>> W.shape
    (20, 2)
    """
    backend = _renamed(backend, engine, "config_context")
    config = get_config()
    if backend is not None:
        _check_backend(backend)
        config["backend"] = backend
    token = _LOCAL.set(config)
    try:
        yield
    finally:
        _LOCAL.reset(token)


def with_config(function):
    """``function`` bound to the current configuration, to run elsewhere.

    The returned callable (picklable when ``function`` is) runs
    ``function`` inside `config_context` with the configuration of the
    caller at the time of this call: how a setting reaches joblib's worker
    processes and Dask's workers, where this process's context does not
    hold.
    """
    return functools.partial(_run_with_config, get_config(), function)


def _run_with_config(config, function, *args, **kwargs):
    with config_context(**config):
        return function(*args, **kwargs)
