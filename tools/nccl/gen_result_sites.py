"""Generate src/imgcheck/data/triage/nccl_result_sites.json: where each generic ncclResult_t is produced, per release.

NCCL's result codes (ncclSystemError, ncclInternalError, ncclRemoteError, ...) say which family of call failed, not
which mechanism: the mechanism is the site that returned the code. This walks every release tag of a bare NCCL mirror
(github:NVIDIA/nccl) and records each site that *produces* a code (`return CODE`, `ret = CODE`, `res = CODE`, a
CHECKGOTO/ERRCHECK macro handed CODE), with the WARN format printed just above it, and gives the site a producer class
by the first rule in RULES that matches its path or format. Triage's result-code signatures (NCCL-ERR-2/3/6) name
their causes by these classes (a cause's `producers`), and tests/triage/test_triage_result_sites.py fails when a
class of a code has no cause that names it.

Re-run for a new release (same mirror as the other generators in this folder):
    NCCL_MIRROR=/path/to/bare/nccl.git python tools/nccl/gen_result_sites.py
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import nccl_git  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/triage/nccl_result_sites.json"
CODES = ("ncclRemoteError", "ncclSystemError", "ncclInternalError")
WINDOW = 6  # lines above the site searched for the WARN that reports it
_SITE = {code: re.compile(rf"(?:\breturn\s+{code}\b|[=,(]\s*{code}\s*[;)])") for code in CODES}
_NOT_SITE = re.compile(r"\bcase\s+\w+\s*:|[=!]=\s*ncc|ncclGetErrorString|ncclResultStr")
_WARN = re.compile(r'\bWARN\(\s*"(?P<fmt>(?:[^"\\]|\\.)*)"')
_SKIP_PATH = re.compile(r"(?:^|/)(?:nccl\.h\.in|nccl\.h|err\.h)$|/ras/client_support|/include/nccl_net\.h$")

# (class, "path" | "format", regex): first match wins. The classes name the mechanism a site reports.
RULES: tuple[tuple[str, str, str], ...] = (
    # ncclRemoteError: the other end of a connection
    ("peer-closed-socket", "format", r"Connection closed by remote peer|Connection closed by peer"),
    ("socket-io-failed", "format", r"Call to (?:%s )?(?:recv|send)|recv from|send to|ProgressOpt"),
    (
        "socket-connect-retries",
        "format",
        r"exceeded (?:error )?retr|exceeded timeouts|returned %s, exceeded|poll\(\) failed",
    ),
    ("socket-state", "format", r"unexpected socket state|wrong socket state"),
    ("ib-completion-error", "format", r"Got completion from peer|Got CQE with error|completion with error"),
    ("ib-device-failed", "format", r"failed devices|error is fatal|probing attempts|NET/IB ?: ?Fatal"),
    ("ib-transport", "path", r"transport/net_ib|transport/net_ib/"),
    ("socket-transport", "path", r"misc/socket\.cc|os/linux\.cc|os/windows\.cc|transport/net_socket"),
    # ncclSystemError / ncclInternalError: the host and NCCL's own state
    ("shared-memory", "format", r"(?i)shm|shared memory|/dev/shm"),
    ("host-alloc", "format", r"(?i)malloc|calloc|mmap|out of memory|alloc"),
    ("proxy", "path", r"proxy\.cc"),
    ("bootstrap", "path", r"bootstrap\.cc"),
    ("topology", "path", r"graph/"),
    ("net-plugin", "path", r"net\.cc$|plugin/|net_v\d"),
    ("ibverbs-call", "path", r"ibvwrap|ibvsymbols|ibvcore"),
    ("cuda-call", "path", r"cudawrap|cudawrap\.cc"),
    ("transport", "path", r"transport/"),
    ("enqueue", "path", r"enqueue\.cc|group\.cc"),
    ("init", "path", r"init\.cc|init_nvtx|comm"),
    ("utils", "path", r"misc/|utils\.cc|param\.cc"),
)


def classify(path: str, fmt: str) -> str:
    for cls, where, rx in RULES:
        if re.search(rx, path if where == "path" else fmt):
            return cls
    return "other"


def sites(files: dict[str, str]) -> list[tuple[str, str, int, str]]:
    """(code, path, line, WARN format or '') for every producing site of one tag."""
    out = []
    for path, text in files.items():
        if _SKIP_PATH.search(path):
            continue
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if _NOT_SITE.search(line):
                continue
            for code in CODES:
                if code in line and _SITE[code].search(line):
                    fmt = ""
                    for above in reversed(lines[max(0, i - WINDOW) : i + 1]):
                        m = _WARN.search(above)
                        if m:
                            fmt = m.group("fmt")
                            break
                    out.append((code, path, i + 1, fmt))
    return out


def main() -> int:
    tags = nccl_git.release_tags()
    table: dict[str, dict[str, dict]] = {c: {} for c in CODES}
    for tag, version in tags:
        for code, path, lineno, fmt in sites(nccl_git.files_text(tag)):
            cls = classify(path, fmt)
            row = table[code].setdefault(
                cls, {"first": version, "last": version, "sites_newest": [], "formats": [], "tag": tag}
            )
            row["last"] = version
            if row["tag"] != tag:  # keep the newest release's sites only: the ones a reader can open
                row["tag"], row["sites_newest"] = tag, []
            row["sites_newest"].append(f"{path}:{lineno}")
            if fmt and fmt not in row["formats"]:
                row["formats"].append(fmt)
    doc = {
        "about": (
            "Where NCCL produces each generic result code, by producer class, over every release tag since 2.3 "
            "(generated by tools/nccl/gen_result_sites.py from github:NVIDIA/nccl; first/last: the releases that have "
            "a site of the class; sites_newest: file:line at the last one; formats: the WARN printed just above a "
            "site). Read by the result-code signatures' cause 'producers' (docs/triage.md)."
        ),
        "source": "github:NVIDIA/nccl tags " + f"{tags[0][0]}..{tags[-1][0]}",
        "releases": len(tags),
        "codes": {
            code: {
                cls: {
                    "first": r["first"],
                    "last": r["last"],
                    "sites_newest": sorted(set(r["sites_newest"]))[:12],
                    "site_count_newest": len(set(r["sites_newest"])),
                    "formats": r["formats"][:12],
                }
                for cls, r in sorted(rows.items())
            }
            for code, rows in table.items()
        },
    }
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    for code, rows in doc["codes"].items():
        print(code, {k: v["site_count_newest"] for k, v in rows.items()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
