"""sklearn-topicfac: KL-divergence topic factorizations as scikit-learn estimators.

The package reads in floors, each importing only the floors below it:

- `kernels`: pure update functions (sparse products, divergences, updates);
- `models`: the mathematics of each family behind one protocol;
- `engine`: starts, the one fit loop, runners (memory, blocks, Dask),
  online updates, moves;
- `estimators`: the scikit-learn faces;
- helpers: `metrics`, `inspection`, `datasets`, `out_of_core`,
  `distributed`, `persistence` (`save` / `load`: model files that cannot
  run code) and the command line;
- `config_context` / `set_config`: which backend runs the kernels (NumPy, or
  the optional compiled numba twins); `compile_kernels`: compile the twins
  once per machine, after which the default ``backend="auto"`` uses them.
"""

from . import estimators
from ._compile import compile_kernels
from ._config import config_context, get_config, set_config
from ._version import __version__
from .engine import IterationInfo, fit_callback
from .estimators import *  # noqa: F403 (the eight estimators, listed once there)
from .persistence import load, save

__all__ = [
    *estimators.__all__,
    "IterationInfo",
    "fit_callback",
    "load",
    "save",
    "compile_kernels",
    "config_context",
    "get_config",
    "set_config",
    "__version__",
]
