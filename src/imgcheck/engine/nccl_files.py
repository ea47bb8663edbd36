"""NCCL_TOPO_FILE and NCCL_GRAPH_FILE: the XML files NCCL loads instead of (topology) or on top of (graph) what it
detects, as the image and the launch set them.

NCCL reads NCCL_TOPO_FILE in ncclTopoGetSystem (src/graph/topo.cc): a missing file is skipped (a WARN to 2.26, an
INFO from 2.27) and NCCL detects the node itself; a file its reader rejects fails init. NCCL_GRAPH_FILE is read in
ncclTopoCompute (src/graph/search.cc) for every graph: a missing file is ncclSystemError ('Could not open XML graph
file'), and a graph naming a GPU or NET device the communicator does not have on this node fails the import ('XML
Import Channel : dev N not found'). NCCL's maintainers: the graph file is a debugging aid, never to be set for
every job (NVIDIA/nccl#1008, #1240). What each file holds is read by extractors/nccl_xml.py.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..knowledge.settings import ORIGIN_JOB, Setting
from ..model.image import NcclFileRef, NcclXmlFile
from ..model.location import Location
from ..model.report import Evidence
from . import facts
from .context import Ctx
from .emit import Outcome, decided, finding, unknown

RULES = (
    "NCCL-GRAPH-FILE-SET",
    "NCCL-GRAPH-FILE-MISSING",
    "NCCL-TOPO-FILE-MISSING",
    "NCCL-XML-FILE-REJECTED",
    "NCCL-TOPO-FILE-OTHER-NODE",
)
NEEDS: dict[str, set[str]] = {}
_GRAPH = facts.setting("NCCL_GRAPH_FILE")
_TOPO = facts.setting("NCCL_TOPO_FILE")
REQUIRES = {
    "NCCL-GRAPH-FILE-SET": (facts.NCCL,),
    "NCCL-GRAPH-FILE-MISSING": (facts.NCCL,),
    "NCCL-TOPO-FILE-MISSING": (facts.NCCL,),
    "NCCL-XML-FILE-REJECTED": (facts.NCCL,),
    "NCCL-TOPO-FILE-OTHER-NODE": (facts.NCCL,),
}
READS = {
    "NCCL-GRAPH-FILE-SET": (facts.NCCL, _GRAPH, facts.NCCL_FILES),
    "NCCL-GRAPH-FILE-MISSING": (facts.NCCL, _GRAPH, facts.NCCL_FILES),
    "NCCL-TOPO-FILE-MISSING": (facts.NCCL, _TOPO, facts.NCCL_FILES),
    "NCCL-XML-FILE-REJECTED": (facts.NCCL, _GRAPH, _TOPO, facts.NCCL_FILES),
    "NCCL-TOPO-FILE-OTHER-NODE": (facts.NCCL, _TOPO, facts.NCCL_FILES),
}
_CONF_ORIGIN = "/root/.nccl.conf"


def _effective(ctx: Ctx, name: str) -> tuple[Setting | None, NcclFileRef | None]:
    """The value NCCL sees: Env (job, image) first, then ~/.nccl.conf, then /etc/nccl.conf (src/misc/param.cc:
    each file is applied with setenv(..., 0), ~/.nccl.conf first)."""
    s = ctx.setting(name)
    refs = [r for r in ctx.image.nccl_file_refs if r.name == name]
    user = next((r for r in refs if r.origin == _CONF_ORIGIN), None)
    if user is not None and (s is None or s.origin == "nccl.conf"):
        return Setting(name, user.value, "nccl.conf"), user
    if s is None:
        return None, None
    if s.origin == ORIGIN_JOB:
        return s, None  # the launch's own value: whether the container has the file is not in the image facts
    origin = "env" if s.origin == "env" else "/etc/nccl.conf"
    return s, next((r for r in refs if r.origin == origin and r.value == s.value), None)


def _evidence(s: Setting, ref: NcclFileRef | None) -> Evidence:
    if ref is not None and ref.origin == _CONF_ORIGIN:
        return Evidence(f"image.nccl_conf.{s.name}", s.value, Location.file(_CONF_ORIGIN))
    return s.evidence


def _where(s: Setting, ref: NcclFileRef | None) -> str:
    return _CONF_ORIGIN if ref is not None and ref.origin == _CONF_ORIGIN else s.source_words


def _file(ctx: Ctx, value: str) -> NcclXmlFile | None:
    path = "/" + value.lstrip("/")
    return next((f for f in ctx.image.nccl_xml_files if f.path == path), None)


def _files_unknown(ctx: Ctx) -> str | None:
    return ctx.image.unknown_reason("nccl_xml_files") or ctx.image.unknown_reason("nccl_file_refs")


def check(ctx: Ctx) -> Iterator[Outcome]:
    if ctx.nccl_present is False:
        return
    graph, graph_ref = _effective(ctx, "NCCL_GRAPH_FILE")
    topo, topo_ref = _effective(ctx, "NCCL_TOPO_FILE")
    if not ctx.image.unknown_reason("env"):
        # neither file set anywhere the facts show: nothing for the file facts to decide (the user's ~/.nccl.conf
        # is read only when the extractor ran; a facts file without it leaves NCCL_FILES unknown, not the setting)
        unset = "not set in the image Env, /etc/nccl.conf or the launch"
        if graph is None:
            for rule in ("NCCL-GRAPH-FILE-SET", "NCCL-GRAPH-FILE-MISSING"):
                yield decided(rule, f"NCCL_GRAPH_FILE {unset}")
        if topo is None:
            for rule in ("NCCL-TOPO-FILE-MISSING", "NCCL-TOPO-FILE-OTHER-NODE"):
                yield decided(rule, f"NCCL_TOPO_FILE {unset}")
        if graph is None and topo is None:
            yield decided("NCCL-XML-FILE-REJECTED", f"neither NCCL_TOPO_FILE nor NCCL_GRAPH_FILE is {unset[4:]}")
    if graph is not None:
        yield from _graph_set(ctx, graph, graph_ref)
        yield from _missing(ctx, graph, graph_ref, "NCCL-GRAPH-FILE-MISSING")
    if topo is not None:
        yield from _missing(ctx, topo, topo_ref, "NCCL-TOPO-FILE-MISSING")
        yield from _other_node(ctx, topo, topo_ref)
    yield from _rejected(ctx, [(s, r) for s, r in ((topo, topo_ref), (graph, graph_ref)) if s is not None])


def _gpus_in_job(ctx: Ctx) -> tuple[int | None, str]:
    job = ctx.job
    if job is not None and job.ranks_per_node and job.ranks_per_node > 0:
        return job.ranks_per_node, f"{job.ranks_per_node} ranks per node ({job.ranks_setting or 'launch spec'})"
    if job is not None and job.gpus and job.gpus > 0:
        return job.gpus, f"{job.gpus} GPUs ({job.gpus_setting or 'launch spec'})"
    gpus = ctx.node.gpu.gpus
    return (len(gpus), f"{len(gpus)} GPUs on the node") if gpus else (None, "")


def _graph_set(ctx: Ctx, s: Setting, ref: NcclFileRef | None) -> Iterator[Outcome]:
    rule = "NCCL-GRAPH-FILE-SET"
    evidence = [_evidence(s, ref)]
    params = dict(setting=f"NCCL_GRAPH_FILE={s.value}", where=_where(s, ref))
    xml = _file(ctx, s.value)
    if xml is not None and xml.kind == "graph" and xml.error is None and xml.gpu_devs:
        have, words = _gpus_in_job(ctx)
        needed = max(xml.gpu_devs) + 1
        evidence.append(Evidence("image.nccl_xml_files.gpu_devs", ", ".join(map(str, xml.gpu_devs)), xml.location))
        if have is not None and needed > have:
            yield finding(ctx.matrix, rule, evidence, variant="names-missing-gpu", dev=needed - 1, have=words, **params)
            return
    yield finding(ctx.matrix, rule, evidence, **params)


def _missing(ctx: Ctx, s: Setting, ref: NcclFileRef | None, rule: str) -> Iterator[Outcome]:
    if s.origin == ORIGIN_JOB:
        return  # the launch names it; it may mount it too (imgcheck does not read mounts)
    if ref is None:
        why = _files_unknown(ctx)
        if why:
            yield unknown(rule, f"whether the image has {s.value} ({s.name}, {_where(s, ref)}) is not known: {why}")
        return
    if ref.exists is None:
        yield unknown(rule, f"{s.name}={s.value} is a relative path: NCCL opens it from the job's working directory")
        return
    if ref.exists:
        return
    job = " unless the launch mounts it (imgcheck does not read the spec's mounts)" if ctx.job is not None else ""
    evidence = [_evidence(s, ref), Evidence(f"image.files.{s.value}", "absent", None)]
    yield finding(ctx.matrix, rule, evidence, setting=f"{s.name}={s.value}", where=_where(s, ref), path=s.value,
                  mount=job)  # fmt: skip


def _rejected(ctx: Ctx, settings: list[tuple[Setting, NcclFileRef | None]]) -> Iterator[Outcome]:
    rule = "NCCL-XML-FILE-REJECTED"
    for s, ref in settings:
        if ref is not None and ref.exists is False:
            continue  # NCCL-*-FILE-MISSING
        xml = _file(ctx, s.value)
        if xml is None and (why := _files_unknown(ctx)) and s.origin != ORIGIN_JOB:
            yield unknown(rule, f"{s.name}={s.value} ({_where(s, ref)}): whether NCCL's XML reader accepts the file "
                                f"(declaration, whitespace, quoting, version, cpu numaid/arch) is not known: {why}")  # fmt: skip
            continue
        if xml is None or xml.kind is None:
            if ref is not None and ref.exists and s.origin != ORIGIN_JOB:
                why = xml.note if xml is not None and xml.note else "not kept by the extractor"
                yield unknown(rule, f"{s.name}={s.value}: the file was not read ({why}), so whether NCCL loads it is "
                                    "not known")  # fmt: skip
            continue
        params = dict(setting=f"{s.name}={s.value}", where=_where(s, ref), path=xml.path)
        evidence = [_evidence(s, ref)]
        if xml.error is not None:
            evidence.append(Evidence("image.nccl_xml_files.error", xml.error, xml.location))
            yield finding(ctx.matrix, rule, evidence, message=xml.error, **params)
        elif xml.cpu_unfilled and s.name == "NCCL_TOPO_FILE":
            attrs = ", ".join(xml.cpu_unfilled)
            evidence.append(Evidence("image.nccl_xml_files.cpu_unfilled", attrs, xml.location))
            yield finding(ctx.matrix, rule, evidence, variant="cpu-unfilled", attrs=attrs, attr=xml.cpu_unfilled[0],
                          **params)  # fmt: skip


def _other_node(ctx: Ctx, s: Setting, ref: NcclFileRef | None) -> Iterator[Outcome]:
    rule = "NCCL-TOPO-FILE-OTHER-NODE"
    xml = _file(ctx, s.value)
    if xml is None or xml.kind != "topology" or xml.error is not None:
        return
    node_busids = {_short_busid(g.pci_bus_id) for g in ctx.node.gpu.gpus if g.pci_bus_id}
    file_busids = {_short_busid(b) for b in xml.gpu_busids}
    node_nics = {d.name for d in ctx.node.rdma.devices if d.name}
    file_nets = set(xml.net_names)
    missing_gpus = sorted(file_busids - node_busids) if node_busids and file_busids else []
    # a file's net names are RDMA device names (mlx5_0, rdmap79s0) or, for the socket transport, interfaces
    rdma_nets = {n for n in file_nets if not n.startswith(("eth", "en", "ib"))}
    missing_nics = sorted(rdma_nets - node_nics) if node_nics and rdma_nets else []
    if not missing_gpus and not missing_nics:
        if file_busids and not node_busids or rdma_nets and not node_nics:
            yield unknown(rule, f"{s.value} names GPUs/NICs ({', '.join(sorted(file_busids | rdma_nets))}); the "
                                "node's GPU PCI bus ids or RDMA device names are not known")  # fmt: skip
        return
    parts = []
    if missing_gpus:
        parts.append(f"GPUs at {', '.join(missing_gpus)} (the node has {', '.join(sorted(node_busids))})")
    if missing_nics:
        parts.append(f"NICs {', '.join(missing_nics)} (the node has {', '.join(sorted(node_nics))})")
    evidence = [_evidence(s, ref), Evidence("image.nccl_xml_files.devices", "; ".join(parts), xml.location)]
    yield finding(ctx.matrix, rule, evidence, setting=f"{s.name}={s.value}", where=_where(s, ref), path=xml.path,
                  devices="; ".join(parts))  # fmt: skip


def _short_busid(busid: str) -> str:
    """NCCL's busid form, lower case with a 4-digit domain: nvidia-smi prints 00000000:4F:00.0."""
    b = busid.strip().lower()
    domain, sep, rest = b.partition(":")
    if not sep:
        return b
    short = domain.lstrip("0").rjust(len(_BUSID_DOMAIN), "0")
    return f"{short}:{rest}"


_BUSID_DOMAIN = "0000"  # NCCL writes the PCI domain with four hex digits (src/graph/xml.cc busIdToInt64 round trip)
