"""Generate src/imgcheck/data/triage/ompi_ucx_messages.json: Open MPI's UCX glue messages (opal/mca/common/ucx and
ompi/mca/pml/ucx: MCA_COMMON_UCX_VERBOSE/WARN/ERROR, PML_UCX_VERBOSE/WARN/ERROR) at every release tag v3.0.0..v5.0.x
of github:open-mpi/ompi (pml ucx exists since v3.0.0; v3 prints its failures as "Error: ..."), with their sites, and a fact read from the code of each release: whether the UCX device
check terminates the driver path it reads with readlink() (it did not before the fix "pml/ucx: fix EOL symbol for
driver path", so the driver name compared with pml_ucx_devices could carry stale bytes and an mlx5 device could fail
to match on some ranks only).

    OMPI_MIRROR=/work/.mirror/open-mpi+ompi/repo python tools/upstreams/gen_ompi_ucx_messages.py

The device-selection family has HOST-OMPI-UCX-DEVICE-MATCH: Open MPI decides per rank whether pml ucx supports this
node ("support level"), and a rank whose level is not "transports and devices" lets pml ucx decline, so that rank
selects another PML (ob1) and the job fails on a PML mismatch. Every other failure format gets a class of
data/triage/msgcat_classes.json (GLUE_CLASSES: thread level, UCX version, worker creation, the address exchange, the
endpoint, a communication call failing); debug output (request, datatype and connection traces) is counted in `left_out`.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from gen_fabric_messages import regex_of  # noqa: E402
from git_read import Mirror, balanced, split_args, version_key  # noqa: E402
from printf_formats import format_of  # noqa: E402

REPO = os.environ.get("OMPI_MIRROR", "/work/.mirror/open-mpi+ompi/repo")
OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/triage/ompi_ucx_messages.json"
TAGS = r"v[345]\.\d+\.\d+"
FILES = re.compile(r"^(?:opal/mca/common/ucx|ompi/mca/pml/ucx)/[\w]+\.c$")
CALL = re.compile(r"\b((?:MCA_COMMON_UCX|PML_UCX)_(VERBOSE|WARN|ERROR))\s*\(")
COMMON = "opal/mca/common/ucx/common_ucx.c"
SIGNATURE = "HOST-OMPI-UCX-DEVICE-MATCH"
# the device-selection formats whose line means pml ucx may decline on this rank (the value decides for
# "support level is %s": "transports and devices" is the good outcome). "did not match transport list" is printed for
# every resource outside pml_ucx_tls (tcp, sm) on a healthy node: left out
DEVICE_MATCH = (
    (r"matched transport list but not device list", None),
    (r"^readlink\(%s\) failed", None),
    (r"^failed to split (?:tl|devices) list", None),
    (r"^support level is %s$", r"support level is (?:none|transports only)\b"),
)

_MIN_FIXED = 10
# (signature, regex over the format) for the glue's failure formats; first match wins
GLUE_CLASSES = (
    ("OMPI-UCX-NO-THREAD-MULTIPLE", r"does not support MPI_THREAD_MULTIPLE"),
    ("OMPI-UCX-VERSION", r"run-time UCX version is|UCX version %u\.%u\.%u is too old"),
    (
        "OMPI-UCX-WORKER",
        r"^Failed to create UCP worker|^ucp_worker_create failed|^Failed to query UCP worker thread level|"
        r"^Failed to (?:get|query UCP) worker address|^Failed to create receive worker",
    ),
    # the PMIx modex: the peer's worker address never arrived (the peer failed or declined pml ucx)
    (
        "OMPI-UCX-MODEX",
        r"^Failed to receive (?:EP address|UCX worker address|worker address from proc)|couldn't distribute EP "
        r"connection details",
    ),
    # endpoint creation: UCX found no lane to the peer (UCX-ERROR's own "ucp_ep_create" reading keeps those lines)
    (
        "OMPI-UCX-ENDPOINT",
        r"^ucp_ep_create\(proc=%d\) failed|^Failed to connect to proc|^Failed to resolve UCX endpoint|"
        r"^Failed to get ep for rank",
    ),
    (
        "OMPI-UCX-COMM-FAILED",
        r"^ucx (?:send|recv|bsend|msg recv|%s) failed: %s|^disconnect request failed|^ucp_disconnect_nb\(%(?:d|zu)\) "
        r"failed|^opal_common_ucx_(?:flush|fence) failed|^%s failed: %d, %s",
    ),
)


def scan(text: str, path: str) -> list[tuple[str, str, str]]:
    """(level, format, path:line) of each glue log call in one file."""
    out = []
    for m in CALL.finditer(text):
        end = balanced(text, m.end() - 1, "(", ")")
        args = split_args(text[m.end() : end - 1])
        fmt = format_of(args[1] if m.group(2) == "VERBOSE" and len(args) > 1 else args[0]) if args else None
        if fmt:
            out.append((m.group(2).lower(), fmt.strip("\n"), f"{path}:{text.count(chr(10), 0, m.start()) + 1}"))
    return out


def unterminated_readlink(text: str) -> bool | None:
    """True when the device check reads the driver link without terminating it at the returned length."""
    if "readlink(" not in text:
        return None  # no device check in this release
    return not re.search(r"driver_path\[ret\]\s*=\s*'\\0'", text)


def main() -> None:
    mirror = Mirror(REPO)
    tags = sorted(mirror.tags(TAGS), key=version_key)
    seen: dict[tuple[str, str], dict] = {}
    unterminated, checked = [], []
    for tag in tags:
        rel = tag.lstrip("v")
        paths = [p for p in mirror.git("ls-tree", "-r", "--name-only", tag).split("\n") if FILES.match(p)]
        texts = mirror.show_many(tag, paths)
        flag = unterminated_readlink(texts.get(COMMON, ""))
        if flag is not None:
            checked.append(rel)
            if flag:
                unterminated.append(rel)
        for path, text in texts.items():
            for level, fmt, site in scan(text, path):
                row = seen.setdefault((level, fmt), {"level": level, "format": fmt, "first": rel, "sites": []})
                row["last"] = rel
                if row["sites"] and row["sites"][-1][2] == site:
                    row["sites"][-1][1] = rel
                elif not (row["sites"] and row["sites"][-1][1] == rel):
                    row["sites"].append([rel, rel, site])
    rows, left = [], 0
    for (_level, fmt), row in sorted(seen.items()):
        for rx, value_rx in DEVICE_MATCH:
            if re.search(rx, fmt):
                body, _fixed = regex_of(fmt)
                row["signatures"] = [{"signature": SIGNATURE, "regex": value_rx or body}]
                rows.append(row)
                break
        else:
            glue = next((sig for sig, rx in GLUE_CLASSES if re.search(rx, fmt)), None)
            if glue is None or (row["level"] == "verbose" and glue != "OMPI-UCX-NO-THREAD-MULTIPLE"):
                left += 1  # debug output, or a verbose-only line (printed with pml_ucx_verbose set) of a failure
                continue
            body, fixed = regex_of(fmt)
            if fixed < _MIN_FIXED:
                left += 1  # "%s failed: %d, %s": too little fixed text to tell from any other library's line
                continue
            row["signatures"] = [{"signature": glue, "regex": body}]
            rows.append(row)
    doc = {
        "source": f"open-mpi/ompi {tags[0]}..{tags[-1]} ({len(tags)} release tags): MCA_COMMON_UCX_* and PML_UCX_* "
        "formats in opal/mca/common/ucx/*.c and ompi/mca/pml/ucx/*.c; generated by "
        "tools/upstreams/gen_ompi_ucx_messages.py",
        "confidence": "verified",
        "releases": [t.lstrip("v") for t in tags],
        "device_check_releases": checked,
        "device_check_unterminated_readlink": unterminated,
        "formats": len(seen),
        "mapped": len(rows),
        "left_out": {
            "why": "request, datatype and connection debug output (pml_ucx_verbose), allocation failures of Open "
            "MPI's own structures, an application passing a rank past the communicator size, and the positive "
            "outcomes of device selection",
            "count": left,
        },
        "messages": rows,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{len(seen)} formats in {len(tags)} tags; {len(rows)} mapped; unterminated readlink in {unterminated}")


if __name__ == "__main__":
    main()
