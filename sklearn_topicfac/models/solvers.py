"""The solvers: how a model's iterations run, and what each needs from the data.

A model (`TopicModel`) offers its solvers in ``solvers``, a dict of these
declarations, and runs the one named by its ``solver``.  What a solver
needs from the data decides where it runs:

- `MAP_REDUCE`: each iteration is passes over the documents whose results
  are sums over them (a document's own step, then statistics added up):
  it runs on every runner, in memory, block by block (`Blocks`) and on a
  Dask cluster, with the same result up to the order of those sums;
- `WHOLE_DATA`: an iteration goes through every document several times
  in an order that no sum can stand for (coordinate descent's topics one
  after the other, SQUAREM's extrapolation between whole steps): in memory
  only.  The engine refuses it elsewhere with an error that names the
  solvers that can run there; ``"auto"`` never resolves to one, so a
  default fit runs the same algorithm wherever its data live.

``auto_max_iter`` is what ``max_iter="auto"`` resolves to for the solver.

Examples
--------
>>> from sklearn_topicfac.models import KLNMFModel
>>> [name for name, s in KLNMFModel.solvers.items() if s.needs == MAP_REDUCE]
['mu', 'dn']
"""

from dataclasses import dataclass

MAP_REDUCE = "map-reduce"
WHOLE_DATA = "whole data"


@dataclass(frozen=True)
class Solver:
    """A solver's declaration.

    Parameters
    ----------
    name : str
        The value of the estimator's ``solver`` parameter.
    needs : {MAP_REDUCE, WHOLE_DATA}
        What it needs from the data (see the module's docstring).
    auto_max_iter : int
        ``max_iter="auto"`` for a fit running it.
    summary : str
        What it does, in a few words (in error messages).
    """

    name: str
    needs: str
    auto_max_iter: int
    summary: str


# Diagonal Newton's default fits end by ``tol`` within 497 iterations on
# the nine shared corpora, and its fits in searches over k within 805
# (coordinate descent's within 369 and 882 when it was the default), so
# their cap is 1000 (``docs/real_text.md``).  The
# multiplicative and EM updates keep the former default (scikit-learn's
# ``NMF``'s): on real text they crawl, and more iterations cost time without
# ending their fits by ``tol``.
MU = Solver("mu", MAP_REDUCE, 200, "Lee-Seung multiplicative updates")
EM = Solver("em", MAP_REDUCE, 200, "expectation-maximization")
JOINT = Solver("joint", MAP_REDUCE, 200, "the joint multiplicative update")
DN = Solver(
    "dn",
    MAP_REDUCE,
    1000,
    "diagonal Newton steps: each document's, then the topics' from sums over "
    "the documents",
)
CD = Solver(
    "cd",
    WHOLE_DATA,
    1000,
    "cyclic coordinate descent, one topic after the other over every document",
)
SQUAREM = Solver(
    "squarem",
    WHOLE_DATA,
    200,
    "SQUAREM extrapolation between whole iterations",
)


def blockwise_error(model):
    """The ``ValueError`` of a whole-data solver asked to run block by block."""
    solver = model.solvers[model.solver]
    runnable = [name for name, s in model.solvers.items() if s.needs == MAP_REDUCE]
    return ValueError(
        f"solver={solver.name!r} ({solver.summary}) needs every document at "
        "once, so it cannot run block by block (Blocks, a dask array): fit an "
        f"in-memory matrix, or choose solver={' or '.join(map(repr, runnable))} "
        "(solver='auto' runs the same solver wherever the data are)."
    )
