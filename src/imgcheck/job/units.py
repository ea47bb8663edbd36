"""Sizes as each runtime writes them, to MiB / KiB. None: not a size that runtime accepts."""

from __future__ import annotations

import re

MIB = 1024 * 1024

# Kubernetes resource.Quantity suffixes (k8s.io/apimachinery/pkg/api/resource): binary and decimal SI.
_K8S = {
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
    "m": 10**-3,
}
_K8S_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|m)?\s*$")
# Docker's --shm-size / shm_size: go-units RAMInBytes, binary multiples, case-insensitive, optional "b"/"ib".
_DOCKER_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgtp])?(?:i?b)?\s*$", re.IGNORECASE)
_DOCKER = {None: 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40, "p": 2**50}


def k8s_quantity_bytes(text: object) -> float | None:
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    m = _K8S_RE.match(str(text)) if text is not None else None
    return float(m.group(1)) * _K8S[m.group(2) or ""] if m else None


def docker_size_bytes(text: object) -> float | None:
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    m = _DOCKER_RE.match(str(text)) if text is not None else None
    return float(m.group(1)) * _DOCKER[(m.group(2) or "").lower() or None] if m else None


def memlock_kib(text: object) -> int | None:
    """A memlock ulimit value as Docker takes it (bytes; -1 unlimited) in KiB (-1 unlimited)."""
    if isinstance(text, bool):
        return None
    try:
        value = int(str(text).strip())
    except ValueError:
        return None
    return -1 if value < 0 else value // 1024
