"""Joining the log with image and node facts: causes reorder by facts, and notes say whether the
facts are consistent with the log, explain it, or contradict it."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest

from imgcheck.cli.main import main
from imgcheck.formats.json_format import render_facts
from imgcheck.model.image import Cuda, ImageFacts, Libibverbs, Nccl, Provider, RdmaFacts
from imgcheck.triage import triage

HERE = os.path.dirname(__file__)
LOGS = os.path.join(HERE, "logs")
NODES = os.path.join(HERE, "nodes")


def log(name):
    return os.path.join(LOGS, name)


def node(name):
    return os.path.join(NODES, name + ".json")


def image(nccl="2.27.3", env=None, iova2=True, providers_pabi=34, cuda="12.8.0"):
    """Image facts shaped like a Debian bookworm rdma-core 44 image with a pip NCCL (synthetic)."""
    lib = Libibverbs(
        version="1.14.44.0",
        rdma_core="44.0",
        symbol_versions=("IBVERBS_1.1", "IBVERBS_1.8", "IBVERBS_1.12"),
        private_abi=34,
        has_reg_mr_iova2=iova2,
        has_reg_dmabuf_mr=True,
        path="/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0",
        layer="sha256:aa",
    )
    prov = Provider(
        name="mlx5", pabi=providers_pabi, path=f"/usr/lib/x86_64-linux-gnu/libibverbs/libmlx5-rdmav{providers_pabi}.so"
    )
    return ImageFacts(
        reference="registry.example/team/trainer:test",
        rdma=RdmaFacts(libibverbs=lib, providers=(prov,), flavor="inbox"),
        nccl=(Nccl(nccl, path="/usr/local/lib/python3.11/dist-packages/nvidia/nccl/lib/libnccl.so.2", origin="pip"),),
        cuda=Cuda(version=cuda, origin="version.json"),
        env=dict(env or {}),
    )


@pytest.fixture
def facts_file(tmp_path):
    def write(facts: ImageFacts) -> str:
        p = tmp_path / "facts.json"
        p.write_text(render_facts(facts))
        return f"facts:{p}"

    return write


def notes(report):
    return {n.topic: n for n in report.join.notes}


def test_1842_ro_env_not_applied_and_old_driver(facts_file):
    # nccl#1842: the reporter exported NCCL_IB_PCI_RELAXED_ORDERING=0, yet the log names ibv_reg_mr_iova2
    r = triage(
        [log("nccl-1842-einval.log")],
        image=facts_file(image(env={"NCCL_IB_PCI_RELAXED_ORDERING": "0"})),
        node_facts=node("a100-r470-peermem"),
    )
    causes = r.diagnoses[0].causes
    assert causes[0].id == "env-not-applied" and causes[0].status == "supported"
    assert any("NCCL_IB_PCI_RELAXED_ORDERING=0" in b for b in causes[0].because)
    n = notes(r)
    assert n["registration-call"].status == "contradicts"
    assert n["peer-memory"].status == "explains" and "470.199.02" in n["peer-memory"].text
    assert r.join.image == "registry.example/team/trainer:test" and r.join.node == "a100-r470"


def ruled_out(causes, cause_id: str) -> bool:
    """The cause is unlikely and ranked among the unlikely ones after every cause still open (the kernel-line causes,
    unlikely without a kernel line in the input, may follow it)."""
    ids = [c.id for c in causes]
    return cause_id in ids and all(c.status == "unlikely" for c in causes[ids.index(cause_id) :])


def test_1842_without_the_env_keeps_the_advice_order(facts_file):
    r = triage([log("nccl-1842-einval.log")], image=facts_file(image()), node_facts=node("a100-r470-peermem"))
    causes = r.diagnoses[0].causes
    assert causes[0].id == "peermem-gpu-driver-path"
    assert ruled_out(causes, "env-not-applied")
    assert "registration-call" not in notes(r)


def test_enomem_explained_by_memlock():
    r = triage([log("nccl-tests-206-enomem.log")], node_facts=node("no-peermem"))
    assert r.diagnoses[0].causes[0].id == "memlock" and r.diagnoses[0].causes[0].status == "supported"
    assert notes(r)["memlock"].status == "explains"


@pytest.mark.parametrize(
    "node_name,first,peermem_note",
    [
        ("no-peermem", "peermem-not-loaded", "explains"),
        ("a100-r470-peermem", "peermem-version", "unknown"),
    ],
)
def test_efault_and_peermem(node_name, first, peermem_note):
    r = triage([log("nv-peer-memory-115-efault.log")], node_facts=node(node_name))
    causes = r.diagnoses[0].causes
    assert causes[0].id == first
    if node_name == "a100-r470-peermem":
        assert ruled_out(causes, "peermem-not-loaded")
    assert notes(r)["peer-memory"].status == peermem_note


@pytest.mark.parametrize(
    "nccl,first,status", [("2.21.5", "old-nccl-new-doca", "explains"), ("2.27.3", "dmabuf", "contradicts")]
)
def test_gdr_disabled_with_peermem_loaded_on_doca(facts_file, nccl, first, status):
    # nccl#1537/#1676 shape: nvidia-peermem loaded, no /sys/kernel/mm/memory_peers
    r = triage(
        [log("nccl-1537-gdr-disabled.log")],
        image=facts_file(image(nccl=nccl)),
        node_facts=node("doca-peermem-no-memory-peers"),
    )
    gdr = next(d for d in r.diagnoses if d.signature == "GDR-DISABLED")
    assert gdr.causes[0].id == first
    assert notes(r)["gpudirect"].status == status
    assert notes(r)["relaxed-ordering"].status == "consistent"  # [RO] in the log, iova2 in the image


def test_ro_in_log_but_not_possible_with_image(facts_file):
    r = triage([log("nccl-1537-gdr-disabled.log")], image=facts_file(image(iova2=False)))
    assert notes(r)["relaxed-ordering"].status == "contradicts"


@pytest.mark.parametrize(
    "value,first,status", [("10", "retry-cnt-truncated", "explains"), ("7", "peer-unreachable", "consistent")]
)
def test_vendor_129_and_retry_count(facts_file, value, first, status):
    r = triage([log("nccl-902-vendor129.log")], image=facts_file(image(env={"NCCL_IB_RETRY_CNT": value})))
    d = r.diagnoses[0]
    assert d.causes[0].id == first
    if value == "7":
        assert d.causes[-1].id == "retry-cnt-truncated" and d.causes[-1].status == "unlikely"
    assert notes(r)["ib-retry-count"].status == status


def test_retry_count_from_the_log_beats_the_image(tmp_path, facts_file):
    p = tmp_path / "x.log"
    p.write_text(
        "n1:1:2 [0] NCCL INFO NCCL_IB_RETRY_CNT set by environment to 16.\n"
        "n1:1:3 [0] transport/net_ib.cc:1 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> with status=12 "
        "opcode=0 len=0 vendor err 129 (Recv)\n"
    )
    r = triage([str(p)], image=facts_file(image(env={"NCCL_IB_RETRY_CNT": "7"})))
    assert r.diagnoses[0].causes[0].id == "retry-cnt-truncated"
    assert notes(r)["ib-retry-count"].status == "explains" and "(log)" in notes(r)["ib-retry-count"].text


def test_provider_mismatch_not_from_the_image(facts_file):
    r = triage([log("byteps-313-provider-abi.log")], image=facts_file(image()))
    assert notes(r)["rdma-userspace"].status == "contradicts"
    r = triage([log("byteps-313-provider-abi.log")], image=facts_file(image(providers_pabi=25)))
    assert notes(r)["rdma-userspace"].status == "explains"
    assert r.diagnoses[0].causes[0].id == "image-inconsistent"


def test_nccl_version_mismatch(facts_file):
    r = triage([log("nccl-1948-invalid-ordinal.log")], image=facts_file(image(nccl="2.21.5")))
    assert notes(r)["nccl-version"].status == "contradicts"
    r = triage([log("nccl-1948-invalid-ordinal.log")], image=facts_file(image(nccl="2.28.9")))
    assert notes(r)["nccl-version"].status == "consistent"


def test_cuda_driver_insufficient(facts_file):
    r = triage(
        [log("nccl-tests-12-driver.log")], image=facts_file(image(cuda="12.8.0")), node_facts=node("a100-r470-peermem")
    )
    assert r.diagnoses[0].causes[0].status == "supported"
    assert notes(r)["cuda-driver"].status == "explains"


def test_dmabuf_eopnotsupp_on_old_ofed():
    r = triage([log("nccl-778-dmabuf.log")], node_facts=node("a100-r470-peermem"))  # MLNX_OFED 5.4: no dma-buf MR
    assert r.diagnoses[0].causes[0].id == "kernel-too-old" and r.diagnoses[0].causes[0].status == "supported"
    assert notes(r)["dmabuf-registration"].status == "explains"


def test_checkpoint_segfault_on_gb200():
    r = triage([log("megatron-bridge-2355-crc32.log")], node_facts=node("gb200-580"))
    d = r.diagnoses[0]
    assert next(c for c in d.causes if c.id == "gb200-driver-580").status == "supported"
    assert notes(r)["checkpoint-segfault"].status == "consistent"


def test_compile_cache_env_from_image(facts_file):
    r = triage([log("prime-rl-2305-triton-stale.log")], image=facts_file(image(env={"HOME": "/home/user"})))
    assert notes(r)["compile-caches"].status == "explains"
    assert r.diagnoses[0].causes[0].id == "node-local-cache" and r.diagnoses[0].causes[0].status == "supported"
    pinned = image(env={"TORCHINDUCTOR_CACHE_DIR": "/tmp/ind", "TRITON_CACHE_DIR": "/tmp/tri"})
    r = triage([log("prime-rl-2305-triton-stale.log")], image=facts_file(pinned))
    ids = [c.id for c in r.diagnoses[0].causes]
    assert ids[0] == "where-is-tmp"  # the pinned dirs are demoted; checking where they live comes first
    assert next(c for c in r.diagnoses[0].causes if c.id == "node-local-cache").status == "unlikely"


def test_engine_findings_are_included(facts_file):
    r = triage([log("nv-peer-memory-115-efault.log")], image=facts_file(image()), node_facts=node("no-peermem"))
    assert r.join.engine_note is None
    assert r.join.engine_findings and all(
        f.id and f.severity in ("error", "warning", "info") for f in r.join.engine_findings
    )


def test_no_facts_means_unknown_not_guessed():
    r = triage([log("nccl-902-vendor129.log")])
    assert r.join is None
    c = r.diagnoses[0].causes[0]
    assert c.id == "retry-cnt-truncated" and c.status == "unknown"


@pytest.mark.e2e
def test_real_bookworm_image_and_node(debian_archive, capsys):
    """End to end on a real Debian bookworm rdma-core 44 image: the log's [RO] is consistent with its libibverbs."""
    archive = debian_archive("bookworm")
    rc = main(
        [
            "triage",
            log("nccl-1537-gdr-disabled.log"),
            "--image",
            f"docker-archive:{archive}",
            "--node-facts",
            node("no-peermem"),
            "-o",
            "json",
        ]
    )
    doc = json.loads(capsys.readouterr().out)
    assert rc == 1
    by_topic = {n["topic"]: n for n in doc["join"]["notes"]}
    assert by_topic["relaxed-ordering"]["status"] == "consistent"
    ev = {e["fact"]: e["value"] for e in by_topic["relaxed-ordering"]["evidence"]}
    assert ev["image.rdma.libibverbs.version"] == "1.14.44.0" and ev["image.rdma.libibverbs.has_reg_mr_iova2"] is True
    assert by_topic["gpudirect"]["status"] == "explains"
    gdr = next(d for d in doc["diagnoses"] if d["signature"] == "GDR-DISABLED")
    assert gdr["causes"][0]["id"] == "peermem-missing" and gdr["causes"][0]["status"] == "supported"


def test_contradicts_only_when_the_deciding_facts_are_known(facts_file, tmp_path):
    # Same node as above but without the peermem fact: NCCL's GDR decision cannot be reproduced, so the join
    # must say "unknown", not "contradicts". (A missing /sys/kernel/mm/memory_peers fact alone no longer makes
    # it unknown: NCCL >= 2.23.4 does not look there, and for older NCCL the knowledge module infers it from
    # the stack and release, saying so in the evidence.)
    doc = json.load(open(node("doca-peermem-no-memory-peers"), encoding="utf-8"))
    del doc["gpu"]["peermem"]["loaded"]
    doc["gpu"]["peermem"].pop("legacy_nv_peer_mem", None)
    p = tmp_path / "node.json"
    p.write_text(json.dumps(doc))
    r = triage([log("nccl-1537-gdr-disabled.log")], image=facts_file(image(nccl="2.27.3")), node_facts=str(p))
    assert notes(r)["gpudirect"].status == "unknown"
    # provider ABI error with an image whose provider ABI is not recorded: cannot tell
    r = triage([log("byteps-313-provider-abi.log")], image=facts_file(image(providers_pabi=None)))
    assert notes(r)["rdma-userspace"].status == "unknown"
    r = triage([log("byteps-313-provider-abi.log")], image=facts_file(image()))
    assert notes(r)["rdma-userspace"].status == "contradicts"  # both ABI numbers known and equal


@pytest.mark.parametrize(
    "userspace, status", [("470.256.02", "supported"), ("470.199.02", "unlikely"), (None, "unknown")]
)
def test_nvml_mismatch_is_decided_by_the_node_driver_builds(tmp_path, userspace, status):
    doc = json.loads(open(node("a100-r470-peermem")).read())
    if userspace:
        doc["gpu"]["userspace_driver_version"] = userspace
    path = tmp_path / "node.json"
    path.write_text(json.dumps(doc))
    r = triage([log("cpnr-computing-109-nvml-mismatch.log")], node_facts=str(path))
    d = r.diagnoses[0]
    assert d.signature == "NVIDIA-DRIVER-LIBRARY-MISMATCH"
    assert next(c for c in d.causes if c.id == "module-userspace-mismatch").status == status


def test_nvml_mismatch_blames_the_image_driver_packages_when_the_image_has_them(tmp_path, facts_file):
    """NVIDIA-DRIVER-LIBRARY-MISMATCH: with --image, driver packages in the image (catalog driver_userspace_packages)
    put image-bundles-driver-libs first; without them the node's upgrade-without-reboot stays first."""
    from imgcheck.model.image import Package

    write = facts_file
    log = tmp_path / "job.log"
    log.write_text("Failed to initialize NVML: Driver/library version mismatch\n")
    bundled = dataclasses.replace(
        image(), packages=(Package("libnvidia-compute-455", "455.32.00-0ubuntu1", "dpkg", "/var/lib/dpkg/status"),)
    )
    r = triage([str(log)], image=write(bundled))
    assert r.diagnoses[0].causes[0].id == "image-bundles-driver-libs"
    plain = triage([str(log)], image=write(dataclasses.replace(image(), packages=())))
    assert plain.diagnoses[0].causes[0].id != "image-bundles-driver-libs"
