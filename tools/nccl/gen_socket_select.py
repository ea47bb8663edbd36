"""Generate compat_matrix/catalogs/nccl_socket_select.json: how each NCCL release (2.3.5 on) picks the network
interfaces its bootstrap and socket transport use, read from ncclFindInterfaces in every release tag.

Re-run after fetching a newer snapshot of github:NVIDIA/nccl (docs/knowledge-coverage.md says how):
    NCCL_MIRROR=/path/to/bare/nccl.git python tools/nccl/gen_socket_select.py

What is read, per tag (src/include/socket.h before 2.12, src/misc/socket.cc after, src/os/linux.cc from 2.29):
  - the selector (ncclFindInterfaces / findInterfaces(char* ifNames, ...)): the minimum NCCL_SOCKET_IFNAME length
    it honours (`strlen(env) > N`), and, when the variable is unset, the prefix lists it tries in order ("ib",
    the NCCL_COMM_ID subnet match, "^docker,lo", "docker", "lo", ...), each tried only when the ones before found
    nothing;
  - the per-list scan (findInterfaces / ncclOsFindInterfaces(const char* prefixList, ...)): whether it skips
    interfaces without IFF_RUNNING, skips IPv6 loopback, skips IPv6 link-local, and knows the '=' exact form;
  - whether NCCL_SOCKET_FAMILY is read.
Consecutive releases that behave the same are one row; its source names the first tag's file and lines.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import nccl_git  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/compat_matrix/catalogs/nccl_socket_select.json"
CANDIDATES = (
    "src/include/socket.h",
    "src/misc/socket.cc",
    "src/os/linux.cc",
    "src/include/utils.h",
    "src/misc/utils.cc",
)
SELECTOR = re.compile(r"^(?:static\s+)?(?:int|ncclResult_t)\s+(?:nccl)?[Ff]indInterfaces\(char\s*\*\s*ifNames", re.M)
SCANNER = re.compile(
    r"^(?:static\s+)?(?:int|ncclResult_t)\s+(?:ncclOs|nccl)?[Ff]indInterfaces\(const char\s*\*\s*prefixList", re.M
)
CALL = re.compile(r'(?:ncclOs)?[Ff]indInterfaces\("([^"]*)"|(\w*[Ff]indInterfaceMatchSubnet)\(')
MIN_LEN = re.compile(r"strlen\(env\)\s*>\s*(\d+)")


def body(text: str, start: int) -> tuple[str, int, int]:
    """The function starting at `start`: its text and first/last line numbers (1-based)."""
    open_at = text.index("{", start)
    depth, i = 0, open_at
    while True:
        c = text[i]
        depth += c == "{"
        depth -= c == "}"
        if depth == 0:
            break
        i += 1
    return text[start : i + 1], text.count("\n", 0, start) + 1, text.count("\n", 0, i) + 1


def definition(pattern: re.Pattern[str], text: str) -> int | None:
    """Where the function's definition starts (a declaration, ending in ';' before any '{', is skipped)."""
    for m in pattern.finditer(text):
        brace, semi = text.find("{", m.end()), text.find(";", m.end())
        if brace != -1 and (semi == -1 or brace < semi):
            return m.start()
    return None


def read_tag(tag: str) -> dict | None:
    files = {}
    for path in CANDIDATES:
        try:
            files[path] = nccl_git.show(tag, path)
        except Exception:  # noqa: BLE001 - the file does not exist at this tag
            continue
    sel = scan = None
    for path, text in files.items():
        m = definition(SELECTOR, text)
        if m is not None and sel is None:
            sel = (path, *body(text, m))
        m = definition(SCANNER, text)
        if m is not None and scan is None:
            scan = (path, *body(text, m))
    if sel is None or scan is None:
        return None
    sel_text = sel[1]
    unset = sel_text[sel_text.index("else") :] if "else" in sel_text else ""
    order: list[str] = []
    for m in CALL.finditer(unset):
        order.append(m.group(1) if m.group(1) is not None else "@comm_id_subnet")
    min_len = MIN_LEN.search(sel_text)
    scan_text = scan[1]
    return {
        "default_order": order,
        "ifname_min_len": int(min_len.group(1)) + 1 if min_len else None,
        # 1/0 (the matrix schema has no boolean type)
        "requires_running": int("IFF_RUNNING" in scan_text),
        "skips_ipv6_loopback": int("IN6_IS_ADDR_LOOPBACK" in scan_text),
        "skips_ipv6_link_local": int("IN6_IS_ADDR_LINKLOCAL" in scan_text),
        "exact_form": int("searchExact" in scan_text),
        "socket_family_env": int(any("NCCL_SOCKET_FAMILY" in t for t in files.values())),
        "_where": [
            f"NVIDIA/nccl@{tag}:{sel[0]}:{sel[2]}-{sel[3]} (selector)",
            f"NVIDIA/nccl@{tag}:{scan[0]}:{scan[2]}-{scan[3]} (scan)",
        ],
    }


def main() -> int:
    rows, tags = nccl_git.release_runs(read_tag, "selector not found")
    for i, row in enumerate(rows):
        row["id"] = f"{row['first']}..{row['last']}"
        row["note"] = (
            "unset NCCL_SOCKET_IFNAME: each prefix list is tried only when the ones before found nothing "
            "('@comm_id_subnet': the interface in NCCL_COMM_ID's subnet, when NCCL_COMM_ID is set); the bootstrap "
            "asks for one interface (maxIfs 1: the first match in getifaddrs order), the socket transport for up "
            "to MAX_IFS"
        )
        rows[i] = {k: row[k] for k in ("id", *[k for k in row if k != "id"])}
    doc = {
        "table": "nccl_socket_select",
        "description": "How each NCCL release picks its socket interfaces (ncclFindInterfaces), generated by "
        "tools/nccl/gen_socket_select.py from every release tag of github:NVIDIA/nccl.",
        "coverage": {"releases_read": len(tags), "rows": len(rows)},
        "rows": rows,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{OUT}: {len(rows)} rows from {len(tags)} releases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
