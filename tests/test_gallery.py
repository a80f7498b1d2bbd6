"""The examples gallery: examples/gallery/plot_*.py, which the documentation
build runs through sphinx-gallery (docs/conf.py).

Every script runs as a plain script too, prints topics and a clustering
accuracy above what a single cluster scores, and leaves at least one
matplotlib figure; the wiring that makes a fresh clone build the gallery
(the docs extra, the configuration, the link from the index, the generated
folder kept out of git) is checked without running Sphinx.
"""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator

import sklearn_topicfac
from sklearn_topicfac.datasets import load_classic3

ROOT = Path(__file__).resolve().parents[1]
GALLERY = ROOT / "examples" / "gallery"
SCRIPTS = sorted(GALLERY.glob("plot_*.py"))

# Runs a script as sphinx-gallery does (as __main__, figures left open),
# then saves every figure it drew into the folder given.
RUNNER = """
import runpy, sys
import matplotlib.pyplot as plt
script, out = sys.argv[1], sys.argv[2]
runpy.run_path(script, run_name="__main__")
for number in plt.get_fignums():
    plt.figure(number).savefig(f"{out}/figure_{number}.png")
"""

ACCURACY = re.compile(r"^clustering accuracy of [^:\n]*: (\S+)$", re.MULTILINE)


def _gallery_text():
    return "\n".join(script.read_text() for script in SCRIPTS)


def test_there_is_a_gallery():
    assert len(SCRIPTS) >= 6
    assert (GALLERY / "GALLERY_HEADER.rst").is_file()


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_script_has_a_gallery_header(script):
    # sphinx-gallery's format: a docstring opening with a title underlined
    # with "=", then text; the sections are "# %%" comment blocks.
    lines = ast.get_docstring(ast.parse(script.read_text())).splitlines()
    assert len(lines) > 3 and lines[0].strip(), script.name
    assert lines[1] == "=" * len(lines[0]), script.name
    assert "\n# %%\n" in script.read_text()


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_script_imports_nothing_from_the_other_examples(script):
    others = {p.stem for p in (ROOT / "examples").glob("*.py")}
    imported = set()
    for node in ast.walk(ast.parse(script.read_text())):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert not imported & (others | {"examples"}), script.name


def test_every_estimator_and_inspection_tool_has_an_example():
    text = _gallery_text()
    estimators = [
        name
        for name in sklearn_topicfac.__all__
        if isinstance(getattr(sklearn_topicfac, name), type)
        and issubclass(getattr(sklearn_topicfac, name), BaseEstimator)
    ]
    assert len(estimators) >= 8
    tools = ["select_n_components", "top_terms", "write_report"]
    tools += ["align_topics", "topic_stability"]
    for name in estimators + tools:
        assert re.search(rf"\b{name}\(", text), name


def test_a_fresh_clone_builds_the_gallery():
    conf = (ROOT / "docs" / "conf.py").read_text()
    assert '"sphinx_gallery.gen_gallery"' in conf
    assert '"examples_dirs": "../examples/gallery"' in conf
    assert '"gallery_dirs": "auto_examples"' in conf
    # The docs extra (one line of pyproject.toml; tomllib needs Python 3.11).
    (docs,) = re.findall(
        r"^docs = \[(.*)\]$", (ROOT / "pyproject.toml").read_text(), re.M
    )
    assert re.search(r'"sphinx-gallery\b', docs)
    index = (ROOT / "docs" / "index.md").read_text()
    assert re.search(r"```\{toctree\}[^`]*\nauto_examples/index\n", index)
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert "docs/auto_examples/" in ignored
    assert "sphinx-build -W -b html docs" in (ROOT / ".ci" / "run").read_text()


@pytest.mark.slow  # about a minute for all of them
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_script_runs_and_clusters_above_chance(script, tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg")
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), env.get("PYTHONPATH")) if p
    )
    result = subprocess.run(
        [sys.executable, "-c", RUNNER, str(script), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Traceback" not in result.stderr, output

    # The topics: top_terms tables print one "topic z: ..." line per topic
    # (SimplexPLSA's example, one "vertex z: ..." line per vertex).
    assert re.search(r"^(?:topic|vertex) 0: \w+", result.stdout, re.M), output

    # Accuracies in [0, 1], each above the share of the largest class (what
    # putting every document in one cluster scores).
    target = load_classic3().target
    chance = np.bincount(target).max() / target.size
    accuracies = ACCURACY.findall(result.stdout)
    assert accuracies, output
    for text in accuracies:
        accuracy = float(text)
        assert 0 <= accuracy <= 1, text
        assert accuracy > chance, (accuracy, chance)

    figures = sorted(tmp_path.glob("figure_*.png"))
    assert figures, "no matplotlib figure left open"
    assert all(figure.stat().st_size > 5_000 for figure in figures)
