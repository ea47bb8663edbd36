"""node/fabric.py: NVSwitches, Fabric Manager and NVLSM read from a host root laid out as a real HGX host.

Layout: an HGX H100 shows four NVSwitch bridges (PCI class 0x068000, device 0x22a3) at 05:00.0-08:00.0 beside its
eight GPUs (class 0x030200, device 0x2330) (https://github.com/NVIDIA/k8s-test-infra/pull/882; the class the
nvidia-nvswitch driver binds: open-gpu-kernel-modules kernel-open/nvidia/linux_nvswitch.c; counting NVIDIA bridges
is also how aws-parallelcluster-cookbook#3098 decides to start Fabric Manager). The package is
gpu-operator#544's nvidia-fabricmanager-530 530.30.02 as dpkg records it; the running daemon's comm is the
kernel's 15-character cut of nv-fabricmanager ('Killing process 76454 (nv-fabricmanage)' in NVIDIA/NVSentinel#883).
"""

from __future__ import annotations

from pathlib import Path

from imgcheck.node.probe import probe

SWITCHES = ("0000:05:00.0", "0000:06:00.0", "0000:07:00.0", "0000:08:00.0")
DPKG_FM = (
    "Package: nvidia-fabricmanager-530\n"
    "Status: install ok installed\n"
    "Priority: optional\n"
    "Section: multiverse/libs\n"
    "Architecture: amd64\n"
    "Version: 530.30.02-1\n"
    "Description: Fabric Manager for NVSwitch based systems.\n\n"
)


def write(root: Path, path: str, text: str) -> None:
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


def hgx_root(tmp_path: Path, *, dpkg: str = DPKG_FM, fm_pid: bool = True, init: str = "systemd") -> Path:
    root = tmp_path / "root"
    write(root, "/proc/sys/kernel/osrelease", "5.15.0-76-generic\n")
    write(root, "/etc/hostname", "hgx-h100-01\n")
    for bus in SWITCHES:
        write(root, f"/sys/bus/pci/devices/{bus}/vendor", "0x10de\n")
        write(root, f"/sys/bus/pci/devices/{bus}/device", "0x22a3\n")
        write(root, f"/sys/bus/pci/devices/{bus}/class", "0x068000\n")
    for i in range(8):
        bus = f"0000:{0x18 + 0x10 * i:02x}:00.0"
        write(root, f"/sys/bus/pci/devices/{bus}/vendor", "0x10de\n")
        write(root, f"/sys/bus/pci/devices/{bus}/device", "0x2330\n")
        write(root, f"/sys/bus/pci/devices/{bus}/class", "0x030200\n")
    write(root, "/var/lib/dpkg/status", dpkg)
    write(root, "/proc/1/comm", f"{init}\n")
    write(root, "/proc/812/comm", "sshd\n")
    if fm_pid:
        write(root, "/proc/1507/comm", "nv-fabricmanage\n")
    (root / "sys/module/ib_umad").mkdir(parents=True)
    (root / "etc/systemd/system/multi-user.target.wants").mkdir(parents=True)
    (root / "etc/systemd/system/multi-user.target.wants/nvidia-fabricmanager.service").symlink_to(
        "/lib/systemd/system/nvidia-fabricmanager.service"
    )
    write(
        root, "/lib/systemd/system/nvidia-fabricmanager.service", "[Unit]\nDescription=NVIDIA fabric manager service\n"
    )
    return root


def test_switches_package_service_and_process_are_read(tmp_path):
    facts = probe(str(hgx_root(tmp_path)))
    fabric = facts.fabric
    assert fabric.nvswitch_pci == SWITCHES  # the GPUs (class 0x0302) are not counted
    assert (fabric.fm_package, fabric.fm_version, fabric.fm_installed) == (
        "nvidia-fabricmanager-530",
        "530.30.02",
        True,
    )
    assert fabric.fm_enabled is True and fabric.fm_running is True
    assert fabric.nvlsm_installed is False  # the package database was read: no nvlsm
    assert facts.location_of("fabric.nvswitch_pci").path == "/sys/bus/pci/devices"


def test_a_stopped_fm_on_the_hosts_pid_namespace_is_not_running(tmp_path):
    assert probe(str(hgx_root(tmp_path, fm_pid=False))).fabric.fm_running is False


def test_processes_of_another_pid_namespace_leave_running_unknown(tmp_path):
    facts = probe(str(hgx_root(tmp_path, fm_pid=False, init="imgcheck")))  # a pod without hostPID
    assert facts.fabric.fm_running is None
    assert "hostPID" in facts.unknown["fabric.fm_running"]


def test_no_package_database_leaves_installed_unknown_not_absent(tmp_path):
    root = hgx_root(tmp_path)
    (root / "var/lib/dpkg/status").unlink()
    facts = probe(str(root))
    assert facts.fabric.fm_installed is None and "fabric.fm_installed" in facts.unknown
    # the binary alone (a runfile or system-extension install) is enough to know it is there
    write(root, "/usr/bin/nv-fabricmanager", "")
    facts = probe(str(root))
    assert facts.fabric.fm_installed is True and facts.fabric.fm_version is None
    assert "fabric.fm_version" in facts.unknown


def test_an_rpm_style_and_an_unbranched_package_name_are_both_fabric_manager(tmp_path):
    dpkg = DPKG_FM.replace("nvidia-fabricmanager-530", "nvidia-fabricmanager").replace("530.30.02-1", "580.95.05-1")
    assert probe(str(hgx_root(tmp_path, dpkg=dpkg))).fabric.fm_version == "580.95.05"


def test_no_pci_tree_falls_back_to_the_nvswitch_drivers_list_or_unknown(tmp_path):
    root = hgx_root(tmp_path)
    import shutil

    shutil.rmtree(root / "sys/bus")
    facts = probe(str(root))
    assert facts.fabric.nvswitch_pci is None and "fabric.nvswitch_pci" in facts.unknown
    for bus in SWITCHES:
        (root / "proc/driver/nvidia-nvswitch/devices" / bus).mkdir(parents=True)
    assert probe(str(root)).fabric.nvswitch_pci == SWITCHES


def test_ib_umad_follows_sys_module(tmp_path):
    root = hgx_root(tmp_path)
    assert probe(str(root)).fabric.ib_umad_loaded is True
    (root / "sys/module/ib_umad").rmdir()
    assert probe(str(root)).fabric.ib_umad_loaded is False


def test_fabric_facts_travel_through_nfd_labels_and_back(tmp_path):
    from imgcheck.node.nfd import PREFIX, facts_from_labels, features_of

    facts = probe(str(hgx_root(tmp_path, fm_pid=False)))
    features = features_of(facts)
    assert features["fabric.nvswitches"] == "4" and features["fabric.fm-version"] == "530.30.02"
    labels = {PREFIX + k: v for k, v in features.items()} | {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    back = facts_from_labels("hgx-h100-01", labels | {"nvidia.com/gpu.count": "8"})
    assert len(back.fabric.nvswitch_pci) == 4
    assert (back.fabric.fm_version, back.fabric.fm_installed, back.fabric.fm_running) == ("530.30.02", True, False)
    assert back.fabric.ib_umad_loaded is True
    # GPU Feature Discovery's product label spells the model with '-': the board is still recognised
    from engine_facts import matrix

    from imgcheck.knowledge.fabric import fabric_need

    assert fabric_need(back, matrix()).system.startswith("DGX H100")
    no_labels = facts_from_labels("plain", {})
    assert no_labels.fabric.fm_installed is None and no_labels.fabric.nvswitch_pci is None
