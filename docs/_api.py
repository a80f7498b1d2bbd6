"""The API reference's sources, generated from ``sklearn_topicfac.__all__``.

`write_api_sources` (called by ``conf.py`` at every build) writes, under
``docs/_generated/api/``, one reStructuredText block per estimator of
``__all__`` -- its class docstring, an autosummary table of every public
method (inherited ones included) and each method's documentation -- and a
summary of every public name.  The pages under ``docs/api/`` include these
blocks, so a method or an estimator added to the package appears in the
reference without anyone listing it.
"""

import inspect
from pathlib import Path

import sklearn_topicfac
from sklearn_topicfac import estimators

GENERATED = Path(__file__).parent / "_generated" / "api"


def estimator_names():
    """The estimators of ``__all__``, in its order."""
    return [name for name in sklearn_topicfac.__all__ if name in estimators.__all__]


def public_methods(cls):
    """Every public method of ``cls``, inherited ones included, sorted."""
    return sorted(
        name
        for name, value in inspect.getmembers(cls)
        if not name.startswith("_") and callable(value) and not inspect.isclass(value)
    )


def estimator_source(name):
    """The reStructuredText of one estimator's reference."""
    cls = getattr(sklearn_topicfac, name)
    methods = public_methods(cls)
    lines = [
        ".. currentmodule:: sklearn_topicfac",
        "",
        f".. autoclass:: {name}",
        "   :no-members:",
        "",
        "   .. rubric:: Methods",
        "",
        "   .. autosummary::",
        "      :nosignatures:",
        "",
        *(f"      ~{name}.{method}" for method in methods),
        "",
        *(f"   .. automethod:: {method}\n" for method in methods),
    ]
    return "\n".join(lines)


def summary_source():
    """An autosummary table of every public name of ``__all__``."""
    names = [name for name in sklearn_topicfac.__all__ if not name.startswith("__")]
    return "\n".join(
        [
            ".. currentmodule:: sklearn_topicfac",
            "",
            ".. autosummary::",
            "   :nosignatures:",
            "",
            *(f"   {name}" for name in names),
            "",
        ]
    )


def write_api_sources(directory=GENERATED):
    """Write ``<Estimator>.rst`` per estimator and ``summary.rst``."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in estimator_names():
        (directory / f"{name}.rst").write_text(estimator_source(name))
    (directory / "summary.rst").write_text(summary_source())
