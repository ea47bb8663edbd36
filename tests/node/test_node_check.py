"""Node-only rules and the fleet comparison: node facts (probed from the fixture roots) in, findings out.

Each rule is shown firing on the facts that make it true and staying quiet on the nearest working
configuration, so a test fails if the rule stops firing or starts firing everywhere.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from node_fixtures import fixture_root

from imgcheck import api
from imgcheck.cli.main import main
from imgcheck.engine.evaluate import evaluate, evaluate_node
from imgcheck.engine.fleet_compare import compare
from imgcheck.engine.node_only import NODE_ONLY_IMAGE, classify_gpu
from imgcheck.matrix import load_matrix
from imgcheck.model.image import ImageFacts
from imgcheck.model.node import Gpu, KernelModule, RdmaPort
from imgcheck.model.node_io import dump_node_facts
from imgcheck.node.probe import probe


@pytest.fixture(scope="module")
def matrix():
    return load_matrix()


@pytest.fixture(scope="module")
def probed():
    names = (
        "inbox-ubuntu2204",
        "inbox-ubuntu2404-open",
        "mlnx-ofed-23.10-ubuntu2204",
        "mlnx-ofed-5.8-rocky86",
        "doca-24.10-ubuntu2404",
        "ofed-upgrade-stale-peermem",
        "ofed-other-kernel",
    )
    return {n: probe(fixture_root(n)) for n in names}


def run(node, matrix):
    return evaluate_node(NODE_ONLY_IMAGE, node, matrix)


def ids(result):
    return [f.id for f in result.findings]


def one(result, rule):
    found = [f for f in result.findings if f.id == rule]
    assert len(found) == 1, ids(result)
    return found[0]


def swap(obj, path, value):
    head, _, rest = path.partition(".")
    if not rest:
        return dataclasses.replace(obj, **{head: value})
    return dataclasses.replace(obj, **{head: swap(getattr(obj, head), rest, value)})


# ---------- NODE-PEERMEM-STALE-BUILD ----------
def test_peermem_built_against_the_previous_ofed_cannot_load(probed, matrix):
    f = one(run(probed["ofed-upgrade-stale-peermem"], matrix), "NODE-PEERMEM-STALE-BUILD")
    assert f.severity == "error"
    assert f.predicted_error == "nvidia_peermem: disagrees about version of symbol ib_register_peer_memory_client"
    assert "0x8b0a7d12" in f.mechanism and "0x1d36f0c9" in f.mechanism
    assert any(e.path and e.path.endswith("updates/dkms/ib_core.ko") for e in f.evidence)


def test_peermem_rebuilt_against_the_installed_ofed_is_fine(probed, matrix):
    node = probed["ofed-upgrade-stale-peermem"]
    core = node.rdma.module_files["ib_core"].symbol_crcs
    rebuilt = dataclasses.replace(node.rdma.module_files["nvidia_peermem"], symbol_crcs=dict(core))
    node = swap(node, "rdma.module_files", {**node.rdma.module_files, "nvidia_peermem": rebuilt})
    assert "NODE-PEERMEM-STALE-BUILD" not in ids(run(node, matrix))


def test_exporter_crc_falls_back_to_the_ofed_module_symvers(probed, matrix):
    node = probed["ofed-upgrade-stale-peermem"]
    files = {k: v for k, v in node.rdma.module_files.items() if k != "ib_core"}
    f = one(run(swap(node, "rdma.module_files", files), matrix), "NODE-PEERMEM-STALE-BUILD")
    assert "/usr/src/ofa_kernel/x86_64/5.15.0-25-generic/Module.symvers" in f.mechanism


def test_peermem_built_for_another_kernel_is_the_vermagic_variant(probed, matrix):
    node = swap(probed["ofed-upgrade-stale-peermem"], "kernel.release", "5.15.0-91-generic")
    f = one(run(node, matrix), "NODE-PEERMEM-STALE-BUILD")
    assert "built for kernel 5.15.0-25-generic, not the running 5.15.0-91-generic" in f.title
    assert "version magic '5.15.0-25-generic SMP mod_unload modversions'" in f.predicted_error


# ---------- NODE-OFED-NOT-RUNNING ----------
def test_ofed_built_by_dkms_for_the_previous_kernel(probed, matrix):
    f = one(run(probed["ofed-other-kernel"], matrix), "NODE-OFED-NOT-RUNNING")
    assert "23.10-1.1.9.0" in f.title
    assert "for 5.15.0-25-generic only, not for the running 5.15.0-91-generic" in f.mechanism
    assert "dkms autoinstall -k 5.15.0-91-generic" in f.fixes[0]


def test_running_ofed_and_plain_inbox_are_not_flagged(probed, matrix):
    for name in ("mlnx-ofed-23.10-ubuntu2204", "inbox-ubuntu2204", "doca-24.10-ubuntu2404"):
        assert "NODE-OFED-NOT-RUNNING" not in ids(run(probed[name], matrix)), name


# ---------- NODE-PEERMEM-NO-PEER-API ----------
def test_peermem_installed_on_an_inbox_stack(probed, matrix):
    node = probed["inbox-ubuntu2404-open"]
    peer = KernelModule(path="/lib/modules/6.8.0-55-generic/updates/dkms/nvidia-peermem.ko.zst")
    node = swap(node, "rdma.module_files", {"nvidia_peermem": peer})
    f = one(run(node, matrix), "NODE-PEERMEM-NO-PEER-API")
    assert f.predicted_error == "modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument"
    assert "its prerequisites are met here" in f.mechanism  # open modules on 6.8: DMA-BUF is the way


def test_distribution_kernel_carrying_the_peer_api_is_decided_by_its_symbols(probed, matrix):
    """Issue 34: an inbox (distribution) kernel whose ib_core exports ib_register_peer_memory_client (reported
    for some Ubuntu kernels) can load nvidia-peermem: decided by the kernel's symbols, not the word inbox."""
    node = probed["inbox-ubuntu2404-open"]
    peer = KernelModule(path="/lib/modules/6.8.0-55-generic/updates/dkms/nvidia-peermem.ko.zst")
    core = KernelModule(
        path="/lib/modules/6.8.0-55-generic/kernel/drivers/infiniband/core/ib_core.ko.zst",
        symbol_crcs={"ib_register_peer_memory_client": "0x5c1a9e1b", "ib_unregister_peer_memory_client": "0x0b7e2f3c"},
    )
    node = swap(node, "rdma.module_files", {"nvidia_peermem": peer, "ib_core": core})
    assert "NODE-PEERMEM-NO-PEER-API" not in ids(run(node, matrix))


def test_peer_api_is_not_questioned_on_mlnx_ofed(probed, matrix):
    assert "NODE-PEERMEM-NO-PEER-API" not in ids(run(probed["mlnx-ofed-5.8-rocky86"], matrix))


# ---------- NODE-DMABUF-UNAVAILABLE ----------
def test_inbox_with_proprietary_modules_has_no_gpudirect_path(probed, matrix):
    f = one(run(probed["inbox-ubuntu2204"], matrix), "NODE-DMABUF-UNAVAILABLE")
    assert "proprietary kernel modules" in f.mechanism
    assert f.evidence[-1].fact == "workload.path" and "any CUDA program that uses verbs" in f.evidence[-1].value


def test_open_modules_on_a_new_inbox_kernel_have_dmabuf(probed, matrix):
    assert "NODE-DMABUF-UNAVAILABLE" not in ids(run(probed["inbox-ubuntu2404-open"], matrix))


def test_old_inbox_kernel_and_missing_dma_buf_config_are_named(probed, matrix):
    node = swap(probed["inbox-ubuntu2404-open"], "kernel.release", "5.4.0-42-generic")
    node = swap(node, "kernel.config", {"CONFIG_DMA_SHARED_BUFFER": "n"})
    node = swap(node, "kernel.config_source", "/boot/config-5.4.0-42-generic")
    f = one(run(node, matrix), "NODE-DMABUF-UNAVAILABLE")
    assert "kernel 5.4.0-42-generic < 5.12" in f.mechanism
    assert "without CONFIG_DMA_SHARED_BUFFER (/boot/config-5.4.0-42-generic)" in f.mechanism


def test_loaded_peermem_on_mlnx_is_a_gpudirect_path(probed, matrix):
    assert "NODE-DMABUF-UNAVAILABLE" not in ids(run(probed["mlnx-ofed-5.8-rocky86"], matrix))


def test_unknown_stack_is_an_unknown_not_a_finding(probed, matrix):
    node = swap(probed["inbox-ubuntu2204"], "rdma.stack", None)
    result = run(node, matrix)
    assert "NODE-DMABUF-UNAVAILABLE" not in ids(result)
    assert any(u.rule == "NODE-DMABUF-UNAVAILABLE" for u in result.unknowns)


# ---------- NODE-GPU-NO-GDR ----------
@pytest.mark.parametrize(
    "name,klass",
    [
        ("NVIDIA GeForce RTX 4090", "consumer"),
        ("NVIDIA H100 80GB HBM3", "datacenter"),
        ("NVIDIA RTX A6000", "workstation"),
        ("NVIDIA TITAN RTX", "consumer"),
        ("NVIDIA RTX 6000 Ada Generation", "workstation"),
        ("Orin (nvgpu)", "embedded"),
    ],
)
def test_gpu_class_catalog(matrix, name, klass):
    assert classify_gpu(name, matrix)["gpu_class"] == klass


def test_geforce_boards_have_no_gpudirect_rdma(probed, matrix):
    node = probed["inbox-ubuntu2404-open"]
    node = swap(node, "gpu.gpus", (Gpu(index=0, name="NVIDIA GeForce RTX 4090", pci_bus_id="0000:19:00.0"),))
    f = one(run(node, matrix), "NODE-GPU-NO-GDR")
    assert f.title.startswith("NVIDIA GeForce RTX 4090 (consumer GPU)")
    assert "GPU Direct RDMA Disabled for HCA 0 'mlx5_0'" in f.predicted_error
    assert "NODE-GPU-NO-GDR" not in ids(run(probed["inbox-ubuntu2404-open"], matrix))  # the H100 it really has


def test_stated_gpu_class_wins_over_the_name(probed, matrix):
    node = swap(
        probed["inbox-ubuntu2404-open"],
        "gpu.gpus",
        (Gpu(index=0, name="NVIDIA Graphics Device", gpu_class="consumer"),),
    )
    assert "NODE-GPU-NO-GDR" in ids(run(node, matrix))


# ---------- NODE-LEGACY-NV-PEER-MEM ----------
def test_legacy_nv_peer_mem_on_a_driver_that_ships_nvidia_peermem(probed, matrix):
    node = swap(probed["mlnx-ofed-23.10-ubuntu2204"], "gpu.peermem.legacy_nv_peer_mem", True)
    f = one(run(node, matrix), "NODE-LEGACY-NV-PEER-MEM")
    assert "535.129.03 ships nvidia-peermem" in f.mechanism
    old = swap(node, "gpu.driver_version", "460.106.00")
    assert "NODE-LEGACY-NV-PEER-MEM" not in ids(run(old, matrix))  # before R470 it is the only module


# ---------- with an image: the GPUDirect rules need a CUDA + verbs workload ----------
def test_image_without_verbs_gets_no_gpudirect_node_findings(probed, matrix):
    plain = ImageFacts(reference="debian:bookworm")
    result = evaluate(plain, probed["inbox-ubuntu2204"], matrix)
    assert not [f for f in result.findings if f.id.startswith("NODE-")]


# ---------- fleet comparison ----------
def test_infiniband_and_roce_nodes_in_one_job(probed, matrix):
    nodes = [probed["inbox-ubuntu2204"], probed["mlnx-ofed-23.10-ubuntu2204"]]
    found = {f.id: f for f in compare(nodes, matrix)}
    f = found["FLEET-LINK-LAYER-MIXED"]
    assert f.severity == "error"
    assert "Ethernet on gpu-roce-01" in f.title and "InfiniBand on dgx-a100-07" in f.title
    assert set(f.nodes) == {"gpu-roce-01", "dgx-a100-07"}
    assert "FLEET-STACK-MIXED" in found and "FLEET-FW-MIXED" in found


def test_a_uniform_fleet_has_no_fleet_findings(probed, matrix):
    a = probed["mlnx-ofed-23.10-ubuntu2204"]
    assert compare([a, dataclasses.replace(a, name="dgx-a100-08")], matrix) == []


def test_roce_mtu_difference_is_reported_with_the_derived_mtus(probed, matrix):
    a = probed["inbox-ubuntu2204"]
    dev = a.rdma.devices[0]
    small = dataclasses.replace(dev, ports=(dataclasses.replace(dev.ports[0], netdev_mtu=1500, active_mtu=1024),))
    b = dataclasses.replace(swap(a, "rdma.devices", (small,)), name="gpu-roce-02")
    a1 = swap(a, "rdma.devices", (dev,))
    f = {x.id: x for x in compare([a1, b], matrix)}["FLEET-MTU-MIXED"]
    assert f.title == "RoCE port MTUs differ between nodes: 4096 on gpu-roce-01 vs 1024 on gpu-roce-02"


def _roce_node(probed, name, device_index):
    """The RoCE fixture with one of its two ports only: mlx5_0 (IPv4 address: RoCE v2 IPv4 at entries 4-5) or
    mlx5_1 (no IPv4 address: only the link-local pair), as another node of the same job."""
    a = probed["inbox-ubuntu2204"]
    return dataclasses.replace(swap(a, "rdma.devices", (a.rdma.devices[device_index],)), name=name)


def test_roce_gid_kinds_differ_between_nodes(probed, matrix):
    nodes = [_roce_node(probed, "roce-a", 0), _roce_node(probed, "roce-b", 1), _roce_node(probed, "roce-c", 0)]
    f = {x.id: x for x in compare(nodes, matrix)}["FLEET-ROCE-GID-MIXED"]
    assert f.severity == "warning"
    assert f.title.endswith("RoCE v2 IPv4 on roce-a, roce-c vs RoCE v2 link-local only on roce-b")
    assert set(f.nodes) == {"roce-a", "roce-b", "roce-c"}


def test_v2_ipv4_entry_at_another_index_is_reported(probed, matrix):
    a = _roce_node(probed, "roce-a", 0)
    port = a.rdma.devices[0].ports[0]
    # the same table with the IPv4 pair two entries later (a VLAN device's pair added first)
    moved = tuple(dataclasses.replace(g, index=g.index + 2) if g.index >= 4 else g for g in port.gids)
    b = dataclasses.replace(
        swap(
            a, "rdma.devices", (dataclasses.replace(a.rdma.devices[0], ports=(dataclasses.replace(port, gids=moved),)),)
        ),
        name="roce-b",
    )
    found = {x.id: x for x in compare([a, b], matrix)}
    assert "FLEET-ROCE-GID-MIXED" not in found
    f = found["FLEET-ROCE-GID-INDEX-DIFFERS"]
    assert f.severity == "info" and "5 on roce-a vs 7 on roce-b" in f.title


def test_unread_gid_tables_make_no_difference(probed, matrix):
    a = _roce_node(probed, "roce-a", 0)
    b = _roce_node(probed, "roce-b", 1)
    port = b.rdma.devices[0].ports[0]
    b = swap(
        b, "rdma.devices", (dataclasses.replace(b.rdma.devices[0], ports=(dataclasses.replace(port, gids=None),)),)
    )
    assert not {x.id for x in compare([a, b], matrix)} & {"FLEET-ROCE-GID-MIXED", "FLEET-ROCE-GID-INDEX-DIFFERS"}


def test_unknown_values_do_not_make_a_difference(probed, matrix):
    a = probed["mlnx-ofed-23.10-ubuntu2204"]
    b = swap(dataclasses.replace(a, name="x"), "gpu.driver_version", None)
    b = swap(
        b, "rdma.devices", tuple(dataclasses.replace(d, fw_ver=None, ports=(RdmaPort(port=1),)) for d in b.rdma.devices)
    )
    assert compare([a, b], matrix) == []


# ---------- the command ----------
def _write(tmp_path, facts, name):
    path = tmp_path / f"{name}.json"
    path.write_text(dump_node_facts(facts))
    return str(path)


def test_node_check_cli_exit_codes_and_formats(tmp_path, probed, capsys):
    stale = _write(tmp_path, probed["ofed-upgrade-stale-peermem"], "stale")
    good = _write(tmp_path, probed["inbox-ubuntu2404-open"], "good")
    out = tmp_path / "r.json"
    assert main(["node", "check", "--node-facts", stale, "-o", f"json={out}"]) == 1
    doc = json.loads(out.read_text())
    assert doc["image"]["reference"] == "(no image: node check)"
    assert [f["id"] for f in doc["findings"] if f["severity"] == "error"] == ["NODE-PEERMEM-STALE-BUILD"]
    assert main(["node", "check", "--node-facts", stale, "--fail-on", "never", "-o", "json"]) == 0
    assert main(["node", "check", "--node-facts", good, "-o", "json"]) == 0
    for fmt in ("sarif", "junit", "markdown", "table"):
        assert main(["node", "check", "--node-facts", stale, "-o", fmt]) == 1
    assert "NODE-PEERMEM-STALE-BUILD" in capsys.readouterr().out
    assert (
        main(
            [
                "node",
                "check",
                "--node-facts",
                stale,
                "--ignore",
                "NODE-PEERMEM-STALE-BUILD",
                "--reason",
                "rebuilding tonight",
                "-o",
                "json",
            ]
        )
        == 0
    )


def test_node_check_bad_input(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["node", "check", "--node-facts", str(bad)]) == 2
    assert main(["node", "check"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "not valid JSON" in err


def test_api_check_nodes_compares_the_fleet(probed):
    report = api.check_nodes([probed["inbox-ubuntu2204"], probed["doca-24.10-ubuntu2404"]])
    assert "FLEET-LINK-LAYER-MIXED" in [f.id for f in report.findings]
    assert report.verdict == "fail"


# ---------- NODE-PCI-ACS-REDIRECT ----------
def test_acs_redirect_bridges_are_reported(probed, matrix):
    node = swap(probed["inbox-ubuntu2204"], "pci_acs_redirect", ("0000:00:01.0", "0000:16:01.0"))
    f = one(run(node, matrix), "NODE-PCI-ACS-REDIRECT")
    assert "0000:00:01.0, 0000:16:01.0" in f.mechanism
    assert "intel_iommu=on iommu=pt" in f.mechanism
    assert "NODE-PCI-ACS-REDIRECT" not in ids(run(probed["inbox-ubuntu2204"], matrix))  # () : none redirects


def test_ucx_cuda_image_without_nccl_gets_the_gpudirect_rules_naming_its_path(probed, matrix):
    from imgcheck.model.image import Cuda, Libibverbs, RdmaFacts, Ucx

    image = ImageFacts(
        reference="ucx-perftest:1",
        rdma=RdmaFacts(
            libibverbs=Libibverbs(
                version="1.14.44.0",
                rdma_core="44.0",
                has_reg_dmabuf_mr=True,
                path="/usr/lib/x86_64-linux-gnu/libibverbs.so.1",
            )
        ),
        ucx=Ucx(version="1.15.0"),
        cuda=Cuda(version="12.4.1"),
    )
    result = evaluate(image, probed["inbox-ubuntu2204"], matrix)
    f = one(result, "NODE-DMABUF-UNAVAILABLE")
    assert "UCX 1.15.0 with CUDA" in f.mechanism
    assert {e.fact: e.value for e in f.evidence}["workload.path"].startswith("UCX 1.15.0 with CUDA")


# ---------- NODE-PINNING-MOVABLE-MEMORY ----------
def test_movablecore_on_the_cmdline_warns_about_long_term_pinning(probed, matrix):
    node = swap(probed["inbox-ubuntu2204"], "kernel.cmdline_params", {"iommu": "pt", "movablecore": "75%"})
    f = one(run(node, matrix), "NODE-PINNING-MOVABLE-MEMORY")
    assert "movablecore=75%" in f.title and "ZONE_MOVABLE" in f.mechanism
    assert f.predicted_error.endswith("Cannot allocate memory")
    assert "NODE-PINNING-MOVABLE-MEMORY" not in ids(run(probed["inbox-ubuntu2204"], matrix))  # iommu=pt only
    mirror = swap(probed["inbox-ubuntu2204"], "kernel.cmdline_params", {"kernelcore": "mirror"})
    assert "NODE-PINNING-MOVABLE-MEMORY" in ids(run(mirror, matrix))  # non-mirrored memory goes to ZONE_MOVABLE
    # /proc/cmdline not read: asked, never "no problem"
    unread = run(swap(probed["inbox-ubuntu2204"], "kernel.cmdline_params", None), matrix)
    assert "NODE-PINNING-MOVABLE-MEMORY" not in ids(unread)
    assert any(u.rule == "NODE-PINNING-MOVABLE-MEMORY" and "cmdline" in u.reason for u in unread.unknowns)


def test_hand_written_facts_with_a_bad_gpu_class_are_bad_input(tmp_path, probed, capsys):
    doc = json.loads(dump_node_facts(probed["inbox-ubuntu2404-open"]))
    doc["gpu"]["gpus"][0]["gpu_class"] = "gaming"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    assert main(["node", "check", "--node-facts", str(path)]) == 2
    assert "gpu_class must be one of datacenter, workstation, consumer, embedded" in capsys.readouterr().err


def test_hand_written_minimal_facts_leave_new_facts_unknown(tmp_path, matrix):
    path = tmp_path / "min.json"
    path.write_text(
        json.dumps(
            {
                "name": "n1",
                "rdma": {"stack": "mlnx_ofed", "ofed_version": "23.10-1.1.9.0"},
                "gpu": {"driver_version": "535.129.03"},
            }
        )
    )
    from imgcheck.model.node_io import load_node_facts

    node = load_node_facts(str(path))
    assert node.kernel.config is None and node.rdma.module_files is None and node.dkms is None
    result = run(node, matrix)
    assert not [f for f in result.findings if f.severity == "error"]


def test_node_check_over_an_inventory_fleet(home, probed, capsys):
    from imgcheck.node.inventory import Inventory

    inv = Inventory.default()
    inv.add(dataclasses.replace(probed["inbox-ubuntu2204"], labels={"pool": "a"}))
    inv.add(dataclasses.replace(probed["mlnx-ofed-23.10-ubuntu2204"], labels={"pool": "a"}))
    assert main(["node", "check", "--fleet", "pool=a", "-o", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    link = next(f for f in doc["findings"] if f["id"] == "FLEET-LINK-LAYER-MIXED")
    assert sorted(link["nodes"]) == ["dgx-a100-07", "gpu-roce-01"]
    assert main(["node", "check", "--fleet", "pool=none"]) == 3  # no node to obtain: exit 3, as check does


def test_image_check_reports_the_node_state_rules_for_an_rdma_image(probed, matrix):
    from imgcheck.model.image import Libibverbs, RdmaFacts

    image = ImageFacts(
        reference="rdma-app:1", rdma=RdmaFacts(libibverbs=Libibverbs(version="1.14.44.0", rdma_core="44.0"))
    )
    result = evaluate(image, probed["ofed-upgrade-stale-peermem"], matrix)
    assert "NODE-PEERMEM-STALE-BUILD" in ids(result)
    assert "NODE-DMABUF-UNAVAILABLE" not in ids(result)  # no CUDA in the image: no GPUDirect workload


# ---------- NODE-IOMMU-TRANSLATED ----------
def test_translated_iommu_domains_are_reported(probed, matrix):
    node = swap(probed["inbox-ubuntu2204"], "iommu_domains", {"0000:17:00.0": "DMA-FQ", "0000:18:00.0": "identity"})
    f = one(run(node, matrix), "NODE-IOMMU-TRANSLATED")
    assert "0000:17:00.0 DMA-FQ" in f.title and "0000:18:00.0" not in f.title
    passthrough = swap(node, "iommu_domains", {"0000:17:00.0": "identity", "0000:18:00.0": "none"})
    assert "NODE-IOMMU-TRANSLATED" not in ids(run(passthrough, matrix))
