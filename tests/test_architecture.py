"""The architecture of the package: floors, no import circle, thin estimators.

The package reads in floors (``kernels`` and ``_validation`` at the bottom,
then ``models``, ``engine``, ``estimators``, the helpers and the command
line).  The floors are an import-linter contract in ``pyproject.toml``;
these tests run it, and check with grimp (import-linter's import graph,
which sees every import statement, function-level ones included) that no
module takes part in an import circle.
"""

import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _import_graph():
    return grimp.build_graph("sklearn_topicfac", cache_dir=None)


def _circles(graph):
    """Strongly connected groups of more than one module (Tarjan's algorithm)."""
    modules = sorted(graph.modules)
    index, low, on_stack, stack, groups = {}, {}, set(), [], []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in sorted(graph.find_modules_directly_imported_by(module)):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                group.append(other)
                if other == module:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for module in modules:
        if module not in index:
            visit(module)
    return groups


def test_no_import_circle():
    assert _circles(_import_graph()) == []


def test_the_circle_check_finds_a_circle():
    graph = grimp.ImportGraph()
    for module in ("a", "b", "c"):
        graph.add_module(module)
    graph.add_import(importer="a", imported="b")
    graph.add_import(importer="b", imported="c")
    assert _circles(graph) == []
    graph.add_import(importer="c", imported="a")
    assert _circles(graph) == [["a", "b", "c"]]


def test_imports_run_downward_only():
    command = "from importlinter.cli import lint_imports; raise SystemExit("
    command += "lint_imports(no_cache=True, no_logo=True))"
    result = subprocess.run(
        [sys.executable, "-c", command], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


@pytest.mark.parametrize("floor", ["kernels", "models", "engine"])
def test_lower_floors_know_no_estimator(floor):
    graph = _import_graph()
    imported = {
        other
        for module in graph.find_descendants(f"sklearn_topicfac.{floor}")
        | {f"sklearn_topicfac.{floor}"}
        for other in graph.find_modules_directly_imported_by(module)
    }
    assert not {m for m in imported if m.startswith("sklearn_topicfac.estimators")}
    assert "sklearn_topicfac" not in imported


def test_the_command_line_is_the_top_floor():
    # Only `python -m sklearn_topicfac` imports the command's package; the
    # command's modules import the library, never the other way round.
    graph = _import_graph()
    cli = graph.find_descendants("sklearn_topicfac.cli") | {"sklearn_topicfac.cli"}
    importers = {
        importer
        for module in cli
        for importer in graph.find_modules_that_directly_import(module)
    }
    assert importers - cli == {"sklearn_topicfac.__main__"}


def _auto_constants(source):
    """Line numbers of the string ``"auto"`` in code (docstrings aside)."""
    import ast

    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(
            node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
        )
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and node.value == "auto"
        and id(node) not in docstrings
    ]


def test_the_auto_check_finds_an_auto():
    assert _auto_constants('"""Doc: "auto"."""\nsolver = "auto"\n') == [2]
    assert _auto_constants('def f():\n    """"auto" here."""\n') == []


@pytest.mark.parametrize("floor", ["kernels", "models", "engine"])
def test_no_auto_is_resolved_below_the_estimators(floor):
    # Every "auto" of the parameters (solver, max_iter, priors, inference)
    # is resolved once, at the estimator's fit entry; the floors below
    # receive the resolved values.  (The backend's "auto" is the
    # configuration's per-call rule, read in _config, not here.)
    found = {
        str(path.relative_to(ROOT)): lines
        for path in sorted((ROOT / "sklearn_topicfac" / floor).rglob("*.py"))
        if (lines := _auto_constants(path.read_text()))
    }
    assert found == {}


def test_estimators_fit_through_engine_no_transform():
    # No side door: an estimator hands its plan to engine.fit and runs no
    # iterations of its own (LDAVI's CVB0 "starts, then the best runs on"
    # is a plan field, engine.Plan.run_on).
    graph = _import_graph()
    for module in sorted(graph.find_children("sklearn_topicfac.estimators")):
        imported = graph.find_modules_directly_imported_by(module)
        assert "sklearn_topicfac.engine.iterations" not in imported, module
        assert "sklearn_topicfac.engine.fitting" not in imported, module
        source = (ROOT / (module.replace(".", "/") + ".py")).read_text()
        for call in ("run_on(", "iterations.run(", "iteration_loop("):
            assert call not in source, (module, call)
