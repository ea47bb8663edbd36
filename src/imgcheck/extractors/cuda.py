"""CUDA toolkit version, forward-compat driver libraries, and NVIDIA_REQUIRE_CUDA."""

from __future__ import annotations

import posixpath
import re

from .. import safejson
from ..model.image import Cuda
from ..view.fileview import FileView
from ..view.wants import Want

WANTS = (
    Want(r"usr/local/cuda[^/]*/version\.(?:json|txt)", content=True, max_bytes=1024 * 1024),
    Want(r"usr/local/cuda[^/]*/compat/libcuda\.so(?:\.[0-9]+)*"),
)
_COMPAT = re.compile(r"libcuda\.so\.(\d+\.\d+(?:\.\d+)*)$")
_TXT = re.compile(r"CUDA Version\s+(\d+(?:\.\d+)+)")


def _toolkit(view: FileView) -> tuple[str | None, str | None, str | None, str | None]:
    for path in ["usr/local/cuda/version.json"] + view.paths(r"usr/local/cuda[^/]*/version\.json"):
        ref = view.file(path)
        if ref is None or ref.data is None:
            continue
        try:
            doc = safejson.loads(ref.data, "version.json", ValueError)  # depth-bounded: a layer's file
            version = doc["cuda"]["version"]
        except (ValueError, KeyError, TypeError):
            continue
        if isinstance(version, str):
            return version, "/" + ref.real_path, ref.layer, "version.json"
    for path in ["usr/local/cuda/version.txt"] + view.paths(r"usr/local/cuda[^/]*/version\.txt"):
        ref = view.file(path)
        if ref is None or ref.data is None:
            continue
        match = _TXT.search(ref.data.decode("utf-8", "replace"))
        if match:
            return match.group(1), "/" + ref.real_path, ref.layer, "version.txt"
    return None, None, None, None


def extract(view: FileView, env: dict[str, str]) -> Cuda | None:
    version, path, layer, origin = _toolkit(view)
    if version is None and env.get("CUDA_VERSION"):
        version, origin = env["CUDA_VERSION"], "env CUDA_VERSION"
    compat_driver = compat_path = None
    for candidate in view.paths(r"usr/local/cuda[^/]*/compat/libcuda\.so(?:\.[0-9]+)*"):
        match = _COMPAT.search(posixpath.basename(candidate))
        if match and "." in match.group(1):
            compat_driver, compat_path = match.group(1), "/" + candidate
            break
    require = env.get("NVIDIA_REQUIRE_CUDA")
    if version is None and compat_driver is None and require is None:
        return None
    return Cuda(version=version, path=path, layer=layer, origin=origin, compat_driver=compat_driver,
                compat_path=compat_path, require_cuda=require)
