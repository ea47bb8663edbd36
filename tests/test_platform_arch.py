"""Architecture: an image for another CPU is an error finding; an asked platform the image lacks is exit 2.

The image is the shipped example (an OCI layout of Debian bookworm's real RDMA files, linux/amd64);
the node is the example node with its architecture changed, as `imgcheck node probe` writes it on arm64.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from registryfixture import registry  # noqa: F401

from imgcheck.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "bookworm-rdma"
NODE = ROOT / "examples" / "nodes" / "inbox-535-proprietary.json"


def _node(tmp_path, arch: str | None, release: str | None = None) -> str:
    doc = json.loads(NODE.read_text())
    doc.pop("arch", None)
    if arch:
        doc["arch"] = arch
    if release:
        doc["kernel"]["release"] = release
    path = tmp_path / f"node-{arch or 'noarch'}.json"
    path.write_text(json.dumps(doc))
    return str(path)


def _check(capsys, argv):
    code = main(argv + ["-o", "json"])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if out.out.strip() else None), out.err


def _finding(doc, rule):
    return next((f for f in doc["findings"] if f["id"] == rule), None)


@pytest.mark.parametrize("arch", ["arm64", "aarch64"])  # the kernel's name for it too
def test_amd64_image_on_arm64_node_is_an_error(tmp_path, capsys, arch):
    code, doc, err = _check(capsys, [f"oci-dir:{EXAMPLE}", "--node-facts", _node(tmp_path, arch)])
    assert code == 1, err
    assert doc["image"]["platform"] == "linux/amd64"
    f = _finding(doc, "PLATFORM-ARCH-MISMATCH")
    assert f["severity"] == "error" and f["confidence"] == "verified"
    assert f["predicted_error"] == "exec format error"
    assert {"fact": "image.platform", "value": "linux/amd64"}.items() <= f["evidence"][0].items()
    assert f["evidence"][1]["value"] == arch
    assert "linux/arm64" in " ".join(f["fixes"])


def test_same_architecture_has_no_finding(tmp_path, capsys):
    code, doc, _ = _check(capsys, [f"oci-dir:{EXAMPLE}", "--node-facts", _node(tmp_path, "amd64")])
    assert _finding(doc, "PLATFORM-ARCH-MISMATCH") is None
    assert "PLATFORM-ARCH-MISMATCH" not in [u["rule"] for u in doc.get("unknowns", [])]


def test_arch_from_a_rhel_kernel_release(tmp_path, capsys):
    node = _node(tmp_path, None, release="5.14.0-427.13.1.el9_4.aarch64")
    _, doc, _ = _check(capsys, [f"oci-dir:{EXAMPLE}", "--node-facts", node])
    f = _finding(doc, "PLATFORM-ARCH-MISMATCH")
    assert f and f["evidence"][1]["fact"] == "node.kernel.release"


def test_arch_from_the_kubelet_label(tmp_path, capsys):
    node = json.loads(Path(_node(tmp_path, None)).read_text())
    node["labels"] = {"kubernetes.io/arch": "arm64"}
    path = tmp_path / "labelled.json"
    path.write_text(json.dumps(node))
    _, doc, _ = _check(capsys, [f"oci-dir:{EXAMPLE}", "--node-facts", str(path)])
    f = _finding(doc, "PLATFORM-ARCH-MISMATCH")
    assert f and f["evidence"][1] == {
        "fact": "node.labels.kubernetes.io/arch",
        "value": "arm64",
        "path": None,
        "layer": None,
        "origin": f"node facts file {path}",
    }  # the file, not a label read


def test_unknown_node_arch_is_unknown_not_passed(tmp_path, capsys):
    _, doc, _ = _check(capsys, [f"oci-dir:{EXAMPLE}", "--node-facts", _node(tmp_path, None)])
    assert _finding(doc, "PLATFORM-ARCH-MISMATCH") is None
    assert "PLATFORM-ARCH-MISMATCH" in [u["rule"] for u in doc["unknowns"]]


@pytest.mark.parametrize("command", ["check", "inspect"])
def test_asked_platform_the_image_lacks_is_exit_2_naming_what_it_has(tmp_path, capsys, command):
    argv = [command, f"oci-dir:{EXAMPLE}", "--platform", "linux/arm64"]
    if command == "check":
        argv += ["--node-facts", str(NODE)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "linux/arm64" in err and "available: linux/amd64" in err


def _with_index(tmp_path) -> Path:
    """The example re-published behind an image index listing only linux/amd64 (as buildx writes it)."""
    layout = tmp_path / "multi"
    shutil.copytree(EXAMPLE, layout)
    top = json.loads((layout / "index.json").read_text())
    manifest = dict(top["manifests"][0], platform={"os": "linux", "architecture": "amd64"})
    manifest.pop("annotations", None)
    index = json.dumps(
        {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": [manifest]}
    ).encode()
    digest = hashlib.sha256(index).hexdigest()
    (layout / "blobs" / "sha256" / digest).write_bytes(index)
    top["manifests"] = [
        {
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "digest": f"sha256:{digest}",
            "size": len(index),
            "annotations": {"org.opencontainers.image.ref.name": "latest"},
        }
    ]
    (layout / "index.json").write_text(json.dumps(top))
    return layout


def test_index_without_the_nodes_arch_is_checked_and_flagged(tmp_path, capsys):
    # The nodes' architecture is only a preference: the image's default is read and the mismatch reported.
    layout = _with_index(tmp_path)
    code, doc, err = _check(capsys, [f"oci-dir:{layout}", "--node-facts", _node(tmp_path, "arm64")])
    assert code == 1, err
    assert _finding(doc, "PLATFORM-ARCH-MISMATCH")
    assert main(["check", f"oci-dir:{layout}", "--node-facts", str(NODE), "--platform", "linux/arm64"]) == 2
    assert "available: linux/amd64" in capsys.readouterr().err


def test_registry_single_platform_image_on_arm64_nodes(tmp_path, capsys, registry, rootfs):  # noqa: F811
    """From a real registry (Debian's docker-registry): an amd64-only manifest and arm64 nodes is checked
    and flagged, not refused; asking for linux/arm64 explicitly is exit 2 naming linux/amd64."""
    from registrypush import Pusher, push_rootfs_image

    push_rootfs_image(Pusher(registry.url), "arch/bookworm", "amd64-only", rootfs("bookworm"))
    ref = f"{registry.host}/arch/bookworm:amd64-only"
    code, doc, err = _check(capsys, [ref, "--node-facts", _node(tmp_path, "arm64"), "--no-cache"])
    assert code == 1, err
    assert doc["image"]["platform"] == "linux/amd64" and _finding(doc, "PLATFORM-ARCH-MISMATCH")
    assert main([ref, "--node-facts", str(NODE), "--platform", "linux/arm64", "--no-cache"]) == 2
    assert "available: linux/amd64" in capsys.readouterr().err
