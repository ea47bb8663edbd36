"""Generate four message catalogs of the tools a GPU/RDMA job's failure log often comes from, each read from the
tool's source at every release tag, each failure format with a cause class (signatures in
src/imgcheck/data/triage/msgcat2_classes.json) or counted as left out:

- perftest_messages.json: github:linux-rdma/perftest src/*.c, every `fprintf(stderr, "...")` (QP to RTR/RTS,
  device, GID and port failures of ib_write_bw and friends);
- dkms_messages.json: github:dell/dkms `dkms` / `dkms.in`, every `die N "..."` / `report_build_problem N "..."`;
- mpich_pmi_messages.json: github:pmodels/mpich, every `**pmi...` entry of the errnames.txt files (the texts MPICH's
  error stack prints for PMI / PMIx client failures, "PMI_KVS_Get returned %d");
- nvshmem_messages.json: github:NVIDIA/nvshmem src/ error and warning prints (the GPU-memory registration transport
  skipped without peer memory);
- nvml_plugin_messages.json: github:NVIDIA/k8s-device-plugin (and gpu-feature-discovery inside it), every Go string
  literal naming NVML's load or init failure ("could not load NVML library", "Failed to initialize NVML: %v");
- ctk_messages.json: github:NVIDIA/nvidia-container-toolkit cmd/, internal/, pkg/, every error, warning and panic
  literal of the runtime, its legacy hook and nvidia-ctk (the hook that finds no nvidia-container-cli, a driver
  capability it does not know, NVIDIA_VISIBLE_DEVICES ignored for an unprivileged container, the image's CUDA
  requirement; classes in ctk_classes.json).

    python tools/upstreams/gen_tool_messages.py /work/.mirror [OUT.json ...]   # all families, or the ones named
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from gen_fabric_messages import regex_of  # noqa: E402
from git_read import Mirror, version_key  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "src/imgcheck/data/triage"
USAGE = "usage: gen_tool_messages.py MIRRORS_DIR [OUT.json ...] (MIRRORS_DIR: the fetch tool's /work/.mirror)"
_MIN_FIXED = 16  # less fixed text than this would claim unrelated lines


@dataclass(frozen=True)
class Family:
    out: str
    repo: str  # owner/name
    tags: str  # release tag regex
    paths: str  # regex over the tree's paths
    strings: str  # regex whose group 1 is one message format
    classes: tuple[tuple[str, str], ...]  # (signature, regex over the format), first match wins
    about: str


_GO_NVML = r'"([^"\n]*[Nn][Vv][Mm][Ll][^"\n]*)"'  # one-line Go literals naming NVML (no backtracking)
FAMILIES = (
    Family(
        "perftest_messages.json",
        "linux-rdma/perftest",
        r"^(?:[vV]|perftest-)?\d+\.\d+(?:\.\d+)?(?:-\d+\.\d+)?$",  # V4.2-0.5, 4.4-0.8, 23.04.0-0.23, 26.04.17
        r"^src/[\w]+\.c$",
        r'fprintf\(\s*stderr\s*,\s*"((?:[^"\\]|\\.)*)"',
        (
            ("PERFTEST-QP-CONNECT", r"(?i)modify QP.*\bto (?:RTR|RTS)|Unable to Connect the HCA|connect QPs? to"),
            ("PERFTEST-GID", r"(?i)\bgid\b"),
            (
                "PERFTEST-NO-DEVICE",
                r"(?i)Did not detect devices|IB device .* not found|Unable to find the Infiniband|"
                r"No IB devices found|Couldn't get context for|Couldn't get device list",
            ),
            ("PERFTEST-PORT", r"(?i)port .*(?:not active|state)|Couldn't query port|Unable to query port|link layer"),
        ),
        "perftest (ib_write_bw, ib_send_lat, ...) error lines on stderr",
    ),
    Family(
        "dkms_messages.json",
        "dell/dkms",
        r"^v\d+\.\d+(?:\.\d+)*$",
        r"^dkms(?:\.in)?$",
        r'(?:\bdie|report_build_problem)\s+\d+\s+\$?"((?:[^"\\]|\\.)*)"',
        (
            ("DKMS-CONF-MISSING", r"(?i)locate dkms\.conf|Bad conf file|find module source directory"),
            (
                "DKMS-HEADERS-MISSING",
                r"(?i)kernel headers for kernel .* cannot be found|headers .* not (?:found|installed)",
            ),
            ("DKMS-BUILD-FAILED", r"(?i)Bad return status for module build|build .* failed|missing BUILD_DEPENDS"),
        ),
        "DKMS errors (printed after 'Error! ')",
    ),
    Family(
        "mpich_pmi_messages.json",
        "pmodels/mpich",
        r"^v\d+\.\d+(?:\.\d+)?$",
        r"errnames\.txt$",
        r"(?m)^\*\*pmix?_\w+(?: [^:\n]*)?:(.+)$",
        (("MPICH-PMI-FAILED", r"."),),
        "MPICH error-stack texts of PMI / PMIx client calls (errnames.txt)",
    ),
    Family(
        "nvml_plugin_messages.json",
        "NVIDIA/k8s-device-plugin",
        r"^v?\d+\.\d+\.\d+(?:-beta\d*)?$",
        # the plugin's own code and the NVML bindings it vendors (gpu-monitoring-tools before go-nvml)
        r"^(?!tests/)(?!vendor/(?!github\.com/NVIDIA/(?:gpu-monitoring-tools|go-nvml)/))(?:.*/)?[\w-]+(?<!_test)\.go$",
        _GO_NVML,
        (
            (
                "K8S-DEVICE-PLUGIN-NVML-LOAD",
                r"(?i)could not load NVML|Failed to initiali[sz]e NVML|nvml init failed|failed to start nvml|"
                r"error loading nvml|failed to load nvml",
            ),
        ),
        "NVIDIA k8s-device-plugin / gpu-feature-discovery NVML load and init failures",
    ),
    Family(
        "ctk_messages.json",
        "NVIDIA/nvidia-container-toolkit",
        r"^v\d+\.\d+\.\d+$",
        r"^(?:cmd|internal|pkg)/(?:.*/)?[\w-]+(?<!_test)\.go$",
        r'(?:Errorf|errors\.New|Panicln|Panicf|Fatalf?|Warningf|Warnf)\(\s*"((?:[^"\\\n]|\\.)*)"',
        (
            ("CTK-HOOK-NO-NVIDIA-CONTAINER-CLI", r"couldn't find binary nvidia-container-cli"),
            ("CTK-UNKNOWN-DRIVER-CAPABILITY", r"(?i)unknown driver capability|unsupported capabilities found"),
            ("CTK-MIG-NEEDS-PRIVILEGED", r"MIG_(?:CONFIG|MONITOR)_DEVICES in non privileged container"),
            (
                "CTK-VISIBLE-DEVICES-IGNORED",
                r"Ignoring devices (?:specified in NVIDIA_VISIBLE_DEVICES|requested by environment variable)",
            ),
            ("CTK-RUNTIME-MODE-INVALID", r"invalid runtime mode"),
            ("HOST-NVC-REQUIREMENT-CUDA", r"^requirements not met"),
            ("HOST-CDI-UNRESOLVABLE", r"could not resolve CDI devices|unresolvable CDI"),
        ),
        "NVIDIA Container Toolkit runtime, legacy hook and nvidia-ctk errors, warnings and panics",
    ),
    Family(
        "nvshmem_messages.json",
        "NVIDIA/nvshmem",
        r"^v\d+\.\d+\.\d+(?:-\d+)?$",  # the public repository starts at v3.4.5-0: earlier releases are binary only
        r"^src/.*\.(?:c|cpp|cu|h)$",
        r'NVSHMEMI_(?:ERROR_PRINT|WARN_PRINT|ERROR_EXIT|(?:NULL_)?ERROR_JMP)\([^"]{0,80}?"((?:[^"\\]|\\.)*)"',
        (("NVSHMEM-NO-PEERMEM", r"nv_peer_mem|nvidia_peermem"),),
        "NVSHMEM error and warning prints (NVSHMEMI_ERROR_PRINT / _WARN_PRINT / _ERROR_JMP / _ERROR_EXIT)",
    ),
)


# GDRCopy (issue 32): its own library, kernel module and test prints, and the GDRCopy sites of its consumers
_GDRCOPY_CLASSES = (
    (
        "GDRCOPY-VERSION-MISMATCH",
        r"(?i)minimum required gdrdrv|requires libgdrapi version|gdrdrv might be too old|gdrdrv is too old|"
        r"It might be too old|built for v%d\.%d but loaded|GDRCopy >= \S+ required",
    ),
    (
        "GDRCOPY-OPEN-FAILED",
        r"(?i)Is gdrdrv driver installed|error opening driver|requires gdrdrv or CUDA driver|failed to open gdr copy",
    ),
    (
        "GDRCOPY-PIN-FAILED",
        r"(?i)nvidia_p2p_get_pages.*failed|(?<!un)gdr_pin_buffer(?:_v2)?\(.*failed|(?<!un)pin_buffer failed",
    ),
    ("GDRCOPY-MAP-FAILED", r"(?i)while mapping handle|gdr_map\(.*failed|gdrcopy map failed|mapping dma_buf_fd"),
)
GDRCOPY_FAMILIES = (
    Family(
        "gdrcopy_messages.json",
        "NVIDIA/gdrcopy",
        r"^v\d+\.\d+(?:\.\d+)?$",
        r"^(?:src/)?(?:gdrapi\.c|gdrdrv/gdrdrv\.c|cuda_wrapper\.h)$|^(?:tests/)?(?:common\.hpp|sanity\.cpp)$",
        r'(?:\bgdr_(?:err|warn)\(|\bgdr_msg\(\s*\w+\s*,|\bfprintf\(\s*std(?:err|out)\s*,)\s*"((?:[^"\\]|\\.)*)"',
        _GDRCOPY_CLASSES,
        "GDRCopy's libgdrapi (gdr_err/gdr_warn to stderr), gdrdrv (gdr_msg/gdr_err to the kernel log, prefixed "
        "'gdrdrv:<function>:') and its tests' (gdrcopy_sanity, copybw) error prints",
    ),
    Family(
        "ucx_gdrcopy_messages.json",
        "openucx/ucx",
        r"^v1\.\d+\.\d+$",
        r"^src/uct/cuda/gdr_copy/[\w]+\.c$",
        r'\bucs_(?:error|warn|diag)\(\s*"((?:[^"\\]|\\.)*)"',
        _GDRCOPY_CLASSES,
        "UCX's gdr_copy transport (uct_gdr_copy md/iface/ep) error and warning prints",
    ),
    Family(
        "nccl_gdrcopy_messages.json",
        "NVIDIA/nccl",
        r"^v2\.\d+\.\d+-1$",
        r"^src/(?:misc/gdrwrap\.cc|include/gdrwrap\.h)$",
        r'\bWARN\(\s*"((?:[^"\\]|\\.)*)"',
        _GDRCOPY_CLASSES,
        "NCCL's GDRCopy wrapper (gdrwrap) WARN prints",
    ),
)


def _format_of(raw: str) -> str:
    fmt = raw.replace('\\"', '"').replace("\\n", "\n").replace("\\t", " ")
    fmt = re.sub(r"\$\{?[\w\[\]@#]+\}?", "%s", fmt)  # shell variables (dkms) print as text
    fmt = re.sub(r"%[-+# 0-9.]*[vqT]", "%s", fmt)  # Go's verbs (the device plugin) print as text
    return fmt.strip().split("\n")[0].strip()


def build_family(mirrors: str, fam: Family) -> dict:
    repo = Mirror(os.path.join(mirrors, fam.repo.replace("/", "+"), "repo"))
    tags = sorted(repo.tags(fam.tags), key=lambda t: version_key(".".join(re.findall(r"\d+", t))))
    seen: dict[str, dict] = {}
    for tag in tags:
        paths = [p for p in repo.git("ls-tree", "-r", "--name-only", tag).splitlines() if re.search(fam.paths, p)]
        for path, text in repo.show_many(tag, paths).items():
            for m in re.finditer(fam.strings, text):
                fmt = _format_of(m.group(1))
                if not fmt:
                    continue
                row = seen.setdefault(fmt, {"first": tag})
                row["last"] = tag
                row["site"] = f"{fam.repo}@{tag}:{path}:{text.count(chr(10), 0, m.start()) + 1}"
    rows, left = [], 0
    for fmt, row in sorted(seen.items()):  # row: first, last, site
        regex, fixed = regex_of(fmt)
        sig = next((s for s, rx in fam.classes if re.search(rx, fmt)), None) if fixed >= _MIN_FIXED else None
        if sig:
            rows.append({"format": fmt, **row, "signatures": [{"signature": sig, "regex": regex}]})
        else:
            left += 1
    return {
        "source": f"{fam.repo} at every release tag ({len(tags)}): {fam.about}; generated by "
        "tools/upstreams/gen_tool_messages.py",
        "confidence": "verified",
        "releases": tags,
        "coverage": {"formats": len(seen), "mapped": len(rows), "left_out": left},
        "left_out": {
            "why": "formats without a cause class here (usage, argument and progress messages, cleanup failures) "
            f"and formats with less than {_MIN_FIXED} fixed characters",
            "count": left,
        },
        "messages": rows,
    }


def main(argv: list[str]) -> int:
    import json

    if len(argv) < 2 or not os.path.isdir(argv[1]):
        print(USAGE, file=sys.stderr)
        return 2
    wanted = set(argv[2:])  # output file names to regenerate; none: all
    for fam in FAMILIES + GDRCOPY_FAMILIES:
        if wanted and fam.out not in wanted:
            continue
        doc = build_family(argv[1], fam)
        (DATA / fam.out).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{fam.out}: {doc['coverage']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
