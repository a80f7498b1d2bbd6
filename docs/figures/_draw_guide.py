"""Run the user guide's code and redraw its figures (docs/figures/guide_*.png).

Each page of the guide that shows a worked example is run as a reader would
run it: its ```python blocks in order, in one namespace, in a working
folder (a temporary one).  One block of a page saves its figure
(``guide_<family>.png``) there, and this script copies it to
``docs/figures``: the figures the pages show are drawn by the code the
pages show.

    python docs/figures/_draw_guide.py            # every page
    python docs/figures/_draw_guide.py nmf lda    # some pages

``tests/test_guide_pages.py`` runs the same pages with :func:`run_page` in a
temporary folder and checks their printed output against the output the
pages quote (the ```text block after a code block).
"""

import contextlib
import io
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[1] / "guide"
FIGURES = Path(__file__).resolve().parent

# The pages whose code runs, in the order of the guide.
PAGES = ("getting_started", "nmf", "plsi", "lda", "simplex", "persistence")


def code_blocks(text):
    """``(code, quoted output or None)`` for every ```python block of a page.

    The quoted output is the ```text block that follows the code block, with
    only blank lines between them.
    """
    blocks, current, language, pending = [], None, None, None
    for line in text.splitlines():
        stripped = line.strip()
        if current is None:
            if stripped.startswith("```"):
                language, current = stripped[3:].strip(), []
            elif stripped:
                pending = None
        elif stripped == "```":
            body = "\n".join(current)
            if language == "python":
                blocks.append([body, None])
                pending = blocks[-1]
            elif language == "text" and pending is not None:
                pending[1] = body
                pending = None
            else:
                pending = None
            current = None
        else:
            current.append(line)
    return [tuple(block) for block in blocks]


def output_lines(text):
    """The lines of a block's output as compared: a topic's terms as a set.

    Two terms can weigh the same in a topic up to rounding (on Classic3,
    "retrieval" and "systems" both occur 557 times, nearly all in one
    collection), and their order then follows the last bits of the
    arithmetic: which terms a topic's line holds is compared, not the order
    of near-equal ones.
    """
    lines = []
    for line in text.strip().splitlines():
        head, colon, terms = line.rstrip().partition(": ")
        if re.fullmatch(r"topic \d+", head) and colon:
            line = f"{head}: {sorted(terms.split())}"
        lines.append(line.rstrip())
    return lines


def run_page(name, workdir):
    """Run a page's Python blocks in ``workdir``; return what each printed.

    ``(results, namespace)``: ``results`` a list of ``(code, quoted output
    or None, printed output)``, one per block, in order; ``namespace`` the
    variables the blocks left.  The blocks share one namespace, as in a
    session that pastes them one after the other.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    page = GUIDE / f"{name}.md"
    namespace = {"__name__": f"guide_{name}"}
    results = []
    here = Path.cwd()
    os.chdir(workdir)
    try:
        for code, quoted in code_blocks(page.read_text()):
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                exec(compile(code, str(page), "exec"), namespace)
            results.append((code, quoted, printed.getvalue()))
    finally:
        os.chdir(here)
        plt.close("all")
    return results, namespace


def main(names):
    for name in names or PAGES:
        with tempfile.TemporaryDirectory() as workdir:
            for _, quoted, printed in run_page(name, workdir)[0]:
                if quoted is not None and (
                    output_lines(quoted) != output_lines(printed)
                ):
                    print(f"{name}: the page quotes output the code no longer prints:")
                    print(printed)
            for figure in sorted(Path(workdir).glob("guide_*.png")):
                shutil.copy(figure, FIGURES / figure.name)
                print(f"{name}: wrote docs/figures/{figure.name}")


if __name__ == "__main__":
    os.environ.setdefault("MPLBACKEND", "Agg")
    main(sys.argv[1:])
