"""glibc: the image's release and the GLIBC_x.y needs of the libraries on its load path.

Real Debian rootfs (mmdebstrap: bullseye glibc 2.31, bookworm 2.36, trixie 2.41) and their real rdma-core
and UCX libraries. The failing layout is the one the issue names: trixie's libibverbs (rdma-core 56.1, libibverbs.so.1.14.56.1, built
against glibc 2.38+) copied into a bullseye image and reached through LD_LIBRARY_PATH.
"""

from __future__ import annotations

import dataclasses
import io
import tarfile

import pytest
from engine_facts import node, real_facts, run, unknown_rules
from imagebuild import write_docker_archive
from rootfs import build_rootfs

from imgcheck import api
from imgcheck.elf.reader import glibc_defined, glibc_need, read_elf
from imgcheck.model.image import Glibc
from imgcheck.sources.read_options import ReadOptions

RULE = "GLIBC-TOO-OLD-FOR-LIBRARY"
LIB = "usr/lib/x86_64-linux-gnu"


def _member(rootfs: str, name: str) -> bytes:
    with tarfile.open(rootfs) as tar:
        for m in tar:
            if m.name.lstrip("./") == name:
                if m.issym():
                    return _member(rootfs, f"{name.rsplit('/', 1)[0]}/{m.linkname}")
                return tar.extractfile(m).read()  # type: ignore[union-attr]
    raise KeyError(name)


@pytest.mark.parametrize("suite, release, newest", [("bullseye", "2.31", "2.30"), ("bookworm", "2.36", "2.36")])
def test_release_and_definitions(debian_archive, suite, release, newest):
    facts = real_facts(debian_archive(suite))
    g = facts.glibc
    assert (g.version, g.origin) == (release, "dpkg libc6")
    assert g.defines[-1] == newest and "2.2.5" in g.defines  # bullseye's 2.31 defines no GLIBC_2.31 of its own
    assert g.library.endswith(("libc.so.6", "libc-2.31.so"))


def test_needs_read_from_real_elves():
    verbs = read_elf(_member(build_rootfs("trixie"), f"{LIB}/libibverbs.so.1.14.56.1"))
    version, library = glibc_need(verbs)
    assert version == "2.38" and library == "libc.so.6"
    assert glibc_defined(read_elf(_member(build_rootfs("bookworm"), f"{LIB}/libc.so.6")))[-1] == "2.36"


@pytest.fixture(scope="module")
def newer_verbs_on_old_glibc(tmp_path_factory):
    """bullseye + trixie's libibverbs in /opt/rdma/lib, LD_LIBRARY_PATH=/opt/rdma/lib (the image config's Env)."""
    work = tmp_path_factory.mktemp("glibc")
    data = _member(build_rootfs("trixie"), f"{LIB}/libibverbs.so.1.14.56.1")
    top = str(work / "top.tar")
    with tarfile.open(top, "w") as tar:
        for name, kind in (("opt/rdma/lib/libibverbs.so.1.14.56.1", "file"), ("opt/rdma/lib/libibverbs.so.1", "link")):
            info = tarfile.TarInfo(name)
            if kind == "link":
                info.type, info.linkname = tarfile.SYMTYPE, "libibverbs.so.1.14.56.1"
                tar.addfile(info)
            else:
                info.size, info.mode = len(data), 0o644
                tar.addfile(info, io.BytesIO(data))
    path = str(work / "image.tar")
    write_docker_archive(path, [], env=["LD_LIBRARY_PATH=/opt/rdma/lib"], layer_files=[build_rootfs("bullseye"), top])
    return api.inspect_image(f"docker-archive:{path}", ReadOptions(use_cache=False))


def test_newer_libibverbs_through_ld_library_path_fails(newer_verbs_on_old_glibc):
    facts = newer_verbs_on_old_glibc
    assert facts.rdma.libibverbs.path == "/opt/rdma/lib/libibverbs.so.1.14.56.1"
    assert facts.rdma.libibverbs.needs_glibc == "2.38" and facts.glibc.version == "2.31"
    [f] = [f for f in run(facts, node("inbox-6.8-open-570")).findings if f.id == RULE]
    assert f.severity == "error"
    assert f.predicted_error == (
        "/lib/x86_64-linux-gnu/libc-2.31.so: version `GLIBC_2.38' not found "
        "(required by /opt/rdma/lib/libibverbs.so.1.14.56.1)"
    )
    ev = {e.fact: e.value for e in f.evidence}
    assert ev["image.glibc_needs.libibverbs.needs_glibc"] == "GLIBC_2.38" and ev["image.glibc.version"] == "2.31"


@pytest.mark.parametrize("suite", ["bullseye", "bookworm", "trixie"])
def test_each_distribution_own_libraries_load(debian_archive, suite):
    result = run(real_facts(debian_archive(suite)), node("inbox-6.8-open-570"))
    assert RULE not in [f.id for f in result.findings] and RULE not in unknown_rules(result)


def test_unknown_glibc_is_unknown(newer_verbs_on_old_glibc):
    facts = dataclasses.replace(newer_verbs_on_old_glibc, glibc=None, unknown={"glibc": "not given in facts.json"})
    result = run(facts, node("inbox-6.8-open-570"))
    assert RULE in unknown_rules(result) and RULE not in [f.id for f in result.findings]
    # only the symbol versions known (no package): a lower bound, so unknown, not a failure
    lower = Glibc(version="2.30", origin="symbol versions", defines=("2.2.5", "2.30"))
    result = run(dataclasses.replace(newer_verbs_on_old_glibc, glibc=lower), node("inbox-6.8-open-570"))
    assert RULE in unknown_rules(result)
