"""node/gdrdrv.py on host trees laid out as real hosts show gdrdrv (NVIDIA/gdrcopy insmod.sh, gdrdrv.c)."""

from __future__ import annotations

import os

import pytest

from imgcheck.model.node import KernelModule
from imgcheck.node.gdrdrv import scan_gdrdrv
from imgcheck.node.hostroot import HostRoot

# /proc/devices as the kernel writes it (fs/proc/devices.c: "%3d %s\n" under each heading); 242 gdrdrv is the major
# gdrcopy#278 shows (crw-rw-rw- 1 root root 242, 0 /dev/gdrdrv)
PROC_DEVICES = (
    "Character devices:\n  1 mem\n  4 /dev/vc/0\n195 nvidia-frontend\n242 gdrdrv\n\nBlock devices:\n  7 loop\n"
)


def _host(tmp_path, *, loaded=True, registered=True, dev=True, device=None):
    root = tmp_path / "root"
    (root / "sys/module").mkdir(parents=True)
    if loaded:
        (root / "sys/module/gdrdrv").mkdir()
        (root / "sys/module/gdrdrv/version").write_text("2.4\n")
    (root / "proc").mkdir()
    (root / "proc/devices").write_text(PROC_DEVICES if registered else PROC_DEVICES.replace("242 gdrdrv\n", ""))
    if dev:
        (root / "dev").mkdir()
        (root / "dev/null").write_text("")
        if device == "file":
            (root / "dev/gdrdrv").write_text("")
        elif device == "char":
            os.mknod(root / "dev/gdrdrv", 0o020666, os.makedev(242, 0))
            os.chmod(root / "dev/gdrdrv", 0o666)
    return HostRoot(str(root))


def _scan(host, loaded=True):
    unknown: dict[str, str] = {}
    mods = {"gdrdrv": KernelModule(version="2.4")} if loaded else {}
    return scan_gdrdrv(host, mods, True, unknown), unknown


def test_loaded_with_modprobe_leaves_no_device_node(tmp_path):
    # gdrcopy#234: module loaded (lsmod), major registered, no /dev/gdrdrv
    state, unknown = _scan(_host(tmp_path))
    assert (state.loaded, state.version, state.registered, state.device) == (True, "2.4", True, False)
    assert "gpu.gdrdrv_device" not in unknown


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a character device needs root")
def test_insmod_sh_device_node(tmp_path):
    state, _ = _scan(_host(tmp_path, device="char"))
    assert (state.device, state.device_mode) == (True, "666")


def test_regular_file_is_not_a_device(tmp_path):
    state, _ = _scan(_host(tmp_path, device="file"))
    assert (state.device, state.device_mode) == (True, "not-char")


def test_dev_not_visible_is_unknown_not_absent(tmp_path):
    state, unknown = _scan(_host(tmp_path, dev=False))
    assert state.device is None and "gpu.gdrdrv_device" in unknown


def test_not_loaded(tmp_path):
    state, _ = _scan(_host(tmp_path, loaded=False, registered=False), loaded=False)
    assert (state.loaded, state.version, state.registered) == (False, None, False)
