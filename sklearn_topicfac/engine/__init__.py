"""The engine: starts, the one fit loop, the runners, online updates, moves.

It runs any model of `sklearn_topicfac.models` through the model protocol
and never imports an estimator:

- `sources`: where the documents come from (`InMemory`, `Blocks`);
- `runners`: the map-reduce of an iteration over row blocks, here
  (`LocalRunner`, `InMemoryRunner`); `dask`: on a Dask cluster;
- `starts`: the one place that decides a fit's start, for every source;
- `loop`: the fit loop, its stopping rule and its progress callback;
- `iterations`: a model's iterations on a runner (batch and online epochs);
- `fit`: starts, iterations, restarts (``n_init``) and moves;
- `moves`: split-merge moves;  `phases`: alternation of two models;
- `online`: stepwise EM and online variational Bayes for ``partial_fit``.
"""

from .._validation import is_dask_array
from ..kernels import thread_budget
from .dask import DaskData, map_row_blocks, runner_for
from .fit import FitResult, fit
from .iterations import Online, Settings, start, start_topics
from .loop import IterationInfo, fit_callback
from .runners import InMemoryRunner, LocalRunner
from .sources import Blocks


def blockwise_runner(X):
    """The runner for a block-wise source (`Blocks`, a dask array), else None."""
    if isinstance(X, Blocks):
        return LocalRunner(X)
    if isinstance(X, DaskData) or is_dask_array(X):
        return runner_for(X)
    return None


__all__ = [
    "Blocks",
    "DaskData",
    "FitResult",
    "InMemoryRunner",
    "IterationInfo",
    "LocalRunner",
    "Online",
    "Settings",
    "blockwise_runner",
    "fit",
    "fit_callback",
    "start",
    "start_topics",
    "thread_budget",
    "map_row_blocks",
]
