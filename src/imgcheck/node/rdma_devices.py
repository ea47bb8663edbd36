"""RDMA devices, ports and uverbs ABI from sysfs (/sys/class/infiniband, /sys/class/infiniband_verbs).

Attribute formats are the kernel's (Documentation/ABI/stable/sysfs-class-infiniband):
ports/<p>/state "4: ACTIVE", phys_state "5: LinkUp", link_layer "InfiniBand"|"Ethernet",
rate "200 Gb/sec (4X HDR)".

The device's kernel driver is the name of the directory its `device/driver` link points at
(/sys/bus/pci/drivers/mlx5_core): mlx5_core, mlx4_core, efa, irdma, bnxt_en, hfi1, qib ... The port
directory has no MTU attribute (drivers/infiniband/core/sysfs.c exposes state, lid, lid_mask_count,
sm_lid, sm_sl, cap_mask, rate, phys_state, link_layer only; ibv_query_port is the only other way):
for RoCE the active MTU follows the net device's MTU the way ib_core's iboe_get_mtu()
(include/rdma/ib_addr.h) computes it, so it is derived from /sys/class/net/<ndev>/mtu; for
InfiniBand it is left unknown.

The GID table: ib_core creates ports/<p>/gids/<n>, gid_attrs/types/<n> and gid_attrs/ndevs/<n> for every
n below the port's gid_tbl_len (drivers/infiniband/core/sysfs.c), so the listing of gids/ is the table's
length. An unused entry reads as all zeros and its types/ndevs files fail with EINVAL; types are
"IB/RoCE v1" or "RoCE v2" (Documentation/ABI/stable/sysfs-class-infiniband).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.node import GidEntry, RdmaDevice, RdmaPort
from .gid_kind import gid_kind
from .hostroot import HostReadError, HostRoot

IB_CLASS = "/sys/class/infiniband"
VERBS_CLASS = "/sys/class/infiniband_verbs"
NET_CLASS = "/sys/class/net"
# iboe_get_mtu(): GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4 bytes come off the netdev MTU
IBOE_OVERHEAD = 96
IB_MTUS = (4096, 2048, 1024, 512, 256)
# Read at most this many GID entries per port: ConnectX RoCE ports have 256 (ibv_devinfo "gid_tbl_len: 256" in
# Mellanox/k8s-rdma-shared-dev-plugin#164), so this reads whole real tables while a driver reporting a huge
# table cannot make the probe read without bound. Entries past it are recorded as not read, never as absent.
GID_READ_CAP = 256
ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"


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
    pci_netdevs = _pci_netdevs(host, base)
    for port in sorted(port_names, key=lambda p: (not p.isdigit(), int(p) if p.isdigit() else 0, p)):
        pbase = f"{base}/ports/{port}"
        pkey = f"{key}.ports.{port}"
        link_layer = _value(host, f"{pbase}/link_layer", f"{pkey}.link_layer", unknown)
        number = int(port) if port.isdigit() else None
        netdev = _port_netdev(host, pbase, number, pci_netdevs)
        mtu = _int(_quiet(host, f"{NET_CLASS}/{netdev}/mtu")) if netdev else None
        table_len, read, gids = _gid_table(host, pbase, f"{pkey}.gids", unknown)
        ports.append(
            RdmaPort(
                port=number,
                state=_value(host, f"{pbase}/state", f"{pkey}.state", unknown),
                phys_state=_value(host, f"{pbase}/phys_state", f"{pkey}.phys_state", unknown),
                link_layer=link_layer,
                rate=_value(host, f"{pbase}/rate", f"{pkey}.rate", unknown),
                netdev=netdev,
                netdev_mtu=mtu,
                active_mtu=roce_active_mtu(mtu) if link_layer == "Ethernet" else None,
                gid_table_len=table_len,
                gids_read=read,
                gids=gids,
            )
        )
    layers = {p.link_layer for p in ports if p.link_layer}
    driver, pci = _driver(host, base, key, unknown)
    return RdmaDevice(
        name=name,
        hca_type=_value(host, f"{base}/hca_type", f"{key}.hca_type", unknown),
        fw_ver=_value(host, f"{base}/fw_ver", f"{key}.fw_ver", unknown),
        board_id=_value(host, f"{base}/board_id", f"{key}.board_id", unknown),
        link_layer=layers.pop() if len(layers) == 1 else None,
        ports=tuple(ports),
        uverbs_abi=abi,
        driver=driver,
        pci_address=pci,
    )


def roce_active_mtu(netdev_mtu: int | None) -> int | None:
    """The RoCE port MTU ib_core reports for a net device MTU (iboe_get_mtu); None below 256."""
    if netdev_mtu is None:
        return None
    usable = netdev_mtu - IBOE_OVERHEAD
    return next((m for m in IB_MTUS if usable >= m), None)


def _driver(host: HostRoot, base: str, key: str, unknown: dict[str, str]) -> tuple[str | None, str | None]:
    """(driver, PCI address) from the device link: <dev>/device -> .../0000:17:00.0, its driver -> .../mlx5_core."""
    try:
        device = host.resolve(f"{base}/device")
        driver = host.resolve(f"{base}/device/driver")
    except HostReadError as exc:
        unknown[f"{key}.driver"] = str(exc)
        return None, None
    pci = device.rstrip("/").rsplit("/", 1)[-1] if device else None
    if driver is None:
        unknown[f"{key}.driver"] = f"{base}/device/driver is absent (no driver bound, or sysfs not fully visible)"
        return None, pci
    return driver.rstrip("/").rsplit("/", 1)[-1], pci


def _gid_table(
    host: HostRoot, pbase: str, key: str, unknown: dict[str, str]
) -> tuple[int | None, int | None, tuple[GidEntry, ...] | None]:
    """(table length, entries read, the non-zero entries among them); all None when gids/ cannot be listed."""
    if not host.is_dir(f"{pbase}/gids"):
        unknown[key] = f"{pbase}/gids is absent (ib_core creates it for every port: sysfs not fully visible?)"
        return None, None, None
    try:
        names = host.listdir(f"{pbase}/gids")
    except HostReadError as exc:
        unknown[key] = str(exc)
        return None, None, None
    indexes = sorted(int(n) for n in names if n.isdigit())
    table_len = indexes[-1] + 1 if indexes else 0
    read = min(table_len, GID_READ_CAP)
    entries = []
    for index in indexes:
        if index >= read:
            break
        gid = _quiet(host, f"{pbase}/gids/{index}")
        if gid is None or gid == ZERO_GID:
            continue  # unused: its types/ndevs files are EINVAL, so they are not read
        entries.append(
            GidEntry(
                index=index,
                type=_quiet(host, f"{pbase}/gid_attrs/types/{index}"),
                netdev=_quiet(host, f"{pbase}/gid_attrs/ndevs/{index}"),
                gid=gid,
                kind=gid_kind(gid),
            )
        )
    return table_len, read, tuple(entries)


def _pci_netdevs(host: HostRoot, base: str) -> list[str]:
    try:
        return host.listdir(f"{base}/device/net")
    except HostReadError:
        return []


def _port_netdev(host: HostRoot, pbase: str, port: int | None, pci_netdevs: list[str]) -> str | None:
    """RoCE: the GID table's ndev; else the PCI function's net device whose dev_port is this port."""
    ndev = _quiet(host, f"{pbase}/gid_attrs/ndevs/0")
    if ndev:
        return ndev
    if len(pci_netdevs) == 1:
        return pci_netdevs[0]
    for name in pci_netdevs:  # dual-port functions: dev_port counts from 0 (Documentation/ABI/testing/sysfs-class-net)
        if port is not None and _int(_quiet(host, f"{NET_CLASS}/{name}/dev_port")) == port - 1:
            return name
    return None


def _quiet(host: HostRoot, path: str) -> str | None:
    """An optional attribute: unreadable (e.g. EINVAL from gid_attrs on an IB port) counts as absent."""
    try:
        return host.read_value(path) or None
    except HostReadError:
        return None


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
