"""gpu.container_cli: nvidia-container-cli on the node, the program enroot's NVIDIA hook runs. Laid out as the
libnvidia-container-tools package installs it (/usr/bin/nvidia-container-cli, a symlink to the versioned binary in
the same directory in the Debian packages)."""

from __future__ import annotations

import os

from imgcheck.node.hostroot import HostRoot
from imgcheck.node.nvidia import scan_container_cli


def test_the_cli_is_found_through_its_symlink(tmp_path):
    usr_bin = tmp_path / "usr" / "bin"
    usr_bin.mkdir(parents=True)
    (usr_bin / "nvidia-container-cli.real").write_bytes(b"\x7fELF")
    os.symlink("nvidia-container-cli.real", usr_bin / "nvidia-container-cli")
    assert scan_container_cli(HostRoot(str(tmp_path))) is True


def test_absent_and_not_visible_are_different(tmp_path):
    (tmp_path / "usr" / "bin").mkdir(parents=True)
    assert scan_container_cli(HostRoot(str(tmp_path))) is False  # /usr/bin is there, the CLI is not
    assert scan_container_cli(HostRoot(str(tmp_path / "empty"))) is None  # nothing of the host is visible
