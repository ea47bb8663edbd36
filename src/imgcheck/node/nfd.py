"""Node Feature Discovery: node facts <-> feature labels.

The probe writes a `features.d` file (NFD's `local` source; kubernetes-sigs/node-feature-discovery
docs/usage/customization-guide.md): one `<prefix><name>=<value>` per line. NFD ignores dot-files, so
the file is written as a dot-file and renamed into place; NFD ignores a file larger than 65536 bytes
(source/local/local.go MaxFeatureFileSize, NFD PR #1335), so a bigger one is refused here.

Prefix: `imgcheck.feature.node.kubernetes.io/`. NFD always allows `feature.node.kubernetes.io`
sub-namespaces whatever its -deny-label-ns/-extra-label-ns settings, so the labels appear on every
NFD version without configuring nfd-master.

Reading goes the other way: labels (ours, NFD's built-in ones and GPU Feature Discovery's) -> facts.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

from ..errors import LimitExceededError, UnavailableError
from ..fsutil import atomic_write
from ..model.location import Location
from ..model.node import (
    Gpu,
    Kernel,
    Limits,
    NodeContainerToolkit,
    NodeFabric,
    NodeFacts,
    NodeGpu,
    NodeMig,
    NodeOs,
    NodeRdma,
    Peermem,
)

PREFIX = "imgcheck.feature.node.kubernetes.io/"
MAX_FEATURE_FILE = 65536  # NFD's MaxFeatureFileSize
DEFAULT_FILE = "imgcheck"
NFD_KERNEL_FULL = "feature.node.kubernetes.io/kernel-version.full"
NFD_OS_ID = "feature.node.kubernetes.io/system-os_release.ID"
NFD_OS_VERSION = "feature.node.kubernetes.io/system-os_release.VERSION_ID"
GFD_DRIVER_FULL = "nvidia.com/cuda.driver-version.full"
GFD_DRIVER_PARTS = (
    (
        "nvidia.com/cuda.driver-version.major",
        "nvidia.com/cuda.driver-version.minor",
        "nvidia.com/cuda.driver-version.revision",
    ),
    ("nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor", "nvidia.com/cuda.driver.rev"),
)
GFD_RUNTIME_FULL = "nvidia.com/cuda.runtime-version.full"
GFD_RUNTIME_PARTS = (
    ("nvidia.com/cuda.runtime-version.major", "nvidia.com/cuda.runtime-version.minor"),
    ("nvidia.com/cuda.runtime.major", "nvidia.com/cuda.runtime.minor"),
)
GFD_GPU_COUNT = "nvidia.com/gpu.count"
GFD_GPU_PRODUCT = "nvidia.com/gpu.product"
# GPU Feature Discovery's MIG labels (NVIDIA/k8s-device-plugin README, "Generated Labels"): the strategy, one
# nvidia.com/mig-<profile>.count per profile under the mixed strategy; under the single strategy the product carries
# the profile ("A100-SXM4-40GB-MIG-1g.5gb") and gpu.count counts MIG devices
GFD_MIG_STRATEGY = "nvidia.com/mig.strategy"
_GFD_MIG_COUNT = re.compile(r"^nvidia\.com/mig-(?P<profile>\d+g\.\d+gb(?:\+\w+)?)\.count$")
_GFD_MIG_PRODUCT = re.compile(r"-MIG-(?P<profile>\d+g\.\d+gb(?:\+\w+)?)$")

# label values: <= 63 chars, alphanumeric at both ends, [-_.A-Za-z0-9] between (Kubernetes label syntax)
_LABEL_VALUE = re.compile(r"^(?:[A-Za-z0-9](?:[-_.A-Za-z0-9]{0,61}[A-Za-z0-9])?)?$")


def _bool(value: bool | None) -> str | None:
    return None if value is None else ("true" if value else "false")


def features_of(facts: NodeFacts) -> dict[str, str]:
    """Feature name (without prefix) -> label-safe value; facts that are unknown are left out."""
    memlock = facts.limits.memlock_kib
    fabric = facts.fabric
    raw = {
        "schema": str(facts.schema_version),
        "kernel.release": facts.kernel.release,
        "rdma.stack": facts.rdma.stack,
        "rdma.ofed-version": facts.rdma.ofed_version,
        "rdma.uverbs-abi": None if facts.rdma.uverbs_abi is None else str(facts.rdma.uverbs_abi),
        "rdma.peer-memory-api": _bool(facts.rdma.peer_memory_api),
        "rdma.devices": str(len(facts.rdma.devices)) if "rdma.devices" not in facts.unknown else None,
        "nvidia.driver-version": facts.gpu.driver_version,
        "nvidia.kernel-module": facts.gpu.kernel_module,
        "nvidia.peermem": _bool(facts.gpu.peermem.loaded),
        "nvidia.nv-peer-mem": _bool(facts.gpu.peermem.legacy_nv_peer_mem),
        "limits.memlock-kib": None if memlock is None else ("unlimited" if memlock < 0 else str(memlock)),
        "nvidia.bar1-min-mib": _bar1_min_mib(facts),
        "fabric.nvswitches": None if fabric.nvswitch_pci is None else str(len(fabric.nvswitch_pci)),
        "fabric.fm-installed": _bool(fabric.fm_installed),
        "fabric.fm-version": fabric.fm_version,
        "fabric.fm-running": _bool(fabric.fm_running),
        "fabric.nvlsm-installed": _bool(fabric.nvlsm_installed),
        "fabric.ib-umad-loaded": _bool(fabric.ib_umad_loaded),
        **_toolkit_features(facts),
    }
    return {k: v for k, v in raw.items() if v is not None and _LABEL_VALUE.match(v) and v}


def _toolkit_features(facts: NodeFacts) -> dict[str, str | None]:
    toolkit, mig = facts.container_toolkit, facts.mig
    configs = toolkit.configs
    found = [c.driver_found for c in configs or ()]
    return {
        "ctk.installed": _bool(toolkit.installed),
        "ctk.version": toolkit.toolkit_version,
        "ctk.libnvidia-container-version": toolkit.libnvidia_container_version,
        "ctk.mode": "_".join(sorted({c.mode for c in configs if c.mode})) or None if configs else None,
        "ctk.driver-root-ok": None if not configs or None in found else _bool(all(found)),
        "ctk.cdi-specs": None if toolkit.cdi_specs is None else str(len(toolkit.cdi_specs)),
        "ctk.operator-driver-root": _bool(toolkit.operator_driver_root),
        "mig.instances": None if mig.gpu_instances is None else str(sum(mig.gpu_instances.values())),
    }


def _mig_from_labels(labels: dict[str, str], pick_instances: str | None) -> NodeMig:
    """MIG from imgcheck's own feature, else GPU Feature Discovery's labels; unknown when neither says."""
    profiles = {m["profile"]: int(v) for k, v in labels.items() if (m := _GFD_MIG_COUNT.match(k)) and v.isdigit()}
    single = _GFD_MIG_PRODUCT.search(labels.get(GFD_GPU_PRODUCT, ""))
    if single and labels.get(GFD_GPU_COUNT, "").isdigit():
        profiles[single["profile"]] = int(labels[GFD_GPU_COUNT])
    if pick_instances is not None and pick_instances.isdigit():
        total = int(pick_instances)
        return NodeMig(gpu_instances={"all": total} if total else {}, profiles=profiles or None)
    if profiles:
        return NodeMig(gpu_instances={"all": sum(profiles.values())}, profiles=profiles)
    return NodeMig()


def _bar1_min_mib(facts: NodeFacts) -> str | None:
    """The smallest BAR1 of the node's GPUs in MiB (REG-BAR1-SMALL reads it); left out unless every GPU's is known."""
    sizes = [g.bar1_bytes for g in facts.gpu.gpus]
    if not sizes or any(b is None for b in sizes):
        return None
    return str(min(b for b in sizes if b is not None) >> 20)


def render_features(facts: NodeFacts) -> str:
    lines = [f"# imgcheck node facts for {facts.name}, collected {facts.collected_at or 'unknown'}"]
    lines += [f"{PREFIX}{key}={value}" for key, value in sorted(features_of(facts).items())]
    return "\n".join(lines) + "\n"


def write_features(facts: NodeFacts, directory: str, filename: str = DEFAULT_FILE) -> str:
    """Write the features.d file atomically; returns its path."""
    text = render_features(facts)
    data = text.encode("utf-8")
    if len(data) > MAX_FEATURE_FILE:
        raise LimitExceededError(
            f"NFD feature file would be {len(data)} bytes; NFD ignores files over {MAX_FEATURE_FILE} bytes"
        )
    if not os.path.isdir(directory):
        raise UnavailableError(f"--nfd-dir {directory}: not a directory (mount NFD's features.d there)")
    path = os.path.join(directory, filename)
    # dot-file temporary name: NFD skips it; fsync so a node crash never leaves an empty label file
    atomic_write(path, data, mode=0o644, fsync=True, temp_prefix=f".{filename}-")
    return path


# -- labels -> facts --------------------------------------------------------------------------------
def facts_from_labels(
    name: str, labels: dict[str, str], arch: str | None = None, kernel_release: str | None = None
) -> NodeFacts:
    """What a node's labels say; every fact without a label is unknown with the reason.

    arch and kernel_release: the node's status.nodeInfo (architecture, kernelVersion), used when no label says.
    """
    unknown: dict[str, str] = {}
    sources: dict[str, Location] = {}

    def pick(fact: str, *keys: str) -> str | None:
        """The first of the labels `keys` that is set, recorded as the source of `fact`."""
        for key in keys:
            if labels.get(key):
                sources[fact] = Location.described(f"Kubernetes label {key}")
                return labels[key]
        return None

    def from_info(fact: str, value: str | None, field: str) -> str | None:
        if value:
            sources[fact] = Location.described(f"Kubernetes node status.nodeInfo.{field}")
        return value

    def need(value: str | None, fact: str, why: str) -> str | None:
        if value is None or value == "":
            unknown[fact] = why
            return None
        return value

    no_probe = "no imgcheck label on the node (run the imgcheck probe DaemonSet with NFD, or --annotate)"
    release = need(
        pick("kernel.release", PREFIX + "kernel.release", NFD_KERNEL_FULL)
        or from_info("kernel.release", kernel_release, "kernelVersion"),
        "kernel.release",
        "no kernel label (imgcheck or NFD kernel-version.full)",
    )
    os_facts = NodeOs(
        id=need(pick("os.id", NFD_OS_ID), "os.id", "no NFD system-os_release.ID label"),
        version_id=pick("os.version_id", NFD_OS_VERSION),
    )
    rdma = NodeRdma(
        stack=need(pick("rdma.stack", PREFIX + "rdma.stack"), "rdma.stack", no_probe),
        ofed_version=pick("rdma.ofed_version", PREFIX + "rdma.ofed-version"),
        uverbs_abi=_int(pick("rdma.uverbs_abi", PREFIX + "rdma.uverbs-abi")),
        peer_memory_api=_parse_bool(pick("rdma.peer_memory_api", PREFIX + "rdma.peer-memory-api")),
    )
    if "rdma.stack" not in unknown:
        if rdma.peer_memory_api is None:
            unknown["rdma.peer_memory_api"] = no_probe
        unknown["rdma.devices"] = "device details are only in the imgcheck annotation, not in labels"
    driver = need(
        pick("gpu.driver_version", PREFIX + "nvidia.driver-version", GFD_DRIVER_FULL)
        or _joined(labels, GFD_DRIVER_PARTS, "gpu.driver_version", sources),
        "gpu.driver_version",
        "no imgcheck or GPU Feature Discovery driver-version label",
    )
    count = _int(pick("gpu.gpus", GFD_GPU_COUNT))
    product = pick("gpu.gpus.name", GFD_GPU_PRODUCT)
    bar1_mib = _int(pick("gpu.gpus.bar1_bytes", PREFIX + "nvidia.bar1-min-mib"))
    bar1 = bar1_mib << 20 if bar1_mib is not None else None  # the smallest, stood in for every GPU
    gpu = NodeGpu(
        driver_version=driver,
        kernel_module=need(pick("gpu.kernel_module", PREFIX + "nvidia.kernel-module"), "gpu.kernel_module", no_probe),
        peermem=Peermem(
            loaded=_parse_bool(pick("gpu.peermem.loaded", PREFIX + "nvidia.peermem")),
            version=None,
            legacy_nv_peer_mem=_parse_bool(pick("gpu.peermem.legacy_nv_peer_mem", PREFIX + "nvidia.nv-peer-mem")),
        ),
        gpus=tuple(Gpu(index=i, name=product, bar1_bytes=bar1) for i in range(count or 0)),
        cuda_driver_version=(
            pick("gpu.cuda_driver_version", GFD_RUNTIME_FULL)
            or _joined(labels, GFD_RUNTIME_PARTS, "gpu.cuda_driver_version", sources)
        ),
    )
    if gpu.peermem.loaded is None:
        unknown["gpu.peermem"] = no_probe
    memlock = pick("limits.memlock_kib", PREFIX + "limits.memlock-kib")
    limits = Limits(memlock_kib=-1 if memlock == "unlimited" else _int(memlock))
    if limits.memlock_kib is None:
        unknown["limits.memlock_kib"] = no_probe
    arch = from_info("arch", arch, "architecture") or pick("arch", "kubernetes.io/arch")
    switches = _int(pick("fabric.nvswitch_pci", PREFIX + "fabric.nvswitches"))
    fabric = NodeFabric(
        # the count is all a label carries: the addresses stand in as placeholders
        nvswitch_pci=None if switches is None else tuple(f"nvswitch{i}" for i in range(switches)),
        fm_installed=_parse_bool(pick("fabric.fm_installed", PREFIX + "fabric.fm-installed")),
        fm_version=pick("fabric.fm_version", PREFIX + "fabric.fm-version"),
        fm_running=_parse_bool(pick("fabric.fm_running", PREFIX + "fabric.fm-running")),
        nvlsm_installed=_parse_bool(pick("fabric.nvlsm_installed", PREFIX + "fabric.nvlsm-installed")),
        ib_umad_loaded=_parse_bool(pick("fabric.ib_umad_loaded", PREFIX + "fabric.ib-umad-loaded")),
    )
    installed = _parse_bool(pick("container_toolkit.installed", PREFIX + "ctk.installed"))
    cdi = _int(pick("container_toolkit.cdi_specs", PREFIX + "ctk.cdi-specs"))
    toolkit = NodeContainerToolkit(
        installed=installed,
        toolkit_version=pick("container_toolkit.toolkit_version", PREFIX + "ctk.version"),
        libnvidia_container_version=pick(
            "container_toolkit.libnvidia_container_version", PREFIX + "ctk.libnvidia-container-version"
        ),
        # the count is all a label carries: the paths stand in as placeholders
        cdi_specs=None if cdi is None else tuple(f"cdi-spec{i}" for i in range(cdi)),
        operator_driver_root=_parse_bool(
            pick("container_toolkit.operator_driver_root", PREFIX + "ctk.operator-driver-root")
        ),
    )
    if toolkit.installed is None:
        unknown["container_toolkit.installed"] = no_probe
    mig = _mig_from_labels(labels, pick("mig.gpu_instances", PREFIX + "mig.instances"))
    if mig.gpu_instances is None:
        unknown["mig.gpu_instances"] = "no imgcheck mig.instances or GPU Feature Discovery MIG label"
    return NodeFacts(
        name=name,
        kernel=Kernel(release=release),
        container_toolkit=toolkit,
        mig=mig,
        os=os_facts,
        rdma=rdma,
        gpu=gpu,
        limits=limits,
        labels=dict(labels),
        arch=arch,
        fabric=fabric,
        unknown=unknown,
        notes={"source": "Kubernetes node labels (imgcheck NFD features, NFD and GFD labels)"},
        sources={**label_sources(labels), **sources},
        origin=Location.described(f"Kubernetes node {name}"),
    )


def label_sources(labels: dict[str, str]) -> dict[str, Location]:
    """Each label as a fact (labels.KEY) read from that label."""
    return {f"labels.{key}": Location.described(f"Kubernetes label {key}") for key in labels}


def _joined(
    labels: dict[str, str], spellings: Iterable[Sequence[str]], fact: str, sources: dict[str, Location]
) -> str | None:
    for keys in spellings:  # GFD's current and deprecated spellings both occur in the field
        parts = [labels.get(k) for k in keys]
        if parts[0] and parts[1]:
            sources[fact] = Location.described(f"Kubernetes labels {', '.join(k for k in keys if labels.get(k))}")
            return ".".join(p for p in parts if p)
    return None


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _parse_bool(value: str | None) -> bool | None:
    return {"true": True, "false": False}.get((value or "").lower())
