"""node/node_state.py on host trees laid out as real hosts lay them out (file names, line layouts as written by the
kernel, dockerd's config as nvidia-ctk writes it, modprobe.d as NVIDIA's install guide writes it)."""

from __future__ import annotations

import json
import os

from imgcheck.node.hostroot import HostRoot
from imgcheck.node.node_state import scan_node_state

RELEASE = "5.15.0-91-generic"
# nvidia-ctk runtime configure --runtime=docker --set-as-default (container-toolkit install guide,
# https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html "Configuring Docker")
DAEMON_DEFAULT = {"default-runtime": "nvidia", "runtimes": {"nvidia": {"args": [], "path": "nvidia-container-runtime"}}}
DAEMON_NO_DEFAULT = {"runtimes": {"nvidia": {"args": [], "path": "nvidia-container-runtime"}}}
# /proc/modules as an unprivileged reader sees it (addresses zeroed by kptr_restrict)
PROC_MODULES = (
    "nvidia_uvm 1437696 0 - Live 0x0000000000000000 (POE)\n"
    "nouveau 2433024 1 - Live 0x0000000000000000\n"
    "drm_ttm_helper 16384 1 nouveau, Live 0x0000000000000000\n"
)
# /proc/devices of a driver with IMEX channels (NVIDIA IMEX guide, "IMEX channels": major of nvidia-caps-imex-channels)
PROC_DEVICES = (
    "Character devices:\n  1 mem\n  4 /dev/vc/0\n  5 /dev/tty\n195 nvidia\n195 nvidia-modeset\n"
    "234 nvidia-caps-imex-channels\n235 nvidia-caps\n510 nvidia-uvm\n\nBlock devices:\n  7 loop\n  8 sd\n"
)


def _write(root, path, text):
    full = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as fh:
        fh.write(text)


def _host(tmp_path, shm_mode=0o1777, **files):
    root = str(tmp_path)
    _write(root, "/dev/null", "")
    os.makedirs(os.path.join(root, "dev/shm"))
    os.chmod(os.path.join(root, "dev/shm"), shm_mode)
    os.makedirs(os.path.join(root, f"lib/modules/{RELEASE}"))
    for path, text in files.items():
        _write(root, path.replace("__", "/").replace("_dot_", "."), text)
    return HostRoot(root)


# facts other readers test on their own layouts (tests/node/test_device_cgroup.py): not what these roots show
_OTHER = {
    "state.rdma_netns_mode",
    "state.cgroup_version",
    "state.docker_cgroup_driver",
    "state.containerd_systemd_cgroup",
}


def _mine(unknown):
    return {k: v for k, v in unknown.items() if k not in _OTHER}


def _scan(host):
    unknown: dict[str, str] = {}
    read: dict[str, str] = {}
    return scan_node_state(host, RELEASE, unknown, read), unknown, read


def test_a_gpu_node_set_up_for_docker_and_imex(tmp_path):
    host = _host(
        tmp_path,
        **{
            "etc__docker__daemon_dot_json": json.dumps(DAEMON_DEFAULT, indent=4),
            "proc__sys__kernel__yama__ptrace_scope": "1\n",
            "proc__modules": PROC_MODULES.replace("nouveau 2433024 1 - Live 0x0000000000000000\n", ""),
            "proc__devices": PROC_DEVICES,
            "etc__modprobe_dot_d__blacklist-nouveau_dot_conf": "blacklist nouveau\noptions nouveau modeset=0\n",
            "dev__nvidia-caps-imex-channels__channel0": "",
            "dev__nvidia-caps__nvidia-cap1": "",
            "dev__nvidia-caps__nvidia-cap2": "",
            f"lib__modules__{RELEASE}__build__Makefile": "VERSION = 5\n",
        },
    )
    state, unknown, read = _scan(host)
    assert _mine(unknown) == {}
    assert state.docker_default_runtime == "nvidia" and state.docker_runtimes == ("nvidia",)
    assert read["state.docker_default_runtime"] == "/etc/docker/daemon.json"
    assert state.shm_mode == "1777"
    assert state.yama_ptrace_scope == 1
    assert (state.nouveau_loaded, state.nouveau_blacklisted) == (False, True)
    assert state.kernel_headers is True
    assert (state.imex_channels, state.imex_registered) == (("channel0",), True)
    assert state.nvidia_caps == ("nvidia-cap1", "nvidia-cap2")


def test_absent_states_are_told_from_unknown(tmp_path):
    # the runtime registered but not made default (nvidia-ctk without --set-as-default), /dev/shm 0755, nouveau loaded,
    # no IMEX devices, no build tree: each is a value, none is unknown
    host = _host(
        tmp_path,
        shm_mode=0o755,
        **{
            "etc__docker__daemon_dot_json": json.dumps(DAEMON_NO_DEFAULT),
            "proc__sys__kernel__yama__ptrace_scope": "2\n",
            "proc__modules": PROC_MODULES,
            "proc__devices": PROC_DEVICES.replace("234 nvidia-caps-imex-channels\n", ""),
            "etc__modprobe_dot_d__alsa-base_dot_conf": "options snd-usb-audio index=-2\n",
        },
    )
    state, unknown, _ = _scan(host)
    assert _mine(unknown) == {}
    assert state.docker_default_runtime == "runc" and state.docker_runtimes == ("nvidia",)
    assert state.shm_mode == "755"
    assert state.yama_ptrace_scope == 2
    assert (state.nouveau_loaded, state.nouveau_blacklisted) == (True, False)
    assert state.kernel_headers is False
    assert (state.imex_channels, state.imex_registered) == ((), False)
    assert state.nvidia_caps == ()


def test_a_root_that_shows_nothing_is_unknown_with_reasons(tmp_path):
    state, unknown, _ = _scan(HostRoot(str(tmp_path)))
    for field in ("docker_default_runtime", "shm_mode", "yama_ptrace_scope", "nouveau_loaded", "nouveau_blacklisted"):
        assert getattr(state, field) is None and unknown[f"state.{field}"]
    for field in ("kernel_headers", "imex_channels", "imex_registered", "nvidia_caps"):
        assert getattr(state, field) is None and unknown[f"state.{field}"]


def test_kernel_command_line_blacklist_and_bad_daemon_json(tmp_path):
    host = _host(
        tmp_path,
        **{
            "proc__cmdline": f"BOOT_IMAGE=/vmlinuz-{RELEASE} root=UUID=1 ro modprobe.blacklist=nouveau,radeon quiet\n",
            "etc__docker__daemon_dot_json": '{"default-runtime": "nvidia",}',
        },
    )
    state, unknown, _ = _scan(host)
    assert state.nouveau_blacklisted is True
    assert state.docker_default_runtime is None and "not valid JSON" in unknown["state.docker_default_runtime"]


def test_docker_without_daemon_json_runs_runc(tmp_path):
    os.makedirs(tmp_path / "etc/docker")
    state, _, _ = _scan(_host(tmp_path))
    assert (state.docker_default_runtime, state.docker_runtimes) == ("runc", ())
