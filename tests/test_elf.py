"""Symbol versions read from real ELF files built with gcc and a version script."""

from __future__ import annotations

import pytest
from elfbuild import build_versioned_lib

from imgcheck.elf.reader import NotElf, read_elf


def test_defined_versions_and_soname():
    lib = build_versioned_lib("libibverbs.so.1", ["IBVERBS_1.0", "IBVERBS_1.1", "IBVERBS_1.8", "IBVERBS_PRIVATE_25"])
    info = read_elf(lib)
    assert info.soname == "libibverbs.so.1"
    assert info.defined_versions == ("IBVERBS_1.0", "IBVERBS_1.1", "IBVERBS_1.8", "IBVERBS_PRIVATE_25")


def test_needed_versions_of_a_provider():
    prov = build_versioned_lib("libmlx5.so.1", ["MLX5_1.0"], needs=("libibverbs.so.1", "IBVERBS_PRIVATE_25"))
    info = read_elf(prov)
    assert "IBVERBS_PRIVATE_25" in info.needed_versions["libibverbs.so.1"]
    assert "libibverbs.so.1" in info.needed_libraries


@pytest.mark.parametrize(
    "data", [b"", b"not an elf", b"\x7fELF" + b"\x00" * 10, b"\x7fELF\x02\x01\x01" + b"\xff" * 100]
)
def test_garbage_is_not_elf(data):
    with pytest.raises(NotElf):
        read_elf(data)


def test_truncated_real_library_is_not_elf_or_partial():
    lib = build_versioned_lib("libibverbs.so.1", ["IBVERBS_1.0", "IBVERBS_1.1"])
    try:
        info = read_elf(lib[: len(lib) // 3])
    except NotElf:
        return
    # if the header survived, whatever is read must be a subset of the truth
    assert set(info.defined_versions) <= {"IBVERBS_1.0", "IBVERBS_1.1"}
