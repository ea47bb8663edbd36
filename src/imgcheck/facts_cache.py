"""Whole-image facts cache: a re-check of an image already read touches no layer cache at all.

Keyed by the image's content address (manifest digest, archive config digest, daemon image ID or
squashfs digest), its platform, and the extractors' identity; the value is the ImageFacts JSON.
The reference is not part of the key: the same digest under another tag gets its own reference back.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os

from .errors import ImgcheckError
from .fsutil import atomic_write
from .model.image import ImageFacts
from .model.serde import from_dict, to_dict


class FactsCache:
    def __init__(self, root: str, namespace: str):
        self.dir = os.path.join(root, hashlib.sha256(namespace.encode()).hexdigest()[:16])

    def _path(self, digest: str, platform: str | None) -> str:
        key = hashlib.sha256(f"{digest}\n{platform}".encode()).hexdigest()
        return os.path.join(self.dir, key + ".json")

    def get(self, digest: str | None, platform: str | None, reference: str) -> ImageFacts | None:
        if not digest:
            return None
        path = self._path(digest, platform)
        try:
            with open(path, "rb") as fh:
                facts = from_dict(ImageFacts, json.load(fh))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, ImgcheckError):
            try:
                os.unlink(path)  # damaged: rebuilt from the layer cache
            except OSError:
                pass
            return None
        if facts.digest != digest:
            return None
        return dataclasses.replace(facts, reference=reference)

    def put(self, facts: ImageFacts) -> None:
        if not facts.digest:
            return
        try:
            os.makedirs(self.dir, exist_ok=True)
            atomic_write(self._path(facts.digest, facts.platform), json.dumps(to_dict(facts)))
        except (OSError, ImgcheckError):
            pass  # a cache that cannot be written is only slower, never wrong
