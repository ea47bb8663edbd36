"""Generate compat_matrix/catalogs/librdmacm_releases.json: for every rdma-core release tag, how librdmacm's device
init (librdmacm/cma.c ucma_init_all and rdma_get_devices) treats a device it cannot open. Before rdma-core PR #1060
one failing ucma_init_device() ended the loop and failed the whole init, so rdma_get_devices() / rdma_create_id()
returned ENODEV for every device; from the fix on the device is marked dead and skipped. This matters in a container
given only some of the node's /dev/infiniband/uverbsN nodes: sysfs still lists every device.

Re-run after fetching a newer snapshot of github:linux-rdma/rdma-core:
    RDMA_CORE_MIRROR=/work/.mirror/linux-rdma+rdma-core/repo python tools/upstreams/gen_librdmacm_behaviour.py

The behaviour is read from the code of each tag, not from release notes: the statement that follows the
ucma_init_device() call inside ucma_init_all() decides ("break" = all-or-nothing, "is_device_dead = true" = skip).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from git_read import Mirror, version_key  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/compat_matrix/catalogs/librdmacm_releases.json"
TAG = r"v(1[3-9]|2[0-3]|\d+\.\d+)"
PATH = "librdmacm/cma.c"


def _function(source: str, signature: str) -> str | None:
    m = re.search(r"^" + signature + r".*?^\}", source, re.M | re.S)
    return m.group(0) if m else None


def classify(source: str) -> str | None:
    """'fails-all', 'skips-failing' or None (the loop was not recognised: a human must read this tag)."""
    body = _function(source, r"static int ucma_init_all\(void\)")
    if body is None:
        return None
    after = body.split("ucma_init_device(", 1)
    if len(after) < 2:
        return None
    following = "\n".join(after[1].splitlines()[:4])
    if "is_device_dead = true" in following:
        return "skips-failing"
    if re.search(r"\bbreak;|\breturn ret;|\bgoto\b", following):
        return "fails-all"
    return None


def main() -> None:
    m = Mirror(os.environ.get("RDMA_CORE_MIRROR", "/work/.mirror/linux-rdma+rdma-core/repo"))
    rows = []
    for tag in sorted(m.tags(TAG), key=version_key):
        source = m.show(tag, PATH)
        if source is None:
            continue
        release = tag[1:] if "." in tag else tag[1:] + ".0"
        rows.append(
            {
                "release": release,
                "partial_devices": classify(source),
                "source": f"linux-rdma/rdma-core@{tag}:{PATH}",
                "confidence": "verified",
            }
        )
        print(tag, rows[-1]["partial_devices"], file=sys.stderr)
    doc = {
        "table": "librdmacm_releases",
        "description": (
            "How librdmacm (rdma-core) treats an RDMA device it cannot open during its device init, per rdma-core "
            "release, read from librdmacm/cma.c ucma_init_all() of each tag by tools/upstreams/"
            "gen_librdmacm_behaviour.py. partial_devices: 'fails-all' = one device that ibv_open_device() cannot "
            "open (a container given only some /dev/infiniband/uverbsN while sysfs lists every device) fails the "
            "whole init, so rdma_get_devices() returns no device and rdma_create_id()/rdma_resolve_addr() fail "
            "with ENODEV; 'skips-failing' = the device is marked dead and the rest work (linux-rdma/rdma-core "
            "PR #1060, commit 27ab758643f6 'librdmacm: Do not fail init completely if one device is failing'); "
            "null = the loop was not recognised."
        ),
        "fix": {
            "commit": "linux-rdma/rdma-core@27ab758643f603d6d5bb3a013d09664db427e9f6:librdmacm/cma.c",
            "pull_request": "https://github.com/linux-rdma/rdma-core/pull/1060",
        },
        "rows": rows,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
