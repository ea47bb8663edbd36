"""imgcheck.knowledge: the derived facts every consumer shares, on real node fixtures and the shipped matrix."""

from __future__ import annotations

import json

import pytest
from engine_facts import matrix, node, replace_in

from imgcheck.knowledge import cuda as cuda_k
from imgcheck.knowledge import gpudirect, providers, settings, stack
from imgcheck.knowledge import nccl as nccl_k
from imgcheck.model.image import ImageFacts, Nccl
from imgcheck.model.image_io import parse_image_facts
from imgcheck.model.node import RdmaDevice
from imgcheck.versions import ranges


@pytest.mark.parametrize(
    "version, floor, want",
    [
        ("2.13", "2.13.4", None),  # any 2.13.x: may be before or after 2.13.4
        ("2.13", "2.13", True),
        ("2.13", "2.14", False),
        ("2.12.7", "2.13.4", False),
        ("2.21.5", "2.13.4", True),
        ("535", "525", True),
        ("470.82.01", "525", False),
        ("450.80", "450.80.02", None),
        ("5.15.0-91-generic", "5.12", True),
        (None, "1.0", None),
        ("x", "1.0", None),
    ],
)
def test_partial_versions_are_ranges(version, floor, want):
    assert ranges.at_least(version, floor) is want


def test_nccl_feature_bounds_come_from_the_matrix():
    m = matrix()
    assert nccl_k.has_feature(m, "2.13.4", "dmabuf_no_backoff") is True  # 2.13.4 <= v < 2.14
    assert nccl_k.has_feature(m, "2.18.1", "dmabuf_no_backoff") is False
    assert nccl_k.has_feature(m, "2.13", "dmabuf") is None  # never taken as 2.13.4
    assert nccl_k.has_feature(m, "2.22.3", "gdr_module_sysfs_check") is False


def test_nccl_in_use_prefers_the_pip_wheel_over_the_system_library():
    image = ImageFacts(
        "x",
        nccl=(
            Nccl("2.18.3", "/usr/lib/libnccl.so.2.18.3", origin="library"),
            Nccl("2.21.5", "/site/nvidia_nccl_cu12", origin="pip"),
        ),
    )
    assert nccl_k.nccl_in_use(image).version == "2.21.5"
    assert "also present: library 2.18.3" in nccl_k.selection_words(image, nccl_k.nccl_in_use(image))


def test_settings_resolve_log_over_env_over_nccl_conf():
    image = ImageFacts("x", env={"NCCL_IB_DISABLE": "0"}, nccl_conf={"NCCL_IB_DISABLE": "1", "NCCL_IB_HCA": "mlx5_0"})
    assert settings.resolve("NCCL_IB_DISABLE", image).origin == "env"
    assert settings.resolve("NCCL_IB_HCA", image).evidence.path == "/etc/nccl.conf"
    logged = settings.resolve("NCCL_IB_DISABLE", image, (({"NCCL_IB_DISABLE": "1"}, "log of rank 3"),))
    assert (logged.value, logged.source_words) == ("1", "log of rank 3")
    assert settings.resolve("NCCL_SOCKET_IFNAME", image) is None


def test_cuda_floor_is_the_matrix_row_triage_and_engine_share():
    m = matrix()
    assert cuda_k.minimum_driver(m, "11.8") == m.row("cuda_minor_compat", cuda_major=11)["minimum_driver"]
    assert cuda_k.driver_meets(m, "450.80", "11.8")[0] is None  # a partial driver straddling 450.80.02
    assert cuda_k.driver_meets(m, "470.199.02", "12.4")[0] is False
    assert cuda_k.driver_meets(m, "550.54.15", "12.4")[0] is True


@pytest.mark.parametrize(
    "dev, want",
    [
        (RdmaDevice(name="mlx4_0", hca_type="MT4099"), "mlx4"),  # ConnectX-3: "MT" does not make it mlx5
        (RdmaDevice(name="mlx5_0", hca_type="MT4123"), "mlx5"),
        (RdmaDevice(name="efa_0"), "efa"),
        (RdmaDevice(name="irdma0"), "irdma"),
        (RdmaDevice(name="bnxt_re0"), "bnxt_re"),
        (RdmaDevice(name="hfi1_0"), "hfi1"),
        (RdmaDevice(name="qib0"), "qib"),
        (RdmaDevice(name="ibp12s0", hca_type="MT4129"), None),  # a renamed device: the name cannot tell
    ],
)
def test_provider_by_device_name(dev, want):
    assert providers.provider_of(dev) == want


def test_provider_by_driver_wins_over_the_name():
    class Dev:  # the nodefacts work adds RdmaDevice.driver; read through getattr so both sides merge
        name, hca_type, driver = "ibp12s0", "MT4129", "mlx5_core"

    assert providers.provider_of(Dev()) == "mlx5"


def test_memory_peers_inferred_from_stack_and_release_when_not_probed():
    m = matrix()
    seen = node("mofed-23.10-open-550-peermem")
    assert stack.memory_peers_api(m, seen)[0] is True and "inferred" not in stack.memory_peers_api(m, seen)[1]
    unseen = replace_in(seen, "rdma.peer_memory_api", None)
    value, words = stack.memory_peers_api(m, unseen)
    assert value is True and words.startswith("inferred")
    doca = replace_in(node("doca-24.10-open-580-peermem"), "rdma.peer_memory_api", None)
    assert stack.memory_peers_api(m, doca)[0] is False and "inferred" in stack.memory_peers_api(m, doca)[1]
    inbox = replace_in(node("inbox-6.8-open-570"), "rdma.peer_memory_api", None)
    assert stack.memory_peers_api(m, inbox)[0] is False
    between = replace_in(replace_in(seen, "rdma.peer_memory_api", None), "rdma.ofed_version", "24.04-0.6.6.0")
    assert stack.memory_peers_api(m, between)[0] is False  # gone in 24.04-0.6.6.0's peer_mem.c (issue 34)
    series_only = replace_in(between, "rdma.ofed_version", "24.04")
    assert stack.memory_peers_api(m, series_only)[0] is None  # 24.04 could be an earlier 24.04 build: unknown


def test_old_nccl_sees_peermem_through_inferred_memory_peers():
    m = matrix()
    unseen = replace_in(node("mofed-23.10-open-550-peermem"), "rdma.peer_memory_api", None)
    assert gpudirect.peermem_visible(m, unseen, "2.18.3")[0] is True
    doca = replace_in(node("doca-24.10-open-580-peermem"), "rdma.peer_memory_api", None)
    visible, why = gpudirect.peermem_visible(m, doca, "2.18.3")
    assert visible is False and "inferred" in why


def test_a_left_out_fact_is_unknown_and_an_explicit_null_is_known():
    facts = parse_image_facts(
        json.loads(
            '{"reference": "hand", "rdma": {"flavor": "inbox"}, "cuda": {"version": "12.4.1", "compat_driver": null}}'
        ),
        "hand.json",
    )
    assert facts.unknown_reason("rdma.libibverbs") == "not given in hand.json"
    assert facts.unknown_reason("rdma.libibverbs.has_reg_dmabuf_mr") == "not given in hand.json"
    assert facts.unknown_reason("cuda.compat_driver") is None  # explicit null: looked, found none
    assert facts.unknown_reason("rdma.flavor") is None
    assert facts.unknown_reason("nccl") == "not given in hand.json"


def test_node_gpudirect_paths_before_any_image():
    m = matrix()
    inbox_prop = gpudirect.node_paths(m, node("inbox-5.15-proprietary-535"))
    assert inbox_prop.dmabuf[0] is False and inbox_prop.peer_memory[0] is False  # no path at all
    inbox_open = gpudirect.node_paths(m, node("inbox-6.8-open-570"))
    assert inbox_open.dmabuf[0] is True and inbox_open.peer_memory[0] is False
    mofed = gpudirect.node_paths(m, node("mofed-5.8-proprietary-535-peermem"))
    assert mofed.dmabuf[0] is False and mofed.peer_memory[0] is True


def test_stack_capabilities_list_every_feature_for_the_stack():
    caps = stack.capabilities(matrix(), node("mofed-5.8-470-peermem"))
    assert caps["dmabuf_mr"][0] is True and caps["peer_memory_api"][0] is True
    assert caps["memory_peers_sysfs_removed"][0] is False
    assert stack.capabilities(matrix(), node("inbox-6.8-open-570"))["peer_memory_api"][0] is False
