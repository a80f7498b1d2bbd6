"""Check an installed sklearn-topicfac as a user gets it (run by .ci/run).

Run with the Python of a fresh virtual environment into which only the
built wheel (and what it depends on) was installed, from a folder outside
the checkout:

    python /path/to/checkout/.ci/check_installed.py /path/to/checkout

It fails (exit 1, naming what is wrong) when the package is imported from
the checkout instead of the environment, when a module of the source tree is
missing from the installed package, when a module fails to import for any
reason other than an optional extra that is not installed, when the wheel's
metadata carries no license file, or when a fitted model does not survive
``save`` and ``load``.
"""

import importlib
import importlib.metadata
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

# Extras a module may need at import; the wheel's own dependencies never.
OPTIONAL = {"numba", "dask", "distributed", "matplotlib", "pandas"}


def source_modules(checkout):
    """The dotted names of every module of the package in the checkout."""
    root = checkout / "sklearn_topicfac"
    names = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(checkout).with_suffix("").parts
        if "__pycache__" in parts:
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return names


def main(checkout):
    checkout = Path(checkout).resolve()
    problems = []
    import sklearn_topicfac

    installed = Path(sklearn_topicfac.__file__).resolve().parent
    if checkout in installed.parents:
        sys.exit(f"sklearn_topicfac was imported from the checkout ({installed})")
    print(f"installed package: {installed}")

    names = source_modules(checkout)
    skipped = []
    for name in names:
        parts = name.split(".")[1:]
        as_package = installed.joinpath(*parts, "__init__.py")
        as_module = (
            installed.joinpath(*parts[:-1], f"{parts[-1]}.py") if parts else None
        )
        if not (as_package.is_file() or (as_module and as_module.is_file())):
            problems.append(f"{name}: in the source tree, not in the installed package")
            continue
        if name == "sklearn_topicfac.__main__":
            continue  # importing it runs nothing; the demo below runs it
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.split(".")[0] in OPTIONAL:
                skipped.append(f"{name} (needs {exc.name})")
            else:
                problems.append(f"{name}: {type(exc).__name__}: {exc}")
        except Exception as exc:  # any other import failure is a defect
            problems.append(f"{name}: {type(exc).__name__}: {exc}")
    missing = sum("not in the installed" in p for p in problems)
    print(f"{len(names)} modules in the source tree, {missing} missing when installed")
    for line in skipped:
        print(f"  not imported, optional extra absent: {line}")

    data = installed / "data" / "classic3.npz"
    if not data.is_file():
        problems.append("sklearn_topicfac/data/classic3.npz (package data) missing")

    files = importlib.metadata.files("sklearn-topicfac") or []
    licenses = [f for f in files if "licenses" in f.parts or f.name == "LICENSE"]
    if not licenses:
        problems.append("the wheel's metadata carries no license file")
    else:
        print(f"license files: {', '.join(str(f) for f in licenses)}")
    license_expr = importlib.metadata.metadata("sklearn-topicfac").get(
        "License-Expression"
    )
    print(f"License-Expression: {license_expr}")

    import numpy as np

    from sklearn_topicfac import PLSI, load, save

    X = np.random.default_rng(0).poisson(1.0, size=(30, 12))
    model = PLSI(n_components=3, random_state=0).fit(X)
    with tempfile.TemporaryDirectory() as folder:
        path = save(model, Path(folder) / "plsi.skops")
        loaded = load(path)
    if not np.array_equal(loaded.transform(X), model.transform(X)):
        problems.append("a model loaded from its file transforms differently")
    else:
        print("fit -> save -> load: the loaded model transforms as the fitted one")

    # The default install has no numba: 'topicfac compile' says how to get it,
    # in one line, and fails.
    done = subprocess.run(
        [sys.executable, "-m", "sklearn_topicfac", "compile"],
        capture_output=True,
        text=True,
        check=False,
    )
    if importlib.util.find_spec("numba") is None and not (
        done.returncode == 1
        and len(done.stderr.strip().splitlines()) == 1
        and "pip install" in done.stderr
    ):
        problems.append(
            f"'topicfac compile' without numba: status {done.returncode}, "
            f"stderr {done.stderr.strip()!r}"
        )
    else:
        print(f"topicfac compile: {done.stderr.strip() or done.stdout.strip()}")

    if problems:
        print("\nFAILED:", *problems, sep="\n  ", file=sys.stderr)
        sys.exit(1)
    print("installed package: OK")


if __name__ == "__main__":
    main(sys.argv[1])
