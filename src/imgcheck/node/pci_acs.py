"""PCIe ACS on the bridges above the GPUs and RDMA NICs, read from sysfs config space (never setpci).

ACS P2P Request/Completion Redirect makes a switch or root port send peer-to-peer transactions up to
the root complex instead of across, which is what GPUDirect RDMA between a GPU and a NIC under the
same switch needs (NCCL troubleshooting guide, "PCI Access Control Services (ACS)").

Layout (Linux include/uapi/linux/pci_regs.h): extended capabilities start at offset 0x100, each with
a 32-bit header (ID in bits 0-15, next offset in bits 20-31); ACS is ID 0x000d, its 16-bit control
register at +6, P2P Request Redirect bit 0x0004, P2P Completion Redirect bit 0x0008.

sysfs gives unprivileged readers only the first 64 bytes of `config` (drivers/pci/pci-sysfs.c), so
without root the ACS state is unknown, and the probe says so.
"""

from __future__ import annotations

import re
import struct

from .hostroot import HostReadError, HostRoot

PCI_DEVICES = "/sys/bus/pci/devices"
EXT_CAP_START = 0x100
ACS_ID = 0x000D
ACS_CTRL = 6
ACS_REDIRECT = 0x0004 | 0x0008
_BDF = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


def acs_redirect(config: bytes) -> bool | None:
    """True/False from a device's config space bytes; None when the extended space is not there."""
    if len(config) < EXT_CAP_START + 8:
        return None
    offset, seen = EXT_CAP_START, 0
    while offset and seen < 96:  # 4 KiB / 4-byte minimum: a loop in hostile bytes ends
        if offset + 8 > len(config):
            return False
        (header,) = struct.unpack_from("<I", config, offset)
        if header in (0, 0xFFFFFFFF):
            return False
        if header & 0xFFFF == ACS_ID:
            (ctrl,) = struct.unpack_from("<H", config, offset + ACS_CTRL)
            return bool(ctrl & ACS_REDIRECT)
        offset = (header >> 20) & 0xFFC
        seen += 1
    return False


def upstream_bridges(host: HostRoot, bdf: str) -> list[tuple[str, str]] | None:
    """(address, host path) of each PCI bridge above a device, from its real sysfs path
    (/sys/devices/pci0000:00/<root port>/<switch port>/<device>); None when the device is not visible."""
    try:
        real = host.resolve(f"{PCI_DEVICES}/{bdf.lower()}")
    except HostReadError:
        return None
    if real is None:
        return None
    parts = ("/" + real[len(host.root) :].lstrip("/")).rstrip("/").split("/")
    return [(p, "/".join(parts[: i + 1])) for i, p in enumerate(parts[:-1]) if _BDF.match(p)]


def scan_acs(host: HostRoot, endpoints: list[str], unknown: dict[str, str]) -> tuple[str, ...] | None:
    """Bridges above `endpoints` (GPU and NIC PCI addresses) with ACS redirect on; None if any is unreadable."""
    endpoints = [e for e in endpoints if e]
    if not endpoints:
        unknown["pci_acs_redirect"] = "no GPU or RDMA device PCI address is known"
        return None
    paths = [upstream_bridges(host, e) for e in endpoints]
    if any(p is None for p in paths):
        missing = [e for e, p in zip(endpoints, paths) if p is None]
        unknown["pci_acs_redirect"] = f"{PCI_DEVICES}/{missing[0]} is not visible under the probe root"
        return None
    bridges = list(dict.fromkeys(b for p in paths if p is not None for b in p))  # none is None: checked above
    on = []
    for bridge, path in bridges:
        try:
            config = host.read_bytes(f"{path}/config", 4096)
        except HostReadError as exc:
            unknown["pci_acs_redirect"] = str(exc)
            return None
        if config is None:
            unknown["pci_acs_redirect"] = f"{path}/config is absent"
            return None
        state = acs_redirect(config)
        if state is None:
            unknown["pci_acs_redirect"] = (
                f"{path}/config has {len(config)} bytes: sysfs shows the "
                "extended config space (where ACS is) only to root; run the probe as root"
            )
            return None
        if state:
            on.append(bridge)
    return tuple(on)
