"""Generate src/imgcheck/data/triage/k8s_driver_manager_messages.json: the log messages of the GPU Operator's
k8s-driver-manager (github:NVIDIA/k8s-driver-manager: the bash script `driver-manager` up to v0.8.x, the Go program
cmd/driver-manager from v0.9.0) at every release tag, each failure with a cause class, plus two facts read from the
code of each release:

- which check the wait for the RDMA driver (GPUDirect RDMA enabled) uses in host-MOFED mode (USE_HOST_MOFED=true:
  MOFED installed on the host, no Network Operator): the loaded mlx5_core module ("module") or the readiness flag
  /run/mellanox/drivers/.driver-ready that only the Network Operator's driver container writes ("flag"). A release
  that waits on the flag with host MOFED waits forever ("Waiting for MOFED to be installed..." every 5 s);
- which k8s-driver-manager version each GPU Operator release deploys (github:NVIDIA/gpu-operator
  deployments/gpu-operator/values.yaml driver.manager.version).

    python tools/upstreams/gen_k8s_driver_manager_messages.py /work/.mirror
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from gen_fabric_messages import regex_of  # noqa: E402
from git_read import Mirror, version_key, write_generated  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/triage/k8s_driver_manager_messages.json"
USAGE = "usage: gen_k8s_driver_manager_messages.py MIRRORS_DIR (the fetch tool's /work/.mirror)"
SCRIPT, GO = "driver-manager", "cmd/driver-manager/main.go"
GO_LOG = re.compile(r'\blog\.(Info|Infof|Warn|Warnf|Warning|Warningf|Error|Errorf|Fatal|Fatalf)\("((?:[^"\\]|\\.)*)"')
SH_ECHO = re.compile(r'\becho\s+"((?:[^"\\$]|\\.|\$\{?\w+\}?)*)"')
CLASSES = (
    ("K8S-DRIVER-MANAGER-MOFED-WAIT", r"^Waiting for MOFED to be installed"),
    (
        "K8S-DRIVER-MANAGER-DRIVER-IN-USE",
        r"^Could not unload NVIDIA driver kernel modules|^Unable to cleanup driver modules|^Failed to drain node|"
        r"^Failed to uninstall nvidia driver|^Failed to unload kernel module|^Failed to evict GPU operator components",
    ),
)
_MIN_FIXED = 16


def _wait_check(text: str) -> str | None:
    """ "module" or "flag": what host-MOFED mode waits for in this release (None: no MOFED wait)."""
    m = re.search(r"_wait_for_mofed_driver\(\)\s*\{(.*?)\n\}", text, re.S) or re.search(
        r"func \(dm \*DriverManager\) waitForMofedDriver\(\) error \{(.*?)\n\}", text, re.S
    )
    if not m:
        return None
    body = m.group(1)
    host = re.search(r"if dm\.config\.useHostMofed \{(.*?)\} else \{", body, re.S)
    if host:  # Go: the branch taken when useHostMofed is true
        return "flag" if ".driver-ready" in host.group(1) else "module"
    # bash: the default command, replaced by the flag when USE_HOST_MOFED is not "true"
    default = re.search(r'cmd="([^"]*)"', body)
    cond = re.search(r'if \[ "\$\{USE_HOST_MOFED\}" (!=|==|=) "true" \]', body)
    if default and cond:
        replaced_for_host = cond.group(1) in ("==", "=")
        default_is_flag = ".driver-ready" in default.group(1)
        return "flag" if default_is_flag != replaced_for_host else "module"
    return None


def build(mirrors: str) -> dict:
    dm = Mirror(os.path.join(mirrors, "NVIDIA+k8s-driver-manager", "repo"))
    tags = sorted(dm.tags(r"v\d+\.\d+\.\d+"), key=version_key)
    seen: dict[str, dict] = {}
    host_mofed: dict[str, str] = {}
    for tag in tags:
        rel = tag.lstrip("v")
        for path, text in dm.show_many(tag, [SCRIPT, GO]).items():
            check = _wait_check(text)
            if check:
                host_mofed[rel] = check
            found = [(m.group(2), m.start()) for m in GO_LOG.finditer(text)] if path == GO else []
            found += [(m.group(1), m.start()) for m in SH_ECHO.finditer(text)] if path == SCRIPT else []
            for raw, at in found:
                fmt = re.sub(r"\$\{?\w+\}?", "%s", raw).strip()
                row = seen.setdefault(fmt, {"format": fmt, "first": rel, "sites": []})
                row["last"] = rel
                site = f"{path}:{text.count(chr(10), 0, at) + 1}"
                if row["sites"] and row["sites"][-1][2] == site:
                    row["sites"][-1][1] = rel
                else:
                    row["sites"].append([rel, rel, site])
    rows, left = [], 0
    for fmt, row in sorted(seen.items()):
        sig = next((s for s, rx in CLASSES if re.search(rx, fmt)), None)
        regex, fixed = regex_of(fmt)
        if sig is None or fixed < _MIN_FIXED:
            left += 1
            continue
        rows.append(
            {
                "format": fmt,
                "first": row["first"],
                "last": row["last"],
                "site": f"NVIDIA/k8s-driver-manager@v{row['last']}:{row['sites'][-1][2]}",
                "signatures": [{"signature": sig, "regex": regex}],
            }
        )
    op = Mirror(os.path.join(mirrors, "NVIDIA+gpu-operator", "repo"))
    operator: dict[str, str] = {}
    for tag in sorted(op.tags(r"v\d+\.\d+\.\d+"), key=version_key):
        values = op.show(tag, "deployments/gpu-operator/values.yaml") or ""
        # driver.manager: image, repository and version in either order, comments between
        m = re.search(r"image: k8s-driver-manager\n(?:\s*(?:#.*|repository: \S+)\n)*\s*version: (v?[\w.-]+)", values)
        if m:
            operator[tag.lstrip("v")] = m.group(1).lstrip("v")
    waits_on_flag = [r for r, c in host_mofed.items() if c == "flag"]
    return {
        "source": "NVIDIA/k8s-driver-manager driver-manager (bash) and cmd/driver-manager/main.go at every release "
        "tag; NVIDIA/gpu-operator deployments/gpu-operator/values.yaml at every release tag; generated by "
        "tools/upstreams/gen_k8s_driver_manager_messages.py",
        "confidence": "verified",
        "releases": [t.lstrip("v") for t in tags],
        "host_mofed_wait_check": host_mofed,
        "host_mofed_waits_on_flag": waits_on_flag,
        "gpu_operator_driver_manager": operator,
        "gpu_operator_with_flag_wait": sorted((o for o, d in operator.items() if d in waits_on_flag), key=version_key),
        "coverage": {"formats": len(seen), "mapped": len(rows), "left_out": left},
        "left_out": {
            "why": "progress and informational lines (labels, drain steps, successful unloads) and lines with too "
            "little fixed text",
            "count": left,
        },
        "messages": rows,
    }


if __name__ == "__main__":
    raise SystemExit(write_generated(sys.argv, USAGE, build, OUT))
