"""Reading the matrix directory (a real directory or the copy inside an installed package) and its digest."""

from __future__ import annotations

import hashlib
import os
from importlib import resources
from importlib.resources.abc import Traversable

from ..errors import BadInputError, UnavailableError

MAX_FILE_BYTES = 8 * 1024 * 1024  # the whole shipped matrix is ~200 kB; refuse anything absurd


def packaged_root() -> Traversable:
    return resources.files("imgcheck").joinpath("data", "compat_matrix")


def read_tree(root: Traversable | str) -> dict[str, bytes]:
    """Every file under root as {relative/posix/path: bytes}; hidden files are skipped."""
    if isinstance(root, str):
        if not os.path.exists(root):
            raise UnavailableError(f"{root}: no such matrix directory")
        if not os.path.isdir(root):
            raise BadInputError(f"{root}: not a directory")
        from pathlib import Path

        root = Path(root)
    files: dict[str, bytes] = {}

    def walk(node: Traversable, prefix: str) -> None:
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            if child.name.startswith(".") or child.name == "__pycache__":
                continue
            rel = f"{prefix}{child.name}"
            if child.is_dir():
                walk(child, rel + "/")
            else:
                data = child.read_bytes()
                if len(data) > MAX_FILE_BYTES:
                    raise BadInputError(f"matrix file {rel} is larger than {MAX_FILE_BYTES} bytes")
                files[rel] = data

    walk(root, "")
    return files


def digest_of(files: dict[str, bytes]) -> str:
    """sha256 over (path, length, bytes) of every file in path order: any edit, rename or addition changes it."""
    h = hashlib.sha256()
    for path in sorted(files):
        data = files[path]
        h.update(path.encode("utf-8") + b"\0" + str(len(data)).encode() + b"\0")
        h.update(data)
    return "sha256:" + h.hexdigest()


MANIFEST = "matrix.json"


def content_digest(files: dict[str, bytes]) -> str:
    """The digest of every file but the manifest: what `version` in matrix.json stands for. The manifest records
    it as `content_digest`, so a change of rows without a new version is caught (tests/test_matrix.py)."""
    return digest_of({path: data for path, data in files.items() if path != MANIFEST})
