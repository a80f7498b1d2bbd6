"""The engine: starts, the one fit loop, the runners, online updates, moves.

It runs any model of `sklearn_topicfac.models` through the declared model
protocol (`models.TopicModel`) and never imports an estimator:

- `plan`: what a fit is asked to do (`Plan`: its `Start`, `Settings`, and
  batch, online or alternating run);
- `sources`: where the documents come from (`InMemory`, `Blocks`);
- `runners`: the map-reduce of an iteration over row blocks, here
  (`LocalRunner`, `InMemoryRunner`); `dask`: on a Dask cluster;
  `runner_for` picks the runner of any data;
- `starts`: the one place that decides a fit's start, for every source;
- `loop`: the fit loop, its stopping rule and its progress callback;
- `iterations`: a model's batch iterations on a runner;
- `fitting`: `fit`, the one fit entry, carrying out a plan (starts,
  iterations, restarts, moves);
- `moves`: split-merge moves;  `phases`: alternation of two models;
- `online`: online epochs and ``partial_fit``, one engine.
"""

from .._validation import is_dask_array
from ..kernels import thread_budget
from .dask import DaskData, map_row_blocks
from .dask import runner_for as dask_runner_for
from .fitting import FitResult, fit
from .iterations import start_topics
from .loop import IterationInfo, fit_callback
from .online import partial_fit
from .plan import Plan, Schedule, Settings, Start
from .runners import InMemoryRunner, LocalRunner
from .sources import Blocks


def runner_for(X):
    """The runner of any data: `Blocks` and dask arrays block by block, else
    the validated in-memory matrix ``X`` as it is."""
    if isinstance(X, Blocks):
        return LocalRunner(X)
    if isinstance(X, DaskData) or is_dask_array(X):
        return dask_runner_for(X)
    return InMemoryRunner(X)


def is_blockwise(X):
    """Whether ``X`` is fitted block by block (`Blocks`, a dask array)."""
    return isinstance(X, (Blocks, DaskData)) or is_dask_array(X)


__all__ = [
    "Blocks",
    "DaskData",
    "FitResult",
    "InMemoryRunner",
    "IterationInfo",
    "LocalRunner",
    "Plan",
    "Schedule",
    "Settings",
    "Start",
    "fit",
    "fit_callback",
    "is_blockwise",
    "map_row_blocks",
    "partial_fit",
    "runner_for",
    "start_topics",
    "thread_budget",
]
