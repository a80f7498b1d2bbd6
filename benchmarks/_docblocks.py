"""Generated blocks: a benchmark writes its tables into a doc page, once.

A benchmark calls :func:`write_block` with the block's name, the page, the
command that reproduces it and its content.  That writes

* ``docs/_data/NAME.json``: the header (page, command, machine, date, commit)
  and the content, a list of parts -- ``{"text": "..."}`` (Markdown prose) or
  ``{"columns": [...], "rows": [[...], ...]}`` (a table, one list of cells per
  row) -- and
* the block in the page, between ``<!-- generated: NAME; ... -->`` and
  ``<!-- end generated: NAME -->``, leaving the hand-written text around it.

The block is :func:`render` of the JSON, a pure function of it, so
``tests/test_docs.py`` re-renders every block from its JSON and asserts the
page holds exactly that: a number edited by hand in the page, or a JSON file
changed without re-rendering, fails the test.  See benchmarks/README.md.

Parameters and the defaults a block claims.  A block may record the
estimators it ran and say which of them ran at their defaults; three
optional header fields, never rendered into the page except ``history``:

* ``"estimators"``: ``{label: {"class": "package.Class", "params": {...}}}``,
  one entry per estimator the block measured, under the label its tables
  use ("LDAVI", "sklearn NMF"): the class's public import path and every
  parameter of ``get_params(deep=False)``, made JSON-safe by
  :func:`estimator_params` (a nested estimator is recorded the same way);
* ``"at_defaults"``: ``{label: [parameter, ...]}``, the claim: the block
  presents these estimators as fitted at their defaults, except for the
  parameters listed, which the run set on purpose (``n_components``,
  ``random_state``, a peer's ``beta_loss``...).  :func:`stale_defaults`
  (run by ``tests/test_doc_staleness.py``) compares every other recorded
  parameter with today's ``Class().get_params()``: a default changed since
  the run, a parameter added or removed, or a claim without recorded
  parameters is reported;
* ``"no_transform"``: ``[label, ...]``, the claimed estimators whose
  figures never come from ``transform``, ``fit_transform`` or
  ``topic_proportions`` (only from fits, their objectives and ``score``).
  For these, a parameter that only those read (the class's
  ``_fold_in_parameters``, tested never to change a fit or a score) is not
  compared;
* ``"history"``: for a block made at the defaults of its time that are not
  today's, what differs (rendered as ``history: ...`` in the block's
  opening comment).  It claims nothing and is not checked against today.

(``"estimators_source"``, where present, says how parameters recorded after
the run were obtained.)  The check compares parameter values: a value that
stays while what it does changes (``solver="auto"`` choosing another
solver) is not seen, and its blocks are marked history by hand.

A block whose name or prose presents it as run at the defaults
(:func:`presents_defaults`) must carry ``at_defaults`` or ``history``
(:func:`unclassified_default_blocks`).
"""

import importlib
import io
import json
import math
import os
import platform
import re
import shlex
import subprocess
import sys
import warnings
from datetime import datetime, timezone
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DOCS = REPO_ROOT / "docs"
DATA = DOCS / "_data"

_NAME = re.compile(r"^[a-z0-9_]+$")
_OPEN = re.compile(r"^<!-- generated: ([a-z0-9_]+);.*-->$", re.MULTILINE)


def _cell(value):
    if value is None:
        return ""
    text = str(value)
    if "|" in text.replace("\\|", "") or "\n" in text:
        raise ValueError(f"table cell {text!r} holds '|' or a newline; escape it")
    return text


def _table(part):
    columns, rows = part["columns"], part["rows"]
    lines = [
        "| " + " | ".join(_cell(c) for c in columns) + " |",
        "|" + "|".join(part.get("align", ["---"] * len(columns))) + "|",
    ]
    for row in rows:
        if len(row) != len(columns):
            raise ValueError(
                f"row {row!r} has {len(row)} cells for {len(columns)} columns"
            )
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    return "\n".join(lines)


def header(data):
    """The opening comment of a block (its provenance)."""
    fields = [
        f"generated: {data['name']}",
        f"command: {data['command']}",
        f"machine: {data['machine']}",
        f"date: {data['date']}",
        f"commit: {data['commit']}",
    ]
    if data.get("note"):
        fields.append(f"note: {data['note']}")
    if data.get("history"):
        fields.append(f"history: {data['history']}")
    text = "; ".join(fields)
    if "-->" in text or "\n" in text:
        raise ValueError("a header field holds '-->' or a newline")
    return f"<!-- {text} -->"


def render(data):
    """The block of ``data`` (a results file's content), markers included."""
    parts = []
    for part in data["parts"]:
        if "text" in part:
            parts.append(part["text"].strip("\n"))
        else:
            parts.append(_table(part))
    body = "\n\n".join(parts)
    return f"{header(data)}\n{body}\n<!-- end generated: {data['name']} -->"


def parts_from_markdown(markdown):
    """Split Markdown into text and table parts (tables: lines starting '|').

    ``render`` of the result gives ``markdown`` back (up to blank lines at the
    ends); a script that already formats Markdown uses it to store its tables
    as rows.
    """
    parts, text, table = [], [], []

    def flush_text():
        chunk = "\n".join(text).strip("\n")
        if chunk:
            parts.append({"text": chunk})
        text.clear()

    def flush_table():
        if table:
            cells = [
                [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
                for line in table
            ]
            parts.append({"columns": cells[0], "align": cells[1], "rows": cells[2:]})
        table.clear()

    for line in markdown.strip("\n").splitlines():
        if line.startswith("|"):
            if not table:
                flush_text()
            table.append(line)
        else:
            flush_table()
            text.append(line)
    flush_table()
    flush_text()
    for part in parts:
        if "align" in part and all(a == "---" for a in part["align"]):
            del part["align"]
    return parts


def _git(*args):
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO_ROOT), *args],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip()


def provenance():
    """Machine, date (UTC) and commit of a run happening now."""
    commit = _git("rev-parse", "--short", "HEAD") or "unknown"
    if _git("status", "--porcelain", "--untracked-files=no"):
        commit += " (with uncommitted changes)"
    return {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
        f"{platform.system()} {platform.release()}, Python "
        f"{platform.python_version()}",
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit,
    }


def command_line(argv=None):
    """The command that ran this script, from the repository root."""
    argv = sys.argv if argv is None else argv
    script = Path(argv[0]).resolve()
    try:
        script = script.relative_to(REPO_ROOT)
    except ValueError:
        pass
    return " ".join(
        ["python", shlex.quote(script.as_posix()), *map(shlex.quote, argv[1:])]
    )


def block_pattern(name):
    return re.compile(
        rf"^<!-- generated: {re.escape(name)};.*?^<!-- end generated: "
        rf"{re.escape(name)} -->$",
        re.MULTILINE | re.DOTALL,
    )


def replace_block(page_text, data):
    """``page_text`` with the block of ``data`` replaced (or appended)."""
    rendered = render(data)
    pattern = block_pattern(data["name"])
    found = pattern.findall(page_text)
    if len(found) > 1:
        raise ValueError(f"the page holds block {data['name']!r} twice")
    if found:
        return pattern.sub(lambda _: rendered, page_text)
    return page_text.rstrip("\n") + "\n\n" + rendered + "\n"


def write_block(
    name,
    page,
    command,
    parts,
    *,
    note=None,
    meta=None,
    estimators=None,
    at_defaults=None,
    history=None,
    no_transform=None,
    data_dir=DATA,
):
    """Write ``data_dir/NAME.json`` and the block ``name`` into ``page``.

    ``page`` is relative to the repository root (``"docs/x.md"``) or absolute
    (inside the repository; created holding only the block if missing);
    ``command`` reproduces the block; ``parts`` as in the module docstring;
    ``meta`` overrides the provenance (for numbers imported from a past run).
    ``estimators`` maps the labels of the block's tables to the estimators
    that ran (instances, or what :func:`estimator_params` recorded of them,
    e.g. in a child process); ``at_defaults`` maps the labels presented as
    fitted at their defaults to the parameters the run set on purpose;
    ``history`` says which of the block's defaults are no longer today's;
    ``no_transform`` lists the claimed labels whose figures never come from
    ``transform`` (see the module docstring).
    """
    if not _NAME.match(name):
        raise ValueError(f"block name {name!r}: use lower case, digits and '_'")
    page = Path(page)
    if not page.is_absolute():
        page = REPO_ROOT / page
    data = {
        "name": name,
        "page": page.relative_to(REPO_ROOT).as_posix(),
        "command": command,
        **provenance(),
        **(meta or {}),
    }
    if estimators:
        data["estimators"] = {
            label: est if _is_record(est) else estimator_params(est)
            for label, est in estimators.items()
        }
    if at_defaults:
        data["at_defaults"] = {
            label: sorted(varied) for label, varied in at_defaults.items()
        }
    if no_transform:
        data["no_transform"] = sorted(no_transform)
    if history:
        data["history"] = history
    data["parts"] = parts
    if note:
        data["note"] = note
    problems = defaults_problems(f"{name}.json", data)
    if problems:
        # The block is written all the same (a long run is not lost); the
        # test of the docs will fail until the claim or the run is fixed.
        warnings.warn("; ".join(problems), stacklevel=2)
    text = page.read_text(encoding="utf-8") if page.exists() else ""
    rendered_page = replace_block(text, data).lstrip("\n")
    Path(data_dir).mkdir(parents=True, exist_ok=True)
    path = Path(data_dir) / f"{name}.json"
    path.write_text(
        json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    page.write_text(rendered_page, encoding="utf-8")
    return path


# ------------------------------------------- parameters and claimed defaults
def class_path(cls):
    """The shortest public import path of ``cls`` (``"sklearn.decomposition.NMF"``
    rather than its defining module's ``sklearn.decomposition._nmf``)."""
    parts = cls.__module__.split(".")
    for end in range(1, len(parts) + 1):
        module = sys.modules.get(".".join(parts[:end]))
        if module is not None and getattr(module, cls.__qualname__, None) is cls:
            return f"{'.'.join(parts[:end])}.{cls.__qualname__}"
    return f"{cls.__module__}.{cls.__qualname__}"


def json_safe(value):
    """``value`` as plain JSON, the same way for a past run and for today.

    Numbers, strings, booleans and None stay; NumPy scalars and arrays become
    Python numbers and lists, tuples lists; a non-finite float becomes
    ``{"float": "nan"}``; an estimator its :func:`estimator_params`; a class
    or function ``{"object": "module.name"}``; anything else
    ``{"repr": repr(value)}``.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        value = float(value)  # a NumPy float64 is a float too
        return value if math.isfinite(value) else {"float": repr(value)}
    if hasattr(value, "get_params") and not isinstance(value, type):
        return estimator_params(value)
    if hasattr(value, "tolist") and not isinstance(value, type):
        return json_safe(value.tolist())
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, type) or callable(value):
        name = getattr(value, "__qualname__", getattr(value, "__name__", None))
        if name is not None:
            return {"object": f"{getattr(value, '__module__', '?')}.{name}"}
    return {"repr": repr(value)}


def estimator_params(estimator):
    """What a block records of an estimator it ran: its class's import path
    and every parameter (``get_params(deep=False)``), JSON-safe."""
    params = estimator.get_params(deep=False)
    return {
        "class": class_path(type(estimator)),
        "params": {key: json_safe(params[key]) for key in sorted(params)},
    }


def _is_record(value):
    return isinstance(value, dict) and set(value) == {"class", "params"}


def _load_class(path):
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _shown(name, value):
    return f"{name}={value!r}"


def defaults_problems(label, data):
    """What is wrong with the defaults ``data`` (one block's JSON) claims:
    each claimed estimator's recorded parameters against today's defaults
    (empty: nothing).  ``label`` names the block in the messages."""
    claims = data.get("at_defaults")
    if claims is None:
        return []
    if not isinstance(claims, dict) or not claims:
        return [
            f"{label}: at_defaults must map the labels of the estimators "
            f"presented at their defaults to the parameters set on purpose, "
            f"not {claims!r}"
        ]
    problems = []
    if data.get("history"):
        problems.append(f"{label}: claims today's defaults and is marked history")
    no_transform = data.get("no_transform", [])
    if not isinstance(no_transform, list) or not set(no_transform) <= set(claims):
        problems.append(
            f"{label}: no_transform must list labels of at_defaults, "
            f"not {no_transform!r}"
        )
        no_transform = []
    recorded = data.get("estimators") or {}
    for name, varied in sorted(claims.items()):
        entry = recorded.get(name)
        if not _is_record(entry) or not isinstance(entry["params"], dict):
            problems.append(
                f"{label}: presents {name} at its defaults but records no "
                f"parameters (estimators[{name!r}] with its class and params)"
            )
            continue
        try:
            cls = _load_class(entry["class"])
            today = json.loads(json.dumps(json_safe(cls().get_params(deep=False))))
        except Exception as error:  # noqa: BLE001 - reported, not raised
            problems.append(
                f"{label}: {name}'s class {entry['class']} cannot be built "
                f"today ({type(error).__name__}: {error})"
            )
            continue
        ran = entry["params"]
        # A parameter only transform reads cannot change a fit or a score.
        unread = (
            set(getattr(cls, "_fold_in_parameters", ()))
            if name in no_transform
            else set()
        )
        for parameter in sorted(set(varied) - set(today)):
            problems.append(
                f"{label}: {name} lists {parameter!r} as set on purpose, "
                f"but {entry['class']} has no such parameter"
            )
        for parameter in sorted((set(ran) | set(today)) - set(varied) - unread):
            where = f"{label}: {name} ({entry['class']}) at its defaults"
            if parameter not in ran:
                problems.append(
                    f"{where} records no {parameter!r}; today's default is "
                    f"{_shown(parameter, today[parameter])}"
                )
            elif parameter not in today:
                problems.append(
                    f"{where} ran {_shown(parameter, ran[parameter])}, a "
                    "parameter it no longer has"
                )
            elif ran[parameter] != today[parameter]:
                problems.append(
                    f"{where} ran {_shown(parameter, ran[parameter])}; today's "
                    f"default is {_shown(parameter, today[parameter])}"
                )
    return problems


def stale_defaults(repo_root=REPO_ROOT):
    """Every problem of the defaults the blocks of ``repo_root/docs/_data``
    claim (:func:`defaults_problems`); empty: every claim holds today."""
    problems = []
    for path in sorted((Path(repo_root) / "docs" / "_data").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        problems += defaults_problems(path.name, data)
    return problems


# A block presented as run at the defaults: its name says "default", or its
# prose does ("at its defaults", "k = number of classes; defaults.",
# "Default install", "default fits").
_PRESENTS_DEFAULTS = re.compile(
    r"\bat (?:its|their|the) defaults\b|\bdefaults\.|\bdefault (?:install|fits?)\b",
    re.IGNORECASE,
)


def presents_defaults(data):
    """Whether a block's name or prose presents it as run at the defaults."""
    prose = " ".join(part["text"] for part in data["parts"] if "text" in part)
    return "default" in data["name"] or bool(_PRESENTS_DEFAULTS.search(prose))


def unclassified_default_blocks(repo_root=REPO_ROOT):
    """The blocks presented as run at the defaults that neither claim today's
    (``at_defaults``) nor say they are history (``history``)."""
    found = []
    for path in sorted((Path(repo_root) / "docs" / "_data").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if presents_defaults(data) and not (
            data.get("at_defaults") or data.get("history")
        ):
            found.append(path.name)
    return found


class _Tee(io.TextIOBase):
    """Standard output that also keeps a copy of what is printed."""

    def __init__(self, stream):
        self.stream, self.copy = stream, io.StringIO()

    def write(self, text):
        self.copy.write(text)
        return self.stream.write(text)

    def flush(self):
        self.stream.flush()


def capture_stdout():
    """Keep a copy of everything printed from now on (``.copy.getvalue()``).

    For a benchmark that prints its tables as it goes: its ``--write-doc``
    starts this after parsing the arguments and hands what was printed to
    :func:`write_doc` at the end.
    """
    tee = _Tee(sys.stdout)
    sys.stdout = tee
    return tee


def printed_tables(text):
    """The Markdown tables and headings of printed output (progress lines dropped)."""
    chunks, table = [], []
    for line in text.splitlines():
        if line.startswith("|"):
            table.append(line)
            continue
        if table:
            chunks.append("\n".join(table))
            table = []
        if line.startswith("#"):
            chunks.append(f"**{line.lstrip('#').strip()}**")
    if table:
        chunks.append("\n".join(table))
    return "\n\n".join(chunks)


def write_doc(name, markdown, page, **fields):
    """What a benchmark's ``--write-doc NAME`` does: ``markdown`` as block NAME.

    The block goes to the page that already holds it (the ``page`` of
    ``docs/_data/NAME.json``), else to ``page``; its command is the command
    line that ran the benchmark.  ``fields``: ``estimators``, ``at_defaults``,
    ``history``, ``note``, as for :func:`write_block`.
    """
    existing = DATA / f"{name}.json"
    if existing.exists():
        page = json.loads(existing.read_text(encoding="utf-8"))["page"]
    parts = parts_from_markdown(markdown)
    path = write_block(name, page, command_line(), parts, data_dir=DATA, **fields)
    print(f"wrote block {name} into {page} ({path.relative_to(REPO_ROOT)})")
    return path


# A block named in prose: "table `perf_moves`", "tables `a` and `b`", or any
# backticked name of the performance and real-text families.
_REFERENCE = re.compile(
    r"\b(?i:tables?|blocks?)\s+((?:`[a-z0-9_]+`(?:,\s*|\s+and\s+)?)+)"
    r"|`((?:perf|real_text)_[a-z0-9_]+)`"
)


def named_blocks(text):
    """The block names a Markdown text refers to (see ``_REFERENCE``)."""
    names = set()
    for listed, single in _REFERENCE.findall(text):
        names.update(re.findall(r"`([a-z0-9_]+)`", listed))
        if single:
            names.add(single)
    return names


def dangling_references(repo_root=REPO_ROOT):
    """``(page, name)`` of each block named in the docs or README but missing."""
    repo_root = Path(repo_root)
    existing = {path.stem for path in (repo_root / "docs" / "_data").glob("*.json")}
    pages = [repo_root / "README.md", *sorted((repo_root / "docs").rglob("*.md"))]
    found = []
    for page in pages:
        if not page.exists():
            continue
        for name in sorted(named_blocks(page.read_text(encoding="utf-8")) - existing):
            found.append((page.relative_to(repo_root).as_posix(), name))
    return found


def stale_blocks(repo_root=REPO_ROOT):
    """Problems with the generated blocks under ``repo_root/docs`` (empty: none).

    Every JSON of ``docs/_data`` must render to a block its page holds
    exactly once, and every block of every page must have its JSON.
    """
    repo_root = Path(repo_root)
    problems, expected = [], set()
    for path in sorted((repo_root / "docs" / "_data").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        page = repo_root / data["page"]
        expected.add((data["page"], data["name"]))
        imported = re.search(r"imported from commit (\w+)", data.get("note", ""))
        if imported and imported.group(1) != data["commit"]:
            problems.append(
                f"{path.name}: imported from commit {imported.group(1)} but its "
                f"header says commit {data['commit']}"
            )
        if path.stem != data["name"]:
            problems.append(f"{path.name}: its name is {data['name']!r}")
        if not page.exists():
            problems.append(f"{path.name}: page {data['page']} does not exist")
            continue
        text = page.read_text(encoding="utf-8")
        count = text.count(render(data))
        if count != 1:
            problems.append(
                f"{data['page']}: block {data['name']!r} is not the rendering "
                f"of {path.relative_to(repo_root)} ({count} exact copies); "
                f"re-run {data['command']!r} or undo the hand edit"
            )
    for page in sorted((repo_root / "docs").rglob("*.md")):
        relative = page.relative_to(repo_root).as_posix()
        for name in _OPEN.findall(page.read_text(encoding="utf-8")):
            if (relative, name) not in expected:
                problems.append(f"{relative}: block {name!r} has no docs/_data JSON")
    return problems
