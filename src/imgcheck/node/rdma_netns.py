"""The RDMA subsystem's network-namespace mode (ib_core's netns_mode), which decides whether a container in a network
namespace of its own sees the node's RDMA devices.

ib_core declares `module_param(netns_mode, bool, 0444)` "Share device among net namespaces; default=1 (shared)"
(torvalds/linux@v5.3:drivers/infiniband/core/device.c); a bool parameter reads "Y" or "N" in sysfs. `rdma system set
netns exclusive` (iproute2 rdma-system(8)) changes the mode at run time; the sysfs file keeps the load-time value, so
the probe reports what it read and says so. Three states: "shared" / "exclusive", "absent" (ib_core is not loaded:
the node shows /sys/module and no ib_core), None (unknown, reason in unknown["state.rdma_netns_mode"]).
"""

from __future__ import annotations

from .hostroot import HostReadError, HostRoot

NETNS_MODE = "/sys/module/ib_core/parameters/netns_mode"
SHARED = "shared"
EXCLUSIVE = "exclusive"
_BOOL = {"Y": SHARED, "1": SHARED, "N": EXCLUSIVE, "0": EXCLUSIVE}


def read_netns_mode(host: HostRoot, unknown: dict[str, str], read: dict[str, str]) -> str | None:
    key = "state.rdma_netns_mode"
    try:
        value = host.read_value(NETNS_MODE)
    except HostReadError as exc:
        unknown[key] = str(exc)
        return None
    if value is None:
        if host.is_dir("/sys/module") and not host.is_dir("/sys/module/ib_core"):
            return "absent"  # ib_core is neither loaded nor built in: no RDMA device to share or isolate
        unknown[key] = (
            f"{NETNS_MODE} is not under the root (a kernel before the parameter (v5.3), or /sys not shown): "
            "`rdma system show` prints the mode"
        )
        return None
    mode = _BOOL.get(value.strip())
    if mode is None:
        unknown[key] = f"{NETNS_MODE} holds {value!r}, not a boolean"
        return None
    read[key] = NETNS_MODE + " (the load-time value; `rdma system set netns` may have changed it since)"
    return mode
