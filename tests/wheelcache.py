"""Real PyPI artifacts for the tests, fetched with pip and cached beside the rootfs tars.

`wheel(spec)` is a real wheel (`pip download --no-deps`). `metadata(spec)` is a distribution's real
METADATA without its wheel: pip reads it from PyPI's PEP 658 `.metadata` file and reports it
(`pip install --dry-run --report`, JSON per PEP 566), so multi-GB wheels (torch) and 200 MB ones
(nvidia-nccl-cuXX) need not be downloaded; `metadata_wheel` turns it into a wheel holding only that
dist-info, for the image's own pip to install. Skips with the reason when PyPI is unreachable.
"""

from __future__ import annotations

import base64
import fcntl
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile

import pytest
from cachefill import private_dir, private_name, publish_dir
from rootfs import ROOTFS_CACHE

WHEEL_CACHE = os.environ.get("IMGCHECK_WHEEL_CACHE", os.path.join(ROOTFS_CACHE, "wheels"))


def _key(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9.=_-]+", "_", spec)


def wheel(spec: str) -> str:
    """Path of the real wheel for `spec` (e.g. "nvidia-cuda-runtime-cu12==12.4.127"), downloaded once."""
    directory = os.path.join(WHEEL_CACHE, _key(spec))
    found = glob.glob(os.path.join(directory, "*.whl"))
    if not found:
        tmp = private_dir(directory)
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary",
                ":all:",
                "--dest",
                tmp,
                spec,
            ],
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            pytest.skip(f"cannot download {spec} from PyPI: {result.stderr.strip()[-300:]}")
        publish_dir(tmp, directory)  # another run may have filled it meanwhile: theirs stands
        found = glob.glob(os.path.join(directory, "*.whl"))
    return found[0]


def metadata(spec: str) -> dict:
    """The real metadata of `spec` as pip reports it (PEP 566 JSON), and the file it came from."""
    path = os.path.join(WHEEL_CACHE, _key(spec) + ".metadata.json")
    if not os.path.exists(path):
        tmp = private_name(path)
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--dry-run",
                "--no-deps",
                "--ignore-installed",
                "--only-binary",
                ":all:",
                "--report",
                tmp,
                spec,
            ],
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            pytest.skip(f"cannot read the metadata of {spec} from PyPI: {result.stderr.strip()[-300:]}")
        os.makedirs(WHEEL_CACHE, exist_ok=True)
        os.replace(tmp, path)
    with open(path) as fh:
        item = json.load(fh)["install"][0]
    return {"metadata": item["metadata"], "url": item["download_info"]["url"]}


def metadata_text(meta: dict) -> str:
    """METADATA (RFC 822 headers) from PEP 566 JSON: each key's field name, one line per list item."""
    lines = []
    for key, value in meta.items():
        if key == "description":
            continue
        field = "-".join(w.capitalize() for w in key.split("_"))
        field = {"Requires-Dist": "Requires-Dist", "Home-Page": "Home-page"}.get(field, field)
        for item in value if isinstance(value, list) else [value]:
            lines.append(f"{field}: {item}")
    return "\n".join(lines) + "\n\n"


def metadata_wheel(spec: str, directory: str) -> str:
    """A wheel holding only the real dist-info of `spec`, for pip to install like the real one."""
    meta = metadata(spec)["metadata"]
    name = re.sub(r"[-_.]+", "_", meta["name"]).lower()
    dist_info = f"{name}-{meta['version']}.dist-info"
    files = {
        f"{dist_info}/METADATA": metadata_text(meta).encode(),
        f"{dist_info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: imgcheck-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = (
        "".join(
            f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},{len(d)}\n"
            for p, d in files.items()
        )
        + f"{dist_info}/RECORD,,\n"
    )
    files[f"{dist_info}/RECORD"] = record.encode()
    path = os.path.join(directory, f"{name}-{meta['version']}-py3-none-any.whl")
    with zipfile.ZipFile(path, "w") as zf:
        for p, d in files.items():
            zf.writestr(p, d)
    return path


DEB_CACHE = os.environ.get("IMGCHECK_DEB_CACHE", os.path.join(ROOTFS_CACHE, "debs"))


def debian_package(name: str, suite: str, component: str = "main", arch: str = "amd64") -> str:
    """A real .deb from deb.debian.org (`apt-get download` against a private sources list), cached."""
    found = glob.glob(os.path.join(DEB_CACHE, f"{name}_*_{arch}.deb"))
    if found:
        return found[0]
    os.makedirs(DEB_CACHE, exist_ok=True)
    # apt's lists and partial downloads are one state per suite: another run on this machine waits for
    # it here rather than failing on apt's lock, then finds the package it fetched
    with open(os.path.join(DEB_CACHE, f".apt-{suite}-{component}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = glob.glob(os.path.join(DEB_CACHE, f"{name}_*_{arch}.deb"))
        if found:
            return found[0]
        return _apt_download(name, suite, component, arch)


def _apt_download(name: str, suite: str, component: str, arch: str) -> str:
    state = os.path.join(DEB_CACHE, f".apt-{suite}-{component}")
    for sub in ("lists/partial", "cache/archives/partial"):
        os.makedirs(os.path.join(state, sub), exist_ok=True)
    sources = os.path.join(state, "sources.list")
    with open(sources, "w") as fh:
        fh.write(
            f"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian "
            f"{suite} {component}\n"
        )
    opts = [
        "-o",
        f"Dir::Etc::SourceList={sources}",
        "-o",
        "Dir::Etc::SourceParts=/nonexistent",
        "-o",
        f"Dir::State::Lists={state}/lists",
        "-o",
        f"Dir::Cache={state}/cache",
        "-o",
        "APT::Sandbox::User=root",
    ]
    tmp = private_dir(os.path.join(DEB_CACHE, name))  # a .deb appears in the cache whole or not at all
    try:
        for args in (["update"], ["download", f"{name}:{arch}"]):
            result = subprocess.run(["apt-get", "-q"] + opts + args, capture_output=True, text=True, cwd=tmp)
            if result.returncode != 0:
                pytest.skip(f"cannot fetch {name} from Debian {suite} {component}: {result.stderr.strip()[-300:]}")
        found = glob.glob(os.path.join(tmp, f"{name}_*_{arch}.deb"))
        if not found:
            pytest.skip(f"apt-get download {name} left no .deb")
        dest = os.path.join(DEB_CACHE, os.path.basename(found[0]))
        os.replace(found[0], dest)
        return dest
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
