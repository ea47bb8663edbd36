"""Generate compat_matrix/catalogs/upstream_release_notes.json: every release-note entry of UCX (NEWS), libfabric
(NEWS.md: Core, EFA, Verbs, SHM, TCP, RxM sections) and aws-ofi-nccl (RELEASENOTES.md), each with its release, kind
(fix / known-issue / behaviour-change / feature), the failure it names (symptom) and the conditions in facts it names.

Re-run after fetching newer snapshots of github:openucx/ucx, github:ofiwg/libfabric and github:aws/aws-ofi-nccl:
    python tools/upstreams/gen_release_notes.py       # mirrors from UCX_MIRROR / LIBFABRIC_MIRROR / OFI_NCCL_MIRROR

Each file is read at the newest release tag (its history lists every earlier release). The symptom and conditions
are read from the entry's words (SYMPTOMS / CONDITIONS below); an entry naming none keeps an empty list, and the
engine then says it cannot tell whether the entry applies.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from git_read import Mirror, version_key  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/compat_matrix/catalogs/upstream_release_notes.json"
SYMPTOMS = {
    "hang": r"\bhang|deadlock|stuck",
    "crash": r"crash|segfault|seg fault|abort\b|assert(ion)? fail",
    "data-corruption": r"corrupt|wrong (result|data)|data (error|mismatch)",
    "failure": r"\bfail(ure|ed|s)?\b|error",
    "leak": r"\bleak",
}
# "kind:value" conditions the engine can evaluate (env_upstream_params / upstream_releases): a provider, a feature,
# a GPU vendor, an NCCL series, a setting the entry names
CONDITIONS = [
    ("provider:efa", r"\befa\b|elastic fabric"),
    ("provider:cxi", r"\bcxi\b|slingshot"),
    ("provider:verbs", r"\bverbs\b"),
    ("provider:tcp", r"\btcp\b"),
    ("provider:shm", r"\bshm\b|shared memory"),
    ("feature:dmabuf", r"dma.?buf"),
    ("feature:gdrcopy", r"gdr.?copy"),
    ("feature:gpudirect", r"gpudirect|gpu direct|\bgdr\b"),
    ("feature:cuda-ipc", r"cuda.?ipc"),
    ("gpu:amd", r"\brocm\b|\bamd\b|\bhip\b"),
    ("gpu:nvidia", r"\bcuda\b"),
    ("transport:roce", r"\broce\b"),
    ("transport:ib", r"infiniband|\bib\b"),
    ("arch:arm64", r"aarch64|\barm\b|grace"),
]
SECTION_CONDITIONS = [
    (r"(^|/)efa$", "provider:efa"),
    (r"(^|/)verbs$|rdma core", "provider:verbs"),
    (r"(^|/)shm$", "provider:shm"),
    (r"(^|/)tcp$", "provider:tcp"),
    (r"(^|/)cuda$", "gpu:nvidia"),
    (r"(^|/)rocm$", "gpu:amd"),
]
NCCL_SERIES = re.compile(r"NCCL v?(2\.\d+)(?:\.x|\.\d+)?", re.I)
SETTING = re.compile(r"`?((?:FI|UCX|OFI_NCCL|NCCL)_[A-Z0-9_]+)`?")


def classify(text: str, section: str) -> tuple[str, str | None, list[str]]:
    low = text.lower()
    sec = section.lower()
    if "known" in sec or "limitation" in sec:
        kind = "known-issue"
    elif "bug" in sec or re.match(r"(fix|fixed|fixes|resolve|correct)", low):
        kind = "fix"
    elif re.search(r"default|changed behavio|no longer|removed|deprecat", low):
        kind = "behaviour-change"
    else:
        kind = "feature" if "feature" in sec else ("fix" if "fix" in low else "other")
    symptom = next((s for s, rx in SYMPTOMS.items() if re.search(rx, low)), None)
    conds = [c for c, rx in CONDITIONS if re.search(rx, text, re.I)]
    # the section an entry sits in names its component: libfabric's "## EFA ##", UCX's "#### RDMA CORE (IB, ...)"
    for rx, cond in SECTION_CONDITIONS:
        if re.search(rx, section, re.I) and cond not in conds:
            conds.append(cond)
    if "gpu:amd" in conds and "gpu:nvidia" in conds:
        conds.remove("gpu:nvidia")
    conds += [f"nccl:{m}" for m in sorted(set(NCCL_SERIES.findall(text)))]
    conds += [f"setting:{m}" for m in sorted(set(SETTING.findall(text))) if not m.startswith("NCCL_NET")]
    return kind, symptom, conds


def ucx(m: Mirror, tag: str) -> list[dict]:
    text = m.show(tag, "NEWS") or ""
    out, release, section, sub = [], None, "", ""
    for line in text.splitlines():
        if mm := re.match(r"##\s+(\d+\.\d+\.\d+)\b", line):
            release, section, sub = mm.group(1), "", ""
        elif line.startswith("## "):
            release = None
        elif mm := re.match(r"###\s+(.*?):?\s*$", line):
            section, sub = mm.group(1), ""
        elif mm := re.match(r"####\s+(.*)", line):
            sub = mm.group(1).strip()
        elif release and (mm := re.match(r"\s*[*-]\s+(.*\S)", line)):
            out.append({"release": release, "section": f"{section}/{sub}" if sub else section, "text": mm.group(1)})
    return out


def libfabric(m: Mirror, tag: str) -> list[dict]:
    text = m.show(tag, "NEWS.md") or ""
    keep = {"core", "efa", "verbs", "shm", "tcp", "rxm", "util", "hmem"}
    out, release, section = [], None, ""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if (mm := re.match(r"v(\d+\.\d+\.\d+),", line)) and nxt.startswith("==="):
            release, section = mm.group(1), ""
        elif mm := re.match(r"##\s*(.*?)\s*(?:##)?\s*$", line):
            section = mm.group(1)
        elif release and section.lower() in keep and (mm := re.match(r"\s*-\s+(.*\S)", line)):
            out.append({"release": release, "section": section, "text": mm.group(1)})
    return out


def ofi_nccl(m: Mirror, tag: str) -> list[dict]:
    text = m.show(tag, "RELEASENOTES.md") or ""
    out, release, section = [], None, ""
    for line in text.splitlines():
        if mm := re.match(r"#\s+v(\d+\.\d+(?:\.\d+)?)", line):
            release, section = mm.group(1), ""
        elif mm := re.match(r"###\s+(.*?):?\s*$", line):
            section = mm.group(1)
        elif release and (mm := re.match(r"[*-]\s+(.*\S)", line)):
            out.append({"release": release, "section": section, "text": mm.group(1)})
        elif release and out and out[-1]["release"] == release and re.match(r"\s{2,}[*-]\s+\S", line):
            out[-1]["text"] += " " + line.strip().lstrip("*- ")  # a nested bullet belongs to its parent
    return out


def main() -> None:
    sources = [
        ("ucx", "openucx/ucx", os.environ.get("UCX_MIRROR", "/work/.mirror/openucx+ucx/repo"), r"v1\.\d+\.\d+", "NEWS", ucx),
        ("libfabric", "ofiwg/libfabric", os.environ.get("LIBFABRIC_MIRROR", "/work/.mirror/ofiwg+libfabric/repo"),
         r"v\d+\.\d+\.\d+", "NEWS.md", libfabric),
        ("aws-ofi-nccl", "aws/aws-ofi-nccl", os.environ.get("OFI_NCCL_MIRROR", "/work/.mirror/aws+aws-ofi-nccl/repo"),
         r"v\d+\.\d+\.\d+", "RELEASENOTES.md", ofi_nccl),
    ]  # fmt: skip
    rows, coverage = [], {}
    for upstream, repo, path, rx, file, reader in sources:
        m = Mirror(path)
        tags = m.tags(rx)
        tag = max(tags, key=version_key)
        items = reader(m, tag)
        # libfabric's main-branch NEWS.md starts at v2.0: the v1.x notes are read at the newest v1 tag
        for major_tag in {max((t for t in tags if t.startswith(f"v{mj}.")), key=version_key) for mj in "1"}:
            if upstream == "libfabric" and major_tag != tag:
                seen = {(it["release"], it["text"]) for it in items}
                items += [it for it in reader(m, major_tag) if (it["release"], it["text"]) not in seen]
                tag = f"{tag} and {major_tag}"
        counts: dict[str, int] = {}
        per_release: dict[str, int] = {}
        for it in items:
            # numbered within its release, so a new release at the top of the file does not renumber older entries
            n = per_release[it["release"]] = per_release.get(it["release"], 0) + 1
            kind, symptom, conds = classify(it["text"], it["section"])
            counts[kind] = counts.get(kind, 0) + 1
            rows.append(
                {
                    "entry": f"{upstream}-{it['release']}#{n}",
                    "upstream": upstream,
                    "release": it["release"],
                    "section": it["section"] or None,
                    "kind": kind,
                    "text": it["text"],
                    "symptom": symptom,
                    "conditions": conds,
                    "source": f"{repo}@{tag.split(' and ')[0] if not it['release'].startswith('1.') or upstream != 'libfabric' else tag.split(' and ')[-1]}:{file} (release {it['release']})",
                    "confidence": "verified",
                    "note": None if it["section"] else "the release lists the entry outside any section",
                }
            )
        coverage[upstream] = {
            "read_at": tag,
            "releases": len({it["release"] for it in items}),
            "entries": len(items),
            "by_kind": counts,
        }
        print(upstream, tag, coverage[upstream], file=sys.stderr)
    doc = {
        "table": "upstream_release_notes",
        "description": "Every release-note entry of UCX (NEWS), libfabric (NEWS.md: Core, EFA, Verbs, SHM, TCP, RxM, "
        "util, hmem sections) and aws-ofi-nccl (RELEASENOTES.md), with kind, the failure named (symptom) and the "
        "conditions named in facts; generated by tools/upstreams/gen_release_notes.py",
        "coverage": coverage,
        "rows": rows,
    }
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(len(rows), "rows", file=sys.stderr)


if __name__ == "__main__":
    main()
