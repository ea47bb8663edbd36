"""CUDA vs driver, memlock, MLNX/DOCA userspace vs node stack, NCCL Env traps, and which NCCL copy counts."""

from __future__ import annotations

import dataclasses

import pytest
from engine_facts import by_id, committed_facts, ids, node, replace_in, run, unknown_rules, with_nccl

from imgcheck.engine.context import Ctx
from imgcheck.model.image import FLAVOR_MLNX_OFED, Nccl, Package


@pytest.fixture(scope="module")
def bookworm():
    return committed_facts("bookworm")


# ---------- CUDA ----------
@pytest.mark.parametrize(
    "cuda, node_name, expect",
    [
        ("12.4.1", "mofed-5.8-470-peermem", "error"),  # R470 runs CUDA 11.4 natively
        ("13.0.1", "mofed-23.10-open-550-peermem", "error"),  # CUDA 13 needs >= 580
        ("13.0.1", "doca-24.10-open-580-peermem", None),
        ("12.8.1", "inbox-5.15-proprietary-535", None),  # minor-version compatibility from 525
        ("11.8.0", "mofed-5.8-470-peermem", None),
    ],
)
def test_cuda_driver_floor(bookworm, cuda, node_name, expect):
    result = run(with_nccl(bookworm, "2.21.5", cuda=cuda), node(node_name))
    if expect is None:
        assert "CUDA-DRIVER-TOO-OLD" not in ids(result)
    else:
        f = by_id(result, "CUDA-DRIVER-TOO-OLD")
        assert f.severity == expect
        assert f.predicted_error == "CUDA driver version is insufficient for CUDA runtime version"
        assert any(e.fact == "image.cuda.version" and e.path == "/usr/local/cuda/version.json" for e in f.evidence)


def test_cuda_forward_compat_is_a_warning(bookworm):
    image = with_nccl(bookworm, "2.21.5", cuda="12.4.1", compat="550.54.15")
    f = by_id(run(image, node("mofed-5.8-470-peermem")), "CUDA-DRIVER-TOO-OLD")
    assert f.severity == "warning" and f.confidence == "vendor-guidance"
    assert "550.54.15" in f.title and "/usr/local/cuda/compat/libcuda.so.550.54.15" in f.mechanism
    assert "11.4 or older" not in f.mechanism


def test_cuda_unknowns(bookworm):
    result = run(
        with_nccl(bookworm, "2.21.5", cuda="12.4.1"), replace_in(node("inbox-6.8-open-570"), "gpu.driver_version", None)
    )
    assert "CUDA-DRIVER-TOO-OLD" in unknown_rules(result)
    no_cuda = with_nccl(bookworm, "2.21.5", cuda=None)
    assert "CUDA-DRIVER-TOO-OLD" in unknown_rules(run(no_cuda, node("inbox-6.8-open-570")))
    # a plain rdma image: CUDA does not apply
    assert "CUDA-DRIVER-TOO-OLD" not in unknown_rules(run(bookworm, node("inbox-6.8-open-570")))


# ---------- memlock ----------
def test_memlock(bookworm):
    image = with_nccl(bookworm, "2.21.5")
    f = by_id(run(image, node("inbox-5.15-open-535-memlock")), "MEMLOCK-TOO-LOW")
    assert f.severity == "error"
    assert f.predicted_error == "NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory"
    big = replace_in(node("inbox-5.15-open-535-memlock"), "limits.memlock_kib", 64 * 1024 * 1024)
    assert by_id(run(image, big), "MEMLOCK-TOO-LOW").severity == "info"
    assert "MEMLOCK-TOO-LOW" not in ids(run(image, node("inbox-6.8-open-570")))  # unlimited
    assert "MEMLOCK-TOO-LOW" in unknown_rules(run(image, node("handwritten-minimal")))
    assert "MEMLOCK-TOO-LOW" not in ids(run(image, node("cpu-no-rdma")))


# ---------- MLNX / DOCA userspace ----------
def mlnx_image(facts, ofed_version="23.10-1.1.9.0", pkg="2307mlnx47-1.2310119"):
    rdma = dataclasses.replace(
        facts.rdma,
        flavor=FLAVOR_MLNX_OFED,
        ofed_version=ofed_version,
        ofed_source="/usr/bin/ofed_info",
        packages=(Package("libibverbs1", pkg, "dpkg", "/var/lib/dpkg/status", "sha256:l"),),
    )
    return dataclasses.replace(facts, rdma=rdma)


def test_mlnx_userspace_newer_than_node(bookworm):
    image = mlnx_image(bookworm)
    f = by_id(run(image, node("mofed-5.8-proprietary-535-peermem")), "OFED-USERSPACE-NEWER-THAN-KERNEL")
    assert f.confidence == "vendor-guidance" and f.severity == "warning"
    assert "23.10-1.1.9.0" in f.title and "5.8-3.0.7.0" in f.title
    assert "OFED-USERSPACE-NEWER-THAN-KERNEL" not in ids(run(image, node("mofed-23.10-open-550-peermem")))
    assert "OFED-USERSPACE-NEWER-THAN-KERNEL" not in ids(run(image, node("doca-24.10-open-580-peermem")))


def test_mlnx_release_from_package_suffix(bookworm):
    image = mlnx_image(bookworm, ofed_version=None, pkg="2410mlnx54-1.2410068")
    f = by_id(run(image, node("mofed-23.10-open-550-peermem")), "OFED-USERSPACE-NEWER-THAN-KERNEL")
    assert any(e.value == "2410mlnx54-1.2410068" for e in f.evidence)
    unknown_release = mlnx_image(bookworm, ofed_version=None, pkg="2307mlnx47")
    assert "OFED-USERSPACE-NEWER-THAN-KERNEL" in unknown_rules(
        run(unknown_release, node("mofed-23.10-open-550-peermem"))
    )


def test_mlnx_userspace_on_inbox(bookworm):
    f = by_id(run(mlnx_image(bookworm), node("inbox-6.8-open-570")), "MLNX-USERSPACE-ON-INBOX")
    assert f.confidence == "vendor-guidance"
    # distro rdma-core on the same nodes: nothing
    assert not {"MLNX-USERSPACE-ON-INBOX", "OFED-USERSPACE-NEWER-THAN-KERNEL"} & set(
        ids(run(bookworm, node("inbox-6.8-open-570")))
    )


# ---------- Env traps ----------
@pytest.mark.parametrize(
    "value, severity, effective",
    [
        ("16", "error", "retry count 0"),
        ("10", "error", "retry count 2"),
        ("8", "error", "retry count 0"),
        ("3", "warning", None),
        ("7", None, None),
        ("abc", "warning", None),
    ],
)
def test_retry_cnt(bookworm, value, severity, effective):
    result = run(with_nccl(bookworm, "2.21.5", env={"NCCL_IB_RETRY_CNT": value}), node("inbox-6.8-open-570"))
    if severity is None:
        assert "ENV-NCCL-IB-RETRY-CNT" not in ids(result)
        return
    f = by_id(result, "ENV-NCCL-IB-RETRY-CNT")
    assert f.severity == severity
    if effective:
        assert effective in f.title
        assert "status=IBV_WC_RETRY_EXC_ERR(12)" in f.predicted_error
    ev = f.evidence[0]
    assert ev.fact == "image.env.NCCL_IB_RETRY_CNT" and ev.value == value


def test_env_wins_over_nccl_conf(bookworm):
    both = with_nccl(bookworm, "2.21.5", env={"NCCL_IB_RETRY_CNT": "7"}, nccl_conf={"NCCL_IB_RETRY_CNT": "16"})
    assert "ENV-NCCL-IB-RETRY-CNT" not in ids(run(both, node("inbox-6.8-open-570")))
    conf_only = with_nccl(bookworm, "2.21.5", nccl_conf={"NCCL_IB_RETRY_CNT": "16"})
    f = by_id(run(conf_only, node("inbox-6.8-open-570")), "ENV-NCCL-IB-RETRY-CNT")
    assert f.evidence[0].path == "/etc/nccl.conf" and "/etc/nccl.conf" in f.title


@pytest.mark.parametrize("value, flagged", [("0", True), ("32", True), ("20", False), ("1", False), ("x", True)])
def test_ib_timeout(bookworm, value, flagged):
    result = run(with_nccl(bookworm, "2.21.5", env={"NCCL_IB_TIMEOUT": value}), node("mofed-23.10-open-550-peermem"))
    assert ("ENV-NCCL-IB-TIMEOUT" in ids(result)) is flagged


def test_env_disables(bookworm):
    n = node("mofed-23.10-open-550-peermem")
    ib_off = with_nccl(bookworm, "2.21.5", env={"NCCL_IB_DISABLE": "1"})
    f = by_id(run(ib_off, n), "ENV-DISABLES-IB")
    assert f.predicted_error == "NCCL INFO Using network Socket"
    assert "ENV-DISABLES-IB" not in ids(run(ib_off, node("cpu-no-rdma")))
    gdr_off = with_nccl(bookworm, "2.21.5", env={"NCCL_NET_GDR_LEVEL": "LOC"})
    f = by_id(run(gdr_off, n), "ENV-DISABLES-GDR")
    assert "DMA-BUF" in f.mechanism and "nvidia-peermem" in f.mechanism
    # inbox + open modules: DMA-BUF is the only path, and the image turns it off
    dmabuf_off = with_nccl(bookworm, "2.21.5", nccl_conf={"NCCL_DMABUF_ENABLE": "0"})
    result = run(dmabuf_off, node("inbox-6.8-open-570"))
    assert by_id(result, "ENV-DISABLES-DMABUF").evidence[0].path == "/etc/nccl.conf"
    assert "GDR-PEERMEM-MISSING" in ids(result)
    # with peermem loaded, turning DMA-BUF off loses nothing
    assert "ENV-DISABLES-DMABUF" not in ids(run(dmabuf_off, n))


def test_env_rules_skip_nodes_without_rdma(bookworm):
    image = with_nccl(bookworm, "2.21.5", env={"NCCL_IB_RETRY_CNT": "16", "NCCL_IB_TIMEOUT": "40"})
    # only info is left (NCCL-RELEASE-LATER-FIX names the release's workload-dependent fixes on any node)
    assert [f.id for f in run(image, node("cpu-no-rdma")).findings if f.severity != "info"] == []


# ---------- which NCCL ----------
def test_pip_wheel_beats_system_library(bookworm):
    layer = bookworm.rdma.libibverbs.layer
    image = dataclasses.replace(
        with_nccl(bookworm, "2.21.5"),
        nccl=(
            Nccl("2.18.1", "/usr/lib/x86_64-linux-gnu/libnccl.so.2.18.1", layer, "library"),
            Nccl(
                "2.21.5",
                "/usr/local/lib/python3.11/dist-packages/nvidia_nccl_cu12-2.21.5.dist-info/METADATA",
                layer,
                "pip",
            ),
        ),
    )
    ctx = Ctx(image, node("inbox-6.8-open-570"), None)
    assert ctx.nccl.version == "2.21.5"
    selection = next(e.value for e in ctx.nccl_evidence() if e.fact == "image.nccl.selection")
    assert "pip wheel" in selection and "library 2.18.1" in selection


def test_system_library_when_no_wheel(bookworm):
    layer = bookworm.rdma.libibverbs.layer
    image = dataclasses.replace(
        bookworm,
        nccl=(
            Nccl("2.19.3", "/var/lib/dpkg/status", layer, "dpkg"),
            Nccl("2.19.3", "/usr/lib/x86_64-linux-gnu/libnccl.so.2.19.3", layer, "library"),
        ),
    )
    assert Ctx(image, node("inbox-6.8-open-570"), None).nccl.origin == "library"
