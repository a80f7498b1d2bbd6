"""Does a default fit end converged?  KLNMF, PLSI, JointNMF and HybridNMFPLSI
per solver.

For every corpus and solver: a default fit (``random_state=0``,
``split_merge=0``) gives ``n_iter_``, whether it warned
(``ConvergenceWarning``), its time and objective; continuing it from where
it ended (its factors as a custom start, ``tol=0``) for ten times as many
iterations (the hybrid: its last phase's algorithm, PLSI) gives the
objective "10 times more iterations reach" and the gap to it, and from the
per-iteration objectives (`fit_callback`) the time each solver needs to come
within 0.1 % of that objective (after a warm-up fit of each solver on the
corpus, so that no timed fit pays numba's compile or an import).  A
continuation is stopped at a CPU budget
(``--budget``, seconds; "capped" in the results): its objective is then
what the budget reached, a lower bound on the gap.  Times are CPU seconds of the
process (all threads), which a machine shared with other jobs inflates
less than wall time.

    python benchmarks/convergence.py --corpora classic3 cstr --out /tmp/conv.md
    python benchmarks/convergence.py --estimators JointNMF --joint-normalize both \
        --out /tmp/joint.jsonl
"""

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

import sklearn_topicfac as tf
from sklearn_topicfac.datasets import (
    load_labeled_text,
    load_mat_corpus,
    load_reuters21578,
)
from sklearn_topicfac.engine.loop import stopped

# The shared corpora (``--data`` to point elsewhere).
DATA = Path("/work/shared/data")


def _cluto(name):
    z = np.load(DATA / "cluto" / f"{name}.npz")
    X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
    return X, z["y"]


CORPORA = {
    "classic3": lambda: load_mat_corpus(DATA / "classic3" / "classic3.mat")[:2],
    "cstr": lambda: load_mat_corpus(DATA / "cstr" / "cstr.mat")[:2],
    "webkb4": lambda: load_labeled_text(
        [DATA / "webkb4" / f"webkb-{part}-stemmed.txt" for part in ("train", "test")],
        drop_empty=True,
    )[:2],
    "reuters": lambda: load_reuters21578(DATA / "reuters21578")[:2],
    "re0": lambda: _cluto("re0"),
    "webace": lambda: load_mat_corpus(DATA / "webace" / "WebACE.mat")[:2],
    "20news": lambda: load_mat_corpus(DATA / "20newsgroups" / "20Newsgroups.mat")[:2],
    "tr11": lambda: _cluto("tr11"),
    "tr41": lambda: _cluto("tr41"),
}
TUNING = ["classic3", "cstr", "webkb4", "reuters", "re0"]
VALIDATION = ["webace", "20news", "tr11", "tr41"]

# (estimator, solver parameter, solvers; the first is the former default)
METHODS = [
    (tf.KLNMF, "solver", ["mu", "cd", "dn"]),
    (tf.PLSI, "solver", ["em", "squarem", "cd", "dn"]),
    (tf.JointNMF, "solver", ["joint", "squarem", "cd", "dn"]),
    (
        tf.HybridNMFPLSI,
        None,
        [("mu", "em"), ("cd", "squarem"), ("cd", "cd"), ("dn", "dn")],
    ),
]


def _name(solver):
    return "/".join(solver) if isinstance(solver, tuple) else solver


# JointNMF's other parameters (``--joint-normalize``).
JOINT_PARAMS = {}


def _params(Estimator, key, solver):
    if Estimator is tf.HybridNMFPLSI:
        return {"nmf_solver": solver[0], "plsi_solver": solver[1]}
    if Estimator is tf.JointNMF:
        return {key: solver, **JOINT_PARAMS}
    return {key: solver}


def _label(Estimator):
    """The estimator's name in the results (JointNMF's with its mode)."""
    if Estimator is tf.JointNMF and JOINT_PARAMS.get("normalize") == "both":
        return "JointNMF (both)"
    return Estimator.__name__


class _Budget(Exception):
    """Raised by the trace to end a reference run at its CPU budget."""


def _fit(Estimator, X, k, params, trace=None, W=None, H=None, budget=None):
    """Fit; returns ``(estimator, CPU seconds, warned, trace, wall
    seconds)``: the trace holds ``(objective, CPU seconds, wall seconds)``
    per iteration, and a run stopped by ``budget`` (CPU seconds) returns
    ``None`` for the estimator."""
    est = Estimator(n_components=k, random_state=0, split_merge=0, **params)
    points = []
    wall = time.perf_counter()
    start = time.process_time()

    def record(info):
        points.append(
            (info.objective, time.process_time() - start, time.perf_counter() - wall)
        )
        if budget is not None and points[-1][1] > budget:
            raise _Budget

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        try:
            with tf.fit_callback(record):
                est.fit(X, W=W, H=H)
        except _Budget:
            est = None
    seconds = time.process_time() - start
    wall = time.perf_counter() - wall
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return est, seconds, warned, points, wall


def _state(est, X):
    """The count-scale ``(W, H)`` a fit ended at (JointNMF's: its own
    factors, which its custom start takes)."""
    if isinstance(est, tf.KLNMF | tf.JointNMF):
        return est.embedding_, est.components_
    n_words = float(X.sum())
    return est.p_d_given_z_ * (est.p_z_ * n_words), est.components_


def measure(name, X, k, Estimator, key, solver, budget):
    params = _params(Estimator, key, solver)
    est, seconds, warned, points, _ = _fit(Estimator, X, k, params)
    row = {
        "corpus": name,
        "estimator": _label(Estimator),
        "solver": _name(solver),
        "n_iter": int(est.n_iter_),
        "warned": warned,
        "seconds": seconds,
        "loss": est.loss_,
    }
    # The reference: ten times as many iterations again from where the fit
    # ended (the hybrid: its last phase's algorithm), tol=0, within a CPU
    # budget (then "capped": the objective the budget reached).
    if Estimator is tf.HybridNMFPLSI:
        Estimator, params = tf.PLSI, {"solver": solver[1]}
    W, H = _state(est, X)
    more = dict(params, init="custom", tol=0, max_iter=10 * max(est.n_iter_, 1))
    ref, ref_seconds, _, ref_points, _ = _fit(
        Estimator, X, k, more, W=W, H=H, budget=budget
    )
    row["capped"] = ref is None
    row["ref_iter"] = len(ref_points)
    ref_loss = ref_points[-1][0] if ref is None else ref.loss_
    row["ref_loss"] = ref_loss
    row["ref_seconds"] = ref_seconds
    row["gap"] = (est.loss_ - ref_loss) / ref_loss
    # CPU time to within 0.1 % of the reference objective along the fit and
    # its continuation (the hybrid's trace restarts with each phase: none).
    if row["estimator"] != "HybridNMFPLSI":
        target = ref_loss * (1 + 1e-3)
        hit = [s for loss, s, _ in points if loss <= target]
        hit += [s + seconds for loss, s, _ in ref_points if loss <= target]
        row["time_to_0.1%"] = hit[0] if hit else None
    return row


# Today's default and the candidate compared by ``--compare``.
PAIRS = [
    (tf.KLNMF, "solver", "mu"),
    (tf.PLSI, "solver", "em"),
    (tf.HybridNMFPLSI, None, ("mu", "em")),
]


def _first_within(points, target):
    """The wall seconds at which a fit's trace first held an objective at or
    below ``target`` (``None``: never)."""
    return next((wall for loss, _, wall in points if loss <= target), None)


def compare(name, X, k, reps, candidate="cd", oracle=None):
    """Median CPU and wall seconds of ``reps`` fits of the former default
    solver (mu/em, the first of ``METHODS``) and of the ``candidate``
    (``"cd"``, ``"dn"`` or ``"auto"``, the default; the hybrid's: in both
    phases), alternating in this process
    after one untimed fit of each; one row per estimator.

    ``oracle`` (CPU seconds): also the least wall time any stopping rule
    could give the candidate's fits.  The candidate's last fit is continued
    (``tol=0``, ten times its iterations, at most ``oracle`` CPU seconds:
    then "capped"), and each timed fit's trace is searched for the first
    iteration whose objective lies within 0.1 % of where the continuation
    ended: the wall seconds to there (median over the fits; the fit's
    whole time where its trace never gets there).  A fit that stopped
    exactly there would meet the 0.1 % target at that time; none can stop
    sooner and meet it.  A capped continuation ends higher than ten times
    the iterations would, so the time is then a lower bound.  Not for the
    hybrid, whose trace restarts with each phase."""
    for Estimator, key, today in PAIRS:
        new = (candidate, candidate) if Estimator is tf.HybridNMFPLSI else candidate
        seconds = {today: [], new: []}
        walls = {today: [], new: []}
        traces = []
        last = {}
        for rep in range(reps + 1):
            for solver in (today, new):
                params = _params(Estimator, key, solver)
                est, cpu, warned, points, wall = _fit(Estimator, X, k, params)
                if rep:
                    seconds[solver].append(cpu)
                    walls[solver].append(wall)
                    if solver == new:
                        traces.append((points, wall))
                last[solver] = (int(est.n_iter_), warned)
                if solver == new:
                    last_fit = est
        row = {"corpus": name, "estimator": Estimator.__name__, "reps": reps}
        for label, solver in (("today", today), ("candidate", new)):
            row[label] = _name(solver)
            row[f"{label}_cpu"] = float(np.median(seconds[solver]))
            row[f"{label}_wall"] = float(np.median(walls[solver]))
            row[f"{label}_n_iter"], row[f"{label}_warned"] = last[solver]
        row["ratio"] = row["candidate_cpu"] / row["today_cpu"]
        row["wall_ratio"] = row["candidate_wall"] / row["today_wall"]
        if oracle is not None and Estimator is not tf.HybridNMFPLSI:
            params = _params(Estimator, key, new)
            W, H = _state(last_fit, X)
            more = dict(
                params, init="custom", tol=0, max_iter=10 * max(last_fit.n_iter_, 1)
            )
            ref, _, _, ref_points, _ = _fit(
                Estimator, X, k, more, W=W, H=H, budget=oracle
            )
            ref_loss = ref_points[-1][0] if ref is None else ref.loss_
            target = ref_loss * (1 + 1e-3)
            hits = [_first_within(points, target) for points, _ in traces]
            row["oracle_capped"] = ref is None
            row["oracle_reached"] = None not in hits
            reached = [
                wall if hit is None else hit
                for hit, (_, wall) in zip(hits, traces, strict=True)
            ]
            row["oracle_wall"] = float(np.median(reached))
            row["oracle_ratio"] = row["oracle_wall"] / row["today_wall"]
        yield row


def rule_check(name, X, k, Estimator, key, solver, budget, factors=(1, 2, 3)):
    """The stopping rule (`engine.loop.stopped`) applied afterwards to one
    long run (``tol=0``, stopped at ``budget`` CPU seconds) at ``tol`` =
    1e-4 times each of ``factors``: where a default fit (``max_iter=200``)
    would have stopped, its CPU time, and its gap to the long run's end;
    and where the objective first came within 0.1 % of that end."""
    run = long_run(name, X, k, Estimator, key, solver, budget, max_iter=100_000)
    # losses[n]: the objective after iteration n, known at cpu[n]; the loop
    # judges iteration n on the objectives of the states 0..n-1 and ends at
    # state n.
    losses, cpu = run["objective"], run["cpu"]
    end = losses[-1]
    row = {"corpus": name, "estimator": Estimator.__name__, "solver": _name(solver)}
    row["long_iter"] = len(losses)
    row["within_0.1%"] = next(
        (i for i, loss in enumerate(losses) if loss <= end * (1 + 1e-3)), None
    )
    for factor in factors:
        n = next(
            (
                n
                for n in range(1, min(200, len(losses) - 1) + 1)
                if stopped(losses[:n], 1e-4 * factor)
            ),
            None,
        )
        stop = n if n is not None else min(200, len(losses) - 1)
        row[f"tol{factor}"] = {
            "n_iter": stop,
            "converged": n is not None,
            "cpu": cpu[stop],
            "gap": (losses[stop] - end) / end,
        }
    return row


# The long runs of ``--time-to-converged``: the former defaults, coordinate
# descent and diagonal Newton (PLSI's "cd" and "dn" run KLNMF's
# iterations, the same objectives).
LONG_RUNS = [
    (tf.KLNMF, "solver", "mu"),
    (tf.PLSI, "solver", "em"),
    (tf.KLNMF, "solver", "cd"),
    (tf.KLNMF, "solver", "dn"),
]


def long_run(name, X, k, Estimator, key, solver, budget, max_iter=3000):
    """One run with ``tol=0`` for ``max_iter`` iterations or ``budget`` CPU
    seconds: the objective after every iteration and the CPU seconds to it
    (after an untimed warm-up fit of the solver)."""
    _fit(Estimator, X, k, dict(_params(Estimator, key, solver), max_iter=2))
    params = dict(_params(Estimator, key, solver), tol=0, max_iter=max_iter)
    _, _, _, points, _ = _fit(Estimator, X, k, params, budget=budget)
    # points[i]: the objective of the state iteration i + 1 started from and
    # the CPU seconds after that iteration; the objective after iteration i
    # is known at points[i - 1]'s time.
    return {
        "corpus": name,
        "estimator": Estimator.__name__,
        "solver": _name(solver),
        "k": k,
        "objective": [loss for loss, _, _ in points],
        "cpu": [0.0] + [s for _, s, _ in points[:-1]],
    }


# The solvers ``--least-time`` runs, per estimator (the former default first).
LEAST_SOLVERS = [
    (tf.KLNMF, ["mu", "cd", "dn"]),
    (tf.PLSI, ["em", "squarem", "cd", "dn"]),
]


def _least_stop(objective):
    """The first iteration ``n`` at which any stopping rule could end a fit
    and meet the 0.1 % line, from ``objective[n]``, the objective after
    ``n`` iterations (``objective[0]``: the start's), of a run of ``L =
    len(objective) - 1`` iterations; ``None`` if none in the run.

    A fit stopped after ``n`` iterations meets the line only if
    ``objective[n] <= 1.001 objective[11 n]``.  The objective never rises,
    so ``objective[min(11 n, L)] >= objective[11 n]``: the first ``n`` with
    ``objective[n] <= 1.001 objective[min(11 n, L)]`` comes no later than
    the first stop that meets the line, whatever the rule.  Where ``11 n``
    passes the run's end the comparison is with that end, a weaker bound
    (the run's last iteration always qualifies)."""
    last = len(objective) - 1
    for n in range(1, last + 1):
        if objective[n] <= (1 + 1e-3) * objective[min(11 * n, last)]:
            return n
    return None


def least_time(name, X, k, budget, reps=3):
    """Per estimator and solver: a lower bound on the least wall time in
    which a fit from the default start, stopped by any rule at all, meets
    the done-when's 0.1 % (`_least_stop` on one run with ``tol=0``, at most 5,000
    iterations or ``budget`` CPU seconds), beside the median wall time of
    ``reps`` fits of the former default (``"mu"`` / ``"em"``, 200
    iterations), all after an untimed warm-up fit."""
    for Estimator, solvers in LEAST_SOLVERS:
        former = {"solver": solvers[0]}
        _fit(Estimator, X, k, dict(former, max_iter=2))
        walls = [_fit(Estimator, X, k, former)[4] for _ in range(reps)]
        former_wall = float(np.median(walls))
        for solver in solvers:
            params = {"solver": solver}
            _fit(Estimator, X, k, dict(params, max_iter=2))
            est, _, _, points, _ = _fit(
                Estimator, X, k, dict(params, tol=0, max_iter=5000), budget=budget
            )
            # points[i]: the objective of the state iteration i + 1 started
            # from, and the wall seconds after iteration i + 1.
            n = _least_stop([loss for loss, _, _ in points])
            least = points[n - 1][2] if n else points[-1][2]
            yield {
                "corpus": name,
                "estimator": Estimator.__name__,
                "solver": solver,
                "former_wall": former_wall,
                "iterations": len(points) - 1,
                "capped": est is None,
                "first_stop": n,
                "least_wall": least,
                "ratio": least / former_wall,
            }


def _read_rows(paths):
    """The records of the JSON-lines files ``paths``, in order."""
    rows = []
    for path in paths:
        with open(path) as f:
            rows += [json.loads(line) for line in f if line.strip()]
    return rows


def _header(columns):
    """A markdown table's header and rule lines for ``columns``."""
    return ["| " + " | ".join(columns) + " |", "|---" * len(columns) + "|"]


def time_to_converged_table(paths):
    """Per corpus and solver: CPU seconds to within 0.1 % of the end of the
    solver's own long run, and of the lowest objective any solver reached."""
    rows = _read_rows(paths)
    corpora = list(dict.fromkeys(r["corpus"] for r in rows))
    solvers = list(dict.fromkeys(r["solver"] for r in rows))
    lines = _header(
        ["corpus"]
        + [
            f"{s}: {column}"
            for s in solvers
            for column in ("s to own end", "s to lowest", "end above lowest")
        ]
    )

    def reach(r, target):
        hit = next((i for i, v in enumerate(r["objective"]) if v <= target), None)
        return "never" if hit is None else f"{r['cpu'][hit]:.2f}"

    for corpus in corpora:
        runs = {r["solver"]: r for r in rows if r["corpus"] == corpus}
        lowest = min(min(r["objective"]) for r in runs.values())
        cells = []
        for s in solvers:
            r = runs.get(s)
            if r is None:
                cells += ["", "", ""]
                continue
            end = min(r["objective"])
            cells += [
                reach(r, end * (1 + 1e-3)),
                reach(r, lowest * (1 + 1e-3)),
                f"{end / lowest - 1:+.2%} ({len(r['objective']) - 1} it.)",
            ]
        lines.append(f"| {corpus} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def table(paths):
    """The markdown table of the results in the JSON-lines files ``paths``."""
    lines = _header(
        ["corpus", "estimator", "solver", "n_iter_", "warned", "CPU s"]
        + ["objective", "gap to 10x", "CPU s to 0.1 %"]
    )
    for r in _read_rows(paths):
        gap = f"{r['gap']:.1e}" + (" (capped)" if r["capped"] else "")
        hit = r.get("time_to_0.1%")
        lines.append(
            f"| {r['corpus']} | {r['estimator']} | {r['solver']} | {r['n_iter']} "
            f"| {'yes' if r['warned'] else 'no'} | {r['seconds']:.2f} "
            f"| {r['loss']:.6g} | {gap} "
            f"| {'—' if hit is None else f'{hit:.2f}'} |"
        )
    return "\n".join(lines)


def compare_table(paths):
    """The markdown table of ``--compare`` results: per corpus and
    estimator, the former default's and the candidate's median CPU seconds,
    iterations and warnings, and their ratio (and the ratio of their median
    wall seconds, where the results have it)."""
    rows = list(_read_rows(paths))
    wall = all("wall_ratio" in r for r in rows)
    oracle = any("oracle_ratio" in r for r in rows)
    lines = _header(
        ["corpus", "estimator", "former default: CPU s / n_iter_ / warned"]
        + ["default: CPU s / n_iter_ / warned", "time ratio"]
        + (["wall time ratio"] if wall else [])
        + (["least wall time to 0.1 %: s / ratio"] if oracle else [])
    )
    for r in rows:
        cells = [
            f"{r[f'{side}_cpu']:.2f} / {r[f'{side}_n_iter']} / "
            f"{'yes' if r[f'{side}_warned'] else 'no'} ({r[side]})"
            for side in ("today", "candidate")
        ]
        line = (
            f"| {r['corpus']} | {r['estimator']} | {cells[0]} | {cells[1]} "
            f"| {r['ratio']:.2f} |" + (f" {r['wall_ratio']:.2f} |" if wall else "")
        )
        if oracle:
            line += " " + _oracle_cell(r) + " |"
        lines.append(line)
    return "\n".join(lines)


def _oracle_cell(r):
    """``--compare-table``'s cell of ``compare(oracle=...)``: wall seconds
    to within 0.1 % and their ratio to the former default's fit; "(capped)"
    where the continuation hit its budget (a lower bound), "(end)" where a
    fit's trace never got there (its whole time counted)."""
    if "oracle_ratio" not in r:
        return "—"
    notes = [n for n, on in (("capped", r["oracle_capped"]),
                             ("end", not r["oracle_reached"])) if on]  # fmt: skip
    note = f" ({', '.join(notes)})" if notes else ""
    return f"{r['oracle_wall']:.2f} / {r['oracle_ratio']:.2f}{note}"


def least_table(paths):
    """The markdown table of ``--least-time`` results."""
    lines = _header(
        ["corpus", "estimator", "solver", "former default: wall s"]
        + ["iterations run", "first iteration a rule could stop at"]
        + ["least wall s to 0.1 %", "ratio"]
    )
    for r in _read_rows(paths):
        run = f"{r['iterations']}" + (" (capped)" if r["capped"] else "")
        stop = str(r["first_stop"])
        if 11 * r["first_stop"] > r["iterations"]:
            stop += " (against the run's end)"
        lines.append(
            f"| {r['corpus']} | {r['estimator']} | {r['solver']} "
            f"| {r['former_wall']:.2f} | {run} | {stop} "
            f"| {r['least_wall']:.2f} | {r['ratio']:.2f} |"
        )
    return "\n".join(lines)


def add_backend_argument(parser):
    """``--backend``: the kernels' backend (`sklearn_topicfac.set_config`)."""
    parser.add_argument(
        "--backend",
        choices=["auto", "numpy", "numba"],
        default="auto",
        help="the kernels' backend (sklearn_topicfac.set_config)",
    )


def _emit(row, out, shown=None):
    """Print ``row`` (or the line ``shown`` in its place) and append it to
    the JSON-lines file ``out``."""
    print(json.dumps(row) if shown is None else shown, flush=True)
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpora", nargs="*", default=TUNING + VALIDATION)
    parser.add_argument(
        "--estimators",
        nargs="*",
        help="only these estimators (default fits; default: all four)",
    )
    parser.add_argument(
        "--joint-normalize",
        choices=["components", "both"],
        default="components",
        help="JointNMF's normalize",
    )
    parser.add_argument("--out", default="/tmp/kl-solver/convergence.jsonl")
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--budget", type=float, default=40.0)
    parser.add_argument(
        "--solvers",
        nargs="*",
        help="only these solvers (e.g. mu cd em cd/cd; default: all)",
    )
    parser.add_argument(
        "--compare",
        type=int,
        metavar="REPS",
        help="instead: median CPU s of REPS fits, former default vs candidate",
    )
    parser.add_argument(
        "--oracle",
        type=float,
        metavar="CPU_S",
        help="with --compare: also the least wall time any stopping rule could "
        "give the candidate (its fits' traces against a continuation of at "
        "most CPU_S CPU seconds)",
    )
    parser.add_argument(
        "--candidate",
        choices=["cd", "dn", "auto"],
        default="cd",
        help="the solver --compare sets against the former (auto: the default)",
    )
    add_backend_argument(parser)
    parser.add_argument(
        "--rule-check",
        action="store_true",
        help="instead: the stopping rule at 1, 2, 3 x tol on one long run per solver",
    )
    parser.add_argument(
        "--time-to-converged",
        action="store_true",
        help="instead: one long run (tol=0, --budget CPU s, 3000 iterations "
        "at most) of mu, em, cd and dn per corpus (--solvers: only these)",
    )
    parser.add_argument(
        "--least-time",
        action="store_true",
        help="instead: per solver of KLNMF and PLSI, the least wall time any "
        "stopping rule could give a fit from the default start (one run, "
        "tol=0, --budget CPU s), beside the former default's fit",
    )
    parser.add_argument(
        "--least-table", nargs="*", help="print the table of these --least-time results"
    )
    parser.add_argument(
        "--ttc-table",
        nargs="*",
        help="print the time-to-converged table of these long runs",
    )
    parser.add_argument("--table", nargs="*", help="print the table of these results")
    parser.add_argument(
        "--compare-table", nargs="*", help="print the table of these --compare results"
    )
    parser.add_argument(
        "--write-doc",
        metavar="NAME",
        help="also write the tables as the generated block NAME (docs/_data)",
    )
    args = parser.parse_args()
    tables = [
        (args.ttc_table, time_to_converged_table),
        (args.least_table, least_table),
        (args.compare_table, compare_table),
        (args.table, table),
    ]
    for paths, make in tables:
        if paths:
            text = make(paths)
            print(text)
            if args.write_doc:
                from _docblocks import write_doc

                write_doc(args.write_doc, text, "docs/real_text.md")
            return
    globals()["DATA"] = Path(args.data)
    JOINT_PARAMS["normalize"] = args.joint_normalize
    tf.set_config(backend=args.backend)
    for name in args.corpora:
        X, y = CORPORA[name]()
        X = sp.csr_matrix(X, dtype=np.float64)
        k = len(np.unique(y))
        if args.compare:
            rows = compare(name, X, k, args.compare, args.candidate, args.oracle)
            for row in rows:
                _emit(row, args.out)
            continue
        if args.least_time:
            for row in least_time(name, X, k, args.budget):
                _emit(row, args.out)
            continue
        if args.time_to_converged:
            for Estimator, key, solver in LONG_RUNS:
                if args.solvers and _name(solver) not in args.solvers:
                    continue
                row = long_run(name, X, k, Estimator, key, solver, args.budget)
                _emit(row, args.out, f"{name} {row['solver']} {len(row['objective'])}")
            continue
        if args.rule_check:
            for Estimator, key, solvers in METHODS:
                for solver in solvers:
                    if args.solvers and _name(solver) not in args.solvers:
                        continue
                    if Estimator is tf.HybridNMFPLSI:
                        continue
                    row = rule_check(name, X, k, Estimator, key, solver, args.budget)
                    _emit(row, args.out)
            continue
        chosen = [
            (Estimator, key, solver)
            for Estimator, key, solvers in METHODS
            for solver in solvers
            if not args.solvers or _name(solver) in args.solvers
            if not args.estimators or Estimator.__name__ in args.estimators
        ]
        # One-time costs (imports, numba's compile or cache load) are paid
        # by a warm-up fit of each solver, not by the first timed one.
        for Estimator, key, solver in chosen:
            _fit(Estimator, X, k, dict(_params(Estimator, key, solver), max_iter=2))
        for Estimator, key, solver in chosen:
            row = measure(name, X, k, Estimator, key, solver, args.budget)
            _emit(row, args.out)


if __name__ == "__main__":
    main()
