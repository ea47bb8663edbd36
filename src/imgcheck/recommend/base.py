"""Which catalog image the user's image is built on, so "a newer tag of the same base" can be offered first.

An image's own reference names its base only when the user runs the vendor image itself. NGC PyTorch images
also leave their release in the Env every derived image inherits (`ENV ... NVIDIA_PYTORCH_VERSION=25.10`,
seen in the images' build history and environment; compat_matrix base_images rows for 21.12, 25.10, 26.07
cite them), so `FROM nvcr.io/nvidia/pytorch:24.05-py3` is recognised in a team's own image too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..model.image import ImageFacts

_RELEASE = re.compile(r"^\d{2}\.\d{2}$")
# Env variable an NGC framework image sets to its YY.MM release -> that image's repository.
NGC_RELEASE_ENV = (("NVIDIA_PYTORCH_VERSION", "nvcr.io/nvidia/pytorch"),)


@dataclass(frozen=True)
class Base:
    repository: str
    release: str | None
    how: str  # "reference" (the image is the base) or "NVIDIA_PYTORCH_VERSION=24.05 in its Env"

    @property
    def reference(self) -> str:
        return f"{self.repository}:{self.release}" if self.release else self.repository


def repository(reference: str) -> str:
    """'nvcr.io/nvidia/pytorch:24.05-py3' -> 'nvcr.io/nvidia/pytorch' (no tag, no digest)."""
    ref = reference.split("@", 1)[0]
    head, _, tail = ref.rpartition("/")
    return (head + "/" if head else "") + tail.split(":", 1)[0]


def _tag(reference: str) -> str | None:
    last = reference.split("@", 1)[0].rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else None


def base_of(image: ImageFacts) -> Base:
    for name, repo in NGC_RELEASE_ENV:
        value = (image.env.get(name) or "").strip()
        if _RELEASE.match(value):
            if repository(image.reference) == repo:
                break  # the NGC image itself: its reference says the same, with the tag suffix
            return Base(repo, value, f"{name}={value} in its Env")
    return Base(repository(image.reference), _tag(image.reference), "reference")
