"""The cluster's NVIDIA GPU components from a Kubernetes node's status.images: the images the kubelet holds on the
node, each with its names ("nvcr.io/nvidia/k8s-device-plugin:v0.17.4"). The device plugin and GPU Operator run as
pods on every GPU node, so their image is there; an old tag can linger after an upgrade, so a node holding several
releases of one component leaves it unknown, with the releases named, rather than guessing which one runs."""

from __future__ import annotations

import re
from typing import Any

# image repository (last path part) -> component name
COMPONENTS = {
    "k8s-device-plugin": "k8s-device-plugin",
    "gpu-operator": "gpu-operator",
    "container-toolkit": "container-toolkit",
    "k8s-driver-manager": "k8s-driver-manager",  # the driver DaemonSet's init container (nvcr.io/nvidia/cloud-native)  # the GPU Operator's toolkit pod (nvcr.io/nvidia/k8s/container-toolkit)
}
_TAG = re.compile(r"^(?P<repo>[^@]+?)/(?P<name>[^/:@]+):(?P<tag>v?\d+\.\d+\.\d+)(?:-[\w.]+)?$")


def from_status_images(images: Any) -> tuple[dict[str, str] | None, str | None]:
    """(component -> release, None) or (None, why it is not known)."""
    if not isinstance(images, list):
        return None, "the node's status.images is not given"
    seen: dict[str, set[str]] = {}
    for image in images:
        for ref in (image.get("names") or []) if isinstance(image, dict) else []:
            m = _TAG.match(str(ref))
            if m and m["name"] in COMPONENTS:
                seen.setdefault(COMPONENTS[m["name"]], set()).add(m["tag"])
    found = {c: next(iter(tags)) for c, tags in seen.items() if len(tags) == 1}
    several = {c: sorted(tags) for c, tags in seen.items() if len(tags) > 1}
    if several:
        words = "; ".join(f"{c}: {', '.join(t)}" for c, t in several.items())
        return (found or None), f"the node holds several releases' images ({words}): which one runs is not known"
    if not found:
        return None, "no NVIDIA device plugin or GPU Operator image among the node's status.images"
    return found, None
