"""Generate the GDRCopy catalogs from every release tag of github:NVIDIA/gdrcopy:

- compat_matrix/catalogs/gdrcopy_releases.json: per release, the gdrdrv module's version (GDRDRV_MAJOR/MINOR_VERSION in
  src/gdrdrv/gdrdrv.h) and the oldest libgdrapi it accepts (MINIMUM_GDR_API_*), libgdrapi's version
  (GDR_API_MAJOR/MINOR_VERSION in include/gdrapi.h), the oldest gdrdrv it accepts (MINIMUM_GDRDRV_*), its soname
  major (the Makefile's LIB_MAJOR_VER), whether libgdrapi asks gdrdrv's version by ioctl (GDRDRV_IOC_GET_VERSION: a
  1.x module lacks it and a 2.x library refuses it), whether gdrdrv offers /proc/driver/gdrdrv/params, and whether
  libgdrapi can fall back to CUDA's DMA-BUF mmap without gdrdrv (GDRCOPY_USE_DMABUF_MMAP);
- compat_matrix/catalogs/gdrcopy_release_notes.json: every entry of CHANGELOG.md (the newest tag's, which lists every
  release), with the component it concerns (gdrdrv, libgdrapi, tests, packaging) and its kind (fix, feature, support).

    python tools/upstreams/gen_gdrcopy.py /work/.mirror/NVIDIA+gdrcopy/repo
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from git_read import Mirror, version_key  # noqa: E402

CATALOGS = Path(__file__).resolve().parents[2] / "src/imgcheck/data/compat_matrix/catalogs"
REPO = "NVIDIA/gdrcopy"
RELEASE_TAG = r"v\d+\.\d+(?:\.\d+)?"  # final releases only (no -beta, no packaging respin v2.3.1-1)
USAGE = "usage: gen_gdrcopy.py /work/.mirror/NVIDIA+gdrcopy/repo"

# the component a CHANGELOG entry concerns, first match wins (over the entry's text)
COMPONENTS = (
    ("tests", r"(?i)sanity|copybw|copylat|apiperf|pplat|unit test|_basic_|_validate_|test and benchmark|CUDA RT"),
    ("packaging", r"(?i)\brpm\b|\bdeb\b|dkms|package|Makefile|README|init\.d|systemd|maintainer|RHEL 10|SLES|Ubuntu"),
    (
        "gdrdrv",
        r"(?i)gdrdrv|gdrdv|kernel|nvidia_p2p|NVIDIA_IS_OPENSOURCE|persistent mapping|\bPAT\b|vm_flags|kzfree|"
        r"HAVE_UNLOCKED_IOCTL|GPL|\brace-condition|security|RHL8|BF3|BLUEFIELD|Confidential|coherent|CDMM|Blackwell",
    ),
    (
        "libgdrapi",
        r"(?i)gdr_\w+|libgdrapi|\bAPI\b|copy|mapping|DMA-BUF|fd leak|version checking|POWER|multi-arch|ARM64",
    ),
)
KINDS = (
    ("fix", r"(?i)^\s*fix|\bbugs?\b|leak|workaround|use-after-free|\brace-condition"),
    ("support", r"(?i)^\s*(?:add )?support|^\s*handle"),
)


def _define(text: str | None, name: str) -> int | None:
    m = re.search(rf"#define\s+{name}\s+(\d+)\b", text or "")
    return int(m.group(1)) if m else None


def _pair(text: str | None, prefix: str) -> str | None:
    major, minor = _define(text, f"{prefix}_MAJOR_VERSION"), _define(text, f"{prefix}_MINOR_VERSION")
    return None if major is None or minor is None else f"{major}.{minor}"


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _note(drv_h: str | None) -> dict:
    if _pair(drv_h, "GDRDRV") is not None:
        return {}
    return {
        "note": "gdrdrv of this release states no version and no GET_VERSION ioctl (1.x): a 2.x libgdrapi refuses "
        "it in gdr_open ('gdrdrv might be too old'); its libgdrapi is soname 1"
    }


def release_row(repo: Mirror, tag: str) -> dict:
    drv_h = repo.show(tag, "src/gdrdrv/gdrdrv.h") or repo.show(tag, "gdrdrv/gdrdrv.h")  # 1.x: no src/ or include/
    api_h = repo.show(tag, "include/gdrapi.h") or repo.show(tag, "gdrapi.h")
    api_c = repo.show(tag, "src/gdrapi.c") or repo.show(tag, "gdrapi.c")
    drv_c = repo.show(tag, "src/gdrdrv/gdrdrv.c") or repo.show(tag, "gdrdrv/gdrdrv.c")
    makefile = (repo.show(tag, "src/Makefile") or "") + (repo.show(tag, "Makefile") or "")
    soname = _define(api_h, "GDR_API_MAJOR_VERSION") if "LIB_MAJOR_VER ?= $(shell" in makefile else None
    if soname is None:
        m = re.search(r"LIB_MAJOR_VER\s*:?=\s*(\d+)", makefile)
        soname = int(m.group(1)) if m else None
    return {
        "release": tag[1:],
        "date": repo.tag_date(tag),
        "gdrdrv_version": _pair(drv_h, "GDRDRV"),
        "gdr_api_version": _pair(api_h, "GDR_API"),
        "min_gdrdrv_version": _pair(api_h, "MINIMUM_GDRDRV"),
        "min_gdr_api_version": _pair(drv_h, "MINIMUM_GDR_API"),
        "libgdrapi_soname_major": soname,
        "version_ioctl": _yes("GDRDRV_IOC_GET_VERSION" in (api_c or "")),
        "proc_params": _yes('proc_create("params"' in (drv_c or "")),
        "dmabuf_fallback": _yes(
            "GDRCOPY_USE_DMABUF_MMAP" in (api_c or "") + (repo.show(tag, "src/gdrapi_internal.h") or "")
        ),
        "source": f"{REPO}@{tag}:src/gdrdrv/gdrdrv.h; {REPO}@{tag}:include/gdrapi.h",
        **_note(drv_h),
        "confidence": "verified",
    }


def _classify(text: str, table: tuple[tuple[str, str], ...], default: str) -> str:
    return next((name for name, rx in table if re.search(rx, text)), default)


def notes_rows(changelog: str, tag: str) -> list[dict]:
    rows, release, n = [], None, 0
    for line in changelog.splitlines():
        head = re.match(r"^## \[(\d+(?:\.\d+)+)\]", line)
        if head:
            release, n = head.group(1), 0
            continue
        if line.startswith("## "):
            release = None  # [master]: not a release
            continue
        item = re.match(r"^- (.+)$", line)
        if release and item:
            n += 1
            text = item.group(1).replace("\\_", "_").strip()
            rows.append(
                {
                    "key": f"{release}#{n}",
                    "release": release,
                    "component": _classify(text, COMPONENTS, "other"),
                    "kind": _classify(text, KINDS, "feature"),
                    "text": text,
                    "source": f"{REPO}@{tag}:CHANGELOG.md",
                    "confidence": "verified",
                }
            )
        elif release and line.startswith("  ") and rows:
            rows[-1]["text"] += " " + line.strip()  # a wrapped entry
    return rows


def build(path: str) -> tuple[dict, dict]:
    repo = Mirror(path)
    tags = sorted(repo.tags(RELEASE_TAG), key=version_key)
    releases = [release_row(repo, t) for t in tags]
    newest = tags[-1]
    notes = notes_rows(repo.show(newest, "CHANGELOG.md") or "", newest)
    rel_doc = {
        "table": "gdrcopy_releases",
        "description": "GDRCopy releases: the gdrdrv kernel module's and libgdrapi's versions and the oldest version "
        "of the other each accepts (libgdrapi asks gdrdrv's version with the GET_VERSION ioctl in gdr_open and refuses "
        "an older module; gdrdrv refuses an older library), libgdrapi's soname major, and the module's /proc params "
        "and libgdrapi's DMA-BUF fallback. Read by engine/gdrcopy.py. Generated by tools/upstreams/gen_gdrcopy.py; "
        "edit the generator, not this file.",
        "coverage": {"releases": len(tags), "first": tags[0][1:], "last": newest[1:], "rows": len(releases)},
        "rows": releases,
    }
    notes_doc = {
        "table": "gdrcopy_release_notes",
        "description": "Every CHANGELOG.md entry of GDRCopy, by release, with the component it concerns and its kind "
        "(fix, feature, support). The defects engine/gdrcopy.py decides on are rows of gdrcopy_known_issues, each citing "
        "its entry here. Generated by tools/upstreams/gen_gdrcopy.py; edit the generator, not this file.",
        "coverage": {
            "releases": len({r["release"] for r in notes}),
            "entries": len(notes),
            "fixes": sum(r["kind"] == "fix" for r in notes),
            "gdrdrv_fixes": sum(r["kind"] == "fix" and r["component"] == "gdrdrv" for r in notes),
        },
        "rows": notes,
    }
    return rel_doc, notes_doc


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(USAGE, file=sys.stderr)
        return 2
    for doc in build(argv[1]):
        out = CATALOGS / f"{doc['table']}.json"
        out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{out.name}: {json.dumps(doc['coverage'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
