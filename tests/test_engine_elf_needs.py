"""ELF-VERSION-NOT-FOUND: real libfabric ELF needs against real libefa/libibverbs version definitions."""

from __future__ import annotations

import dataclasses
import io
import tarfile

import pytest
from engine_facts import by_id, committed_facts, ids, node, run, unknown_rules
from wheelcache import debian_package

from imgcheck.elf.reader import read_elf
from imgcheck.model.image import Libfabric, NcclNetPlugin

RULE = "ELF-VERSION-NOT-FOUND"
LIBFABRIC = "/usr/lib/x86_64-linux-gnu/libfabric.so.1.20.0"


def _deb_member(deb: str, path: str) -> bytes:
    """One file of a .deb's data.tar (ar archive: fixed 60-byte member headers)."""
    blob = open(deb, "rb").read()
    offset = 8
    while offset < len(blob):
        name = blob[offset : offset + 16].decode().strip()
        size = int(blob[offset + 48 : offset + 58].decode().strip())
        body = blob[offset + 60 : offset + 60 + size]
        if name.startswith("data.tar"):
            with tarfile.open(fileobj=io.BytesIO(body)) as tar:
                member = tar.extractfile("." + path)
                assert member is not None
                return member.read()
        offset += 60 + size + (size & 1)
    raise AssertionError(f"no data.tar in {deb}")


@pytest.fixture(scope="module")
def bookworm_libfabric() -> Libfabric:
    info = read_elf(_deb_member(debian_package("libfabric1", "bookworm"), LIBFABRIC))
    return Libfabric(
        version="1.17.0",
        path=LIBFABRIC,
        needs_efa=tuple(sorted(info.needed_versions["libefa.so.1"])),
        needs_ibverbs=tuple(sorted(info.needed_versions["libibverbs.so.1"])),
        symbol_versions=tuple(v for v in info.defined_versions if v.startswith("FABRIC_")),
    )


def test_bookworm_libfabric_on_bullseye_rdma_core(bookworm_libfabric):
    image = dataclasses.replace(committed_facts("bullseye"), libfabric=bookworm_libfabric)
    f = by_id(run(image, node("mofed-23.10-open-550-peermem")), RULE)
    assert f.severity == "error"
    assert "EFA_1.2" in f.title
    assert f.predicted_error.endswith(f"not found (required by {LIBFABRIC})")
    assert "version `EFA_1.2' not found" in f.predicted_error


def test_bookworm_libfabric_on_its_own_rdma_core(bookworm_libfabric):
    image = dataclasses.replace(committed_facts("bookworm"), libfabric=bookworm_libfabric)
    assert RULE not in ids(run(image, node("mofed-23.10-open-550-peermem")))


def test_libefa_not_in_image_is_asked(bookworm_libfabric):
    img = committed_facts("bookworm")
    rdma = dataclasses.replace(img.rdma, providers=tuple(p for p in img.rdma.providers if p.name != "efa"))
    image = dataclasses.replace(img, libfabric=bookworm_libfabric, rdma=rdma)
    result = run(image, node("mofed-23.10-open-550-peermem"))
    assert RULE not in ids(result)
    assert RULE in unknown_rules(result)


def test_plugin_needs_newer_libfabric(bookworm_libfabric):
    plugin = NcclNetPlugin(
        path="/opt/aws-ofi-nccl/lib/libnccl-net.so",
        name="libnccl-net.so",
        loaded=True,
        needs_libfabric=("FABRIC_1.0", "FABRIC_9.9"),  # error path: a node no real libfabric defines
    )
    image = dataclasses.replace(committed_facts("bookworm"), libfabric=bookworm_libfabric, nccl_net_plugins=(plugin,))
    f = by_id(run(image, node("mofed-23.10-open-550-peermem")), RULE)
    assert "FABRIC_9.9" in f.predicted_error
