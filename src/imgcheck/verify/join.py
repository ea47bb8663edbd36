"""Join what the verifier saw with what imgcheck predicted without running the image.

Each prediction becomes a Check: confirmed, contradicted, or not testable here (with the reason).
A contradiction means the static side (an extractor or a matrix rule) is wrong: it is reported as a
problem to fix, never silently resolved. Predictions come from the image facts (always, when they
could be read) and from the engine's findings for this node (when the engine and a node probe are
available). What the verifier saw that no prediction covers is an Observation.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..model.image import ImageFacts, Libibverbs
from ..model.report import Finding
from . import regrows
from .result import DeviceResult, MemlockProbe, Registration, VerifierOutput

CONFIRMED = "confirmed"
CONTRADICTED = "contradicted"
NOT_TESTABLE = "not testable here"
FIX = "contradicted: matrix/extractor problem to fix"

NO_DEVICE = "no RDMA device exists on this machine"


@dataclass(frozen=True)
class Check:
    id: str  # e.g. "symbol ibv_reg_dmabuf_mr@IBVERBS_1.12" or "finding RDMA-PABI-MISMATCH"
    source: str  # "image facts" | "finding <RULE-ID>"
    prediction: str
    observed: str
    status: str  # confirmed | contradicted | not testable here
    detail: str | None = None


@dataclass(frozen=True)
class Observation:
    id: str
    severity: str  # error | warning | info
    message: str


def _check(
    id_: str, source: str, prediction: str, observed: str, agree: bool | None, why_untestable: str | None = None
) -> Check:
    if agree is None:
        return Check(id_, source, prediction, observed, NOT_TESTABLE, why_untestable)
    if agree:
        return Check(id_, source, prediction, observed, CONFIRMED)
    return Check(id_, source, prediction, observed, CONTRADICTED, FIX)


def _provider_key(name: str | None) -> str | None:
    """'mlx5', '/usr/lib/x86_64-linux-gnu/libibverbs/libmlx5' and 'libmlx5-rdmav34.so' all name mlx5."""
    if not name:
        return None
    base = name.rsplit("/", 1)[-1]
    base = base.split("-rdmav", 1)[0]
    return base[3:] if base.startswith("lib") and "/" in name else base


# ------------------------------------------------------------------------------------------ image facts


def checks_from_facts(facts: ImageFacts, out: VerifierOutput) -> list[Check]:
    checks: list[Check] = []
    lib = facts.rdma.libibverbs
    loaded = out.libibverbs.opened is not None
    src = "image facts"
    last_error = next((t.error for t in reversed(out.libibverbs.tried) if t.error), None)
    checks.append(
        _check(
            "libibverbs loads",
            src,
            f"NCCL's dlopen finds {lib.path}" if lib else "the image has no libibverbs: NCCL cannot use RDMA",
            f"dlopen({out.libibverbs.opened}) -> {out.libibverbs.real_path}"
            if loaded
            else f"dlopen failed: {last_error or 'no error text'}",
            (lib is not None) == loaded,
        )
    )
    if lib is None or not loaded:
        return checks
    if lib.version:
        seen = out.libibverbs.file_version
        checks.append(
            _check(
                "libibverbs version",
                src,
                f"libibverbs.so.{lib.version} (rdma-core {lib.rdma_core})",
                f"libibverbs.so.{seen}" if seen else f"{out.libibverbs.real_path}",
                seen == lib.version,
            )
        )
    if lib.private_abi is not None or out.libibverbs.private_abi is not None:
        checks.append(
            _check(
                "private ABI",
                src,
                f"IBVERBS_PRIVATE_{lib.private_abi}",
                f"IBVERBS_PRIVATE_{out.libibverbs.private_abi}"
                if out.libibverbs.private_abi is not None
                else "no verbs_register_driver_N@IBVERBS_PRIVATE_N found",
                lib.private_abi == out.libibverbs.private_abi,
            )
        )
    defined = set(lib.symbol_versions)
    for s in out.symbols:
        if not defined:
            break  # the extractor read no version definitions: nothing was predicted
        predicted = s.version in defined
        if s.version == "IBVERBS_1.8":
            predicted = predicted or lib.has_reg_mr_iova2
        if s.version == "IBVERBS_1.12":
            predicted = predicted or lib.has_reg_dmabuf_mr
        checks.append(
            _check(
                f"symbol {s.name}@{s.version}",
                src,
                f"{'present' if predicted else 'absent'} ({s.version} "
                f"{'defined' if s.version in defined else 'not defined'} by the ELF)",
                "found by dlvsym" if s.found else "dlvsym found nothing",
                predicted == s.found,
            )
        )
    checks.extend(_provider_checks(facts, out))
    checks.append(_relaxed_ordering_check(lib, out))
    return checks


def _relaxed_ordering_check(lib: Libibverbs, out: VerifierOutput) -> Check:
    """NCCL's default data-buffer registration, predicted from the symbol: rdma-core >= 28 masks the RO
    bit itself when the kernel does not support it (failure-mechanisms.md section 1), so it succeeds."""
    cid = "host registration as NCCL does by default"
    if lib.has_reg_mr_iova2:
        pred = (
            "ibv_reg_mr_iova2(LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|RELAXED_ORDERING) succeeds (RO masked by "
            "libibverbs when the kernel lacks it)"
        )
        regs = list(_registrations(out, "host", label="base+ro", call="ibv_reg_mr_iova2"))
    else:
        pred = "ibv_reg_mr(LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ) succeeds (no ibv_reg_mr_iova2: NCCL skips RO)"
        regs = list(_registrations(out, "host", label="base", call="ibv_reg_mr"))
    if not regs:
        return _check(cid, "image facts", pred, "not attempted", None, _no_device_reason(out))
    observed = "; ".join(f"{d.name}: {'ok' if r.ok else r.errno_name}" for d, r in regs)
    return _check(cid, "image facts", pred, observed, all(r.ok for _, r in regs))


def _provider_checks(facts: ImageFacts, out: VerifierOutput) -> list[Check]:
    if out.providers is None:
        return []
    lib = facts.rdma.libibverbs
    static = {_provider_key(p.name): p for p in facts.rdma.providers}
    runtime = {_provider_key(d.name): d for d in out.providers.drivers if d.name}
    checks = []
    for key in sorted(k for k in set(static) | set(runtime) if k):
        p, d = static.get(key), runtime.get(key)
        if p is None:
            predicted, why = False, "no provider library for it in the image"
        elif not p.driver_file:
            predicted, why = False, "no /etc/libibverbs.d driver file names it"
        elif lib is not None and p.pabi is not None and p.pabi != lib.private_abi:
            predicted, why = False, f"file is for private ABI {p.pabi}, libibverbs exports {lib.private_abi}"
        elif lib is not None and p.private_abi_needed not in (None, lib.private_abi):
            predicted, why = (
                False,
                f"binds to IBVERBS_PRIVATE_{p.private_abi_needed}, libibverbs exports {lib.private_abi}",
            )
        else:
            predicted, why = True, f"{p.path} matches private ABI {lib.private_abi if lib else '?'}"
        if d is None:
            observed, ok = "no /etc/libibverbs.d driver file names it: libibverbs never loads it", False
        elif d.loaded:
            observed, ok = f"dlopen({d.library}) succeeded", True
        else:
            observed, ok = f"dlopen({d.library}) failed: {d.error}", False
        checks.append(
            _check(
                f"provider {key} loads",
                "image facts",
                f"{'loads' if predicted else 'does not load'}: {why}",
                observed,
                predicted == ok,
            )
        )
    return checks


# ------------------------------------------------------------------------------------------ engine findings


def _no_device_reason(out: VerifierOutput) -> str:
    if not out.sysfs.class_infiniband:
        return NO_DEVICE
    if not out.sysfs.dev_infiniband:
        return "the node's RDMA devices were not passed into the container"
    return "libibverbs opened no device"


def _registrations(
    out: VerifierOutput, memory_prefix: str, label: str | None = None, call: str | None = None
) -> Iterator[tuple[DeviceResult, Registration]]:
    for dev in out.device_results:
        for r in dev.registrations:
            if (
                r.memory.startswith(memory_prefix)
                and (label is None or r.label == label)
                and (call is None or r.call == call)
            ):
                yield dev, r


def _provider_names_in(finding: Finding) -> set[str]:
    """The providers a finding's evidence is about (Evidence.member of image.rdma.providers)."""
    return {ev.item for ev in finding.evidence if ev.collection == "image.rdma.providers" and ev.item}


# Rules whose prediction the verifier can confirm or contradict on a live node (check_from_finding below).
# Every other rule states in its rules.json row (not_verifiable_live) why it cannot be; a test keeps both in step.
LIVE_CHECKED_RULES = frozenset(
    {
        "RDMA-NO-LIBIBVERBS",
        "RDMA-PABI-MISMATCH",
        "RDMA-NO-MLX5-PROVIDER",
        "UVERBS-ABI-RANGE",
        "RO-MASKED-SAFE",
        "DMABUF-UNSUPPORTED",
        "GDR-PEERMEM-MISSING",
        "GDR-NCCL-LEGACY-MEMORY-PEERS",
        "CUMEM-OLD-DRIVER",
        "CUDA-DRIVER-TOO-OLD",
        "REG-PATH",
        "REG-MEMLOCK-ZERO",
        "REG-REMOTE-ATOMIC",
        "MEMLOCK-TOO-LOW",
        "REG-BAR1-SMALL",
    }
)


def _not_verifiable_reason(rule_id: str) -> str:
    from ..knowledge import shipped

    row = shipped().row("rules", id=rule_id)
    return (row or {}).get("not_verifiable_live") or "the verifier does not exercise this rule"


def check_from_finding(finding: Finding, out: VerifierOutput) -> Check:
    rid = finding.id
    src = f"finding {rid}"
    pred = finding.predicted_error or finding.title
    gpu_reason = "no GPU/CUDA driver in the container on this machine" if out.gpu.status != "tested" else None
    device_reason = _no_device_reason(out) if not out.device_results else None
    drivers = {_provider_key(d.name): d for d in (out.providers.drivers if out.providers else ()) if d.name}

    if rid == "RDMA-NO-LIBIBVERBS":
        loaded = out.libibverbs.opened is not None
        return _check(
            rid,
            src,
            pred,
            f"libibverbs {'loaded: ' + str(out.libibverbs.real_path) if loaded else 'not found'}",
            not loaded,
        )
    if rid == "RDMA-PABI-MISMATCH":
        names = _provider_names_in(finding)
        seen = [drivers[n] for n in names if n in drivers]
        if not seen:
            return _check(
                rid,
                src,
                pred,
                "no driver file names these providers",
                None,
                "libibverbs only loads providers named in /etc/libibverbs.d",
            )
        failed = [d for d in seen if not d.loaded]
        observed = "; ".join(f"{_provider_key(d.name)}: {'loaded' if d.loaded else d.error}" for d in seen)
        return _check(rid, src, pred, observed, bool(failed))
    if rid == "RDMA-NO-MLX5-PROVIDER":
        d = drivers.get("mlx5")
        return _check(
            rid, src, pred, "mlx5 provider " + ("loaded" if d and d.loaded else "not loadable"), not (d and d.loaded)
        )
    if rid == "UVERBS-ABI-RANGE":
        abi = out.sysfs.uverbs_abi_version
        if abi is None:
            return _check(rid, src, pred, "no /sys/class/infiniband_verbs/abi_version", None, NO_DEVICE)
        return _check(rid, src, pred, f"uverbs ABI {abi}", not out.devices.list_ok)
    if rid == "RO-MASKED-SAFE":
        regs = list(_registrations(out, "host", label="base+ro", call="ibv_reg_mr_iova2"))
        if not regs:
            return _check(rid, src, pred, "no registration attempted", None, device_reason or "no iova2 symbol")
        ro_failed = [r for _, r in regs if not r.ok]
        observed = "; ".join(f"{d.name}: {'ok' if r.ok else r.errno_name}" for d, r in regs)
        return _check(rid, src, pred, observed, not ro_failed)
    if rid == "DMABUF-UNSUPPORTED":
        probes = [(d.name, d.dmabuf_probe) for d in out.device_results if d.dmabuf_probe]
        if not probes:
            return _check(rid, src, pred, "no DMA-BUF probe ran", None, device_reason or "no protection domain")
        observed = "; ".join(
            f"{n}: {'supported' if p.supported else 'unsupported'} ({p.errno_name})" for n, p in probes
        )
        return _check(rid, src, pred, observed, any(not p.supported for _, p in probes))
    if rid in ("GDR-PEERMEM-MISSING", "GDR-NCCL-LEGACY-MEMORY-PEERS", "CUMEM-OLD-DRIVER"):
        if gpu_reason or device_reason:
            return _check(rid, src, pred, "GPU memory registration not run", None, device_reason or gpu_reason)
        memory = "gpu:cuMemCreate" if rid == "CUMEM-OLD-DRIVER" else "gpu:cuMemAlloc"
        gpu_regs = [r for _, r in _registrations(out, memory) if r.call != "ibv_reg_dmabuf_mr"]
        if not gpu_regs:
            return _check(rid, src, pred, f"no {memory} buffer could be allocated", None, "CUDA allocation failed")
        gpu_failed = [r for r in gpu_regs if not r.ok]
        observed = "; ".join(f"{r.call} {r.label}: {'ok' if r.ok else r.errno_name}" for r in gpu_regs)
        return _check(rid, src, pred, observed, bool(gpu_failed))
    if rid == "CUDA-DRIVER-TOO-OLD":
        if out.gpu.init is None:
            return _check(rid, src, pred, out.gpu.detail or out.gpu.status, None, gpu_reason)
        return _check(rid, src, pred, f"cuInit: {out.gpu.init.name or out.gpu.init.code}", out.gpu.init.code != 0)
    if rid.startswith("REG-"):
        return _registration_check(finding, out, gpu_reason, device_reason)
    if rid == "MEMLOCK-TOO-LOW":
        return _memlock_too_low_check(finding, out, device_reason)
    return _check(rid, src, pred, "not exercised by the verifier", None, _not_verifiable_reason(rid))


def _memlock_too_low_check(finding: Finding, out: VerifierOutput, device_reason: str | None) -> Check:
    """The node's job limit is enforced on registrations: the memlock probe, run with that limit and without
    CAP_IPC_LOCK, fails above it with ENOMEM (docs/registration-errors.md RE-ENOMEM-MEMLOCK)."""
    rid = finding.id
    src = f"finding {rid}"
    pred = finding.predicted_error or finding.title
    if device_reason:
        return _check(rid, src, pred, "no registration attempted", None, device_reason)
    kib = _finding_fact(finding, "node.limits.memlock_kib")
    soft = out.memlock.soft
    if soft is None or not isinstance(kib, int) or soft != kib * 1024:
        seen = "unknown" if soft is None else ("unlimited" if soft < 0 else f"{soft // 1024} KiB")
        return _check(
            rid,
            src,
            pred,
            f"the container's memlock limit is {seen}, not the node's {kib} KiB",
            None,
            "run with --memlock default so the verifier gets the runtime's own limit",
        )
    probe = memlock_probe(out)
    if probe is None or probe.status != "tested":
        return _check(
            rid, src, pred, "memlock probe not run", None, probe.detail if probe else "no device to register on"
        )
    above = next((r for r in probe.registrations if r.label == "memlock-above"), None)
    if above is None:
        return _check(rid, src, pred, "no registration above the limit", None, "memlock probe incomplete")
    observed = f"{above.length} bytes without CAP_IPC_LOCK: {'ok' if above.ok else above.errno_name}"
    return _check(rid, src, pred, observed, above.errno_name in ("ENOMEM", "EPERM"))


def _finding_fact(finding: Finding, fact: str) -> object:
    return next((ev.value for ev in finding.evidence if ev.fact == fact), None)


def _outcomes(regs: Iterable[tuple[DeviceResult, Registration]]) -> str:
    return "; ".join(f"{d.name} {r.memory} {r.call} {r.label}: {'ok' if r.ok else r.errno_name}" for d, r in regs)


def _registration_check(
    finding: Finding, out: VerifierOutput, gpu_reason: str | None, device_reason: str | None
) -> Check:
    """REG-* findings (docs/registration-errors.md): test the path or the errno the finding names."""
    rid = finding.id
    src = f"finding {rid}"
    pred = finding.predicted_error or finding.title
    if device_reason:
        return _check(rid, src, pred, "no registration attempted", None, device_reason)
    if rid == "REG-MEMLOCK-ZERO":
        if out.memlock.soft != 0:
            return _check(
                rid,
                src,
                pred,
                "the container's memlock limit is not 0",
                None,
                "run with --memlock default to see the runtime's own limit",
            )
        probe = memlock_probe(out)
        if probe is not None and probe.status == "tested":
            above = [r for r in probe.registrations if r.label == "memlock-above"]
            if above:
                observed = f"without CAP_IPC_LOCK (uid {probe.uid}): {above[0].errno_name or 'ok'}"
                return _check(rid, src, pred, observed, above[0].errno_name == "EPERM")
        regs = list(_registrations(out, "host", label="base"))
        if not regs:
            return _check(rid, src, pred, "no host registration attempted", None, "no protection domain")
        if all(r.ok for _, r in regs):
            return _check(
                rid,
                src,
                pred,
                _outcomes(regs),
                None,
                "the verifier's container holds CAP_IPC_LOCK, which bypasses the limit"
                + (f"; memlock probe: {probe.detail}" if probe is not None and probe.detail else ""),
            )
        return _check(rid, src, pred, _outcomes(regs), all(r.errno_name == "EPERM" for _, r in regs if not r.ok))
    if rid == "REG-REMOTE-ATOMIC":
        regs = list(_registrations(out, "host", label="base+atomic+ro"))
        if not regs:
            return _check(rid, src, pred, "no REMOTE_ATOMIC registration attempted", None, "no iova2 symbol")
        # the hypothesis is that the driver rejects it; acceptance means the matrix should record it as safe
        return _check(rid, src, pred, _outcomes(regs), any(not r.ok for _, r in regs))
    if rid == "REG-PATH":
        return _path_check(finding, out, gpu_reason)
    if rid == "REG-BAR1-SMALL":
        return _bar1_check(finding, out, gpu_reason)
    return _check(rid, src, pred, "not exercised by the verifier", None, "the verifier does not exercise this")


def _bar1_check(finding: Finding, out: VerifierOutput, gpu_reason: str | None) -> Check:
    """REG-BAR1-SMALL: the BAR1 sweep registers 1 GiB of GPU memory in NCCL-sized chunks, each kept."""
    rid, src = finding.id, f"finding {finding.id}"
    pred = finding.predicted_error or finding.title
    if gpu_reason:
        return _check(rid, src, pred, "GPU memory registration not run", None, gpu_reason)
    sweeps = [d.bar1_sweep for d in out.device_results if d.bar1_sweep is not None]
    if not sweeps:
        return _check(rid, src, pred, "no BAR1 sweep ran", None, "the GPU buffer for the sweep was not allocated")
    sw = sweeps[0]
    mib = sw.registered_bytes >> 20
    if sw.failure is None:
        return _check(rid, src, pred, f"{mib} MiB registered in {sw.chunk_bytes >> 20} MiB chunks", False)
    observed = f"{mib} MiB registered, then {sw.failure.errno_name}"
    if sw.registered == 0:
        return _check(rid, src, pred, observed, None, "the first chunk already failed: not a BAR1 limit")
    return _check(rid, src, pred, observed, sw.failure.errno_name == "EFAULT")


def _path_check(finding: Finding, out: VerifierOutput, gpu_reason: str | None) -> Check:
    """REG-PATH names the path NCCL takes for GPU buffers; the verifier's GPU registrations show which works."""
    rid, src = finding.id, f"finding {finding.id}"
    path = _finding_fact(finding, "nccl.gpu_buffer_path")
    if gpu_reason:
        return _check(rid, src, finding.title, "GPU memory registration not run", None, gpu_reason)
    probes = [d.dmabuf_probe for d in out.device_results if d.dmabuf_probe]
    dmabuf_ok = bool(probes) and all(p.supported for p in probes) and out.gpu.attributes.get("dma_buf_supported") == 1
    gpu = [(d, r) for d, r in _registrations(out, "gpu:") if r.symbol_available]
    peer = [(d, r) for d, r in gpu if r.call != "ibv_reg_dmabuf_mr"]
    rows = sorted({m.row or "no row" for d, r, m in regrows.explain_all(out) if r.memory.startswith("gpu:")})
    observed = (_outcomes(gpu) or "no GPU buffer registered") + (f" (rows: {', '.join(rows)})" if rows else "")
    # NCCL reads cudaDevAttrGPUDirectRDMASupported and stages through host memory when it is 0 (plugin/net.cc)
    no_gdr_gpu = out.gpu.attributes.get("gpu_direct_rdma_supported") == 0
    if no_gdr_gpu:
        observed += "; the GPU reports GPU_DIRECT_RDMA_SUPPORTED = 0"
    if path == "dmabuf":
        return _check(rid, src, "GPU buffers register through DMA-BUF", observed, dmabuf_ok and not no_gdr_gpu)
    if path == "peer-memory":
        # a peer-memory failure is explained by its row; the path itself is what is predicted
        return _check(
            rid,
            src,
            "GPU buffers register through nvidia-peermem (DMA-BUF unusable)",
            observed,
            not dmabuf_ok and bool(peer) and not no_gdr_gpu,
        )
    if path == "host-staging":
        works = (dmabuf_ok or any(r.ok for _, r in peer)) and not no_gdr_gpu
        return _check(rid, src, "no GPUDirect RDMA path: only host memory is registered", observed, not works)
    return _check(rid, src, finding.title, observed, None, "the finding does not name its path")


# ------------------------------------------------------------------------------------------ observations


def observations(out: VerifierOutput) -> list[Observation]:
    obs: list[Observation] = []
    s = out.sysfs
    if not s.class_infiniband:
        obs.append(
            Observation(
                "rdma-devices",
                "info",
                f"No RDMA device exists on this machine (/sys/class/infiniband is "
                f"{'absent' if s.class_infiniband is None else 'empty'}): opening devices and "
                "registering memory are not testable here.",
            )
        )
    elif not s.dev_infiniband:
        obs.append(
            Observation(
                "rdma-devices",
                "warning",
                f"This node has RDMA devices ({', '.join(s.class_infiniband)}) but /dev/infiniband "
                "was not passed into the container.",
            )
        )
    elif out.devices.count == 0:
        obs.append(
            Observation(
                "rdma-devices",
                "error",
                f"This node has RDMA devices ({', '.join(s.class_infiniband)}) but the image's "
                "libibverbs found none: its providers do not match (see the provider checks and "
                "libibverbs warnings). NCCL would print `NET/IB : No device found`.",
            )
        )
    if out.libibverbs.opened is not None and not out.devices.list_ok:
        obs.append(
            Observation(
                "ibv_get_device_list",
                "info",
                f"ibv_get_device_list failed with {out.devices.errno_name} ({out.devices.message})",
            )
        )
    for d in out.providers.drivers if out.providers else ():
        if d.exists and not d.loaded:
            obs.append(
                Observation(
                    f"provider {_provider_key(d.name)}", "error", f"provider {d.library} does not load: {d.error}"
                )
            )
    if out.providers and out.providers.other_abi_files:
        obs.append(
            Observation(
                "provider files",
                "warning",
                "provider files for another private ABI than this libibverbs "
                f"(IBVERBS_PRIVATE_{out.libibverbs.private_abi}): "
                f"{', '.join(out.providers.other_abi_files)}",
            )
        )
    for line in out.warnings:
        obs.append(Observation("stderr", "warning", line))
    for dev in out.device_results:
        obs.extend(_device_observations(dev, out))
    obs.extend(_gpu_observations(out))
    if out.memlock.soft is not None:
        soft = "unlimited" if out.memlock.soft < 0 else f"{out.memlock.soft // 1024} KiB"
        cap = (
            {True: ", CAP_IPC_LOCK held", False: ", no CAP_IPC_LOCK"}.get(out.cap_ipc_lock, "")
            if out.cap_ipc_lock is not None
            else ""
        )
        obs.append(Observation("memlock", "info", f"memlock limit inside the container: {soft}{cap}"))
    if out.fork_init is not None and out.fork_init.symbol_available:
        status = out.fork_init.status or "on (libibverbs too old to report)"
        obs.append(
            Observation(
                "ibv_fork_init",
                "info",
                f"fork protection after ibv_fork_init (as NCCL calls it): {status}"
                + (
                    "; every registration first runs madvise(MADV_DONTFORK) (docs/registration-errors.md RE-FORK-MADVISE)"
                    if out.fork_init.status in (None, "enabled")
                    else ""
                ),
            )
        )
    return obs


def _device_observations(dev: DeviceResult, out: VerifierOutput) -> list[Observation]:
    obs = []
    if not dev.open.ok:
        return [Observation(f"device {dev.name}", "error", f"ibv_open_device failed: {dev.open.errno_name}")]
    if dev.alloc_pd is not None and not dev.alloc_pd.ok:
        return [Observation(f"device {dev.name}", "error", f"ibv_alloc_pd failed: {dev.alloc_pd.errno_name}")]
    for r in dev.registrations:
        where = f"device {dev.name} {r.memory} {r.call} {r.access_names}"
        if not r.symbol_available:
            obs.append(
                Observation(where, "info", f"{r.call} is not exported by this libibverbs; NCCL would not call it")
            )
        elif r.ok:
            obs.append(Observation(where, "info", f"registered ({r.why})"))
        else:
            row = regrows.explain(r, dev, out)
            assert row is not None  # explain() gives a row for every failed registration
            obs.append(Observation(where, "error", f"{r.errno_name}: {r.nccl_message()} ({r.why}); {row.words()}"))
    if dev.bar1_sweep is not None:
        obs.append(_bar1_observation(dev, out))
    if dev.memlock_probe is not None:
        obs.extend(_memlock_probe_observations(dev, out))
    if dev.dmabuf_probe is not None:
        p = dev.dmabuf_probe
        obs.append(
            Observation(
                f"device {dev.name} dma-buf",
                "info",
                "ibv_reg_dmabuf_mr is not exported"
                if not p.symbol_available
                else f"DMA-BUF registration {'supported' if p.supported else 'not supported'} by the "
                f"kernel/driver (probe with fd -1 gave {p.errno_name})",
            )
        )
    return obs


def _bar1_observation(dev: DeviceResult, out: VerifierOutput) -> Observation:
    sw = dev.bar1_sweep
    assert sw is not None  # the caller checked
    where = f"device {dev.name} {sw.memory} BAR1 sweep"
    mib = sw.registered_bytes >> 20
    if sw.failure is None:
        return Observation(
            where, "info", f"{sw.registered} chunks of {sw.chunk_bytes >> 20} MiB ({mib} MiB) registered at once"
        )
    row = regrows.explain(sw.failure, dev, out)
    what = row.words() if row else "no row"
    return Observation(
        where,
        "warning" if sw.registered else "error",
        f"{sw.registered} chunks ({mib} MiB) registered, then {sw.failure.errno_name}: {what}",
    )


def _memlock_probe_observations(dev: DeviceResult, out: VerifierOutput) -> list[Observation]:
    p = dev.memlock_probe
    assert p is not None  # the caller checked
    where = f"device {dev.name} memlock probe (uid {p.uid})"
    if p.status != "tested":
        return [Observation(where, "info", f"memlock rows not testable: {p.detail}")]
    obs = []
    for r in p.registrations:
        if r.ok:
            obs.append(Observation(where, "info", f"{r.length} bytes registered ({r.why})"))
        else:
            row = regrows.explain(r, dev, out)
            assert row is not None  # explain() gives a row for every failed registration
            obs.append(Observation(where, "info", f"{r.length} bytes: {r.errno_name} ({r.why}); {row.words()}"))
    return obs


def memlock_probe(out: VerifierOutput) -> MemlockProbe | None:
    """The first device's memlock probe, if the verifier ran one."""
    return next((d.memlock_probe for d in out.device_results if d.memlock_probe is not None), None)


def _gpu_observations(out: VerifierOutput) -> list[Observation]:
    g = out.gpu
    if g.status == "skipped":
        return [Observation("gpu", "info", "GPU checks skipped")]
    if g.status == "no-libcuda":
        return [
            Observation(
                "gpu",
                "info",
                "No CUDA driver library (libcuda.so.1) in the container: this machine "
                "has no GPU or none was passed in, so GPU memory registration "
                "(cuMemAlloc/cuMemCreate buffers via peer memory or DMA-BUF) is not "
                "testable here.",
            )
        ]
    if g.status == "no-gpu":
        return [Observation("gpu", "info", f"{g.detail}; GPU memory registration is not testable here.")]
    if g.status == "error":
        return [Observation("gpu", "error", g.detail or "CUDA error")]
    obs = [
        Observation(
            "gpu",
            "info",
            f"CUDA driver API {g.driver_api_version}, {g.device_count} device(s); "
            f"attributes of device 0: {g.attributes}",
        )
    ]
    if g.attributes.get("gpu_direct_rdma_with_cuda_vmm_supported") == 0:
        obs.append(
            Observation(
                "gpu cuMem",
                "warning",
                "the GPU does not report GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED: NCCL >= 2.24.3 "
                "allocates cuMem buffers without gpuDirectRDMACapable, which nvidia-peermem cannot "
                f"register ({regrows.DOC} RE-EFAULT-CUMEM-FLAG; decides REG-CUMEM-VMM-GDR; "
                "NCCL_CUMEM_ENABLE=0 or DMA-BUF avoids it)",
            )
        )
    for b in g.buffers:
        if b.error or (b.alloc and b.alloc.code != 0):
            obs.append(
                Observation(
                    f"gpu {b.memory}",
                    "error",
                    f"allocation failed: {b.error or (b.alloc.name or b.alloc.code if b.alloc else None)}",
                )
            )
        elif b.dmabuf_export and b.dmabuf_export.code != 0:
            obs.append(
                Observation(
                    f"gpu {b.memory}", "info", f"no DMA-BUF export: {b.dmabuf_export.name or b.dmabuf_export.code}"
                )
            )
    if not out.device_results:
        obs.append(
            Observation("gpu", "info", f"GPU buffers were allocated but not registered: {_no_device_reason(out)}")
        )
    return obs
