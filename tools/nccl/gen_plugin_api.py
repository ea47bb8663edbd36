"""The plugin API versions each NCCL release looks up and each aws-ofi-nccl release exports -> catalogs/nccl_plugin_api.json
and catalogs/net_plugin_exports.json.

NCCL opens a network plugin (libnccl-net.so, or NCCL_NET_PLUGIN) and looks up its ncclNet_t by a versioned symbol
name, newest first (`dlsym(lib, "ncclNetPlugin_v12")`, then v11, ...). A plugin none of whose versions the release
looks up is closed again ("NET/Plugin: Failed to find ncclNetPlugin symbol"), and NCCL goes on with its internal
IB/Socket transports. The same holds for the CollNet, tuner and profiler plugins. This reads, at every release tag,
the quoted symbol names NCCL's src/ passes to dlsym, and at every aws-ofi-nccl tag the ncclNetPlugin_vN objects its
NVIDIA interface defines (the Neuron interface is another build and is left out).

    NCCL_MIRROR=/work/.mirror/NVIDIA+nccl/repo OFI_MIRROR=/work/.mirror/aws+aws-ofi-nccl/repo \
        python tools/nccl/gen_plugin_api.py
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import nccl_git

CATALOGS = os.path.join(os.path.dirname(__file__), "..", "..", "compat_matrix", "catalogs")
OFI_DEFAULT = "/work/.mirror/aws+aws-ofi-nccl/repo"
# the quoted names NCCL passes to dlsym, per plugin kind
LOOKUPS = {
    "net": re.compile(r'"ncclNetPlugin_v(\d+)"'),
    "collnet": re.compile(r'"ncclCollNetPlugin_v(\d+)"'),
    "tuner": re.compile(r'"ncclTunerPlugin_v(\d+)"'),
    "profiler": re.compile(r'"ncclProfiler_v(\d+)"'),
}
# before 2.12.7 NCCL looked up one name through a macro: dlsym(lib, STR(NCCL_PLUGIN_SYMBOL)), the macro defined in
# src/include/nccl_net.h (#define NCCL_PLUGIN_SYMBOL ncclNetPlugin_v4)
MACROS = {
    "net": (
        re.compile(r"STR\(NCCL_PLUGIN_SYMBOL\)"),
        re.compile(r"#define\s+NCCL_PLUGIN_SYMBOL\s+ncclNetPlugin_v(\d+)"),
    ),
    "collnet": (
        re.compile(r"STR\(NCCL_COLLNET_PLUGIN_SYMBOL\)"),
        re.compile(r"#define\s+NCCL_COLLNET_PLUGIN_SYMBOL\s+ncclCollNetPlugin_v(\d+)"),
    ),
}
# an object definition in the plugin: `const ncclNet_v8_t ncclNetPlugin_v8 = {` (any storage words before it)
OFI_DEFINES = re.compile(r"\bncclNet_v(\d+)_t\s+ncclNetPlugin_v(\d+)\s*=")
OFI_TAG = re.compile(r"^v(\d+)\.(\d+)\.(\d+)(-aws)?$")


def nccl_rows() -> list[dict]:
    rows = []
    for tag, version in nccl_git.release_tags():
        text = "\n".join(t for p, t in nccl_git.files_text(tag).items() if p.startswith("src/"))
        row: dict = {"nccl": version}
        for kind, rx in LOOKUPS.items():
            found = {int(v) for v in rx.findall(text)}
            if kind in MACROS and MACROS[kind][0].search(text):
                found |= {int(v) for v in MACROS[kind][1].findall(text)}
            row[kind] = sorted(found)
        row["source"] = (
            f"NVIDIA/nccl@{tag}:src (the quoted ncclNetPlugin_vN / ncclCollNetPlugin_vN / ncclTunerPlugin_vN / ncclProfiler_vN names passed to dlsym)"
        )
        row["confidence"] = "verified"
        rows.append(row)
    return rows


def _ofi_git(path: str, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", path, *args], check=True, capture_output=True, text=True, errors="replace"
    ).stdout


def _ofi_grep(path: str, tag: str, needle: str) -> str:
    try:
        return _ofi_git(path, "grep", "-l", "-F", needle, tag, "--", "src", "include")
    except subprocess.CalledProcessError:
        return ""


def ofi_rows(path: str) -> list[dict]:
    """One row per aws-ofi-nccl release (X.Y.Z; the -aws tag where both exist, as its release is the -aws one)."""
    best: dict[tuple[int, ...], str] = {}
    for tag in _ofi_git(path, "tag").split():
        m = OFI_TAG.match(tag)
        if not m:
            continue
        key = tuple(int(x) for x in m.groups()[:3])
        if key not in best or tag.endswith("-aws"):
            best[key] = tag
    rows = []
    for key in sorted(best):
        tag = best[key]
        try:
            out = _ofi_git(
                path,
                "grep",
                "-h",
                "-E",
                r"ncclNet_v[0-9]+_t[[:space:]]+ncclNetPlugin_v[0-9]+[[:space:]]*=",
                tag,
                "--",
                "src",
                "include",
                ":!*neuron*",
            )
        except subprocess.CalledProcessError:
            out = ""
        versions = sorted({int(b) for a, b in OFI_DEFINES.findall(out) if a == b})
        by_macro = not versions and bool(_ofi_grep(path, tag, "ncclNet_t NCCL_PLUGIN_SYMBOL"))
        rows.append(
            {
                "project": "aws-ofi-nccl",
                "version": ".".join(str(x) for x in key),
                "net": versions or None,
                "source": f"aws/aws-ofi-nccl@{tag}:src (ncclNet_vN_t ncclNetPlugin_vN definitions of the NVIDIA interface)",
                "confidence": "verified",
                **(
                    {}
                    if versions
                    else {
                        "note": (
                            "defines 'const ncclNet_t NCCL_PLUGIN_SYMBOL' with no NCCL header of its own: the symbol is the "
                            "ncclNetPlugin_vN of the NCCL headers it was built against, which its release does not fix"
                            if by_macro
                            else "no definition matched at this tag: the exported versions are not known"
                        )
                    }
                ),
            }
        )
    return rows


def _write(name: str, data: dict) -> None:
    with open(os.path.join(CATALOGS, name), "w") as f:
        f.write(json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def main() -> int:
    ofi = os.environ.get("OFI_MIRROR", OFI_DEFAULT)
    nccl = nccl_rows()
    plugins = ofi_rows(ofi)
    _write(
        "nccl_plugin_api.json",
        {
            "table": "nccl_plugin_api",
            "description": (
                "The plugin API versions each NCCL release looks up by symbol name, newest first (net: "
                "ncclNetPlugin_vN, collnet: ncclCollNetPlugin_vN, tuner: ncclTunerPlugin_vN, profiler: "
                "ncclProfiler_vN). A plugin exporting none of them is closed again and NCCL goes on with its internal "
                "IB/Socket transports (net), its own tuning (tuner) or no profiler. An empty list: the release looks "
                "up no such plugin. Generated by tools/nccl/gen_plugin_api.py from the release tags."
            ),
            "rows": nccl,
        },
    )
    _write(
        "net_plugin_exports.json",
        {
            "table": "net_plugin_exports",
            "description": (
                "The ncclNetPlugin_vN objects each network plugin release exports (aws-ofi-nccl's NVIDIA interface). "
                "net null: the release defines NCCL_PLUGIN_SYMBOL from the NCCL headers it is built against, so its "
                "version is that NCCL's, not the release's. Generated by tools/nccl/gen_plugin_api.py."
            ),
            "rows": plugins,
        },
    )
    print(
        f"{len(nccl)} NCCL releases -> nccl_plugin_api.json, {len(plugins)} aws-ofi-nccl releases -> net_plugin_exports.json"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
