"""Platform strings (os/arch[/variant]) and choosing one manifest from an index."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import BadInputError, UsageError
from .soci_index import INDEX_CONFIG_TYPES as SOCI_INDEX_TYPES

# Go's GOARCH names are what manifests use; people type the kernel's names too.
_ARCH_ALIASES = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "ppc64le": "ppc64le"}
DEFAULT_PLATFORM = "linux/amd64"


@dataclass(frozen=True)
class Platform:
    os: str
    architecture: str
    variant: str | None = None

    def __str__(self) -> str:
        return "/".join(p for p in (self.os, self.architecture, self.variant) if p)


def parse_platform(text: str) -> Platform:
    parts = text.strip().split("/")
    if len(parts) not in (2, 3) or not all(parts):
        raise UsageError(f"invalid platform {text!r}: expected os/arch[/variant], e.g. linux/amd64")
    arch = _ARCH_ALIASES.get(parts[1], parts[1])
    variant = parts[2] if len(parts) == 3 else None
    if arch == "arm64" and variant == "v8":
        variant = None  # arm64 and arm64/v8 are the same platform
    return Platform(parts[0], arch, variant)


class PlatformMismatchError(BadInputError):
    """The image has no manifest for the platform asked for; `available` lists the ones it has."""

    def __init__(self, message: str, available: tuple[str, ...] = ()):
        super().__init__(message)
        self.available = available


def same_platform(have: Platform, wanted: Platform) -> bool:
    """`wanted` without a variant matches any variant of its os/arch (as docker pull --platform does)."""
    return (have.os, have.architecture) == (wanted.os, wanted.architecture) and (
        wanted.variant is None or have.variant == wanted.variant
    )


def require_platform(have: str | None, wanted: Platform | None, where: str) -> None:
    """An explicitly asked platform must be what was read: a single-platform image is not silently taken.

    An image whose config names no platform (Enroot squashfs, some SIFs) cannot be confirmed or refuted,
    so it passes; the report shows its platform as unknown.
    """
    if wanted is None or have is None:
        return
    try:
        got = parse_platform(have)
    except UsageError:
        return  # a config with an odd platform string: reported as it is, not a reason to refuse
    if not same_platform(got, wanted):
        raise PlatformMismatchError(f"{where}: no image for platform {wanted} (available: {got})", (str(got),))


def platform_of_config(config: dict[str, Any]) -> str | None:
    os_ = config.get("os")
    arch = config.get("architecture")
    if not isinstance(os_, str) or not isinstance(arch, str):
        return None
    variant = config.get("variant")
    return str(Platform(os_, arch, variant if isinstance(variant, str) and variant else None))


def select_manifest(index: dict[str, Any], wanted: Platform, where: str) -> dict[str, Any]:
    """Pick the descriptor for exactly `wanted` from an image index / manifest list."""
    manifests = index.get("manifests") if isinstance(index, dict) else None
    if not isinstance(manifests, list):
        raise BadInputError(f"{where}: index has no 'manifests' list")
    available = []
    for desc in manifests:
        if not isinstance(desc, dict):
            raise BadInputError(f"{where}: index entry is not an object")
        plat = desc.get("platform")
        if not isinstance(plat, dict):
            continue
        if plat.get("os") == "unknown":
            continue  # attestation manifests (buildx) are not images
        if desc.get("artifactType") in SOCI_INDEX_TYPES:
            continue  # `soci convert` lists each platform's SOCI index beside its image (sources/soci_index.py)
        try:
            have = parse_platform(
                "/".join(str(p) for p in (plat.get("os"), plat.get("architecture"), plat.get("variant")) if p)
            )
        except UsageError:
            continue
        available.append(str(have))
        if same_platform(have, wanted):
            return desc
    listed = ", ".join(available) or "none"
    raise PlatformMismatchError(f"{where}: no manifest for platform {wanted} (available: {listed})", tuple(available))
