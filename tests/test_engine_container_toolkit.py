"""The NVIDIA Container Toolkit and MIG as node facts (issue 32): node/container_toolkit.py, node/mig.py,
engine/container_toolkit.py and engine/mig.py.

The node is the probe of the fixture root inbox-ubuntu2404-open (an H100 with driver 565.57.01, the toolkit 1.17.3
packages, their default config.toml and a generated CDI spec: tests/node/fixtures/README.md); variations are copies
of it laid out as the GPU Operator and the MIG user guide describe the host."""

from __future__ import annotations

import os
import shutil

import pytest
from engine_facts import by_id, committed_facts, ids, matrix, replace_in, run, unknown_rules, with_nccl

from imgcheck.model.node import Gpu, NodeMig, ToolkitConfig
from imgcheck.node.probe import probe

FIXTURES = os.path.join(os.path.dirname(__file__), "node", "fixtures")
H100 = "inbox-ubuntu2404-open"
DRIVER_ROOT = "NODE-CTK-DRIVER-ROOT"
CDI = "NODE-CTK-CDI-NO-SPEC"
FIXED = "NODE-CTK-FIXED-DEFECTS"
MIG = "NODE-MIG-NCCL"
LIB = "usr/lib/x86_64-linux-gnu"
CONFIG = "etc/nvidia-container-runtime/config.toml"


@pytest.fixture(scope="module")
def image():
    return with_nccl(committed_facts("bookworm"), "2.21.5")


@pytest.fixture
def root(tmp_path):
    dest = tmp_path / "root"
    shutil.copytree(os.path.join(FIXTURES, H100), dest, symlinks=True)
    return dest


def set_config(root, old: str, new: str) -> None:
    path = root / CONFIG
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def operator_driver(root) -> None:
    """The GPU Operator's driver container: the driver's libraries under /run/nvidia/driver, none on the host."""
    for name in os.listdir(root / LIB):
        if name.startswith("libnvidia-ml.so"):
            target = os.readlink(root / LIB / name) if os.path.islink(root / LIB / name) else None
            os.makedirs(root / "run/nvidia/driver" / LIB, exist_ok=True)
            if target:
                os.symlink(target, root / "run/nvidia/driver" / LIB / name)
            else:
                shutil.copy(root / LIB / name, root / "run/nvidia/driver" / LIB / name)
            os.remove(root / LIB / name)


def said(result, rule: str) -> bool:
    return rule in ids(result) or rule in unknown_rules(result)


def test_probe_reads_the_packaged_toolkit(root):
    toolkit = probe(str(root)).container_toolkit
    assert (toolkit.toolkit_version, toolkit.libnvidia_container_version) == ("1.17.3", "1.17.3")
    assert toolkit.configs == (
        ToolkitConfig("/etc/nvidia-container-runtime/config.toml", mode="auto", driver_root="/", driver_found=True),
    )
    assert toolkit.cdi_specs == ("/etc/cdi/nvidia.yaml",)


def test_host_driver_and_default_root_are_decided_fine(root, image):
    result = run(image, probe(str(root)))
    assert not said(result, DRIVER_ROOT) and not said(result, CDI)


def test_operator_driver_with_the_host_config_root_fails_with_load_library(root, image):
    operator_driver(root)
    node = probe(str(root))
    assert node.container_toolkit.operator_driver_root is True
    found = by_id(run(image, node), DRIVER_ROOT)
    assert found.severity == "error"
    assert "load library failed: libnvidia-ml.so.1" in found.predicted_error
    assert "/run/nvidia/driver" in found.title  # the operator variant names where the driver is


def test_operator_root_is_decided_fine_when_the_config_points_there(root, image):
    operator_driver(root)
    set_config(root, '#root = "/run/nvidia/driver"', 'root = "/run/nvidia/driver"')
    assert not said(run(image, probe(str(root))), DRIVER_ROOT)


def test_root_at_the_operator_path_without_a_driver_pod_fails(root, image):
    set_config(root, '#root = "/run/nvidia/driver"', 'root = "/run/nvidia/driver"')
    found = by_id(run(image, probe(str(root))), DRIVER_ROOT)
    assert "/run/nvidia/driver" in found.mechanism and found.severity == "error"


def test_cdi_mode_without_a_spec_is_unresolvable(root, image):
    set_config(root, 'mode = "auto"', 'mode = "cdi"')
    os.remove(root / "etc/cdi/nvidia.yaml")
    found = by_id(run(image, probe(str(root))), CDI)
    assert found.predicted_error.startswith("unresolvable CDI devices")


def test_cdi_mode_with_the_generated_spec_is_fine(root, image):
    set_config(root, 'mode = "auto"', 'mode = "cdi"')
    assert not said(run(image, probe(str(root))), CDI)


def test_unreadable_configs_are_asked_not_silent(root, image):
    node = replace_in(probe(str(root)), "container_toolkit.configs", None)
    result = run(image, node)
    assert DRIVER_ROOT in unknown_rules(result) and DRIVER_ROOT not in ids(result)


def test_toolkit_fixes_after_the_nodes_release_are_listed_with_the_release_to_upgrade_to(root, image):
    found = by_id(run(image, probe(str(root))), FIXED)
    assert found.severity == "info"
    rows = [r for r in matrix().rows("container_toolkit_changes") if r["applies"] == "injection"]
    newest = max((str(f) for r in rows for f in r["fixed_in"]), key=lambda v: tuple(int(x) for x in v.split(".")))
    assert any(f"{newest} or later" in fix for fix in found.fixes)
    assert "1.17.3" in found.title and "ldconfig" in found.title  # e.g. 1.17.7's "Fix resolution of libs in LDCache"


def test_mig_fixes_apply_only_to_a_node_that_uses_mig(root, image):
    node = replace_in(probe(str(root)), "container_toolkit.toolkit_version", "1.16.0")
    node = replace_in(node, "container_toolkit.libnvidia_container_version", "1.16.0")
    plain = by_id(run(image, node), FIXED)
    split = by_id(run(image, replace_in(node, "mig", NodeMig(gpu_instances={"gpu0": 2}))), FIXED)
    assert "MIG" not in plain.title and "MIG" in split.title


def test_newest_toolkit_has_no_fix_left(root, image):
    node = replace_in(probe(str(root)), "container_toolkit.toolkit_version", "99.0.0")
    node = replace_in(node, "container_toolkit.libnvidia_container_version", "99.0.0")
    assert not said(run(image, node), FIXED)


def test_unknown_toolkit_release_is_asked(root, image):
    node = replace_in(probe(str(root)), "container_toolkit.toolkit_version", None)
    assert FIXED in unknown_rules(run(image, node))


# ---------- MIG ----------


def mig_instances(root, gpu: str, count: int) -> None:
    """GPU instances as the driver lists them: /proc/driver/nvidia/capabilities/gpu<N>/mig/gi<G>/access (MIG user
    guide, "Device Nodes and Capabilities"), each with a compute instance ci0."""
    for gi in range(1, count + 1):
        base = root / f"proc/driver/nvidia/capabilities/{gpu}/mig/gi{gi}"
        os.makedirs(base / "ci0", exist_ok=True)
        (base / "access").write_text(f"DeviceFileMinor: {gi * 9 + 3}\nDeviceFileMode: 292\nDeviceFileModify: 1\n")
        (base / "ci0" / "access").write_text(
            f"DeviceFileMinor: {gi * 9 + 4}\nDeviceFileMode: 292\nDeviceFileModify: 1\n"
        )


def test_probe_counts_gpu_instances(root):
    mig_instances(root, "gpu0", 3)
    assert probe(str(root)).mig.gpu_instances == {"gpu0": 3}
    assert probe(os.path.join(FIXTURES, H100)).mig.gpu_instances == {}  # the driver's mig/config only: no split


def test_nccl_on_mig_instances_is_a_finding_with_nccls_refusal(root, image):
    mig_instances(root, "gpu0", 2)
    found = by_id(run(image, probe(str(root))), MIG)
    assert "Duplicate GPU detected" in found.predicted_error
    assert found.severity == "warning"


def test_no_instance_is_decided(root, image):
    assert not said(run(image, probe(str(root))), MIG)


def test_mig_state_unknown_on_a_mig_capable_gpu_is_asked(root, image):
    node = replace_in(probe(str(root)), "mig.gpu_instances", None)
    result = run(image, node)
    assert MIG in unknown_rules(result) and MIG not in ids(result)


def test_mig_state_unknown_on_a_gpu_without_mig_is_decided(root, image):
    node = replace_in(probe(str(root)), "mig.gpu_instances", None)
    node = replace_in(node, "gpu.gpus", (Gpu(index=0, name="NVIDIA GeForce RTX 4090", pci_bus_id="0000:01:00.0"),))
    assert not said(run(image, node), MIG)


def test_an_image_without_nccl_is_not_told_about_mig(root):
    mig_instances(root, "gpu0", 2)
    assert not said(run(committed_facts("bookworm"), probe(str(root))), MIG)


# ---------- legacy images and IMEX (nvidia-container-toolkit#797) ----------

LEGACY_IMEX = "NODE-CTK-LEGACY-IMEX"
# the Env of a CUDA image the toolkit calls legacy: CUDA_VERSION without NVIDIA_REQUIRE_CUDA (the KFTO image)
LEGACY_ENV = {
    "CUDA_VERSION": "12.1.1",
    "NVIDIA_VISIBLE_DEVICES": "all",
    "NVIDIA_DRIVER_CAPABILITIES": "compute,utility",
}


def legacy_image(**extra):
    return with_nccl(committed_facts("bookworm"), "2.21.5", env={**LEGACY_ENV, **extra})


def toolkit_at(root, version):
    node = replace_in(probe(str(root)), "container_toolkit.toolkit_version", version)
    return replace_in(node, "container_toolkit.libnvidia_container_version", version)


def test_toolkit_1_17_0_rejects_a_legacy_image_without_imex_channels(root):
    found = by_id(run(legacy_image(), toolkit_at(root, "1.17.1")), LEGACY_IMEX)
    assert found.severity == "error"
    assert "unsupported IMEX channel value: all" in found.predicted_error
    assert any("1.17.2" in fix for fix in found.fixes)  # the 1.17 line's fix (CHANGELOG.md at v1.17.3)


def test_fixed_and_older_toolkits_and_non_legacy_images_are_decided(root):
    for version in ("1.17.2", "1.17.8", "1.18.0", "1.16.2"):
        assert not said(run(legacy_image(), toolkit_at(root, version)), LEGACY_IMEX), version
    node = toolkit_at(root, "1.17.1")
    assert not said(run(legacy_image(NVIDIA_REQUIRE_CUDA="cuda>=12.1"), node), LEGACY_IMEX)  # the workaround
    assert not said(run(legacy_image(NVIDIA_IMEX_CHANNELS="0"), node), LEGACY_IMEX)


def test_a_legacy_image_on_an_unknown_toolkit_release_is_asked(root):
    result = run(legacy_image(), toolkit_at(root, None))
    assert LEGACY_IMEX in unknown_rules(result) and LEGACY_IMEX not in ids(result)


def test_has_fix_follows_release_lines():
    from imgcheck.engine.cluster_components import is_fixed

    fixed = ["1.17.2", "1.18.0", "1.19.0"]
    assert is_fixed("1.17.2", fixed) and is_fixed("1.17.8", fixed) and is_fixed("1.20.0", fixed)
    assert is_fixed("1.17.1", fixed) is False and is_fixed("1.16.2", fixed) is False
    assert is_fixed("1.18.1", ["1.17.7", "1.19.0"]) is False  # a line between two listed ones never got the backport


def test_the_operator_release_gives_the_toolkit_release_when_the_host_has_no_package(root):
    # GPU Operator v24.9.0 deploys toolkit v1.17.0 (catalog gpu_operator_components), inside the IMEX defect's range
    node = replace_in(toolkit_at(root, None), "cluster_components", {"gpu-operator": "v24.9.0"})
    found = by_id(run(legacy_image(), node), LEGACY_IMEX)
    assert "1.17.0" in found.title and "GPU Operator v24.9.0" in found.title
    pod = replace_in(toolkit_at(root, None), "cluster_components", {"container-toolkit": "v1.17.8"})
    assert not said(run(legacy_image(), pod), LEGACY_IMEX)


# ---------- one MIG device per CUDA process (pytorch/pytorch#130181, #92315) ----------

PER_PROCESS = "JOB-MIG-SEVERAL-PER-PROCESS"
# the MIG UUIDs of a PyTorch maintainer's example in https://github.com/pytorch/pytorch/issues/92315
TWO_MIGS = "MIG-89c850dc-38e3-57df-85c7-690c186b68e9,MIG-f2b5fbbd-850e-51bb-8ffa-ac9fb48126da"


def bare_metal(**env):
    from imgcheck.job.model import RUNTIME_HOST, EnvVar, JobFacts

    return JobFacts(
        path="train.sh", kind="python", runtime=RUNTIME_HOST, env=tuple(EnvVar(k, v) for k, v in env.items())
    )


def run_job(image, node, job):
    from imgcheck.engine import evaluate

    return evaluate(image, node, matrix(), job=job)


def test_two_mig_devices_for_one_process_leave_device_1_missing(root, image):
    result = run_job(image, probe(str(root)), bare_metal(CUDA_VISIBLE_DEVICES=TWO_MIGS))
    found = by_id(result, PER_PROCESS)
    assert found.severity == "error" and "invalid device ordinal" in found.predicted_error
    assert "MIG-89c850dc" in found.title


def test_one_mig_device_per_process_is_decided(root, image):
    one = TWO_MIGS.split(",")[0]
    assert not said(run_job(image, probe(str(root)), bare_metal(CUDA_VISIBLE_DEVICES=one)), PER_PROCESS)


def test_several_gpus_to_one_container_on_a_mig_node(root, image):
    import dataclasses

    mig_instances(root, "gpu0", 2)
    job = dataclasses.replace(bare_metal(), runtime="kubernetes", kind="Pod", gpus=2)
    found = by_id(run_job(image, probe(str(root)), job), PER_PROCESS)
    assert found.severity == "warning"
    plain = run_job(image, probe(os.path.join(FIXTURES, H100)), job)  # no instance: whole GPUs
    assert not said(plain, PER_PROCESS)
