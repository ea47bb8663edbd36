"""Pyxis/Enroot image references -> the plain registry reference imgcheck's registry source reads.

`srun --container-image=nvcr.io#nvidia/pytorch:24.10-py3` (Pyxis) and
`enroot import docker://nvcr.io#nvidia/pytorch:24.10-py3` name the registry before a '#'.
The accepted shapes follow Enroot's docker::_parse_uri (NVIDIA/enroot, src/docker.sh):

  docker://[USER@][REGISTRY#]IMAGE[:TAG][@sha256:DIGEST]
  docker://[USER@]REGISTRY/IMAGE[:TAG][@sha256:DIGEST]   (Docker's own syntax)
  [USER@][REGISTRY#]IMAGE[:TAG]                           (Pyxis adds the docker:// itself)

Without a registry, Enroot uses Docker Hub, as a bare reference does here. USER@ only picks
Enroot's credentials (~/.config/enroot/.credentials); imgcheck uses Docker's credential store,
so the user part is dropped.
"""

from __future__ import annotations

import re

from ..errors import UsageError

_DIGEST = re.compile(r"@(sha256:[0-9a-f]{64})$")
_REGISTRY = re.compile(r"[A-Za-z0-9.-]+(?::[0-9]+)?|\[[0-9A-Fa-f:.]+\](?::[0-9]+)?")
_IMAGE = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*")
_TAG = re.compile(r"[\w][\w.-]{0,127}")


def is_pyxis_reference(ref: str, scheme: str | None = None) -> bool:
    """True for `docker://...`, and for a bare or `registry:` reference with Enroot's '#' separator.

    `scheme` is what resolve.split_scheme found; local schemes (paths may hold '#') never match.
    """
    if ref.startswith("docker://"):
        return True
    if scheme not in (None, "registry"):
        return False
    body = ref[len("registry:") :] if scheme == "registry" else ref
    return "#" in body and "://" not in body and not body.startswith(("/", "."))


def to_registry_reference(ref: str) -> str:
    """'nvcr.io#nvidia/pytorch:24.10-py3' -> 'nvcr.io/nvidia/pytorch:24.10-py3'. UsageError if malformed."""
    original = ref
    rest = ref
    for prefix in ("docker://", "registry:"):
        if rest.startswith(prefix):
            rest = rest[len(prefix) :]
            break
    if not rest or rest != rest.strip():
        raise UsageError(f"invalid Pyxis/Enroot image reference {original!r}")
    digest = None
    m = _DIGEST.search(rest)
    if m:
        digest, rest = m.group(1), rest[: m.start()]
    # USER@ can only stand before the registry/first component; anything with '@' left is malformed
    head_end = min([i for i in (rest.find("#"), rest.find("/")) if i >= 0], default=len(rest))
    at = rest.rfind("@", 0, head_end)
    if at >= 0:
        rest = rest[at + 1 :]
    if "@" in rest:
        raise UsageError(f"invalid Pyxis/Enroot image reference {original!r}: malformed digest")
    registry = None
    if "#" in rest:
        registry, _, rest = rest.partition("#")
        if not _REGISTRY.fullmatch(registry):
            raise UsageError(f"invalid Pyxis/Enroot image reference {original!r}: bad registry {registry!r}")
    image, tag = rest, None
    last = rest.rsplit("/", 1)[-1]
    if ":" in last:
        image, _, tag = rest.rpartition(":")
        if not _TAG.fullmatch(tag):
            raise UsageError(f"invalid Pyxis/Enroot image reference {original!r}: bad tag {tag!r}")
    if registry is None and "/" in image:
        # Docker syntax inside docker://: the first component is a registry if it looks like a host
        first, _, path = image.partition("/")
        if "." in first or ":" in first or first == "localhost":
            registry, image = first, path
    if not _IMAGE.fullmatch(image):
        raise UsageError(f"invalid Pyxis/Enroot image reference {original!r}: bad image name {image!r}")
    text = f"{registry}/{image}" if registry else image
    if tag:
        text += ":" + tag
    if digest:
        text += "@" + digest
    return text
