"""Generate src/imgcheck/data/triage/kernel_rdma_messages.json: the kernel-log (dmesg / journalctl -k) formats of the
RDMA and GPU peer-memory drivers a job's memory registration goes through, read from their source at several
releases, with first/last release and site, and the cause class (kernel_rdma_classes.json) of the formats whose
condition the code around the site shows.

    python tools/host/gen_kernel_rdma_messages.py /work/.mirror   # KERNEL_MIRROR=/work/.mirror/ (the mirror root)

Trees (fetch github:knneth/mlnx-ofa_kernel, github:NVIDIA/open-gpu-kernel-modules, github:Mellanox/nv_peer_memory):
- MLNX_OFED's kernel tree (ib_core, ib_uverbs, peer memory, mlx5_ib, mlx5_core) at the newest release of each
  major.minor from 4.0 (one commit per release on the mirror's main branch); the inbox
  drivers print the same formats (OFED is a backport of drivers/infiniband and drivers/net/ethernet/mellanox), except
  OFED's own additions (peer_mem.c, `no mlock permission`), which is why the tree is named per row;
- nvidia-peermem and the NVIDIA kernel module's P2P / dma-buf files (NVRM:) at the newest release of each branch;
- the legacy nv_peer_mem module (nv_mem prefix) at its release tags.

A row is a format as the call site writes it (the driver's prefix macro adds `<device>: <func>:<line>:(pid N): ` or
`nvidia-peermem <func>:<line> ERROR `; the row's regex matches the format's own text so any prefix form reads).
Formats are mapped by the CLASSES table below, each entry saying what the code at the site shows; the rest are
recognised and left unmapped (debugfs / sysfs writes, teardown, informational lines).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "upstreams"))
from git_read import Mirror, strip_comments, version_key, write_generated  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/triage/kernel_rdma_messages.json"
USAGE = "usage: gen_kernel_rdma_messages.py <mirror root, e.g. /work/.mirror>"

# the ofa mirror's main branch holds one commit per MLNX_OFED release ("OFED 4.9-4.1.7.0"), 3.1 to 25.04
OFED_MAIN = "main"
_OFED_FIRST_MAJOR = 4
_CORE = "drivers/infiniband/core/"
_IB = "drivers/infiniband/hw/mlx5/"
_EN = "drivers/net/ethernet/mellanox/mlx5/core/"
# (mirror dir, owner/repo, tree, refs (None: newest tag of each NVIDIA branch; OFED_MAIN: see _refs), files)
TREES = (
    (
        "knneth+mlnx-ofa_kernel",
        "knneth/mlnx-ofa_kernel",
        "MLNX_OFED",
        OFED_MAIN,
        [
            _CORE + f
            for f in ("umem.c", "peer_mem.c", "umem_dmabuf.c", "umem_odp.c", "uverbs_cmd.c", "uverbs_main.c")
            + ("device.c", "verbs.c", "cache.c")
        ]
        + [_IB + f for f in ("mr.c", "umr.c", "odp.c", "main.c", "devx.c")]
        + [_EN + f for f in ("cmd.c", "health.c", "main.c", "fw.c", "fw_reset.c", "pagealloc.c", "events.c")]
        + [_EN + f for f in ("port.c", "en_main.c")],
    ),
    (
        "NVIDIA+open-gpu-kernel-modules",
        "NVIDIA/open-gpu-kernel-modules",
        "NVIDIA driver",
        None,
        [
            "kernel-open/nvidia-peermem/nvidia-peermem.c",
            "kernel-open/nvidia/nv-p2p.c",
            "kernel-open/nvidia/nv-dmabuf.c",
        ],
    ),
    (
        "Mellanox+nv_peer_memory",
        "Mellanox/nv_peer_memory",
        "nv_peer_mem",
        ("1.0-9", "1.1-0", "1.2-0", "1.3-0"),
        ["nv_peer_mem.c"],
    ),
)
_NV_BRANCHES = ("525", "535", "550", "560", "570", "580", "590", "595")

# the print calls of these drivers: the format is the first string-literal argument (after the device / level)
_CALLS = (
    "pr_err pr_warn pr_info pr_notice pr_crit pr_debug pr_err_ratelimited pr_warn_ratelimited pr_err_once "
    "pr_warn_once pr_info_ratelimited dev_err dev_warn dev_info dev_notice dev_crit dev_dbg dev_err_ratelimited "
    "dev_warn_ratelimited dev_info_ratelimited dev_err_once netdev_err netdev_warn netdev_info ibdev_err ibdev_warn "
    "ibdev_info ibdev_notice ibdev_dbg ibdev_err_ratelimited ibdev_warn_ratelimited mlx5_ib_err mlx5_ib_warn "
    "mlx5_ib_dbg mlx5_ib_info mlx5_core_err mlx5_core_warn mlx5_core_info mlx5_core_dbg mlx5_core_err_rl "
    "mlx5_core_warn_rl mlx5_core_info_rl mlx5_core_warn_once mlx5_core_err_once peer_err peer_warn nv_printf printk"
).split()
CALL = re.compile(r"\b(" + "|".join(_CALLS) + r')\s*\(\s*(?:[^;"]*?,\s*)?((?:"(?:[^"\\]|\\.)*"\s*(?:KERN_\w+\s*)?)+)')
PIECE = re.compile(r'"((?:[^"\\]|\\.)*)"')
SPEC = re.compile(r"%[-+ #0-9.*]*(?:hh|h|ll|l|L|z|j|t)?([diouxXcsp%])")
_DEBUG = {"pr_debug", "dev_dbg", "ibdev_dbg", "mlx5_ib_dbg", "mlx5_core_dbg"}
_MIN_FIXED = 14  # a mapped format with less fixed text than this ("err %d", "start") would claim unrelated lines
# a short format is mapped only with the prefix its print call adds (netdev_info: `mlx5_core <pci> <netdev>: `)
PREFIX = {"netdev_info": r"mlx5_core [0-9a-fA-F:.]+ \S+: ", "netdev_warn": r"mlx5_core [0-9a-fA-F:.]+ \S+: "}

# cause class -> (driver file pattern, format pattern, what the code at the sites shows)
CLASSES: tuple[tuple[str, str, str, str], ...] = (
    (
        "KERNEL-PEERMEM-INVALIDATED",
        r"nvidia-peermem\.c|nv_peer_mem\.c",
        r"^nv_get_p2p_free_callback -- |^nv_mem_dummy_callback -- ",
        "printed from the callback the NVIDIA driver runs when it revokes pinned GPU pages under a live "
        "registration (cudaFree / process exit / a driver-side teardown while the MR exists)",
    ),
    (
        "KERNEL-PEERMEM-INVALIDATED",
        r"umem_dmabuf\.c",
        r"^Invalidate callback should not be called when memory is pinned",
        "the dma-buf exporter (the GPU driver) moved/revoked a buffer that ib_core pinned for an MR",
    ),
    (
        "KERNEL-PEER-PIN-FAILED",
        r"nvidia-peermem\.c|nv_peer_mem\.c",
        r"nvidia_p2p_get_pages|nvidia_p2p_dma_map_pages|^nv_dma_map -- |incompatible dma mapping version"
        r"|nvidia_p2p_put_pages",
        "nv_mem_get_pages / nv_dma_map return the error of nvidia_p2p_get_pages / _dma_map_pages to ib_core, "
        "which fails the registration (ibv_reg_mr EINVAL / EFAULT)",
    ),
    (
        "KERNEL-PEER-PIN-FAILED",
        r"nv-p2p\.c",
        r"not aligned",
        "nv_p2p_get_pages refuses an address/length not aligned to the 64 KiB GPU page (-EINVAL)",
    ),
    (
        "KERNEL-PEERMEM-CLIENT",
        r"nvidia-peermem\.c|nv_peer_mem\.c|peer_mem\.c",
        r"registering (?:traditional |nc )?client|missing mandatory function|param value",
        "the peer-memory client was not registered with ib_core (module parameter out of range, or ib_core's "
        "peer API refused the client): GPU memory registration has no peer client",
    ),
    (
        "KERNEL-NVRM-DMABUF",
        r"nv-dmabuf\.c",
        r"dma-buf attach failed|failed to create dma-buf|dma-buf file descriptor|failed to get dma-buf"
        r"|Invalid dma-buf fd|allocate dma-buf private",
        "the NVIDIA driver refused to export or attach a dma-buf for GPU memory (ibv_reg_dmabuf_mr fails)",
    ),
    (
        "KERNEL-UMEM-NO-MLOCK",
        r"umem\.c",
        r"no mlock permission",
        "ib_umem_get returns -EPERM when can_do_mlock() is false: RLIMIT_MEMLOCK 0 and no CAP_IPC_LOCK",
    ),
    (
        "KERNEL-UMEM-PIN-FAILED",
        r"umem\.c|mr\.c",
        r"failed to get user pages|umem get failed|failed to map scatterlist|integer overflow, size="
        r"|unable to map DMA during XLT",
        "pinning or DMA-mapping the user pages of a registration failed (get_user_pages / dma_map_sg / the XLT "
        "update's DMA mapping)",
    ),
    (
        "KERNEL-MLX5-MKEY",
        r"mr\.c|umr\.c",
        r"create mkey failed|async reg mr failed|add keys command failed|command failed order|UMR post send failed"
        r"|reg umr failed|couldn't recover UMR|create mkey cache entry",
        "the firmware command creating or updating the memory key of a registration failed (the status is the "
        "errno; the mlx5_cmd_out_err line before it names the firmware syndrome)",
    ),
    (
        "KERNEL-MLX5-CMD-TIMEOUT",
        r"cmd\.c",
        r"timeout|timed out|No done completion|after timeout",
        "a firmware command did not complete in time (wait_func / cmd_work_handler): the HCA firmware is stuck "
        "or the device is in error",
    ),
    (
        "KERNEL-MLX5-HEALTH",
        r"health\.c|fw_reset\.c",
        r"Fatal error|health compromised|error state|health recovery failed|PCI channel offline|NIC IFC still"
        r"|recovery flow aborted",
        "mlx5_core's health poller found the device in a fatal state (firmware assert, missed health counter, "
        "PCI reads failing) and unloads or recovers it",
    ),
    (
        "KERNEL-MLX5-FW-PAGES",
        r"pagealloc\.c",
        r"failed to allocate page|failed dma mapping page|alloc time exceeded|exceeding the limit"
        r"|did not return all pages|failed reclaiming pages",
        "the firmware's request for host memory pages (MANAGE_PAGES) could not be met in time",
    ),
    (
        "KERNEL-LINK-DOWN",
        r"en_main\.c|events\.c",
        r"^Link down|Port module event\[error\]",
        "the port's link went down (mlx5e's carrier update) or its cable/transceiver module reported an error",
    ),
    (
        "KERNEL-MLX5-INIT",
        r"core/main\.c|core/fw\.c",
        r"aborting|(?:mlx5_load_one|mlx5_init_one|mlx5_pci_init|init hca|enable hca|set_hca_cap|handle_hca_cap\w*"
        r"|query hca|set issi|wait vital|mlx5_pci_enab\w+_device) failed|Failed to create EQs|failed to initialize eq"
        r"|Failed to alloc IRQs|too many outstanding|cmdif rev",
        "a step of mlx5_core's probe / load (mlx5_load_one, firmware handshake, capabilities) failed: the "
        "device's interfaces (ib, netdev) are not created",
    ),
)


def regex(fmt: str) -> str:
    out, pos = [], 0
    for m in SPEC.finditer(fmt):
        out.append(re.escape(fmt[pos : m.start()]))
        c = m.group(1)
        out.append(
            "%"
            if c == "%"
            else r"-?\d+"
            if c in "diu"
            else r"(?:0x)?[0-9a-fA-F]+"
            if c in "xXop"
            else r"\S"
            if c == "c"
            else ".*?"
        )
        pos = m.end()
    out.append(re.escape(fmt[pos:].rstrip()))
    return "".join(out).removeprefix(".*?")  # a leading %s (the function name) adds nothing to a search


def fixed_len(fmt: str) -> int:
    return len("".join(SPEC.split(fmt)).strip())


def formats(text: str) -> list[tuple[str, str, int]]:
    src = strip_comments(text)
    out = []
    for m in CALL.finditer(src):
        fmt = "".join(PIECE.findall(m.group(2))).encode().decode("unicode_escape", "replace").strip()
        fmt = fmt.removeprefix("\x01").lstrip("0123456789").strip()  # KERN_<level> spelled inside the literal
        if len(fmt) >= 6:
            out.append((m.group(1), fmt, src.count("\n", 0, m.start()) + 1))
    return out


def _refs(mirror: Mirror, refs: tuple[str, ...] | str | None) -> list[tuple[str, str]]:
    """(release label, git ref) pairs: the refs given, the newest tag of each NVIDIA branch, or (OFED_MAIN) the
    newest commit of each MLNX_OFED major.minor on the mirror's main branch, one commit per release ('OFED <ver>')."""
    if isinstance(refs, tuple):
        return [(r, r) for r in refs]
    if refs == OFED_MAIN:
        newest: dict[tuple[int, ...], tuple[str, str]] = {}
        for line in mirror.git("log", "--format=%H %s", "main").splitlines():
            sha, _, subject = line.partition(" ")
            m = re.fullmatch(r"OFED (\d+)\.(\d+)\S*", subject)
            if not m or int(m.group(1)) < _OFED_FIRST_MAJOR:
                continue
            label = subject.split()[1]
            key = (int(m.group(1)), int(m.group(2)))
            if key not in newest or version_key(label) > version_key(newest[key][0]):
                newest[key] = (label, sha)
        return [newest[k] for k in sorted(newest)]
    out = []
    for branch in _NV_BRANCHES:
        tags = [t for t in mirror.tags(rf"{branch}\.[0-9.]+")]
        if tags:
            tag = max(tags, key=version_key)
            out.append((tag, tag))
    return out


def classify(path: str, fmt: str) -> tuple[str, str] | None:
    for cls, where, what, why in CLASSES:
        if re.search(where, path) and re.search(what, fmt):
            return cls, why
    return None


def build(root: str) -> dict:
    rows: dict[tuple[str, str], dict] = {}
    scanned = []
    for mdir, repo, tree, refs, files in TREES:
        mirror = Mirror(f"{root.rstrip('/')}/{mdir}/repo")
        got = _refs(mirror, refs)
        scanned.append(f"{repo} {', '.join(label for label, _ in got)}")
        for label, ref in got:
            for path, text in mirror.show_many(ref, files).items():
                for call, fmt, line in formats(text):
                    key = (tree, fmt)
                    site = f"{repo}@{ref}:{path}:{line}"
                    row = rows.setdefault(
                        key,
                        {
                            "format": fmt,
                            "tree": tree,
                            "driver": path.rsplit("/", 2)[-2] if "/" in path else "nv_peer_mem",
                            "first": label,
                            "regex": regex(fmt),
                        },
                    )
                    # the newest release's call decides the level (a dbg line promoted to a warning later)
                    row["last"], row["site"], row["call"] = label, site, call
                    row["level"] = "debug" if call in _DEBUG else "error" if "err" in call else "warning"
    for (_tree, fmt), row in rows.items():
        path = row["site"].split(":", 2)[1]
        hit = classify(path, fmt)
        prefix = PREFIX.get(row["call"], "") if path.startswith(_EN) else ""
        if hit is None or fixed_len(fmt) + len(prefix) < _MIN_FIXED:
            continue
        row["class_reason"] = hit[1]
        row["signatures"] = [{"signature": hit[0], "regex": prefix + row["regex"]}]
    mapped = [r for r in rows.values() if "signatures" in r]
    by_class: dict[str, int] = {}
    for r in mapped:
        by_class[r["signatures"][0]["signature"]] = by_class.get(r["signatures"][0]["signature"], 0) + 1
    return {
        "source": "; ".join(scanned)
        + ": print-call formats of the files listed in tools/host/gen_kernel_rdma_messages.py",
        "confidence": "verified",
        "coverage": {"formats": len(rows), "mapped": len(mapped), "by_class": dict(sorted(by_class.items()))},
        "messages": [rows[k] for k in sorted(rows)],
    }


if __name__ == "__main__":
    sys.exit(write_generated(sys.argv, USAGE, build, OUT))
