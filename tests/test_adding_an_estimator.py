"""docs/guide/adding_an_estimator.md's promise: a new estimator is three files.

The page's model and estimator are written as the two files it names into a
copy of the repository, its registry entry into that copy's
``tests/_estimators.py``, and the common suite (every contract of
``tests/test_common.py``, the block-wise and the Dask fits of
``tests/engine``) is run there on the new estimator alone.  Nothing else of
the copy is touched.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_docs import PAGE, _code_blocks

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

MODEL = "sklearn_topicfac/models/smoothed_plsi.py"
ESTIMATOR = "sklearn_topicfac/estimators/smoothed_plsi.py"
REGISTRY = "tests/_estimators.py"


def _copy_of_the_repository(target):
    """The files git tracks (as they are in the working tree)."""
    listed = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    for name in listed:
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def _with_the_three_files(target):
    model, estimator, _free = _code_blocks(PAGE)
    (entry,) = _code_blocks(PAGE, "text")
    (target / MODEL).write_text(model)
    (target / ESTIMATOR).write_text(estimator)
    registry = (target / REGISTRY).read_text()
    anchor = "\nREGISTRY = (\n"
    assert anchor in registry
    registry = registry.replace(anchor, anchor + entry.rstrip() + ",\n", 1)
    registry = registry.replace(
        "\nimport sklearn_topicfac as tf\n",
        "\nimport sklearn_topicfac as tf\n"
        "from sklearn_topicfac.estimators.smoothed_plsi import SmoothedPLSI\n",
        1,
    )
    (target / REGISTRY).write_text(registry)
    return [MODEL, ESTIMATOR, REGISTRY]


def test_the_guides_estimator_is_three_files_and_passes_the_common_suite(tmp_path):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs the git checkout")
    copy = tmp_path / "repo"
    _copy_of_the_repository(copy)
    changed = _with_the_three_files(copy)
    differing = sorted(
        str(path.relative_to(copy))
        for path in copy.rglob("*")
        if path.is_file()
        and "__pycache__" not in path.parts
        and (
            not (ROOT / path.relative_to(copy)).is_file()
            or (ROOT / path.relative_to(copy)).read_bytes() != path.read_bytes()
        )
    )
    assert differing == sorted(changed)
    env = {**os.environ, "PYTHONPATH": str(copy)}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "-k",
            "SmoothedPLSI",
            "tests/test_common.py",
            "tests/engine/test_out_of_core.py",
            "tests/engine/test_distributed.py",
        ],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    summary = result.stdout.strip().splitlines()[-1] if result.stdout else ""
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "failed" not in summary and "error" not in summary, summary
    passed = int(summary.split(" passed")[0].split()[-1])
    assert passed >= 100, summary  # the suite ran, not a handful of tests
