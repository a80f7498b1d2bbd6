"""No statement older than the code: a generated block that presents an
estimator as fitted at its defaults must have run with today's defaults.

A block's JSON (``docs/_data/NAME.json``, written by
``benchmarks/_docblocks.py``) records the estimators it ran
(``"estimators"``: class and every parameter) and which of them it presents
at their defaults (``"at_defaults"``: label -> the parameters the run set on
purpose).  ``_docblocks.stale_defaults`` compares each claimed estimator's
recorded parameters with today's ``Class().get_params()``; a block made at
older defaults says so in its ``"history"`` instead.  See
benchmarks/README.md, "Parameters and claimed defaults".
"""

import copy
import json
from pathlib import Path

import pytest

import sklearn_topicfac as tf

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "docs" / "_data"


def _blocks():
    return {p.name: json.loads(p.read_text()) for p in sorted(DATA.glob("*.json"))}


def _claiming(estimator):
    """A real block that claims ``estimator`` (a class) at its defaults:
    ``(file name, its JSON, the label it uses)``."""
    path = f"sklearn_topicfac.{estimator.__name__}"
    for name, data in _blocks().items():
        for label in data.get("at_defaults") or {}:
            if data["estimators"][label]["class"] == path:
                return name, data, label
    pytest.fail(f"no block of docs/_data claims {path} at its defaults")


def _plant(tmp_path, name, data):
    """A repository in ``tmp_path`` whose docs/_data holds ``data`` only."""
    folder = tmp_path / "docs" / "_data"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(data, indent=1))
    return tmp_path


# ------------------------------------------------------------ the real blocks
def test_every_claimed_default_is_todays(docblocks):
    claims = {n: d["at_defaults"] for n, d in _blocks().items() if "at_defaults" in d}
    assert claims, "no block claims the defaults: nothing is checked"
    assert docblocks.stale_defaults(ROOT) == []


def test_every_block_presented_at_the_defaults_claims_them_or_is_history(
    docblocks,
):
    # A block whose name or prose says it ran at the defaults either claims
    # today's (and is checked) or says in "history" which are no longer so.
    presented = [n for n, d in _blocks().items() if docblocks.presents_defaults(d)]
    assert presented
    assert docblocks.unclassified_default_blocks(ROOT) == []


def test_a_history_block_claims_nothing_and_says_so_in_its_header(docblocks):
    history = {n: d for n, d in _blocks().items() if d.get("history")}
    assert history
    for name, data in history.items():
        assert "at_defaults" not in data, name
        assert f"; history: {data['history']} -->" in docblocks.header(data), name


# ------------------------------------------------------- planted stale blocks
def test_a_planted_stale_default_is_caught(docblocks, tmp_path):
    # A real block claiming LDAVI at its defaults, copied; then one recorded
    # default changed as if the block had run before the default changed.
    name, data, label = _claiming(tf.LDAVI)
    repo = _plant(tmp_path, name, data)
    assert docblocks.stale_defaults(repo) == []

    today = tf.LDAVI().get_params()["inference"]
    former = "cvb0" if today != "cvb0" else "vb"
    stale = copy.deepcopy(data)
    stale["estimators"][label]["params"]["inference"] = former
    _plant(tmp_path, name, stale)
    (problem,) = docblocks.stale_defaults(repo)
    assert problem.startswith(f"{name}: {label} ")
    assert f"ran inference={former!r}" in problem
    assert f"today's default is inference={today!r}" in problem

    # A numeric default: max_iter.
    stale = copy.deepcopy(data)
    max_iter = tf.LDAVI().get_params()["max_iter"]
    stale["estimators"][label]["params"]["max_iter"] = max_iter + 10
    _plant(tmp_path, name, stale)
    (problem,) = docblocks.stale_defaults(repo)
    assert problem.startswith(f"{name}: ")
    assert f"max_iter={max_iter + 10!r}" in problem
    assert f"max_iter={max_iter!r}" in problem


def test_a_default_changed_in_the_code_makes_the_claiming_blocks_stale(
    docblocks, monkeypatch
):
    # The other way round: the blocks stay, today's signature changes (that
    # of KLNMF's __init__, and so of every estimator sharing it).
    sharing = {
        f"sklearn_topicfac.{name}"
        for name in tf.estimators.__all__
        if getattr(tf, name).__init__ is tf.KLNMF.__init__
    }
    claiming = {
        name
        for name, data in _blocks().items()
        for label in data.get("at_defaults") or {}
        if data["estimators"][label]["class"] in sharing
        and "tol" not in data["at_defaults"][label]
    }
    assert claiming
    defaults = tf.KLNMF.__init__.__kwdefaults__
    monkeypatch.setitem(defaults, "tol", defaults["tol"] * 10)
    problems = docblocks.stale_defaults(ROOT)
    assert {p.split(":")[0] for p in problems} == claiming
    assert all("tol=" in p for p in problems)


def test_a_claim_without_recorded_parameters_is_caught(docblocks, tmp_path):
    block = {
        "name": "planted",
        "page": "docs/x.md",
        "command": "python benchmarks/x.py",
        "machine": "m",
        "date": "d",
        "commit": "0000000",
        "at_defaults": {"LDAVI": ["n_components", "random_state"]},
        "parts": [{"text": "LDAVI at its defaults."}],
    }
    repo = _plant(tmp_path, "planted.json", block)
    (problem,) = docblocks.stale_defaults(repo)
    assert problem.startswith("planted.json: presents LDAVI at its defaults")
    assert "records no parameters" in problem
    # ...nor with an estimators entry that holds no parameters,
    block["estimators"] = {"LDAVI": {"class": "sklearn_topicfac.LDAVI"}}
    _plant(tmp_path, "planted.json", block)
    assert len(docblocks.stale_defaults(repo)) == 1
    # ...nor a bare flag in place of the labels and their varied parameters.
    del block["estimators"]
    block["at_defaults"] = True
    _plant(tmp_path, "planted.json", block)
    (problem,) = docblocks.stale_defaults(repo)
    assert "at_defaults must map" in problem


def _planted_klnmf(docblocks):
    """A block claiming KLNMF at its defaults (``n_components=7`` set), and
    the check of a block: ``(block, problems)``."""
    record = docblocks.estimator_params(tf.KLNMF(n_components=7, random_state=3))
    block = {
        "name": "planted",
        "estimators": {"KLNMF": record},
        "at_defaults": {"KLNMF": ["n_components", "random_state"]},
        "parts": [],
    }

    def problems(data):
        return docblocks.defaults_problems("planted.json", data)

    return block, problems


def test_what_the_check_compares(docblocks, tmp_path):
    block, problems = _planted_klnmf(docblocks)
    assert problems(block) == []
    # A parameter the run set on purpose is not compared...
    changed = copy.deepcopy(block)
    changed["estimators"]["KLNMF"]["params"]["n_components"] = 20
    assert problems(changed) == []
    # ...every other one is, a parameter added since the run included,
    added = copy.deepcopy(block)
    del added["estimators"]["KLNMF"]["params"]["tol"]
    (problem,) = problems(added)
    assert "records no 'tol'" in problem
    # and one removed since.
    removed = copy.deepcopy(block)
    removed["estimators"]["KLNMF"]["params"]["engine"] = "numba"
    (problem,) = problems(removed)
    assert "engine='numba'" in problem and "no longer has" in problem
    # A misspelt parameter "set on purpose" is reported, not silently skipped.
    typo = copy.deepcopy(block)
    typo["at_defaults"]["KLNMF"].append("n_component")
    (problem,) = problems(typo)
    assert "'n_component'" in problem
    # A block cannot both claim today's defaults and be history.
    both = {**block, "history": "the defaults of commit 0000000"}
    (problem,) = problems(both)
    assert "history" in problem
    # A class that no longer exists cannot be checked: reported.
    gone = copy.deepcopy(block)
    gone["estimators"]["KLNMF"]["class"] = "sklearn_topicfac.KLNMFOld"
    (problem,) = problems(gone)
    assert "cannot be built today" in problem


def test_a_parameter_only_transform_reads_is_skipped_only_where_declared(
    docblocks,
):
    # A block whose figures never come from transform (no_transform) stays
    # true when a parameter only transform reads is added: that one parameter
    # is not compared, every other one still is.
    block, problems = _planted_klnmf(docblocks)
    # Recorded before it existed.
    del block["estimators"]["KLNMF"]["params"]["transform_tol"]
    (problem,) = problems(block)
    assert "records no 'transform_tol'" in problem
    assert problems({**block, "no_transform": ["KLNMF"]}) == []
    assert tf.KLNMF._fold_in_parameters == ("transform_tol",)
    changed = copy.deepcopy(block)
    changed["no_transform"] = ["KLNMF"]
    changed["estimators"]["KLNMF"]["params"]["tol"] = 1e-3
    (problem,) = problems(changed)
    assert "tol=0.001" in problem
    # It must name claimed labels (and then skips nothing).
    found = problems({**block, "no_transform": ["PLSI"]})
    assert "no_transform must list labels of at_defaults" in found[0]
    assert "records no 'transform_tol'" in found[1]


def test_recorded_parameters_are_json_and_name_the_public_class(docblocks):
    from sklearn.decomposition import NMF

    record = docblocks.estimator_params(NMF(3, beta_loss="kullback-leibler"))
    assert record["class"] == "sklearn.decomposition.NMF"
    assert record["params"] == json.loads(json.dumps(record["params"]))
    assert record["params"]["beta_loss"] == "kullback-leibler"
    assert set(record["params"]) == set(NMF().get_params())
    nested = docblocks.estimator_params(tf.SimplexPLSA(inner_model=tf.PLSI(2)))
    assert nested["class"] == "sklearn_topicfac.SimplexPLSA"
    assert nested["params"]["inner_model"]["class"] == "sklearn_topicfac.PLSI"
    assert docblocks.json_safe(float("nan")) == {"float": "nan"}


def test_write_block_records_the_parameters_and_the_claim(
    docblocks, tmp_path, monkeypatch
):
    monkeypatch.setattr(docblocks, "REPO_ROOT", tmp_path)
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "x.md"
    page.write_text("# X\n")
    data_dir = tmp_path / "docs" / "_data"
    parts = [{"text": "LDAVI at its defaults."}]
    varied = {"LDAVI": ["n_components", "random_state"]}
    path = docblocks.write_block(
        "x_defaults",
        "docs/x.md",
        "python benchmarks/x.py",
        parts,
        estimators={"LDAVI": tf.LDAVI(n_components=3, random_state=0)},
        at_defaults=varied,
        data_dir=data_dir,
    )
    data = json.loads(path.read_text())
    assert data["estimators"]["LDAVI"]["class"] == "sklearn_topicfac.LDAVI"
    assert set(data["estimators"]["LDAVI"]["params"]) == set(tf.LDAVI().get_params())
    assert data["at_defaults"] == varied
    assert docblocks.stale_defaults(tmp_path) == []
    assert docblocks.stale_blocks(tmp_path) == []
    # A run that set a parameter it does not declare: written, with a
    # warning, and the check fails until the claim or the run is fixed.
    with pytest.warns(UserWarning, match="max_iter=5"):
        docblocks.write_block(
            "x_defaults",
            "docs/x.md",
            "python benchmarks/x.py",
            parts,
            estimators={"LDAVI": tf.LDAVI(3, max_iter=5, random_state=0)},
            at_defaults=varied,
            data_dir=data_dir,
        )
    (problem,) = docblocks.stale_defaults(tmp_path)
    assert "max_iter=5" in problem
    # Marked history instead: no claim, and the header says so.
    docblocks.write_block(
        "x_defaults",
        "docs/x.md",
        "python benchmarks/x.py",
        parts,
        estimators={"LDAVI": tf.LDAVI(3, max_iter=5, random_state=0)},
        history="the defaults of commit 0000000: LDAVI max_iter=5",
        data_dir=data_dir,
    )
    assert docblocks.stale_defaults(tmp_path) == []
    assert docblocks.stale_blocks(tmp_path) == []
    assert "; history: the defaults of commit 0000000" in page.read_text()
