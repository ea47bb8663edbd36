"""Generate compat_matrix/catalogs/gpu_operator_component_defects.json: release defects of the GPU Operator's own
components (k8s-driver-manager, ...) keyed by the component's image version, each found by reading the defective code
at every release tag (the components keep no CHANGELOG; their fixes are commits, named with the tag-walk result).

    python tools/upstreams/gen_operator_component_defects.py /work/.mirror/NVIDIA+k8s-driver-manager/repo

Each DEFECTS entry names the file and a predicate over its text at a tag that is true where the defect is in the code;
`affected` is every release tag where it holds, `fixed_in` the first release after the last affected one of each later
release line. Add a defect by adding an entry (with the fixing commit and the report that established it).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from git_read import Mirror, version_key  # noqa: E402

CATALOGS = Path(__file__).resolve().parents[2] / "src/imgcheck/data/compat_matrix/catalogs"
RELEASE = r"v\d+\.\d+\.\d+"


def _host_mofed_check_inverted(text: str) -> bool:
    """v0.9.0's Go rewrite: with USE_HOST_MOFED the wait loop looks for the ready file only the containerised MOFED
    writes (the two branches of waitForMofedDriver swapped)."""
    m = re.search(r"if dm\.config\.useHostMofed \{(?P<body>.*?)\} else \{", text, re.S)
    return bool(m and ".driver-ready" in m["body"])


DEFECTS: list[dict[str, Any]] = [
    {
        "key": "driver_manager_host_mofed_wait_forever",
        "component": "k8s-driver-manager",
        "image": "nvcr.io/nvidia/cloud-native/k8s-driver-manager",
        "operator_column": "driver_manager",
        "file": "cmd/driver-manager/main.go",
        "predicate": _host_mofed_check_inverted,
        "conditions": ["env:GPU_DIRECT_RDMA_ENABLED=true", "env:USE_HOST_MOFED=true", "mellanox_devices"],
        "symptom": "the driver DaemonSet's k8s-driver-manager init container logs 'Waiting for MOFED to be "
        "installed...' every 5 seconds forever; the NVIDIA driver container never starts, so no GPU on the node "
        "becomes usable",
        "mechanism": "With GPUDirect RDMA enabled (GPU_DIRECT_RDMA_ENABLED=true, and a Mellanox PCI device, vendor "
        "0x15b3, present) the driver manager waits for MOFED before the driver is installed. Its check is inverted "
        "for host MOFED: with USE_HOST_MOFED=true it waits for /run/mellanox/drivers/.driver-ready, a file only the "
        "Network Operator's MOFED driver container writes, instead of mlx5_core in /proc/modules; a host-installed "
        "MOFED never writes it.",
        "fix": "k8s-driver-manager v0.9.1 or v0.10.0 and later (GPU Operator v25.10.1 and later deploy them): set "
        "driver.manager.version, or upgrade the GPU Operator; or pin driver.manager.version to v0.8.1",
        "source": [
            "NVIDIA/k8s-driver-manager@eea73e44a4c461a2fa85d428d63f16cd3ac71dab (fix: check if mlx5_core is present "
            "in /proc/modules when USE_HOST_MOFED=true; d9bc204e on release-0.9)",
            "https://github.com/NVIDIA/k8s-driver-manager/issues/123",
            "NVIDIA/gpu-operator@v25.10.0:deployments/gpu-operator/values.yaml",
        ],
        "confidence": "verified",
    },
]


def rows(repo: Mirror) -> list[dict[str, object]]:
    tags = sorted(repo.tags(RELEASE), key=version_key)
    out = []
    for defect in DEFECTS:
        predicate: Callable[[str], bool] = defect["predicate"]
        affected = [t for t in tags if (text := repo.show(t, defect["file"])) and predicate(text)]
        last = max((version_key(t) for t in affected), default=())
        fixed: dict[tuple[int, ...], str] = {}
        for t in tags:
            if version_key(t) > last and t not in affected:
                fixed.setdefault(version_key(t)[:2], t)
        row = {k: v for k, v in defect.items() if k not in ("file", "predicate", "source", "confidence")}
        row |= {
            "affected": affected,
            "fixed_in": list(fixed.values()),
            "releases_read": f"{tags[0]}..{tags[-1]} ({len(tags)} tags, {defect['file']} at each)",
            "source": defect["source"],
            "confidence": defect["confidence"],
        }
        out.append(row)
    return out


def main() -> None:
    found = rows(Mirror(sys.argv[1]))
    doc = {
        "table": "gpu_operator_component_defects",
        "description": (
            "Release defects of the GPU Operator's components, keyed by the component's image version (`affected`: "
            "every release tag whose code has the defect; `fixed_in`: the first later release of each line without "
            "it). `operator_column`: the gpu_operator_components column with the version each GPU Operator release "
            "deploys by default. `conditions`: env:NAME=value (the component container's environment, set by the "
            "operator from its Helm values), mellanox_devices (an RDMA device of the node is a Mellanox/NVIDIA NIC). "
            "Read by engine/cluster_components.py (CLUSTER-OPERATOR-COMPONENT-DEFECT). Generated by "
            "tools/upstreams/gen_operator_component_defects.py; do not edit."
        ),
        "coverage": {
            "components": ["k8s-driver-manager"],
            "defects_encoded": len(found),
            "left_out": (
                "the driver container (NVIDIA/gpu-driver-container) and the Network Operator's MOFED container "
                "(Mellanox/network-operator): not walked yet; k8s-driver-manager fixes that change no outcome a node "
                "or job fact shows (CI, CVE bumps, eviction/uncordon behaviour, DRA)"
            ),
        },
        "rows": found,
    }
    (CATALOGS / "gpu_operator_component_defects.json").write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
