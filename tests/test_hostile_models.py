"""Model files from someone else cannot crash, hang or fool the library.

Each file of ``tests/_hostile_models.py`` is loaded and applied in a
subprocess (a crash or a hang must not take the test run with it):

- guarded, as users do: ``sklearn_topicfac.load(path).transform(...)`` and
  ``topicfac apply``, on both backends -- every file must end in a
  ``ValueError`` / a one-line CLI error (status 1) without a control
  character, with nothing written;
- unguarded (slow tier): skops' own loader with the types trusted, then
  ``transform``, as ``load`` did before it checked what it built -- every
  file must then misbehave (signal death, hang, NaN, output from a model no
  fit produces, a file opened by name, memory blown up, an error other
  than ``ValueError``), which shows that each guarded case can fail.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.io
from _hostile_models import CASES, DOCS, N_FEATURES

REPO_ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent

_DRIVER = textwrap.dedent(
    """
    import contextlib, io, json, sys, warnings
    import numpy as np, scipy.io
    warnings.simplefilter("ignore")
    import sklearn_topicfac as tf
    from sklearn_topicfac.cli import main

    folder, backend, mode, counts, text = sys.argv[1:6]
    tf.set_config(backend=backend)
    X = scipy.io.loadmat(counts)["X"]
    docs = open(text).read().splitlines()
    results = {}
    for path in sys.argv[6:]:
        name = path.rsplit("/", 1)[-1].removesuffix(".skops")
        data = docs if name.startswith("pipeline") else X
        outcome = {}
        if mode == "unguarded":
            import resource
            import skops.io
            from sklearn.utils.validation import check_is_fitted
            from sklearn_topicfac.estimators import TopicEstimator

            # transform as before its shape checks, too
            TopicEstimator._check_fitted = check_is_fitted
            tf.SimplexPLSA._check_fitted = check_is_fitted
            try:
                trusted = skops.io.get_untrusted_types(file=path)
                model = skops.io.load(path, trusted=trusted)
                out = np.asarray(model.transform(data), dtype=float)
                outcome["api"] = "nan" if not np.all(np.isfinite(out)) else "output"
                outcome["memory"] = getattr(model, "memory", None)
            except ValueError as exc:
                outcome["api"] = "ValueError: " + str(exc)
            except BaseException as exc:
                outcome["api"] = "other: " + type(exc).__name__ + ": " + str(exc)[:200]
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            outcome["peak_mib"] = peak / 1024
        else:
            try:
                model = tf.load(path)
                out = model.transform(data)
                outcome["api"] = "loaded"
            except ValueError as exc:
                outcome["api"] = "ValueError: " + str(exc)
            except BaseException as exc:
                outcome["api"] = "other: " + type(exc).__name__ + ": " + str(exc)
            inputs = text if name.startswith("pipeline") else counts
            target = folder + "/" + name + "-topics.csv"
            err = io.StringIO()
            quiet = contextlib.redirect_stdout(io.StringIO())
            with contextlib.redirect_stderr(err), quiet:
                try:
                    status = main(["apply", path, inputs, "--doc-topics", target])
                except SystemExit as exc:
                    status = exc.code
            outcome["cli"] = [status, err.getvalue()]
            import os
            outcome["cli_wrote"] = os.path.exists(target)
        results[name] = outcome
        print(json.dumps({name: outcome}), flush=True)
    """
)


def _run(folder, backend, mode, paths, timeout):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        str(p) for p in (REPO_ROOT, TESTS, env.get("PYTHONPATH")) if p
    )
    return subprocess.run(
        [
            sys.executable,
            "-c",
            _DRIVER,
            str(folder),
            backend,
            mode,
            str(folder / "counts.mat"),
            str(folder / "docs.txt"),
            *map(str, paths),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    X = np.random.default_rng(1).poisson(1.0, size=(3, N_FEATURES)).astype(float)
    scipy.io.savemat(folder / "counts.mat", {"X": X})
    # For the vectorizer with input="filename": lines naming files.
    (folder / "docs.txt").write_text(
        "\n".join([*DOCS[:2], str(folder / "no-such-file.txt")]) + "\n"
    )
    return folder, {name: build(folder) for name, build in CASES.items()}


def _outcomes(result):
    outcomes = {}
    for line in result.stdout.splitlines():
        if line.startswith("{"):
            outcomes.update(json.loads(line))
    return outcomes


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_every_hostile_file_is_refused_by_load_and_apply(hostile, backend):
    if backend == "numba":
        pytest.importorskip("numba")
    folder, paths = hostile
    result = _run(folder, backend, "guarded", paths.values(), timeout=240)
    assert result.returncode == 0, result.stderr[-2000:]
    outcomes = _outcomes(result)
    assert sorted(outcomes) == sorted(paths)
    for name, outcome in outcomes.items():
        assert outcome["api"].startswith("ValueError: "), (name, outcome["api"])
        assert "\x1b" not in outcome["api"], name
        status, err = outcome["cli"]
        assert status == 1, (name, outcome["cli"])
        assert err.startswith("topicfac apply: error: ") and err.count("\n") == 1, name
        assert not any(ord(c) < 32 for c in err[:-1]), (name, err)
        assert not outcome["cli_wrote"], name
    assert not (folder / "cache").exists()  # no cache written or read


# What the unguarded path does with each file: anything but a clean refusal.
_MISBEHAVES = ("signal", "hang", "nan", "output", "other")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_unguarded_path_misbehaves(hostile, name):
    folder, paths = hostile
    # The compiled backend where only it misbehaves (it reads past arrays).
    backend = "numba" if name != "fifo" else "numpy"
    pytest.importorskip("numba")
    try:
        result = _run(folder, backend, "unguarded", [paths[name]], timeout=20)
    except subprocess.TimeoutExpired:
        return  # a hang: misbehaves
    if result.returncode < 0:
        return  # killed by a signal (a crash)
    outcomes = _outcomes(result)
    if name not in outcomes:  # died without a word (e.g. glibc's abort)
        assert result.returncode != 0, result.stdout
        return
    outcome = outcomes[name]["api"]
    if name == "decompression_bomb":
        # Loading inflated the 256 KB file's 256 MiB member in memory.
        assert outcomes[name]["peak_mib"] > 256, outcomes[name]
        return
    if name == "pipeline_with_a_cache":
        # Loads, and a refit would read the pickles in its cache folder.
        assert outcomes[name]["memory"] is not None
        return
    assert outcome.split(":")[0] in _MISBEHAVES, (name, outcome)


def _corrupt(folder, backend, seed, n):
    result = subprocess.run(
        [sys.executable, str(TESTS / "_corrupted_models.py"), str(folder), backend]
        + [str(seed), str(n)],
        capture_output=True,
        text=True,
        cwd=folder,
        timeout=600,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(map(str, (REPO_ROOT, TESTS)))},
    )
    assert result.returncode == 0, result.stderr[-2000:]  # no crash
    return json.loads(result.stdout.splitlines()[-1])


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_randomly_corrupted_models_are_refused_or_unchanged(tmp_path, backend):
    # Random corruptions of one fitted attribute each (shape, dtype, byte
    # order, a NaN / inf / negative entry, its type): loading and applying
    # them ends in a ValueError or the unchanged model's output, never a
    # crash, hang, other error or different output.
    if backend == "numba":
        pytest.importorskip("numba")
    report = _corrupt(tmp_path, backend, seed=0, n=150)
    assert report["bad"] == [], report
    assert report["counts"]["ValueError"] > 100, report  # it corrupts


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_many_randomly_corrupted_models_are_refused_or_unchanged(
    tmp_path, backend, seed
):
    if backend == "numba":
        pytest.importorskip("numba")
    report = _corrupt(tmp_path, backend, seed=seed, n=1000)
    assert report["bad"] == [], report
