"""AWS EFA: the image side (EFA installer, its libfabric, aws-ofi-nccl's release and FABRIC_x.y needs) read from a real
image layout with real ELF files, and the three EFA rules on those facts."""

from __future__ import annotations

import json

import pytest
from elfbuild import build_versioned_lib
from imagebuild import Symlink, build_oci, make_layer, write_oci_dir

from imgcheck import api
from imgcheck.engine import evaluate
from imgcheck.matrix import load_matrix
from imgcheck.model.image import ImageFacts
from imgcheck.model.image_io import parse_image_facts
from imgcheck.model.node_io import parse_node_facts
from imgcheck.model.serde import from_dict, to_dict
from imgcheck.sources.read_options import ReadOptions

MATRIX = load_matrix()
# the file as efa_installer.sh writes it (as quoted in aws/aws-ofi-nccl#141)
INSTALLED = """# EFA installer version: 1.17.2
# Debug packages installed: no
# Packages installed:
efa-config_1.10_all efa-profile_1.5_all libfabric-aws-bin_1.16.0~amzn3.0_amd64 libfabric-aws-dev_1.16.0~amzn3.0_amd64 libfabric1-aws_1.16.0~amzn3.0_amd64 openmpi40-aws_4.1.4-1_amd64 rdma-core_41.0-1_amd64 efa_1.16.0-1.amzn1_amd64
"""
OLD_FABRIC = [f"FABRIC_1.{i}" for i in range(7)]
EFA_NODE = {"name": "p4d", "rdma": {"stack": "inbox", "devices": [{"name": "rdmap16s27", "driver": "efa"}]}}
MLX_NODE = {"name": "ib", "rdma": {"stack": "mlnx_ofed", "devices": [{"name": "mlx5_0", "driver": "mlx5_core"}]}}


def _plugin(needs_version: str) -> bytes:
    # linked against a libfabric defining needs_version, so its .gnu.version_r needs it; the release string is what
    # aws-ofi-nccl's init logs ("Initializing " PACKAGE_STRING)
    lib = build_versioned_lib("libnccl-net.so", ["NCCL_OFI_1.0"], needs=("libfabric.so.1", needs_version))
    return lib + b"\x00Initializing aws-ofi-nccl 1.9.0-aws\x00"


def _inspect(tmp_path, fabric_versions: list[str]):
    layer = make_layer(
        {
            "opt/amazon/efa_installed_packages": INSTALLED.encode(),
            "opt/amazon/efa/lib/libfabric.so.1.19.0": build_versioned_lib("libfabric.so.1", fabric_versions),
            "opt/amazon/efa/lib/libfabric.so.1": Symlink("libfabric.so.1.19.0"),
            "opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so": _plugin("FABRIC_1.7"),
            "opt/amazon/ofi-nccl/lib/libnccl-net.so": Symlink("libnccl-net-ofi.so"),
            "usr/lib/x86_64-linux-gnu/libnccl.so.2.20.5": b"\x7fELF not read",
        }
    )
    oci = write_oci_dir(
        str(tmp_path / "oci"), build_oci([layer], env=["LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib"])
    )
    return api.inspect_image(f"oci-dir:{oci}", ReadOptions(use_cache=False))


def test_efa_image_facts_from_real_files(tmp_path):
    facts = _inspect(tmp_path, OLD_FABRIC)
    assert facts.efa_installer.version == "1.17.2" and facts.efa_installer.path == "/opt/amazon/efa_installed_packages"
    assert "libfabric1-aws_1.16.0~amzn3.0_amd64" in facts.efa_installer.packages
    fabric = facts.libfabric
    # the installer's libfabric: its release from the installer's package list, not the libtool suffix (1.19.0)
    assert fabric.path == "/opt/amazon/efa/lib/libfabric.so.1.19.0"
    assert (fabric.version, fabric.origin) == ("1.16.0amzn3.0", "efa_installer")
    assert fabric.symbol_versions == tuple(OLD_FABRIC)
    plugin = next(p for p in facts.nccl_net_plugins if p.loaded)
    assert (plugin.project, plugin.version) == ("aws-ofi-nccl", "1.9.0-aws")
    assert plugin.needs_libfabric == ("FABRIC_1.7",)
    assert from_dict(ImageFacts, json.loads(json.dumps(to_dict(facts)))) == facts  # survives a facts file


def test_plugin_needing_a_newer_libfabric_is_named_from_the_elf(tmp_path):
    rule = "OFI-PLUGIN-LIBFABRIC-TOO-OLD"
    found = {
        f.id: f
        for f in evaluate(_inspect(tmp_path / "old", OLD_FABRIC), parse_node_facts(EFA_NODE, "node"), MATRIX).findings
    }
    assert "FABRIC_1.7" in found[rule].title  # the loader refuses the plugin
    assert "EFA-NO-OFI-PLUGIN" not in found  # the plugin is there; it is the libfabric that is too old
    # FABRIC_1.7 defined: the plugin loads, but aws-ofi-nccl 1.9.0 still refuses EFA with the installer's libfabric 1.16
    found = {
        f.id: f
        for f in evaluate(
            _inspect(tmp_path / "new", OLD_FABRIC + ["FABRIC_1.7"]), parse_node_facts(EFA_NODE, "node"), MATRIX
        ).findings
    }
    assert "FABRIC_1.7" not in found[rule].title and "libfabric >= 1.18" in found[rule].title


# ---------- the rules on hand-written facts ----------


def _image(**over) -> dict:
    doc = {
        "reference": "efa-image",
        "platform": "linux/amd64",
        "nccl": [{"version": "2.19.3", "origin": "library", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.19.3"}],
        "libfabric": {
            "version": "1.19.0amzn4.0",
            "path": "/opt/amazon/efa/lib/libfabric.so.1",
            "origin": "efa_installer",
        },
        "efa_installer": {"version": "1.28.0", "path": "/opt/amazon/efa_installed_packages"},
        "nccl_net_plugins": [
            {
                "path": "/opt/amazon/ofi-nccl/lib/libnccl-net.so",
                "name": "libnccl-net.so",
                "loaded": True,
                "project": "aws-ofi-nccl",
                "version": "1.7.4-aws",
            }
        ],
    }
    doc.update(over)
    return doc


def _run(image: dict, node: dict = EFA_NODE):
    result = evaluate(parse_image_facts(image, "image"), parse_node_facts(node, "node"), MATRIX)
    return {f.id: f for f in result.findings}, {u.rule for u in result.unknowns}


def _plugins(loaded: bool, version: str = "1.7.4-aws"):
    return [
        {
            "path": "/opt/amazon/ofi-nccl/lib/libnccl-net.so",
            "name": "libnccl-net.so",
            "loaded": loaded,
            "how": "not what NCCL's dlopen resolves to",
            "project": "aws-ofi-nccl",
            "version": version,
        }
    ]


def test_no_plugin_on_an_efa_node_only():
    found, _ = _run(_image(nccl_net_plugins=_plugins(False)))
    assert found["EFA-NO-OFI-PLUGIN"].severity == "warning"
    assert "/opt/amazon/ofi-nccl/lib/libnccl-net.so" in str(found["EFA-NO-OFI-PLUGIN"].evidence)
    assert "EFA-NO-OFI-PLUGIN" not in _run(_image(nccl_net_plugins=_plugins(True)))[0]
    assert "EFA-NO-OFI-PLUGIN" not in _run(_image(nccl_net_plugins=_plugins(False)), MLX_NODE)[0]  # IB: NCCL's own
    unknown_plugins = {k: v for k, v in _image().items() if k != "nccl_net_plugins"}
    assert "EFA-NO-OFI-PLUGIN" not in _run(unknown_plugins)[0]  # not read: unknown, never "none"


@pytest.mark.parametrize(
    "plugin, libfabric, flagged",
    [
        ("1.13.0-aws", "1.19.0amzn4.0", True),  # 1.13+ refuses EFA below libfabric 1.22
        ("1.13.0-aws", "1.22.0amzn4.0", False),
        ("1.9.1-aws", "1.17.1", True),  # 1.8 .. 1.12 refuse below 1.18
        ("1.9.1-aws", "1.19.0amzn4.0", False),
        ("1.7.4-aws", "1.16.0amzn3.0", False),  # no run-time floor before 1.8.0
    ],
)
def test_plugin_release_floor_for_efa(plugin, libfabric, flagged):
    image = _image(
        nccl_net_plugins=_plugins(True, plugin),
        libfabric={"version": libfabric, "path": "/opt/amazon/efa/lib/libfabric.so.1"},
        efa_installer={"version": "1.30.0", "path": "/opt/amazon/efa_installed_packages"},
    )
    found, _ = _run(image)
    assert ("OFI-PLUGIN-LIBFABRIC-TOO-OLD" in found) is flagged
    if flagged:
        assert "requires at least libfabric version" in found["OFI-PLUGIN-LIBFABRIC-TOO-OLD"].predicted_error


def test_cuda_sync_memops_by_installer_nccl_and_workaround():
    rule = "EFA-LIBFABRIC-CUDA-SYNC-MEMOPS"
    found, _ = _run(_image())
    assert found[rule].severity == "error" and "1.28.0" in found[rule].title
    assert (
        rule not in _run(_image(nccl=[{"version": "2.18.5", "origin": "library", "path": "/x/libnccl.so.2.18.5"}]))[0]
    )
    assert (
        rule not in _run(_image(efa_installer={"version": "1.29.1", "path": "/opt/amazon/efa_installed_packages"}))[0]
    )
    found, unknowns = _run(_image(efa_installer={"version": "1.29.0", "path": "/opt/amazon/efa_installed_packages"}))
    assert rule not in found and rule in unknowns  # the two AWS statements disagree on 1.29.0
    assert rule not in _run(_image(env={"FI_EFA_SET_CUDA_SYNC_MEMOPS": "0"}))[0]
    # NCCL's plugin loads another libfabric than the installer's
    assert (
        rule not in _run(_image(libfabric={"version": "1.22.0", "path": "/usr/lib/x86_64-linux-gnu/libfabric.so.1"}))[0]
    )
    assert rule not in _run(_image(), MLX_NODE)[0]


def test_libfabric_unknown_or_an_unplaceable_plugin_release_is_asked():
    """A facts file that leaves libfabric unread asks rather than passing the plugin's floor; a release the catalog
    rows cannot place asks too; a release before the first floor (1.7.x) is decided, as the row's note says."""
    unread = {k: v for k, v in _image(nccl_net_plugins=_plugins(True, "1.13.0-aws")).items() if k != "libfabric"}
    _, unknowns = _run({**unread, "unknown": {"libfabric": "not read (test)"}})
    assert "OFI-PLUGIN-LIBFABRIC-TOO-OLD" in unknowns
    _, unknowns = _run(_image(nccl_net_plugins=_plugins(True, "nightly")))
    assert "OFI-PLUGIN-LIBFABRIC-TOO-OLD" in unknowns
    found, unknowns = _run(_image(nccl_net_plugins=_plugins(True, "1.7.4-aws")))
    assert "OFI-PLUGIN-LIBFABRIC-TOO-OLD" not in set(found) | unknowns
