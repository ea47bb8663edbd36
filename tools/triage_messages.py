"""Regenerate src/imgcheck/data/triage/messages.json: the message catalogs triage recognises, read from
the upstream sources themselves (not from threads).

    python tools/triage_messages.py --mirrors /work/.mirror --cuda-wheel nvidia_cuda_runtime_cu12-*.whl

--mirrors holds bare git snapshots named owner+repo/repo (the `fetch` tool's layout, or `git clone --bare`).
Each family walks the tags listed below and records, per message, the first and last tag that prints it and
its site (owner/repo@tag:path:line). The signature a message maps to is decided here, by the rule named in
each family; a message no signature covers is listed under `left_out` with the reason. To add a release,
add its tag to the family's TAGS and re-run; tests/triage/test_triage_messages.py checks every encoded entry
against signatures.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import zipfile

OUT = os.path.join(os.path.dirname(__file__), "..", "src", "imgcheck", "data", "triage", "messages.json")


def git(mirror: str, *args: str) -> str:
    return subprocess.run(["git", "-C", mirror, *args], capture_output=True, text=True, check=False).stdout


def show(mirror: str, tag: str, path: str) -> str | None:
    r = subprocess.run(["git", "-C", mirror, "show", f"{tag}:{path}"], capture_output=True, text=True, check=False)
    return r.stdout if r.returncode == 0 else None


def sample_of(fmt: str) -> str:
    """A line the format prints: printf conversions replaced by plausible values."""
    out = re.sub(
        r"%[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z|j|t)?([diuxXsfgcp])",
        lambda m: {"s": "x", "c": "x", "p": "0x1", "f": "1.0", "g": "1"}.get(m.group(1), "1"),
        fmt,
    )
    return out.replace("%%", "%")


# ---- libfabric EFA errno table (prov/efa/src/efa_errno.h) -------------------------------------------------
EFA_TAGS = (
    "v1.18.0",
    "v1.19.0",
    "v1.20.0",
    "v1.21.0",
    "v1.22.0",
    "v2.0.0",
    "v2.1.0",
    "v2.2.0",
    "v2.3.0",
    "v2.4.0",
    "v2.5.0",
    "v2.6.0",
)
EFA_CAUSE = {  # EFA errno -> the EFA-PROVIDER-ERROR cause it leads to (the provider's own wording decides)
    **dict.fromkeys((13, 15, 4124, 4126), "efa-peer-unresponsive"),
    **dict.fromkeys((5, 7), "efa-memory-registration"),
    **dict.fromkeys((8, 4127), "efa-peer-aborted"),
    4112: "efa-memlock",  # failure to post internal receive buffers: ENOMEM pinning them (awsome-distributed-ai#647)
}


def efa(mirror: str) -> dict:
    seen: dict[int, dict] = {}
    walked = []
    for tag in EFA_TAGS:
        text = show(mirror, tag, "prov/efa/src/efa_errno.h")
        if text is None:
            continue
        walked.append(tag)
        for lineno, line in enumerate(text.splitlines(), 1):
            m = re.match(r"\s*_\(\s*(\d+),\s*(\w+),\s*(.*?)\)\s*\\?\s*$", line)
            if not m:
                continue
            code, name, what = int(m.group(1)), m.group(2), m.group(3).strip()
            e = seen.setdefault(code, {"code": code, "name": name, "first": tag})
            e.update(text=what, last=tag, site=f"ofiwg/libfabric@{tag}:prov/efa/src/efa_errno.h:{lineno}")
    entries = []
    for code, e in sorted(seen.items()):
        entries.append(
            {
                "key": f"efa-errno-{code}",
                "format": "EFA internal error: (%d) " + e["text"],
                "sample": f"EFA internal error: ({code}) {e['text']}",
                "site": e["site"],
                "first": e["first"],
                "last": e["last"],
                "name": e["name"],
                "signature": "EFA-PROVIDER-ERROR",
                **({"cause": EFA_CAUSE[code]} if code in EFA_CAUSE else {}),
            }
        )
    return {
        "family": "libfabric-efa",
        "upstream": "ofiwg/libfabric",
        "what": "EFA provider errno table (prov/efa/src/efa_errno.h), printed in the abort banner and as prov_errno",
        "tags": walked,
        "entries": entries,
        "left_out": [],
    }


# ---- Open MPI help topics ------------------------------------------------------------------------------
OMPI_TAGS = ("v1.10.7", "v2.1.6", "v3.1.6", "v4.0.7", "v4.1.6", "v5.0.10")
OMPI_FILES = (
    "opal/mca/btl/openib/help-mpi-btl-openib.txt",
    "opal/mca/btl/tcp/help-mpi-btl-tcp.txt",
    "ompi/mca/mtl/ofi/help-mtl-ofi.txt",
    "opal/mca/common/ofi/help-common-ofi.txt",
    "opal/mca/common/verbs/help-opal-common-verbs.txt",
    "orte/mca/oob/ud/help-oob-ud.txt",
    "ompi/mca/pml/ucx/help-pml-ucx.txt",
    "opal/mca/btl/ofi/help-mpi-btl-ofi.txt",
)


# The runtime (ORTE up to v4.1, PRRTE from v5): launch and process-exit banners. Only the two with a
# mechanism of their own are mapped; the others are listed as left out.
RUNTIME_FILES = (
    "orte/tools/orterun/help-orterun.txt",
    "orte/mca/errmgr/base/help-errmgr-base.txt",
    "orte/mca/plm/base/help-plm-base.txt",
    "orte/mca/plm/rsh/help-plm-rsh.txt",
    "orte/mca/odls/base/help-orte-odls-base.txt",
)
PRRTE_TAGS = ("v3.0.0", "v3.0.14", "v4.1.0")
PRRTE_FILES = (
    "src/docs/show-help-files/help-prun.txt",
    "src/docs/show-help-files/help-errmgr-base.txt",
    "src/docs/show-help-files/help-plm-base.txt",
    "src/docs/show-help-files/help-plm-ssh.txt",
    "src/docs/show-help-files/help-prte-odls-base.txt",
)
RUNTIME_SIG = (
    ("noticed that process rank", "MPI-RANK-SIGNALED"),
    ("unable to reliably start one or more", "MPI-DAEMON-START"),
)


def runtime(ompi_mirror: str, prrte_mirror: str) -> list[dict]:
    seen: dict[tuple[str, str], dict] = {}
    for repo, mirror, tags, files in (
        ("open-mpi/ompi", ompi_mirror, OMPI_TAGS, RUNTIME_FILES),
        ("openpmix/prrte", prrte_mirror, PRRTE_TAGS, PRRTE_FILES),
    ):
        for tag in tags:
            for path in files:
                text = show(mirror, tag, path)
                if text is None:
                    continue
                for topic, line, head in ompi_topics(text):
                    e = seen.setdefault((os.path.basename(path), topic), {"first": f"{repo}@{tag}"})
                    e.update(last=f"{repo}@{tag}", site=f"{repo}@{tag}:{path}:{line}", head=head)
    entries, left = [], []
    for (fname, topic), e in sorted(seen.items()):
        sig = next((sg for text, sg in RUNTIME_SIG if text in e["head"]), None)
        key = f"{fname}[{topic}]"
        if sig is None:
            left.append(
                {
                    "key": key,
                    "site": e["site"],
                    "why": "launcher topic without a cause of its own here (usage, mapping, binding, tool options)",
                }
            )
            continue
        sample = sample_of(e["head"]).replace("exited on signal 1", "exited on signal 9")
        entries.append(
            {
                "key": key,
                "format": e["head"],
                "sample": sample,
                "site": e["site"],
                "first": e["first"],
                "last": e["last"],
                "signature": sig,
            }
        )
    return entries, left


def ompi_topics(text: str):
    topic, lines, start = None, [], 0
    for n, line in enumerate(text.splitlines() + ["[__end__]"], 1):
        m = re.match(r"^\[([\w:\-. ]+)\]\s*$", line)
        if m:
            if topic is not None:
                body = [x for x in lines if x.strip() and not x.startswith("#")]
                if body:
                    yield topic, start, body[0].strip()
            topic, lines, start = m.group(1), [], n
        elif not line.startswith("#"):
            lines.append(line)


def ompi(mirror: str, prrte_mirror: str) -> dict:
    seen: dict[tuple[str, str], dict] = {}
    walked = []
    for tag in OMPI_TAGS:
        walked.append(tag)
        for path in OMPI_FILES:
            text = show(mirror, tag, path)
            if text is None:
                continue
            for topic, line, head in ompi_topics(text):
                e = seen.setdefault((os.path.basename(path), topic), {"first": tag, "head": head})
                e.update(last=tag, site=f"open-mpi/ompi@{tag}:{path}:{line}", head=head)
    entries, left = [], []
    for (fname, topic), e in sorted(seen.items()):
        head = e["head"]
        key = f"{fname}[{topic}]"
        if head.startswith("Failed to create a completion queue"):
            sig = "OMPI-CQ-CREATE"
        elif "%" in head or len(head) < 24 or head.endswith(":") and len(head) < 30:
            left.append(
                {
                    "key": key,
                    "site": e["site"],
                    "why": "headline is a bare format or too short to "
                    "match without false positives; the topic's later lines carry the text",
                }
            )
            continue
        else:
            sig = "OMPI-HELP-BANNER"
        entries.append(
            {
                "key": key,
                "format": head,
                "sample": head,
                "site": e["site"],
                "first": e["first"],
                "last": e["last"],
                "signature": sig,
            }
        )
    extra, extra_left = runtime(mirror, prrte_mirror)
    entries += extra
    left += extra_left
    return {
        "family": "open-mpi",
        "upstream": "open-mpi/ompi",
        "what": "help topics (opal_show_help banners) of "
        "the verbs, TCP, OFI and UCX components; v5 moved runtime topics to PRRTE/PMIx",
        "tags": walked,
        "entries": entries,
        "left_out": left,
    }


# ---- NCCL topology / graph WARN sites ---------------------------------------------------------------------
NCCL_TAGS = (
    "v2.8.4-1",
    "v2.12.12-1",
    "v2.18.3-1",
    "v2.21.5-1",
    "v2.23.4-1",
    "v2.26.2-1",
    "v2.27.7-1",
    "v2.28.9-1",
    "v2.30.7-1",
)
GRAPH_FILES = re.compile(r"^src/graph/(topo|xml|search|paths|connect|rings|trees)\.(cc|h)$")


def nccl_graph(mirror: str) -> dict:
    seen: dict[str, dict] = {}
    left: dict[str, dict] = {}
    for tag in NCCL_TAGS:
        for hit in git(mirror, "grep", "-n", "-E", r'WARN\("', tag, "--", "src/graph").splitlines():
            _t, path, line, code = hit.split(":", 3)
            m = re.search(r'WARN\("((?:[^"\\]|\\.)*)"', code)
            if not m:
                continue
            fmt = m.group(1)
            target = seen if GRAPH_FILES.match(path) else left
            e = target.setdefault(fmt, {"first": tag})
            e.update(last=tag, site=f"NVIDIA/nccl@{tag}:{path}:{line}", file=os.path.basename(path), line=line)
    entries = []
    for fmt, e in sorted(seen.items()):
        sig = "NCCL-GRAPH-FALLBACK" if "falling back to simple order" in fmt else "NCCL-TOPO-ERROR"
        entries.append(
            {
                "key": f"{e['file']}:{fmt[:60]}",
                "format": fmt,
                "sample": f"host:1:2 [0] graph/{e['file']}:{e['line']} NCCL WARN {sample_of(fmt)}",
                "site": e["site"],
                "first": e["first"],
                "last": e["last"],
                "signature": sig,
            }
        )
    lo = [
        {
            "key": f"{e['file']}:{fmt[:60]}",
            "site": e["site"],
            "why": "tuning.cc parses NCCL_ALGO/NCCL_PROTO "
            "strings: a setting mistake, left to NCCL's own message catalog",
        }
        for fmt, e in sorted(left.items())
    ]
    return {
        "family": "nccl-topology",
        "upstream": "NVIDIA/nccl",
        "what": "WARN sites of src/graph/ (topology "
        "detection, XML, path search); NCCL prints graph/FILE:LINE before NCCL WARN",
        "tags": list(NCCL_TAGS),
        "entries": entries,
        "left_out": lo,
    }


# ---- CUDA driver API error codes (cuda.h in the nvidia-cuda-runtime wheel) ------------------------------
CUDA_SIG = {
    100: "CUDA-NO-DEVICE",
    46: "CUDA-DEVICE-BUSY",
    217: "CUDA-PEER-ACCESS-UNSUPPORTED",
    803: "CUDA-DRIVER-MISMATCH-803",
    804: "CUDA-DRIVER-MISMATCH-803",
}


def cuda(wheel: str) -> dict:
    z = zipfile.ZipFile(wheel)
    header = z.read("nvidia/cuda_runtime/include/cuda.h").decode()
    version = re.search(r"#define CUDA_VERSION (\d+)", header).group(1)
    block = header[header.index("typedef enum cudaError_enum") : header.index("} CUresult;")]
    entries, left = [], []
    for doc, name, value in re.findall(r"/\*\*(.*?)\*/\s*(CUDA_ERROR_\w+|CUDA_SUCCESS)\s*=\s*(\d+)", block, re.S):
        code = int(value)
        text = " ".join(w.strip("* ") for w in doc.split()).strip()
        site = f"{os.path.basename(wheel)}:nvidia/cuda_runtime/include/cuda.h (CUDA_VERSION {version})"
        if code in CUDA_SIG:
            entries.append(
                {
                    "key": name,
                    "format": name,
                    "sample": f"CUDA error {name} ({code})",
                    "site": site,
                    "code": code,
                    "meaning": text[:300],
                    "signature": CUDA_SIG[code],
                }
            )
        else:
            left.append(
                {
                    "key": name,
                    "code": code,
                    "site": site,
                    "why": "printed by frameworks by name/text; "
                    "CUDA-RUNTIME-ERROR and NCCL-CUDA-FAILURE carry the generic causes",
                }
            )
    return {
        "family": "cuda-driver-errors",
        "upstream": "CUDA (nvidia-cuda-runtime wheel)",
        "what": "CUresult codes with their documentation; the ones with a container-specific cause have signatures",
        "tags": [f"CUDA_VERSION {version}"],
        "entries": entries,
        "left_out": left,
    }


# ---- Gloo TCP transport messages (what torch prints after "Gloo connectFullMesh failed with [file:line]") ---------
GLOO_REVS = (
    "87c34ac",
    "86cbf84",
    "31b1f02",
    "HEAD",
)  # 2017-10, 2019-08, 2023-05, newest: the commits pytorch pinned span these
GLOO_CALL = re.compile(r"GLOO_ERROR_MSG\(|GLOO_ENFORCE(?:_[A-Z]+)?\(|TimeoutError\(|IoException\(|signalException\(")


def gloo(mirror: str) -> dict:
    seen: dict[str, dict] = {}
    left: dict[str, dict] = {}
    walked = []
    for rev in GLOO_REVS:
        sha = git(mirror, "rev-parse", "--short=12", rev).strip()
        walked.append(sha)
        files = [
            f
            for f in git(mirror, "ls-tree", "-r", "--name-only", rev, "gloo/transport/tcp/").split()
            if f.endswith((".cc", ".h")) and "/tls/" not in f
        ]
        for path in files:
            lines = (show(mirror, rev, path) or "").splitlines()
            for i, line in enumerate(lines):
                if not GLOO_CALL.search(line) or "define " in line:
                    continue
                m = re.search(r'"((?:[^"\\]|\\.)+)"', " ".join(lines[i : i + 3]))
                if not m:
                    continue
                lit = m.group(1)
                name = os.path.basename(path)
                if "Unable to find address for" in lit:
                    target, sig = seen, "GLOO-SOCKET-IFNAME-BAD"
                    sample = f"[enforce fail at gloo/transport/tcp/{name}:{i + 1}] ifa != nullptr. {lit.strip()} eth9"
                elif len(lit.strip(" :")) < 6:
                    target, sig, sample = left, None, None
                else:
                    target, sig = seen, "GLOO-CONNECT-FULL-MESH"
                    sample = f"Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/{name}:{i + 1}] {lit}"
                e = target.setdefault(lit, {"first": sha})
                e.update(last=sha, site=f"facebookincubator/gloo@{sha}:{path}:{i + 1}", sig=sig, sample=sample)
    entries = [
        {
            "key": k[:60],
            "format": k,
            "sample": e["sample"],
            "site": e["site"],
            "first": e["first"],
            "last": e["last"],
            "signature": e["sig"],
        }
        for k, e in sorted(seen.items())
    ]
    lo = [
        {"key": k[:60], "site": e["site"], "why": "a bare separator (': ', ' ') without message text"}
        for k, e in sorted(left.items())
    ]
    return {
        "family": "gloo",
        "upstream": "facebookincubator/gloo",
        "what": "messages of Gloo's TCP transport "
        "(GLOO_ENFORCE, GLOO_ERROR_MSG, IoException/TimeoutError), as torch prints them after 'Gloo "
        "connectFullMesh failed with [file:line]' or in the enforce banner",
        "tags": walked,
        "entries": entries,
        "left_out": lo,
    }


# ---- UCX error messages of the transports NCCL/MPI jobs use (shared memory, InfiniBand) -------------------------
UCX_TAGS = ("v1.8.0", "v1.12.0", "v1.16.0", "v1.20.0", "v1.22.0")
UCX_DIRS = ("src/uct/sm/mm", "src/uct/ib", "src/ucp/core")


def ucx(mirror: str) -> dict:
    seen: dict[str, dict] = {}
    for tag in UCX_TAGS:
        for hit in git(mirror, "grep", "-n", "-E", r'ucs_error\("', tag, "--", *UCX_DIRS).splitlines():
            _t, path, line, code = hit.split(":", 3)
            m = re.search(r'ucs_error\("((?:[^"\\]|\\.)*)"', code)
            if not m or len(m.group(1)) < 8:
                continue
            e = seen.setdefault(m.group(1), {"first": tag})
            e.update(last=tag, site=f"openucx/ucx@{tag}:{path}:{line}", file=os.path.basename(path), line=line)
    entries = []
    for fmt, e in sorted(seen.items()):
        text = sample_of(fmt)
        # the posix transport running out of /dev/shm (ENOSPC while extending the backing file)
        posix = e["file"] == "mm_posix.c" and ("Not enough memory" in fmt or "No space" in fmt)
        entries.append(
            {
                "key": f"{e['file']}:{fmt[:60]}",
                "format": fmt,
                "sample": f"[1:2:0] {e['file']}:{e['line']}  UCX  ERROR {text}",
                "site": e["site"],
                "first": e["first"],
                "last": e["last"],
                "signature": "UCX-SHM-NOSPACE" if posix else "UCX-ERROR",
            }
        )
    return {
        "family": "ucx",
        "upstream": "openucx/ucx",
        "what": "ucs_error sites of the shared-memory and "
        "InfiniBand transports and UCP core; UCX prefixes each with FILE:LINE UCX ERROR",
        "tags": list(UCX_TAGS),
        "entries": entries,
        "left_out": [],
    }


# ---- sites named by hand and verified in the fetched source -----------------------------------------------
CURATED = [  # (family, repo, tag, path, literal searched, format, sample, signature)
    (
        "gloo",
        "facebookincubator/gloo",
        "HEAD",
        "gloo/transport/tcp/device.cc",
        "Unable to find address for: ",
        "Unable to find address for: %s",
        "Unable to find address for: ^lo",
        "GLOO-SOCKET-IFNAME-BAD",
    ),
    (
        "gloo",
        "facebookincubator/gloo",
        "HEAD",
        "gloo/transport/tcp/helpers.h",
        "timed out connecting: ",
        "Gloo connectFullMesh failed with [%s] timed out connecting: SO_ERROR: %s, remote=[%s]:%d",
        "Gloo connectFullMesh failed with [pair.cc:152] timed out connecting: SO_ERROR: Connection refused, "
        "remote=[127.0.0.1]:1",
        "GLOO-CONNECT-FULL-MESH",
    ),
    (
        "ucx",
        "openucx/ucx",
        "HEAD",
        "src/uct/sm/mm/posix/mm_posix.c",
        "Not enough memory to write total of",
        "Not enough memory to write total of %zu bytes. Please check that /dev/shm ...",
        "mm_posix.c:206  UCX  ERROR Not enough memory to write total of 1 bytes.",
        "UCX-SHM-NOSPACE",
    ),
    (
        "libfabric-efa",
        "ofiwg/libfabric",
        "HEAD",
        "prov/efa/src/efa_base_ep.c",
        "Libfabric error: (%zd) %s",
        "Libfabric error: (%zd) %s",
        "Libfabric error: (-12) Cannot allocate memory",
        "EFA-PROVIDER-ERROR",
    ),
    (
        "libfabric",
        "ofiwg/libfabric",
        "HEAD",
        "src/log.c",
        "%s:%d:%ld:%s:%s:%s:%s():%d<%s> %s",
        "%s:%d:%ld:%s:%s:%s:%s():%d<%s> %s",
        "libfabric:1:1::efa:av:efa_ah_alloc():147<warn> x",
        "LIBFABRIC-WARN",
    ),
]
# PyTorch is too large to snapshot here; these sites were read at the commit named (read_file index).
TORCH = [
    (
        "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp",
        "[{}] is setting up NCCL communicator and retrieving "
        "ncclUniqueId from [{}] via c10d key-value store by key '{}', but store->get('{}') got error: {}",
        "torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] "
        "via c10d key-value store by key '0', but store->get('0') got error: wait timeout after 600000ms",
        "C10D-NCCL-UNIQUEID",
        "root-did-not-arrive",
    ),
    (
        "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp",
        "ProcessGroupNCCL's watchdog got stuck for {} seconds "
        "without making progress in monitoring enqueued collectives.",
        "[E ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID "
        "0(default_pg) Rank 7] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in "
        "monitoring enqueued collectives.",
        "TORCH-WATCHDOG-STUCK",
        None,
    ),
    (
        "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp",
        "NCCL communicator was aborted on rank {}.",
        "RuntimeError: NCCL communicator was aborted on rank 3.",
        "TORCH-NCCL-ABORTED",
        None,
    ),
    (
        "torch/csrc/distributed/c10d/socket.cpp@056b6f38c0c2",
        "The server socket has failed to listen on any local network address. {}",
        "RuntimeError: The server socket has failed to listen on any local network address. The "
        "server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).",
        "C10D-STORE-LISTEN",
        "port-taken",
    ),
    (
        "torch/csrc/distributed/c10d/TCPStoreLibUvBackend.cpp",
        "The server socket has failed to listen on any local "
        "network address. port: {}, useIpv6: {}, code: {}, name: {}, message: {}",
        "RuntimeError: The server socket has "
        "failed to listen on any local network address. port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: "
        "address already in use.",
        "C10D-STORE-LISTEN",
        None,
    ),
    (
        "torch/csrc/distributed/c10d/TCPStore.cpp",
        "Timed out after {} seconds waiting for clients. {}/{} clients joined.",
        "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients joined.",
        "C10D-STORE-WAIT-CLIENTS",
        None,
    ),
    (
        "torch/csrc/distributed/c10d/socket.cpp@056b6f38c0c2",
        "The client socket has failed to connect to {} {}.",
        "[W socket.cpp:663] [c10d] The client socket has failed to connect to [::ffff:255.255.0.0]:29500 (errno: "
        "110 - Connection timed out).",
        "C10D-CLIENT-CONNECT",
        "store-address-not-a-host",
    ),
    (
        "torch/csrc/distributed/c10d/socket.cpp@056b6f38c0c2",
        "The client socket has failed to connect to any network address of ({}, {}).",
        "[E socket.cpp:753] [c10d] The client socket has failed to connect to any network address of (node1, 29500).",
        "C10D-CLIENT-CONNECT",
        None,
    ),
    (
        "torch/csrc/distributed/c10d/socket.cpp@056b6f38c0c2",
        "The client socket has timed out after {} while trying to connect to ({}, {}).",
        "[E socket.cpp:860] [c10d] The client socket has timed out after 60s "
        "while trying to connect to (10.0.0.1, 29500).",
        "C10D-CLIENT-CONNECT",
        None,
    ),
    (
        "torch/csrc/distributed/c10d/socket.cpp@056b6f38c0c2",
        "The client socket cannot be initialized to connect to {} {}.",
        "[W socket.cpp:752] [c10d] The client socket cannot be initialized to connect to [h]:8000 "
        "(errno: 97 - Address family not supported by protocol).",
        # one address of several (tryConnect goes on to the next): a probe, not the failure
        "C10D-ADDRESS-FAMILY-PROBE",
        "ipv6-unavailable-probe",
    ),
    (
        "torch/csrc/distributed/c10d/TCPStore.cpp",
        "recvValue failed on SocketImpl(...)",
        "[W TCPStore.cpp:125] "
        "[c10d] recvValue failed on SocketImpl(fd=1, addr=[a]:1, remote=[b]:2): Connection reset by peer",
        "C10D-STORE-PEER-GONE",
        "store-host-died",
    ),
    (
        "torch/csrc/distributed/c10d/ProcessGroupGloo.cpp",
        "Unable to resolve hostname to a (local) address. Using "
        "the loopback address as fallback. Manually set the network interface to bind to with GLOO_SOCKET_IFNAME.",
        "[W ProcessGroupGloo.cpp:721] Warning: Unable to resolve hostname to a (local) address. Using the loopback "
        "address as fallback. Manually set the network interface to bind to with GLOO_SOCKET_IFNAME.",
        "GLOO-LOOPBACK-FALLBACK",
        None,
    ),
]


def curated(mirrors: str) -> list[dict]:
    fams: dict[str, dict] = {}
    for fam, repo, tag, path, literal, fmt, sample, sig in CURATED:
        mirror = os.path.join(mirrors, repo.replace("/", "+"), "repo")
        text = show(mirror, tag, path)
        if text is None or literal not in text:
            sys.exit(f"{repo}:{path}: '{literal}' not found: update CURATED")
        line = text[: text.index(literal)].count("\n") + 1
        rev = git(mirror, "rev-parse", "--short=12", tag).strip()
        f = fams.setdefault(
            fam,
            {
                "family": fam,
                "upstream": repo,
                "what": "message sites named by hand, verified in the source",
                "tags": [rev],
                "entries": [],
                "left_out": [],
            },
        )
        f["entries"].append(
            {
                "key": f"{os.path.basename(path)}:{line}",
                "format": fmt,
                "sample": sample,
                "site": f"{repo}@{rev}:{path}:{line}",
                "signature": sig,
            }
        )
    torch = {
        "family": "torch-c10d",
        "upstream": "pytorch/pytorch",
        "what": "c10d store, socket and Gloo process "
        "group messages (read at the commit named; the tree is too large to snapshot here)",
        "tags": [],
        "entries": [],
        "left_out": [],
    }
    for site, fmt, sample, sig, cause in TORCH:
        torch["entries"].append(
            {
                "key": fmt[:60],
                "format": fmt,
                "sample": sample,
                "site": "pytorch/pytorch@" + site,
                "signature": sig,
                **({"cause": cause} if cause else {}),
            }
        )
    return list(fams.values()) + [torch]


SIGNATURES = os.path.join(os.path.dirname(OUT), "signatures.json")


def _banner_patterns(families: list[dict]) -> None:
    """OMPI-HELP-BANNER matches every encoded Open MPI headline: its patterns are generated here."""
    heads = sorted(
        {
            e["format"]
            for f in families
            if f["family"] == "open-mpi"
            for e in f["entries"]
            if e["signature"] == "OMPI-HELP-BANNER"
        }
    )
    with open(SIGNATURES, encoding="utf-8") as fh:
        doc = json.load(fh)
    sig = next(s for s in doc["signatures"] if s["id"] == "OMPI-HELP-BANNER")
    sig["patterns"] = [re.escape(h) for h in heads]
    with open(SIGNATURES, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirrors", required=True)
    ap.add_argument("--cuda-wheel", required=True)
    a = ap.parse_args()
    m = lambda repo: os.path.join(a.mirrors, repo.replace("/", "+"), "repo")  # noqa: E731
    families: list[dict] = []
    for f in [
        efa(m("ofiwg/libfabric")),
        ompi(m("open-mpi/ompi"), m("openpmix/prrte")),
        nccl_graph(m("NVIDIA/nccl")),
        gloo(m("facebookincubator/gloo")),
        ucx(m("openucx/ucx")),
        cuda(a.cuda_wheel),
        *curated(a.mirrors),
    ]:
        same = next((g for g in families if g["family"] == f["family"]), None)
        if same is None:
            families.append(f)
        else:  # hand-named sites of a family that also has a generated table
            same["entries"] += f["entries"]
    _banner_patterns(families)
    for f in families:
        f["coverage"] = {
            "sites": len(f["entries"]) + len(f["left_out"]),
            "encoded": len(f["entries"]),
            "left_out": len(f["left_out"]),
        }
    doc = {
        "about": "Message catalogs of the stack around NCCL, generated by tools/triage_messages.py from the "
        "upstream sources (see its docstring to re-run). Each encoded entry names the signature that "
        "recognises it; tests/triage/test_triage_messages.py checks each sample against signatures.json.",
        "families": families,
    }
    with open(OUT, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    for f in families:
        print(f["family"], f["coverage"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
