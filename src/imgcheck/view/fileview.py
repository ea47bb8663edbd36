"""The merged view of an image's kept paths, top layer first, with symlinks resolved in-root."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from ..inroot import LinkLoop, resolve_in_root
from .layer_index import FILE, HARDLINK, SYMLINK, Entry, LayerIndex, path_hash

SymlinkLoop = LinkLoop  # the name extractors catch


@dataclass(frozen=True)
class FileRef:
    """A resolved regular file: where it was asked for, where it really is, and its bytes."""

    path: str  # the path as asked for / as listed
    real_path: str  # after following symlinks
    layer: str | None
    size: int
    data: bytes | None
    truncated: bool
    scan: str | None = None  # the want's streaming scanner's result (view/fatbin.py)


def _visible(path: str, upper: list[LayerIndex]) -> bool:
    """Is `path` from a lower layer still visible under the `upper` layers?

    Hidden when an upper layer has the path itself (kept, whited out, any non-directory, or a
    directory: every kept entry is a non-directory, which an upper directory replaces), or has an
    ancestor whited out, marked opaque, or replaced by a non-directory.
    """
    ancestors = []
    parent = posixpath.dirname(path)
    while parent:
        ancestors.append(parent)
        parent = posixpath.dirname(parent)
    hashes = [path_hash(p) for p in [path] + ancestors]  # hashed once, looked up in every layer
    for layer in upper:
        if path in layer.whiteouts or path in layer.entries or layer.has_dir_hash(hashes[0]):
            return False
        for anc in ancestors:
            if anc in layer.whiteouts or anc in layer.opaque_dirs:
                return False
        if any(layer.has_hash(h) for h in hashes):
            return False
    return True


class FileView:
    def __init__(self, layers: list[LayerIndex]):
        """`layers` bottom first, as in the manifest."""
        self.entries: dict[str, Entry] = {}
        self._layers = list(layers)
        upper: list[LayerIndex] = []
        for layer in reversed(layers):
            for path, entry in layer.entries.items():
                if path in self.entries:
                    continue
                if upper and not _visible(path, upper):
                    continue
                self.entries[path] = entry
            upper.append(layer)

    # -- path resolution -------------------------------------------------------------------
    def resolve(self, path: str) -> str:
        """Follow symlinks in every component, never leaving the root (inroot.py). Raises SymlinkLoop."""
        entries = self.entries

        def link_target(parts: list[str]) -> str | None:
            entry = entries.get("/".join(parts))
            return entry.linkname if entry is not None and entry.kind == SYMLINK else None

        return "/".join(resolve_in_root(path, link_target))

    def file(self, path: str) -> FileRef | None:
        """The regular file at `path` after symlinks and hard links, or None."""
        try:
            real = self.resolve(path)
        except SymlinkLoop:
            return None
        entry = self.entries.get(real)
        if entry is not None and entry.kind == HARDLINK and entry.linkname:
            entry = self.entries.get(entry.linkname) or entry
        if entry is None or entry.kind != FILE:
            return None
        return FileRef(
            path=path,
            real_path=real,
            layer=entry.layer,
            size=entry.size,
            data=entry.data,
            truncated=entry.truncated,
            scan=entry.scan,
        )

    def read(self, path: str) -> bytes | None:
        ref = self.file(path)
        return ref.data if ref else None

    def paths(self, pattern: str) -> list[str]:
        """Kept paths (files, links) whose path fully matches `pattern`, sorted."""
        rx = re.compile(pattern)
        return sorted(p for p in self.entries if rx.fullmatch(p))

    def exists(self, path: str) -> bool:
        """Whether a non-directory is at `path` (symlinks followed) in the merged image, kept or not.

        Every layer's index holds the hash of each non-directory path it has (wanted or not), so a name
        no want matches (a library the loader would open) is still answerable; an upper layer's
        whiteout, opaque directory, directory or file at an ancestor hides the lower layers' copy.
        """
        try:
            real = self.resolve(path)
        except SymlinkLoop:
            return False
        entry = self.entries.get(real)
        if entry is not None:
            return entry.kind != SYMLINK
        ancestors = []
        parent = posixpath.dirname(real)
        while parent:
            ancestors.append(parent)
            parent = posixpath.dirname(parent)
        h = path_hash(real)
        ancestor_hashes = [path_hash(a) for a in ancestors]
        for layer in reversed(self._layers):
            if layer.has_hash(h):
                return True
            if real in layer.whiteouts or layer.has_dir_hash(h):
                return False
            for anc, ah in zip(ancestors, ancestor_hashes):
                if anc in layer.whiteouts or anc in layer.opaque_dirs or layer.has_hash(ah):
                    return False
        return False

    def is_symlink(self, path: str) -> bool:
        entry = self.entries.get(path)
        return entry is not None and entry.kind == SYMLINK

    def link_target(self, path: str) -> str | None:
        entry = self.entries.get(path)
        return entry.linkname if entry is not None and entry.kind == SYMLINK else None
