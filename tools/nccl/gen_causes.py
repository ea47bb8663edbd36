"""Generate src/imgcheck/data/triage/nccl_causes.json: a cause class for every NCCL WARN format in nccl_messages.json,
read from the code at the site that prints it (the newest release's file:line): the file it is in, the call whose
failure it reports, and the NCCL_* settings read next to it.

Re-run after tools/nccl/gen_messages.py (same mirror):
    NCCL_MIRROR=/path/to/bare/nccl.git python tools/nccl/gen_causes.py

Each class is decided by the first rule in RULES that matches the site's path, the format or the code window (the
WARN line and the WINDOW lines above it). A format no rule claims gets no class (triage keeps its generic advice and
the catalog note); the count of those is written to `left_out`. The class texts (meaning, causes, next commands)
are in src/imgcheck/data/triage/nccl_cause_classes.json, with their sources.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import nccl_git  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "src/imgcheck/data/triage"
WINDOW = 8  # lines above the WARN searched for the failing call and the settings read

# (class, where the rule looks: "path" | "format" | "code", regex); first match wins, so specific rules come first
RULES: tuple[tuple[str, str, str], ...] = (
    ("", "format", r"Disabling other rings|Max rings reached|limiting to %d"),  # NCCL carries on: no class
    ("rank-mismatch", "format", r"(?i)message truncated|Mismatched NCCL version"),
    ("no-transport", "format", r"No transport found"),
    (
        "dev-shm",
        "format",
        r"shared memory (?:segment|file)|(?:munmap|unlink) (?:of )?shared memory|Could not map %s size",
    ),
    ("nvml", "format", r"libnvidia-ml"),
    ("collnet", "format", r"CollNet"),
    ("nvls-multicast", "format", r"MNNVL|NVLS"),
    (
        "host-alloc",
        "format",
        r"(?:malloc|calloc)\((?:size=)?%\w+(?: entries)?\) returned null|malloc of %ld bytes failed",
    ),
    (
        "invalid-usage",
        "format",
        r"(?i)invalid (?:rank|device|handle|key)|improper usage|Attempt to use communicator|"
        r"has already been destroyed|exceeds ndev",
    ),
    (
        "net-plugin-none",
        "format",
        r"Failed to initialize any NET plugin|Error: network %s not found|Network returned 0 device",
    ),
    ("net-plugin-load", "format", r"(?i)NET/Plugin|net plugin|Failed to load .*plugin|plugin.*(?:version|symbol)"),
    ("socket-no-interface", "format", r"(?i)no (?:socket )?interface found|no usable .*interface|IFNAME"),
    ("ib-no-device", "format", r"NET/IB ?: ?No device|No IB devices? found|IB device %s not found"),
    ("topo-graph-file", "format", r"(?i)XML (?:Import|Export) Channel|XML Graph|graph file|GRAPH_FILE"),
    ("topo-xml", "path", r"graph/xml\.(?:cc|h)$"),
    ("topo-xml", "format", r"XML|topology file|TOPO_FILE"),
    ("topo-sysfs-path", "format", r"(?i)real ?path|/sys/|sysfs"),
    (
        "topo-device-lookup",
        "format",
        r"(?i)Could not find (?:NET|NIC|GPU|real path)|not found in|id %\w+ not found|"
        r"Failed to find|reverse path|Dev(?:ice)? not found|busId|Could not find",
    ),
    ("cumem-vmm", "format", r"cuMem|CUMEM|cuMulticast|VMM|virtual memory management|MemManager|cumem"),
    (
        "cumem-vmm",
        "code",
        r"\bcuMem(?:Create|Map|SetAccess|AddressReserve|ExportToShareableHandle|"
        r"ImportFromShareableHandle|Release)\b",
    ),
    ("nvls-multicast", "path", r"transport/nvls\.cc$|src/mnnvl\.cc$"),
    ("dev-shm", "path", r"shmutils\.cc$|include/shm\.h$|transport/shm\.cc$"),
    ("gdrcopy", "path", r"gdrwrap\.(?:cc|h)$"),
    ("nvml", "path", r"nvmlwrap\.(?:cc|cu)$"),
    ("ib-async-event", "format", r"(?i)async (?:fatal )?event|fatal error \(detected in"),
    ("ib-verbs-call", "format", r"ibv_|mlx5dv_|NET/IB|NET/MLX5"),
    ("ib-verbs-call", "path", r"transport/net_ib|ibvwrap|mlx5dvwrap"),
    (
        "cuda-call",
        "format",
        r"(?i)Cuda failure|CUDA error|cuda(?:Malloc|Host|Ipc|Stream|Event|Launch)|"
        r"cudaMallocManaged|CUDA driver|cuInit|cuGetProcAddress",
    ),
    ("cuda-call", "path", r"misc/cudawrap\.cc$|include/checks\.h$"),
    ("p2p-ipc", "path", r"transport/p2p\.cc$|ipcsocket\.cc$"),
    ("socket-connect", "format", r"ncclOsSocket|connect to %s (?:failed|returned)"),
    ("socket-connect", "path", r"misc/socket\.cc$|include/socket\.h$|bootstrap\.cc$|transport/net_socket\.c[cu]$"),
    ("host-alloc", "format", r"(?i)Failed to (?:malloc|calloc|realloc|allocate)|posix_memalign|mmap"),
    ("host-alloc", "path", r"include/alloc\.h$"),
    ("collnet", "path", r"transport/coll_net\.cc$"),
    ("proxy-consequence", "path", r"src/proxy\.cc$"),
    ("invalid-usage", "path", r"misc/argcheck\.cc$|src/enqueue\.cc$|src/group\.cc$"),
    ("invalid-usage", "format", r"(?i)invalid (?:argument|usage|value|config|type|root|count|datatype|op)"),
    ("setting-value", "format", r"NCCL_[A-Z0-9_]+|(?i:environment variable|ignoring|unknown (?:value|option))"),
)
CALL = re.compile(
    r"\b((?:cu|cuda|ibv_|mlx5dv_|nvml|gdr_)\w+|socket|connect|bind|listen|accept|open|mmap|ftruncate"
    r"|posix_fallocate|shm_open|dlopen|getifaddrs)\s*\("
)
SETTING = re.compile(r'"(NCCL_[A-Z0-9_]+)"|NCCL_PARAM\(\s*(\w+)\s*,\s*"([A-Z0-9_]+)"|ncclParam(\w+)\(')


def classify(path: str, fmt: str, code: str) -> str | None:
    """The class of the first rule that matches; \"\" when that rule says the line needs none."""
    for cls, where, rx in RULES:
        text = path if where == "path" else fmt if where == "format" else code
        if re.search(rx, text):
            return cls
    return None


def main() -> None:
    messages = json.loads((DATA / "nccl_messages.json").read_text())
    classes = json.loads((DATA / "nccl_cause_classes.json").read_text())["classes"]
    tags = dict((v, t) for t, v in nccl_git.release_tags())
    texts: dict[tuple[str, str], list[str]] = {}
    rows, unclassified = [], 0
    for msg in messages["messages"]:
        if msg["level"] != "WARN":
            continue
        last, _hi, site = msg["sites"][-1][1], msg["sites"][-1][1], msg["sites"][-1][2]
        path, _, line = site.rpartition(":")
        key = (tags.get(last, ""), path)
        if key not in texts:
            try:
                texts[key] = nccl_git.show(*key).splitlines() if key[0] else []
            except Exception:  # noqa: BLE001 - a site the tag lacks (renamed file) reads as no code
                texts[key] = []
        lines = texts[key]
        n = int(line) if line.isdigit() else 0
        window = "\n".join(lines[max(0, n - 1 - WINDOW) : n])
        cls = classify(path, msg["format"], window)
        if not cls:  # None: no rule; "": a rule saying NCCL carries on, so no cause class
            unclassified += 1
            continue
        if cls not in classes:
            raise SystemExit(f"class {cls} has no entry in nccl_cause_classes.json")
        calls = sorted({m.group(1) for m in CALL.finditer(window)} - {"cudaGetErrorString", "cuGetErrorString"})
        settings = set()
        for m in SETTING.finditer(window):
            if m.group(1):
                settings.add(m.group(1))
            elif m.group(3):
                settings.add("NCCL_" + m.group(3))
        rows.append(
            {
                "format": msg["format"],
                "class": cls,
                "site": f"{site} (NCCL {last})",
                "calls": calls[:6],
                "settings": sorted(settings)[:6],
            }
        )
    out = {
        "source": "github:NVIDIA/nccl, the code at each WARN site of nccl_messages.json (newest release having it); "
        "generated by tools/nccl/gen_causes.py",
        "confidence": "verified",
        "left_out": {"no class (generic advice kept)": unclassified},
        "rows": rows,
    }
    (DATA / "nccl_causes.json").write_text(json.dumps(out, indent=1) + "\n")
    print(f"{len(rows)} WARN formats classed, {unclassified} left generic")


if __name__ == "__main__":
    main()
