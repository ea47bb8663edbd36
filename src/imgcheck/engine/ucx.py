"""UCX in the image that leaves a multi-node job no (fast) transport between nodes: UCX_TLS settings,
and InfiniBand transport modules that need symbol versions the image's libibverbs/libmlx5 lack.

UCX_TLS is an allow-list (`^` negates it, `\\name` disables aliasing); its aliases expand as
openucx/ucx@v1.22.0-rc3:src/ucp/core/ucp_context.c ucp_tl_aliases lists them. With only shared-memory,
self or GPU-copy transports allowed, ucp_ep_create to a rank on another node fails: wireup finds no
active-messages transport (src/ucp/wireup/select.c, "no %s transport to %s") and returns
UCS_ERR_UNREACHABLE ("Destination is unreachable").
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from ..knowledge.settings import Setting
from ..model.location import Location
from ..model.report import Evidence
from . import facts
from .context import Ctx
from .emit import Outcome, decided, finding, unknown

RULES = (
    "UCX-TLS-NO-INTERNODE",
    "UCX-IB-MODULE-VERSIONS",
    "UCX-NO-IB-TRANSPORT",
    "ENV-UCX-NET-DEVICES-NOT-ON-NODE",
    "UCX-TLS-NO-GPU-TRANSPORT",
)
# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
REQUIRES = {
    "UCX-TLS-NO-INTERNODE": (facts.UCX,),
    "UCX-IB-MODULE-VERSIONS": (facts.UCX,),
    "UCX-NO-IB-TRANSPORT": (facts.UCX,),
    "ENV-UCX-NET-DEVICES-NOT-ON-NODE": (facts.setting("UCX_NET_DEVICES"),),
    "UCX-TLS-NO-GPU-TRANSPORT": (facts.UCX, facts.setting("UCX_TLS")),
}
READS = {
    "UCX-TLS-NO-INTERNODE": (facts.UCX, facts.setting("UCX_TLS", "UCX_NET_DEVICES", "OMPI_MCA_pml")),
    "UCX-IB-MODULE-VERSIONS": (facts.UCX,),
    "UCX-NO-IB-TRANSPORT": (facts.UCX, facts.setting("UCX_TLS", "UCX_NET_DEVICES", "OMPI_MCA_pml"), facts.NODE_RDMA),
    "ENV-UCX-NET-DEVICES-NOT-ON-NODE": (facts.setting("UCX_NET_DEVICES"), facts.UCX, facts.NODE_RDMA),
    "UCX-TLS-NO-GPU-TRANSPORT": (facts.UCX, facts.setting("UCX_TLS"), facts.GPU_DRIVER),
}

# transports that reach another node (verbs/mlx5 IB and RoCE, EFA SRD, TCP, Cray uGNI)
INTERNODE = frozenset(
    {
        "rc_verbs",
        "ud_verbs",
        "rc_mlx5",
        "ud_mlx5",
        "dc_mlx5",
        "gga_mlx5",
        "srd",
        "rc_gda",
        "tcp",
        "ugni_smsg",
        "ugni_rdma",
        "ugni_udt",
    }
)
# transports that stay inside the node
INTRANODE = frozenset(
    {
        "self",
        "posix",
        "sysv",
        "xpmem",
        "knem",
        "cma",
        "cuda_copy",
        "cuda_ipc",
        "gdr_copy",
        "rocm_copy",
        "rocm_ipc",
        "rocm_gdr",
        "ze_copy",
        "ze_ipc",
        "ze_gdr",
        "gaudi_gdr",
    }
)
ALIASES = {
    "mm": {"posix", "sysv", "xpmem"},
    "sm": {"posix", "sysv", "xpmem", "knem", "cma"},
    "shm": {"posix", "sysv", "xpmem", "knem", "cma"},
    "ib": {"rc_verbs", "ud_verbs", "rc_mlx5", "ud_mlx5", "dc_mlx5", "gga_mlx5", "srd", "rc_gda"},
    "ud_v": {"ud_verbs"},
    "ud_x": {"ud_mlx5"},
    "ud": {"ud_mlx5", "ud_verbs"},
    "rc_v": {"rc_verbs"},
    "rc_x": {"rc_mlx5"},
    "rc": {"rc_mlx5", "rc_verbs"},
    "dc": {"dc_mlx5"},
    "dc_x": {"dc_mlx5"},
    "ugni": {"ugni_smsg", "ugni_rdma", "ugni_udt"},
    "cuda": {"cuda_copy", "cuda_ipc", "gdr_copy"},
    "rocm": {"rocm_copy", "rocm_ipc", "rocm_gdr"},
    "ze": {"ze_copy", "ze_ipc", "ze_gdr"},
    "gaudi": {"gaudi_gdr"},
    "gga": {"gga_mlx5"},
}


def allowed_internode(value: str) -> tuple[set[str] | None, set[str]]:
    """(inter-node transports UCX_TLS allows, or None for all; names it does not know)."""
    text = value.strip()
    negate = text.startswith("^")
    items = [i.strip() for i in text.lstrip("^").split(",") if i.strip()]
    if not items or (not negate and "all" in items):
        return None, set()
    named: set[str] = set()
    strange: set[str] = set()
    for item in items:
        if item.startswith("\\"):
            names = {item[1:]}
        else:
            names = ALIASES.get(item, {item})
        for name in names:
            (named if name in INTERNODE or name in INTRANODE else strange).add(name)
    return (set(INTERNODE) - named if negate else named & INTERNODE), strange


def allowed(value: str) -> set[str] | None:
    """Every transport UCX_TLS allows (inter- and intra-node), or None for all."""
    text = value.strip()
    negate = text.startswith("^")
    items = [i.strip() for i in text.lstrip("^").split(",") if i.strip()]
    if not items or (not negate and "all" in items):
        return None
    named = {n for i in items for n in ({i[1:]} if i.startswith("\\") else ALIASES.get(i, {i}))}
    return (set(INTERNODE | INTRANODE) - named) if negate else named


# The CUDA transports a GPU job's UCX needs, and what it loses without each (UCX docs, "GPU support" and UCX_TLS):
# cuda_copy detects and copies GPU memory; cuda_ipc moves GPU memory between processes of one node over NVLink/P2P.
GPU_TRANSPORTS = ("cuda_copy", "cuda_ipc")


def has_ucx(ctx: Ctx) -> bool:
    return ctx.image.ucx is not None or any(s.kind == "ucx" for s in ctx.image.bundled_stacks)


def check(ctx: Ctx) -> Iterator[Outcome]:
    yield from _tls(ctx)
    yield from _module_versions(ctx)
    yield from _no_ib_transport(ctx)
    yield from _net_devices(ctx)
    yield from _gpu_transports(ctx)


def _gpu_transports(ctx: Ctx) -> Iterator[Outcome]:
    """UCX_TLS that leaves a GPU node's UCX without cuda_copy or cuda_ipc (a `^cuda_ipc` an image exports, or an
    allow-list of network transports only). Without cuda_ipc, UCX has no lane that moves GPU memory between the
    node's GPUs: host-API transfers are staged through host memory, and the device API (UCX 1.20+,
    src/ucp/core/ucp_device.c) finds no device lane and fails (UCS_ERR_NO_DEVICE)."""
    rule = "UCX-TLS-NO-GPU-TRANSPORT"
    setting = ctx.setting("UCX_TLS")
    if setting is None or setting.origin == "nccl.conf" or not has_ucx(ctx):
        return
    text = setting.value.strip()
    if not text.lstrip("^").strip(", "):
        # no transport named: not a list this rule can read (UCX's own parser decides what it means)
        yield unknown(
            rule,
            f"{setting.label}: the value {setting.value!r} names no transport, so which ones UCX uses is not known",
        )
        return
    allow = allowed(setting.value)
    if allow is None:
        yield decided(rule, f"{setting.label} allows every transport, {' and '.join(GPU_TRANSPORTS)} included")
        return
    missing = [t for t in GPU_TRANSPORTS if t not in allow]
    if not missing:
        yield decided(rule, f"{setting.label} allows {', '.join(GPU_TRANSPORTS)}")
        return
    strange = sorted(allowed_internode(setting.value)[1])
    if strange and not text.startswith("^"):
        # an allow-list naming what imgcheck does not know as a transport or alias: it may be the GPU transport
        # under a name of another UCX release, or a typo UCX skips; the list cannot be read whole
        yield unknown(
            rule,
            f"{setting.label}={setting.value} names {', '.join(strange)}, not a UCX transport or alias imgcheck knows; "
            f"whether it stands for {', '.join(missing)} (a transport of this image's UCX release) is not known",
        )
        return
    gpus = len(ctx.node.gpu.gpus)
    if gpus == 0 and not ctx.node.gpu.driver_version:
        yield unknown(
            rule,
            f"{setting.label}={setting.value} leaves out {', '.join(missing)}; whether the node has GPUs is unknown",
        )
        return
    if missing == ["cuda_ipc"] and gpus == 1:
        return  # one GPU per node: no peer to reach over CUDA IPC
    ucx = ctx.image.ucx
    evidence = [setting.evidence, ctx.node_ev("gpu.gpus", f"{gpus} GPU(s)" if gpus else "GPU driver present")]
    if ucx is not None:
        evidence.append(Evidence("image.ucx.version", ucx.version, ucx.location))
    yield finding(
        ctx.matrix,
        rule,
        evidence,
        variant="no-cuda-copy" if "cuda_copy" in missing else None,
        setting=setting.label,
        value=setting.value,
        missing=", ".join(missing),
        gpus=gpus or "its",
        ucx_version=(ucx.version if ucx is not None else None) or "unknown",
    )


def _net_devices(ctx: Ctx) -> Iterator[Outcome]:
    """UCX_NET_DEVICES names HCA ports (mlx5_0:1: the IB transports' devices) and netdevs (eth0: TCP's, which
    needs an IP address on it); UCX drops the ones it does not find ("network device 'X' is not available") and
    fails with 'no usable transports/devices' when none is left (openucx/ucx ucp_context.c)."""
    rule = "ENV-UCX-NET-DEVICES-NOT-ON-NODE"
    s = ctx.setting("UCX_NET_DEVICES")
    if s is None or s.origin == "nccl.conf" or not has_ucx(ctx):
        return
    names = [d.strip() for d in s.value.split(",") if d.strip()]
    if not names or "all" in names:
        return
    hca_ports = {f"{d.name}:{p.port}" for d in ctx.node.rdma.devices if d.name for p in d.ports if p.port is not None}
    interfaces = {i.name: i for i in ctx.node.net_interfaces or ()}
    missing, unknown_words = [], []
    for name in names:
        if ":" in name:
            if not ctx.node.rdma.devices:
                unknown_words.append(f"{name}: " + ctx.unknown_why("rdma.devices"))
            elif name not in hca_ports:
                missing.append(f"{name} (no such HCA port; the node has {', '.join(sorted(hca_ports)) or 'none'})")
        elif ctx.node.net_interfaces is None:
            unknown_words.append(f"{name}: " + ctx.unknown_why("net_interfaces"))
        elif ctx.job is None or not ctx.job.host_network:
            unknown_words.append(
                f"{name}: a netdev, and whether the container shares the node's network namespace is "
                + ("not known without --job" if ctx.job is None else "no (its own namespace)")
            )
        elif name not in interfaces:
            missing.append(f"{name} (no such interface)")
        elif (
            interfaces[name].ipv4 is not None
            and interfaces[name].ipv6 is not None
            and not (interfaces[name].ipv4 or interfaces[name].ipv6)
        ):
            missing.append(f"{name} (no IP address: TCP cannot use it)")
    if not missing:
        if unknown_words:
            yield unknown(rule, f"{s.label}: " + "; ".join(unknown_words))
        return
    evidence = [s.evidence, ctx.node_ev("rdma.devices", ", ".join(sorted(hca_ports)) or "none")]
    if ctx.node.net_interfaces is not None:
        evidence.append(ctx.node_ev("net_interfaces", ", ".join(interfaces) or "none"))
    every = len(missing) == len(names)
    yield finding(
        ctx.matrix, rule, evidence, variant=None if every else "some", setting=s.label, missing="; ".join(missing)
    )


# the transports UCX's InfiniBand modules provide (libuct_ib*.so: verbs, mlx5 accelerated, EFA SRD); a
# UCX built or packaged without them (Fedora/RHEL ship uct_ib in a separate ucx-ib package) has none
IB_TRANSPORTS = ALIASES["ib"]
# a network device name UCX's IB transports own: <HCA>:<port>, e.g. mlx5_0:1 (TCP uses netdev names: eth0, ib0)
_HCA_DEVICE = re.compile(r"(?:mlx\d|mlx5|irdma|bnxt_re|efa|rxe|siw|hfi1|qedr|erdma|ionic)[\w-]*:\d+$|mlx5_\d+$")


def _asks_rdma(ctx: Ctx) -> list[tuple[Setting, str]]:
    """The settings that ask UCX for an InfiniBand/RoCE transport, each with what it asks."""
    asks: list[tuple[Setting, str]] = []
    tls = ctx.setting("UCX_TLS")
    if tls is not None and tls.origin != "nccl.conf" and not tls.value.strip().startswith("^"):
        items = [i.strip().lstrip("\\") for i in tls.value.split(",") if i.strip()]
        named = {n for i in items for n in ALIASES.get(i, {i})}
        if named & IB_TRANSPORTS and "all" not in items:
            ib_only = not (named & INTERNODE - IB_TRANSPORTS)
            asks.append((tls, "tls-only" if ib_only else "tls"))
    devices = ctx.setting("UCX_NET_DEVICES")
    if devices is not None and devices.origin != "nccl.conf":
        names = [d.strip() for d in devices.value.split(",") if d.strip()]
        hcas = [d for d in names if _HCA_DEVICE.match(d)]
        if hcas and names != ["all"]:
            asks.append((devices, "devices-only" if len(hcas) == len(names) else "devices"))
    pml = ctx.setting("OMPI_MCA_pml")
    if pml is not None and pml.origin != "nccl.conf" and pml.value.strip() == "ucx":
        asks.append((pml, "pml"))
    return asks


def _tls_excludes_ib(ctx: Ctx) -> Setting | None:
    """A UCX_TLS allow-list naming no InfiniBand transport, or UCX_NET_DEVICES naming no HCA port: the job chose
    other transports or devices on purpose."""
    tls = ctx.setting("UCX_TLS")
    if tls is not None and tls.origin != "nccl.conf" and not tls.value.strip().startswith("^"):
        items = [i.strip().lstrip("\\") for i in tls.value.split(",") if i.strip()]
        named = {n for i in items for n in ALIASES.get(i, {i})}
        if "all" not in items and not named & IB_TRANSPORTS:
            return tls
    devices = ctx.setting("UCX_NET_DEVICES")
    if devices is not None and devices.origin != "nccl.conf":
        names = [d.strip() for d in devices.value.split(",") if d.strip()]
        if names and "all" not in names and not any(_HCA_DEVICE.match(d) for d in names):
            return devices
    return None


def _no_ib_transport(ctx: Ctx) -> Iterator[Outcome]:
    rule = "UCX-NO-IB-TRANSPORT"
    ucx = ctx.image.ucx
    if ucx is None:
        return  # no system UCX: nothing to load a transport into (bundled wheel copies are their own stack)
    asks = _asks_rdma(ctx)
    if not asks:
        # Nothing asks for IB, so UCX_TLS's default (all) applies: whether UCX ships its IB modules decides whether
        # it can use the node's RDMA devices at all (gate order: the modules and the node, not the settings)
        chosen = _tls_excludes_ib(ctx)
        if chosen is not None:
            yield decided(rule, f"{chosen.label} chooses transports without InfiniBand")
            return
        if ctx.node_has_rdma is False:
            yield decided(rule, "the node has no RDMA device for UCX's InfiniBand transports")
            return
        if ctx.node_has_rdma is None:
            return  # the engine asks which RDMA devices the node has (READS)
    if not asks and not ucx.copies and not ctx.image_unknown("ucx.modules"):
        # no libucp file read (a package record, a catalog row): its module directory was not looked at, so "no
        # module" is not shown, and nothing asks for IB; a facts file that leaves the modules out is asked below
        yield decided(rule, "no libucp.so.0 of this UCX was read, so its transport modules were not looked for")
        return
    if ctx.image_unknown("ucx.modules") or ucx.module_dir is None:
        asked = f"{asks[0][0].label} asks UCX for InfiniBand/RoCE" if asks else "the node has RDMA devices"
        yield unknown(
            rule,
            f"{asked}; which transport modules the image's UCX ships (libuct_ib*.so in its module directory) "
            "decides whether UCX can use them or only TCP ("
            + (ctx.image_unknown("ucx.modules") or "image.ucx.module_dir: libucp's directory was not found")
            + ")",
        )
        return
    if any(m.name.startswith("uct_ib") for m in ucx.modules):
        return
    if not asks:
        devices = ", ".join(d.name for d in ctx.node.rdma.devices if d.name) or str(ctx.node.rdma.stack)
        yield finding(
            ctx.matrix,
            rule,
            [
                Evidence("image.ucx.version", ucx.version, ucx.location),
                Evidence("image.ucx.module_dir", ucx.module_dir, ucx.location),
                Evidence("image.ucx.modules", ", ".join(m.name for m in ucx.modules) or "none", ucx.location),
                ctx.node_ev("rdma.devices", devices),
            ],
            variant="default",
            ucx_version=ucx.version or "unknown",
            module_dir=ucx.module_dir,
            devices=devices,
        )
        return
    kinds = {kind for _s, kind in asks}
    # UCX fails outright when the only transports or devices asked for are the missing IB ones
    # (ucp_check_resources: "no usable transports/devices"); otherwise it warns and carries on without them
    fatal = bool(kinds & {"tls-only", "devices-only"})
    setting, _kind = next(((s, k) for s, k in asks if k in ("tls-only", "devices-only")), asks[0])
    evidence = [s.evidence for s, _k in asks]
    evidence.append(Evidence("image.ucx.version", ucx.version, ucx.location))
    evidence.append(Evidence("image.ucx.module_dir", ucx.module_dir, ucx.location))
    evidence.append(Evidence("image.ucx.modules", ", ".join(m.name for m in ucx.modules) or "none", ucx.location))
    variant = None if fatal else ("pml" if kinds == {"pml"} else "fallback")
    yield finding(
        ctx.matrix,
        rule,
        evidence,
        variant=variant,
        setting=setting.label,
        value=setting.value,
        ucx_version=ucx.version or "unknown",
        module_dir=ucx.module_dir,
    )


def _mlx5_versions(ctx: Ctx) -> tuple[set[str], str | None] | tuple[None, None]:
    """(defined MLX5_1.x versions, the file) of the libmlx5 the image loads: the loaded mlx5 provider's library."""
    providers = [p for p in ctx.image.rdma.providers if p.name == "mlx5" and p.symbol_versions]
    chosen = next((p for p in providers if p.loaded), providers[0] if providers else None)
    return (set(chosen.symbol_versions), chosen.library or chosen.path) if chosen else (None, None)


def _module_versions(ctx: Ctx) -> Iterator[Outcome]:
    """A UCX module whose .gnu.version_r names a version its library does not define fails dlopen
    ("version `X' not found (required by ...)", glibc elf/dl-version.c), and UCX drops it at debug level
    (openucx/ucx@v1.22.0-rc3:src/ucs/sys/module.c): its transports vanish without an error."""
    rule = "UCX-IB-MODULE-VERSIONS"
    ucx, lib = ctx.image.ucx, ctx.lib
    if ucx is None or not ucx.modules or ctx.node_has_rdma is False:
        return
    verbs_defined = set(lib.symbol_versions) if lib is not None and lib.symbol_versions else None
    # read only when verbs_defined is set, so when lib is
    verbs_path, verbs_versions = (lib.path, lib.symbol_versions) if lib is not None else (None, ())
    mlx5_defined, mlx5_path = _mlx5_versions(ctx)
    for module in ucx.modules:
        missing = []
        if verbs_defined is not None:
            # the loader names the file by the path it opened: the soname link beside the real file
            missing += [
                (v, _soname_path(verbs_path, "libibverbs.so.1")) for v in module.needs_ibverbs if v not in verbs_defined
            ]
        if mlx5_defined is not None:
            missing += [
                (v, _soname_path(mlx5_path, "libmlx5.so.1")) for v in module.needs_mlx5 if v not in mlx5_defined
            ]
        if not missing:
            continue
        version, library = missing[0]
        evidence = [
            Evidence(f"image.ucx.modules.{module.name}.needs", ", ".join(v for v, _ in missing), module.location),
            Evidence("image.ucx.version", ucx.version, ucx.location),
        ]
        if any(p.endswith("/libibverbs.so.1") for _, p in missing):
            evidence.append(ctx.lib_evidence("symbol_versions", ", ".join(verbs_versions)))
        if any(p.endswith("/libmlx5.so.1") for _, p in missing):
            evidence.append(
                Evidence.member(
                    "image.rdma.providers",
                    "mlx5",
                    "symbol_versions",
                    ", ".join(sorted(mlx5_defined or ())),
                    Location.file(mlx5_path),
                )
            )
        yield finding(
            ctx.matrix,
            rule,
            evidence,
            module=module.name,
            module_path=module.path,
            missing=", ".join(v for v, _ in missing),
            version=version,
            library=library,
            ucx=ucx.version or "?",
        )


def _soname_path(real: str | None, soname: str) -> str:
    return posixpath.join(posixpath.dirname(real), soname) if real else soname


def _tls(ctx: Ctx) -> Iterator[Outcome]:
    rule = "UCX-TLS-NO-INTERNODE"
    setting = ctx.setting("UCX_TLS")  # the launch spec's env when it wins over the image's (imgcheck.job)
    if setting is None or setting.origin == "nccl.conf" or not has_ucx(ctx):
        return  # UCX reads the environment, not /etc/nccl.conf
    value = setting.value
    internode, strange = allowed_internode(value)
    if internode is None or internode:
        return
    if strange:
        yield unknown(
            rule,
            f"{setting.label} names transports imgcheck does not know ({', '.join(sorted(strange))}); "
            "whether one reaches another node is unknown",
        )
        return
    ucx = ctx.image.ucx
    evidence = [setting.evidence]
    if ucx is not None:
        evidence.append(Evidence("image.ucx.version", ucx.version, ucx.location))
    evidence += [
        Evidence(f"image.bundled_stacks.{s.distribution or s.path}", s.version, s.location)
        for s in ctx.image.bundled_stacks
        if s.kind == "ucx"
    ]
    yield finding(ctx.matrix, rule, evidence, setting=setting.label, value=value)
