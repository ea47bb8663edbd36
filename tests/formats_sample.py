"""One realistic report, shared by the format tests so every format renders the SAME report.

The image facts are those imgcheck reads from the real Debian bookworm image (rdma-core 44.0:
libibverbs 1.14.44.0, IBVERBS_PRIVATE_34, mlx5 provider rdmav34, UCX 1.13.1); the nodes and findings
follow research/failure-mechanisms.md F4 (DMA-BUF on an old MLNX_OFED) and F5 (nvidia-peermem on an
inbox kernel with the proprietary driver).
"""

from __future__ import annotations

import datetime

import imgcheck
from imgcheck.model.image import ImageFacts, LayerInfo, Libibverbs, OsRelease, Package, Provider, RdmaFacts, Ucx
from imgcheck.model.location import Location
from imgcheck.model.node import Kernel, KernelModule, NodeFacts, NodeGpu, NodeOs, NodeRdma, Peermem
from imgcheck.model.report import Evidence, Finding, MatrixInfo, Recommendation, Report, Unknown, verdict_of

LAYER = "sha256:fd5e8675fe85edaa14cccc3c14ccc90a0877be276736fd38817a9ddcc84c1625"
DIGEST = "sha256:3837a3b179ca1402a8696e10326ffcbbb9622c5bddba7fa20827c13ad4f94e15"
LIBDIR = "/usr/lib/x86_64-linux-gnu"
IBVERBS_SYMBOLS = tuple(f"IBVERBS_1.{n}" for n in (0, 1, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14)) + ("IBVERBS_PRIVATE_34",)


def _pkg(name: str, version: str) -> Package:
    return Package(name=name, version=version, db="dpkg", path="/var/lib/dpkg/status", layer=LAYER)


def bookworm_facts(reference: str = "registry.example/team/trainer:abc") -> ImageFacts:
    rdma_pkgs = (
        _pkg("ibverbs-providers", "44.0-2"),
        _pkg("libibverbs1", "44.0-2"),
        _pkg("librdmacm1", "44.0-2"),
        _pkg("libucx0", "1.13.1-1"),
    )
    return ImageFacts(
        reference=reference,
        digest=DIGEST,
        platform="linux/amd64",
        os=OsRelease(
            id="debian",
            version_id="12",
            pretty_name="Debian GNU/Linux 12 (bookworm)",
            path="/usr/lib/os-release",
            layer=LAYER,
        ),
        rdma=RdmaFacts(
            libibverbs=Libibverbs(
                version="1.14.44.0",
                rdma_core="44.0",
                symbol_versions=IBVERBS_SYMBOLS,
                private_abi=34,
                has_reg_mr_iova2=True,
                has_reg_dmabuf_mr=True,
                soname="libibverbs.so.1",
                path=f"{LIBDIR}/libibverbs.so.1.14.44.0",
                layer=LAYER,
            ),
            providers=(
                Provider(
                    name="efa",
                    pabi=34,
                    path=f"{LIBDIR}/libibverbs/libefa-rdmav34.so",
                    layer=LAYER,
                    driver_file="/etc/libibverbs.d/efa.driver",
                ),
                Provider(
                    name="mlx5",
                    pabi=34,
                    path=f"{LIBDIR}/libibverbs/libmlx5-rdmav34.so",
                    layer=LAYER,
                    driver_file="/etc/libibverbs.d/mlx5.driver",
                    private_abi_needed=34,
                    version="1.24.44.0",
                    symbol_versions=tuple(f"MLX5_1.{n}" for n in range(25)),
                ),
            ),
            flavor="inbox",
            packages=rdma_pkgs,
        ),
        ucx=Ucx(version="1.13.1", path=f"{LIBDIR}/libucp.so.0", layer=LAYER, origin="dpkg"),
        env={"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
        packages=(_pkg("base-files", "12.4+deb12u15"),) + rdma_pkgs,
        layers=(LayerInfo(digest=LAYER, media_type="layer.tar", size=175592960, diff_id=LAYER),),
    )


def ofed_node(name: str) -> NodeFacts:
    return NodeFacts(
        name=name,
        collected_at="2026-11-30T08:00:00Z",
        kernel=Kernel(release="5.15.0-91-generic"),
        os=NodeOs(id="ubuntu", version_id="22.04"),
        rdma=NodeRdma(
            stack="mlnx_ofed",
            ofed_version="5.4-3.7.5.0",
            modules={"mlx5_core": KernelModule(version="5.4-3.7.5", out_of_tree=True)},
            uverbs_abi=6,
            peer_memory_api=True,
        ),
        gpu=NodeGpu(
            driver_version="535.154.05",
            kernel_module="open",
            peermem=Peermem(loaded=True, version="535.154.05", legacy_nv_peer_mem=False),
        ),
        arch="amd64",
    )


def inbox_node(name: str) -> NodeFacts:
    return NodeFacts(
        name=name,
        collected_at="2026-11-30T08:05:00Z",
        kernel=Kernel(release="6.1.0-18-amd64"),
        os=NodeOs(id="debian", version_id="12"),
        rdma=NodeRdma(
            stack="inbox", modules={"mlx5_core": KernelModule(out_of_tree=False)}, uverbs_abi=6, peer_memory_api=False
        ),
        gpu=NodeGpu(driver_version="535.154.05", kernel_module="proprietary", peermem=Peermem(loaded=False)),
        arch="amd64",
        unknown={"limits.memlock_kib": "probe ran outside the job's container runtime"},
    )


def sample_report() -> Report:
    findings = (
        Finding(
            id="RDMA-DMABUF-UNSUPPORTED",
            severity="error",
            title="DMA-BUF memory registration is not supported by the nodes' MLNX_OFED",
            predicted_error="[0] NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Operation not supported",
            mechanism="The image's libibverbs exports ibv_reg_dmabuf_mr (IBVERBS_1.12) and the open GPU kernel "
            "module reports DMA-BUF support, so NCCL registers GPU memory through DMA-BUF; MLNX_OFED "
            "before 5.5 has no REG_DMABUF_MR uverbs method and the kernel answers EOPNOTSUPP.",
            confidence="reported",
            evidence=(
                Evidence(
                    fact="image.rdma.libibverbs.has_reg_dmabuf_mr",
                    value=True,
                    location=Location.file(f"{LIBDIR}/libibverbs.so.1.14.44.0", LAYER),
                ),
                Evidence(
                    fact="node.rdma.ofed_version",
                    value="5.4-3.7.5.0",
                    location=Location.described("node facts file nodes/gpu-a.json"),
                ),
                Evidence(fact="node.gpu.kernel_module", value="open"),
            ),
            fixes=(
                "Set NCCL_DMABUF_ENABLE=0 in the image or job environment (NCCL then uses nvidia-peermem).",
                "Upgrade the nodes to MLNX_OFED 5.5 or newer (or DOCA-OFED).",
            ),
            nodes=("gpu-a01", "gpu-a02"),
            sources=(
                "https://github.com/NVIDIA/nccl/issues/778",
                "https://github.com/linux-rdma/rdma-core/commit/6b0a32382",
            ),
        ),
        Finding(
            id="GPU-PEERMEM-INBOX",
            severity="warning",
            title="No GPUDirect RDMA: proprietary driver on an inbox RDMA kernel",
            predicted_error=None,
            mechanism="nvidia-peermem needs the MLNX_OFED peer-memory API, which inbox kernels lack, so it "
            "cannot load; the proprietary driver offers no DMA-BUF either, so NCCL stages GPU buffers "
            "through host memory (slower, no crash).",
            confidence="verified",
            evidence=(
                Evidence(fact="node.rdma.stack", value="inbox"),
                Evidence(fact="node.rdma.peer_memory_api", value=False),
                Evidence(fact="node.gpu.kernel_module", value="proprietary"),
            ),
            fixes=(
                "Use the open GPU kernel modules (R515+) so NCCL can use DMA-BUF.",
                "Or install MLNX_OFED / DOCA-OFED on the node and load nvidia-peermem.",
            ),
            nodes=("gpu-b01",),
            sources=("https://github.com/NVIDIA/nccl/issues/1474",),
        ),
        Finding(
            id="NCCL-NOT-IN-IMAGE",
            severity="info",
            title="No NCCL library found in the image",
            predicted_error=None,
            mechanism="No libnccl.so.2, NCCL package or pip wheel was found; NCCL checks use defaults.",
            confidence="verified",
            nodes=(),
        ),
    )
    return Report(
        image=bookworm_facts(),
        nodes=(ofed_node("gpu-a01"), ofed_node("gpu-a02"), inbox_node("gpu-b01")),
        findings=findings,
        unknowns=(Unknown(rule="NODE-MEMLOCK-LOW", reason="node.limits.memlock_kib is unknown", nodes=("gpu-b01",)),),
        recommendations=(
            Recommendation(
                image="MLNX_OFED 23.10-1.1.9.0",
                kind="node-upgrade",
                why="supports DMA-BUF registration and nvidia-peermem",
                differences=("node.rdma.ofed_version 5.4-3.7.5.0 -> 23.10-1.1.9.0",),
            ),
            Recommendation(
                image="debian:bullseye",
                why="rdma-core 33.2 has no ibv_reg_dmabuf_mr, so NCCL never tries DMA-BUF",
                differences=("libibverbs 1.14.44.0 -> 1.11.33.2", "PABI 34 -> 33"),
            ),
        ),
        verdict=verdict_of(findings),
        matrix=MatrixInfo(version="2026.11.1", digest="sha256:" + "ab" * 32),
        # Real, changing values: golden tests must normalise them (see normalised()).
        tool_version=imgcheck.__version__,
        generated_at=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )


def normalised(report: Report) -> Report:
    """Pin the values that change from run to run or release to release, for golden files."""
    import dataclasses

    return dataclasses.replace(report, tool_version="0.0.0-test", generated_at="2000-01-01T00:00:00Z")
