"""NODE-PCI-ACS-REDIRECT / NODE-IOMMU-TRANSLATED on a single-node GPU<->GPU job (no NIC, no verbs in the image).

NCCL's P2P transport crosses the bridges above the GPUs whenever the job uses several GPUs of one node, so the
node's ACS and IOMMU facts matter with no RDMA at all (NCCL troubleshooting guide, "GPU-to-GPU communication").
The node is the probed inbox-ubuntu2204 fixture root (two H100s at 0000:18:00.0 and 0000:2a:00.0), the image the
real Debian bookworm facts without the RDMA userspace plus a pip NCCL (a torch wheel image), the launch NGC's
documented `docker run --gpus all` line (tests/job/specs/ngc-pytorch-run.sh).
"""

from __future__ import annotations

import dataclasses
import os

import pytest
from engine_facts import committed_facts, with_nccl
from node_fixtures import fixture_root

from imgcheck.engine.evaluate import evaluate
from imgcheck.job.parse import load_job_spec
from imgcheck.matrix import load_matrix
from imgcheck.model.image import RdmaFacts
from imgcheck.node.probe import probe

HERE = os.path.dirname(os.path.abspath(__file__))
NGC_RUN = os.path.join(HERE, "..", "job", "specs", "ngc-pytorch-run.sh")
BRIDGES = ("0000:00:01.0", "0000:16:01.0")
ACS = "NODE-PCI-ACS-REDIRECT"
IOMMU = "NODE-IOMMU-TRANSLATED"


@pytest.fixture(scope="module")
def matrix():
    return load_matrix()


@pytest.fixture(scope="module")
def node():
    return dataclasses.replace(probe(fixture_root("inbox-ubuntu2204")), pci_acs_redirect=BRIDGES)


@pytest.fixture(scope="module")
def image():
    base = committed_facts("bookworm")
    no_verbs = dataclasses.replace(base, rdma=RdmaFacts(libibverbs=None, providers=(), flavor="none"))
    return with_nccl(no_verbs, "2.21.5")


@pytest.fixture(scope="module")
def job():
    (facts,) = load_job_spec(NGC_RUN)
    assert facts.gpus == -1  # --gpus all
    return facts


def findings(result, rule):
    return [f for f in result.findings if f.id == rule]


def unknowns(result, rule):
    return [u for u in result.unknowns if u.rule == rule]


def test_acs_redirect_warns_for_a_multi_gpu_job_without_any_nic(image, node, job, matrix):
    result = evaluate(image, node, matrix, job=job)
    (f,) = findings(result, ACS)
    assert f.severity == "warning"
    assert "GPU<->GPU" in f.title and "2 bridge(s)" in f.title
    assert "0000:00:01.0, 0000:16:01.0" in f.mechanism
    workload = [e.value for e in f.evidence if e.fact == "workload.path"]
    assert workload and "2 GPUs" in str(workload[0])  # --gpus all on a two-GPU node
    assert any("NCCL_P2P_DISABLE=1" in fix for fix in f.fixes)


@pytest.mark.parametrize(
    ("setting", "value"), [("NCCL_P2P_DISABLE", "1"), ("NCCL_P2P_LEVEL", "LOC"), ("CUDA_VISIBLE_DEVICES", "0")]
)
def test_no_p2p_path_decides_it(image, node, job, matrix, setting, value):
    quiet = dataclasses.replace(image, env={**image.env, setting: value})
    result = evaluate(quiet, node, matrix, job=job)
    assert not findings(result, ACS) and not unknowns(result, ACS)


def test_one_gpu_per_node_decides_it(image, node, job, matrix):
    result = evaluate(image, node, matrix, job=dataclasses.replace(job, gpus=1, gpus_setting="--gpus 1"))
    assert not findings(result, ACS) and not unknowns(result, ACS)


def test_no_launch_spec_asks_for_the_job_shape(image, node, matrix):
    result = evaluate(image, node, matrix)
    assert not findings(result, ACS)
    (u,) = unknowns(result, ACS)
    assert "GPU<->GPU" in u.reason and "launch spec" in u.reason


def test_acs_not_read_is_asked_not_silent(image, node, job, matrix):
    result = evaluate(image, dataclasses.replace(node, pci_acs_redirect=None), matrix, job=job)
    (u,) = unknowns(result, ACS)
    assert "node.pci_acs_redirect" in u.facts


def test_no_nccl_in_the_image_decides_it(image, node, job, matrix):
    no_nccl = dataclasses.replace(image, nccl=())
    result = evaluate(no_nccl, node, matrix, job=job)
    assert not findings(result, ACS) and not unknowns(result, ACS)


def test_translated_gpu_domains_warn_for_a_multi_gpu_job(image, node, job, matrix):
    domains = {"0000:18:00.0": "DMA", "0000:2a:00.0": "DMA", "0000:17:00.0": "DMA-FQ"}
    result = evaluate(image, dataclasses.replace(node, iommu_domains=domains), matrix, job=job)
    (f,) = findings(result, IOMMU)
    assert "0000:18:00.0 DMA" in f.title and "0000:17:00.0" not in f.title  # only the GPUs' domains
    assert "GPU<->GPU" in f.title


def test_translated_domain_only_on_a_non_gpu_device_is_fine(image, node, job, matrix):
    domains = {"0000:18:00.0": "identity", "0000:2a:00.0": "identity", "0000:17:00.0": "DMA-FQ"}
    result = evaluate(image, dataclasses.replace(node, iommu_domains=domains), matrix, job=job)
    assert not findings(result, IOMMU) and not unknowns(result, IOMMU)


def test_iommu_off_at_boot_outweighs_a_stale_domain_type(image, node, job, matrix):
    domains = {"0000:18:00.0": "DMA", "0000:2a:00.0": "DMA"}
    kernel = dataclasses.replace(node.kernel, cmdline_params={"intel_iommu": "off"})
    result = evaluate(image, dataclasses.replace(node, iommu_domains=domains, kernel=kernel), matrix, job=job)
    assert not findings(result, IOMMU)
