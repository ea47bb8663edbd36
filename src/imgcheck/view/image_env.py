"""An image whose Env lives in a file of its filesystem (Enroot, SIF without an OCI config): the
file is kept by the same walk as everything else, and its lines become the config's Env."""

from __future__ import annotations

import dataclasses
import re

from ..sources.base import EnvFile, OpenedImage
from .fileview import FileView
from .wants import Want, WantSet


def env_want(wants: WantSet, env_file: EnvFile | None) -> WantSet:
    if env_file is None:
        return wants
    return WantSet(wants.wants + (Want(re.escape(env_file.path), content=True, max_bytes=env_file.max_bytes),))


def with_env_from_view(image: OpenedImage, view: FileView) -> OpenedImage:
    """`image` with the Env its env_file holds in `view` (unchanged when it has none, or the file is absent)."""
    env_file = image.env_file
    if env_file is None:
        return image
    data = view.read(env_file.path)
    if data is None:
        return image
    env = env_file.parse(data.decode("utf-8", "replace"))
    return dataclasses.replace(
        image,
        config={**image.config, "config": {"Env": env}},
        notes=[*image.notes, f"image environment read from /{env_file.path}"],
    )
