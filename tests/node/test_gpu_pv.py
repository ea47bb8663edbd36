"""NODE-GPU-PV-DRIVER-FILES on roots laid out like a WSL2 guest: /dev/dxg, /usr/lib/wsl/lib (Microsoft's WSL GPU
docs: libdxcore, libd3d12, the CUDA/NVML loaders and nvidia-smi mounted from the host) and
/usr/lib/wsl/drivers/nv_dispi.inf_amd64_<hash>/ (the adapter's DriverStore folder, whose NVIDIA files
libnvidia-container src/dxcore.c looks for). A Hyper-V GPU-P VM with only the lxss libraries copied (the
dxgkrnl-dkms#7 layout) lacks the DriverStore folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from imgcheck.engine.evaluate import evaluate_node
from imgcheck.engine.node_only import NODE_ONLY_IMAGE
from imgcheck.matrix import load_matrix
from imgcheck.node.probe import probe

RULE = "NODE-GPU-PV-DRIVER-FILES"
LXSS = ("libcuda.so", "libcuda.so.1", "libcuda.so.1.1", "libd3d12.so", "libd3d12core.so", "libdxcore.so",
        "libnvidia-ml.so.1", "libnvwgf2umx.so", "nvidia-smi")  # fmt: skip
STORE = ("libcuda.so.1.1", "libcuda_loader.so", "libnvidia-ml.so.1", "libnvidia-ml_loader.so",
         "libnvidia-ptxjitcompiler.so.1", "nvidia-smi", "nvcuda.dll", "nvml.dll")  # fmt: skip
FOLDER = "usr/lib/wsl/drivers/nv_dispi.inf_amd64_5e86e8d0b6b8a0c1"


@pytest.fixture(scope="module")
def matrix():
    return load_matrix()


def _root(tmp_path: Path, *, dxg: bool = True, store: bool = True) -> Path:
    for dev in ("null", "zero") + (("dxg",) if dxg else ()):
        (tmp_path / "dev").mkdir(exist_ok=True)
        (tmp_path / "dev" / dev).write_bytes(b"")
    lib = tmp_path / "usr/lib/wsl/lib"
    lib.mkdir(parents=True)
    for name in LXSS:
        (lib / name).write_bytes(b"\x7fELF")
    if store:
        folder = tmp_path / FOLDER
        folder.mkdir(parents=True)
        for name in STORE:
            (folder / name).write_bytes(b"\x7fELF")
    return tmp_path


def _result(root: Path, matrix):
    node = probe(str(root), name="wsl-guest")
    return node, evaluate_node(NODE_ONLY_IMAGE, node, matrix)


def test_a_complete_wsl2_guest_is_fine(tmp_path, matrix):
    node, result = _result(_root(tmp_path), matrix)
    assert node.gpu.dxg_device is True
    assert f"/{FOLDER}/libnvidia-ml.so.1" in node.gpu.wsl_driver_files
    assert RULE not in [f.id for f in result.findings] and RULE not in [u.rule for u in result.unknowns]


def test_a_guest_without_the_driver_store_folder_cannot_open_the_gpu(tmp_path, matrix):
    _, result = _result(_root(tmp_path, store=False), matrix)
    (f,) = [f for f in result.findings if f.id == RULE]
    assert f.severity == "error"
    assert "libnvidia-ml.so.1" in f.title and "libcuda.so.1.1" in f.title
    assert f.predicted_error == "Failed to initialize NVML: GPU access blocked by the operating system"


def test_no_dxg_device_is_not_a_gpu_pv_guest(tmp_path, matrix):
    node, result = _result(_root(tmp_path, dxg=False, store=False), matrix)
    assert node.gpu.dxg_device is False and node.gpu.wsl_driver_files is None
    assert RULE not in [f.id for f in result.findings] and RULE not in [u.rule for u in result.unknowns]


def test_a_node_running_the_linux_nvidia_module_is_no_gpu_pv_guest_even_in_older_facts(matrix):
    """Node facts written before /dev/dxg was probed: a loaded NVIDIA kernel module decides it (a GPU-PV guest has
    none); with neither known the rule asks."""
    import dataclasses
    import os

    from imgcheck.model.node_io import load_node_facts

    here = os.path.dirname(os.path.abspath(__file__))
    old = load_node_facts(os.path.join(here, "..", "fixtures", "engine_nodes", "inbox-5.15-proprietary-535.json"))
    assert old.gpu.dxg_device is None and old.gpu.kernel_module
    result = evaluate_node(NODE_ONLY_IMAGE, old, matrix)
    assert RULE not in [u.rule for u in result.unknowns]
    unknown_gpu = dataclasses.replace(old, gpu=dataclasses.replace(old.gpu, kernel_module=None))
    assert RULE in [u.rule for u in evaluate_node(NODE_ONLY_IMAGE, unknown_gpu, matrix).unknowns]
