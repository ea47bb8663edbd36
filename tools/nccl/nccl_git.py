"""Reading a bare NCCL mirror (github:NVIDIA/nccl) tag by tag: shared by the generators in this folder.

Only `git` plumbing is used (tag list, ls-tree, show); nothing is checked out or built.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable

REPO_ENV = "NCCL_MIRROR"  # path of the bare git dir; the fetch tool puts it at /work/.mirror/NVIDIA+nccl/repo
DEFAULT_REPO = "/work/.mirror/NVIDIA+nccl/repo"
FIRST = (2, 3)  # the issue asks for every release since 2.4; 2.3.x adds the names 2.4 dropped
_TAG = re.compile(r"^v(2)\.(\d+)\.(\d+)-(\d+)$")
SOURCE_DIRS = ("src", "plugins", "ext-net", "ext-tuner", "ext-profiler")
SOURCE_EXT = (".cc", ".cu", ".c", ".h", ".cpp", ".hpp")


def repo() -> str:
    return os.environ.get(REPO_ENV, DEFAULT_REPO)


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", repo(), *args], check=True, capture_output=True, text=True).stdout


def release_tags() -> list[tuple[str, str]]:
    """(tag, version) for every v2.X.Y-Z release tag since FIRST, oldest first; for a version tagged twice
    (v2.5.6-1, v2.5.6-2) the last packaging tag stands for it."""
    found: dict[str, tuple[tuple[int, ...], str]] = {}
    for tag in git("tag").split():
        m = _TAG.match(tag)
        if not m:
            continue
        nums = tuple(int(x) for x in m.groups())
        if nums[:2] < FIRST:
            continue
        version = ".".join(m.groups()[:3])
        if version not in found or found[version][0] < nums:
            found[version] = (nums, tag)
    return [(tag, v) for v, (_, tag) in sorted(found.items(), key=lambda kv: kv[1][0])]


def source_files(tag: str) -> list[str]:
    out = git("ls-tree", "-r", "--name-only", tag, "--", *SOURCE_DIRS)
    return [p for p in out.splitlines() if p.endswith(SOURCE_EXT)]


def show(tag: str, path: str) -> str:
    return git("show", f"{tag}:{path}")


def blobs(specs: list[str]) -> dict[str, str]:
    """The text of each `REV:PATH` in one `git cat-file --batch` run; a spec git reports missing is left out."""
    req = "".join(f"{spec}\n" for spec in specs).encode()
    raw = subprocess.run(
        ["git", "-C", repo(), "cat-file", "--batch"], input=req, check=True, capture_output=True
    ).stdout
    out: dict[str, str] = {}
    pos = 0
    for spec in specs:
        nl = raw.index(b"\n", pos)
        header = raw[pos:nl].split()
        if header[-1] == b"missing":
            pos = nl + 1
            continue
        size = int(header[2])
        out[spec] = raw[nl + 1 : nl + 1 + size].decode("utf-8", "replace")
        pos = nl + 1 + size + 1
    return out


def files_text(tag: str) -> dict[str, str]:
    """Every source file of the tag, read in one `git cat-file --batch` run."""
    paths = source_files(tag)
    texts = blobs([f"{tag}:{p}" for p in paths])
    return {p: texts[f"{tag}:{p}"] for p in paths if f"{tag}:{p}" in texts}


def version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


def print_catalog(doc: dict) -> int:
    """Write a generated catalog document to stdout as the catalogs are laid out (indent 1); the exit code."""
    import json
    import sys

    json.dump(doc, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


def release_runs(read_tag: Callable[[str], dict | None], missing: str) -> tuple[list[dict], list[tuple[str, str]]]:
    """Read every release tag with `read_tag(tag)` (a dict of fields plus "_where", the source lines, or None when
    the tag lacks what is read: `missing` is printed) and merge consecutive releases with the same fields into one
    row {first, last, fields..., source, confidence}; the rows and the tags read."""
    import sys

    rows: list[dict] = []
    tags = release_tags()
    for tag, version in tags:
        got = read_tag(tag)
        if got is None:
            print(f"{tag}: {missing}", file=sys.stderr)
            continue
        where = got.pop("_where")
        if rows and all(rows[-1][k] == v for k, v in got.items()):
            rows[-1]["last"] = version
            continue
        rows.append({"first": version, "last": version, **got, "source": where, "confidence": "verified"})
    return rows, tags
