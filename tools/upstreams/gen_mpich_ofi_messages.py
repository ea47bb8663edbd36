"""Generate src/imgcheck/data/triage/mpich_ofi_messages.json: every error text of MPICH's ch4 OFI netmod (the layer
Intel MPI 2019 and later is built on), per release, with the libfabric call behind it and a condition class that
names the triage signature (process_messages.json holds the causes).

    MPICH_MIRROR=/work/.mirror/pmodels+mpich/repo python tools/upstreams/gen_mpich_ofi_messages.py

Read from the code: src/mpid/ch4/netmod/ofi/errnames.txt (`**name fmt:TEXT`, the text MPICH prints in its error
stack: "MPIDI_OFI_mpi_init_hook(1541): OFI addrinfo() failed (ofi_init.c:1541:MPIDI_OFI_mpi_init_hook:No data
available)"), and, from 4.2 on where most names are no longer listed, every MPIDI_OFI_CALL*(..., NAME) site with
the text maint/extracterrmsgs generates for it ("OFI call NAME failed (default nic=%s: %s)"). Tags walked: the newest
patch of every minor series from 3.3 (the first with ch4 as a default device option).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

REPO = os.environ.get("MPICH_MIRROR", "/work/.mirror/pmodels+mpich/repo")
OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/triage/mpich_ofi_messages.json"
OFI = "src/mpid/ch4/netmod/ofi"
TAG = re.compile(r"^v(\d+)\.(\d+)(?:\.(\d+))?$")
FIRST = (3, 3)
ERRNAME = re.compile(r"^\*\*(ofid?_\w+)((?: %\w)*):(.+)$", re.M)
CALL_SITE = re.compile(r"MPIDI_OFI_CALL\w*\((fi_\w+|\w+)\s*\(", re.S)
GENERIC = "OFI call {name} failed (default nic=%s: %s)"
SPEC = re.compile(r"%[-+ #0-9.*]*[hlLzjt]*[diouxXeEfgGcsp]")
# name or text -> class; first match wins. No provider: libfabric's fi_getinfo returned no provider the netmod can
# use (FI_ENODATA "No data available": none matches the hints, e.g. FI_PROVIDER names a provider whose device the
# container does not have). Registration: pinning memory. Open: a fabric, domain, endpoint or queue could not be
# created on the device. Address: the address exchange or address vector (peers).
CLASSES: dict[str, frozenset[str]] = {
    "MPI-OFI-NO-PROVIDER": frozenset({"getinfo", "addrinfo", "no_prov", "provider_mismatch"}),
    "MPI-OFI-REGISTRATION": frozenset({"mr_reg", "mr_regattr", "mr_bind", "mr_enable"}),
    "MPI-OFI-OPEN-RESOURCE": frozenset(
        {
            "fabric",
            "opendomain",
            "domain",
            "ep",
            "ep_enable",
            "scalable_ep",
            "opencq",
            "openct",
            "cntr_open",
            "avopen",
            "bind",
            "stx_ctx",
            "rx_ctx",
            "tx_ctx",
        }
    ),
    "MPI-OFI-ADDRESS": frozenset({"avmap", "avinsert", "av_insert", "avlookup", "getname"}),
}


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", REPO, *args], check=True, capture_output=True, text=True).stdout


def tags() -> list[str]:
    best: dict[tuple[int, int], tuple[int, str]] = {}
    for t in git("tag").split():
        if (m := TAG.match(t)) and (int(m.group(1)), int(m.group(2))) >= FIRST:
            key, patch = (int(m.group(1)), int(m.group(2))), int(m.group(3) or 0)
            if patch >= best.get(key, (-1, ""))[0]:
                best[key] = (patch, t)
    return [best[k][1] for k in sorted(best)]


def texts_at(tag: str) -> dict[tuple[str, str], str]:
    """(error name, a text it prints) -> where it is defined, in one release."""
    out: dict[tuple[str, str], str] = {}
    errnames = git("show", f"{tag}:{OFI}/errnames.txt")
    for name, _args, text in ERRNAME.findall(errnames):  # the generic and each specific form: a log prints either
        out.setdefault((name, text.strip()), f"{OFI}/errnames.txt")
    listed = {name for name, _text in out}
    generic = "OFI call $name failed" in git("show", f"{tag}:maint/extracterrmsgs")
    if generic:
        sources = [f for f in git("ls-tree", "-r", "--name-only", tag, OFI).split() if f.endswith((".c", ".h"))]
        for path in sources:
            text = git("show", f"{tag}:{path}")
            for m in re.finditer(r"MPIDI_OFI_CALL\w*\(", text):
                if text[text.rfind("\n", 0, m.start()) + 1 : m.start()].lstrip().startswith("#define"):
                    continue  # the macro's own definition
                depth, i = 1, m.end()
                while i < len(text) and depth:
                    depth += {"(": 1, ")": -1}.get(text[i], 0)
                    i += 1
                last = text[m.end() : i - 1].rsplit(",", 1)[-1].strip()
                if re.fullmatch(r"[a-z]\w*", last) and f"ofid_{last}" not in listed:
                    out.setdefault((f"ofid_{last}", GENERIC.format(name=last)), path)
    return out


def regex_of(text: str) -> str:
    pieces = SPEC.split(text)
    return ".*?".join(re.escape(p) for p in pieces).replace(".*?.*?", ".*?")


def classify(name: str) -> str | None:
    core = name.removeprefix("ofid_").removeprefix("ofi_")
    return next((cls for cls, names in CLASSES.items() if core in names), None)


def main() -> None:
    walked = tags()
    rows: dict[tuple[str, str], dict[str, str]] = {}
    for tag in walked:
        for (name, text), site in texts_at(tag).items():
            row = rows.setdefault((name, text), {"name": name, "text": text, "site": site, "first": tag})
            row["last"] = tag
    messages, left_out = [], []
    for key in sorted(rows):
        row = rows[key]
        cls = classify(row["name"])
        fixed = len("".join(SPEC.split(row["text"])).strip())
        if cls is None or fixed < 12:
            left_out.append(row["name"])
            continue
        messages.append({**row, "regex": regex_of(row["text"]), "signature": cls})
    doc = {
        "source": f"pmodels/mpich {walked[0]}..{walked[-1]} (newest patch of each minor): {OFI}/errnames.txt and the "
        "MPIDI_OFI_CALL sites with maint/extracterrmsgs' generic text, read by tools/upstreams/gen_mpich_ofi_messages.py",
        "confidence": "verified",
        "releases": walked,
        "messages": messages,
        "left_out": {
            "why": "a data-path call (send, recv, poll, close, atomics, RMA, cancel) that fails after the job started: "
            "a consequence the libfabric line before it explains, not a set-up condition; or too little fixed text",
            "names": sorted(set(left_out)),
        },
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(
        f"{len(messages)} MPICH OFI texts in {len({m['signature'] for m in messages})} classes over {len(walked)} "
        f"releases; {len(set(left_out))} names left out"
    )


if __name__ == "__main__":
    main()
