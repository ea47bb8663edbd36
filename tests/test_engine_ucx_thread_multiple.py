"""UCX built without thread support under Open MPI's UCX PML with MPI_THREAD_MULTIPLE (issue 32).

The build is read from the image's own files: Debian's libucx0 (a real package, in the cached bookworm rootfs) is
a multi-thread build; a libucp holding the diagnostic only a build without ENABLE_MT compiles (openucx/ucx
src/ucp/core/ucp_worker.c from 1.11) is not. The Open MPI side is ompi's pml_ucx.c (open-mpi/ompi#6171's
'UCP worker does not support MPI_THREAD_MULTIPLE')."""

from __future__ import annotations

import dataclasses

import pytest
from engine_facts import matrix as load_matrix
from engine_facts import node
from imagebuild import Symlink, make_layer, write_docker_archive

from imgcheck import api
from imgcheck.engine import evaluate
from imgcheck.model.image import Package
from imgcheck.sources.read_options import ReadOptions

RULE = "UCX-NO-THREAD-MULTIPLE"
OPENMPI = Package(name="libopenmpi3", version="4.1.4-3+b1", db="dpkg")


@pytest.fixture(scope="module")
def matrix():
    return load_matrix()


@pytest.fixture(scope="module")
def bookworm(debian_archive):
    return api.inspect_image(f"docker-archive:{debian_archive('bookworm')}", ReadOptions(use_cache=False))


def said(facts, matrix) -> dict:
    result = evaluate(facts, node("inbox-6.8-open-570"), matrix)
    return {f.id: f for f in result.findings} | {u.rule: u for u in result.unknowns}


def test_debian_libucx0_is_a_multi_thread_build(bookworm, matrix):
    ucx = bookworm.ucx
    assert ucx.version == "1.13.1" and ucx.no_mt_message is False
    assert any(p.endswith("libucp.so.0.0.0") for p in ucx.build_read_from)
    with_ompi = dataclasses.replace(bookworm, packages=(*bookworm.packages, OPENMPI))
    assert RULE not in said(with_ompi, matrix)


def test_no_open_mpi_no_question(bookworm, matrix):
    assert RULE not in said(bookworm, matrix)


def self_built(tmp_path, libucp: bytes, pc_version: str = "1.12.1"):
    prefix = "opt/ucx"
    layer = make_layer(
        {
            f"{prefix}/lib/libucp.so.0.0.0": libucp,
            f"{prefix}/lib/libucp.so.0": Symlink("libucp.so.0.0.0"),
            f"{prefix}/lib/pkgconfig/ucx.pc": f"prefix=/{prefix}\nName: ucx\nVersion: {pc_version}\n".encode(),
        }
    )
    archive = write_docker_archive(str(tmp_path / "image.tar"), [layer], env=[f"LD_LIBRARY_PATH=/{prefix}/lib"])
    facts = api.inspect_image(f"docker-archive:{archive}", ReadOptions(use_cache=False))
    return dataclasses.replace(facts, packages=(*facts.packages, OPENMPI))


def test_a_build_without_enable_mt_is_named(tmp_path, matrix):
    # error path: a file holding the diagnostic string a UCX configured without --enable-mt compiles into libucp
    facts = self_built(tmp_path, b"\x7fELF...\x00multi-threaded worker is requested, but library is built \x00")
    assert facts.ucx.no_mt_message is True
    found = said(facts, matrix)[RULE]
    # Open MPI 4.1.4: the PML is deselected, not an init failure; the thread level is the application's
    assert "could not be selected" in found.predicted_error and len(found.assumes) == 1


def test_an_old_source_build_is_conditional_on_configures_default(tmp_path, matrix):
    facts = self_built(tmp_path, b"\x7fELF...", pc_version="1.4.0")  # no string in 1.4: the build is not read
    assert facts.ucx.no_mt_message is False and facts.ucx.info_enable_mt is None
    found = said(facts, matrix)[RULE]
    assert len(found.assumes) == 2 and "--enable-mt" in found.assumes[0]


def test_a_packaged_ucx_of_unknown_build_is_asked(bookworm, matrix):
    ucx = dataclasses.replace(bookworm.ucx, version="1.10.1", no_mt_message=False)  # bullseye's release
    facts = dataclasses.replace(bookworm, ucx=ucx, packages=(*bookworm.packages, OPENMPI))
    u = said(facts, matrix)[RULE]
    assert "ENABLE_MT" in u.reason and not hasattr(u, "assumes")
