"""Every compiled twin is its NumPy kernel's, by name, place and signature.

A twin (`sklearn_topicfac.kernels.compiled`) runs instead of the NumPy
kernel of the same name when the numba backend is selected: the kernel
calls it with its own arguments (``fast.<name>(...)``).  So each twin lives
in the module of the package named like its kernel's family module
(``kernels/products.py``'s twins in ``kernels/compiled/products.py``), is
exported by the package, and takes its kernel's parameters: the same names,
order, kinds and defaults.  The differences a twin's contract needs are
stated below, each with its reason, and checked exactly.
"""

import ast
import importlib
import inspect
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("numba")

from sklearn_topicfac import kernels  # noqa: E402
from sklearn_topicfac.kernels import compiled  # noqa: E402

# The family modules of the package (`_common` is shared machinery).
FAMILIES = sorted(
    m.name for m in pkgutil.iter_modules(compiled.__path__) if m.name[0] != "_"
)


def _defined():
    """``(family, name, twin)`` of every public function a family module
    defines."""
    for family in FAMILIES:
        module = importlib.import_module(f"{compiled.__name__}.{family}")
        for name, obj in vars(module).items():
            if (
                inspect.isfunction(obj)
                and obj.__module__ == module.__name__
                and name[0] != "_"
            ):
                yield family, name, obj


DEFINED = list(_defined())
TWINS = {name: twin for _, name, twin in DEFINED}


def _parameters(function):
    return [
        (p.name, p.kind, p.default)
        for p in inspect.signature(function).parameters.values()
    ]


def test_every_twin_is_defined_once_and_exported():
    assert len(TWINS) == len(DEFINED), "a name defined by two family modules"
    assert sorted(compiled.__all__) == sorted(TWINS)
    for name, twin in TWINS.items():
        assert getattr(compiled, name) is twin
    # Nor does the package define a public function of its own.
    assert {
        name
        for name, obj in vars(compiled).items()
        if inspect.isfunction(obj) and name[0] != "_"
    } == set(TWINS)


@pytest.mark.parametrize("name", sorted(TWINS))
def test_every_twin_lives_in_the_module_named_like_its_kernels(name):
    assert name in kernels.__all__, f"{name} is the twin of no kernel"
    kernel = getattr(kernels, name)
    family = kernel.__module__.rsplit(".", 1)[1]
    assert TWINS[name].__module__ == f"{compiled.__name__}.{family}"


@pytest.mark.parametrize("name", sorted(TWINS))
def test_every_twin_takes_its_kernels_parameters(name):
    twin, kernel = TWINS[name], getattr(kernels, name)
    assert _parameters(twin) == _parameters(kernel), (
        f"twin {name}{inspect.signature(twin)} != kernel "
        f"{name}{inspect.signature(kernel)}"
    )


def _dispatches():
    """``(kernel function, twin name, call)`` of every ``fast.<name>(...)``
    call in the NumPy kernels' modules, ``fast`` bound to ``twins(...)``."""
    found = []
    for module in pkgutil.iter_modules(kernels.__path__):
        if module.ispkg:  # the twins themselves
            continue
        path = Path(kernels.__path__[0]) / f"{module.name}.py"
        for func in ast.walk(ast.parse(path.read_text())):
            if not isinstance(func, ast.FunctionDef):
                continue
            bound = {
                node.target.id
                for node in ast.walk(func)
                if isinstance(node, ast.NamedExpr)
                and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "id", None) == "twins"
            }
            found += [
                (func.name, node.func.attr, node)
                for node in ast.walk(func)
                if isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in bound
            ]
    return found


def test_every_twin_is_called_by_its_kernel_with_arguments_it_takes():
    calls = _dispatches()
    assert {(kernel, name) for kernel, name, _ in calls} == {
        (name, name) for name in TWINS
    }
    for _, name, call in calls:
        assert not any(isinstance(a, ast.Starred) for a in call.args)
        assert all(k.arg is not None for k in call.keywords)
        inspect.signature(TWINS[name]).bind(
            *call.args, **{k.arg: k.value for k in call.keywords}
        )


def test_numba_is_imported_only_when_a_twin_is_needed():
    # The README's demo (a small corpus, the default backend "auto") never
    # imports numba; the first call that needs a twin imports it.
    script = textwrap.dedent(
        """
        import sys
        import numpy as np
        import scipy.sparse as sp
        from sklearn_topicfac import KLNMF, config_context, kernels

        X = sp.random(30, 20, density=0.3, format="csr", random_state=0)
        with config_context(backend="auto"):
            KLNMF(3, random_state=0, max_iter=5).fit(X)
        assert "numba" not in sys.modules
        with config_context(backend="numba"):
            kernels.product_at_nonzeros(X, np.ones((30, 3)), np.ones((3, 20)))
        assert "numba" in sys.modules
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
