"""Installed packages from dpkg, rpm (sqlite rpmdb) and apk databases."""

from __future__ import annotations

import io
import sqlite3
import struct
from collections.abc import Iterable, Iterator

from ..errors import LimitExceededError
from ..model.image import Package
from ..view.fileview import FileView
from ..view.wants import Want

DPKG_STATUS = "var/lib/dpkg/status"
RPMDB_SQLITE = ("usr/lib/sysimage/rpm/rpmdb.sqlite", "var/lib/rpm/rpmdb.sqlite")
APK_INSTALLED = "lib/apk/db/installed"
DPKG_FIELDS = ["Package", "Version", "Status"]
# Parsing bounds (hostile databases): Debian's whole archive has ~65k binary packages, a large
# RHEL host ~5k; an image claiming more is refused rather than held in memory.
MAX_PACKAGES = 200_000
RPMDB_MAX_STEPS = 200_000_000  # sqlite VM instructions per query: ends recursive views/CTEs

WANTS = (
    Want(r"var/lib/dpkg/status", content=True, max_bytes=128 * 1024 * 1024),
    Want(r"var/lib/dpkg/status\.d/[^/]+", content=True, max_bytes=4 * 1024 * 1024),  # distroless
    Want(r"(usr/lib/sysimage|var/lib)/rpm/rpmdb\.sqlite", content=True, max_bytes=256 * 1024 * 1024),
    Want(r"(usr/lib/sysimage|var/lib)/rpm/Packages(\.db)?"),  # BerkeleyDB/ndb: noted, not read
    Want(r"lib/apk/db/installed", content=True, max_bytes=64 * 1024 * 1024),
)


def parse_dpkg_status(data: bytes, path: str, layer: str | None, require_installed: bool = True) -> list[Package]:
    from debian import deb822  # imported here: only a cache miss parses a dpkg database

    packages: list[Package] = []
    # Lines are decoded one at a time (a list of every line of a 128 MiB file of short lines
    # would take gigabytes); only the fields read below are stored.
    lines = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace", newline=None)
    for para in deb822.Deb822.iter_paragraphs(_dpkg_lines(lines), fields=DPKG_FIELDS, use_apt_pkg=False):
        if len(packages) >= MAX_PACKAGES:
            raise LimitExceededError(f"/{path}: more than {MAX_PACKAGES} packages (limit)")
        name, version = para.get("Package"), para.get("Version")
        if not name or not version:
            continue
        status = para.get("Status", "")
        if require_installed and status and not status.endswith(" installed"):
            continue
        packages.append(Package(name=name.strip(), version=version.strip(), db="dpkg", path="/" + path, layer=layer))
    return packages


_DPKG_WANTED = frozenset(f.lower() for f in DPKG_FIELDS)


def _dpkg_lines(lines: Iterable[str]) -> Iterator[str]:
    """Only the lines deb822 needs here: paragraph breaks and the (single-line) wanted fields.
    deb822 holds a whole paragraph while parsing it; a hostile paragraph of a million other
    lines would be held too."""
    for chunk in lines:
        # str.splitlines() also breaks at \v, \f, \x1c-\x1e, \x85, \u2028: deb822 splits values
        # that way, so a line is split the same way first (else a "blank line" in a value raises)
        for line in chunk.splitlines():
            if not line.strip():
                yield "\n"
            elif line[0] not in " \t#" and line.partition(":")[0].strip().lower() in _DPKG_WANTED:
                yield line + "\n"


def parse_apk_installed(data: bytes, path: str, layer: str | None) -> list[Package]:
    packages: list[Package] = []
    name = version = None
    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace", newline=None)
    for line in _with_end(text):
        if not line.strip():
            if len(packages) >= MAX_PACKAGES:
                raise LimitExceededError(f"/{path}: more than {MAX_PACKAGES} packages (limit)")
            if name and version:
                packages.append(Package(name=name, version=version, db="apk", path="/" + path, layer=layer))
            name = version = None
        elif line.startswith("P:"):
            name = line[2:].strip()
        elif line.startswith("V:"):
            version = line[2:].strip()
    return packages


def _with_end(lines: Iterable[str]) -> Iterator[str]:
    """The lines without their newline, then one empty line (ends the last paragraph)."""
    for line in lines:
        yield line.rstrip("\n")
    yield ""


# rpm header tags and types (rpm's lib/rpmtag.h)
_TAG_NAME, _TAG_VERSION, _TAG_RELEASE, _TAG_EPOCH = 1000, 1001, 1002, 1003
_TYPE_INT32, _TYPE_STRING, _TYPE_I18NSTRING = 4, 6, 9


def parse_rpm_header(blob: bytes) -> dict[int, str | int]:
    """Decode the tags we need from an rpmdb header blob (no leading magic). Raises ValueError."""
    if len(blob) < 8:
        raise ValueError("header too short")
    il, dl = struct.unpack(">ii", blob[:8])
    if il < 0 or dl < 0 or il > 100_000 or 8 + il * 16 + dl > len(blob):
        raise ValueError("header sizes out of range")
    data_start = 8 + il * 16
    data = blob[data_start : data_start + dl]
    values: dict[int, str | int] = {}
    for i in range(il):
        tag, typ, offset, count = struct.unpack(">iiii", blob[8 + i * 16 : 8 + (i + 1) * 16])
        if tag not in (_TAG_NAME, _TAG_VERSION, _TAG_RELEASE, _TAG_EPOCH):
            continue
        if not 0 <= offset < len(data):
            raise ValueError("tag offset out of range")
        if typ in (_TYPE_STRING, _TYPE_I18NSTRING):
            end = data.find(b"\0", offset)
            if end < 0:
                raise ValueError("unterminated string")
            values[tag] = data[offset:end].decode("utf-8", "replace")
        elif typ == _TYPE_INT32 and count >= 1 and offset + 4 <= len(data):
            values[tag] = struct.unpack(">i", data[offset : offset + 4])[0]
    return values


def parse_rpmdb_sqlite(data: bytes, path: str, layer: str | None) -> list[Package]:
    con = sqlite3.connect(":memory:")
    steps = [0]

    def budget() -> int:  # called every 1000 VM steps; non-zero aborts the query
        steps[0] += 1000
        return steps[0] > RPMDB_MAX_STEPS

    try:
        con.deserialize(data)  # the database never touches the disk
        con.text_factory = bytes  # TEXT that is not UTF-8 must not raise while fetching (found by fuzzing)
        con.execute("PRAGMA trusted_schema = OFF")  # no functions from a hostile schema
        kind = con.execute("SELECT type FROM sqlite_master WHERE name = 'Packages'").fetchone()
        if not kind or kind[0] != b"table":
            raise sqlite3.DatabaseError("no Packages table")  # a view may recurse for ever
        con.set_progress_handler(budget, 1000)
        rows = con.execute("SELECT blob FROM Packages").fetchmany(MAX_PACKAGES + 1)
    except UnicodeDecodeError:
        # sqlite's message about a corrupt schema quotes its bytes, which Python then fails to decode
        raise sqlite3.DatabaseError("malformed database schema") from None
    finally:
        con.close()
    if len(rows) > MAX_PACKAGES:
        raise LimitExceededError(f"/{path}: more than {MAX_PACKAGES} packages (limit)")
    packages = []
    for (blob,) in rows:
        if not isinstance(blob, bytes):
            continue  # rpm stores headers as BLOBs; bytes(an integer) would allocate that many
        try:
            tags = parse_rpm_header(blob)
        except ValueError:
            continue
        name, version, release = tags.get(_TAG_NAME), tags.get(_TAG_VERSION), tags.get(_TAG_RELEASE)
        if not isinstance(name, str) or not isinstance(version, str) or name == "gpg-pubkey":
            continue
        evr = f"{version}-{release}" if isinstance(release, str) else version
        epoch = tags.get(_TAG_EPOCH)
        if isinstance(epoch, int) and epoch:
            evr = f"{epoch}:{evr}"
        packages.append(Package(name=name, version=evr, db="rpm", path="/" + path, layer=layer))
    return packages


def extract(view: FileView) -> tuple[list[Package], list[str]]:
    """All installed packages, and notes about databases that could not be read."""
    packages: list[Package] = []
    notes: list[str] = []
    ref = view.file(DPKG_STATUS)
    if ref is not None:
        if ref.data is None:
            notes.append(f"/{DPKG_STATUS} is larger than the read limit; dpkg packages not read")
        else:
            packages += parse_dpkg_status(ref.data, ref.real_path, ref.layer)
    for path in view.paths(r"var/lib/dpkg/status\.d/[^/]+"):
        sub = view.file(path)
        if sub is not None and sub.data is not None:
            packages += parse_dpkg_status(sub.data, sub.real_path, sub.layer, require_installed=False)
    for path in RPMDB_SQLITE:
        ref = view.file(path)
        if ref is None:
            continue
        if ref.data is None:
            notes.append(f"/{path} is larger than the read limit; rpm packages not read")
            continue
        try:
            packages += parse_rpmdb_sqlite(ref.data, ref.real_path, ref.layer)
        except sqlite3.DatabaseError as exc:
            notes.append(f"/{path}: unreadable rpm database ({exc})")
        break
    else:
        for path in view.paths(r"(usr/lib/sysimage|var/lib)/rpm/Packages(\.db)?"):
            notes.append(f"/{path}: BerkeleyDB/ndb rpm databases are not read; rpm packages unknown")
    ref = view.file(APK_INSTALLED)
    if ref is not None and ref.data is not None:
        packages += parse_apk_installed(ref.data, ref.real_path, ref.layer)
    return packages, notes
