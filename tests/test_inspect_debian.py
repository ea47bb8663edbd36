"""End to end on real Debian images built with mmdebstrap: real rdma-core and UCX files."""

from __future__ import annotations

import json

import pytest
from imagebuild import build_oci, write_oci_archive, write_oci_dir

from imgcheck import api
from imgcheck.cli.main import main

pytestmark = pytest.mark.e2e

EXPECTED = {
    # suite: (os version, libibverbs file version, rdma-core, PABI, UCX prefix, has dmabuf symbol)
    "bullseye": ("11", "1.11.33.2", "33.2", 33, "1.10", False),
    "bookworm": ("12", "1.14.44.0", "44.0", 34, "1.13.1", True),
    "trixie": ("13", "1.14.56.1", "56.1", 34, "1.18.1", True),
}


def test_real_debian_facts(debian_suite, debian_archive):
    os_version, libver, core, pabi, ucx, dmabuf = EXPECTED[debian_suite]
    facts = api.inspect_image(f"docker-archive:{debian_archive(debian_suite)}")
    assert facts.os.id == "debian" and facts.os.version_id == os_version
    lib = facts.rdma.libibverbs
    assert lib.version == libver and lib.rdma_core == core and lib.private_abi == pabi
    assert lib.path == f"/usr/lib/x86_64-linux-gnu/libibverbs.so.{libver}"
    assert lib.layer == facts.layers[0].diff_id
    # read from the ELF itself: iova2 arrived in rdma-core 28 (IBVERBS_1.8), dmabuf in 34 (IBVERBS_1.12)
    assert lib.has_reg_mr_iova2 and "IBVERBS_1.8" in lib.symbol_versions
    assert lib.has_reg_dmabuf_mr is dmabuf and ("IBVERBS_1.12" in lib.symbol_versions) is dmabuf
    assert f"IBVERBS_PRIVATE_{pabi}" in lib.symbol_versions
    assert facts.rdma.flavor == "inbox" and facts.rdma.ofed_version is None
    providers = {p.name: p for p in facts.rdma.providers}
    assert {"mlx5", "efa", "rxe"} <= set(providers)
    assert all(p.pabi == pabi for p in providers.values())
    mlx5 = providers["mlx5"]
    assert mlx5.private_abi_needed == pabi and mlx5.driver_file == "/etc/libibverbs.d/mlx5.driver"
    assert mlx5.symbol_versions and all(v.startswith("MLX5_1.") for v in mlx5.symbol_versions)
    assert facts.ucx.version.startswith(ucx) and facts.ucx.origin == "dpkg"
    pkgs = {p.name: p.version for p in facts.rdma.packages}
    assert pkgs["libibverbs1"].startswith(core.split(".")[0] + ".")


def test_same_facts_from_oci_layouts(tmp_path, rootfs, debian_archive):
    """The bookworm rootfs as an OCI dir (zstd) and OCI archive (gzip) gives the archive's facts."""
    with open(rootfs("bookworm"), "rb") as fh:
        layer = fh.read()
    reference = api.inspect_image(f"docker-archive:{debian_archive('bookworm')}")
    oci_dir = write_oci_dir(str(tmp_path / "zst"), build_oci([layer], "zstd"))
    oci_tar = write_oci_archive(str(tmp_path / "gz.tar"), build_oci([layer], "gzip"))
    for ref in (f"oci-dir:{oci_dir}", f"oci-archive:{oci_tar}"):
        facts = api.inspect_image(ref)
        assert facts.rdma == reference.rdma
        assert facts.ucx == reference.ucx and facts.os == reference.os
        assert facts.packages == reference.packages


def test_cli_inspect_json_contract(debian_archive, capsys):
    code = main(["inspect", f"docker-archive:{debian_archive('trixie')}", "-o", "json"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    image = doc["image"]
    assert doc["schema_version"] == 1
    for key in ("reference", "digest", "platform", "os", "rdma", "ucx", "nccl", "cuda", "hpcx", "env"):
        assert key in image
    assert image["platform"] == "linux/amd64"
    assert image["rdma"]["libibverbs"]["rdma_core"] == "56.1"
    assert image["rdma"]["libibverbs"]["private_abi"] == 34
    assert {"name", "pabi", "path"} <= set(image["rdma"]["providers"][0])
    assert {"name", "version", "db"} <= set(image["rdma"]["packages"][0])


def test_facts_file_round_trip(tmp_path, debian_archive, capsys):
    out = tmp_path / "facts.json"
    assert main(["inspect", f"docker-archive:{debian_archive('bullseye')}", "-o", f"json={out}"]) == 0
    again = api.inspect_image(f"facts:{out}")
    direct = api.inspect_image(f"docker-archive:{debian_archive('bullseye')}")
    assert again == direct
