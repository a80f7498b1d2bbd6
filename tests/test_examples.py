"""Every script in examples/ runs (with its --quick settings) and succeeds."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def _arguments(script, tmp_path):
    if script.name == "choosing_k.py":
        # The GridSearchCV assertions for every estimator are in
        # test_choosing_k.py; here the script itself, report and figure.
        return [
            "--quick",
            "--estimators",
            "KLNMF",
            "--no-ic",
            "--report",
            str(tmp_path / "report.md"),
            "--figure",
            str(tmp_path / "curves.png"),
        ]
    if script.name == "cluster_raw_text.py":
        # An empty data directory: the bundled-corpus path, the same anywhere.
        return ["--quick", "--data-dir", str(tmp_path)]
    if script.name in ("inspect_topics.py", "topic_identity.py"):
        return ["--quick", "--out-dir", str(tmp_path)]
    return ["--quick"]


def test_every_example_is_covered():
    assert {p.name for p in EXAMPLES} == {
        "choosing_k.py",
        "cluster_raw_text.py",
        "inspect_topics.py",
        "topic_identity.py",
    }


# About 20 s and 7 s: run with the slow tests.
SLOW_EXAMPLES = {"choosing_k.py", "inspect_topics.py"}


@pytest.mark.parametrize(
    "script",
    [
        pytest.param(p, id=p.name, marks=pytest.mark.slow)
        if p.name in SLOW_EXAMPLES
        else pytest.param(p, id=p.name)
        for p in EXAMPLES
    ],
)
def test_example_runs(script, tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg")
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), env.get("PYTHONPATH")) if p
    )
    result = subprocess.run(
        [sys.executable, str(script), *_arguments(script, tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    if script.name == "choosing_k.py":
        assert "within +/-20%" in result.stdout
        report = (tmp_path / "report.md").read_text()
        assert re.search(r"^\| 5 \| KLNMF \| \d+ \| yes \|", report, re.MULTILINE)
        assert (tmp_path / "curves.png").stat().st_size > 0
    if script.name == "topic_identity.py":
        # The guide (docs/guide/inspecting.md) quotes these lines.
        guide = (ROOT / "docs" / "guide" / "inspecting.md").read_text()
        for line in result.stdout.splitlines()[:4] + ["topic 1 split into [0, 2]"]:
            assert line in result.stdout and line in guide, line
        assert (tmp_path / "classic3_report.html").stat().st_size > 10_000
    if script.name == "inspect_topics.py":
        for name in ("top_terms.png", "loss_history.png", "document_map.png"):
            assert (tmp_path / name).stat().st_size > 0
    if script.name == "cluster_raw_text.py":
        assert "Classic3 (bundled): 600 documents, 3 classes" in result.stdout
        assert "accuracy" in result.stdout
