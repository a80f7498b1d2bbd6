"""The package is ruff-clean and every public object documents a runnable example."""

import inspect
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import sklearn_topicfac
from sklearn_topicfac import datasets, inspection, metrics, model_selection

ROOT = Path(__file__).resolve().parents[1]


def _public_objects():
    for name in sklearn_topicfac.__all__:
        obj = getattr(sklearn_topicfac, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            yield name, obj
    for module in (datasets, inspection, metrics, model_selection):
        for name in getattr(module, "__all__", []):
            yield f"{module.__name__}.{name}", getattr(module, name)


@pytest.mark.parametrize(
    "name, obj", [pytest.param(*item, id=item[0]) for item in _public_objects()]
)
def test_public_objects_have_a_docstring_with_an_example(name, obj):
    # The examples themselves run under pytest --doctest-modules.
    doc = inspect.getdoc(obj) or ""
    assert "Examples\n--------" in doc and ">>>" in doc, (
        f"{name} has no runnable example"
    )


def test_ruff_is_clean():
    ruff = shutil.which("ruff")
    cmd = [ruff] if ruff else [sys.executable, "-m", "ruff"]
    result = subprocess.run(
        [*cmd, "check", "sklearn_topicfac", "tests", "benchmarks", "examples"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
