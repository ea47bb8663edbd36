"""What a node's GPU model is: its class and what the class supports (gpu_classes rows, matched on the model name)."""

from __future__ import annotations

import re
from typing import Any

from ..matrix import Matrix
from ..model.node import Gpu, NodeGpu


def classify(name: str | None, matrix: Matrix) -> dict[str, Any] | None:
    """The first gpu_classes row whose pattern matches the model name (None: no name, or no row matches)."""
    if not name:
        return None
    for row in matrix.rows("gpu_classes"):
        if re.search(row["pattern"], name):
            return row
    return None


def class_of(gpu: Gpu, matrix: Matrix) -> tuple[str | None, dict[str, Any]]:
    """(class, matching row): a class stated in the node facts wins over the one the name implies."""
    row = classify(gpu.name, matrix) or {}
    return (gpu.gpu_class or row.get("gpu_class")), row


def without_gpudirect_rdma(gpu: Gpu, matrix: Matrix) -> bool | None:
    """True: a GPU whose class has no GPUDirect RDMA (nvidia_p2p_get_pages refuses it: consumer/GeForce), as the
    node facts state the class or the model name implies it; False: a class with it; None: neither says."""
    if gpu.gpu_class:
        return gpu.gpu_class == "consumer"
    support = (classify(gpu.name, matrix) or {}).get("gpudirect_rdma")
    return None if support is None else support == "unsupported"


def class_forward_compat(klass: str | None, matrix: Matrix) -> str | None:
    """forward_compat of a stated GPU class whose model name no row matches: the first row of that class."""
    if klass is None:
        return None
    row = next((r for r in matrix.rows("gpu_classes") if r.get("gpu_class") == klass), None)
    return row.get("forward_compat") if row else None


def compute_capability(name: str | None, matrix: Matrix) -> tuple[int, int, dict[str, Any]] | None:
    """(major, minor, row) of the first gpu_compute_capability row matching the model name, or None (no name, or a
    model the table does not list: unknown, never guessed from the generation)."""
    if not name:
        return None
    for row in matrix.rows("gpu_compute_capability"):
        if re.search(row["pattern"], name):
            major, _, minor = row["compute_capability"].partition(".")
            return int(major), int(minor or 0), row
    return None


def runs_on(major: int, minor: int, sass: tuple[int, ...], ptx: tuple[int, ...]) -> bool:
    """Can device code built for these SM architectures run on a GPU of compute capability major.minor?

    CUDA's binary compatibility (CUDA C++ Programming Guide, 'Binary Compatibility' and 'Application
    Compatibility'): a cubin for X.y runs on X.z with z >= y only; PTX for an architecture at or below the GPU's
    is compiled just in time by the driver. An architecture number is major * 10 + minor (sm_35, sm_90, sm_100).
    """
    if any(a // 10 == major and a % 10 <= minor for a in sass):
        return True
    return any((a // 10, a % 10) <= (major, minor) for a in ptx)


def device_id(gpu: Gpu) -> str | None:
    """The PCI device id as nvidia_gpu_chips keys it ("0x2330" -> "2330"), or None."""
    raw = (gpu.pci_device_id or "").strip().lower()
    raw = raw[2:] if raw.startswith("0x") else raw
    return raw if re.fullmatch(r"[0-9a-f]{4}", raw) else None


def _plain(name: str) -> str:
    """A model name as the driver, nvidia-smi and pci.ids spell it differently: case, "NVIDIA " prefix, - or space."""
    text = re.sub(r"[\s_-]+", " ", name.lower()).strip()
    return text.removeprefix("nvidia ").strip()


def _chips_by_plain_name(matrix: Matrix) -> dict[str, tuple[dict[str, Any], ...]]:
    """nvidia_gpu_chips rows by each of their names as _plain spells it, in table order."""
    found: dict[str, list[dict[str, Any]]] = {}
    for row in matrix.rows("nvidia_gpu_chips"):
        for plain in dict.fromkeys(_plain(n) for n in row["names"]):
            found.setdefault(plain, []).append(row)
    return {name: tuple(rows) for name, rows in found.items()}


def chip_of(gpu: Gpu, matrix: Matrix) -> dict[str, Any] | None:
    """The nvidia_gpu_chips row of the GPU's PCI device id (None: no id, or an id pci.ids gives no chip)."""
    key = device_id(gpu)
    return matrix.row("nvidia_gpu_chips", device_id=key) if key else None


def architecture(gpu: Gpu, matrix: Matrix) -> tuple[str | None, dict[str, Any] | None, str]:
    """(architecture, chip row or None, how it was found or why not). From the PCI device id (exact); else from the
    model name equal to a product name of the chip table (the driver's and pci.ids' names), when every such device
    has one architecture; else from the compute capability the model name implies (gpu_compute_capability)."""
    chip = chip_of(gpu, matrix)
    if chip is not None:
        return (
            chip["architecture"],
            chip,
            f"PCI device id {chip['device_id']} is a {chip['chip']} ({chip['architecture']})",
        )
    if device_id(gpu) is not None:
        why = f"PCI device id {device_id(gpu)} names no chip in nvidia_gpu_chips (pci.ids)"
    else:
        why = "the GPU's PCI device id is not in the node facts (/sys/bus/pci/devices/<bus>/device)"
    if not gpu.name:
        return None, None, why + ", nor its model name"
    rows = list(matrix.derived("gpu_chips_by_plain_name", _chips_by_plain_name).get(_plain(gpu.name), ()))
    archs = {r["architecture"] for r in rows}
    if len(archs) == 1:
        row = rows[0]
        return (
            row["architecture"],
            row,
            f"the model name '{gpu.name}' is a {row['chip']} ({row['architecture']}) in pci.ids",
        )
    cc = compute_capability(gpu.name, matrix)
    if cc is not None:
        text = f"{cc[0]}.{cc[1]}"
        for row in matrix.rows("nvidia_kmod_support"):
            if text in (row.get("compute_capabilities") or ()):
                return (
                    row["architecture"],
                    None,
                    f"the model name '{gpu.name}' has compute capability {text} ({row['architecture']})",
                )
    if len(archs) > 1:
        return (
            None,
            None,
            f"{why}, and the model name '{gpu.name}' names devices of several architectures ({', '.join(sorted(archs))})",
        )
    return (
        None,
        None,
        f"{why}, and the model name '{gpu.name}' is in neither nvidia_gpu_chips nor gpu_compute_capability",
    )


def kmod_support(gpu: Gpu, matrix: Matrix) -> tuple[dict[str, Any] | None, str]:
    """(nvidia_kmod_support row, how it was chosen or why there is none). A product row whose name pattern matches
    the model name (the driver's, else the chip table's) wins over the architecture's row."""
    arch, chip, how = architecture(gpu, matrix)
    names = [n for n in (gpu.name, *((chip or {}).get("names") or ())) if n]
    for row in matrix.rows("nvidia_kmod_support"):
        if row["kind"] == "product" and any(re.search(row["name_pattern"], n) for n in names):
            return row, f"the model name matches {row['key']}"
    if arch is None:
        return None, how
    arch_row = matrix.row("nvidia_kmod_support", kind="architecture", architecture=arch)
    if arch_row is None:
        return None, f"no nvidia_kmod_support row for the {arch} architecture"
    return arch_row, how


def gsp_on(node_gpu: NodeGpu) -> bool | None:
    """Whether the node's GPUs run on GSP firmware: a firmware version on any GPU's "GPU Firmware:" line (True),
    "N/A" on every GPU (False); the open kernel modules run only with GSP (NVIDIA's open-module README), so they
    decide it too. None: neither is known."""
    seen = [g.gsp_firmware for g in node_gpu.gpus if g.gsp_firmware]
    if any(v.upper() != GSP_OFF for v in seen):
        return True
    if node_gpu.kernel_module == "open":
        return True
    if seen and len(seen) == len(node_gpu.gpus):
        return False
    return None


GSP_OFF = "N/A"  # nv-procfs.c prints it when the GPU has no firmware version (GSP not used)
