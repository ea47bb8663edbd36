"""Whole-image facts cache: a re-check of an image already read touches no layer cache at all.

Keyed by the image's content address (manifest digest, archive config digest, daemon image ID or
squashfs digest), its platform, and the extractors' identity; the value is the ImageFacts JSON.
The reference is not part of the key: the same digest under another tag gets its own reference back.

A registry tag is resolved with one HEAD; `resolved` entries map that digest (of a manifest or of
an index) and the platform asked for to the entry above, so a warm re-check fetches no manifest
and no config. Digests are content addresses: what they map to cannot change.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from typing import Any

from . import safejson
from .errors import ImgcheckError
from .fsutil import atomic_write
from .model.image import ImageFacts
from .model.serde import from_dict, to_dict

# Bumped when the merged view itself changes (2: diff_ids verified, overlay2 semantics, sparse
# files, symlinks to uncollected files): facts an older view produced are not served again.
VIEW_VERSION = "2"


class FactsCache:
    def __init__(self, root: str, namespace: str):
        key = f"{namespace}\nview {VIEW_VERSION}"
        self.dir = os.path.join(root, hashlib.sha256(key.encode()).hexdigest()[:16])

    def _path(self, digest: str, platform: str | None) -> str:
        key = hashlib.sha256(f"{digest}\n{platform}".encode()).hexdigest()
        return os.path.join(self.dir, key + ".json")

    def get(self, digest: str | None, platform: str | None, reference: str) -> ImageFacts | None:
        if not digest:
            return None
        path = self._path(digest, platform)
        try:
            with open(path, "rb") as fh:
                facts = from_dict(ImageFacts, safejson.load(fh, "facts cache entry", ValueError))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError, ImgcheckError):
            # any entry of the wrong shape is a miss (serde checks types; the rest is belt and braces)
            try:
                os.unlink(path)  # damaged: rebuilt from the layer cache
            except OSError:
                pass
            return None
        if facts.digest != digest:
            return None
        return dataclasses.replace(facts, reference=reference)

    def put(self, facts: ImageFacts) -> None:
        if facts.digest:
            self._write(self._path(facts.digest, facts.platform), to_dict(facts))

    def _resolved_path(self, top: str, asked: str) -> str:
        key = hashlib.sha256(f"resolved\n{top}\n{asked}".encode()).hexdigest()
        return os.path.join(self.dir, key + ".json")

    def get_resolved(self, top: str, asked: str, reference: str) -> ImageFacts | None:
        """Facts of the image that `top` (what the reference resolved to) gives for platform `asked`."""
        try:
            with open(self._resolved_path(top, asked), "rb") as fh:
                link = safejson.load(fh, "facts cache link", ValueError)
            if not isinstance(link, dict) or not isinstance(link.get("digest"), str):
                return None
            if link.get("top") != top or link.get("asked") != asked:
                return None
            return self.get(link["digest"], link["platform"], reference)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def put_resolved(self, top: str, asked: str, facts: ImageFacts) -> None:
        if facts.digest:
            self._write(
                self._resolved_path(top, asked),
                {"top": top, "asked": asked, "digest": facts.digest, "platform": facts.platform},
            )

    def _write(self, path: str, doc: dict[str, Any]) -> None:
        try:
            os.makedirs(self.dir, exist_ok=True)
            atomic_write(path, json.dumps(doc))
        except (OSError, ImgcheckError):
            pass  # a cache that cannot be written is only slower, never wrong
