"""The benchmarks' runner: each measurement in a fresh process, ours and the
peer's the same way, medians over repeats.

A measurement is a *task*, a JSON-able dict naming a function of a task
module and its arguments.  `measure` runs it in a new Python process
(``python <module>.py --child '<task>'``), so that the fit it times is the
first of its process, as a user's first fit is: imports, NumPy's and
SciPy's first calls and, with numba, the compile of the kernels it runs
(from an empty cache when ``fresh_cache``) are counted.  The interpreter
may be another environment's (``python=``): a virtual environment with
only what ``pip install`` of the built wheel pulls in is the install users
get.  `median_of` repeats a task and keeps the median of each number.

`busy` starts CPU-bound processes beside the measurements (a machine under
load), and `write` hands the tables to the doc-block writer.
"""

import functools
import json
import os
import subprocess
import sys
import tempfile
from contextlib import contextmanager

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def child(tasks):
    """The entry point of a task module: ``--child '<task>'`` runs one task
    of ``tasks`` (a dict of functions) and prints its result as JSON."""
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        task = json.loads(sys.argv[2])
        result = tasks[task.pop("task")](**task)
        package = sys.modules.get("sklearn_topicfac")
        if package is not None:
            result["package_measured"] = package.__file__
        print("RESULT " + json.dumps(result), flush=True)
        return True
    return False


# What `measure` uses when a call does not say: `compiled_beforehand` sets it.
SETTINGS = {"fresh_cache": True, "env": {}}


def compiled_beforehand(python=None):
    """Compile the numba kernels once (`sklearn_topicfac.compile_kernels`)
    into a new numba cache that every later `measure` uses (``fresh_cache``
    off): the set-up of a user who ran ``topicfac compile`` once.  Returns
    the compile's seconds."""
    folder = tempfile.mkdtemp(prefix="compiled-kernels-")
    env = {
        "NUMBA_CACHE_DIR": os.path.join(folder, "numba"),
        "XDG_CACHE_HOME": os.path.join(folder, "cache"),
    }
    done = subprocess.run(
        [
            python or sys.executable,
            "-c",
            "import sklearn_topicfac as tf; "
            "print(tf.compile_kernels(verbose=False)['seconds'])",
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ, **env),
        check=True,
        cwd=tempfile.gettempdir(),
    )
    SETTINGS.update(fresh_cache=False, env=env)
    return float(done.stdout.split()[-1])


def measure(script, task, *, python=None, fresh_cache=None, env=None, timeout=3600):
    """Run ``task`` in a new process of ``python`` (default: this one) and
    return its result dict; ``fresh_cache``: numba compiles from an empty
    cache (a new ``NUMBA_CACHE_DIR``); ``fresh_cache`` and ``env`` default
    to `SETTINGS`."""
    python = python or sys.executable
    if fresh_cache is None:
        fresh_cache = SETTINGS["fresh_cache"]
    environment = dict(os.environ, **SETTINGS["env"], **(env or {}))
    # No empty entry (it would mean the working directory: run from the
    # checkout, the child would import the checkout's package instead of
    # the interpreter's own), and the child runs outside the checkout.
    environment["PYTHONPATH"] = os.pathsep.join(
        p for p in (HERE, environment.get("PYTHONPATH")) if p
    )
    with tempfile.TemporaryDirectory() as cache:
        if fresh_cache:
            environment["NUMBA_CACHE_DIR"] = cache
        done = subprocess.run(
            [python, os.path.join(HERE, script), "--child", json.dumps(task)],
            capture_output=True,
            text=True,
            env=environment,
            timeout=timeout,
            check=False,
            cwd=tempfile.gettempdir(),
        )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
    if done.returncode or not lines:
        raise RuntimeError(
            f"task {task} failed ({done.returncode}):\n{done.stderr[-3000:]}"
        )
    result = json.loads(lines[-1][len("RESULT ") :])
    measured = result.pop("package_measured", None)
    installed = interpreter_description(python)["package"]
    if measured is not None and measured != installed:
        raise RuntimeError(
            f"task {task} imported the package from {measured}, not the "
            f"interpreter's own ({installed}): the measurement would not be "
            "of the install it names"
        )
    return result


def median_of(script, task, repeats, **kwargs):
    """`measure` ``repeats`` times; the median of every numeric field (the
    other fields from the first run) and ``"runs"``, the per-run seconds."""
    results = [measure(script, task, **kwargs) for _ in range(repeats)]
    out = dict(results[0])
    for key, value in results[0].items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = float(np.median([r[key] for r in results]))
    out["runs"] = [r.get("seconds") for r in results]
    return out


_BUSY = "import time\nend = time.time() + {seconds}\nwhile time.time() < end: pass\n"


@contextmanager
def busy(n_processes, seconds=7200):
    """``n_processes`` CPU-bound Python processes for the length of the block."""
    procs = [
        subprocess.Popen([sys.executable, "-c", _BUSY.format(seconds=seconds)])
        for _ in range(n_processes)
    ]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


@functools.cache
def interpreter_description(python=None):
    """What the interpreter has: versions of the package's runtime stack."""
    code = (
        "import json, importlib.util as u, numpy, scipy, sklearn, sklearn_topicfac\n"
        "print(json.dumps({'numpy': numpy.__version__, 'scipy': scipy.__version__,"
        " 'scikit-learn': sklearn.__version__,"
        " 'numba': u.find_spec('numba') is not None,"
        " 'package': sklearn_topicfac.__file__}))"
    )
    out = subprocess.run(
        [python or sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=tempfile.gettempdir(),
    )
    return json.loads(out.stdout)
