"""The functions each NCCL release's public header declares -> catalogs/nccl_api_symbols.json.

libnccl.so.2 keeps one soname across every 2.x release and exports its API without ELF symbol versions, so a program
built against a newer NCCL runs on an older libnccl.so.2 until it calls a function that release does not define:
the dynamic loader then stops it with `undefined symbol: ncclCommInitRankConfig` (at load with immediate binding,
at the first call otherwise). This reads, at every release tag, the functions src/nccl.h.in (src/nccl.h before it
was templated) declares, and records for each the first and last release that declares it, and the guard under
which torch calls it (torch/csrc/distributed/c10d/NCCLUtils.hpp, written down here: the PyTorch tree is not read).

    NCCL_MIRROR=/work/.mirror/NVIDIA+nccl/repo python tools/nccl/gen_api_symbols.py
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import nccl_git

CATALOG = os.path.join(os.path.dirname(__file__), "..", "..", "compat_matrix", "catalogs", "nccl_api_symbols.json")
HEADERS = ("src/nccl.h.in", "src/nccl.h")
# a declaration at the start of a line: `ncclResult_t  ncclCommInitRankConfig(`, `const char*  ncclGetErrorString(`;
# the p-prefixed profiling aliases (pncclAllReduce) are the same functions and are left out
DECLARATION = re.compile(r"^[ \t]*(?:const[ \t]+)?[A-Za-z_][A-Za-z0-9_]*[ \t*]+(nccl[A-Z][A-Za-z0-9_]*)[ \t]*\(", re.M)
TORCH = "pytorch/pytorch@main:torch/csrc/distributed/c10d/NCCLUtils.hpp"
# the functions torch's ProcessGroupNCCL calls only under a NCCL_VERSION_CODE guard: the macro and its bound, as the
# header states them (a build against an NCCL at or past the bound calls the function)
TORCH_GUARDS = {
    "ncclGetLastError": "ENABLE_NCCL_GET_LAST_ERROR (NCCL_VERSION_CODE >= NCCL_VERSION(2, 13, 0))",
    "ncclCommInitRankConfig": "NCCL_HAS_CONFIG (NCCL_VERSION_CODE >= NCCL_VERSION(2, 17, 0))",
    "ncclCommSplit": "NCCL_HAS_COMM_SPLIT (NCCL_VERSION_CODE >= NCCL_VERSION(2, 18, 0))",
    "ncclCommRegister": "NCCL_HAS_COMM_REGISTER (NCCL_VERSION_CODE >= NCCL_VERSION(2, 19, 0))",
    "ncclCommDeregister": "NCCL_HAS_COMM_REGISTER (NCCL_VERSION_CODE >= NCCL_VERSION(2, 19, 0))",
    "ncclMemAlloc": "NCCL_HAS_MEM_ALLOC (NCCL_VERSION_CODE >= NCCL_VERSION(2, 19, 0))",
    "ncclMemFree": "NCCL_HAS_MEM_ALLOC (NCCL_VERSION_CODE >= NCCL_VERSION(2, 19, 0))",
    "ncclCommInitRankScalable": "NCCL_HAS_INIT_RANK_SCALABLE (NCCL_VERSION_CODE >= NCCL_VERSION(2, 23, 0))",
    "ncclCommWindowRegister": "NCCL_HAS_COMM_WINDOW_REGISTER (NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0))",
    "ncclCommWindowDeregister": "NCCL_HAS_COMM_WINDOW_REGISTER (NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0))",
}


def header(tag: str) -> tuple[str, str] | None:
    for path in HEADERS:
        try:
            return path, nccl_git.show(tag, path)
        except subprocess.CalledProcessError:
            continue
    return None


def rows() -> list[dict]:
    first: dict[str, tuple[str, str, str]] = {}  # symbol -> (first version, its tag, header path)
    last: dict[str, str] = {}
    for tag, version in nccl_git.release_tags():
        found = header(tag)
        if found is None:
            continue
        path, text = found
        for name in sorted(set(DECLARATION.findall(text))):
            first.setdefault(name, (version, tag, path))
            last[name] = version
    newest = nccl_git.release_tags()[-1][1]
    out = []
    for name, (version, tag, path) in sorted(first.items(), key=lambda kv: (nccl_git.version_key(kv[1][0]), kv[0])):
        out.append(
            {
                "symbol": name,
                "first": version,
                "last": None if last[name] == newest else last[name],
                "torch_guard": TORCH_GUARDS.get(name),
                "source": f"NVIDIA/nccl@{tag}:{path}" + (f"; {TORCH}" if name in TORCH_GUARDS else ""),
                "confidence": "verified",
                **({"note": f"still declared in the newest release read ({newest})"} if last[name] == newest else {}),
            }
        )
    return out


def main() -> int:
    found = rows()
    doc = {
        "table": "nccl_api_symbols",
        "description": (
            "Every function NCCL's public header declares, with the first release that declares it and the last "
            "(null: still declared in the newest release read). libnccl.so.2 exports them without symbol versions, so "
            "a program built against a newer NCCL that calls a function its loaded libnccl predates stops with "
            "'undefined symbol: <name>'. The first release of the range read (2.3.5) stands for every function "
            "older than it. torch_guard: the NCCL_VERSION_CODE guard under which torch's ProcessGroupNCCL calls it (a "
            "torch source or conda build past the bound, loaded with an older libnccl.so.2, fails at load). Generated "
            "by tools/nccl/gen_api_symbols.py from the release tags."
        ),
        "rows": found,
    }
    with open(CATALOG, "w") as f:
        f.write(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(found)} functions -> nccl_api_symbols.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
