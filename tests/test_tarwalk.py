"""The header walk against tars written by Python's tarfile in every format, and hostile headers."""

from __future__ import annotations

import io
import tarfile

import pytest

from imgcheck.errors import BadInputError
from imgcheck.view.tarwalk import TarWalker


def tar_bytes(fmt, members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tar:
        for name, data, kind, link in members:
            info = tarfile.TarInfo(name)
            if kind == "sym":
                info.type, info.linkname = tarfile.SYMTYPE, link
                tar.addfile(info)
            elif kind == "lnk":
                info.type, info.linkname = tarfile.LNKTYPE, link
                tar.addfile(info)
            elif kind == "dir":
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


LONG = "usr/lib/" + "very-long-directory-name/" * 8 + "libibverbs.so.1.14.44.0"
MEMBERS = [
    ("etc/os-release", b"ID=debian\n", "file", None),
    (LONG, b"\x7fELF" + b"x" * 3000, "file", None),
    ("usr/lib/libibverbs.so.1", b"", "sym", "/" + LONG),
    ("usr/lib/hard", b"", "lnk", "etc/os-release"),
    ("opt", b"", "dir", None),
    ("big.bin", b"z" * 300_000, "file", None),
    ("caf\u00e9/\u00fcnicode.txt", b"u", "file", None),
]


@pytest.mark.parametrize("fmt", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
@pytest.mark.parametrize("chunk", [512, 4096, 1 << 20])
def test_walker_agrees_with_tarfile(fmt, chunk):
    members = (
        MEMBERS
        if fmt != tarfile.USTAR_FORMAT
        else [m for m in MEMBERS if len(m[0]) < 100 and (m[3] is None or len(m[3]) < 100)]
    )
    data = tar_bytes(fmt, members)
    stream = io.BytesIO(data)
    walker = TarWalker(stream, chunk=chunk)
    seen = {}
    for header in walker:
        content = walker.read_data(10_000) if header.name.endswith(("os-release", ".0")) else None
        seen[header.name.rstrip("/")] = (header.type, header.size, header.linkname, content)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for m in tar.getmembers():
            name = m.name
            assert name in seen, name
            typ, size, link, content = seen[name]
            assert size == (m.size if m.isfile() else 0)
            if m.issym() or m.islnk():
                assert link == m.linkname
            if content is not None:
                assert content == tar.extractfile(m).read()
    assert len(seen) == len(members)


def test_read_data_respects_limit():
    data = tar_bytes(tarfile.PAX_FORMAT, [("a", b"x" * 100, "file", None), ("b", b"y", "file", None)])
    walker = TarWalker(io.BytesIO(data))
    it = iter(walker)
    next(it)
    assert walker.read_data(10) is None  # too big: not read, skipped on the next step
    h = next(it)
    assert h.name == "b" and walker.read_data(10) == b"y"


def test_bad_checksum_is_rejected():
    data = bytearray(tar_bytes(tarfile.USTAR_FORMAT, [("etc/a", b"1", "file", None)]))
    data[0:4] = b"evil"
    with pytest.raises(BadInputError, match="checksum"):
        list(TarWalker(io.BytesIO(bytes(data))))


def test_truncated_member_data():
    data = tar_bytes(tarfile.USTAR_FORMAT, [("etc/a", b"1" * 5000, "file", None)])
    with pytest.raises(BadInputError, match="truncated"):
        list(TarWalker(io.BytesIO(data[:2000])))


def test_huge_pax_record_is_refused():
    data = tar_bytes(tarfile.PAX_FORMAT, [("x" * 200, b"1", "file", None)])
    header = bytearray(data[:512])
    # rewrite the PAX header's size to 1 GiB and fix its checksum
    header[124:136] = b"%011o\0" % (1 << 30)
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\0 " % sum(header)
    with pytest.raises(BadInputError, match="too large"):
        list(TarWalker(io.BytesIO(bytes(header) + data[512:])))


def test_base256_size():
    data = bytearray(tar_bytes(tarfile.GNU_FORMAT, [("f", b"abc", "file", None)]))
    field = bytearray(12)
    field[0] = 0x80
    field[-1] = 3
    data[124:136] = field
    data[148:156] = b" " * 8
    data[148:156] = b"%06o\0 " % sum(data[:512])
    headers = list(TarWalker(io.BytesIO(bytes(data))))
    assert headers[0].size == 3


class _Trickle(io.RawIOBase):
    """Returns at most `step` bytes per call, as a network or decompressor stream may."""

    def __init__(self, data: bytes, step: int):
        self._data, self._pos, self._step = data, 0, step

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        n = min(len(b), self._step, len(self._data) - self._pos)
        b[:n] = self._data[self._pos : self._pos + n]
        self._pos += n
        return n


class _ReadOnly:
    """A stream with read() only (some HTTP bodies): the walker adapts to it."""

    def __init__(self, data: bytes):
        self._buf = io.BytesIO(data)

    def read(self, n: int = -1) -> bytes:
        return self._buf.read(min(n, 333) if n > 0 else n)


@pytest.mark.parametrize(
    "make",
    [lambda d: _Trickle(d, 7), lambda d: _Trickle(d, 700), _ReadOnly],
    ids=["trickle-7", "trickle-700", "read-only"],
)
def test_short_reads_give_the_same_members_and_bytes(make):
    data = tar_bytes(tarfile.PAX_FORMAT, MEMBERS)
    expected = [(h.name, h.size, h.linkname) for h in TarWalker(io.BytesIO(data))]
    walker = TarWalker(make(data), chunk=1024)
    got, contents = [], {}
    for h in walker:
        got.append((h.name, h.size, h.linkname))
        if h.name in (LONG, "big.bin"):
            contents[h.name] = walker.read_data(1 << 20)  # big.bin is larger than the 1 KiB buffer
    assert got == expected
    assert contents[LONG] == b"\x7fELF" + b"x" * 3000
    assert contents["big.bin"] == b"z" * 300_000
