"""Global configuration: which engine runs the kernels.

In the style of scikit-learn's ``set_config`` / ``config_context``:
`set_config` changes the process-wide default, `config_context` overrides
it for a block of code (a context variable: it holds in the threads the
kernels start).  A fit reads the configuration when it starts and carries
it to its Dask workers, as `sklearn_topicfac.model_selection` does to its
joblib workers (`with_config`).  ``engine`` is

- ``"numpy"``: the reference kernels (NumPy and SciPy), always available;
- ``"numba"``: their compiled twins (``pip install "sklearn-topicfac[fast]"``);
- ``"auto"`` (default): ``"numba"`` when numba can be imported, for the
  kernel calls large enough to win back the twins' one-time compile
  (stored entries times topics of at least 4 M,
  ``kernels._engine.AUTO_MIN_WORK``); ``"numpy"`` otherwise.

The module imports nothing from the rest of the package (the kernels read it).
"""

import contextvars
import functools
import importlib.util
from contextlib import contextmanager

ENGINES = ("auto", "numpy", "numba")

_GLOBAL = {"engine": "auto"}
_LOCAL = contextvars.ContextVar("sklearn_topicfac_config", default=None)


@functools.cache
def numba_available():
    """Whether numba can be imported (without importing it)."""
    return importlib.util.find_spec("numba") is not None


def _check_engine(engine):
    if engine not in ENGINES:
        raise ValueError(
            f"engine={engine!r} is not an engine; use one of {list(ENGINES)}."
        )
    if engine == "numba" and not numba_available():
        raise ValueError(
            "engine='numba' needs numba, which is not installed: pip install "
            '"sklearn-topicfac[fast]" (or use engine="numpy" or "auto").'
        )


def get_config():
    """The current configuration, as a new dict.

    Returns
    -------
    config : dict
        ``{"engine": ...}``: the setting of the innermost `config_context`,
        else the one of `set_config`.

    Examples
    --------
    >>> from sklearn_topicfac import config_context, get_config
    >>> with config_context(engine="numpy"):
    ...     get_config()["engine"]
    'numpy'
    """
    local = _LOCAL.get()
    return dict(_GLOBAL if local is None else local)


def set_config(engine=None):
    """Set the process-wide default configuration.

    Parameters
    ----------
    engine : {"auto", "numpy", "numba"}, default=None
        Which kernels run the fits: the NumPy reference, their numba twins
        (``pip install "sklearn-topicfac[fast]"``), or numba when it is
        installed and a kernel call is large (see the module docstring).
        ``None`` leaves it unchanged.

    Examples
    --------
    >>> from sklearn_topicfac import get_config, set_config
    >>> set_config(engine="numpy")
    >>> get_config()["engine"]
    'numpy'
    >>> set_config(engine="auto")
    """
    if engine is not None:
        _check_engine(engine)
        _GLOBAL["engine"] = engine


@contextmanager
def config_context(*, engine=None):
    """Override the configuration inside a ``with`` block.

    Parameters
    ----------
    engine : {"auto", "numpy", "numba"}, default=None
        As for `set_config`; ``None`` keeps the current setting.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac import KLNMF, config_context
    >>> X = np.random.default_rng(0).poisson(1.0, size=(20, 12))
    >>> with config_context(engine="numpy"):
    ...     W = KLNMF(n_components=2, random_state=0, max_iter=20).fit_transform(X)
    >>> W.shape
    (20, 2)
    """
    config = get_config()
    if engine is not None:
        _check_engine(engine)
        config["engine"] = engine
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


def resolved_engine():
    """``"numba"`` or ``"numpy"``: the engine the current setting selects for
    large kernel calls (``"auto"``: numba when it is installed)."""
    engine = get_config()["engine"]
    if engine == "auto":
        return "numba" if numba_available() else "numpy"
    return engine
