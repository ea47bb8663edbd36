"""Kernel build options and boot parameters that decide RDMA, DMA-BUF and IOMMU behaviour.

The build config is read from /boot/config-<release> (what Debian/Ubuntu/RHEL kernel packages install)
or, failing that, /proc/config.gz (the running kernel's own copy, present with CONFIG_IKCONFIG_PROC).
Both use Kconfig's .config syntax: `CONFIG_X=y|m|"string"|number` and `# CONFIG_X is not set`.
Only the options below are kept: the facts file stays small and says what the rules look at.
"""

from __future__ import annotations

import gzip
import re
import zlib
from dataclasses import dataclass

from ..model.node import CMDLINE_PARAMS, kept_cmdline
from .hostroot import HostReadError, HostRoot

CONFIG_GZ = "/proc/config.gz"
CMDLINE = "/proc/cmdline"

# Why each is kept (the rules and the README say which one decides what):
RELEVANT_CONFIG = (
    "CONFIG_DMA_SHARED_BUFFER",  # DMA-BUF core: ibv_reg_dmabuf_mr needs exporters and importers
    "CONFIG_PCI_P2PDMA",  # PCI peer-to-peer DMA between a GPU BAR and a NIC
    "CONFIG_DMABUF_MOVE_NOTIFY",  # dynamic (movable) dma-buf importers, which ib_umem_dmabuf is
    "CONFIG_INFINIBAND",
    "CONFIG_INFINIBAND_USER_MEM",  # user memory registration (ib_umem), incl. ib_umem_dmabuf
    "CONFIG_INFINIBAND_USER_ACCESS",
    "CONFIG_INFINIBAND_ON_DEMAND_PAGING",
    "CONFIG_MLX5_INFINIBAND",
    "CONFIG_ZONE_DEVICE",
    "CONFIG_MODVERSIONS",  # symbol CRCs are checked on module load ("disagrees about version of symbol")
    "CONFIG_IOMMU_SUPPORT",
    "CONFIG_INTEL_IOMMU",
    "CONFIG_INTEL_IOMMU_DEFAULT_ON",
    "CONFIG_AMD_IOMMU",
    "CONFIG_IOMMU_DEFAULT_PASSTHROUGH",
    "CONFIG_IOMMU_DEFAULT_DMA_LAZY",
    "CONFIG_IOMMU_DEFAULT_DMA_STRICT",
    "CONFIG_TRANSPARENT_HUGEPAGE",
)
RELEVANT_PARAMS = CMDLINE_PARAMS  # the boot parameters the rules read; only these are kept of /proc/cmdline

_SET = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")
_UNSET = re.compile(r"^# (CONFIG_[A-Za-z0-9_]+) is not set$")


@dataclass(frozen=True)
class KernelConfig:
    config: dict[str, str] | None
    source: str | None
    cmdline: str | None
    params: dict[str, str] | None


def parse_config(text: str) -> dict[str, str]:
    """Every option the text sets or explicitly leaves unset ('n'); values unquoted."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        match = _SET.match(line)
        if match:
            values[match.group(1)] = match.group(2).strip().strip('"')
            continue
        match = _UNSET.match(line)
        if match:
            values[match.group(1)] = "n"
    return values


def relevant(values: dict[str, str]) -> dict[str, str]:
    """The options the rules read. Kconfig omits an option whose dependencies are off: that is 'n' too."""
    return {name: values.get(name, "n") for name in RELEVANT_CONFIG}


def parse_cmdline(text: str) -> dict[str, str]:
    """The relevant parameters of a kernel command line; a bare flag maps to ''. The last one wins, as
    the kernel's own parser applies them in order."""
    params: dict[str, str] = {}
    for word in text.split():
        name, _, value = word.partition("=")
        if name in RELEVANT_PARAMS:
            params[name] = value
    return params


def read_kernel_config(
    host: HostRoot, release: str | None, unknown: dict[str, str], notes: dict[str, str]
) -> KernelConfig:
    config = source = None
    reasons = []
    if release:
        path = f"/boot/config-{release}"
        try:
            text = host.read_text(path, 4 * 1024 * 1024)
        except HostReadError as exc:
            text = None
            reasons.append(str(exc))
        if text is not None:
            config, source = relevant(parse_config(text)), path
        else:
            reasons.append(f"no {path}")
    else:
        reasons.append("the kernel release is unknown, so /boot/config-<release> cannot be named")
    if config is None:
        try:
            data = host.read_bytes(CONFIG_GZ, 4 * 1024 * 1024)
        except HostReadError as exc:
            data = None
            reasons.append(str(exc))
        if data is not None:
            try:
                config, source = relevant(parse_config(gzip.decompress(data).decode("utf-8", "replace"))), CONFIG_GZ
            except (OSError, EOFError, zlib.error):
                reasons.append(f"{CONFIG_GZ} is not valid gzip")
        else:
            reasons.append(f"no {CONFIG_GZ} (the kernel lacks CONFIG_IKCONFIG_PROC or /proc is not mounted)")
    if config is None:
        unknown["kernel.config"] = "; ".join(reasons)
    else:
        notes["kernel.config"] = (
            f"read from {source}; an option the file does not mention is 'n' "
            "(Kconfig omits options whose dependencies are off)"
        )
    cmdline = params = None
    try:
        cmdline = host.read_value(CMDLINE)
    except HostReadError as exc:
        unknown["kernel.cmdline"] = str(exc)
    if cmdline is None and "kernel.cmdline" not in unknown:
        unknown["kernel.cmdline"] = f"{CMDLINE} is not visible under the probe root"
    if cmdline is not None:
        params = parse_cmdline(cmdline)
        cmdline, dropped = kept_cmdline(cmdline)
        notes["kernel.cmdline"] = (
            f"only the boot parameters imgcheck reads ({', '.join(RELEVANT_PARAMS)}) are kept from {CMDLINE}; "
            f"{dropped} other word(s) left out"
        )
    return KernelConfig(config, source, cmdline, params)
