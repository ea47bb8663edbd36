"""node/rdma_netns.py and node/device_cgroup.py on host trees laid out as real hosts lay them out: ib_core's bool
parameter as sysfs prints it ("Y"/"N"), /sys/fs/cgroup of a unified and of a v1 host, dockerd's daemon.json with the
exec-opts the Kubernetes docs gave, containerd's `containerd config default` (version 2) runc options table, and
/dev/char links as udev and nvidia-ctk make them (relative "../<node>")."""

from __future__ import annotations

import json
import os

from imgcheck.node.hostroot import HostRoot
from imgcheck.node.node_state import scan_node_state

# https://v1-23.docs.kubernetes.io/docs/setup/production-environment/container-runtimes/#docker
DAEMON_SYSTEMD = {
    "exec-opts": ["native.cgroupdriver=systemd"],
    "log-driver": "json-file",
    "log-opts": {"max-size": "100m"},
    "storage-driver": "overlay2",
}
# `containerd config default` of containerd 1.7 (version 2 config), the runc options table it prints
CONTAINERD_V2 = """version = 2

[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "registry.k8s.io/pause:3.8"
    [plugins."io.containerd.grpc.v1.cri".containerd]
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes]
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
          runtime_type = "io.containerd.runc.v2"
          [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
            BinaryName = ""
            SystemdCgroup = false
"""


def _write(root, path, text=""):
    full = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as fh:
        fh.write(text)


def _link(root, path, target):
    full = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    os.symlink(target, full)


def _scan(root):
    unknown: dict[str, str] = {}
    read: dict[str, str] = {}
    return scan_node_state(HostRoot(str(root)), None, unknown, read), unknown, read


def _gpu_dev(root):
    for name in ("null", "nvidia0", "nvidiactl", "nvidia-uvm"):
        _write(root, f"/dev/{name}")


def test_systemd_driver_node_without_char_links(tmp_path):
    root = str(tmp_path)
    _gpu_dev(root)
    _link(root, "/dev/char/1:3", "../null")  # udev's links exist for devices udev made, none for the NVIDIA nodes
    _write(root, "/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n")
    _write(root, "/etc/docker/daemon.json", json.dumps(DAEMON_SYSTEMD, indent=2))
    _write(root, "/etc/containerd/config.toml", CONTAINERD_V2.replace("SystemdCgroup = false", "SystemdCgroup = true"))
    _write(root, "/sys/module/ib_core/parameters/netns_mode", "N\n")
    state, unknown, read = _scan(root)
    assert state.cgroup_version == "v2"
    assert state.docker_cgroup_driver == "systemd"
    assert state.containerd_systemd_cgroup is True
    assert state.nvidia_char_links == ()
    assert state.rdma_netns_mode == "exclusive" and "load-time" in read["state.rdma_netns_mode"]
    assert not {k for k in unknown if k.startswith(("state.cgroup", "state.docker_cgroup", "state.nvidia_char"))}


def test_links_made_by_nvidia_ctk_and_v1_defaults(tmp_path):
    root = str(tmp_path)
    _gpu_dev(root)
    _link(root, "/dev/char/195:0", "../nvidia0")  # nvidia-ctk system create-dev-char-symlinks
    _link(root, "/dev/char/195:255", "../nvidiactl")
    _link(root, "/dev/char/1:3", "../null")
    os.makedirs(tmp_path / "sys/fs/cgroup/devices")  # cgroup v1: the devices controller has its own hierarchy
    os.makedirs(tmp_path / "etc/docker")  # Docker installed without daemon.json: cgroupfs on v1
    _write(root, "/etc/containerd/config.toml", CONTAINERD_V2)
    _write(root, "/sys/module/ib_core/parameters/netns_mode", "Y\n")
    state, _, _ = _scan(root)
    assert state.cgroup_version == "v1"
    assert state.docker_cgroup_driver == "cgroupfs"
    assert state.containerd_systemd_cgroup is False
    assert state.nvidia_char_links == ("195:0", "195:255")
    assert state.rdma_netns_mode == "shared"


def test_unknown_and_absent_are_told_apart(tmp_path):
    root = str(tmp_path)
    _write(root, "/sys/fs/cgroup/cgroup.controllers", "cpu memory\n")
    os.makedirs(tmp_path / "etc/docker")  # no daemon.json on cgroup v2: dockerd's default depends on release and init
    os.makedirs(tmp_path / "sys/module/mlx5_core")  # /sys/module shown, ib_core not loaded
    _write(root, "/etc/containerd/config.toml", 'version = 3\n[plugins."io.containerd.cri.v1.runtime"]\n')
    state, unknown, _ = _scan(root)
    assert state.docker_cgroup_driver is None and "cgroup v2" in unknown["state.docker_cgroup_driver"]
    assert state.containerd_systemd_cgroup is None and unknown["state.containerd_systemd_cgroup"]
    assert state.nvidia_char_links is None and "/dev" in unknown["state.nvidia_char_links"]
    assert state.rdma_netns_mode == "absent"
    bare, unknown, _ = _scan(tmp_path / "empty")
    assert bare.rdma_netns_mode is None and bare.cgroup_version is None
    assert unknown["state.rdma_netns_mode"] and unknown["state.cgroup_version"]
