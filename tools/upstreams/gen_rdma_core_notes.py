"""Generate compat_matrix/catalogs/rdma_core_notes.json: the release-note entries of every rdma-core release (v15 on)
that matter for containers, from the annotated tag messages ("rdma-core-64.0: Updates from version 63.0 * ...";
rdma-core keeps no NEWS file, Documentation/release.md builds the GitHub release from the tag message).

Re-run after fetching a newer snapshot of github:linux-rdma/rdma-core:
    RDMA_CORE_MIRROR=/work/.mirror/linux-rdma+rdma-core/repo python tools/upstreams/gen_rdma_core_notes.py

An entry is kept when it names one of TOPICS (matched on its words); every entry is counted in `coverage` so the
docs can say how many were left out.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from git_read import Mirror, version_key  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/compat_matrix/catalogs/rdma_core_notes.json"
TAG = r"v(1[5-9]|2[0-3]|\d+\.0)"
# what decides whether a container's rdma-core works with the host: provider ABI and symbol versions, fork safety,
# dma-buf and data-direct registration, how providers are found and loaded, the ODP / relaxed-ordering MR paths
TOPICS = {
    "abi": r"\babi\b|pabi|private|symbol|\bsoname\b|library version|IBVERBS_1\.|MLX5_1\.|\.map\b",
    "fork": r"\bfork|copy.on.fork|madvise|MADV_",
    "dmabuf": r"dma.?buf",
    "data-direct": r"data.?direct",
    "provider-load": r"dlopen|driver load|load(ing)? (the )?provider|IBV_CONFIG_DIR|verbs_register|rdmav\d|-rdmav|provider.*(not|fail).*load",
    "memory-registration": r"reg_mr|\bmr\b.*(iova|relaxed|odp)|relaxed.ordering|\bodp\b|on.demand.paging",
    "gpu": r"\bgpu|cuda|peer.?mem|nvidia",
}


def entries(message: str) -> list[str]:
    body = message.split("-----BEGIN PGP SIGNATURE-----")[0]
    out: list[str] = []
    for line in body.splitlines():
        m = re.match(r"\s*[*-]\s+(.*\S)", line)
        if m:
            out.append(m.group(1))
        elif out and line.startswith("     ") and line.strip():
            out[-1] += " " + line.strip()  # a wrapped bullet
    return out


def main() -> None:
    m = Mirror(os.environ.get("RDMA_CORE_MIRROR", "/work/.mirror/linux-rdma+rdma-core/repo"))
    tags = sorted(m.tags(TAG), key=version_key)
    rows, coverage = [], {}
    for tag in tags:
        raw = m.git("cat-file", "-p", tag)
        if not raw.startswith("object "):
            continue
        message = raw.split("\n\n", 1)[1] if "\n\n" in raw else ""
        items = entries(message)
        release = tag[1:] if "." in tag else tag[1:] + ".0"
        kept = 0
        for n, text in enumerate(items, 1):
            topics = [t for t, rx in TOPICS.items() if re.search(rx, text, re.I)]
            if not topics:
                continue
            kept += 1
            rows.append(
                {
                    "entry": f"rdma-core-{release}#{n}",
                    "release": release,
                    "text": text,
                    "topics": topics,
                    "source": f"linux-rdma/rdma-core@{tag} (annotated tag message, entry {n})",
                    "confidence": "verified",
                }
            )
        coverage[release] = {"entries": len(items), "kept": kept}
        print(tag, len(items), kept, file=sys.stderr)
    doc = {
        "table": "rdma_core_notes",
        "description": "Release-note entries of every rdma-core release since v15 that matter for containers (provider "
        "ABI and symbol versions, fork safety, dma-buf / data-direct registration, provider loading, MR paths, GPU), "
        "read from the annotated tag messages by tools/upstreams/gen_rdma_core_notes.py; `topics` says why an entry "
        "was kept, `coverage` counts every entry per release",
        "coverage": coverage,
        "rows": rows,
    }
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(len(rows), "rows", file=sys.stderr)


if __name__ == "__main__":
    main()
