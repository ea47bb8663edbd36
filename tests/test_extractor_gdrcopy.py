"""extractors/gdrcopy.py: libgdrapi as GDRCopy's Makefile installs it (libgdrapi.so.<major>.<minor> with the soname
and development links, NVIDIA/gdrcopy@v2.4:src/Makefile) and as its deb package ships it."""

from __future__ import annotations

from imagebuild import Symlink, build_oci, make_layer, write_oci_dir

from imgcheck import api

OS = {"etc/os-release": b"ID=ubuntu\nVERSION_ID=22.04\n"}


def _inspect(tmp_path, files):
    oci = write_oci_dir(str(tmp_path / "img"), build_oci([make_layer({**OS, **files})]))
    return api.inspect_image(f"oci-dir:{oci}")


def test_make_install_layout(tmp_path):
    # `make prefix=/opt/gdrcopy lib_install`: libgdrapi.so.2.4, libgdrapi.so.2 -> it, libgdrapi.so -> libgdrapi.so.2
    facts = _inspect(
        tmp_path,
        {
            "opt/gdrcopy/lib/libgdrapi.so.2.4": b"\x7fELF",
            "opt/gdrcopy/lib/libgdrapi.so.2": Symlink("libgdrapi.so.2.4"),
            "opt/gdrcopy/lib/libgdrapi.so": Symlink("libgdrapi.so.2"),
        },
    )
    assert facts.gdrcopy is not None
    assert (facts.gdrcopy.version, facts.gdrcopy.soname_major) == ("2.4", 2)
    assert facts.gdrcopy.path == "/opt/gdrcopy/lib/libgdrapi.so.2.4"


def test_deb_package_gives_the_version_when_only_the_soname_is_there(tmp_path):
    status = b"Package: libgdrapi\nStatus: install ok installed\nArchitecture: amd64\nVersion: 2.4.1-1\n\n"
    facts = _inspect(
        tmp_path,
        {"var/lib/dpkg/status": status, "usr/lib/x86_64-linux-gnu/libgdrapi.so.2": b"\x7fELF"},
    )
    assert facts.gdrcopy is not None
    assert (facts.gdrcopy.version, facts.gdrcopy.package_version, facts.gdrcopy.soname_major) == ("2.4", "2.4.1-1", 2)


def test_no_gdrcopy(tmp_path):
    facts = _inspect(tmp_path, {})
    assert facts.gdrcopy is None and "gdrcopy" not in facts.unknown
