"""Generate compat_matrix/catalogs/gpu_operator_components.json and k8s_device_plugin_fixes.json from the upstream trees.

    python tools/upstreams/gen_k8s_components.py /work/.mirror/NVIDIA+gpu-operator/repo \
        /work/.mirror/NVIDIA+k8s-device-plugin/repo

- gpu_operator_components: every released GPU Operator tag (no -rc) -> the device plugin, driver and container toolkit
  versions its Helm chart deploys by default (deployments/gpu-operator/values.yaml at the tag: devicePlugin.version,
  driver.version, toolkit.version, driver.manager.version).
- k8s_device_plugin_fixes: the device plugin's changes that decide whether a GPU is advertised or labelled at all, each
  with the first release of every release line that contains it (`git tag --contains` on the commit, so backports to
  an older line such as v0.17.4 are found though CHANGELOG.md does not list that release). Which changes those are is
  the MECHANISMS table below (the subject of the commit, and the GPUs it concerns with their source); the coverage
  block counts every CHANGELOG.md entry of the newest tag against them.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import yaml  # type: ignore[import-untyped]  # ships no type hints

sys.path.insert(0, str(Path(__file__).resolve().parent))
from git_read import Mirror  # noqa: E402

CATALOGS = Path(__file__).resolve().parents[2] / "src/imgcheck/data/compat_matrix/catalogs"
RELEASE = r"v\d+\.\d+\.\d+"
VALUES = "deployments/gpu-operator/values.yaml"

# The device plugin changes that decide whether the plugin advertises (or GFD labels) a GPU. `gpus`: the GPU names the
# mechanism concerns (nvidia-smi / NVML names as node facts carry them), each with why.
MECHANISMS = [
    {
        "key": "nvml_memory_not_supported",
        "subject": "Ignore errors getting device memory using NVML",
        "effect": "allocation",
        "gpus": ["NVIDIA GB10"],
        "mechanism": (
            "The plugin asked NVML for each device's memory and treated an error as fatal; on a GPU with unified memory "
            "(GB10: no dedicated framebuffer) NVML answers Not Supported, so the plugin exited and the node advertised "
            "no nvidia.com/gpu. From the fix on it logs 'Ignoring error getting device memory' and registers the GPU."
        ),
        "sources": [
            "NVIDIA/k8s-device-plugin@e3323ce55 ('Ignore errors getting device memory using NVML'; c5e473c9b is its release-0.17 "
            "backport)",
            "https://forums.developer.nvidia.com/t/nvml-support-for-dgx-spark-grace-blackwell-unified-memory-community-"
            "solution/358869 (GB10: NVML memory queries return NVML_ERROR_NOT_SUPPORTED)",
            "https://github.com/NVIDIA/gpu-operator/issues/1794",
        ],
    },
    {
        "key": "gfd_blackwell_family",
        "subject": "[gpu-feature-discovery] detect blackwell architecture",
        "effect": "labels",
        "gpus": [],
        "mechanism": "GPU Feature Discovery labels nvidia.com/gpu.family=blackwell from this change on (before: undefined).",
        "sources": ["NVIDIA/k8s-device-plugin@c7883eeae (#1237; also f6bd64c58, #1240)"],
    },
    {
        "key": "gfd_ada_lovelace_family",
        "subject": "Add ada-lovelace architecture label for compute capability 8.9",
        "effect": "labels",
        "gpus": [],
        "mechanism": "GFD labels nvidia.com/gpu.family=ada-lovelace for compute capability 8.9 from this change on.",
        "sources": ["NVIDIA/k8s-device-plugin@aaccdfd2d (#1060; also 75e83d74c, #1090)"],
    },
    {
        "key": "gfd_rubin_family",
        "subject": "add support for rendering the rubin arch string",
        "effect": "labels",
        "gpus": [],
        "mechanism": "GFD labels the Rubin architecture family from this change on.",
        "sources": ["NVIDIA/k8s-device-plugin@7699fe4d5 (#1909)"],
    },
]


def _vkey(tag: str) -> tuple[int, ...]:
    return tuple(int(x) for x in tag.lstrip("v").split("."))


def operator_rows(repo: Mirror) -> list[dict[str, object]]:
    rows = []
    for tag in sorted(repo.tags(RELEASE), key=_vkey):
        text = repo.show(tag, VALUES)
        if text is None:
            continue
        doc = yaml.safe_load(text) or {}

        def version(section: str, doc: dict[str, object] = doc) -> str | None:
            part = doc.get(section)
            value = part.get("version") if isinstance(part, dict) else None
            return str(value) if value else None

        rows.append(
            {
                "operator": tag,
                "device_plugin": version("devicePlugin"),
                "driver": version("driver"),
                "container_toolkit": version("toolkit"),
                "driver_manager": _manager(doc),
                "source": f"NVIDIA/gpu-operator@{tag}:{VALUES}",
                "confidence": "verified",
            }
        )
    return rows


def _manager(doc: dict[str, object]) -> str | None:
    """driver.manager.version: the k8s-driver-manager image the driver DaemonSet runs as its init container."""
    driver = doc.get("driver")
    manager = driver.get("manager") if isinstance(driver, dict) else None
    value = manager.get("version") if isinstance(manager, dict) else None
    return str(value) if value else None


def first_per_line(tags: list[str]) -> list[str]:
    """The first release of each major.minor line among `tags` (v0.17.4 and v0.18.0 of a backported fix)."""
    out: dict[tuple[int, ...], str] = {}
    for tag in sorted(tags, key=_vkey):
        out.setdefault(_vkey(tag)[:2], tag)
    return list(out.values())


def fix_rows(repo: Mirror) -> list[dict[str, object]]:
    log = repo.git("log", "--all", "--no-merges", "--format=%H %s")
    rows = []
    for m in MECHANISMS:
        commits = [line.split(" ", 1)[0] for line in log.splitlines() if line.split(" ", 1)[-1].strip() == m["subject"]]
        tags: set[str] = set()
        for c in commits:
            tags |= {t for t in repo.git("tag", "--contains", c).split() if re.fullmatch(RELEASE, t)}
        fixed = first_per_line(sorted(tags))
        rows.append(
            {
                "key": m["key"],
                "subject": m["subject"],
                "effect": m["effect"],
                "gpus": m["gpus"],
                "fixed_in": fixed,
                "mechanism": m["mechanism"],
                "source": m["sources"],
                "confidence": "verified" if m["effect"] == "labels" else "reported",
                "note": None if fixed else "no release tag contains the change",
            }
        )
    return rows


def changelog_entries(repo: Mirror) -> int:
    newest = sorted(repo.tags(RELEASE), key=_vkey)[-1]
    text = repo.show(newest, "CHANGELOG.md") or ""
    return sum(1 for line in text.splitlines() if re.match(r"^\s*[-*] ", line))


def main(operator_path: str, plugin_path: str) -> None:
    operator, plugin = Mirror(operator_path), Mirror(plugin_path)
    ops = operator_rows(operator)
    fixes = fix_rows(plugin)
    (CATALOGS / "gpu_operator_components.json").write_text(
        json.dumps(
            {
                "table": "gpu_operator_components",
                "description": "Each GPU Operator release's default component versions (its Helm chart's values.yaml "
                "at the tag). Generated by tools/upstreams/gen_k8s_components.py; do not edit.",
                "coverage": {"operator_releases": len(ops), "encoded": len(ops)},
                "rows": ops,
            },
            indent=1,
        )
        + "\n"
    )
    (CATALOGS / "k8s_device_plugin_fixes.json").write_text(
        json.dumps(
            {
                "table": "k8s_device_plugin_fixes",
                "description": "NVIDIA k8s-device-plugin changes that decide whether a GPU is advertised (allocation) or "
                "labelled by GFD (labels), with the first release of each line containing the commit. Generated by "
                "tools/upstreams/gen_k8s_components.py; do not edit.",
                "coverage": {
                    "changelog_entries": changelog_entries(plugin),
                    "encoded": len(fixes),
                    "left_out": "entries that do not decide whether a GPU is advertised or labelled (dependency "
                    "bumps, CI, MPS/time-slicing configuration, CDI spec details)",
                },
                "rows": fixes,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"{len(ops)} GPU Operator releases, {len(fixes)} device plugin changes")


if __name__ == "__main__":
    main(*sys.argv[1:3])
