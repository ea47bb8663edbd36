"""NFD features.d output: content, label syntax, atomic write, NFD's size limit, and reading labels back."""

from __future__ import annotations

import os
import re

import pytest
from node_fixtures import FIXTURE_NAMES, fixture_root

from imgcheck.cli.main import main
from imgcheck.errors import LimitExceededError, UnavailableError
from imgcheck.model.node import NodeFacts
from imgcheck.node import nfd
from imgcheck.node.probe import probe

# Kubernetes label syntax: name <= 63 chars, value <= 63 chars, alphanumeric at both ends
LABEL_NAME = re.compile(r"^[A-Za-z0-9]([-_.A-Za-z0-9]{0,61}[A-Za-z0-9])?$")
LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-_.A-Za-z0-9]{0,61}[A-Za-z0-9])?)?$")


def _parse_feature_file(text: str) -> dict[str, str]:
    labels = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition("=")
        labels[key] = value
    return labels


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_feature_lines_are_valid_labels(name):
    labels = _parse_feature_file(nfd.render_features(probe(fixture_root(name))))
    assert labels
    for key, value in labels.items():
        prefix, _, label = key.partition("/")
        assert prefix + "/" == nfd.PREFIX and len(prefix) <= 253
        assert LABEL_NAME.match(label), key
        assert LABEL_VALUE.match(value), (key, value)


def test_feature_values_for_mlnx_and_doca_nodes():
    p = nfd.PREFIX
    mlnx = _parse_feature_file(nfd.render_features(probe(fixture_root("mlnx-ofed-5.8-rocky86"))))
    assert mlnx == {
        p + "schema": "1",
        p + "kernel.release": "4.18.0-372.9.1.el8.x86_64",
        p + "rdma.stack": "mlnx_ofed",
        p + "rdma.ofed-version": "5.8-3.0.7.0",
        p + "rdma.uverbs-abi": "6",
        p + "rdma.peer-memory-api": "true",
        p + "rdma.devices": "1",
        p + "nvidia.driver-version": "535.104.05",
        p + "nvidia.kernel-module": "proprietary",
        p + "nvidia.peermem": "true",
        p + "nvidia.nv-peer-mem": "false",
        p + "limits.memlock-kib": "unlimited",
        p + "fabric.nvswitches": "0",  # no NVSwitch; Fabric Manager's package and process unknown there (left out)
        p + "fabric.ib-umad-loaded": "false",
        # no toolkit package database (BerkeleyDB rpm) and no config: installed unknown; no CDI spec; no MIG instance
        p + "ctk.cdi-specs": "0",
        p + "mig.instances": "0",
    }
    inbox = _parse_feature_file(nfd.render_features(probe(fixture_root("inbox-ubuntu2404-open"))))
    assert inbox[p + "rdma.stack"] == "inbox" and p + "rdma.ofed-version" not in inbox  # unknown: left out
    assert inbox[p + "nvidia.kernel-module"] == "open" and inbox[p + "limits.memlock-kib"] == "8192"


def test_write_is_atomic_and_leaves_only_the_feature_file(tmp_path, monkeypatch):
    facts = probe(fixture_root("doca-24.10-ubuntu2404"))
    path = nfd.write_features(facts, str(tmp_path))
    assert os.listdir(tmp_path) == ["imgcheck"]
    assert oct(os.stat(path).st_mode & 0o777) == "0o644"
    old = open(path).read()

    def boom(src, dst):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(nfd.os, "replace", boom)
    with pytest.raises(UnavailableError, match="Read-only"):
        nfd.write_features(probe(fixture_root("inbox-ubuntu2204")), str(tmp_path))
    assert open(path).read() == old and os.listdir(tmp_path) == ["imgcheck"]


def test_file_over_nfds_limit_is_refused(tmp_path):
    huge = NodeFacts(name="n" * 70000)  # lands in the header comment: pushes the file past 64 KiB
    with pytest.raises(LimitExceededError, match="65536"):
        nfd.write_features(huge, str(tmp_path))
    assert os.listdir(tmp_path) == []
    with pytest.raises(UnavailableError, match="not a directory"):
        nfd.write_features(probe(fixture_root("inbox-ubuntu2204")), str(tmp_path / "missing"))


def test_cli_probe_writes_features_d(tmp_path, capsys):
    assert (
        main(
            [
                "node",
                "probe",
                "--root",
                fixture_root("mlnx-ofed-23.10-ubuntu2204"),
                "--nfd-dir",
                str(tmp_path),
                "-o",
                str(tmp_path / "facts.json"),
                "-q",
            ]
        )
        == 0
    )
    text = (tmp_path / "imgcheck").read_text()
    assert f"{nfd.PREFIX}rdma.ofed-version=23.10-1.1.9.0\n" in text
    assert f"{nfd.PREFIX}nvidia.peermem=false\n" in text


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_labels_read_back_into_the_same_key_facts(name):
    facts = probe(fixture_root(name))
    labels = _parse_feature_file(nfd.render_features(facts))
    back = nfd.facts_from_labels(facts.name, labels)
    assert back.kernel.release == facts.kernel.release
    assert (back.rdma.stack, back.rdma.ofed_version, back.rdma.uverbs_abi, back.rdma.peer_memory_api) == (
        facts.rdma.stack,
        facts.rdma.ofed_version,
        facts.rdma.uverbs_abi,
        facts.rdma.peer_memory_api,
    )
    assert (back.gpu.driver_version, back.gpu.kernel_module, back.gpu.peermem.loaded) == (
        facts.gpu.driver_version,
        facts.gpu.kernel_module,
        facts.gpu.peermem.loaded,
    )
    assert back.limits.memlock_kib == facts.limits.memlock_kib
    assert back.limits.rdma is None  # the RDMA cgroup limits are not labels: unknown from NFD
    assert "rdma.devices" in back.unknown  # details only travel in the annotation


def test_nfd_and_gfd_labels_without_imgcheck():
    labels = {
        "feature.node.kubernetes.io/kernel-version.full": "5.15.0-25-generic",
        "feature.node.kubernetes.io/system-os_release.ID": "ubuntu",
        "feature.node.kubernetes.io/system-os_release.VERSION_ID": "22.04",
        # GFD's deprecated spelling only (older GFD releases)
        "nvidia.com/cuda.driver.major": "550",
        "nvidia.com/cuda.driver.minor": "107",
        "nvidia.com/cuda.driver.rev": "02",
        "nvidia.com/cuda.runtime.major": "12",
        "nvidia.com/cuda.runtime.minor": "4",
        "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "kubernetes.io/arch": "amd64",
    }
    facts = nfd.facts_from_labels("n1", labels)
    assert facts.kernel.release == "5.15.0-25-generic"
    assert (facts.os.id, facts.os.version_id) == ("ubuntu", "22.04")
    assert facts.gpu.driver_version == "550.107.02" and facts.gpu.cuda_driver_version == "12.4"
    assert len(facts.gpu.gpus) == 8 and facts.gpu.gpus[0].name == "NVIDIA-H100-80GB-HBM3"
    assert facts.arch == "amd64" and facts.labels == labels
    assert facts.rdma.stack is None and "imgcheck" in facts.unknown["rdma.stack"]
    assert facts.gpu.kernel_module is None and "gpu.kernel_module" in facts.unknown
    # the current spelling wins when both are there
    both = {**labels, "nvidia.com/cuda.driver-version.full": "550.107.02"}
    assert nfd.facts_from_labels("n1", both).gpu.driver_version == "550.107.02"


def test_toolkit_and_mig_round_trip_through_labels():
    """The H100 fixture (toolkit 1.17.3 packages, one CDI spec, no MIG instance) as labels and back."""
    facts = probe(fixture_root("inbox-ubuntu2404-open"))
    labels = _parse_feature_file(nfd.render_features(facts))
    p = nfd.PREFIX
    assert labels[p + "ctk.version"] == "1.17.3" and labels[p + "ctk.mode"] == "auto"
    assert labels[p + "ctk.driver-root-ok"] == "true" and labels[p + "mig.instances"] == "0"
    back = nfd.facts_from_labels("n1", labels)
    assert back.container_toolkit.toolkit_version == "1.17.3"
    assert back.container_toolkit.cdi_specs is not None and len(back.container_toolkit.cdi_specs) == 1
    assert back.mig.gpu_instances == {}


def test_gpu_feature_discovery_mig_labels_are_read():
    # GFD under the mixed strategy: one count label per profile (NVIDIA/k8s-device-plugin README, Generated Labels)
    mixed = nfd.facts_from_labels(
        "n1",
        {
            "nvidia.com/mig.strategy": "mixed",
            "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB",
            "nvidia.com/mig-1g.5gb.count": "7",
            "nvidia.com/mig-3g.20gb.count": "2",
        },
    )
    assert mixed.mig.profiles == {"1g.5gb": 7, "3g.20gb": 2} and mixed.mig.gpu_instances == {"all": 9}
    single = nfd.facts_from_labels(
        "n2", {"nvidia.com/gpu.product": "A100-SXM4-40GB-MIG-1g.5gb", "nvidia.com/gpu.count": "56"}
    )
    assert single.mig.profiles == {"1g.5gb": 56}
    plain = nfd.facts_from_labels(
        "n3", {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "8"}
    )
    assert plain.mig.gpu_instances is None and "mig.gpu_instances" in plain.unknown
