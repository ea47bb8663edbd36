"""Generate src/imgcheck/data/triage/ucx_messages.json: UCX's error, warning, diagnostic and fatal messages of the
RDMA and shared-memory transports and of protocol selection, per release, each with the mechanism it reports for an
RDMA job and the triage signature that names that mechanism.

    UCX_MIRROR=/work/.mirror/openucx+ucx/repo python tools/upstreams/gen_ucx_messages.py

Walked: the newest patch of every minor series from UCX 1.2 (tags vX.Y.Z of github:openucx/ucx), the calls
ucs_error / ucs_warn / ucs_diag / ucs_fatal under src/uct/ib (verbs, mlx5 DevX, rc/dc/ud), src/uct/sm (posix/sysv
shared memory, cma, xpmem, knem) and src/ucp/wireup, src/ucp/rndv (transport selection, rendezvous). The format
scanner is the fabric catalog generator's (gen_fabric_messages.scan_c), so sites and releases read the same way.

Each format's first line becomes a regex searched anywhere in a log line: UCX prints `file.c:N UCX ERROR <msg>`, but
the message is often quoted alone (an issue title, a framework re-raising it). Formats with less fixed text than
MIN_BARE are only matched after UCX's own level word. MECHANISMS gives, per family of sites (path and words of the
format), the signature of host_messages.json that names the mechanism; a format no mechanism claims stays with the
generic UCX-ERROR / the fabric catalog's condition classes (counted in `left_out`).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from gen_fabric_messages import regex_of, scan_c, series_tags  # noqa: E402
from git_read import Mirror  # noqa: E402

REPO = os.environ.get("UCX_MIRROR", "/work/.mirror/openucx+ucx/repo")
OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/triage/ucx_messages.json"
SINCE = (1, 2)
PATHS = ("src/uct/ib", "src/uct/sm", "src/ucp/wireup", "src/ucp/rndv")
CALLS = {"ucs_error": "error", "ucs_warn": "warn", "ucs_diag": "diag", "ucs_fatal": "fatal", "ucs_log": "log"}
SUFFIXES = {"ucs_log": ""}  # ucs_log(level, fmt, ...): the format is the second argument, the level a variable
MIN_FIXED = 10  # less fixed text matches unrelated lines even after the level word: left out
MIN_BARE = 24  # fixed text needed to recognise the message without UCX's "UCX ERROR" prefix
HOST_MEMORY = re.compile(r"(?i)allocate memory|out of memory|not enough memory")
LEVEL = r"UCX\s+(?:ERROR|WARN|DIAG|Fatal)\s+"

# (mechanism, signature, path regex, format regex, what the sites report) in order: the first that claims a format
MECHANISMS: tuple[tuple[str, str, str, str, str], ...] = (
    (
        "mlx5-devx",
        "HOST-UCX-MLX5-DEVX",
        r"src/uct/ib/mlx5/",
        r"(?i)devx|\bUAR\b|uar_",
        "the mlx5 DevX path (UAR allocation, DevX object and UMEM creation, DC objects) failed: DevX is not usable "
        "with this driver / firmware / device, or in this container",
    ),
    (
        "rc-tag-matching",
        "HOST-UCX-RC-TAG-MATCHING",
        r"src/uct/ib/(?:rc|mlx5|base)/",
        r"(?i)\bTM\b|XRQ|tag[ -]?matching|\btm_|_tm\b|rndv.*\bTM\b",
        "hardware tag matching (RC/DC with TM, the XRQ) could not be set up on this device / driver",
    ),
    (
        "shm-peer-attach",
        "HOST-UCX-SHM-PEER-ATTACH",
        r"src/uct/sm/",
        r"(?i)^(?!.*allocate memory)(?:.*(?:/proc/|file_name=|pid=%d \{|pidfd|process_vm_|xpmem_(?:get|attach)|"
        r"knem|remote FIFO|attach|ptrace|user namespace|failed to connect to remote|"
        # cma_ep.c: "%s delivered %zu instead of %zu, error message %s", %s being process_vm_readv / _writev
        r"delivered %zu instead of))",
        "a process could not attach a peer's shared-memory segment or read its memory (posix /proc/<pid>/fd link, "
        "xpmem, knem, cma process_vm_readv): the ranks do not share PID / user namespaces or ptrace is restricted",
    ),
    (
        "ib-gid",
        "HOST-UCX-IB-GID",
        r"src/uct/ib/",
        r"(?i)\bgid\b|\broce\b",
        "the port's GID table (RoCE addressing) is empty, unreadable or has no entry of the requested type",
    ),
    (
        "no-transport",
        "HOST-UCX-NO-TRANSPORT",
        r"src/ucp/wireup/",
        r"(?i)no \w+ (?:transport|lane)|unreachable|no (?:remote|active messages)|not reachable|could not find|"
        r"no suitable|cannot use",
        "protocol selection found no transport that reaches the peer with the devices and transports both sides have",
    ),
)


def walk(mirror: Mirror) -> tuple[list[str], dict[tuple[str, str], dict]]:
    tags = series_tags(mirror, r"v(\d+)\.(\d+)\.(\d+)", SINCE)
    seen: dict[tuple[str, str], dict] = {}
    for tag in tags:
        rel = tag.lstrip("v")
        paths = set()
        for call in CALLS:
            paths.update(p for p in mirror.files_with(tag, call + "(", PATHS) if p.endswith((".c", ".h")))
        for path, text in mirror.show_many(tag, sorted(paths)).items():
            for r in scan_c(text, path, CALLS, SUFFIXES):
                fmt = (r["format"] or "").strip("\n")
                if not fmt:
                    continue
                key = (r["level"], fmt)
                row = seen.setdefault(key, {"level": r["level"], "format": fmt, "first": rel, "sites": []})
                row["last"] = rel
                site = [rel, rel, r["site"], r["function"]]
                if (
                    row["sites"]
                    and row["sites"][-1][2].split(":")[0] == r["site"].split(":")[0]
                    and row["sites"][-1][1] != rel
                ):
                    if row["sites"][-1][2] == r["site"]:
                        row["sites"][-1][1] = rel
                        continue
                if row["sites"] and row["sites"][-1][1] == rel:
                    continue  # a second site of the same format in this release: the first is kept
                row["sites"].append(site)
    return [t.lstrip("v") for t in tags], seen


def main() -> None:
    versions, seen = walk(Mirror(REPO))
    rows, left = [], {"too little fixed text": 0, "host memory": 0, "no mechanism of its own": 0}
    for (_level, fmt), row in sorted(seen.items()):
        rx, fixed = regex_of(fmt)
        if fixed < MIN_FIXED:
            left["too little fixed text"] += 1
            continue
        path = row["sites"][-1][2]
        if HOST_MEMORY.search(fmt):  # a failed allocation is host memory whatever transport: the fabric catalog's class
            left["host memory"] += 1
            continue
        for mech, sig, path_rx, fmt_rx, why in MECHANISMS:
            if re.search(path_rx, path) and re.search(fmt_rx, fmt.split("\n")[0]):
                row["mechanism"] = mech
                row["why"] = why
                pattern = rx if fixed >= MIN_BARE else LEVEL + rx
                row["signatures"] = [{"signature": sig, "regex": pattern}]
                rows.append(row)
                break
        else:
            left["no mechanism of its own"] += 1
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["mechanism"]] = counts.get(r["mechanism"], 0) + 1
    doc = {
        "source": f"openucx/ucx v{versions[0]}..v{versions[-1]} (newest patch of each of {len(versions)} minor "
        f"series): ucs_error/ucs_warn/ucs_diag/ucs_fatal under {', '.join(PATHS)}; generated by "
        "tools/upstreams/gen_ucx_messages.py",
        "confidence": "verified",
        "releases": versions,
        "formats": len(seen),
        "mapped": len(rows),
        "by_mechanism": counts,
        "left_out": {
            "why": "formats without a mechanism of their own here stay with UCX-ERROR and the fabric catalog's "
            "condition classes (memory, device access, peer); formats with less fixed text than "
            f"{MIN_FIXED} characters would match unrelated lines",
            **left,
        },
        "messages": rows,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{len(seen)} formats in {len(versions)} releases; {len(rows)} mapped {counts}; left {left} -> {OUT}")


if __name__ == "__main__":
    main()
