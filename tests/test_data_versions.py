"""A change of knowledge comes with a new version (issue 38's unchecked couplings).

`version` in compat_matrix/matrix.json and in the triage signatures is printed in every report and triage
result, so a reader can tell which knowledge answered. Each file records the digest of the content its version
stands for; a change of rows, signatures or message catalogs without recording a new digest fails here, which
is the moment to bump `version` (CONTRIBUTING.md, "Add knowledge").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from imgcheck.matrix.files import MANIFEST, content_digest, packaged_root, read_tree
from imgcheck.triage.signatures import SIGNATURES_FILE, triage_data_digest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRIAGE = os.path.join(ROOT, "src", "imgcheck", "data", "triage")
HOW = "bump `version` there, then run `python tools/fingerprints.py --write`"


def test_matrix_version_stands_for_its_rows():
    files = read_tree(packaged_root())
    manifest = json.loads(files[MANIFEST])
    assert manifest.get("content_digest") == content_digest(files), (
        f"compat_matrix changed since version {manifest['version']}: {HOW}"
    )


def test_signatures_version_stands_for_the_triage_data():
    files = read_tree(TRIAGE)
    doc = json.loads(files[SIGNATURES_FILE])
    assert doc.get("content_digest") == triage_data_digest(files), (
        f"src/imgcheck/data/triage changed since signatures version {doc['version']}: {HOW}"
    )


def test_every_data_file_counts_and_only_the_own_fields_do_not():
    matrix = read_tree(packaged_root())
    for name in ("catalogs/nccl_params.json", "rules.json", "schema.json"):
        edited = dict(matrix, **{name: matrix[name] + b" "})
        assert content_digest(edited) != content_digest(matrix), name
    assert content_digest(dict(matrix, **{MANIFEST: b"{}"})) == content_digest(matrix)

    triage = read_tree(TRIAGE)
    doc = json.loads(triage[SIGNATURES_FILE])
    moved = dict(doc, version="0000-00-00", content_digest="sha256:0")
    same = dict(triage, **{SIGNATURES_FILE: json.dumps(moved).encode()})
    assert triage_data_digest(same) == triage_data_digest(triage)
    doc["signatures"] = doc["signatures"][1:]
    fewer = dict(triage, **{SIGNATURES_FILE: json.dumps(doc).encode()})
    assert triage_data_digest(fewer) != triage_data_digest(triage)
    edited = dict(triage, **{"nccl_messages.json": triage["nccl_messages.json"] + b" "})
    assert triage_data_digest(edited) != triage_data_digest(triage)


def test_the_tool_reports_both_as_recorded():
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tools", "fingerprints.py")], capture_output=True, text=True, check=True
    )
    assert out.stdout.count("(recorded)") == 2, out.stdout
