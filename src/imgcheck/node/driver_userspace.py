"""The version of the NVIDIA user-space driver installed on the host, from the library file names.

The driver's libraries are installed as libnvidia-ml.so.<version> with a libnvidia-ml.so.1 link to it
(the layout shown in NVIDIA/libnvidia-container#213); the NVIDIA Container Toolkit mounts the host's copy
into every GPU container. The kernel module accepts only clients of its own exact version (the strict
string compare in open-gpu-kernel-modules src/nvidia/arch/nvalloc/unix/src/osapi.c, "API mismatch"), so
a package upgrade that replaced these files under a running module breaks every new GPU process until
the module is reloaded.
"""

from __future__ import annotations

import os
import re

from .hostroot import HostReadError, HostRoot

# Where the toolkit finds the driver: the GPU Operator's driver container root first (when present it is
# the driver root and the host's own directories are not used), then the distributions' library dirs.
OPERATOR_DRIVER_ROOT = "/run/nvidia/driver"
LIBRARY_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib")
SONAME = "libnvidia-ml.so.1"
_VERSIONED = re.compile(r"^libnvidia-ml\.so\.(\d+\.\d+(?:\.\d+)?)$")


def scan_userspace_driver(host: HostRoot, unknown: dict[str, str]) -> tuple[str | None, str | None]:
    """(version, path of the versioned library) of the user-space driver, or (None, None) with a reason."""
    prefix = OPERATOR_DRIVER_ROOT if host.is_dir(OPERATOR_DRIVER_ROOT + "/usr") else ""
    found: dict[str, str] = {}
    for directory in LIBRARY_DIRS:
        link = f"{prefix}{directory}/{SONAME}"
        try:
            real = host.resolve(link)
        except HostReadError as exc:
            unknown["gpu.userspace_driver_version"] = str(exc)
            return None, None
        if real is None:
            continue
        match = _VERSIONED.match(os.path.basename(real))
        if match is None:
            unknown["gpu.userspace_driver_version"] = (
                f"{link} resolves to {os.path.basename(real)}, not a versioned name"
            )
            return None, None
        found.setdefault(match.group(1), f"{prefix}{directory}/{match.group(0)}")
    if not found:
        unknown["gpu.userspace_driver_version"] = f"no {SONAME} in {', '.join(prefix + d for d in LIBRARY_DIRS)}"
        return None, None
    if len(found) > 1:
        unknown["gpu.userspace_driver_version"] = (
            f"several user-space drivers installed ({', '.join(sorted(found))}): "
            "which one the toolkit mounts depends on the ld.so cache"
        )
        return None, None
    ((version, path),) = found.items()
    return version, path
