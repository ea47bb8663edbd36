"""Which libibverbs provider a node's RDMA device needs: by its kernel driver, else its device name.

libibverbs binds a provider to a device by the kernel driver behind it (rdma-core libibverbs/init.c
matches VERBS_DRIVER_ID / modalias per provider), so the driver is the fact; the device name the
kernel driver gives (mlx5_0, efa_0, irdma0 ...) is the fallback. The HCA type ("MT4099" for a
ConnectX-3, mlx4) never decides it: every Mellanox part starts with MT.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..model.node import RdmaDevice

# kernel driver (the sysfs device/driver link's name) -> rdma-core provider
_BY_DRIVER = {
    "mlx5_core": "mlx5",
    "mlx5_ib": "mlx5",
    "mlx4_core": "mlx4",
    "mlx4_ib": "mlx4",
    "efa": "efa",
    "irdma": "irdma",
    "i40iw": "i40iw",
    "bnxt_en": "bnxt_re",
    "bnxt_re": "bnxt_re",
    "hfi1": "hfi1",
    "ib_qib": "qib",
    "qib": "qib",
    "rdma_rxe": "rxe",
    "siw": "siw",
    "qedr": "qedr",
    "qede": "qedr",
    "vmw_pvrdma": "vmw_pvrdma",
    "hns_roce_hw_v2": "hns",
    "erdma": "erdma",
    "mana_ib": "mana",
}
# ibdev name prefix the kernel driver assigns -> provider (longest prefix first)
_BY_NAME = (
    ("mlx5_", "mlx5"),
    ("mlx4_", "mlx4"),
    ("efa_", "efa"),
    ("irdma", "irdma"),
    ("i40iw", "i40iw"),
    ("bnxt_re", "bnxt_re"),
    ("hfi1_", "hfi1"),
    ("qib", "qib"),
    ("rxe", "rxe"),
    ("siw", "siw"),
    ("qedr", "qedr"),
    ("hns_", "hns"),
    ("erdma_", "erdma"),
    ("mana_", "mana"),
)


def provider_of(device: RdmaDevice) -> str | None:
    """The provider name for an RdmaDevice, or None when neither its driver nor its name says."""
    driver = getattr(device, "driver", None)  # added to RdmaDevice by the node-facts work
    if driver:
        key = driver.rsplit("/", 1)[-1]
        if key in _BY_DRIVER:
            return _BY_DRIVER[key]
    name = device.name or ""
    for prefix, provider in _BY_NAME:
        if name.startswith(prefix):
            return provider
    return None


def providers_of(devices: Iterable[RdmaDevice]) -> set[str] | None:
    """Providers the node's devices need; None if any device's provider cannot be told."""
    found = [provider_of(d) for d in devices]
    named = [p for p in found if p is not None]
    if not found or len(named) < len(found):
        return None
    return set(named)
