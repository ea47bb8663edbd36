"""Where a fact was read: one type for image facts, node facts and the evidence built from them.

kind "path": a file (on the node, or in an image, with the layer that holds it when known);
kind "origin": something that is not a file path the reader opened: a node facts file written by hand,
a Kubernetes label, an image config field. A report names this, never a path the fact did not come from.
"""

from __future__ import annotations

from dataclasses import dataclass

KIND_PATH = "path"
KIND_ORIGIN = "origin"
KINDS = (KIND_PATH, KIND_ORIGIN)


@dataclass(frozen=True)
class Location:
    kind: str  # path | origin
    path: str | None = None  # kind path: the file (node path, or the path inside the image)
    layer: str | None = None  # the image layer (diff_id) holding `path`, when known
    origin: str | None = None  # kind origin: e.g. "node facts file nodes/a.json", "Kubernetes label ..."

    @classmethod
    def file(cls, path: str | None, layer: str | None = None) -> Location | None:
        """A file, or None when nothing is known (no path and no layer)."""
        if path is None and layer is None:
            return None
        return cls(KIND_PATH, path=path, layer=layer)

    @classmethod
    def described(cls, origin: str) -> Location:
        return cls(KIND_ORIGIN, origin=origin)

    def to_json(self) -> dict[str, str]:
        """Only the keys that are set: node facts files stay short."""
        doc: dict[str, str] = {"kind": self.kind}
        for key in ("path", "layer", "origin"):
            if getattr(self, key) is not None:
                doc[key] = getattr(self, key)
        return doc


class Located:
    """Mixin for image facts with `path` and `layer` fields: where they were read, as a Location."""

    path: str | None
    layer: str | None

    @property
    def location(self) -> Location | None:
        return Location.file(self.path, self.layer)
