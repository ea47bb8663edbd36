"""Generate src/imgcheck/data/triage/xid_messages.json: every Xid number the NVIDIA driver defines
(src/common/sdk/nvidia/inc/nverror.h of github:NVIDIA/open-gpu-kernel-modules, the newest release of each driver branch
515..595) with its mnemonic, the branches that define it, and a cause class for the dmesg line
`NVRM: Xid (PCI:dddd:bb:dd): N, ...`.

    python tools/upstreams/gen_xid_catalog.py /work/.mirror

The class follows the mnemonic and NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors: each Xid's description
and resolution bucket): an application fault or a process the driver stopped (restart the application; repeated on one
GPU, the GPU), GPU memory (ECC, row remapping, retirement: reset or drain), NVLink, the GSP firmware, and other GPU /
PCIe / firmware faults (reset the GPU, drain the node when it repeats). Xids 31, 79 and the ECC numbers keep their
hand-written signatures (GPU-XID-31, GPU-XID-79, GPU-XID-ECC); media engines (video decode/encode, JPEG, optical
flow), display, vGPU host errors, telemetry and reserved numbers are left out with their reason.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from git_read import Mirror, version_key, write_generated  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/triage/xid_messages.json"
USAGE = "usage: gen_xid_catalog.py MIRRORS_DIR (the fetch tool's /work/.mirror)"
HEADER = "src/common/sdk/nvidia/inc/nverror.h"
DEFINE = re.compile(r"^#define\s+(\w+)\s+\((\d+)\)", re.M)
HAND_WRITTEN = {31: "GPU-XID-31", 79: "GPU-XID-79", 48: "GPU-XID-ECC", 63: "GPU-XID-ECC", 64: "GPU-XID-ECC"}
HAND_WRITTEN.update({92: "GPU-XID-ECC", 94: "GPU-XID-ECC", 95: "GPU-XID-ECC"})
# (signature, regex over the mnemonic): first match wins
CLASSES: tuple[tuple[str, str], ...] = (
    (
        "XID-APP-FAULT",
        r"^ROBUST_CHANNEL_(?:GR_EXCEPTION|GR_ERROR_SW_NOTIFY|GR_CLASS_ERROR|RESETCHANNEL_VERIF_ERROR|PREEMPTIVE_REMOVAL|"
        r"RESETCHANNEL_KILL_PROCESS_SILENT|CE\d+_ERROR|FIFO_ERROR_IDLE_TIMEOUT|GR_FAULT_DURING_CTXSW)$",
    ),
    (
        "XID-GPU-MEMORY",
        r"^(?:FB_MEMORY_ERROR|LTC_ERROR|UNRECOVERABLE_ECC_ERROR_ESCAPE|RESOURCE_RETIREMENT_(?:EVENT|FAILURE)|"
        r"CHANNEL_RETIREMENT_(?:EVENT|FAILURE)|REDUCED_GPU_MEMORY_CAPACITY|UNCORRECTABLE_(?:DRAM|SRAM)_ERROR|"
        r"MEMORY_SUBSYSTEM_ERROR)$",
    ),
    ("XID-NVLINK", r"^(?:NVLINK_\w+|ALI_TRAINING_FAIL)$"),
    ("XID-GSP", r"^GSP_(?:RPC_TIMEOUT|ERROR)$"),
    (
        "XID-GPU-HARDWARE",
        r"^(?:ROBUST_CHANNEL_PBDMA_ERROR|PBDMA_PUSHBUFFER_CRC_MISMATCH|PMU_\w+|ROBUST_CHANNEL_SEC2_ERROR|"
        r"SEC2_HALT_ERROR|SEC_FAULT_ERROR|C2C_\w+|SPI_PMU_RPC_\w+|INFOROM_\w+|GPU_INIT_ERROR|GPU_FATAL_TIMEOUT|"
        r"PCIE_\w+|GPU_RECOVERY_ACTION_CHANGED|ROBUST_CHANNEL_CHI_NON_DATA_ERROR|ROBUST_CHANNEL_KEY_ROTATION_ERROR|"
        r"ROBUST_CHANNEL_FAST_PATH_ERROR|EXCESSIVE_SBE_INTERRUPTS)$",
    ),
)
LEFT_OUT: tuple[tuple[str, str], ...] = (
    (
        "media engines (video decode/encode, JPEG, optical flow, VIC, DLA, MPEG/VP/BSP/MSVLD/MSPDEC/MSPPP, SEC): not "
        "used by RDMA / collective jobs",
        r"NVDEC|NVENC|NVJPG|OFA|VIC|DLA|MPEG|_VP\d?_|_VP_|BSP|MSVLD|MSPDEC|MSPPP|ME_ERROR|ROBUST_CHANNEL_SEC_ERROR",
    ),
    ("display and VGA (VBLANK, missed notifier, VGA subsystem)", r"VBLANK|DISP_|VGA"),
    ("vGPU host start errors (a hypervisor setting, not a job's)", r"VGPU"),
    (
        "telemetry, logging, test, reserved and power-sink events (no failure)",
        r"FAKE|LOGGING|TELEMETRY|RESERVED|UNUSED|ISINK|LAST_ERROR",
    ),
)
PATTERN = r"NVRM: Xid \((?:PCI:)?[0-9A-Fa-f:.]+\): (?:{})\b"


def branch_tags(mirror: Mirror) -> list[str]:
    """The newest release of each driver branch (515, 520, ...)."""
    best: dict[str, str] = {}
    for t in mirror.tags(r"\d+\.\d+(?:\.\d+)?"):
        b = t.split(".")[0]
        if b not in best or version_key(t) > version_key(best[b]):
            best[b] = t
    return [best[b] for b in sorted(best, key=int)]


def build(mirrors: str) -> dict:
    mirror = Mirror(os.path.join(mirrors, "NVIDIA+open-gpu-kernel-modules", "repo"))
    tags = branch_tags(mirror)
    xids: dict[int, dict] = {}
    for tag in tags:
        text = mirror.show(tag, HEADER) or ""
        for name, num in DEFINE.findall(text):
            if name.endswith("_LAST_ERROR") or "RECOVERY_LEVEL" in name:
                continue  # an alias of the highest number, or a recovery level: not an Xid of its own
            n = int(num)
            row = xids.setdefault(n, {"xid": n, "names": [], "first": tag})
            row["last"] = tag
            if name not in row["names"]:
                row["names"].append(name)
    by_class: dict[str, list[int]] = {}
    left: dict[str, list[int]] = {}
    for n, row in sorted(xids.items()):
        name = row["names"][-1]
        # the newest branch's name decides (a few numbers were reassigned, e.g. 139 FAST_PATH -> OFA1)
        sig = HAND_WRITTEN.get(n) or next((s for s, rx in CLASSES if re.search(rx, name)), None)
        if sig is None:
            why = next((w for w, rx in LEFT_OUT if re.search(rx, name)), "no class: read the Xid catalog")
            left.setdefault(why, []).append(n)
            continue
        row["class"] = sig
        if sig not in HAND_WRITTEN.values():
            by_class.setdefault(sig, []).append(n)
    rows = []
    for n, row in sorted(xids.items()):
        sig = row.get("class")
        if sig is None:
            continue
        if sig in HAND_WRITTEN.values():
            # the hand-written signature gets the line as older drivers print it too ("Xid (0000:01:00): 31")
            numbers = "|".join(str(x) for x, s in sorted(HAND_WRITTEN.items(), reverse=True) if s == sig)
        else:
            numbers = "|".join(str(x) for x in sorted(by_class[sig], reverse=True))
        rows.append(
            {
                "xid": n,
                "format": f"NVRM: Xid (PCI:%s): {n}, %s",
                "names": row["names"],
                "first": row["first"],
                "last": row["last"],
                "site": f"NVIDIA/open-gpu-kernel-modules@{row['last']}:{HEADER}",
                "signatures": [{"signature": sig, "regex": PATTERN.format(numbers)}],
            }
        )
    return {
        "source": f"NVIDIA/open-gpu-kernel-modules {tags[0]}..{tags[-1]} (newest release of each branch) {HEADER}; "
        "classes after https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html; generated by "
        "tools/upstreams/gen_xid_catalog.py",
        "confidence": "verified",
        "releases": tags,
        "hand_written": {str(k): v for k, v in sorted(HAND_WRITTEN.items())},
        "coverage": {
            "formats": len(xids),
            "mapped": len(rows),
            "left_out": sum(len(v) for v in left.values()),
        },
        "left_out": {k: sorted(v) for k, v in sorted(left.items())},
        "messages": rows,
    }


if __name__ == "__main__":
    raise SystemExit(write_generated(sys.argv, USAGE, build, OUT))
