"""The built wheel holds every file of the package, its license and the CLI.

``pyproject.toml`` once listed the packages by hand and the wheel silently
lacked ``sklearn_topicfac.cli``; the tests that run from the checkout could
not see it.  This test builds the wheel (or reads the one named by
``TOPICFAC_WHEEL``, as ``.ci/run`` does) and compares it with the files git
tracks under ``sklearn_topicfac/``.  ``.ci/run`` also installs that wheel in
a fresh virtual environment and runs it from outside the checkout
(``.ci/check_installed.py``).
"""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def _package_files():
    """The package's files in the checkout: git's list, else the folder's."""
    if shutil.which("git") and (ROOT / ".git").exists():
        listed = subprocess.run(
            ["git", "ls-files", "sklearn_topicfac"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        if listed:
            return set(listed)
    return {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "sklearn_topicfac").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    given = os.environ.get("TOPICFAC_WHEEL")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", out, ROOT],
        check=True,
    )
    (built,) = out.glob("sklearn_topicfac-*.whl")
    return built


def test_the_wheel_holds_every_file_of_the_package(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    expected = _package_files()
    assert "sklearn_topicfac/cli/__init__.py" in expected
    missing = sorted(expected - names)
    assert not missing, f"{wheel.name} lacks {missing}"


def test_the_wheel_ships_the_license_and_the_command(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        license_text = archive.read(f"{info}/licenses/LICENSE").decode()
        metadata = archive.read(f"{info}/METADATA").decode()
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
    assert license_text == (ROOT / "LICENSE").read_text()
    assert "License-Expression: BSD-3-Clause" in metadata
    assert "topicfac = sklearn_topicfac.cli:main" in entry_points
