"""The IOMMU domain each GPU and RDMA NIC is in, from sysfs (Documentation/ABI/testing/sysfs-kernel-iommu_groups).

/sys/bus/pci/devices/<bdf>/iommu_group links to /sys/kernel/iommu_groups/<n>, whose `type` says how
DMA from the group is handled: `identity` (passthrough: bus address = physical address), `DMA` /
`DMA-FQ` (translated through IOMMU page tables), `blocked`, `unmanaged` (owned by VFIO, e.g. a VM).
A device without the link has no IOMMU translation at all ("none"). The `type` file appeared with
Linux 5.11; on older kernels the type is unknown.
"""

from __future__ import annotations

from .hostroot import HostReadError, HostRoot

PCI_DEVICES = "/sys/bus/pci/devices"


def scan_iommu(host: HostRoot, endpoints: list[str], unknown: dict[str, str]) -> dict[str, str] | None:
    endpoints = list(dict.fromkeys(e.lower() for e in endpoints if e))
    if not endpoints:
        unknown["iommu_domains"] = "no GPU or RDMA device PCI address is known"
        return None
    domains: dict[str, str] = {}
    for bdf in endpoints:
        base = f"{PCI_DEVICES}/{bdf}"
        try:
            if not host.exists(base):
                unknown["iommu_domains"] = f"{base} is not visible under the probe root"
                return None
            group = host.resolve(f"{base}/iommu_group")
            if group is None:
                domains[bdf] = "none"
                continue
            kind = host.read_value(f"{base}/iommu_group/type")
        except HostReadError as exc:
            unknown["iommu_domains"] = str(exc)
            return None
        if not kind:
            unknown["iommu_domains"] = (
                f"{base}/iommu_group/type is absent (kernels before 5.11 do not say "
                "whether the group is translated or passthrough)"
            )
            return None
        domains[bdf] = kind
    return domains
