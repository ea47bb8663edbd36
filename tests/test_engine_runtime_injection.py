"""IMAGE-DRIVER-USERSPACE: driver packages inside the image against the host driver the NVIDIA runtime mounts.

The image is the real Debian bookworm facts plus the driver packages as distributions ship them (names and versions
from packages.ubuntu.com / packages.debian.org: Ubuntu jammy's libnvidia-compute-550 550.120-0ubuntu0.22.04.1 and
nvidia-utils-550, Debian bookworm's libcuda1 535.183.01-1~deb12u1); the node is the committed inbox-5.15-proprietary-535 node facts with
its driver release replaced where a test needs another one.
"""

from __future__ import annotations

import dataclasses

from engine_facts import committed_facts, matrix, node, replace_in

from imgcheck.engine.evaluate import evaluate
from imgcheck.engine.runtime_injection import RULE
from imgcheck.knowledge.driver_userspace import driver_release
from imgcheck.model.image import Package

UBUNTU_550 = (
    Package("libnvidia-compute-550", "550.120-0ubuntu0.22.04.1", "dpkg", "/var/lib/dpkg/status"),
    Package("nvidia-utils-550", "550.120-0ubuntu0.22.04.1", "dpkg", "/var/lib/dpkg/status"),
)
DEBIAN_535 = (Package("libcuda1", "535.183.01-1~deb12u1", "dpkg", "/var/lib/dpkg/status"),)


def _image(packages):
    base = committed_facts("bookworm")
    return dataclasses.replace(base, packages=base.packages + packages)


def _node(driver):
    facts = node(_NODE)
    return replace_in(facts, "gpu.driver_version", driver)


_NODE = "inbox-5.15-proprietary-535"


def _run(image, node_facts):
    return evaluate(image, node_facts, matrix())


def _found(result):
    return [f for f in result.findings if f.id == RULE]


def test_driver_packages_newer_than_the_host_predict_the_nvml_mismatch():
    (f,) = _found(_run(_image(UBUNTU_550), _node("535.183.01")))
    assert f.severity == "error"
    assert f.predicted_error == "Failed to initialize NVML: Driver/library version mismatch"
    assert "550.120" in f.title and "535.183.01" in f.title
    assert "libcuda.so" in f.mechanism and "libnvidia-ml.so" in f.mechanism  # from container_runtime_injects
    assert {e.fact for e in f.evidence} >= {"image.packages.libnvidia-compute-550.version", "node.gpu.driver_version"}


def test_older_or_same_release_is_only_noted():
    older = _found(_run(_image(DEBIAN_535), _node("550.120")))
    same = _found(_run(_image(DEBIAN_535), _node("535.183.01")))
    assert [f.severity for f in older] == ["info"] and [f.severity for f in same] == ["info"]


def test_no_driver_package_decides_it():
    result = _run(_image(()), _node("535.183.01"))
    assert not _found(result) and RULE not in [u.rule for u in result.unknowns]


def test_a_python_distribution_named_like_a_driver_package_is_not_the_driver():
    pypi = (Package("nvidia-smi", "0.1.3", "python", "/usr/lib/python3/dist-packages/nvidia_smi-0.1.3.dist-info"),)
    assert not _found(_run(_image(pypi), _node("535.183.01")))


def test_unknown_host_driver_or_packages_is_asked():
    no_driver = _run(_image(UBUNTU_550), _node(None))
    (u,) = [u for u in no_driver.unknowns if u.rule == RULE]
    assert "node.gpu.driver_version" in u.facts
    unread = dataclasses.replace(_image(()), packages=(), unknown={"packages": "not read"})
    (u,) = [u for u in _run(unread, _node("535.183.01")).unknowns if u.rule == RULE]
    assert "image.packages" in u.facts


def test_driver_release_from_package_versions():
    assert driver_release("455.32.00-0ubuntu1") == "455.32.00"
    assert driver_release("3:550.54.15-1.el9") == "550.54.15"
    assert driver_release("535.183.01-1~deb12u1") == "535.183.01"
    assert driver_release("1") is None


# ---------- PLUGIN-DLOPENS-UNVERSIONED-CUDA ----------
# the plugin as AWS's installer lays it out (/opt/amazon/ofi-nccl/lib), with the release its init log prints


def _with_plugin(version):
    from imgcheck.model.image import NcclNetPlugin

    plugin = NcclNetPlugin(
        path="/opt/amazon/ofi-nccl/lib/libnccl-net.so", name="libnccl-net.so", project="aws-ofi-nccl", version=version
    )
    return dataclasses.replace(_image(()), nccl_net_plugins=(plugin,))


def _plugin_found(version):
    from imgcheck.engine.runtime_injection import PLUGIN_RULE

    result = _run(_with_plugin(version), _node("535.183.01"))
    return [f for f in result.findings if f.id == PLUGIN_RULE], [u for u in result.unknowns if u.rule == PLUGIN_RULE]


def test_releases_that_dlopen_unversioned_libcuda_are_named_with_the_site():
    (f,), _ = _plugin_found("1.9.1-aws")  # 1.8.0-aws..1.12.1-aws: dlopen("libcuda.so") in src/nccl_ofi_cuda.c
    assert f.severity == "warning" and "'libcuda.so'" in f.title
    assert "src/nccl_ofi_cuda.c" in f.mechanism and "libcuda.so.1" in f.mechanism
    assert any("ln -s libcuda.so.1" in fix for fix in f.fixes)


def test_other_releases_are_decided_by_the_generated_catalog():
    (cudart,), _ = _plugin_found("1.7.4-aws")  # dlopen("libcudart.so"): the toolkit's -dev link
    assert "'libcudart.so'" in cudart.title and cudart.severity == "info"  # a -devel image has the link
    assert _plugin_found("1.13.2-aws") == ([], [])  # links cudart statically, no dlopen
    (optional,), _ = _plugin_found("1.18.0")  # only with --enable-cudart-dynamic
    assert optional.severity == "info" and "--enable-cudart-dynamic" in optional.title


def test_an_unknown_plugin_release_is_asked():
    found, (u,) = _plugin_found(None)
    assert not found and "libcuda.so in 1.8.0-aws..1.12.1-aws" in u.reason
