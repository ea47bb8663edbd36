"""`imgcheck catalog import FILE`: a team's base images as partial rows (YAML or JSON), judged like shipped rows;
and the framework spec parser."""

from __future__ import annotations

import json
import os

import pytest
from recommend_helpers import matrix, node, node_file

from imgcheck.cli.main import main
from imgcheck.engine import build_report
from imgcheck.errors import UsageError
from imgcheck.recommend import local_entries, recommend
from imgcheck.recommend.framework import distance, parse_want

TEAM_YAML = """\
# our internal bases (numbers stay as written: 24.10 is the tag "24.10", 12.10 the version "12.10")
rows:
  - image: registry.example/ml/torch-base
    tag: 24.10
    framework: pytorch
    framework_version: "2.5.1"
    distro: ubuntu 22.04
    python: 3.10
    cuda: 12.4.1
    nccl: 2.21.5
    nccl_origin: pip
    rdma_core: 39.0
    rdma_flavor: inbox
    source: https://wiki.example/ml/torch-base
  - image: registry.example/ml/legacy
    tag: v3
    framework: pytorch
    note: nobody remembers what is in it
"""


@pytest.fixture()
def home(tmp_path, monkeypatch):
    path = tmp_path / "home"
    monkeypatch.setenv("IMGCHECK_HOME", str(path))
    return path


def test_yaml_rows_are_imported_and_recommended(home, tmp_path, capsys):
    team = tmp_path / "team.yaml"
    team.write_text(TEAM_YAML)
    assert main(["catalog", "import", str(team)]) == 0
    out = capsys.readouterr().out
    assert "imported registry.example/ml/torch-base:24.10 (reported): checkable" in out
    assert "registry.example/ml/legacy:v3 (reported): listed, not checkable" in out

    entries, problems = local_entries()
    assert problems == [] and {e.origin for e in entries} == {"imported"}
    base = next(e for e in entries if e.reference == "registry.example/ml/torch-base:24.10")
    (facts,) = base.readings
    assert (facts.rdma.libibverbs.rdma_core, facts.rdma.libibverbs.private_abi) == ("39.0", 34)
    assert facts.nccl[0].origin == "pip" and base.summary.python == "3.10" and base.release == "24.10"

    # on a DOCA node with the open modules the team's image is clean: it is offered first among PyTorch 2.5
    # images, says its facts are the team's (not inspected), and checks clean on its own
    n = node("doca-24.10-open-580-peermem")
    result = recommend([n], matrix(), framework="pytorch==2.5")
    assert result.images[0].image == "registry.example/ml/torch-base:24.10"
    assert "not inspected (reported: https://wiki.example/ml/torch-base)" in result.images[0].why
    assert build_report(facts, [n], matrix()).verdict == "ok"
    legacy = dict(result.rejected)["registry.example/ml/legacy:v3"]
    assert legacy.startswith("cannot be checked")

    # the list shows both; importing again replaces rather than duplicates
    assert main(["catalog", "import", "-q", str(team)]) == 0
    assert len(os.listdir(home / "catalog")) == 2
    capsys.readouterr()
    assert main(["catalog", "list", "--local", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted(i["checkable"] for i in doc["images"]) == [False, True]


def test_json_list_form(home, tmp_path):
    rows = [
        {
            "image": "registry.example/ml/rhel",
            "release": "9.4",
            "framework": "pytorch",
            "rdma_flavor": "none",
            "nccl": "2.21.5",
            "confidence": "verified",
            "source": "Dockerfile at registry.example/ml@abc",
        }
    ]
    (tmp_path / "rows.json").write_text(json.dumps(rows))
    assert main(["catalog", "import", "-q", str(tmp_path / "rows.json")]) == 0
    (entry,) = local_entries()[0]
    assert entry.reference == "registry.example/ml/rhel:9.4" and entry.confidence == "verified"
    assert entry.readings[0].rdma.libibverbs is None  # rdma_flavor none: known to have no libibverbs


@pytest.mark.parametrize(
    "text, words",
    [
        ("rows: []\n", "non-empty list of rows"),
        ("- image: a/b\n", "needs 'tag' or 'release'"),
        ("- {tag: x}\n", "needs 'image'"),
        ("- {image: a/b, tag: x, rdma_core: lots}\n", "rdma_core: version 'lots' does not parse"),
        ("- {image: a/b, tag: x, colour: blue}\n", "unknown field 'colour'"),
        ("- {image: a/b, tag: x, rdma_flavor: mofed}\n", "rdma_flavor 'mofed' is not one of"),
        ("- {image: a/b, tag: x, confidence: sure}\n", "confidence 'sure' is not one of"),
        ("- {image: a/b, tag: x, nccl_origin: conda}\n", "nccl_origin 'conda' is not one of"),
        ("- {image: a/b, tag: x}\n- {image: a/b, tag: x}\n", "appears twice"),
        ("key: [unclosed\n", "neither JSON nor YAML"),
        ("- {image: a/b, tag: x, note: &a [[1, 2], *a]}\n", "note must be text"),
        ("- !!python/object/apply:os.system [true]\n", "neither JSON nor YAML"),  # safe_load builds no objects
    ],
)
def test_bad_rows_are_one_line_and_write_nothing(home, tmp_path, capsys, text, words):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "- {image: ok/first, tag: '1', rdma_flavor: none}\n" + text
        if text.startswith("- {image: a/b, tag: x,")
        else text
    )
    assert main(["catalog", "import", str(bad)]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (home / "catalog").exists() or os.listdir(home / "catalog") == []  # not even the good first row


def test_oversized_file_is_refused_before_parsing(home, tmp_path, capsys):
    big = tmp_path / "big.yaml"
    big.write_bytes(b"# " + b"x" * (8 << 20) + b"\n")
    assert main(["catalog", "import", str(big)]) == 2
    assert "larger than 8 MiB" in capsys.readouterr().err


def test_missing_file_is_exit_3(home, tmp_path, capsys):
    assert main(["catalog", "import", str(tmp_path / "nope.yaml")]) == 3
    assert "no such file" in capsys.readouterr().err


def test_framework_specs():
    assert parse_want("pytorch").spec is None
    want = parse_want("torch==2.5")
    assert want.name == "pytorch" and want.version == "2.5"
    assert want.matches("2.5.0a0+e000cf0ad9") and want.matches("2.5.1") and not want.matches("2.6.0")
    assert want.matches(None) is None  # unknown: ranked after matches, never treated as one
    assert parse_want("pytorch>=2.4,<2.6").matches("2.5.1") and not parse_want("pytorch>=2.4,<2.6").matches("2.6.0")
    with pytest.raises(UsageError):
        parse_want("pytorch==")
    # nearest minor first, newer before older at equal distance, unknown last
    order = sorted(["2.3.0", "2.6.0", None, "2.5.0a0", "2.4.1"], key=lambda v: distance("2.5.1", v))
    assert order == ["2.5.0a0", "2.6.0", "2.4.1", "2.3.0", None]


def test_a_matrix_without_the_new_catalog_tables_still_recommends(home, tmp_path, capsys):
    """A --matrix without the cuda_images / torch_wheels tables still recommends from base_images."""
    import shutil

    from imgcheck.matrix.load import read_files

    files, _ = read_files(None)
    mdir = tmp_path / "m"
    for name, data in files.items():
        if name in ("catalogs/cuda_images.json", "catalogs/torch_wheels.json"):
            continue
        (mdir / os.path.dirname(name)).mkdir(parents=True, exist_ok=True)
        (mdir / name).write_bytes(data)
    schema = json.loads((mdir / "schema.json").read_text())
    del schema["tables"]["cuda_images"], schema["tables"]["torch_wheels"]
    (mdir / "schema.json").write_text(json.dumps(schema))
    assert (
        main(
            [
                "recommend",
                "--node-facts",
                node_file("doca-24.10-open-580-peermem"),
                "--framework",
                "pytorch",
                "--matrix",
                str(mdir),
                "-o",
                "json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["recommendations"]
    shutil.rmtree(mdir)


def test_yaml_numbers_stay_as_written():
    from imgcheck.recommend.importing import parse_rows

    (row,) = parse_rows(b"- {image: a/b, tag: 24.10, cuda: 12.10, rdma_core: 50.0, nccl: 2.21}\n", "x.yaml")
    assert (row["tag"], row["cuda"], row["rdma_core"], row["nccl"]) == ("24.10", "12.10", "50.0", "2.21")
