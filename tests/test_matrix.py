"""The shipped compat matrix: schema, sources and confidences on every row, version + digest, validation
of broken copies (`imgcheck matrix validate` exits 2 with one line per problem), and shipping in the wheel."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from imgcheck.cli.main import main
from imgcheck.engine import REQUIRED_ROWS
from imgcheck.errors import BadInputError
from imgcheck.matrix import load_matrix, read_files, validate_files
from imgcheck.matrix.files import digest_of, packaged_root
from imgcheck.versions.ecosystems import numeric_tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIDENCES = {"verified", "reported", "vendor-guidance", "hypothesis"}


def shipped_dir() -> str:
    return str(packaged_root())


def test_shipped_matrix_is_valid_and_complete():
    files, _ = read_files()
    assert validate_files(files, REQUIRED_ROWS) == []
    m = load_matrix(required=REQUIRED_ROWS)
    assert numeric_tuple(m.version)
    assert m.digest == digest_of(files)
    # independent of the validator: every row of every table carries a source and an allowed confidence
    for table, rows in m.tables.items():
        assert rows, table
        for row in rows:
            source = row.get("sources") if table == "rules" else row.get("source")
            assert source, (table, row)
            assert row["confidence"] in CONFIDENCES, (table, row)


def test_top_level_symlink_points_at_the_packaged_matrix():
    link = os.path.join(REPO, "compat_matrix")
    assert os.path.islink(link)
    assert os.path.realpath(link) == os.path.realpath(os.path.join(REPO, "src", "imgcheck", "data", "compat_matrix"))


def test_catalog_facts_the_engine_relies_on():
    m = load_matrix()
    assert m.row("rdma_core_releases", version="34.0")["pabi"] == 34
    assert m.row("rdma_core_releases", version="33.0")["pabi"] == 33
    assert m.row("rdma_core_functions", function="ibv_reg_mr_iova2")["first_release"] == "28.0"
    assert m.row("rdma_core_functions", function="ibv_reg_dmabuf_mr")["symbol_version"] == "IBVERBS_1.12"
    assert m.row("kernel_rdma_features", feature="dmabuf_mr", stack="mlnx_ofed")["min_version"] == "5.5"
    assert m.row("nccl_features", feature="gdr_module_sysfs_check")["nccl_min"] == "2.23.4"
    assert m.row("mlnx_ofed_releases", release="23.10-1.1.9.0")["rdma_core_version"] == "2307mlnx47"


def test_cli_validate_shipped(capsys):
    assert main(["matrix", "validate"]) == 0
    out = capsys.readouterr().out
    assert "valid" in out and load_matrix().digest in out and load_matrix().version in out


def test_digest_changes_with_any_edit(tmp_path):
    copy = tmp_path / "m"
    shutil.copytree(shipped_dir(), copy)
    before = load_matrix(str(copy), required=REQUIRED_ROWS).digest
    assert before == load_matrix().digest
    path = copy / "catalogs" / "thresholds.json"
    path.write_text(path.read_text().replace('"value": 65536', '"value": 65535'))
    after = load_matrix(str(copy), required=REQUIRED_ROWS)
    assert after.digest != before and after.threshold("memlock_reported_failing_kib") == 65535


def _edit(path, fn):
    doc = json.loads(path.read_text())
    fn(doc)
    path.write_text(json.dumps(doc, indent=1))


def test_broken_matrix_one_line_per_problem(tmp_path, capsys):
    copy = tmp_path / "broken"
    shutil.copytree(shipped_dir(), copy)
    cat = copy / "catalogs"

    def rdma(doc):
        doc["rows"][0].pop("source")  # 1 no source
        doc["rows"][1]["confidence"] = "likely"  # 2 bad confidence
        doc["rows"][2]["version"] = "vNext"  # 3 version does not parse
        doc["rows"][3]["colour"] = "blue"  # 4 unknown field

    _edit(cat / "rdma_core_releases.json", rdma)
    _edit(cat / "nccl_features.json", lambda d: d["rows"][0].update(nccl_min=None))  # 5 null non-optional
    _edit(cat / "cuda_minor_compat.json", lambda d: d["rows"].append(dict(d["rows"][0])))  # 6 duplicate key
    _edit(copy / "rules.json", lambda d: d.update(rows=[r for r in d["rows"] if r["id"] != "MEMLOCK-TOO-LOW"]))  # 7
    (cat / "extra.json").write_text("{}")  # 8 undescribed file

    def null_version(doc):
        row = next(r for r in doc["rows"] if r.get("newest_cuda_native"))
        row["newest_cuda_native"] = None
        row.pop("note", None)  # 9 null without note

    _edit(cat / "nvidia_driver_cuda.json", null_version)

    assert main(["matrix", "validate", str(copy)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 9, lines
    text = "\n".join(lines)
    for expected in (
        "needs a source",
        "confidence 'likely'",
        "version 'vNext' does not parse",
        "unknown field 'colour'",
        "nccl_min must not be null",
        "duplicate key 13",
        "needs a row 'MEMLOCK-TOO-LOW'",
        "extra.json: not described by schema.json",
        "newest_cuda_native is null without a 'note'",
    ):
        assert expected in text, expected
    assert all(line.startswith(str(copy)) for line in lines)
    with pytest.raises(BadInputError, match="invalid"):
        load_matrix(str(copy), required=REQUIRED_ROWS)


def test_broken_json_and_missing_dir(tmp_path, capsys):
    copy = tmp_path / "m"
    shutil.copytree(shipped_dir(), copy)
    (copy / "rules.json").write_text("{not json")
    assert main(["matrix", "validate", str(copy)]) == 2
    err = capsys.readouterr().err
    assert "rules.json: not valid JSON" in err and "Traceback" not in err
    assert main(["matrix", "validate", str(tmp_path / "nope")]) == 3


def test_bad_rule_template_and_variant(tmp_path, capsys):
    copy = tmp_path / "m"
    shutil.copytree(shipped_dir(), copy)

    def rules(doc):
        doc["rows"][0]["title"] = "broken {placeholder"
        doc["rows"][1]["variants"] = {"x": {"id": "OTHER"}}

    _edit(copy / "rules.json", rules)
    assert main(["matrix", "validate", str(copy)]) == 2
    err = capsys.readouterr().err
    assert "bad {placeholder} syntax" in err and "field 'id' cannot be overridden" in err


def test_matrix_ships_in_the_wheel_and_loads_from_an_installed_copy(tmp_path):
    """Build the wheel from a copy of the project, install it into a target dir, load the matrix from there."""
    src = tmp_path / "project"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(os.path.join(REPO, name), src / name)
    shutil.copytree(os.path.join(REPO, "src"), src / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    wheels = tmp_path / "wheels"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(src)],
        capture_output=True,
        text=True,
        cwd=str(src),
    )  # setuptools puts build/ in the cwd
    if build.returncode != 0:
        if "No matching distribution" in build.stderr or "Could not find a version" in build.stderr:
            pytest.skip("cannot fetch the build backend (setuptools>=77) from PyPI")
        raise AssertionError(build.stderr[-2000:])
    (wheel,) = wheels.glob("imgcheck-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    shipped, _ = read_files()
    for rel in shipped:
        assert f"imgcheck/data/compat_matrix/{rel}" in names, rel
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    probe = (
        "import imgcheck, json; from imgcheck.matrix import load_matrix; from imgcheck.matrix.files import packaged_root;"
        "m = load_matrix(); print(json.dumps([imgcheck.__file__, str(packaged_root()), m.version, m.digest]))"
    )
    env = dict(os.environ, PYTHONPATH=str(target))
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=str(tmp_path), check=True
    ).stdout
    module_file, root, version, digest = json.loads(out)
    assert module_file.startswith(str(target)) and root.startswith(str(target))
    assert (version, digest) == (load_matrix().version, load_matrix().digest)


def test_markdown_notes_are_allowed_but_counted_in_the_digest(tmp_path, capsys):
    copy = tmp_path / "m"
    shutil.copytree(shipped_dir(), copy)
    (copy / "catalogs" / "NOTES.md").write_text("why row X is null\n")
    assert main(["matrix", "validate", str(copy)]) == 0
    assert load_matrix(str(copy), required=REQUIRED_ROWS).digest != load_matrix().digest
