"""DKMS modules against the running kernel (NODE-KMOD-NOT-FOR-RUNNING-KERNEL).

Hosts are the inbox-ubuntu2204 fixture root (kernel 5.15.0-25-generic, the proprietary 535.183.01 module loaded from
updates/dkms/nvidia.ko) with a DKMS tree laid out as dkms lays it out (dkms(8); dell/dkms README): a build's files in
/var/lib/dkms/<module>/<version>/<kernel>/<arch>/module/*.ko, `source` linking to /usr/src/<module>-<version>, and a
`kernel-<kernel>-<arch>` link to the installed build; Ubuntu's nvidia-dkms-<branch> builds nvidia, nvidia-modeset,
nvidia-drm, nvidia-uvm and nvidia-peermem. The failure is GoogleCloudPlatform/compute-gpu-installation#18: after an
automatic kernel upgrade without dkms in place, the module was built for the previous kernel only and nvidia-smi
"couldn't communicate with the NVIDIA driver".
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from node_fixtures import fixture_root

from imgcheck.engine.evaluate import evaluate_node
from imgcheck.engine.node_only import NODE_ONLY_IMAGE
from imgcheck.knowledge import shipped
from imgcheck.node.probe import probe

RULE = "NODE-KMOD-NOT-FOR-RUNNING-KERNEL"
RUNNING = "5.15.0-25-generic"
NVIDIA_KOS = ("nvidia.ko", "nvidia-modeset.ko", "nvidia-drm.ko", "nvidia-uvm.ko", "nvidia-peermem.ko")


def dkms_build(root: Path, name: str, version: str, kernel: str, kos=NVIDIA_KOS, install: bool = True) -> None:
    base = root / "var/lib/dkms" / name
    build = base / version / kernel / "x86_64" / "module"
    build.mkdir(parents=True, exist_ok=True)
    for ko in kos:
        (build / ko).write_bytes(b"\x7fELF")
    (root / "usr/src" / f"{name}-{version}").mkdir(parents=True, exist_ok=True)
    if not (base / version / "source").is_symlink():
        os.symlink(f"/usr/src/{name}-{version}", base / version / "source")
    if install:
        os.symlink(f"{version}/{kernel}/x86_64", base / f"kernel-{kernel}-x86_64")
        dest = root / "lib/modules" / kernel / "updates/dkms"
        dest.mkdir(parents=True, exist_ok=True)
        for ko in kos:
            (dest / ko).write_bytes(b"\x7fELF")


def host(tmp_path: Path, loaded: bool = True) -> Path:
    root = tmp_path / "host"
    shutil.copytree(fixture_root("inbox-ubuntu2204"), root, symlinks=True)
    if not loaded:  # the driver is not loaded: no /proc/driver/nvidia, no /sys/module/nvidia*
        shutil.rmtree(root / "proc/driver/nvidia")
        for mod in ("nvidia", "nvidia_uvm"):
            shutil.rmtree(root / "sys/module" / mod)
        dep = root / "lib/modules" / RUNNING / "modules.dep"
        dep.write_text("".join(ln for ln in dep.read_text().splitlines(True) if "nvidia" not in ln))
        (root / "lib/modules" / RUNNING / "updates/dkms/nvidia.ko").unlink(missing_ok=True)
    return root


def said(root: Path):
    facts = probe(str(root))
    result = evaluate_node(NODE_ONLY_IMAGE, facts, shipped())
    return facts, [f for f in result.findings if f.id == RULE], [u for u in result.unknowns if u.rule == RULE]


def test_driver_built_for_the_previous_kernel_only_is_an_error(tmp_path):
    root = host(tmp_path, loaded=False)
    dkms_build(root, "nvidia", "525.105.17", "5.15.0-24-generic")
    facts, found, _ = said(root)
    assert facts.dkms and facts.dkms[0].modules == (
        "nvidia",
        "nvidia_drm",
        "nvidia_modeset",
        "nvidia_peermem",
        "nvidia_uvm",
    )
    assert facts.kernel.module_files is not None and "nvidia" not in facts.kernel.module_files
    (f,) = found
    assert f.severity == "error" and "5.15.0-24-generic" in f.title and RUNNING in f.title
    assert "couldn't communicate with the NVIDIA driver" in f.predicted_error
    assert f"dkms autoinstall -k {RUNNING}" in " ".join(f.fixes)
    assert "not loaded" in f.mechanism and "lists no nvidia module" in f.mechanism


def test_build_for_the_running_kernel_decides_no_problem(tmp_path):
    root = host(tmp_path, loaded=True)
    dkms_build(root, "nvidia", "535.183.01", "5.15.0-24-generic")
    dkms_build(root, "nvidia", "535.183.01", RUNNING)
    _, found, unknown = said(root)
    assert not found and not unknown


def test_a_newer_build_than_the_loaded_module_asks_for_a_reboot(tmp_path):
    """The driver package was upgraded and DKMS rebuilt it for this kernel; the 535.183.01 module is still loaded."""
    root = host(tmp_path, loaded=True)
    dkms_build(root, "nvidia", "535.216.03", RUNNING)
    _, found, _ = said(root)
    (f,) = found
    assert "535.183.01" in f.title and "not rebooted" in f.title and "reboot" in f.fixes[0]


def test_a_module_from_another_package_for_this_kernel_is_not_reported(tmp_path):
    """Ubuntu's precompiled linux-modules-nvidia: nvidia.ko under kernel/nvidia-<branch>/, listed in modules.dep."""
    root = host(tmp_path, loaded=False)
    dkms_build(root, "nvidia", "525.105.17", "5.15.0-24-generic")
    dep = root / "lib/modules" / RUNNING / "modules.dep"
    dep.write_text(dep.read_text() + "kernel/nvidia-535srv/nvidia.ko:\n")
    _, found, _ = said(root)
    assert not found


def test_an_ofed_build_for_another_kernel_leaves_the_inbox_stack(tmp_path):
    """mlnx-ofed-kernel-dkms builds mlx5_core, ib_core, ...: the in-tree files of those names under kernel/ are not
    the OFED build."""
    root = host(tmp_path, loaded=True)
    dkms_build(
        root,
        "mlnx-ofed-kernel",
        "23.10.OFED.23.10.1.1.9.1",
        "5.15.0-24-generic",
        kos=("mlx5_core.ko", "mlx5_ib.ko", "ib_core.ko", "ib_uverbs.ko", "mlx_compat.ko"),
    )
    _, found, _ = said(root)
    (f,) = found
    assert "mlnx-ofed-kernel" in f.title and "inbox stack" in f.mechanism


def test_a_module_outside_the_gpu_and_rdma_stack_is_no_concern(tmp_path):
    """zfs-dkms (zfs.ko, spl.ko) built for the previous kernel only: true, but not this job's problem."""
    root = host(tmp_path, loaded=True)
    dkms_build(root, "zfs", "2.1.5", "5.15.0-24-generic", kos=("zfs.ko", "spl.ko"))
    _, found, unknown = said(root)
    assert not found and not unknown


def test_no_dkms_tree_is_asked_only_when_the_driver_is_not_loaded(tmp_path):
    _, found, unknown = said(host(tmp_path / "loaded", loaded=True))
    assert not found and not unknown  # the driver runs: a module exists for this kernel
    _, found, unknown = said(host(tmp_path / "absent", loaded=False))
    assert not found and "/var/lib/dkms" in unknown[0].reason and unknown[0].facts == ("node.dkms",)
