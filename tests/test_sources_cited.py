"""Every source a report can cite is one a reader can open: a URL, `owner/repo@ref[:path]`, a file inside a
PyPI wheel (`PyPI NAME.whl:PATH`), an image reference (`registry/repo:tag`, whose config a reader can pull), or
a file of this repository. Issue 37: triage cited `research/failure-mechanisms.md`, which does not ship.

Walks every `source` / `sources` string in rules.json, the catalogs and the triage signatures. A
string may hold several citations separated by `; ` (outside parentheses); each must begin with one
of these forms, and may go on with a note ("URL (what it shows)")."""

from __future__ import annotations

import glob
import json
import os
import re

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(REPO, "src", "imgcheck", "data")
FILES = sorted(
    [
        os.path.join(DATA, "compat_matrix", "rules.json"),
        os.path.join(DATA, "triage", "signatures.json"),
        os.path.join(DATA, "triage", "benign_probes.json"),
    ]
    + glob.glob(os.path.join(DATA, "compat_matrix", "catalogs", "*.json"))
)
URL = re.compile(r"https?://[^\s/]+\.[^\s]+")
# optional :LINE[-LINE][,LINE[-LINE]...]
AT_REF = re.compile(r"[\w.-]+/[\w.-]+@[\w.+-]+(:[\w./+-]+(:\d+(-\d+)?(,\d+(-\d+)?)*)?)?")
# a file inside a package of a registry the project's machines reach: "PyPI <wheel>:<path>"
PYPI = re.compile(r"PyPI [\w.+-]+\.whl:[\w./+-]+")
# an image a reader can pull and read (its config Env, its files): "registry.host/path:tag"
IMAGE = re.compile(r"[\w-]+(\.[\w-]+)+/[\w./-]+:[\w.-]+")
FILE = re.compile(r"[\w.-]+(/[\w.-]+)*\.\w+")
# sources stored before this check whose public file the index named by id only (no URL to give);
# each is a catalog row's provenance, never cited in a report. Do not add to this list.
NO_URL_YET = (
    "nvcr.io/nvidia/pytorch:21.12-py3 environment",
    "nvcr.io/nvidia/pytorch:25.10-py3 image history",
    "nvcr.io/nvidia/pytorch:26.07-py3 image history",
)


def _strings(node, where=""):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("source", "sources"):
                for item in value if isinstance(value, list) else [value]:
                    if isinstance(item, str):
                        yield f"{where}.{key}", item
            else:
                yield from _strings(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _strings(item, f"{where}[{i}]")


def citations(text: str) -> list[str]:
    """Split at `; ` outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0 and text.startswith("; ", i):
            parts.append(text[start:i])
            start = i + 2
    parts.append(text[start:])
    return [p.strip() for p in parts]


def problem(citation: str) -> str | None:
    head = citation.split(" ", 1)[0].rstrip(",")
    if URL.fullmatch(head) or AT_REF.fullmatch(head) or IMAGE.fullmatch(head):
        return None
    if PYPI.match(citation):
        return None
    if FILE.fullmatch(head) and "/" in head:
        if os.path.isfile(os.path.join(REPO, head)) or os.path.isfile(os.path.join(REPO, "src", "imgcheck", head)):
            return None
        return f"{head} is no file of this repository"
    return (
        "neither a URL, owner/repo@ref[:path], a PyPI wheel's file, an image reference, nor a file of this repository"
    )


def _all():
    for path in FILES:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        for where, text in _strings(doc):
            yield os.path.relpath(path, REPO), where, text


def test_the_walk_sees_every_kind_of_file():
    seen = {os.path.basename(p) for p, _, _ in _all()}
    assert {"rules.json", "signatures.json", "thresholds.json", "nccl_features.json"} <= seen
    assert sum(1 for _ in _all()) > 500


def test_every_cited_source_can_be_opened():
    bad = []
    for path, where, text in _all():
        if text.startswith(NO_URL_YET):
            continue
        for citation in citations(text):
            why = problem(citation)
            if why:
                bad.append(f"{path}{where}: {citation[:120]!r}: {why}")
    assert not bad, "\n".join(bad)


def test_no_source_points_into_research_notes_that_do_not_ship():
    assert not [t for _, _, t in _all() if "research/" in t and not os.path.exists(os.path.join(REPO, "research"))]


@pytest.mark.parametrize(
    "citation, ok",
    [
        ("https://github.com/NVIDIA/nccl/issues/1676", True),
        ("NVIDIA/nccl@v2.23.4-1:src/transport/net_ib.cc (commit 68b54236)", True),
        ("NVIDIA/nccl@v2.25.1-1 (commit message)", True),
        ("docs/registration-errors.md", True),
        ("research/failure-mechanisms.md (imgcheck design research, sources named there)", False),
        ("NVIDIA/nccl commit f9c3dc25", False),
        ("linux include/linux/mlx5/mlx5_ifc.h", False),
    ],
)
def test_the_check_itself(citation, ok):
    assert (problem(citation) is None) is ok
