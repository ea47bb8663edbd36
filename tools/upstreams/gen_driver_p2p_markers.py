"""Generate compat_matrix/catalogs/nvidia_p2p_code_markers.json: in which releases of the NVIDIA GPU kernel module
(open flavour) each peer-memory / dma-buf / P2P code change is present, from every release tag of
github:NVIDIA/open-gpu-kernel-modules.

    python tools/upstreams/gen_driver_p2p_markers.py /work/.mirror/NVIDIA+open-gpu-kernel-modules/repo

NVIDIA's data-center release notes are not in a repository, and the open modules' commits from 545 on carry only the
release number, so what changed in nvidia-peermem, nv-p2p.c and nv-dmabuf.c between releases is read from the code
itself. Every consecutive pair of release tags was diffed over those files (the `changes` coverage lists the releases
whose diff is not empty); the changes that alter what a GPUDirect RDMA or dma-buf consumer sees were read and each is
named here by a string only its code carries (MARKERS). Each row is one marker over a range of releases in version
order where it is present or absent, cited at the range's first release; the Vulkan developer betas (550.40.x,
580.94.x) are tags too, so a marker can stop and start again. nvidia_driver_known_issues rows that cite a marker
(`marker`) take their affected or fixed release from here (tests/test_engine_node_driver.py checks it). The
proprietary flavour's source is not public: nothing here describes it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from git_read import Mirror, version_key, write_generated  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/compat_matrix/catalogs/nvidia_p2p_code_markers.json"
REPO = "NVIDIA/open-gpu-kernel-modules"
PEERMEM = "kernel-open/nvidia-peermem/nvidia-peermem.c"
P2P_C = "kernel-open/nvidia/nv-p2p.c"
DMABUF = "kernel-open/nvidia/nv-dmabuf.c"
FILES = [PEERMEM, P2P_C, DMABUF, "kernel-open/common/inc/nv-p2p.h"]
FIRST_BRANCH = 535

# marker -> (file, a string only the change's code carries, what the change does)
MARKERS: dict[str, tuple[str, str, str]] = {
    "p2p_get_pages_rejects_unaligned": (
        P2P_C,
        "address or length are not aligned",
        "nvidia_p2p_get_pages(_persistent) returns -EINVAL, logging 'NVRM: Invalid argument in nv_p2p_get_pages, "
        "address or length are not aligned', for an address or length not a multiple of 64 KiB (earlier releases "
        "rounded the length up)",
    ),
    "peermem_invalid_context_guard": (
        PEERMEM,
        "NV_MEM_CONTEXT_MAGIC",
        "nvidia-peermem checks its per-registration context with magic words before the free callback uses it, "
        "logging 'detected invalid context, skipping further processing' instead of using a context already freed",
    ),
    "peermem_persistent_api_param": (
        PEERMEM,
        "persistent_api_support",
        "nvidia-peermem's persistent_api_support parameter: 1 (default) registers with the persistent "
        "nvidia_p2p_get_pages API, 0 the legacy one",
    ),
    "dmabuf_sg_split_at_max_segment": (
        DMABUF,
        "nv_dma_buf_get_sg_count",
        "a dma-buf export on a coherent (C2C) system splits each memory range into scatterlist entries no longer "
        "than the importing device's DMA max segment size; before, one range was one entry of any length",
    ),
    "dmabuf_force_pcie_mapping": (
        DMABUF,
        "MAPPING_TYPE_FORCE_PCIE",
        "dma-buf export can be asked to map over PCIe (BAR1) on a coherent system, refused with 'NVRM: topology not "
        "supported for mapping type FORCE_PCIE' when the importer is not on a valid direct-PCIe topology",
    ),
    "dmabuf_cdmm_pagemap_reference": (
        DMABUF,
        "nv_dma_get_dev_pagemap",
        "a dma-buf mapping in coherent driver-managed memory (CDMM) mode holds a dev_pagemap reference while mapped, "
        "failing with 'NVRM: Failed to get a reference on dev_pagemap in CDMM(driver) mode' when it cannot",
    ),
}


def _diff_lines(mirror: Mirror, old: str, new: str) -> int:
    out = mirror.git("diff", "--numstat", "-w", old, new, "--", *FILES)
    return sum(int(a) + int(b) for a, b, *_ in (line.split("\t") for line in out.splitlines()) if a.isdigit())


def build(mirror_dir: str) -> dict[str, Any]:
    mirror = Mirror(mirror_dir)
    tags = [t for t in sorted(mirror.tags(r"\d+\.\d+(?:\.\d+)?"), key=version_key) if version_key(t)[0] >= FIRST_BRANCH]
    rows: list[dict[str, Any]] = []
    last: dict[str, dict[str, Any]] = {}
    changed: list[str] = []
    for i, tag in enumerate(tags):
        files = mirror.show_many(tag, [PEERMEM, P2P_C, DMABUF])
        if i and _diff_lines(mirror, tags[i - 1], tag):
            changed.append(tag)
        for marker, (path, needle, what) in MARKERS.items():
            state = "present" if needle in files.get(path, "") else "absent"
            row = last.get(marker)
            if row is not None and row["state"] == state:
                row["last_release"] = tag
                continue
            row = {
                "key": f"{marker}:{tag}",
                "marker": marker,
                "state": state,
                "first_release": tag,
                "last_release": tag,
                "file": path,
                "change": what,
                "source": f"{REPO}@{tag}:{path}",
                "confidence": "verified",
            }
            rows.append(row)
            last[marker] = row
    return {
        "table": "nvidia_p2p_code_markers",
        "description": (
            "Peer-memory, dma-buf and P2P code changes of the open NVIDIA GPU kernel module (nvidia-peermem.c, "
            "nv-p2p.c, nv-dmabuf.c), each named by a marker string only its code carries, as ranges of releases in "
            "version order where the change is present or absent (`state`; the Vulkan developer betas 550.40.x and 580.94.x "
            "are releases too, so a marker can stop and start again). Cited by nvidia_driver_known_issues rows "
            "(`marker`) for their affected or fixed releases. Generated by tools/upstreams/gen_driver_p2p_markers.py "
            "from every release tag from branch 535 on; edit the generator, not this file."
        ),
        "coverage": {
            "releases": len(tags),
            "first": tags[0],
            "last": tags[-1],
            "releases_whose_p2p_code_changed": changed,
            "markers": len(MARKERS),
            "left_out": (
                "changes that only rename, relicense, reformat or move locking inside dma-buf handle duplication "
                "(580.94.x / 580.119.02 / 580.126.09) were read and not given a marker: they change nothing a consumer "
                "sees that the code states; the proprietary flavour's source is not public"
            ),
        },
        "rows": rows,
    }


def main(argv: list[str]) -> int:
    return write_generated(argv, __doc__, build, OUT)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
