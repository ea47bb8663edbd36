"""The NCCL release in the image against what is known about releases: known failures (nccl_known_issues) and the
first release that supports the node's GPU generation (nccl_gpu_generations)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from typing import Any

from ..job.model import RUNTIME_DOCKER, RUNTIME_ENROOT
from ..knowledge import providers
from ..model.report import Evidence, Finding
from ..versions import ranges
from . import facts, nccl_effective
from .context import Ctx
from .emit import Outcome, assuming, finding, unknown

RULES = ("NCCL-RELEASE-KNOWN-ISSUE", "NCCL-TOO-OLD-FOR-GPU", "NCCL-RELEASE-LATER-FIX")
NEEDS = {"nccl_features": {"collnet_config_api"}}
# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
REQUIRES = {
    "NCCL-RELEASE-KNOWN-ISSUE": (facts.NCCL,),
    "NCCL-TOO-OLD-FOR-GPU": (facts.NCCL,),
    "NCCL-RELEASE-LATER-FIX": (facts.NCCL,),
}
READS = {
    "NCCL-RELEASE-KNOWN-ISSUE": (facts.NCCL,),
    "NCCL-TOO-OLD-FOR-GPU": (facts.NCCL, facts.GPU_DRIVER),
    "NCCL-RELEASE-LATER-FIX": (facts.NCCL,),
}

# image platform words for the rows' arch (a row's arch is the GOARCH-style name OCI platforms use)
_ARCH_ALIASES = {"aarch64": "arm64", "x86_64": "amd64"}


def check(ctx: Ctx) -> Iterator[Outcome]:
    if ctx.nccl is None:
        return  # no NCCL: nothing applies; NCCL unknown is asked by the contract (REQUIRES facts.NCCL)
    outcomes = [*_known_issues(ctx), *_gpu_generation(ctx), *_later_fixes(ctx)]
    # the engine's contract is one outcome kind per rule and evaluation: when one known issue is shown and another's
    # conditions are not, the finding is kept and the other row's unknown is dropped (both name an upgrade)
    found = {o.id for o in outcomes if isinstance(o, Finding)}
    yield from (o for o in outcomes if isinstance(o, Finding) or o.rule not in found)


def _image_arch(ctx: Ctx) -> str | None:
    platform = ctx.image.platform or ""
    parts = platform.split("/")
    arch = parts[1] if len(parts) > 1 else None
    return _ARCH_ALIASES.get(arch, arch) if arch else (ctx.node.arch or None)


def _known_issues(ctx: Ctx) -> Iterator[Outcome]:
    nccl = ctx.nccl
    assert nccl is not None  # check() returns before this without NCCL
    version = nccl.version
    for row in ctx.matrix.rows("nccl_known_issues"):
        hit = ranges.within(version, row["nccl_min"], row["nccl_below"])
        if hit is False:
            continue
        if row.get("arch") and (arch := _image_arch(ctx)) is not None and arch != row["arch"]:
            continue
        span = f"{row['nccl_min']}..{row['nccl_below'] or '(no fixed release)'}"
        if hit is None:
            yield unknown(
                "NCCL-RELEASE-KNOWN-ISSUE",
                f"NCCL {version} may or may not be in {span} ({row['issue']}); "
                f"it also needs {'; '.join(row.get('conditions') or ()) or 'nothing more'}",
            )
            continue
        name, value = row.get("workaround_setting"), row.get("workaround_value")
        applied = ctx.setting(name) if name else None
        if applied is not None and applied.value.strip() == value:
            continue  # the image already avoids it
        # Each condition the row names is evaluated where node or image facts can show it (_FACT_CONDITIONS): one
        # shown not to hold drops the row, one whose facts are missing makes the row an unknown asking for them. A
        # condition no fact can show (the workload's) is named in the finding, which then ranks below findings
        # whose trigger was shown (issue 31).
        states = {c: _condition(ctx, c) for c in row.get("conditions") or []}
        if any(v is False for v in states.values()):
            continue  # a condition the row needs is shown not to hold here
        if open_ := [c for c, v in states.items() if v is None and c.partition(":")[0] in _FACT_CONDITIONS]:
            yield unknown(
                "NCCL-RELEASE-KNOWN-ISSUE",
                f"NCCL {version} is in {span} ({row['issue']}: {row['summary']}), "
                f"but whether this node meets its conditions is unknown: {', '.join(open_)}",
                facts=tuple(dict.fromkeys(_open_fact(ctx, c) for c in open_)),
            )
            continue
        if _past_phase(ctx, row.get("phase")):
            yield unknown(
                "NCCL-RELEASE-KNOWN-ISSUE",
                f"NCCL {version} is in {span} ({row['issue']}: {row['summary']}), but that failure shows "
                f"{_PHASE_WORDS['init']} and the job's collectives already ran (job.collectives_ran): "
                "not decided as this job's cause",
                facts=("job.collectives_ran",),
            )
            continue
        unshown = tuple(c for c, v in states.items() if v is None)
        # a trigger only the workload decides (the collective the job runs, its scale) is assumed, never shown: the
        # finding is conditional on it (issue 32: a warning that fires the same on a working job is a false alarm)
        workload = tuple(c for c in unshown if c.partition(":")[0] == WORKLOAD)
        # the reader sees the trigger, not the catalog's condition kind
        unshown = tuple(c.partition(":")[2] if c in workload else c for c in unshown)
        evidence = ctx.nccl_evidence() + ([applied.evidence] if applied else []) + _condition_evidence(ctx, states)
        found = finding(
            ctx.matrix,
            "NCCL-RELEASE-KNOWN-ISSUE",
            evidence,
            variant=_known_issue_variant(row),
            conditions="; ".join(unshown) or "nothing more",
            shown="; ".join(["the version range", *(c for c, v in states.items() if v)]),
            symptoms=_with_phase(row.get("symptoms") or ["not stated in the sources"], row.get("phase")),
            nccl=version,
            issue=row["summary"],
            nccl_min=row["nccl_min"],
            fixed_in=row["nccl_below"] or "no release yet",
            workaround=f"{name}={value}" if name else (row.get("fix") or "none known"),
        )
        found = dataclasses.replace(found, unshown=unshown) if unshown else found
        yield assuming(found, _workload_words(workload), WORKLOAD_FACT) if workload else found


WORKLOAD = "workload"  # a condition kind (catalog nccl_known_issues): only the job's program decides it
WORKLOAD_FACT = "job.workload"  # what the job's ranks do (its collectives, scale): no spec or image shows it


def _workload_words(conditions: tuple[str, ...]) -> str:
    return "the job does what triggers it (" + "; ".join(c.partition(":")[2] for c in conditions) + ")"


# when a row's failure shows (nccl_known_issues and nccl_fix_ranges `phase`), so a reader can hold it against what the
# job did: a failure at communicator creation is not the cause of a job whose collectives already ran
_PHASE_WORDS = {
    "init": "at communicator creation (init, bootstrap, connection setup), before the first collective completes",
    "collective": "while collectives run",
    "capture": "while CUDA graphs are captured",
    "teardown": "when communicators are destroyed or aborted",
}


def _past_phase(ctx: Ctx, phase: str | None) -> bool:
    """A failure of communicator creation on a job whose collectives are stated to have run (job.collectives_ran):
    the job is past the phase that failure needs. Only a stated True decides; not stated is never read as either."""
    return phase == "init" and ctx.job is not None and ctx.job.collectives_ran is True


def _with_phase(symptoms: list[str], phase: str | None) -> str:
    words = _PHASE_WORDS.get(phase or "")
    return "; ".join(symptoms) + (f"; when: {words}" if words else "")


def _known_issue_variant(row: dict[str, Any]) -> str | None:
    """The finding's wording: a setting avoids it (with or without a fixed release), only an upgrade does, or another
    build of the library does (the row's `fix`, e.g. an NCCL built with a newer CUDA)."""
    if any(c.startswith("framework:") for c in row.get("conditions") or ()):
        return "framework-floor"
    if row.get("workaround_setting"):
        return "no-fix-release" if row["nccl_below"] is None else None
    return "rebuild" if row.get("fix") else "upgrade-only"


def _gpu_generation(ctx: Ctx) -> Iterator[Outcome]:
    nccl = ctx.nccl
    assert nccl is not None  # check() returns before this without NCCL
    rule = "NCCL-TOO-OLD-FOR-GPU"
    names = sorted({g.name for g in ctx.node.gpu.gpus if g.name})
    if not names:
        return
    rows = ctx.matrix.rows("nccl_gpu_generations")
    for name in names:
        row = next((r for r in rows if re.search(r["pattern"], name)), None)
        if row is None:
            continue
        ok = ranges.at_least(nccl.version, row["nccl_min"])
        if ok is None:
            yield unknown(rule, f"NCCL {nccl.version} may or may not be {row['nccl_min']} or newer ({name})")
        elif not ok:
            yield finding(
                ctx.matrix,
                rule,
                ctx.nccl_evidence() + [ctx.node_ev("gpu.gpus.name", name)],
                nccl=nccl.version,
                gpu=name,
                generation=row["generation"],
                nccl_min=row["nccl_min"],
            )
        return  # one finding per node: the GPUs of one node are one generation in practice


# release-note entries (catalogs/nccl_release_notes.json) that are failures: a hang, a crash, corruption, or an error
# that stops the job (init or a collective returns one); slowdowns are named only with their platform (_candidates)
_FAILURE_SYMPTOMS = {"hang", "crash", "data-corruption", "error"}
_LISTED = 5  # entries named in the finding's text; the rest are counted
# phases of nccl_fix_ranges rows (issue 32) that no image, node or launch fact predicts: building NCCL, code no release
# shipped, and error paths (a crash or double free after another failure, whose cause is that failure)
_NOT_PREDICTED_PHASES = ("build", "never-released", "error-path")


# condition kinds node or image facts can show (_condition); any other is the workload's, never shown by facts
_FACT_CONDITIONS = (
    "arch",
    "gpu",
    "gpus",
    "topology",
    "transport",
    "collnet",
    "net",
    "driver-cuda",
    "container",
    "cumem",
    "env-on",
    "mnnvl",
    "nccl-build-cuda",
    "nccl-sass-lacks",
    "gpu-nvlink",
    "gpu-name",
    "gpu-p2p",
    "framework",
    "platform",
)

# condition kinds only the traced rows use (_traced_condition reads the setting, the launch or the image's plugins);
# any kind outside these and _FACT_CONDITIONS is the workload's (the collective the job calls, its scale, other
# containers on the node): no fact imgcheck reads shows it, so a finding asks for it by these words
_TRACED_FACT_CONDITIONS = ("setting", "plugin", "job")


# the fact (engine/facts.py names) whose answer decides a condition kind, for the unknown's `facts`
_CONDITION_FACTS = {
    "arch": "node.arch",
    "gpu": "node.gpu.gpus",
    "gpus": "node.gpu.gpus",
    "gpu-p2p": "node.gpu.p2p",
    "topology": "node.rdma",
    "transport": "node.rdma",
    "net": "node.rdma",
    "driver-cuda": "node.gpu.driver_version",
    "container": "job.security",
    "cumem": "setting.NCCL_CUMEM_ENABLE",
    "collnet": "setting.NCCL_COLLNET_ENABLE",
    "mnnvl": "node.gpu.gpus",
    "nccl-build-cuda": "image.nccl",
    "nccl-sass-lacks": "image.nccl",
    "gpu-nvlink": "node.gpu.gpus",
    "gpu-name": "node.gpu.gpus",
    "framework": "image.packages",
    "platform": "node.gpu.dxg_device",
    "setting": "image.env",
    "plugin": "image.nccl_net_plugins",
    "job": "job",
}


def _is_workload(cond: str) -> bool:
    """A condition no fact imgcheck reads can show (the job's collectives, its scale, other containers on the node)."""
    kind = cond.partition(":")[0]
    return kind not in _FACT_CONDITIONS and kind not in _TRACED_FACT_CONDITIONS


def _condition_fact(cond: str) -> str:
    kind, _, value = cond.partition(":")
    if kind == "env-on":
        return f"setting.{value}"
    return _CONDITION_FACTS.get(kind, f"condition.{kind}")


def _open_fact(ctx: Ctx, cond: str) -> str:
    """The fact an undecided condition waits for; a derived setting names the fact its derivation lacks."""
    if cond.partition(":")[0] == "cumem":
        return nccl_effective.cumem(ctx).fact or _condition_fact(cond)
    return _condition_fact(cond)


def _condition(ctx: Ctx, cond: str) -> bool | None:
    """Whether the facts show one condition a release-note entry names (None: the facts cannot tell)."""
    kind, _, value = cond.partition(":")
    if kind == "arch":
        arch = _image_arch(ctx)
        return None if arch is None else arch == value
    if kind == "gpu":
        names = [g.name for g in ctx.node.gpu.gpus if g.name]
        row = next((r for r in ctx.matrix.rows("nccl_gpu_generations") if r["generation"] == value), None)
        if not names or row is None:
            return None
        return any(re.search(row["pattern"], n) for n in names)
    if kind == "topology" and value == "several-nics":
        # NCCL's IB transport makes one network device per active port; without port facts, one per device
        devices = [d for d in ctx.node.rdma.devices if providers.provider_of(d) != "efa"]
        if not devices:
            return None if ctx.node_has_rdma is not False else False
        return sum(max(len(d.ports), 1) for d in devices) >= 2
    if kind == "topology" and value == "multi-port-nic":
        return _multi_port_nic(ctx)
    if kind == "topology":
        nics = [d for d in ctx.node.rdma.devices if d.ports]
        gpus = ctx.node.gpu.gpus
        if not nics or not gpus:
            return None
        if value == "1-nic-per-gpu":
            return len(nics) == len(gpus)
        if value == "fewer-nics-than-gpus":
            return len(nics) < len(gpus)
        if value == "more-nics-than-gpus":
            return len(nics) > len(gpus)
        return None
    if kind == "transport" and value == "socket":
        return _socket_transport(ctx)
    if kind == "transport" and value in ("ib", "roce"):
        layers = {p.link_layer for d in ctx.node.rdma.devices for p in d.ports}
        if not layers or None in layers:
            return None if ctx.node_has_rdma is not False else False
        return ("InfiniBand" if value == "ib" else "Ethernet") in layers
    if kind == "collnet":
        # IB SHARP through the CollNet plugin: before collnet_config_api only NCCL_COLLNET_ENABLE="1" turns it on;
        # from that release the application's communicator config can too, so an unset variable shows nothing
        s = ctx.setting("NCCL_COLLNET_ENABLE")
        if s is not None:
            return s.value.strip() == "1"
        if ctx.image.unknown_reason("env"):
            return None
        config_api = ctx.nccl_at_least("collnet_config_api")
        return None if config_api is not False else False
    if kind == "gpu-p2p" and value == "none":
        # the probe's CUDA peer-access reading decides; else NVLink parts reach each other over NVLink, so NCCL uses
        # P2P, not SHM, between them; any other GPU may or may not have peer access (the PCIe platform, a VM, the
        # driver decide): asked (a known issue that needs it is an unknown naming node.gpu.p2p, not a warning)
        if ctx.node.gpu.p2p is not None:
            return not ctx.node.gpu.p2p
        names = [g.name for g in ctx.node.gpu.gpus if g.name]
        parts = ctx.matrix.rows("gpu_nvlink_parts")
        if names and all(any(re.search(r["pattern"], n) for r in parts) for n in names):
            return False
        return None
    if kind == "gpu-nvlink" and value == "board":
        # NVLink board parts (SXM on HGX/DGX baseboards, superchips: gpu_nvlink_parts) reach NVSwitches or other GPUs
        # over NVLink; a model not listed may still have an NVLink bridge, so no match decides nothing
        names = [g.name for g in ctx.node.gpu.gpus if g.name]
        parts = ctx.matrix.rows("gpu_nvlink_parts")
        return True if names and any(re.search(r["pattern"], n) for r in parts for n in names) else None
    if kind == "mnnvl":
        return _mnnvl(ctx)
    if kind == "gpus" and value == "several":
        return _several_gpus(ctx)
    if kind == "env-on" and value:
        # set to anything but empty or "0" (how NCCL 2.17.1's cudawrap.cc and CUDA read CUDA_LAUNCH_BLOCKING)
        s = ctx.setting(value)
        if s is not None:
            return s.value.strip() not in ("", "0")
        job = ctx.job
        if ctx.image.unknown_reason("env") or (job is not None and (job.env_incomplete or job.open_flags)):
            return None
        return False
    if kind == "driver-cuda" and value.startswith(">="):
        return nccl_effective.driver_cuda_at_least(ctx, value[2:])
    if kind == "container" and value == "no-sys-nice":
        return _no_sys_nice(ctx)
    if kind == "cumem" and value in ("on", "off"):
        # NCCL's own decision: the setting, else the release's default and, at auto, the driver and GPUs
        on = nccl_effective.cumem(ctx).on
        return None if on is None else on == (value == "on")
    if kind == "gpu-name" and value:
        # a model the notes name ("DGX H800"): the node's GPU names as the driver reports them
        names = [g.name for g in ctx.node.gpu.gpus if g.name]
        return any(re.search(rf"(?i)\b{re.escape(value)}\b", n) for n in names) if names else None
    if kind == "net" and value == "ib-vnics":
        return _ib_vnics(ctx)
    if kind == "platform" and value == "wsl2":
        # WSL2's GPU paravirtualization (/dev/dxg): no PCI device of the GPU under /sys
        return ctx.node.gpu.dxg_device
    if kind == "framework" and ">=" in value:
        return _framework_at_least(ctx, *value.split(">=", 1))
    if kind == "nccl-build-cuda" and value.startswith("<"):
        # the CUDA the NCCL library was built with (its build string, "+cudaX.Y"): it decides which GPU targets
        # the library carries as machine code and which run as PTX compiled for an older architecture
        built = ctx.nccl.cuda if ctx.nccl is not None else None
        return ranges.below(built, value[1:]) if built else None
    if kind == "nccl-build-cuda" and value.startswith("="):
        built = ctx.nccl.cuda if ctx.nccl is not None else None
        return built.split(".")[:2] == value[1:].split(".")[:2] if built else None
    if kind == "nccl-sass-lacks" and value:
        return _sass_lacks(ctx, value)
    if kind == "container" and value == "gpu-subset":
        return _container_gpu_subset(ctx)
    if kind == "plugin" and value == "none":
        # an external network plugin may or may not offer makeVDevice: a plugin present is not shown either way
        if ctx.image.nccl_net_plugins or ctx.image_unknown("nccl_net_plugins"):
            return None
        return True
    return None  # nvls, pxn, shm, numa, ...: not in the facts imgcheck reads


def _framework_at_least(ctx: Ctx, name: str, minimum: str) -> bool | None:
    """The image has the framework `name` (a Python distribution or OS package of that name, pip, conda or Debian) at
    `minimum` or newer: how a framework x NCCL floor (nccl_known_issues) reads a torch source or conda build, which
    links the image's own libnccl.so.2 rather than a pinned wheel."""
    versions = [p.version for p in ctx.image.packages if p.name == name]
    if not versions:
        return None if ctx.image_unknown("packages") else False
    hits = [ranges.at_least(v, minimum) for v in versions]
    if any(h for h in hits):
        return True
    return None if None in hits else False


def _socket_transport(ctx: Ctx) -> bool | None:
    """NCCL's socket transport carries the inter-node traffic: NCCL_NET=Socket or NCCL_IB_DISABLE=1 chooses it, and a
    node without any RDMA device leaves NCCL nothing else (src/net.cc tries the IB transport, then sockets). With RDMA
    devices present, whether the container gets them and the image can load libibverbs decides it."""
    net = ctx.setting("NCCL_NET")
    if net is not None:
        return net.value.strip().lower() == "socket"
    off = ctx.setting("NCCL_IB_DISABLE")
    if off is not None and off.value.strip() == "1":
        return True
    if ctx.node_has_rdma is False:
        return True
    if ctx.lib is None and ctx.lib_unknown is None and not ctx.image.nccl_net_plugins:
        # no libibverbs in the image: NCCL's IB transport cannot load it (ibvwrap dlopens libibverbs.so) and no
        # plugin brings another network, so NCCL falls back to its socket transport
        return True
    return None


def _multi_port_nic(ctx: Ctx) -> bool | None:
    """A NIC card with two or more ports NCCL uses, so that one GPU is nearest to both: a verbs device with several
    ports, or (ConnectX from the 4 on, where each port is its own PCI function and verbs device) two devices on one PCI
    bus:device. NCCL's IB transport makes one network device per port; EFA goes through the plugin."""
    devices = [d for d in ctx.node.rdma.devices if providers.provider_of(d) != "efa"]
    if not devices:
        return None if ctx.node_has_rdma is not False else False
    if any(len(d.ports) >= 2 for d in devices):
        return True
    slots = [d.pci_address.rpartition(".")[0] for d in devices if d.pci_address]
    if len(set(slots)) < len(slots):
        return True
    if len(slots) < len(devices) or any(not d.ports for d in devices):
        return None  # a device without its PCI address (or ports) may share a card with another
    return False


def _mnnvl(ctx: Ctx) -> bool | None:
    """Multi-node NVLink (MNNVL): the launch gives the container an IMEX channel (/dev/nvidia-caps-imex-channels,
    which NCCL's src/mnnvl.cc needs for fabric handles); no, when every GPU of the node is a part whose NVLink stays
    inside its board (gpu_nvlink_parts multi_node_nvlink 'no') or not an NVLink part at all."""
    job = ctx.job
    if job is not None and job.devices and any("imex-channels" in d for d in job.devices):
        return True
    names = [g.name for g in ctx.node.gpu.gpus if g.name]
    if not names:
        return None
    parts = ctx.matrix.rows("gpu_nvlink_parts")
    kinds = [next((r["multi_node_nvlink"] for r in parts if re.search(r["pattern"], n)), "no") for n in names]
    return None if "possible" in kinds else False


def _sass_lacks(ctx: Ctx, value: str) -> bool | None:
    """The library carries no machine code (SASS) for an SM ("120/12.8": sm_120, which NCCL's makefile builds from
    CUDA 12.8 on), so the GPU runs its kernels JIT-compiled from an older architecture's PTX: read from the fat
    binaries when inspect read them, else from the CUDA the library was built with."""
    sm, _, first_cuda = value.partition("/")
    nccl = ctx.nccl
    if nccl is None or not sm.isdigit():
        return None
    if nccl.sass_archs is not None:
        return int(sm) not in nccl.sass_archs
    return ranges.below(nccl.cuda, first_cuda) if nccl.cuda and first_cuda else None


def _container_gpu_subset(ctx: Ctx) -> bool | None:
    """The container sees fewer GPUs than its node has: the launch's GPU count (docker --gpus, nvidia.com/gpu, ...)
    or NVIDIA_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES naming fewer devices than the node's. NCCL finds the peer
    ranks of the same host (hostname and boot id) by bus ID; a peer GPU outside this set is one NCCL cannot see."""
    node_gpus = len(ctx.node.gpu.gpus)
    for name in ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"):
        s = ctx.setting(name)
        if s is None:
            continue
        value = s.value.strip()
        if value.lower() in ("all", "") or not node_gpus:
            continue
        if value.lower() in ("none", "void"):
            return False
        return len([v for v in value.split(",") if v.strip()]) < node_gpus
    job = ctx.job
    if job is None or job.gpus is None or not node_gpus:
        return None
    if job.gpus < 0:
        return False if not (job.env_incomplete or job.open_flags) else None
    return job.gpus < node_gpus


def _several_gpus(ctx: Ctx) -> bool | None:
    """Two or more GPUs of one node in the job: the launch's GPU count when it gives one, else the node's GPUs."""
    job = ctx.job
    if job is not None and job.gpus is not None and job.gpus >= 0:
        return job.gpus >= 2
    gpus = ctx.node.gpu.gpus
    if len(gpus) >= 2:
        return True
    return False if len(gpus) == 1 else None


def _no_sys_nice(ctx: Ctx) -> bool | None:
    """The container runs under a seccomp profile that refuses get_mempolicy/mbind (NUMA) without CAP_SYS_NICE:
    Docker's default profile does; a privileged container, an added SYS_NICE or Enroot (no seccomp) does not. A
    Kubernetes pod depends on the cluster's default seccomp profile, which the spec does not show."""
    job = ctx.job
    if job is None:
        return None
    if job.privileged or (job.cap_add and ({"SYS_NICE", "ALL"} & set(job.cap_add))):
        return False
    if job.runtime == RUNTIME_ENROOT:
        return False
    if job.runtime == RUNTIME_DOCKER:
        return None if job.open_flags else True
    return None


def _ib_vnics(ctx: Ctx) -> bool | None:
    """NCCL's own IB/RoCE transport builds the topology from virtual NICs (src/graph/topo.cc ncclTopoProcessNet:
    physical devices are used only with NCCL_TOPO_DUMP_FILE set or a network without makeVDevice, like sockets):
    the node has verbs devices that are not EFA (EFA goes through the aws-ofi-nccl plugin)."""
    if ctx.setting("NCCL_TOPO_DUMP_FILE") is not None:
        return False
    net = ctx.setting("NCCL_NET")
    if net is not None and net.value.strip().lower() == "socket":
        return False
    has_rdma = ctx.node_has_rdma
    if has_rdma is False:
        return False
    providers_ = ctx.node_providers()
    if providers_ is not None and providers_ and providers_ <= {"efa"}:
        return False
    return None if has_rdma is None else True


def _condition_evidence(ctx: Ctx, states: dict[str, bool | None]) -> list[Evidence]:
    """Node facts behind the conditions a known issue needed (GPU names, NIC and GPU counts)."""
    out = []
    if any(c.startswith("gpu:") for c in states):
        out.append(ctx.node_ev("gpu.gpus.name", ", ".join(sorted({g.name for g in ctx.node.gpu.gpus if g.name}))))
    if any(c.startswith(("topology:", "net:")) for c in states):
        nics = sorted(d.name for d in ctx.node.rdma.devices if d.ports and d.name)
        out.append(
            ctx.node_ev("rdma.devices", f"{len(nics)} NICs ({', '.join(nics)}) for {len(ctx.node.gpu.gpus)} GPUs")
        )
    return out


@dataclasses.dataclass(frozen=True)
class _Fix:
    """A release-note fix the image's NCCL predates, with what the facts decide about each of its conditions."""

    row: dict[str, Any]
    trace: dict[str, Any] | None
    states: dict[str, bool | None]

    @property
    def decided(self) -> list[str]:
        """Conditions shown true, a link layer alone not counted (nearly every RDMA node shows one; NCCL's socket
        transport, shown only where no RDMA device is used, is narrower)."""
        return [c for c, v in self.states.items() if v and c not in ("transport:ib", "transport:roce")]

    @property
    def open(self) -> list[str]:
        return [c for c, v in self.states.items() if v is None]

    @property
    def performance(self) -> bool:
        return bool(_symptom(self.row, self.trace) == "performance")

    def fit(self) -> tuple[int, int, int, int, int, tuple[int, ...]]:
        """Sort key, best first: more conditions the facts decide true, then a fix with conditions over a generic
        one, one whose first affected release was traced (this release is shown to have the code) over one named by
        its words, fewer left to ask, the worse symptom, and only then the nearer fixing release (issue 32)."""
        return (
            -len(self.decided),
            0 if self.states else 1,
            0 if self.trace and self.trace["first_affected"] else 1,
            len(self.open),
            _severity(_symptom(self.row, self.trace)),
            _version_key(self.row["release"]),
        )


# symptom classes of release-note entries (tools/nccl/gen_release_notes.py), worst first: the tie-break after fit
_SEVERITY_ORDER = ("data-corruption", "crash", "hang", "error", "leak", "performance")


def _symptom(row: dict[str, Any], trace: dict[str, Any] | None) -> str | None:
    """A traced row's own symptom class when it gives one (the notes' wording classed it otherwise), else the notes'."""
    own = (trace or {}).get("symptom")
    return str(own) if own else row["symptom"]


def _severity(symptom: str | None) -> int:
    return _SEVERITY_ORDER.index(symptom) if symptom in _SEVERITY_ORDER else len(_SEVERITY_ORDER)


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(x) if x.isdigit() else 0 for x in version.split("."))


def _newest(fixes: list[_Fix]) -> str:
    return str(max((f.row["release"] for f in fixes), key=_version_key))


def _candidates(ctx: Ctx) -> list[_Fix]:
    """Every release-note fix of a failure (and every traced performance fix) that the image's NCCL predates and
    whose conditions the facts do not decide false, best fitting first."""
    nccl = ctx.nccl
    assert nccl is not None  # check() returns before this without NCCL
    # a curated row (nccl_known_issues) that already covers this release's fix says it better: its range is sourced
    curated = {
        r["nccl_below"]
        for r in ctx.matrix.rows("nccl_known_issues")
        if ranges.within(nccl.version, r["nccl_min"], r["nccl_below"])
    }
    traced = {r["entry"]: r for r in ctx.matrix.rows("nccl_fix_ranges")}
    out: list[_Fix] = []
    for row in ctx.matrix.rows("nccl_release_notes"):
        trace = traced.get(row["entry"])
        failure = row["kind"] in ("fix", "known-issue") and row["symptom"] in _FAILURE_SYMPTOMS
        # performance fixes are a family of their own (issue 32): "slow, not failing", named only where a fact narrows
        # them (_later_fixes), never mixed into the failure lists
        slow = row["kind"] == "fix" and row["symptom"] == "performance"
        if not (trace or failure or slow):
            continue
        if trace and (trace.get("same_as") or trace.get("phase") in _NOT_PREDICTED_PHASES):
            # named elsewhere (a curated known issue, an earlier entry), or a phase no image predicts: a source build,
            # a commit never released, or an error path that only follows another failure (triage names those)
            continue
        if ranges.at_least(nccl.version, row["release"]) is not False:
            continue  # the image's NCCL has the fix (or may have it)
        if row["release"] in curated and not trace:
            # a curated row fixed in this release may be this entry; a traced entry is its own bug, never hidden
            continue
        if trace and trace["first_affected"] and ranges.at_least(nccl.version, trace["first_affected"]) is False:
            continue  # the image's NCCL predates the code the fix changes
        if trace:
            states = {c: _traced_condition(ctx, c) for c in trace["conditions"] or []}
        else:
            conditions = list(row["conditions"] or [])
            for name in row["settings"] or []:
                if ctx.setting(name) is not None:
                    conditions.append(f"setting:{name}")
            states = {c: (True if c.startswith("setting:") else _condition(ctx, c)) for c in conditions}
        if any(v is False for v in states.values()):
            continue  # a condition the fix needs is shown not to hold: not listed
        out.append(_Fix(row, trace, states))
    return sorted(out, key=_Fix.fit)


def _later_fixes(ctx: Ctx) -> Iterator[Outcome]:
    """Failures fixed in releases after the image's NCCL, from every release's notes, ranked by fit (_Fix.fit): named
    when the facts show every condition the entry names; counted in one unknown when they cannot tell. An entry whose
    bug was traced to its first release (catalogs/nccl_fix_ranges.json) is skipped for an older NCCL, takes its
    conditions from that row, and when they are all shown is a warning; the others never rank above info: a version
    range is weaker evidence than a mechanism whose conditions were shown (issue 31 ranks by evidence)."""
    nccl = ctx.nccl
    assert nccl is not None  # check() returns before this without NCCL
    rule = "NCCL-RELEASE-LATER-FIX"
    shown: list[_Fix] = []
    shown_traced: list[_Fix] = []
    undecided: list[_Fix] = []
    asked: list[_Fix] = []
    slow: list[_Fix] = []
    for fix in _candidates(ctx):
        if fix.trace and _past_phase(ctx, fix.trace.get("phase")):
            undecided.append(fix)  # a setup failure, and the job's collectives ran: not named as its cause
            continue
        if fix.performance:
            # slow, not failing: named when every condition a fact can show holds and either a fact narrowed it or
            # its first release was traced (a regression with both ends); the job's own conditions are asked
            facts_hold = all(v or (v is None and _is_workload(c)) for c, v in fix.states.items())
            if facts_hold and fix.trace and fix.decided:
                asked.append(fix)  # its own finding (variant traced-performance), as a traced failure's
            elif facts_hold and (fix.decided or (fix.trace and fix.trace["first_affected"])):
                slow.append(fix)
            continue
        if fix.states and fix.decided and all(fix.states.values()):
            (shown_traced if fix.trace else shown).append(fix)
        elif (
            fix.trace
            and fix.states
            and fix.trace["first_affected"]
            and all(v is not None or _is_workload(c) for c, v in fix.states.items())
        ):
            # every condition a fact can show is shown; the rest are the workload's, asked by name (issue 32). A row
            # without a traced first release is the notes' words only: named when the facts show all its conditions
            # (above), else counted below
            asked.append(fix)
        elif not fix.performance:
            undecided.append(fix)
    for fix in shown_traced:
        assert fix.trace is not None  # shown_traced holds traced fixes only
        if fix.performance:
            asked.append(fix)  # a slowdown is never a warning: named as info with nothing left to ask
            continue
        # a traced fix whose every condition is shown is a known issue of this release, ranked as one (warning)
        yield finding(
            ctx.matrix,
            "NCCL-RELEASE-KNOWN-ISSUE",
            ctx.nccl_evidence() + _traced_evidence(ctx, fix.trace),
            variant="traced",
            nccl=nccl.version,
            issue=fix.row["text"],
            nccl_min=fix.trace["first_affected"] or "an unknown release",
            fixed_in=fix.row["release"],
            shown=", ".join(fix.trace["conditions"] or []),
            symptoms=_with_phase(fix.trace["symptoms"] or ["nothing stated"], fix.trace.get("phase")),
            traced=fix.trace["first_affected_source"],
        )
    yield from _asked_traced(ctx, sorted(asked, key=_Fix.fit), undecided)
    yield from _slow(ctx, slow)
    if shown:
        listed = "; ".join(
            f"{f.row['release']}: {f.row['text']} ({', '.join(f.row['conditions'] or [])})" for f in shown[:_LISTED]
        )
        more = f"; and {len(shown) - _LISTED} more" if len(shown) > _LISTED else ""
        yield finding(
            ctx.matrix,
            rule,
            ctx.nccl_evidence(),
            nccl=nccl.version,
            count=len(shown),
            entries=listed + more,
            newest=_newest(shown),
            undecided=len(undecided),
        )
    elif undecided:
        conds = sorted({c for f in undecided for c in (f.open or ["none named"])})
        example = undecided[0].row  # the best fitting (_Fix.fit), not the nearest release
        yield unknown(
            rule,
            f"NCCL {nccl.version} predates {len(undecided)} release-note fixes of hangs, crashes, errors or corruption "
            f"whose conditions the facts cannot show ({', '.join(conds)}), e.g. {example['release']}: {example['text']}",
        )


def _slow(ctx: Ctx, slow: list[_Fix]) -> Iterator[Outcome]:
    """Performance fixes and regressions (severity performance) the image's NCCL predates, as one info finding: the
    job runs, more slowly than with the fixing release. Each names what the facts showed and what it still needs."""
    nccl = ctx.nccl
    assert nccl is not None  # check() returns before this without NCCL
    if not slow:
        return
    slow = sorted(slow, key=_Fix.fit)

    def one(f: _Fix) -> str:
        trace = f.trace or {}
        start = f" (from {trace['first_affected']})" if trace.get("first_affected") else ""
        shown = ", ".join(c for c, v in f.states.items() if v) or "the version range"
        asked = f"; applies if {' and '.join(f.open)}" if f.open else ""
        return f"{f.row['release']}{start}: {f.row['text']} (shown: {shown}{asked})"

    entries = "; ".join(one(f) for f in slow[:_LISTED])
    more = f"; and {len(slow) - _LISTED} more" if len(slow) > _LISTED else ""
    found = finding(
        ctx.matrix,
        "NCCL-RELEASE-LATER-FIX",
        ctx.nccl_evidence(),
        variant="performance",
        nccl=nccl.version,
        count=len(slow),
        nearest=f"{slow[0].row['release']}: {slow[0].row['text']}",
        entries=entries + more,
        newest=_newest(slow),
    )
    open_ = tuple(dict.fromkeys(c for f in slow for c in f.open))
    yield dataclasses.replace(found, unshown=open_) if open_ else found


def _asked_traced(ctx: Ctx, asked: list[_Fix], undecided: list[_Fix]) -> Iterator[Outcome]:
    """Traced fixes whose fact conditions all hold and whose remaining conditions are the workload's: one finding per
    fix that a fact narrowed (a GPU subset, a GPU generation, a setting), one listing those only the workload
    decides, headed by the best fitting. Both are info: the job may never do what triggers them, and the finding says
    what to check. The engine keeps one outcome kind per rule, so the fixes whose conditions the facts cannot decide
    are named in the text."""
    nccl = ctx.nccl
    assert nccl is not None  # check() returns before this without NCCL
    rule = "NCCL-RELEASE-LATER-FIX"
    rest = {
        "undecided": len(undecided),
        "undecided_conditions": ", ".join(sorted({c for f in undecided for c in (f.open or ["none named"])})),
    }
    workload_only = []
    for fix in asked:
        trace = fix.trace
        assert trace is not None  # asked holds traced fixes only
        # a link layer alone is shown on nearly every RDMA node: a fix of its own needs a narrower fact shown
        if not fix.decided:
            workload_only.append(fix)
            continue
        open_ = fix.open
        found = finding(
            ctx.matrix,
            rule,
            ctx.nccl_evidence() + _traced_evidence(ctx, trace),
            variant="traced-performance" if fix.performance else "traced-asks",
            nccl=nccl.version,
            issue=fix.row["text"],
            nccl_min=trace["first_affected"] or "an unknown release",
            fixed_in=fix.row["release"],
            shown=", ".join(c for c, v in fix.states.items() if v),
            asked="; ".join(open_) or "nothing more",
            symptoms=_with_phase(trace["symptoms"] or ["nothing stated"], trace.get("phase")),
            traced=trace["first_affected_source"],
            **rest,
        )
        yield dataclasses.replace(found, unshown=tuple(open_)) if open_ else found
    if not workload_only:
        return
    # the best fitting first (_Fix.fit: the worse symptom, then the nearer release); the rest are counted
    entries = "; ".join(
        f"{f.row['release']}: {f.row['text']} (from {(f.trace or {}).get('first_affected') or 'an unknown release'}; "
        f"applies if {' and '.join(f.open)}; prints: {'; '.join((f.trace or {}).get('symptoms') or ['nothing stated'])})"
        for f in workload_only[:_LISTED]
    ) + (f"; and {len(workload_only) - _LISTED} more" if len(workload_only) > _LISTED else "")
    found = finding(
        ctx.matrix,
        rule,
        ctx.nccl_evidence(),
        variant="traced-workload",
        nccl=nccl.version,
        count=len(workload_only),
        nearest=f"{workload_only[0].row['release']}: {workload_only[0].row['text']}",
        entries=entries,
        newest=_newest(workload_only),
        **rest,
    )
    yield dataclasses.replace(found, unshown=tuple(dict.fromkeys(c for f in workload_only for c in f.open)))


def _traced_condition(ctx: Ctx, cond: str) -> bool | None:
    """A condition of a traced fix (nccl_fix_ranges): settings and the launch are read here, the rest as for known
    issues; words no fact shows are None (named, never shown)."""
    kind, _, value = cond.partition(":")
    if kind == "setting" and value:
        name, eq, want = value.partition("=")
        s = ctx.setting(name)
        if s is None:
            return None if ctx.image.unknown_reason("env") else False
        return s.value.strip() == want if eq else True
    if kind == "nccl-build-cuda" and value == "above-driver":
        built = ctx.nccl.cuda if ctx.nccl is not None else None
        have = ctx.node.gpu.cuda_driver_version
        if not built or not have:
            return None
        return ranges.below(have, built)
    if kind == "plugin" and value == "external":
        if ctx.image_unknown("nccl_net_plugins"):
            return None
        return bool(ctx.image.nccl_net_plugins)
    if kind in _FACT_CONDITIONS and value:
        return _condition(ctx, cond)
    return None


def _traced_evidence(ctx: Ctx, trace: dict[str, Any]) -> list[Evidence]:
    out = []
    for cond in trace["conditions"] or []:
        kind, _, value = cond.partition(":")
        if kind == "setting" and (s := ctx.setting(value.partition("=")[0])) is not None:
            out.append(s.evidence)
    return out
