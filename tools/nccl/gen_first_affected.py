"""The first affected NCCL release of the fix rows whose fixing hunk was found by hand (issue 32).

Each probe names a fix row (catalogs/nccl_fix_ranges.json by entry), the file and a line (or the function) that
the fixing diff changes or that the defective code path needs, as read from `git diff PREV..FIX -- file`. The script
reads that file at every release tag (git cat-file, nothing checked out) and prints, per row, the first release
whose file holds the line and the last one before the fix that still does; without `--write` it only compares
with the catalog (exit 1 on a difference), with `--write` it sets first_affected, first_affected_source and
first_affected_confidence (derived: the probe line is the fixing hunk's; hypothesis: the tie is a reading).
    NCCL_MIRROR=/path/to/bare/nccl.git python tools/nccl/gen_first_affected.py [--write]
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import nccl_git

CATALOG = Path(__file__).resolve().parents[2] / "compat_matrix" / "catalogs" / "nccl_fix_ranges.json"


@dataclass(frozen=True)
class Probe:
    entry: str  # the fix row
    path: str  # file as named at the releases searched (a renamed file needs one probe per name)
    line: str  # the defective line or the code path's marker, verbatim
    subject: str  # what the line is, in words
    confidence: str = "derived"  # "hypothesis" when tying the note to this code is a reading, not the fixing hunk
    fix_hunk: str = ""  # what the fixing diff changes, when the probe line is not itself the changed line


PROBES: tuple[Probe, ...] = (
    Probe(
        "2.3.7#3",
        "src/bootstrap.cu",
        "struct bootstrapOp {",
        "the bootstrap root keeps each rank's socket and reuses it for its allgather/ring-exchange ops, which"
        " 2.3.7 replaces by per-purpose handles (extHandleRing, extHandleListenFromRoot); in the oldest"
        " release of the mirror, so a lower bound",
    ),
    Probe(
        "2.12.12#5",
        "src/proxy.cc",
        "peers[s].asyncOps.type = 0;",
        "ncclProxyService initialises a few fields of each local peer struct by hand; 2.12.12 memsets the array",
    ),
    Probe(
        "2.12.12#6",
        "src/init.cc",
        "int channelId = (delta+comm->p2pChannels[c]) % comm->p2pnChannels;",
        "p2p connection setup computes its channels with its own formula, not the enqueue's; 2.12.12 makes"
        " both use ncclChannelCompute (tying the cube-mesh hang to this hunk is a reading)",
        "hypothesis",
    ),
    Probe(
        "2.15.5#3",
        "src/init.cc",
        "ncclCudaCallocAsync(&devCommAndChans, 1, comm->deviceStream.stream)",
        "devCommSetup's device allocations on the communicator's strong stream, called from"
        " ncclCommInitRankFunc after init; 2.15.5 moves it into initTransportsRank and yields in groupLaunch's"
        " wait loop (group.cc 'jobsDone', the same first release)",
        "hypothesis",
    ),
    Probe(
        "2.16.2#6",
        "src/init.cu",
        "ncclResult_t ncclCommAbort(ncclComm_t comm)",
        "ncclCommAbort's first release (the fixes are in its path; a lower bound)",
        "hypothesis",
    ),
    Probe(
        "2.21.5#16",
        "src/transport/net_ib.cu",
        "wrap_ibv_get_device_list(&devices, &nIbDevs)) return",
        "ncclIbInit returns from its error paths with ncclIbLock held; 2.21.5 sends them to a fail label that"
        " unlocks it (github.com/NVIDIA/nccl/pull/1164 not read; the tie is a reading of the diff)",
        "hypothesis",
    ),
    Probe(
        "2.26.2#32",
        "src/init.cu",
        "ncclResult_t ncclCommAbort(ncclComm_t comm)",
        "ncclCommAbort's first release (the slow abort is its path; a lower bound)",
        "hypothesis",
    ),
    Probe(
        "2.26.2#35",
        "src/graph/tuning.cc",
        "graphs[a]->pattern == NCCL_TOPO_PATTERN_TREE) busBw *= .85",
        "each rank scales tree bandwidth by its own tree graph's pattern; 2.26.2 uses the pattern maximised over"
        " all ranks (comm->maxTreePattern from allGather3Data)",
    ),
    Probe(
        "2.29.2#31",
        "src/register/coll_reg.cc",
        "if (ipcRegFlag) ncclIpcLocalRegisterBuffer(comm, info->recvbuff",
        "ncclRegisterCollBuffers shares one IPC registration flag between send and receive buffers, so a buffer"
        " registered by earlier p2p calls changes what the collective registers; 2.29.2 splits the flags"
        " (github.com/NVIDIA/nccl/issues/1859; the tie is a reading)",
        "hypothesis",
    ),
    Probe(
        "2.5.6#6",
        "src/include/core.h",
        "devMemSendSize",
        "send buffers exported through CUDA IPC at their own unaligned size; the fix rounds p2p.cc's IPC buffer"
        " sizes up to CUDA_IPC_MIN (2MB)",
        "hypothesis",
        "NVIDIA/nccl@c8c68fb5:src/transport/p2p.cc ('const int sendSize = sizeof(struct ncclSendMem);' and"
        " recvSize get ALIGN_SIZE(..., CUDA_IPC_MIN); that line first in v2.4.6-1, in p2p.cu from v2.4.2-1)",
    ),
    Probe(
        "2.22.3#33",
        "src/graph/tuning.cc",
        "if (cpuArch == NCCL_TOPO_CPU_ARCH_X86 && cpuVendor == NCCL_TOPO_CPU_VENDOR_AMD) return 2.0;",
        "getNetOverhead tunes from this node's own CPU type (ncclTopoCpuType), which 2.22.3 replaces by the"
        " CPU type aligned over all ranks (comm->cpuArch/cpuVendor after the allgather)",
    ),
    Probe(
        "2.22.3#34",
        "src/graph/tuning.cc",
        "if (cpuArch == NCCL_TOPO_CPU_ARCH_X86 && cpuVendor == NCCL_TOPO_CPU_VENDOR_AMD) return 2.0;",
        "getNetOverhead tunes from this node's own CPU type; 2.22.3 aligns all ranks on one CPU type",
    ),
    Probe(
        "2.22.3#35",
        "src/graph/tuning.cc",
        "if (cpuArch == NCCL_TOPO_CPU_ARCH_X86 && cpuVendor == NCCL_TOPO_CPU_VENDOR_AMD) return 2.0;",
        "getNetOverhead tunes from this node's own CPU type; 2.22.3 uses the aligned type",
    ),
    Probe(
        "2.23.4#26",
        "src/graph/topo.h",
        "#define NCCL_TOPO_ID(systemid, localid) (((int64_t)systemid << 56) + localid)",
        "a topology node id adds its local id unmasked, so NUMA id -1 sign-extends into the system id and the"
        " CPU node lands on another 'system' (the 2.23.4 fix masks it with NCCL_TOPO_ID_LOCAL_ID_MASK;"
        " github.com/NVIDIA/nccl-tests/issues/233)",
    ),
    Probe(
        "2.23.4#27",
        "src/graph/topo.h",
        "#define NCCL_TOPO_ID(systemid, localid) (((int64_t)systemid << 56) + localid)",
        "NUMA id -1 sign-extends into the topology node's system id (github.com/NVIDIA/nccl-tests/issues/233)",
    ),
    Probe(
        "2.24.3#8",
        "src/include/socket.h",
        "connect(*fd, &remoteAddr->sa, salen)",
        "connect retried only on ECONNREFUSED (later ETIMEDOUT), never on EHOSTUNREACH, from the oldest"
        " release in the mirror (a lower bound); src/misc/socket.cc from v2.12.7-1 keeps it until 2.24.3",
    ),
    Probe(
        "2.24.3#9",
        "src/misc/socket.cc",
        "static ncclResult_t socketTryAccept",
        "the non-blocking accept that fails on the pending network errors 2.24.3 retries (ENETDOWN, EHOSTUNREACH, ...)",
        "hypothesis",
    ),
    Probe(
        "2.24.3#10",
        "src/misc/ibvwrap.cu",
        "wrap_ibv_modify_qp(struct ibv_qp *qp",
        "ibv_modify_qp called once, its error returned (2.24.3 retries ETIMEDOUT, NCCL_IB_MQP_RETRY_*); in"
        " src/misc/ibvwrap.cc from v2.4.6-1",
    ),
    Probe(
        "2.24.3#20",
        "src/graph/tuning.cc",
        "ncclTopoCpuType(comm->topo, &cpuArch, &cpuVendor, &cpuModel)",
        "ncclTopoTuneModel picks the LL bandwidth row from this node's CPU vendor; 2.24.3 uses the CPU type"
        " aligned over ranks (NCCL_TOPO_CPU_VENDOR_MIXED)",
        "hypothesis",
    ),
    Probe(
        "2.24.3#21",
        "src/graph/tuning.cc",
        "ncclTopoCpuType(comm->topo, &cpuArch, &cpuVendor, &cpuModel)",
        "ncclTopoTuneModel's algorithm/protocol model reads this node's CPU type, not the unified one",
    ),
    Probe(
        "2.26.2#36",
        "src/init.cc",
        "commDestroySync, NULL, free, comm)",
        "the finalize job launched with free as its destructor and freed again on the fail path"
        " (ncclAsyncLaunch frees it when it fails); ncclCommInitRankDev's 'if (job) ncclCommInitJobFree(job);'"
        " the same from v2.24.3-1",
    ),
    Probe(
        "2.27.3#62",
        "src/transport/net_ib.cc",
        "ready == 0) { WARN(",
        "ncclIbIsend/ncclIbIrecv return ncclInternalError on a connection not ready without clearing *request"
        " (2.27.3 sets *request = NULL before returning; github.com/NVIDIA/nccl/issues/1489)",
    ),
    Probe(
        "2.29.2#33",
        "src/transport/p2p.cu",
        "if (cudaGetDeviceCount(&ndev) != cudaSuccess)",
        "the oldest of the 2.29.2 fix's sites: a CUDA query whose failure NCCL tolerates without clearing the"
        " sticky last error (2.29.2 wraps them in CUDASUCCESS/CUDACLEARERROR and CUDACHECK clears it); which"
        " site PyTorch's case hit (github.com/pytorch/pytorch/issues/164402) is not named; 2.3.x not compared",
        "hypothesis",
    ),
    Probe(
        "2.30.3#91",
        "src/gin/gin_host_proxy.cc",
        "->test(collComm, state->request, &state->done);",
        "proxyGinPollCompletions ignores the GIN backend's test() result (NVIDIA/nccl@efbf868e checks it)",
    ),
    Probe(
        "2.30.7#185",
        "src/transport/net_ib/p2p_resiliency.cc",
        "wc->wr_id <= NET_IB_MAX_REQUESTS",
        "the receiver error path accepts wr_id == NET_IB_MAX_REQUESTS (NVIDIA/nccl@8b967feb makes it <)",
    ),
)

# fixes of code that no release before the fix holds: introduced and fixed between two release tags
UNRELEASED: tuple[Probe, ...] = (
    Probe(
        "2.30.7#133",
        "src/os/linux_comm_pair.cc",
        "ncclOsCommPairClose",
        "the comm pair abstraction (NVIDIA/nccl@084f4d7b, for RAS) and its close that leaked the second"
        " descriptor when the first close failed (NVIDIA/nccl@d9aa5d4c) both land after v2.30.4-1",
    ),
)


def _blobs(tags: list[str], path: str) -> dict[str, str]:
    """The file at each tag that has it."""
    texts = nccl_git.blobs([f"{t}:{path}" for t in tags])
    return {t: texts[f"{t}:{path}"] for t in tags if f"{t}:{path}" in texts}


def first_holding(probe: Probe, fixed: str) -> tuple[str | None, str | None]:
    """(first, last) release before `fixed` whose file holds the probe's line."""
    before = [(t, v) for t, v in nccl_git.release_tags() if nccl_git.version_key(v) < nccl_git.version_key(fixed)]
    texts = _blobs([t for t, _ in before], probe.path)
    holding = [v for t, v in before if probe.line in texts.get(t, "")]
    return (holding[0], holding[-1]) if holding else (None, None)


def tag_of(version: str) -> str:
    return next(t for t, v in nccl_git.release_tags() if v == version)


def source_text(probe: Probe, first: str) -> str:
    """first_affected_source as the catalog keeps it: the tag, file and line, then what they are."""
    text = f"NVIDIA/nccl@{tag_of(first)}:{probe.path} ('{probe.line}' first in {tag_of(first)}): {probe.subject}"
    if probe.fix_hunk:
        text += f"; fixing hunk: {probe.fix_hunk}"
    return text + " (tools/nccl/gen_first_affected.py)"


def main(argv: list[str]) -> int:
    doc = json.loads(CATALOG.read_text())
    rows = {r["entry"]: r for r in doc["rows"]}
    bad = 0
    for probe in PROBES:
        fixed = probe.entry.split("#")[0]
        first, last = first_holding(probe, fixed)
        row = rows[probe.entry]
        mark = ""
        if first is None:
            mark, bad = "  NOT FOUND", bad + 1
        elif "--write" in argv:
            row["first_affected"] = first
            row["first_affected_source"] = source_text(probe, first)
            row["first_affected_confidence"] = probe.confidence
            row["note"] = row.get("note", "").replace(
                "first release not traced", "first release: the code the fix changes"
            )
        elif row.get("first_affected") != first or row.get("first_affected_confidence") != probe.confidence:
            mark, bad = f"  DIFFERS from the catalog ({row.get('first_affected')})", bad + 1
        print(f"{probe.entry}: first {first} last {last} ({probe.path}){mark}")
    for probe in UNRELEASED:
        first, _ = first_holding(probe, probe.entry.split("#")[0])
        row = rows[probe.entry]
        mark = ""
        if first is not None:
            mark, bad = f"  IN A RELEASE ({first})", bad + 1
        elif "--write" in argv:
            row["first_affected"] = None
            row["first_affected_source"] = (
                f"no release before the fix has '{probe.line}' in {probe.path}: {probe.subject}"
                " (tools/nccl/gen_first_affected.py)"
            )
            row["phase"] = "never-released"
        elif row.get("phase") != "never-released":
            mark, bad = "  catalog does not say never-released", bad + 1
        print(f"{probe.entry}: in no release ({probe.path}){mark}")
    if "--write" in argv:
        CATALOG.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
