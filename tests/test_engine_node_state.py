"""engine/node_state.py: each rule decides on a known node_state fact and asks when the fact matters and is unknown.

Images are the committed facts of the real Debian bookworm image (libucx0 1.13, NCCL added with with_nccl); nodes are
the committed engine fixtures with their node_state set as node/node_state.py reads it (tests/node/test_node_state.py
reads the same values from real host layouts)."""

from __future__ import annotations

import dataclasses

import pytest
from engine_facts import by_id, committed_facts, ids, matrix, node, unknown_rules, with_nccl

from imgcheck.engine import evaluate
from imgcheck.job.model import RUNTIME_HOST, EnvVar, JobFacts
from imgcheck.model.node import NodeState

NODE = "inbox-6.8-open-570"


def _node(**state):
    base = node(NODE)
    return dataclasses.replace(base, state=dataclasses.replace(base.state, **state))


def _run(image, node_facts, job=None):
    return evaluate(image, node_facts, matrix(), job=job)


def _said(result, rule):
    return rule in ids(result) or rule in unknown_rules(result)


@pytest.fixture(scope="module")
def image():
    return with_nccl(committed_facts("bookworm"), "2.21.5")


def _ucx(image, version):
    return dataclasses.replace(image, ucx=dataclasses.replace(image.ucx, version=version))


def test_yama_scope_1_fails_ucx_before_1_6_and_not_after(image):
    """ucx-3545: Ubuntu 18.04's ptrace_scope 1, UCX 1.5.1: process_vm_readv EPERM; UCX 1.6.0 is the working config."""
    old = _ucx(image, "1.5.1")
    found = by_id(_run(old, _node(yama_ptrace_scope=1)), "NODE-YAMA-PTRACE-CMA")
    assert found.severity == "error" and "process_vm_readv" in found.predicted_error
    assert "UCX_TLS=^cma" in " ".join(found.fixes) and "1.6.0" in " ".join(found.fixes)
    assert "NODE-YAMA-PTRACE-CMA" not in ids(_run(_ucx(image, "1.6.0"), _node(yama_ptrace_scope=1)))
    assert "NODE-YAMA-PTRACE-CMA" not in ids(_run(old, _node(yama_ptrace_scope=0)))
    asked = _run(old, _node(yama_ptrace_scope=None))
    assert "NODE-YAMA-PTRACE-CMA" in unknown_rules(asked) and "NODE-YAMA-PTRACE-CMA" not in ids(asked)
    # a recent UCX handles every scope itself: nothing to ask
    assert not _said(_run(image, _node(yama_ptrace_scope=None)), "NODE-YAMA-PTRACE-CMA")


def test_shm_mode_decides_for_host_processes_only(image):
    """nccl-328: /dev/shm not writable for the user, NCCL's shm_open EACCES; chmod 1777 was the fix."""
    host = JobFacts(path="run.sh", kind="python", runtime=RUNTIME_HOST)
    found = by_id(_run(image, _node(shm_mode="755"), host), "NODE-SHM-NOT-WRITABLE")
    assert "shm_open failed : Permission denied" in found.predicted_error and "755" in found.title
    assert "NODE-SHM-NOT-WRITABLE" not in ids(_run(image, _node(shm_mode="1777"), host))
    docker = JobFacts(path="run.sh", kind="docker run", runtime="docker")
    assert "NODE-SHM-NOT-WRITABLE" not in ids(_run(image, _node(shm_mode="755"), docker))
    assert "NODE-SHM-NOT-WRITABLE" in unknown_rules(_run(image, _node(shm_mode=None), host))


def test_nouveau_without_the_nvidia_driver(image):
    no_driver = dataclasses.replace(
        _node(nouveau_loaded=True, nouveau_blacklisted=True),
        gpu=dataclasses.replace(node(NODE).gpu, driver_version=None, kernel_module=None, cuda_driver_version=None),
    )
    found = by_id(_run(image, no_driver), "NODE-NOUVEAU-LOADED")
    assert "initramfs" in found.mechanism  # the blacklisted variant: the blacklist is not in the initramfs
    assert "NODE-NOUVEAU-LOADED" not in ids(_run(image, _node(nouveau_loaded=True)))  # nvidia.ko is loaded
    unseen = dataclasses.replace(no_driver, state=NodeState())
    assert "NODE-NOUVEAU-LOADED" in unknown_rules(_run(image, unseen))


def test_imex_channels_asked_for_and_missing(image):
    """mscclpp-467: no /dev/nvidia-caps-imex-channels/channel0, cuMemCreate with fabric handles 'operation not
    permitted'; creating channel0 fixed it."""
    job = JobFacts(path="run.sh", kind="python", runtime=RUNTIME_HOST, env=(EnvVar("NVIDIA_IMEX_CHANNELS", "0"),))
    found = by_id(_run(image, _node(imex_channels=(), imex_registered=True), job), "NODE-IMEX-CHANNEL-MISSING")
    assert "operation not permitted" in found.predicted_error and "mknod" in " ".join(found.fixes)
    old = by_id(_run(image, _node(imex_channels=(), imex_registered=False), job), "NODE-IMEX-CHANNEL-MISSING")
    assert "registers no IMEX channel class" in old.mechanism
    assert "NODE-IMEX-CHANNEL-MISSING" not in ids(_run(image, _node(imex_channels=("channel0",)), job))
    assert "NODE-IMEX-CHANNEL-MISSING" in unknown_rules(_run(image, _node(imex_channels=None), job))
    plain = JobFacts(path="run.sh", kind="python", runtime=RUNTIME_HOST)
    assert not _said(_run(image, _node(imex_channels=()), plain), "NODE-IMEX-CHANNEL-MISSING")


def test_mig_instances_without_capability_devices(image):
    base = _node(nvidia_caps=())
    mig = dataclasses.replace(base, mig=dataclasses.replace(base.mig, gpu_instances={"gpu0": 2}))
    assert "2 MIG instance" in by_id(_run(image, mig), "NODE-MIG-NO-CAP-DEVICES").title
    with_caps = dataclasses.replace(mig, state=dataclasses.replace(mig.state, nvidia_caps=("nvidia-cap1",)))
    assert "NODE-MIG-NO-CAP-DEVICES" not in ids(_run(image, with_caps))
    unseen = dataclasses.replace(mig, state=dataclasses.replace(mig.state, nvidia_caps=None))
    assert "NODE-MIG-NO-CAP-DEVICES" in unknown_rules(_run(image, unseen))


def test_docker_default_runtime_for_kubernetes_and_plain_docker(image):
    """k8s-device-plugin-23: nvidia-docker2 installed, Docker's default still runc: the device plugin pod could not
    load NVML; setting "default-runtime": "nvidia" fixed it."""
    pod = JobFacts(path="nvidia-device-plugin.yml", kind="DaemonSet", runtime="kubernetes")
    found = by_id(
        _run(image, _node(docker_default_runtime="runc", docker_runtimes=("nvidia",)), pod),
        "NODE-DOCKER-DEFAULT-RUNTIME",
    )
    assert "could not load NVML library" in found.predicted_error and "dockershim" in found.mechanism
    assert "NODE-DOCKER-DEFAULT-RUNTIME" not in ids(_run(image, _node(docker_default_runtime="nvidia"), pod))
    assert "NODE-DOCKER-DEFAULT-RUNTIME" in unknown_rules(_run(image, _node(docker_default_runtime=None), pod))
    with_gpus = JobFacts(path="run.sh", kind="docker run", runtime="docker", gpus=-1)
    assert not _said(_run(image, _node(docker_default_runtime="runc"), with_gpus), "NODE-DOCKER-DEFAULT-RUNTIME")
    env_only = JobFacts(
        path="run.sh", kind="docker run", runtime="docker", env=(EnvVar("NVIDIA_VISIBLE_DEVICES", "all"),)
    )
    assert "NODE-DOCKER-DEFAULT-RUNTIME" in ids(_run(image, _node(docker_default_runtime="runc"), env_only))


def test_dkms_builds_without_the_running_kernels_headers(image):
    from imgcheck.model.node import DkmsModule

    base = node(NODE)
    release = base.kernel.release
    old = DkmsModule(name="nvidia", version="570.86.15", kernel="5.15.0-1-generic", arch="x86_64", installed=True)
    stale = dataclasses.replace(base, dkms=(old,))
    stale = dataclasses.replace(stale, state=dataclasses.replace(stale.state, kernel_headers=False))
    found = by_id(_run(image, stale), "NODE-DKMS-NO-HEADERS")
    assert release in found.title and "cannot be found" in found.predicted_error
    ok = dataclasses.replace(stale, state=dataclasses.replace(stale.state, kernel_headers=True))
    assert "NODE-DKMS-NO-HEADERS" not in ids(_run(image, ok))
    asked = dataclasses.replace(stale, state=dataclasses.replace(stale.state, kernel_headers=None))
    assert "NODE-DKMS-NO-HEADERS" in unknown_rules(_run(image, asked))
    built = dataclasses.replace(stale, dkms=(old, dataclasses.replace(old, kernel=release)))
    assert not _said(_run(image, built), "NODE-DKMS-NO-HEADERS")
