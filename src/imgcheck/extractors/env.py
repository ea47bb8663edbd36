"""/etc/nccl.conf: NCCL reads it like environment variables (NAME=VALUE lines)."""

from __future__ import annotations

from ..view.fileview import FileView
from ..view.wants import Want

WANTS = (Want(r"etc/nccl\.conf", content=True, max_bytes=256 * 1024),)


def parse_nccl_conf(text: str) -> dict[str, str]:
    values = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        values[key.strip()] = value.strip()
    return values


def extract_nccl_conf(view: FileView) -> dict[str, str]:
    data = view.read("etc/nccl.conf")
    return parse_nccl_conf(data.decode("utf-8", "replace")) if data else {}
