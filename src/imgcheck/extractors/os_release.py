"""/etc/os-release (or /usr/lib/os-release) -> distribution id and version."""

from __future__ import annotations

import shlex

from ..model.image import OsRelease
from ..view.fileview import FileView
from ..view.wants import Want

WANTS = (Want(r"(etc|usr/lib)/os-release", content=True, max_bytes=64 * 1024),)


def parse_os_release(text: str) -> dict[str, str]:
    values: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, raw = line.partition("=")
        try:
            parts = shlex.split(raw, posix=True)
        except ValueError:
            parts = [raw.strip("\"'")]
        values[key.strip()] = parts[0] if parts else ""
    return values


def extract(view: FileView) -> OsRelease:
    for path in ("etc/os-release", "usr/lib/os-release"):
        ref = view.file(path)
        if ref is None or ref.data is None:
            continue
        values = parse_os_release(ref.data.decode("utf-8", "replace"))
        return OsRelease(
            id=values.get("ID"),
            version_id=values.get("VERSION_ID"),
            pretty_name=values.get("PRETTY_NAME"),
            path="/" + ref.real_path,
            layer=ref.layer,
        )
    return OsRelease()
