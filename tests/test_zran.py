"""Seek points taken during the one inflate of a gzip layer (view/zran.py), on a real Debian rootfs tar.

What is asserted: the inflated bytes are the tar's, whichever inflate is reached (zlib-ng's or the system zlib);
a stream of several members with zero padding between them (what `cat a.gz b.gz` and some layer writers make) is
read whole and entered from points in either member; the bytes from any offset equal the tar's there; a truncated
stream or trailing garbage is the same one-line error as the ISA-L read gives.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gzip
import hashlib
import io
import random

import pytest
from rootfs import build_rootfs

from imgcheck.errors import BadInputError
from imgcheck.sources.base import VerifyingReader
from imgcheck.view import zran
from imgcheck.view.layer_index import index_layer
from imgcheck.view.wants import WantSet

SLICE = 6 * 1024**2


@pytest.fixture(scope="module")
def tar_part() -> bytes:
    with open(build_rootfs("bookworm"), "rb") as fh:
        return fh.read(SLICE)


def _libs() -> list[zran.Lib]:
    found = [zran.lib()]
    name = ctypes.util.find_library("z")
    if name:
        dll = ctypes.CDLL(name)
        dll.zlibVersion.restype = ctypes.c_char_p
        found.append(zran.Lib(dll, "", zran._ZlibStream, dll.zlibVersion()))
    return [z for z in found if z is not None]


def _inflate(blob: bytes, z: zran.Lib, spacing: int) -> tuple[bytes, zran.Inflater]:
    inflater = zran.Inflater(io.BytesIO(blob), z, spacing)
    out = bytearray()
    buf = memoryview(bytearray(1 << 16))
    while n := inflater.readinto(buf):
        out += buf[:n]
    return bytes(out), inflater


@pytest.mark.parametrize("z", _libs(), ids=lambda z: z.name)
def test_points_from_any_offset_give_the_tar_s_bytes(tar_part, z):
    half = len(tar_part) // 2
    # two members at different levels with zero padding between them
    blob = gzip.compress(tar_part[:half], 1) + b"\0" * 5 + gzip.compress(tar_part[half:], 9)
    out, inflater = _inflate(blob, z, 256 * 1024)
    assert out == tar_part
    index = inflater.index(len(blob), len(out))
    inflater.close()
    points = zran.parse_index(index)
    assert len(points) >= 4 and any(u > half for _c, u, _b, _w in points)  # points in both members
    reader = zran.PointReader(z, index, lambda offset, n: blob[offset : offset + n])
    scratch = memoryview(bytearray(1 << 16))
    rng = random.Random(7)
    for offset in [0, half - 100, *(rng.randrange(len(out) - 4096) for _ in range(12))]:
        reader.seek(offset, scratch)
        got = bytearray(4096)
        view, n = memoryview(got), 0
        while n < len(got):
            k = reader.readinto(view[n:])
            assert k
            n += k
        assert bytes(got) == out[offset : offset + 4096]
    reader.close()


def test_points_are_bounded_whatever_the_layer_size(tar_part, monkeypatch):
    monkeypatch.setattr(zran, "MAX_POINTS", 4)
    out, inflater = _inflate(gzip.compress(tar_part, 6), zran.lib(), 64 * 1024)
    assert out == tar_part and len(inflater.points) <= 4 and inflater.spacing > 64 * 1024


@pytest.mark.parametrize("cut", ["truncated", "garbage"])
def test_a_bad_stream_is_one_line_as_with_isal(tar_part, cut):
    blob = gzip.compress(tar_part, 6)
    blob = blob[: len(blob) // 2] if cut == "truncated" else blob + b"not gzip"
    digest = "sha256:" + hashlib.sha256(blob).hexdigest()
    messages = []
    for spacing in (None, 1 << 20):  # ISA-L, then the inflate that takes points
        raw = VerifyingReader(io.BytesIO(blob), digest, "layer", len(blob))
        with pytest.raises(BadInputError) as err:
            index_layer(raw, digest, WantSet(()), seek_spacing=spacing)
        assert "corrupt or truncated data" in str(err.value) and "\n" not in str(err.value)
        messages.append(str(err.value))
    assert messages[0].split("(")[0] == messages[1].split("(")[0]  # which layer, the same words
