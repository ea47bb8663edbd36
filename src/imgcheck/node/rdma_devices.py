"""RDMA devices, ports and uverbs ABI from sysfs (/sys/class/infiniband, /sys/class/infiniband_verbs).

Attribute formats are the kernel's (Documentation/ABI/stable/sysfs-class-infiniband):
ports/<p>/state "4: ACTIVE", phys_state "5: LinkUp", link_layer "InfiniBand"|"Ethernet",
rate "200 Gb/sec (4X HDR)".
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.node import RdmaDevice, RdmaPort
from .hostroot import HostReadError, HostRoot

IB_CLASS = "/sys/class/infiniband"
VERBS_CLASS = "/sys/class/infiniband_verbs"


@dataclass(frozen=True)
class DeviceScan:
    devices: tuple[RdmaDevice, ...]
    uverbs_abi: int | None
    visible: bool  # /sys/class is visible, so "no devices" is a fact


def scan_devices(host: HostRoot, unknown: dict[str, str]) -> DeviceScan:
    if not host.is_dir("/sys/class"):
        unknown["rdma.devices"] = "/sys/class is not visible under the probe root (is /sys mounted?)"
        unknown["rdma.uverbs_abi"] = unknown["rdma.devices"]
        return DeviceScan((), None, False)
    per_device_abi = _uverbs_abis(host, unknown)
    abi = _int(_value(host, f"{VERBS_CLASS}/abi_version", "rdma.uverbs_abi", unknown))
    if abi is None and "rdma.uverbs_abi" not in unknown:
        unknown["rdma.uverbs_abi"] = f"{VERBS_CLASS}/abi_version is absent (ib_uverbs not loaded)"
    devices = []
    try:
        names = host.listdir(IB_CLASS)
    except HostReadError as exc:
        unknown["rdma.devices"] = str(exc)
        names = []
    for name in names:
        devices.append(_device(host, name, per_device_abi.get(name), unknown))
    return DeviceScan(tuple(devices), abi, True)


def _device(host: HostRoot, name: str, abi: int | None, unknown: dict[str, str]) -> RdmaDevice:
    base = f"{IB_CLASS}/{name}"
    key = f"rdma.devices.{name}"
    ports = []
    try:
        port_names = host.listdir(f"{base}/ports")
    except HostReadError as exc:
        unknown[f"{key}.ports"] = str(exc)
        port_names = []
    for port in sorted(port_names, key=lambda p: (not p.isdigit(), int(p) if p.isdigit() else 0, p)):
        pbase = f"{base}/ports/{port}"
        pkey = f"{key}.ports.{port}"
        ports.append(RdmaPort(
            port=int(port) if port.isdigit() else None,
            state=_value(host, f"{pbase}/state", f"{pkey}.state", unknown),
            phys_state=_value(host, f"{pbase}/phys_state", f"{pkey}.phys_state", unknown),
            link_layer=_value(host, f"{pbase}/link_layer", f"{pkey}.link_layer", unknown),
            rate=_value(host, f"{pbase}/rate", f"{pkey}.rate", unknown),
        ))
    layers = {p.link_layer for p in ports if p.link_layer}
    return RdmaDevice(
        name=name,
        hca_type=_value(host, f"{base}/hca_type", f"{key}.hca_type", unknown),
        fw_ver=_value(host, f"{base}/fw_ver", f"{key}.fw_ver", unknown),
        board_id=_value(host, f"{base}/board_id", f"{key}.board_id", unknown),
        link_layer=layers.pop() if len(layers) == 1 else None,
        ports=tuple(ports),
        uverbs_abi=abi,
    )


def _uverbs_abis(host: HostRoot, unknown: dict[str, str]) -> dict[str, int | None]:
    """ibdev name -> abi_version of its uverbsN char device."""
    result: dict[str, int | None] = {}
    try:
        entries = host.listdir(VERBS_CLASS)
    except HostReadError as exc:
        unknown["rdma.uverbs_abi"] = str(exc)
        return result
    for entry in entries:
        if not entry.startswith("uverbs"):
            continue
        try:
            ibdev = host.read_value(f"{VERBS_CLASS}/{entry}/ibdev")
            abi = host.read_value(f"{VERBS_CLASS}/{entry}/abi_version")
        except HostReadError:
            continue
        if ibdev:
            result[ibdev] = _int(abi)
    return result


def _value(host: HostRoot, path: str, key: str, unknown: dict[str, str]) -> str | None:
    try:
        value = host.read_value(path)
    except HostReadError as exc:
        unknown[key] = str(exc)
        return None
    return value or None


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
