"""Generate compat_matrix/catalogs/container_runtime_injects.json: what the NVIDIA container runtime puts into a
container, per driver capability, so rules can compare an image's own files with what the runtime injects.

Read from the sources that decide it:
- libnvidia-container src/nvc_info.c: the `*_libs` / `*_bins` arrays (utility, compute, video, graphics, ngx,
  dxcore); each library is mounted as the host's `<name>.<driver version>` file and given its SONAME link by the
  ldconfig the hook runs; commented-out entries are left out (the runtime does not mount them);
- libnvidia-container src/dxcore.c: on WSL2 the files taken from each adapter's DriverStore folder;
- nvidia-container-toolkit internal/discover/symlinks.go: the extra links its CDI `create-symlinks` hook makes
  (libcuda.so -> libcuda.so.1: "Many applications wrongly assume that libcuda.so exists").

    python tools/host/gen_container_runtime_injects.py --git /work/.mirror/NVIDIA+libnvidia-container/repo \
        --tag v1.17.8 --toolkit-git /work/.mirror/NVIDIA+nvidia-container-toolkit/repo --toolkit-tag v1.17.8
    python tools/host/gen_container_runtime_injects.py --nvc-info nvc_info.c --dxcore dxcore.c \
        --symlinks symlinks.go --ref NVIDIA/libnvidia-container@<commit> --toolkit-ref NVIDIA/nvidia-container-toolkit@<commit>

Without a git directory (the libnvidia-container snapshot is larger than the fetch limit here) it reads the three
files given, each at the commit its --ref names.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/compat_matrix/catalogs/container_runtime_injects.json"
CAPABILITY = {
    "utility_bins": "utility",
    "utility_libs": "utility",
    "compute_bins": "compute",
    "compute_libs": "compute",
    "video_libs": "video",
    "graphics_libs": "graphics",
    "graphics_libs_glvnd": "graphics",
    "graphics_libs_compat": "graphics",
    "ngx_libs": "ngx",
    "dxcore_libs": "wsl",
    "dxcore_nvidia_libs": "wsl",
}
_ARRAY = re.compile(r"static const char \* const (\w+)\[\] = \{(.*?)\};", re.S)
_ENTRY = re.compile(r'^\s*"([^"]+)"', re.M)  # a commented-out line starts with //, so it does not match
_LINK = re.compile(r'HasPrefix\(lib, "([^"]+)"\)\s*\{[^}]*?target = ("[^"]+"|lib)\s*link = "([^"]+)"', re.S)


def arrays(text: str) -> dict[str, list[str]]:
    return {m.group(1): _ENTRY.findall(m.group(2)) for m in _ARRAY.finditer(text)}


def rows_from(nvc_info: str, dxcore: str, symlinks: str, ref: str, toolkit_ref: str) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    seen: set[tuple[str, str]] = set()
    for path, text in (("src/nvc_info.c", nvc_info), ("src/dxcore.c", dxcore)):
        for array, names in arrays(text).items():
            capability = CAPABILITY.get(array)
            if capability is None:
                continue
            mode = "wsl" if array.startswith("dxcore") else "legacy"
            for name in names:
                if (name, mode) in seen:
                    continue  # nvc_info.c lists libnvidia-gpucomp.so twice
                seen.add((name, mode))
                rows.append(
                    {
                        "id": f"{mode}:{name}",
                        "name": name,
                        "kind": "binary" if array.endswith("_bins") or "." not in name else "library",
                        "capability": capability,
                        "mode": mode,
                        "link_target": None,
                        "array": array,
                        "source": f"{ref}:{path}",
                        "confidence": "verified",
                    }
                )
    for m in _LINK.finditer(symlinks):
        target = m.group(2).strip('"')
        rows.append(
            {
                "id": f"cdi:{m.group(3)}",
                "name": m.group(3),
                "kind": "link",
                "capability": "graphics"
                if "GLX" in m.group(1)
                else ("video" if "opticalflow" in m.group(1) else "compute"),
                "mode": "cdi",
                "link_target": None if target == "lib" else target,
                "array": None,
                "source": f"{toolkit_ref}:internal/discover/symlinks.go",
                "confidence": "verified",
            }
        )
    return rows


def _git_show(git: str, tag: str, path: str) -> str:
    return subprocess.run(
        ["git", "-C", git, "show", f"{tag}:{path}"], check=True, capture_output=True, text=True
    ).stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--git")
    ap.add_argument("--tag")
    ap.add_argument("--toolkit-git")
    ap.add_argument("--toolkit-tag")
    ap.add_argument("--nvc-info")
    ap.add_argument("--dxcore")
    ap.add_argument("--symlinks")
    ap.add_argument("--ref", default="NVIDIA/libnvidia-container")
    ap.add_argument("--toolkit-ref", default="NVIDIA/nvidia-container-toolkit")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    if args.git:
        nvc_info = _git_show(args.git, args.tag, "src/nvc_info.c")
        dxcore = _git_show(args.git, args.tag, "src/dxcore.c")
        ref = f"NVIDIA/libnvidia-container@{args.tag}"
    else:
        nvc_info, dxcore = Path(args.nvc_info).read_text(), Path(args.dxcore).read_text()
        ref = args.ref
    if args.toolkit_git:
        symlinks = _git_show(args.toolkit_git, args.toolkit_tag, "internal/discover/symlinks.go")
        toolkit_ref = f"NVIDIA/nvidia-container-toolkit@{args.toolkit_tag}"
    else:
        symlinks, toolkit_ref = Path(args.symlinks).read_text(), args.toolkit_ref
    rows = rows_from(nvc_info, dxcore, symlinks, ref, toolkit_ref)
    listed = sum(len(v) for k, v in arrays(nvc_info + dxcore).items() if k in CAPABILITY)
    doc = {
        "table": "container_runtime_injects",
        "description": (
            "What the NVIDIA container runtime puts into a container per driver capability (NVIDIA_DRIVER_CAPABILITIES): "
            "libnvidia-container mounts each library as the host's <name>.<driver version> file and runs ldconfig, "
            "which makes the SONAME link (libcuda.so.1); mode legacy = nvidia-container-cli, wsl = the dxcore "
            "DriverStore files on WSL2, cdi = the extra links the toolkit's create-symlinks hook makes. "
            "Generated by tools/host/gen_container_runtime_injects.py; do not edit."
        ),
        "coverage": {
            "array_entries": listed,
            "rows": len(rows),
            "left_out": "entries commented out in the arrays (not mounted) and the duplicate libnvidia-gpucomp.so",
        },
        "rows": rows,
    }
    Path(args.out).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"{len(rows)} rows -> {args.out}")


if __name__ == "__main__":
    main()
