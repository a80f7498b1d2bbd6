"""Sphinx configuration of the sklearn-topicfac documentation.

Build (from the repository root):  sphinx-build -W -b html docs docs/_build/html
Pages are Markdown (MyST); the API pages pull the numpydoc docstrings.
"""

import os
import re
import sys
from pathlib import Path

from sphinx_gallery.sorting import ExplicitOrder

import sklearn_topicfac
from sklearn_topicfac.cli import _build_parser

sys.path.insert(0, str(Path(__file__).parent))
from _api import write_api_sources  # noqa: E402 (docs/_api.py, beside this file)

project = "sklearn-topicfac"
author = "the sklearn-topicfac developers"
release = sklearn_topicfac.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx_gallery.gen_gallery",
]
# Markdown pages; reStructuredText only for the pages sphinx-gallery writes.
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
# The API pages include generated autosummary tables (docs/_api.py); no stub
# pages are generated.
autosummary_generate = False
exclude_patterns = ["_build", "_generated"]

# The examples gallery: sphinx-gallery runs every examples/gallery/plot_*.py
# during the build (an example that fails fails the build) and writes its
# page, output and figures to docs/auto_examples/ (generated, git-ignored).
# The other scripts of examples/ are command-line examples, run by
# tests/test_examples.py and quoted by the user guide.
sphinx_gallery_conf = {
    "examples_dirs": "../examples/gallery",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    # The models first, then the tools; a script not listed comes last.
    "within_subsection_order": ExplicitOrder(
        [
            "plot_nmf_family.py",
            "plot_plsi_hybrid.py",
            "plot_lda.py",
            "plot_simplex_plsa.py",
            "plot_choosing_k.py",
            "plot_inspection.py",
            "*",
        ]
    ),
    # No sg_execution_times pages in the source tree (the build log has the
    # times).
    "write_computation_times": False,
}

# Markdown: $...$ and $$...$$ math, ::: fences, heading anchors for links.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

# The docstrings are numpydoc; parameters and attributes become field lists.
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
autodoc_member_order = "bysource"
autodoc_typehints = "none"

# numpydoc writes fitted attributes as ``n_iter_``; in the reST that napoleon
# produces, a bare ``n_iter_`` inside a type ("shape (n_iter_ + 1,)") would be
# a hyperlink reference.  Escape the trailing underscore outside directives
# and literals.
_TRAILING_UNDERSCORE = re.compile(r"(?<![`\w\\])([A-Za-z]\w*?)_(?=[\s,)+\]]|$)")


def _escape_trailing_underscores(app, what, name, obj, options, lines):
    for i, line in enumerate(lines):
        if not line.lstrip().startswith(".. "):
            lines[i] = _TRAILING_UNDERSCORE.sub(r"\1\\_", line)


# The methods inherited from scikit-learn (get_params, set_output, ...) carry
# scikit-learn's docstrings, whose :ref: and :term: roles point into
# scikit-learn's own documentation: keep their text, drop the link.
_SKLEARN_ROLE = re.compile(r":(?:ref|term):`([^`<]*?)\s*(?:<[^`>]*>)?`")


def _unlink_sklearn_roles(app, what, name, obj, options, lines):
    module = getattr(obj, "__module__", "") or ""
    if module == "sklearn" or module.startswith("sklearn."):
        for i, line in enumerate(lines):
            lines[i] = _SKLEARN_ROLE.sub(r"\1", line)


def setup(app):
    # After napoleon (priority 500) has turned the sections into reST.
    app.connect("autodoc-process-docstring", _escape_trailing_underscores, 600)
    app.connect("autodoc-process-docstring", _unlink_sklearn_roles, 600)


# The command-line help, as the installed command prints it (guide/cli.md).
_generated = Path(__file__).parent / "_generated"
_generated.mkdir(exist_ok=True)
# The API reference: one block per estimator of __all__, with every public
# method (docs/_api.py); the pages under api/ include them.
write_api_sources()
os.environ["COLUMNS"] = "88"
(_generated / "cli_help.txt").write_text(_build_parser().format_help())

html_theme = "alabaster"
html_title = f"sklearn-topicfac {release}"
html_theme_options = {"description": "KL-divergence topic factorizations"}
