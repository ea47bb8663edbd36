"""Extractors on a synthetic MLNX_OFED/NGC-shaped image, read through every local source type."""

from __future__ import annotations

import json
import sqlite3
import struct

import pytest
from elfbuild import build_versioned_lib
from imagebuild import Symlink, build_oci, make_layer, write_docker_archive, write_oci_archive, write_oci_dir

from imgcheck import api
from imgcheck.extractors.packages import parse_apk_installed, parse_dpkg_status, parse_rpm_header, parse_rpmdb_sqlite

LIB = "usr/lib/x86_64-linux-gnu"
IBVERBS_VERSIONS = ["IBVERBS_1.0", "IBVERBS_1.1"] + [f"IBVERBS_1.{i}" for i in range(5, 15)] + ["IBVERBS_PRIVATE_34"]

DPKG_STATUS = b"""Package: libibverbs1
Status: install ok installed
Architecture: amd64
Version: 2307mlnx47-1.2310119

Package: ibverbs-providers
Status: install ok installed
Version: 2307mlnx47-1.2310119

Package: removed-thing
Status: deinstall ok config-files
Version: 1.0

Package: ucx
Status: install ok installed
Version: 1.16.0-1.2310213

Package: libnccl2
Status: install ok installed
Version: 2.19.3-1+cuda12.3
"""

OFED_INFO = b"""#!/bin/bash
if [ "X$1" == "X-s" ]; then echo MLNX_OFED_LINUX-23.10-1.1.9.0:; exit; fi
"""


@pytest.fixture(scope="module")
def ngc_like_layers() -> list[bytes]:
    verbs = build_versioned_lib("libibverbs.so.1", IBVERBS_VERSIONS)
    mlx5 = build_versioned_lib(
        "libmlx5.so.1", ["MLX5_1.0", "MLX5_1.24"], needs=("libibverbs.so.1", "IBVERBS_PRIVATE_34")
    )
    base = make_layer(
        {
            "etc/os-release": b'ID=ubuntu\nVERSION_ID="22.04"\nPRETTY_NAME="Ubuntu 22.04.3 LTS"\n',
            "var/lib/dpkg/status": DPKG_STATUS,
            f"{LIB}/libibverbs.so.1.14.47.0": verbs,
            f"{LIB}/libibverbs.so.1": Symlink("libibverbs.so.1.14.47.0"),
            f"{LIB}/libmlx5.so.1.24.47.0": mlx5,
            f"{LIB}/libmlx5.so.1": Symlink("libmlx5.so.1.24.47.0"),
            f"{LIB}/libibverbs/libmlx5-rdmav34.so": Symlink("../libmlx5.so.1.24.47.0"),
            "etc/libibverbs.d/mlx5.driver": b"driver /usr/lib/x86_64-linux-gnu/libibverbs/libmlx5\n",
            "usr/bin/ofed_info": OFED_INFO,
            f"{LIB}/libnccl.so.2.19.3": b"\x7fELF fake",
            f"{LIB}/libnccl.so.2": Symlink("libnccl.so.2.19.3"),
        }
    )
    cuda = make_layer(
        {
            "usr/local/cuda-12.3/version.json": json.dumps(
                {"cuda": {"name": "CUDA SDK", "version": "12.3.2"}}
            ).encode(),
            "usr/local/cuda": Symlink("cuda-12.3"),
            "usr/local/cuda-12.3/compat/libcuda.so.545.23.08": b"\x7fELF fake",
            "usr/local/cuda-12.3/compat/libcuda.so.1": Symlink("libcuda.so.545.23.08"),
            "opt/hpcx/ucx/lib/pkgconfig/ucx.pc": b"Name: ucx\nVersion: 1.16.0\n",
            "etc/nccl.conf": b"# site defaults\nNCCL_IB_RETRY_CNT=13\nNCCL_DEBUG = WARN\n",
        }
    )
    py = "usr/local/lib/python3.10/dist-packages"
    app = make_layer(
        {
            f"{py}/nvidia_nccl_cu12-2.20.5.dist-info/METADATA": b"Metadata-Version: 2.1\nName: nvidia-nccl-cu12\nVersion: 2.20.5\n",
            f"{py}/torch-2.3.0.dist-info/METADATA": b'Name: torch\nVersion: 2.3.0\nRequires-Dist: nvidia-nccl-cu12 ==2.20.5 ; platform_system == "Linux"\n',
        }
    )
    return [base, cuda, app]


ENV = [
    "PATH=/usr/bin",
    "CUDA_VERSION=12.3.2",
    "NVIDIA_REQUIRE_CUDA=cuda>=12.3 brand=tesla,driver>=470,driver<471",
    "HPCX_VERSION=2.17.1",
    "NCCL_IB_TIMEOUT=22",
]


def _sources(tmp_path, layers):
    da = write_docker_archive(str(tmp_path / "da.tar"), layers, env=ENV)
    oci_gz = write_oci_dir(str(tmp_path / "oci-gz"), build_oci(layers, "gzip", env=ENV))
    oci_zst = write_oci_archive(str(tmp_path / "oci-zst.tar"), build_oci(layers, "zstd", env=ENV))
    oci_raw = write_oci_dir(str(tmp_path / "oci-raw"), build_oci(layers, None, env=ENV))
    return [f"docker-archive:{da}", f"oci-dir:{oci_gz}", f"oci-archive:{oci_zst}", f"oci-dir:{oci_raw}"]


def test_every_local_source_gives_the_same_facts(tmp_path, ngc_like_layers):
    facts = [api.inspect_image(ref) for ref in _sources(tmp_path, ngc_like_layers)]
    first = facts[0]
    for other in facts[1:]:
        assert other.rdma == first.rdma
        assert other.nccl == first.nccl or [n.version for n in other.nccl] == [n.version for n in first.nccl]
        assert other.cuda.version == first.cuda.version
        assert other.env == first.env


def test_mlnx_flavor_and_release(tmp_path, ngc_like_layers):
    facts = api.inspect_image(_sources(tmp_path, ngc_like_layers)[1])
    rdma = facts.rdma
    assert rdma.flavor == "mlnx_ofed"
    assert rdma.ofed_version == "23.10-1.1.9.0" and rdma.ofed_source == "/usr/bin/ofed_info"
    assert rdma.libibverbs.version == "1.14.47.0" and rdma.libibverbs.rdma_core == "47.0"
    assert rdma.libibverbs.private_abi == 34
    assert rdma.libibverbs.has_reg_mr_iova2 and rdma.libibverbs.has_reg_dmabuf_mr
    mlx5 = next(p for p in rdma.providers if p.name == "mlx5")
    assert (mlx5.pabi, mlx5.private_abi_needed, mlx5.version) == (34, 34, "1.24.47.0")
    assert mlx5.driver_file == "/etc/libibverbs.d/mlx5.driver"
    assert "MLX5_1.24" in mlx5.symbol_versions
    assert {p.name for p in rdma.packages} >= {"libibverbs1", "ibverbs-providers", "ucx", "libnccl2"}
    assert "removed-thing" not in {p.name for p in facts.packages}


def test_nccl_cuda_hpcx_env(tmp_path, ngc_like_layers):
    facts = api.inspect_image(_sources(tmp_path, ngc_like_layers)[0])
    by_origin = {n.origin: n for n in facts.nccl}
    assert by_origin["library"].version == "2.19.3"
    assert by_origin["library"].path == f"/{LIB}/libnccl.so.2.19.3"
    assert by_origin["pip"].version == "2.20.5"
    assert facts.cuda.version == "12.3.2" and facts.cuda.origin == "version.json"
    assert facts.cuda.compat_driver == "545.23.08"
    assert facts.cuda.require_cuda.startswith("cuda>=12.3")
    assert facts.hpcx.version == "2.17.1"
    assert facts.ucx.version == "1.16.0" and facts.ucx.origin == "dpkg"
    assert facts.env["NCCL_IB_TIMEOUT"] == "22"
    assert facts.nccl_conf == {"NCCL_IB_RETRY_CNT": "13", "NCCL_DEBUG": "WARN"}
    # facts carry the layer they came from: the wheel is in the top (third) layer
    assert by_origin["pip"].layer == facts.layers[2].diff_id


def test_whiteout_in_upper_layer_removes_libibverbs(tmp_path, ngc_like_layers):
    from imagebuild import Whiteout

    top = make_layer({f"{LIB}/libibverbs.so.1.14.47.0": Whiteout(), f"{LIB}/libibverbs.so.1": Whiteout()})
    oci = write_oci_dir(str(tmp_path / "wh"), build_oci(ngc_like_layers + [top]))
    facts = api.inspect_image(f"oci-dir:{oci}")
    assert facts.rdma.libibverbs is None
    assert any(p.name == "mlx5" for p in facts.rdma.providers)


def test_doca_flavor_from_packages(tmp_path):
    verbs = build_versioned_lib("libibverbs.so.1", IBVERBS_VERSIONS)
    layer = make_layer(
        {
            "var/lib/dpkg/status": b"Package: libibverbs1\nStatus: install ok installed\nVersion: 2410mlnx54-1.2410068\n\n"
            b"Package: doca-ofed-userspace\nStatus: install ok installed\nVersion: 2.9.0\n",
            f"{LIB}/libibverbs.so.1.14.54.0": verbs,
        }
    )
    oci = write_oci_dir(str(tmp_path / "doca"), build_oci([layer]))
    rdma = api.inspect_image(f"oci-dir:{oci}").rdma
    assert rdma.flavor == "doca"
    assert rdma.ofed_version == "24.10"  # only the series is known from a package suffix
    assert rdma.ofed_source.startswith("package libibverbs1")


def test_image_without_rdma(tmp_path):
    oci = write_oci_dir(str(tmp_path / "plain"), build_oci([make_layer({"etc/os-release": b"ID=debian\n"})]))
    facts = api.inspect_image(f"oci-dir:{oci}")
    assert facts.rdma.flavor == "none" and facts.rdma.libibverbs is None
    assert facts.os.id == "debian" and facts.nccl == () and facts.cuda is None


# -- package databases ------------------------------------------------------------------


def test_dpkg_status_only_installed():
    pkgs = parse_dpkg_status(DPKG_STATUS, "var/lib/dpkg/status", "sha256:x")
    assert [p.name for p in pkgs] == ["libibverbs1", "ibverbs-providers", "ucx", "libnccl2"]
    assert pkgs[0].path == "/var/lib/dpkg/status" and pkgs[0].db == "dpkg"


def test_apk_installed():
    data = b"C:Q1abc\nP:rdma-core\nV:48.0-r0\nA:x86_64\n\nP:musl\nV:1.2.4-r2\n"
    assert [(p.name, p.version) for p in parse_apk_installed(data, "lib/apk/db/installed", None)] == [
        ("rdma-core", "48.0-r0"),
        ("musl", "1.2.4-r2"),
    ]


def rpm_header(tags: dict[int, object]) -> bytes:
    """An rpm header blob (rpmdb.sqlite Packages.blob) with string and int32 tags."""
    index, data = b"", b""
    for tag, value in tags.items():
        if isinstance(value, int):
            while len(data) % 4:
                data += b"\0"
            index += struct.pack(">iiii", tag, 4, len(data), 1)
            data += struct.pack(">i", value)
        else:
            index += struct.pack(">iiii", tag, 6, len(data), 1)
            data += str(value).encode() + b"\0"
    return struct.pack(">ii", len(tags), len(data)) + index + data


def make_rpmdb(rows: list[dict[int, object]]) -> bytes:
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE Packages (hnum INTEGER PRIMARY KEY AUTOINCREMENT, blob BLOB NOT NULL)")
    for row in rows:
        con.execute("INSERT INTO Packages (blob) VALUES (?)", (rpm_header(row),))
    con.commit()
    data = con.serialize()
    con.close()
    return data


def test_rpmdb_sqlite(tmp_path):
    db = make_rpmdb(
        [
            {1000: "libibverbs", 1001: "2307mlnx47", 1002: "1.2310119"},
            {1000: "rdma-core", 1001: "48.0", 1002: "1.el9", 1003: 1},
            {1000: "gpg-pubkey", 1001: "abc", 1002: "def"},
        ]
    )
    pkgs = parse_rpmdb_sqlite(db, "usr/lib/sysimage/rpm/rpmdb.sqlite", None)
    assert [(p.name, p.version) for p in pkgs] == [
        ("libibverbs", "2307mlnx47-1.2310119"),
        ("rdma-core", "1:48.0-1.el9"),
    ]
    layer = make_layer(
        {
            "usr/lib/sysimage/rpm/rpmdb.sqlite": db,
            "usr/lib64/libibverbs.so.1.14.47.0": build_versioned_lib("libibverbs.so.1", IBVERBS_VERSIONS),
        }
    )
    facts = api.inspect_image("oci-dir:" + write_oci_dir(str(tmp_path / "rpm"), build_oci([layer])))
    assert facts.rdma.flavor == "mlnx_ofed" and facts.rdma.ofed_version == "23.10"


@pytest.mark.parametrize(
    "blob", [b"", b"\x00\x00\x00\x01", struct.pack(">ii", 5, 1000) + b"\0" * 20, struct.pack(">ii", -1, 0)]
)
def test_rpm_header_garbage_raises_valueerror(blob):
    with pytest.raises(ValueError):
        parse_rpm_header(blob)


def test_looping_nccl_link_is_skipped(tmp_path):
    layer = make_layer(
        {
            f"{LIB}/libnccl.so.2": Symlink("libnccl.so.2.loop"),
            f"{LIB}/libnccl.so.2.loop": Symlink("libnccl.so.2"),
            "opt/nccl/lib/libnccl.so.2.21.5": b"\x7fELF fake",
        }
    )
    facts = api.inspect_image("oci-dir:" + write_oci_dir(str(tmp_path / "loop"), build_oci([layer])))
    assert [(n.version, n.path) for n in facts.nccl] == [("2.21.5", "/opt/nccl/lib/libnccl.so.2.21.5")]


def test_cache_namespace_names_the_current_wants():
    """Change a want and this fails: bump EXTRACTOR_VERSION and put the new hash in WANTS_FINGERPRINT,
    or warm re-checks would answer from facts extracted with the old wants."""
    import hashlib

    from imgcheck.extractors.assemble import want_set
    from imgcheck.extractors.identity import WANTS_FINGERPRINT

    assert hashlib.sha256(want_set().key().encode()).hexdigest() == WANTS_FINGERPRINT
