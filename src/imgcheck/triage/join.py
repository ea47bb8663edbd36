"""Join what the log says with the image's and node's static facts.

Each note says whether the facts are consistent with the log, explain the error, or contradict
it (a contradiction usually means the log came from another image/node, or an environment
variable did not reach the ranks). Notes are written from facts directly, so they work whether
or not the check engine is available.
"""

from __future__ import annotations

from ..knowledge import cuda as cuda_k
from ..knowledge import nccl as nccl_k
from ..knowledge import settings as settings_k
from ..knowledge import stack as stack_k
from ..model.image import ImageFacts
from ..model.node import NodeFacts
from ..model.report import Evidence, node_evidence
from ..versions import ranges
from .predicates import (
    Facts,
    dmabuf_kernel_capable,
    driver_below_image_cuda,
    memlock_low,
    nccl_lacks,
    nccl_version,
    peermem_loaded,
)
from .result import JoinNote, TriageReport

CONSISTENT, EXPLAINS, CONTRADICTS, UNKNOWN = "consistent", "explains", "contradicts", "unknown"
CACHE_VARS = ("TMPDIR", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "HOME")


def _lib_evidence(image: ImageFacts) -> list[Evidence]:
    lib = image.rdma.libibverbs
    if lib is None:
        return [Evidence("image.rdma.libibverbs", None)]
    return [
        Evidence("image.rdma.libibverbs.version", lib.version, lib.location),
        Evidence("image.rdma.libibverbs.has_reg_mr_iova2", lib.has_reg_mr_iova2, lib.location),
        Evidence("image.rdma.libibverbs.has_reg_dmabuf_mr", lib.has_reg_dmabuf_mr, lib.location),
    ]


def _nccl_evidence(image: ImageFacts) -> list[Evidence]:
    return [Evidence("image.nccl.version", n.version, n.location) for n in image.nccl]


def _env(image: ImageFacts | None, log_env: dict[str, str], name: str) -> tuple[str | None, str, Evidence | None]:
    """A setting as the ranks saw it, resolved the one way imgcheck.knowledge.settings does."""
    s = settings_k.resolve(name, image, ((log_env, "log"),))
    if s is None:
        return None, "", None
    return s.value, s.source_words, s.evidence


def join_notes(
    report: TriageReport, image: ImageFacts | None, node: NodeFacts | None, matrix=None
) -> tuple[JoinNote, ...]:
    log = report.context
    facts = Facts(image=image, node=node, log=log, matrix=matrix)
    kb = facts.kb
    ro_floor = nccl_k.feature_floor(kb, "relaxed_ordering_iova2")
    present = {d.signature: d for d in report.diagnoses}
    notes: list[JoinNote] = []
    add = notes.append

    if image is not None and log.nccl_versions:
        image_versions = sorted({n.version for n in image.nccl if n.version})
        ev = [Evidence("log.nccl_version", ", ".join(log.nccl_versions))] + _nccl_evidence(image)
        if not image_versions:
            add(
                JoinNote(
                    "nccl-version",
                    UNKNOWN,
                    f"the log says NCCL {', '.join(log.nccl_versions)}; no NCCL version was "
                    "found in the image (it may be linked statically into a framework library)",
                    tuple(ev),
                )
            )
        elif set(log.nccl_versions) <= set(image_versions):
            add(
                JoinNote(
                    "nccl-version",
                    CONSISTENT,
                    f"the log's NCCL {', '.join(log.nccl_versions)} is in the image",
                    tuple(ev),
                )
            )
        else:
            add(
                JoinNote(
                    "nccl-version",
                    CONTRADICTS,
                    f"the log says NCCL {', '.join(log.nccl_versions)} but the image has "
                    f"{', '.join(image_versions)}: the job loaded another NCCL (a pip wheel, LD_LIBRARY_PATH) or the log "
                    "comes from another image",
                    tuple(ev),
                )
            )

    nver, nwhere = nccl_version(facts)
    if log.relaxed_ordering is not None and image is not None:
        lib = image.rdma.libibverbs
        iova2 = bool(lib and lib.has_reg_mr_iova2)
        nccl_ro = nccl_k.has_feature(kb, nver, "relaxed_ordering_iova2")
        ev = [Evidence("log.relaxed_ordering", log.relaxed_ordering)] + _lib_evidence(image)
        if nver:
            ev.append(Evidence("nccl.version", nver))
        if log.relaxed_ordering:
            if iova2 and nccl_ro is not False:
                add(
                    JoinNote(
                        "relaxed-ordering",
                        CONSISTENT,
                        "the log says [RO] was on; the image's libibverbs exports "
                        f"ibv_reg_mr_iova2@IBVERBS_1.8{' and NCCL ' + nver + ' >= ' + ro_floor if nccl_ro else ''}: consistent",
                        tuple(ev),
                    )
                )
            else:
                add(
                    JoinNote(
                        "relaxed-ordering",
                        CONTRADICTS,
                        "the log says [RO] was on, but "
                        + (
                            "the image's libibverbs lacks ibv_reg_mr_iova2@IBVERBS_1.8"
                            if not iova2
                            else f"NCCL {nver} < {ro_floor}"
                        )
                        + ": the job used another libibverbs/NCCL than this image's (host libraries mounted in?)",
                        tuple(ev),
                    )
                )
        else:
            ro_env, where, e = _env(image, log.env, "NCCL_IB_PCI_RELAXED_ORDERING")
            if e:
                ev.append(e)
            if iova2 and nccl_ro:
                text = (
                    f"the log shows NET/IB without [RO] although the image could use it (iova2 present, NCCL >= {ro_floor}): "
                    + (
                        f"NCCL_IB_PCI_RELAXED_ORDERING={ro_env} ({where}) turned it off"
                        if ro_env is not None
                        else "relaxed ordering was turned off by the environment of the ranks"
                    )
                )
                add(JoinNote("relaxed-ordering", CONSISTENT, text, tuple(ev)))

    for sid in ("IBV-REG-MR-EINVAL", "IBV-REG-MR-EFAULT", "IBV-REG-MR-ENOMEM"):
        if sid in present:
            _join_registration(present[sid].first.text, sid, image, node, log, facts, add)

    if "IBV-REG-DMABUF-EOPNOTSUPP" in present:
        v, why = dmabuf_kernel_capable(facts)
        ev = [
            node_evidence(node, "kernel.release", node.kernel.release if node else None),
            node_evidence(node, "rdma.ofed_version", node.rdma.ofed_version if node else None),
        ]
        if image is not None:
            ev += _lib_evidence(image)
        status = EXPLAINS if v is False else (CONTRADICTS if v is True else UNKNOWN)
        text = {
            False: f"{why}: the node's RDMA stack cannot register dma-buf memory, which explains EOPNOTSUPP; "
            "set NCCL_DMABUF_ENABLE=0 or upgrade the node stack",
            True: f"{why}: the node stack should support dma-buf MRs; check the NIC/VF and the NCCL version's probe",
        }.get(v, why)
        add(JoinNote("dmabuf-registration", status, text, tuple(ev)))

    if log.dmabuf_gpus and node is not None and node.gpu.kernel_module:
        open_mod = node.gpu.kernel_module == "open"
        add(
            JoinNote(
                "dmabuf-gpu",
                CONSISTENT if open_mod else CONTRADICTS,
                "the log says DMA-BUF is available on the GPU; "
                + (
                    f"node {node.name} runs the open GPU kernel modules: consistent"
                    if open_mod
                    else f"node {node.name} runs the proprietary module, which does not export DMA-BUF: the log is from another node"
                ),
                (
                    Evidence("log.dmabuf_gpus", list(log.dmabuf_gpus)),
                    node_evidence(node, "gpu.kernel_module", node.gpu.kernel_module),
                ),
            )
        )

    if image is not None and (
        {"IBVERBS-PROVIDER-ABI", "NET-IB-NO-DEVICE", "LIBIBVERBS-MISSING", "IBVERBS-DRIVER-LOAD-MLX5"} & set(present)
    ):
        lib = image.rdma.libibverbs
        ev = _lib_evidence(image) + [
            Evidence.member("image.rdma.providers", p.name, "pabi", p.pabi, p.location) for p in image.rdma.providers
        ]
        if lib is None:
            add(
                JoinNote(
                    "rdma-userspace",
                    EXPLAINS,
                    "the image has no libibverbs: NCCL cannot use InfiniBand/RoCE and falls back to sockets",
                    tuple(ev),
                )
            )
        else:
            bad = [
                p
                for p in image.rdma.providers
                if p.pabi is not None and lib.private_abi is not None and p.pabi != lib.private_abi
            ]
            if bad:
                add(
                    JoinNote(
                        "rdma-userspace",
                        EXPLAINS,
                        f"the image mixes rdma-core builds: providers {', '.join(p.name + '-rdmav' + str(p.pabi) for p in bad)} "
                        f"vs libibverbs IBVERBS_PRIVATE_{lib.private_abi}",
                        tuple(ev),
                    )
                )
            elif not image.rdma.providers:
                add(
                    JoinNote(
                        "rdma-userspace",
                        EXPLAINS,
                        "the image has libibverbs but no providers (ibverbs-providers / rdma-core missing): no device is usable",
                        tuple(ev),
                    )
                )
            elif "IBVERBS-PROVIDER-ABI" in present and (
                lib.private_abi is None or any(p.pabi is None for p in image.rdma.providers)
            ):
                # "contradicts" needs the deciding facts: both ABI numbers known
                add(
                    JoinNote(
                        "rdma-userspace",
                        UNKNOWN,
                        "cannot tell whether the image's own providers match its libibverbs "
                        "(private ABI not recorded for all of them)",
                        tuple(ev),
                    )
                )
            elif "IBVERBS-PROVIDER-ABI" in present:
                add(
                    JoinNote(
                        "rdma-userspace",
                        CONTRADICTS,
                        f"the image's own libibverbs (IBVERBS_PRIVATE_{lib.private_abi}) and providers agree: "
                        "the mismatched files come from outside the image (LD_LIBRARY_PATH or bind mounts from the host)",
                        tuple(ev),
                    )
                )
            else:
                add(
                    JoinNote(
                        "rdma-userspace",
                        CONSISTENT,
                        f"the image ships libibverbs {lib.version} with {len(image.rdma.providers)} consistent "
                        "provider(s): look at the container's devices (/dev/infiniband) and port state instead",
                        tuple(ev),
                    )
                )

    if "GDR-DISABLED" in present:
        pm, pm_why = peermem_loaded(facts)
        old_gdr_check, old_why = nccl_lacks(facts, "gdr_module_sysfs_check")
        peers, peers_why = stack_k.memory_peers_api(kb, node) if node is not None else (None, "")
        ev = [
            node_evidence(node, "gpu.peermem.loaded", node.gpu.peermem.loaded if node else None),
            node_evidence(node, "rdma.peer_memory_api", node.rdma.peer_memory_api if node else None),
            node_evidence(node, "gpu.kernel_module", node.gpu.kernel_module if node else None),
        ]
        if nver:
            ev.append(Evidence("nccl.version", nver))
        if pm is False:
            add(
                JoinNote("gpudirect", EXPLAINS, f"{pm_why} and DMA-BUF is not in use: GPUDirect RDMA is off", tuple(ev))
            )
        elif pm is True and node is not None and old_gdr_check is True and peers is False:
            add(
                JoinNote(
                    "gpudirect",
                    EXPLAINS,
                    f"{pm_why}, but {old_why} only looks under /sys/kernel/mm/memory_peers, "
                    f"and {peers_why}: use NCCL >= {nccl_k.feature_floor(kb, 'gdr_module_sysfs_check')}",
                    tuple(ev),
                )
            )
        elif pm is True and node is not None and (peers is None or old_gdr_check is None):
            # whether this NCCL finds the peer-memory client depends on memory_peers and the NCCL version
            add(
                JoinNote(
                    "gpudirect",
                    UNKNOWN,
                    f"{pm_why}, but cannot tell whether this NCCL finds it "
                    f"({peers_why or 'memory_peers unknown'}; {old_why or 'NCCL version unknown'})",
                    tuple(ev),
                )
            )
        elif pm is True:
            add(
                JoinNote(
                    "gpudirect",
                    CONTRADICTS,
                    f"{pm_why}: NCCL should have enabled GDR; check the peermem version matches the driver "
                    "and NCCL_NET_GDR_LEVEL",
                    tuple(ev),
                )
            )
        else:
            add(JoinNote("gpudirect", UNKNOWN, pm_why, tuple(ev)))

    if "CUDA-DRIVER-INSUFFICIENT" in present:
        v, why = driver_below_image_cuda(facts)
        ev = [
            Evidence("image.cuda.version", image.cuda.version if image and image.cuda else None),
            Evidence("image.cuda.compat_driver", image.cuda.compat_driver if image and image.cuda else None),
            node_evidence(node, "gpu.driver_version", node.gpu.driver_version if node else None),
        ]
        add(
            JoinNote(
                "cuda-driver",
                EXPLAINS if v else (CONTRADICTS if v is False else UNKNOWN),
                why
                + (
                    ""
                    if v is None
                    else (
                        ": explains the error"
                        if v
                        else ": the driver is new enough; "
                        "a forward-compat libcuda or LD_LIBRARY_PATH may be loading a wrong libcuda"
                    )
                ),
                tuple(ev),
            )
        )

    if "IB-VENDOR-ERR-129" in present:
        val, where, e = _env(image, log.env, "NCCL_IB_RETRY_CNT")
        if e is not None:
            top = kb.threshold("nccl_ib_retry_cnt_max")
            try:
                high = int(val) > top
            except ValueError:
                high = None
            add(
                JoinNote(
                    "ib-retry-count",
                    EXPLAINS if high else CONSISTENT,
                    f"NCCL_IB_RETRY_CNT={val} ({where})"
                    + (
                        f": above {top}, truncated by the NIC's 3-bit field; this explains retries being exhausted"
                        if high
                        else f": within 0-{top}"
                    ),
                    (e,),
                )
            )
        elif image is not None:
            add(
                JoinNote(
                    "ib-retry-count",
                    CONSISTENT,
                    "NCCL_IB_RETRY_CNT is not set in the log or the image: NCCL uses "
                    f"{kb.threshold('nccl_ib_retry_cnt_max')}",
                    (Evidence("image.env.NCCL_IB_RETRY_CNT", None),),
                )
            )

    if image is not None and ({"COMPILE-CACHE-SHARED", "NCCL-INIT-STALL"} & set(present)):
        ev = [Evidence(f"image.env.{n}", image.env.get(n)) for n in CACHE_VARS]
        unset = [n for n in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR") if not image.env.get(n)]
        if unset:
            text = (
                f"the image sets no {' or '.join(unset)}: Inductor caches under $TMPDIR/torchinductor_<user> and Triton under "
                f"~/.triton/cache (image TMPDIR={image.env.get('TMPDIR', 'unset')}, HOME={image.env.get('HOME', 'unset')}); "
                "if those are on shared storage or survive a crash, ranks collide on them"
            )
        else:
            text = (
                f"the image pins TORCHINDUCTOR_CACHE_DIR={image.env['TORCHINDUCTOR_CACHE_DIR']} and "
                f"TRITON_CACHE_DIR={image.env['TRITON_CACHE_DIR']}: check they are node-local and per job"
            )
        add(JoinNote("compile-caches", EXPLAINS if unset else UNKNOWN, text, tuple(ev)))

    if "CKPT-CRC32-SEGFAULT" in present and node is not None:
        drv = node.gpu.driver_version
        ev = (node_evidence(node, "arch", node.arch), node_evidence(node, "gpu.driver_version", drv))
        branch = str(kb.threshold("ckpt_crc32_segfault_driver_branch"))
        match = node.arch in ("arm64", "aarch64") and cuda_k.branch(drv) == branch
        add(
            JoinNote(
                "checkpoint-segfault",
                CONSISTENT if match else UNKNOWN,
                f"node {node.name}: {node.arch or 'arch unknown'}, driver {drv or 'unknown'}"
                + (
                    f": the same platform as the public reports (GB200, {branch}.x)"
                    if match
                    else f": not the reported GB200/{branch} combination"
                ),
                ev,
            )
        )
    return tuple(notes)


def _join_registration(line: str, sid: str, image, node, log, facts: Facts, add) -> None:
    call = "ibv_reg_mr_iova2" if "ibv_reg_mr_iova2" in line else "ibv_reg_mr"
    ev: list[Evidence] = [Evidence("log.failed_call", call)]
    if image is not None:
        ev += _lib_evidence(image)
    ro_val, where, e = _env(image, log.env, "NCCL_IB_PCI_RELAXED_ORDERING")
    if e is not None:
        ev.append(e)
    if call == "ibv_reg_mr_iova2" and ro_val is not None and ro_val.strip() == "0":
        add(
            JoinNote(
                "registration-call",
                CONTRADICTS,
                f"the failing call is ibv_reg_mr_iova2, which NCCL uses only with relaxed ordering on, "
                f"yet NCCL_IB_PCI_RELAXED_ORDERING=0 ({where}): the setting did not reach the failing rank",
                tuple(ev),
            )
        )
    elif (
        call == "ibv_reg_mr_iova2"
        and image is not None
        and image.rdma.libibverbs is not None
        and image.rdma.libibverbs.has_reg_mr_iova2 is False
    ):
        add(
            JoinNote(
                "registration-call",
                CONTRADICTS,
                "the failing call is ibv_reg_mr_iova2 but the image's libibverbs does not export it: "
                "the job loaded another libibverbs",
                tuple(ev),
            )
        )
    if node is None:
        return
    nev = [
        node_evidence(node, "gpu.peermem.loaded", node.gpu.peermem.loaded),
        node_evidence(node, "gpu.driver_version", node.gpu.driver_version),
        node_evidence(node, "gpu.kernel_module", node.gpu.kernel_module),
    ]
    if sid == "IBV-REG-MR-EFAULT":
        pm, why = peermem_loaded(facts)
        if pm is False:
            add(
                JoinNote(
                    "peer-memory",
                    EXPLAINS,
                    f"{why}: no peer-memory client claims GPU buffers, so pinning a GPU address fails with "
                    "EFAULT (Bad address)",
                    tuple(ev + nev),
                )
            )
        elif pm is True:
            add(
                JoinNote(
                    "peer-memory",
                    UNKNOWN,
                    f"{why}: check that its version equals the nvidia driver's and that the GPU supports "
                    "GPUDirect RDMA",
                    tuple(ev + nev),
                )
            )
    elif sid == "IBV-REG-MR-EINVAL":
        drv = node.gpu.driver_version
        cuda = image.cuda.version if image is not None and image.cuda else None
        if (
            drv
            and cuda
            and ranges.below(drv, str(facts.kb.threshold("cumem_old_driver_below")))
            and ranges.at_least(cuda, str(facts.kb.threshold("cumem_min_cuda")))
        ):
            add(
                JoinNote(
                    "peer-memory",
                    EXPLAINS,
                    f"node driver {drv} predates CUDA {cuda_k.cuda_major(cuda)} while the image runs CUDA {cuda}"
                    + (" through forward-compat libcuda" if image.cuda.compat_driver else "")
                    + ": the same shape as NVIDIA/nccl#1842 (hypothesis: cuMem buffers rejected on the peermem path; try NCCL_CUMEM_ENABLE=0)",
                    tuple(ev + nev + [Evidence("image.cuda.version", cuda)]),
                )
            )
        else:
            add(
                JoinNote(
                    "peer-memory",
                    UNKNOWN,
                    f"node driver {drv or 'unknown'}, peermem "
                    f"{'loaded' if node.gpu.peermem.loaded else 'not loaded' if node.gpu.peermem.loaded is False else 'unknown'}: "
                    "no known EINVAL pattern in these facts; collect dmesg from the failing node",
                    tuple(ev + nev),
                )
            )
    elif sid == "IBV-REG-MR-ENOMEM":
        low, why = memlock_low(facts)
        add(
            JoinNote(
                "memlock",
                EXPLAINS if low else (CONTRADICTS if low is False else UNKNOWN),
                why
                + (
                    ": too low for NCCL's registrations"
                    if low
                    else ": the node allows enough; the job's launcher/container may still lower it"
                    if low is False
                    else ""
                ),
                (node_evidence(node, "limits.memlock_kib", node.limits.memlock_kib),),
            )
        )
