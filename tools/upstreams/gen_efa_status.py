"""Generate src/imgcheck/data/triage/efa_status_messages.json: how an EFA completion status reaches a log, for every
libfabric minor series from 1.9 and the EFA provider of rdma-core, and which statuses mean "the peer was never
reachable" (the security group or subnet, in libfabric's own help text), so that a line carrying one is named by
EFA-PEER-UNREACHABLE instead of a generic plugin or provider error.

    LIBFABRIC_MIRROR=/work/.mirror/ofiwg+libfabric/repo RDMA_CORE_MIRROR=/work/.mirror/linux-rdma+rdma-core/repo \
        python tools/upstreams/gen_efa_status.py

Two eras, read from the code:
- libfabric up to 1.15 stored the verbs completion status (ibv_wc.status) as prov_errno and printed it through
  fi_strerror as if it were an errno ("rxr_cq_write_tx_error: err: 20, prov_err: Not a directory (20)"); rdma-core's
  EFA provider (providers/efa/verbs.c to_ibv_status) maps the device status to that ibv_wc_status, and both
  unreachable and unresponsive remotes become IBV_WC_RESP_TIMEOUT_ERR.
- libfabric 1.16 on stores the device status itself (ibv_wc_read_vendor_err) and prints efa_strerror's text for it
  (efa_strerror.c tables in 1.16-1.18, the EFA_IO_COMP_STATUSES table of efa_errno.h from 1.19).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

LIBFABRIC = os.environ.get("LIBFABRIC_MIRROR", "/work/.mirror/ofiwg+libfabric/repo")
RDMA_CORE = os.environ.get("RDMA_CORE_MIRROR", "/work/.mirror/linux-rdma+rdma-core/repo")
OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/triage/efa_status_messages.json"
TAG = re.compile(r"^v([12])\.(\d+)\.(\d+)$")
FIRST = (1, 9)
SIGNATURE = "EFA-PEER-UNREACHABLE"
# the device's "no answer from the remote" statuses: UNREACH_REMOTE ("never received a response": security group or
# subnet, efa_strerror.c efa_show_help) and, before the device split it out, UNRESP_REMOTE ("connection never
# established or unknown"); a peer that answered once and then stopped is 4124, not these
UNREACHABLE = re.compile(r"UNREACH_REMOTE$|UNRESP_REMOTE$")
PREVIOUSLY = re.compile(r"previously")  # the peer answered before: it went away, the path is fine
XMACRO = re.compile(r"^\s*_\(\s*(\d+)\s*,\s*(\w+)\s*,\s*(.+?)\)\s*\\?\s*$", re.M)
ENUM = re.compile(r"\b(?:FI_EFA|EFA_IO_COMP_STATUS)_(\w+)\s*=\s*(\d+)")
TABLE = re.compile(r'\[\s*(?:FI_EFA|EFA_IO_COMP_STATUS)_(\w+)\s*\]\s*=\s*"([^"]+)"')
OLD_PROV_ERRNO = re.compile(r"prov_errno\s*=\s*(?:ibv_wc\.status|wce->wc\.ibv_wc\.status)")
PRINT_RXR = re.compile(r'"(rxr_cq_write_(?:tx|rx)_error): err: %d, prov_err: %s \(%d\)')


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def newest_per_minor() -> list[str]:
    best: dict[tuple[int, int], tuple[int, str]] = {}
    for t in git(LIBFABRIC, "tag").split():
        if (m := TAG.match(t)) and (int(m.group(1)), int(m.group(2))) >= FIRST:
            minor, patch = (int(m.group(1)), int(m.group(2))), int(m.group(3))
            if patch >= best.get(minor, (-1, ""))[0]:
                best[minor] = (patch, t)
    return [best[k][1] for k in sorted(best)]


def efa_to_ibv() -> dict[str, str]:
    """rdma-core: EFA device status name -> the ibv_wc_status name to_ibv_status returns."""
    text = git(RDMA_CORE, "show", "HEAD:providers/efa/verbs.c")
    body = text[text.index("to_ibv_status(enum efa_io_comp_status") :]
    body = body[: body.index("\n}\n")]
    out: dict[str, str] = {}
    pending: list[str] = []
    for line in body.splitlines():
        if m := re.search(r"case EFA_IO_COMP_STATUS_(\w+):", line):
            pending.append(m.group(1))
        elif m := re.search(r"return (IBV_WC_\w+);", line):
            for p in pending:
                out[p] = m.group(1)
            pending = []
    return out


def ibv_numbers() -> dict[str, int]:
    text = git(RDMA_CORE, "show", "HEAD:libibverbs/verbs.h")
    block = text[text.index("enum ibv_wc_status {") :]
    block = block[: block.index("};")]
    names = re.findall(r"\b(IBV_WC_\w+)\b", block)
    return {n: i for i, n in enumerate(names)}


def statuses_at(tag: str) -> dict[int, tuple[str, str]]:
    """code -> (name, text) in one libfabric release (empty before 1.16)."""
    files = set(git(LIBFABRIC, "ls-tree", "-r", "--name-only", tag, "prov/efa/src").split())
    out: dict[int, tuple[str, str]] = {}
    if "prov/efa/src/efa_errno.h" in files:
        header = git(LIBFABRIC, "show", f"{tag}:prov/efa/src/efa_errno.h")
        for code, name, text in XMACRO.findall(header):
            out[int(code)] = (name, text.strip())
        if not out and "prov/efa/src/efa_strerror.c" in files:
            codes = {name: int(code) for name, code in ENUM.findall(header)}
            for name, text in TABLE.findall(git(LIBFABRIC, "show", f"{tag}:prov/efa/src/efa_strerror.c")):
                if name in codes:
                    out[codes[name]] = (name, text)
    return out


def old_era(tag: str) -> list[str]:
    """The rxr functions printing a verbs status as an errno in this release (empty when it stores vendor_err)."""
    grep = subprocess.run(
        ["git", "-C", LIBFABRIC, "grep", "-h", "-E", r"prov_errno\s*=|prov_err: %s", tag, "--", "prov/efa/src"],
        capture_output=True,
        text=True,
    ).stdout
    if not OLD_PROV_ERRNO.search(grep):
        return []
    return sorted(set(PRINT_RXR.findall(grep)))


def main() -> None:
    tags = newest_per_minor()
    mapping, numbers = efa_to_ibv(), ibv_numbers()
    texts: dict[tuple[int, str], dict[str, object]] = {}
    rxr: dict[str, list[str]] = {}
    for tag in tags:
        for code, (name, text) in statuses_at(tag).items():
            row = texts.setdefault((code, text), {"status": code, "name": name, "text": text, "first": tag})
            row["last"] = tag
        for fn in old_era(tag):
            rxr.setdefault(fn, []).append(tag)
    unreachable = {n for n in mapping if UNREACHABLE.search(n)}
    timeout_status = {mapping[n] for n in unreachable}
    messages = []
    for (_code, text), row in sorted(texts.items()):
        hit = bool(UNREACHABLE.search(str(row["name"]))) and not PREVIOUSLY.search(text)
        # a text that begins another status's text ("Unresponsive receiver" / "... (connection previously
        # established)") must not match that one
        longer = sorted({t[len(text) :] for (_c, t) in texts if t != text and t.startswith(text)})
        regex = re.escape(text) + "".join(f"(?!{re.escape(rest)})" for rest in longer)
        messages.append({**row, "regex": regex, "signature": SIGNATURE if hit else None})
    for fn, seen in sorted(rxr.items()):
        for status in sorted(timeout_status):
            num = numbers[status]
            shared = sorted(n for n, s in mapping.items() if s == status)
            messages.append(
                {
                    "status": num,
                    "name": status,
                    "text": f"{fn}: err: %d, prov_err: <strerror({num})> ({num})",
                    "first": seen[0],
                    "last": seen[-1],
                    "efa_statuses": shared,
                    "regex": rf"{fn}: err: \d+, prov_err: [^()]*\({num}\)",
                    "signature": SIGNATURE,
                }
            )
    doc = {
        "source": f"ofiwg/libfabric {tags[0]}..{tags[-1]} (newest patch of each minor): prov/efa/src efa_errno.h, "
        "efa_strerror.c, rxr_cq.c/rxr_ep.c; linux-rdma/rdma-core HEAD providers/efa/verbs.c (to_ibv_status), "
        "libibverbs/verbs.h (ibv_wc_status); read by tools/upstreams/gen_efa_status.py",
        "confidence": "verified",
        "unreachable_statuses": sorted(unreachable),
        "messages": messages,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    named = sum(1 for m in messages if m["signature"])
    print(f"{len(messages)} EFA status texts/forms over {len(tags)} libfabric series, {named} name {SIGNATURE}")


if __name__ == "__main__":
    main()
