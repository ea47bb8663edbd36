"""Generate src/imgcheck/data/triage/mpi_causes.json: a cause class for the Open MPI / PRRTE / PMIx help banners
(every help-*.txt topic of the newest patch of each release series: Open MPI v1.10..v5.0, PRRTE v2.0.., PMIx v3.0..;
Open MPI 5 moved the runtime's banners into the PRRTE and PMIx trees) and for the CUDA support's direct
opal_output(0, ...) error lines (btl/smcuda, common/cuda, accelerator/cuda, rcache/gpusm|rgpusm at every release tag
v3.0.0.. of Open MPI: "Failed to register remote memory, rc=%d" is one of them).

    python tools/upstreams/gen_mpi_causes.py /work/.mirror

Each topic is classed by its file and topic name (TOPIC_CLASSES: the help file says which component printed it and
the topic which condition); a class names a signature of data/triage/msgcat_classes.json (or an existing one such as
MPI-DAEMON-START). Topics without a class are counted in `left_out` by reason: command-line usage and option texts,
internal errors with no cause outside Open MPI, checkpoint/restart and tool banners. The fabric banners the fabric
catalog already classes (memlock, fork, device access, unreachable: fabric_messages.json) keep that class.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from gen_fabric_messages import HELP_COMPONENTS, regex_of, walk_help  # noqa: E402
from git_read import Mirror, balanced, split_args, version_key, write_generated  # noqa: E402
from printf_formats import format_of  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/triage/mpi_causes.json"
USAGE = "usage: gen_mpi_causes.py MIRRORS_DIR (the fetch tool's /work/.mirror)"

# (signature, regex over "help-file.txt[topic]"): first match wins. Written from each topic's text in the help file.
TOPIC_CLASSES: tuple[tuple[str, str], ...] = (
    # mapping: the allocation has fewer slots / cpus / nodes than the launch asks for
    (
        "MPI-NOT-ENOUGH-SLOTS",
        r"rmaps-base\.txt\[(?:orte|prte)-rmaps-base:alloc-error\]|rmaps-base\.txt\[(?:out-of-resource|"
        r"not-enough-cpus|insufficient-cpus|seq:not-enough-resources)\]|rmaps-rr\.txt\[[\w-]*:(?:not-enough-cpus|"
        r"not-enough-objs|n-per-node-and-not-enough-slots|per-node-and-too-many-procs)\]|rmaps-ppr\.txt\["
        r"ppr-too-many-procs\]|ras-gridengine\.txt\[(?:empty-nodelist-error|no-nodes-found)\]|rmaps_rank_file\.txt\["
        r"not-all-mapped-alloc\]",
    ),
    # binding: the cpus the launcher may bind to (a cgroup / container cpuset, Slurm's allocation) are fewer or
    # other than the binding policy needs
    (
        "MPI-BINDING",
        r"rmaps-base\.txt\[(?:rmaps:insufficient-cpus|rmaps:no-locale|allocation-overload|failed-assignments|"
        r"insufficient-cpus-per-proc|span-packages-cpuset|span-packages-multiple)\]|odls-(?:pspawn|default|base)\.txt\["
        r"(?:binding generic error|binding not supported|bound to everything|memory binding error|not bound|"
        r"incorrectly-bound|warn not bound)\]|hwloc-base\.txt\[(?:mbind failure|too-many-sites|unfound-cpu)\]|"
        r"rtc-base\.txt\[(?:mismatch-binding|rtc:binding-overload)\]|(?:orted|prted)\.txt\[(?:orted|prted):cannot-bind\]|"
        r"rmaps-ppr\.txt\[ppr-violation\]",
    ),
    # daemon launch: orted / prted could not be started on a node or did not call back
    (
        "MPI-DAEMON-START",
        r"errmgr-base\.txt\[(?:failed-daemon-launch|failed-daemon|no-connect|node-died|no-path)\]|plm-base\.txt\["
        r"daemon-died-(?:no-signal|signal|signal-core)\]|plm-(?:rsh|ssh)\.txt\[(?:no-local-orted|agent-not-found|"
        r"unknown-user|cmd-line-too-long)\]|plm-slurm\.txt\[(?:no-srun|srun-failed|no-hosts-in-list)\]|"
        r"plm-tm\.txt\[tm-spawn-failed\]|plm-lsf\.txt\[lsb_launch-failed\]|ess-base\.txt\[ess-base:execv-error\]|"
        r"plm-base\.txt\[no-available-pls\]|prted\.txt\[prted:init-failure\]|oob-tcp\.txt\[(?:no-listeners|"
        r"excluded-all|no-included-found|version mismatch|missing version)\]",
    ),
    # PMIx wire-up of directly launched ranks (srun / aprun without the PMI Open MPI was built for)
    (
        "MPI-PMIX-INIT",
        r"mpi-runtime\.txt\[(?:no-pmi|no-pmix-but)\]|ess-base\.txt\[(?:slurm-error2|alps-error2)\]|"
        r"pmix-runtime\.txt\[(?:pmix_init:startup:internal-failure|missingdata)\]|prted\.txt\[min-pmix-violation\]",
    ),
    # CUDA IPC between ranks on one node (smcuda / common cuda): the peer's GPU buffer cannot be opened here
    (
        "MPI-CUDA-IPC",
        r"(?:common-cuda|accelerator-cuda)\.txt\[(?:cuIpc(?:OpenMemHandle|GetMemHandle|OpenEventHandle|"
        r"GetEventHandle) failed|cuMemGetAddressRange failed(?: 2)?|cuDeviceCanAccessPeer failed)\]",
    ),
    # the CUDA library Open MPI's CUDA support loads at run time
    (
        "MPI-CUDA-LIBRARY",
        r"common-cuda\.txt\[(?:dlopen failed|dlsym failed|dlopen disabled)\]|mpi-runtime\.txt\[no cuda support\]|"
        r"smcuda\.txt\[CUDA RDMA requested but not supported\]|accelerator-cuda\.txt\[(?:dlopen failed|"
        r"cuCtxGetCurrent failed not initialized)\]",
    ),
    # any other CUDA driver call of the CUDA support failing: read the CUDA error it carries
    ("MPI-CUDA-CALL-FAILED", r"(?:common-cuda|accelerator-cuda)\.txt\[cu\w+(?: \w+)* failed\]"),
    # shared-memory backing file / segment: /dev/shm or the session directory is full or too small
    (
        "MPI-SHM-BACKING",
        r"rtc-hwloc\.txt\[(?:target full|sys call fail)\]|btl-vader\.txt\[sys call fail\]|btl-smcuda\.txt\["
        r"sys call fail\]|shmem-mmap\.txt\[(?:target full|mmap on nfs)\]|btl-sm\.txt\[sys call fail\]",
    ),
    # single-copy shared memory (CMA / knem / xpmem) between ranks in different namespaces or without the module
    (
        "MPI-SHM-SINGLE-COPY",
        r"btl-vader\.txt\[(?:cma-different-user-namespace-(?:error|warning)|knem [\w ]+|xpmem-make-failed)\]|"
        r"btl-sm\.txt\[(?:CMA requested but not available|knem [\w ]+)\]|smsc-knem\.txt\[knem [\w ]+\]|"
        r"smsc-cma\.txt\[[\w -]+\]|smsc-xpmem\.txt\[[\w -]+\]",
    ),
)

# classes that are advisory already; any other topic whose headline is a WARNING gets WARNING_CLASS (the job goes on)
ADVISORY_CLASSES = ("MPI-SHM-SINGLE-COPY",)
WARNING_CLASS = "MPI-WARNING-BANNER"

# why a topic has no class: (reason, regex over key or headline), first match wins
LEFT_OUT: tuple[tuple[str, str], ...] = (
    (
        "command-line usage, option and tool texts (printed for --help or a mistyped option, not by a failing job)",
        r"help-(?:prun|prte|prted|orterun|mpirun|cli|schizo[\w-]*|prte-info|pmix-info|ompi_info|opal-wrapper|"
        r"orte-\w+|prte-\w+-tool|mpi-coll-sm|prterun|pterm|psched)\.txt|\[(?:usage|version|help|[\w-]+-help)\]",
    ),
    (
        "checkpoint/restart, migration and notifier tools (not used by GPU jobs)",
        r"crs|crcp|snapc|migrate|restart|notifier",
    ),
    (
        "launch-spec mistakes with their own wording (rankfile, hostfile, mapping directives): the banner states the fix",
        r"rmaps|rankfile|hostfile|ppr|mindist|rmaps_rank_file",
    ),
    (
        "MCA parameter / variable registration (configuration warnings that state the setting)",
        r"mca-var|mca-param|mca-base",
    ),
    (
        "components GPU clusters do not run (usnic, psm, psm2, portals, ALPS, LSF, PALS, coll ml, oshmem)",
        r"usnic|psm|portals|alps|pals|lsf|coll-ml|oshmem|shmem|spml|sshmem|ikrit|ugni|gni|fca|hcoll|mxm|yalla|ucc",
    ),
    (
        "MPI API usage errors of the application (MPI_Init twice, finalize, unsupported calls)",
        r"mpi-api|mpi_init|mpi_finalize|noconxcpt|osc|dpm|mpi-errors",
    ),
)


def classify(key: str) -> str | None:
    for sig, rx in TOPIC_CLASSES:
        if re.search(rx, key):
            return sig
    return None


def left_reason(key: str) -> str:
    for why, rx in LEFT_OUT:
        if re.search(rx, key, re.I):
            return why
    return "internal, debug or self-explanatory banners with no cause outside the MPI library itself"


# ---- the CUDA support's direct error lines ------------------------------------------------------------------
CUDA_FILES = re.compile(
    r"^opal/mca/(?:btl/smcuda|common/cuda|accelerator/cuda|rcache/r?gpusm)/\w+\.c$|^ompi/mca/common/cuda/\w+\.c$"
)
OUTPUT_CALL = re.compile(r"\bopal_output(?:_verbose)?\s*\(")
# the CUDA IPC registration path: the peer's buffer could not be opened/registered in this process
CUDA_LINE_CLASSES = ((r"(?i)register remote memory|cuIpc|IPC|remote memory", "MPI-CUDA-IPC"),)


def cuda_output_sites(mirror: Mirror) -> tuple[list[str], list[dict]]:
    tags = sorted(mirror.tags(r"v[345]\.\d+\.\d+"), key=version_key)
    seen: dict[str, dict] = {}
    for tag in tags:
        rel = tag.lstrip("v")
        paths = [p for p in mirror.git("ls-tree", "-r", "--name-only", tag).split("\n") if CUDA_FILES.match(p)]
        for path, text in mirror.show_many(tag, paths).items():
            for m in OUTPUT_CALL.finditer(text):
                end = balanced(text, m.end() - 1, "(", ")")
                args = split_args(text[m.end() : end - 1])
                # opal_output(0, fmt, ...) prints always; opal_output_verbose(level, stream, fmt) only when asked
                if len(args) < 2 or args[0].strip() not in ("0", "-1") or "verbose" in m.group(0):
                    continue
                fmt = format_of(args[1])
                if not fmt:
                    continue
                row = seen.setdefault(fmt.strip("\n"), {"format": fmt.strip("\n"), "first": rel, "sites": []})
                row["last"] = rel
                site = f"{path}:{text.count(chr(10), 0, m.start()) + 1}"
                if not row["sites"] or row["sites"][-1][2] != site:
                    row["sites"].append([rel, rel, site])
                else:
                    row["sites"][-1][1] = rel
    return [t.lstrip("v") for t in tags], list(seen.values())


def build(mirrors: str) -> dict:
    rows, left, per_component = [], {}, {}
    for name, spec in HELP_COMPONENTS.items():
        walked = walk_help(mirrors, name, spec)
        mapped = 0
        for m in walked["messages"]:
            keys = [s[3] for s in m["sites"]]
            sigs = sorted({s for s in (classify(k) for k in keys) if s})
            if not sigs:
                why = left_reason(" ".join(keys))
                left[why] = left.get(why, 0) + 1
                continue
            if m["class"] != "other" and m["class"] != "device-access":
                left["classed by the fabric catalog (memlock, fork, unreachable, no transport)"] = (
                    left.get("classed by the fabric catalog (memlock, fork, unreachable, no transport)", 0) + 1
                )
                continue
            if m["format"].upper().startswith("WARNING") and sigs[0] not in ADVISORY_CLASSES:
                sigs = [WARNING_CLASS]  # a banner the job survives: advisory, whatever its topic
            mapped += 1
            rows.append(
                {
                    "component": name,
                    "topics": sorted(set(keys)),
                    "format": m["format"],
                    "first": m["first"],
                    "last": m["last"],
                    "site": f"{spec['repo']}@v{m['last']}:{m['sites'][-1][2]}",
                    "signatures": [{"signature": sigs[0], "regex": m["regex"]}],
                }
            )
        per_component[name] = {
            "repo": spec["repo"],
            "releases": walked["releases"],
            "topics": walked["formats"],
            "headlines": walked["encoded"],
            "mapped": mapped,
        }
    releases, outputs = cuda_output_sites(Mirror(os.path.join(mirrors, "open-mpi+ompi", "repo")))
    cuda_mapped = 0
    for row in outputs:
        sig = next((s for rx, s in CUDA_LINE_CLASSES if re.search(rx, row["format"])), None)
        regex, fixed = regex_of(row["format"])
        if sig is None or fixed < 16:
            left["CUDA support debug/trace opal_output lines"] = (
                left.get("CUDA support debug/trace opal_output lines", 0) + 1
            )
            continue
        cuda_mapped += 1
        rows.append(
            {
                "component": "open-mpi",
                "topics": [],
                "format": row["format"],
                "first": row["first"],
                "last": row["last"],
                "site": f"open-mpi/ompi@v{row['last']}:{row['sites'][-1][2]}",
                "signatures": [{"signature": sig, "regex": regex}],
            }
        )
    total = sum(c["headlines"] for c in per_component.values()) + len(outputs)
    return {
        "source": "open-mpi/ompi, openpmix/prrte, openpmix/openpmix help-*.txt topics (newest patch of each series) "
        "and open-mpi/ompi opal_output(0, ...) sites of the CUDA support at every release tag; generated by "
        "tools/upstreams/gen_mpi_causes.py",
        "confidence": "verified",
        "components": per_component,
        "cuda_output": {"releases": releases, "formats": len(outputs), "mapped": cuda_mapped},
        "coverage": {"formats": total, "mapped": len(rows), "left_out": sum(left.values())},
        "left_out": dict(sorted(left.items())),
        "messages": rows,
    }


if __name__ == "__main__":
    raise SystemExit(write_generated(sys.argv, USAGE, build, OUT))
